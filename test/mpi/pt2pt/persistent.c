/* Persistent requests: MPI_Send_init, MPI_Ssend_init, MPI_Rsend_init and MPI_Bsend_init with
 * MPI_Recv_init, restarted 1000 times with a small message and 50 times with a rendezvous one;
 * the data changes every round and every round's data and status are checked. MPI_Startall
 * over 16 requests with different tags and sizes, completed by MPI_Waitall, MPI_Waitany or
 * MPI_Waitsome (each completes once per round; the handles stay). A persistent request survives MPI_Wait and
 * MPI_Test; MPI_Wait/MPI_Test on an inactive one return at once with an empty status;
 * MPI_Request_free of an inactive one (and of an active send, whose message still arrives).
 * Ranks exchange with their partner (0-1, 2-3, ...; themselves without one). */
#include "mpitest.h"

static int rank, size, peer;

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (i ^ seed) * 7 + seed;
}

static int first_bad(const int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (i ^ seed) * 7 + seed)
            return i;
    return -1;
}

static void sync_peer(void)
{
    MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 0, NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: not an empty status (source %d, tag %d, count %d)", what, st->MPI_SOURCE, st->MPI_TAG, count);
}

enum { STANDARD, SYNC, READY, BUFFERED };
static const char *mode_name[] = {"MPI_Send_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Bsend_init"};

static void rounds(int mode, int n, int nrounds)
{
    int *sb = malloc((size_t)n * sizeof(int)), *rb = malloc(((size_t)n + 1) * sizeof(int));
    MPI_Request req[2];
    const int tag = 10 + mode;
    CHECK_CLASS(MPI_Recv_init(rb, n + 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &req[0]), MPI_SUCCESS);
    switch (mode) {
    case STANDARD: CHECK_CLASS(MPI_Send_init(sb, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &req[1]), MPI_SUCCESS); break;
    case SYNC: CHECK_CLASS(MPI_Ssend_init(sb, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &req[1]), MPI_SUCCESS); break;
    case READY: CHECK_CLASS(MPI_Rsend_init(sb, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &req[1]), MPI_SUCCESS); break;
    case BUFFERED: CHECK_CLASS(MPI_Bsend_init(sb, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &req[1]), MPI_SUCCESS); break;
    }
    MPI_Request keep[2] = {req[0], req[1]};
    for (int round = 0; round < nrounds; round++) {
        int seed = round * 31 + rank, pseed = round * 31 + peer;
        fill(sb, n, seed);
        rb[n] = -12345;
        if (round % 3 == 0)
            memset(rb, 0, (size_t)n * sizeof(int));
        MPI_Status st[2];
        if (mode == READY) { /* the partner's receive must be posted before our ready send */
            CHECK_CLASS(MPI_Start(&req[0]), MPI_SUCCESS);
            sync_peer();
            CHECK_CLASS(MPI_Start(&req[1]), MPI_SUCCESS);
        } else {
            CHECK_CLASS(MPI_Startall(2, req), MPI_SUCCESS);
        }
        int flag = 0;
        if (round % 2) /* MPI_Testall first: an incomplete answer must leave the requests alone */
            CHECK_CLASS(MPI_Testall(2, req, &flag, st), MPI_SUCCESS);
        if (!flag) /* (no busy loop on MPI_Testall: with more ranks than cores it starves the partner) */
            CHECK_CLASS(MPI_Waitall(2, req, st), MPI_SUCCESS);
        CHECK(req[0] == keep[0] && req[1] == keep[1], "%s: completion freed a persistent request", mode_name[mode]);
        int count = -1;
        MPI_Get_count(&st[0], MPI_INT, &count);
        int bad = first_bad(rb, n, pseed);
        CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == tag && count == n && bad < 0 && rb[n] == -12345,
              "%s, %d ints, round %d: status (%d, %d, %d), first wrong element %d", mode_name[mode], n, round,
              st[0].MPI_SOURCE, st[0].MPI_TAG, count, bad);
        if (mt_errors > 10)
            mt_finish(); /* exits */
    }
    /* Inactive now: Wait and Test return at once with an empty status. */
    MPI_Status st;
    memset(&st, 0x22, sizeof st);
    CHECK_CLASS(MPI_Wait(&req[0], &st), MPI_SUCCESS);
    check_empty(&st, "MPI_Wait on an inactive persistent receive");
    int flag = 0;
    memset(&st, 0x22, sizeof st);
    CHECK_CLASS(MPI_Test(&req[1], &flag, &st), MPI_SUCCESS);
    CHECK(flag, "MPI_Test on an inactive persistent send: flag 0");
    check_empty(&st, "MPI_Test on an inactive persistent send");
    CHECK(req[0] == keep[0] && req[1] == keep[1], "Wait/Test on an inactive persistent request freed it");
    CHECK_CLASS(MPI_Request_free(&req[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Request_free(&req[1]), MPI_SUCCESS);
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "MPI_Request_free left the handles");
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    const int big = 30000; /* 120 KB: rendezvous */
    int bsize = 4 * (big * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);

    /* Never started: Wait returns at once with an empty status. */
    int x[4];
    MPI_Request r;
    MPI_Status st;
    MPI_Recv_init(x, 4, MPI_INT, peer, 5, MPI_COMM_WORLD, &r);
    memset(&st, 0x22, sizeof st);
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
    check_empty(&st, "MPI_Wait on a never-started persistent request");
    CHECK(r != MPI_REQUEST_NULL, "MPI_Wait freed an inactive persistent request");
    CHECK_CLASS(MPI_Request_free(&r), MPI_SUCCESS);

    for (int mode = 0; mode < 4; mode++) {
        rounds(mode, 25, 1000);
        rounds(mode, big, 50);
    }

    /* Startall over 8 receives and 8 sends, with different tags and sizes (some rendezvous). */
    enum { K = 8 };
    MPI_Request reqs[2 * K];
    int *sb[K], *rb[K], n[K];
    for (int k = 0; k < K; k++) {
        n[k] = k % 3 == 2 ? 5000 + k : 10 * k;
        sb[k] = malloc((size_t)n[k] * sizeof(int) + 4);
        rb[k] = malloc((size_t)n[k] * sizeof(int) + 4);
    }
    for (int k = 0; k < K; k++) {
        MPI_Recv_init(rb[k], n[k], MPI_INT, peer, 100 + k, MPI_COMM_WORLD, &reqs[k]);
        /* sends in the opposite order to the receives */
        MPI_Send_init(sb[K - 1 - k], n[K - 1 - k], MPI_INT, peer, 100 + K - 1 - k, MPI_COMM_WORLD, &reqs[K + k]);
    }
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < K; k++)
            fill(sb[k], n[k], round * 100 + k + rank);
        MPI_Status sts[2 * K];
        MPI_Request keep[2 * K];
        memcpy(keep, reqs, sizeof keep);
        CHECK_CLASS(MPI_Startall(2 * K, reqs), MPI_SUCCESS);
        if (round % 3 == 0) {
            CHECK_CLASS(MPI_Waitall(2 * K, reqs, sts), MPI_SUCCESS);
        } else { /* one by one or some at a time: completed entries become inactive, not null */
            int left = 2 * K, idx[2 * K], out, seen[2 * K] = {0};
            MPI_Status tmp[2 * K];
            while (left > 0) {
                if (round % 3 == 1) {
                    CHECK_CLASS(MPI_Waitany(2 * K, reqs, &idx[0], &tmp[0]), MPI_SUCCESS);
                    out = idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
                } else {
                    CHECK_CLASS(MPI_Waitsome(2 * K, reqs, &out, idx, tmp), MPI_SUCCESS);
                }
                CHECK(out != MPI_UNDEFINED, "round %d: no active request left with %d to complete", round, left);
                if (out == MPI_UNDEFINED)
                    break;
                for (int j = 0; j < out; j++) {
                    CHECK(!seen[idx[j]]++, "round %d: request %d completed twice", round, idx[j]);
                    sts[idx[j]] = tmp[j];
                    left--;
                }
            }
        }
        CHECK(memcmp(keep, reqs, sizeof keep) == 0, "MPI_Startall round %d: a persistent request was freed", round);
        for (int k = 0; k < K; k++) {
            int count = -1, bad = first_bad(rb[k], n[k], round * 100 + k + peer);
            MPI_Get_count(&sts[k], MPI_INT, &count);
            CHECK(sts[k].MPI_TAG == 100 + k && count == n[k] && bad < 0,
                  "MPI_Startall round %d, receive %d: tag %d, count %d, first wrong element %d", round, k,
                  sts[k].MPI_TAG, count, bad);
        }
        if (mt_errors > 10)
            mt_finish(); /* exits */
    }
    for (int k = 0; k < 2 * K; k++) {
        CHECK_CLASS(MPI_Request_free(&reqs[k]), MPI_SUCCESS);
        CHECK(reqs[k] == MPI_REQUEST_NULL, "MPI_Request_free left handle %d", k);
    }
    for (int k = 0; k < K; k++) {
        free(sb[k]);
        free(rb[k]);
    }

    /* Freeing an active persistent send: its message still arrives. */
    int *data = malloc(big * sizeof(int)), *in = malloc(big * sizeof(int));
    fill(data, big, 4242 + rank);
    MPI_Send_init(data, big, MPI_INT, peer, 7, MPI_COMM_WORLD, &r);
    MPI_Start(&r);
    CHECK_CLASS(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free of an active persistent send left the handle");
    MPI_Recv(in, big, MPI_INT, peer, 7, MPI_COMM_WORLD, &st);
    CHECK(first_bad(in, big, 4242 + peer) < 0, "freed active persistent send: wrong data");
    sync_peer(); /* keep `data` until the partner has it */
    free(data);
    free(in);

    void *addr;
    int bs;
    MPI_Buffer_detach(&addr, &bs);
    free(bbuf);
    return mt_finish();
}
