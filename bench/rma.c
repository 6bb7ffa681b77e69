/* rma.c: one-sided communication on one node. Rows ("bytes" = the size of one operation):
 *   rma_put_lockall, rma_get_lockall   one MPI_Put / MPI_Get to rank 1 then MPI_Win_flush, in an
 *                                      MPI_Win_lock_all epoch held across the batch;
 *   rma_put_lock, rma_get_lock         MPI_Win_lock(EXCLUSIVE, 1), the operation, MPI_Win_unlock;
 *   rma_put_fence, rma_get_fence       the operation, then MPI_Win_fence on both ranks;
 *     8 B: latency (us per operation, synchronisation included); 64 KiB, 1 MiB, 16 MiB:
 *     bandwidth (MB/s); rank 0 is the origin, rank 1 the target, at -n 2 only;
 *   rma_acc_lockall                    MPI_Accumulate(MPI_SUM, doubles) + flush, bandwidth, -n 2;
 *   rma_fetch_and_op                   every rank adds 1 to one counter on rank 0 with
 *                                      MPI_Fetch_and_op(MPI_SUM) + flush (lock_all): operations
 *                                      per second by all ranks together (Mops/s);
 *   rma_compare_and_swap               every rank increments the same counter by
 *                                      MPI_Compare_and_swap (read by the previous swap's result,
 *                                      retried on a lost race): attempts per second, all ranks;
 *   rma_fence                          MPI_Win_fence(0) with no operation (us per fence);
 *   rma_barrier                        MPI_Barrier beside it, the figure a fence is held to.
 *
 * Windows come from MPI_Win_allocate (what benchmarks and most codes use). Timing, as in
 * halo.c: operations run back to back in batches sized to take about `budget` seconds (found by
 * doubling), each batch after a barrier; a batch's figure is the slowest process's time, and each
 * row is the median of REPS batches. Checking: puts leave the origin's bytes in the target's
 * window, gets bring the target's bytes back, accumulates add up exactly, and the counters end
 * at the number of increments made; a mismatch aborts.
 * usage: mpiexec -n P rma [max_bytes [budget_seconds]]   (defaults 16 MiB and 0.05) */
#include "common.h"

#define REPS 5

static int rank, size;
static MPI_Win win;
static char *base, *origin;
static double budget = 0.05;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A batch of `iters` operations of one kind; every rank calls it with the same count. */
typedef void (*batch_fn)(long iters, size_t bytes);

static double time_batch(batch_fn fn, long iters, size_t bytes)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    fn(iters, bytes);
    t = MPI_Wtime() - t;
    double slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Seconds per operation: the median of REPS batches sized to the budget. */
static double per_op(batch_fn fn, size_t bytes)
{
    long iters = 1;
    double t;
    while ((t = time_batch(fn, iters, bytes)) < budget / 10 && iters < (1L << 30))
        iters *= 2;
    long want = (long)((double)iters * budget / (t > 0 ? t : budget / 10));
    iters = want > iters ? want : iters;
    double times[REPS];
    for (int r = 0; r < REPS; r++)
        times[r] = time_batch(fn, iters, bytes) / (double)iters;
    qsort(times, REPS, sizeof *times, cmp);
    return times[REPS / 2];
}

static void report(const char *name, size_t bytes, double seconds)
{
    if (rank != 0)
        return;
    if (bytes <= 8)
        printf("%s np=%d bytes=%zu value=%.4f unit=us\n", name, size, bytes, seconds * 1e6);
    else
        printf("%s np=%d bytes=%zu value=%.1f unit=MB/s\n", name, size, bytes, (double)bytes / seconds / 1e6);
    fflush(stdout);
}

static void fail(const char *what)
{
    fprintf(stderr, "rma: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---------------------------------------------------------------- one origin, one target */

static void put_lockall(long iters, size_t bytes)
{
    if (rank == 0)
        for (long i = 0; i < iters; i++) {
            MPI_Put(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
}

static void get_lockall(long iters, size_t bytes)
{
    if (rank == 0)
        for (long i = 0; i < iters; i++) {
            MPI_Get(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
}

static void acc_lockall(long iters, size_t bytes)
{
    if (rank == 0)
        for (long i = 0; i < iters; i++) {
            MPI_Accumulate(origin, (int)(bytes / 8), MPI_DOUBLE, 1, 0, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, win);
            MPI_Win_flush(1, win);
        }
}

static void put_lock(long iters, size_t bytes)
{
    if (rank == 0)
        for (long i = 0; i < iters; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Put(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
            MPI_Win_unlock(1, win);
        }
}

static void get_lock(long iters, size_t bytes)
{
    if (rank == 0)
        for (long i = 0; i < iters; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Get(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
            MPI_Win_unlock(1, win);
        }
}

static void put_fence(long iters, size_t bytes)
{
    for (long i = 0; i < iters; i++) {
        if (rank == 0)
            MPI_Put(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
        MPI_Win_fence(0, win);
    }
}

static void get_fence(long iters, size_t bytes)
{
    for (long i = 0; i < iters; i++) {
        if (rank == 0)
            MPI_Get(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
        MPI_Win_fence(0, win);
    }
}

enum sync { LOCKALL, LOCK, FENCE };

static void open_epoch(enum sync s)
{
    if (s == LOCKALL)
        MPI_Win_lock_all(0, win);
    else if (s == FENCE)
        MPI_Win_fence(0, win);
}

static void close_epoch(enum sync s)
{
    if (s == LOCKALL)
        MPI_Win_unlock_all(win);
    else if (s == FENCE)
        MPI_Win_fence(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The target's window holds `fill` in its first `bytes` bytes, and the origin buffer `mine`. */
static void fill_both(size_t bytes, char theirs, char mine)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(base, theirs, bytes);
    MPI_Win_unlock(rank, win);
    memset(origin, mine, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
}

static int all_bytes(const char *p, size_t bytes, char v)
{
    for (size_t k = 0; k < bytes; k += 4093)
        if (p[k] != v)
            return 0;
    return p[bytes - 1] == v;
}

static void one_target(size_t max_bytes)
{
    static const struct {
        const char *name;
        batch_fn fn;
        enum sync sync;
        int is_get;
    } rows[] = {
        {"rma_put_lockall", put_lockall, LOCKALL, 0}, {"rma_get_lockall", get_lockall, LOCKALL, 1},
        {"rma_put_lock", put_lock, LOCK, 0},          {"rma_get_lock", get_lock, LOCK, 1},
        {"rma_put_fence", put_fence, FENCE, 0},       {"rma_get_fence", get_fence, FENCE, 1},
    };
    static const size_t sizes[] = {8, 1 << 16, 1 << 20, 16 << 20};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t bytes = sizes[s];
            if (bytes > max_bytes)
                continue;
            /* Puts carry 'o' from the origin into the target's 't'; gets the other way. */
            fill_both(bytes, 't', 'o');
            open_epoch(rows[r].sync);
            double t = per_op(rows[r].fn, bytes);
            close_epoch(rows[r].sync);
            if (rank == 1 && !rows[r].is_get && !all_bytes(base, bytes, 'o'))
                fail("a put did not arrive");
            if (rank == 0 && rows[r].is_get && !all_bytes(origin, bytes, 't'))
                fail("a get did not bring the target's bytes");
            report(rows[r].name, bytes, t);
        }

    /* Accumulate: the target's doubles start at 0 and gain 1.0 per operation. */
    for (size_t s = 1; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t bytes = sizes[s];
        if (bytes > max_bytes)
            continue;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        memset(base, 0, bytes);
        MPI_Win_unlock(rank, win);
        for (size_t k = 0; k < bytes / 8; k++)
            ((double *)origin)[k] = 1.0;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
        double t = per_op(acc_lockall, bytes);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            const double *d = (const double *)base;
            for (size_t k = 1; k < bytes / 8; k++)
                if (d[k] != d[0] || d[0] < 1.0 || d[0] != (double)(long)d[0])
                    fail("accumulated doubles are not all the same whole count");
        }
        report("rma_acc_lockall", bytes, t);
    }
}

/* ---------------------------------------------------------------- many origins, one target */

static long successes; /* this rank's increments made, for the check */

static void fetch_and_op(long iters, size_t bytes)
{
    (void)bytes;
    long one = 1, old;
    for (long i = 0; i < iters; i++) {
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    successes += iters;
}

static void compare_and_swap(long iters, size_t bytes)
{
    (void)bytes;
    long seen = 0, want, got;
    for (long i = 0; i < iters; i++) {
        want = seen + 1;
        MPI_Compare_and_swap(&want, &seen, &got, MPI_LONG, 0, 0, win);
        MPI_Win_flush(0, win);
        successes += got == seen;
        seen = got == seen ? want : got;
    }
}

static void counter_rate(const char *name, batch_fn fn)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    *(long *)base = 0;
    MPI_Win_unlock(rank, win);
    successes = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    double t = per_op(fn, 0);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    long total;
    MPI_Reduce(&successes, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        long counter = *(long *)base;
        MPI_Win_unlock(0, win);
        if (counter != total) {
            fprintf(stderr, "rma: %s: the counter is %ld after %ld increments\n", name, counter, total);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        /* t: seconds per batch iteration, in which each of the `size` ranks made one attempt */
        printf("%s np=%d bytes=8 value=%.4f unit=Mops/s\n", name, size, (double)size / t / 1e6);
        fflush(stdout);
    }
}

static void fences(long iters, size_t bytes)
{
    (void)bytes;
    for (long i = 0; i < iters; i++)
        MPI_Win_fence(0, win);
}

static void barriers(long iters, size_t bytes)
{
    (void)bytes;
    for (long i = 0; i < iters; i++)
        MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max_bytes = argc > 1 ? (size_t)atol(argv[1]) : 16u << 20;
    if (argc > 2)
        budget = atof(argv[2]);
    size_t win_bytes = size == 2 ? max_bytes : 64;
    MPI_Win_allocate((MPI_Aint)win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    origin = bench_alloc(win_bytes);

    if (size == 2)
        one_target(max_bytes);
    counter_rate("rma_fetch_and_op", fetch_and_op);
    counter_rate("rma_compare_and_swap", compare_and_swap);
    MPI_Win_fence(0, win);
    double t = per_op(fences, 0);
    MPI_Win_fence(0, win);
    if (rank == 0)
        printf("rma_fence np=%d value=%.4f unit=us\n", size, t * 1e6);
    t = per_op(barriers, 0);
    if (rank == 0)
        printf("rma_barrier np=%d value=%.4f unit=us\n", size, t * 1e6);

    MPI_Win_free(&win);
    free(origin);
    MPI_Finalize();
    return 0;
}
