/* allgather_ring.c: allgather around a ring.
 *
 * In step s each process passes to its right neighbour the block it received in step s - 1
 * (its own first). Cost: (p-1)(alpha + n beta): every link busy all the time, each block moved
 * once per hop: the choice for large blocks. */
#include "coll.h"

int cr_coll_allgather_ring(void *rbuf, MPI_Count rcount, cr_dtype *rdt, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, rank = k.rank, right = (rank + 1) % p, left = (rank - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int sb = (rank - s + p) % p, rb = (rank - s - 1 + p) % p;
        int err = cr_coll_sendrecv(&k, cr_coll_at(rbuf, (MPI_Count)sb * rcount, rdt), rcount, rdt, right,
                                   cr_coll_at(rbuf, (MPI_Count)rb * rcount, rdt), rcount, rdt, left);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}
