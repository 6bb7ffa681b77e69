/* scan_recursive_doubling.c: inclusive and exclusive prefix reductions by recursive doubling.
 *
 * In step j a process exchanges with rank ^ 2^j the reduction of everything it has seen so far
 * (`partial`); what comes from a lower rank is combined into its result too. After
 * ceil(log2 p) steps rank r has the reduction of ranks 0..r (scan) or 0..r-1 (exscan).
 * Cost: ceil(log2 p) (alpha + n beta + 2 n gamma). Lower ranks always combine on the left, so
 * operations that do not commute are served. */
#include "coll.h"

void cr_coll_scan_recursive_doubling(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt,
                                     cr_op *op, bool exclusive)
{
    int p = s->size, rank = s->rank;
    void *partial = cr_sched_tmp(s, count, dt), *theirs = cr_sched_tmp(s, count, dt);
    if (!partial || !theirs)
        return;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    cr_sched_copy(s, mine, count, dt, partial, count, dt);
    if (!exclusive && sbuf != MPI_IN_PLACE)
        cr_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    bool have_result = !exclusive; /* exscan: rbuf holds nothing until a lower rank is heard */
    for (int mask = 1; mask < p; mask <<= 1) {
        int partner = rank ^ mask;
        if (partner >= p)
            continue;
        cr_sched_fence(s);
        cr_sched_recv(s, theirs, count, dt, partner);
        cr_sched_send(s, partial, count, dt, partner);
        cr_sched_fence(s);
        if (partner < rank) { /* theirs comes first */
            cr_sched_reduce(s, theirs, partial, count, dt, op); /* partial = theirs op partial */
            if (have_result)
                cr_sched_reduce(s, theirs, rbuf, count, dt, op);
            else
                cr_sched_copy(s, theirs, count, dt, rbuf, count, dt);
            have_result = true;
        } else if (op->commutative) {
            cr_sched_reduce(s, theirs, partial, count, dt, op);
        } else {
            cr_sched_reduce(s, partial, theirs, count, dt, op); /* theirs = partial op theirs */
            cr_sched_copy(s, theirs, count, dt, partial, count, dt);
        }
    }
}
