/* thread_rate.c: message rate at MPI_THREAD_MULTIPLE, rank 0 to rank 1, with 1, 2 and 4 threads
 * a rank: each thread sends windows of 64 nonblocking 8-byte messages to its partner thread,
 * which pre-posts its receives and answers each window with an empty message. Threads work
 * each on a communicator of its own ("comm"), or all on MPI_COMM_WORLD with a tag each
 * ("world"). Also the single-thread latency at MPI_THREAD_MULTIPLE (8-byte ping-pong), to set
 * beside latency.c's at MPI_THREAD_SINGLE. Millions of messages per second (all threads); rows
 * thread_rate_<T>thr_own and thread_rate_<T>thr_world.
 * usage: mpiexec -n 2 thread_rate [seconds per measurement] */
#include "common.h"

#include <pthread.h>

#define WINDOW 64
#define MAXT 4

static int rank, nthreads, shared;
static double seconds = 0.2;
static MPI_Comm comms[MAXT];
static long windows;

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = shared ? MPI_COMM_WORLD : comms[t];
    int tag = shared ? t : 0;
    char buf[8 * WINDOW];
    MPI_Request req[WINDOW];
    for (long w = 0; w < windows; w++) {
        if (rank == 0) {
            for (int i = 0; i < WINDOW; i++)
                MPI_Isend(buf + 8 * i, 8, MPI_BYTE, 1, tag, c, &req[i]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, tag + 100, c, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < WINDOW; i++)
                MPI_Irecv(buf + 8 * i, 8, MPI_BYTE, 0, tag, c, &req[i]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, tag + 100, c);
        }
    }
    return NULL;
}

/* Runs `windows` windows in every thread; seconds taken (the slowest rank's). */
static double run_once(void)
{
    pthread_t th[MAXT];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long t = 1; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    worker((void *)0);
    for (int t = 1; t < nthreads; t++)
        pthread_join(th[t], NULL);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static void measure(int n, int sh)
{
    nthreads = n;
    shared = sh;
    windows = 20;
    double t = run_once(); /* warm up, and size the run */
    long want = (long)(seconds / (t / (double)windows));
    windows = want < 20 ? 20 : want;
    MPI_Bcast(&windows, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        t = run_once();
        best = t < best ? t : best;
    }
    if (rank == 0)
        printf("thread_rate_%dthr%s bytes=8 value=%.3f unit=Mmsg/s\n", n, n == 1 ? "" : sh ? "_world" : "_own",
               (double)WINDOW * (double)windows * n / best / 1e6);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1)
        seconds = atof(argv[1]);
    if (provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("thread_rate: MPI_THREAD_MULTIPLE not granted (level %d)\n", provided);
        MPI_Finalize();
        return 0;
    }
    for (int t = 0; t < MAXT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);

    /* One thread's 8-byte latency at MPI_THREAD_MULTIPLE. */
    char b[8];
    int iters = 20000;
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(b, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(b, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(b, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / iters / 2;
        best = t < best ? t : best;
    }
    if (rank == 0)
        printf("thread_latency bytes=8 level=multiple value=%.3f unit=us\n", best * 1e6);

    for (int n = 1; n <= MAXT; n *= 2) {
        measure(n, 0);
        if (n > 1)
            measure(n, 1);
    }
    for (int t = 0; t < MAXT; t++)
        MPI_Comm_free(&comms[t]);
    MPI_Finalize();
    return 0;
}
