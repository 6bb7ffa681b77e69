/* scatter_binomial.c: scatter down a binomial tree, the mirror of gather_binomial.c.
 *
 * The root packs the blocks in relative-rank order; every process receives its subtree's
 * blocks from its parent in one message and passes on its children's. Cost: ceil(log2 p) alpha
 * + n beta (p-1). */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

int cr_coll_scatter_binomial(const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf, MPI_Count rcount,
                             cr_dtype *rdt, int root, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, vr = (k.rank - root + p) % p, err = MPI_SUCCESS;
    bool in_place = rbuf == MPI_IN_PLACE;
    uint64_t nb = k.rank == root ? (uint64_t)scount * (uint64_t)sdt->size : (uint64_t)rcount * (uint64_t)rdt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    int blocks = cr_coll_subtree_size(vr, p);
    char *buf = cr_coll_scratch(nb * (uint64_t)blocks + 1);
    if (!buf)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a scatter of %d blocks of %llu bytes", blocks,
                      (unsigned long long)nb);
    if (vr == 0) {
        for (int i = 0; i < p; i++)
            cr_dt_pack(cr_coll_at(sbuf, (MPI_Count)((i + root) % p) * scount, sdt), scount, sdt, 0,
                       buf + nb * (uint64_t)i, nb);
    }
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            err = cr_coll_recv(&k, buf, (MPI_Count)(nb * (uint64_t)blocks), byte, (vr - mask + root) % p);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; !err && mask > 0; mask >>= 1) {
        int child = vr + mask;
        if (child < p) {
            int n = CR_MIN(mask, p - child);
            err = cr_coll_send(&k, buf + nb * (uint64_t)mask, (MPI_Count)(nb * (uint64_t)n), byte, (child + root) % p);
        }
    }
    if (!err && !in_place)
        cr_dt_unpack(rbuf, rcount, rdt, 0, buf, nb);
    cr_coll_scratch_release(buf);
    return err;
}
