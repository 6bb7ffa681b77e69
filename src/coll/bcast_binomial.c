/* bcast_binomial.c: broadcast down a binomial tree rooted at `root`.
 *
 * With ranks relative to the root, a process receives from the rank that differs in its
 * lowest set bit, then sends to rank + 2^j for every j below that bit (largest subtree first).
 * Cost: ceil(log2 p) * (alpha + n beta): the best for small messages, where alpha dominates. */
#include "coll.h"

void cr_coll_bcast_binomial(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int root)
{
    int p = s->size, vr = (s->rank - root + p) % p, mask = 1;
    while (mask < p) {
        if (vr & mask) {
            cr_sched_recv(s, buf, count, dt, (vr - mask + root) % p);
            break;
        }
        mask <<= 1;
    }
    cr_sched_fence(s); /* the data has arrived before it is passed on */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            cr_sched_send(s, buf, count, dt, (vr + mask + root) % p);
}
