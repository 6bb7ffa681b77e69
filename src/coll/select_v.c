/* select_v.c: the collective calls whose blocks differ by process or go from everyone to
 * everyone: gatherv, scatterv, allgatherv, alltoall(v,w), reduce_scatter(_block), scan and
 * exscan, each blocking, nonblocking and persistent (see select.c for the rest and for how a
 * call runs its schedule). Arguments are checked here where they matter only at some
 * processes (the root's arrays) or only without MPI_IN_PLACE. */
#include "coll.h"
#include "core/pvar.h"

#include "core/config.h"
#include "core/error.h"
#include "cr_impl.h"

#include <stdio.h>
#include <stdlib.h>

static int64_t allgatherv_alg, allgatherv_large, alltoall_alg, alltoall_small, alltoallv_alg, alltoallw_alg, scan_alg,
    reduce_scatter_alg;
CR_TUNABLE_EX(scan_alg, COURIER_COLL_SCAN, CR_TUNE_CHOICE, "auto", "auto|recursive_doubling|node", 0, 2,
              "MPI_Scan and MPI_Exscan algorithm (node: blocking and nonblocking calls on communicators of a job on one node stage the "
              "vectors in shared memory and each process combines those before it)");
CR_TUNABLE_EX(reduce_scatter_alg, COURIER_COLL_REDUCE_SCATTER_BLOCK, CR_TUNE_CHOICE, "auto", "auto|allreduce|node", 0,
              2, "MPI_Reduce_scatter_block algorithm (node: as for MPI_Scan, each process combines its block from "
                 "everyone's; allreduce: the whole vector reduced everywhere, then each keeps its block)");
CR_TUNABLE_EX(alltoall_alg, COURIER_COLL_ALLTOALL, CR_TUNE_CHOICE, "auto", "auto|pairwise|node|bruck", 0, 3,
              "MPI_Alltoall algorithm (node: blocking and nonblocking calls on communicators of a job on one node stage every block "
              "through shared memory, in one round; pairwise: p - 1 exchanges, 8 in flight; bruck: log2 p rounds)");
CR_TUNABLE_EX(alltoall_small, COURIER_COLL_ALLTOALL_SMALL, CR_TUNE_SIZE, "256", NULL, 0, INT64_MAX,
              "bytes per block up to which MPI_Alltoall by messages uses Bruck's algorithm, with more than 9 processes "
              "(up to 9, the pairwise exchange has all its exchanges in flight at once)");
CR_TUNABLE_EX(alltoallv_alg, COURIER_COLL_ALLTOALLV, CR_TUNE_CHOICE, "auto", "auto|pairwise|node", 0, 2,
              "MPI_Alltoallv algorithm (node: blocking and nonblocking calls on communicators of a job on one node stage every block "
              "through shared memory, in pieces as many as the largest block anywhere needs; pairwise: p - 1 "
              "exchanges, 8 in flight; persistent calls are pairwise)");
CR_TUNABLE_EX(alltoallw_alg, COURIER_COLL_ALLTOALLW, CR_TUNE_CHOICE, "auto", "auto|pairwise|node", 0, 2,
              "MPI_Alltoallw algorithm (as COURIER_COLL_ALLTOALLV)");
CR_TUNABLE_EX(allgatherv_alg, COURIER_COLL_ALLGATHERV, CR_TUNE_CHOICE, "auto", "auto|direct|ring|node", 0, 3,
              "MPI_Allgatherv algorithm (node: blocking and nonblocking calls on communicators of a job on one node "
              "stage every block through shared memory; direct: every block to every process at once; ring; "
              "persistent calls are direct or ring)");
CR_TUNABLE_EX(allgatherv_large, COURIER_COLL_ALLGATHERV_LARGE, CR_TUNE_SIZE, "64K", NULL, 0, INT64_MAX,
              "total bytes gathered from which MPI_Allgatherv uses a ring");

/* Every count of `counts` (one per process) is not negative. */
int cr_coll_check_counts(cr_cvec counts, int n, const char *arg)
{
    for (int i = 0; i < n; i++)
        if (cr_cvec_at(counts, (size_t)i) < 0)
            return cr_err(MPI_ERR_COUNT, "invalid count %s[%d]=%lld: must not be negative", arg, i,
                          (long long)cr_cvec_at(counts, (size_t)i));
    return MPI_SUCCESS;
}

static int check_match(uint64_t sbytes, uint64_t rbytes, const char *what)
{
    if (sbytes != rbytes)
        return cr_err(MPI_ERR_TRUNCATE, "%s: %llu bytes sent but %llu expected", what, (unsigned long long)sbytes,
                      (unsigned long long)rbytes);
    return MPI_SUCCESS;
}

static inline uint64_t bytes_of(MPI_Count count, const cr_dtype *dt)
{
    return (uint64_t)count * (uint64_t)dt->size;
}

/* Which algorithm ran (see select.c). */
#define RAN CR_PVAR_DEFINE
RAN(ran_alltoall_pairwise, "coll.alltoall.pairwise", "MPI_Alltoall calls run by pairwise exchange");
RAN(ran_alltoall_node, "coll.alltoall.node", "MPI_Alltoall calls staged through shared memory");
RAN(ran_alltoall_bruck, "coll.alltoall.bruck", "MPI_Alltoall calls run by Bruck's algorithm");
RAN(ran_alltoallv_pairwise, "coll.alltoallv.pairwise", "MPI_Alltoallv calls run by pairwise exchange");
RAN(ran_alltoallv_node, "coll.alltoallv.node", "MPI_Alltoallv calls staged through shared memory");
RAN(ran_alltoallw_pairwise, "coll.alltoallw.pairwise", "MPI_Alltoallw calls run by pairwise exchange");
RAN(ran_alltoallw_node, "coll.alltoallw.node", "MPI_Alltoallw calls staged through shared memory");
RAN(ran_allgatherv_direct, "coll.allgatherv.direct", "MPI_Allgatherv calls run by direct exchange");
RAN(ran_allgatherv_ring, "coll.allgatherv.ring", "MPI_Allgatherv calls run by a ring");
RAN(ran_allgatherv_node, "coll.allgatherv.node", "MPI_Allgatherv calls staged through shared memory");
RAN(ran_scan_recursive_doubling, "coll.scan.recursive_doubling",
    "MPI_Scan and MPI_Exscan calls run by recursive doubling");
RAN(ran_scan_node, "coll.scan.node", "MPI_Scan and MPI_Exscan calls staged through shared memory");
RAN(ran_reduce_scatter_block_allreduce, "coll.reduce_scatter_block.allreduce",
    "MPI_Reduce_scatter_block calls run as an allreduce");
RAN(ran_reduce_scatter_block_node, "coll.reduce_scatter_block.node",
    "MPI_Reduce_scatter_block calls staged through shared memory");

/* ----------------------------------------------------------------- gatherv, scatterv */

static void build_gatherv(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)node_ok;
    if (s->comm->inter)
        cr_coll_inter_gatherv(s, a);
    else
        cr_coll_gatherv_linear(s, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcounts, a->rdispls, a->rdt, a->root);
}

static int gatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, cr_cvec rcounts, cr_cvec displs,
                   MPI_Datatype rtype, int root, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    cr_dtype *sdt = NULL, *rdt = NULL;
    bool at_root = cr_coll_at_root(comm, root), sends = cr_coll_takes_part(comm, root);
    int err = MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE && sends && !at_root)
        return cr_err(MPI_ERR_BUFFER, "sendbuf=MPI_IN_PLACE is allowed only at the root (rank %d)", root);
    if (sends && sbuf != MPI_IN_PLACE &&
        ((err = cr_coll_check_count(scount, "sendcount")) || (err = cr_coll_resolve(stype, "sendtype", &sdt)) ||
         (err = cr_coll_check_buffer(sbuf, scount, sdt, "sendbuf"))))
        return err;
    if (at_root) {
        if ((err = cr_coll_check_counts(rcounts, comm->remote_size, "recvcounts")) || (err = cr_coll_resolve(rtype, "recvtype", &rdt)))
            return err;
        if (!comm->inter && sdt && (err = check_match(bytes_of(scount, sdt), bytes_of(cr_cvec_at(rcounts, (size_t)root), rdt),
                                      "the root's own block"))) {
            sbuf = MPI_IN_PLACE, sdt = NULL, scount = 0; /* (cr_coll_call.mismatch) */
        }
    }
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .scount = scount, .sdt = sdt, .rdt = rdt, .root = root,
                      .rcounts = rcounts, .rdispls = displs,
                      /* aliased buffers matter only when the root has a block of its own to move */
                      .both_buffers = at_root && !comm->inter && scount > 0, .mismatch = err,
                      .mismatch_own_only = true};
    return cr_coll_launch(comm, mode, request, build_gatherv, &a);
}

CR_COLL_THREE_FORMS(gatherv,
            (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, cr_cvec rcounts, cr_cvec displs,
             MPI_Datatype rtype, int root, cr_comm *comm),
            (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm))

static void build_scatterv(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)node_ok;
    if (s->comm->inter)
        cr_coll_inter_scatterv(s, a);
    else
        cr_coll_scatterv_linear(s, a->sbuf, a->scounts, a->sdispls, a->sdt, a->rbuf, a->rcount, a->rdt, a->root);
}

static int scatterv(const void *sbuf, cr_cvec scounts, cr_cvec displs, MPI_Datatype stype, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, int root, cr_comm *comm, cr_run_mode mode,
                    MPI_Request *request)
{
    cr_dtype *sdt = NULL, *rdt = NULL;
    bool at_root = cr_coll_at_root(comm, root), receives = cr_coll_takes_part(comm, root);
    int err = MPI_SUCCESS;
    if (rbuf == MPI_IN_PLACE && receives && !at_root)
        return cr_err(MPI_ERR_BUFFER, "recvbuf=MPI_IN_PLACE is allowed only at the root (rank %d)", root);
    if (at_root &&
        ((err = cr_coll_check_counts(scounts, comm->remote_size, "sendcounts")) || (err = cr_coll_resolve(stype, "sendtype", &sdt))))
        return err;
    if (receives && rbuf != MPI_IN_PLACE &&
        ((err = cr_coll_check_count(rcount, "recvcount")) || (err = cr_coll_resolve(rtype, "recvtype", &rdt)) ||
         (err = cr_coll_check_buffer(rbuf, rcount, rdt, "recvbuf"))))
        return err;
    if (at_root && !comm->inter && rdt &&
        (err = check_match(bytes_of(cr_cvec_at(scounts, (size_t)root), sdt), bytes_of(rcount, rdt), "the root's own block")))
        rbuf = MPI_IN_PLACE, rdt = NULL, rcount = 0; /* (cr_coll_call.mismatch) */
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .rcount = rcount, .sdt = sdt, .rdt = rdt, .root = root,
                      .scounts = scounts, .sdispls = displs,
                      .both_buffers = at_root && !comm->inter && rcount > 0, .mismatch = err,
                      .mismatch_own_only = true};
    return cr_coll_launch(comm, mode, request, build_scatterv, &a);
}

CR_COLL_THREE_FORMS(scatterv,
            (const void *sbuf, cr_cvec scounts, cr_cvec displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
             MPI_Datatype rtype, int root, cr_comm *comm),
            (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm))

/* ----------------------------------------------------------------- allgatherv */

static void build_allgatherv(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    int p = s->size;
    if (s->comm->inter) {
        cr_coll_inter_allgatherv(s, a);
        return;
    }
    if (a->sbuf != MPI_IN_PLACE)
        cr_sched_copy(s, a->sbuf, a->scount, a->sdt, cr_coll_at(a->rbuf, cr_cvec_at(a->rdispls, (size_t)s->rank), a->rdt),
                      cr_cvec_at(a->rcounts, (size_t)s->rank), a->rdt);
    if (p == 1)
        return;
    /* Staged through the node's blocks at every size, as allgather's large path (every process
     * knows every block's size, so no agreement is needed; doc/performance.md: 8 processes of
     * 1 MiB in all 6.6x faster than the ring, 64 KiB 4.2x). */
    if (node_ok && (allgatherv_alg == 0 || allgatherv_alg == 3) && cr_coll_node_large_usable(s->comm, NULL, NULL) &&
        cr_coll_node_large_allgatherv(s, a->rbuf, a->rcounts, a->rdispls, a->rdt)) {
        ran_allgatherv_node++;
        return;
    }
    uint64_t total = 0;
    for (int i = 0; i < p; i++)
        total += bytes_of(cr_cvec_at(a->rcounts, (size_t)i), a->rdt);
    int alg = (int)allgatherv_alg;
    if (alg == 0 || alg == 3)
        alg = total >= (uint64_t)allgatherv_large ? 2 : 1;
    if (alg == 1) {
        ran_allgatherv_direct++;
        cr_coll_allgatherv_direct(s, a->rbuf, a->rcounts, a->rdispls, a->rdt);
    } else {
        ran_allgatherv_ring++;
        cr_coll_allgatherv_ring(s, a->rbuf, a->rcounts, a->rdispls, a->rdt);
    }
}

static int allgatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, cr_cvec rcounts,
                      cr_cvec displs, cr_dtype *rdt, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    cr_dtype *sdt = NULL;
    int err = cr_coll_check_counts(rcounts, comm->remote_size, "recvcounts");
    if (err || (err = cr_coll_check_not_in_place(comm, sbuf, "sendbuf")))
        return err;
    if (sbuf != MPI_IN_PLACE &&
        ((err = cr_coll_check_count(scount, "sendcount")) || (err = cr_coll_resolve(stype, "sendtype", &sdt)) ||
         (err = cr_coll_check_buffer(sbuf, scount, sdt, "sendbuf"))))
        return err;
    for (int i = 0; sbuf != MPI_IN_PLACE && i < comm->remote_size; i++) /* (blocks may leave gaps: each alone) */
        if ((err = cr_coll_check_overlap(sbuf, scount, sdt, rbuf, cr_cvec_at(displs, (size_t)i),
                                         cr_cvec_at(rcounts, (size_t)i), rdt)))
            return err;
    if (sbuf != MPI_IN_PLACE && !comm->inter &&
        (err = check_match(bytes_of(scount, sdt), bytes_of(cr_cvec_at(rcounts, (size_t)comm->rank), rdt),
                           "this process's own block (sendcount/sendtype against recvcounts[rank]/recvtype)")))
        sbuf = MPI_IN_PLACE, sdt = NULL, scount = 0; /* (cr_coll_call.mismatch) */
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .scount = scount, .sdt = sdt, .rdt = rdt, .rcounts = rcounts,
                      .rdispls = displs,
                      .both_buffers = sbuf == rbuf && (scount > 0 || cr_coll_any_count(rcounts, comm->remote_size)),
                      .mismatch = err};
    return cr_coll_launch(comm, mode, request, build_allgatherv, &a);
}

CR_COLL_THREE_FORMS(allgatherv,
            (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, cr_cvec rcounts, cr_cvec displs,
             cr_dtype *rdt, cr_comm *comm),
            (sbuf, scount, stype, rbuf, rcounts, displs, rdt, comm))

/* ----------------------------------------------------------------- alltoall, v, w */

static void alltoall_peer(const cr_coll_call *a, int peer, cr_coll_block *b)
{
    b->sbuf = a->sbuf == MPI_IN_PLACE ? NULL : cr_coll_at(a->sbuf, (MPI_Count)peer * a->scount, a->sdt);
    b->scount = a->scount;
    b->sdt = a->sdt;
    b->rbuf = cr_coll_at(a->rbuf, (MPI_Count)peer * a->rcount, a->rdt);
    b->rcount = a->rcount;
    b->rdt = a->rdt;
}

static void alltoallv_peer(const cr_coll_call *a, int peer, cr_coll_block *b)
{
    size_t i = (size_t)peer;
    if (a->sbuf != MPI_IN_PLACE) {
        b->sbuf = cr_coll_at(a->sbuf, cr_cvec_at(a->sdispls, i), a->sdt);
        b->scount = cr_cvec_at(a->scounts, i);
        b->sdt = a->sdt;
    }
    b->rbuf = cr_coll_at(a->rbuf, cr_cvec_at(a->rdispls, i), a->rdt);
    b->rcount = cr_cvec_at(a->rcounts, i);
    b->rdt = a->rdt;
}

/* Alltoallw: displacements in bytes, a type per process. */
static void alltoallw_peer(const cr_coll_call *a, int peer, cr_coll_block *b)
{
    size_t i = (size_t)peer;
    if (a->sbuf != MPI_IN_PLACE) {
        b->sbuf = (const char *)a->sbuf + cr_cvec_at(a->sdispls, i);
        b->scount = cr_cvec_at(a->scounts, i);
        b->sdt = a->sdts[i];
    }
    b->rbuf = (char *)a->rbuf + cr_cvec_at(a->rdispls, i);
    b->rcount = cr_cvec_at(a->rcounts, i);
    b->rdt = a->rdts[i];
}

static void build_alltoall(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    bool node_wanted = node_ok && (alltoall_alg == 0 || alltoall_alg == 2) && s->size > 1;
    if (s->comm->inter) {
        cr_coll_inter_alltoall(s, a, alltoall_peer);
    } else if (node_wanted && cr_coll_node_flags_usable(s->comm, s->size, bytes_of(a->rcount, a->rdt))) {
        bool in_place = a->sbuf == MPI_IN_PLACE; /* (or a block that did not match: a->mismatch) */
        ran_alltoall_node++;
        cr_coll_node_flags_alltoall(s, in_place ? a->rbuf : a->sbuf, in_place ? a->rcount : a->scount,
                                    in_place ? a->rdt : a->sdt, a->rbuf, a->rcount, a->rdt);
    } else if (node_wanted && cr_coll_node_large_usable(s->comm, NULL, NULL)) {
        cr_coll_block own;
        alltoall_peer(a, s->rank, &own);
        ran_alltoall_node++;
        cr_coll_node_large_exchange_own(s, CR_NODE_ALLTOALL, a, 0, a->sbuf != MPI_IN_PLACE, own.sbuf, own.scount,
                                        own.sdt, own.rbuf, own.rcount, own.rdt);
    } else if (alltoall_alg == 3 || (alltoall_alg != 1 && s->size > CR_COLL_ALLTOALL_WINDOW + 1 &&
                                      (uint64_t)a->rcount * (uint64_t)a->rdt->size <= (uint64_t)alltoall_small)) {
        ran_alltoall_bruck++;
        cr_coll_alltoall_bruck(s, a);
    } else {
        ran_alltoall_pairwise++;
        cr_coll_alltoall_pairwise(s, a, alltoall_peer);
    }
}

/* Alltoallv and alltoallw: staged through the node's blocks, blocking or nonblocking (not
 * persistent: node_ok), by pairs otherwise. No size decides: no process knows the others'
 * block sizes, and staging leads from the smallest blocks on (doc/performance.md). */
static void build_alltoall_vw(cr_sched *s, const cr_coll_call *a, bool node_ok, cr_coll_peer_fn *peer, int64_t alg,
                              uint64_t *ran_node, uint64_t *ran_pairwise)
{
    if (s->comm->inter) {
        cr_coll_inter_alltoall(s, a, peer);
    } else if (node_ok && alg != 1 && s->size > 1 && cr_coll_node_large_usable(s->comm, NULL, NULL)) {
        ++*ran_node;
        cr_coll_node_large_alltoallv(s, a, peer);
    } else {
        ++*ran_pairwise;
        cr_coll_alltoall_pairwise(s, a, peer);
    }
}

static void build_alltoallv(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    build_alltoall_vw(s, a, node_ok, alltoallv_peer, alltoallv_alg, &ran_alltoallv_node, &ran_alltoallv_pairwise);
}

static void build_alltoallw(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    build_alltoall_vw(s, a, node_ok, alltoallw_peer, alltoallw_alg, &ran_alltoallw_node, &ran_alltoallw_pairwise);
}

static int alltoall(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    cr_dtype *rdt, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    cr_dtype *sdt = NULL;
    int err = cr_coll_check_not_in_place(comm, sbuf, "sendbuf");
    if (err)
        return err;
    if (sbuf != MPI_IN_PLACE &&
        ((err = cr_coll_check_count(scount, "sendcount")) || (err = cr_coll_resolve(stype, "sendtype", &sdt)) ||
         (err = cr_coll_check_buffer(sbuf, scount, sdt, "sendbuf"))))
        return err;
    if (sbuf != MPI_IN_PLACE && !comm->inter && /* across groups, each side's blocks match the other side's */
        (err = check_match(bytes_of(scount, sdt), bytes_of(rcount, rdt),
                           "each block (sendcount/sendtype against recvcount/recvtype)")))
        sbuf = MPI_IN_PLACE, sdt = NULL, scount = 0; /* (cr_coll_call.mismatch) */
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount, .sdt = sdt, .rdt = rdt,
                      .both_buffers = sbuf != MPI_IN_PLACE && (scount > 0 || rcount > 0), .mismatch = err};
    return cr_coll_launch(comm, mode, request, build_alltoall, &a);
}

CR_COLL_THREE_FORMS(alltoall,
            (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, cr_dtype *rdt,
             cr_comm *comm),
            (sbuf, scount, stype, rbuf, rcount, rdt, comm))

static int alltoallv(const void *sbuf, cr_cvec scounts, cr_cvec sdispls, MPI_Datatype stype, void *rbuf,
                     cr_cvec rcounts, cr_cvec rdispls, cr_dtype *rdt, cr_comm *comm, cr_run_mode mode,
                     MPI_Request *request)
{
    cr_dtype *sdt = NULL;
    int err = cr_coll_check_counts(rcounts, comm->remote_size, "recvcounts");
    if (err || (err = cr_coll_check_not_in_place(comm, sbuf, "sendbuf")))
        return err;
    if (sbuf != MPI_IN_PLACE &&
        ((err = cr_coll_check_counts(scounts, comm->remote_size, "sendcounts")) || (err = cr_coll_resolve(stype, "sendtype", &sdt))))
        return err;
    bool moves = sbuf == rbuf && (cr_coll_any_count(scounts, comm->remote_size) ||
                                  cr_coll_any_count(rcounts, comm->remote_size));
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .sdt = sdt, .rdt = rdt, .scounts = scounts, .sdispls = sdispls,
                      .rcounts = rcounts, .rdispls = rdispls, .both_buffers = moves};
    return cr_coll_launch(comm, mode, request, build_alltoallv, &a);
}

CR_COLL_THREE_FORMS(alltoallv,
            (const void *sbuf, cr_cvec scounts, cr_cvec sdispls, MPI_Datatype stype, void *rbuf, cr_cvec rcounts,
             cr_cvec rdispls, cr_dtype *rdt, cr_comm *comm),
            (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rdt, comm))

/* Resolves a type per process (sendtypes[i] or recvtypes[i]) into `out`, committed as
 * cr_coll_resolve requires. */
int cr_coll_resolve_types(const MPI_Datatype *types, int n, const char *arg, cr_dtype **out)
{
    return cr_dtype_check_array(types, n, arg, true, out);
}

static int alltoallw(const void *sbuf, cr_cvec scounts, cr_cvec sdispls, const MPI_Datatype stypes[], void *rbuf,
                     cr_cvec rcounts, cr_cvec rdispls, const MPI_Datatype rtypes[], cr_comm *comm, cr_run_mode mode,
                     MPI_Request *request)
{
    int n = comm->remote_size;
    cr_dtype **types = calloc(2 * (size_t)n, sizeof *types);
    if (!types)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d datatypes", 2 * n);
    int err = cr_coll_check_not_in_place(comm, sbuf, "sendbuf");
    if (!err)
        err = cr_coll_check_counts(rcounts, n, "recvcounts");
    if (!err)
        err = cr_coll_resolve_types(rtypes, n, "recvtypes", types + n);
    if (!err && sbuf != MPI_IN_PLACE && !(err = cr_coll_check_counts(scounts, n, "sendcounts")))
        err = cr_coll_resolve_types(stypes, n, "sendtypes", types);
    if (!err) {
        bool moves = sbuf == rbuf && (cr_coll_any_count(scounts, n) || cr_coll_any_count(rcounts, n));
        cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sdispls = sdispls, .rcounts = rcounts,
                          .rdispls = rdispls, .sdts = types, .rdts = types + n, .both_buffers = moves};
        err = cr_coll_launch(comm, mode, request, build_alltoallw, &a); /* the steps keep what they need */
    }
    free(types);
    return err;
}

CR_COLL_THREE_FORMS(alltoallw,
            (const void *sbuf, cr_cvec scounts, cr_cvec sdispls, const MPI_Datatype stypes[], void *rbuf,
             cr_cvec rcounts, cr_cvec rdispls, const MPI_Datatype rtypes[], cr_comm *comm),
            (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm))

/* ----------------------------------------------------------------- reduce_scatter */

/* The whole vector is reduced everywhere (the selected allreduce, on a scratch copy), then each
 * process keeps its block: the reduction order is the allreduce's, so operations that do not
 * commute are served. Blocks of equal size (reduce_scatter_block) pass rcounts with no array. */
static void build_reduce_scatter(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    if (s->comm->inter) {
        cr_coll_inter_reduce_scatter(s, a);
        return;
    }
    int p = s->size;
    bool block = a->rcounts.p == NULL;
    MPI_Count total = 0, before = 0;
    for (int i = 0; i < p; i++) {
        MPI_Count c = block ? a->rcount : cr_cvec_at(a->rcounts, (size_t)i);
        if (i < s->rank)
            before += c;
        total += c;
    }
    MPI_Count mine = block ? a->rcount : cr_cvec_at(a->rcounts, (size_t)s->rank);
    if (total == 0)
        return;
    if (block && node_ok && reduce_scatter_alg != 1 && p > 1 &&
        cr_coll_node_flags_usable(s->comm, p, bytes_of(a->rcount, a->rdt))) {
        ran_reduce_scatter_block_node++;
        cr_coll_node_flags_reduce_scatter_block(s, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, a->rbuf, a->rcount,
                                                a->rdt, a->op);
        return;
    }
    if (block && node_ok && reduce_scatter_alg != 1 && p > 1 &&
        cr_coll_node_large_scan_usable(s->comm, a->rdt, a->op, true)) {
        ran_reduce_scatter_block_node++;
        cr_coll_node_large_combine(s, CR_NODE_REDUCE_SCATTER, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, 0, NULL,
                                   a->rbuf, a->rcount, a->rdt, 0, a->op);
        return;
    }
    if (block && p > 1)
        ran_reduce_scatter_block_allreduce++;
    char *all = cr_sched_tmp(s, total, a->rdt);
    if (!all)
        return;
    cr_sched_copy(s, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, total, a->rdt, all, total, a->rdt);
    cr_coll_allreduce_select(s, all, total, a->rdt, a->op, node_ok);
    cr_sched_fence(s);
    cr_sched_copy(s, cr_coll_at(all, before, a->rdt), mine, a->rdt, a->rbuf, mine, a->rdt);
}

static int reduce_scatter_any(const void *sbuf, void *rbuf, cr_cvec rcounts, MPI_Count rcount, cr_dtype *dt,
                              cr_op *op, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    int err = cr_op_check(op, dt);
    if (!err)
        err = cr_coll_check_not_in_place(comm, sbuf, "sendbuf");
    if (!err && rcounts.p)
        err = cr_coll_check_counts(rcounts, comm->size, "recvcounts");
    if (err)
        return err;
    bool moves = sbuf == rbuf && (rcounts.p ? cr_coll_any_count(rcounts, comm->size) : rcount > 0);
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .rcount = rcount, .rdt = dt, .op = op, .rcounts = rcounts,
                      .both_buffers = moves};
    return cr_coll_launch(comm, mode, request, build_reduce_scatter, &a);
}

static int reduce_scatter(const void *sbuf, void *rbuf, cr_cvec rcounts, cr_dtype *dt, cr_op *op, cr_comm *comm,
                          cr_run_mode mode, MPI_Request *request)
{
    return reduce_scatter_any(sbuf, rbuf, rcounts, 0, dt, op, comm, mode, request);
}

CR_COLL_THREE_FORMS(reduce_scatter, (const void *sbuf, void *rbuf, cr_cvec rcounts, cr_dtype *dt, cr_op *op, cr_comm *comm),
            (sbuf, rbuf, rcounts, dt, op, comm))

static int reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, cr_dtype *dt, cr_op *op,
                                cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    return reduce_scatter_any(sbuf, rbuf, cr_cvec_of(NULL, 0), rcount, dt, op, comm, mode, request);
}

CR_COLL_THREE_FORMS(reduce_scatter_block,
            (const void *sbuf, void *rbuf, MPI_Count rcount, cr_dtype *dt, cr_op *op, cr_comm *comm),
            (sbuf, rbuf, rcount, dt, op, comm))

/* ----------------------------------------------------------------- scan, exscan */

static void build_scan_any(cr_sched *s, const cr_coll_call *a, bool node_ok, bool exclusive)
{
    if (a->rcount == 0)
        return;
    uint64_t bytes = (uint64_t)a->rcount * (uint64_t)a->rdt->size;
    if (node_ok && scan_alg != 1 && s->size > 1 && cr_coll_node_ring_usable(s->comm, bytes)) {
        ran_scan_node++;
        cr_coll_node_scan(s, a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, exclusive);
        return;
    }
    if (node_ok && scan_alg != 1 && s->size > 1 && cr_coll_node_large_scan_usable(s->comm, a->rdt, a->op, false)) {
        const void *sbuf = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
        ran_scan_node++;
        cr_coll_node_large_combine(s, exclusive ? CR_NODE_EXSCAN : CR_NODE_SCAN, sbuf, 0, NULL, a->rbuf, a->rcount,
                                   a->rdt, 0, a->op);
        return;
    }
    if (s->size > 1)
        ran_scan_recursive_doubling++;
    cr_coll_scan_recursive_doubling(s, a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, exclusive);
}

static void build_scan(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    build_scan_any(s, a, node_ok, false);
}

static void build_exscan(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    build_scan_any(s, a, node_ok, true);
}

static int scan_any(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm,
                    cr_coll_build_fn *build, cr_run_mode mode, MPI_Request *request)
{
    if (comm->inter)
        return cr_err(MPI_ERR_COMM, "comm is an intercommunicator: MPI_Scan and MPI_Exscan need an intracommunicator");
    int err = cr_op_check(op, dt);
    if (!err && sbuf != MPI_IN_PLACE)
        err = cr_coll_check_buffer(sbuf, count, dt, "sendbuf");
    if (err)
        return err;
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rdt = dt, .op = op, .both_buffers = count > 0};
    return cr_coll_launch(comm, mode, request, build, &a);
}

static int scan(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm,
                cr_run_mode mode, MPI_Request *request)
{
    return scan_any(sbuf, rbuf, count, dt, op, comm, build_scan, mode, request);
}

static int exscan(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm,
                  cr_run_mode mode, MPI_Request *request)
{
    return scan_any(sbuf, rbuf, count, dt, op, comm, build_exscan, mode, request);
}

CR_COLL_THREE_FORMS(scan, (const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm),
            (sbuf, rbuf, count, dt, op, comm))
CR_COLL_THREE_FORMS(exscan, (const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm),
            (sbuf, rbuf, count, dt, op, comm))
