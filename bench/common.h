/* common.h: shared by Courier's benchmarks. Plain MPI: they build with any MPI's mpicc.
 *
 * Every benchmark prints one line per measurement, "name key=value ... value=V unit=U", which
 * bench/compare.py reads. Timings use MPI_Wtime; each figure is the best of several repetitions
 * (the least disturbed by other work on the machine). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Iterations for a message of `bytes` bytes: many for small messages, fewer for large, so each
 * measurement takes about the same time. */
static int iters_for(size_t bytes, int small, int large)
{
    if (bytes <= 4096)
        return small;
    size_t n = (size_t)large * (1u << 20) / (bytes > (1u << 20) ? bytes : (1u << 20));
    int it = bytes < (1u << 16) ? small / 4 : bytes < (1u << 20) ? large * 2 : (int)n;
    return it < 10 ? 10 : it;
}

static void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1))
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(p, 1, bytes ? bytes : 1);
    return p;
}

#endif
