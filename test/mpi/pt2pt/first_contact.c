/* First contact from every side at once, across nodes: right after MPI_Init every rank sends
 * to every other rank before receiving anything, so two processes on different nodes connect
 * to each other at the same moment. The TCP transport then keeps one of the two connections
 * for both directions and retires the other (a switch frame ends it, a resume frame starts the
 * winner; tcp.md): this checks that no frame is lost or overtaken while that happens, with
 * messages of every protocol (eager, long eager, rendezvous streamed in frames) in flight, for
 * several rounds, received by source and by MPI_ANY_SOURCE. Run with MPIEXEC_SIMULATE_NODES. */
#include "mpitest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PER_PEER = 12, ROUNDS = 3 };

static const size_t sizes[] = {8, 3000, 70000, 8, 1 << 20, 200, 300000, 16};

static size_t size_of(int k)
{
    return sizes[k % (int)(sizeof sizes / sizeof sizes[0])];
}

static unsigned char pattern(size_t i, int src, int dst, int k, int round)
{
    return (unsigned char)(i * 29 + (size_t)src * 7 + (size_t)dst * 13 + (size_t)k * 3 + (size_t)round + (i >> 9));
}

int main(int argc, char **argv)
{
    int rank, size;
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t per = 0;
    for (int k = 0; k < PER_PEER; k++)
        per += size_of(k);
    int npeers = size - 1;
    char *out = malloc(per * (size_t)(npeers ? npeers : 1)), *in = malloc(per * (size_t)(npeers ? npeers : 1));
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(2 * PER_PEER * (npeers ? npeers : 1)));
    for (int round = 0; round < ROUNDS; round++) {
        /* sends first: in round 0 nobody has talked to anybody yet */
        int nr = 0;
        size_t at = 0;
        for (int d = 1; d < size; d++) {
            int dst = (rank + d) % size;
            for (int k = 0; k < PER_PEER; k++) {
                size_t n = size_of(k);
                for (size_t i = 0; i < n; i++)
                    out[at + i] = (char)pattern(i, rank, dst, k, round);
                MPI_Isend(out + at, (int)n, MPI_BYTE, dst, k, MPI_COMM_WORLD, &reqs[nr++]);
                at += n;
            }
        }
        /* then receives: by source in rounds 0 and 2 (each peer's block in order), and by
         * MPI_ANY_SOURCE in round 1 (the tag then says which of the peer's messages it is) */
        if (round != 1) {
            at = 0;
            for (int d = 1; d < size; d++) {
                int src = (rank - d + size) % size;
                for (int k = 0; k < PER_PEER; k++) {
                    MPI_Irecv(in + at, (int)size_of(k), MPI_BYTE, src, k, MPI_COMM_WORLD, &reqs[nr++]);
                    at += size_of(k);
                }
            }
            MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE);
            at = 0;
            for (int d = 1; d < size; d++) {
                int src = (rank - d + size) % size;
                for (int k = 0; k < PER_PEER; k++) {
                    size_t n = size_of(k), bad = n;
                    for (size_t i = 0; i < n && bad == n; i++)
                        if ((unsigned char)in[at + i] != pattern(i, src, rank, k, round))
                            bad = i;
                    CHECK(bad == n, "round %d: message %d from %d wrong at byte %zu of %zu", round, k, src, bad, n);
                    at += n;
                }
            }
        } else {
            char *one = malloc(1 << 20);
            int *next = calloc((size_t)size, sizeof *next);
            for (int m = 0; m < npeers * PER_PEER; m++) {
                MPI_Status st;
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                int src = st.MPI_SOURCE, k = st.MPI_TAG, count;
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(k == next[src], "round 1: from %d came message %d, expected %d first", src, k, next[src]);
                CHECK((size_t)count == size_of(k), "round 1: message %d from %d has %d bytes", k, src, count);
                MPI_Recv(one, count, MPI_BYTE, src, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                size_t bad = (size_t)count;
                for (size_t i = 0; i < (size_t)count && bad == (size_t)count; i++)
                    if ((unsigned char)one[i] != pattern(i, src, rank, k, round))
                        bad = i;
                CHECK(bad == (size_t)count, "round 1: message %d from %d wrong at byte %zu", k, src, bad);
                next[src] = k + 1;
            }
            MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE); /* the sends */
            free(one);
            free(next);
        }
        /* A process whose sends of this round all completed (eager ones complete unmatched)
         * would otherwise start the next round while others still probe for this one's
         * messages with MPI_ANY_SOURCE and MPI_ANY_TAG, which may then match the next round's. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(out);
    free(in);
    free(reqs);
    return mt_finish();
}
