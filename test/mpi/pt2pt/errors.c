/* Point-to-point errors under MPI_ERRORS_RETURN (set on MPI_COMM_WORLD and MPI_COMM_SELF):
 * bad ranks (MPI_ERR_RANK, with the call's name and "dest=..."/"source=..." in the message),
 * bad tags (MPI_ERR_TAG), negative counts (MPI_ERR_COUNT), MPI_DATATYPE_NULL (MPI_ERR_TYPE),
 * MPI_COMM_NULL (MPI_ERR_COMM), a NULL buffer with a positive count (MPI_ERR_BUFFER), invalid
 * requests (MPI_ERR_REQUEST), truncation (MPI_ERR_TRUNCATE from MPI_Recv, MPI_Wait, MPI_Mrecv,
 * MPI_Test, MPI_Waitany, MPI_Testany, MPI_Sendrecv, MPI_Isendrecv, eager and rendezvous,
 * contiguous and not; the status's MPI_ERROR; no byte written past the
 * buffer; the sender completes normally; later messages flow), and MPI_ERR_IN_STATUS with
 * per-request MPI_ERROR from MPI_Waitall/Testall/Waitsome. Ranks pair up (0-1, 2-3, ...; a rank
 * without a partner uses itself). With the argument "multiple", all of it at MPI_THREAD_MULTIPLE. */
#include "mpitest.h"

#include <stdint.h>
#include <string.h>

typedef struct {
    double d;
    int i;
} double_int;

static int rank, size, peer;
static MPI_Comm syncc; /* synchronisation messages stay out of MPI_COMM_WORLD's probes */

static int cls(int code)
{
    int c = code;
    if (code != MPI_SUCCESS)
        MPI_Error_class(code, &c);
    return c;
}

/* The call failed with `expected` and its message names `call` and contains `text`. */
static void check_msg(int rc, const char *call, const char *text, const char *what)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int len;
    MPI_Error_string(rc, s, &len);
    CHECK(mt_string_has(rc, call), "%s: the message \"%s\" does not name %s", what, s, call);
    if (text)
        CHECK(mt_string_has(rc, text), "%s: the message \"%s\" does not contain \"%s\"", what, s, text);
}

static void sync_peer(void)
{
    MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 0, NULL, 0, MPI_BYTE, peer, 0, syncc, MPI_STATUS_IGNORE);
}

/* Exchanges n ints with the partner, received into a buffer of cap < n ints by `how`. */
static void truncation(int n, int cap, int how, const char *how_name)
{
    int *out = malloc((size_t)n * sizeof(int)), *in = malloc((size_t)(cap + 8) * sizeof(int));
    for (int i = 0; i < n; i++)
        out[i] = i + rank * 100000;
    for (int i = 0; i < cap + 8; i++)
        in[i] = -7;
    MPI_Request s, r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_ERROR = -1;
    const int tag = 77;
    CHECK_CLASS(MPI_Isend(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &s), MPI_SUCCESS);
    int rc = MPI_SUCCESS;
    if (how == 0) {
        rc = MPI_Recv(in, cap, MPI_INT, peer, tag, MPI_COMM_WORLD, &st);
        check_msg(rc, "MPI_Recv", NULL, "truncation");
    } else if (how == 1) {
        CHECK_CLASS(MPI_Irecv(in, cap, MPI_INT, peer, tag, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        rc = MPI_Wait(&r, &st);
        check_msg(rc, "MPI_Wait", NULL, "truncation");
        CHECK(r == MPI_REQUEST_NULL, "MPI_Wait with an error did not free the request");
    } else {
        MPI_Message m;
        MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        rc = MPI_Mrecv(in, cap, MPI_INT, &m, &st);
    }
    CHECK(cls(rc) == MPI_ERR_TRUNCATE, "%d ints into %d with %s: class %d, expected MPI_ERR_TRUNCATE", n, cap,
          how_name, cls(rc));
    CHECK(cls(st.MPI_ERROR) == MPI_ERR_TRUNCATE, "%d ints into %d with %s: status MPI_ERROR class %d", n, cap,
          how_name, cls(st.MPI_ERROR));
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "%s truncated: status source %d tag %d", how_name,
          st.MPI_SOURCE, st.MPI_TAG);
    int past = 1;
    for (int i = cap; i < cap + 8; i++)
        past &= in[i] == -7;
    CHECK(past, "%d ints into %d with %s: bytes written past the buffer", n, cap, how_name);
    CHECK_CLASS(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS); /* the sender is fine */
    /* the channel still works */
    int x = 1000 + rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, peer, tag, &y, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &st);
    CHECK(y == 1000 + peer, "after a truncated %s: the next message is %d", how_name, y);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    /* "multiple": the same at MPI_THREAD_MULTIPLE, where small sends skip the critical section
     * (their quick entry points must still send every bad argument to the full checks) */
    int provided = MPI_THREAD_SINGLE;
    if (argc > 1 && !strcmp(argv[1], "multiple"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    CHECK(argc < 2 || provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not granted (%d)", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &syncc);
    int buf[16] = {0}, rc, flag;
    char text[64];
    MPI_Request r;
    MPI_Status st;
    MPI_Message m;

    /* Ranks. */
    const int bad_ranks[] = {size, -7, MPI_ANY_SOURCE, size + 1000};
    for (int i = 0; i < 4; i++) {
        int d = bad_ranks[i];
        snprintf(text, sizeof text, "dest=%d", d);
        rc = CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
        check_msg(rc, "MPI_Send", text, "MPI_Send to a bad rank");
        rc = CHECK_CLASS(MPI_Ssend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
        check_msg(rc, "MPI_Ssend", text, "MPI_Ssend to a bad rank");
        rc = CHECK_CLASS(MPI_Rsend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
        check_msg(rc, "MPI_Rsend", text, "MPI_Rsend to a bad rank");
        rc = CHECK_CLASS(MPI_Bsend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
        check_msg(rc, "MPI_Bsend", text, "MPI_Bsend to a bad rank");
        rc = CHECK_CLASS(MPI_Isend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
        check_msg(rc, "MPI_Isend", text, "MPI_Isend to a bad rank");
        rc = CHECK_CLASS(MPI_Issend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
        check_msg(rc, "MPI_Issend", text, "MPI_Issend to a bad rank");
        rc = CHECK_CLASS(MPI_Send_init(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
        check_msg(rc, "MPI_Send_init", text, "MPI_Send_init to a bad rank");
        rc = CHECK_CLASS(MPI_Send_c(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
        check_msg(rc, "MPI_Send_c", text, "MPI_Send_c to a bad rank");
        rc = CHECK_CLASS(MPI_Sendrecv(buf, 1, MPI_INT, d, 0, buf + 1, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st),
                         MPI_ERR_RANK);
        check_msg(rc, "MPI_Sendrecv", text, "MPI_Sendrecv to a bad rank");
        if (d == MPI_ANY_SOURCE)
            continue; /* a valid source */
        snprintf(text, sizeof text, "source=%d", d);
        rc = CHECK_CLASS(MPI_Recv(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
        check_msg(rc, "MPI_Recv", text, "MPI_Recv from a bad rank");
        rc = CHECK_CLASS(MPI_Irecv(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
        check_msg(rc, "MPI_Irecv", text, "MPI_Irecv from a bad rank");
        rc = CHECK_CLASS(MPI_Probe(d, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
        check_msg(rc, "MPI_Probe", text, "MPI_Probe of a bad rank");
        rc = CHECK_CLASS(MPI_Iprobe(d, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK);
        rc = CHECK_CLASS(MPI_Mprobe(d, 0, MPI_COMM_WORLD, &m, &st), MPI_ERR_RANK);
        rc = CHECK_CLASS(MPI_Recv_init(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    }
    rc = CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);
    check_msg(rc, "MPI_Send", "dest=1", "MPI_Send to rank 1 of MPI_COMM_SELF");
    CHECK_CLASS(MPI_Recv(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF, &st), MPI_ERR_RANK);

    /* Tags. */
    const int bad_tags[] = {-5, MPI_ANY_TAG, INT32_MIN};
    for (int i = 0; i < 3; i++) {
        int t = bad_tags[i];
        rc = CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, peer, t, MPI_COMM_WORLD), MPI_ERR_TAG);
        check_msg(rc, "MPI_Send", "tag", "MPI_Send with a bad tag");
        CHECK_CLASS(MPI_Isend(buf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
        CHECK_CLASS(MPI_Bsend(buf, 1, MPI_INT, peer, t, MPI_COMM_WORLD), MPI_ERR_TAG);
        CHECK_CLASS(MPI_Ssend_init(buf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
        CHECK_CLASS(MPI_Sendrecv(buf, 1, MPI_INT, peer, t, buf + 1, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st),
                    MPI_ERR_TAG);
        if (t == MPI_ANY_TAG)
            continue; /* a valid receive tag */
        CHECK_CLASS(MPI_Recv(buf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
        CHECK_CLASS(MPI_Irecv(buf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
        CHECK_CLASS(MPI_Iprobe(peer, t, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG);
        CHECK_CLASS(MPI_Sendrecv(buf, 1, MPI_INT, peer, 0, buf + 1, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &st),
                    MPI_ERR_TAG);
    }
    int ub, *ubp;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ubp, &flag);
    ub = flag ? *ubp : 0;
    CHECK(flag && ub == INT32_MAX, "MPI_TAG_UB is %d", ub);

    /* Counts, datatypes, communicators, buffers. */
    rc = CHECK_CLASS(MPI_Send(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    check_msg(rc, "MPI_Send", "count", "negative count");
    CHECK_CLASS(MPI_Send_c(buf, -3, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Irecv(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Isend(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    rc = CHECK_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    check_msg(rc, "MPI_Send", "datatype", "MPI_DATATYPE_NULL");
    CHECK_CLASS(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Isend(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
    rc = CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    check_msg(rc, "MPI_Send", "comm", "MPI_COMM_NULL");
    CHECK_CLASS(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Iprobe(0, 0, MPI_COMM_NULL, &flag, &st), MPI_ERR_COMM);
    rc = CHECK_CLASS(MPI_Send(NULL, 5, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    check_msg(rc, "MPI_Send", "buf", "NULL buffer");
    CHECK_CLASS(MPI_Recv(NULL, 5, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Isend(NULL, 5, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Irsend(NULL, 5, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Rsend(NULL, 5, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    rc = CHECK_CLASS(MPI_Isend(buf, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    check_msg(rc, "MPI_Isend", "request", "a NULL request");
    CHECK_CLASS(MPI_Irsend(buf, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Isend_c(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Irsend(buf, 1, MPI_INT, peer, -3, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Rsend(buf, -2, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    {
        MPI_Datatype loose;
        MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */
        rc = CHECK_CLASS(MPI_Send(buf, 1, loose, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        check_msg(rc, "MPI_Send", "datatype", "an uncommitted datatype");
        CHECK_CLASS(MPI_Isend(buf, 1, loose, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
        MPI_Type_free(&loose);
    }
    CHECK_CLASS(MPI_Irecv(NULL, 5, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    /* ...but NULL with count 0 is fine */
    CHECK_CLASS(MPI_Sendrecv(NULL, 0, MPI_INT, peer, 1, NULL, 0, MPI_INT, peer, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);

    /* Requests. */
    MPI_Request bogus = (MPI_Request)(uintptr_t)0x7ffff123;
    rc = CHECK_CLASS(MPI_Wait(&bogus, &st), MPI_ERR_REQUEST);
    check_msg(rc, "MPI_Wait", NULL, "an invalid request");
    bogus = (MPI_Request)MPI_COMM_WORLD; /* a handle of another kind */
    CHECK_CLASS(MPI_Wait(&bogus, &st), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Test(&bogus, &flag, &st), MPI_ERR_REQUEST);
    MPI_Request two[2] = {MPI_REQUEST_NULL, (MPI_Request)(uintptr_t)0x7ffff123};
    CHECK_CLASS(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Request_free(&bogus), MPI_ERR_REQUEST);
    MPI_Irecv(buf, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r);
    CHECK_CLASS(MPI_Start(&r), MPI_ERR_REQUEST); /* not persistent */
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Recv_init(buf, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r);
    MPI_Start(&r);
    CHECK_CLASS(MPI_Start(&r), MPI_ERR_REQUEST); /* already active */
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Request_free(&r);
    sync_peer(); /* nothing above may have sent anything */
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "a failed call sent a message (source %d, tag %d)", st.MPI_SOURCE, st.MPI_TAG);
    sync_peer(); /* the partner sends again only after our probe */

    /* Truncation: eager, at the eager limit, long eager (cut inside its first frame, and after
     * a few frames), rendezvous. */
    const char *how_name[3] = {"MPI_Recv", "MPI_Irecv + MPI_Wait", "MPI_Mrecv"};
    const int sizes[][2] = {{10, 5},        {4096, 4095}, {4097, 4096},  {50000, 100},
                            {50000, 40000}, {50000, 0},   {100000, 100}, {100000, 0}};
    for (int s = 0; s < 8; s++)
        for (int how = 0; how < 3; how++)
            truncation(sizes[s][0], sizes[s][1], how, how_name[how]);

    /* Truncation reported by MPI_Test, MPI_Waitany, MPI_Testany, MPI_Sendrecv, MPI_Isendrecv. */
    for (int k = 0; k < 5; k++) {
        int n = k % 2 ? 20000 : 50, x[20000], y[64], idx = -1;
        const char *call[] = {"MPI_Test", "MPI_Waitany", "MPI_Testany", "MPI_Sendrecv", "MPI_Isendrecv"};
        for (int i = 0; i < n; i++)
            x[i] = i;
        memset(&st, 0, sizeof st);
        MPI_Request pair[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, s;
        if (k < 3) {
            MPI_Irecv(y, 10, MPI_INT, peer, 9, MPI_COMM_WORLD, &pair[1]);
            MPI_Isend(x, n, MPI_INT, peer, 9, MPI_COMM_WORLD, &s);
            flag = 0;
            if (k == 0)
                while (!flag && cls(rc = MPI_Test(&pair[1], &flag, &st)) == MPI_SUCCESS)
                    ;
            else if (k == 1)
                rc = MPI_Waitany(2, pair, &idx, &st);
            else
                while (!flag && cls(rc = MPI_Testany(2, pair, &idx, &flag, &st)) == MPI_SUCCESS)
                    ;
            CHECK(k == 0 || idx == 1, "%s: index %d", call[k], idx);
            CHECK(pair[1] == MPI_REQUEST_NULL, "%s: the failed request was not freed", call[k]);
            MPI_Wait(&s, MPI_STATUS_IGNORE);
        } else if (k == 3) {
            rc = MPI_Sendrecv(x, n, MPI_INT, peer, 9, y, 10, MPI_INT, peer, 9, MPI_COMM_WORLD, &st);
        } else {
            MPI_Isendrecv(x, n, MPI_INT, peer, 9, y, 10, MPI_INT, peer, 9, MPI_COMM_WORLD, &s);
            rc = MPI_Wait(&s, &st);
        }
        CHECK(cls(rc) == MPI_ERR_TRUNCATE, "%s of %d ints into 10: class %d, expected MPI_ERR_TRUNCATE", call[k], n,
              cls(rc));
        CHECK(cls(st.MPI_ERROR) == MPI_ERR_TRUNCATE, "%s: status MPI_ERROR class %d", call[k], cls(st.MPI_ERROR));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 9, "%s: status (%d, %d)", call[k], st.MPI_SOURCE, st.MPI_TAG);
        sync_peer();
    }

    /* Truncation of a pair type (unpacked piece by piece). */
    for (int big = 0; big < 2; big++) {
        int n = big ? 5000 : 100, cap = n / 2;
        double_int *o = malloc((size_t)n * sizeof *o), *in = malloc((size_t)(cap + 1) * sizeof *in);
        for (int i = 0; i < n; i++)
            o[i] = (double_int){i, i};
        memset(in, 0x3c, (size_t)(cap + 1) * sizeof *in);
        double_int guard = in[cap];
        MPI_Request s;
        MPI_Isend(o, n, MPI_DOUBLE_INT, peer, 8, MPI_COMM_WORLD, &s);
        rc = MPI_Recv(in, cap, MPI_DOUBLE_INT, peer, 8, MPI_COMM_WORLD, &st);
        CHECK(cls(rc) == MPI_ERR_TRUNCATE, "%d MPI_DOUBLE_INT into %d: class %d", n, cap, cls(rc));
        CHECK(memcmp(&in[cap], &guard, sizeof guard) == 0, "%d MPI_DOUBLE_INT into %d: written past the buffer", n,
              cap);
        CHECK_CLASS(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
        free(o);
        free(in);
    }

    /* MPI_ERR_IN_STATUS: one truncated receive among others. */
    for (int which = 0; which < 3; which++) {
        int out[3][8000], in[3][8000];
        const int n[3] = {4, 8000, 8000}, cap[3] = {4, 8000, 100}; /* the third is truncated */
        MPI_Request rq[4];
        MPI_Status sts[4];
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < n[k]; i++)
                out[k][i] = k * 10000 + i;
            MPI_Irecv(in[k], cap[k], MPI_INT, peer, 20 + k, MPI_COMM_WORLD, &rq[k]);
        }
        rq[3] = MPI_REQUEST_NULL;
        sync_peer(); /* all receives are posted on both sides */
        MPI_Request sq[3];
        for (int k = 0; k < 3; k++)
            MPI_Isend(out[k], n[k], MPI_INT, peer, 20 + k, MPI_COMM_WORLD, &sq[k]);
        for (int k = 0; k < 4; k++)
            sts[k].MPI_ERROR = -1;
        const char *call = which == 0 ? "MPI_Waitall" : which == 1 ? "MPI_Testall" : "MPI_Waitsome";
        if (which == 0) {
            rc = MPI_Waitall(4, rq, sts);
        } else if (which == 1) {
            do
                rc = MPI_Testall(4, rq, &flag, sts);
            while (rc == MPI_SUCCESS && !flag);
        } else {
            int got = 0, outcount, idx[4];
            MPI_Status tmp[4];
            rc = MPI_SUCCESS;
            while (got < 3) {
                int e = MPI_Waitsome(4, rq, &outcount, idx, tmp);
                if (outcount == MPI_UNDEFINED)
                    break;
                if (e != MPI_SUCCESS)
                    rc = e;
                for (int j = 0; j < outcount; j++)
                    sts[idx[j]] = tmp[j];
                got += outcount;
            }
        }
        CHECK(cls(rc) == MPI_ERR_IN_STATUS, "%s with a truncated receive: class %d, expected MPI_ERR_IN_STATUS",
              call, cls(rc));
        CHECK(cls(sts[2].MPI_ERROR) == MPI_ERR_TRUNCATE, "%s: the truncated request's MPI_ERROR class is %d", call,
              cls(sts[2].MPI_ERROR));
        CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_SUCCESS,
              "%s: the good requests' MPI_ERROR are %d and %d", call, sts[0].MPI_ERROR, sts[1].MPI_ERROR);
        CHECK(memcmp(in[1], out[1], sizeof out[1]) == 0, "%s: the good rendezvous receive's data is wrong", call);
        CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL && rq[2] == MPI_REQUEST_NULL,
              "%s: requests not freed", call);
        CHECK_CLASS(MPI_Waitall(3, sq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    }
    MPI_Comm_free(&syncc);
    return mt_finish();
}
