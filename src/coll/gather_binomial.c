/* gather_binomial.c: gather up a binomial tree.
 *
 * Relative rank v collects the blocks of its subtree [v, v + 2^j) and forwards them to its
 * parent in one message; the root unpacks them into place. Cost: ceil(log2 p) alpha +
 * n beta (p-1), against (p-1)(alpha + n beta) for the root receiving from everyone in turn.
 * Blocks travel as packed bytes (every process sends the same type signature). */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

int cr_coll_gather_binomial(const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf, MPI_Count rcount,
                            cr_dtype *rdt, int root, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, vr = (k.rank - root + p) % p, err = MPI_SUCCESS;
    bool in_place = sbuf == MPI_IN_PLACE;
    uint64_t nb = k.rank == root ? (uint64_t)rcount * (uint64_t)rdt->size : (uint64_t)scount * (uint64_t)sdt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    int blocks = cr_coll_subtree_size(vr, p);
    char *buf = cr_coll_scratch(nb * (uint64_t)blocks + 1);
    if (!buf)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a gather of %d blocks of %llu bytes", blocks,
                      (unsigned long long)nb);
    if (!in_place)
        cr_dt_pack(sbuf, scount, sdt, 0, buf, nb);
    else if (vr == 0) /* the root's own block is already in place in rbuf */
        cr_dt_pack(cr_coll_at(rbuf, (MPI_Count)root * rcount, rdt), rcount, rdt, 0, buf, nb);
    int have = 1;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            err = cr_coll_send(&k, buf, (MPI_Count)(nb * (uint64_t)have), byte, (vr - mask + root) % p);
            break;
        }
        int child = vr + mask;
        if (child >= p)
            continue;
        int n = CR_MIN(mask, p - child);
        if ((err = cr_coll_recv(&k, buf + nb * (uint64_t)have, (MPI_Count)(nb * (uint64_t)n), byte, (child + root) % p)))
            break;
        have += n;
    }
    if (!err && vr == 0)
        for (int i = 0; i < p; i++)
            cr_dt_unpack(cr_coll_at(rbuf, (MPI_Count)((i + root) % p) * rcount, rdt), rcount, rdt, 0,
                         buf + nb * (uint64_t)i, nb);
    cr_coll_scratch_release(buf);
    return err;
}
