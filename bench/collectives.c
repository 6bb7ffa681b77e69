/* collectives.c: time per call of every blocking collective, and of MPI_Iallreduce and
 * MPI_Ialltoall started and waited for at once, at whatever -n it is run with, at 8 B, 1 KiB,
 * 64 KiB and 1 MiB per process (up to max_bytes). "bytes" is each process's vector for bcast,
 * reduce, allreduce, scan and reduce_scatter_block (MPI_DOUBLE, MPI_SUM, root 0; a block of
 * bytes / p each, at least one double, for reduce_scatter_block), the block
 * each process contributes for gather, scatter, allgather and allgatherv (its counts all alike), and each process's whole send
 * buffer for alltoall and alltoallv (bytes / p to each; alltoallv's counts all alike, so the two
 * rows show what its vectors cost). Each figure is the best of 3 batches of calls, each
 * batch about `budget` seconds long, as the slowest process saw it.
 * usage: mpiexec -n P collectives [max_bytes [budget_seconds [names...]]] */
#include "common.h"

typedef enum {
    BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLTOALL, ALLTOALLV, REDUCE_SCATTER_BLOCK, SCAN,
    IALLREDUCE, IALLTOALL, ALLGATHERV, NKINDS
} which;
static const char *names[] = {"barrier", "bcast",  "reduce", "allreduce", "gather", "scatter", "allgather",
                              "alltoall", "alltoallv", "reduce_scatter_block", "scan", "iallreduce", "ialltoall",
                              "allgatherv"};

static int nprocs;
static int *vcounts, *vdispls; /* alltoallv's, set for each size */
static int *gcounts, *gdispls; /* allgatherv's */

/* a: send buffer, b: receive buffer, both large enough for p blocks of `bytes`. */
static void call(which w, double *a, double *b, size_t bytes)
{
    int count = (int)(bytes / sizeof(double)), block = (int)(bytes / (size_t)nprocs);
    MPI_Request r;
    switch (w) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(a, count, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(a, b, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, MPI_COMM_WORLD); break;
    case ALLGATHERV: MPI_Allgatherv(a, count, MPI_DOUBLE, b, gcounts, gdispls, MPI_DOUBLE, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(a, block, MPI_BYTE, b, block, MPI_BYTE, MPI_COMM_WORLD); break;
    case ALLTOALLV: MPI_Alltoallv(a, vcounts, vdispls, MPI_BYTE, b, vcounts, vdispls, MPI_BYTE, MPI_COMM_WORLD); break;
    case REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(a, b, count / nprocs > 0 ? count / nprocs : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case SCAN: MPI_Scan(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case IALLREDUCE:
        MPI_Iallreduce(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    case IALLTOALL:
        MPI_Ialltoall(a, block, MPI_BYTE, b, block, MPI_BYTE, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    default: break;
    }
}

/* Time per call: calls are timed in batches sized so a batch takes about `budget` seconds (at
 * least 3 calls), and the best of 3 batches is reported, as the slowest process saw it. The
 * budget keeps slow implementations (or oversubscribed runs) from taking forever. */
static double run(which w, double *a, double *b, size_t bytes, double budget)
{
    int iters = 3;
    for (;;) { /* calibrate: double the batch until it takes a tenth of the budget */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            call(w, a, b, bytes);
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
            call(w, a, b, bytes);
        double t = (MPI_Wtime() - t0) / iters, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        best = worst < best ? worst : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 20;
    double budget = argc > 2 ? atof(argv[2]) : 0.3; /* seconds per batch */
    double *a = bench_alloc(max * (size_t)nprocs), *b = bench_alloc(max * (size_t)nprocs);
    static const size_t sizes[] = {8, 1024, 64 << 10, 1 << 20};
    vcounts = malloc(sizeof(int) * (size_t)nprocs);
    vdispls = malloc(sizeof(int) * (size_t)nprocs);
    gcounts = malloc(sizeof(int) * (size_t)nprocs);
    gdispls = malloc(sizeof(int) * (size_t)nprocs);
    for (int w = BARRIER; w < NKINDS; w++) {
        int wanted = argc <= 3;
        for (int i = 3; i < argc; i++)
            wanted |= strcmp(argv[i], names[w]) == 0;
        if (!wanted)
            continue;
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max; i++) {
            size_t bytes = w == BARRIER ? 0 : sizes[i];
            for (int j = 0; j < nprocs; j++) {
                vcounts[j] = (int)(bytes / (size_t)nprocs), vdispls[j] = j * vcounts[j];
                gcounts[j] = (int)(bytes / sizeof(double)), gdispls[j] = j * gcounts[j];
            }
            double t = run((which)w, a, b, bytes, budget);
            if (rank == 0)
                printf("%s np=%d bytes=%zu value=%.3f unit=us\n", names[w], nprocs, bytes, t * 1e6);
            fflush(stdout);
            if (w == BARRIER)
                break;
        }
    }
    bench_free(a);
    bench_free(b);
    free(vcounts);
    free(vdispls);
    free(gcounts);
    free(gdispls);
    MPI_Finalize();
    return 0;
}
