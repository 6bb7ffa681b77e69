/* alltoall_pairwise.c: all-to-all exchange in pairs, for alltoall, alltoallv and alltoallw.
 *
 * In step k (1 <= k < p) a process sends its block for rank + k and receives the block of
 * rank - k; its own block is a local copy. Steps run a window (CR_COLL_ALLTOALL_WINDOW) at a
 * time, so at most that many pairs of messages per process are in flight: every process talks
 * to a different peer in each step (no peer is flooded by everyone at once) and memory for
 * early messages stays bounded at any process count. Cost: (p-1) (alpha + n beta), with up to
 * a window of steps overlapped.
 *
 * In place (sendbuf = MPI_IN_PLACE), the blocks to send are first packed from the receive
 * buffer into scratch, since receiving overwrites them. */
#include "coll.h"


void cr_coll_alltoall_pairwise(cr_sched *s, const cr_coll_call *a, cr_coll_peer_fn *peer)
{
    int p = s->size, rank = s->rank;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    char *packed = NULL;
    uint64_t *off = NULL;
    if (in_place) {
        /* offsets of each peer's packed block, then the blocks */
        off = cr_sched_scratch(s, sizeof *off * (size_t)(p + 1));
        if (!off)
            return;
        off[0] = 0;
        for (int j = 0; j < p; j++) {
            cr_coll_block b;
            peer(a, j, &b);
            off[j + 1] = off[j] + (j == rank ? 0 : (uint64_t)b.rcount * (uint64_t)b.rdt->size);
        }
        if (!(packed = cr_sched_scratch(s, off[p])))
            return;
        for (int j = 0; j < p; j++) {
            cr_coll_block b;
            peer(a, j, &b);
            if (j != rank)
                cr_sched_copy(s, b.rbuf, b.rcount, b.rdt, packed + off[j], (MPI_Count)(off[j + 1] - off[j]), byte);
        }
    } else {
        cr_coll_block b;
        peer(a, rank, &b);
        cr_sched_copy(s, b.sbuf, b.scount, b.sdt, b.rbuf, b.rcount, b.rdt);
    }
    for (int k = 1; k < p; k++) {
        int to = (rank + k) % p, from = (rank - k + p) % p;
        cr_coll_block bt, bf;
        peer(a, to, &bt);
        peer(a, from, &bf);
        if ((k - 1) % CR_COLL_ALLTOALL_WINDOW == 0)
            cr_sched_fence(s);
        cr_sched_recv(s, bf.rbuf, bf.rcount, bf.rdt, from);
        if (in_place)
            cr_sched_send(s, packed + off[to], (MPI_Count)(off[to + 1] - off[to]), byte, to);
        else
            cr_sched_send(s, bt.sbuf, bt.scount, bt.sdt, to);
    }
}
