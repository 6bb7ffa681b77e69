/* reduce_rabenseifner.c: reduction of large vectors as a reduce-scatter by recursive halving
 * (shared with allreduce_rabenseifner.c) followed by a binomial gather of the reduced blocks to
 * the root (Rabenseifner).
 *
 * Cost: 2 log2(p) alpha + 2 n beta (p-1)/p + n gamma (p-1)/p, against log2(p) (n beta + n gamma)
 * for the binomial tree: the choice for large n with a commutative operation. */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

int cr_coll_reduce_scatter_halving(cr_coll *k, void *rbuf, void *tmp, MPI_Count count, cr_dtype *dt, cr_op *op,
                                   int newrank, int pof2, int rem, int *lo, int *hi);

static inline MPI_Count block_start(MPI_Count count, int blocks, int i)
{
    return (MPI_Count)i * (count / blocks) + CR_MIN((MPI_Count)i, count % blocks);
}

int cr_coll_reduce_rabenseifner(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root,
                                cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, rank = k.rank, pof2 = cr_coll_pof2(p), rem = p - pof2, err = MPI_SUCCESS;
    void *acc_alloc = NULL, *tmp_alloc = NULL;
    void *acc = rank == root ? rbuf : cr_coll_tmp(count, dt, &acc_alloc);
    void *tmp = cr_coll_tmp(count, dt, &tmp_alloc);
    if (!acc || !tmp) {
        err = cr_err(MPI_ERR_NO_MEM, "out of memory for a reduction of %lld elements", (long long)count);
        goto out;
    }
    if (sbuf != MPI_IN_PLACE)
        cr_coll_copy(sbuf, count, dt, acc, count, dt);
    if ((err = cr_coll_fold(&k, acc, tmp, count, dt, op, rem)))
        goto out;
    /* The process that gathers the result: the root, or its fold partner when it sat out. */
    int holder = root < 2 * rem && root % 2 == 0 ? root + 1 : root;
    int newroot = cr_coll_newrank(holder, rem), newrank = cr_coll_newrank(rank, rem);
    if (newrank >= 0) {
        int lo, hi;
        if ((err = cr_coll_reduce_scatter_halving(&k, acc, tmp, count, dt, op, newrank, pof2, rem, &lo, &hi)))
            goto out;
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int partner = cr_coll_oldrank(newrank ^ mask, rem);
            int width = hi - lo, plo = newrank < (newrank ^ mask) ? hi : lo - width, phi = plo + width;
            MPI_Count start = block_start(count, pof2, lo), n = block_start(count, pof2, hi) - start;
            if ((newrank & mask) != (newroot & mask)) {
                err = cr_coll_send(&k, cr_coll_at(acc, start, dt), n, dt, partner);
                break;
            }
            MPI_Count pstart = block_start(count, pof2, plo), pn = block_start(count, pof2, phi) - pstart;
            if ((err = cr_coll_recv(&k, cr_coll_at(acc, pstart, dt), pn, dt, partner)))
                goto out;
            lo = CR_MIN(lo, plo);
            hi = CR_MAX(hi, phi);
        }
    }
    if (holder != root) {
        if (rank == holder)
            err = cr_coll_send(&k, acc, count, dt, root);
        else if (rank == root)
            err = cr_coll_recv(&k, rbuf, count, dt, holder);
    }
out:
    cr_coll_scratch_release(acc_alloc);
    cr_coll_scratch_release(tmp_alloc);
    return err;
}
