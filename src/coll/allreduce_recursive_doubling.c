/* allreduce_recursive_doubling.c: allreduce by recursive doubling.
 *
 * After folding p to a power of two (see cr_coll_newrank), in step j every active process
 * exchanges its whole partial result with the process whose rank differs in bit j and
 * combines: log2(p) steps, each alpha + n beta + n gamma. Best for small messages. Combines in
 * rank order (lower ranks on the left), so it serves operations that do not commute. */
#include "coll.h"

void cr_coll_allreduce_recursive_doubling(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    int p = s->size, rank = s->rank, pof2 = cr_coll_pof2(p), rem = p - pof2;
    void *tmp = cr_sched_tmp(s, count, dt);
    if (!tmp)
        return;
    /* Fold: even ranks below 2*rem hand their data to the odd rank above them. */
    cr_coll_fold(s, rbuf, tmp, count, dt, op, rem);
    int newrank = cr_coll_newrank(rank, rem);
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int partner = cr_coll_oldrank(newrank ^ mask, rem);
            cr_sched_fence(s);
            cr_sched_recv(s, tmp, count, dt, partner);
            cr_sched_send(s, rbuf, count, dt, partner);
            cr_sched_fence(s);
            if (partner < rank) {
                cr_sched_reduce(s, tmp, rbuf, count, dt, op); /* rbuf = theirs op mine */
            } else {
                cr_sched_reduce(s, rbuf, tmp, count, dt, op); /* tmp = mine op theirs */
                cr_sched_copy(s, tmp, count, dt, rbuf, count, dt);
            }
        }
    }
    /* Unfold: the odd ranks give the result back. */
    cr_coll_unfold(s, rbuf, count, dt, rem);
}
