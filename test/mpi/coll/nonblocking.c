/* Nonblocking collectives (MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce,
 * MPI_Igather, MPI_Iscatter, MPI_Iallgather): the data that arrives at every process, for
 *   - counts 0, 1, 7, 5000 and a large one (300000 elements up to 4 processes, fewer beyond),
 *     so that automatic selection picks every algorithm: binomial and scatter + allgather
 *     bcast, binomial and Rabenseifner reduce and allreduce, recursive doubling, Bruck and
 *     ring allgather; MPI_INT, MPI_DOUBLE and MPI_DOUBLE_INT (a pair type with padding);
 *   - every root (the first, middle and last rank for the large counts), MPI_IN_PLACE where
 *     the standard allows it, recvbuf NULL where it is not significant, send buffers left
 *     alone, no byte written past a receive buffer;
 *   - a non-commutative user operation (composition of affine maps, i.e. 2x2 matrix products)
 *     checked against the rank-ordered product, and a commutative user operation on the
 *     large (Rabenseifner) path;
 *   - every way of completing a request: MPI_Wait, an MPI_Test polling loop, MPI_Waitall,
 *     MPI_Testany; the request is MPI_REQUEST_NULL afterwards; the _c (large-count) calls;
 *   - MPI_Ibarrier does not complete anywhere before the last process has entered it;
 *   - many collectives outstanding at once on one communicator, completed in reverse order
 *     (one MPI_Wait each, MPI_Waitall on the reversed array, MPI_Waitany, MPI_Testsome),
 *     interleaved with collectives on a duplicate and with a blocking collective;
 *   - a process blocked in another call (MPI_Recv, MPI_Probe, MPI_Ssend, a blocking collective
 *     on another communicator or on the same one) still progresses the collectives it started;
 *   - overlap with point-to-point traffic (an MPI_ANY_SOURCE/MPI_ANY_TAG receive posted first
 *     gets the user message, never collective traffic);
 *   - a user operation freed (MPI_Op_free) right after the call, a duplicate communicator
 *     freed (MPI_Comm_free) right after the call: both still complete correctly;
 *   - MPI_Cancel of a collective request fails with MPI_ERR_REQUEST (under MPI_ERRORS_RETURN)
 *     and the operation then completes normally. */
#include "blockdata.h"

static int rank, size;
static MPI_Count large;       /* elements for bcast, reduce, allreduce */
static MPI_Count large_block; /* elements per process for gather, scatter, allgather */

/* ----------------------------------------------------------------- reduction data */

/* Reduction kinds: predefined MPI_SUM on MPI_INT and MPI_DOUBLE, a non-commutative user
 * operation on MPI_2INT (affine maps), a commutative user sum on MPI_INT. */
enum { R_INT, R_DOUBLE, R_AFF, R_USUM, NR };
static const char *const rd_name[NR] = {"MPI_INT MPI_SUM", "MPI_DOUBLE MPI_SUM", "MPI_2INT non-commutative user op",
                                        "MPI_INT commutative user op"};
static MPI_Op aff_op, usum_op;

typedef struct {
    int a, b;
} affine; /* x -> a x + b (mod 2^32): the matrix [[a, b], [0, 1]] */

static size_t rd_extent(int k)
{
    return k == R_DOUBLE ? sizeof(double) : k == R_AFF ? sizeof(affine) : sizeof(int);
}
static MPI_Datatype rd_type(int k)
{
    return k == R_DOUBLE ? MPI_DOUBLE : k == R_AFF ? MPI_2INT : MPI_INT;
}
static MPI_Op rd_op(int k)
{
    return k == R_AFF ? aff_op : k == R_USUM ? usum_op : MPI_SUM;
}

/* io = in o io: the matrix product in * io (in comes from the lower ranks). */
static void aff_compose(const affine *in, affine *io)
{
    uint32_t a1 = (uint32_t)in->a, b1 = (uint32_t)in->b, a2 = (uint32_t)io->a, b2 = (uint32_t)io->b;
    io->a = (int)(a1 * a2);
    io->b = (int)(a1 * b2 + b1);
}
static void aff_gen(int r, MPI_Count i, uint64_t salt, affine *f)
{
    uint64_t h = bd_mix(((uint64_t)r << 40) ^ (uint64_t)i ^ (salt << 20) ^ 0x5a5a);
    f->a = 1 + 2 * (int)(h & 7);
    f->b = (int)((h >> 8) & 0xffff);
}
static void aff_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        aff_compose((affine *)in + k, (affine *)inout + k);
}
static void usum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        ((int *)inout)[k] += ((int *)in)[k];
}

/* Process r's input element i (salt changes the data from call to call). */
static long long ival(int r, MPI_Count i, uint64_t salt)
{
    return (long long)((i + (MPI_Count)salt) % 1000) * (r + 1) + r - 3 * (long long)(i % 7);
}
static long long isum(int p, MPI_Count i, uint64_t salt)
{
    return (long long)((i + (MPI_Count)salt) % 1000) * p * (p + 1) / 2 + (long long)p * (p - 1) / 2 -
           3LL * p * (long long)(i % 7);
}

static void rd_fill(int k, void *buf, MPI_Count n, int r, uint64_t salt)
{
    for (MPI_Count i = 0; i < n; i++) {
        switch (k) {
        case R_DOUBLE: ((double *)buf)[i] = 0.5 * (double)ival(r, i, salt); break;
        case R_AFF: aff_gen(r, i, salt, (affine *)buf + i); break;
        default: ((int *)buf)[i] = (int)ival(r, i, salt); break;
        }
    }
}

/* Checks the reduction over p processes in rank order; returns the number of wrong elements. */
static long rd_check(int k, const void *buf, MPI_Count n, int p, uint64_t salt, const char *what)
{
    long bad = 0;
    for (MPI_Count i = 0; i < n; i++) {
        char got[64], want[64];
        if (k == R_DOUBLE) {
            double g = ((const double *)buf)[i], w = 0.5 * (double)isum(p, i, salt);
            if (g == w)
                continue;
            snprintf(got, sizeof got, "%.1f", g);
            snprintf(want, sizeof want, "%.1f", w);
        } else if (k == R_AFF) {
            affine acc, next, g = ((const affine *)buf)[i];
            aff_gen(0, i, salt, &acc);
            for (int r = 1; r < p; r++) {
                aff_gen(r, i, salt, &next);
                aff_compose(&acc, &next);
                acc = next;
            }
            if (g.a == acc.a && g.b == acc.b)
                continue;
            snprintf(got, sizeof got, "(%d,%d)", g.a, g.b);
            snprintf(want, sizeof want, "the rank-ordered product (%d,%d)", acc.a, acc.b);
        } else {
            int g = ((const int *)buf)[i], w = (int)isum(p, i, salt);
            if (g == w)
                continue;
            snprintf(got, sizeof got, "%d", g);
            snprintf(want, sizeof want, "%d", w);
        }
        if (bad++ < 3)
            CHECK(0, "%s: element %lld is %s, expected %s", what, (long long)i, got, want);
    }
    if (bad > 3)
        CHECK(0, "%s: %ld elements wrong in all", what, bad);
    return bad;
}

/* ----------------------------------------------------------------- one collective call */

enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_SCATTER, C_ALLGATHER, NC };
static const char *const c_name[NC] = {"MPI_Ibarrier", "MPI_Ibcast",  "MPI_Ireduce",   "MPI_Iallreduce",
                                       "MPI_Igather",  "MPI_Iscatter", "MPI_Iallgather"};

/* One call: its arguments, its buffers, its request. */
typedef struct {
    int coll;
    MPI_Comm comm;
    const char *comm_name;
    int k;           /* blockdata kind (B_*) for data movement, R_* for reductions */
    MPI_Count count; /* per process for gather, scatter, allgather */
    int root, in_place, large_api, null_rbuf;
    uint64_t salt;
    MPI_Op op;       /* reductions: the operation passed (rd_op(k) unless set) */
    int r, p;
    char *sbuf, *rbuf, *scopy;
    size_t sbytes, rbytes;
    MPI_Request req;
    char what[240];
} job;

static uint64_t blk_seed(const job *j, int q)
{
    return bd_seed(q, j->coll * 64 + j->root, j->count, (int)j->salt);
}

static void job_init(job *j, int coll, MPI_Comm comm, const char *comm_name, int k, MPI_Count count, int root,
                     int in_place, uint64_t salt)
{
    memset(j, 0, sizeof *j);
    j->coll = coll, j->comm = comm, j->comm_name = comm_name, j->k = k, j->count = count, j->root = root;
    j->in_place = in_place, j->salt = salt;
    j->op = (coll == C_REDUCE || coll == C_ALLREDUCE) ? rd_op(k) : MPI_OP_NULL;
    j->req = MPI_REQUEST_NULL;
}

/* Allocates and fills the buffers. */
static void job_setup(job *j)
{
    MPI_Comm_rank(j->comm, &j->r);
    MPI_Comm_size(j->comm, &j->p);
    int r = j->r, p = j->p, at_root = r == j->root;
    MPI_Count n = j->count;
    switch (j->coll) {
    case C_BARRIER: break;
    case C_BCAST:
        j->rbytes = (size_t)n * bd_extent(j->k);
        j->rbuf = bd_alloc(j->k, n);
        if (at_root)
            bd_fill(j->k, j->rbuf, n, blk_seed(j, j->root));
        break;
    case C_REDUCE:
    case C_ALLREDUCE: {
        size_t ext = rd_extent(j->k);
        j->sbytes = j->rbytes = (size_t)n * ext;
        j->sbuf = malloc(j->sbytes + 1);
        rd_fill(j->k, j->sbuf, n, r, j->salt);
        j->scopy = malloc(j->sbytes + 1);
        memcpy(j->scopy, j->sbuf, j->sbytes);
        if (j->coll == C_REDUCE && !at_root) {
            j->in_place = 0; /* only the root may pass MPI_IN_PLACE */
            if (!j->null_rbuf)
                j->rbuf = malloc(j->rbytes + 1);
            break;
        }
        j->rbuf = malloc(j->rbytes + GUARD);
        memset(j->rbuf, 0x5c, j->rbytes);
        guard_set(j->rbuf, j->rbytes);
        if (j->in_place)
            memcpy(j->rbuf, j->sbuf, j->sbytes);
        break;
    }
    case C_GATHER: {
        size_t block = (size_t)n * bd_extent(j->k);
        j->sbytes = block;
        j->sbuf = bd_alloc(j->k, n);
        bd_fill(j->k, j->sbuf, n, blk_seed(j, r));
        if (at_root) {
            j->rbytes = block * p;
            j->rbuf = bd_alloc(j->k, n * p);
            if (j->in_place)
                bd_fill(j->k, j->rbuf + (size_t)r * block, n, blk_seed(j, r));
        } else {
            j->in_place = 0;
        }
        break;
    }
    case C_SCATTER: {
        size_t block = (size_t)n * bd_extent(j->k);
        j->rbytes = block;
        j->rbuf = bd_alloc(j->k, n);
        if (at_root) {
            j->sbytes = block * p;
            j->sbuf = bd_alloc(j->k, n * p);
            for (int q = 0; q < p; q++)
                bd_fill(j->k, j->sbuf + (size_t)q * block, n, blk_seed(j, q));
        } else {
            j->in_place = 0;
        }
        break;
    }
    case C_ALLGATHER: {
        size_t block = (size_t)n * bd_extent(j->k);
        j->sbytes = block;
        j->sbuf = bd_alloc(j->k, n);
        bd_fill(j->k, j->sbuf, n, blk_seed(j, r));
        j->rbytes = block * p;
        j->rbuf = bd_alloc(j->k, n * p);
        if (j->in_place)
            bd_fill(j->k, j->rbuf + (size_t)r * block, n, blk_seed(j, r));
        break;
    }
    }
    const char *type = j->coll == C_BARRIER                                 ? ""
                       : (j->coll == C_REDUCE || j->coll == C_ALLREDUCE) ? rd_name[j->k]
                                                                           : bd_name(j->k);
    char rootstr[32] = "";
    if (j->coll == C_BCAST || j->coll == C_REDUCE || j->coll == C_GATHER || j->coll == C_SCATTER)
        snprintf(rootstr, sizeof rootstr, " root %d", j->root);
    snprintf(j->what, sizeof j->what, "%s%s count %lld %s%s%s on %s (rank %d of %d, call %llu)", c_name[j->coll],
             j->large_api ? "_c" : "", (long long)n, type, rootstr, j->in_place ? " in place" : "", j->comm_name, r, p,
             (unsigned long long)j->salt);
}

/* Starts the call; returns its return code. */
static int job_start(job *j)
{
    int at_root = j->r == j->root;
    MPI_Count n = j->count;
    MPI_Datatype bt = bd_type(j->k);
    void *ip = MPI_IN_PLACE;
    int rc = MPI_ERR_OTHER;
    switch (j->coll) {
    case C_BARRIER: rc = MPI_Ibarrier(j->comm, &j->req); break;
    case C_BCAST:
        rc = j->large_api ? MPI_Ibcast_c(j->rbuf, n, bt, j->root, j->comm, &j->req)
                          : MPI_Ibcast(j->rbuf, (int)n, bt, j->root, j->comm, &j->req);
        break;
    case C_REDUCE:
        rc = j->large_api ? MPI_Ireduce_c(j->in_place ? ip : j->sbuf, j->rbuf, n, rd_type(j->k), j->op, j->root,
                                          j->comm, &j->req)
                          : MPI_Ireduce(j->in_place ? ip : j->sbuf, j->rbuf, (int)n, rd_type(j->k), j->op, j->root,
                                        j->comm, &j->req);
        break;
    case C_ALLREDUCE:
        rc = j->large_api
                 ? MPI_Iallreduce_c(j->in_place ? ip : j->sbuf, j->rbuf, n, rd_type(j->k), j->op, j->comm, &j->req)
                 : MPI_Iallreduce(j->in_place ? ip : j->sbuf, j->rbuf, (int)n, rd_type(j->k), j->op, j->comm, &j->req);
        break;
    case C_GATHER:
        if (!at_root)
            rc = j->large_api ? MPI_Igather_c(j->sbuf, n, bt, NULL, 0, MPI_DATATYPE_NULL, j->root, j->comm, &j->req)
                              : MPI_Igather(j->sbuf, (int)n, bt, NULL, 0, MPI_DATATYPE_NULL, j->root, j->comm, &j->req);
        else if (j->in_place)
            rc = j->large_api ? MPI_Igather_c(ip, 0, MPI_DATATYPE_NULL, j->rbuf, n, bt, j->root, j->comm, &j->req)
                              : MPI_Igather(ip, 0, MPI_DATATYPE_NULL, j->rbuf, (int)n, bt, j->root, j->comm, &j->req);
        else
            rc = j->large_api ? MPI_Igather_c(j->sbuf, n, bt, j->rbuf, n, bt, j->root, j->comm, &j->req)
                              : MPI_Igather(j->sbuf, (int)n, bt, j->rbuf, (int)n, bt, j->root, j->comm, &j->req);
        break;
    case C_SCATTER:
        if (!at_root)
            rc = j->large_api ? MPI_Iscatter_c(NULL, 0, MPI_DATATYPE_NULL, j->rbuf, n, bt, j->root, j->comm, &j->req)
                              : MPI_Iscatter(NULL, 0, MPI_DATATYPE_NULL, j->rbuf, (int)n, bt, j->root, j->comm, &j->req);
        else if (j->in_place)
            rc = j->large_api ? MPI_Iscatter_c(j->sbuf, n, bt, ip, 0, MPI_DATATYPE_NULL, j->root, j->comm, &j->req)
                              : MPI_Iscatter(j->sbuf, (int)n, bt, ip, 0, MPI_DATATYPE_NULL, j->root, j->comm, &j->req);
        else
            rc = j->large_api ? MPI_Iscatter_c(j->sbuf, n, bt, j->rbuf, n, bt, j->root, j->comm, &j->req)
                              : MPI_Iscatter(j->sbuf, (int)n, bt, j->rbuf, (int)n, bt, j->root, j->comm, &j->req);
        break;
    case C_ALLGATHER:
        if (j->in_place)
            rc = j->large_api ? MPI_Iallgather_c(ip, 0, MPI_DATATYPE_NULL, j->rbuf, n, bt, j->comm, &j->req)
                              : MPI_Iallgather(ip, 0, MPI_DATATYPE_NULL, j->rbuf, (int)n, bt, j->comm, &j->req);
        else
            rc = j->large_api ? MPI_Iallgather_c(j->sbuf, n, bt, j->rbuf, n, bt, j->comm, &j->req)
                              : MPI_Iallgather(j->sbuf, (int)n, bt, j->rbuf, (int)n, bt, j->comm, &j->req);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "%s returned %d", j->what, rc);
    CHECK(rc != MPI_SUCCESS || j->req != MPI_REQUEST_NULL, "%s returned MPI_REQUEST_NULL", j->what);
    return rc;
}

/* Checks the data that arrived (and that the send buffers were left alone). */
static void job_check(job *j)
{
    int r = j->r, p = j->p, at_root = r == j->root;
    MPI_Count n = j->count;
    char w[400];
    CHECK(j->req == MPI_REQUEST_NULL, "%s: the request is not MPI_REQUEST_NULL after completion", j->what);
    switch (j->coll) {
    case C_BARRIER: break;
    case C_BCAST:
        bd_check(j->k, j->rbuf, n, blk_seed(j, j->root), j->what);
        guard_check(j->rbuf, j->rbytes, j->what);
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
        if (j->coll == C_ALLREDUCE || at_root) {
            rd_check(j->k, j->rbuf, n, p, j->salt, j->what);
            guard_check(j->rbuf, j->rbytes, j->what);
        }
        if (!j->in_place)
            CHECK(memcmp(j->sbuf, j->scopy, j->sbytes) == 0, "%s: the send buffer was modified", j->what);
        break;
    case C_GATHER: {
        size_t block = (size_t)n * bd_extent(j->k);
        if (at_root) {
            for (int q = 0; q < p; q++) {
                snprintf(w, sizeof w, "%s, block of rank %d", j->what, q);
                bd_check(j->k, j->rbuf + (size_t)q * block, n, blk_seed(j, q), w);
            }
            guard_check(j->rbuf, j->rbytes, j->what);
        }
        snprintf(w, sizeof w, "%s, the send buffer afterwards", j->what);
        bd_check(j->k, j->sbuf, n, blk_seed(j, r), w);
        break;
    }
    case C_SCATTER: {
        size_t block = (size_t)n * bd_extent(j->k);
        if (!(at_root && j->in_place)) {
            bd_check(j->k, j->rbuf, n, blk_seed(j, r), j->what);
            guard_check(j->rbuf, j->rbytes, j->what);
        }
        if (at_root)
            for (int q = 0; q < p; q++) {
                snprintf(w, sizeof w, "%s, the root's send buffer afterwards, block of rank %d", j->what, q);
                bd_check(j->k, j->sbuf + (size_t)q * block, n, blk_seed(j, q), w);
            }
        break;
    }
    case C_ALLGATHER: {
        size_t block = (size_t)n * bd_extent(j->k);
        for (int q = 0; q < p; q++) {
            snprintf(w, sizeof w, "%s, block of rank %d", j->what, q);
            bd_check(j->k, j->rbuf + (size_t)q * block, n, blk_seed(j, q), w);
        }
        guard_check(j->rbuf, j->rbytes, j->what);
        if (!j->in_place) {
            snprintf(w, sizeof w, "%s, the send buffer afterwards", j->what);
            bd_check(j->k, j->sbuf, n, blk_seed(j, r), w);
        }
        break;
    }
    }
}

static void job_free(job *j)
{
    free(j->sbuf);
    free(j->rbuf);
    free(j->scopy);
    j->sbuf = j->rbuf = j->scopy = NULL;
}

/* ----------------------------------------------------------------- completing */

enum { BY_WAIT, BY_TEST, BY_WAITALL, BY_TESTANY, NHOW };
static const char *const how_name[NHOW] = {"MPI_Wait", "an MPI_Test loop", "MPI_Waitall", "an MPI_Testany loop"};

static void complete(job *j, int how)
{
    int rc = MPI_SUCCESS, flag = 0, idx = -1;
    long polls = 0;
    switch (how) {
    case BY_WAIT: rc = MPI_Wait(&j->req, MPI_STATUS_IGNORE); break;
    case BY_TEST:
        while (!flag && rc == MPI_SUCCESS && polls++ < 100000000)
            rc = MPI_Test(&j->req, &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "%s: MPI_Test never reported completion", j->what);
        break;
    case BY_WAITALL: rc = MPI_Waitall(1, &j->req, MPI_STATUSES_IGNORE); break;
    case BY_TESTANY:
        while (!flag && rc == MPI_SUCCESS && polls++ < 100000000)
            rc = MPI_Testany(1, &j->req, &idx, &flag, MPI_STATUS_IGNORE);
        CHECK(flag && idx == 0, "%s: MPI_Testany ended with flag %d index %d", j->what, flag, idx);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "%s: completion by %s returned %d", j->what, how_name[how], rc);
}

static uint64_t calls; /* a different salt for every call */

/* One call from start to check. */
static void one(int coll, MPI_Comm comm, const char *cname, int k, MPI_Count count, int root, int in_place,
                int large_api)
{
    job j;
    job_init(&j, coll, comm, cname, k, count, root, in_place, ++calls);
    j.large_api = large_api;
    j.null_rbuf = calls % 2;
    job_setup(&j);
    if (job_start(&j) == MPI_SUCCESS) {
        complete(&j, (int)(calls % NHOW));
        job_check(&j);
    }
    job_free(&j);
}

/* ----------------------------------------------------------------- the sweeps */

static int large_root(int root)
{
    return root == 0 || root == size / 2 || root == size - 1;
}

static void sweep(void)
{
    const MPI_Count c_same_sig = large / 2;
    const MPI_Count counts[] = {0, 1, 7, 5000, large};
    const MPI_Count blocks[] = {0, 1, 7, 5000, large_block};
    const int bkinds[] = {B_INT, B_DOUBLE, B_DOUBLE_INT};
    int v = 0;
    for (int c = 0; c < 5; c++) {
        int big = c == 4;
        for (int root = 0; root < size; root++) {
            if (big && !large_root(root))
                continue;
            v++;
            int bk = bkinds[v % (big ? 2 : 3)];
            one(C_BCAST, MPI_COMM_WORLD, "MPI_COMM_WORLD", bk, counts[c], root, 0, v % 5 == 0);
            one(C_BCAST, MPI_COMM_WORLD, "MPI_COMM_WORLD", B_DOUBLE, counts[c], root, 0, 0);
            /* Reduce: SUM of ints and of doubles (medium doubles and large counts take
             * Rabenseifner), the non-commutative operation (never Rabenseifner), in place at
             * the root every other time. */
            one(C_REDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_INT, counts[c], root, v % 2, v % 5 == 1);
            one(C_REDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_DOUBLE, counts[c], root, v % 2 == 0, 0);
            one(C_REDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_AFF, counts[c], root, v % 3 == 0, 0);
            one(C_GATHER, MPI_COMM_WORLD, "MPI_COMM_WORLD", bk, blocks[c], root, v % 2, v % 5 == 2);
            one(C_SCATTER, MPI_COMM_WORLD, "MPI_COMM_WORLD", bk, blocks[c], root, v % 2 == 0, v % 5 == 3);
        }
        for (int in_place = 0; in_place < 2; in_place++) {
            one(C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_INT, counts[c], 0, in_place, in_place && c % 2);
            one(C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_DOUBLE, counts[c], 0, in_place, 0);
            one(C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_AFF, counts[c], 0, in_place, !in_place && c % 2);
            one(C_ALLGATHER, MPI_COMM_WORLD, "MPI_COMM_WORLD", bkinds[(c + in_place) % 3], blocks[c], 0, in_place,
                in_place == c % 2);
        }
        /* The commutative user operation on the large path. */
        one(C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_USUM, counts[c], 0, c % 2, 0);
        one(C_REDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD", R_USUM, counts[c], size - 1, c % 2, 0);
        one(C_BARRIER, MPI_COMM_WORLD, "MPI_COMM_WORLD", 0, 0, 0, 0, 0);
    }

    /* Same signature, different types: n MPI_2INT at the root, 2n MPI_INT elsewhere. */
    for (int root = 0; root < size; root += size > 4 ? size / 4 : 1) {
        MPI_Count n = c_same_sig;
        uint64_t seed = bd_seed(root, 77, n, (int)++calls);
        char *buf = bd_alloc(B_2INT, n);
        MPI_Request req;
        if (rank == root) {
            bd_fill(B_2INT, buf, n, seed);
            MPI_Ibcast(buf, (int)n, MPI_2INT, root, MPI_COMM_WORLD, &req);
        } else {
            MPI_Ibcast(buf, (int)(2 * n), MPI_INT, root, MPI_COMM_WORLD, &req);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        char what[160];
        snprintf(what, sizeof what, "MPI_Ibcast of %lld MPI_2INT from root %d received as MPI_INT (rank %d)", (long long)n,
                 root, rank);
        bd_check(B_2INT, buf, n, seed, what);
        guard_check(buf, (size_t)n * bd_extent(B_2INT), what);
        free(buf);
    }

    /* MPI_COMM_SELF: one process, every collective a local copy (or nothing). */
    for (int c = 1; c < 4; c++) {
        MPI_Count n = c == 1 ? 0 : c == 2 ? 7 : 5000;
        const char *sn = "MPI_COMM_SELF";
        one(C_BCAST, MPI_COMM_SELF, sn, B_DOUBLE, n, 0, 0, c == 2);
        one(C_REDUCE, MPI_COMM_SELF, sn, R_AFF, n, 0, c % 2, 0);
        one(C_ALLREDUCE, MPI_COMM_SELF, sn, R_DOUBLE, n, 0, c % 2 == 0, c == 3);
        one(C_GATHER, MPI_COMM_SELF, sn, B_DOUBLE_INT, n, 0, c % 2, 0);
        one(C_SCATTER, MPI_COMM_SELF, sn, B_INT, n, 0, c % 2 == 0, c == 2);
        one(C_ALLGATHER, MPI_COMM_SELF, sn, B_INT, n, 0, c % 2, 0);
        one(C_BARRIER, MPI_COMM_SELF, sn, 0, 0, 0, 0, 0);
    }

    /* A communicator that renumbers the processes (two halves, ranks reversed). The halves
     * may differ in size, hence in the number of calls: the salt is resynchronized after. */
    uint64_t before = calls;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    int hsize;
    MPI_Comm_size(half, &hsize);
    for (int root = 0; root < hsize; root++) {
        one(C_BCAST, half, "a split communicator", B_DOUBLE_INT, 100, root, 0, 0);
        one(C_REDUCE, half, "a split communicator", R_AFF, 33, root, root % 2, 0);
        one(C_GATHER, half, "a split communicator", B_INT, 50, root, root % 2, 0);
        one(C_SCATTER, half, "a split communicator", B_DOUBLE, 50, root, root % 2 == 0, 0);
    }
    one(C_ALLREDUCE, half, "a split communicator", R_DOUBLE, 20000, 0, 1, 0);
    one(C_ALLREDUCE, half, "a split communicator", R_AFF, 1000, 0, 0, 0);
    one(C_ALLGATHER, half, "a split communicator", B_INT, 3000, 0, 0, 0);
    one(C_BARRIER, half, "a split communicator", 0, 0, 0, 0, 0);
    MPI_Comm_free(&half);
    calls = before + 1000;
}

/* MPI_Ibarrier completes nowhere before every process has entered it: the late process
 * enters only when the watcher, having polled its own barrier for a while and seen it
 * incomplete, tells it to. */
static void barrier_order(void)
{
    if (size == 1) {
        one(C_BARRIER, MPI_COMM_WORLD, "MPI_COMM_WORLD", 0, 0, 0, 0, 0);
        return;
    }
    MPI_Comm bc;
    MPI_Comm_dup(MPI_COMM_WORLD, &bc);
    for (int late = 0; late < size; late += size > 4 ? 3 : 1) {
        int watcher = (late + 1) % size, go = 0;
        MPI_Request req;
        if (rank == late) {
            MPI_Recv(&go, 1, MPI_INT, watcher, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(go == 1234, "rank %d: the go message holds %d", rank, go);
        }
        CHECK(MPI_Ibarrier(bc, &req) == MPI_SUCCESS, "MPI_Ibarrier (late rank %d) failed", late);
        if (rank == watcher) {
            for (int i = 0; i < 300; i++) {
                int flag = 1;
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    CHECK(0, "MPI_Ibarrier completed at rank %d (poll %d) before rank %d entered it", rank, i, late);
                    break;
                }
            }
            go = 1234;
            MPI_Send(&go, 1, MPI_INT, late, 77, MPI_COMM_WORLD);
        }
        int flag = 0;
        while (!flag)
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK(req == MPI_REQUEST_NULL, "MPI_Ibarrier: the request is not MPI_REQUEST_NULL after completion");
    }
    MPI_Comm_free(&bc);
}

/* Many collectives outstanding on one communicator (and on a duplicate, with a blocking
 * collective in the middle), started in one order and completed in another. */
static void outstanding(int mode)
{
    enum { N = 14 };
    job j[N];
    int n = 0;
    const char *w = "MPI_COMM_WORLD", *d = "a duplicate of MPI_COMM_WORLD";
    job_init(&j[n++], C_BCAST, MPI_COMM_WORLD, w, B_INT, 5000, mode % size, 0, ++calls);
    job_init(&j[n++], C_ALLREDUCE, MPI_COMM_WORLD, w, R_DOUBLE, large, 0, mode % 2, ++calls);
    job_init(&j[n++], C_BARRIER, MPI_COMM_WORLD, w, 0, 0, 0, 0, ++calls);
    for (int i = 0; i < n; i++) {
        job_setup(&j[i]);
        job_start(&j[i]);
    }
    /* Communicators made from MPI_COMM_WORLD while collectives on it are outstanding (making
     * them is collective traffic on it too). */
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
    MPI_Comm_free(&split);
    int first = n;
    job_init(&j[n++], C_ALLREDUCE, dup, d, R_INT, 5000, 0, 0, ++calls);
    job_init(&j[n++], C_REDUCE, MPI_COMM_WORLD, w, R_AFF, 7, size - 1, 1, ++calls);
    job_init(&j[n++], C_GATHER, MPI_COMM_WORLD, w, B_DOUBLE_INT, 7, 0, 0, ++calls);
    job_init(&j[n++], C_BCAST, dup, d, B_DOUBLE, large, (mode + 1) % size, 0, ++calls);
    job_init(&j[n++], C_SCATTER, MPI_COMM_WORLD, w, B_DOUBLE, 100, size / 2, 1, ++calls);
    job_init(&j[n++], C_ALLGATHER, MPI_COMM_WORLD, w, B_INT, 5000, 0, 0, ++calls);
    job_init(&j[n++], C_ALLREDUCE, MPI_COMM_WORLD, w, R_INT, 7, 0, 1, ++calls);
    job_init(&j[n++], C_REDUCE, dup, d, R_DOUBLE, large, size / 2, 0, ++calls);
    job_init(&j[n++], C_ALLGATHER, dup, d, B_DOUBLE, 7, 0, 1, ++calls);
    job_init(&j[n++], C_BCAST, MPI_COMM_WORLD, w, B_DOUBLE, large, size - 1, 0, ++calls);
    job_init(&j[n++], C_ALLREDUCE, dup, d, R_AFF, 3000, 0, 0, ++calls);
    for (int i = first; i < n; i++) {
        job_setup(&j[i]);
        job_start(&j[i]);
        if (i == 6) { /* a blocking collective on each communicator while these are outstanding */
            long v = rank + 1, sum = 0;
            MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            CHECK(sum == (long)size * (size + 1) / 2, "blocking MPI_Allreduce amid nonblocking ones gave %ld", sum);
            int b = rank == 0 ? 4321 : -1;
            MPI_Bcast(&b, 1, MPI_INT, 0, dup);
            CHECK(b == 4321, "blocking MPI_Bcast on the duplicate amid nonblocking ones gave %d", b);
        }
    }
    MPI_Request reqs[N];
    for (int i = 0; i < n; i++)
        reqs[i] = j[n - 1 - i].req; /* reversed */
    int rc = MPI_SUCCESS;
    const char *how = "";
    switch (mode % 4) {
    case 0:
        how = "MPI_Wait on each, in reverse order";
        for (int i = n - 1; i >= 0 && rc == MPI_SUCCESS; i--)
            rc = MPI_Wait(&j[i].req, MPI_STATUS_IGNORE);
        break;
    case 1:
        how = "MPI_Waitall on the reversed array";
        rc = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        break;
    case 2:
        how = "MPI_Waitany until all are done";
        for (int left = n; left > 0 && rc == MPI_SUCCESS; left--) {
            int idx = -1;
            rc = MPI_Waitany(n, reqs, &idx, MPI_STATUS_IGNORE);
            CHECK(idx >= 0 && idx < n, "MPI_Waitany gave index %d", idx);
        }
        break;
    case 3: {
        how = "an MPI_Testsome loop";
        int done = 0, out, idx[N];
        long polls = 0;
        while (done < n && rc == MPI_SUCCESS && polls++ < 100000000) {
            rc = MPI_Testsome(n, reqs, &out, idx, MPI_STATUSES_IGNORE);
            CHECK(out != MPI_UNDEFINED, "MPI_Testsome says no request is active with %d of %d done", done, n);
            if (out == MPI_UNDEFINED)
                break;
            done += out;
        }
        CHECK(done == n, "MPI_Testsome completed %d of %d requests", done, n);
        break;
    }
    }
    CHECK(rc == MPI_SUCCESS, "completing %d outstanding collectives by %s returned %d", n, how, rc);
    if (mode % 4 != 0) {
        for (int i = 0; i < n; i++) {
            CHECK(reqs[i] == MPI_REQUEST_NULL, "%s (outstanding, %s): the request is not MPI_REQUEST_NULL", j[n - 1 - i].what,
                  how);
            j[n - 1 - i].req = reqs[i];
        }
    }
    for (int i = 0; i < n; i++) {
        job_check(&j[i]);
        job_free(&j[i]);
    }
    MPI_Comm_free(&dup);
}

/* Collectives overlapped with point-to-point messages. A receive from any source with any
 * tag is posted first: it must get the first user message from the left neighbour (the only
 * process sending to this one), never collective traffic. */
static void overlap(int round)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Count big = large;
    int first[4] = {-1, -1, -1, -1}, mine[4] = {rank, round, 0x5eed, 42};
    int *bsend = malloc((size_t)big * sizeof(int)), *brecv = malloc((size_t)big * sizeof(int));
    for (MPI_Count i = 0; i < big; i++)
        bsend[i] = (int)(rank * 1000003 + i + round), brecv[i] = -1;
    MPI_Request p2p[4];
    MPI_Status st[4];
    MPI_Irecv(first, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &p2p[0]);
    job j[3];
    job_init(&j[0], C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (overlapping point-to-point)", R_DOUBLE, large, 0, 0,
             ++calls);
    job_init(&j[1], C_BCAST, MPI_COMM_WORLD, "MPI_COMM_WORLD (overlapping point-to-point)", B_INT, 5000, round % size,
             0, ++calls);
    job_init(&j[2], C_ALLGATHER, MPI_COMM_WORLD, "MPI_COMM_WORLD (overlapping point-to-point)", B_DOUBLE, 7, 0, 0,
             ++calls);
    for (int i = 0; i < 3; i++)
        job_setup(&j[i]);
    job_start(&j[0]);
    MPI_Isend(mine, 4, MPI_INT, right, 5, MPI_COMM_WORLD, &p2p[1]);
    job_start(&j[1]);
    MPI_Irecv(brecv, (int)big, MPI_INT, left, 6, MPI_COMM_WORLD, &p2p[2]);
    MPI_Isend(bsend, (int)big, MPI_INT, right, 6, MPI_COMM_WORLD, &p2p[3]);
    job_start(&j[2]);
    /* Poll everything together, doing some "work" in between. */
    MPI_Request all[7] = {j[0].req, j[1].req, j[2].req, p2p[0], p2p[1], p2p[2], p2p[3]};
    MPI_Status ast[7];
    int flag = 0;
    long polls = 0;
    volatile double work = 0;
    while (!flag && polls++ < 100000000) {
        MPI_Testall(7, all, &flag, ast);
        for (int i = 0; i < 100; i++)
            work += i * 0.5;
    }
    CHECK(flag, "round %d: collectives overlapping point-to-point never completed", round);
    for (int i = 0; i < 3; i++)
        j[i].req = all[i];
    for (int i = 0; i < 4; i++)
        st[i] = ast[3 + i];
    CHECK(first[0] == left && first[1] == round && first[2] == 0x5eed && first[3] == 42,
          "round %d: the any-source any-tag receive got {%d,%d,%#x,%d}, expected the user message {%d,%d,0x5eed,42}",
          round, first[0], first[1], first[2], first[3], left, round);
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 5,
          "round %d: the any-source any-tag receive's status says source %d tag %d, expected %d and 5", round,
          st[0].MPI_SOURCE, st[0].MPI_TAG, left);
    long bad = 0;
    for (MPI_Count i = 0; i < big; i++)
        if (brecv[i] != (int)(left * 1000003 + i + round) && bad++ < 3)
            CHECK(0, "round %d: the point-to-point message overlapping collectives: int %lld is %d, expected %d", round,
                  (long long)i, brecv[i], (int)(left * 1000003 + i + round));
    for (int i = 0; i < 3; i++) {
        job_check(&j[i]);
        job_free(&j[i]);
    }
    free(bsend);
    free(brecv);
}

/* A process blocked in another call still takes its part in the collectives it has started:
 * the others complete theirs before they send what it waits for (a blocking receive, a probe,
 * a synchronous send, a blocking collective on another communicator or on the same one). */
static void progress_elsewhere(void)
{
    if (size == 1)
        return;
    static const char *const blocked_in[6] = {"MPI_Recv", "MPI_Probe", "MPI_Ssend", "MPI_Barrier on a duplicate",
                                              "MPI_Barrier on MPI_COMM_WORLD", "MPI_Allreduce on MPI_COMM_WORLD"};
    MPI_Comm other;
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    for (int mode = 0; mode < 6; mode++) {
        int waiter = mode % size, sender = (waiter + 1) % size, token = -1;
        char name[120];
        snprintf(name, sizeof name, "MPI_COMM_WORLD (rank %d then blocked in %s)", waiter, blocked_in[mode]);
        job a, b;
        job_init(&a, C_ALLREDUCE, MPI_COMM_WORLD, name, R_DOUBLE, large, 0, 0, ++calls);
        job_init(&b, C_BCAST, MPI_COMM_WORLD, name, B_INT, 5000, waiter, 0, ++calls);
        job_setup(&a);
        job_setup(&b);
        job_start(&a);
        job_start(&b);
        long v = rank + 1, sum = 0;
        if (rank == waiter) {
            MPI_Status st;
            switch (mode) {
            case 0: MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st); break;
            case 1:
                MPI_Probe(sender, 9, MPI_COMM_WORLD, &st);
                MPI_Recv(&token, 1, MPI_INT, sender, 9, MPI_COMM_WORLD, &st);
                break;
            case 2: token = 77, MPI_Ssend(&token, 1, MPI_INT, sender, 9, MPI_COMM_WORLD); break;
            case 3: MPI_Barrier(other); break;
            case 4: MPI_Barrier(MPI_COMM_WORLD); break;
            case 5: MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD); break;
            }
            if (mode < 2)
                CHECK(token == 77, "rank %d blocked in %s got %d, expected 77", rank, blocked_in[mode], token);
            complete(&a, BY_WAIT);
            complete(&b, BY_TEST);
        } else {
            complete(&a, BY_WAIT);
            complete(&b, BY_WAIT);
            if (rank == sender && mode < 2)
                token = 77, MPI_Send(&token, 1, MPI_INT, waiter, 9, MPI_COMM_WORLD);
            if (rank == sender && mode == 2) {
                MPI_Recv(&token, 1, MPI_INT, waiter, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(token == 77, "the synchronous send from rank %d brought %d, expected 77", waiter, token);
            }
            if (mode == 3)
                MPI_Barrier(other);
            if (mode == 4)
                MPI_Barrier(MPI_COMM_WORLD);
            if (mode == 5)
                MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        }
        if (mode == 5)
            CHECK(sum == (long)size * (size + 1) / 2, "%s: the blocking MPI_Allreduce gave %ld", name, sum);
        job_check(&a);
        job_check(&b);
        job_free(&a);
        job_free(&b);
    }
    MPI_Comm_free(&other);
}

/* A user operation freed right after the call that uses it. */
static void op_freed(void)
{
    for (int c = 0; c < 2; c++) {
        MPI_Count count = c ? large : 9;
        MPI_Op op;
        /* Non-commutative: Iallreduce and Ireduce keep rank order with a freed op. */
        MPI_Op_create(aff_fn, 0, &op);
        job a, b;
        job_init(&a, C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (operation freed after the call)", R_AFF, count, 0,
                 c, ++calls);
        job_init(&b, C_REDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (operation freed after the call)", R_AFF, count,
                 size - 1, 0, ++calls);
        a.op = b.op = op;
        job_setup(&a);
        job_setup(&b);
        job_start(&a);
        job_start(&b);
        CHECK(MPI_Op_free(&op) == MPI_SUCCESS && op == MPI_OP_NULL, "MPI_Op_free of an operation in use failed");
        complete(&b, BY_WAIT);
        complete(&a, BY_TEST);
        job_check(&a);
        job_check(&b);
        job_free(&a);
        job_free(&b);
        /* Commutative: the large count takes Rabenseifner with the freed op. */
        MPI_Op_create(usum_fn, 1, &op);
        job_init(&a, C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (commutative operation freed after the call)", R_USUM,
                 count, 0, 0, ++calls);
        a.op = op;
        job_setup(&a);
        job_start(&a);
        MPI_Op_free(&op);
        complete(&a, BY_WAIT);
        job_check(&a);
        job_free(&a);
    }
}

/* A duplicate communicator freed right after a call on it: the call still completes. */
static void comm_freed(void)
{
    for (int c = 0; c < 2; c++) {
        MPI_Comm d1, d2;
        MPI_Comm_dup(MPI_COMM_WORLD, &d1);
        MPI_Comm_dup(MPI_COMM_WORLD, &d2);
        job a, b;
        job_init(&a, C_ALLREDUCE, d1, "a duplicate freed after the call", c ? R_DOUBLE : R_AFF, c ? large : 7, 0, c,
                 ++calls);
        job_init(&b, C_BCAST, d2, "a duplicate freed after the call", B_INT, c ? large : 7, size - 1, 0, ++calls);
        job_setup(&a);
        job_setup(&b);
        job_start(&a);
        job_start(&b);
        MPI_Comm_free(&d1);
        MPI_Comm_free(&d2);
        CHECK(d1 == MPI_COMM_NULL && d2 == MPI_COMM_NULL, "MPI_Comm_free did not set the handles to MPI_COMM_NULL");
        complete(&b, BY_TEST);
        complete(&a, BY_WAIT);
        job_check(&a);
        job_check(&b);
        job_free(&a);
        job_free(&b);
    }
    /* The collective sequence of MPI_COMM_WORLD is undisturbed. */
    one(C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (after freed duplicates)", R_INT, 100, 0, 0, 0);
}

/* MPI_Cancel of a collective request is an error (MPI_ERR_REQUEST); the operation goes on. */
static void cancel(void)
{
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    for (int c = 0; c < 3; c++) {
        job a;
        if (c == 0)
            job_init(&a, C_ALLREDUCE, d, "a duplicate with MPI_ERRORS_RETURN (MPI_Cancel tried)", R_INT, 7, 0, 0, ++calls);
        else if (c == 1)
            job_init(&a, C_BARRIER, d, "a duplicate with MPI_ERRORS_RETURN (MPI_Cancel tried)", 0, 0, 0, 0, ++calls);
        else
            job_init(&a, C_BCAST, d, "a duplicate with MPI_ERRORS_RETURN (MPI_Cancel tried)", B_DOUBLE, large, 0, 0,
                     ++calls);
        job_setup(&a);
        job_start(&a);
        int rc = MPI_Cancel(&a.req), cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST, "%s: MPI_Cancel returned class %d, expected MPI_ERR_REQUEST (%d)", a.what, cls,
              MPI_ERR_REQUEST);
        CHECK(a.req != MPI_REQUEST_NULL, "%s: MPI_Cancel set the request to MPI_REQUEST_NULL", a.what);
        MPI_Status st;
        rc = MPI_Wait(&a.req, &st);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Wait after the refused MPI_Cancel returned %d", a.what, rc);
        int cancelled = -1;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled == 0, "%s: MPI_Test_cancelled says %d after a refused cancel", a.what, cancelled);
        job_check(&a);
        job_free(&a);
    }
    MPI_Comm_free(&d);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Past every large threshold (bcast 256 KiB, reduce 64 KiB, allreduce 32 KiB, allgather
     * 64 KiB in all), less at high process counts so that oversubscribed runs stay quick. */
    large = size <= 4 ? 300000 : 1200000 / size;
    large_block = size <= 4 ? 300000 / size : 20000;
    MPI_Op_create(aff_fn, 0, &aff_op);
    MPI_Op_create(usum_fn, 1, &usum_op);
    int commute = -1;
    MPI_Op_commutative(aff_op, &commute);
    CHECK(commute == 0, "MPI_Op_commutative of the non-commutative operation gave %d", commute);

    sweep();
    barrier_order();
    for (int mode = 0; mode < 4; mode++)
        outstanding(mode);
    for (int round = 0; round < 3; round++)
        overlap(round);
    progress_elsewhere();
    op_freed();
    comm_freed();
    cancel();

    MPI_Op_free(&aff_op);
    MPI_Op_free(&usum_op);
    return mt_finish();
}
