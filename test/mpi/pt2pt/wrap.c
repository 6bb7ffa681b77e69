/* Wrap: runs the transport's frame counters and the node collectives' counters across their
 * wrap-around at 2^32. The testlist starts them just below it (COURIER_DEBUG_SEQ_START); this
 * program then streams well over that many frames between every pair of ranks (a ring in both
 * directions, every protocol's sizes) and runs barriers, reduces and allreduces, checking every
 * byte and every result. Without the setting it is an ordinary stress test. */
#include "mpitest.h"

#include <stdint.h>

#define ROUNDS 1500
#define MAXB (40 * 1024)

static unsigned char pattern(int src, int round, int i)
{
    return (unsigned char)(src * 131 + round * 7 + i * 13 + (i >> 8));
}

static int size_of(int round)
{
    /* (1023 to 1025: where a frame's payload moves to a cell of its own, shm.c hdr_room) */
    static const int sizes[] = {0, 1, 8, 100, 1000, 1023, 1024, 1025, 4000, 16384, 32768, MAXB};
    return sizes[round % (int)(sizeof sizes / sizeof sizes[0])];
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int right = (mt_rank + 1) % n, left = (mt_rank + n - 1) % n;
    unsigned char *out = malloc(MAXB), *in = malloc(MAXB), *in2 = malloc(MAXB);
    for (int round = 0; round < ROUNDS; round++) {
        int bytes = size_of(round);
        for (int i = 0; i < bytes; i++)
            out[i] = pattern(mt_rank, round, i);
        /* Both directions of the ring, nonblocking, plus a blocking exchange. */
        MPI_Request rq[4];
        MPI_Irecv(in, bytes, MPI_BYTE, left, round, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(in2, bytes, MPI_BYTE, right, round, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(out, bytes, MPI_BYTE, right, round, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(out, bytes, MPI_BYTE, left, round, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        int bad = -1;
        for (int i = 0; i < bytes && bad < 0; i++)
            if (in[i] != pattern(left, round, i) || in2[i] != pattern(right, round, i))
                bad = i;
        CHECK(bad < 0, "round %d: %d bytes from ranks %d/%d differ at byte %d", round, bytes, left, right, bad);

        int small = mt_rank * 1000 + round, sum = 0, expect = n * round + 1000 * n * (n - 1) / 2;
        MPI_Allreduce(&small, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == expect, "round %d: allreduce gave %d, expected %d", round, sum, expect);
        int root = round % n, max = -1;
        MPI_Reduce(&small, &max, 1, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
        if (mt_rank == root)
            CHECK(max == (n - 1) * 1000 + round, "round %d: reduce gave %d", round, max);
        if (round % 3 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    free(out);
    free(in);
    free(in2);
    return mt_finish();
}
