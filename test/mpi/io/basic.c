/* basic.c: MPI_File_open/close/delete, amode, group and info, size (set_size up and down, preallocate), write_at/read_at of every rank's block, individual file pointers (seek, get_position), short reads at the end of file, sync, MPI_MODE_DELETE_ON_CLOSE, MPI_MODE_APPEND, and files opened on MPI_COMM_SELF. */
#include "iotest.h"

static int rank, size;

/* The byte at position i of the data labelled `who`. */
static unsigned char pat(int who, long i)
{
    return (unsigned char)(who * 37 + i * 11 + (i >> 8) + 1);
}

static void fill(unsigned char *b, int who, long n)
{
    for (long i = 0; i < n; i++)
        b[i] = pat(who, i);
}

/* Open, the handle's queries, close (the handle becomes MPI_FILE_NULL), reopen, delete. */
static void open_close(void)
{
    const char *p = io_path("basic");
    MPI_File fh = MPI_FILE_NULL;
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        return;
    CHECK(fh != MPI_FILE_NULL, "open gave MPI_FILE_NULL");
    int amode = -1;
    CHECK_CLASS(MPI_File_get_amode(fh, &amode), MPI_SUCCESS);
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %#x, want %#x", amode, MPI_MODE_CREATE | MPI_MODE_RDWR);

    MPI_Group g = MPI_GROUP_NULL, wg;
    int res = -1;
    CHECK_CLASS(MPI_File_get_group(fh, &g), MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    if (g != MPI_GROUP_NULL) {
        MPI_Group_compare(g, wg, &res);
        MPI_Group_free(&g);
    }
    CHECK(res == MPI_IDENT, "file group vs MPI_COMM_WORLD's: %d, want MPI_IDENT", res);
    MPI_Group_free(&wg);

    MPI_Info info = MPI_INFO_NULL;
    CHECK_CLASS(MPI_File_get_info(fh, &info), MPI_SUCCESS);
    CHECK(info != MPI_INFO_NULL, "MPI_File_get_info gave MPI_INFO_NULL");
    if (info != MPI_INFO_NULL) {
        int nkeys = -1;
        MPI_Info_get_nkeys(info, &nkeys);
        CHECK(nkeys >= 0, "info has %d keys", nkeys);
        MPI_Info_free(&info);
    }

    MPI_Offset sz = -1;
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == 0, "a new file has size %lld", (long long)sz);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK(fh == MPI_FILE_NULL, "the handle is not MPI_FILE_NULL after close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(io_exists(p), "%s does not exist after close", p);

    /* reopened read-only (no CREATE: it exists) */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_amode(fh, &amode), MPI_SUCCESS);
    CHECK(amode == MPI_MODE_RDONLY, "amode %#x, want MPI_MODE_RDONLY", amode);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_CLASS(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
        CHECK(!io_exists(p), "%s exists after MPI_File_delete", p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

#define N 1000 /* bytes per process in blocks() */

/* Each process writes its block at rank * N; every process reads the whole file. Then the size:
 * set_size up (data kept) and down (a short read), preallocate (grows only). */
static void blocks(void)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    long total = (long)size * N;
    unsigned char mine[N], *all = malloc((size_t)total + 64), *want = malloc((size_t)total);
    fill(mine, rank, N);
    for (int r = 0; r < size; r++)
        fill(want + (long)r * N, r, N);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("blocks"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    CHECK_CLASS(MPI_File_write_at(fh, (MPI_Offset)rank * N, mine, N, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == N, "write_at wrote %d bytes, want %d", io_count(&st, MPI_BYTE), N);
    io_sync_barrier(fh, MPI_COMM_WORLD);

    MPI_Offset sz = -1;
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == total, "size %lld after every block, want %ld", (long long)sz, total);
    memset(all, 0, (size_t)total);
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == total, "read %d bytes of %ld", io_count(&st, MPI_BYTE), total);
    CHECK_BYTES(all, want, (size_t)total, "the whole file after every block");
    MPI_Barrier(MPI_COMM_WORLD); /* every read before the size changes */

    /* grow: the size is exact and the data stays (the new bytes are undefined) */
    CHECK_CLASS(MPI_File_set_size(fh, total + 500), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == total + 500, "size %lld after set_size(%ld)", (long long)sz, total + 500);
    memset(all, 0, (size_t)total);
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK_BYTES(all, want, (size_t)total, "the blocks after set_size up");
    MPI_Barrier(MPI_COMM_WORLD);

    /* shrink to block 0: a read of everything returns N bytes; at and past the end, none */
    CHECK_CLASS(MPI_File_set_size(fh, N), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == N, "size %lld after set_size(%d)", (long long)sz, N);
    memset(all, 0, (size_t)total);
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == N, "read of %ld bytes from %d-byte file gave %d", total, N,
          io_count(&st, MPI_BYTE));
    CHECK_BYTES(all, want, N, "block 0 after set_size down");
    CHECK_CLASS(MPI_File_read_at(fh, N - 10, all, 64, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == 10, "read across the end gave %d bytes, want 10", io_count(&st, MPI_BYTE));
    CHECK_BYTES(all, want + N - 10, 10, "the last 10 bytes");
    CHECK_CLASS(MPI_File_read_at(fh, N, all, 64, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == 0, "read at the end gave %d bytes, want 0", io_count(&st, MPI_BYTE));
    CHECK_CLASS(MPI_File_read_at(fh, N + 1234, all, 64, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == 0, "read past the end gave %d bytes, want 0", io_count(&st, MPI_BYTE));
    MPI_Barrier(MPI_COMM_WORLD);

    /* preallocate grows the file to the size, never shrinks it, and keeps the data */
    CHECK_CLASS(MPI_File_preallocate(fh, 3 * N), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == 3 * N, "size %lld after preallocate(%d)", (long long)sz, 3 * N);
    CHECK_CLASS(MPI_File_preallocate(fh, N / 2), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == 3 * N, "size %lld after preallocate(%d), want %d (unchanged)", (long long)sz, N / 2, 3 * N);
    memset(all, 0, N);
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, N, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK_BYTES(all, want, N, "block 0 after preallocate");
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
out:
    free(all);
    free(want);
}

#define BI 64             /* ints per process in pointers() */
#define BS (BI * 4)       /* their bytes */

/* Individual file pointers (the default view: offsets in bytes). */
static void pointers(void)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    MPI_Offset pos = -1;
    int data[BI], got[BI], want[BI];
    for (int i = 0; i < BI; i++)
        data[i] = rank * 1000 + i;
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("ptr"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        return;
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == 0, "position %lld after open, want 0", (long long)pos);
    CHECK_CLASS(MPI_File_seek(fh, (MPI_Offset)rank * BS, MPI_SEEK_SET), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)rank * BS, "position %lld after SEEK_SET, want %d", (long long)pos, rank * BS);
    CHECK_CLASS(MPI_File_write(fh, data, BI, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == BI, "write wrote %d ints", io_count(&st, MPI_INT));
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)(rank + 1) * BS, "position %lld after write, want %d", (long long)pos, (rank + 1) * BS);

    /* back and forward from the current position; this process's own writes are visible to it */
    CHECK_CLASS(MPI_File_seek(fh, -BS, MPI_SEEK_CUR), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_seek(fh, 16, MPI_SEEK_CUR), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)rank * BS + 16, "position %lld after SEEK_CUR, want %d", (long long)pos, rank * BS + 16);
    memset(got, 0, sizeof got);
    CHECK_CLASS(MPI_File_read(fh, got, 4, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == 4, "read %d ints, want 4", io_count(&st, MPI_INT));
    CHECK_INTS(got, data + 4, 4, "ints 4..7 read at the pointer");
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)rank * BS + 32, "position %lld after read, want %d", (long long)pos, rank * BS + 32);

    io_sync_barrier(fh, MPI_COMM_WORLD);
    /* from the end: the last process's block, then nothing at the end (not an error) */
    CHECK_CLASS(MPI_File_seek(fh, -BS, MPI_SEEK_END), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)(size - 1) * BS, "position %lld after SEEK_END -%d, want %d", (long long)pos, BS,
          (size - 1) * BS);
    for (int i = 0; i < BI; i++)
        want[i] = (size - 1) * 1000 + i;
    memset(got, 0, sizeof got);
    CHECK_CLASS(MPI_File_read(fh, got, BI, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == BI, "read %d ints of the last block", io_count(&st, MPI_INT));
    CHECK_INTS(got, want, BI, "the last process's block");
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_END), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_read(fh, got, BI, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == 0, "read at the end gave %d ints, want 0", io_count(&st, MPI_INT));
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)size * BS, "position %lld after reading at the end, want %d", (long long)pos, size * BS);
    /* 3 ints before the end: a short read of 3, the pointer moves by what was read */
    CHECK_CLASS(MPI_File_seek(fh, (MPI_Offset)size * BS - 12, MPI_SEEK_SET), MPI_SUCCESS);
    memset(got, 0, sizeof got);
    CHECK_CLASS(MPI_File_read(fh, got, BI, MPI_INT, &st), MPI_SUCCESS);
    int elements = -1;
    MPI_Get_elements(&st, MPI_INT, &elements);
    CHECK(io_count(&st, MPI_INT) == 3 && elements == 3, "short read: count %d, elements %d, want 3",
          io_count(&st, MPI_INT), elements);
    CHECK_INTS(got, want + BI - 3, 3, "the short read's ints");
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)size * BS, "position %lld after the short read, want %d", (long long)pos, size * BS);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
}

/* MPI_MODE_DELETE_ON_CLOSE: the file is there while open and gone after the collective close. */
static void delete_on_close(void)
{
    const char *p = io_path("doc");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                  MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        return;
    CHECK_CLASS(MPI_File_write_at(fh, rank * 4, &rank, 1, MPI_INT, &st), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(io_exists(p), "%s missing while open", p);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!io_exists(p), "%s still exists after close with MPI_MODE_DELETE_ON_CLOSE", p);
}

#define HEAD 100 /* bytes in the file before it is opened for appending */
#define AB 300   /* bytes each process appends */

/* MPI_MODE_APPEND: both pointers start at the end of the file. */
static void append(void)
{
    const char *p = io_path("app");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    unsigned char head[HEAD], mine[AB], *all = malloc(HEAD + (size_t)size * AB + 16);
    fill(head, 99, HEAD);
    fill(mine, rank + 5, AB);
    if (rank == 0 && CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                                 MPI_SUCCESS) == MPI_SUCCESS) {
        CHECK_CLASS(MPI_File_write_at(fh, 0, head, HEAD, MPI_BYTE, &st), MPI_SUCCESS);
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    MPI_Offset pos = -1, spos = -1, sz = -1;
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position_shared(fh, &spos), MPI_SUCCESS);
    CHECK(pos == HEAD && spos == HEAD, "MPI_MODE_APPEND: positions %lld and %lld (shared), want %d", (long long)pos,
          (long long)spos, HEAD);
    CHECK_CLASS(MPI_File_seek(fh, (MPI_Offset)rank * AB, MPI_SEEK_CUR), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write(fh, mine, AB, MPI_BYTE, &st), MPI_SUCCESS);
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == HEAD + (MPI_Offset)size * AB, "size %lld after appending, want %d", (long long)sz, HEAD + size * AB);
    memset(all, 0, HEAD + (size_t)size * AB);
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, HEAD + size * AB, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK_BYTES(all, head, HEAD, "the data before the appended blocks");
    for (int r = 0; r < size; r++) {
        unsigned char w[AB];
        fill(w, r + 5, AB);
        CHECK_BYTES(all + HEAD + (size_t)r * AB, w, AB, "an appended block");
    }
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
out:
    free(all);
}

#define SB 777 /* bytes in each process's own file */

/* A file per process on MPI_COMM_SELF; each reads its neighbour's after both are closed. */
static void self_files(void)
{
    char name[64];
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    unsigned char mine[SB], got[SB], want[SB];
    fill(mine, rank + 100, SB);
    snprintf(name, sizeof name, "self-%d", rank);
    const char *p = io_path(name);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) == MPI_SUCCESS) {
        MPI_Group g = MPI_GROUP_NULL, sg;
        int res = -1;
        CHECK_CLASS(MPI_File_get_group(fh, &g), MPI_SUCCESS);
        MPI_Comm_group(MPI_COMM_SELF, &sg);
        if (g != MPI_GROUP_NULL) {
            MPI_Group_compare(g, sg, &res);
            MPI_Group_free(&g);
        }
        MPI_Group_free(&sg);
        CHECK(res == MPI_IDENT, "file group vs MPI_COMM_SELF's: %d", res);
        CHECK_CLASS(MPI_File_write_at(fh, 0, mine, SB, MPI_BYTE, &st), MPI_SUCCESS);
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int n = (rank + 1) % size;
    snprintf(name, sizeof name, "self-%d", n);
    fill(want, n + 100, SB);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, io_path(name), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS) ==
        MPI_SUCCESS) {
        MPI_Offset sz = -1;
        CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
        CHECK(sz == SB, "%s: size %lld, want %d", name, (long long)sz, SB);
        memset(got, 0, SB);
        CHECK_CLASS(MPI_File_read_at(fh, 0, got, SB, MPI_BYTE, &st), MPI_SUCCESS);
        CHECK(io_count(&st, MPI_BYTE) == SB, "read %d bytes of %s", io_count(&st, MPI_BYTE), name);
        CHECK_BYTES(got, want, SB, "the neighbour's own file");
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
    CHECK(!io_exists(p), "%s exists after MPI_File_delete", p);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup();
    open_close();
    blocks();
    pointers();
    delete_on_close();
    append();
    self_files();
    io_cleanup();
    return mt_finish();
}
