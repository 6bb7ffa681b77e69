/* rndv_ways.c: rendezvous messages between two processes of a node, which the receiver either
 * asks to be streamed through the ring or shares with the sender (each copies a part), choosing
 * by what its recent transfers measured and trying the other way now and then (pt2pt.c,
 * "How a rendezvous ... moves"). Whichever way each message takes, its data must arrive whole:
 * ping-pongs of sizes around the limits (just above the long-eager limit, between, just below
 * the ring's size, with receive buffers 16 bytes off a page as malloc gives them, and a receive
 * buffer larger than the message), every message's bytes checked.
 *
 * With the argument `both`, every process that chose the way of at least 100 of its 200
 * rendezvous receives by its timings (pt2pt.rndv_chosen: the transport offered both, so the
 * partner is on its node, cross-memory attach works and the process did not pull the message
 * alone) checks through MPI_T (pt2pt.rndv_streamed, pt2pt.rndv_shared) that it took each way at
 * least once (the first exploring run is at the 64th choice). This shows that the receiver
 * explores; that it then keeps the faster way, the benchmarks show (doc/performance.md). Ranks work in pairs (0-1, 2-3, ...); a
 * rank without a partner sends to itself. */
#include "mpitest.h"

#include <stdint.h>

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        b[i] = (unsigned char)(x >> 24);
    }
}

static size_t wrong_bytes(const unsigned char *b, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        bad += b[i] != (unsigned char)(x >> 24);
    }
    return bad;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    bool both = argc > 1 && strcmp(argv[1], "both") == 0;
    const size_t sizes[] = {(256 << 10) + 1, 300000, 512 << 10, (1 << 20) + 4095, (2 << 20) - 64};
    const size_t most = 2 << 20;
    unsigned char *sbase = malloc(most + 64), *rbase = malloc(most + 4096 + 64);
    unsigned char *sbuf = sbase + 16, *rbuf = rbase + 16;
    int rounds = 40;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        for (int i = 0; i < rounds; i++) {
            unsigned seed = (unsigned)(k * 1000 + (size_t)i * 2 + (rank < peer));
            fill(sbuf, n, seed);
            memset(rbuf, 0xa5, n + 4096);
            MPI_Status st;
            int count = -1;
            /* the receive buffer is larger than the message every other time */
            int cap = (int)(i % 2 ? n + 4096 : n);
            if (rank == peer) {
                MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, peer, i, rbuf, cap, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
            } else if (rank < peer) {
                MPI_Send(sbuf, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
                MPI_Recv(rbuf, cap, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(rbuf, cap, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
                MPI_Send(sbuf, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
            }
            MPI_Get_count(&st, MPI_BYTE, &count);
            unsigned from_seed = peer == rank ? seed : (unsigned)(k * 1000 + (size_t)i * 2 + (peer < rank));
            size_t bad = wrong_bytes(rbuf, n, from_seed);
            CHECK(count == (int)n && bad == 0, "message %d of %zu bytes from rank %d: %d bytes arrived, %zu wrong", i,
                  n, peer, count, bad);
            size_t beyond = 0;
            for (size_t j = n; j < (size_t)cap; j++)
                beyond += rbuf[j] != 0xa5;
            CHECK(beyond == 0, "message %d of %zu bytes: %zu bytes past its end were written", i, n, beyond);
        }
    }
    unsigned long long streamed = mt_pvar_value("pt2pt.rndv_streamed"), shared = mt_pvar_value("pt2pt.rndv_shared");
    unsigned long long chosen = mt_pvar_value("pt2pt.rndv_chosen");
    CHECK(chosen <= streamed + shared, "%llu choices, but only %llu streamed and %llu shared", chosen, streamed,
          shared);
    if (both && chosen >= 100)
        CHECK(streamed > 0 && shared > 0,
              "the receiver never tried one of the ways: %llu streamed, %llu shared, %llu chosen of %d rendezvous "
              "receives",
              streamed, shared, chosen, rounds * (int)(sizeof sizes / sizeof *sizes));
    free(sbase);
    free(rbase);
    return mt_finish();
}
