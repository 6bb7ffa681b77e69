/* reduce_binomial.c: reduction up a binomial tree.
 *
 * Process v (relative rank) receives the partial results of v + 1, v + 2, v + 4, ... (while
 * those bits of v are clear), combining each with its own, then sends to v - lowbit(v).
 * Cost: ceil(log2 p) (alpha + n beta + n gamma). For operations that do not commute the tree
 * is rooted at rank 0 (so partial results combine in rank order, lower rank on the left) and
 * the result then goes to the root. */
#include "coll.h"

void cr_coll_reduce_binomial(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                             int root)
{
    int p = s->size, rank = s->rank;
    int tree_root = op->commutative ? root : 0;
    int vr = (rank - tree_root + p) % p;
    /* acc holds the partial result: the root accumulates straight into rbuf. */
    void *acc = rank == root ? rbuf : cr_sched_tmp(s, count, dt);
    void *tmp = cr_sched_tmp(s, count, dt);
    if (!acc || !tmp)
        return;
    if (sbuf != MPI_IN_PLACE)
        cr_sched_copy(s, sbuf, count, dt, acc, count, dt);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            cr_sched_send(s, acc, count, dt, (vr - mask + tree_root) % p);
            break;
        }
        int child = vr + mask;
        if (child >= p)
            continue;
        cr_sched_recv(s, tmp, count, dt, (child + tree_root) % p);
        cr_sched_fence(s);
        /* tmp = acc op tmp: the child's ranks come after ours. */
        cr_sched_reduce(s, acc, tmp, count, dt, op);
        void *t = acc;
        acc = tmp;
        tmp = t;
    }
    cr_sched_fence(s);
    if (tree_root != root) {
        if (rank == tree_root)
            cr_sched_send(s, acc, count, dt, root);
        else if (rank == root)
            cr_sched_recv(s, rbuf, count, dt, tree_root);
    } else if (rank == root && acc != rbuf) {
        cr_sched_copy(s, acc, count, dt, rbuf, count, dt);
    }
}
