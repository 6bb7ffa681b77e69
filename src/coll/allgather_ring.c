/* allgather_ring.c: allgather around a ring.
 *
 * In step s each process passes to its right neighbour the block it received in step s - 1
 * (its own first). Cost: (p-1)(alpha + n beta): every link busy all the time, each block moved
 * once per hop: the choice for large blocks. */
#include "coll.h"

void cr_coll_allgather_ring(cr_sched *s, void *rbuf, MPI_Count rcount, cr_dtype *rdt)
{
    int p = s->size, rank = s->rank, right = (rank + 1) % p, left = (rank - 1 + p) % p;
    for (int step = 0; step < p - 1; step++) {
        int sb = (rank - step + p) % p, rb = (rank - step - 1 + p) % p;
        cr_sched_fence(s); /* block sb arrived in the step before */
        cr_sched_recv(s, cr_coll_at(rbuf, (MPI_Count)rb * rcount, rdt), rcount, rdt, left);
        cr_sched_send(s, cr_coll_at(rbuf, (MPI_Count)sb * rcount, rdt), rcount, rdt, right);
    }
}
