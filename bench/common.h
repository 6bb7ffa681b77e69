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
static inline int iters_for(size_t bytes, int small, int large)
{
    if (bytes <= 4096)
        return small;
    size_t n = (size_t)large * (1u << 20) / (bytes > (1u << 20) ? bytes : (1u << 20));
    int it = bytes < (1u << 16) ? small / 4 : bytes < (1u << 20) ? large * 2 : (int)n;
    return it < 10 ? 10 : it;
}

/* Where bench_alloc places buffers: page-aligned, or with BENCH_OFFSET=16 that many bytes past a
 * page boundary, as malloc gives them (16-byte aligned). Copies between such a buffer and
 * 64-byte-aligned shared memory meet slow paths of some memcpy implementations (Courier's
 * src/core/copy.h says which), so the two placements can measure differently. A multiple of 8
 * below 64. */
static inline size_t bench_offset(void)
{
    const char *e = getenv("BENCH_OFFSET");
    return e ? (size_t)atol(e) / 8 * 8 % 64 : 0;
}

/* A buffer of `bytes`, touched (so no page fault is timed), placed as bench_offset says; give it
 * back with bench_free. */
static inline void *bench_alloc(size_t bytes)
{
    size_t off = bench_offset();
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes + off ? bytes + off : 1))
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(p, 1, bytes + off ? bytes + off : 1);
    return (char *)p + off;
}

static inline void bench_free(void *p)
{
    if (p)
        free((char *)p - bench_offset());
}

#endif
