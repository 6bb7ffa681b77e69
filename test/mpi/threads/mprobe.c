/* mprobe.c: threads of a process take messages with MPI_Mprobe / MPI_Improbe and MPI_Mrecv /
 * MPI_Imrecv at once, from MPI_ANY_SOURCE with one shared tag: every message must be taken
 * by exactly one thread, whole (a probe that another thread's receive overtook would show as
 * a message received twice, or a count that does not fit). */
#include "mtthreads.h"

enum { PER_THREAD = 40 };
static int nthreads;
static atomic_int *seen; /* per (source, sequence): how many times it was received */

static void *taker(void *arg)
{
    int t = (int)(long)arg, total = tt_size * PER_THREAD; /* what this process receives in all */
    (void)total;
    for (int k = 0; k < PER_THREAD; k++) {
        MPI_Message m;
        MPI_Status st;
        if ((k + t) % 2) {
            MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &m, &st);
        } else {
            int flag = 0;
            while (!flag)
                MPI_Improbe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &m, &st);
        }
        int n;
        MPI_Get_count(&st, MPI_INT, &n);
        int *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
        MPI_Status rs;
        if (k % 3) {
            MPI_Mrecv(buf, n, MPI_INT, &m, &rs);
        } else {
            MPI_Request r;
            MPI_Imrecv(buf, n, MPI_INT, &m, &r);
            MPI_Wait(&r, &rs);
        }
        CHECK(rs.MPI_SOURCE == st.MPI_SOURCE, "the probe said %d, the receive %d", st.MPI_SOURCE, rs.MPI_SOURCE);
        CHECK(n >= 2 && buf[0] == rs.MPI_SOURCE, "message from %d of %d ints starts %d", rs.MPI_SOURCE, n, buf[0]);
        if (n >= 2 && buf[0] >= 0 && buf[0] < tt_size && buf[1] >= 0 && buf[1] < nthreads * PER_THREAD) {
            for (int i = 2; i < n; i++)
                if (buf[i] != buf[1] + i) {
                    CHECK(0, "element %d of message %d from %d is %d", i, buf[1], buf[0], buf[i]);
                    break;
                }
            atomic_fetch_add(&seen[buf[0] * nthreads * PER_THREAD + buf[1]], 1);
        }
        free(buf);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    nthreads = tt_threads(argc, argv, 4);
    int per_proc = nthreads * PER_THREAD;
    seen = calloc((size_t)tt_size * per_proc, sizeof *seen);
    /* Each process sends per_proc messages to every process, sizes from 2 ints to 20000
     * (eager and rendezvous), before its threads start taking. */
    MPI_Request *reqs = malloc((size_t)tt_size * per_proc * sizeof *reqs);
    int **bufs = malloc((size_t)per_proc * sizeof *bufs);
    for (int q = 0; q < per_proc; q++) {
        int n = 2 + (q * 997) % 20000 * (q % 5 == 0) + q % 7;
        bufs[q] = malloc((size_t)n * sizeof(int));
        bufs[q][0] = tt_rank;
        bufs[q][1] = q;
        for (int i = 2; i < n; i++)
            bufs[q][i] = q + i;
        for (int d = 0; d < tt_size; d++)
            MPI_Isend(bufs[q], n, MPI_INT, d, 7, MPI_COMM_WORLD, &reqs[d * per_proc + q]);
    }
    /* Each thread takes PER_THREAD messages from each... in all tt_size * PER_THREAD. */
    for (int rep = 0; rep < tt_size; rep++)
        tt_run(nthreads, taker);
    MPI_Waitall(tt_size * per_proc, reqs, MPI_STATUSES_IGNORE);
    for (int s = 0; s < tt_size; s++)
        for (int q = 0; q < per_proc; q++)
            CHECK(atomic_load(&seen[s * per_proc + q]) == 1, "message %d from %d was received %d times", q, s,
                   atomic_load(&seen[s * per_proc + q]));
    for (int q = 0; q < per_proc; q++)
        free(bufs[q]);
    free(bufs), free(reqs), free(seen);
    return tt_finish();
}
