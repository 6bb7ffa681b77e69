/* barrier_dissemination.c: the dissemination barrier.
 *
 * In round k (k = 1, 2, 4, ... < p) every process sends an empty message to rank + k and waits
 * for one from rank - k. After ceil(log2 p) rounds every process has heard, directly or not,
 * from every other. Cost: ceil(log2 p) * alpha, for any p (no power-of-two fold needed). */
#include "coll.h"

void cr_coll_barrier_dissemination(cr_sched *s)
{
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    for (int dist = 1; dist < s->size; dist *= 2) {
        cr_sched_fence(s); /* round k sends only after hearing in round k - 1 */
        cr_sched_recv(s, NULL, 0, byte, (s->rank - dist + s->size) % s->size);
        cr_sched_send(s, NULL, 0, byte, (s->rank + dist) % s->size);
    }
}
