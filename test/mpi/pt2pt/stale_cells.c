/* Stale cells: a ring cell where the next frame will start must never look committed before it
 * is, even when an older lap left payload bytes there (shm.c, frame_end: cells cleared ahead of
 * the head after each commit, or just before it). Every payload here is made of 32-bit words
 * holding the frame numbers due soon after it (the values a cell's commit word will be waited
 * for), so a cell left uncleared looks committed with a wrong length and envelope, and the data
 * check or the matching fails. Mixed sizes from 0 to 3000 bytes go one way in bursts and both
 * ways in ping-pongs (which rewind the rings, "Rewind" in shm.md), between every pair of
 * neighbours in a ring of processes; the testlist runs it with 4 KiB rings too, which lap every
 * few dozen frames. Every byte that arrives is checked. */
#include "mpitest.h"

#include <stdint.h>

#define MAXB 3000
#define ROUNDS 20000

static int size_of(int i)
{
    static const int sizes[] = {0, 4, 8, 24, 40, 64, 100, 200, 300, 600, 1000, 1500, 2500, MAXB};
    return sizes[(i * 7 + i / 13) % (int)(sizeof sizes / sizeof *sizes)];
}

/* Word w of message i from `src`: frame numbers near i (from i - 64 to i + 191), and the
 * sender, so a wrong message is told apart too. */
static uint32_t word(int src, int i, int w)
{
    return (uint32_t)(i + 1 - 64 + (w % 256)) ^ ((uint32_t)src << 24);
}

static void fill(uint32_t *buf, int src, int i, int bytes)
{
    for (int w = 0; w < (bytes + 3) / 4; w++)
        buf[w] = word(src, i, w);
}

static void check(const uint32_t *buf, int src, int i, int bytes, int got, const char *how)
{
    CHECK(got == bytes, "%s: message %d from %d has %d bytes, want %d", how, i, src, got, bytes);
    unsigned char want[MAXB + 4];
    fill((uint32_t *)want, src, i, bytes);
    int bad = -1;
    for (int b = 0; b < bytes && bad < 0; b++)
        if (((const unsigned char *)buf)[b] != want[b])
            bad = b;
    CHECK(bad < 0, "%s: message %d from %d (%d bytes) differs at byte %d", how, i, src, bytes, bad);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    uint32_t out[MAXB / 4 + 1], in[MAXB / 4 + 1];
    MPI_Status st;
    int got;
    for (int i = 0; i < ROUNDS;) {
        /* A burst one way round the ring: everyone sends k messages right, receives k from left. */
        int k = 1 + i % 9;
        MPI_Request reqs[9];
        static uint32_t burst[9][MAXB / 4 + 1];
        for (int j = 0; j < k; j++) {
            fill(burst[j], rank, i + j, size_of(i + j));
            MPI_Isend(burst[j], size_of(i + j), MPI_BYTE, right, 1, MPI_COMM_WORLD, &reqs[j]);
        }
        for (int j = 0; j < k; j++) {
            MPI_Recv(in, MAXB, MPI_BYTE, left, 1, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &got);
            check(in, left, i + j, size_of(i + j), got, "burst");
        }
        MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
        i += k;
        /* Ping-pongs with one neighbour (even sends first; an odd-sized ring's last pairs with
         * itself only when alone). */
        if (size > 1) {
            int partner = rank % 2 == 0 ? (rank + 1 < size ? rank + 1 : -1) : rank - 1;
            for (int j = 0; partner >= 0 && j < 5; j++) {
                int n = size_of(i + j * 3);
                fill(out, rank, i + j, n);
                if (rank % 2 == 0) {
                    MPI_Send(out, n, MPI_BYTE, partner, 2, MPI_COMM_WORLD);
                    MPI_Recv(in, MAXB, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &st);
                } else {
                    MPI_Recv(in, MAXB, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &st);
                    MPI_Send(out, n, MPI_BYTE, partner, 2, MPI_COMM_WORLD);
                }
                MPI_Get_count(&st, MPI_BYTE, &got);
                check(in, partner, i + j, n, got, "ping-pong");
            }
            i += 5;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return mt_finish();
}
