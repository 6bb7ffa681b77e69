/* limits.c: what this machine allows, measured in the same run as the MPI figures they bound
 * (no MPI: plain processes and shared memory).
 *   limit_pingpong       one-way time of a cache line between two processes on two CPUs (a
 *                        flag written by one and read by the other, back and forth), us
 *   limit_memcpy_hot     memcpy of `bytes` between two buffers that stay in the cache, MB/s
 *   limit_memcpy_cold    the same from buffers cycled through 256 MiB, MB/s
 *   limit_cma            process_vm_readv of `bytes` from another process, MB/s
 *   limit_switch         one switch between processes that share a CPU (four processes pinned
 *                        to one CPU, each giving it to the next with sched_yield), us
 * Each figure is the median of 5 timed batches. Output lines are those bench/compare.py reads.
 * usage: limits [max_bytes] */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 5

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v)
{
    qsort(v, BATCHES, sizeof *v, cmp);
    return v[BATCHES / 2];
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % CPU_SETSIZE, &set);
    sched_setaffinity(0, sizeof set, &set); /* best effort: a machine with one CPU measures sharing it */
}

/* Two cache lines: the parent writes `ping`, the child answers in `pong`. */
typedef struct {
    _Alignas(64) _Atomic uint64_t ping;
    _Alignas(64) _Atomic uint64_t pong;
} lines;

static void pingpong(void)
{
    lines *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED)
        return;
    atomic_store(&l->ping, 0);
    atomic_store(&l->pong, 0);
    const uint64_t iters = 200000;
    pid_t child = fork();
    if (child == 0) {
        pin(1);
        for (uint64_t i = 1; i <= (uint64_t)BATCHES * iters + iters / 10; i++) {
            while (atomic_load_explicit(&l->ping, memory_order_acquire) != i)
                ;
            atomic_store_explicit(&l->pong, i, memory_order_release);
        }
        _exit(0);
    }
    pin(0);
    double t[BATCHES];
    uint64_t i = 0;
    for (uint64_t w = 0; w < iters / 10; w++) { /* warm up */
        atomic_store_explicit(&l->ping, ++i, memory_order_release);
        while (atomic_load_explicit(&l->pong, memory_order_acquire) != i)
            ;
    }
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now();
        for (uint64_t k = 0; k < iters; k++) {
            atomic_store_explicit(&l->ping, ++i, memory_order_release);
            while (atomic_load_explicit(&l->pong, memory_order_acquire) != i)
                ;
        }
        t[b] = (now() - t0) / (double)iters / 2 * 1e6;
    }
    waitpid(child, NULL, 0);
    munmap(l, sizeof *l);
    printf("limit_pingpong value=%.4f unit=us\n", median(t));
}

/* Repetitions that take about 20 ms per batch at `bytes`. */
static long reps_for(size_t bytes)
{
    long r = (long)((size_t)(64 << 20) / (bytes ? bytes : 1));
    return r < 4 ? 4 : r > 2000000 ? 2000000 : r;
}

static void memcpy_figures(size_t max)
{
    size_t region = (size_t)256 << 20;
    char *big = malloc(region + max), *src = malloc(max), *dst = malloc(max);
    if (!big || !src || !dst)
        return;
    memset(big, 1, region + max);
    memset(src, 2, max);
    memset(dst, 3, max);
    for (size_t bytes = 8; bytes <= max; bytes *= 2) {
        long reps = reps_for(bytes);
        double hot[BATCHES], cold[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            double t0 = now();
            for (long r = 0; r < reps; r++) {
                memcpy(dst, src, bytes);
                __asm__ volatile("" ::"r"(dst) : "memory");
            }
            hot[b] = (double)bytes * (double)reps / (now() - t0) / 1e6;
            /* cold: source and destination walk through the 256 MiB region */
            size_t stride = bytes < 4096 ? 4096 : bytes, slots = region / (2 * stride), k = 0;
            long creps = reps < (long)slots ? reps : (long)slots;
            t0 = now();
            for (long r = 0; r < creps; r++, k = (k + 1) % slots) {
                memcpy(big + 2 * k * stride, big + (2 * k + 1) * stride, bytes);
                __asm__ volatile("" ::"r"(big) : "memory");
            }
            cold[b] = (double)bytes * (double)creps / (now() - t0) / 1e6;
        }
        printf("limit_memcpy_hot bytes=%zu value=%.1f unit=MB/s\n", bytes, median(hot));
        printf("limit_memcpy_cold bytes=%zu value=%.1f unit=MB/s\n", bytes, median(cold));
    }
    free(big);
    free(src);
    free(dst);
}

static void cma_figures(size_t max)
{
    char *buf = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *mine = malloc(max);
    if (buf == MAP_FAILED || !mine)
        return;
    memset(mine, 0, max);
    int go[2];
    if (pipe(go))
        return;
    pid_t child = fork();
    if (child == 0) { /* holds its own copy of the buffer, touched, until killed */
        pin(1);
        char *own = malloc(max);
        memset(own, 5, max);
        uintptr_t addr = (uintptr_t)own;
        if (write(go[1], &addr, sizeof addr) != sizeof addr)
            _exit(1);
        pause();
        _exit(0);
    }
    pin(0);
    uintptr_t addr = 0;
    if (read(go[0], &addr, sizeof addr) != sizeof addr)
        return;
    for (size_t bytes = 4096; bytes <= max; bytes *= 2) {
        long reps = reps_for(bytes);
        double bw[BATCHES];
        int ok = 1;
        for (int b = 0; b < BATCHES && ok; b++) {
            double t0 = now();
            for (long r = 0; r < reps && ok; r++) {
                struct iovec l = {mine, bytes}, rem = {(void *)addr, bytes};
                ok = process_vm_readv(child, &l, 1, &rem, 1, 0) == (ssize_t)bytes;
            }
            bw[b] = (double)bytes * (double)reps / (now() - t0) / 1e6;
        }
        if (ok)
            printf("limit_cma bytes=%zu value=%.1f unit=MB/s\n", bytes, median(bw));
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    munmap(buf, max);
    free(mine);
}

/* Pins this process to `cpu` alone: 0, or -1 when the CPU is not this process's to use. */
static int pin_exactly(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
}

/* Four processes on CPU 0 take turns by sched_yield, the cheapest way one process hands its CPU
 * to another: each batch is the wall time of SWITCH_PROCS x `iters` yields over their number. */
#define SWITCH_PROCS 4
static void switch_figure(void)
{
    const long iters = 20000;
    double t[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        int go[2];
        if (pipe(go))
            return;
        pid_t kids[SWITCH_PROCS];
        int started = 0;
        for (int k = 0; k < SWITCH_PROCS; k++, started++) {
            kids[k] = fork();
            if (kids[k] < 0)
                break;
            if (kids[k] == 0) {
                if (pin_exactly(0))
                    _exit(2); /* (not on one CPU: it would time system calls, not switches) */
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 0) /* (all start together, when the parent closes the pipe) */
                    _exit(1);
                for (long i = 0; i < iters; i++)
                    sched_yield();
                _exit(0);
            }
        }
        close(go[0]);
        usleep(20000); /* (every child pinned and waiting) */
        double t0 = now();
        close(go[1]);
        bool whole = started == SWITCH_PROCS;
        for (int k = 0; k < started; k++) {
            int status = 0;
            waitpid(kids[k], &status, 0);
            whole = whole && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        }
        if (!whole)
            return; /* (no figure rather than a wrong one) */
        t[b] = (now() - t0) / (double)(SWITCH_PROCS * iters) * 1e6;
    }
    printf("limit_switch value=%.4f unit=us\n", median(t));
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)16 << 20;
    setvbuf(stdout, NULL, _IOLBF, 0);
    pingpong();
    switch_figure();
    memcpy_figures(max);
    cma_figures(max);
    return 0;
}
