/* MPI_Cancel and MPI_Test_cancelled.
 *   - a posted receive that never matches: cancelled, nothing written to its buffer; a message
 *     sent later with that tag goes to the next receive (also for MPI_ANY_SOURCE/MPI_ANY_TAG);
 *   - a receive that already matched: not cancelled, its data and status intact;
 *   - a rendezvous MPI_Isend, and a small MPI_Issend, before the receiver posts anything:
 *     cancelled, and a later receive on that tag gets the NEXT message;
 *   - an eager send that already completed, and a rendezvous send that completed: not
 *     cancelled, and the message arrives;
 *   - a started persistent receive: cancelled, then restarted and used;
 *   - cancelling a send removes that message only: an earlier message of the same sender,
 *     still unreceived, arrives;
 *   - the send of a message the receiver took with MPI_Mprobe: not cancelled, and it arrives;
 *   - cancelling right after sending (receive posted before or after, eager, long eager or rendezvous,
 *     standard or synchronous): whatever the outcome, a cancelled message never arrives and
 *     one that was not cancelled does.
 *   - an unmatched synchronous send to this process itself: the first MPI_Request_get_status
 *     after MPI_Cancel already reports it cancelled (mpi4py polls once, then receives).
 * Ranks work in pairs (0-1, 2-3, ...) doing all of it both ways at once; a rank without a
 * partner does it with itself. */
#include "mpitest.h"

#define BIG 100000 /* ints: 400 KB, above the long-eager limit (256 KiB): rendezvous */

static int rank, size, peer;
static MPI_Comm syncc; /* a duplicate: these messages cannot match the wildcard receives */

static void sync_peer(void)
{
    MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 0, NULL, 0, MPI_BYTE, peer, 0, syncc, MPI_STATUS_IGNORE);
}

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = i * 13 + seed * 1000003;
}

static int intact(const int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != i * 13 + seed * 1000003)
            return 0;
    return 1;
}

static int cancelled(const MPI_Status *st)
{
    int flag = -1;
    MPI_Test_cancelled(st, &flag);
    return flag;
}

static void until_complete(MPI_Request r)
{
    for (int flag = 0; !flag;)
        MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
}

/* Receives (peer, tag) and checks it is the n-int message `seed`. */
static void expect(int tag, int n, int seed, const char *what)
{
    int *b = calloc(BIG, sizeof(int)), count;
    MPI_Status st;
    MPI_Recv(b, BIG, MPI_INT, peer, tag, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n && intact(b, n, seed) && !cancelled(&st), "%s: %d ints arrived (expected %d) or wrong data",
          what, count, n);
    free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    MPI_Comm_dup(MPI_COMM_WORLD, &syncc);
    int *sbuf = malloc(BIG * sizeof(int)), *sbuf2 = malloc(BIG * sizeof(int)), *rbuf = malloc(BIG * sizeof(int));
    MPI_Request r, s;
    MPI_Status st;
    int count;

    /* A receive that never matches. */
    for (int k = 0; k < 3; k++) {
        int src = k == 1 ? MPI_ANY_SOURCE : peer, tag = k == 2 ? MPI_ANY_TAG : 900;
        memset(rbuf, 0x6b, 400);
        CHECK_CLASS(MPI_Irecv(rbuf, 100, MPI_INT, src, tag, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        CHECK_CLASS(MPI_Cancel(&r), MPI_SUCCESS);
        CHECK(r != MPI_REQUEST_NULL, "MPI_Cancel freed the request");
        if (k == 1) {
            for (int flag = 0; !flag;)
                CHECK_CLASS(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
        } else {
            CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
        }
        CHECK(cancelled(&st) == 1, "receive %d (source %d, tag %d): not cancelled", k, src, tag);
        int untouched = 1;
        for (int i = 0; i < 400; i++)
            untouched &= ((unsigned char *)rbuf)[i] == 0x6b;
        CHECK(untouched, "a cancelled receive wrote its buffer");
    }
    sync_peer();
    fill(sbuf, 100, 1);
    MPI_Send(sbuf, 100, MPI_INT, peer, 900, MPI_COMM_WORLD);
    expect(900, 100, 1, "the message after cancelled receives");

    /* A receive that already matched. */
    memset(rbuf, 0, BIG * sizeof(int));
    MPI_Irecv(rbuf, BIG, MPI_INT, peer, 901, MPI_COMM_WORLD, &r);
    fill(sbuf, 50, 2);
    MPI_Send(sbuf, 50, MPI_INT, peer, 901, MPI_COMM_WORLD);
    until_complete(r);
    CHECK_CLASS(MPI_Cancel(&r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(!cancelled(&st) && count == 50 && st.MPI_SOURCE == peer && st.MPI_TAG == 901 && intact(rbuf, 50, 2),
          "cancel of a completed receive: cancelled %d, count %d, source %d, tag %d", cancelled(&st), count,
          st.MPI_SOURCE, st.MPI_TAG);

    /* Sends nobody has received yet: a rendezvous Isend and a small Issend. */
    fill(sbuf, BIG, 3);
    CHECK_CLASS(MPI_Isend(sbuf, BIG, MPI_INT, peer, 902, MPI_COMM_WORLD, &s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Cancel(&s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&s, &st), MPI_SUCCESS);
    CHECK(cancelled(&st) == 1, "a rendezvous MPI_Isend nobody received was not cancelled");
    fill(sbuf2, 30, 4);
    CHECK_CLASS(MPI_Issend(sbuf2, 30, MPI_INT, peer, 903, MPI_COMM_WORLD, &s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Cancel(&s), MPI_SUCCESS);
    for (int flag = 0; !flag;)
        CHECK_CLASS(MPI_Test(&s, &flag, &st), MPI_SUCCESS);
    CHECK(cancelled(&st) == 1, "a small MPI_Issend nobody received was not cancelled");
    sync_peer(); /* both sides' cancellations are settled */
    fill(sbuf, 200, 5);
    MPI_Send(sbuf, 200, MPI_INT, peer, 902, MPI_COMM_WORLD);
    fill(sbuf2, 7, 6);
    MPI_Send(sbuf2, 7, MPI_INT, peer, 903, MPI_COMM_WORLD);
    expect(902, 200, 5, "the message after a cancelled rendezvous send");
    expect(903, 7, 6, "the message after a cancelled MPI_Issend");

    /* A completed eager send. */
    fill(sbuf, 100, 7);
    MPI_Isend(sbuf, 100, MPI_INT, peer, 904, MPI_COMM_WORLD, &s);
    until_complete(s);
    CHECK_CLASS(MPI_Cancel(&s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&s, &st), MPI_SUCCESS);
    CHECK(cancelled(&st) == 0, "a completed eager send was cancelled");
    expect(904, 100, 7, "a completed eager send after MPI_Cancel");

    /* A completed rendezvous send. */
    memset(rbuf, 0, BIG * sizeof(int));
    MPI_Irecv(rbuf, BIG, MPI_INT, peer, 905, MPI_COMM_WORLD, &r);
    sync_peer();
    fill(sbuf, BIG, 8);
    MPI_Isend(sbuf, BIG, MPI_INT, peer, 905, MPI_COMM_WORLD, &s);
    until_complete(s);
    CHECK_CLASS(MPI_Cancel(&s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&s, &st), MPI_SUCCESS);
    CHECK(cancelled(&st) == 0, "a completed rendezvous send was cancelled");
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(!cancelled(&st) && count == BIG && intact(rbuf, BIG, 8), "completed rendezvous send: %d ints arrived",
          count);

    /* A started persistent receive. */
    MPI_Recv_init(rbuf, BIG, MPI_INT, peer, 906, MPI_COMM_WORLD, &r);
    MPI_Start(&r);
    CHECK_CLASS(MPI_Cancel(&r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    CHECK(cancelled(&st) == 1 && r != MPI_REQUEST_NULL, "a started persistent receive was not cancelled");
    sync_peer();
    fill(sbuf, 60, 9);
    MPI_Send(sbuf, 60, MPI_INT, peer, 906, MPI_COMM_WORLD);
    memset(rbuf, 0, BIG * sizeof(int));
    MPI_Start(&r);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(!cancelled(&st) && count == 60 && intact(rbuf, 60, 9), "restarted persistent receive: %d ints", count);
    MPI_Request_free(&r);

    /* Cancelling removes that message and no other: an earlier message from the same sender
     * (whose request is already gone, so a new request may reuse its memory) still arrives,
     * and the cancelled one does not. */
    fill(sbuf2, 10, 12);
    MPI_Isend(sbuf2, 10, MPI_INT, peer, 909, MPI_COMM_WORLD, &s); /* eager: completes at once */
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    fill(sbuf, BIG, 13);
    MPI_Isend(sbuf, BIG, MPI_INT, peer, 909, MPI_COMM_WORLD, &s);
    MPI_Cancel(&s);
    MPI_Wait(&s, &st);
    int mine[2] = {cancelled(&st), 0}, theirs[2];
    MPI_Sendrecv(mine, 2, MPI_INT, peer, 1, theirs, 2, MPI_INT, peer, 1, syncc, MPI_STATUS_IGNORE);
    expect(909, 10, 12, "the message sent before a cancelled one");
    if (!theirs[0])
        expect(909, BIG, 13, "a send whose cancellation failed");

    /* A message taken by MPI_Mprobe is matched: cancelling its send fails, and it arrives. */
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : 40;
        MPI_Message m;
        fill(sbuf, n, 10 + big);
        memset(rbuf, 0, BIG * sizeof(int));
        if (big)
            MPI_Isend(sbuf, n, MPI_INT, peer, 907, MPI_COMM_WORLD, &s);
        else
            MPI_Issend(sbuf, n, MPI_INT, peer, 907, MPI_COMM_WORLD, &s);
        MPI_Mprobe(peer, 907, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        sync_peer(); /* both messages are taken */
        CHECK_CLASS(MPI_Cancel(&s), MPI_SUCCESS);
        CHECK_CLASS(MPI_Mrecv(rbuf, BIG, MPI_INT, &m, &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == n && intact(rbuf, n, 10 + big), "Mprobe'd message whose send was cancelled: %d ints", count);
        CHECK_CLASS(MPI_Wait(&s, &st), MPI_SUCCESS);
        CHECK(cancelled(&st) == 0, "the send of a message taken by MPI_Mprobe was cancelled (%s)",
              big ? "rendezvous MPI_Isend" : "MPI_Issend");
    }

    /* Cancelling right after sending, the receive posted before or after: whatever the outcome,
     * it must be consistent. A cancelled message never arrives (a replacement does), one that
     * was not cancelled arrives. */
    const int sizes[3] = {50, 25000 /* 100 KB: long eager */, BIG};
    for (int it = 0; it < 48; it++) {
        int n = sizes[it % 3], posted_first = (it / 3) % 2, sync = (it / 6) % 2, seed = 100 + it;
        int outcome[2], theirs[2];
        fill(sbuf, n, seed);
        fill(sbuf2, 20, seed + 1000);
        memset(rbuf, 0, BIG * sizeof(int));
        if (posted_first) {
            MPI_Irecv(rbuf, BIG, MPI_INT, peer, 908, MPI_COMM_WORLD, &r);
            sync_peer();
        }
        if (sync)
            MPI_Issend(sbuf, n, MPI_INT, peer, 908, MPI_COMM_WORLD, &s);
        else
            MPI_Isend(sbuf, n, MPI_INT, peer, 908, MPI_COMM_WORLD, &s);
        CHECK_CLASS(MPI_Cancel(&s), MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&s, &st), MPI_SUCCESS);
        outcome[0] = cancelled(&st);
        outcome[1] = 0;
        if (outcome[0]) /* the replacement */
            MPI_Send(sbuf2, 20, MPI_INT, peer, 908, MPI_COMM_WORLD);
        MPI_Sendrecv(outcome, 2, MPI_INT, peer, 1, theirs, 2, MPI_INT, peer, 1, syncc, MPI_STATUS_IGNORE);
        if (!posted_first)
            MPI_Irecv(rbuf, BIG, MPI_INT, peer, 908, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        if (theirs[0])
            CHECK(count == 20 && intact(rbuf, 20, seed + 1000),
                  "round %d: the partner's send was cancelled, but %d ints of it arrived", it, count);
        else
            CHECK(count == n && intact(rbuf, n, seed), "round %d: a send that was not cancelled: %d ints arrived", it,
                  count);
        if (mt_errors > 10)
            mt_finish(); /* exits */
    }

    int flag;
    /* to itself: cancelled by the time MPI_Cancel returns */
    for (int k = 0; k < 2; k++) {
        CHECK_CLASS(MPI_Issend(sbuf, k ? BIG : 0, MPI_INT, rank, 950, syncc, &s), MPI_SUCCESS);
        CHECK_CLASS(MPI_Probe(rank, 950, syncc, &st), MPI_SUCCESS);
        CHECK_CLASS(MPI_Cancel(&s), MPI_SUCCESS);
        flag = 0;
        CHECK_CLASS(MPI_Request_get_status(s, &flag, &st), MPI_SUCCESS);
        CHECK(flag && cancelled(&st) == 1, "a synchronous send of %d ints to itself: not reported cancelled by the "
              "first MPI_Request_get_status after MPI_Cancel (flag %d)", k ? BIG : 0, flag);
        CHECK_CLASS(MPI_Wait(&s, &st), MPI_SUCCESS);
        CHECK(cancelled(&st) == 1, "a synchronous send to itself was not cancelled");
        MPI_Iprobe(rank, 950, syncc, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a synchronous send to itself, cancelled, is still there to receive");
    }
    sync_peer();
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "a message is left over (tag %d): a cancelled send was delivered", st.MPI_TAG);
    free(sbuf);
    free(sbuf2);
    free(rbuf);
    MPI_Comm_free(&syncc);
    return mt_finish();
}
