/* coll.h: collective operations: the algorithm catalogue (one file per algorithm, each with
 * its cost model in its header comment), the helpers they share, and selection (select.c).
 *
 * Every algorithm is a schedule (sched.h) of point-to-point messages on the communicator's
 * collective context (comm->ctx + 1), so collective traffic can never match user messages.
 * Each collective call takes the next tag of the communicator's collective sequence: all
 * members call collectives in the same order, so they agree on it.
 *
 * Conventions: `p` processes, `n` bytes per process, alpha the cost of one message, beta the
 * cost per byte, gamma the cost per byte of a reduction. */
#ifndef CR_COLL_H
#define CR_COLL_H

#include "comm/comm.h"
#include "core/types.h"
#include "coll/op.h"
#include "coll/sched.h"
#include "req/request.h"
#include "dt/dtype.h"

#include <stdatomic.h>

/* Scratch memory kept between calls (see util.c); give it back with cr_coll_scratch_release. */
void *cr_coll_scratch(size_t bytes);
void cr_coll_scratch_release(void *p);
void cr_coll_scratch_clear(void);
/* A temporary buffer for `count` elements of dt, laid out as a user buffer would be; the
 * pointer to pass to data paths is returned, the scratch buffer through `*alloc` (release it
 * with cr_coll_scratch_release). */
void *cr_coll_tmp(MPI_Count count, const cr_dtype *dt, void **alloc);
/* Its size: to the end of the last element's data, and at least the last element's whole
 * extent (reductions on the pair types read whole C structs, tail padding included). */
size_t cr_coll_tmp_bytes(MPI_Count count, const cr_dtype *dt);

static inline char *cr_coll_at(const void *buf, MPI_Count index, const cr_dtype *dt)
{
    return (char *)buf + index * dt->extent;
}

/* The selected algorithm, run blocking, for internal users (the communicator layer agrees on
 * context ids and on split colors with these). Both work in place. */
int cr_coll_allreduce_auto(void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm);
int cr_coll_allgather_auto(void *rbuf, MPI_Count rcount, cr_dtype *rdt, cr_comm *comm);

/* ----------------------------------------------------------------- the calls (select.c) */

/* How a collective call runs its schedule: the three forms of every collective. */
typedef enum { CR_RUN_BLOCKING, CR_RUN_NONBLOCKING, CR_RUN_PERSISTENT } cr_run_mode;

/* The arguments of one collective call, as its builder needs them (the fields it uses). */
typedef struct cr_coll_call {
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    cr_dtype *sdt, *rdt;
    cr_op *op;
    int root;
    cr_cvec scounts, sdispls, rcounts, rdispls; /* v and w variants */
    cr_dtype *const *sdts, *const *rdts;        /* w variants: a type per process (or per neighbour) */
    bool per_neighbour;                         /* sdts/rdts hold nsdts/nrdts types, not one per process */
    int nsdts, nrdts;
    bool both_buffers; /* sendbuf and recvbuf both matter here: they must not be the same buffer */
    /* This process's own block does not match itself (its send and receive sizes differ): the
     * MPI_ERR_TRUNCATE to return. The call still runs, in place and with empty sends (see
     * sched.c), so that the other processes finish and hear of it instead of waiting for ever. */
    int mismatch;
    bool mismatch_own_only; /* the mismatched block is one this process keeps (a root's own) */
} cr_coll_call;

/* The blocking, nonblocking (MPI_I<name>) and persistent (MPI_<name>_init) implementations of a
 * collective, from one function `name(PARAMS..., cr_run_mode, MPI_Request *)`. */
#define CR_UNPAREN(...) __VA_ARGS__
#define CR_COLL_THREE_FORMS(name, PARAMS, ARGS)                                                    \
    int cr_mpi_##name(CR_UNPAREN PARAMS)                                                           \
    {                                                                                              \
        return name(CR_UNPAREN ARGS, CR_RUN_BLOCKING, NULL);                                       \
    }                                                                                              \
    int cr_mpi_i##name(CR_UNPAREN PARAMS, MPI_Request *request)                                    \
    {                                                                                              \
        return name(CR_UNPAREN ARGS, CR_RUN_NONBLOCKING, request);                                 \
    }                                                                                              \
    int cr_mpi_##name##_init(CR_UNPAREN PARAMS, cr_info *info, MPI_Request *request)               \
    {                                                                                              \
        (void)info;                                                                                \
        return name(CR_UNPAREN ARGS, CR_RUN_PERSISTENT, request);                                  \
    }

/* Appends the call's steps; `node_ok` allows the node component: blocking and nonblocking
 * calls, which every member starts in the same order, not persistent ones (their starts may
 * come in any order: MPI-4.0 6.13). */
typedef void cr_coll_build_fn(cr_sched *s, const cr_coll_call *a, bool node_ok);
/* Builds the call's schedule and runs it (blocking), returns it as a request (nonblocking) or
 * keeps it in an inactive persistent request. */
int cr_coll_launch(cr_comm *comm, cr_run_mode mode, MPI_Request *request, cr_coll_build_fn *build,
                   const cr_coll_call *a);
/* The selected allreduce, in place (rbuf holds this process's contribution). */
void cr_coll_allreduce_select(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, bool node_ok);
/* Argument checks the calls share, each naming `arg` in its message. */
int cr_coll_check_buffer(const void *buf, MPI_Count count, const cr_dtype *dt, const char *arg);
/* MPI_ERR_BUFFER if the send data (scount of sdt at sbuf) shares bytes with recvbuf's elements
 * rfirst .. rfirst + rcount - 1 of rdt (MPI forbids aliased arguments; MPI_IN_PLACE is the way to
 * reuse a buffer); told only for runs of bytes (cr_dtype_is_contig_n), since spans of types with
 * gaps may interleave without sharing a byte. A process that finds it returns before it moves
 * anything, as for sendbuf == recvbuf (cr_coll_launch); one whose arguments do not overlap goes
 * on. */
int cr_coll_check_overlap(const void *sbuf, MPI_Count scount, const cr_dtype *sdt, const void *rbuf, MPI_Count rfirst,
                          MPI_Count rcount, const cr_dtype *rdt);
int cr_coll_check_count(MPI_Count count, const char *arg);
int cr_coll_resolve(MPI_Datatype h, const char *arg, cr_dtype **dt);
/* Every count of `counts` (n of them) is not negative; `types` (n of them) resolve. */
int cr_coll_check_counts(cr_cvec counts, int n, const char *arg);
int cr_coll_resolve_types(const MPI_Datatype *types, int n, const char *arg, cr_dtype **out);
/* Whether any of the n counts is positive: aliased send and receive buffers are an error only
 * for a process that moves data (MPICH and mpi4py pass one buffer twice with zero counts). */
bool cr_coll_any_count(cr_cvec counts, int n);

/* Where this process stands in a collective with a root: at the root (on an
 * intercommunicator, root == MPI_ROOT), and whether it sends to or receives from the root
 * (everyone on an intracommunicator; on an intercommunicator, the other group's processes,
 * which pass the root's rank, while the rest of the root's group passes MPI_PROC_NULL). */
static inline bool cr_coll_at_root(const cr_comm *comm, int root)
{
    return comm->inter ? root == MPI_ROOT : comm->rank == root;
}
static inline bool cr_coll_takes_part(const cr_comm *comm, int root)
{
    return comm->inter ? root >= 0 : true;
}
/* MPI_ERR_BUFFER when `buf` is MPI_IN_PLACE on an intercommunicator, where no collective
 * allows it. */
int cr_coll_check_not_in_place(const cr_comm *comm, const void *buf, const char *arg);

/* Intercommunicator collectives (inter.c): the builders of each call on intercommunicators. */
void cr_coll_inter_barrier(cr_sched *s);
void cr_coll_inter_bcast(cr_sched *s, const cr_coll_call *a);
void cr_coll_inter_reduce(cr_sched *s, const cr_coll_call *a);
void cr_coll_inter_allreduce(cr_sched *s, const cr_coll_call *a);
void cr_coll_inter_allgather(cr_sched *s, const cr_coll_call *a);
void cr_coll_inter_reduce_scatter(cr_sched *s, const cr_coll_call *a);
/* Gather and scatter too: without count vectors, every block has rcount (scount) elements. */
void cr_coll_inter_gatherv(cr_sched *s, const cr_coll_call *a);
void cr_coll_inter_scatterv(cr_sched *s, const cr_coll_call *a);
void cr_coll_inter_allgatherv(cr_sched *s, const cr_coll_call *a);

/* Algorithms: each appends its steps to a schedule (sched.h), which the blocking,
 * nonblocking and persistent forms of the call then run. They use the schedule's rank, size
 * and tag; a failed scratch allocation fails the schedule. */

/* The shared-memory component (node.c): usable for `comm` with this much data per process?
 * Its counters assume one collective at a time per process: a node collective takes its turn
 * (node.h) before it touches them, so nonblocking ones run one after another in call order. */
bool cr_coll_node_usable(cr_comm *comm, uint64_t bytes_per_process);
/* The node component serves MPI_COMM_WORLD of a job on one node, and any other intracommunicator
 * of such a job from its third blocking collective on (node.h): called by every blocking
 * collective before its schedule is built (it may run a setup exchange on comm). */
int cr_coll_node_prepare(cr_comm *comm);
/* Ends the turn a completing schedule holds (or awaited) in its communicator's node component
 * (node.h), so that the next node collective started there may run. */
void cr_coll_node_end_turn(cr_sched *s);
/* Unmaps a communicator's own areas (when it is released). */
void cr_coll_node_release(cr_comm *comm);

/* Collectives on communicators that span nodes, in two tiers (tiers.c): the processes of each
 * node, then one leader per node. Usable on a whole intracommunicator (not a subset) whose
 * nodes are several and not all of one process, for a commutative operation (op NULL: none). */
typedef struct cr_coll_tiers cr_coll_tiers;
bool cr_coll_tiers_usable(cr_sched *s, const cr_op *op);
void cr_coll_tiers_release(cr_comm *comm);
/* In place, as the other allreduce algorithms. */
void cr_coll_allreduce_tiers(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op);
/* The first process to get here runs `init` on a zeroed area; the others wait until it has. */
void cr_coll_node_once(_Atomic uint32_t *ready, void (*init)(void *), void *arg);
/* Whether a counter has reached `at_least`, across its 32-bit wrap-around: the two are never
 * more than 2^31 apart. */
static inline bool cr_coll_seq_reached(_Atomic uint32_t *word, uint32_t at_least)
{
    return (int32_t)(atomic_load_explicit(word, memory_order_acquire) - at_least) >= 0;
}
void cr_coll_node_barrier(cr_sched *s);
void cr_coll_node_reduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root);
/* In place: this process's data is in rbuf. */
void cr_coll_node_allreduce(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op);
/* The allreduce's flag slots serve small allgathers, alltoalls and reduce_scatter_blocks too,
 * when every process has a core (not the transport's sleep mode) and each process's slot holds
 * what it writes (`blocks` of `block_bytes`: its block, its whole send buffer, its whole
 * vector): one line each way
 * between two processes and no shared counter. Allgather: this process's block is in rbuf
 * already. Alltoall and reduce_scatter_block: sbuf is rbuf where the call passed MPI_IN_PLACE. */
bool cr_coll_node_flags_usable(cr_comm *comm, int blocks, uint64_t block_bytes);
void cr_coll_node_flags_allgather(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt);
void cr_coll_node_flags_alltoall(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                                 MPI_Count rcount, cr_dtype *rdt);
void cr_coll_node_flags_reduce_scatter_block(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt,
                                             cr_op *op);
/* Reduce, scan and exscan of at most CR_SHM_COLL_SLOT bytes per process (sbuf MPI_IN_PLACE: the
 * data is in rbuf): a scan waits only for the processes before this one, a reduce's non-root
 * for nobody. */
bool cr_coll_node_ring_usable(cr_comm *comm, uint64_t bytes_per_process);
/* The same ring for small gathers and scatters: a scatter's root writes every block and leaves,
 * the others read once it has; a gather's others write and leave, its root reads. (A bcast
 * through it measured slower than the binomial tree of eager messages: every process polls the
 * root's one line.) */
void cr_coll_node_ring_gather(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                              MPI_Count rcount, cr_dtype *rdt, int root);
void cr_coll_node_ring_scatter(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                               MPI_Count rcount, cr_dtype *rdt, int root);
void cr_coll_node_scan(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                       bool exclusive);

/* Large messages through staging blocks in shared memory (node_large.c), taking turns as above:
 * usable for `comm` (and, for reductions, this type and operation; op NULL for bcast)? */
bool cr_coll_node_large_usable(cr_comm *comm, const cr_dtype *dt, const cr_op *op);
void cr_coll_node_large_bcast(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int root);
/* root_alone: the root combines alone and the others leave once their data is staged. */
void cr_coll_node_large_reduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                               int root, bool root_alone);
void cr_coll_node_large_allreduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op);
/* Alltoall, allgather (in place: this process's block already in rbuf), gather and scatter
 * through the same blocks; each process's own block is the caller's to copy. */
enum {
    CR_NODE_ALLTOALL, CR_NODE_ALLGATHER, CR_NODE_GATHER, CR_NODE_SCATTER,
    CR_NODE_SCAN, CR_NODE_EXSCAN, CR_NODE_REDUCE_SCATTER /* these three combine (cr_coll_node_large_combine) */
};
void cr_coll_node_large_exchange(cr_sched *s, int kind, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                                 MPI_Count rcount, cr_dtype *rdt, int root);
/* The same, with this process's own block copied directly from own_src when `own` (own_src may
 * be MPI_BOTTOM):
 * before the exchange in a blocking call (while the others stage), after it in a nonblocking
 * one (a local copy that nobody waits for is better left to a later MPI call than done in the
 * start, so that the program computes meanwhile). */
void cr_coll_node_large_exchange_own(cr_sched *s, int kind, const cr_coll_call *a, int root, bool own,
                                     const void *own_src, MPI_Count own_scount, cr_dtype *own_sdt, void *own_dst, MPI_Count own_dcount,
                                     cr_dtype *own_ddt);
/* Scan and exscan (count elements at sbuf, results at rbuf) and reduce_scatter_block (p blocks
 * of count at sbuf, this process's at rbuf), with op; usable when the node component serves comm
 * and an element fits a window (per_process: reduce-scatter's windows of 128 KiB / p). */
bool cr_coll_node_large_scan_usable(cr_comm *comm, const cr_dtype *dt, const cr_op *op, bool per_process);
void cr_coll_node_large_combine(cr_sched *s, int kind, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                                MPI_Count rcount, cr_dtype *rdt, int root, cr_op *op);

void cr_coll_alltoall_bruck(cr_sched *s, const cr_coll_call *a);
void cr_coll_barrier_dissemination(cr_sched *s);
void cr_coll_bcast_binomial(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int root);
void cr_coll_bcast_scatter_allgather(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int root);
void cr_coll_reduce_binomial(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                             int root);
void cr_coll_reduce_rabenseifner(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                                 int root);
/* Allreduce algorithms work in place: the caller has put this process's data in rbuf. */
void cr_coll_allreduce_recursive_doubling(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op);
void cr_coll_allreduce_rabenseifner(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op);
void cr_coll_gather_binomial(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                             MPI_Count rcount, cr_dtype *rdt, int root);
void cr_coll_scatter_binomial(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                              MPI_Count rcount, cr_dtype *rdt, int root);
/* Allgather algorithms work in place: this process's block is already at its place in rbuf. */
void cr_coll_allgather_recursive_doubling(cr_sched *s, void *rbuf, MPI_Count rcount, cr_dtype *rdt);
void cr_coll_allgather_bruck(cr_sched *s, void *rbuf, MPI_Count rcount, cr_dtype *rdt);
void cr_coll_allgather_ring(cr_sched *s, void *rbuf, MPI_Count rcount, cr_dtype *rdt);

/* Blocks of different sizes (v variants): counts and displacements (in extents of the type). */
void cr_coll_gatherv_linear(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                            cr_cvec rcounts, cr_cvec displs, cr_dtype *rdt, int root);
void cr_coll_scatterv_linear(cr_sched *s, const void *sbuf, cr_cvec scounts, cr_cvec displs, cr_dtype *sdt,
                             void *rbuf, MPI_Count rcount, cr_dtype *rdt, int root);
/* In place: this process's block is at its place in rbuf. */
void cr_coll_allgatherv_ring(cr_sched *s, void *rbuf, cr_cvec rcounts, cr_cvec displs, cr_dtype *rdt);
void cr_coll_allgatherv_direct(cr_sched *s, void *rbuf, cr_cvec rcounts, cr_cvec displs, cr_dtype *rdt);

/* All-to-all: what one call exchanges with process `peer` (alltoall, alltoallv and alltoallw
 * differ only in how they find it). */
typedef struct cr_coll_block {
    const void *sbuf;
    MPI_Count scount;
    cr_dtype *sdt;
    void *rbuf;
    MPI_Count rcount;
    cr_dtype *rdt;
} cr_coll_block;
typedef void cr_coll_peer_fn(const cr_coll_call *a, int peer, cr_coll_block *b);
/* Pairwise exchanges run this many steps at a time: at most that many pairs in flight, so the
 * memory for early messages stays bounded at any process count. */
#define CR_COLL_ALLTOALL_WINDOW 8
void cr_coll_alltoall_pairwise(cr_sched *s, const cr_coll_call *a, cr_coll_peer_fn *peer);
/* Alltoallv and alltoallw staged through the node's blocks (node_large.c), on a communicator
 * the node component serves (cr_coll_node_large_usable with no type); not persistent. */
void cr_coll_node_large_alltoallv(cr_sched *s, const cr_coll_call *a, cr_coll_peer_fn *peer);
/* Allgatherv staged through the node's blocks, this process's block in place in rbuf already;
 * false (nothing built) when its largest block is too large for the ring's counters. */
bool cr_coll_node_large_allgatherv(cr_sched *s, void *rbuf, cr_cvec rcounts, cr_cvec rdispls, cr_dtype *rdt);
void cr_coll_inter_alltoall(cr_sched *s, const cr_coll_call *a, cr_coll_peer_fn *peer);

/* Prefix reductions: rank r gets ranks 0..r (or 0..r-1 when `exclusive`) combined. */
void cr_coll_scan_recursive_doubling(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt,
                                     cr_op *op, bool exclusive);

/* Folding a process count to a power of two (recursive doubling and halving): with
 * pof2 = the largest power of two <= p and rem = p - pof2, the first 2*rem processes pair up
 * (even into odd) and the even ones sit out. */
static inline int cr_coll_pof2(int p)
{
    int v = 1;
    while (v * 2 <= p)
        v *= 2;
    return v;
}
static inline int cr_coll_newrank(int rank, int rem)
{
    return rank < 2 * rem ? (rank % 2 ? rank / 2 : -1) : rank - rem;
}
static inline int cr_coll_oldrank(int newrank, int rem)
{
    return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}
/* Binomial tree rooted at virtual rank 0: how many processes (blocks) the subtree of virtual
 * rank `vr` holds, itself included. */
static inline int cr_coll_subtree_size(int vr, int p)
{
    int sub = 1;
    while (!(vr & sub) && vr + sub < p)
        sub <<= 1;
    return vr & sub ? (sub < p - vr ? sub : p - vr) : p - vr;
}
/* Fold: each even process below 2*rem sends its `buf` to the odd one above it, which combines
 * it as the left operand (buf = theirs op buf, `tmp` holding theirs), so operations that do not
 * commute keep rank order. Unfold: the odd ones send the result back into the even ones' `buf`. */
void cr_coll_fold(cr_sched *s, void *buf, void *tmp, MPI_Count count, cr_dtype *dt, cr_op *op, int rem);
void cr_coll_unfold(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int rem);
/* Recursive halving (allreduce_rabenseifner.c, shared with reduce_rabenseifner.c): active
 * process `newrank` ends holding the reduced blocks [*lo, *hi) of `count` elements cut into
 * pof2 blocks. */
void cr_coll_reduce_scatter_halving(cr_sched *s, void *rbuf, void *tmp, MPI_Count count, cr_dtype *dt, cr_op *op,
                                    int newrank, int pof2, int rem, int *lo, int *hi);
static inline MPI_Count cr_coll_block_start(MPI_Count count, int blocks, int i)
{
    return (MPI_Count)i * (count / blocks) + CR_MIN((MPI_Count)i, count % blocks);
}

#endif
