/* reduce_binomial.c: reduction up a binomial tree.
 *
 * Process v (relative rank) receives the partial results of v + 1, v + 2, v + 4, ... (while
 * those bits of v are clear), combining each with its own, then sends to v - lowbit(v).
 * Cost: ceil(log2 p) (alpha + n beta + n gamma). For operations that do not commute the tree
 * is rooted at rank 0 (so partial results combine in rank order, lower rank on the left) and
 * the result then goes to the root. */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

int cr_coll_reduce_binomial(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root,
                            cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, rank = k.rank, err = MPI_SUCCESS;
    int tree_root = op->commutative ? root : 0;
    int vr = (rank - tree_root + p) % p;
    void *acc_alloc = NULL, *tmp_alloc = NULL;
    /* acc holds the partial result: the root accumulates straight into rbuf. */
    void *acc = rank == root ? rbuf : cr_coll_tmp(count, dt, &acc_alloc);
    void *tmp = cr_coll_tmp(count, dt, &tmp_alloc);
    if (!acc || !tmp) {
        err = cr_err(MPI_ERR_NO_MEM, "out of memory for a reduction of %lld elements", (long long)count);
        goto out;
    }
    if (sbuf != MPI_IN_PLACE)
        cr_coll_copy(sbuf, count, dt, acc, count, dt);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            err = cr_coll_send(&k, acc, count, dt, (vr - mask + tree_root) % p);
            break;
        }
        int child = vr + mask;
        if (child >= p)
            continue;
        if ((err = cr_coll_recv(&k, tmp, count, dt, (child + tree_root) % p)))
            goto out;
        /* acc = acc op tmp: the child's ranks come after ours. */
        cr_op_apply(op, acc, tmp, count, dt);
        void *t = acc;
        acc = tmp;
        tmp = t;
    }
    if (tree_root != root) {
        if (rank == tree_root)
            err = cr_coll_send(&k, acc, count, dt, root);
        else if (rank == root)
            err = cr_coll_recv(&k, rbuf, count, dt, tree_root);
    } else if (rank == root && acc != rbuf) {
        cr_coll_copy(acc, count, dt, rbuf, count, dt);
    }
out:
    cr_coll_scratch_release(acc_alloc);
    cr_coll_scratch_release(tmp_alloc);
    return err;
}
