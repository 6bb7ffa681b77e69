/* allgather_recursive_doubling.c: allgather by recursive doubling, for a power-of-two p.
 *
 * In step j each process swaps everything it has (2^j blocks) with the process whose rank
 * differs in bit j. Cost: log2(p) alpha + n beta (p-1): the fewest messages, for small blocks. */
#include "coll.h"

int cr_coll_allgather_recursive_doubling(void *rbuf, MPI_Count rcount, cr_dtype *rdt, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, rank = k.rank;
    for (int mask = 1; mask < p; mask <<= 1) {
        int partner = rank ^ mask;
        int mine = rank & ~(mask - 1), theirs = partner & ~(mask - 1); /* first block of each side */
        int err = cr_coll_sendrecv(&k, cr_coll_at(rbuf, (MPI_Count)mine * rcount, rdt), (MPI_Count)mask * rcount, rdt,
                                   partner, cr_coll_at(rbuf, (MPI_Count)theirs * rcount, rdt),
                                   (MPI_Count)mask * rcount, rdt, partner);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}
