/* allreduce_rabenseifner.c: allreduce of large vectors as a reduce-scatter by recursive
 * halving followed by an allgather by recursive doubling (Rabenseifner).
 *
 * After folding p to a power of two, the vector is cut into pof2 blocks. Halving: in step j a
 * process sends the half of its current range it gives up and reduces the half it keeps, so
 * each ends with one fully reduced block. Doubling then gathers the blocks back.
 * Cost: 2 log2(p) alpha + 2 n beta (p-1)/p + n gamma (p-1)/p, against log2(p) (n beta + n gamma)
 * for recursive doubling: the choice for large n. Needs a commutative operation and at least
 * pof2 elements. */
#include "coll.h"

static inline MPI_Count span(MPI_Count count, int blocks, int lo, int hi)
{
    return cr_coll_block_start(count, blocks, hi) - cr_coll_block_start(count, blocks, lo);
}

void cr_coll_reduce_scatter_halving(cr_sched *s, void *rbuf, void *tmp, MPI_Count count, cr_dtype *dt, cr_op *op,
                                    int newrank, int pof2, int rem, int *lo, int *hi)
{
    int send_idx = 0, recv_idx = 0, last_idx = pof2;
    for (int mask = 1; mask < pof2; mask <<= 1) {
        int partner = cr_coll_oldrank(newrank ^ mask, rem);
        int half = pof2 / (mask * 2);
        int send_lo, send_hi, recv_lo, recv_hi;
        if (newrank < (newrank ^ mask)) { /* keep the lower half */
            send_idx = recv_idx + half;
            send_lo = send_idx, send_hi = last_idx, recv_lo = recv_idx, recv_hi = send_idx;
        } else {
            recv_idx = send_idx + half;
            send_lo = send_idx, send_hi = recv_idx, recv_lo = recv_idx, recv_hi = last_idx;
        }
        MPI_Count rstart = cr_coll_block_start(count, pof2, recv_lo), rn = span(count, pof2, recv_lo, recv_hi);
        cr_sched_fence(s);
        cr_sched_recv(s, cr_coll_at(tmp, rstart, dt), rn, dt, partner);
        cr_sched_send(s, cr_coll_at(rbuf, cr_coll_block_start(count, pof2, send_lo), dt),
                      span(count, pof2, send_lo, send_hi), dt, partner);
        cr_sched_fence(s);
        cr_sched_reduce(s, cr_coll_at(tmp, rstart, dt), cr_coll_at(rbuf, rstart, dt), rn, dt, op);
        send_idx = recv_idx;
        last_idx = recv_hi;
    }
    *lo = recv_idx;
    *hi = last_idx;
}

void cr_coll_allreduce_rabenseifner(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    int p = s->size, pof2 = cr_coll_pof2(p), rem = p - pof2;
    void *tmp = cr_sched_tmp(s, count, dt);
    if (!tmp)
        return;
    cr_coll_fold(s, rbuf, tmp, count, dt, op, rem);
    int newrank = cr_coll_newrank(s->rank, rem);
    if (newrank >= 0) {
        int lo, hi;
        cr_coll_reduce_scatter_halving(s, rbuf, tmp, count, dt, op, newrank, pof2, rem, &lo, &hi);
        /* Recursive doubling over the blocks, in the reverse order of the halving. */
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int partner = cr_coll_oldrank(newrank ^ mask, rem);
            int width = hi - lo, plo, phi;
            if (newrank < (newrank ^ mask))
                plo = hi, phi = hi + width;
            else
                plo = lo - width, phi = lo;
            cr_sched_fence(s);
            cr_sched_recv(s, cr_coll_at(rbuf, cr_coll_block_start(count, pof2, plo), dt), span(count, pof2, plo, phi),
                          dt, partner);
            cr_sched_send(s, cr_coll_at(rbuf, cr_coll_block_start(count, pof2, lo), dt), span(count, pof2, lo, hi), dt,
                          partner);
            lo = CR_MIN(lo, plo);
            hi = CR_MAX(hi, phi);
        }
    }
    cr_coll_unfold(s, rbuf, count, dt, rem);
}
