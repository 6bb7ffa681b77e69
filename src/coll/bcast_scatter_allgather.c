/* bcast_scatter_allgather.c: broadcast of large messages by a binomial scatter of p chunks
 * followed by a ring allgather of the chunks (van de Geijn).
 *
 * Cost: log2(p) alpha + n beta (p-1)/p for the scatter, (p-1) alpha + n beta (p-1)/p for the
 * ring: about 2 n beta in all, against n beta log2(p) for the binomial tree, so it wins for
 * large n once p > 2. Works on bytes: a non-contiguous type is packed first. */
#include "coll.h"

void cr_coll_bcast_scatter_allgather(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int root)
{
    int p = s->size, vr = (s->rank - root + p) % p;
    uint64_t nbytes = (uint64_t)count * (uint64_t)dt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    char *data;
    bool packed = !cr_dtype_is_contig(dt);
    if (!packed) {
        data = (char *)buf + dt->true_lb;
    } else {
        if (!(data = cr_sched_scratch(s, nbytes)))
            return;
        if (vr == 0)
            cr_sched_copy(s, buf, count, dt, data, (MPI_Count)nbytes, byte);
    }
    uint64_t chunk = (nbytes + (uint64_t)p - 1) / (uint64_t)p;
#define LO(v) CR_MIN((uint64_t)(v) * chunk, nbytes)
    /* Scatter: my subtree holds chunks [vr, vr + subtree). */
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            uint64_t lo = LO(vr), hi = LO(CR_MIN(vr + mask, p));
            cr_sched_recv(s, data + lo, (MPI_Count)(hi - lo), byte, (vr - mask + root) % p);
            break;
        }
        mask <<= 1;
    }
    cr_sched_fence(s);
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            uint64_t lo = LO(vr + mask), hi = LO(CR_MIN(vr + 2 * mask, p));
            cr_sched_send(s, data + lo, (MPI_Count)(hi - lo), byte, (vr + mask + root) % p);
        }
    }
    /* Ring allgather of the chunks: in step k, pass on the chunk received in step k - 1. */
    int right = (s->rank + 1) % p, left = (s->rank - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int send_chunk = (vr - k + p) % p, recv_chunk = (vr - k - 1 + p) % p;
        uint64_t slo = LO(send_chunk), shi = LO(send_chunk + 1), rlo = LO(recv_chunk), rhi = LO(recv_chunk + 1);
        cr_sched_fence(s);
        cr_sched_recv(s, data + rlo, (MPI_Count)(rhi - rlo), byte, left);
        cr_sched_send(s, data + slo, (MPI_Count)(shi - slo), byte, right);
    }
#undef LO
    if (packed && vr != 0) {
        cr_sched_fence(s);
        cr_sched_copy(s, data, (MPI_Count)nbytes, byte, buf, count, dt);
    }
}
