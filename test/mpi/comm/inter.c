/* Intercommunicators: creation (splits, leaders, tags, peers, from groups), groups, point-to-point, merge, dup, split, create, compare, Comm_create_group, context reuse, errors. */
#include "mpitest.h"

static int rank, size;
static MPI_Group world_group;
static MPI_Comm rev_world; /* MPI_COMM_WORLD in reverse order: a peer communicator whose ranks differ */

/* Ways of cutting MPI_COMM_WORLD in two groups (0 and 1), each ordered by a key. */
enum { K_THIRD, K_PARITY, K_ONE, K_HIGH_HALF, NKINDS };
static const char *const kind_name[NKINDS] = {"first third vs rest", "even vs odd (reversed)", "last rank vs rest",
                                              "high half vs low half (scrambled)"};

static int group_of(int kind, int r)
{
    switch (kind) {
    case K_THIRD: return r < (size / 3 > 0 ? size / 3 : 1) ? 0 : 1;
    case K_PARITY: return r % 2;
    case K_ONE: return r == size - 1 ? 0 : 1;
    default: return r >= size / 2 ? 0 : 1;
    }
}

static int key_of(int kind, int r)
{
    return kind == K_PARITY ? -r : kind == K_HIGH_HALF ? (r * 7) % size : r;
}

/* The leader (local rank) of group g, one of several choices per kind. */
static int leader_of(int kind, int g, int n)
{
    switch (kind) {
    case K_THIRD: return n - 1;
    case K_PARITY: return g == 0 ? 0 : n - 1;
    case K_ONE: return g == 0 ? 0 : n / 2;
    default: return g == 0 ? 1 % n : 0;
    }
}

/* How the leaders reach each other. */
enum { P_WORLD, P_REVERSED, P_NULL_AT_OTHERS };

typedef struct {
    MPI_Comm ic, local;
    int g;            /* this process's group */
    int lrank, lsize; /* in the local group */
    int rsize;        /* the remote group's size */
    int *mem[2];      /* world ranks of each group, in rank order */
    int n[2];
    char what[160];
} inter;

static void make_inter(inter *x, int kind, int peer_mode, int tag)
{
    x->g = group_of(kind, rank);
    snprintf(x->what, sizeof x->what, "%s, peer %d, tag %d", kind_name[kind], peer_mode, tag);
    for (int g = 0; g < 2; g++) {
        x->mem[g] = malloc((size_t)size * sizeof(int));
        x->n[g] = 0;
        for (int r = 0; r < size; r++)
            if (group_of(kind, r) == g)
                x->mem[g][x->n[g]++] = r;
        int *m = x->mem[g]; /* stable order by key, then world rank */
        for (int i = 1; i < x->n[g]; i++)
            for (int j = i; j > 0 && key_of(kind, m[j - 1]) > key_of(kind, m[j]); j--) {
                int t = m[j];
                m[j] = m[j - 1];
                m[j - 1] = t;
            }
    }
    MPI_Comm_split(MPI_COMM_WORLD, x->g, key_of(kind, rank), &x->local);
    MPI_Comm_rank(x->local, &x->lrank);
    MPI_Comm_size(x->local, &x->lsize);
    x->rsize = x->n[1 - x->g];
    CHECK(x->lsize == x->n[x->g] && x->mem[x->g][x->lrank] == rank, "%s: local split is wrong", x->what);

    int my_leader = leader_of(kind, x->g, x->n[x->g]);
    int their_leader_world = x->mem[1 - x->g][leader_of(kind, 1 - x->g, x->rsize)];
    MPI_Comm peer = MPI_COMM_WORLD;
    int remote_leader = their_leader_world;
    if (peer_mode == P_REVERSED) {
        peer = rev_world;
        remote_leader = size - 1 - their_leader_world;
    } else if (peer_mode == P_NULL_AT_OTHERS && x->lrank != my_leader) {
        peer = MPI_COMM_NULL; /* peer_comm and remote_leader matter only at the local leader */
        remote_leader = -7;
    }
    x->ic = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Intercomm_create(x->local, my_leader, peer, remote_leader, tag, &x->ic), MPI_SUCCESS);
}

static void free_inter(inter *x)
{
    MPI_Comm_free(&x->ic);
    CHECK(x->ic == MPI_COMM_NULL, "%s: MPI_Comm_free did not reset the handle", x->what);
    MPI_Comm_free(&x->local);
    free(x->mem[0]);
    free(x->mem[1]);
}

/* The members of group grp (world ranks, in its order) are want[0..n-1]. */
static void check_group(MPI_Group grp, const int *want, int n, const char *what, const char *which)
{
    int gs, *idx = malloc((size_t)(n + 1) * sizeof(int)), *w = malloc((size_t)(n + 1) * sizeof(int));
    MPI_Group_size(grp, &gs);
    CHECK(gs == n, "%s: %s group has %d members, expected %d", what, which, gs, n);
    if (gs == n) {
        for (int i = 0; i < n; i++)
            idx[i] = i;
        MPI_Group_translate_ranks(grp, n, idx, world_group, w);
        for (int i = 0; i < n; i++)
            CHECK(w[i] == want[i], "%s: %s group rank %d is world rank %d, expected %d", what, which, i, w[i], want[i]);
    }
    free(idx);
    free(w);
}

/* An intercommunicator with local members lmem (nl) and remote members rmem (nr), this process
 * at local rank lrank. */
static void check_shape(MPI_Comm c, const int *lmem, int nl, const int *rmem, int nr, int lrank, const char *what)
{
    int flag = 0, r = -1, p = -1, q = -1, cmp;
    MPI_Group grp;
    CHECK_CLASS(MPI_Comm_test_inter(c, &flag), MPI_SUCCESS);
    CHECK(flag, "%s: MPI_Comm_test_inter says it is not an intercommunicator", what);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    CHECK_CLASS(MPI_Comm_remote_size(c, &q), MPI_SUCCESS);
    CHECK(r == lrank && p == nl && q == nr, "%s: rank %d size %d remote size %d, expected %d %d %d", what, r, p, q,
          lrank, nl, nr);
    CHECK_CLASS(MPI_Comm_remote_group(c, &grp), MPI_SUCCESS);
    check_group(grp, rmem, nr, what, "remote");
    MPI_Group_free(&grp);
    MPI_Comm_group(c, &grp);
    check_group(grp, lmem, nl, what, "local");
    MPI_Group_free(&grp);
    MPI_Comm_compare(c, c, &cmp);
    CHECK(cmp == MPI_IDENT, "%s: compare with itself gave %d", what, cmp);
    MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_UNEQUAL, "%s: compare with MPI_COMM_WORLD gave %d", what, cmp);
}

static void check_inter(inter *x)
{
    int flag = 1, cmp;
    check_shape(x->ic, x->mem[x->g], x->lsize, x->mem[1 - x->g], x->rsize, x->lrank, x->what);
    MPI_Comm_test_inter(x->local, &flag);
    CHECK(!flag, "%s: the local intracommunicator tests as inter", x->what);
    MPI_Comm_compare(x->ic, x->local, &cmp);
    CHECK(cmp == MPI_UNEQUAL, "%s: compare intercomm with its local comm gave %d", x->what, cmp);
    MPI_Group a, b;
    MPI_Comm_group(x->ic, &a);
    MPI_Comm_group(x->local, &b);
    MPI_Group_compare(a, b, &cmp);
    CHECK(cmp == MPI_IDENT, "%s: local group differs from the local communicator's (%d)", x->what, cmp);
    MPI_Group_free(&a);
    MPI_Group_free(&b);
}

/* Point-to-point across the groups: ranks are remote ranks, in both directions. */
static void p2p(inter *x)
{
    int q = x->rsize, g = x->g, *theirs = x->mem[1 - g];
    MPI_Request *rq = malloc((size_t)2 * (size_t)q * sizeof *rq);
    int(*sb)[3] = malloc((size_t)q * sizeof *sb), (*rb)[3] = malloc((size_t)q * sizeof *rb);
    char *seen = calloc((size_t)q, 1);
    MPI_Status st;

    /* Everyone to every remote process; received with MPI_ANY_SOURCE. */
    for (int j = 0; j < q; j++) {
        sb[j][0] = x->lrank, sb[j][1] = rank, sb[j][2] = j;
        MPI_Isend(sb[j], 3, MPI_INT, j, 100 + g, x->ic, &rq[j]);
    }
    for (int k = 0; k < q; k++) {
        int b[3] = {-1, -1, -1};
        MPI_Recv(b, 3, MPI_INT, MPI_ANY_SOURCE, 101 - g, x->ic, &st);
        int s = st.MPI_SOURCE;
        CHECK(s >= 0 && s < q && b[0] == s && b[1] == theirs[s] && b[2] == x->lrank && st.MPI_TAG == 101 - g,
              "%s: any-source message %d: source %d tag %d data %d %d %d", x->what, k, s, st.MPI_TAG, b[0], b[1], b[2]);
        if (s >= 0 && s < q) {
            CHECK(!seen[s], "%s: two messages from remote rank %d", x->what, s);
            seen[s] = 1;
        }
    }
    MPI_Waitall(q, rq, MPI_STATUSES_IGNORE);

    /* Irecv from each remote process by rank, then blocking sends. */
    for (int j = 0; j < q; j++)
        MPI_Irecv(rb[j], 3, MPI_INT, j, 7, x->ic, &rq[j]);
    for (int j = 0; j < q; j++) {
        sb[j][0] = rank * 1000 + j, sb[j][1] = x->lrank, sb[j][2] = g;
        MPI_Send(sb[j], 3, MPI_INT, j, 7, x->ic);
    }
    MPI_Status *sts = malloc((size_t)q * sizeof *sts);
    MPI_Waitall(q, rq, sts);
    for (int j = 0; j < q; j++)
        CHECK(rb[j][0] == theirs[j] * 1000 + x->lrank && rb[j][1] == j && rb[j][2] == 1 - g && sts[j].MPI_SOURCE == j &&
                  sts[j].MPI_TAG == 7,
              "%s: Irecv from %d got %d %d %d source %d", x->what, j, rb[j][0], rb[j][1], rb[j][2], sts[j].MPI_SOURCE);
    free(sts);

    /* Sendrecv between remote partners of equal local rank. */
    int m = x->lsize < q ? x->lsize : q;
    if (x->lrank < m) {
        int out[2] = {rank, g}, in[2] = {-1, -1};
        MPI_Sendrecv(out, 2, MPI_INT, x->lrank, 9, in, 2, MPI_INT, x->lrank, 9, x->ic, &st);
        CHECK(in[0] == theirs[x->lrank] && in[1] == 1 - g && st.MPI_SOURCE == x->lrank,
              "%s: Sendrecv got %d %d from %d", x->what, in[0], in[1], st.MPI_SOURCE);
    } else {
        int in = 5;
        MPI_Sendrecv(&rank, 1, MPI_INT, MPI_PROC_NULL, 9, &in, 1, MPI_INT, MPI_PROC_NULL, 9, x->ic, &st);
        CHECK(in == 5 && st.MPI_SOURCE == MPI_PROC_NULL, "%s: Sendrecv with MPI_PROC_NULL", x->what);
    }

    /* Probe: group 0's rank i sends i + 2 ints to group 1's rank i (probed with wildcards),
     * then group 1's rank i sends i + 3 to group 0's rank m - 1 - i (probed by source). */
    int buf[64];
    for (int dir = 0; dir < 2; dir++) {
        if (x->lrank >= m)
            continue;
        int partner = dir == 0 ? x->lrank : m - 1 - x->lrank, count = (g == dir ? x->lrank : partner) + 2 + dir;
        if (g == dir) {
            for (int i = 0; i < count; i++)
                buf[i] = rank * 100 + i;
            MPI_Send(buf, count, MPI_INT, partner, 20 + dir, x->ic);
        } else {
            int n = -1;
            if (dir == 0)
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, x->ic, &st);
            else
                MPI_Probe(partner, 21, x->ic, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 20 + dir && n == count,
                  "%s: probe %d saw source %d tag %d count %d, expected %d %d %d", x->what, dir, st.MPI_SOURCE,
                  st.MPI_TAG, n, partner, 20 + dir, count);
            MPI_Recv(buf, 64, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, x->ic, &st);
            for (int i = 0; i < count; i++)
                CHECK(buf[i] == theirs[partner] * 100 + i, "%s: probed message element %d is %d", x->what, i, buf[i]);
        }
    }
    free(rq);
    free(sb);
    free(rb);
    free(seen);
}

/* MPI_Intercomm_merge with each combination of high values. */
static void merge(inter *x)
{
    static const int highs[4][2] = {{0, 1}, {1, 0}, {0, 0}, {1, 1}};
    for (int v = 0; v < 4; v++) {
        MPI_Comm m;
        int high = highs[v][x->g];
        CHECK_CLASS(MPI_Intercomm_merge(x->ic, high, &m), MPI_SUCCESS);
        int flag = 1, r = -1, p = -1;
        MPI_Comm_test_inter(m, &flag);
        MPI_Comm_rank(m, &r);
        MPI_Comm_size(m, &p);
        CHECK(!flag && p == size, "%s: merge %d: inter %d size %d", x->what, v, flag, p);
        int *got = malloc((size_t)size * sizeof(int));
        MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, m);
        /* Which group comes first: the one that said low; either when both said the same (but
         * the same at everyone, as the allgather shows). */
        int first = highs[v][0] < highs[v][1] ? 0 : highs[v][0] > highs[v][1] ? 1 : -1;
        if (first < 0) {
            first = 0;
            for (int i = 0; i < x->n[1]; i++)
                if (got[0] == x->mem[1][i])
                    first = 1;
        }
        int ok = 1;
        for (int i = 0; i < x->n[first]; i++)
            ok &= got[i] == x->mem[first][i];
        for (int i = 0; i < x->n[1 - first]; i++)
            ok &= got[x->n[first] + i] == x->mem[1 - first][i];
        CHECK(ok, "%s: merge %d (high %d/%d): order of the merged communicator is wrong", x->what, v, highs[v][0],
              highs[v][1]);
        int want_rank = (x->g == first ? 0 : x->n[first]) + x->lrank;
        CHECK(r == want_rank, "%s: merge %d: rank %d, expected %d", x->what, v, r, want_rank);
        /* A collective on it: the sum of world ranks and a broadcast from the last rank. */
        int sum = -1, b = r == p - 1 ? 4242 + v : -1;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, m);
        MPI_Bcast(&b, 1, MPI_INT, p - 1, m);
        CHECK(sum == size * (size - 1) / 2 && b == 4242 + v, "%s: merge %d: allreduce %d bcast %d", x->what, v, sum, b);
        free(got);
        MPI_Comm_free(&m);
    }
}

/* A duplicate keeps the shape and its traffic apart from the original's. */
static void dup(inter *x)
{
    MPI_Comm d, dd;
    int cmp = -1, q = x->rsize, *theirs = x->mem[1 - x->g];
    CHECK_CLASS(MPI_Comm_dup(x->ic, &d), MPI_SUCCESS);
    check_shape(d, x->mem[x->g], x->lsize, theirs, q, x->lrank, x->what);
    MPI_Comm_compare(x->ic, d, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "%s: compare intercomm with its dup gave %d", x->what, cmp);
    MPI_Comm_dup(d, &dd);
    MPI_Comm_compare(dd, x->ic, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "%s: compare intercomm with a dup of its dup gave %d", x->what, cmp);

    /* Same tag to every remote process on the original, the dup and the dup's dup; received
     * in the opposite order, from any source. */
    MPI_Comm cs[3] = {x->ic, d, dd};
    MPI_Request *rq = malloc((size_t)3 * (size_t)q * sizeof *rq);
    int *out = malloc((size_t)3 * (size_t)q * sizeof *out);
    for (int c = 0; c < 3; c++)
        for (int j = 0; j < q; j++) {
            out[c * q + j] = (c + 1) * 100000 + rank * 100 + j;
            MPI_Isend(&out[c * q + j], 1, MPI_INT, j, 3, cs[c], &rq[c * q + j]);
        }
    for (int c = 2; c >= 0; c--)
        for (int k = 0; k < q; k++) {
            int v = -1;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, cs[c], &st);
            int s = st.MPI_SOURCE;
            CHECK(s >= 0 && s < q && v == (c + 1) * 100000 + theirs[s] * 100 + x->lrank,
                  "%s: communicator %d of original/dup/dup-of-dup got %d from %d", x->what, c, v, s);
        }
    MPI_Waitall(3 * q, rq, MPI_STATUSES_IGNORE);
    /* A collective on the dup: each group gets the other's sum of world ranks. */
    int sum = -1, want = 0;
    for (int j = 0; j < q; j++)
        want += theirs[j];
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d);
    CHECK(sum == want, "%s: allreduce on the dup gave %d, expected %d", x->what, sum, want);
    free(rq);
    free(out);
    MPI_Comm_free(&dd);
    MPI_Comm_free(&d);
}

/* Expected members for a split or create of the intercommunicator: the local ranks of group g
 * for which pick(rank) holds, ordered by key (then rank), as world ranks. */
static int pick_members(inter *x, int g, int (*pick)(int, int, int), int (*key)(int), int arg, int *out)
{
    int n = 0, *lr = malloc((size_t)x->n[g] * sizeof(int) + 1);
    for (int r = 0; r < x->n[g]; r++)
        if (pick(r, g, arg))
            lr[n++] = r;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && key(lr[j - 1]) > key(lr[j]); j--) {
            int t = lr[j];
            lr[j] = lr[j - 1];
            lr[j - 1] = t;
        }
    for (int i = 0; i < n; i++)
        out[i] = x->mem[g][lr[i]];
    free(lr);
    return n;
}

static int split_color(int r, int g, int variant)
{
    if (variant == 1)
        return g; /* no color on both sides */
    return r % 3 == 2 ? MPI_UNDEFINED : r % 2;
}
static int has_color(int r, int g, int c)
{
    return split_color(r, g, c >> 8) == (c & 0xff);
}
static int neg(int r)
{
    return -r;
}
static int ident(int r)
{
    return r;
}

/* The other group's sum of world ranks, from a collective on c. */
static void works(MPI_Comm c, const int *rmem, int nr, const char *what)
{
    int sum = -1, want = 0;
    for (int i = 0; i < nr; i++)
        want += rmem[i];
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == want, "%s: allreduce gave %d, expected %d", what, sum, want);
}

static void split(inter *x)
{
    for (int variant = 0; variant < 2; variant++) {
        int color = split_color(x->lrank, x->g, variant);
        MPI_Comm s = MPI_COMM_NULL;
        CHECK_CLASS(MPI_Comm_split(x->ic, color, -x->lrank, &s), MPI_SUCCESS);
        int *lm = malloc((size_t)size * sizeof(int)), *rm = malloc((size_t)size * sizeof(int)), nl = 0, nr = 0;
        if (color != MPI_UNDEFINED) {
            nl = pick_members(x, x->g, has_color, neg, (variant << 8) | color, lm);
            nr = pick_members(x, 1 - x->g, has_color, neg, (variant << 8) | color, rm);
        }
        char what[220];
        snprintf(what, sizeof what, "%s: split %d color %d", x->what, variant, color);
        if (nl == 0 || nr == 0) {
            CHECK(s == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL (local %d remote %d members)", what, nl, nr);
        } else {
            CHECK(s != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
            if (s != MPI_COMM_NULL) {
                int myrank = 0;
                while (lm[myrank] != rank)
                    myrank++;
                check_shape(s, lm, nl, rm, nr, myrank, what);
                works(s, rm, nr, what);
            }
        }
        if (s != MPI_COMM_NULL)
            MPI_Comm_free(&s);
        free(lm);
        free(rm);
    }
}

/* Create with a subgroup: group 0 takes its even local ranks in reverse order, group 1 its
 * first half; then group 0 passes MPI_GROUP_EMPTY and nobody gets a communicator. */
static int sub_pick(int r, int g, int n)
{
    return g == 0 ? r % 2 == 0 : r < (n + 1) / 2;
}
static void create(inter *x)
{
    MPI_Group lg, sg;
    MPI_Comm c = MPI_COMM_NULL;
    int *lm = malloc((size_t)size * sizeof(int)), *rm = malloc((size_t)size * sizeof(int)), *ranks = malloc((size_t)size * sizeof(int));
    int nl = pick_members(x, x->g, sub_pick, x->g == 0 ? neg : ident, x->n[x->g], lm);
    int nr = pick_members(x, 1 - x->g, sub_pick, x->g == 1 ? neg : ident, x->n[1 - x->g], rm);
    int k = 0, mine = -1;
    for (int i = 0; i < nl; i++) { /* local ranks of the subgroup, in its order */
        for (int r = 0; r < x->lsize; r++)
            if (x->mem[x->g][r] == lm[i])
                ranks[k++] = r;
        if (lm[i] == rank)
            mine = i;
    }
    MPI_Comm_group(x->ic, &lg);
    MPI_Group_incl(lg, k, ranks, &sg);
    CHECK_CLASS(MPI_Comm_create(x->ic, sg, &c), MPI_SUCCESS);
    char what[220];
    snprintf(what, sizeof what, "%s: MPI_Comm_create of a subgroup", x->what);
    if (mine < 0 || nr == 0) {
        CHECK(c == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
    } else {
        CHECK(c != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
        if (c != MPI_COMM_NULL) {
            check_shape(c, lm, nl, rm, nr, mine, what);
            works(c, rm, nr, what);
        }
    }
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    MPI_Group_free(&sg);

    c = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_create(x->ic, x->g == 0 ? MPI_GROUP_EMPTY : lg, &c), MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL, "%s: MPI_Comm_create with one group empty gave a communicator", x->what);
    /* The whole local group on both sides: the same shape again. */
    CHECK_CLASS(MPI_Comm_create(x->ic, lg, &c), MPI_SUCCESS);
    if (c != MPI_COMM_NULL) {
        check_shape(c, x->mem[x->g], x->lsize, x->mem[1 - x->g], x->rsize, x->lrank, what);
        int cmp = -1;
        MPI_Comm_compare(c, x->ic, &cmp);
        CHECK(cmp == MPI_CONGRUENT, "%s: create with the whole group, compare gave %d", x->what, cmp);
        MPI_Comm_free(&c);
    } else
        CHECK(0, "%s: MPI_Comm_create with the whole local group gave MPI_COMM_NULL", x->what);
    MPI_Group_free(&lg);
    free(lm);
    free(rm);
    free(ranks);
}

/* Error cases (under MPI_ERRORS_RETURN). */
static void errors(inter *x)
{
    int a = 1, b = 0, n = 0, dims[1], periods[1] = {0};
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Comm_set_errhandler(x->ic, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, x->ic), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Exscan(&a, &b, 1, MPI_INT, MPI_SUM, x->ic), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Iscan(&a, &b, 1, MPI_INT, MPI_SUM, x->ic, &rq), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Iexscan(&a, &b, 1, MPI_INT, MPI_SUM, x->ic, &rq), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Scan_init(&a, &b, 1, MPI_INT, MPI_SUM, x->ic, MPI_INFO_NULL, &rq), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Exscan_init(&a, &b, 1, MPI_INT, MPI_SUM, x->ic, MPI_INFO_NULL, &rq), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, x->ic), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Iallreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, x->ic, &rq), MPI_ERR_BUFFER);
    int *ab = malloc((size_t)size * sizeof(int));
    CHECK_CLASS(MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, ab, 1, MPI_INT, x->ic), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, ab, 1, MPI_INT, x->ic), MPI_ERR_BUFFER);
    free(ab);
    dims[0] = x->lsize;
    CHECK_CLASS(MPI_Cart_create(x->ic, 1, dims, periods, 0, &c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_size(x->local, &n), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Intercomm_create(x->ic, 0, MPI_COMM_WORLD, 0, 1, &c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_create_group(x->ic, world_group, 1, &c), MPI_ERR_COMM);
    MPI_Comm_set_errhandler(x->local, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Intercomm_create(x->local, 0, MPI_COMM_WORLD, x->mem[1 - x->g][0], MPI_ANY_TAG, &c), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Intercomm_create(x->local, x->lsize, MPI_COMM_WORLD, x->mem[1 - x->g][0], 1, &c), MPI_ERR_RANK);
    /* A group that is not part of the local group. */
    MPI_Group rg;
    MPI_Comm_remote_group(x->ic, &rg);
    c = MPI_COMM_NULL;
    CHECK(MPI_Comm_create(x->ic, rg, &c) != MPI_SUCCESS && c == MPI_COMM_NULL,
          "%s: MPI_Comm_create with the remote group succeeded", x->what);
    MPI_Group_free(&rg);
    /* Still fine afterwards. */
    works(x->ic, x->mem[1 - x->g], x->rsize, x->what);
}

/* MPI_Comm_compare of intercommunicators over the same processes in another order
 * (MPI_SIMILAR), and of two with the same local group and different remote groups
 * (MPI_UNEQUAL). */
static void compare_orders(void)
{
    int g = rank % 2, n0 = (size + 1) / 2, n1 = size / 2, cmp = -1;
    MPI_Comm l1, l2, i1, i2;
    MPI_Comm_split(MPI_COMM_WORLD, g, rank, &l1);
    MPI_Comm_split(MPI_COMM_WORLD, g, -rank, &l2);
    /* the other group's leader: its lowest world rank in l1's order, its highest in l2's */
    int hi_other = g == 0 ? 2 * n1 - 1 : 2 * n0 - 2;
    MPI_Intercomm_create(l1, 0, MPI_COMM_WORLD, 1 - g, 61, &i1);
    MPI_Intercomm_create(l2, 0, MPI_COMM_WORLD, hi_other, 62, &i2);
    MPI_Comm_compare(i1, i2, &cmp);
    int want = n0 == 1 && n1 == 1 ? MPI_CONGRUENT : MPI_SIMILAR;
    CHECK(cmp == want, "compare of intercomms in different orders gave %d, expected %d", cmp, want);
    MPI_Comm_free(&i1);
    MPI_Comm_free(&i2);
    MPI_Comm_free(&l1);
    MPI_Comm_free(&l2);
    if (size >= 3) { /* groups rank % 3: group 0 with group 1, then group 0 with group 2 */
        int t = rank % 3;
        MPI_Comm l, a = MPI_COMM_NULL, b = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, t, rank, &l);
        if (t != 2)
            MPI_Intercomm_create(l, 0, MPI_COMM_WORLD, 1 - t, 63, &a);
        if (t != 1)
            MPI_Intercomm_create(l, 0, MPI_COMM_WORLD, 2 - t, 64, &b);
        if (t == 0) {
            MPI_Comm_compare(a, b, &cmp);
            CHECK(cmp == MPI_UNEQUAL, "compare of intercomms with different remote groups gave %d", cmp);
        }
        if (a != MPI_COMM_NULL)
            MPI_Comm_free(&a);
        if (b != MPI_COMM_NULL)
            MPI_Comm_free(&b);
        MPI_Comm_free(&l);
    }
}

/* MPI_Intercomm_create_from_groups (MPI-4): even vs odd world ranks, the odd group in reverse
 * order, leaders other than rank 0; the error handler given is the new communicator's. */
static void from_groups(void)
{
    int g = rank % 2, n[2] = {(size + 1) / 2, size / 2};
    int *mem[2], lrank = -1;
    MPI_Group grp[2];
    for (int h = 0; h < 2; h++) {
        mem[h] = malloc((size_t)size * sizeof(int));
        for (int i = 0; i < n[h]; i++)
            mem[h][i] = h == 0 ? 2 * i : 2 * (n[1] - 1 - i) + 1;
        MPI_Group_incl(world_group, n[h], mem[h], &grp[h]);
        for (int i = 0; i < n[h]; i++)
            if (h == g && mem[h][i] == rank)
                lrank = i;
    }
    int leader[2] = {n[0] - 1, n[1] / 2};
    MPI_Comm ic = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Intercomm_create_from_groups(grp[g], leader[g], grp[1 - g], leader[1 - g], "courier test inter",
                                                 MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
                MPI_SUCCESS);
    if (ic != MPI_COMM_NULL) {
        check_shape(ic, mem[g], n[g], mem[1 - g], n[1 - g], lrank, "MPI_Intercomm_create_from_groups");
        works(ic, mem[1 - g], n[1 - g], "MPI_Intercomm_create_from_groups");
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        MPI_Comm_get_errhandler(ic, &eh);
        CHECK(eh == MPI_ERRORS_RETURN, "MPI_Intercomm_create_from_groups: the error handler is not the one given");
        if (eh != MPI_ERRHANDLER_NULL)
            MPI_Errhandler_free(&eh);
        MPI_Comm_free(&ic);
    }
    for (int h = 0; h < 2; h++) {
        MPI_Group_free(&grp[h]);
        free(mem[h]);
    }
}

/* MPI_Comm_create_group on MPI_COMM_WORLD: the even ranks twice (tags 11 and 12, the second
 * in reverse order) while the odd ranks make theirs with tag 11. */
static void create_group(void)
{
    int ne = (size + 1) / 2, no = size / 2, *ev = malloc((size_t)size * sizeof(int)),
        *er = malloc((size_t)size * sizeof(int)), *od = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < ne; i++)
        ev[i] = 2 * i, er[i] = 2 * (ne - 1 - i);
    for (int i = 0; i < no; i++)
        od[i] = 2 * i + 1;
    MPI_Group ge, gr, go;
    MPI_Group_incl(world_group, ne, ev, &ge);
    MPI_Group_incl(world_group, ne, er, &gr);
    MPI_Group_incl(world_group, no, od, &go);
    MPI_Comm c1 = MPI_COMM_NULL, c2 = MPI_COMM_NULL;
    const int *order[2];
    int n;
    if (rank % 2 == 0) {
        CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, ge, 11, &c1), MPI_SUCCESS);
        CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, gr, 12, &c2), MPI_SUCCESS);
        order[0] = ev, order[1] = er, n = ne;
    } else {
        CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, go, 11, &c1), MPI_SUCCESS);
        CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, go, 12, &c2), MPI_SUCCESS);
        order[0] = order[1] = od, n = no;
    }
    MPI_Comm cs[2] = {c1, c2};
    for (int k = 0; k < 2; k++) {
        int r = -1, p = -1, flag = 1, *got = malloc((size_t)size * sizeof(int));
        if (cs[k] == MPI_COMM_NULL) {
            CHECK(0, "MPI_Comm_create_group %d gave MPI_COMM_NULL", k);
            continue;
        }
        MPI_Comm_test_inter(cs[k], &flag);
        MPI_Comm_rank(cs[k], &r);
        MPI_Comm_size(cs[k], &p);
        CHECK(!flag && p == n && r >= 0 && r < n && order[k][r] == rank,
              "MPI_Comm_create_group %d: rank %d of %d (inter %d)", k, r, p, flag);
        MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, cs[k]);
        for (int i = 0; i < n && p == n; i++)
            CHECK(got[i] == order[k][i], "MPI_Comm_create_group %d: rank %d is world rank %d, expected %d", k, i, got[i],
                  order[k][i]);
        int sum = -1, want = 0;
        for (int i = 0; i < n; i++)
            want += order[k][i] * order[k][i];
        int sq = rank * rank;
        MPI_Allreduce(&sq, &sum, 1, MPI_INT, MPI_SUM, cs[k]);
        CHECK(sum == want, "MPI_Comm_create_group %d: allreduce gave %d, expected %d", k, sum, want);
        free(got);
    }
    if (c1 != MPI_COMM_NULL && c2 != MPI_COMM_NULL) {
        int cmp = -1, want = rank % 2 == 1 || n == 1 ? MPI_CONGRUENT : MPI_SIMILAR;
        MPI_Comm_compare(c1, c2, &cmp);
        CHECK(cmp == want, "MPI_Comm_create_group: compare of the two gave %d, expected %d", cmp, want);
    }
    if (c1 != MPI_COMM_NULL)
        MPI_Comm_free(&c1);
    if (c2 != MPI_COMM_NULL)
        MPI_Comm_free(&c2);
    MPI_Group_free(&ge);
    MPI_Group_free(&gr);
    MPI_Group_free(&go);
    free(ev);
    free(er);
    free(od);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Intracommunicators are not inter. */
    int flag = 1, n = 0;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    CHECK(!flag, "MPI_COMM_WORLD tests as an intercommunicator");
    MPI_Comm_test_inter(MPI_COMM_SELF, &flag);
    CHECK(!flag, "MPI_COMM_SELF tests as an intercommunicator");
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    MPI_Comm bad = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 1, &bad), MPI_ERR_COMM);

    create_group();

    if (size >= 2) {
        MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev_world);
        compare_orders();
        from_groups();
        int tag = 0;
        for (int kind = 0; kind < NKINDS; kind++)
            for (int peer = 0; peer < 3; peer++) {
                inter x;
                make_inter(&x, kind, peer, tag += 1 + 1000 * peer);
                if (x.ic == MPI_COMM_NULL)
                    continue;
                check_inter(&x);
                p2p(&x);
                if (peer == P_WORLD) { /* the rest once per kind */
                    merge(&x);
                    dup(&x);
                    split(&x);
                    create(&x);
                    errors(&x);
                }
                works(x.ic, x.mem[1 - x.g], x.rsize, x.what);
                free_inter(&x);
            }

        /* An intercommunicator made over another intercommunicator as peer: the leaders are
         * rank 0 of each group, the remote leader a rank of the remote group. */
        {
            inter x, y;
            make_inter(&x, K_PARITY, P_WORLD, 31);
            y = x;
            y.ic = MPI_COMM_NULL;
            MPI_Comm_dup(x.local, &y.local);
            CHECK_CLASS(MPI_Intercomm_create(y.local, 0, x.ic, 0, 32, &y.ic), MPI_SUCCESS);
            snprintf(y.what, sizeof y.what, "intercomm with an intercomm as peer");
            if (y.ic != MPI_COMM_NULL) {
                check_inter(&y);
                p2p(&y);
                works(y.ic, y.mem[1 - y.g], y.rsize, y.what);
                MPI_Comm_free(&y.ic);
            }
            MPI_Comm_free(&y.local);
            free_inter(&x);
        }

        /* Many made and freed in a row: context ids are recycled. */
        for (int i = 0; i < 200; i++) {
            inter x;
            make_inter(&x, i % NKINDS, i % 3, 5000 + i);
            if (x.ic == MPI_COMM_NULL) {
                CHECK(0, "intercommunicator %d not made", i);
                break;
            }
            if (i % 25 == 0 || i == 199) {
                char what[200];
                snprintf(what, sizeof what, "intercommunicator %d of 200 (%s)", i, x.what);
                works(x.ic, x.mem[1 - x.g], x.rsize, what);
            }
            if (i % 40 == 7) {
                MPI_Comm m;
                MPI_Intercomm_merge(x.ic, x.g, &m);
                int sum = -1;
                MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, m);
                CHECK(sum == size * (size - 1) / 2, "merge of intercommunicator %d: sum %d", i, sum);
                MPI_Comm_free(&m);
            }
            if (i % 2) { /* free the local communicator first half the time */
                MPI_Comm_free(&x.local);
                MPI_Comm_free(&x.ic);
                free(x.mem[0]);
                free(x.mem[1]);
            } else
                free_inter(&x);
        }
        MPI_Comm_free(&rev_world);
    }
    MPI_Group_free(&world_group);
    return mt_finish();
}
