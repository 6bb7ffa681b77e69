/* select.c: the collective calls, blocking, nonblocking and persistent: argument rules that
 * depend on the root or MPI_IN_PLACE, and the choice of algorithm by communicator size and
 * message size, overridable per collective with COURIER_COLL_<NAME> (and its threshold with
 * COURIER_COLL_<NAME>_LARGE). Each call builds one schedule (sched.h): the blocking form runs
 * it at once, the nonblocking form returns it as a request, the persistent form keeps it for
 * MPI_Start. The three share every line but the last, so they cannot drift apart. */
#include "coll.h"
#include "core/pvar.h"

#include "core/config.h"
#include "core/error.h"
#include "cr_impl.h"

static int64_t allreduce_tiers_max, barrier_alg, bcast_alg, bcast_large, reduce_alg, reduce_large, allreduce_alg, allreduce_large, allgather_alg,
    allgather_large, node_large, node_reduce_shared, gather_alg, scatter_alg;
CR_TUNABLE_EX(barrier_alg, COURIER_COLL_BARRIER, CR_TUNE_CHOICE, "auto", "auto|dissemination|node", 0, 2,
              "MPI_Barrier algorithm (node: flags in shared memory, for communicators of a job on one node)");
CR_TUNABLE_EX(bcast_alg, COURIER_COLL_BCAST, CR_TUNE_CHOICE, "auto", "auto|binomial|scatter_allgather|node", 0, 3,
              "MPI_Bcast algorithm (node: staged through shared memory, for communicators of a job on one node)");
CR_TUNABLE_EX(node_large, COURIER_COLL_NODE_LARGE, CR_TUNE_SIZE, "8K", NULL, 0, INT64_MAX,
              "bytes from which blocking and nonblocking MPI_Bcast, MPI_Reduce and MPI_Allreduce on communicators of a job on one node "
              "stage the data through shared memory (src/coll/node_large.c) instead of sending messages");
CR_TUNABLE_EX(bcast_large, COURIER_COLL_BCAST_LARGE, CR_TUNE_SIZE, "256K", NULL, 0, INT64_MAX,
              "bytes from which MPI_Bcast uses scatter + allgather instead of a binomial tree (with 4 or more processes)");
CR_TUNABLE_EX(reduce_alg, COURIER_COLL_REDUCE, CR_TUNE_CHOICE, "auto", "auto|binomial|rabenseifner|node", 0, 3,
              "MPI_Reduce algorithm (rabenseifner needs a commutative operation; node, for communicators of a job on one node, "
              "combines buffers in shared memory: slots up to 1 KiB, staging blocks above)");
/* 72K: paired at 2, 4 and 8 processes (2026-11-29), the root alone took 0.62-0.95 of the time at
 * 64 KiB, sharing 0.6-0.87 of it from 80 KiB at 4 and 8 processes. With 2 processes the root
 * combines alone at every size (reduce_root_alone). */
CR_TUNABLE_EX(node_reduce_shared, COURIER_COLL_NODE_REDUCE_SHARED, CR_TUNE_SIZE, "72K", NULL, 0, INT64_MAX,
              "bytes from which a staged MPI_Reduce (COURIER_COLL_NODE_LARGE) of 3 processes or more has every process "
              "combine a share of the vector; below, and with 2 processes at every size, the root combines alone and the "
              "others leave once their data is staged");
CR_TUNABLE_EX(reduce_large, COURIER_COLL_REDUCE_LARGE, CR_TUNE_SIZE, "64K", NULL, 0, INT64_MAX,
              "bytes from which MPI_Reduce uses reduce-scatter + gather instead of a binomial tree");
CR_TUNABLE_EX(allreduce_alg, COURIER_COLL_ALLREDUCE, CR_TUNE_CHOICE, "auto",
              "auto|recursive_doubling|rabenseifner|node|tiers", 0, 4,
              "MPI_Allreduce algorithm (rabenseifner needs a commutative operation; node as for MPI_Reduce; tiers, for "
              "communicators that span nodes and a commutative operation: each node's processes, then one leader per node)");
CR_TUNABLE_EX(allreduce_tiers_max, COURIER_COLL_ALLREDUCE_TIERS_MAX, CR_TUNE_SIZE, "2K", NULL, 0, INT64_MAX,
              "bytes below which MPI_Allreduce on a communicator that spans nodes runs in tiers (within nodes, then one "
              "leader per node across them: one network message per node and step instead of one per process)");
CR_TUNABLE_EX(allreduce_large, COURIER_COLL_ALLREDUCE_LARGE, CR_TUNE_SIZE, "32K", NULL, 0, INT64_MAX,
              "bytes from which MPI_Allreduce uses reduce-scatter + allgather instead of recursive doubling");
CR_TUNABLE_EX(allgather_alg, COURIER_COLL_ALLGATHER, CR_TUNE_CHOICE, "auto", "auto|recursive_doubling|bruck|ring|node",
              0, 4, "MPI_Allgather algorithm (recursive_doubling needs a power-of-two process count; node: blocking and nonblocking calls "
                    "on communicators of a job on one node go through shared memory)");
CR_TUNABLE_EX(gather_alg, COURIER_COLL_GATHER, CR_TUNE_CHOICE, "auto", "auto|binomial|node", 0, 2,
              "MPI_Gather algorithm (node: blocking and nonblocking calls on communicators of a job on one node go through shared memory)");
CR_TUNABLE_EX(scatter_alg, COURIER_COLL_SCATTER, CR_TUNE_CHOICE, "auto", "auto|binomial|node", 0, 2,
              "MPI_Scatter algorithm (node: as for MPI_Gather)");
CR_TUNABLE_EX(allgather_large, COURIER_COLL_ALLGATHER_LARGE, CR_TUNE_SIZE, "64K", NULL, 0, INT64_MAX,
              "total bytes gathered from which MPI_Allgather uses a ring");

/* Which algorithm ran: MPI_T performance variables coll.<collective>.<algorithm> (pvar.h),
 * named as COURIER_COLL_<COLLECTIVE> names its choices, counted when a call (of any form, on an
 * intracommunicator of more than one process) picks its algorithm, so that a test forcing one
 * can check it really ran (test/mpi/include/mpitest.h does at MPI_Finalize). */
#define RAN CR_PVAR_DEFINE
RAN(ran_barrier_dissemination, "coll.barrier.dissemination", "MPI_Barrier calls run by dissemination");
RAN(ran_barrier_node, "coll.barrier.node", "MPI_Barrier calls run through shared memory");
RAN(ran_bcast_binomial, "coll.bcast.binomial", "MPI_Bcast calls run by a binomial tree");
RAN(ran_bcast_scatter_allgather, "coll.bcast.scatter_allgather", "MPI_Bcast calls run by scatter + allgather");
RAN(ran_bcast_node, "coll.bcast.node", "MPI_Bcast calls staged through shared memory");
RAN(ran_reduce_binomial, "coll.reduce.binomial", "MPI_Reduce calls run by a binomial tree");
RAN(ran_reduce_rabenseifner, "coll.reduce.rabenseifner", "MPI_Reduce calls run by reduce-scatter + gather");
RAN(ran_reduce_node, "coll.reduce.node", "MPI_Reduce calls run through shared memory");
RAN(ran_reduce_node_root_alone, "coll.reduce.node_root_alone",
    "MPI_Reduce calls staged through shared memory that had the root combine every piece alone");
RAN(ran_allreduce_recursive_doubling, "coll.allreduce.recursive_doubling",
    "MPI_Allreduce calls (and reductions built on it) run by recursive doubling");
RAN(ran_allreduce_rabenseifner, "coll.allreduce.rabenseifner",
    "MPI_Allreduce calls (and reductions built on it) run by reduce-scatter + allgather");
RAN(ran_allreduce_node, "coll.allreduce.node", "MPI_Allreduce calls run through shared memory");
RAN(ran_allreduce_tiers, "coll.allreduce.tiers", "MPI_Allreduce calls run in two tiers: within nodes, then across them");
RAN(ran_gather_binomial, "coll.gather.binomial", "MPI_Gather calls run by a binomial tree");
RAN(ran_gather_node, "coll.gather.node", "MPI_Gather calls staged through shared memory");
RAN(ran_scatter_binomial, "coll.scatter.binomial", "MPI_Scatter calls run by a binomial tree");
RAN(ran_scatter_node, "coll.scatter.node", "MPI_Scatter calls staged through shared memory");
RAN(ran_allgather_recursive_doubling, "coll.allgather.recursive_doubling", "MPI_Allgather calls run by recursive doubling");
RAN(ran_allgather_bruck, "coll.allgather.bruck", "MPI_Allgather calls run by Bruck's algorithm");
RAN(ran_allgather_ring, "coll.allgather.ring", "MPI_Allgather calls run by a ring");
RAN(ran_allgather_node, "coll.allgather.node", "MPI_Allgather calls staged through shared memory");

static inline bool is_pof2(int p)
{
    return (p & (p - 1)) == 0;
}

int cr_coll_check_buffer(const void *buf, MPI_Count count, const cr_dtype *dt, const char *arg)
{
    if (!buf && count > 0 && cr_dtype_starts_at_buffer(dt))
        return cr_err(MPI_ERR_BUFFER, "%s is NULL but %lld elements are to be accessed", arg, (long long)count);
    return MPI_SUCCESS;
}

int cr_coll_check_overlap(const void *sbuf, MPI_Count scount, const cr_dtype *sdt, const void *rbuf, MPI_Count rfirst,
                          MPI_Count rcount, const cr_dtype *rdt)
{
    if (scount <= 0 || rcount <= 0 || sdt->size == 0 || rdt->size == 0 || !cr_dtype_is_contig_n(sdt, scount) ||
        !cr_dtype_is_contig_n(rdt, rcount))
        return MPI_SUCCESS;
    uintptr_t s0 = (uintptr_t)sbuf + (uintptr_t)sdt->true_lb, s1 = s0 + (uintptr_t)(scount * sdt->size);
    uintptr_t r0 = (uintptr_t)rbuf + (uintptr_t)(rfirst * rdt->extent + rdt->true_lb),
              r1 = r0 + (uintptr_t)(rcount * rdt->size);
    if (s0 < r1 && r0 < s1)
        return cr_err(MPI_ERR_BUFFER, "sendbuf (%p, %lld bytes) overlaps recvbuf's %lld bytes at %p: aliased arguments "
                                      "are erroneous (use MPI_IN_PLACE as sendbuf to reuse the receive buffer)",
                      sbuf, (long long)(scount * sdt->size), (long long)(rcount * rdt->size), (void *)r0);
    return MPI_SUCCESS;
}

int cr_coll_check_not_in_place(const cr_comm *comm, const void *buf, const char *arg)
{
    if (comm->inter && buf == MPI_IN_PLACE)
        return cr_err(MPI_ERR_BUFFER, "%s=MPI_IN_PLACE: collectives on intercommunicators do not allow it", arg);
    return MPI_SUCCESS;
}

int cr_coll_check_count(MPI_Count count, const char *arg)
{
    return count < 0 ? cr_err(MPI_ERR_COUNT, "invalid count %s=%lld: must not be negative", arg, (long long)count)
                     : MPI_SUCCESS;
}

bool cr_coll_any_count(cr_cvec counts, int n)
{
    for (int i = 0; i < n; i++)
        if (cr_cvec_at(counts, (size_t)i) > 0)
            return true;
    return false;
}

/* Whether a call that may use the node component (alg 0: automatic, or `node`, the
 * last choice of each) should stage `bytes` per process through shared memory: when forced
 * (where the small node path's slots are too small, its callers check that first), or
 * automatically from COURIER_COLL_NODE_LARGE. */
static bool node_large_wanted(int alg, uint64_t bytes)
{
    return alg == 3 || (alg == 0 && bytes >= (uint64_t)node_large);
}

/* ----------------------------------------------------------------- running a call */

int cr_coll_launch(cr_comm *comm, cr_run_mode mode, MPI_Request *request, cr_coll_build_fn *build,
                   const cr_coll_call *a)
{
    /* Aliased buffers are erroneous (MPI_IN_PLACE is the way to reuse one); cheap to catch. */
    if (a->both_buffers && a->sbuf == a->rbuf && a->sbuf && a->sbuf != MPI_IN_PLACE)
        return cr_err(MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer (%p): use MPI_IN_PLACE as sendbuf "
                                      "to reuse the receive buffer", a->sbuf);
    /* A mismatch this process sees in its own block (cr_coll_call.mismatch): a blocking call
     * runs and returns it; a nonblocking one returns it at once, as an argument error, and its
     * schedule runs on detached (freed as MPI_Request_free frees it) so that the others still
     * finish; a persistent one returns it from its initialisation, which moves no data, but
     * takes the tag the others' schedules take, so that later calls on the communicator still
     * pair up. A block this process keeps to itself (a root's own block: mismatch_own_only)
     * concerns nobody else: the call runs as usual, its sends full, and the error is this
     * process's alone. */
    if (a->mismatch && mode == CR_RUN_PERSISTENT) {
        comm->coll_tag++; /* (as cr_sched_init would have) */
        return a->mismatch;
    }
    int preset = a->mismatch_own_only ? MPI_SUCCESS : a->mismatch;
    if (mode == CR_RUN_BLOCKING) {
        int err = cr_coll_node_prepare(comm);
        if (err)
            return err;
        cr_sched s;
        cr_sched_init(&s, comm);
        cr_sched_mismatch(&s, preset);
        build(&s, a, true);
        err = cr_sched_run(&s);
        return err ? err : a->mismatch;
    }
    cr_sched *s = cr_sched_new(comm);
    if (!s)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a collective request");
    cr_sched_mismatch(s, preset);
    if (a->op) { /* a user operation freed while the request runs must stay usable */
        cr_obj_ref(a->op);
        s->held_op = a->op;
    }
    bool held = cr_sched_hold_dtype(s, a->sdt) && cr_sched_hold_dtype(s, a->rdt); /* so must its types */
    int ns = a->per_neighbour ? a->nsdts : comm->remote_size, nr = a->per_neighbour ? a->nrdts : comm->remote_size;
    for (int i = 0; held && a->sdts && i < ns; i++)
        held = cr_sched_hold_dtype(s, a->sdts[i]);
    for (int i = 0; held && a->rdts && i < nr; i++)
        held = cr_sched_hold_dtype(s, a->rdts[i]);
    if (!held)
        cr_sched_fail(s, cr_err(MPI_ERR_NO_MEM, "out of memory for a collective request"));
    build(s, a, mode == CR_RUN_NONBLOCKING);
    if (!s->built_ok) {
        int err = s->err;
        cr_sched_free(s);
        return err;
    }
    if (a->mismatch) {
        MPI_Request detached;
        if (cr_sched_post(s, false, &detached) == MPI_SUCCESS)
            cr_mpi_request_free(&detached);
        return a->mismatch;
    }
    return cr_sched_post(s, mode == CR_RUN_PERSISTENT, request);
}

/* ----------------------------------------------------------------- barrier */

static void build_barrier(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)a;
    if (s->comm->inter) {
        cr_coll_inter_barrier(s);
        return;
    }
    if (s->size == 1)
        return;
    if (node_ok && barrier_alg != 1 && cr_coll_node_usable(s->comm, 0)) {
        ran_barrier_node++;
        cr_coll_node_barrier(s);
    } else {
        ran_barrier_dissemination++;
        cr_coll_barrier_dissemination(s);
    }
}

static int barrier(cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    cr_coll_call a = {0};
    return cr_coll_launch(comm, mode, request, build_barrier, &a);
}

int cr_mpi_barrier(cr_comm *comm)
{
    return barrier(comm, CR_RUN_BLOCKING, NULL);
}

int cr_mpi_ibarrier(cr_comm *comm, MPI_Request *request)
{
    return barrier(comm, CR_RUN_NONBLOCKING, request);
}

int cr_mpi_barrier_init(cr_comm *comm, cr_info *info, MPI_Request *request)
{
    (void)info;
    return barrier(comm, CR_RUN_PERSISTENT, request);
}

/* ----------------------------------------------------------------- broadcast */

static void build_bcast(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    uint64_t bytes = (uint64_t)a->rcount * (uint64_t)a->rdt->size;
    if (s->comm->inter) {
        cr_coll_inter_bcast(s, a);
        return;
    }
    if (s->size == 1 || bytes == 0)
        return;
    int alg = (int)bcast_alg;
    if (node_ok && node_large_wanted(alg, bytes) && cr_coll_node_large_usable(s->comm, a->rdt, NULL)) {
        ran_bcast_node++;
        cr_coll_node_large_bcast(s, a->rbuf, a->rcount, a->rdt, a->root);
        return;
    }
    if (alg == 0 || alg == 3)
        alg = bytes >= (uint64_t)bcast_large && s->size >= 4 ? 2 : 1;
    if (alg == 2) {
        ran_bcast_scatter_allgather++;
        cr_coll_bcast_scatter_allgather(s, a->rbuf, a->rcount, a->rdt, a->root);
    } else {
        ran_bcast_binomial++;
        cr_coll_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, a->root);
    }
}

static int bcast(void *buf, MPI_Count count, cr_dtype *dt, int root, cr_comm *comm, cr_run_mode mode,
                 MPI_Request *request)
{
    cr_coll_call a = {.rbuf = buf, .rcount = count, .rdt = dt, .root = root};
    return cr_coll_launch(comm, mode, request, build_bcast, &a);
}

int cr_mpi_bcast(void *buf, MPI_Count count, cr_dtype *dt, int root, cr_comm *comm)
{
    return bcast(buf, count, dt, root, comm, CR_RUN_BLOCKING, NULL);
}

int cr_mpi_ibcast(void *buf, MPI_Count count, cr_dtype *dt, int root, cr_comm *comm, MPI_Request *request)
{
    return bcast(buf, count, dt, root, comm, CR_RUN_NONBLOCKING, request);
}

int cr_mpi_bcast_init(void *buf, MPI_Count count, cr_dtype *dt, int root, cr_comm *comm, cr_info *info,
                      MPI_Request *request)
{
    (void)info;
    return bcast(buf, count, dt, root, comm, CR_RUN_PERSISTENT, request);
}

/* ----------------------------------------------------------------- allreduce */

/* The algorithm, in place: this process's contribution is in rbuf. */
void cr_coll_allreduce_select(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, bool node_ok)
{
    if (s->size == 1 || count == 0)
        return;
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    bool rab_ok = op->commutative && count >= cr_coll_pof2(s->size);
    int alg = (int)allreduce_alg;
    if (node_ok && (alg == 0 || alg == 3) && cr_coll_node_usable(s->comm, bytes)) {
        ran_allreduce_node++;
        cr_coll_node_allreduce(s, rbuf, count, dt, op);
        return;
    }
    if (node_ok && node_large_wanted(alg, bytes) && cr_coll_node_large_usable(s->comm, dt, op)) {
        ran_allreduce_node++;
        cr_coll_node_large_allreduce(s, rbuf, rbuf, count, dt, op);
        return;
    }
    if ((alg == 4 || (alg == 0 && bytes < (uint64_t)allreduce_tiers_max)) && cr_coll_tiers_usable(s, op)) {
        ran_allreduce_tiers++;
        cr_coll_allreduce_tiers(s, rbuf, count, dt, op);
        return;
    }
    if (alg == 0 || alg == 3 || alg == 4)
        alg = rab_ok && bytes >= (uint64_t)allreduce_large ? 2 : 1;
    if (alg == 2 && rab_ok) {
        ran_allreduce_rabenseifner++;
        cr_coll_allreduce_rabenseifner(s, rbuf, count, dt, op);
    } else {
        ran_allreduce_recursive_doubling++;
        cr_coll_allreduce_recursive_doubling(s, rbuf, count, dt, op);
    }
}

int cr_coll_allreduce_auto(void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm)
{
    cr_sched s;
    cr_sched_init(&s, comm);
    cr_coll_allreduce_select(&s, rbuf, count, dt, op, true);
    return cr_sched_run(&s);
}

static void build_allreduce(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    if (s->comm->inter) {
        cr_coll_inter_allreduce(s, a);
        return;
    }
    uint64_t bytes = (uint64_t)a->rcount * (uint64_t)a->rdt->size;
    if (node_ok && s->size > 1 && bytes > 0 && !cr_coll_node_usable(s->comm, bytes) &&
        node_large_wanted((int)allreduce_alg, bytes) && cr_coll_node_large_usable(s->comm, a->rdt, a->op)) {
        /* Staged straight from the send buffer: no copy into rbuf first. */
        ran_allreduce_node++;
        cr_coll_node_large_allreduce(s, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, a->rbuf, a->rcount, a->rdt, a->op);
        return;
    }
    if (a->sbuf != MPI_IN_PLACE)
        cr_sched_copy(s, a->sbuf, a->rcount, a->rdt, a->rbuf, a->rcount, a->rdt);
    cr_coll_allreduce_select(s, a->rbuf, a->rcount, a->rdt, a->op, node_ok);
}

static int allreduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm,
                     cr_run_mode mode, MPI_Request *request)
{
    int err = cr_op_check(op, dt);
    if (err || (err = cr_coll_check_not_in_place(comm, sbuf, "sendbuf")))
        return err;
    if (sbuf != MPI_IN_PLACE && (err = cr_coll_check_buffer(sbuf, count, dt, "sendbuf")))
        return err;
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rdt = dt, .op = op, .both_buffers = count > 0};
    return cr_coll_launch(comm, mode, request, build_allreduce, &a);
}

int cr_mpi_allreduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm)
{
    return allreduce(sbuf, rbuf, count, dt, op, comm, CR_RUN_BLOCKING, NULL);
}

int cr_mpi_iallreduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm,
                      MPI_Request *request)
{
    return allreduce(sbuf, rbuf, count, dt, op, comm, CR_RUN_NONBLOCKING, request);
}

int cr_mpi_allreduce_init(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm,
                          cr_info *info, MPI_Request *request)
{
    (void)info;
    return allreduce(sbuf, rbuf, count, dt, op, comm, CR_RUN_PERSISTENT, request);
}

/* ----------------------------------------------------------------- reduce */

/* Whether a staged reduce has its root combine every piece while the others only stage theirs
 * (instead of each combining a share and the root copying the others' shares out). With 2
 * processes, always: the other process's share costs the root a copy out of the result block
 * and its own staging of half the vector, each between the cores, where alone it combines the
 * whole vector from the one slot and its own buffer (paired, 6 pairs a size, 2026-11-30: the
 * root alone took 0.66-0.84 of the time from 128 KiB to 16 MiB). With more processes, only
 * below COURIER_COLL_NODE_REDUCE_SHARED; from there the processes share the combining, since
 * the root alone, combining from every slot, took 1.39 and 1.22 of the shared time at 4 MiB
 * with 3 and 4 processes (at 1 MiB 0.92 and 1.20). */
static bool reduce_root_alone(int size, uint64_t bytes)
{
    return size == 2 || bytes < (uint64_t)node_reduce_shared;
}

static void build_reduce(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    MPI_Count count = a->rcount;
    cr_dtype *dt = a->rdt;
    if (s->comm->inter) {
        cr_coll_inter_reduce(s, a);
        return;
    }
    if (s->size == 1) {
        if (a->sbuf != MPI_IN_PLACE)
            cr_sched_copy(s, a->sbuf, count, dt, a->rbuf, count, dt);
        return;
    }
    if (count == 0)
        return;
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    bool rab_ok = a->op->commutative && count >= cr_coll_pof2(s->size);
    int alg = (int)reduce_alg;
    if (node_ok && (alg == 0 || alg == 3) && cr_coll_node_usable(s->comm, bytes)) {
        ran_reduce_node++;
        cr_coll_node_reduce(s, a->sbuf, a->rbuf, count, dt, a->op, a->root);
        return;
    }
    if (node_ok && node_large_wanted(alg, bytes) && cr_coll_node_large_usable(s->comm, dt, a->op)) {
        ran_reduce_node++;
        bool alone = reduce_root_alone(s->size, bytes);
        ran_reduce_node_root_alone += alone;
        cr_coll_node_large_reduce(s, a->sbuf, a->rbuf, count, dt, a->op, a->root, alone);
        return;
    }
    if (alg == 0 || alg == 3)
        alg = rab_ok && bytes >= (uint64_t)reduce_large ? 2 : 1;
    if (alg == 2 && rab_ok) {
        ran_reduce_rabenseifner++;
        cr_coll_reduce_rabenseifner(s, a->sbuf, a->rbuf, count, dt, a->op, a->root);
    } else {
        ran_reduce_binomial++;
        cr_coll_reduce_binomial(s, a->sbuf, a->rbuf, count, dt, a->op, a->root);
    }
}

static int reduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root, cr_comm *comm,
                  cr_run_mode mode, MPI_Request *request)
{
    int err = cr_op_check(op, dt);
    if (err)
        return err;
    bool at_root = cr_coll_at_root(comm, root), sends = cr_coll_takes_part(comm, root);
    if (sends && sbuf == MPI_IN_PLACE && !at_root)
        return cr_err(MPI_ERR_BUFFER, "sendbuf=MPI_IN_PLACE is allowed only at the root (rank %d), not at rank %d",
                      root, comm->rank);
    if (sends && sbuf != MPI_IN_PLACE && (err = cr_coll_check_buffer(sbuf, count, dt, "sendbuf")))
        return err;
    if (at_root && (err = cr_coll_check_buffer(rbuf, count, dt, "recvbuf")))
        return err;
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rdt = dt, .op = op, .root = root,
                      .both_buffers = at_root && !comm->inter && count > 0};
    return cr_coll_launch(comm, mode, request, build_reduce, &a);
}

int cr_mpi_reduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root, cr_comm *comm)
{
    return reduce(sbuf, rbuf, count, dt, op, root, comm, CR_RUN_BLOCKING, NULL);
}

int cr_mpi_ireduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root, cr_comm *comm,
                   MPI_Request *request)
{
    return reduce(sbuf, rbuf, count, dt, op, root, comm, CR_RUN_NONBLOCKING, request);
}

int cr_mpi_reduce_init(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root,
                       cr_comm *comm, cr_info *info, MPI_Request *request)
{
    (void)info;
    return reduce(sbuf, rbuf, count, dt, op, root, comm, CR_RUN_PERSISTENT, request);
}

/* ----------------------------------------------------------------- gather, scatter */

/* The datatype arguments that matter at this process, resolved. */
int cr_coll_resolve(MPI_Datatype h, const char *arg, cr_dtype **dt)
{
    return cr_dtype_check(h, arg, true, dt);
}

/* A copy of this process's own block when the communicator has one process: what the
 * algorithms would do with p blocks, done for one. */
static bool alone(cr_sched *s, const cr_coll_call *a)
{
    if (s->size != 1)
        return false;
    if (a->sbuf != MPI_IN_PLACE && a->rbuf != MPI_IN_PLACE)
        cr_sched_copy(s, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt);
    return true;
}

/* The bytes each process contributes to a gather (receives in a scatter), as every process
 * computes it alike: the root from the side of the call that always holds a type there (a
 * gather's receive side, a scatter's send side; the other may be MPI_IN_PLACE), the others from
 * theirs. */
static uint64_t ring_bytes(const cr_sched *s, const cr_coll_call *a, bool scatter)
{
    bool send_side = scatter == (s->rank == a->root);
    return send_side ? (uint64_t)a->scount * (uint64_t)a->sdt->size : (uint64_t)a->rcount * (uint64_t)a->rdt->size;
}

static void build_gather(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    if (s->comm->inter) {
        cr_coll_inter_gatherv(s, a);
    } else if (alone(s, a)) {
    } else if (node_ok && gather_alg != 1 && ring_bytes(s, a, false) > 0 &&
               cr_coll_node_ring_usable(s->comm, ring_bytes(s, a, false))) {
        ran_gather_node++;
        cr_coll_node_ring_gather(s, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root);
    } else if (node_ok && gather_alg != 1 && cr_coll_node_large_usable(s->comm, NULL, NULL)) {
        bool own = s->rank == a->root && a->sbuf != MPI_IN_PLACE;
        ran_gather_node++;
        cr_coll_node_large_exchange_own(s, CR_NODE_GATHER, a, a->root, own, a->sbuf, a->scount, a->sdt,
                                        own ? cr_coll_at(a->rbuf, (MPI_Count)s->rank * a->rcount, a->rdt) : NULL,
                                        a->rcount, a->rdt); /* (recvbuf and its type: the root's only) */
    } else {
        ran_gather_binomial++;
        cr_coll_gather_binomial(s, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root);
    }
}

static int gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, int root, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    cr_dtype *sdt = NULL, *rdt = NULL;
    bool at_root = cr_coll_at_root(comm, root), sends = cr_coll_takes_part(comm, root);
    int err = MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE && sends && !at_root)
        return cr_err(MPI_ERR_BUFFER, "sendbuf=MPI_IN_PLACE is allowed only at the root (rank %d)", root);
    if (sends && sbuf != MPI_IN_PLACE && ((err = cr_coll_check_count(scount, "sendcount")) || (err = cr_coll_resolve(stype, "sendtype", &sdt)) ||
                                 (err = cr_coll_check_buffer(sbuf, scount, sdt, "sendbuf"))))
        return err;
    if (at_root && ((err = cr_coll_check_count(rcount, "recvcount")) || (err = cr_coll_resolve(rtype, "recvtype", &rdt)) ||
                    (err = cr_coll_check_buffer(rbuf, rcount, rdt, "recvbuf"))))
        return err;
    int mismatch = MPI_SUCCESS;
    if (at_root && !comm->inter && sdt && (uint64_t)scount * (uint64_t)sdt->size != (uint64_t)rcount * (uint64_t)rdt->size) {
        mismatch = cr_err(MPI_ERR_TRUNCATE, "the root sends %lld bytes to itself but receives %lld per process",
                          (long long)(scount * sdt->size), (long long)(rcount * rdt->size));
        sbuf = MPI_IN_PLACE, sdt = NULL, scount = 0; /* (cr_coll_call.mismatch) */
    }
    cr_coll_call a = {sbuf, rbuf, scount, rcount, sdt, rdt, NULL, root, .both_buffers = at_root && !comm->inter && scount > 0,
                      .mismatch = mismatch, .mismatch_own_only = true};
    return cr_coll_launch(comm, mode, request, build_gather, &a);
}

int cr_mpi_gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, int root, cr_comm *comm)
{
    return gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, CR_RUN_BLOCKING, NULL);
}

int cr_mpi_igather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root, cr_comm *comm, MPI_Request *request)
{
    return gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, CR_RUN_NONBLOCKING, request);
}

int cr_mpi_gather_init(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                       MPI_Datatype rtype, int root, cr_comm *comm, cr_info *info, MPI_Request *request)
{
    (void)info;
    return gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, CR_RUN_PERSISTENT, request);
}

static void build_scatter(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    if (s->comm->inter) {
        cr_coll_inter_scatterv(s, a);
    } else if (alone(s, a)) {
    } else if (node_ok && scatter_alg != 1 && ring_bytes(s, a, true) > 0 &&
               cr_coll_node_ring_usable(s->comm, ring_bytes(s, a, true))) {
        ran_scatter_node++;
        cr_coll_node_ring_scatter(s, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root);
    } else if (node_ok && scatter_alg != 1 && cr_coll_node_large_usable(s->comm, NULL, NULL)) {
        bool own = s->rank == a->root && a->rbuf != MPI_IN_PLACE;
        ran_scatter_node++;
        cr_coll_node_large_exchange_own(s, CR_NODE_SCATTER, a, a->root, own, /* (sendbuf, its type: the root's only) */
                                        own ? cr_coll_at(a->sbuf, (MPI_Count)s->rank * a->scount, a->sdt) : NULL,
                                        a->scount, a->sdt, a->rbuf, a->rcount, a->rdt);
    } else {
        ran_scatter_binomial++;
        cr_coll_scatter_binomial(s, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root);
    }
}

static int scatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    cr_dtype *sdt = NULL, *rdt = NULL;
    bool at_root = cr_coll_at_root(comm, root), receives = cr_coll_takes_part(comm, root);
    int err = MPI_SUCCESS;
    if (rbuf == MPI_IN_PLACE && receives && !at_root)
        return cr_err(MPI_ERR_BUFFER, "recvbuf=MPI_IN_PLACE is allowed only at the root (rank %d)", root);
    if (at_root && ((err = cr_coll_check_count(scount, "sendcount")) || (err = cr_coll_resolve(stype, "sendtype", &sdt)) ||
                    (err = cr_coll_check_buffer(sbuf, scount, sdt, "sendbuf"))))
        return err;
    if (receives && rbuf != MPI_IN_PLACE &&
        ((err = cr_coll_check_count(rcount, "recvcount")) || (err = cr_coll_resolve(rtype, "recvtype", &rdt)) ||
         (err = cr_coll_check_buffer(rbuf, rcount, rdt, "recvbuf"))))
        return err;
    int mismatch = MPI_SUCCESS;
    if (at_root && !comm->inter && rdt && (uint64_t)scount * (uint64_t)sdt->size != (uint64_t)rcount * (uint64_t)rdt->size) {
        mismatch = cr_err(MPI_ERR_TRUNCATE, "the root sends %lld bytes per process but receives %lld itself",
                          (long long)(scount * sdt->size), (long long)(rcount * rdt->size));
        rbuf = MPI_IN_PLACE, rdt = NULL, rcount = 0; /* (cr_coll_call.mismatch: the others' blocks go whole) */
    }
    cr_coll_call a = {sbuf, rbuf, scount, rcount, sdt, rdt, NULL, root,
                      .both_buffers = at_root && !comm->inter && rcount > 0, .mismatch = mismatch,
                      .mismatch_own_only = true};
    return cr_coll_launch(comm, mode, request, build_scatter, &a);
}

int cr_mpi_scatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root, cr_comm *comm)
{
    return scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, CR_RUN_BLOCKING, NULL);
}

int cr_mpi_iscatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype, int root, cr_comm *comm, MPI_Request *request)
{
    return scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, CR_RUN_NONBLOCKING, request);
}

int cr_mpi_scatter_init(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        MPI_Datatype rtype, int root, cr_comm *comm, cr_info *info, MPI_Request *request)
{
    (void)info;
    return scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, CR_RUN_PERSISTENT, request);
}

/* ----------------------------------------------------------------- allgather */

/* In place: this process's block is at its place in rbuf. */
static void allgather_in_place(cr_sched *s, void *rbuf, MPI_Count rcount, cr_dtype *rdt)
{
    int p = s->size;
    if (p == 1 || rcount == 0)
        return;
    uint64_t total = (uint64_t)rcount * (uint64_t)rdt->size * (uint64_t)p;
    int alg = (int)allgather_alg;
    if (alg == 1 && !is_pof2(p))
        alg = 2;
    if (alg == 0)
        alg = total >= (uint64_t)allgather_large ? 3 : is_pof2(p) ? 1 : 2;
    switch (alg) {
    case 1: ran_allgather_recursive_doubling++, cr_coll_allgather_recursive_doubling(s, rbuf, rcount, rdt); break;
    case 2: ran_allgather_bruck++, cr_coll_allgather_bruck(s, rbuf, rcount, rdt); break;
    default: ran_allgather_ring++, cr_coll_allgather_ring(s, rbuf, rcount, rdt); break;
    }
}

int cr_coll_allgather_auto(void *rbuf, MPI_Count rcount, cr_dtype *rdt, cr_comm *comm)
{
    cr_sched s;
    cr_sched_init(&s, comm);
    allgather_in_place(&s, rbuf, rcount, rdt);
    return cr_sched_run(&s);
}

static void build_allgather(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    if (s->comm->inter) {
        cr_coll_inter_allgather(s, a);
        return;
    }
    if (a->sbuf != MPI_IN_PLACE)
        cr_sched_copy(s, a->sbuf, a->scount, a->sdt, cr_coll_at(a->rbuf, (MPI_Count)s->rank * a->rcount, a->rdt),
                      a->rcount, a->rdt);
    bool node_wanted = node_ok && (allgather_alg == 0 || allgather_alg == 4) && s->size > 1;
    if (node_wanted && cr_coll_node_flags_usable(s->comm, 1, (uint64_t)a->rcount * (uint64_t)a->rdt->size)) {
        ran_allgather_node++;
        cr_coll_node_flags_allgather(s, a->rbuf, a->rcount, a->rdt);
    } else if (node_wanted && cr_coll_node_large_usable(s->comm, NULL, NULL)) {
        ran_allgather_node++;
        cr_coll_node_large_exchange(s, CR_NODE_ALLGATHER, NULL, 0, NULL, a->rbuf, a->rcount, a->rdt, 0);
    } else {
        allgather_in_place(s, a->rbuf, a->rcount, a->rdt);
    }
}

static int allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     cr_dtype *rdt, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    int err = cr_coll_check_not_in_place(comm, sbuf, "sendbuf");
    cr_dtype *sdt = NULL;
    int mismatch = MPI_SUCCESS;
    if (err)
        return err;
    if (sbuf != MPI_IN_PLACE) {
        if ((err = cr_coll_check_count(scount, "sendcount")) || (err = cr_coll_resolve(stype, "sendtype", &sdt)) ||
            (err = cr_coll_check_buffer(sbuf, scount, sdt, "sendbuf")) ||
            (err = cr_coll_check_overlap(sbuf, scount, sdt, rbuf, 0, rcount * comm->remote_size, rdt)))
            return err;
        if (!comm->inter && (uint64_t)scount * (uint64_t)sdt->size != (uint64_t)rcount * (uint64_t)rdt->size) {
            mismatch = cr_err(MPI_ERR_TRUNCATE, "sendcount/sendtype give %lld bytes, recvcount/recvtype %lld per process",
                              (long long)(scount * sdt->size), (long long)(rcount * rdt->size));
            sbuf = MPI_IN_PLACE, sdt = NULL, scount = 0; /* (cr_coll_call.mismatch) */
        }
    }
    cr_coll_call a = {sbuf, rbuf, scount, rcount, sdt, rdt, NULL, 0,
                      .both_buffers = sbuf != MPI_IN_PLACE && (scount > 0 || rcount > 0), .mismatch = mismatch};
    return cr_coll_launch(comm, mode, request, build_allgather, &a);
}

int cr_mpi_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     cr_dtype *rdt, cr_comm *comm)
{
    return allgather(sbuf, scount, stype, rbuf, rcount, rdt, comm, CR_RUN_BLOCKING, NULL);
}

int cr_mpi_iallgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                      cr_dtype *rdt, cr_comm *comm, MPI_Request *request)
{
    return allgather(sbuf, scount, stype, rbuf, rcount, rdt, comm, CR_RUN_NONBLOCKING, request);
}

int cr_mpi_allgather_init(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                          cr_dtype *rdt, cr_comm *comm, cr_info *info, MPI_Request *request)
{
    (void)info;
    return allgather(sbuf, scount, stype, rbuf, rcount, rdt, comm, CR_RUN_PERSISTENT, request);
}
