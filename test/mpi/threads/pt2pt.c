/* pt2pt.c: T threads per process send and receive at once on MPI_COMM_WORLD: every thread
 * sends to every process (itself included) messages of several sizes (eager, long eager,
 * rendezvous) with its own tag, and receives its tag from MPI_ANY_SOURCE; then every thread
 * receives with MPI_ANY_SOURCE and MPI_ANY_TAG whatever comes. Checks every byte, that each
 * sender's messages arrive in order, and that every message arrives exactly once. */
#include "mtthreads.h"

enum { ROUNDS = 12 };
static const int sizes[] = {8, 1000, 40000, 300000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
static int nthreads;
static atomic_long wild_count, wild_sum;

static unsigned char pattern(int src, int thread, int round, long i)
{
    return (unsigned char)(src * 131 + thread * 31 + round * 7 + i * 13);
}

static void fill(unsigned char *b, int len, int thread, int round)
{
    for (long i = 0; i < len; i++)
        b[i] = pattern(tt_rank, thread, round, i);
    memcpy(b, &round, sizeof round);
}

static void check(const unsigned char *b, int len, int src, int thread, int round, const char *what)
{
    for (long i = (long)sizeof(int); i < len; i++)
        if (b[i] != pattern(src, thread, round, i)) {
            CHECK(0, "%s: byte %ld of the message from %d (thread %d, round %d, %d bytes) is %d, not %d", what, i,
                   src, thread, round, len, b[i], pattern(src, thread, round, i));
            return;
        }
}

static void *tagged(void *arg)
{
    int t = (int)(long)arg, maxlen = sizes[NSIZES - 1];
    unsigned char *sb = malloc((size_t)maxlen), *rb = malloc((size_t)maxlen);
    int *next = calloc((size_t)tt_size, sizeof *next);
    MPI_Request *reqs = malloc((size_t)tt_size * sizeof *reqs);
    for (int round = 0; round < ROUNDS; round++) {
        int len = sizes[round % NSIZES];
        fill(sb, len, t, round);
        /* A buffer per destination is not needed: the sends share one and wait together. */
        for (int d = 0; d < tt_size; d++)
            MPI_Isend(sb, len, MPI_BYTE, d, t, MPI_COMM_WORLD, &reqs[d]);
        /* Until every process's message of this round is in (a fast one's next round may come
         * first: counting messages instead could leave our own in the queue while we wait for
         * our sends to it). */
        for (int s = 0; s < tt_size; s++) {
            if (next[s] > round)
                continue;
            MPI_Status st;
            MPI_Recv(rb, maxlen, MPI_BYTE, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &st);
            int n, got_round;
            MPI_Get_count(&st, MPI_BYTE, &n);
            memcpy(&got_round, rb, sizeof got_round);
            CHECK(st.MPI_TAG == t, "tag %d, not %d", st.MPI_TAG, t);
            CHECK(got_round == next[st.MPI_SOURCE], "thread %d: from %d came round %d, expected %d (order)", t,
                   st.MPI_SOURCE, got_round, next[st.MPI_SOURCE]);
            CHECK(n == sizes[got_round % NSIZES], "count %d", n);
            check(rb, n, st.MPI_SOURCE, t, got_round, "tagged");
            next[st.MPI_SOURCE] = got_round + 1;
            s = -1; /* look at every source again */
        }
        MPI_Waitall(tt_size, reqs, MPI_STATUSES_IGNORE);
    }
    free(sb), free(rb), free(next), free(reqs);
    return NULL;
}

/* Every thread sends ROUNDS messages to each process with tag 1000 + its thread number; any
 * thread may receive any of them. */
static void *wild(void *arg)
{
    int t = (int)(long)arg;
    unsigned char sb[64], rb[64];
    MPI_Request *reqs = malloc((size_t)tt_size * ROUNDS * sizeof *reqs);
    for (int round = 0; round < ROUNDS; round++) {
        for (int d = 0; d < tt_size; d++) {
            int v = (tt_rank * 1000 + t) * 100 + round;
            memcpy(sb + 0, &v, sizeof v);
            MPI_Send(sb, sizeof v, MPI_BYTE, d, 1000 + t, MPI_COMM_WORLD);
        }
    }
    for (int k = 0; k < tt_size * ROUNDS; k++) {
        MPI_Status st;
        MPI_Recv(rb, sizeof rb, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int v;
        memcpy(&v, rb, sizeof v);
        CHECK(v / 100 == st.MPI_SOURCE * 1000 + (st.MPI_TAG - 1000), "value %d from %d tag %d", v, st.MPI_SOURCE,
               st.MPI_TAG);
        atomic_fetch_add(&wild_count, 1);
        atomic_fetch_add(&wild_sum, v);
    }
    free(reqs);
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    nthreads = tt_threads(argc, argv, 4);
    tt_run(nthreads, tagged);
    MPI_Barrier(MPI_COMM_WORLD);
    tt_run(nthreads, wild);
    long expect_sum = 0;
    for (int s = 0; s < tt_size; s++)
        for (int t = 0; t < nthreads; t++)
            for (int r = 0; r < ROUNDS; r++)
                expect_sum += (s * 1000 + t) * 100 + r;
    CHECK(atomic_load(&wild_count) == (long)tt_size * nthreads * ROUNDS, "%ld messages arrived, not %ld",
           atomic_load(&wild_count), (long)tt_size * nthreads * ROUNDS);
    CHECK(atomic_load(&wild_sum) == expect_sum, "the values add up to %ld, not %ld", atomic_load(&wild_sum), expect_sum);
    return tt_finish();
}
