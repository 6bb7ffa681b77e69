/* Every send mode (Send, Bsend, Ssend, Rsend, Isend, Ibsend, Issend, Irsend) to a blocking or
 * nonblocking receive, at sizes on both sides of every protocol threshold (0 B to 1 MiB: eager,
 * the eager limit itself, long eager in several frames, the long-eager limit, rendezvous,
 * frames larger than the shared-memory frame limit), with
 * MPI_CHAR, MPI_INT, MPI_DOUBLE and the padded pair type MPI_DOUBLE_INT (packed on the way).
 * Checks every element that arrived, that nothing past the message or in the pair type's
 * padding was written, and the status (MPI_SOURCE, MPI_TAG, MPI_ERROR, MPI_Get_count,
 * MPI_Get_elements).
 *
 * Ranks work in pairs (0-1, 2-3, ...) sending both ways at once; with an odd size the last
 * rank sends to itself. Each exchange runs twice: with the receive posted before the send
 * (announced with a "ready" message, as MPI_Rsend requires), and with the message arriving
 * first (the receiver probes for it, then receives: the unexpected-message path). */
#include "mpitest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    double d;
    int i;
} double_int;

enum { M_SEND, M_BSEND, M_SSEND, M_RSEND, M_ISEND, M_IBSEND, M_ISSEND, M_IRSEND, NMODES };
static const char *mode_name[NMODES] = {"MPI_Send",  "MPI_Bsend",  "MPI_Ssend",  "MPI_Rsend",
                                        "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"};

enum { T_CHAR, T_INT, T_DOUBLE, T_DOUBLE_INT, NTYPES };
static const char *type_name[NTYPES] = {"MPI_CHAR", "MPI_INT", "MPI_DOUBLE", "MPI_DOUBLE_INT"};
static MPI_Datatype type_of(int t)
{
    return t == T_CHAR ? MPI_CHAR : t == T_INT ? MPI_INT : t == T_DOUBLE ? MPI_DOUBLE : MPI_DOUBLE_INT;
}
/* Bytes of data in one element, and the element's extent in memory. */
static const size_t type_size[NTYPES] = {1, sizeof(int), sizeof(double), sizeof(double) + sizeof(int)};
static const size_t type_extent[NTYPES] = {1, sizeof(int), sizeof(double), sizeof(double_int)};

#define SPARE 4      /* elements past the message in the receive buffer, which must stay untouched */
#define GUARD 0xEE   /* what the receive buffer holds before the receive */

/* The value of element i of message `seed`: different for every element and every message. */
static void fill(void *buf, int t, size_t count, unsigned seed)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t v = (uint32_t)(i * 2654435761u) ^ (seed * 40503u) ^ (uint32_t)(i >> 7);
        switch (t) {
        case T_CHAR: ((char *)buf)[i] = (char)(v ^ (v >> 11)); break;
        case T_INT: ((int *)buf)[i] = (int)v; break;
        case T_DOUBLE: ((double *)buf)[i] = (double)v * 0.25 + seed; break;
        default: ((double_int *)buf)[i].d = (double)v * 0.5 - seed; ((double_int *)buf)[i].i = (int)(v ^ seed); break;
        }
    }
}

/* Checks the `count` received elements against `expect` and the guard bytes around them.
 * Returns the index of the first bad element, or -1. */
static long check_buf(const void *got, const void *expect, int t, size_t count)
{
    const unsigned char *g = got;
    if (t != T_DOUBLE_INT) {
        size_t n = count * type_size[t];
        if (memcmp(got, expect, n) != 0) {
            for (size_t i = 0; i < count; i++)
                if (memcmp(g + i * type_size[t], (const char *)expect + i * type_size[t], type_size[t]))
                    return (long)i;
        }
    } else {
        const double_int *a = got, *b = expect;
        for (size_t i = 0; i < count; i++) {
            if (a[i].d != b[i].d || a[i].i != b[i].i)
                return (long)i;
            /* the padding after the int is not part of the type map: it must not be written */
            const unsigned char *pad = (const unsigned char *)&a[i] + offsetof(double_int, i) + sizeof(int);
            for (size_t k = 0; k < sizeof(double_int) - offsetof(double_int, i) - sizeof(int); k++)
                if (pad[k] != GUARD)
                    return (long)i;
        }
    }
    for (size_t k = count * type_extent[t]; k < (count + SPARE) * type_extent[t]; k++)
        if (g[k] != GUARD)
            return (long)(k / type_extent[t]);
    return -1;
}

static void *send_buf, *recv_buf, *expect_buf;

static void do_send(int mode, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Request *req)
{
    *req = MPI_REQUEST_NULL;
    switch (mode) {
    case M_SEND: CHECK_CLASS(MPI_Send(buf, count, dt, dest, tag, MPI_COMM_WORLD), MPI_SUCCESS); break;
    case M_BSEND: CHECK_CLASS(MPI_Bsend(buf, count, dt, dest, tag, MPI_COMM_WORLD), MPI_SUCCESS); break;
    case M_SSEND: CHECK_CLASS(MPI_Ssend(buf, count, dt, dest, tag, MPI_COMM_WORLD), MPI_SUCCESS); break;
    case M_RSEND: CHECK_CLASS(MPI_Rsend(buf, count, dt, dest, tag, MPI_COMM_WORLD), MPI_SUCCESS); break;
    case M_ISEND: CHECK_CLASS(MPI_Isend(buf, count, dt, dest, tag, MPI_COMM_WORLD, req), MPI_SUCCESS); break;
    case M_IBSEND: CHECK_CLASS(MPI_Ibsend(buf, count, dt, dest, tag, MPI_COMM_WORLD, req), MPI_SUCCESS); break;
    case M_ISSEND: CHECK_CLASS(MPI_Issend(buf, count, dt, dest, tag, MPI_COMM_WORLD, req), MPI_SUCCESS); break;
    case M_IRSEND: CHECK_CLASS(MPI_Irsend(buf, count, dt, dest, tag, MPI_COMM_WORLD, req), MPI_SUCCESS); break;
    }
}

static void check_status(const MPI_Status *st, int src, int tag, int t, int count, const char *what)
{
    int n = -1, e = -1;
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag, "%s: status source %d tag %d, expected %d %d", what,
          st->MPI_SOURCE, st->MPI_TAG, src, tag);
    CHECK(st->MPI_ERROR == MPI_SUCCESS || st->MPI_ERROR == (int)0xEEEEEEEEu, "%s: status MPI_ERROR %d", what,
          st->MPI_ERROR);
    MPI_Get_count(st, type_of(t), &n);
    CHECK(n == count, "%s: MPI_Get_count %d, expected %d", what, n, count);
    MPI_Get_elements(st, type_of(t), &e);
    int elements = t == T_DOUBLE_INT ? 2 * count : count;
    CHECK(e == elements, "%s: MPI_Get_elements %d, expected %d", what, e, elements);
    MPI_Count nc = -1;
    MPI_Get_count_c(st, MPI_BYTE, &nc);
    CHECK(nc == (MPI_Count)(count * type_size[t]), "%s: %lld bytes arrived, expected %zu", what, (long long)nc,
          count * type_size[t]);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int partner = (rank ^ 1) < size ? rank ^ 1 : rank;
    const size_t sizes[] = {0, 1, 8, 16383, 16384, 16385, 32768, 32769, 65000, 65536, 70000, 262144, 262145, 1 << 20};
    const int nsizes = sizeof sizes / sizeof sizes[0];
    const size_t max_count = (1 << 20) + SPARE;
    send_buf = malloc(max_count * sizeof(double_int));
    recv_buf = malloc(max_count * sizeof(double_int));
    expect_buf = malloc(max_count * sizeof(double_int));
    /* Room for two messages in flight (ours, and a self-send's) of the largest size. */
    int bsize = 2 * ((int)(max_count * sizeof(double_int)) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);

    int iter = 0;
    for (int variant = 0; variant < 2; variant++) {
        for (int mode = 0; mode < NMODES; mode++) {
            bool ready = mode == M_RSEND || mode == M_IRSEND;
            if (variant == 1 && (ready || partner == rank))
                continue; /* ready sends need the receive posted; self-sends cannot probe first */
            for (int s = 0; s < nsizes; s++) {
                for (int t = 0; t < NTYPES; t++, iter++) {
                    int count = (int)((sizes[s] + type_size[t] - 1) / type_size[t]);
                    MPI_Datatype dt = type_of(t);
                    /* odd tags up to MPI_TAG_UB; tag 0 is the "ready" message */
                    int tag = iter % 2 ? iter : 0x7fffffff - iter;
                    unsigned seed_out = (unsigned)(iter * 64 + rank), seed_in = (unsigned)(iter * 64 + partner);
                    char what[160];
                    snprintf(what, sizeof what, "%s of %d %s (%zu bytes), receive %s, %d -> %d", mode_name[mode],
                             count, type_name[t], sizes[s], variant ? "after probing" : "posted first", partner,
                             rank);
                    fill(send_buf, t, (size_t)count, seed_out);
                    fill(expect_buf, t, (size_t)count, seed_in);
                    memset(recv_buf, GUARD, ((size_t)count + SPARE) * type_extent[t]);
                    MPI_Status st;
                    memset(&st, GUARD, sizeof st);
                    MPI_Request sreq, rreq;
                    if (variant == 0) {
                        /* Post the receive (blocking receives use a request too here: the
                         * receive must be posted before the partner's ready send starts). */
                        CHECK_CLASS(MPI_Irecv(recv_buf, count + SPARE, dt, partner, tag, MPI_COMM_WORLD, &rreq),
                                    MPI_SUCCESS);
                        MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, 0, NULL, 0, MPI_BYTE, partner, 0, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE);
                        do_send(mode, send_buf, count, dt, partner, tag, &sreq);
                        /* alternate Wait and some Tests (then a Wait: a long busy loop of
                         * Tests starves the partner when ranks outnumber cores) */
                        int flag = 0;
                        for (int k = 0; iter % 3 == 0 && !flag && k < 200; k++)
                            CHECK_CLASS(MPI_Test(&rreq, &flag, &st), MPI_SUCCESS);
                        if (!flag)
                            CHECK_CLASS(MPI_Wait(&rreq, &st), MPI_SUCCESS);
                        CHECK(rreq == MPI_REQUEST_NULL, "%s: the request was not freed", what);
                        CHECK_CLASS(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    } else {
                        bool first = rank < partner;
                        if (first)
                            do_send(mode, send_buf, count, dt, partner, tag, &sreq);
                        MPI_Status pst; /* (MPI_Probe leaves MPI_ERROR alone, MPI-4.1 3.2.5: filled as st is) */
                        memset(&pst, GUARD, sizeof pst);
                        CHECK_CLASS(MPI_Probe(partner, tag, MPI_COMM_WORLD, &pst), MPI_SUCCESS);
                        check_status(&pst, partner, tag, t, count, what);
                        if (iter % 2) {
                            CHECK_CLASS(MPI_Recv(recv_buf, count + SPARE, dt, partner, tag, MPI_COMM_WORLD, &st),
                                        MPI_SUCCESS);
                        } else {
                            CHECK_CLASS(MPI_Irecv(recv_buf, count + SPARE, dt, partner, tag, MPI_COMM_WORLD, &rreq),
                                        MPI_SUCCESS);
                            CHECK_CLASS(MPI_Wait(&rreq, &st), MPI_SUCCESS);
                        }
                        if (!first)
                            do_send(mode, send_buf, count, dt, partner, tag, &sreq);
                        CHECK_CLASS(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    }
                    check_status(&st, partner, tag, t, count, what);
                    long bad = check_buf(recv_buf, expect_buf, t, (size_t)count);
                    CHECK(bad < 0, "%s: element %ld of %d is wrong or a guard byte was written", what, bad, count);
                    if (mt_errors > 20) {
                        fprintf(stderr, "rank %d: too many errors, stopping\n", rank);
                        return mt_finish();
                    }
                }
            }
        }
    }
    void *addr;
    int got;
    MPI_Buffer_detach(&addr, &got);
    CHECK(addr == bbuf && got == bsize, "MPI_Buffer_detach gave %p %d", addr, got);
    free(bbuf);
    free(send_buf);
    free(recv_buf);
    free(expect_buf);
    return mt_finish();
}
