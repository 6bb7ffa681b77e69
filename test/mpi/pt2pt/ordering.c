/* Non-overtaking: messages between one pair of processes that match the same receive arrive in
 * the order they were sent, whatever their protocol.
 *   (a) pairs: 2000 messages with one tag, eager and rendezvous sizes interleaved, sent with
 *       Isend/Issend/Send in windows and received with Recv or batches of Irecv; every message
 *       carries its sequence number and a pattern derived from it;
 *   (b) all ranks to rank 0, which receives with MPI_ANY_SOURCE and MPI_ANY_TAG: per-source
 *       order holds, the tag and size of each message are the ones sent, nothing is lost or
 *       duplicated;
 *   (c) posted-receive order: receives that all match the same messages are satisfied in the
 *       order they were posted (specific and wildcard receives mixed);
 *   (d) selection: a receive for a later tag takes the later message, leaving the earlier one
 *       (with another tag) for the next receive;
 *   (e) a flood: 3000 eager messages sent with blocking MPI_Send (more than the shared-memory
 *       ring holds) before the receiver posts any receive, then received in order. They total
 *       about 3 MiB, within the receiver's budget for early messages (COURIER_UNEXPECTED_BUDGET,
 *       8 MiB by default): past it blocking sends wait for their receives, as the standard
 *       allows, and this program would not be safe (see unexpected_flood.c for what must work). */
#include "mpitest.h"

#include <stdint.h>

#define NMSG 2000
#define WINDOW 50
#define MAXBYTES 70000

/* The size of message `seq` of a stream: mostly small, every fifth one rendezvous. */
static int msg_bytes(unsigned seq)
{
    uint32_t h = seq * 2654435761u;
    if (seq % 5 == 3)
        return 16385 + (int)(h % (MAXBYTES - 16385));
    if (seq % 5 == 1)
        return 16384;
    return 4 + (int)((h >> 8) % 512) * 4;
}

static void fill(unsigned char *buf, int bytes, unsigned seq, unsigned src)
{
    memcpy(buf, &seq, 4);
    for (int i = 4; i < bytes; i++)
        buf[i] = (unsigned char)(i * 7 + seq * 13 + src * 101);
}

/* 1 when the payload is the one `fill` made for (seq, src). */
static int intact(const unsigned char *buf, int bytes, unsigned seq, unsigned src)
{
    unsigned got;
    memcpy(&got, buf, 4);
    if (got != seq)
        return 0;
    for (int i = 4; i < bytes; i++)
        if (buf[i] != (unsigned char)(i * 7 + seq * 13 + src * 101))
            return 0;
    return 1;
}

static void pair_stream(int rank, int size)
{
    int partner = rank ^ 1;
    if (partner >= size)
        return;
    const int tag = 42;
    unsigned char *bufs = malloc((size_t)WINDOW * MAXBYTES);
    MPI_Request reqs[WINDOW];
    MPI_Status sts[WINDOW];
    if (rank % 2 == 0) { /* sender */
        for (unsigned base = 0; base < NMSG; base += WINDOW) {
            int w = (int)(base / WINDOW);
            for (unsigned k = 0; k < WINDOW; k++) {
                unsigned seq = base + k;
                unsigned char *b = bufs + (size_t)k * MAXBYTES;
                fill(b, msg_bytes(seq), seq, (unsigned)rank);
                reqs[k] = MPI_REQUEST_NULL;
                if (w % 3 == 0)
                    MPI_Isend(b, msg_bytes(seq), MPI_BYTE, partner, tag, MPI_COMM_WORLD, &reqs[k]);
                else if (w % 3 == 1)
                    MPI_Issend(b, msg_bytes(seq), MPI_BYTE, partner, tag, MPI_COMM_WORLD, &reqs[k]);
                else if (k % 2)
                    MPI_Send(b, msg_bytes(seq), MPI_BYTE, partner, tag, MPI_COMM_WORLD);
                else
                    MPI_Isend(b, msg_bytes(seq), MPI_BYTE, partner, tag, MPI_COMM_WORLD, &reqs[k]);
            }
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
        }
    } else { /* receiver */
        unsigned seq = 0;
        int batch = 0;
        while (seq < NMSG) {
            /* alternate: one blocking receive at a time, or a batch of posted receives */
            int n = batch++ % 2 ? 1 + (int)(seq % 7) : WINDOW / 2 + 3;
            if (seq + (unsigned)n > NMSG)
                n = (int)(NMSG - seq);
            if (n == 1) {
                MPI_Recv(bufs, MAXBYTES, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &sts[0]);
            } else {
                for (int k = 0; k < n; k++)
                    MPI_Irecv(bufs + (size_t)k * MAXBYTES, MAXBYTES, MPI_BYTE, partner, tag, MPI_COMM_WORLD,
                              &reqs[k]);
                MPI_Waitall(n, reqs, sts);
            }
            for (int k = 0; k < n; k++, seq++) {
                int count;
                MPI_Get_count(&sts[k], MPI_BYTE, &count);
                CHECK(count == msg_bytes(seq) && intact(bufs + (size_t)k * MAXBYTES, count, seq, (unsigned)partner),
                      "message %u from %d: %d bytes (expected %d), sequence number %u", seq, partner, count,
                      msg_bytes(seq), *(unsigned *)(bufs + (size_t)k * MAXBYTES));
                if (mt_errors > 10)
                    mt_finish(); /* exits: the job stops */
            }
        }
    }
    free(bufs);
}

static void many_to_one(int rank, int size)
{
    const unsigned per_sender = size > 8 ? 150 : 300;
    unsigned char *buf = malloc(MAXBYTES);
    if (rank != 0) {
        MPI_Request reqs[WINDOW];
        unsigned char *bufs = malloc((size_t)WINDOW * MAXBYTES);
        for (unsigned base = 0; base < per_sender; base += WINDOW) {
            int n = (int)(per_sender - base < WINDOW ? per_sender - base : WINDOW);
            for (int k = 0; k < n; k++) {
                unsigned seq = base + (unsigned)k;
                unsigned char *b = bufs + (size_t)k * MAXBYTES;
                int bytes = msg_bytes(seq * 3 + (unsigned)rank);
                fill(b, bytes, seq, (unsigned)rank);
                MPI_Isend(b, bytes, MPI_BYTE, 0, (int)((seq + (unsigned)rank) % 5), MPI_COMM_WORLD, &reqs[k]);
            }
            MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        }
        free(bufs);
    } else {
        unsigned *next = calloc((size_t)size, sizeof *next);
        unsigned total = per_sender * (unsigned)(size - 1);
        for (unsigned i = 0; i < total; i++) {
            if (mt_errors > 10)
                mt_finish(); /* exits: the job stops */
            MPI_Status st;
            MPI_Recv(buf, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE, count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (src <= 0 || src >= size) {
                CHECK(0, "a message from rank %d", src);
                continue;
            }
            unsigned seq = next[src]++, got;
            memcpy(&got, buf, 4);
            CHECK(got == seq, "from %d: sequence number %u arrived, expected %u", src, got, seq);
            CHECK(st.MPI_TAG == (int)((seq + (unsigned)src) % 5), "from %d message %u: tag %d", src, seq, st.MPI_TAG);
            CHECK(count == msg_bytes(seq * 3 + (unsigned)src) && intact(buf, count, seq, (unsigned)src),
                  "from %d message %u: %d bytes, expected %d, or the data differs", src, seq, count,
                  msg_bytes(seq * 3 + (unsigned)src));
        }
        for (int r = 1; r < size; r++)
            CHECK(next[r] == per_sender, "%u messages from rank %d, expected %u", next[r], r, per_sender);
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a message is left over");
        free(next);
    }
    free(buf);
}

/* (c): receiver `rank` posts several receives that all match the sender's messages. */
static void posting_order(int rank, int size, int bytes)
{
    int partner = rank ^ 1;
    if (partner >= size)
        return;
    enum { N = 4 };
    const int tag = 9;
    unsigned char *bufs = malloc((size_t)N * (size_t)bytes);
    if (rank % 2 == 1) {
        MPI_Request reqs[N];
        MPI_Status sts[N];
        /* specific, any source, any tag, both wildcards: every one matches every message */
        MPI_Irecv(bufs, bytes, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(bufs + bytes, bytes, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &reqs[1]);
        MPI_Irecv(bufs + 2 * (size_t)bytes, bytes, MPI_BYTE, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[2]);
        MPI_Irecv(bufs + 3 * (size_t)bytes, bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[3]);
        MPI_Send(NULL, 0, MPI_BYTE, partner, 1, MPI_COMM_WORLD); /* posted: go */
        MPI_Waitall(N, reqs, sts);
        for (unsigned k = 0; k < N; k++) {
            CHECK(intact(bufs + k * (size_t)bytes, bytes, k, (unsigned)partner) && sts[k].MPI_SOURCE == partner &&
                      sts[k].MPI_TAG == tag,
                  "%d-byte messages: receive %u (posted %u-th) got message %u", bytes, k, k,
                  *(unsigned *)(bufs + k * (size_t)bytes));
        }
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request reqs[N];
        for (unsigned k = 0; k < N; k++) {
            fill(bufs + k * (size_t)bytes, bytes, k, (unsigned)rank);
            MPI_Isend(bufs + k * (size_t)bytes, bytes, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &reqs[k]);
        }
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
    }
    free(bufs);
}

/* (d): a receive for tag B takes the message sent after a tag-A one, which stays queued. */
static void selection(int rank, int size, int bytes)
{
    int partner = rank ^ 1;
    if (partner >= size)
        return;
    unsigned char *a = malloc((size_t)bytes), *b = malloc((size_t)bytes);
    if (rank % 2 == 0) {
        MPI_Request reqs[3];
        fill(a, bytes, 100, (unsigned)rank);
        fill(b, bytes, 200, (unsigned)rank);
        MPI_Isend(a, bytes, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(b, bytes, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &reqs[1]);
        MPI_Isend(b, 4, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &reqs[2]);
        MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
    } else {
        MPI_Status st;
        int count;
        memset(a, 0, (size_t)bytes);
        memset(b, 0, (size_t)bytes);
        MPI_Recv(b, bytes, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_TAG == 2 && intact(b, bytes, 200, (unsigned)partner), "%d bytes: the tag-2 receive got tag %d",
              bytes, st.MPI_TAG);
        MPI_Recv(a, bytes, MPI_BYTE, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_TAG == 1 && intact(a, bytes, 100, (unsigned)partner), "%d bytes: the next receive got tag %d",
              bytes, st.MPI_TAG);
        MPI_Recv(a, bytes, MPI_BYTE, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(st.MPI_TAG == 1 && count == 4 && intact(a, 4, 200, (unsigned)partner),
              "%d bytes: the last receive got tag %d, %d bytes", bytes, st.MPI_TAG, count);
    }
    free(a);
    free(b);
}

/* (e): a flood of small messages sent with blocking MPI_Send (the shared-memory ring fills up and
 * the sender must wait for room) before the receiver posts anything; then all arrive in order. */
static void flood(int rank, int size)
{
    int partner = rank ^ 1;
    if (partner >= size)
        return;
    enum { NF = 3000 };
    unsigned char *b = malloc(20000);
    if (rank % 2 == 0) {
        for (unsigned seq = 0; seq < NF; seq++) {
            int bytes = seq % 10 == 0 ? 4 : (int)(seq * 37 % 2045) + 4; /* eager, 1 KiB on average */
            fill(b, bytes, seq, (unsigned)rank);
            MPI_Send(b, bytes, MPI_BYTE, partner, 50, MPI_COMM_WORLD);
        }
        MPI_Send(NULL, 0, MPI_BYTE, partner, 51, MPI_COMM_WORLD); /* all sent */
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, partner, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (unsigned seq = 0; seq < NF; seq++) {
            MPI_Status st;
            int count, bytes = seq % 10 == 0 ? 4 : (int)(seq * 37 % 2045) + 4;
            MPI_Recv(b, 20000, MPI_BYTE, partner, 50, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == bytes && intact(b, count, seq, (unsigned)partner),
                  "flood: message %u: %d bytes (expected %d), sequence number %u", seq, count, bytes, *(unsigned *)b);
            if (mt_errors > 10)
                mt_finish(); /* exits */
        }
    }
    free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pair_stream(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    flood(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    many_to_one(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    const int sizes[] = {16, 16384, 16385, 100000};
    for (int i = 0; i < 4; i++) {
        posting_order(rank, size, sizes[i]);
        selection(rank, size, sizes[i]);
    }
    return mt_finish();
}
