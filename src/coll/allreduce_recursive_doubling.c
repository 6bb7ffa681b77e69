/* allreduce_recursive_doubling.c: allreduce by recursive doubling.
 *
 * After folding p to a power of two (see cr_coll_newrank), in step j every active process
 * exchanges its whole partial result with the process whose rank differs in bit j and
 * combines: log2(p) steps, each alpha + n beta + n gamma. Best for small messages. Combines in
 * rank order (lower ranks on the left), so it serves operations that do not commute. */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

int cr_coll_allreduce_recursive_doubling(void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, rank = k.rank, pof2 = cr_coll_pof2(p), rem = p - pof2, err = MPI_SUCCESS;
    void *alloc;
    void *tmp = cr_coll_tmp(count, dt, &alloc);
    if (!tmp)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for an allreduce of %lld elements", (long long)count);
    /* Fold: even ranks below 2*rem hand their data to the odd rank above them. */
    if ((err = cr_coll_fold(&k, rbuf, tmp, count, dt, op, rem)))
        goto out;
    int newrank = cr_coll_newrank(rank, rem);
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int partner = cr_coll_oldrank(newrank ^ mask, rem);
            if ((err = cr_coll_sendrecv(&k, rbuf, count, dt, partner, tmp, count, dt, partner)))
                goto out;
            if (partner < rank) {
                cr_op_apply(op, tmp, rbuf, count, dt); /* rbuf = theirs op mine */
            } else {
                cr_op_apply(op, rbuf, tmp, count, dt); /* tmp = mine op theirs */
                cr_coll_copy(tmp, count, dt, rbuf, count, dt);
            }
        }
    }
    /* Unfold: the odd ranks give the result back. */
    err = cr_coll_unfold(&k, rbuf, count, dt, rem);
out:
    cr_coll_scratch_release(alloc);
    return err;
}
