/* allgather_bruck.c: Bruck's allgather, for any p.
 *
 * Blocks are kept rotated so that this process's own block comes first; in step j each process
 * sends its first min(2^j, p - 2^j) blocks to rank - 2^j and appends those of rank + 2^j. A
 * final rotation puts them in place. Cost: ceil(log2 p) alpha + n beta (p-1): as few messages
 * as recursive doubling, without needing a power of two. Blocks travel packed. */
#include "coll.h"

void cr_coll_allgather_bruck(cr_sched *s, void *rbuf, MPI_Count rcount, cr_dtype *rdt)
{
    int p = s->size, rank = s->rank;
    uint64_t nb = (uint64_t)rcount * (uint64_t)rdt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    char *tmp = cr_sched_scratch(s, nb * (uint64_t)p);
    if (!tmp)
        return;
    cr_sched_copy(s, cr_coll_at(rbuf, (MPI_Count)rank * rcount, rdt), rcount, rdt, tmp, (MPI_Count)nb, byte);
    for (int have = 1; have < p; have *= 2) {
        int n = CR_MIN(have, p - have);
        cr_sched_fence(s);
        cr_sched_recv(s, tmp + nb * (uint64_t)have, (MPI_Count)(nb * (uint64_t)n), byte, (rank + have) % p);
        cr_sched_send(s, tmp, (MPI_Count)(nb * (uint64_t)n), byte, (rank - have + p) % p);
    }
    cr_sched_fence(s);
    for (int i = 1; i < p; i++) /* tmp block i belongs to rank + i */
        cr_sched_copy(s, tmp + nb * (uint64_t)i, (MPI_Count)nb, byte,
                      cr_coll_at(rbuf, (MPI_Count)((rank + i) % p) * rcount, rdt), rcount, rdt);
}
