/* barrier_dissemination.c: the dissemination barrier.
 *
 * In round k (k = 1, 2, 4, ... < p) every process sends an empty message to rank + k and waits
 * for one from rank - k. After ceil(log2 p) rounds every process has heard, directly or not,
 * from every other. Cost: ceil(log2 p) * alpha, for any p (no power-of-two fold needed). */
#include "coll.h"

int cr_coll_barrier_dissemination(cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    for (int dist = 1; dist < k.size; dist *= 2) {
        int err = cr_coll_sendrecv(&k, NULL, 0, byte, (k.rank + dist) % k.size, NULL, 0, byte,
                                   (k.rank - dist + k.size) % k.size);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}
