/* scatter_binomial.c: scatter down a binomial tree, the mirror of gather_binomial.c.
 *
 * The root packs the blocks in relative-rank order; every process receives its subtree's
 * blocks from its parent in one message and passes on its children's. Cost: ceil(log2 p) alpha
 * + n beta (p-1). */
#include "coll.h"

void cr_coll_scatter_binomial(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                              MPI_Count rcount, cr_dtype *rdt, int root)
{
    int p = s->size, vr = (s->rank - root + p) % p;
    bool in_place = rbuf == MPI_IN_PLACE;
    uint64_t nb = s->rank == root ? (uint64_t)scount * (uint64_t)sdt->size : (uint64_t)rcount * (uint64_t)rdt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    int blocks = cr_coll_subtree_size(vr, p);
    char *buf = cr_sched_scratch(s, nb * (uint64_t)blocks);
    if (!buf)
        return;
    if (vr == 0)
        for (int i = 0; i < p; i++)
            cr_sched_copy(s, cr_coll_at(sbuf, (MPI_Count)((i + root) % p) * scount, sdt), scount, sdt,
                          buf + nb * (uint64_t)i, (MPI_Count)nb, byte);
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            cr_sched_recv(s, buf, (MPI_Count)(nb * (uint64_t)blocks), byte, (vr - mask + root) % p);
            break;
        }
        mask <<= 1;
    }
    cr_sched_fence(s);
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int child = vr + mask;
        if (child < p) {
            int n = CR_MIN(mask, p - child);
            cr_sched_send(s, buf + nb * (uint64_t)mask, (MPI_Count)(nb * (uint64_t)n), byte, (child + root) % p);
        }
    }
    if (!in_place)
        cr_sched_copy(s, buf, (MPI_Count)nb, byte, rbuf, rcount, rdt);
}
