/* mixed.c: the two ways an accumulate runs on one target stay atomic with respect to each other.
 * A single aligned element in mapped memory is changed by a CPU atomic (fetch_and_op,
 * compare_and_swap, accumulate of one element), anything else under the target's exclusive
 * accumulate word (several elements, unaligned elements, derived target types, memory reached by
 * single copy). Every process mixes all of them on the same counters at once, and the totals must
 * be exact. Then accumulates far larger than the pieces they move in (64 KiB), contiguous and
 * strided, with fetched results, checked element by element; and an unaligned counter. Last,
 * puts and gets larger than the caches (copied with streaming stores) at odd offsets. */
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>

enum { K = 48, ROUNDS = 300, BIG = 200003 };

static int rank, size;

typedef struct {
    MPI_Win win;
    int flavor;
    char *mem, *user;
} win_t;

static void make_window(win_t *w, int flavor, MPI_Aint bytes)
{
    w->flavor = flavor;
    w->user = NULL;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        w->user = w->mem = calloc(1, (size_t)bytes);
        CHECK_CLASS(MPI_Win_create(w->mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win), MPI_SUCCESS);
    } else if (flavor == MPI_WIN_FLAVOR_SHARED) {
        CHECK_CLASS(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win), MPI_SUCCESS);
    } else {
        CHECK_CLASS(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win), MPI_SUCCESS);
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
    memset(w->mem, 0, (size_t)bytes);
    MPI_Win_unlock(rank, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void free_window(win_t *w)
{
    CHECK_CLASS(MPI_Win_free(&w->win), MPI_SUCCESS);
    free(w->user);
}

/* Counters: K longs at displacement 0 of process 0, then one long at displacement 8 * K + 1
 * (unaligned: never a CPU atomic). Each round a process adds to them one of five ways, and
 * counts what it added; process 0 compares the sums with its memory. */
static void mixed_counters(int flavor)
{
    win_t w;
    make_window(&w, flavor, 8 * K + 1 + 8);
    long added[K + 1] = {0};
    MPI_Datatype evens; /* every other counter: a derived target type */
    MPI_Type_vector(K / 2, 1, 2, MPI_LONG, &evens);
    MPI_Type_commit(&evens);
    long ones[K], got[K], one = 1, old;
    for (int k = 0; k < K; k++)
        ones[k] = 1;
    MPI_Win_lock_all(0, w.win);
    for (int r = 0; r < ROUNDS; r++) {
        int c = (r * 7 + rank * 3) % K;
        switch ((r + rank) % 5) {
        case 0: /* one element: a CPU atomic */
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 8 * c, MPI_SUM, w.win);
            added[c]++;
            break;
        case 1: /* all of them at once */
            MPI_Accumulate(ones, K, MPI_LONG, 0, 0, K, MPI_LONG, MPI_SUM, w.win);
            for (int k = 0; k < K; k++)
                added[k]++;
            break;
        case 2: /* a derived target type, with the old values fetched */
            MPI_Get_accumulate(ones, K / 2, MPI_LONG, got, K / 2, MPI_LONG, 0, 0, 1, evens, MPI_SUM, w.win);
            for (int k = 0; k < K; k += 2)
                added[k]++;
            break;
        case 3: { /* compare-and-swap until it takes (a CPU atomic too) */
            long seen = 0, want, prev;
            for (;;) {
                want = seen + 1;
                MPI_Compare_and_swap(&want, &seen, &prev, MPI_LONG, 0, 8 * c, w.win);
                MPI_Win_flush(0, w.win);
                if (prev == seen)
                    break;
                seen = prev;
            }
            added[c]++;
            break;
        }
        default: /* the unaligned counter */
            MPI_Accumulate(&one, 1, MPI_LONG, 0, 8 * K + 1, 1, MPI_LONG, MPI_SUM, w.win);
            added[K]++;
        }
        MPI_Win_flush(0, w.win);
    }
    MPI_Win_unlock_all(w.win);
    long total[K + 1];
    MPI_Reduce(added, total, K + 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
        for (int k = 0; k <= K; k++) {
            long v;
            memcpy(&v, w.mem + (k < K ? 8 * k : 8 * K + 1), sizeof v);
            CHECK(v == total[k], "%s: counter %d is %ld after %ld increments", mt_flavor_name(flavor), k, v, total[k]);
        }
        MPI_Win_unlock(0, w.win);
    }
    MPI_Type_free(&evens);
    free_window(&w);
}

/* Large accumulates on the right neighbour's part: BIG doubles contiguous (in place, when the
 * memory is mapped), then every other one of the next 2 * BIG (strided), each with the old values
 * fetched; then MPI_NO_OP reads and MPI_REPLACE writes of the whole. */
static void large(int flavor)
{
    win_t w;
    MPI_Aint bytes = (MPI_Aint)3 * BIG * (MPI_Aint)sizeof(double);
    make_window(&w, flavor, bytes);
    double *mine = (double *)w.mem;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win);
    for (long i = 0; i < 3L * BIG; i++)
        mine[i] = (double)(i % 1000);
    MPI_Win_unlock(rank, w.win);
    MPI_Barrier(MPI_COMM_WORLD);

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double *add = malloc(sizeof(double) * BIG), *old = malloc(sizeof(double) * BIG);
    for (long i = 0; i < BIG; i++)
        add[i] = (double)(rank + 1) + (double)(i % 7);
    MPI_Datatype strided;
    MPI_Type_vector(BIG, 1, 2, MPI_DOUBLE, &strided);
    MPI_Type_commit(&strided);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win);
    MPI_Get_accumulate(add, BIG, MPI_DOUBLE, old, BIG, MPI_DOUBLE, right, 0, BIG, MPI_DOUBLE, MPI_SUM, w.win);
    MPI_Win_flush(right, w.win);
    long bad = 0;
    for (long i = 0; i < BIG; i++)
        bad += old[i] != (double)(i % 1000);
    CHECK(!bad, "%s: %ld of the values fetched by a contiguous get_accumulate are wrong", mt_flavor_name(flavor), bad);
    MPI_Get_accumulate(add, BIG, MPI_DOUBLE, old, BIG, MPI_DOUBLE, right, 8 * (MPI_Aint)BIG, 1, strided, MPI_SUM,
                       w.win);
    MPI_Win_flush(right, w.win);
    bad = 0;
    for (long i = 0; i < BIG; i++)
        bad += old[i] != (double)((BIG + 2 * i) % 1000);
    CHECK(!bad, "%s: %ld of the values fetched by a strided get_accumulate are wrong", mt_flavor_name(flavor), bad);
    MPI_Win_unlock(right, w.win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* My memory: what my left neighbour added, where it added it. */
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win);
    bad = 0;
    for (long i = 0; i < 3L * BIG; i++) {
        double want = (double)(i % 1000);
        long j = i < BIG ? i : (i - BIG) % 2 == 0 ? (i - BIG) / 2 : -1;
        if (j >= 0)
            want += (double)(left + 1) + (double)(j % 7);
        bad += mine[i] != want;
    }
    MPI_Win_unlock(rank, w.win);
    CHECK(!bad, "%s: %ld doubles of large accumulates are wrong", mt_flavor_name(flavor), bad);
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPI_REPLACE writes the whole strided region, MPI_NO_OP reads it back */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w.win);
    MPI_Accumulate(add, BIG, MPI_DOUBLE, right, 8 * (MPI_Aint)BIG, 1, strided, MPI_REPLACE, w.win);
    MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, old, BIG, MPI_DOUBLE, right, 8 * (MPI_Aint)BIG, 1, strided,
                       MPI_NO_OP, w.win);
    MPI_Win_unlock(right, w.win);
    bad = 0;
    for (long i = 0; i < BIG; i++)
        bad += old[i] != add[i];
    CHECK(!bad, "%s: %ld values of a large replace read back by MPI_NO_OP are wrong", mt_flavor_name(flavor), bad);
    MPI_Type_free(&strided);
    free(add);
    free(old);
    free_window(&w);
}

/* A put and a get of 9 MiB + 13 bytes at odd displacements, both ways around the ring. */
static void big_copies(void)
{
    const MPI_Aint n = (9 << 20) + 13, bytes = n + 64;
    win_t w;
    make_window(&w, MPI_WIN_FLAVOR_ALLOCATE, bytes);
    unsigned char *mine = malloc((size_t)bytes), *back = malloc((size_t)bytes);
    for (MPI_Aint i = 0; i < bytes; i++)
        mine[i] = (unsigned char)(i * 7 + rank);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win_lock_all(0, w.win);
    MPI_Put(mine + 1, (int)n, MPI_BYTE, right, 3, (int)n, MPI_BYTE, w.win);
    MPI_Win_flush(right, w.win);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    long bad = 0;
    for (MPI_Aint i = 0; i < n; i++)
        bad += (unsigned char)w.mem[3 + i] != (unsigned char)((i + 1) * 7 + left);
    CHECK(!bad, "%ld bytes of a 9 MiB put are wrong", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w.win);
    MPI_Get(back + 5, (int)n, MPI_BYTE, right, 3, (int)n, MPI_BYTE, w.win);
    MPI_Win_unlock_all(w.win);
    bad = 0;
    for (MPI_Aint i = 0; i < n; i++)
        bad += back[5 + i] != (unsigned char)((i + 1) * 7 + rank);
    CHECK(!bad, "%ld bytes of a 9 MiB get are wrong", bad);
    free(mine);
    free(back);
    free_window(&w);
}

/* Puts large enough to send their data as a message of its own (on a tag the origin draws),
 * both ways between pairs, while answered requests (gets, flushes) cross them: the origin's
 * data and the target's answers travel the same way between the same two processes, so their
 * tags must never meet. Odd processes draw one tag more per round than even ones, so the two
 * counters stay apart and would meet every round. Reached by message when processes sit on
 * different nodes (or the window is not mapped). */
static void crossed_tags(void)
{
    enum { N = 40 << 10, ROUNDS_X = 60 };
    win_t w;
    make_window(&w, MPI_WIN_FLAVOR_CREATE, 2 * N);
    unsigned char *mine = malloc(N), *got = malloc(64);
    int peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    for (int k = 0; k < ROUNDS_X; k++) {
        for (int i = 0; i < N; i++)
            mine[i] = (unsigned char)(i * 3 + rank * 17 + k);
        MPI_Win_lock_all(0, w.win);
        if (rank % 2) { /* one answered request more than the peer: the counters drift apart */
            MPI_Get(got, 64, MPI_BYTE, peer, N, 64, MPI_BYTE, w.win);
            MPI_Win_flush(peer, w.win);
        }
        MPI_Put(mine, N, MPI_BYTE, peer, 0, N, MPI_BYTE, w.win);
        MPI_Get(got, 64, MPI_BYTE, peer, N, 64, MPI_BYTE, w.win);
        MPI_Win_flush(peer, w.win);
        MPI_Win_unlock_all(w.win);
        MPI_Barrier(MPI_COMM_WORLD);
        long bad = 0;
        for (int i = 0; i < N; i++)
            bad += (unsigned char)w.mem[i] != (unsigned char)(i * 3 + peer * 17 + k);
        CHECK(!bad, "round %d: %ld bytes of a 40 KiB put from %d are wrong", k, bad, peer);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(mine);
    free(got);
    free_window(&w);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int flavors[3] = {MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_CREATE};
    int one_node = mt_one_node(MPI_COMM_WORLD);
    for (int f = 0; f < 3; f++) {
        if (flavors[f] == MPI_WIN_FLAVOR_SHARED && !one_node)
            continue; /* several nodes share no memory */
        mixed_counters(flavors[f]);
        large(flavors[f]);
    }
    crossed_tags();
    big_copies();
    return mt_finish();
}
