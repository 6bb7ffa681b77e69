/* sendflood.c: T threads per process send floods of small messages at once, to every process
 * (itself included), through MPI_Send and MPI_Isend, on a communicator of their own and on
 * MPI_COMM_WORLD with their own tag. At MPI_THREAD_MULTIPLE the small ones go outside the
 * critical section, each destination's under its own lock, while larger ones, sends to the
 * process itself, and those that find the ring full or the receiver's credit used up take the
 * section (and so do synchronous sends): the sizes mix both kinds in one stream, so every message's order against the others
 * of its sender thread is checked (the receives are posted per source, in order), and every
 * byte. Run with a small ring (COURIER_SHM_RING_SIZE) and a small unexpected-message budget
 * (COURIER_UNEXPECTED_BUDGET) too, so that full rings and rendezvous interleave with the quick sends.
 * usage: sendflood [threads] [batches] */
#include "mtthreads.h"

enum { WINDOW = 24, MAXLEN = 4000 };
/* below and above the transport's limit for sends outside the section (under 1 KiB on shared memory) */
static const int sizes[] = {8, 0, 64, 1023, 1024, 8, 300, 4000, 1, 512};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
static int nthreads, batches;
static MPI_Comm *own; /* one per thread, the same on every process */

static unsigned char pattern(int src, int thread, long seq, long i)
{
    return (unsigned char)(src * 37 + thread * 11 + seq * 7 + i * 3 + 1);
}

static void *flood(void *arg)
{
    int t = (int)(long)arg, n = tt_size;
    size_t per = (size_t)n * WINDOW;
    unsigned char *sb = malloc(per * MAXLEN), *rb = malloc(per * MAXLEN);
    MPI_Request *rr = malloc(per * sizeof *rr), *sr = malloc(per * sizeof *sr);
    long seq = 0; /* the sequence number of this thread's next message to each process */
    for (int b = 0; b < batches; b++) {
        /* even batches on the thread's own communicator, odd ones on MPI_COMM_WORLD with its tag */
        MPI_Comm comm = b % 2 ? MPI_COMM_WORLD : own[t];
        int tag = b % 2 ? t : 7;
        for (int s = 0; s < n; s++)
            for (int k = 0; k < WINDOW; k++)
                MPI_Irecv(rb + ((size_t)s * WINDOW + k) * MAXLEN, MAXLEN, MPI_BYTE, s, tag, comm,
                          &rr[s * WINDOW + k]);
        for (int k = 0; k < WINDOW; k++)
            for (int d0 = 0; d0 < n; d0++) {
                int d = (tt_rank + 1 + d0) % n; /* the others first, this process last */
                long q = seq + k;
                int len = sizes[(q + d + t) % NSIZES];
                unsigned char *m = sb + ((size_t)d * WINDOW + k) * MAXLEN;
                for (int i = 0; i < len; i++)
                    m[i] = pattern(tt_rank, t, q, i);
                if (len >= (int)sizeof(int)) {
                    int qi = (int)q;
                    memcpy(m, &qi, sizeof qi);
                }
                /* A blocking or synchronous send may wait for its receive: the receiving thread
                 * posts all of a batch's receives before it sends anything, so none waits for ever. */
                MPI_Request *r = &sr[d * WINDOW + k];
                *r = MPI_REQUEST_NULL;
                if ((k + t) % 4 == 0)
                    MPI_Send(m, len, MPI_BYTE, d, tag, comm);
                else if ((k + t) % 4 == 3)
                    MPI_Issend(m, len, MPI_BYTE, d, tag, comm, r);
                else
                    MPI_Isend(m, len, MPI_BYTE, d, tag, comm, r);
            }
        MPI_Status *st = malloc(per * sizeof *st);
        MPI_Waitall((int)per, rr, st);
        for (int s = 0; s < n; s++)
            for (int k = 0; k < WINDOW; k++) {
                long q = seq + k;
                /* the sender's thread t sent this: its size follows from q, s and t */
                int len = sizes[(q + tt_rank + t) % NSIZES], got;
                const unsigned char *m = rb + ((size_t)s * WINDOW + k) * MAXLEN;
                MPI_Get_count(&st[s * WINDOW + k], MPI_BYTE, &got);
                CHECK(got == len, "thread %d batch %d: message %ld from %d has %d bytes, not %d", t, b, q, s, got, len);
                if (got != len)
                    continue;
                if (len >= (int)sizeof(int)) {
                    int qi;
                    memcpy(&qi, m, sizeof qi);
                    CHECK(qi == (int)q, "thread %d batch %d: from %d came message %d where %ld was due (order)", t, b,
                          s, qi, q);
                }
                for (int i = (int)sizeof(int); i < len; i++)
                    if (m[i] != pattern(s, t, q, i)) {
                        CHECK(0, "thread %d: byte %d of message %ld from %d is %d, not %d", t, i, q, s, m[i],
                              pattern(s, t, q, i));
                        break;
                    }
            }
        free(st);
        MPI_Waitall((int)per, sr, MPI_STATUSES_IGNORE);
        seq += WINDOW;
    }
    free(sb), free(rb), free(rr), free(sr);
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    nthreads = tt_threads(argc, argv, 4);
    batches = argc > 2 ? atoi(argv[2]) : 40;
    own = malloc((size_t)nthreads * sizeof *own);
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &own[t]);
    tt_run(nthreads, flood);
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_free(&own[t]);
    free(own);
    return tt_finish();
}
