/* Probes and matched receives: MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv with specific and wildcard source and tag, on eager and rendezvous messages.
 *   - the status of a probe (source, tag, MPI_Get_count, MPI_Get_elements of a pair type) is
 *     the message's, and the same as the receive's;
 *   - a probed message is the one the next matching receive gets (wildcards included);
 *   - a message taken by MPI_Mprobe cannot be received, probed or matched by anything else
 *     (a later receive with the same source and tag takes the next message), and
 *     MPI_Mrecv/MPI_Imrecv set the handle to MPI_MESSAGE_NULL;
 *   - probes on another communicator do not see the message;
 *   - MPI_PROC_NULL: status (MPI_PROC_NULL, MPI_ANY_TAG, count 0), MPI_MESSAGE_NO_PROC, and the
 *     receive buffer untouched.
 * Every rank sends a set of messages to its partner (0-1, 2-3, ...; itself without one) and
 * probes and receives the partner's set in a scripted order. */
#include "mpitest.h"

typedef struct {
    double d;
    int i;
} double_int;

enum { M0, M1, M2, M3, M4, M5, M6, M7, M9, M10, M8, NM };
static const int mtag[NM] = {1, 2, 3, 1, 4, 5, 6, 7, 9, 10, 5};
static const int mbytes[NM] = {100, 50000, 0, 20000, 16384, 70000, 10, 30000, 0, 8, 12};
#define NDI 1000 /* M9: MPI_DOUBLE_INT elements */

static void fill(char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (char)(i * 11 + seed * 29 + 1);
}

static int intact(const char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (char)(i * 11 + seed * 29 + 1))
            return 0;
    return 1;
}

static int peer;
static char *rbuf;

static void check_st(const MPI_Status *st, int m, const char *what)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == peer && st->MPI_TAG == mtag[m] && count == mbytes[m],
          "%s: status (source %d, tag %d, %d bytes), expected message %d (source %d, tag %d, %d bytes)", what,
          st->MPI_SOURCE, st->MPI_TAG, count, m, peer, mtag[m], mbytes[m]);
}

/* Checks the status and the data of message m, received into rbuf. */
static void check_msg(const MPI_Status *st, int m, const char *what)
{
    check_st(st, m, what);
    CHECK(intact(rbuf, mbytes[m], m), "%s: the data of message %d is wrong", what, m);
}

static void check_procnull(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: status (%d, %d, count %d), expected (MPI_PROC_NULL, MPI_ANY_TAG, 0)", what, st->MPI_SOURCE,
          st->MPI_TAG, count);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size, flag, count;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    /* Send the set. */
    char *sbufs[NM];
    MPI_Request sreq[NM];
    double_int *di = malloc(NDI * sizeof *di), *dr = malloc((NDI + 1) * sizeof *dr);
    for (int m = 0; m < NM; m++) {
        sbufs[m] = malloc((size_t)mbytes[m] + 1);
        fill(sbufs[m], mbytes[m], m);
        if (m == M9) {
            for (int i = 0; i < NDI; i++)
                di[i] = (double_int){i * 0.5 + rank, i * 3 - rank};
            MPI_Isend(di, NDI, MPI_DOUBLE_INT, peer, mtag[m], MPI_COMM_WORLD, &sreq[m]);
        } else {
            MPI_Isend(sbufs[m], mbytes[m], MPI_BYTE, peer, mtag[m], MPI_COMM_WORLD, &sreq[m]);
        }
    }

    rbuf = malloc(100000);
    MPI_Status pst, st;
    MPI_Message msg;
    MPI_Request req, pending;

    /* 1: a specific probe finds a later message (rendezvous) before earlier ones */
    CHECK_CLASS(MPI_Probe(peer, 2, MPI_COMM_WORLD, &pst), MPI_SUCCESS);
    check_st(&pst, M1, "MPI_Probe(peer, 2)");
    CHECK_CLASS(MPI_Recv(rbuf, 100000, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check_msg(&st, M1, "MPI_Recv after MPI_Probe(peer, 2)");

    /* 2: wildcards: the first message; the next wildcard receive gets that very message */
    CHECK_CLASS(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pst), MPI_SUCCESS);
    check_st(&pst, M0, "MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG)");
    CHECK_CLASS(MPI_Recv(rbuf, 100000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check_msg(&st, M0, "MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) after the probe");

    /* 3: MPI_Iprobe polling, a 0-byte message */
    flag = 0;
    while (!flag)
        CHECK_CLASS(MPI_Iprobe(peer, 3, MPI_COMM_WORLD, &flag, &pst), MPI_SUCCESS);
    check_st(&pst, M2, "MPI_Iprobe(peer, 3)");
    CHECK_CLASS(MPI_Recv(rbuf, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check_msg(&st, M2, "MPI_Recv of 0 bytes");

    /* 4: Iprobe by tag, then a receive by source with any tag gets the probed message */
    flag = 0;
    while (!flag)
        MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &pst);
    check_st(&pst, M3, "MPI_Iprobe(MPI_ANY_SOURCE, 1)");
    MPI_Recv(rbuf, 100000, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    check_msg(&st, M3, "MPI_Recv(peer, MPI_ANY_TAG)");

    /* 5: a matched message cannot be stolen */
    CHECK_CLASS(MPI_Mprobe(peer, 5, MPI_COMM_WORLD, &msg, &pst), MPI_SUCCESS);
    check_st(&pst, M5, "MPI_Mprobe(peer, 5)");
    CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "MPI_Mprobe gave no message");
    MPI_Iprobe(peer, 5, MPI_COMM_WORLD, &flag, &st); /* may see M8 (12 bytes), never M5 */
    if (flag)
        check_st(&st, M8, "MPI_Iprobe after MPI_Mprobe");
    MPI_Recv(rbuf, 100000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    check_msg(&st, M4, "MPI_Recv(ANY, ANY) after MPI_Mprobe");
    char *pbuf = malloc(100000);
    memset(pbuf, 0, 100000);
    MPI_Irecv(pbuf, 100000, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &pending); /* must wait for M8 */
    memset(rbuf, 0, 100000);
    CHECK_CLASS(MPI_Mrecv(rbuf, 100000, MPI_BYTE, &msg, &st), MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv did not set the message to MPI_MESSAGE_NULL");
    check_msg(&st, M5, "MPI_Mrecv");

    /* 6: MPI_Improbe polling, MPI_Imrecv */
    flag = 0;
    while (!flag)
        CHECK_CLASS(MPI_Improbe(peer, 6, MPI_COMM_WORLD, &flag, &msg, &pst), MPI_SUCCESS);
    check_st(&pst, M6, "MPI_Improbe(peer, 6)");
    memset(rbuf, 0, 100000);
    CHECK_CLASS(MPI_Imrecv(rbuf, 100000, MPI_BYTE, &msg, &req), MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv did not set the message to MPI_MESSAGE_NULL");
    CHECK_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
    check_msg(&st, M6, "MPI_Imrecv");

    /* 7: wildcard MPI_Mprobe, MPI_Imrecv of a rendezvous message */
    CHECK_CLASS(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &pst), MPI_SUCCESS);
    check_st(&pst, M7, "MPI_Mprobe(ANY, ANY)");
    memset(rbuf, 0, 100000);
    MPI_Imrecv(rbuf, 100000, MPI_BYTE, &msg, &req);
    MPI_Wait(&req, &st);
    check_msg(&st, M7, "MPI_Imrecv of 30000 bytes");

    /* 8: a pair type: the probe's count and elements */
    MPI_Probe(peer, 9, MPI_COMM_WORLD, &pst);
    MPI_Get_count(&pst, MPI_DOUBLE_INT, &count);
    CHECK(count == NDI, "probe of %d MPI_DOUBLE_INT: MPI_Get_count %d", NDI, count);
    MPI_Get_elements(&pst, MPI_DOUBLE_INT, &count);
    CHECK(count == 2 * NDI, "probe of %d MPI_DOUBLE_INT: MPI_Get_elements %d", NDI, count);
    MPI_Mprobe(peer, 9, MPI_COMM_WORLD, &msg, &pst);
    memset(dr, 0, (NDI + 1) * sizeof *dr);
    MPI_Mrecv(dr, NDI + 1, MPI_DOUBLE_INT, &msg, &st);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
    CHECK(count == NDI && st.MPI_TAG == 9, "MPI_Mrecv of MPI_DOUBLE_INT: count %d tag %d", count, st.MPI_TAG);
    int bad = -1;
    for (int i = 0; i < NDI && bad < 0; i++)
        if (dr[i].d != i * 0.5 + peer || dr[i].i != i * 3 - peer)
            bad = i;
    CHECK(bad < 0 && dr[NDI].d == 0 && dr[NDI].i == 0, "MPI_Mrecv of MPI_DOUBLE_INT: element %d wrong", bad);

    /* 9: another communicator does not see it */
    MPI_Probe(peer, 10, MPI_COMM_WORLD, &pst);
    check_st(&pst, M10, "MPI_Probe(peer, 10)");
    MPI_Iprobe(peer, 10, dup, &flag, &st);
    CHECK(!flag, "MPI_Iprobe on a duplicate communicator saw a message of MPI_COMM_WORLD");
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &st);
    CHECK(!flag, "MPI_Iprobe(ANY, ANY) on a duplicate communicator saw a message of MPI_COMM_WORLD");
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &msg, &st);
    CHECK(!flag, "MPI_Improbe on a duplicate communicator saw a message of MPI_COMM_WORLD");
    MPI_Recv(rbuf, 100000, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &st);
    check_msg(&st, M10, "MPI_Recv(peer, 10)");

    /* the receive posted in 5 got the last message */
    MPI_Wait(&pending, &st);
    check_st(&st, M8, "the receive posted after MPI_Mprobe");
    CHECK(intact(pbuf, mbytes[M8], M8), "the receive posted after MPI_Mprobe: wrong data");
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "a message is left over (tag %d)", st.MPI_TAG);

    /* MPI_PROC_NULL */
    memset(rbuf, 0x5a, 16);
    memset(&st, 0, sizeof st);
    CHECK_CLASS(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check_procnull(&st, "MPI_Probe(MPI_PROC_NULL)");
    flag = 0;
    memset(&st, 0, sizeof st);
    CHECK_CLASS(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
    CHECK(flag, "MPI_Iprobe(MPI_PROC_NULL) flag false");
    check_procnull(&st, "MPI_Iprobe(MPI_PROC_NULL)");
    memset(&st, 0, sizeof st);
    CHECK_CLASS(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    check_procnull(&st, "MPI_Mprobe(MPI_PROC_NULL)");
    memset(&st, 0, sizeof st);
    CHECK_CLASS(MPI_Mrecv(rbuf, 4, MPI_INT, &msg, &st), MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv(MPI_MESSAGE_NO_PROC) left the handle");
    check_procnull(&st, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)");
    flag = 0;
    CHECK_CLASS(MPI_Improbe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &msg, &st), MPI_SUCCESS);
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d", flag);
    check_procnull(&st, "MPI_Improbe(MPI_PROC_NULL)");
    memset(&st, 0, sizeof st);
    CHECK_CLASS(MPI_Imrecv(rbuf, 4, MPI_INT, &msg, &req), MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv(MPI_MESSAGE_NO_PROC) left the handle");
    CHECK_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
    check_procnull(&st, "MPI_Imrecv(MPI_MESSAGE_NO_PROC)");
    int untouched = 1;
    for (int i = 0; i < 16; i++)
        untouched &= rbuf[i] == 0x5a;
    CHECK(untouched, "a receive from MPI_PROC_NULL wrote the buffer");

    MPI_Waitall(NM, sreq, MPI_STATUSES_IGNORE);
    for (int m = 0; m < NM; m++)
        free(sbufs[m]);
    free(di);
    free(dr);
    free(pbuf);
    free(rbuf);
    MPI_Comm_free(&dup);
    return mt_finish();
}
