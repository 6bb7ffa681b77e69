/* sync.c: RMA synchronisation: post/start/complete/wait (ring, all-to-all, uneven groups, reordered communicator, MPI_Win_test), exclusive-lock mutual exclusion, lock_all with flush/flush_local/sync, fence assertions; and the error classes of erroneous one-sided calls under MPI_ERRORS_RETURN. */
#include "mpitest.h"

#include <sched.h>
#include <unistd.h>

static int rank, size;
static MPI_Group world_group;

#define NS 64 /* ints of window memory per process */

static int value(int o, int e)
{
    return 1000 * (e + 1) + o;
}

static MPI_Group group_of(int n, const int *ranks)
{
    MPI_Group g;
    MPI_Group_incl(world_group, n, ranks, &g);
    return g;
}

/* The distinct members of {(i + d) mod size : d in ds}, ascending. */
static int ring_set(int i, const int *ds, int nd, int *out)
{
    int n = 0;
    for (int k = 0; k < size; k++)
        for (int j = 0; j < nd; j++)
            if (((i + ds[j]) % size + size) % size == k) {
                out[n++] = k;
                break;
            }
    return n;
}

static MPI_Win make_window(int flavor, int **mem, int **user)
{
    MPI_Win win;
    *user = NULL;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        *user = *mem = malloc(NS * sizeof(int));
        CHECK_CLASS(MPI_Win_create(*mem, NS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                    MPI_SUCCESS);
    } else {
        CHECK_CLASS(MPI_Win_allocate(NS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, mem, &win),
                    MPI_SUCCESS);
    }
    for (int i = 0; i < NS; i++)
        (*mem)[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

static const char *fname(int flavor)
{
    return flavor == MPI_WIN_FLAVOR_CREATE ? "create" : "allocate";
}

/* Waits for the exposure epoch's end: with MPI_Win_wait, or MPI_Win_test polled until true. */
static void end_exposure(MPI_Win win, int poll)
{
    if (!poll) {
        CHECK_CLASS(MPI_Win_wait(win), MPI_SUCCESS);
        return;
    }
    int flag = 0;
    long polls = 0;
    while (!flag) {
        CHECK_CLASS(MPI_Win_test(win, &flag), MPI_SUCCESS);
        if (++polls > 50000000) {
            CHECK(flag, "MPI_Win_test never became true");
            return;
        }
    }
    /* once true, the exposure epoch is over: another test is not allowed, a new post is */
}

/* ----------------------------------------------------------------- general active target */

#define NE 5 /* epochs in a row */

/* A ring: each process exposes its memory to its left neighbour and accesses its right one.
 * Slot e gets epoch e's value. In epoch 0 every target stores to its slot before posting (the
 * put comes after the post, so the put wins); in epoch 1 the origins wait before putting (the
 * target's wait must wait for them). */
static void pscw_ring(int flavor)
{
    int *mem, *user, l = (rank - 1 + size) % size, r = (rank + 1) % size;
    MPI_Win win = make_window(flavor, &mem, &user);
    MPI_Group left = group_of(1, &l), right = group_of(1, &r);
    for (int i = 0; i < NS; i++)
        mem[i] = 10 + i; /* slots NE.. are read by the left neighbour's gets */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int e = 0; e < NE; e++) {
        if (e == 0) {
            usleep(20000);
            mem[0] = -99; /* before the post: the origin's put must land after this */
        }
        CHECK_CLASS(MPI_Win_post(left, 0, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_start(right, 0, win), MPI_SUCCESS);
        int v = value(rank, e), got = -1;
        if (e == 1)
            usleep(20000);
        CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, r, e, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(&got, 1, MPI_INT, r, NE + e, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_complete(win), MPI_SUCCESS);
        CHECK(got == 10 + NE + e, "%s ring epoch %d: get from %d = %d, want %d", fname(flavor), e, r, got, 10 + NE + e);
        end_exposure(win, e % 2);
        for (int s = 0; s < NE; s++) {
            int want = s <= e ? value(l, s) : 10 + s;
            CHECK(mem[s] == want, "%s ring epoch %d: slot %d = %d, want %d", fname(flavor), e, s, mem[s], want);
        }
    }
    MPI_Group_free(&left);
    MPI_Group_free(&right);
    MPI_Win_free(&win);
    free(user);
}

/* Every process exposes to all and accesses all: slot o gets origin o's value, slot NS - 1 the
 * sum of everyone's contribution (an accumulate). */
static void pscw_all(int flavor)
{
    int *mem, *user, *all = malloc((size_t)size * sizeof(int));
    MPI_Win win = make_window(flavor, &mem, &user);
    for (int i = 0; i < size; i++)
        all[i] = i;
    MPI_Group g = group_of(size, all);
    for (int e = 0; e < 3; e++) {
        CHECK_CLASS(MPI_Win_post(g, e == 2 ? MPI_MODE_NOSTORE : 0, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_start(g, 0, win), MPI_SUCCESS);
        int v = value(rank, e), one = e + 1;
        for (int k = 0; k < size; k++) {
            int t = (rank + k) % size;
            CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Accumulate(&one, 1, MPI_INT, t, NS - 1, 1, MPI_INT, MPI_SUM, win), MPI_SUCCESS);
        }
        CHECK_CLASS(MPI_Win_complete(win), MPI_SUCCESS);
        end_exposure(win, e == 1);
        for (int o = 0; o < size; o++)
            CHECK(mem[o] == value(o, e), "%s all-to-all epoch %d: slot %d = %d, want %d", fname(flavor), e, o, mem[o],
                  value(o, e));
        int want = -1 + size * (e + 1) * (e + 2) / 2;
        CHECK(mem[NS - 1] == want, "%s all-to-all epoch %d: sum %d, want %d", fname(flavor), e, mem[NS - 1], want);
    }
    MPI_Group_free(&g);
    free(all);
    MPI_Win_free(&win);
    free(user);
}

/* Uneven groups: process i accesses {i+1, i+3} and exposes to {i-1, i-3}; then a gather to 0
 * (0 exposes to all, the others access only 0) and an epoch on self. */
static void pscw_groups(int flavor)
{
    int *mem, *user;
    MPI_Win win = make_window(flavor, &mem, &user);
    int ad[2] = {1, 3}, ed[2] = {-1, -3}, acc[2], exp[2];
    int na = ring_set(rank, ad, 2, acc), ne = ring_set(rank, ed, 2, exp);
    MPI_Group ga = group_of(na, acc), ge = group_of(ne, exp);
    for (int e = 0; e < 3; e++) {
        CHECK_CLASS(MPI_Win_post(ge, 0, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_start(ga, 0, win), MPI_SUCCESS);
        int v = value(rank, e);
        for (int k = 0; k < na; k++)
            CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, acc[k], rank, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_complete(win), MPI_SUCCESS);
        end_exposure(win, e == 1);
        for (int o = 0; o < size; o++) {
            int in = 0;
            for (int k = 0; k < ne; k++)
                in |= exp[k] == o;
            int want = in ? value(o, e) : -1;
            CHECK(mem[o] == want, "%s groups epoch %d: slot %d = %d, want %d", fname(flavor), e, o, mem[o], want);
        }
    }
    MPI_Group_free(&ga);
    MPI_Group_free(&ge);

    /* gather to 0 */
    MPI_Barrier(MPI_COMM_WORLD);
    int zero = 0, *others = malloc((size_t)size * sizeof(int));
    for (int i = 1; i < size; i++)
        others[i - 1] = i;
    MPI_Group g0 = group_of(1, &zero), gothers = group_of(size - 1, others);
    for (int e = 0; e < 2; e++) {
        if (rank == 0) {
            CHECK_CLASS(MPI_Win_post(gothers, 0, win), MPI_SUCCESS);
            end_exposure(win, e == 0);
            for (int o = 1; o < size; o++)
                CHECK(mem[32 + o] == value(o, e), "%s gather epoch %d: slot %d = %d", fname(flavor), e, o,
                      mem[32 + o]);
        } else {
            int v = value(rank, e);
            CHECK_CLASS(MPI_Win_start(g0, 0, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, 0, 32 + rank, 1, MPI_INT, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_complete(win), MPI_SUCCESS);
        }
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&gothers);
    free(others);

    /* self */
    MPI_Group self = group_of(1, &rank);
    int v = -rank - 5, got = 0;
    CHECK_CLASS(MPI_Win_post(self, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_start(self, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, rank, 60, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_complete(win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_wait(win), MPI_SUCCESS);
    CHECK(mem[60] == v, "%s self epoch: %d, want %d", fname(flavor), mem[60], v);
    CHECK_CLASS(MPI_Win_post(self, MPI_MODE_NOPUT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_start(self, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(&got, 1, MPI_INT, rank, 60, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_complete(win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_wait(win), MPI_SUCCESS);
    CHECK(got == v, "%s self epoch: get %d, want %d", fname(flavor), got, v);
    MPI_Group_free(&self);
    MPI_Win_free(&win);
    free(user);
}

/* A window over world in reverse order: groups of its communicator name window ranks, which
 * are not world ranks; a ring of post/start/complete/wait and an exclusive-lock counter. */
static void reversed(int flavor)
{
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    int me, *mem, *user = NULL;
    MPI_Comm_rank(rev, &me);
    MPI_Win win;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        user = mem = malloc(4 * sizeof(int));
        MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, rev, &win);
    } else {
        MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, rev, &mem, &win);
    }
    for (int i = 0; i < 4; i++)
        mem[i] = -1;
    MPI_Group g, left, right;
    MPI_Comm_group(rev, &g);
    int l = (me - 1 + size) % size, r = (me + 1) % size;
    MPI_Group_incl(g, 1, &l, &left);
    MPI_Group_incl(g, 1, &r, &right);
    MPI_Barrier(rev);
    for (int e = 0; e < 3; e++) {
        CHECK_CLASS(MPI_Win_post(left, 0, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_start(right, 0, win), MPI_SUCCESS);
        int v = value(rank, e); /* world rank: the target knows whose it is */
        CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, r, 0, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_complete(win), MPI_SUCCESS);
        end_exposure(win, e == 2);
        int lw = size - 1 - l; /* the left neighbour's world rank */
        CHECK(mem[0] == value(lw, e), "%s reversed ring epoch %d: %d, want %d", fname(flavor), e, mem[0],
              value(lw, e));
    }
    /* a get+put counter under exclusive locks at window rank 0 (world rank size - 1) */
    MPI_Barrier(rev);
    for (int i = 0; i < 10; i++) {
        int c = -1;
        CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(0, win), MPI_SUCCESS);
        c++;
        CHECK_CLASS(MPI_Put(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_unlock(0, win), MPI_SUCCESS);
    }
    MPI_Barrier(rev);
    if (rank == size - 1) {
        CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
        CHECK(mem[1] == 10 * size - 1, "%s reversed: counter %d, want %d", fname(flavor), mem[1], 10 * size - 1);
        CHECK_CLASS(MPI_Win_unlock(0, win), MPI_SUCCESS);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&left);
    MPI_Group_free(&right);
    MPI_Win_free(&win);
    free(user);
    MPI_Comm_free(&rev);
}

/* ----------------------------------------------------------------- passive target */

#define NX 25

/* Read-modify-write by get + put under an exclusive lock, from every process: exact totals.
 * And exclusive writers against shared readers: a reader never sees a half-done write. */
static void exclusive(int flavor)
{
    int *mem, *user;
    MPI_Win win = make_window(flavor, &mem, &user);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win), MPI_SUCCESS);
    mem[0] = 0;
    mem[1] = 0;
    mem[2] = mem[3] = 0;
    CHECK_CLASS(MPI_Win_unlock(rank, win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    int targets[2] = {0, size - 1};
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < 2; j++) {
            int k = (j + rank) % 2, t = targets[k], c = -1; /* slot k of process targets[k] */
            CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Get(&c, 1, MPI_INT, t, k, 1, MPI_INT, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
            if (i % 8 == 0)
                sched_yield(); /* let the others try meanwhile */
            c++;
            CHECK_CLASS(MPI_Put(&c, 1, MPI_INT, t, k, 1, MPI_INT, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_unlock(t, win), MPI_SUCCESS);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    int got[2] = {-1, -1};
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(&got[0], 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, size - 1, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(&got[1], 1, MPI_INT, size - 1, 1, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(size - 1, win), MPI_SUCCESS);
    CHECK(got[0] == NX * size && got[1] == NX * size, "%s exclusive get+put counters %d %d, want %d", fname(flavor),
          got[0], got[1], NX * size);

    /* writers (even ranks) set the pair at process 0 to (v, v) in two steps; readers (odd
     * ranks) read it under a shared lock */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NX; i++) {
        if (rank % 2 == 0) {
            int v = rank * 1000 + i;
            CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_flush(0, win), MPI_SUCCESS);
            if (i % 5 == 0)
                usleep(100);
            CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_unlock(0, win), MPI_SUCCESS);
        } else {
            int pair[2] = {-1, -2};
            CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Get(pair, 2, MPI_INT, 0, 2, 2, MPI_INT, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_unlock(0, win), MPI_SUCCESS);
            CHECK(pair[0] == pair[1], "%s: a shared lock saw half of an exclusive lock's write: %d %d", fname(flavor),
                  pair[0], pair[1]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(user);
}

/* lock_all with flush, flush_all, flush_local, flush_local_all and MPI_Win_sync. */
static void lock_all_flush(int flavor)
{
    int *mem, *user;
    MPI_Win win = make_window(flavor, &mem, &user);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    /* a put to every process's slot [rank], flushed, read back */
    for (int k = 0; k < size; k++) {
        int t = (rank + k) % size, v = value(rank, t), back = -1;
        CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(&back, 1, MPI_INT, t, rank, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(back == v, "%s lock_all: read back %d from %d, want %d", fname(flavor), back, t, v);
    }
    CHECK_CLASS(MPI_Win_flush_all(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone's puts are complete: read the others' */
    int *got = malloc((size_t)size * sizeof(int));
    for (int k = 0; k < size; k++) {
        int t = (rank + k) % size;
        got[t] = -1;
        CHECK_CLASS(MPI_Get(&got[t], 1, MPI_INT, t, (t + 1) % size, 1, MPI_INT, win), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Win_flush_all(win), MPI_SUCCESS);
    for (int t = 0; t < size; t++)
        CHECK(got[t] == value((t + 1) % size, t), "%s lock_all: process %d's slot %d = %d, want %d", fname(flavor), t,
              (t + 1) % size, got[t], value((t + 1) % size, t));
    /* flush_local: the origin buffer may be reused; the target has the value put */
    int r = (rank + 1) % size, buf = 5000 + rank;
    CHECK_CLASS(MPI_Put(&buf, 1, MPI_INT, r, 40, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush_local(r, win), MPI_SUCCESS);
    buf = -7;
    CHECK_CLASS(MPI_Accumulate(&buf, 1, MPI_INT, r, 41, 1, MPI_INT, MPI_REPLACE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush_local_all(win), MPI_SUCCESS);
    buf = 0;
    CHECK_CLASS(MPI_Win_flush(r, win), MPI_SUCCESS);
    /* MPI_Win_sync with a barrier: the neighbours' puts are visible to loads */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_sync(win), MPI_SUCCESS);
    int l = (rank - 1 + size) % size;
    CHECK(mem[40] == 5000 + l && mem[41] == -7, "%s flush_local: %d %d, want %d -7", fname(flavor), mem[40], mem[41],
          5000 + l);
    for (int o = 0; o < size; o++)
        CHECK(mem[o] == value(o, rank), "%s lock_all: my slot %d = %d by load, want %d", fname(flavor), o, mem[o],
              value(o, rank));
    /* and stores: this process's store, then sync + barrier, then the neighbour's get */
    mem[50] = 777 + rank;
    CHECK_CLASS(MPI_Win_sync(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    int st = -1;
    CHECK_CLASS(MPI_Get(&st, 1, MPI_INT, r, 50, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(r, win), MPI_SUCCESS);
    CHECK(st == 777 + r, "%s lock_all: a store seen by the neighbour's get as %d, want %d", fname(flavor), st, 777 + r);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_SUCCESS);
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(user);
}

/* Fence epochs with assertions. */
static void fences(int flavor)
{
    int *mem, *user, r = (rank + 1) % size, l = (rank - 1 + size) % size;
    MPI_Win win = make_window(flavor, &mem, &user);
    mem[0] = rank; /* stored before the first fence */
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_SUCCESS);
    int v = value(rank, 0), got = -1;
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, r, 1, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(&got, 1, MPI_INT, r, 0, 1, MPI_INT, win), MPI_SUCCESS);
    /* no local stores in the epoch that ends here */
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOSTORE, win), MPI_SUCCESS);
    CHECK(got == r, "%s fence: get %d, want %d", fname(flavor), got, r);
    CHECK(mem[1] == value(l, 0), "%s fence: put %d, want %d", fname(flavor), mem[1], value(l, 0));
    /* an epoch of gets only: no puts to anyone's window after this fence */
    int got2 = -1;
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOPUT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(&got2, 1, MPI_INT, l, 1, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOSTORE, win), MPI_SUCCESS);
    CHECK(got2 == value((l - 1 + size) % size, 0), "%s fence NOPUT: get %d", fname(flavor), got2);
    v = value(rank, 1);
    CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, l, 2, 1, MPI_INT, MPI_REPLACE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
    CHECK(mem[2] == value(r, 1), "%s fence NOSUCCEED: %d, want %d", fname(flavor), mem[2], value(r, 1));
    /* after NOSUCCEED, local stores freely; an empty epoch; a new sequence */
    mem[3] = -3;
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_SUCCESS);
    int got3 = 0;
    CHECK_CLASS(MPI_Get(&got3, 1, MPI_INT, r, 3, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win), MPI_SUCCESS);
    CHECK(got3 == -3, "%s fence after a new sequence: %d", fname(flavor), got3);
    /* then a passive epoch on the same window */
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, r, MPI_MODE_NOCHECK, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(&got3, 1, MPI_INT, r, 1, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(r, win), MPI_SUCCESS);
    CHECK(got3 == value(rank, 0), "%s lock with MPI_MODE_NOCHECK after fences: %d", fname(flavor), got3);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(user);
}

/* ----------------------------------------------------------------- errors */

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static int handler_calls, handler_code;
static MPI_Win handler_win;
static void win_handler(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

static void errors(int flavor)
{
    int *mem, *user;
    MPI_Win win = make_window(flavor, &mem, &user);
    MPI_Errhandler eh;
    CHECK_CLASS(MPI_Win_get_errhandler(win, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "%s: the default window error handler is not MPI_ERRORS_ARE_FATAL", fname(flavor));
    MPI_Errhandler_free(&eh);
    CHECK_CLASS(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_errhandler(win, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_RETURN, "%s: MPI_Win_get_errhandler after set", fname(flavor));
    MPI_Errhandler_free(&eh);
    int v = 1, res, r = (rank + 1) % size;
    MPI_Op op;
    MPI_Op_create(my_sum, 1, &op);

    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    /* target rank */
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Get(&v, 1, MPI_INT, -5, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, size + 3, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Fetch_and_op(&v, &res, MPI_INT, size, 0, MPI_SUM, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Compare_and_swap(&v, &v, &res, MPI_INT, -7, 0, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_flush(size, win), MPI_ERR_RANK);
    /* target_disp beyond the window: past the end, straddling it, negative */
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, r, NS, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    int two[2] = {0, 0};
    CHECK_CLASS(MPI_Put(two, 2, MPI_INT, r, NS - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(two, 2, MPI_INT, r, NS - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(&v, 1, MPI_INT, r, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, r, NS + 100, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Fetch_and_op(&v, &res, MPI_INT, rank, NS, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Compare_and_swap(&v, &v, &res, MPI_INT, r, NS, win), MPI_ERR_RMA_RANGE);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, NS, MPI_INT, &vec); /* its second element is one window further */
    MPI_Type_commit(&vec);
    CHECK_CLASS(MPI_Put(two, 2, MPI_INT, r, 0, 1, vec, win), MPI_ERR_RMA_RANGE);
    MPI_Type_free(&vec);
    /* the last element exactly is in range */
    CHECK_CLASS(MPI_Get(&v, 1, MPI_INT, r, NS - 1, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(r, win), MPI_SUCCESS);
    /* operations: user-defined, and predefined ones that do not apply to the type */
    v = 1;
    CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, r, 0, 1, MPI_INT, op, win), MPI_ERR_OP);
    CHECK_CLASS(MPI_Get_accumulate(&v, 1, MPI_INT, &res, 1, MPI_INT, r, 0, 1, MPI_INT, op, win), MPI_ERR_OP);
    CHECK_CLASS(MPI_Fetch_and_op(&v, &res, MPI_INT, r, 0, op, win), MPI_ERR_OP);
    double d = 1.0;
    CHECK_CLASS(MPI_Accumulate(&d, 1, MPI_DOUBLE, r, 0, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP);
    /* lock errors: already locked (lock_all), unlock of a lock this process does not hold */
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(r, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE + MPI_LOCK_SHARED, r, 0, win), MPI_ERR_LOCKTYPE);
    CHECK_CLASS(MPI_Win_lock(0, r, 0, win), MPI_ERR_LOCKTYPE);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(r, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(r, win), MPI_ERR_RMA_SYNC);
    /* assertions a call does not take */
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, r, MPI_MODE_NOPRECEDE, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, r, 0x40000, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_lock_all(MPI_MODE_NOSTORE, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOCHECK, win), MPI_ERR_ASSERT); /* everyone, so nobody waits */
    CHECK_CLASS(MPI_Win_fence(-1, win), MPI_ERR_ASSERT);
    MPI_Group self = group_of(1, &rank);
    CHECK_CLASS(MPI_Win_post(self, MPI_MODE_NOPRECEDE, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_start(self, MPI_MODE_NOSTORE, win), MPI_ERR_ASSERT);
    MPI_Group_free(&self);
    /* accumulates need one predefined type throughout */
    MPI_Datatype mixed;
    int mbl[2] = {1, 1};
    MPI_Aint mdl[2] = {0, sizeof(double)};
    MPI_Datatype mts[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, mbl, mdl, mts, &mixed);
    MPI_Type_commit(&mixed);
    char mbuf[2 * sizeof(double)];
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Accumulate(mbuf, 1, mixed, r, 0, 1, mixed, MPI_SUM, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Win_unlock(r, win), MPI_SUCCESS);
    MPI_Type_free(&mixed);
    /* predefined attributes cannot be set or deleted */
    CHECK_CLASS(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Win_delete_attr(win, MPI_WIN_SIZE), MPI_ERR_KEYVAL);
    /* dynamic-only calls on another flavour */
    CHECK_CLASS(MPI_Win_attach(win, two, sizeof two), MPI_ERR_RMA_FLAVOR);
    CHECK_CLASS(MPI_Win_detach(win, mem), MPI_ERR_RMA_FLAVOR);
    /* shared_query's rank */
    MPI_Aint qsize;
    int qunit;
    void *qbase;
    CHECK_CLASS(MPI_Win_shared_query(win, size, &qsize, &qunit, &qbase), MPI_ERR_RANK);
    /* the window still works */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Win_fence(0, win), MPI_SUCCESS);
    v = 4242 + rank;
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, r, 5, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(0, win), MPI_SUCCESS);
    CHECK(mem[5] == 4242 + (rank - 1 + size) % size, "%s: the window after errors: %d", fname(flavor), mem[5]);
    CHECK_CLASS(MPI_Win_fence(0, win), MPI_SUCCESS);

    /* a handler of the user's: called with the window and the code */
    MPI_Errhandler mine;
    CHECK_CLASS(MPI_Win_create_errhandler(win_handler, &mine), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_set_errhandler(win, mine), MPI_SUCCESS);
    handler_calls = 0;
    int rc = MPI_Win_unlock(r, win);
    CHECK(handler_calls == 1 && handler_win == win, "%s: user handler called %d times", fname(flavor), handler_calls);
    int cls = -1;
    MPI_Error_class(handler_code, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC && rc == handler_code, "%s: user handler got class %d, call returned %d", fname(flavor),
          cls, rc);
    handler_calls = 0;
    CHECK_CLASS(MPI_Win_call_errhandler(win, MPI_ERR_OTHER), MPI_SUCCESS);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "%s: MPI_Win_call_errhandler: %d calls, code %d",
          fname(flavor), handler_calls, handler_code);
    MPI_Errhandler_free(&mine);
    CHECK_CLASS(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), MPI_SUCCESS);

    MPI_Op_free(&op);
    MPI_Win_free(&win);
    free(user);
}

/* Post and start with a group that has a process outside the window (of the odd or the even
 * processes): MPI_ERR_GROUP. */
static void group_errors(void)
{
    if (size < 2)
        return;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, half, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int other = rank % 2 || rank + 1 == size ? rank - 1 : rank + 1; /* of the other parity */
    MPI_Group g = group_of(1, &other);
    CHECK_CLASS(MPI_Win_post(g, 0, win), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Win_start(g, 0, win), MPI_ERR_GROUP);
    MPI_Group_free(&g);
    MPI_Win_free(&win);
    MPI_Comm_free(&half);
}

/* Errors of window creation go to the communicator's handler. */
static void creation_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* for the null window */
    int buf[4], *base;
    MPI_Win win = MPI_WIN_NULL;
    CHECK_CLASS(MPI_Win_create(buf, -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    CHECK_CLASS(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE);
    CHECK_CLASS(MPI_Win_allocate_shared(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE);
    CHECK_CLASS(MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    CHECK_CLASS(MPI_Win_create(buf, sizeof buf, -4, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    CHECK_CLASS(MPI_Win_allocate(16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_DISP);
    CHECK_CLASS(MPI_Win_allocate_shared(16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_DISP);
    CHECK(win == MPI_WIN_NULL, "a failed creation set the window handle");
    CHECK_CLASS(MPI_Win_free(&win), MPI_ERR_WIN);
    /* a dynamic window: attach of a negative size */
    CHECK_CLASS(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Win_attach(win, buf, -1), MPI_ERR_SIZE);
    MPI_Win_free(&win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    static const int flavors[2] = {MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_CREATE};
    for (int f = 0; f < 2; f++) {
        pscw_ring(flavors[f]);
        pscw_all(flavors[f]);
        pscw_groups(flavors[f]);
        reversed(flavors[f]);
        exclusive(flavors[f]);
        lock_all_flush(flavors[f]);
        fences(flavors[f]);
        errors(flavors[f]);
    }
    creation_errors();
    group_errors();
    MPI_Group_free(&world_group);
    return mt_finish();
}
