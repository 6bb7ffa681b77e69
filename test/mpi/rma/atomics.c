/* atomics.c: accumulate-family atomicity and results: predefined ops (SUM/MAX/MIN/PROD/BAND/BOR/BXOR/logical/MINLOC/MAXLOC on pair types/REPLACE) from all processes to all concurrently (lock_all, exclusive and shared locks, fence) in every flavour; get_accumulate/fetch_and_op counters (distinct values), MPI_NO_OP reads, MPI_REPLACE swaps, compare_and_swap mutex and ticket lock, request forms, unsigned wrap-around. */
#include "mpitest.h"

#include <stdbool.h>

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    double v;
    int i;
} dint_t; /* MPI_DOUBLE_INT */
typedef struct {
    int v, i;
} iint_t; /* MPI_2INT */

/* One process's window memory. */
typedef struct {
    long sum[4];
    double dsum;
    int max, min;
    double prod;
    unsigned band, bor;
    dint_t minloc_d;
    iint_t minloc_2, maxloc_2;
    int replace[4];
    int vec[8];
    long counter, counter2;
    unsigned ucounter, ucounter2;
    unsigned char bcounter;
    uint64_t u64counter;
    int mutex, occupancy, cs_count, ticket, serving, cs2;
    long swap;
    int pattern[8];
    int req_area[4];
    long racc, rcounter;
} area_t;

#define OFF(field) ((MPI_Aint)offsetof(area_t, field))
#define R 3 /* rounds of the all-to-all accumulates */

static int rank, size;


typedef struct {
    int flavor;
    MPI_Win win;
    area_t *a;         /* this process's area */
    area_t *user;      /* allocated by the test (create, dynamic) */
    MPI_Aint *addr_of; /* dynamic: every process's area address */
} win_t;

/* Displacement (disp_unit 1) of byte `off` of process t's area. */
static MPI_Aint D(const win_t *w, int t, MPI_Aint off)
{
    return w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? MPI_Aint_add(w->addr_of[t], off) : off;
}

static void make_window(win_t *w, int flavor)
{
    memset(w, 0, sizeof *w);
    w->flavor = flavor;
    MPI_Aint bytes = sizeof(area_t);
    switch (flavor) {
    case MPI_WIN_FLAVOR_CREATE:
        w->user = w->a = malloc(sizeof(area_t));
        CHECK_CLASS(MPI_Win_create(w->a, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win), MPI_SUCCESS);
        break;
    case MPI_WIN_FLAVOR_ALLOCATE:
        CHECK_CLASS(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->a, &w->win), MPI_SUCCESS);
        break;
    case MPI_WIN_FLAVOR_SHARED:
        CHECK_CLASS(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->a, &w->win), MPI_SUCCESS);
        break;
    case MPI_WIN_FLAVOR_DYNAMIC:
        CHECK_CLASS(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win), MPI_SUCCESS);
        w->user = w->a = malloc(sizeof(area_t));
        CHECK_CLASS(MPI_Win_attach(w->win, w->a, bytes), MPI_SUCCESS);
        break;
    }
    MPI_Aint mine;
    MPI_Get_address(w->a, &mine);
    w->addr_of = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Allgather(&mine, 1, MPI_AINT, w->addr_of, 1, MPI_AINT, MPI_COMM_WORLD);
}

static void free_window(win_t *w)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        MPI_Win_detach(w->win, w->a);
    CHECK_CLASS(MPI_Win_free(&w->win), MPI_SUCCESS);
    free(w->user);
    free(w->addr_of);
}

static void init_area(area_t *a)
{
    memset(a, 0, sizeof *a);
    a->dsum = 0;
    a->max = -1000000;
    a->min = 1000000;
    a->prod = 1.0;
    a->band = ~0u;
    a->bor = 0;
    a->minloc_d = (dint_t){1e9, -1};
    a->minloc_2 = (iint_t){1000000, -1};
    a->maxloc_2 = (iint_t){-1000000, -1};
    for (int i = 0; i < 4; i++)
        a->replace[i] = -1;
    a->ucounter = 0xFFFFFFFFu - 17u;
    a->ucounter2 = 5;
    a->bcounter = 250;
    a->u64counter = UINT64_MAX - 2;
    a->swap = -1;
    for (int i = 0; i < 8; i++)
        a->pattern[i] = (rank + 1) * 10 + i;
    for (int i = 0; i < 4; i++)
        a->req_area[i] = -1;
}

/* Resets this process's area (an exclusive lock on itself around the stores), then a barrier:
 * nobody operates on it before it is reset. */
static void reset(win_t *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win), MPI_SUCCESS);
    init_area(w->a);
    CHECK_CLASS(MPI_Win_unlock(rank, w->win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A copy of this process's area once everyone's operations are done (a barrier, then a shared
 * lock on itself around the loads). */
static area_t snapshot(win_t *w)
{
    area_t s;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win), MPI_SUCCESS);
    memcpy(&s, w->a, sizeof s);
    CHECK_CLASS(MPI_Win_unlock(rank, w->win), MPI_SUCCESS);
    return s;
}

/* ----------------------------------------------------------------- every op, all to all */

static int f_max(int o, int t)
{
    return (o * 7 + t * 3) % (size + 5);
}
static int f_min(int o, int t)
{
    return (o * 5 + t) % (size + 3) + 1;
}
static double f_prod(int o)
{
    return o % 3 == 0 ? 2.0 : o % 3 == 1 ? 0.5 : 1.0;
}
static double f_minloc_d(int o, int t)
{
    return ((o * 5 + t) % ((size + 2) / 3)) / 2.0; /* with ties: the least index wins */
}
static int f_loc2(int o, int t)
{
    return (o * 3 + t) % ((size + 1) / 2); /* with ties */
}

/* This process's accumulates of one round on target t. */
/* The derived pair the tests move 4 ints with: every other int of 8 (vec), and ints 0, 3, 4
 * and 7 (idx). */
static void vector_and_indexed(MPI_Datatype *vec, MPI_Datatype *idx)
{
    MPI_Type_vector(4, 1, 2, MPI_INT, vec);
    int bl[3] = {1, 2, 1}, dl[3] = {0, 3, 7};
    MPI_Type_indexed(3, bl, dl, MPI_INT, idx);
    MPI_Type_commit(vec);
    MPI_Type_commit(idx);
}

static void accumulate_all(win_t *w, int t)
{
    int o = rank;
    MPI_Win win = w->win;
    long s[4];
    for (int k = 0; k < 4; k++)
        s[k] = (long)(o + 1) * (k + 1) + t;
    double ds = 0.5 * (o + 1), pr = f_prod(o);
    int mx = f_max(o, t), mn = f_min(o, t);
    unsigned band = ~(1u << (o % 32)), bor = 1u << ((o + t) % 32);
    dint_t md = {f_minloc_d(o, t), o};
    iint_t m2 = {f_loc2(o, t), o};
    int rep[4] = {o, o + 100, o + 200, o + 300};
    int strided[8];
    for (int j = 0; j < 8; j++)
        strided[j] = j % 2 == 0 ? (o + 1) * (j / 2 + 1) : -12345; /* the odd ones are not sent */
    MPI_Datatype vec, idx;
    vector_and_indexed(&vec, &idx);

    CHECK_CLASS(MPI_Accumulate(s, 4, MPI_LONG, t, D(w, t, OFF(sum)), 4, MPI_LONG, MPI_SUM, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&ds, 1, MPI_DOUBLE, t, D(w, t, OFF(dsum)), 1, MPI_DOUBLE, MPI_SUM, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&mx, 1, MPI_INT, t, D(w, t, OFF(max)), 1, MPI_INT, MPI_MAX, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&mn, 1, MPI_INT, t, D(w, t, OFF(min)), 1, MPI_INT, MPI_MIN, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&pr, 1, MPI_DOUBLE, t, D(w, t, OFF(prod)), 1, MPI_DOUBLE, MPI_PROD, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&band, 1, MPI_UNSIGNED, t, D(w, t, OFF(band)), 1, MPI_UNSIGNED, MPI_BAND, win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&bor, 1, MPI_UNSIGNED, t, D(w, t, OFF(bor)), 1, MPI_UNSIGNED, MPI_BOR, win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&md, 1, MPI_DOUBLE_INT, t, D(w, t, OFF(minloc_d)), 1, MPI_DOUBLE_INT, MPI_MINLOC, win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&m2, 1, MPI_2INT, t, D(w, t, OFF(minloc_2)), 1, MPI_2INT, MPI_MINLOC, win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(&m2, 1, MPI_2INT, t, D(w, t, OFF(maxloc_2)), 1, MPI_2INT, MPI_MAXLOC, win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(rep, 4, MPI_INT, t, D(w, t, OFF(replace)), 4, MPI_INT, MPI_REPLACE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(strided, 1, vec, t, D(w, t, OFF(vec)), 1, idx, MPI_SUM, win), MPI_SUCCESS);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
}

/* R rounds of accumulates on every process, each under a lock of `type` on its target, the
 * targets in one order or the other. */
static void locked_rounds(win_t *w, int type, bool backwards)
{
    for (int r = 0; r < R; r++)
        for (int k = 0; k < size; k++) {
            int t = backwards ? (rank + size - k) % size : (rank + k + r) % size;
            CHECK_CLASS(MPI_Win_lock(type, t, 0, w->win), MPI_SUCCESS);
            accumulate_all(w, t);
            CHECK_CLASS(MPI_Win_unlock(t, w->win), MPI_SUCCESS);
        }
}

static void check_all_ops(const area_t *a, const char *how)
{
    int t = rank;
    long wsum[4] = {0, 0, 0, 0}, wvec[4] = {0, 0, 0, 0};
    double wds = 0, wprod = 1;
    int wmax = -1000000, wmin = 1000000;
    unsigned wband = ~0u, wbor = 0;
    dint_t wmd = {1e9, -1};
    iint_t wmin2 = {1000000, -1}, wmax2 = {-1000000, -1};
    for (int o = 0; o < size; o++) {
        for (int k = 0; k < 4; k++) {
            wsum[k] += R * ((long)(o + 1) * (k + 1) + t);
            wvec[k] += R * (o + 1) * (k + 1);
        }
        wds += R * 0.5 * (o + 1);
        for (int r = 0; r < R; r++)
            wprod *= f_prod(o);
        if (f_max(o, t) > wmax)
            wmax = f_max(o, t);
        if (f_min(o, t) < wmin)
            wmin = f_min(o, t);
        wband &= ~(1u << (o % 32));
        wbor |= 1u << ((o + t) % 32);
        if (f_minloc_d(o, t) < wmd.v) /* o ascending: the first of equal values has the least index */
            wmd = (dint_t){f_minloc_d(o, t), o};
        if (f_loc2(o, t) < wmin2.v)
            wmin2 = (iint_t){f_loc2(o, t), o};
        if (f_loc2(o, t) > wmax2.v)
            wmax2 = (iint_t){f_loc2(o, t), o};
    }
    for (int k = 0; k < 4; k++)
        CHECK(a->sum[k] == wsum[k], "%s: MPI_SUM long[%d] = %ld, want %ld", how, k, a->sum[k], wsum[k]);
    CHECK(a->dsum == wds, "%s: MPI_SUM double = %g, want %g", how, a->dsum, wds);
    CHECK(a->max == wmax, "%s: MPI_MAX = %d, want %d", how, a->max, wmax);
    CHECK(a->min == wmin, "%s: MPI_MIN = %d, want %d", how, a->min, wmin);
    CHECK(a->prod == wprod, "%s: MPI_PROD = %g, want %g", how, a->prod, wprod);
    CHECK(a->band == wband, "%s: MPI_BAND = %#x, want %#x", how, a->band, wband);
    CHECK(a->bor == wbor, "%s: MPI_BOR = %#x, want %#x", how, a->bor, wbor);
    CHECK(a->minloc_d.v == wmd.v && a->minloc_d.i == wmd.i, "%s: MPI_MINLOC MPI_DOUBLE_INT = (%g, %d), want (%g, %d)",
          how, a->minloc_d.v, a->minloc_d.i, wmd.v, wmd.i);
    CHECK(a->minloc_2.v == wmin2.v && a->minloc_2.i == wmin2.i, "%s: MPI_MINLOC MPI_2INT = (%d, %d), want (%d, %d)",
          how, a->minloc_2.v, a->minloc_2.i, wmin2.v, wmin2.i);
    CHECK(a->maxloc_2.v == wmax2.v && a->maxloc_2.i == wmax2.i, "%s: MPI_MAXLOC MPI_2INT = (%d, %d), want (%d, %d)",
          how, a->maxloc_2.v, a->maxloc_2.i, wmax2.v, wmax2.i);
    for (int e = 0; e < 4; e++) {
        int o = a->replace[e] - 100 * e;
        CHECK(o >= 0 && o < size, "%s: MPI_REPLACE element %d = %d: no process wrote that", how, e, a->replace[e]);
    }
    static const int at[4] = {0, 3, 4, 7};
    for (int k = 0; k < 4; k++)
        CHECK(a->vec[at[k]] == wvec[k], "%s: MPI_SUM vector->indexed vec[%d] = %d, want %ld", how, at[k],
              a->vec[at[k]], wvec[k]);
    static const int untouched[4] = {1, 2, 5, 6};
    for (int k = 0; k < 4; k++)
        CHECK(a->vec[untouched[k]] == 0, "%s: vec[%d] = %d, outside the target type", how, untouched[k],
              a->vec[untouched[k]]);
}

static void all_to_all(win_t *w)
{
    char how[96];
    /* lock_all */
    reset(w);
    CHECK_CLASS(MPI_Win_lock_all(0, w->win), MPI_SUCCESS);
    for (int r = 0; r < R; r++) {
        for (int k = 0; k < size; k++)
            accumulate_all(w, (rank + k) % size);
        if (r == 1)
            CHECK_CLASS(MPI_Win_flush_all(w->win), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Win_unlock_all(w->win), MPI_SUCCESS);
    area_t s = snapshot(w);
    snprintf(how, sizeof how, "%s, lock_all", mt_flavor_name(w->flavor));
    check_all_ops(&s, how);

    /* an exclusive lock around each target's accumulates */
    reset(w);
    locked_rounds(w, MPI_LOCK_EXCLUSIVE, false);
    s = snapshot(w);
    snprintf(how, sizeof how, "%s, exclusive locks", mt_flavor_name(w->flavor));
    check_all_ops(&s, how);

    /* a shared lock around each target's accumulates: they still exclude each other */
    reset(w);
    locked_rounds(w, MPI_LOCK_SHARED, true);
    s = snapshot(w);
    snprintf(how, sizeof how, "%s, shared locks", mt_flavor_name(w->flavor));
    check_all_ops(&s, how);

    /* fence */
    reset(w);
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win), MPI_SUCCESS);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < size; k++)
            accumulate_all(w, (rank + k) % size);
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win), MPI_SUCCESS);
    memcpy(&s, w->a, sizeof s);
    snprintf(how, sizeof how, "%s, fence", mt_flavor_name(w->flavor));
    check_all_ops(&s, how);
}

/* ----------------------------------------------------------------- counters */

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* The values every process saw, gathered at 0: exactly first, first + 1, ..., first + n * size - 1
 * (modulo 2^bits when bits < 64). */
static void check_permutation(long *mine, int n, long first, int bits, const char *what)
{
    long *all = rank == 0 ? malloc((size_t)n * size * sizeof(long)) : NULL;
    MPI_Gather(mine, n, MPI_LONG, all, n, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    uint64_t mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    for (int i = 0; i < n * size; i++) /* as offsets from first */
        all[i] = (long)(((uint64_t)all[i] - (uint64_t)first) & mask);
    qsort(all, (size_t)n * size, sizeof(long), cmp_long);
    for (int i = 0; i < n * size; i++)
        if (all[i] != i) {
            CHECK(all[i] == i, "%s: the values seen are not %d distinct consecutive ones: sorted offset [%d] is %ld",
                  what, n * size, i, all[i]);
            break;
        }
    free(all);
}

#define NC 40    /* increments per process */
#define NHOT 300 /* accumulates per process on one place */

static void counters(win_t *w)
{
    char how[96];
    const char *fn = mt_flavor_name(w->flavor);
    int t0 = 0, t1 = size - 1;
    long one = 1, got[NC], got2[NC], last = -1;
    reset(w);
    CHECK_CLASS(MPI_Win_lock_all(0, w->win), MPI_SUCCESS);
    for (int i = 0; i < NC; i++) {
        long res = -1, res2 = -1, now = -1;
        CHECK_CLASS(MPI_Fetch_and_op(&one, &res, MPI_LONG, t0, D(w, t0, OFF(counter)), MPI_SUM, w->win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get_accumulate(&one, 1, MPI_LONG, &res2, 1, MPI_LONG, t1, D(w, t1, OFF(counter2)), 1, MPI_LONG,
                                       MPI_SUM, w->win),
                    MPI_SUCCESS);
        /* an atomic read: ordered after this process's increment (accumulate_ordering raw) */
        CHECK_CLASS(MPI_Get_accumulate(NULL, 0, MPI_LONG, &now, 1, MPI_LONG, t0, D(w, t0, OFF(counter)), 1, MPI_LONG,
                                       MPI_NO_OP, w->win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t0, w->win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t1, w->win), MPI_SUCCESS);
        got[i] = res, got2[i] = res2;
        CHECK(res >= 0 && res < (long)NC * size, "%s: fetch_and_op returned %ld", fn, res);
        CHECK(now > res && now <= (long)NC * size, "%s: MPI_NO_OP read %ld after fetching %ld", fn, now, res);
        CHECK(now >= last, "%s: MPI_NO_OP reads went back from %ld to %ld", fn, last, now);
        last = now;
    }
    CHECK_CLASS(MPI_Win_unlock_all(w->win), MPI_SUCCESS);
    snprintf(how, sizeof how, "%s fetch_and_op MPI_SUM long counter", fn);
    check_permutation(got, NC, 0, 64, how);
    snprintf(how, sizeof how, "%s get_accumulate MPI_SUM long counter", fn);
    check_permutation(got2, NC, 0, 64, how);
    MPI_Barrier(MPI_COMM_WORLD);
    long final = -1, final2 = -1;
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, t0, 0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Fetch_and_op(NULL, &final, MPI_LONG, t0, D(w, t0, OFF(counter)), MPI_NO_OP, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(t0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, t1, 0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get_accumulate(NULL, 0, MPI_LONG, &final2, 1, MPI_LONG, t1, D(w, t1, OFF(counter2)), 1, MPI_LONG,
                                   MPI_NO_OP, w->win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(t1, w->win), MPI_SUCCESS);
    CHECK(final == (long)NC * size && final2 == (long)NC * size, "%s: final counters %ld %ld, want %ld", fn, final,
          final2, (long)NC * size);

    /* a hot spot: every process adds to one long and one double on process 0, many times */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_lock_all(0, w->win), MPI_SUCCESS);
    double half = 0.5;
    for (int i = 0; i < NHOT; i++) {
        CHECK_CLASS(MPI_Accumulate(&one, 1, MPI_LONG, t0, D(w, t0, OFF(racc)), 1, MPI_LONG, MPI_SUM, w->win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(&half, 1, MPI_DOUBLE, t0, D(w, t0, OFF(dsum)), 1, MPI_DOUBLE, MPI_SUM, w->win),
                    MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Win_unlock_all(w->win), MPI_SUCCESS);
    area_t hot = snapshot(w);
    if (rank == t0)
        CHECK(hot.racc == (long)NHOT * size && hot.dsum == 0.5 * NHOT * size,
              "%s: hot spot: %ld and %g, want %ld and %g", fn, hot.racc, hot.dsum, (long)NHOT * size,
              0.5 * NHOT * size);

    /* MPI_REPLACE as an atomic swap: the values returned, with the one left, are the first
     * value and every process's, each once. */
    long mine = rank, prev = -2;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, t1, 0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Fetch_and_op(&mine, &prev, MPI_LONG, t1, D(w, t1, OFF(swap)), MPI_REPLACE, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(t1, w->win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    long left = -3;
    if (rank == 0) {
        CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, t1, 0, w->win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(&left, 1, MPI_LONG, t1, D(w, t1, OFF(swap)), 1, MPI_LONG, w->win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_unlock(t1, w->win), MPI_SUCCESS);
    }
    long *seen = rank == 0 ? malloc((size_t)(size + 1) * sizeof(long)) : NULL;
    MPI_Gather(&prev, 1, MPI_LONG, seen, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        seen[size] = left;
        qsort(seen, (size_t)size + 1, sizeof(long), cmp_long);
        for (int i = 0; i <= size; i++)
            CHECK(seen[i] == i - 1, "%s: swaps: sorted value %d is %ld, want %d", fn, i, seen[i], i - 1);
        free(seen);
    }

    /* get_accumulate with derived types: origin contiguous, result vector, target indexed, on
     * the right neighbour; the result has the old values, the target the sums. */
    MPI_Barrier(MPI_COMM_WORLD);
    int r = (rank + 1) % size, l = (rank - 1 + size) % size;
    MPI_Datatype vec, idx;
    vector_and_indexed(&vec, &idx);
    int add[4] = {1000, 2000, 3000, 4000}, result[8];
    for (int i = 0; i < 8; i++)
        result[i] = -5;
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get_accumulate(add, 4, MPI_INT, result, 1, vec, r, D(w, r, OFF(pattern)), 1, idx, MPI_SUM, w->win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(r, w->win), MPI_SUCCESS);
    int wres[8] = {(r + 1) * 10 + 0, -5, (r + 1) * 10 + 3, -5, (r + 1) * 10 + 4, -5, (r + 1) * 10 + 7, -5};
    for (int i = 0; i < 8; i++)
        CHECK(result[i] == wres[i], "%s: get_accumulate derived: result[%d] = %d, want %d", fn, i, result[i], wres[i]);
    area_t s = snapshot(w);
    int wpat[8];
    for (int i = 0; i < 8; i++)
        wpat[i] = (rank + 1) * 10 + i;
    wpat[0] += 1000, wpat[3] += 2000, wpat[4] += 3000, wpat[7] += 4000;
    for (int i = 0; i < 8; i++)
        CHECK(s.pattern[i] == wpat[i], "%s: get_accumulate derived (from %d): pattern[%d] = %d, want %d", fn, l, i,
              s.pattern[i], wpat[i]);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);

    /* fetch_and_op with the other operations, on self: result the old value */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win), MPI_SUCCESS);
    int v = 77, res = 0;
    CHECK_CLASS(MPI_Fetch_and_op(&v, &res, MPI_INT, rank, D(w, rank, OFF(max)), MPI_MAX, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, w->win), MPI_SUCCESS);
    CHECK(res == -1000000, "%s: fetch_and_op MPI_MAX result %d", fn, res);
    v = 3;
    CHECK_CLASS(MPI_Fetch_and_op(&v, &res, MPI_INT, rank, D(w, rank, OFF(max)), MPI_MIN, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, w->win), MPI_SUCCESS);
    CHECK(res == 77, "%s: fetch_and_op MPI_MIN result %d, want 77", fn, res);
    v = 6;
    CHECK_CLASS(MPI_Fetch_and_op(&v, &res, MPI_INT, rank, D(w, rank, OFF(max)), MPI_PROD, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, w->win), MPI_SUCCESS);
    CHECK(res == 3, "%s: fetch_and_op MPI_PROD result %d, want 3", fn, res);
    CHECK_CLASS(MPI_Fetch_and_op(NULL, &res, MPI_INT, rank, D(w, rank, OFF(max)), MPI_NO_OP, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, w->win), MPI_SUCCESS);
    CHECK(res == 18, "%s: fetch_and_op MPI_NO_OP result %d, want 18", fn, res);
    CHECK_CLASS(MPI_Win_unlock(rank, w->win), MPI_SUCCESS);
}

/* Unsigned arithmetic wraps modulo 2^n. */
static void wrap(win_t *w)
{
    const char *fn = mt_flavor_name(w->flavor);
    int t = size / 2;
    reset(w);
    long got[NC], got64[NC];
    unsigned one = 1, minus_one = 0xFFFFFFFFu;
    uint64_t one64 = 1;
    unsigned char b1 = 1;
    CHECK_CLASS(MPI_Win_lock_all(0, w->win), MPI_SUCCESS);
    for (int i = 0; i < NC; i++) {
        unsigned res;
        uint64_t res64;
        CHECK_CLASS(MPI_Fetch_and_op(&one, &res, MPI_UNSIGNED, t, D(w, t, OFF(ucounter)), MPI_SUM, w->win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Fetch_and_op(&one64, &res64, MPI_UINT64_T, t, D(w, t, OFF(u64counter)), MPI_SUM, w->win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(&b1, 1, MPI_UNSIGNED_CHAR, t, D(w, t, OFF(bcounter)), 1, MPI_UNSIGNED_CHAR, MPI_SUM,
                                   w->win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, w->win), MPI_SUCCESS);
        got[i] = (long)res;
        got64[i] = (long)res64;
    }
    CHECK_CLASS(MPI_Accumulate(&minus_one, 1, MPI_UNSIGNED, t, D(w, t, OFF(ucounter2)), 1, MPI_UNSIGNED, MPI_SUM,
                               w->win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock_all(w->win), MPI_SUCCESS);
    char how[96];
    snprintf(how, sizeof how, "%s MPI_UNSIGNED counter across 2^32", fn);
    check_permutation(got, NC, (long)(0xFFFFFFFFu - 17u), 32, how);
    snprintf(how, sizeof how, "%s MPI_UINT64_T counter across 2^64", fn);
    check_permutation(got64, NC, (long)(UINT64_MAX - 2), 64, how);
    area_t s = snapshot(w);
    if (rank == t) {
        unsigned want = 0xFFFFFFFFu - 17u + (unsigned)(NC * size);
        CHECK(s.ucounter == want, "%s: MPI_UNSIGNED counter %u, want %u", fn, s.ucounter, want);
        CHECK(s.u64counter == UINT64_MAX - 2 + (uint64_t)(NC * size), "%s: MPI_UINT64_T counter %llu", fn,
              (unsigned long long)s.u64counter);
        unsigned char wb = (unsigned char)(250 + NC * size);
        CHECK(s.bcounter == wb, "%s: MPI_UNSIGNED_CHAR counter %u, want %u", fn, s.bcounter, wb);
        CHECK(s.ucounter2 == 5u - (unsigned)size, "%s: adding 0xFFFFFFFF %d times to 5: %u", fn, size, s.ucounter2);
    }
}

/* ----------------------------------------------------------------- mutex and ticket lock */

#define NM 4

static void locks(win_t *w)
{
    const char *fn = mt_flavor_name(w->flavor);
    int t = size > 1 ? 1 : 0;
    MPI_Win win = w->win;
    reset(w);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    /* a mutex by compare_and_swap */
    for (int round = 0; round < NM; round++) {
        int me = rank + 1, zero = 0, res = -1, one = 1, minus = -1, occ = -1, c = -1;
        for (;;) {
            CHECK_CLASS(MPI_Compare_and_swap(&me, &zero, &res, MPI_INT, t, D(w, t, OFF(mutex)), win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
            if (res == 0)
                break;
            CHECK(res >= 1 && res <= size && res != me, "%s: mutex held by %d", fn, res);
            sched_yield(); /* many processes per core */
        }
        CHECK_CLASS(MPI_Fetch_and_op(&one, &occ, MPI_INT, t, D(w, t, OFF(occupancy)), MPI_SUM, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(occ == 0, "%s: %d others in the critical section with %d", fn, occ, rank);
        CHECK_CLASS(MPI_Fetch_and_op(NULL, &c, MPI_INT, t, D(w, t, OFF(cs_count)), MPI_NO_OP, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        c++;
        CHECK_CLASS(MPI_Accumulate(&c, 1, MPI_INT, t, D(w, t, OFF(cs_count)), 1, MPI_INT, MPI_REPLACE, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Fetch_and_op(&minus, &occ, MPI_INT, t, D(w, t, OFF(occupancy)), MPI_SUM, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(occ == 1, "%s: occupancy %d on leaving", fn, occ);
        CHECK_CLASS(MPI_Compare_and_swap(&zero, &me, &res, MPI_INT, t, D(w, t, OFF(mutex)), win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(res == me, "%s: releasing the mutex found %d, want %d", fn, res, me);
    }
    /* a ticket lock: served in ticket order, so the count read inside is the ticket */
    long tickets[NM];
    for (int round = 0; round < NM; round++) {
        int one = 1, ticket = -1, serving = -1, c = -1;
        CHECK_CLASS(MPI_Fetch_and_op(&one, &ticket, MPI_INT, t, D(w, t, OFF(ticket)), MPI_SUM, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        tickets[round] = ticket;
        for (;;) {
            CHECK_CLASS(MPI_Fetch_and_op(NULL, &serving, MPI_INT, t, D(w, t, OFF(serving)), MPI_NO_OP, win),
                        MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
            if (serving == ticket)
                break;
            CHECK(serving < ticket, "%s: serving %d passed ticket %d", fn, serving, ticket);
            if (serving > ticket)
                break;
            sched_yield();
        }
        CHECK_CLASS(MPI_Fetch_and_op(NULL, &c, MPI_INT, t, D(w, t, OFF(cs2)), MPI_NO_OP, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(c == ticket, "%s: ticket %d found the count at %d", fn, ticket, c);
        c++;
        CHECK_CLASS(MPI_Accumulate(&c, 1, MPI_INT, t, D(w, t, OFF(cs2)), 1, MPI_INT, MPI_REPLACE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(&one, 1, MPI_INT, t, D(w, t, OFF(serving)), 1, MPI_INT, MPI_SUM, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_SUCCESS);
    char how[96];
    snprintf(how, sizeof how, "%s ticket lock tickets", fn);
    check_permutation(tickets, NM, 0, 64, how);
    area_t s = snapshot(w);
    if (rank == t) {
        CHECK(s.cs_count == NM * size, "%s: mutex: count %d, want %d", fn, s.cs_count, NM * size);
        CHECK(s.mutex == 0 && s.occupancy == 0, "%s: mutex %d occupancy %d at the end", fn, s.mutex, s.occupancy);
        CHECK(s.cs2 == NM * size && s.serving == NM * size && s.ticket == NM * size, "%s: ticket lock %d %d %d", fn,
              s.cs2, s.serving, s.ticket);
    }

    /* compare_and_swap on other types, on self: swaps only when equal */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win), MPI_SUCCESS);
    long long nv = 1LL << 40, cmp = 5, res = -1; /* counter: 0 */
    CHECK_CLASS(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_LONG_LONG, rank, D(w, rank, OFF(counter)), win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, win), MPI_SUCCESS);
    CHECK(res == 0, "%s: compare_and_swap (no match) result %lld", fn, res);
    cmp = 0;
    CHECK_CLASS(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_LONG_LONG, rank, D(w, rank, OFF(counter)), win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, win), MPI_SUCCESS);
    CHECK(res == 0, "%s: compare_and_swap (match) result %lld", fn, res);
    unsigned char bnew = 0xAB, bcmp = 250, bres = 0;
    CHECK_CLASS(MPI_Compare_and_swap(&bnew, &bcmp, &bres, MPI_BYTE, rank, D(w, rank, OFF(bcounter)), win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, win), MPI_SUCCESS);
    CHECK(bres == 250, "%s: compare_and_swap MPI_BYTE result %u", fn, bres);
    uint16_t hnew = 0xBEEF, hcmp = 1, hres = 0;
    CHECK_CLASS(MPI_Compare_and_swap(&hnew, &hcmp, &hres, MPI_UINT16_T, rank, D(w, rank, OFF(ucounter2)), win),
                MPI_SUCCESS); /* low half of 5: no match on little and big endian alike */
    CHECK_CLASS(MPI_Win_flush(rank, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(rank, win), MPI_SUCCESS);
    s = snapshot(w);
    CHECK(s.counter == 1L << 40, "%s: compare_and_swap MPI_LONG_LONG left %ld", fn, s.counter);
    CHECK(s.bcounter == 0xAB, "%s: compare_and_swap MPI_BYTE left %u", fn, s.bcounter);
    CHECK(s.ucounter2 == 5, "%s: compare_and_swap MPI_UINT16_T changed the word to %u", fn, s.ucounter2);
}

/* ----------------------------------------------------------------- request forms */

static void requests(win_t *w)
{
    const char *fn = mt_flavor_name(w->flavor);
    int r = (rank + 1) % size, l = (rank - 1 + size) % size, last = size - 1;
    MPI_Win win = w->win;
    reset(w);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    MPI_Request q[4], nul;
    int four[4] = {rank, rank + 1, rank + 2, rank + 3}, in[8];
    for (int i = 0; i < 8; i++)
        in[i] = -1;
    CHECK_CLASS(MPI_Rput(four, 4, MPI_INT, r, D(w, r, OFF(req_area)), 4, MPI_INT, win, &q[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&q[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(q[0] == MPI_REQUEST_NULL, "%s: MPI_Wait on an MPI_Rput left the request", fn);
    CHECK_CLASS(MPI_Win_flush(r, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Rget(in, 8, MPI_INT, l, D(w, l, OFF(pattern)), 8, MPI_INT, win, &q[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&q[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == (l + 1) * 10 + i, "%s: MPI_Rget [%d] = %d, want %d", fn, i, in[i], (l + 1) * 10 + i);
    long add[3] = {1, 10, 100};
    for (int k = 0; k < 3; k++)
        CHECK_CLASS(MPI_Raccumulate(&add[k], 1, MPI_LONG, 0, D(w, 0, OFF(racc)), 1, MPI_LONG, MPI_SUM, win, &q[k]),
                    MPI_SUCCESS);
    CHECK_CLASS(MPI_Waitall(3, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    long one = 1, res[3] = {-1, -1, -1};
    for (int k = 0; k < 3; k++)
        CHECK_CLASS(MPI_Rget_accumulate(&one, 1, MPI_LONG, &res[k], 1, MPI_LONG, last, D(w, last, OFF(rcounter)), 1,
                                        MPI_LONG, MPI_SUM, win, &q[k]),
                    MPI_SUCCESS);
    for (int k = 0; k < 3; k++) {
        int flag = 0;
        for (int tries = 0; !flag; tries++) {
            CHECK_CLASS(MPI_Test(&q[k], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            if (tries > 1000000) {
                CHECK(flag, "%s: MPI_Test never completed an MPI_Rget_accumulate", fn);
                break;
            }
        }
    }
    CHECK(res[0] < res[1] && res[1] < res[2], "%s: MPI_Rget_accumulate results %ld %ld %ld not increasing", fn,
          res[0], res[1], res[2]);
    CHECK_CLASS(MPI_Rput(four, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win, &nul), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&nul, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_CLASS(MPI_Rget(in, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win, &nul), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&nul, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(in[0] == (l + 1) * 10, "%s: MPI_Rget from MPI_PROC_NULL wrote the buffer", fn);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_SUCCESS);
    check_permutation(res, 3, 0, 64, "MPI_Rget_accumulate counter");
    area_t s = snapshot(w);
    for (int i = 0; i < 4; i++)
        CHECK(s.req_area[i] == l + i, "%s: MPI_Rput data [%d] = %d, want %d", fn, i, s.req_area[i], l + i);
    if (rank == 0)
        CHECK(s.racc == 111L * size, "%s: MPI_Raccumulate total %ld, want %ld", fn, s.racc, 111L * size);
    if (rank == last)
        CHECK(s.rcounter == 3L * size, "%s: MPI_Rget_accumulate counter %ld", fn, s.rcounter);
}

/* ----------------------------------------------------------------- other types and operations */

/* The pair types with padding (MPI_SHORT_INT, MPI_LONG_INT, MPI_LONG_DOUBLE_INT), arrays of
 * pairs, a vector of pairs at the target; the logical and bitwise XOR, LAND, LOR; MPI_MAX on
 * float; MPI_SUM on a complex; a target type whose data lies before its displacement. From every
 * process to every process in one fence epoch. */
typedef struct {
    short v;
    int i;
} si_t;
typedef struct {
    long v;
    int i;
} li_t;
typedef struct {
    long double v;
    int i;
} ldi_t;
typedef struct {
    si_t si[3];
    li_t li[3];
    ldi_t ldi[2];
    dint_t dv[6];
    int bxor, lxor, land, lor;
    float fmax;
    double complex_sum[2];
    int neg[3];
} pairs_t;

static void pair_ops(int flavor)
{
    pairs_t *a, *user = NULL;
    MPI_Win win;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        user = a = malloc(sizeof *a);
        CHECK_CLASS(MPI_Win_create(a, sizeof *a, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    } else {
        CHECK_CLASS(MPI_Win_allocate(sizeof *a, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &a, &win), MPI_SUCCESS);
    }
    memset(a, 0, sizeof *a);
    for (int k = 0; k < 3; k++) {
        a->si[k] = (si_t){10000, -1};
        a->li[k] = (li_t){-100000, -1};
    }
    for (int k = 0; k < 2; k++)
        a->ldi[k] = (ldi_t){-1e9L, -1};
    for (int k = 0; k < 6; k++)
        a->dv[k] = (dint_t){1e9, -1};
    a->land = 1;
    a->fmax = -1e9f;
    MPI_Datatype vec, neg;
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE_INT, &vec); /* pairs 0, 2, 4 */
    MPI_Type_commit(&vec);
    int bl = 1;
    MPI_Aint dl = -(MPI_Aint)sizeof(int);
    MPI_Type_create_hindexed(1, &bl, &dl, MPI_INT, &neg); /* the int before the displacement */
    MPI_Type_commit(&neg);
    CHECK_CLASS(MPI_Win_fence(0, win), MPI_SUCCESS);
    for (int k = 0; k < size; k++) {
        int t = (rank + k) % size, o = rank;
        si_t si[3];
        li_t li[3];
        ldi_t ldi[2];
        dint_t dv[3];
        for (int j = 0; j < 3; j++) {
            si[j] = (si_t){(short)((o * (j + 2) + t) % (size + 1)), o};
            li[j] = (li_t){(long)((o * (j + 3) + t) % (size + 2)) << 33, o};
            dv[j] = (dint_t){(double)((o * 7 + j) % (size + 1)), o};
        }
        for (int j = 0; j < 2; j++)
            ldi[j] = (ldi_t){(long double)((o + j) % 3), o};
        CHECK_CLASS(MPI_Accumulate(si, 3, MPI_SHORT_INT, t, offsetof(pairs_t, si), 3, MPI_SHORT_INT, MPI_MINLOC, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(li, 3, MPI_LONG_INT, t, offsetof(pairs_t, li), 3, MPI_LONG_INT, MPI_MAXLOC, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(ldi, 2, MPI_LONG_DOUBLE_INT, t, offsetof(pairs_t, ldi), 2, MPI_LONG_DOUBLE_INT,
                                   MPI_MAXLOC, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(dv, 3, MPI_DOUBLE_INT, t, offsetof(pairs_t, dv), 1, vec, MPI_MINLOC, win),
                    MPI_SUCCESS);
        int bit = 1 << (o % 31), one = 1, odd = o % 2, v = o + 1;
        CHECK_CLASS(MPI_Accumulate(&bit, 1, MPI_INT, t, offsetof(pairs_t, bxor), 1, MPI_INT, MPI_BXOR, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(&one, 1, MPI_INT, t, offsetof(pairs_t, lxor), 1, MPI_INT, MPI_LXOR, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(&odd, 1, MPI_INT, t, offsetof(pairs_t, land), 1, MPI_INT, MPI_LAND, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(&odd, 1, MPI_INT, t, offsetof(pairs_t, lor), 1, MPI_INT, MPI_LOR, win), MPI_SUCCESS);
        float f = (float)o * 1.5f;
        CHECK_CLASS(MPI_Accumulate(&f, 1, MPI_FLOAT, t, offsetof(pairs_t, fmax), 1, MPI_FLOAT, MPI_MAX, win),
                    MPI_SUCCESS);
        double c[2] = {o, 1};
        CHECK_CLASS(MPI_Accumulate(c, 1, MPI_C_DOUBLE_COMPLEX, t, offsetof(pairs_t, complex_sum), 1,
                                   MPI_C_DOUBLE_COMPLEX, MPI_SUM, win),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, t, offsetof(pairs_t, neg) + 2 * sizeof(int), 1, neg, MPI_SUM, win),
                    MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Win_fence(0, win), MPI_SUCCESS);
    const char *fn = mt_flavor_name(flavor);
    int t = rank;
    for (int j = 0; j < 3; j++) {
        si_t ws = {10000, -1};
        li_t wl = {-100000, -1};
        dint_t wd = {1e9, -1};
        for (int o = 0; o < size; o++) { /* o ascending: on ties the first, least index, stays */
            short sv = (short)((o * (j + 2) + t) % (size + 1));
            long lv = (long)((o * (j + 3) + t) % (size + 2)) << 33;
            double dv = (double)((o * 7 + j) % (size + 1));
            if (sv < ws.v)
                ws = (si_t){sv, o};
            if (lv > wl.v)
                wl = (li_t){lv, o};
            if (dv < wd.v)
                wd = (dint_t){dv, o};
        }
        CHECK(a->si[j].v == ws.v && a->si[j].i == ws.i, "%s: MPI_SHORT_INT MINLOC [%d] (%d, %d), want (%d, %d)", fn, j,
              a->si[j].v, a->si[j].i, ws.v, ws.i);
        CHECK(a->li[j].v == wl.v && a->li[j].i == wl.i, "%s: MPI_LONG_INT MAXLOC [%d] (%ld, %d), want (%ld, %d)", fn, j,
              a->li[j].v, a->li[j].i, wl.v, wl.i);
        CHECK(a->dv[2 * j].v == wd.v && a->dv[2 * j].i == wd.i,
              "%s: MPI_DOUBLE_INT MINLOC vector [%d] (%g, %d), want (%g, %d)", fn, j, a->dv[2 * j].v, a->dv[2 * j].i,
              wd.v, wd.i);
        CHECK(a->dv[2 * j + 1].v == 1e9 && a->dv[2 * j + 1].i == -1, "%s: pair %d between the vector's changed", fn,
              2 * j + 1);
    }
    for (int j = 0; j < 2; j++) {
        ldi_t w = {-1e9L, -1};
        for (int o = 0; o < size; o++)
            if ((long double)((o + j) % 3) > w.v)
                w = (ldi_t){(long double)((o + j) % 3), o};
        CHECK(a->ldi[j].v == w.v && a->ldi[j].i == w.i, "%s: MPI_LONG_DOUBLE_INT MAXLOC [%d] (%Lg, %d), want (%Lg, %d)",
              fn, j, a->ldi[j].v, a->ldi[j].i, w.v, w.i);
    }
    int wbx = 0, wlor = 0, wland = 1;
    for (int o = 0; o < size; o++) {
        wbx ^= 1 << (o % 31);
        wlor |= o % 2;
        wland &= o % 2;
    }
    CHECK(a->bxor == wbx, "%s: MPI_BXOR %#x, want %#x", fn, a->bxor, wbx);
    CHECK(a->lxor == size % 2, "%s: MPI_LXOR of %d trues is %d", fn, size, a->lxor);
    CHECK(a->land == wland && a->lor == wlor, "%s: MPI_LAND %d MPI_LOR %d, want %d %d", fn, a->land, a->lor, wland,
          wlor);
    CHECK(a->fmax == (float)(size - 1) * 1.5f, "%s: MPI_MAX float %g", fn, a->fmax);
    CHECK(a->complex_sum[0] == size * (size - 1) / 2.0 && a->complex_sum[1] == size, "%s: complex sum (%g, %g)", fn,
          a->complex_sum[0], a->complex_sum[1]);
    CHECK(a->neg[1] == size * (size + 1) / 2 && a->neg[0] == 0 && a->neg[2] == 0,
          "%s: type with data before its displacement: %d %d %d", fn, a->neg[0], a->neg[1], a->neg[2]);
    MPI_Type_free(&vec);
    MPI_Type_free(&neg);
    MPI_Win_free(&win);
    free(user);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int flavors[4] = {MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_SHARED,
                                   MPI_WIN_FLAVOR_DYNAMIC};
    int one_node = mt_one_node(MPI_COMM_WORLD);
    for (int f = 0; f < 4; f++) {
        win_t w;
        if (flavors[f] == MPI_WIN_FLAVOR_SHARED && !one_node)
            continue; /* several nodes share no memory */
        make_window(&w, flavors[f]);
        all_to_all(&w);
        counters(&w);
        wrap(&w);
        locks(&w);
        requests(&w);
        MPI_Barrier(MPI_COMM_WORLD);
        free_window(&w);
    }
    pair_ops(MPI_WIN_FLAVOR_ALLOCATE);
    pair_ops(MPI_WIN_FLAVOR_CREATE);
    return mt_finish();
}
