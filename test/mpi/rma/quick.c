/* quick.c: puts and gets at the edges of their quick path (ops.c, quick_transfer: contiguous
 * data towards a locked target whose memory is mapped here), in every flavour and epoch:
 * every size from 1 to 40 bytes ending exactly at the end of an origin's slot, with the bytes
 * around it unchanged; the last byte of each target's window (sizes differ per target) reached
 * and the next one refused; displacements near 2^31 and negative; mismatched sizes; a put after
 * its lock is gone; overlapping origin and target memory on the origin's own window; derived
 * and non-contiguous types beside predefined ones; lock, lock_all (with and without
 * MPI_MODE_NOCHECK) and fence epochs; dynamic windows. Every byte that arrived is checked. */
#include "mpitest.h"

#include <stdint.h>

enum { SLOT = 48 };

static int rank, size;

/* The byte origin o writes at position i of its slot in target t's memory, for pass `pass`. */
static unsigned char pattern(int o, int t, int i, int pass)
{
    return (unsigned char)(1 + o * 7 + t * 13 + i * 3 + pass * 29);
}

/* Target t's window: size slots of SLOT bytes, then t + 1 bytes, so each has its own end. */
static MPI_Aint bytes_of(int t)
{
    return (MPI_Aint)size * SLOT + t + 1;
}

/* Every size up to 40 bytes, each ending at the end of this origin's slot in every target, put
 * and read back by get (epoch: lock_all, with or without NOCHECK, or one lock per target). */
static void slots(MPI_Win win, int flavor, int epoch, int pass)
{
    unsigned char out[SLOT], in[SLOT], fill[SLOT];
    for (int t = 0; t < size; t++) {
        if (epoch == 2)
            MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        MPI_Aint slot = (MPI_Aint)rank * SLOT;
        memset(fill, 0xEE, sizeof fill);
        CHECK_CLASS(MPI_Put(fill, SLOT, MPI_BYTE, t, slot, SLOT, MPI_BYTE, win), MPI_SUCCESS);
        for (int n = 1; n <= 40; n++) {
            for (int i = 0; i < n; i++)
                out[i] = pattern(rank, t, i + n, pass);
            CHECK_CLASS(MPI_Put(out, n, MPI_BYTE, t, slot + SLOT - n, n, MPI_BYTE, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
            memset(in, 0, sizeof in);
            CHECK_CLASS(MPI_Get(in, SLOT, MPI_BYTE, t, slot, SLOT, MPI_BYTE, win), MPI_SUCCESS);
            CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
            for (int i = 0; i < SLOT; i++) {
                /* sizes rise: each put covers the smaller ones before it, none reaches below */
                int want = i < SLOT - n ? 0xEE : pattern(rank, t, i - (SLOT - n) + n, pass);
                CHECK(in[i] == want, "%s epoch %d: target %d, %d-byte put, byte %d of the slot is %d, want %d",
                      mt_flavor_name(flavor), epoch, t, n, i, in[i], want);
            }
        }
        /* Typed: 3 ints, 2 doubles, a contiguous type of 3 ints, a vector (not contiguous). */
        int iv[3] = {rank * 100 + t, -7, pass}, ib[3];
        double dv[2] = {rank + 0.5, t - 0.25}, db[2];
        MPI_Datatype three, every_other;
        MPI_Type_contiguous(3, MPI_INT, &three);
        MPI_Type_commit(&three);
        MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
        MPI_Type_commit(&every_other);
        CHECK_CLASS(MPI_Put(iv, 3, MPI_INT, t, slot, 3, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(ib, 1, three, t, slot, 1, three, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(ib[0] == iv[0] && ib[1] == -7 && ib[2] == pass, "target %d: ints %d %d %d", t, ib[0], ib[1], ib[2]);
        CHECK_CLASS(MPI_Put(dv, 2, MPI_DOUBLE, t, slot + 16, 2, MPI_DOUBLE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(db, 16, MPI_BYTE, t, slot + 16, 16, MPI_BYTE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(db[0] == dv[0] && db[1] == dv[1], "target %d: doubles %g %g", t, db[0], db[1]);
        int spread[3] = {11, 22, 33}, got[3] = {0, 0, 0};
        CHECK_CLASS(MPI_Put(spread, 1, every_other, t, slot, 2, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(got, 1, every_other, t, slot, 2, MPI_INT, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(got[0] == 11 && got[1] == 0 && got[2] == 33, "target %d: vector %d %d %d", t, got[0], got[1], got[2]);
        MPI_Type_free(&three);
        MPI_Type_free(&every_other);
        if (epoch == 2)
            MPI_Win_unlock(t, win);
    }
}

/* Inside an epoch where the quick entry points (gen_bindings.py, `quick`) would take a call,
 * arguments they leave to the full entry point: each must still get its error class, and
 * nothing may reach the target's memory (its last 8 bytes stay as they were). A window
 * handle that names nothing (MPI_WIN_NULL, or a freed window) raises its error on
 * MPI_COMM_SELF, where this test sets MPI_ERRORS_RETURN too. */
static void declined(MPI_Win win, int t, MPI_Aint end)
{
    uint64_t before = 0, w, back = 0;
    CHECK_CLASS(MPI_Get(&before, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
    w = ~before;
    MPI_Datatype loose;
    MPI_Type_contiguous(8, MPI_BYTE, &loose); /* never committed */
    CHECK_CLASS(MPI_Put(&w, -1, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Put(&w, 8, MPI_BYTE, t, end - 8, -8, MPI_BYTE, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Get(&back, -8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Put(NULL, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Get(NULL, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Put(&w, 1, loose, t, end - 8, 8, MPI_BYTE, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Put(&w, 8, MPI_BYTE, t, end - 8, 1, loose, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, end - 8, 8, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Put(&w, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_flush(t, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_flush(-1, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_flush(MPI_PROC_NULL, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put_c(&w, -1, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Put_c(&w, (MPI_Count)1 << 32, MPI_BYTE, t, end - 8, (MPI_Count)1 << 32, MPI_BYTE, win),
                MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
    CHECK(back == before, "a declined put reached target %d: its last 8 bytes are %llx, were %llx", t,
          (unsigned long long)back, (unsigned long long)before);
    MPI_Type_free(&loose);
}

/* The end of each target's window, one at a time under an exclusive lock: the last 8 bytes
 * are reached, one byte further is not, nor are displacements near 2^31 or negative. */
static void ends(MPI_Win win, int flavor)
{
    for (int t = 0; t < size; t++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
        MPI_Aint end = bytes_of(t);
        uint64_t v = 0x0102030405060708ull + (uint64_t)rank, back = 0;
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, end - 8, 8, MPI_BYTE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(back == v, "%s: the last 8 bytes of target %d read back %llx", mt_flavor_name(flavor), t,
              (unsigned long long)back);
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, end - 7, 8, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, end - 7, 8, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Put(&v, 1, MPI_BYTE, t, end, 1, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Put(&v, 1, MPI_BYTE, t, end - 1, 1, MPI_BYTE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, ((MPI_Aint)1 << 31) - 1, 8, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, (MPI_Aint)1 << 31, 8, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, -1, 8, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, 0, 4, MPI_BYTE, win), MPI_ERR_ARG); /* sizes differ */
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, size, 0, 8, MPI_BYTE, win), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, MPI_PROC_NULL, 0, 8, MPI_BYTE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Put(&v, 0, MPI_BYTE, t, end + 100, 0, MPI_BYTE, win), MPI_SUCCESS); /* touches nothing */
        declined(win, t, end);
        MPI_Win_unlock(t, win);
        /* The lock is gone: no epoch towards t. */
        CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, 0, 8, MPI_BYTE, win), MPI_ERR_RMA_SYNC);
        CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, 0, 8, MPI_BYTE, win), MPI_ERR_RMA_SYNC);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_ERR_RMA_SYNC);
        if (size > 1) { /* a lock on another target opens none towards t */
            int u = (t + 1) % size;
            MPI_Win_lock(MPI_LOCK_SHARED, u, 0, win);
            CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, 0, 8, MPI_BYTE, win), MPI_ERR_RMA_SYNC);
            CHECK_CLASS(MPI_Win_flush(t, win), MPI_ERR_RMA_SYNC);
            MPI_Win_unlock(u, win);
        }
    }
}

/* Origin and target in this process's own window, overlapping: the result of a memmove. */
static void overlap(MPI_Win win, unsigned char *mine, int flavor)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    MPI_Aint slot = (MPI_Aint)rank * SLOT;
    for (int i = 0; i < SLOT; i++)
        mine[slot + i] = (unsigned char)i;
    CHECK_CLASS(MPI_Put(mine + slot, 16, MPI_BYTE, rank, slot + 4, 16, MPI_BYTE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(mine + slot + 24, 16, MPI_BYTE, rank, slot + 20, 16, MPI_BYTE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(rank, win), MPI_SUCCESS);
    /* After the put, bytes 4..19 hold 0..15 and bytes 20.. are unchanged (20, 21, ...); the get
     * then copied bytes 20..35 (20..23, then 24..35 as they were before it began) to 24..39. */
    unsigned char expect[SLOT];
    for (int i = 0; i < SLOT; i++)
        expect[i] = (unsigned char)i;
    memmove(expect + 4, expect, 16);
    memmove(expect + 24, expect + 20, 16);
    for (int i = 0; i < SLOT; i++)
        CHECK(mine[slot + i] == expect[i], "%s: overlapping put and get, byte %d is %d, want %d", mt_flavor_name(flavor),
              i, mine[slot + i], expect[i]);
}

static void check_fence(MPI_Win win, int flavor)
{
    MPI_Win_fence(0, win);
    int t = (rank + 1) % size;
    uint64_t v = 0xA5A5000000000000ull + (uint64_t)rank;
    CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, t, (MPI_Aint)rank * SLOT, 8, MPI_BYTE, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(t, win), MPI_ERR_RMA_SYNC); /* fence epochs take no flush */
    MPI_Win_fence(0, win);
    uint64_t back = 0;
    CHECK_CLASS(MPI_Get(&back, 8, MPI_BYTE, t, (MPI_Aint)rank * SLOT, 8, MPI_BYTE, win), MPI_SUCCESS);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    CHECK(back == v, "%s: fence put read back %llx", mt_flavor_name(flavor), (unsigned long long)back);
}

static void run(int flavor)
{
    MPI_Win win;
    unsigned char *mem = NULL;
    MPI_Aint bytes = bytes_of(rank);
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE)
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    else if (flavor == MPI_WIN_FLAVOR_SHARED)
        MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    else {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem);
        MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of MPI_WIN_NULL (declined) */
    memset(mem, 0, (size_t)bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int epoch = 0; epoch < 3; epoch++) {
        if (epoch < 2)
            MPI_Win_lock_all(epoch == 1 ? MPI_MODE_NOCHECK : 0, win);
        slots(win, flavor, epoch, epoch);
        if (epoch < 2)
            MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    uint64_t v = 1;
    CHECK_CLASS(MPI_Put(&v, 8, MPI_BYTE, 0, 0, 8, MPI_BYTE, win), MPI_ERR_RMA_SYNC); /* after unlock_all */
    ends(win, flavor);
    MPI_Barrier(MPI_COMM_WORLD);
    overlap(win, mem, flavor);
    MPI_Barrier(MPI_COMM_WORLD);
    check_fence(win, flavor);
    MPI_Win_free(&win);
    if (flavor == MPI_WIN_FLAVOR_CREATE)
        MPI_Free_mem(mem);
}

/* A dynamic window: displacements are addresses, never the quick path; the same data checks. */
static void dynamic(void)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    unsigned char *mem = calloc((size_t)size, SLOT);
    MPI_Win_attach(win, mem, (MPI_Aint)size * SLOT);
    MPI_Aint mine, *at = malloc((size_t)size * sizeof *at);
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, at, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size; t++) {
        unsigned char out[SLOT], in[SLOT];
        for (int i = 0; i < SLOT; i++)
            out[i] = pattern(rank, t, i, 9);
        CHECK_CLASS(MPI_Put(out, SLOT, MPI_BYTE, t, at[t] + (MPI_Aint)rank * SLOT, SLOT, MPI_BYTE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Get(in, SLOT, MPI_BYTE, t, at[t] + (MPI_Aint)rank * SLOT, SLOT, MPI_BYTE, win), MPI_SUCCESS);
        CHECK_CLASS(MPI_Win_flush(t, win), MPI_SUCCESS);
        CHECK(!memcmp(in, out, SLOT), "dynamic: target %d read back other bytes", t);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    free(mem);
    free(at);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    run(MPI_WIN_FLAVOR_ALLOCATE);
    run(MPI_WIN_FLAVOR_CREATE);
    if (mt_one_node(MPI_COMM_WORLD))
        run(MPI_WIN_FLAVOR_SHARED);
    dynamic();
    return mt_finish();
}
