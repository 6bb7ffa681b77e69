/* alltoall_bruck.c: Bruck's all-to-all for small blocks (alltoall only: every block the same
 * size), in ceil(log2 p) rounds instead of p - 1 exchanges.
 *
 * 1. Rotate: packed scratch t[i] = the block for process (rank + i) mod p.
 * 2. Round k (step 2^k): send every t[i] whose index has bit k set to rank + 2^k, receive as
 *    many from rank - 2^k and put them at the same indices. Afterwards t[i] is the block that
 *    process (rank - i) mod p sent to this one.
 * 3. Unrotate: the block from process j is t[(rank - j) mod p].
 * Cost: ceil(log2 p) (alpha + (p/2) n beta) plus local copies: fewer, larger messages than the
 * pairwise exchange, which pays p - 1 latencies; for small n with many processes that wins.
 * Each process's round-k peers 2^k apart differ in every round (2^k < p), and rounds are
 * fenced, so rounds never mix. */
#include "coll.h"

void cr_coll_alltoall_bruck(cr_sched *s, const cr_coll_call *a)
{
    int p = s->size, rank = s->rank;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    const void *sbuf = in_place ? a->rbuf : a->sbuf;
    MPI_Count scount = in_place ? a->rcount : a->scount;
    cr_dtype *sdt = in_place ? a->rdt : a->sdt, *byte = cr_dtype_get(MPI_BYTE);
    uint64_t b = (uint64_t)a->rcount * (uint64_t)a->rdt->size;
    size_t half = (size_t)(p + 1) / 2;
    if (b == 0)
        return;
    char *t = cr_sched_scratch(s, (size_t)p * b), *out = cr_sched_scratch(s, half * b),
         *in = cr_sched_scratch(s, half * b);
    if (!t || !out || !in)
        return;
    for (int i = 0; i < p; i++)
        cr_sched_copy(s, cr_coll_at(sbuf, (MPI_Count)((rank + i) % p) * scount, sdt), scount, sdt, t + (size_t)i * b,
                      (MPI_Count)b, byte);
    for (int step = 1; step < p; step <<= 1) {
        size_t m = 0;
        cr_sched_fence(s); /* the last round's messages are done with out and in */
        for (int i = 0; i < p; i++)
            if (i & step)
                cr_sched_copy(s, t + (size_t)i * b, (MPI_Count)b, byte, out + m++ * b, (MPI_Count)b, byte);
        cr_sched_recv(s, in, (MPI_Count)(m * b), byte, (rank - step + p) % p);
        cr_sched_send(s, out, (MPI_Count)(m * b), byte, (rank + step) % p);
        cr_sched_fence(s);
        m = 0;
        for (int i = 0; i < p; i++)
            if (i & step)
                cr_sched_copy(s, in + m++ * b, (MPI_Count)b, byte, t + (size_t)i * b, (MPI_Count)b, byte);
    }
    for (int i = 0; i < p; i++)
        cr_sched_copy(s, t + (size_t)i * b, (MPI_Count)b, byte,
                      cr_coll_at(a->rbuf, (MPI_Count)((rank - i + p) % p) * a->rcount, a->rdt), a->rcount, a->rdt);
}
