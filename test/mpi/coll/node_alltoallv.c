/* MPI_Alltoallv and MPI_Alltoallw staged through the node component's blocks
 * (src/coll/node_large.c; the testlist forces the pairwise exchange too, and the results must be
 * the same). The staged call learns how many pieces it takes from its largest block anywhere,
 * which no process knows alone, so the shapes here differ by pair and change every call: all
 * blocks empty; small blocks, some empty; blocks around a window's edge (128 KiB / p, of which
 * the first piece gives 64 bytes to a header); one pair far larger than the rest (more pieces
 * than the ring has blocks, while every other pair is nearly empty); mixed sizes. Each shape
 * runs with plain ints, a strided send type, MPI_IN_PLACE, and (alltoallw) a type per peer, with
 * and without MPI_IN_PLACE, on MPI_COMM_WORLD and on a duplicate of it; the receive blocks lie
 * in reverse order with gaps between them. Calls also run between other staged collectives: a
 * large MPI_Ibcast started before and waited for after (the alltoallv takes its blocks at its
 * turn, after it), a large MPI_Bcast and MPI_Alltoall right after (they take the blocks the
 * alltoallv agreed it ended at); and MPI_Ialltoallv and MPI_Ialltoallw with a large MPI_Ibcast
 * and MPI_Bcast started behind them before their wait. Every element that arrived is checked, and what must not be
 * written (the gaps, the strided types' holes, the send buffer) is checked untouched; on one
 * node, unless forced to pairs, the staged path must have run (its MPI_T counters). */
#include "mpitest.h"

static int rank, size;
static MPI_Datatype strided_int; /* one int in an extent of two: the second holds a gap */

/* The value process `from` sends to process `to`, element i, call tag t. */
static int val(int from, int to, size_t i, int t)
{
    return (int)((size_t)from * 1000003u + (size_t)to * 7919u + i * 13u + (size_t)t * 101u) & 0x3fffffff;
}

enum { SHAPE_EMPTY, SHAPE_SMALL, SHAPE_EDGE, SHAPE_ONE_HUGE, SHAPE_MIXED, NSHAPES };
enum { M_PLAIN, M_STRIDED, M_IN_PLACE, M_W, M_W_IN_PLACE, NMODES };

/* The ints process `from` sends to `to` in call t. */
static size_t count_of(int from, int to, int t, int shape, size_t window)
{
    switch (shape) {
    case SHAPE_EMPTY: return 0;
    case SHAPE_SMALL: return (size_t)((from * 7 + to * 3 + t) % 5) * 37;
    case SHAPE_EDGE: return window - 20 + (size_t)((from + 2 * to + t) % 9); /* (16 ints: the header) */
    case SHAPE_ONE_HUGE: return from == 0 && to == size - 1 ? 300000 + (size_t)t : (size_t)(from + to) % 3;
    default: return (size_t)((from * 131 + to * 17 + t * 7) % 9000);
    }
}

/* One call; nonblocking when `meanwhile` is given, which runs between its start and its wait. */
static void run_around(MPI_Comm comm, int t, int shape, int mode, size_t window, void (*meanwhile)(MPI_Comm, int))
{
    bool in_place = mode == M_IN_PLACE || mode == M_W_IN_PLACE, w = mode == M_W || mode == M_W_IN_PLACE;
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    bool *sstr = malloc((size_t)size), *rstr = malloc((size_t)size);
    MPI_Datatype *st = malloc(sizeof *st * (size_t)size), *rt = malloc(sizeof *rt * (size_t)size);
    size_t scap = 0, rcap = 0;
    for (int j = 0; j < size; j++) {
        /* In place, a process sends and receives recvcounts[j] with j: the counts are symmetric. */
        int lo = rank < j ? rank : j, hi = rank < j ? j : rank;
        sc[j] = (int)(in_place ? count_of(lo, hi, t, shape, window) : count_of(rank, j, t, shape, window));
        sstr[j] = mode == M_STRIDED || (mode == M_W && j % 2);
        st[j] = sstr[j] ? strided_int : MPI_INT;
        scap += scap % 2; /* (strided blocks start at whole extents) */
        sd[j] = (int)(sstr[j] && !w ? scap / 2 : w ? scap * sizeof(int) : scap);
        scap += (sstr[j] ? 2 * (size_t)sc[j] : (size_t)sc[j]) + 3;
    }
    for (int j = size - 1; j >= 0; j--) { /* (in reverse order) */
        int lo = rank < j ? rank : j, hi = rank < j ? j : rank;
        rc[j] = (int)(in_place ? count_of(lo, hi, t, shape, window) : count_of(j, rank, t, shape, window));
        rstr[j] = w && j % 3 == 1;
        rt[j] = rstr[j] ? strided_int : MPI_INT;
        rd[j] = (int)(w ? rcap * sizeof(int) : rcap);
        rcap += (rstr[j] ? 2 * (size_t)rc[j] : (size_t)rc[j]) + 3;
    }
    int *s = malloc(sizeof(int) * (scap + 1)), *r = malloc(sizeof(int) * (rcap + 1));
    for (size_t i = 0; i < scap; i++)
        s[i] = -7;
    for (size_t i = 0; i < rcap; i++)
        r[i] = -5;
    for (int j = 0; j < size; j++) {
        size_t sat = (size_t)sd[j] * (w ? 1 : sstr[j] ? 2 : 1) / (w ? sizeof(int) : 1);
        size_t rat = (size_t)rd[j] / (w ? sizeof(int) : 1);
        for (size_t i = 0; i < (size_t)sc[j]; i++)
            s[sat + (sstr[j] ? 2 * i : i)] = val(rank, j, i, t);
        for (size_t i = 0; in_place && i < (size_t)rc[j]; i++)
            r[rat + (rstr[j] ? 2 * i : i)] = val(rank, j, i, t);
    }
    const void *sbuf = in_place ? MPI_IN_PLACE : s;
    MPI_Datatype stype = mode == M_STRIDED ? strided_int : MPI_INT;
    int err;
    if (meanwhile) {
        MPI_Request req;
        err = w ? MPI_Ialltoallw(sbuf, sc, sd, st, r, rc, rd, rt, comm, &req)
                : MPI_Ialltoallv(sbuf, sc, sd, stype, r, rc, rd, MPI_INT, comm, &req);
        meanwhile(comm, t);
        if (err == MPI_SUCCESS)
            err = MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        err = w ? MPI_Alltoallw(sbuf, sc, sd, st, r, rc, rd, rt, comm)
                : MPI_Alltoallv(sbuf, sc, sd, stype, r, rc, rd, MPI_INT, comm);
    }
    CHECK(err == MPI_SUCCESS, "call %d (shape %d, mode %d) returned %d", t, shape, mode, err);
    size_t bad = 0, bad_gap = 0, bad_send = 0;
    int first_from = -1;
    size_t first_i = 0;
    for (int j = 0; j < size; j++) {
        size_t rat = (size_t)rd[j] / (w ? sizeof(int) : 1), n = (size_t)rc[j], span = rstr[j] ? 2 * n : n;
        for (size_t i = 0; i < n; i++)
            if (r[rat + (rstr[j] ? 2 * i : i)] != val(j, rank, i, t) && !bad++)
                first_from = j, first_i = i;
        for (size_t i = 0; i < span + 3; i++)
            if ((i >= span || (rstr[j] && i % 2)) && r[rat + i] != -5)
                bad_gap++;
        size_t sat = (size_t)sd[j] * (w ? 1 : sstr[j] ? 2 : 1) / (w ? sizeof(int) : 1);
        for (size_t i = 0; !in_place && i < (size_t)sc[j]; i++)
            if (s[sat + (sstr[j] ? 2 * i : i)] != val(rank, j, i, t) || (sstr[j] && s[sat + 2 * i + 1] != -7))
                bad_send++;
    }
    CHECK(bad == 0, "call %d (shape %d, mode %d): %zu elements wrong, the first from rank %d at %zu", t, shape, mode,
          bad, first_from, first_i);
    CHECK(bad_gap == 0, "call %d (shape %d, mode %d): %zu ints written outside the blocks", t, shape, mode, bad_gap);
    CHECK(bad_send == 0, "call %d (shape %d, mode %d): %zu ints of the send buffer changed", t, shape, mode, bad_send);
    free(s), free(r), free(sc), free(sd), free(rc), free(rd), free(sstr), free(rstr), free(st), free(rt);
}

static void run(MPI_Comm comm, int t, int shape, int mode, size_t window)
{
    run_around(comm, t, shape, mode, window, NULL);
}

/* A large broadcast from rank `root` of n ints, started (nonblocking) or run. */
static int *bcast_values(size_t n, int root, int t)
{
    int *v = malloc(n * sizeof(int) + 4);
    for (size_t i = 0; i < n; i++)
        v[i] = rank == root ? val(root, 0, i, t) : -1;
    return v;
}

static void check_bcast(const int *v, size_t n, int root, int t, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += v[i] != val(root, 0, i, t);
    CHECK(bad == 0, "%s of %zu ints (tag %d) around an alltoallv: %zu wrong", what, n, t, bad);
}

/* Alltoallv between other collectives staged through the same blocks. */
static void between_others(MPI_Comm comm, int t, size_t window)
{
    size_t n = 3 * window + 11;
    int *v = bcast_values(n, size - 1, t);
    MPI_Request req;
    MPI_Ibcast(v, (int)n, MPI_INT, size - 1, comm, &req);
    run(comm, t + 1, SHAPE_MIXED, M_PLAIN, window);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_bcast(v, n, size - 1, t, "MPI_Ibcast");
    free(v);
    run(comm, t + 2, SHAPE_ONE_HUGE, M_W, window);
    v = bcast_values(n, 0, t + 3);
    MPI_Bcast(v, (int)n, MPI_INT, 0, comm);
    check_bcast(v, n, 0, t + 3, "MPI_Bcast");
    free(v);
    run(comm, t + 4, SHAPE_EDGE, M_IN_PLACE, window);
    int *a = malloc(n * (size_t)size * sizeof(int) + 4), *b = malloc(n * (size_t)size * sizeof(int) + 4);
    for (int j = 0; j < size; j++)
        for (size_t i = 0; i < n; i++)
            a[(size_t)j * n + i] = val(rank, j, i, t + 5), b[(size_t)j * n + i] = -1;
    MPI_Alltoall(a, (int)n, MPI_INT, b, (int)n, MPI_INT, comm);
    size_t bad = 0;
    for (int j = 0; j < size; j++)
        for (size_t i = 0; i < n; i++)
            bad += b[(size_t)j * n + i] != val(j, rank, i, t + 5);
    CHECK(bad == 0, "MPI_Alltoall of %zu ints (tag %d) after an alltoallv: %zu wrong", n, t + 5, bad);
    free(a), free(b);
}

/* Between the start and the wait of a nonblocking alltoallv: a large MPI_Ibcast started and
 * waited for (it runs after the alltoallv, in start order), then a blocking MPI_Bcast. */
static size_t meanwhile_ints;
static void others_meanwhile(MPI_Comm comm, int t)
{
    int *v = bcast_values(meanwhile_ints, 0, t + 1000), *u = bcast_values(meanwhile_ints, size - 1, t + 2000);
    MPI_Request req;
    MPI_Ibcast(v, (int)meanwhile_ints, MPI_INT, 0, comm, &req);
    MPI_Bcast(u, (int)meanwhile_ints, MPI_INT, size - 1, comm);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_bcast(v, meanwhile_ints, 0, t + 1000, "MPI_Ibcast");
    check_bcast(u, meanwhile_ints, size - 1, t + 2000, "MPI_Bcast");
    free(v), free(u);
}

/* A large MPI_Ibcast pending while a nonblocking alltoallv starts: its turn comes after the
 * broadcast's, which the wait below completes first. */
static MPI_Request pending;
static int *pending_values;
static size_t pending_ints;
static void wait_pending(MPI_Comm comm, int t)
{
    (void)comm;
    MPI_Wait(&pending, MPI_STATUS_IGNORE);
    check_bcast(pending_values, pending_ints, 0, t - 1, "MPI_Ibcast started before it");
    free(pending_values);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype one;
    MPI_Type_vector(1, 1, 2, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, (MPI_Aint)(2 * sizeof(int)), &strided_int);
    MPI_Type_free(&one);
    MPI_Type_commit(&strided_int);
    size_t window = (128 * 1024 / (size_t)size) / sizeof(int) & ~(size_t)15;
    unsigned long long v0 = mt_pvar_value("coll.alltoallv.node"), w0 = mt_pvar_value("coll.alltoallw.node");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int t = 0;
    for (int shape = 0; shape < NSHAPES; shape++)
        for (int mode = 0; mode < NMODES; mode++) {
            run(MPI_COMM_WORLD, t++, shape, mode, window);
            run(dup, t++, shape, mode, window);
        }
    for (int k = 0; k < 4; k++, t += 10)
        between_others(k % 2 ? dup : MPI_COMM_WORLD, t, window);
    /* Nonblocking: MPI_Ialltoallv and MPI_Ialltoallw of every shape, others started behind them,
     * and behind a pending broadcast. */
    unsigned long long v1 = mt_pvar_value("coll.alltoallv.node"), w1 = mt_pvar_value("coll.alltoallw.node");
    meanwhile_ints = 2 * window + 7;
    for (int shape = 0; shape < NSHAPES; shape++)
        for (int mode = 0; mode < NMODES; mode++) {
            MPI_Comm c = mode % 2 ? dup : MPI_COMM_WORLD;
            run_around(c, t++, shape, mode, window, others_meanwhile);
            pending_ints = 3 * window + 1;
            pending_values = bcast_values(pending_ints, 0, t++);
            MPI_Ibcast(pending_values, (int)pending_ints, MPI_INT, 0, c, &pending);
            run_around(c, t++, (shape + 3) % NSHAPES, mode, window, wait_pending);
        }
    unsigned long long v2 = mt_pvar_value("coll.alltoallv.node"), w2 = mt_pvar_value("coll.alltoallw.node");
    /* A long run: each call agrees its pieces afresh, and the ring goes round many times. */
    for (int k = 0; k < 240; k++) {
        int shape = k % 37 == 5 ? SHAPE_ONE_HUGE : (k * 7) % NSHAPES == SHAPE_ONE_HUGE ? SHAPE_MIXED : (k * 7) % NSHAPES;
        run(k % 2 ? dup : MPI_COMM_WORLD, t++, shape, k % NMODES, window);
        if (k % 11 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    const char *forced_v = getenv("COURIER_COLL_ALLTOALLV"), *forced_w = getenv("COURIER_COLL_ALLTOALLW");
    bool staged_here = size > 1 && mt_one_node(MPI_COMM_WORLD); /* (across nodes: by pairs) */
    if (staged_here && !(forced_v && strcmp(forced_v, "pairwise") == 0))
        CHECK(mt_pvar_value("coll.alltoallv.node") > v0, "no MPI_Alltoallv call was staged through shared memory");
    if (staged_here && !(forced_w && strcmp(forced_w, "pairwise") == 0))
        CHECK(mt_pvar_value("coll.alltoallw.node") > w0, "no MPI_Alltoallw call was staged through shared memory");
    if (staged_here && !(forced_v && strcmp(forced_v, "pairwise") == 0))
        CHECK(v2 - v1 == 2 * NSHAPES * 3, "%llu of %d MPI_Ialltoallv calls were staged", v2 - v1, 2 * NSHAPES * 3);
    if (staged_here && !(forced_w && strcmp(forced_w, "pairwise") == 0))
        CHECK(w2 - w1 == 2 * NSHAPES * 2, "%llu of %d MPI_Ialltoallw calls were staged", w2 - w1, 2 * NSHAPES * 2);
    MPI_Comm_free(&dup);
    MPI_Type_free(&strided_int);
    return mt_finish();
}
