/* overlap.c: how much of a message's transfer hides behind computation. Rank 0 sends a 1 MiB
 * message (argument 1 changes the size) to rank 1.
 *   overlap_send: rank 0 calls MPI_Isend, computes, then MPI_Wait, while rank 1 sits in
 *                 MPI_Recv; the figure is for rank 0.
 *   overlap_recv: rank 1 calls MPI_Irecv, computes, then MPI_Wait, while rank 0 sits in
 *                 MPI_Send; the figure is for rank 1.
 * The computation lasts twice the plain transfer time (t_comm, measured first as MPI_Isend or
 * MPI_Irecv followed at once by MPI_Wait). Overlap = (t_comm + t_compute - t_total) / t_comm, in
 * percent: 100 means the whole transfer happened while the program computed, 0 that none did.
 *   overlap_iallreduce, overlap_ialltoall: every process starts MPI_Iallreduce (doubles, MPI_SUM)
 *                 or MPI_Ialltoall of the same bytes per process, computes in slices with
 *                 MPI_Test between them, then MPI_Wait; the figure is for the slowest process.
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

/* Computes for `seconds` in slices of about 20 us, calling MPI_Test on `r` between slices, as
 * a program that overlaps a nonblocking collective with its work does (no MPI implementation
 * here has a progress thread by default: progress happens inside MPI calls). */
static void compute_testing(double seconds, MPI_Request *r)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds) {
        compute(20e-6);
        int flag;
        if (*r != MPI_REQUEST_NULL)
            MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    }
}

/* One nonblocking collective of `bytes` per process (kind 0: MPI_Iallreduce of doubles with
 * MPI_SUM; 1: MPI_Ialltoall, bytes / p to each process), computing for `busy` seconds between
 * its start and MPI_Wait. Returns the slowest process's time. */
static double coll_once(int kind, char *a, char *b, int bytes, double busy)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Request r;
    if (kind == 0)
        MPI_Iallreduce(a, b, bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    else
        MPI_Ialltoall(a, bytes / p, MPI_BYTE, b, bytes / p, MPI_BYTE, MPI_COMM_WORLD, &r);
    if (busy > 0)
        compute_testing(busy, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    double t = MPI_Wtime() - t0, worst;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* Overlap in percent of a transfer that `fn(ctx, busy)` times (computing for `busy` seconds
 * in the middle): medians of REPS without computation (t_comm), then with a computation that
 * lasts 2 t_comm (t_total). */
static double overlap(double (*fn)(void *ctx, double busy), void *ctx, double *comm, double *total)
{
    double t[REPS];
    fn(ctx, 0); /* warm up */
    for (int pass = 0; pass < 2; pass++) {
        double busy = pass ? 2 * *comm : 0;
        for (int i = 0; i < REPS; i++)
            t[i] = fn(ctx, busy);
        qsort(t, REPS, sizeof t[0], cmp);
        *(pass ? total : comm) = t[REPS / 2];
    }
    double pct = 100.0 * (3 * *comm - *total) / *comm;
    return pct < 0 ? 0 : pct > 100 ? 100 : pct;
}

typedef struct {
    int rank, bytes, side, kind;
    char *a, *b;
} setup;

static double p2p_fn(void *ctx, double busy)
{
    setup *x = ctx;
    double t = once(x->rank, x->a, x->bytes, x->side, busy);
    MPI_Bcast(&t, 1, MPI_DOUBLE, x->side, MPI_COMM_WORLD); /* the measuring side's figure */
    return t;
}

static double coll_fn(void *ctx, double busy)
{
    setup *x = ctx;
    return coll_once(x->kind, x->a, x->b, x->bytes, busy);
}

int main(int argc, char **argv)
{
    int rank, p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int bytes = argc > 1 ? atoi(argv[1]) : 1 << 20;
    setup x = {.rank = rank, .bytes = bytes, .a = bench_alloc((size_t)bytes), .b = bench_alloc((size_t)bytes)};
    double comm, total, pct;
    for (x.side = 0; x.side < 2; x.side++) {
        pct = overlap(p2p_fn, &x, &comm, &total);
        if (rank == 0)
            printf("%s bytes=%d value=%.1f unit=%% t_comm_us=%.1f t_total_us=%.1f\n",
                   x.side ? "overlap_recv" : "overlap_send", bytes, pct, comm * 1e6, total * 1e6);
    }
    /* Nonblocking collectives: every process computes while the collective runs. */
    for (x.kind = 0; x.kind < 2; x.kind++) {
        pct = overlap(coll_fn, &x, &comm, &total);
        if (rank == 0)
            printf("%s np=%d bytes=%d value=%.1f unit=%% t_comm_us=%.1f t_total_us=%.1f\n",
                   x.kind ? "overlap_ialltoall" : "overlap_iallreduce", p, bytes, pct, comm * 1e6, total * 1e6);
    }
    bench_free(x.a);
    bench_free(x.b);
    MPI_Finalize();
    return 0;
}
