/* collectives.c: time per call of MPI_Barrier, and of MPI_Bcast, MPI_Reduce and MPI_Allreduce
 * (MPI_DOUBLE, MPI_SUM, root 0) at a few sizes, at whatever -n it is run with. Each figure is
 * the best of 3 batches of calls, each batch about `budget` seconds long.
 * usage: mpiexec -n P collectives [max_bytes [budget_seconds]] */
#include "common.h"

typedef enum { BARRIER, BCAST, REDUCE, ALLREDUCE } which;
static const char *names[] = {"barrier", "bcast", "reduce", "allreduce"};

static void call(which w, double *a, double *b, int count)
{
    switch (w) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(a, count, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(a, b, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    }
}

/* Time per call: calls are timed in batches sized so a batch takes about `budget` seconds (at
 * least 3 calls), and the best of 3 batches is reported, as the slowest process saw it. The
 * budget keeps slow implementations (or oversubscribed runs) from taking forever. */
static double run(which w, double *a, double *b, int count, double budget)
{
    int iters = 3;
    for (;;) { /* calibrate: double the batch until it takes a tenth of the budget */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            call(w, a, b, count);
        double t = MPI_Wtime() - t0, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (worst > budget / 10 || iters >= (1 << 20)) {
            iters = (int)(iters * (budget / (worst > 1e-9 ? worst : 1e-9)));
            break;
        }
        iters *= 2;
    }
    if (iters < 3)
        iters = 3;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            call(w, a, b, count);
        double t = (MPI_Wtime() - t0) / iters, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        best = worst < best ? worst : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 20;
    double *a = bench_alloc(max), *b = bench_alloc(max);
    double budget = argc > 2 ? atof(argv[2]) : 0.3; /* seconds per batch */
    double t = run(BARRIER, a, b, 0, budget);
    if (rank == 0)
        printf("barrier np=%d bytes=0 value=%.3f unit=us\n", size, t * 1e6);
    for (int w = BCAST; w <= ALLREDUCE; w++) {
        for (size_t bytes = 8; bytes <= max; bytes *= 32) {
            int count = (int)(bytes / sizeof(double));
            t = run((which)w, a, b, count, budget);
            if (rank == 0)
                printf("%s np=%d bytes=%zu value=%.3f unit=us\n", names[w], size, bytes, t * 1e6);
            fflush(stdout);
        }
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
