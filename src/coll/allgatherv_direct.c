/* allgatherv_direct.c: allgather of blocks of different sizes, everyone to everyone at once.
 *
 * Every process sends its block to each other process and receives theirs, all messages
 * started together. Cost: alpha + (p-1) n beta per process, all in one round: the choice for
 * small data, where the ring's p - 1 rounds of latency dominate. */
#include "coll.h"

void cr_coll_allgatherv_direct(cr_sched *s, void *rbuf, cr_cvec rcounts, cr_cvec displs, cr_dtype *rdt)
{
    int p = s->size, rank = s->rank;
    const char *mine = cr_coll_at(rbuf, cr_cvec_at(displs, (size_t)rank), rdt);
    MPI_Count n = cr_cvec_at(rcounts, (size_t)rank);
    for (int k = 1; k < p; k++) {
        size_t from = (size_t)((rank - k + p) % p);
        cr_sched_recv(s, cr_coll_at(rbuf, cr_cvec_at(displs, from), rdt), cr_cvec_at(rcounts, from), rdt, (int)from);
    }
    for (int k = 1; k < p; k++)
        cr_sched_send(s, mine, n, rdt, (rank + k) % p);
}
