/* allgatherv_ring.c: allgather of blocks of different sizes around a ring.
 *
 * In step k each process passes to its right neighbour the block it received in step k - 1
 * (its own first), each block with its own count. Cost: (p-1) alpha + n_total beta: every
 * block crosses each link once; the choice for large data. */
#include "coll.h"

void cr_coll_allgatherv_ring(cr_sched *s, void *rbuf, cr_cvec rcounts, cr_cvec displs, cr_dtype *rdt)
{
    int p = s->size, rank = s->rank, right = (rank + 1) % p, left = (rank - 1 + p) % p;
    for (int step = 0; step < p - 1; step++) {
        size_t sb = (size_t)((rank - step + p) % p), rb = (size_t)((rank - step - 1 + p) % p);
        cr_sched_fence(s); /* block sb arrived in the step before */
        cr_sched_recv(s, cr_coll_at(rbuf, cr_cvec_at(displs, rb), rdt), cr_cvec_at(rcounts, rb), rdt, left);
        cr_sched_send(s, cr_coll_at(rbuf, cr_cvec_at(displs, sb), rdt), cr_cvec_at(rcounts, sb), rdt, right);
    }
}
