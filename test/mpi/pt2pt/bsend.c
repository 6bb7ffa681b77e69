/* Buffered sends.
 *   - with no buffer attached, MPI_Bsend and MPI_Ibsend fail with MPI_ERR_BUFFER (a send to
 *     MPI_PROC_NULL still succeeds);
 *   - a buffer of exactly k * (size + MPI_BSEND_OVERHEAD) bytes takes k pending messages; the
 *     (k+1)-th fails with MPI_ERR_BUFFER and a message naming the call; all k arrive intact even
 *     though the user buffer is overwritten right after each MPI_Bsend;
 *   - MPI_Buffer_detach returns the attached address and size, and waits for the messages still
 *     in the buffer (the sender scribbles over the buffer after detaching: the data that arrives
 *     must not show it, and a message sent after the detach must not arrive before the
 *     receiver took the buffered ones);
 *   - MPI_Ibsend, MPI_Bsend_init + MPI_Start with changing data;
 *   - MPI_Comm_attach_buffer / MPI_Comm_detach_buffer / MPI_Comm_flush_buffer /
 *     MPI_Comm_iflush_buffer: a communicator's buffer serves only that communicator;
 *   - MPI_BUFFER_AUTOMATIC: any number of buffered messages;
 *   - MPI_Buffer_iflush is incomplete while messages wait in the buffer and completes once they
 *     are received; after MPI_Buffer_flush the space is free again;
 *   - MPI_Session_attach_buffer and the rest: a session's buffer serves the communicators derived
 *     from the session, after their own and before the process's.
 * Ranks work in pairs (0-1, 2-3, ...); a rank without a partner sends to itself. */
#include "mpitest.h"

#define N 300000 /* above the long-eager limit (256 KiB): a buffered message goes by rendezvous,
                  * so it stays in the buffer until it is received */
#define K 4

static void fill(char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (char)(i * 7 + seed * 13 + (i >> 9));
}

static int intact(const char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (char)(i * 7 + seed * 13 + (i >> 9)))
            return 0;
    return 1;
}

static int rank, size, peer;
static char *sbuf, *rbuf;

/* Receives `k` messages of n bytes from `from` on `comm`, tags tag0.., seeds seed0... */
static void receive_k(int from, MPI_Comm comm, int k, int n, int tag0, int seed0, const char *what)
{
    for (int i = 0; i < k; i++) {
        MPI_Status st;
        int count;
        memset(rbuf, 0, (size_t)n);
        CHECK_CLASS(MPI_Recv(rbuf, n, MPI_CHAR, from, tag0 + i, comm, &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_CHAR, &count);
        CHECK(count == n && intact(rbuf, n, seed0 + i), "%s: message %d: %d bytes or wrong data", what, i, count);
    }
}

/* Waits up to `seconds` for a message (from, tag): 1 if none came. */
static int no_message(int from, int tag, double seconds)
{
    double t0 = MPI_Wtime();
    int flag = 0;
    while (!flag && MPI_Wtime() - t0 < seconds)
        MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    return !flag;
}

static void sync_peer(void)
{
    MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 0, NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mt_errors_return();
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    sbuf = malloc(N);
    rbuf = malloc(N);
    int rc, got_size;
    void *got_addr;
    MPI_Request req;

    /* No buffer attached. */
    rc = CHECK_CLASS(MPI_Bsend(sbuf, 10, MPI_CHAR, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK(mt_string_has(rc, "MPI_Bsend"), "the error message does not name MPI_Bsend");
    CHECK_CLASS(MPI_Ibsend(sbuf, 10, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Bsend(sbuf, 10, MPI_CHAR, MPI_PROC_NULL, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Buffer_detach(&got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == NULL && got_size == 0, "detach with nothing attached gave %p %d", got_addr, got_size);
    sync_peer(); /* nothing of the failed sends may arrive: checked below by exact matching */

    /* Exactly K messages fit. */
    int bsize = K * (N + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    CHECK_CLASS(MPI_Buffer_attach(bbuf, bsize), MPI_SUCCESS);
    rc = CHECK_CLASS(MPI_Buffer_attach(bbuf, bsize), MPI_ERR_BUFFER); /* already attached */
    for (int i = 0; i < K; i++) {
        fill(sbuf, N, i);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 10 + i, MPI_COMM_WORLD), MPI_SUCCESS);
        memset(sbuf, 0x55, N); /* the message was copied: the user buffer is free */
    }
    rc = CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 20, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK(mt_string_has(rc, "MPI_Bsend"), "the error message does not name MPI_Bsend");
    rc = CHECK_CLASS(MPI_Bsend(sbuf, 1, MPI_CHAR, peer, 20, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    rc = CHECK_CLASS(MPI_Ibsend(sbuf, 1, MPI_CHAR, peer, 20, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    CHECK(mt_string_has(rc, "MPI_Ibsend"), "the error message does not name MPI_Ibsend");
    sync_peer();
    receive_k(peer, MPI_COMM_WORLD, K, N, 10, 0, "exact fit");
    int flag;
    sync_peer();
    MPI_Iprobe(peer, 20, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a failed buffered send was sent anyway");
    CHECK_CLASS(MPI_Buffer_detach(&got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == bbuf && got_size == bsize, "detach gave %p %d, attached %p %d", got_addr, got_size,
          (void *)bbuf, bsize);

    /* Detach waits for the buffered messages (pairs only: to oneself it would wait forever). */
    if (peer != rank) {
        CHECK_CLASS(MPI_Buffer_attach(bbuf, bsize), MPI_SUCCESS);
        if (rank % 2 == 0) {
            for (int i = 0; i < K; i++) {
                fill(sbuf, N, 30 + i);
                CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 30 + i, MPI_COMM_WORLD), MPI_SUCCESS);
            }
            CHECK_CLASS(MPI_Buffer_detach(&got_addr, &got_size), MPI_SUCCESS);
            CHECK(got_addr == bbuf && got_size == bsize, "detach gave %p %d", got_addr, got_size);
            memset(bbuf, 0x77, (size_t)bsize);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 39, MPI_COMM_WORLD); /* detached */
        } else {
            CHECK(no_message(peer, 39, 0.1), "MPI_Buffer_detach returned while its messages were not received");
            receive_k(peer, MPI_COMM_WORLD, K, N, 30, 30, "detach");
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 39, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_CLASS(MPI_Buffer_detach(&got_addr, &got_size), MPI_SUCCESS);
        }
    }

    /* MPI_Ibsend and a persistent buffered send, eager, long-eager and rendezvous sizes. */
    int big = 4 * (N + MPI_BSEND_OVERHEAD);
    char *bigbuf = malloc((size_t)big);
    CHECK_CLASS(MPI_Buffer_attach(bigbuf, big), MPI_SUCCESS);
    const int sizes[] = {0, 100, 16384, 100000 /* long eager */, N};
    for (int s = 0; s < 5; s++) {
        int n = sizes[s], count;
        MPI_Status st;
        fill(sbuf, n, 40 + s);
        CHECK_CLASS(MPI_Ibsend(sbuf, n, MPI_CHAR, peer, 40 + s, MPI_COMM_WORLD, &req), MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        memset(sbuf, 0x33, (size_t)n);
        memset(rbuf, 0, (size_t)n);
        CHECK_CLASS(MPI_Recv(rbuf, n, MPI_CHAR, peer, 40 + s, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_CHAR, &count);
        CHECK(count == n && intact(rbuf, n, 40 + s), "MPI_Ibsend of %d bytes: got %d or wrong data", n, count);
    }
    for (int s = 0; s < 2; s++) {
        int n = s ? N : 1000;
        CHECK_CLASS(MPI_Bsend_init(sbuf, n, MPI_CHAR, peer, 50, MPI_COMM_WORLD, &req), MPI_SUCCESS);
        for (int round = 0; round < 20; round++) {
            fill(sbuf, n, round);
            CHECK_CLASS(MPI_Start(&req), MPI_SUCCESS);
            CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(req != MPI_REQUEST_NULL, "a persistent request was freed by MPI_Wait");
            memset(sbuf, 0x44, (size_t)n);
            receive_k(peer, MPI_COMM_WORLD, 1, n, 50, round, "MPI_Bsend_init");
        }
        CHECK_CLASS(MPI_Request_free(&req), MPI_SUCCESS);
    }

    /* iflush: incomplete while messages wait in the buffer; flush frees the space. */
    CHECK_CLASS(MPI_Buffer_flush(), MPI_SUCCESS); /* the partner may not have taken the last one yet */
    for (int i = 0; i < 4; i++) {
        fill(sbuf, N, 60 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 60 + i, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Bsend(sbuf, 1, MPI_CHAR, peer, 69, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Buffer_iflush(&req), MPI_SUCCESS);
    double t0 = MPI_Wtime();
    flag = 0;
    while (!flag && MPI_Wtime() - t0 < 0.05)
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "MPI_Buffer_iflush completed while its messages wait for their receives");
    sync_peer();
    receive_k(peer, MPI_COMM_WORLD, 4, N, 60, 60, "iflush");
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 4; i++) { /* the space is free again */
        fill(sbuf, N, 70 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 70 + i, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    MPI_Request rr[4];
    char *rb4 = malloc(4 * N);
    for (int i = 0; i < 4; i++)
        MPI_Irecv(rb4 + i * N, N, MPI_CHAR, peer, 70 + i, MPI_COMM_WORLD, &rr[i]);
    CHECK_CLASS(MPI_Buffer_flush(), MPI_SUCCESS);
    for (int i = 0; i < 4; i++) { /* flushed: all fits again */
        fill(sbuf, N, 80 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 80 + i, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Waitall(4, rr, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 4; i++)
        CHECK(intact(rb4 + i * N, N, 70 + i), "flush: message %d wrong", i);
    receive_k(peer, MPI_COMM_WORLD, 4, N, 80, 80, "after flush");
    CHECK_CLASS(MPI_Buffer_detach(&got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == bigbuf && got_size == big, "detach gave %p %d", got_addr, got_size);

    /* A communicator's own buffer. */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Comm_attach_buffer(comm, bbuf, bsize), MPI_SUCCESS);
    CHECK_CLASS(MPI_Comm_attach_buffer(comm, bbuf, bsize), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Bsend(sbuf, 10, MPI_CHAR, peer, 90, MPI_COMM_WORLD), MPI_ERR_BUFFER); /* not this one */
    for (int i = 0; i < K; i++) {
        fill(sbuf, N, 90 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 90 + i, comm), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 99, comm), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Comm_iflush_buffer(comm, &req), MPI_SUCCESS);
    sync_peer();
    receive_k(peer, comm, K, N, 90, 90, "communicator buffer");
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_CLASS(MPI_Comm_flush_buffer(comm), MPI_SUCCESS);
    CHECK_CLASS(MPI_Comm_detach_buffer(comm, &got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == bbuf && got_size == bsize, "MPI_Comm_detach_buffer gave %p %d", got_addr, got_size);
    CHECK_CLASS(MPI_Bsend(sbuf, 10, MPI_CHAR, peer, 90, comm), MPI_ERR_BUFFER);

    /* Automatic buffering: any number of messages. */
    CHECK_CLASS(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0), MPI_SUCCESS);
    for (int i = 0; i < 30; i++) {
        fill(sbuf, N, 100 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 100 + i, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    sync_peer();
    receive_k(peer, MPI_COMM_WORLD, 30, N, 100, 100, "MPI_BUFFER_AUTOMATIC");
    CHECK_CLASS(MPI_Buffer_flush(), MPI_SUCCESS);
    CHECK_CLASS(MPI_Buffer_detach(&got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == MPI_BUFFER_AUTOMATIC, "detach of the automatic buffer gave %p", got_addr);
    CHECK_CLASS(MPI_Comm_attach_buffer(comm, MPI_BUFFER_AUTOMATIC, 0), MPI_SUCCESS);
    for (int i = 0; i < 10; i++) {
        fill(sbuf, 50000, 200 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, 50000, MPI_CHAR, peer, 200 + i, comm), MPI_SUCCESS);
    }
    receive_k(peer, comm, 10, 50000, 200, 200, "communicator MPI_BUFFER_AUTOMATIC");
    CHECK_CLASS(MPI_Comm_detach_buffer(comm, &got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == MPI_BUFFER_AUTOMATIC, "MPI_Comm_detach_buffer of the automatic buffer gave %p", got_addr);

    /* A session's buffer (MPI_Session_attach_buffer): it serves the communicators derived from
     * the session (made from its group, their duplicates, those made from their groups), and not
     * the world model's; a communicator's own buffer goes first; with none attached to the
     * session, the process's buffer serves. */
    MPI_Session ses, stale;
    MPI_Group sg, g2;
    MPI_Comm cs[3];
    CHECK_CLASS(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses), MPI_SUCCESS);
    MPI_Group_from_session_pset(ses, "mpi://WORLD", &sg);
    CHECK_CLASS(MPI_Comm_create_from_group(sg, "courier.test.bsend", MPI_INFO_NULL, MPI_ERRORS_RETURN, &cs[0]),
                MPI_SUCCESS);
    MPI_Group_free(&sg); /* (the communicator holds the session, not the group) */
    MPI_Comm_dup(cs[0], &cs[1]);
    MPI_Comm_group(cs[1], &g2);
    CHECK_CLASS(MPI_Comm_create_from_group(g2, "courier.test.bsend.2", MPI_INFO_NULL, MPI_ERRORS_RETURN, &cs[2]),
                MPI_SUCCESS);
    MPI_Group_free(&g2);
    rc = CHECK_CLASS(MPI_Session_attach_buffer(MPI_SESSION_NULL, bbuf, bsize), MPI_ERR_SESSION);
    CHECK(mt_string_has(rc, "MPI_Session_attach_buffer"), "the error message does not name MPI_Session_attach_buffer");
    CHECK_CLASS(MPI_Session_attach_buffer(ses, bbuf, bsize), MPI_SUCCESS);
    rc = CHECK_CLASS(MPI_Session_attach_buffer(ses, bbuf, bsize), MPI_ERR_BUFFER); /* already attached */
    CHECK(mt_string_has(rc, "session"), "the error message does not say the session has a buffer");
    CHECK_CLASS(MPI_Bsend(sbuf, 10, MPI_CHAR, peer, 110, MPI_COMM_WORLD), MPI_ERR_BUFFER); /* not the world's */
    for (int i = 0; i < K; i++) { /* K messages over the three fill the one buffer */
        fill(sbuf, N, 110 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 110 + i, cs[i % 3]), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Bsend(sbuf, 1, MPI_CHAR, peer, 119, cs[2]), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Session_iflush_buffer(ses, &req), MPI_SUCCESS);
    t0 = MPI_Wtime();
    flag = 0;
    while (!flag && MPI_Wtime() - t0 < 0.05)
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "MPI_Session_iflush_buffer completed while its messages wait for their receives");
    sync_peer();
    for (int i = 0; i < K; i++)
        receive_k(peer, cs[i % 3], 1, N, 110 + i, 110 + i, "session buffer");
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int one = N + MPI_BSEND_OVERHEAD;
    char *onebuf = malloc((size_t)one);
    CHECK_CLASS(MPI_Comm_attach_buffer(cs[1], onebuf, one), MPI_SUCCESS);
    fill(sbuf, N, 120);
    CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 120, cs[1]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 121, cs[1]), MPI_ERR_BUFFER); /* its own is full */
    fill(sbuf, N, 122);
    CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 122, cs[0]), MPI_SUCCESS); /* the session's is not */
    sync_peer();
    receive_k(peer, cs[1], 1, N, 120, 120, "communicator buffer before the session's");
    receive_k(peer, cs[0], 1, N, 122, 122, "session buffer beside a communicator's");
    CHECK_CLASS(MPI_Comm_detach_buffer(cs[1], &got_addr, &got_size), MPI_SUCCESS);
    CHECK_CLASS(MPI_Session_flush_buffer(ses), MPI_SUCCESS);
    MPI_Count csize;
    CHECK_CLASS(MPI_Session_detach_buffer_c(ses, &got_addr, &csize), MPI_SUCCESS);
    CHECK(got_addr == bbuf && csize == bsize, "MPI_Session_detach_buffer_c gave %p %lld", got_addr, (long long)csize);
    CHECK_CLASS(MPI_Bsend(sbuf, 10, MPI_CHAR, peer, 130, cs[0]), MPI_ERR_BUFFER); /* none anywhere */
    CHECK_CLASS(MPI_Buffer_attach(bigbuf, big), MPI_SUCCESS);
    fill(sbuf, N, 131);
    CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 131, cs[2]), MPI_SUCCESS); /* the process's */
    receive_k(peer, cs[2], 1, N, 131, 131, "process buffer for a session's communicator");
    CHECK_CLASS(MPI_Buffer_detach(&got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == bigbuf, "MPI_Buffer_detach gave %p", got_addr);
    CHECK_CLASS(MPI_Session_attach_buffer_c(ses, MPI_BUFFER_AUTOMATIC, 0), MPI_SUCCESS);
    for (int i = 0; i < 10; i++) {
        fill(sbuf, 50000, 140 + i);
        CHECK_CLASS(MPI_Bsend(sbuf, 50000, MPI_CHAR, peer, 140 + i, cs[i % 3]), MPI_SUCCESS);
    }
    for (int i = 0; i < 10; i++)
        receive_k(peer, cs[i % 3], 1, 50000, 140 + i, 140 + i, "session MPI_BUFFER_AUTOMATIC");
    CHECK_CLASS(MPI_Session_detach_buffer(ses, &got_addr, &got_size), MPI_SUCCESS);
    CHECK(got_addr == MPI_BUFFER_AUTOMATIC, "MPI_Session_detach_buffer of the automatic buffer gave %p", got_addr);
    /* Finalized with a buffer attached whose message (a rendezvous) the partner has not taken:
     * MPI_Session_finalize waits for it, as a detach does; the buffer is scribbled over after. */
    CHECK_CLASS(MPI_Session_attach_buffer(ses, bbuf, bsize), MPI_SUCCESS);
    MPI_Comm late = cs[0];
    cs[0] = MPI_COMM_NULL;
    if (rank % 2 == 0 || peer == rank) {
        fill(sbuf, N, 150);
        CHECK_CLASS(MPI_Bsend(sbuf, N, MPI_CHAR, peer, 150, late), MPI_SUCCESS);
        memset(sbuf, 0x66, N);
    }
    if (rank % 2 == 1 || peer == rank)
        receive_k(peer, late, 1, N, 150, 150, "a session's buffered message at MPI_Session_finalize");
    MPI_Comm_free(&late);
    for (int i = 1; i < 3; i++)
        MPI_Comm_free(&cs[i]);
    MPI_Group kept; /* freed after the session ends, as the standard allows: it holds the session */
    MPI_Group_from_session_pset(ses, "mpi://SELF", &kept);
    stale = ses;
    CHECK_CLASS(MPI_Session_finalize(&ses), MPI_SUCCESS);
    memset(bbuf, 0x77, (size_t)bsize);
    CHECK(ses == MPI_SESSION_NULL, "MPI_Session_finalize did not set the handle to MPI_SESSION_NULL");
    CHECK_CLASS(MPI_Session_attach_buffer(stale, bbuf, bsize), MPI_ERR_SESSION);
    MPI_Info info;
    CHECK_CLASS(MPI_Session_get_info(stale, &info), MPI_ERR_SESSION);
    CHECK_CLASS(MPI_Session_finalize(&stale), MPI_ERR_SESSION); /* (not twice) */
    int gsize = 0;
    MPI_Group_size(kept, &gsize);
    CHECK(gsize == 1, "a group of mpi://SELF has %d processes after its session ended", gsize);
    CHECK_CLASS(MPI_Group_free(&kept), MPI_SUCCESS);
    free(onebuf);

    MPI_Comm_free(&comm);
    free(rb4);
    free(bigbuf);
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
