/* by_message.c: one-sided operations towards processes whose memory is out of reach (run on
 * simulated nodes, and with cross-memory attach off, so they go by message; on one node with it
 * the same checks hold by memory):
 *   - many gets issued before one flush (they return before their answers come) land, each in
 *     its place, also through a derived origin type freed right after the call;
 *   - MPI_Rget's request completes with the data there; MPI_Rget_accumulate's too;
 *   - fetch-and-op and get-accumulate (MPI_NO_OP) issued back to back, one flush: distinct
 *     tickets, and reads that see the target's value;
 *   - a read-modify-write by get + put under exclusive locks from every process on one target
 *     (locks queued at a target on another node) leaves an exact count;
 *   - lock_all epochs beside exclusive locks on every target finish (no deadlock) and count right;
 *   - large puts and gets (4 MiB, several TCP frames and rendezvous) at odd offsets, and a put
 *     large enough to send its data apart into target data of many runs, from a strided origin
 *     type freed right after the call;
 *   - a dynamic window: puts and gets by address. */
#include "mpitest.h"

#include <stdint.h>

static int rank, size;

#define NGET 500

static void many_gets(void)
{
    int *mem, t = (rank + 1) % size;
    MPI_Win win;
    MPI_Win_allocate(NGET * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < NGET; i++)
        mem[i] = rank * 100000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    int got[NGET], strided[2 * NGET];
    for (int i = 0; i < NGET; i++)
        got[i] = -1;
    for (int i = 0; i < 2 * NGET; i++)
        strided[i] = -7;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < NGET; i++) /* backwards, one element each */
        CHECK_CLASS(MPI_Get(&got[NGET - 1 - i], 1, MPI_INT, t, NGET - 1 - i, 1, MPI_INT, win), MPI_SUCCESS);
    /* into every other int of strided, through a vector type freed before the answer comes */
    MPI_Datatype every_other;
    MPI_Type_vector(NGET, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    CHECK_CLASS(MPI_Get(strided, 1, every_other, t, 0, NGET, MPI_INT, win), MPI_SUCCESS);
    MPI_Type_free(&every_other);
    CHECK_CLASS(MPI_Win_flush_local(t, win), MPI_SUCCESS);
    for (int i = 0; i < NGET; i++) {
        CHECK(got[i] == t * 100000 + i, "get %d from %d: %d", i, t, got[i]);
        CHECK(strided[2 * i] == t * 100000 + i && strided[2 * i + 1] == -7, "strided get %d: %d %d", i,
              strided[2 * i], strided[2 * i + 1]);
    }
    /* request forms: the data is there when the request says so */
    int one = -1, old = -1, inc = 1;
    MPI_Request r[2];
    CHECK_CLASS(MPI_Rget(&one, 1, MPI_INT, t, 7, 1, MPI_INT, win, &r[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Rget_accumulate(&inc, 1, MPI_INT, &old, 1, MPI_INT, t, 8, 1, MPI_INT, MPI_NO_OP, win, &r[1]),
                MPI_SUCCESS);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK(one == t * 100000 + 7 && old == t * 100000 + 8, "Rget %d, Rget_accumulate %d", one, old);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

#define NFOP 64

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static void tickets(void)
{
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    mem[0] = 0;
    mem[1] = 12345;
    MPI_Barrier(MPI_COMM_WORLD);
    int mine[NFOP], reads[NFOP], one = 1, t = size - 1;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    for (int i = 0; i < NFOP; i++) { /* back to back, one flush for all */
        CHECK_CLASS(MPI_Fetch_and_op(&one, &mine[i], MPI_INT, t, 0, MPI_SUM, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get_accumulate(NULL, 0, MPI_INT, &reads[i], 1, MPI_INT, t, 1, 1, MPI_INT, MPI_NO_OP, win),
                    MPI_SUCCESS);
    }
    MPI_Win_unlock(t, win);
    for (int i = 0; i < NFOP; i++)
        CHECK(reads[i] == 12345, "MPI_NO_OP read %d: %d", i, reads[i]);
    for (int i = 1; i < NFOP; i++) /* one process's tickets rise: its operations are applied in order */
        CHECK(mine[i] > mine[i - 1], "tickets %d then %d", mine[i - 1], mine[i]);
    int *all = rank == 0 ? malloc((size_t)size * NFOP * sizeof(int)) : NULL;
    MPI_Gather(mine, NFOP, MPI_INT, all, NFOP, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)size * NFOP, sizeof(int), cmp_int);
        for (int i = 0; i < size * NFOP; i++)
            CHECK(all[i] == i, "ticket %d is %d", i, all[i]);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t)
        CHECK(mem[0] == size * NFOP, "counter %d, want %d", mem[0], size * NFOP);
    MPI_Win_free(&win);
}

#define NLOCK 30

static void locked_counter(void)
{
    long *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NLOCK; i++) { /* get, add, put: right only if the lock excludes */
        long v = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
    }
    /* lock_all epochs beside exclusive locks on every target: each epoch adds one everywhere */
    for (int i = 0; i < 10; i++) {
        long one = 1;
        if ((rank + i) % 2) {
            MPI_Win_lock_all(0, win);
            for (int tt = 0; tt < size; tt++)
                MPI_Accumulate(&one, 1, MPI_LONG, tt, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Win_unlock_all(win);
        } else {
            for (int k = 0; k < size; k++) {
                int tt = (rank + k) % size;
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tt, 0, win);
                MPI_Accumulate(&one, 1, MPI_LONG, tt, 0, 1, MPI_LONG, MPI_SUM, win);
                MPI_Win_unlock(tt, win);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    long want = (long)size * 10 + (rank == 0 ? (long)size * NLOCK : 0);
    CHECK(*mem == want, "counter on %d: %ld, want %ld", rank, *mem, want);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

static void large(int dynamic)
{
    const size_t n = (4u << 20) + 13; /* bytes: several frames, rendezvous */
    unsigned char *mem = malloc(n + 8), *buf = malloc(n), *back = malloc(n);
    MPI_Win win;
    MPI_Aint disp = 5, *addr = malloc((size_t)size * sizeof *addr);
    if (dynamic) {
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, mem, n + 8);
        MPI_Aint a;
        MPI_Get_address(mem + 5, &a);
        MPI_Allgather(&a, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    } else {
        MPI_Win_create(mem, n + 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    MPI_Aint at = dynamic ? addr[t] : disp;
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(i * 7 + rank);
    memset(mem, 0xEE, n + 8);
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Put(buf, (int)n, MPI_BYTE, t, at, (int)n, MPI_BYTE, win), MPI_SUCCESS);
    MPI_Win_fence(0, win);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (mem[5 + i] != (unsigned char)(i * 7 + from))
            bad = i;
    CHECK(bad == n && mem[4] == 0xEE && mem[5 + n] == 0xEE, "%s put: byte %zu wrong", dynamic ? "dynamic" : "create",
          bad);
    CHECK_CLASS(MPI_Get(back, (int)n, MPI_BYTE, t, at, (int)n, MPI_BYTE, win), MPI_SUCCESS);
    MPI_Win_fence(0, win);
    CHECK(memcmp(back, buf, n) == 0, "%s get of what this process put: differs", dynamic ? "dynamic" : "create");
    if (dynamic)
        MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    free(mem), free(buf), free(back), free(addr);
}

/* A put large enough to send its data apart, into target data of many runs (every other int),
 * from origin data of many runs too (every third int): the target lands it apart, then spreads it. */
static void strided_put(void)
{
    enum { K = 20000 }; /* 80 000 bytes of data */
    int *mem, *src = malloc(3 * K * sizeof(int)), t = (rank + 1) % size, from = (rank - 1 + size) % size;
    MPI_Win win;
    MPI_Win_allocate(2 * K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < 2 * K; i++)
        mem[i] = -1;
    for (int i = 0; i < 3 * K; i++)
        src[i] = i % 3 ? -5 : rank * 1000000 + i / 3;
    MPI_Datatype every_other, every_third;
    MPI_Type_vector(K, 1, 2, MPI_INT, &every_other);
    MPI_Type_vector(K, 1, 3, MPI_INT, &every_third);
    MPI_Type_commit(&every_other);
    MPI_Type_commit(&every_third);
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Put(src, 1, every_third, t, 0, 1, every_other, win), MPI_SUCCESS);
    MPI_Type_free(&every_third); /* before the data has gone: the put must keep it */
    MPI_Win_fence(0, win);
    int bad = -1;
    for (int i = 0; i < K && bad < 0; i++)
        if (mem[2 * i] != from * 1000000 + i || mem[2 * i + 1] != -1)
            bad = i;
    CHECK(bad < 0, "strided put from %d: element %d is %d (gap %d)", from, bad, bad < 0 ? 0 : mem[2 * bad],
          bad < 0 ? 0 : mem[2 * bad + 1]);
    MPI_Type_free(&every_other);
    MPI_Win_free(&win);
    free(src);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    many_gets();
    tickets();
    locked_counter();
    large(0);
    large(1);
    strided_put();
    return mt_finish();
}
