/* pieces.c: messages of a few KiB to a process of the same node go long eager in pieces of
 * 4 KiB (COURIER_SHM_PIECES_FROM; src/xport/shm/shm.c, shm_stream_frame), so that the receiver
 * copies one piece out while the sender copies the next in. This program sends every size
 * around the boundaries that decides (one piece, eight pieces, the eager limit, the largest
 * frame of small rings), contiguous and strided, to receives posted before the message comes
 * and after it came, from MPI_ANY_SOURCE, and as synchronous sends (which stay eager: they need
 * the receiver's answer), around a ring of all processes; every byte is checked.
 * With the argument `pieces`, process 0 checks through MPI_T (pt2pt.long_eager) that a message
 * of 8 KiB to process 1 went long eager and one of 4 KiB went eagerly; with `whole`, that
 * neither did (COURIER_SHM_PIECES_FROM=0). With `buffered` (run with long eager turned off,
 * COURIER_LONG_EAGER_MAX=0), pairs of processes each send 4 and 8 KiB to the other with MPI_Send
 * before receiving: a message that cannot go in pieces stays eager within the eager limit, as
 * before pieces existed, so neither send waits for its receive (were they sent by rendezvous,
 * the pair would deadlock). */
#include "mpitest.h"

#include <string.h>

static unsigned char pattern(int src, int size, int mode, int i)
{
    return (unsigned char)(src * 31 + size * 7 + mode * 57 + i * 13 + (i >> 8));
}

static const int sizes[] = {0,     1,     4095,  4096,  4097,  6000,  8191,  8192,  8193,  12288, 16383,
                            16384, 16385, 20000, 32767, 32768, 32769, 40000, 65536, 65537, 100000};
enum { POSTED, UNEXPECTED, ANY_SOURCE, STRIDED, SYNC, MODES };
static const char *mode_name[] = {"posted", "unexpected", "any source", "strided", "synchronous"};

/* Strided: every other int, so the sender packs and the receiver unpacks each piece. */
static void run(int size, int mode, int rank, int n, unsigned char *sbuf, unsigned char *rbuf)
{
    int to = (rank + 1) % n, from = (rank + n - 1) % n, count = size;
    MPI_Datatype dt = MPI_BYTE;
    size_t span = (size_t)size;
    if (mode == STRIDED) {
        count = size / 4;
        MPI_Type_vector(count, 1, 2, MPI_INT, &dt);
        MPI_Type_commit(&dt);
        count = 1;
        span = (size_t)(size / 4) * 8;
    }
    int payload = mode == STRIDED ? size / 4 * 4 : size;
    /* the payload's bytes, at their places in the (strided) buffer */
    for (int i = 0; i < payload; i++)
        sbuf[mode == STRIDED ? (size_t)(i / 4) * 8 + (size_t)(i % 4) : (size_t)i] = pattern(rank, size, mode, i);
    memset(rbuf, 0xEE, span + 8);
    MPI_Request sreq, rreq;
    MPI_Status st;
    int src = mode == ANY_SOURCE ? MPI_ANY_SOURCE : from;
    if (mode == SYNC)
        MPI_Issend(sbuf, count, dt, to, size, MPI_COMM_WORLD, &sreq);
    else
        MPI_Isend(sbuf, count, dt, to, size, MPI_COMM_WORLD, &sreq);
    if (mode == UNEXPECTED) { /* the message comes (the barrier's progress moves it) before it is asked for */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(rbuf, count, dt, src, size, MPI_COMM_WORLD, &st);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    } else {
        MPI_Irecv(rbuf, count, dt, src, size, MPI_COMM_WORLD, &rreq);
        MPI_Wait(&rreq, &st);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    }
    int got;
    MPI_Get_count(&st, MPI_BYTE, &got);
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == size && got == payload,
          "%s %d bytes: status source %d tag %d count %d, expected %d %d %d", mode_name[mode], size, st.MPI_SOURCE,
          st.MPI_TAG, got, from, size, payload);
    int bad = -1;
    for (int i = 0; i < payload && bad < 0; i++)
        if (rbuf[mode == STRIDED ? (size_t)(i / 4) * 8 + (size_t)(i % 4) : (size_t)i] != pattern(from, size, mode, i))
            bad = i;
    CHECK(bad < 0, "%s %d bytes from rank %d: byte %d differs", mode_name[mode], size, from, bad);
    if (mode == STRIDED) { /* the gaps between the ints are left alone */
        for (int i = 0; i < payload / 4 && bad < 0; i++)
            if (rbuf[(size_t)i * 8 + 4] != 0xEE)
                bad = i;
        CHECK(bad < 0, "strided %d bytes: the gap after int %d was written", size, bad);
        MPI_Type_free(&dt);
    }
    CHECK(rbuf[span] == 0xEE, "%s %d bytes: written past the end of the receive buffer", mode_name[mode], size);
}

/* Whether a message of `bytes` from process 0 to process 1 went long eager. */
static int went_long_eager(int rank, int bytes, unsigned char *buf)
{
    unsigned long long before = rank == 0 ? mt_pvar_value("pt2pt.long_eager") : 0;
    if (rank == 0)
        MPI_Send(buf, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return rank == 0 && mt_pvar_value("pt2pt.long_eager") != before;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    unsigned char *sbuf = malloc(2 * 100000 + 64), *rbuf = malloc(2 * 100000 + 64);
    for (int m = 0; m < MODES; m++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            run(sizes[s], m, rank, n, sbuf, rbuf);
    const char *want = argc > 1 ? argv[1] : "";
    if (!strcmp(want, "buffered") && (rank ^ 1) < n)
        for (int bytes = 4096; bytes <= 8192; bytes += 4096) {
            for (int i = 0; i < bytes; i++)
                sbuf[i] = pattern(rank, bytes, MODES, i);
            MPI_Send(sbuf, bytes, MPI_BYTE, rank ^ 1, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, bytes, MPI_BYTE, rank ^ 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int bad = -1;
            for (int i = 0; i < bytes && bad < 0; i++)
                if (rbuf[i] != pattern(rank ^ 1, bytes, MODES, i))
                    bad = i;
            CHECK(bad < 0, "buffered %d bytes from rank %d: byte %d differs", bytes, rank ^ 1, bad);
        }
    if (n >= 2 && (!strcmp(want, "pieces") || !strcmp(want, "whole"))) {
        int at8k = went_long_eager(rank, 8192, sbuf), at4k = went_long_eager(rank, 4096, sbuf);
        if (rank == 0 && !strcmp(want, "pieces"))
            CHECK(at8k && !at4k, "8 KiB went long eager: %d (expected 1), 4 KiB: %d (expected 0)", at8k, at4k);
        if (rank == 0 && !strcmp(want, "whole"))
            CHECK(!at8k && !at4k, "8 KiB went long eager: %d, 4 KiB: %d (expected 0 and 0)", at8k, at4k);
    }
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
