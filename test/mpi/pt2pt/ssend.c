/* Synchronous sends complete only once a receive matched them:
 *   - MPI_Issend (0 bytes, small, the eager limit, rendezvous): MPI_Test and
 *     MPI_Request_get_status say "not complete" for ~100 ms while the receiver has not posted
 *     the receive; the receiver takes a "go" message (sent after the Issend) first and only then
 *     posts the matching receive; then the Issend completes and the data is right;
 *   - MPI_Ssend blocks: a message the sender sends after it cannot arrive before the receiver
 *     posts the receive for the synchronous one;
 *   - the same to oneself (MPI_Issend, then MPI_Irecv);
 *   - a standard MPI_Send of a small message completes with no receive posted (the receiver
 *     takes a later message first).
 * Ranks work in pairs (0-1, 2-3, ...); every rank also does the self part. */
#include "mpitest.h"

static void fill(char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (char)(i * 31 + seed);
}

static int intact(const char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (char)(i * 31 + seed))
            return 0;
    return 1;
}

/* Tests `req` for about `seconds`: returns 1 if it never completed. */
static int stays_incomplete(MPI_Request *req, double seconds)
{
    double t0 = MPI_Wtime();
    int flag = 0, polls = 0;
    while (MPI_Wtime() - t0 < seconds || polls < 100) {
        polls++;
        if (polls % 2)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        else
            MPI_Request_get_status(*req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int partner = rank ^ 1;
    const int sizes[] = {0, 100, 16384, 100000};
    const int maxn = 100000;
    char *sbuf = malloc(maxn), *rbuf = malloc(maxn);
    MPI_Request req;
    MPI_Status st;
    int count;

    if (partner < size) {
        for (int s = 0; s < 4; s++) {
            int n = sizes[s], tag = 100 + s;
            if (rank % 2 == 0) {
                fill(sbuf, n, s);
                CHECK_CLASS(MPI_Issend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req), MPI_SUCCESS);
                CHECK(stays_incomplete(&req, 0.1), "MPI_Issend of %d bytes completed before a receive was posted", n);
                MPI_Send(NULL, 0, MPI_BYTE, partner, 1, MPI_COMM_WORLD); /* go */
                CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
                CHECK(req == MPI_REQUEST_NULL, "request not freed");
            } else {
                MPI_Recv(NULL, 0, MPI_BYTE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                memset(rbuf, 0, maxn);
                MPI_Recv(rbuf, maxn, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_CHAR, &count);
                CHECK(count == n && intact(rbuf, n, s) && st.MPI_SOURCE == partner && st.MPI_TAG == tag,
                      "Issend of %d bytes: got %d bytes (source %d tag %d) or wrong data", n, count, st.MPI_SOURCE,
                      st.MPI_TAG);
            }
        }

        /* Blocking MPI_Ssend: the message sent after it must not arrive while the receiver
         * has not posted the receive for the synchronous one. */
        for (int s = 0; s < 4; s++) {
            int n = sizes[s], tag = 200 + s;
            if (rank % 2 == 0) {
                fill(sbuf, n, 50 + s);
                CHECK_CLASS(MPI_Ssend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD), MPI_SUCCESS);
                MPI_Send(NULL, 0, MPI_BYTE, partner, 2, MPI_COMM_WORLD); /* after */
            } else {
                double t0 = MPI_Wtime();
                int flag = 0;
                while (!flag && MPI_Wtime() - t0 < 0.1)
                    MPI_Iprobe(partner, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                CHECK(!flag, "MPI_Ssend of %d bytes returned before its receive was posted", n);
                memset(rbuf, 0, maxn);
                MPI_Recv(rbuf, maxn, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_CHAR, &count);
                CHECK(count == n && intact(rbuf, n, 50 + s), "Ssend of %d bytes: got %d bytes or wrong data", n, count);
                MPI_Recv(NULL, 0, MPI_BYTE, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }

        /* Standard mode, small: completes without a posted receive (Courier sends it eagerly;
         * not when COURIER_EAGER_MAX forbids it: then the send may wait for the receive). */
        const char *eager = getenv("COURIER_EAGER_MAX");
        if (eager && atoi(eager) < 64) {
        } else if (rank % 2 == 0) {
            fill(sbuf, 64, 7);
            CHECK_CLASS(MPI_Send(sbuf, 64, MPI_CHAR, partner, 300, MPI_COMM_WORLD), MPI_SUCCESS);
            MPI_Send(NULL, 0, MPI_BYTE, partner, 3, MPI_COMM_WORLD);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(rbuf, maxn, MPI_CHAR, partner, 300, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_CHAR, &count);
            CHECK(count == 64 && intact(rbuf, 64, 7), "standard send: %d bytes", count);
        }
    }

    /* To oneself. */
    for (int s = 0; s < 4; s++) {
        int n = sizes[s], tag = 400 + s;
        fill(sbuf, n, 90 + s);
        memset(rbuf, 0, maxn);
        CHECK_CLASS(MPI_Issend(sbuf, n, MPI_CHAR, rank, tag, MPI_COMM_WORLD, &req), MPI_SUCCESS);
        CHECK(stays_incomplete(&req, 0.02), "MPI_Issend of %d bytes to itself completed before a receive was posted",
              n);
        MPI_Request rreq;
        MPI_Irecv(rbuf, maxn, MPI_CHAR, rank, tag, MPI_COMM_WORLD, &rreq);
        CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&rreq, &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_CHAR, &count);
        CHECK(count == n && intact(rbuf, n, 90 + s) && st.MPI_SOURCE == rank,
              "self Issend of %d bytes: got %d bytes from %d or wrong data", n, count, st.MPI_SOURCE);
    }
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
