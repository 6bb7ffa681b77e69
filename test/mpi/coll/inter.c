/* Collectives on intercommunicators (blocking, nonblocking, persistent): the data each group gets from the other, for every collective, group shape and root. */
#include "mpitest.h"

#include <stdint.h>

static int rank, size;

/* An intercommunicator and this process's place in it. */
typedef struct {
    MPI_Comm ic;
    int g;            /* this process's group: 0 or 1 */
    int lrank, lsize; /* in the local group */
    int rsize;        /* the remote group's size */
    int n[2];         /* the sizes of groups 0 and 1 */
    char name[64];
} ictx;

enum { M_BLOCK, M_NB, M_PERSIST };
static const char *const mode_name[3] = {"blocking", "nonblocking", "persistent"};
static int mode;                            /* the form the next COLL runs */
static MPI_Request preq = MPI_REQUEST_NULL; /* the persistent request COLL makes once and restarts */
static char where[256];                     /* what is running, for messages */

/* Runs a collective in the current form: blocking; nonblocking and waited; or persistent,
 * made on the first call (until done() frees it) and started on every call. */
#define COLL(blocking, nonblocking, init, ...)                                                                     \
    do {                                                                                                           \
        if (mode == M_BLOCK)                                                                                       \
            CHECK_CLASS(blocking(__VA_ARGS__), MPI_SUCCESS);                                                       \
        else if (mode == M_NB) {                                                                                   \
            MPI_Request r_ = MPI_REQUEST_NULL;                                                                     \
            CHECK_CLASS(nonblocking(__VA_ARGS__, &r_), MPI_SUCCESS);                                               \
            MPI_Wait(&r_, MPI_STATUS_IGNORE);                                                                      \
        } else {                                                                                                   \
            if (preq == MPI_REQUEST_NULL)                                                                          \
                CHECK_CLASS(init(__VA_ARGS__, MPI_INFO_NULL, &preq), MPI_SUCCESS);                                 \
            MPI_Start(&preq);                                                                                      \
            MPI_Wait(&preq, MPI_STATUS_IGNORE);                                                                    \
        }                                                                                                          \
    } while (0)

static void done(void)
{
    if (preq != MPI_REQUEST_NULL)
        MPI_Request_free(&preq);
    preq = MPI_REQUEST_NULL;
}

/* Runs of a call: a persistent request is started 3 times, the data changed in between. */
static int reps(void)
{
    return mode == M_PERSIST ? 3 : 1;
}

/* Every root: each rank of group rg in turn (blocking), or its first and last (the others). */
#define FOR_ROOTS(c, rg, rr)                                                                                       \
    for (int rg = 0; rg < 2; rg++)                                                                                 \
        for (int rr = 0; rr < (c)->n[rg]; rr++)                                                                    \
            if (mode == M_BLOCK || rr == 0 || rr == (c)->n[rg] - 1)

enum { ROOT, IDLE, PEER };
/* The root argument for root rank rr of group rg, and what this process is. */
static int root_arg(const ictx *c, int rg, int rr, int *role)
{
    if (c->g == rg) {
        *role = c->lrank == rr ? ROOT : IDLE;
        return c->lrank == rr ? MPI_ROOT : MPI_PROC_NULL;
    }
    *role = PEER;
    return rr;
}

#define SENT (-777777)

/* Element i of the data of process r of group g (salt changes it from run to run). */
static int val(int g, int r, int i, int salt)
{
    return (g + 1) * 1000000 + r * 10000 + i * 7 + salt * 131;
}

/* ------------------------------------------------------------ a non-commutative operation */

typedef struct {
    int a, b;
} aff; /* x -> a x + b (mod 2^32) */

static MPI_Op aff_op;

static aff compose(aff f, aff h) /* f o h */
{
    uint32_t a = (uint32_t)f.a * (uint32_t)h.a, b = (uint32_t)f.a * (uint32_t)h.b + (uint32_t)f.b;
    return (aff){(int)a, (int)b};
}
static void aff_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        ((aff *)inout)[k] = compose(((aff *)in)[k], ((aff *)inout)[k]);
}
static aff aff_of(int g, int r, int i, int salt)
{
    uint32_t h = (uint32_t)val(g, r, i, salt) * 2654435761u;
    h ^= h >> 13;
    return (aff){1 + 2 * (int)(h & 15), (int)((h >> 8) & 0xfff)};
}
/* The rank-ordered composition of element i over group g of n processes. */
static aff aff_expect(int g, int n, int i, int salt)
{
    aff res = aff_of(g, n - 1, i, salt);
    for (int r = n - 2; r >= 0; r--)
        res = compose(aff_of(g, r, i, salt), res);
    return res;
}
static int sum_expect(int g, int n, int i, int salt)
{
    int s = 0;
    for (int r = 0; r < n; r++)
        s += val(g, r, i, salt);
    return s;
}

/* ------------------------------------------------------------------------------ barrier */

/* No process leaves before every process of the other group has entered: MPI_Wtime is one
 * clock for every process of a node, so times of entry and exit compare across processes. One
 * process of a group enters late each time. */
static void t_barrier(const ictx *c)
{
    double *tin = malloc((size_t)size * sizeof(double)), *tout = malloc((size_t)size * sizeof(double));
    int *gs = malloc((size_t)size * sizeof(int));
    MPI_Allgather(&c->g, 1, MPI_INT, gs, 1, MPI_INT, MPI_COMM_WORLD);
    for (int it = 0; it < reps(); it++) {
        int late_g = it % 2, late_r = (it * 3 + 1) % c->n[late_g];
        if (c->g == late_g && c->lrank == late_r) {
            double t = MPI_Wtime();
            while (MPI_Wtime() - t < 0.01)
                ;
        }
        double t0 = MPI_Wtime();
        COLL(MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, c->ic);
        double t1 = MPI_Wtime();
        MPI_Allgather(&t0, 1, MPI_DOUBLE, tin, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Allgather(&t1, 1, MPI_DOUBLE, tout, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int w = 0; w < size; w++)
            if (gs[w] != c->g)
                CHECK(t1 >= tin[w], "%s run %d: left the barrier at %.6f before world rank %d entered at %.6f", where, it,
                      t1, w, tin[w]);
    }
    done();
    free(tin);
    free(tout);
    free(gs);
}

/* -------------------------------------------------------------------------------- bcast */

enum { N = 5 };

static void t_bcast(const ictx *c)
{
    /* Type 0: N ints. Type 1: two strided vectors (3 blocks of 2, stride 4) at the root and at
     * half of the receivers, 12 contiguous ints at the other half. */
    MPI_Datatype vec;
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int buf[20];
    for (int dt = 0; dt < 2; dt++)
        FOR_ROOTS(c, rg, rr)
        {
            int role, root = root_arg(c, rg, rr, &role);
            int strided = dt == 1 && (role == ROOT || c->lrank % 2 == 0);
            MPI_Datatype t = dt == 0 ? MPI_INT : strided ? vec : MPI_INT;
            int count = dt == 0 ? N : strided ? 2 : 12;
            for (int it = 0; it < reps(); it++) {
                for (int i = 0; i < 20; i++)
                    buf[i] = role == ROOT ? val(rg, rr, i, it) : SENT;
                COLL(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, buf, count, t, root, c->ic);
                for (int i = 0; i < 20; i++) {
                    int want = SENT;
                    if (role == ROOT)
                        want = val(rg, rr, i, it);
                    else if (role == PEER && dt == 0 && i < N)
                        want = val(rg, rr, i, it);
                    else if (role == PEER && dt == 1) {
                        /* element e of the 12 sits at 10 (e / 6) + 4 ((e % 6) / 2) + e % 2 at the root */
                        if (strided) {
                            if (i % 10 % 4 < 2) /* blocks at 0, 4, 8 of each vector */
                                want = val(rg, rr, i, it);
                        } else if (i < 12)
                            want = val(rg, rr, 10 * (i / 6) + 4 * ((i % 6) / 2) + i % 2, it);
                    }
                    CHECK(buf[i] == want, "%s bcast type %d root %d/%d run %d: element %d is %d, expected %d", where,
                          dt, rg, rr, it, i, buf[i], want);
                }
            }
            done();
        }
    MPI_Type_free(&vec);
}

/* ------------------------------------------------------------------------------- reduce */

static void t_reduce(const ictx *c)
{
    int sb[N], rb[N];
    aff sa[N], ra[N];
    FOR_ROOTS(c, rg, rr)
    for (int op = 0; op < 2; op++) {
        int role, root = root_arg(c, rg, rr, &role);
        for (int it = 0; it < reps(); it++) {
            for (int i = 0; i < N; i++) {
                sb[i] = role == ROOT ? SENT : val(c->g, c->lrank, i, it);
                sa[i] = aff_of(c->g, c->lrank, i, it);
                rb[i] = SENT;
                ra[i] = (aff){SENT, SENT};
            }
            if (op == 0)
                COLL(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, sb, rb, N, MPI_INT, MPI_SUM, root, c->ic);
            else
                COLL(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, sa, ra, N, MPI_2INT, aff_op, root, c->ic);
            for (int i = 0; i < N; i++) {
                if (op == 0) {
                    int want = role == ROOT ? sum_expect(1 - rg, c->rsize, i, it) : SENT;
                    CHECK(rb[i] == want, "%s reduce sum root %d/%d run %d: element %d is %d, expected %d", where, rg, rr,
                          it, i, rb[i], want);
                } else {
                    aff want = role == ROOT ? aff_expect(1 - rg, c->rsize, i, it) : (aff){SENT, SENT};
                    CHECK(ra[i].a == want.a && ra[i].b == want.b,
                          "%s reduce non-commutative root %d/%d run %d: element %d is (%d,%d), expected (%d,%d)", where,
                          rg, rr, it, i, ra[i].a, ra[i].b, want.a, want.b);
                }
            }
        }
        done();
    }
}

static void t_allreduce(const ictx *c)
{
    int sb[N], rb[N];
    aff sa[N], ra[N];
    for (int op = 0; op < 2; op++) {
        for (int it = 0; it < reps(); it++) {
            for (int i = 0; i < N; i++) {
                sb[i] = val(c->g, c->lrank, i, it);
                sa[i] = aff_of(c->g, c->lrank, i, it);
                rb[i] = SENT;
                ra[i] = (aff){SENT, SENT};
            }
            if (op == 0)
                COLL(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, sb, rb, N, MPI_INT, MPI_SUM, c->ic);
            else
                COLL(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, sa, ra, N, MPI_2INT, aff_op, c->ic);
            for (int i = 0; i < N; i++) {
                if (op == 0) {
                    int want = sum_expect(1 - c->g, c->rsize, i, it);
                    CHECK(rb[i] == want, "%s allreduce sum run %d: element %d is %d, expected %d", where, it, i, rb[i],
                          want);
                } else {
                    aff want = aff_expect(1 - c->g, c->rsize, i, it);
                    CHECK(ra[i].a == want.a && ra[i].b == want.b,
                          "%s allreduce non-commutative run %d: element %d is (%d,%d), expected (%d,%d)", where, it, i,
                          ra[i].a, ra[i].b, want.a, want.b);
                }
            }
        }
        done();
    }
}

/* ------------------------------------------------------------------ gather and scatter */

enum { B = 4 }; /* elements per process */

/* gvec: 2 blocks of 2 ints, stride 3 (extent 5 ints, ints 0, 1, 3, 4 of it). */
static MPI_Datatype gvec;
static int gvec_pos(int e) /* where element e of a gvec lies */
{
    return e < 2 ? e : e + 1;
}

static void t_gather(const ictx *c)
{
    /* Type 0: B ints each way. 1: senders send one gvec, the root receives B ints per block.
     * 2: senders send B ints, the root receives one gvec per block (5 ints apart). */
    int q = c->rsize, *rb = malloc((size_t)5 * (size_t)size * sizeof(int)), sb[5];
    for (int dt = 0; dt < 3; dt++)
        FOR_ROOTS(c, rg, rr)
        {
            int role, root = root_arg(c, rg, rr, &role);
            int rext = dt == 2 ? 5 : B; /* ints per block at the root */
            for (int it = 0; it < reps(); it++) {
                for (int i = 0; i < 5; i++)
                    sb[i] = SENT;
                for (int e = 0; e < B; e++)
                    sb[dt == 1 ? gvec_pos(e) : e] = val(c->g, c->lrank, e, it);
                for (int i = 0; i < 5 * size; i++)
                    rb[i] = SENT;
                COLL(MPI_Gather, MPI_Igather, MPI_Gather_init, sb, dt == 1 ? 1 : B, dt == 1 ? gvec : MPI_INT, rb,
                     dt == 2 ? 1 : B, dt == 2 ? gvec : MPI_INT, root, c->ic);
                for (int i = 0; i < 5 * size; i++) {
                    int want = SENT, j = i / rext, k = i % rext;
                    if (role == ROOT && j < q && (dt != 2 || k != 2))
                        want = val(1 - rg, j, dt == 2 && k > 2 ? k - 1 : k, it);
                    CHECK(rb[i] == want, "%s gather type %d root %d/%d run %d: element %d is %d, expected %d", where, dt,
                          rg, rr, it, i, rb[i], want);
                }
            }
            done();
        }
    free(rb);
}

/* Counts and displacements of the v forms: process j of a group of n gets (j + salt) % 3
 * elements, blocks laid out in reverse order with a gap of one after each. */
static int vcount(int j, int salt)
{
    return (j + salt) % 3;
}
static void vlayout(int n, int salt, int *counts, int *displs)
{
    int at = 0;
    for (int j = n - 1; j >= 0; j--) {
        counts[j] = vcount(j, salt);
        displs[j] = at;
        at += counts[j] + 1;
    }
}

static void t_gatherv(const ictx *c)
{
    int q = c->rsize, n = 4 * size, *rb = malloc((size_t)n * sizeof(int)), sb[3];
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    FOR_ROOTS(c, rg, rr)
    {
        int role, root = root_arg(c, rg, rr, &role), salt = rr;
        vlayout(q, salt, counts, displs);
        for (int it = 0; it < reps(); it++) {
            for (int i = 0; i < 3; i++)
                sb[i] = val(c->g, c->lrank, i, it);
            for (int i = 0; i < n; i++)
                rb[i] = SENT;
            COLL(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, sb, vcount(c->lrank, salt), MPI_INT, rb, counts, displs,
                 MPI_INT, root, c->ic);
            int *want = malloc((size_t)n * sizeof(int));
            for (int i = 0; i < n; i++)
                want[i] = SENT;
            if (role == ROOT)
                for (int j = 0; j < q; j++)
                    for (int k = 0; k < counts[j]; k++)
                        want[displs[j] + k] = val(1 - rg, j, k, it);
            for (int i = 0; i < n; i++)
                CHECK(rb[i] == want[i], "%s gatherv root %d/%d run %d: element %d is %d, expected %d", where, rg, rr, it,
                      i, rb[i], want[i]);
            free(want);
        }
        done();
    }
    free(rb);
    free(counts);
    free(displs);
}

static void t_scatter(const ictx *c)
{
    /* Type 0: B ints each way. 1: the root sends one gvec per block (5 ints apart), receivers
     * take B ints. 2: the root sends B ints per block, receivers take one gvec. */
    int q = c->rsize, *sb = malloc((size_t)5 * (size_t)size * sizeof(int)), rb[5];
    for (int dt = 0; dt < 3; dt++)
        FOR_ROOTS(c, rg, rr)
        {
            int role, root = root_arg(c, rg, rr, &role);
            int sext = dt == 1 ? 5 : B;
            for (int it = 0; it < reps(); it++) {
                for (int i = 0; i < 5 * size; i++) /* element (j, e) of the root's blocks at j sext + pos(e) */
                    sb[i] = SENT;
                if (role == ROOT)
                    for (int j = 0; j < q; j++)
                        for (int e = 0; e < B; e++)
                            sb[j * sext + (dt == 1 ? gvec_pos(e) : e)] = val(rg, rr, 100 * j + e, it);
                for (int i = 0; i < 5; i++)
                    rb[i] = SENT;
                COLL(MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, sb, dt == 1 ? 1 : B, dt == 1 ? gvec : MPI_INT, rb,
                     dt == 2 ? 1 : B, dt == 2 ? gvec : MPI_INT, root, c->ic);
                for (int i = 0; i < 5; i++) {
                    int want = SENT;
                    if (role == PEER && dt != 2 && i < B)
                        want = val(rg, rr, 100 * c->lrank + i, it);
                    if (role == PEER && dt == 2 && i != 2)
                        want = val(rg, rr, 100 * c->lrank + (i > 2 ? i - 1 : i), it);
                    CHECK(rb[i] == want, "%s scatter type %d root %d/%d run %d: element %d is %d, expected %d", where,
                          dt, rg, rr, it, i, rb[i], want);
                }
            }
            done();
        }
    free(sb);
}

static void t_scatterv(const ictx *c)
{
    int q = c->rsize, n = 4 * size, *sb = malloc((size_t)n * sizeof(int)), rb[4];
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    FOR_ROOTS(c, rg, rr)
    {
        int role, root = root_arg(c, rg, rr, &role), salt = rr + 1;
        vlayout(q, salt, counts, displs);
        for (int it = 0; it < reps(); it++) {
            for (int i = 0; i < n; i++)
                sb[i] = role == ROOT ? val(rg, rr, i, it) : SENT;
            for (int i = 0; i < 4; i++)
                rb[i] = SENT;
            COLL(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, sb, counts, displs, MPI_INT, rb,
                 vcount(c->lrank, salt), MPI_INT, root, c->ic);
            for (int i = 0; i < 4; i++) {
                int want = SENT;
                if (role == PEER && i < vcount(c->lrank, salt)) {
                    /* this process's block at the root: laid out for the root's remote group, which is ours */
                    int at = 0;
                    for (int j = c->lsize - 1; j > c->lrank; j--)
                        at += vcount(j, salt) + 1;
                    want = val(rg, rr, at + i, it);
                }
                CHECK(rb[i] == want, "%s scatterv root %d/%d run %d: element %d is %d, expected %d", where, rg, rr, it,
                      i, rb[i], want);
            }
        }
        done();
    }
    free(sb);
    free(counts);
    free(displs);
}

/* ----------------------------------------------------------------------------- allgather */

static void t_allgather(const ictx *c)
{
    /* Group g sends g + 2 ints per process: the two directions carry different amounts. */
    int q = c->rsize, mine = c->g + 2, theirs = 3 - c->g, n = 3 * size + 1;
    int *rb = malloc((size_t)n * sizeof(int)), sb[3];
    for (int it = 0; it < reps(); it++) {
        for (int i = 0; i < mine; i++)
            sb[i] = val(c->g, c->lrank, i, it);
        for (int i = 0; i < n; i++)
            rb[i] = SENT;
        COLL(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, sb, mine, MPI_INT, rb, theirs, MPI_INT, c->ic);
        for (int i = 0; i < n; i++) {
            int want = i < q * theirs ? val(1 - c->g, i / theirs, i % theirs, it) : SENT;
            CHECK(rb[i] == want, "%s allgather run %d: element %d is %d, expected %d", where, it, i, rb[i], want);
        }
    }
    done();
    free(rb);
}

static void t_allgatherv(const ictx *c)
{
    /* Process j of group h sends vcount(j, h) ints; placed in reverse order with gaps. */
    int q = c->rsize, n = 4 * size, *rb = malloc((size_t)n * sizeof(int)), sb[3];
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    vlayout(q, 1 - c->g, counts, displs);
    for (int it = 0; it < reps(); it++) {
        for (int i = 0; i < 3; i++)
            sb[i] = val(c->g, c->lrank, i, it);
        for (int i = 0; i < n; i++)
            rb[i] = SENT;
        COLL(MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, sb, vcount(c->lrank, c->g), MPI_INT, rb, counts,
             displs, MPI_INT, c->ic);
        int *want = malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++)
            want[i] = SENT;
        for (int j = 0; j < q; j++)
            for (int k = 0; k < counts[j]; k++)
                want[displs[j] + k] = val(1 - c->g, j, k, it);
        for (int i = 0; i < n; i++)
            CHECK(rb[i] == want[i], "%s allgatherv run %d: element %d is %d, expected %d", where, it, i, rb[i], want[i]);
        free(want);
    }
    done();
    free(rb);
    free(counts);
    free(displs);
}

/* ------------------------------------------------------------------------------ alltoall */

/* Element k of what process i of group h sends to process j of the other group. */
static int a2a(int h, int i, int j, int k, int salt)
{
    return val(h, i, 100 * j + k, salt);
}

static void t_alltoall(const ictx *c)
{
    /* Group g sends g + 1 ints to each process of the other group. Type 0: contiguous. Type 1:
     * senders send one strided block (every other int, resized to 2 (g + 1) ints) per
     * destination, receivers take contiguous ints. Type 2: the other way round. */
    int q = c->rsize, mine = c->g + 1, theirs = 2 - c->g, n = 6 * size;
    int *sb = malloc((size_t)n * sizeof(int)), *rb = malloc((size_t)n * sizeof(int));
    MPI_Datatype sv, rv, tmp;
    MPI_Type_vector(mine, 1, 2, MPI_INT, &tmp);
    MPI_Type_create_resized(tmp, 0, (MPI_Aint)(2 * mine * sizeof(int)), &sv);
    MPI_Type_free(&tmp);
    MPI_Type_vector(theirs, 1, 2, MPI_INT, &tmp);
    MPI_Type_create_resized(tmp, 0, (MPI_Aint)(2 * theirs * sizeof(int)), &rv);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&sv);
    MPI_Type_commit(&rv);
    for (int dt = 0; dt < 3; dt++) {
        int sstride = dt == 1 ? 2 : 1, rstride = dt == 2 ? 2 : 1;
        for (int it = 0; it < reps(); it++) {
            for (int i = 0; i < n; i++)
                sb[i] = rb[i] = SENT;
            for (int j = 0; j < q; j++)
                for (int k = 0; k < mine; k++)
                    sb[sstride * (j * mine + k)] = a2a(c->g, c->lrank, j, k, it);
            COLL(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, sb, dt == 1 ? 1 : mine, dt == 1 ? sv : MPI_INT, rb,
                 dt == 2 ? 1 : theirs, dt == 2 ? rv : MPI_INT, c->ic);
            for (int i = 0; i < n; i++) {
                int want = SENT;
                if (i % rstride == 0 && i / rstride < q * theirs) {
                    int e = i / rstride;
                    want = a2a(1 - c->g, e / theirs, c->lrank, e % theirs, it);
                }
                CHECK(rb[i] == want, "%s alltoall type %d run %d: element %d is %d, expected %d", where, dt, it, i,
                      rb[i], want);
            }
        }
        done();
    }
    MPI_Type_free(&sv);
    MPI_Type_free(&rv);
    free(sb);
    free(rb);
}

/* What process i of group h sends to process j of the other group in the v and w forms. */
static int a2v_count(int h, int i, int j)
{
    return (i + 2 * j + h) % 3;
}

static void t_alltoallvw(const ictx *c, int w)
{
    int q = c->rsize, n = 4 * size;
    int *sb = malloc((size_t)n * sizeof(int)), *rb = malloc((size_t)n * sizeof(int));
    int *sc = malloc((size_t)size * sizeof(int)), *sd = malloc((size_t)size * sizeof(int));
    int *rc = malloc((size_t)size * sizeof(int)), *rd = malloc((size_t)size * sizeof(int));
    MPI_Datatype *st = malloc((size_t)size * sizeof *st), *rt = malloc((size_t)size * sizeof *rt);
    /* Blocks in reverse order of destination, one int apart. */
    int sat = 0, rat = 0;
    for (int j = q - 1; j >= 0; j--) {
        sc[j] = a2v_count(c->g, c->lrank, j);
        rc[j] = a2v_count(1 - c->g, j, c->lrank);
        sd[j] = sat, rd[j] = rat;
        sat += sc[j] + 1, rat += rc[j] + 1;
    }
    if (w) { /* byte displacements; odd destinations get one contiguous type of all their ints */
        for (int j = 0; j < q; j++) {
            st[j] = rt[j] = MPI_INT;
            if (j % 2 && sc[j] > 0) {
                MPI_Type_contiguous(sc[j], MPI_INT, &st[j]);
                MPI_Type_commit(&st[j]);
            }
        }
        for (int j = 0; j < q; j++) {
            sd[j] *= (int)sizeof(int);
            rd[j] *= (int)sizeof(int);
            if (j % 2 && sc[j] > 0)
                sc[j] = 1;
        }
    }
    for (int it = 0; it < reps(); it++) {
        for (int i = 0; i < n; i++)
            sb[i] = rb[i] = SENT;
        for (int j = 0; j < q; j++) {
            int at = w ? sd[j] / (int)sizeof(int) : sd[j];
            for (int k = 0; k < a2v_count(c->g, c->lrank, j); k++)
                sb[at + k] = a2a(c->g, c->lrank, j, k, it);
        }
        if (w)
            COLL(MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, sb, sc, sd, st, rb, rc, rd, rt, c->ic);
        else
            COLL(MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c->ic);
        int *want = malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++)
            want[i] = SENT;
        for (int j = 0; j < q; j++)
            for (int k = 0; k < rc[j]; k++)
                want[(w ? rd[j] / (int)sizeof(int) : rd[j]) + k] = a2a(1 - c->g, j, c->lrank, k, it);
        for (int i = 0; i < n; i++)
            CHECK(rb[i] == want[i], "%s alltoall%s run %d: element %d is %d, expected %d", where, w ? "w" : "v", it, i,
                  rb[i], want[i]);
        free(want);
    }
    done();
    if (w)
        for (int j = 0; j < q; j++)
            if (st[j] != MPI_INT)
                MPI_Type_free(&st[j]);
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(st);
    free(rt);
}

/* ------------------------------------------------------------------------ reduce_scatter */

enum { T = 10 }; /* elements of the vectors of MPI_Reduce_scatter, the same in both groups */

/* Process i of a group of p gets (i + 1) T / p - i T / p of them (0 for some when p > T). */
static int rs_count(int p, int i)
{
    return (i + 1) * T / p - i * T / p;
}

static void t_reduce_scatter(const ictx *c)
{
    int p = c->lsize, counts[64], sb[T], rb[T + 1];
    aff sa[T], ra[T + 1];
    int at = 0;
    for (int i = 0; i < p; i++)
        counts[i] = rs_count(p, i);
    for (int i = 0; i < c->lrank; i++)
        at += counts[i];
    for (int op = 0; op < 2; op++) {
        for (int it = 0; it < reps(); it++) {
            for (int i = 0; i < T; i++) {
                sb[i] = val(c->g, c->lrank, i, it);
                sa[i] = aff_of(c->g, c->lrank, i, it);
            }
            for (int i = 0; i <= T; i++) {
                rb[i] = SENT;
                ra[i] = (aff){SENT, SENT};
            }
            if (op == 0)
                COLL(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, sb, rb, counts, MPI_INT,
                     MPI_SUM, c->ic);
            else
                COLL(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, sa, ra, counts, MPI_2INT,
                     aff_op, c->ic);
            for (int i = 0; i <= T; i++) {
                if (op == 0) {
                    int want = i < counts[c->lrank] ? sum_expect(1 - c->g, c->rsize, at + i, it) : SENT;
                    CHECK(rb[i] == want, "%s reduce_scatter sum run %d: element %d is %d, expected %d", where, it, i,
                          rb[i], want);
                } else {
                    aff want = i < counts[c->lrank] ? aff_expect(1 - c->g, c->rsize, at + i, it) : (aff){SENT, SENT};
                    CHECK(ra[i].a == want.a && ra[i].b == want.b,
                          "%s reduce_scatter non-commutative run %d: element %d is (%d,%d), expected (%d,%d)", where, it,
                          i, ra[i].a, ra[i].b, want.a, want.b);
                }
            }
        }
        done();
    }
}

static void t_reduce_scatter_block(const ictx *c)
{
    /* Each process gets as many elements as the other group has processes: both groups
     * reduce vectors of n0 n1 elements. */
    int q = c->rsize, total = c->lsize * q;
    int *sb = malloc((size_t)total * sizeof(int)), *rb = malloc((size_t)(q + 1) * sizeof(int));
    aff *sa = malloc((size_t)total * sizeof(aff)), *ra = malloc((size_t)(q + 1) * sizeof(aff));
    for (int op = 0; op < 2; op++) {
        for (int it = 0; it < reps(); it++) {
            for (int i = 0; i < total; i++) {
                sb[i] = val(c->g, c->lrank, i, it);
                sa[i] = aff_of(c->g, c->lrank, i, it);
            }
            for (int i = 0; i <= q; i++) {
                rb[i] = SENT;
                ra[i] = (aff){SENT, SENT};
            }
            if (op == 0)
                COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, sb, rb, q,
                     MPI_INT, MPI_SUM, c->ic);
            else
                COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, sa, ra, q,
                     MPI_2INT, aff_op, c->ic);
            for (int i = 0; i <= q; i++) {
                if (op == 0) {
                    int want = i < q ? sum_expect(1 - c->g, q, c->lrank * q + i, it) : SENT;
                    CHECK(rb[i] == want, "%s reduce_scatter_block sum run %d: element %d is %d, expected %d", where, it,
                          i, rb[i], want);
                } else {
                    aff want = i < q ? aff_expect(1 - c->g, q, c->lrank * q + i, it) : (aff){SENT, SENT};
                    CHECK(ra[i].a == want.a && ra[i].b == want.b,
                          "%s reduce_scatter_block non-commutative run %d: element %d is (%d,%d), expected (%d,%d)",
                          where, it, i, ra[i].a, ra[i].b, want.a, want.b);
                }
            }
        }
        done();
    }
    free(sb);
    free(rb);
    free(sa);
    free(ra);
}

/* ------------------------------------------------------------ many outstanding at once */

/* Nonblocking: ten collectives started one after another, then waited in reverse order.
 * Persistent: the same made once, run 3 times by MPI_Startall with new data each time, waited
 * in reverse order. */
static void t_many(const ictx *c, int persistent)
{
    enum { K = 10 };
    int q = c->rsize, p = c->lsize;
    MPI_Request rq[K];
    int bc[N], rsb[N], rrb[N], ars[N], arr[N], agr[64], a2s[64], a2r[64], gs[B], gr[64 * B], ss[64 * B], sr[B];
    int rbs[64 * 64], rbr[64];
    /* Roots: bcast from group 0's last rank, gather to group 1's rank 0, scatter from group
     * 1's last rank, reduce to group 0's rank 0. */
    int br = c->n[0] - 1, gr1 = 0, sr1 = c->n[1] - 1, rr0 = 0;
    int brole, grole, srole, rrole;
    int broot = root_arg(c, 0, br, &brole), groot = root_arg(c, 1, gr1, &grole), sroot = root_arg(c, 1, sr1, &srole),
        rroot = root_arg(c, 0, rr0, &rrole);
    snprintf(where, sizeof where, "%s, %s, many outstanding", c->name, persistent ? "persistent" : "nonblocking");
    if (q > 64 || p > 64)
        return;
    for (int it = 0; it < (persistent ? 3 : 1); it++) {
        for (int i = 0; i < N; i++) {
            bc[i] = brole == ROOT ? val(0, br, i, it) : SENT;
            rsb[i] = val(c->g, c->lrank, i + 50, it);
            rrb[i] = SENT;
            ars[i] = val(c->g, c->lrank, i + 70, it);
            arr[i] = SENT;
        }
        for (int i = 0; i < 64; i++)
            agr[i] = rbr[i] = a2r[i] = SENT;
        for (int j = 0; j < q; j++)
            a2s[j] = a2a(c->g, c->lrank, j, 0, it);
        for (int i = 0; i < B; i++) {
            gs[i] = val(c->g, c->lrank, i + 90, it);
            sr[i] = SENT;
        }
        for (int i = 0; i < 64 * B; i++) {
            gr[i] = SENT;
            ss[i] = srole == ROOT ? val(1, sr1, i + 300, it) : SENT;
        }
        for (int i = 0; i < p * q; i++)
            rbs[i] = val(c->g, c->lrank, i + 500, it);
        if (!persistent || it == 0) {
#define START(k, nb, init, ...)                                                                                    \
    CHECK_CLASS(persistent ? init(__VA_ARGS__, MPI_INFO_NULL, &rq[k]) : nb(__VA_ARGS__, &rq[k]), MPI_SUCCESS)
            START(0, MPI_Ibcast, MPI_Bcast_init, bc, N, MPI_INT, broot, c->ic);
            START(1, MPI_Ireduce, MPI_Reduce_init, rsb, rrb, N, MPI_INT, MPI_SUM, rroot, c->ic);
            START(2, MPI_Iallreduce, MPI_Allreduce_init, ars, arr, N, MPI_INT, MPI_SUM, c->ic);
            START(3, MPI_Ibarrier, MPI_Barrier_init, c->ic);
            START(4, MPI_Iallgather, MPI_Allgather_init, &c->lrank, 1, MPI_INT, agr, 1, MPI_INT, c->ic);
            START(5, MPI_Ialltoall, MPI_Alltoall_init, a2s, 1, MPI_INT, a2r, 1, MPI_INT, c->ic);
            START(6, MPI_Igather, MPI_Gather_init, gs, B, MPI_INT, gr, B, MPI_INT, groot, c->ic);
            START(7, MPI_Iscatter, MPI_Scatter_init, ss, B, MPI_INT, sr, B, MPI_INT, sroot, c->ic);
            START(8, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, rbs, rbr, q, MPI_INT, MPI_SUM, c->ic);
            START(9, MPI_Ibarrier, MPI_Barrier_init, c->ic);
#undef START
        }
        if (persistent)
            MPI_Startall(K, rq);
        for (int k = K - 1; k >= 0; k--)
            MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            int want = brole == PEER || brole == ROOT ? val(0, br, i, it) : SENT;
            CHECK(bc[i] == want, "%s run %d: bcast element %d is %d, expected %d", where, it, i, bc[i], want);
            want = rrole == ROOT ? sum_expect(1, q, i + 50, it) : SENT;
            CHECK(rrb[i] == want, "%s run %d: reduce element %d is %d, expected %d", where, it, i, rrb[i], want);
            want = sum_expect(1 - c->g, q, i + 70, it);
            CHECK(arr[i] == want, "%s run %d: allreduce element %d is %d, expected %d", where, it, i, arr[i], want);
        }
        for (int j = 0; j < 64; j++) {
            int want = j < q ? j : SENT;
            CHECK(agr[j] == want, "%s run %d: allgather element %d is %d", where, it, j, agr[j]);
            want = j < q ? a2a(1 - c->g, j, c->lrank, 0, it) : SENT;
            CHECK(a2r[j] == want, "%s run %d: alltoall element %d is %d, expected %d", where, it, j, a2r[j], want);
            want = j < q ? sum_expect(1 - c->g, q, c->lrank * q + j + 500, it) : SENT;
            CHECK(rbr[j] == want, "%s run %d: reduce_scatter_block element %d is %d, expected %d", where, it, j, rbr[j],
                  want);
        }
        for (int i = 0; i < 64 * B; i++) {
            int want = grole == ROOT && i < q * B ? val(0, i / B, i % B + 90, it) : SENT;
            CHECK(gr[i] == want, "%s run %d: gather element %d is %d, expected %d", where, it, i, gr[i], want);
        }
        for (int i = 0; i < B; i++) {
            int want = srole == PEER ? val(1, sr1, c->lrank * B + i + 300, it) : SENT;
            CHECK(sr[i] == want, "%s run %d: scatter element %d is %d, expected %d", where, it, i, sr[i], want);
        }
    }
    if (persistent)
        for (int k = 0; k < K; k++)
            MPI_Request_free(&rq[k]);
}

/* ------------------------------------------------------------------------------ errors */

static void t_errors(const ictx *c)
{
    int a[64] = {0}, b[64];
    MPI_Request r = MPI_REQUEST_NULL;
    snprintf(where, sizeof where, "%s, errors", c->name);
    MPI_Comm_set_errhandler(c->ic, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, c->ic), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce_scatter_block(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, c->ic), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Ialltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, c->ic, &r), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allgather_init(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, c->ic, MPI_INFO_NULL, &r), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, c->ic), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, c->ic), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, c->ic, &r), MPI_ERR_COMM);
    /* The communicator still works. */
    int x = c->g + 1, y = -1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c->ic);
    CHECK(y == (2 - c->g) * c->rsize, "%s: allreduce after the errors gave %d", where, y);
}

/* ------------------------------------------------------------------------------- driver */

enum { S_THIRD, S_PARITY, S_LAST_ALONE, S_FIRST_ALONE, S_HALVES, NSHAPES };
static const char *const shape_name[NSHAPES] = {"first third vs rest", "even vs odd", "last rank vs rest",
                                                "rest vs first rank", "high half vs low half"};
static int group_of(int s, int r)
{
    switch (s) {
    case S_THIRD: return r < (size / 3 > 0 ? size / 3 : 1) ? 0 : 1;
    case S_PARITY: return r % 2;
    case S_LAST_ALONE: return r == size - 1 ? 0 : 1;
    case S_FIRST_ALONE: return r == 0 ? 1 : 0;
    default: return r >= size / 2 ? 0 : 1;
    }
}

static void make(ictx *c, int s)
{
    MPI_Comm local;
    int other_first = -1;
    c->g = group_of(s, rank);
    c->n[0] = c->n[1] = 0;
    for (int r = 0; r < size; r++) {
        int g = group_of(s, r);
        c->n[g]++;
        /* leaders: local rank 0 of each group; the parity shape orders by -rank */
        if (g != c->g && (other_first < 0 || s == S_PARITY))
            other_first = r;
    }
    MPI_Comm_split(MPI_COMM_WORLD, c->g, s == S_PARITY ? -rank : rank, &local);
    MPI_Comm_rank(local, &c->lrank);
    MPI_Comm_size(local, &c->lsize);
    c->rsize = c->n[1 - c->g];
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, other_first, 40 + s, &c->ic);
    MPI_Comm_free(&local);
    snprintf(c->name, sizeof c->name, "%s (%d+%d)", shape_name[s], c->n[0], c->n[1]);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size > 64)
        return mt_finish();
    MPI_Op_create(aff_fn, 0, &aff_op);
    MPI_Type_vector(2, 2, 3, MPI_INT, &gvec);
    MPI_Type_commit(&gvec);
    for (int s = 0; s < NSHAPES; s++) {
        ictx c;
        make(&c, s);
        for (mode = M_BLOCK; mode <= M_PERSIST; mode++) {
            snprintf(where, sizeof where, "%s, %s", c.name, mode_name[mode]);
            t_barrier(&c);
            t_bcast(&c);
            t_reduce(&c);
            t_allreduce(&c);
            t_gather(&c);
            t_gatherv(&c);
            t_scatter(&c);
            t_scatterv(&c);
            t_allgather(&c);
            t_allgatherv(&c);
            t_alltoall(&c);
            t_alltoallvw(&c, 0);
            t_alltoallvw(&c, 1);
            t_reduce_scatter(&c);
            t_reduce_scatter_block(&c);
        }
        t_many(&c, 0);
        t_many(&c, 1);
        t_errors(&c);
        MPI_Comm_free(&c.ic);
    }
    MPI_Type_free(&gvec);
    MPI_Op_free(&aff_op);
    return mt_finish();
}
