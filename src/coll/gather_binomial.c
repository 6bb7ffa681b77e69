/* gather_binomial.c: gather up a binomial tree.
 *
 * Relative rank v collects the blocks of its subtree [v, v + 2^j) and forwards them to its
 * parent in one message; the root unpacks them into place. Cost: ceil(log2 p) alpha +
 * n beta (p-1), against (p-1)(alpha + n beta) for the root receiving from everyone in turn.
 * Blocks travel as packed bytes (every process sends the same type signature). */
#include "coll.h"

void cr_coll_gather_binomial(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                             MPI_Count rcount, cr_dtype *rdt, int root)
{
    int p = s->size, vr = (s->rank - root + p) % p;
    bool in_place = sbuf == MPI_IN_PLACE;
    uint64_t nb = s->rank == root ? (uint64_t)rcount * (uint64_t)rdt->size : (uint64_t)scount * (uint64_t)sdt->size;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    int blocks = cr_coll_subtree_size(vr, p);
    char *buf = cr_sched_scratch(s, nb * (uint64_t)blocks);
    if (!buf)
        return;
    if (!in_place)
        cr_sched_copy(s, sbuf, scount, sdt, buf, (MPI_Count)nb, byte);
    else if (vr == 0) /* the root's own block is already in place in rbuf */
        cr_sched_copy(s, cr_coll_at(rbuf, (MPI_Count)root * rcount, rdt), rcount, rdt, buf, (MPI_Count)nb, byte);
    /* The children's subtrees land side by side: all their receives are posted at once. */
    int have = 1, mask;
    for (mask = 1; mask < p && !(vr & mask); mask <<= 1) {
        int child = vr + mask;
        if (child >= p)
            continue;
        int n = CR_MIN(mask, p - child);
        cr_sched_recv(s, buf + nb * (uint64_t)have, (MPI_Count)(nb * (uint64_t)n), byte, (child + root) % p);
        have += n;
    }
    cr_sched_fence(s);
    if (mask < p) {
        cr_sched_send(s, buf, (MPI_Count)(nb * (uint64_t)have), byte, (vr - mask + root) % p);
        return;
    }
    if (vr == 0)
        for (int i = in_place ? 1 : 0; i < p; i++)
            cr_sched_copy(s, buf + nb * (uint64_t)i, (MPI_Count)nb, byte,
                          cr_coll_at(rbuf, (MPI_Count)((i + root) % p) * rcount, rdt), rcount, rdt);
}
