/* Persistent collectives (MPI_Barrier_init, MPI_Bcast_init, MPI_Reduce_init,
 * MPI_Allreduce_init, MPI_Gather_init, MPI_Scatter_init, MPI_Allgather_init and their _c
 * forms): each request is made once and run many times with MPI_Start, the send data
 * changing between runs and the data that arrives checked after every run, for
 *   - counts 0, 1, 7, 5000 and a large one (fewer elements at high process counts), so that
 *     every algorithm automatic selection picks is rerun on the same schedule; MPI_INT,
 *     MPI_DOUBLE, MPI_DOUBLE_INT; roots taking turns; MPI_IN_PLACE where allowed; a
 *     non-commutative user operation checked against the rank-ordered product;
 *   - every way of completing a run (MPI_Wait, an MPI_Test loop, MPI_Waitall, MPI_Testany):
 *     the handle stays valid, and waiting again on the inactive request returns at once;
 *   - blocking and nonblocking collectives on the same communicator between runs and while a
 *     run is active;
 *   - MPI_Startall over persistent collectives on MPI_COMM_WORLD and a duplicate mixed with
 *     persistent point-to-point requests, completed by MPI_Waitall, MPI_Wait in reverse
 *     order, an MPI_Testall loop and MPI_Waitsome;
 *   - a process blocked in MPI_Recv or a blocking MPI_Barrier still progresses its runs;
 *   - MPI_Request_free after use (and of a request never started);
 *   - MPI_Start or MPI_Startall of an active request fails with MPI_ERR_REQUEST (under
 *     MPI_ERRORS_RETURN) and leaves the run undisturbed;
 *   - a user operation freed after MPI_<coll>_init, and a duplicate communicator freed while
 *     persistent requests on it remain: the requests still run correctly. */
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

/* ----------------------------------------------------------------- one persistent request */

enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_SCATTER, C_ALLGATHER, NC };
static const char *const c_name[NC] = {"MPI_Barrier_init", "MPI_Bcast_init",  "MPI_Reduce_init",   "MPI_Allreduce_init",
                                       "MPI_Gather_init",  "MPI_Scatter_init", "MPI_Allgather_init"};

/* One persistent request: its arguments, its buffers (fixed for its life: their contents
 * change between runs), the run it is in. */
typedef struct {
    int coll;
    MPI_Comm comm;
    const char *comm_name;
    int k;           /* blockdata kind (B_*) for data movement, R_* for reductions */
    MPI_Count count; /* per process for gather, scatter, allgather */
    int root, in_place, large_api;
    uint64_t base, salt; /* salt = base + run */
    int run;
    MPI_Op op;
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

static void set_what(job *j)
{
    const char *type = j->coll == C_BARRIER                                 ? ""
                       : (j->coll == C_REDUCE || j->coll == C_ALLREDUCE) ? rd_name[j->k]
                                                                           : bd_name(j->k);
    char rootstr[32] = "";
    if (j->coll == C_BCAST || j->coll == C_REDUCE || j->coll == C_GATHER || j->coll == C_SCATTER)
        snprintf(rootstr, sizeof rootstr, " root %d", j->root);
    snprintf(j->what, sizeof j->what, "%s%s count %lld %s%s%s on %s (rank %d of %d), run %d", c_name[j->coll],
             j->large_api ? "_c" : "", (long long)j->count, type, rootstr, j->in_place ? " in place" : "",
             j->comm_name, j->r, j->p, j->run);
}

/* Allocates the buffers (once: the request keeps pointing at them). */
static void job_alloc(job *j, int coll, MPI_Comm comm, const char *comm_name, int k, MPI_Count count, int root,
                      int in_place, int large_api, uint64_t base)
{
    memset(j, 0, sizeof *j);
    j->coll = coll, j->comm = comm, j->comm_name = comm_name, j->k = k, j->count = count, j->root = root;
    j->in_place = in_place, j->large_api = large_api, j->base = j->salt = base;
    j->op = (coll == C_REDUCE || coll == C_ALLREDUCE) ? rd_op(k) : MPI_OP_NULL;
    j->req = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &j->r);
    MPI_Comm_size(comm, &j->p);
    int r = j->r, p = j->p, at_root = r == root;
    MPI_Count n = count;
    switch (coll) {
    case C_BARRIER: break;
    case C_BCAST:
        j->rbytes = (size_t)n * bd_extent(k);
        j->rbuf = bd_alloc(k, n);
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
        j->sbytes = j->rbytes = (size_t)n * rd_extent(k);
        j->sbuf = malloc(j->sbytes + 1);
        j->scopy = malloc(j->sbytes + 1);
        if (coll == C_REDUCE && !at_root) {
            j->in_place = 0;
            break;
        }
        j->rbuf = malloc(j->rbytes + GUARD);
        break;
    case C_GATHER:
        j->sbytes = (size_t)n * bd_extent(k);
        j->sbuf = bd_alloc(k, n);
        if (at_root) {
            j->rbytes = j->sbytes * p;
            j->rbuf = bd_alloc(k, n * p);
        } else {
            j->in_place = 0;
        }
        break;
    case C_SCATTER:
        j->rbytes = (size_t)n * bd_extent(k);
        j->rbuf = bd_alloc(k, n);
        if (at_root) {
            j->sbytes = j->rbytes * p;
            j->sbuf = bd_alloc(k, n * p);
        } else {
            j->in_place = 0;
        }
        break;
    case C_ALLGATHER:
        j->sbytes = (size_t)n * bd_extent(k);
        j->sbuf = bd_alloc(k, n);
        j->rbytes = j->sbytes * p;
        j->rbuf = bd_alloc(k, n * p);
        break;
    }
    set_what(j);
}

/* New data for run `run`: the send buffers refilled, the receive buffers poisoned. */
static void job_fill(job *j, int run)
{
    j->run = run;
    j->salt = j->base + (uint64_t)run * 7919;
    int r = j->r, p = j->p, at_root = r == j->root;
    MPI_Count n = j->count;
    size_t ext = j->coll == C_REDUCE || j->coll == C_ALLREDUCE ? rd_extent(j->k) : bd_extent(j->k);
    size_t block = (size_t)n * ext;
    switch (j->coll) {
    case C_BARRIER: break;
    case C_BCAST:
        if (at_root)
            bd_fill(j->k, j->rbuf, n, blk_seed(j, j->root));
        else
            memset(j->rbuf, 0xEE, j->rbytes);
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
        rd_fill(j->k, j->sbuf, n, r, j->salt);
        memcpy(j->scopy, j->sbuf, j->sbytes);
        if (j->rbuf) {
            memset(j->rbuf, 0x5c, j->rbytes);
            guard_set(j->rbuf, j->rbytes);
            if (j->in_place)
                memcpy(j->rbuf, j->sbuf, j->sbytes);
        }
        break;
    case C_GATHER:
        bd_fill(j->k, j->sbuf, n, blk_seed(j, r));
        if (at_root) {
            memset(j->rbuf, 0xEE, j->rbytes);
            if (j->in_place)
                bd_fill(j->k, j->rbuf + (size_t)r * block, n, blk_seed(j, r));
        }
        break;
    case C_SCATTER:
        memset(j->rbuf, 0xEE, j->rbytes);
        if (at_root)
            for (int q = 0; q < p; q++)
                bd_fill(j->k, j->sbuf + (size_t)q * block, n, blk_seed(j, q));
        break;
    case C_ALLGATHER:
        bd_fill(j->k, j->sbuf, n, blk_seed(j, r));
        memset(j->rbuf, 0xEE, j->rbytes);
        if (j->in_place)
            bd_fill(j->k, j->rbuf + (size_t)r * block, n, blk_seed(j, r));
        break;
    }
    set_what(j);
}

/* MPI_<coll>_init (or _init_c); returns its return code. */
static int job_init(job *j)
{
    int at_root = j->r == j->root;
    MPI_Count n = j->count;
    MPI_Datatype bt = bd_type(j->k);
    MPI_Info info = MPI_INFO_NULL;
    void *ip = MPI_IN_PLACE, *sb = j->in_place ? ip : j->sbuf;
    int rc = MPI_ERR_OTHER, c = j->large_api;
    switch (j->coll) {
    case C_BARRIER: rc = MPI_Barrier_init(j->comm, info, &j->req); break;
    case C_BCAST:
        rc = c ? MPI_Bcast_init_c(j->rbuf, n, bt, j->root, j->comm, info, &j->req)
               : MPI_Bcast_init(j->rbuf, (int)n, bt, j->root, j->comm, info, &j->req);
        break;
    case C_REDUCE:
        rc = c ? MPI_Reduce_init_c(sb, j->rbuf, n, rd_type(j->k), j->op, j->root, j->comm, info, &j->req)
               : MPI_Reduce_init(sb, j->rbuf, (int)n, rd_type(j->k), j->op, j->root, j->comm, info, &j->req);
        break;
    case C_ALLREDUCE:
        rc = c ? MPI_Allreduce_init_c(sb, j->rbuf, n, rd_type(j->k), j->op, j->comm, info, &j->req)
               : MPI_Allreduce_init(sb, j->rbuf, (int)n, rd_type(j->k), j->op, j->comm, info, &j->req);
        break;
    case C_GATHER:
        if (!at_root)
            rc = c ? MPI_Gather_init_c(j->sbuf, n, bt, NULL, 0, MPI_DATATYPE_NULL, j->root, j->comm, info, &j->req)
                   : MPI_Gather_init(j->sbuf, (int)n, bt, NULL, 0, MPI_DATATYPE_NULL, j->root, j->comm, info, &j->req);
        else if (j->in_place)
            rc = c ? MPI_Gather_init_c(ip, 0, MPI_DATATYPE_NULL, j->rbuf, n, bt, j->root, j->comm, info, &j->req)
                   : MPI_Gather_init(ip, 0, MPI_DATATYPE_NULL, j->rbuf, (int)n, bt, j->root, j->comm, info, &j->req);
        else
            rc = c ? MPI_Gather_init_c(j->sbuf, n, bt, j->rbuf, n, bt, j->root, j->comm, info, &j->req)
                   : MPI_Gather_init(j->sbuf, (int)n, bt, j->rbuf, (int)n, bt, j->root, j->comm, info, &j->req);
        break;
    case C_SCATTER:
        if (!at_root)
            rc = c ? MPI_Scatter_init_c(NULL, 0, MPI_DATATYPE_NULL, j->rbuf, n, bt, j->root, j->comm, info, &j->req)
                   : MPI_Scatter_init(NULL, 0, MPI_DATATYPE_NULL, j->rbuf, (int)n, bt, j->root, j->comm, info, &j->req);
        else if (j->in_place)
            rc = c ? MPI_Scatter_init_c(j->sbuf, n, bt, ip, 0, MPI_DATATYPE_NULL, j->root, j->comm, info, &j->req)
                   : MPI_Scatter_init(j->sbuf, (int)n, bt, ip, 0, MPI_DATATYPE_NULL, j->root, j->comm, info, &j->req);
        else
            rc = c ? MPI_Scatter_init_c(j->sbuf, n, bt, j->rbuf, n, bt, j->root, j->comm, info, &j->req)
                   : MPI_Scatter_init(j->sbuf, (int)n, bt, j->rbuf, (int)n, bt, j->root, j->comm, info, &j->req);
        break;
    case C_ALLGATHER:
        if (j->in_place)
            rc = c ? MPI_Allgather_init_c(ip, 0, MPI_DATATYPE_NULL, j->rbuf, n, bt, j->comm, info, &j->req)
                   : MPI_Allgather_init(ip, 0, MPI_DATATYPE_NULL, j->rbuf, (int)n, bt, j->comm, info, &j->req);
        else
            rc = c ? MPI_Allgather_init_c(j->sbuf, n, bt, j->rbuf, n, bt, j->comm, info, &j->req)
                   : MPI_Allgather_init(j->sbuf, (int)n, bt, j->rbuf, (int)n, bt, j->comm, info, &j->req);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "%s returned %d", j->what, rc);
    CHECK(rc != MPI_SUCCESS || j->req != MPI_REQUEST_NULL, "%s returned MPI_REQUEST_NULL", j->what);
    return rc;
}

/* Checks the data of the run that just completed. */
static void job_check(job *j)
{
    int r = j->r, p = j->p, at_root = r == j->root;
    MPI_Count n = j->count;
    char w[400];
    CHECK(j->req != MPI_REQUEST_NULL, "%s: the persistent request became MPI_REQUEST_NULL on completion", j->what);
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

/* MPI_Request_free of the (inactive) request, and the buffers. */
static void job_free(job *j)
{
    if (j->req != MPI_REQUEST_NULL) {
        int rc = MPI_Request_free(&j->req);
        CHECK(rc == MPI_SUCCESS && j->req == MPI_REQUEST_NULL, "%s: MPI_Request_free returned %d, handle %s", j->what,
              rc, j->req == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "not MPI_REQUEST_NULL");
    }
    free(j->sbuf);
    free(j->rbuf);
    free(j->scopy);
    j->sbuf = j->rbuf = j->scopy = NULL;
}

/* ----------------------------------------------------------------- running */

enum { BY_WAIT, BY_TEST, BY_WAITALL, BY_TESTANY, NHOW };
static const char *const how_name[NHOW] = {"MPI_Wait", "an MPI_Test loop", "MPI_Waitall", "an MPI_Testany loop"};

static void start(job *j)
{
    int rc = MPI_Start(&j->req);
    CHECK(rc == MPI_SUCCESS, "%s: MPI_Start returned %d", j->what, rc);
}

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

static uint64_t requests; /* a different base salt for every request */

/* One persistent request run `runs` times; every few runs a blocking or nonblocking
 * collective on the same communicator comes between runs or during one. */
static void repeat(int coll, MPI_Comm comm, const char *cname, int k, MPI_Count count, int root, int in_place,
                   int large_api, int runs)
{
    job j;
    job_alloc(&j, coll, comm, cname, k, count, root, in_place, large_api, ++requests * 1000003);
    job_fill(&j, 0);
    if (job_init(&j) != MPI_SUCCESS) {
        job_free(&j);
        return;
    }
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    for (int run = 0; run < runs; run++) {
        job_fill(&j, run);
        start(&j);
        if (run % 7 == 3) { /* a blocking collective while the run is active */
            int b = r == p - 1 ? run : -1;
            MPI_Bcast(&b, 1, MPI_INT, p - 1, comm);
            CHECK(b == run, "%s: a blocking MPI_Bcast during the run gave %d", j.what, b);
        }
        complete(&j, (run + (int)requests) % NHOW);
        job_check(&j);
        if (run % 9 == 4) { /* a nonblocking one between runs */
            long v = r + 1, sum = 0;
            MPI_Request q;
            MPI_Iallreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, comm, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            CHECK(sum == (long)p * (p + 1) / 2, "%s: MPI_Iallreduce between runs gave %ld", j.what, sum);
        }
    }
    /* Waiting on the inactive request returns at once with an empty status. */
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    int rc = MPI_Wait(&j.req, &st);
    CHECK(rc == MPI_SUCCESS && j.req != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE &&
              st.MPI_TAG == MPI_ANY_TAG,
          "%s: MPI_Wait on the inactive request returned %d, source %d, tag %d", j.what, rc, st.MPI_SOURCE,
          st.MPI_TAG);
    job_free(&j);
}

/* ----------------------------------------------------------------- the tests */

static int runs_for(MPI_Count count, int big)
{
    return big ? 4 : count > 7 ? 12 : 50;
}

/* Every collective, every count; roots take turns; MPI_IN_PLACE every other time. */
static void sweep(void)
{
    const MPI_Count counts[] = {0, 1, 7, 5000, large};
    const MPI_Count blocks[] = {0, 1, 7, 5000, large_block};
    const int bkinds[] = {B_INT, B_DOUBLE, B_DOUBLE_INT};
    MPI_Comm w = MPI_COMM_WORLD;
    const char *wn = "MPI_COMM_WORLD";
    repeat(C_BARRIER, w, wn, 0, 0, 0, 0, 0, 50);
    for (int c = 0; c < 5; c++) {
        int big = c == 4, root = (c * 5 + 1) % size, runs = runs_for(counts[c], big);
        int bk = bkinds[c % (big ? 2 : 3)];
        repeat(C_BCAST, w, wn, bk, counts[c], root, 0, c % 2, runs);
        repeat(C_REDUCE, w, wn, c % 2 ? R_DOUBLE : R_INT, counts[c], root, c % 2, c == 2, runs);
        repeat(C_REDUCE, w, wn, R_AFF, counts[c], (root + 1) % size, c % 2 == 0, 0, runs);
        repeat(C_ALLREDUCE, w, wn, R_DOUBLE, counts[c], 0, c % 2, c % 2 == 0, runs);
        repeat(C_ALLREDUCE, w, wn, R_INT, counts[c], 0, c % 2 == 0, c == 3, runs);
        repeat(C_ALLREDUCE, w, wn, R_AFF, counts[c], 0, c % 2, 0, runs);
        repeat(C_GATHER, w, wn, bk, blocks[c], root, c % 2, c % 2, runs);
        repeat(C_SCATTER, w, wn, bk, blocks[c], size - 1 - root, c % 2 == 0, c % 2 == 0, runs);
        repeat(C_ALLGATHER, w, wn, bk, blocks[c], 0, c % 2, c == 1 || c == 4, runs);
    }
    /* Every root, a few runs each. */
    for (int root = 0; root < size; root++) {
        repeat(C_BCAST, w, wn, B_DOUBLE_INT, 7, root, 0, 0, 5);
        repeat(C_REDUCE, w, wn, R_AFF, 7, root, root % 2, 0, 5);
        repeat(C_GATHER, w, wn, B_INT, 7, root, root % 2 == 0, 0, 5);
        repeat(C_SCATTER, w, wn, B_DOUBLE, 7, root, root % 2, 0, 5);
    }
    /* The commutative user operation on the large (Rabenseifner) path. */
    repeat(C_ALLREDUCE, w, wn, R_USUM, large, 0, 0, 1, 6);
    repeat(C_REDUCE, w, wn, R_USUM, large, size / 2, 1, 0, 6);
}

/* MPI_Startall over persistent collectives on two communicators and persistent
 * point-to-point requests, completed in various ways, many rounds. */
static void startall(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    enum { N = 11 };
    job j[N];
    int n = 0;
    const char *w = "MPI_COMM_WORLD (MPI_Startall)", *d = "a duplicate of MPI_COMM_WORLD (MPI_Startall)";
    job_alloc(&j[n++], C_BCAST, MPI_COMM_WORLD, w, B_INT, 5000, 0, 0, 0, ++requests * 1000003);
    job_alloc(&j[n++], C_ALLREDUCE, MPI_COMM_WORLD, w, R_DOUBLE, large, 0, 0, 1, ++requests * 1000003);
    job_alloc(&j[n++], C_BARRIER, MPI_COMM_WORLD, w, 0, 0, 0, 0, 0, ++requests * 1000003);
    job_alloc(&j[n++], C_REDUCE, MPI_COMM_WORLD, w, R_AFF, 7, size - 1, 1, 0, ++requests * 1000003);
    job_alloc(&j[n++], C_GATHER, MPI_COMM_WORLD, w, B_DOUBLE_INT, 7, 0, 1, 0, ++requests * 1000003);
    job_alloc(&j[n++], C_ALLREDUCE, dup, d, R_INT, 7, 0, 1, 0, ++requests * 1000003);
    job_alloc(&j[n++], C_SCATTER, MPI_COMM_WORLD, w, B_DOUBLE, 100, size / 2, 0, 1, ++requests * 1000003);
    job_alloc(&j[n++], C_BCAST, dup, d, B_DOUBLE, large, size - 1, 0, 1, ++requests * 1000003);
    job_alloc(&j[n++], C_ALLGATHER, MPI_COMM_WORLD, w, B_INT, 5000, 0, 0, 0, ++requests * 1000003);
    job_alloc(&j[n++], C_REDUCE, dup, d, R_DOUBLE, large, 0, 0, 0, ++requests * 1000003);
    job_alloc(&j[n++], C_ALLGATHER, dup, d, B_DOUBLE, 7, 0, 1, 1, ++requests * 1000003);
    for (int i = 0; i < n; i++) {
        job_fill(&j[i], 0);
        job_init(&j[i]);
    }
    /* Persistent point-to-point around a ring, on MPI_COMM_WORLD, in the same array. */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    enum { PN = 2000 };
    int *psend = malloc(PN * sizeof(int)), *precv = malloc(PN * sizeof(int));
    MPI_Request reqs[N + 2];
    MPI_Recv_init(precv, PN, MPI_INT, left, 3, MPI_COMM_WORLD, &reqs[n]);
    MPI_Send_init(psend, PN, MPI_INT, right, 3, MPI_COMM_WORLD, &reqs[n + 1]);
    int nr = n + 2;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < n; i++)
            job_fill(&j[i], round);
        for (int i = 0; i < PN; i++)
            psend[i] = rank * 7777 + i * 3 + round, precv[i] = -1;
        for (int i = 0; i < n; i++)
            reqs[i] = j[i].req;
        int rc = MPI_Startall(nr, reqs);
        CHECK(rc == MPI_SUCCESS, "round %d: MPI_Startall of %d requests returned %d", round, nr, rc);
        const char *how = "";
        switch (round % 4) {
        case 0:
            how = "MPI_Waitall";
            rc = MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE);
            break;
        case 1:
            how = "MPI_Wait on each in reverse order";
            for (int i = nr - 1; i >= 0 && rc == MPI_SUCCESS; i--)
                rc = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
            break;
        case 2: {
            how = "an MPI_Testall loop";
            int flag = 0;
            long polls = 0;
            while (!flag && rc == MPI_SUCCESS && polls++ < 100000000)
                rc = MPI_Testall(nr, reqs, &flag, MPI_STATUSES_IGNORE);
            CHECK(flag, "round %d: MPI_Testall never reported completion", round);
            break;
        }
        case 3: {
            how = "MPI_Waitsome";
            int done = 0, out, idx[N + 2];
            while (done < nr && rc == MPI_SUCCESS) {
                rc = MPI_Waitsome(nr, reqs, &out, idx, MPI_STATUSES_IGNORE);
                if (out == MPI_UNDEFINED) {
                    CHECK(0, "round %d: MPI_Waitsome says no request is active with %d of %d done", round, done, nr);
                    break;
                }
                done += out;
            }
            CHECK(done == nr, "round %d: MPI_Waitsome completed %d of %d requests", round, done, nr);
            break;
        }
        }
        CHECK(rc == MPI_SUCCESS, "round %d: completing %d started requests by %s returned %d", round, nr, how, rc);
        for (int i = 0; i < n; i++) {
            CHECK(reqs[i] == j[i].req, "%s: %s changed the persistent request's handle", j[i].what, how);
            job_check(&j[i]);
        }
        int bad = 0;
        for (int i = 0; i < PN; i++)
            if (precv[i] != left * 7777 + i * 3 + round && bad++ < 3)
                CHECK(0, "round %d: persistent receive started with the collectives: int %d is %d, expected %d", round,
                      i, precv[i], left * 7777 + i * 3 + round);
    }
    for (int i = 0; i < n; i++)
        job_free(&j[i]);
    MPI_Request_free(&reqs[n]);
    MPI_Request_free(&reqs[n + 1]);
    free(psend);
    free(precv);
    MPI_Comm_free(&dup);
}

/* A process blocked in another call (a blocking receive, a blocking collective on the same
 * communicator) still takes its part in the persistent collectives it has started. */
static void progress_elsewhere(void)
{
    if (size == 1)
        return;
    job a, b;
    job_alloc(&a, C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (one process blocked elsewhere)", R_DOUBLE, large, 0, 0,
              0, ++requests * 1000003);
    job_alloc(&b, C_ALLGATHER, MPI_COMM_WORLD, "MPI_COMM_WORLD (one process blocked elsewhere)", B_INT, 5000, 0, 0, 0,
              ++requests * 1000003);
    job_fill(&a, 0);
    job_fill(&b, 0);
    job_init(&a);
    job_init(&b);
    for (int run = 0; run < 6; run++) {
        int waiter = run % size, sender = (waiter + 1) % size, token = -1;
        job_fill(&a, run);
        job_fill(&b, run);
        MPI_Request two[2] = {a.req, b.req};
        MPI_Startall(2, two);
        if (rank == waiter) {
            if (run % 2 == 0) {
                MPI_Recv(&token, 1, MPI_INT, sender, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(token == run, "run %d: rank %d blocked in MPI_Recv got %d", run, rank, token);
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
            }
            complete(&b, BY_TEST);
            complete(&a, BY_WAIT);
        } else {
            complete(&a, BY_WAIT);
            complete(&b, BY_WAIT);
            if (run % 2 == 0 && rank == sender)
                token = run, MPI_Send(&token, 1, MPI_INT, waiter, 9, MPI_COMM_WORLD);
            if (run % 2)
                MPI_Barrier(MPI_COMM_WORLD);
        }
        job_check(&a);
        job_check(&b);
    }
    job_free(&a);
    job_free(&b);
}

/* MPI_Start and MPI_Startall of an active request: MPI_ERR_REQUEST, the run undisturbed. */
static void start_active(void)
{
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    job j;
    job_alloc(&j, C_ALLREDUCE, d, "a duplicate with MPI_ERRORS_RETURN (started twice)", R_DOUBLE, large, 0, 0, 0,
              ++requests * 1000003);
    job_fill(&j, 0);
    job_init(&j);
    for (int run = 0; run < 4; run++) {
        job_fill(&j, run);
        start(&j);
        MPI_Request again = j.req;
        int rc = run % 2 ? MPI_Startall(1, &again) : MPI_Start(&again), cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST, "%s: %s of the active request returned class %d, expected MPI_ERR_REQUEST (%d)",
              j.what, run % 2 ? "MPI_Startall" : "MPI_Start", cls, MPI_ERR_REQUEST);
        CHECK(again == j.req, "%s: the refused start changed the handle", j.what);
        if (run == 2) { /* nor can it be cancelled */
            rc = MPI_Cancel(&again), cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_REQUEST, "%s: MPI_Cancel returned class %d, expected MPI_ERR_REQUEST (%d)", j.what,
                  cls, MPI_ERR_REQUEST);
        }
        complete(&j, BY_WAIT);
        job_check(&j);
    }
    job_free(&j);
    MPI_Comm_free(&d);
}

/* A user operation freed after MPI_<coll>_init, a request freed without ever being started,
 * and a communicator freed while persistent requests on it remain. */
static void freed_objects(void)
{
    MPI_Op op1, op2;
    MPI_Op_create(aff_fn, 0, &op1);
    MPI_Op_create(usum_fn, 1, &op2);
    job a, b;
    job_alloc(&a, C_ALLREDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (operation freed after init)", R_AFF, 3000, 0, 0, 0,
              ++requests * 1000003);
    job_alloc(&b, C_REDUCE, MPI_COMM_WORLD, "MPI_COMM_WORLD (operation freed after init)", R_USUM, large, size - 1, 0,
              1, ++requests * 1000003);
    a.op = op1, b.op = op2;
    job_fill(&a, 0);
    job_fill(&b, 0);
    job_init(&a);
    job_init(&b);
    MPI_Op_free(&op1);
    MPI_Op_free(&op2);
    CHECK(op1 == MPI_OP_NULL && op2 == MPI_OP_NULL, "MPI_Op_free did not set the handles to MPI_OP_NULL");
    for (int run = 0; run < 8; run++) {
        job_fill(&a, run);
        job_fill(&b, run);
        start(&b);
        start(&a);
        complete(&a, run % NHOW);
        complete(&b, (run + 1) % NHOW);
        job_check(&a);
        job_check(&b);
    }
    job_free(&a);
    job_free(&b);

    /* Never started: waiting on it returns at once, then it is freed. */
    job_alloc(&a, C_BCAST, MPI_COMM_WORLD, "MPI_COMM_WORLD (never started)", B_INT, 100, 0, 0, 0, ++requests * 1000003);
    job_fill(&a, 0);
    job_init(&a);
    int flag = 0;
    CHECK(MPI_Test(&a.req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag && a.req != MPI_REQUEST_NULL,
          "%s: MPI_Test on the request never started gave flag %d", a.what, flag);
    job_free(&a);

    /* The communicator's handle freed while persistent requests on it remain (the object
     * lives on until they are freed). */
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    job_alloc(&a, C_ALLREDUCE, d, "a duplicate freed after init", R_INT, 5000, 0, 1, 0, ++requests * 1000003);
    job_alloc(&b, C_BCAST, d, "a duplicate freed after init", B_DOUBLE, large, size - 1, 0, 0, ++requests * 1000003);
    job_fill(&a, 0);
    job_fill(&b, 0);
    job_init(&a);
    job_init(&b);
    MPI_Comm_free(&d);
    for (int run = 0; run < 5; run++) {
        job_fill(&a, run);
        job_fill(&b, run);
        start(&a);
        start(&b);
        complete(&b, run % NHOW);
        complete(&a, BY_WAIT);
        job_check(&a);
        job_check(&b);
    }
    job_free(&a);
    job_free(&b);
    /* MPI_COMM_WORLD's collectives are undisturbed. */
    long v = rank + 1, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == (long)size * (size + 1) / 2, "MPI_Allreduce after the persistent requests gave %ld", sum);
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

    sweep();
    startall();
    progress_elsewhere();
    start_active();
    freed_objects();

    MPI_Op_free(&aff_op);
    MPI_Op_free(&usum_op);
    return mt_finish();
}
