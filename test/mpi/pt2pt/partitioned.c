/* Partitioned communication (MPI_Psend_init, MPI_Precv_init, MPI_Pready, MPI_Pready_range,
 * MPI_Pready_list, MPI_Parrived), between partners 0-1, 2-3, ... (a process without a partner
 * sends to itself):
 *   - sender and receiver cutting the buffer differently (8 x 64 ints into 4 x 128, 1 into 16,
 *     16 into 1, 3 x 1000 into 1 x 3000), partitions marked ready backwards, by ranges and by
 *     lists, restarted for many rounds with new data each round; the receiver watches
 *     MPI_Parrived for each of its partitions and checks that partition's data the moment it
 *     says true, then the whole buffer and the status after MPI_Wait;
 *   - partitions large enough for the rendezvous protocol;
 *   - a receive type with gaps (an int in 8 bytes): the data lands at the right places;
 *   - matching in the order of initialisation: two sends with one tag started in the other
 *     order, and two tags initialised in opposite orders on the two sides;
 *   - partitioned traffic never matches an ordinary MPI_ANY_TAG receive;
 *   - MPI_PROC_NULL, zero partitions, MPI_Parrived on null and inactive requests;
 *   - partitions of no data (mpi4py's ring with empty buffers): MPI_Parrived says false until the
 *     sender marks the partition ready, then true;
 *   - the errors: MPI_Pready on an inactive request, out of range, twice; MPI_Parrived on a
 *     send; wildcards in MPI_Precv_init; negative partitions. */
#include "mpitest.h"

#include <string.h>

static int rank, size, peer;

static int value(int i, int round, int who)
{
    return i * 31 + round * 1000003 + who * 7;
}

/* One pair of requests, `rounds` times: send `sp` partitions of `sc` ints, receive `rp` of `rc`. */
static void exchange(int sp, int sc, int rp, int rc, int rounds, int tag, int how)
{
    int n = sp * sc;
    int *sb = malloc((size_t)n * sizeof(int)), *rb = malloc((size_t)n * sizeof(int));
    MPI_Request req[2];
    CHECK_CLASS(MPI_Precv_init(rb, rp, rc, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Psend_init(sb, sp, sc, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]), MPI_SUCCESS);
    char *seen = malloc((size_t)rp);
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < n; i++) {
            sb[i] = value(i, round, rank);
            rb[i] = -1;
        }
        CHECK_CLASS(MPI_Startall(2, req), MPI_SUCCESS);
        switch ((how + round) % 3) {
        case 0: /* backwards, one by one */
            for (int i = sp - 1; i >= 0; i--)
                CHECK_CLASS(MPI_Pready(i, req[1]), MPI_SUCCESS);
            break;
        case 1: /* the second half as a range, then the first */
            CHECK_CLASS(MPI_Pready_range(sp / 2, sp - 1, req[1]), MPI_SUCCESS);
            if (sp / 2 > 0)
                CHECK_CLASS(MPI_Pready_range(0, sp / 2 - 1, req[1]), MPI_SUCCESS);
            break;
        default: { /* odd partitions, then even ones, as lists */
            int *list = malloc((size_t)sp * sizeof(int)), k = 0;
            for (int i = 1; i < sp; i += 2)
                list[k++] = i;
            CHECK_CLASS(MPI_Pready_list(k, list, req[1]), MPI_SUCCESS);
            int odd = k;
            for (int i = 0; i < sp; i += 2)
                list[k++] = i;
            CHECK_CLASS(MPI_Pready_list(k - odd, list + odd, req[1]), MPI_SUCCESS);
            free(list);
        }
        }
        memset(seen, 0, (size_t)rp);
        for (int left = rp; left > 0;) {
            for (int j = 0; j < rp; j++) {
                int flag = 0;
                if (seen[j])
                    continue;
                CHECK_CLASS(MPI_Parrived(req[0], j, &flag), MPI_SUCCESS);
                if (!flag)
                    continue;
                seen[j] = 1;
                left--;
                for (int i = j * rc; i < (j + 1) * rc; i++)
                    if (rb[i] != value(i, round, peer)) {
                        CHECK(0, "%dx%d into %dx%d, round %d: partition %d arrived but int %d is %d, not %d", sp, sc, rp,
                              rc, round, j, i, rb[i], value(i, round, peer));
                        break;
                    }
            }
        }
        MPI_Status st[2];
        CHECK_CLASS(MPI_Waitall(2, req, st), MPI_SUCCESS);
        int count = -1;
        MPI_Get_count(&st[0], MPI_INT, &count);
        CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == tag && count == n,
              "%dx%d into %dx%d: status source %d tag %d count %d, expected %d %d %d", sp, sc, rp, rc,
              st[0].MPI_SOURCE, st[0].MPI_TAG, count, peer, tag, n);
        for (int i = 0; i < n; i++)
            if (rb[i] != value(i, round, peer)) {
                CHECK(0, "%dx%d into %dx%d, round %d: int %d is %d, not %d", sp, sc, rp, rc, round, i, rb[i],
                      value(i, round, peer));
                break;
            }
    }
    int flag = 0;
    CHECK_CLASS(MPI_Parrived(req[0], 0, &flag), MPI_SUCCESS);
    CHECK(flag, "MPI_Parrived on an inactive request: flag false");
    CHECK_CLASS(MPI_Request_free(&req[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Request_free(&req[1]), MPI_SUCCESS);
    free(seen);
    free(sb);
    free(rb);
}

/* Partitions of 0 ints: nothing to move, but a partition arrives only once its sender marked it
 * ready (mpi4py's testRing with empty buffers). */
static void empty_partitions(void)
{
    enum { P = 3 };
    int sb[1] = {0}, rb[1] = {-1};
    MPI_Request sreq, rreq;
    CHECK_CLASS(MPI_Psend_init(sb, P, 0, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq), MPI_SUCCESS);
    CHECK_CLASS(MPI_Precv_init(rb, P, 0, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq), MPI_SUCCESS);
    for (int round = 0; round < 3; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CLASS(MPI_Start(&rreq), MPI_SUCCESS);
        for (int i = 0; i < P; i++) {
            int flag = -1;
            CHECK_CLASS(MPI_Parrived(rreq, i, &flag), MPI_SUCCESS);
            CHECK(flag == 0, "round %d: empty partition %d arrived before its sender started", round, i);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CLASS(MPI_Start(&sreq), MPI_SUCCESS);
        for (int i = 0; i < P; i++)
            CHECK_CLASS(MPI_Pready(i, sreq), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < P; i++) {
            int flag = 0;
            for (long spins = 0; !flag && spins < 100000000; spins++)
                CHECK_CLASS(MPI_Parrived(rreq, i, &flag), MPI_SUCCESS);
            CHECK(flag, "round %d: empty partition %d never arrived", round, i);
        }
        CHECK_CLASS(MPI_Wait(&rreq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(rb[0] == -1, "an empty receive wrote its buffer");
    }
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
}

/* A receive type with gaps: each int in 8 bytes. */
static void gaps(void)
{
    enum { P = 4, C = 100 };
    MPI_Datatype spaced;
    MPI_Type_create_resized(MPI_INT, 0, 8, &spaced);
    MPI_Type_commit(&spaced);
    int sb[P * C], rb[2 * P * C];
    for (int i = 0; i < P * C; i++)
        sb[i] = value(i, 5, rank);
    for (int i = 0; i < 2 * P * C; i++)
        rb[i] = -7;
    MPI_Request req[2];
    MPI_Precv_init(rb, 2, 2 * C, spaced, peer, 40, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]);
    MPI_Psend_init(sb, P, C, MPI_INT, peer, 40, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]);
    MPI_Type_free(&spaced); /* (the requests keep it) */
    MPI_Startall(2, req);
    MPI_Pready_range(0, P - 1, req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < P * C; i++)
        if (rb[2 * i] != value(i, 5, peer) || rb[2 * i + 1] != -7) {
            CHECK(0, "receive type with gaps: element %d is %d (gap %d)", i, rb[2 * i], rb[2 * i + 1]);
            break;
        }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
}

/* Two sends with one tag, started in the other order; two tags initialised in opposite orders. */
static void order(void)
{
    int a[50], b[50], ra[50], rb[50], c[10], d[10], rc[10], rd[10];
    for (int i = 0; i < 50; i++)
        a[i] = value(i, 1, rank), b[i] = value(i, 2, rank);
    for (int i = 0; i < 10; i++)
        c[i] = value(i, 3, rank), d[i] = value(i, 4, rank);
    MPI_Request s[4], r[4];
    MPI_Psend_init(a, 5, 10, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &s[0]);
    MPI_Psend_init(b, 5, 10, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &s[1]);
    MPI_Psend_init(c, 2, 5, MPI_INT, peer, 51, MPI_COMM_WORLD, MPI_INFO_NULL, &s[2]);
    MPI_Psend_init(d, 1, 10, MPI_INT, peer, 52, MPI_COMM_WORLD, MPI_INFO_NULL, &s[3]);
    MPI_Precv_init(rd, 2, 5, MPI_INT, peer, 52, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]); /* tags the other way */
    MPI_Precv_init(rc, 1, 10, MPI_INT, peer, 51, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Precv_init(ra, 10, 5, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(rb, 1, 50, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Start(&r[1]);
    MPI_Start(&s[1]); /* the second send first */
    MPI_Pready_range(0, 4, s[1]);
    MPI_Start(&s[0]);
    MPI_Pready_range(0, 4, s[0]);
    MPI_Start(&r[0]);
    MPI_Startall(2, &s[2]);
    MPI_Startall(2, &r[2]);
    MPI_Pready_range(0, 1, s[2]);
    MPI_Pready(0, s[3]);
    MPI_Waitall(4, s, MPI_STATUSES_IGNORE);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 50; i++)
        CHECK(ra[i] == value(i, 1, peer) && rb[i] == value(i, 2, peer),
              "same tag, started in the other order: int %d is %d and %d", i, ra[i], rb[i]);
    for (int i = 0; i < 10; i++)
        CHECK(rc[i] == value(i, 3, peer) && rd[i] == value(i, 4, peer),
              "tags initialised in opposite orders: int %d is %d and %d", i, rc[i], rd[i]);
    for (int k = 0; k < 4; k++) {
        MPI_Request_free(&s[k]);
        MPI_Request_free(&r[k]);
    }
}

/* An ordinary wildcard receive posted first gets the ordinary message, not partitioned data. */
static void apart(void)
{
    int got = -1, one = 4711 + rank, buf[8], in[8];
    for (int i = 0; i < 8; i++)
        buf[i] = value(i, 9, rank);
    MPI_Request any, s, r;
    MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &any);
    MPI_Psend_init(buf, 2, 4, MPI_INT, peer, 60, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(in, 2, 4, MPI_INT, peer, 60, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&s);
    MPI_Start(&r);
    MPI_Pready_range(0, 1, s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int flag = 1;
    MPI_Test(&any, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "an MPI_ANY_TAG receive took partitioned traffic (got %d)", got);
    MPI_Barrier(MPI_COMM_WORLD); /* (before anyone sends the ordinary message) */
    MPI_Send(&one, 1, MPI_INT, peer, 61, MPI_COMM_WORLD);
    MPI_Wait(&any, MPI_STATUS_IGNORE);
    CHECK(got == 4711 + peer, "the ordinary receive got %d, not %d", got, 4711 + peer);
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == value(i, 9, peer), "partitioned beside ordinary: int %d is %d", i, in[i]);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void edges(void)
{
    int x[4] = {1, 2, 3, 4}, flag = 0;
    MPI_Request s, r;
    MPI_Status st;
    /* MPI_PROC_NULL on both sides */
    CHECK_CLASS(MPI_Psend_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Precv_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_SUCCESS);
    for (int round = 0; round < 3; round++) {
        MPI_Start(&s);
        MPI_Start(&r);
        CHECK_CLASS(MPI_Pready_range(0, 1, s), MPI_SUCCESS);
        CHECK_CLASS(MPI_Parrived(r, 1, &flag), MPI_SUCCESS);
        CHECK(flag, "MPI_PROC_NULL receive: partition not arrived");
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, &st);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_PROC_NULL receive: status source %d", st.MPI_SOURCE);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    /* partitions of no data, into a receive type of two blocks (each lands nowhere, and all arrive) */
    MPI_Datatype spaced;
    MPI_Type_vector(2, 1, 2, MPI_INT, &spaced);
    MPI_Type_commit(&spaced);
    MPI_Psend_init(x, 6, 0, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(x, 3, 0, spaced, peer, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Type_free(&spaced);
    for (int round = 0; round < 3; round++) {
        MPI_Start(&s);
        MPI_Start(&r);
        CHECK_CLASS(MPI_Pready_range(0, 5, s), MPI_SUCCESS);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, &st);
        int n = -1;
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == 0 && x[0] == 1 && x[3] == 4, "partitions of no data: count %d, buffer %d..%d", n, x[0], x[3]);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    /* zero partitions */
    MPI_Psend_init(x, 0, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(x, 0, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&s);
    MPI_Start(&r);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    flag = 0;
    CHECK_CLASS(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag), MPI_SUCCESS);
    CHECK(flag, "MPI_Parrived(MPI_REQUEST_NULL): flag false");

    /* the errors */
    CHECK_CLASS(MPI_Psend_init(x, 4, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Precv_init(x, 4, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST); /* not started */
    CHECK_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST);
    MPI_Start(&s);
    MPI_Start(&r);
    CHECK_CLASS(MPI_Pready(4, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready(-1, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready_range(2, 1, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST); /* a receive */
    CHECK_CLASS(MPI_Parrived(r, 4, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready_range(0, 3, s), MPI_SUCCESS);
    CHECK_CLASS(MPI_Pready(2, s), MPI_ERR_ARG); /* twice */
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST); /* completed: inactive again */
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    CHECK_CLASS(MPI_Precv_init(x, 1, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Precv_init(x, 1, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Psend_init(x, -1, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s), MPI_ERR_ARG);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_errors_return();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = mt_rank;
    peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    exchange(8, 64, 4, 128, 60, 10, 0);
    exchange(1, 256, 16, 16, 30, 11, 1);
    exchange(16, 16, 1, 256, 30, 11, 2); /* (tag 11 again: init order) */
    exchange(3, 1000, 1, 3000, 20, 12, 0);
    exchange(4, 65536, 2, 131072, 4, 13, 1); /* rendezvous-sized partitions */
    gaps();
    order();
    apart();
    edges();
    empty_partitions();
    return mt_finish();
}
