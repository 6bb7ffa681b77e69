/* atomicity.c: MPI_File_set_atomicity/get_atomicity, and atomic mode: overlapping contiguous and strided writes by every process leave one writer's data whole (the strided view's holes untouched); reads racing one process's writes see one write whole, in order. */
#include "iotest.h"

static int rank, size;

#define AN (64 * 1024) /* ints in the contiguous region */
#define NB 64          /* blocks of the strided view */
#define BL 16          /* ints in each, every other BL ints a hole */
#define WN (32 * 1024) /* ints in the region read while written */
#define ROUNDS 40

static int wval(int w, int i)
{
    return (w + 1) << 24 | i;
}

/* Whose data all n ints are (-1 if they are not one writer's whole). */
static int writer_of(const int *b, int n)
{
    int w = (b[0] >> 24) - 1;
    if (w < 0 || w >= size)
        return -1;
    for (int i = 0; i < n; i++)
        if (b[i] != wval(w, i))
            return -1;
    return w;
}

static void modes(MPI_File fh)
{
    /* the mode a file opens in is not checked: MPICH opens in nonatomic mode, Open MPI documents
     * atomic mode for jobs across nodes */
    int flag = -1;
    CHECK_CLASS(MPI_File_get_atomicity(fh, &flag), MPI_SUCCESS);
    CHECK(flag != -1, "get_atomicity gave no flag");
    CHECK_CLASS(MPI_File_set_atomicity(fh, 1), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_atomicity(fh, &flag), MPI_SUCCESS);
    CHECK(flag != 0, "get_atomicity %d after set_atomicity(1)", flag);
    CHECK_CLASS(MPI_File_set_atomicity(fh, 0), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_atomicity(fh, &flag), MPI_SUCCESS);
    CHECK(flag == 0, "get_atomicity %d after set_atomicity(0)", flag);
    CHECK_CLASS(MPI_File_set_atomicity(fh, 1), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_atomicity(fh, &flag), MPI_SUCCESS);
    CHECK(flag != 0, "get_atomicity %d after set_atomicity(1) again", flag);
}

/* Every process writes the same AN ints at once, three times: each time one writer's whole. */
static void contiguous(MPI_File fh)
{
    int *mine = malloc(sizeof(int) * AN), *got = malloc(sizeof(int) * AN);
    MPI_Status st;
    for (int i = 0; i < AN; i++)
        mine[i] = wval(rank, i);
    for (int round = 0; round < 3; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CLASS(MPI_File_write_at(fh, 0, mine, AN, MPI_INT, &st), MPI_SUCCESS);
        io_sync_barrier(fh, MPI_COMM_WORLD);
        memset(got, 0, sizeof(int) * AN);
        CHECK_CLASS(MPI_File_read_at(fh, 0, got, AN, MPI_INT, &st), MPI_SUCCESS);
        CHECK(io_count(&st, MPI_INT) == AN, "read %d ints of %d", io_count(&st, MPI_INT), AN);
        int w = writer_of(got, AN), all_w;
        CHECK(w >= 0, "round %d: the overlapping writes left a mix (first ints %#x, %#x, last %#x)", round, got[0],
              got[1], got[AN - 1]);
        /* and every process sees the same writer */
        MPI_Allreduce(&w, &all_w, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(w == all_w, "round %d: processes see different writers (%d and %d)", round, w, all_w);
    }
    free(mine);
    free(got);
}

/* Every process writes NB blocks of BL ints through the same strided view: the blocks are one
 * writer's, the holes keep the bytes there before. */
static void strided(MPI_File fh)
{
    MPI_Datatype ft;
    MPI_Status st;
    long n = (long)NB * 2 * BL;
    int *mine = malloc(sizeof(int) * NB * BL), *got = malloc(sizeof(int) * (size_t)n),
        *blocks = malloc(sizeof(int) * NB * BL);
    MPI_Type_vector(NB, BL, 2 * BL, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    for (int i = 0; i < NB * BL; i++)
        mine[i] = wval(rank, i);
    if (rank == 0) {
        for (long i = 0; i < n; i++)
            got[i] = -5;
        CHECK_CLASS(MPI_File_write_at(fh, 0, got, (int)n, MPI_INT, &st), MPI_SUCCESS);
    }
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_at(fh, 0, mine, NB * BL, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == NB * BL, "strided write: count %d", io_count(&st, MPI_INT));
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    memset(got, 0, sizeof(int) * (size_t)n);
    CHECK_CLASS(MPI_File_read_at(fh, 0, got, (int)n, MPI_INT, &st), MPI_SUCCESS);
    int holes_ok = 1;
    for (int b = 0; b < NB; b++) {
        memcpy(blocks + b * BL, got + b * 2 * BL, sizeof(int) * BL);
        for (int i = 0; i < BL; i++)
            holes_ok &= got[b * 2 * BL + BL + i] == -5;
    }
    CHECK(holes_ok, "the strided writes changed the holes");
    CHECK(writer_of(blocks, NB * BL) >= 0, "the overlapping strided writes left a mix");
    MPI_Barrier(MPI_COMM_WORLD); /* every read done before the region is written again */
    MPI_Type_free(&ft);
    free(mine);
    free(got);
    free(blocks);
}

/* Rank 0 writes the region ROUNDS times (round k: every int k); the others read it meanwhile: each
 * read is one write's whole, and later reads never see an earlier write. */
static void racing(MPI_File fh)
{
    int *b = malloc(sizeof(int) * WN);
    MPI_Status st;
    if (rank == 0) {
        memset(b, 0, sizeof(int) * WN);
        CHECK_CLASS(MPI_File_write_at(fh, 0, b, WN, MPI_INT, &st), MPI_SUCCESS);
    }
    io_sync_barrier(fh, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int k = 1; k <= ROUNDS; k++) {
            for (int i = 0; i < WN; i++)
                b[i] = k;
            CHECK_CLASS(MPI_File_write_at(fh, 0, b, WN, MPI_INT, &st), MPI_SUCCESS);
        }
    } else {
        int last = 0, torn = 0;
        for (int k = 0; k < ROUNDS; k++) {
            CHECK_CLASS(MPI_File_read_at(fh, 0, b, WN, MPI_INT, &st), MPI_SUCCESS);
            int v = b[0], whole = v >= 0 && v <= ROUNDS;
            for (int i = 1; whole && i < WN; i++)
                whole = b[i] == v;
            if (!whole && torn++ == 0)
                CHECK(0, "read %d saw a write in part (first int %d, last %d)", k, b[0], b[WN - 1]);
            if (whole) {
                CHECK(v >= last, "read %d saw write %d after write %d", k, v, last);
                last = v;
            }
        }
    }
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_read_at(fh, 0, b, WN, MPI_INT, &st), MPI_SUCCESS);
    CHECK(b[0] == ROUNDS && b[WN - 1] == ROUNDS, "after every write: %d ... %d, want %d", b[0], b[WN - 1], ROUNDS);
    free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup();
    MPI_File fh = MPI_FILE_NULL;
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("atomic"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) == MPI_SUCCESS) {
        modes(fh);
        contiguous(fh);
        strided(fh);
        racing(fh);
        CHECK_CLASS(MPI_File_set_atomicity(fh, 0), MPI_SUCCESS);
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    }
    io_cleanup();
    return mt_finish();
}
