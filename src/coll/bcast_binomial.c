/* bcast_binomial.c: broadcast down a binomial tree rooted at `root`.
 *
 * With ranks relative to the root, a process receives from the rank that differs in its
 * lowest set bit, then sends to rank + 2^j for every j below that bit (largest subtree first).
 * Cost: ceil(log2 p) * (alpha + n beta): the best for small messages, where alpha dominates. */
#include "coll.h"

int cr_coll_bcast_binomial(void *buf, MPI_Count count, cr_dtype *dt, int root, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, vr = (k.rank - root + p) % p, mask = 1, err;
    while (mask < p) {
        if (vr & mask) {
            if ((err = cr_coll_recv(&k, buf, count, dt, (vr - mask + root) % p)))
                return err;
            break;
        }
        mask <<= 1;
    }
    cr_request reqs[32];
    int n = 0;
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            if ((err = cr_coll_isend(&k, buf, count, dt, (vr + mask + root) % p, &reqs[n++])))
                return err;
        }
    }
    return cr_coll_waitall(reqs, n);
}
