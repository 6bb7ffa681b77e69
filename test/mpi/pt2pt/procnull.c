/* MPI_PROC_NULL as the destination or source of every point-to-point call: the send modes
 * (blocking, nonblocking, persistent, large-count), receives, Sendrecv(_replace),
 * Isendrecv(_replace), probes and matched probes. Every receive completes at once with the
 * status (MPI_PROC_NULL, MPI_ANY_TAG, count 0) and leaves its buffer untouched; sends succeed
 * and consume no buffered-send space; nothing is ever delivered anywhere. */
#include "mpitest.h"

#define N 64
static int buf[N];

static void reset(void)
{
    for (int i = 0; i < N; i++)
        buf[i] = 0x5eed0000 + i;
}

static void check(const MPI_Status *st, const char *what)
{
    int count = -1, elements = -1, untouched = 1;
    MPI_Get_count(st, MPI_INT, &count);
    MPI_Get_elements(st, MPI_INT, &elements);
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0 && elements == 0,
          "%s: status (source %d, tag %d, count %d, elements %d), expected (MPI_PROC_NULL, MPI_ANY_TAG, 0)", what,
          st->MPI_SOURCE, st->MPI_TAG, count, elements);
    for (int i = 0; i < N; i++)
        untouched &= buf[i] == 0x5eed0000 + i;
    CHECK(untouched, "%s: the buffer was written", what);
    reset();
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Status st;
    MPI_Request r, rs[6];
    MPI_Message msg;
    const int P = MPI_PROC_NULL;
    int out[N];
    for (int i = 0; i < N; i++)
        out[i] = i;
    reset();
    /* Exactly one 256-byte message fits: sends to MPI_PROC_NULL must not take space. */
    int bsize = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    void *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);

    /* sends */
    CHECK_CLASS(MPI_Send(out, N, MPI_INT, P, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Send_c(out, N, MPI_INT, P, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Ssend(out, N, MPI_INT, P, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Rsend(out, N, MPI_INT, P, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < 5; i++)
        CHECK_CLASS(MPI_Bsend(out, N, MPI_INT, P, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Isend(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &rs[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Ibsend(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &rs[1]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Issend(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &rs[2]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Irsend(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &rs[3]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Isend_c(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &rs[4]), MPI_SUCCESS);
    rs[5] = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Waitall(6, rs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    /* the buffer is still free: a real buffered send to oneself fits */
    CHECK_CLASS(MPI_Bsend(out, N, MPI_INT, rank, 2, MPI_COMM_WORLD), MPI_SUCCESS);
    int back[N];
    MPI_Recv(back, N, MPI_INT, rank, 2, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == rank && memcmp(back, out, sizeof out) == 0, "buffered send to oneself");

    /* receives, with specific and any tags */
    CHECK_CLASS(MPI_Recv(buf, N, MPI_INT, P, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(&st, "MPI_Recv");
    CHECK_CLASS(MPI_Recv(buf, N, MPI_INT, P, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(&st, "MPI_Recv(MPI_ANY_TAG)");
    CHECK_CLASS(MPI_Recv_c(buf, N, MPI_INT, P, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(&st, "MPI_Recv_c");
    CHECK_CLASS(MPI_Irecv(buf, N, MPI_INT, P, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    check(&st, "MPI_Irecv + MPI_Wait");
    CHECK_CLASS(MPI_Irecv(buf, N, MPI_INT, P, MPI_ANY_TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    flag = 0;
    CHECK_CLASS(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
    CHECK(flag, "MPI_Irecv from MPI_PROC_NULL: the first MPI_Test says incomplete");
    if (!flag)
        MPI_Wait(&r, &st);
    check(&st, "MPI_Irecv + MPI_Test");

    /* combined */
    CHECK_CLASS(MPI_Sendrecv(out, N, MPI_INT, P, 1, buf, N, MPI_INT, P, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(&st, "MPI_Sendrecv (both MPI_PROC_NULL)");
    CHECK_CLASS(MPI_Sendrecv(out, N, MPI_INT, rank, 3, buf, N, MPI_INT, P, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(&st, "MPI_Sendrecv (from MPI_PROC_NULL)");
    MPI_Recv(back, N, MPI_INT, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(out, N, MPI_INT, rank, 4, MPI_COMM_WORLD); /* to oneself, for the next Sendrecv */
    CHECK_CLASS(MPI_Sendrecv(out, N, MPI_INT, P, 1, back, N, MPI_INT, rank, 4, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 4 && memcmp(back, out, sizeof out) == 0,
          "MPI_Sendrecv to MPI_PROC_NULL: the receive part");
    CHECK_CLASS(MPI_Sendrecv_replace(buf, N, MPI_INT, P, 1, P, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(&st, "MPI_Sendrecv_replace");
    CHECK_CLASS(MPI_Isendrecv(out, N, MPI_INT, P, 1, buf, N, MPI_INT, P, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    check(&st, "MPI_Isendrecv");
    CHECK_CLASS(MPI_Isendrecv_replace(buf, N, MPI_INT, P, 1, P, MPI_ANY_TAG, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    check(&st, "MPI_Isendrecv_replace");

    /* probes */
    CHECK_CLASS(MPI_Probe(P, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    check(&st, "MPI_Probe");
    flag = 0;
    CHECK_CLASS(MPI_Iprobe(P, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
    CHECK(flag, "MPI_Iprobe(MPI_PROC_NULL): flag 0");
    check(&st, "MPI_Iprobe");
    CHECK_CLASS(MPI_Mprobe(P, 1, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe: not MPI_MESSAGE_NO_PROC");
    check(&st, "MPI_Mprobe");
    CHECK_CLASS(MPI_Mrecv(buf, N, MPI_INT, &msg, &st), MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv: message not set to MPI_MESSAGE_NULL");
    check(&st, "MPI_Mrecv");
    flag = 0;
    CHECK_CLASS(MPI_Improbe(P, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st), MPI_SUCCESS);
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe: flag %d", flag);
    check(&st, "MPI_Improbe");
    CHECK_CLASS(MPI_Imrecv(buf, N, MPI_INT, &msg, &r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    check(&st, "MPI_Imrecv");

    /* persistent */
    MPI_Request p[5];
    MPI_Status sts[5];
    CHECK_CLASS(MPI_Send_init(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &p[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Ssend_init(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &p[1]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Rsend_init(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &p[2]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Bsend_init(out, N, MPI_INT, P, 1, MPI_COMM_WORLD, &p[3]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Recv_init(buf, N, MPI_INT, P, 1, MPI_COMM_WORLD, &p[4]), MPI_SUCCESS);
    for (int round = 0; round < 3; round++) {
        if (round == 1) {
            for (int i = 0; i < 5; i++)
                CHECK_CLASS(MPI_Start(&p[i]), MPI_SUCCESS);
        } else {
            CHECK_CLASS(MPI_Startall(5, p), MPI_SUCCESS);
        }
        CHECK_CLASS(MPI_Waitall(5, p, sts), MPI_SUCCESS);
        check(&sts[4], "MPI_Recv_init");
        for (int i = 0; i < 5; i++)
            CHECK(p[i] != MPI_REQUEST_NULL, "persistent request %d freed", i);
    }
    for (int i = 0; i < 5; i++)
        MPI_Request_free(&p[i]);

    /* nothing was delivered */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "a message arrived (from %d, tag %d)", st.MPI_SOURCE, st.MPI_TAG);
    void *addr;
    MPI_Buffer_detach(&addr, &bsize);
    free(bbuf);
    return mt_finish();
}
