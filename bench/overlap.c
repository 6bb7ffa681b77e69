/* overlap.c: how much of a message's transfer hides behind computation. Rank 0 sends a 1 MiB
 * message (argument 1 changes the size) to rank 1.
 *   overlap_send: rank 0 calls MPI_Isend, computes, then MPI_Wait, while rank 1 sits in
 *                 MPI_Recv; the figure is for rank 0.
 *   overlap_recv: rank 1 calls MPI_Irecv, computes, then MPI_Wait, while rank 0 sits in
 *                 MPI_Send; the figure is for rank 1.
 * The computation lasts twice the plain transfer time (t_comm, measured first as MPI_Isend or
 * MPI_Irecv followed at once by MPI_Wait). Overlap = (t_comm + t_compute - t_total) / t_comm, in
 * percent: 100 means the whole transfer happened while the program computed, 0 that none did.
 * Medians of 21 repetitions.
 * usage: mpiexec -n 2 overlap [bytes] */
#include "common.h"

#define REPS 21

static void compute(double seconds)
{
    double t0 = MPI_Wtime();
    volatile double x = 1.0;
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 0; i < 100; i++)
            x = x * 1.0000001 + 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One transfer; `side` (0: sender, 1: receiver) computes for `busy` seconds between starting
 * its operation and waiting for it. Returns the time that side spent from start to end. */
static double once(int rank, char *buf, int bytes, int side, double busy)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Request r;
    if (rank == 0) {
        if (side == 0) {
            MPI_Isend(buf, bytes, MPI_BYTE, 1, 9, MPI_COMM_WORLD, &r);
            if (busy > 0)
                compute(busy);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        if (side == 1) {
            MPI_Irecv(buf, bytes, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &r);
            if (busy > 0)
                compute(busy);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    return MPI_Wtime() - t0;
}

static double median(int rank, char *buf, int bytes, int side, double busy)
{
    double t[REPS];
    for (int i = 0; i < REPS; i++)
        t[i] = once(rank, buf, bytes, side, busy);
    qsort(t, REPS, sizeof t[0], cmp);
    double m = t[REPS / 2];
    MPI_Bcast(&m, 1, MPI_DOUBLE, side, MPI_COMM_WORLD); /* the measuring side's figure */
    return m;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int bytes = argc > 1 ? atoi(argv[1]) : 1 << 20;
    char *buf = bench_alloc((size_t)bytes);
    for (int side = 0; side < 2; side++) {
        once(rank, buf, bytes, side, 0); /* warm up */
        double comm = median(rank, buf, bytes, side, 0);
        double busy = 2 * comm;
        double total = median(rank, buf, bytes, side, busy);
        double pct = 100.0 * (comm + busy - total) / comm;
        pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
        if (rank == 0)
            printf("%s bytes=%d value=%.1f unit=%% t_comm_us=%.1f t_total_us=%.1f\n",
                   side ? "overlap_recv" : "overlap_send", bytes, pct, comm * 1e6, total * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
