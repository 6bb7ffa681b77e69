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
#include "coll/op.h"
#include "coll/sched.h"
#include "req/request.h"
#include "dt/dtype.h"

/* Scratch memory kept between calls (see util.c); give it back with cr_coll_scratch_release. */
void *cr_coll_scratch(size_t bytes);
void cr_coll_scratch_release(void *p);
void cr_coll_scratch_clear(void);
/* A temporary buffer for `count` elements of dt, laid out as a user buffer would be; the
 * pointer to pass to data paths is returned, the scratch buffer through `*alloc` (release it
 * with cr_coll_scratch_release). */
void *cr_coll_tmp(MPI_Count count, const cr_dtype *dt, void **alloc);
/* Copies typed data between buffers of the same type signature. */
void cr_coll_copy(const void *src, MPI_Count scount, const cr_dtype *sdt, void *dst, MPI_Count dcount,
                  const cr_dtype *ddt);

static inline char *cr_coll_at(const void *buf, MPI_Count index, const cr_dtype *dt)
{
    return (char *)buf + index * dt->extent;
}

/* The selected algorithm, run blocking, for internal users (the communicator layer agrees on
 * context ids and on split colors with these). Both work in place. */
int cr_coll_allreduce_auto(void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm);
int cr_coll_allgather_auto(void *rbuf, MPI_Count rcount, cr_dtype *rdt, cr_comm *comm);

/* Algorithms: each appends its steps to a schedule (sched.h), which the blocking,
 * nonblocking and persistent forms of the call then run. They use the schedule's rank, size
 * and tag; a failed scratch allocation fails the schedule. */

/* The shared-memory component (node.c): usable for `comm` with this much data per process?
 * Only blocking calls use it: its counters assume one collective at a time per process. */
bool cr_coll_node_usable(cr_comm *comm, uint64_t bytes_per_process);
void cr_coll_node_barrier(cr_sched *s);
void cr_coll_node_reduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root);
/* In place: this process's data is in rbuf. */
void cr_coll_node_allreduce(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op);

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
