/* bcast_scatter_allgather.c: broadcast of large messages by a binomial scatter of p chunks
 * followed by a ring allgather of the chunks (van de Geijn).
 *
 * Cost: log2(p) alpha + n beta (p-1)/p for the scatter, (p-1) alpha + n beta (p-1)/p for the
 * ring: about 2 n beta in all, against n beta log2(p) for the binomial tree, so it wins for
 * large n once p > 2. Works on bytes: a non-contiguous type is packed first. */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

int cr_coll_bcast_scatter_allgather(void *buf, MPI_Count count, cr_dtype *dt, int root, cr_comm *c)
{
    cr_coll k = cr_coll_begin(c);
    int p = k.size, vr = (k.rank - root + p) % p, err = MPI_SUCCESS;
    uint64_t nbytes = (uint64_t)count * (uint64_t)dt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    char *data, *packed = NULL;
    if (cr_dtype_is_contig(dt)) {
        data = (char *)buf + dt->true_lb;
    } else {
        if (!(packed = cr_coll_scratch(nbytes ? nbytes : 1)))
            return cr_err(MPI_ERR_NO_MEM, "out of memory for a %llu-byte broadcast", (unsigned long long)nbytes);
        if (vr == 0)
            cr_dt_pack(buf, count, dt, 0, packed, nbytes);
        data = packed;
    }
    uint64_t chunk = (nbytes + (uint64_t)p - 1) / (uint64_t)p;
#define LO(v) CR_MIN((uint64_t)(v) * chunk, nbytes)
    /* Scatter: my subtree holds chunks [vr, vr + subtree). */
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            int src = (vr - mask + root) % p;
            uint64_t lo = LO(vr), hi = LO(CR_MIN(vr + mask, p));
            if ((err = cr_coll_recv(&k, data + lo, (MPI_Count)(hi - lo), byte, src)))
                goto out;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            uint64_t lo = LO(vr + mask), hi = LO(CR_MIN(vr + 2 * mask, p));
            if ((err = cr_coll_send(&k, data + lo, (MPI_Count)(hi - lo), byte, (vr + mask + root) % p)))
                goto out;
        }
    }
    /* Ring allgather of the chunks: in step s, pass on the chunk received in step s - 1. */
    int right = (k.rank + 1) % p, left = (k.rank - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int send_chunk = (vr - s + p) % p, recv_chunk = (vr - s - 1 + p) % p;
        uint64_t slo = LO(send_chunk), shi = LO(send_chunk + 1), rlo = LO(recv_chunk), rhi = LO(recv_chunk + 1);
        if ((err = cr_coll_sendrecv(&k, data + slo, (MPI_Count)(shi - slo), byte, right, data + rlo,
                                    (MPI_Count)(rhi - rlo), byte, left)))
            goto out;
    }
#undef LO
    if (packed && vr != 0)
        cr_dt_unpack(buf, count, dt, 0, packed, nbytes);
out:
    cr_coll_scratch_release(packed);
    return err;
}
