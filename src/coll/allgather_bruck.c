/* allgather_bruck.c: Bruck's allgather, for any p.
 *
 * Blocks are kept rotated so that this process's own block comes first; in step j each process
 * sends its first min(2^j, p - 2^j) blocks to rank - 2^j and appends those of rank + 2^j. A
 * final rotation puts them in place. Cost: ceil(log2 p) alpha + n beta (p-1): as few messages
 * as recursive doubling, without needing a power of two. Blocks travel packed. */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

int cr_coll_allgather_bruck(void *rbuf, MPI_Count rcount, cr_dtype *rdt, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, rank = k.rank, err = MPI_SUCCESS;
    uint64_t nb = (uint64_t)rcount * (uint64_t)rdt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    char *tmp = cr_coll_scratch(nb * (uint64_t)p + 1);
    if (!tmp)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for an allgather of %d blocks", p);
    cr_dt_pack(cr_coll_at(rbuf, (MPI_Count)rank * rcount, rdt), rcount, rdt, 0, tmp, nb);
    for (int have = 1; have < p; have *= 2) {
        int n = CR_MIN(have, p - have);
        if ((err = cr_coll_sendrecv(&k, tmp, (MPI_Count)(nb * (uint64_t)n), byte, (rank - have + p) % p,
                                    tmp + nb * (uint64_t)have, (MPI_Count)(nb * (uint64_t)n), byte, (rank + have) % p)))
            break;
    }
    if (!err)
        for (int i = 0; i < p; i++) /* tmp block i belongs to rank + i */
            cr_dt_unpack(cr_coll_at(rbuf, (MPI_Count)((rank + i) % p) * rcount, rdt), rcount, rdt, 0,
                         tmp + nb * (uint64_t)i, nb);
    cr_coll_scratch_release(tmp);
    return err;
}
