/* allgather_recursive_doubling.c: allgather by recursive doubling, for a power-of-two p.
 *
 * In step j each process swaps everything it has (2^j blocks) with the process whose rank
 * differs in bit j. Cost: log2(p) alpha + n beta (p-1): the fewest messages, for small blocks. */
#include "coll.h"

void cr_coll_allgather_recursive_doubling(cr_sched *s, void *rbuf, MPI_Count rcount, cr_dtype *rdt)
{
    int p = s->size, rank = s->rank;
    for (int mask = 1; mask < p; mask <<= 1) {
        int partner = rank ^ mask;
        int mine = rank & ~(mask - 1), theirs = partner & ~(mask - 1); /* first block of each side */
        cr_sched_fence(s);
        cr_sched_recv(s, cr_coll_at(rbuf, (MPI_Count)theirs * rcount, rdt), (MPI_Count)mask * rcount, rdt, partner);
        cr_sched_send(s, cr_coll_at(rbuf, (MPI_Count)mine * rcount, rdt), (MPI_Count)mask * rcount, rdt, partner);
    }
}
