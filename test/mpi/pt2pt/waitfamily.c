/* The completion calls: MPI_Waitall/Waitany/Waitsome/Testall/Testany/Testsome over arrays
 * mixing active, MPI_REQUEST_NULL, already completed and inactive persistent requests, with
 * statuses or MPI_STATUSES_IGNORE; empty statuses for inactive entries; Waitany/Testany over
 * inactive entries only give MPI_UNDEFINED, Waitsome/Testsome MPI_UNDEFINED outcount;
 * MPI_Request_get_status and MPI_Request_get_status_all/_any/_some report completion without
 * freeing anything; MPI_Request_free of an active send (the message still arrives, intact).
 * The last part completes 40 sends and receives with the partner through a mix of the calls and
 * checks that each completes exactly once with the right status and data.
 * The scripted parts use messages to oneself (to control what has arrived); the last parts use
 * the partner (0-1, 2-3, ...; oneself without one). */
#include "mpitest.h"

static int rank, size, peer;

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_INT, &count);
    MPI_Test_cancelled(st, &cancelled);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 && cancelled == 0,
          "%s: not an empty status (source %d, tag %d, count %d, cancelled %d)", what, st->MPI_SOURCE, st->MPI_TAG,
          count, cancelled);
}

static void check_recv(const MPI_Status *st, int src, int tag, int count, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_INT, &n);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && n == count, "%s: status (%d, %d, %d), expected (%d, %d, %d)",
          what, st->MPI_SOURCE, st->MPI_TAG, n, src, tag, count);
}

/* Sends `n` ints valued tag*1000+i to oneself with the given tag (completes at once: eager). */
static void self_send(int tag, int n)
{
    int buf[64];
    for (int i = 0; i < n; i++)
        buf[i] = tag * 1000 + i;
    MPI_Send(buf, n, MPI_INT, rank, tag, MPI_COMM_WORLD);
}

static int intact(const int *buf, int tag, int n)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != tag * 1000 + i)
            return 0;
    return 1;
}

/* Polls until a message (src, tag) is there, so that a receive for it completes at once. */
static void arrived(int src, int tag)
{
    MPI_Probe(src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    int bufs[8][64], flag, index, outcount, indices[8];
    MPI_Request r[8], persistent;
    MPI_Status st, sts[8];
    CHECK_CLASS(MPI_Recv_init(bufs[7], 64, MPI_INT, rank, 77, MPI_COMM_WORLD, &persistent), MPI_SUCCESS);

    /* Waitall: active, null, already complete, inactive persistent. */
    MPI_Irecv(bufs[0], 64, MPI_INT, rank, 1, MPI_COMM_WORLD, &r[0]);
    r[1] = MPI_REQUEST_NULL;
    self_send(2, 5);
    arrived(rank, 2);
    MPI_Irecv(bufs[2], 64, MPI_INT, rank, 2, MPI_COMM_WORLD, &r[2]); /* completes at once */
    r[3] = persistent;
    MPI_Isend(bufs[0], 0, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r[4]);
    self_send(1, 10);
    memset(sts, 0x11, sizeof sts);
    CHECK_CLASS(MPI_Waitall(5, r, sts), MPI_SUCCESS);
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL && r[4] == MPI_REQUEST_NULL,
          "MPI_Waitall left handles");
    CHECK(r[3] == persistent, "MPI_Waitall changed an inactive persistent request's handle");
    check_recv(&sts[0], rank, 1, 10, "MPI_Waitall [0]");
    check_recv(&sts[2], rank, 2, 5, "MPI_Waitall [2]");
    CHECK(intact(bufs[0], 1, 10) && intact(bufs[2], 2, 5), "MPI_Waitall: data");
    check_empty(&sts[1], "MPI_Waitall [1] (MPI_REQUEST_NULL)");
    check_empty(&sts[3], "MPI_Waitall [3] (inactive persistent)");
    CHECK(sts[4].MPI_SOURCE == MPI_PROC_NULL || sts[4].MPI_SOURCE == MPI_ANY_SOURCE,
          "MPI_Waitall [4] (send to MPI_PROC_NULL): source %d", sts[4].MPI_SOURCE);
    CHECK_CLASS(MPI_Waitall(0, NULL, NULL), MPI_SUCCESS);
    MPI_Irecv(bufs[0], 64, MPI_INT, rank, 3, MPI_COMM_WORLD, &r[0]);
    r[1] = MPI_REQUEST_NULL;
    self_send(3, 3);
    CHECK_CLASS(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK(r[0] == MPI_REQUEST_NULL && intact(bufs[0], 3, 3), "MPI_Waitall with MPI_STATUSES_IGNORE");

    /* Testall: incomplete leaves everything as it was; then completes everything. */
    MPI_Irecv(bufs[0], 64, MPI_INT, rank, 4, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(bufs[1], 64, MPI_INT, rank, 5, MPI_COMM_WORLD, &r[1]);
    r[2] = MPI_REQUEST_NULL;
    self_send(4, 4);
    for (flag = 0; !flag;) /* matched by the posted receive */
        MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE);
    MPI_Request keep0 = r[0], keep1 = r[1];
    flag = 1;
    CHECK_CLASS(MPI_Testall(3, r, &flag, sts), MPI_SUCCESS);
    CHECK(!flag && r[0] == keep0 && r[1] == keep1, "MPI_Testall with an incomplete request: flag %d", flag);
    self_send(5, 6);
    for (flag = 0; !flag;)
        CHECK_CLASS(MPI_Testall(3, r, &flag, sts), MPI_SUCCESS);
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "MPI_Testall left handles");
    check_recv(&sts[0], rank, 4, 4, "MPI_Testall [0]");
    check_recv(&sts[1], rank, 5, 6, "MPI_Testall [1]");
    check_empty(&sts[2], "MPI_Testall [2] (MPI_REQUEST_NULL)");

    /* Waitany / Testany */
    r[0] = MPI_REQUEST_NULL;
    MPI_Irecv(bufs[1], 64, MPI_INT, rank, 6, MPI_COMM_WORLD, &r[1]);
    r[2] = persistent;
    MPI_Irecv(bufs[3], 64, MPI_INT, rank, 7, MPI_COMM_WORLD, &r[3]);
    index = 99;
    flag = 1;
    CHECK_CLASS(MPI_Testany(4, r, &index, &flag, &st), MPI_SUCCESS);
    CHECK(!flag && index == MPI_UNDEFINED, "MPI_Testany with nothing complete: flag %d index %d", flag, index);
    self_send(7, 7);
    CHECK_CLASS(MPI_Waitany(4, r, &index, &st), MPI_SUCCESS);
    CHECK(index == 3 && r[3] == MPI_REQUEST_NULL, "MPI_Waitany: index %d", index);
    check_recv(&st, rank, 7, 7, "MPI_Waitany");
    self_send(6, 2);
    for (flag = 0; !flag;)
        CHECK_CLASS(MPI_Testany(4, r, &index, &flag, &st), MPI_SUCCESS);
    CHECK(index == 1 && r[1] == MPI_REQUEST_NULL, "MPI_Testany: index %d", index);
    check_recv(&st, rank, 6, 2, "MPI_Testany");
    CHECK(r[2] == persistent, "MPI_Waitany/Testany changed an inactive persistent request");
    index = 99;
    CHECK_CLASS(MPI_Waitany(4, r, &index, &st), MPI_SUCCESS);
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany over inactive requests: index %d", index);
    check_empty(&st, "MPI_Waitany over inactive requests");
    index = 99;
    flag = 0;
    CHECK_CLASS(MPI_Testany(4, r, &index, &flag, &st), MPI_SUCCESS);
    CHECK(flag && index == MPI_UNDEFINED, "MPI_Testany over inactive requests: flag %d index %d", flag, index);
    check_empty(&st, "MPI_Testany over inactive requests");
    CHECK_CLASS(MPI_Waitany(0, NULL, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany(0): index %d", index);

    /* Waitsome / Testsome */
    MPI_Irecv(bufs[0], 64, MPI_INT, rank, 10, MPI_COMM_WORLD, &r[0]);
    r[1] = MPI_REQUEST_NULL;
    MPI_Irecv(bufs[2], 64, MPI_INT, rank, 12, MPI_COMM_WORLD, &r[2]);
    MPI_Irecv(bufs[3], 64, MPI_INT, rank, 13, MPI_COMM_WORLD, &r[3]);
    r[4] = persistent;
    MPI_Irecv(bufs[5], 64, MPI_INT, rank, 15, MPI_COMM_WORLD, &r[5]);
    self_send(10, 10);
    self_send(12, 12);
    self_send(15, 15);
    int seen[6] = {0};
    for (int done = 0; done < 3;) {
        CHECK_CLASS(MPI_Waitsome(6, r, &outcount, indices, sts), MPI_SUCCESS);
        CHECK(outcount >= 1 && outcount <= 3, "MPI_Waitsome: outcount %d", outcount);
        for (int k = 0; k < outcount; k++) {
            int i = indices[k];
            CHECK(i == 0 || i == 2 || i == 5, "MPI_Waitsome: index %d", i);
            if (i != 0 && i != 2 && i != 5)
                continue;
            CHECK(!seen[i]++, "MPI_Waitsome reported index %d twice", i);
            CHECK(r[i] == MPI_REQUEST_NULL, "MPI_Waitsome left handle %d", i);
            check_recv(&sts[k], rank, 10 + i, 10 + i, "MPI_Waitsome");
            CHECK(intact(bufs[i], 10 + i, 10 + i), "MPI_Waitsome: data of %d", i);
            done++;
        }
        if (outcount < 1)
            break;
    }
    CHECK_CLASS(MPI_Testsome(6, r, &outcount, indices, sts), MPI_SUCCESS);
    CHECK(outcount == 0, "MPI_Testsome with only an incomplete request: outcount %d", outcount);
    self_send(13, 13);
    for (outcount = 0; outcount == 0;)
        CHECK_CLASS(MPI_Testsome(6, r, &outcount, indices, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK(outcount == 1 && indices[0] == 3 && r[3] == MPI_REQUEST_NULL, "MPI_Testsome: outcount %d index %d",
          outcount, indices[0]);
    CHECK_CLASS(MPI_Waitsome(6, r, &outcount, indices, sts), MPI_SUCCESS);
    CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome over inactive requests: outcount %d", outcount);
    CHECK_CLASS(MPI_Testsome(6, r, &outcount, indices, sts), MPI_SUCCESS);
    CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome over inactive requests: outcount %d", outcount);
    CHECK(r[4] == persistent, "MPI_Waitsome/Testsome changed an inactive persistent request");

    /* Request_get_status and friends never free. */
    MPI_Irecv(bufs[0], 64, MPI_INT, rank, 20, MPI_COMM_WORLD, &r[0]);
    keep0 = r[0];
    flag = 1;
    CHECK_CLASS(MPI_Request_get_status(r[0], &flag, &st), MPI_SUCCESS);
    CHECK(!flag, "MPI_Request_get_status: complete before the message was sent");
    self_send(20, 20);
    for (flag = 0; !flag;)
        CHECK_CLASS(MPI_Request_get_status(r[0], &flag, &st), MPI_SUCCESS);
    check_recv(&st, rank, 20, 20, "MPI_Request_get_status");
    CHECK(r[0] == keep0, "MPI_Request_get_status changed the handle");
    CHECK_CLASS(MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(flag, "a second MPI_Request_get_status says incomplete");
    memset(&st, 0, sizeof st);
    CHECK_CLASS(MPI_Wait(&r[0], &st), MPI_SUCCESS); /* the request is still there */
    check_recv(&st, rank, 20, 20, "MPI_Wait after MPI_Request_get_status");
    CHECK(r[0] == MPI_REQUEST_NULL && intact(bufs[0], 20, 20), "MPI_Wait after MPI_Request_get_status");
    CHECK_CLASS(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st), MPI_SUCCESS);
    CHECK(flag, "MPI_Request_get_status(MPI_REQUEST_NULL): flag %d", flag);
    check_empty(&st, "MPI_Request_get_status(MPI_REQUEST_NULL)");

    MPI_Irecv(bufs[0], 64, MPI_INT, rank, 21, MPI_COMM_WORLD, &r[0]); /* completes first */
    MPI_Irecv(bufs[1], 64, MPI_INT, rank, 22, MPI_COMM_WORLD, &r[1]); /* later */
    r[2] = MPI_REQUEST_NULL;
    MPI_Request saved[3] = {r[0], r[1], r[2]};
    self_send(21, 21);
    for (flag = 0; !flag;)
        MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE);
    CHECK_CLASS(MPI_Request_get_status_all(3, r, &flag, sts), MPI_SUCCESS);
    CHECK(!flag, "MPI_Request_get_status_all with an incomplete request: flag %d", flag);
    CHECK_CLASS(MPI_Request_get_status_any(3, r, &index, &flag, &st), MPI_SUCCESS);
    CHECK(flag && index == 0, "MPI_Request_get_status_any: flag %d index %d", flag, index);
    check_recv(&st, rank, 21, 21, "MPI_Request_get_status_any");
    CHECK_CLASS(MPI_Request_get_status_some(3, r, &outcount, indices, sts), MPI_SUCCESS);
    CHECK(outcount == 1 && indices[0] == 0, "MPI_Request_get_status_some: outcount %d", outcount);
    check_recv(&sts[0], rank, 21, 21, "MPI_Request_get_status_some");
    self_send(22, 22);
    for (flag = 0; !flag;)
        CHECK_CLASS(MPI_Request_get_status_all(3, r, &flag, sts), MPI_SUCCESS);
    check_recv(&sts[0], rank, 21, 21, "MPI_Request_get_status_all [0]");
    check_recv(&sts[1], rank, 22, 22, "MPI_Request_get_status_all [1]");
    check_empty(&sts[2], "MPI_Request_get_status_all [2] (MPI_REQUEST_NULL)");
    CHECK_CLASS(MPI_Request_get_status_some(3, r, &outcount, indices, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK(outcount == 2 && indices[0] == 0 && indices[1] == 1, "MPI_Request_get_status_some: outcount %d", outcount);
    CHECK(r[0] == saved[0] && r[1] == saved[1] && r[2] == saved[2], "MPI_Request_get_status_* changed handles");
    CHECK_CLASS(MPI_Waitall(3, r, sts), MPI_SUCCESS); /* the requests are still there */
    check_recv(&sts[0], rank, 21, 21, "MPI_Waitall after MPI_Request_get_status_*");
    check_recv(&sts[1], rank, 22, 22, "MPI_Waitall after MPI_Request_get_status_*");
    CHECK(intact(bufs[0], 21, 21) && intact(bufs[1], 22, 22), "data after MPI_Request_get_status_*");
    CHECK_CLASS(MPI_Request_get_status_any(3, r, &index, &flag, &st), MPI_SUCCESS);
    CHECK(flag && index == MPI_UNDEFINED, "MPI_Request_get_status_any over nulls: flag %d index %d", flag, index);
    check_empty(&st, "MPI_Request_get_status_any over nulls");
    CHECK_CLASS(MPI_Request_get_status_some(3, r, &outcount, indices, sts), MPI_SUCCESS);
    CHECK(outcount == MPI_UNDEFINED, "MPI_Request_get_status_some over nulls: outcount %d", outcount);
    CHECK_CLASS(MPI_Request_get_status_all(3, r, &flag, sts), MPI_SUCCESS);
    CHECK(flag, "MPI_Request_get_status_all over nulls: flag %d", flag);
    CHECK_CLASS(MPI_Request_free(&persistent), MPI_SUCCESS);
    CHECK(persistent == MPI_REQUEST_NULL, "MPI_Request_free did not reset the handle");

    /* MPI_Request_free of active sends: the messages still arrive. */
    const int nbig = 25000; /* 100 KB: rendezvous */
    int *small = malloc(100 * sizeof(int)), *big = malloc(nbig * sizeof(int)), *in = malloc(nbig * sizeof(int));
    for (int i = 0; i < nbig; i++)
        big[i] = i * 3 + rank;
    for (int i = 0; i < 100; i++)
        small[i] = i * 5 + rank;
    MPI_Request fr;
    CHECK_CLASS(MPI_Isend(big, nbig, MPI_INT, peer, 30, MPI_COMM_WORLD, &fr), MPI_SUCCESS);
    CHECK_CLASS(MPI_Request_free(&fr), MPI_SUCCESS);
    CHECK(fr == MPI_REQUEST_NULL, "MPI_Request_free of an active send left the handle");
    CHECK_CLASS(MPI_Isend(small, 100, MPI_INT, peer, 31, MPI_COMM_WORLD, &fr), MPI_SUCCESS);
    CHECK_CLASS(MPI_Request_free(&fr), MPI_SUCCESS);
    CHECK_CLASS(MPI_Recv(in, nbig, MPI_INT, peer, 30, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    int bad = -1;
    for (int i = 0; i < nbig && bad < 0; i++)
        if (in[i] != i * 3 + peer)
            bad = i;
    CHECK(bad < 0, "freed rendezvous send: element %d wrong", bad);
    CHECK_CLASS(MPI_Recv(in, 100, MPI_INT, peer, 31, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    for (int i = 0; i < 100 && bad < 0; i++)
        if (in[i] != i * 5 + peer)
            bad = i;
    CHECK(bad < 0, "freed eager send: element %d wrong", bad);
    /* the buffers of the freed sends stay untouched until we know the partner has them */
    MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 0, NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    /* 20 receives and 20 sends with the partner, completed by a mix of calls. */
    enum { NR = 40 };
    MPI_Request rq[NR];
    int *out = malloc((size_t)NR * 6000 * sizeof(int)), *inb = malloc((size_t)NR * 6000 * sizeof(int));
    int n_of[NR], completed[NR] = {0};
    for (int i = 0; i < NR; i++)
        n_of[i] = (i % 4 == 3) ? 6000 : i * 7; /* 24 KB: rendezvous */
    for (int i = 0; i < NR; i++) {
        int k = i / 2;
        if (i % 2 == 0) {
            MPI_Irecv(inb + i * 6000, 6000, MPI_INT, peer, k, MPI_COMM_WORLD, &rq[i]);
        } else {
            for (int j = 0; j < n_of[i - 1]; j++)
                out[i * 6000 + j] = k * 100000 + j + rank;
            MPI_Isend(out + i * 6000, n_of[i - 1], MPI_INT, peer, k, MPI_COMM_WORLD, &rq[i]);
        }
    }
    int remaining = NR, round = 0;
    MPI_Status many[NR];
    int idx[NR];
    while (remaining > 0) {
        int got = 0;
        switch (round++ % 4) {
        case 0:
            MPI_Waitsome(NR, rq, &got, idx, many);
            break;
        case 1:
            MPI_Testsome(NR, rq, &got, idx, many);
            break;
        case 2:
            MPI_Waitany(NR, rq, &idx[0], &many[0]);
            got = idx[0] == MPI_UNDEFINED ? 0 : 1;
            break;
        case 3:
            MPI_Testany(NR, rq, &idx[0], &flag, &many[0]);
            got = flag && idx[0] != MPI_UNDEFINED ? 1 : 0;
            break;
        }
        CHECK(got != MPI_UNDEFINED, "outcount MPI_UNDEFINED with %d requests left", remaining);
        if (got == MPI_UNDEFINED)
            break;
        for (int k = 0; k < got; k++) {
            int i = idx[k];
            CHECK(!completed[i]++, "request %d completed twice", i);
            CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
            remaining--;
            if (i % 2 == 0) {
                int n = -1;
                MPI_Get_count(&many[k], MPI_INT, &n);
                CHECK(many[k].MPI_SOURCE == peer && many[k].MPI_TAG == i / 2 && n == n_of[i],
                      "request %d: status (%d, %d, %d)", i, many[k].MPI_SOURCE, many[k].MPI_TAG, n);
                for (int j = 0; j < n_of[i] && bad < 0; j++)
                    if (inb[i * 6000 + j] != (i / 2) * 100000 + j + peer)
                        bad = j;
                CHECK(bad < 0, "request %d: element %d wrong", i, bad);
            }
        }
    }
    CHECK(remaining == 0, "%d requests never completed", remaining);
    free(out);
    free(inb);
    free(small);
    free(big);
    free(in);
    return mt_finish();
}
