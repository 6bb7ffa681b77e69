/* reduce_rabenseifner.c: reduction of large vectors as a reduce-scatter by recursive halving
 * (shared with allreduce_rabenseifner.c) followed by a binomial gather of the reduced blocks to
 * the root (Rabenseifner).
 *
 * Cost: 2 log2(p) alpha + 2 n beta (p-1)/p + n gamma (p-1)/p, against log2(p) (n beta + n gamma)
 * for the binomial tree: the choice for large n with a commutative operation. */
#include "coll.h"

void cr_coll_reduce_rabenseifner(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                                 int root)
{
    int p = s->size, rank = s->rank, pof2 = cr_coll_pof2(p), rem = p - pof2;
    void *acc = rank == root ? rbuf : cr_sched_tmp(s, count, dt);
    void *tmp = cr_sched_tmp(s, count, dt);
    if (!acc || !tmp)
        return;
    if (sbuf != MPI_IN_PLACE)
        cr_sched_copy(s, sbuf, count, dt, acc, count, dt);
    cr_coll_fold(s, acc, tmp, count, dt, op, rem);
    /* The process that gathers the result: the root, or its fold partner when it sat out. */
    int holder = root < 2 * rem && root % 2 == 0 ? root + 1 : root;
    int newroot = cr_coll_newrank(holder, rem), newrank = cr_coll_newrank(rank, rem);
    if (newrank >= 0) {
        int lo, hi;
        cr_coll_reduce_scatter_halving(s, acc, tmp, count, dt, op, newrank, pof2, rem, &lo, &hi);
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int partner = cr_coll_oldrank(newrank ^ mask, rem);
            int width = hi - lo, plo = newrank < (newrank ^ mask) ? hi : lo - width, phi = plo + width;
            MPI_Count start = cr_coll_block_start(count, pof2, lo), n = cr_coll_block_start(count, pof2, hi) - start;
            cr_sched_fence(s);
            if ((newrank & mask) != (newroot & mask)) {
                cr_sched_send(s, cr_coll_at(acc, start, dt), n, dt, partner);
                break;
            }
            MPI_Count pstart = cr_coll_block_start(count, pof2, plo), pn = cr_coll_block_start(count, pof2, phi) - pstart;
            cr_sched_recv(s, cr_coll_at(acc, pstart, dt), pn, dt, partner);
            lo = CR_MIN(lo, plo);
            hi = CR_MAX(hi, phi);
        }
    }
    cr_sched_fence(s);
    if (holder != root) {
        if (rank == holder)
            cr_sched_send(s, acc, count, dt, root);
        else if (rank == root)
            cr_sched_recv(s, rbuf, count, dt, holder);
    }
}
