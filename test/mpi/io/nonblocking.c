/* nonblocking.c: nonblocking and split-collective file access: iwrite_at/iread_at, iwrite/iread (the pointer moves when the call starts), iwrite_shared/iread_shared, iwrite_at_all/iread_at_all, iwrite_all/iread_all through a view, completed by MPI_Wait, MPI_Waitall and MPI_Test loops with counts from the statuses; the begin/end pairs of write_all, read_all, write_at_all, read_at_all, write_ordered, read_ordered; and the large-count forms (MPI_File_write_at_c, read_at_c, iread_at_c) on a few MiB. */
#include "iotest.h"

static int rank, size;

#define CH 256 /* ints in a chunk */

static int cval(int r, int k, int i)
{
    return (r * 64 + k) * 100000 + i;
}

static void chunk(int *b, int r, int k)
{
    for (int i = 0; i < CH; i++)
        b[i] = cval(r, k, i);
}

/* Completes req by polling MPI_Test (for 20 s at most). */
static void test_loop(MPI_Request *req, MPI_Status *st)
{
    int flag = 0;
    double start = MPI_Wtime();
    while (!flag) {
        if (CHECK_CLASS(MPI_Test(req, &flag, st), MPI_SUCCESS) != MPI_SUCCESS || MPI_Wtime() - start > 20) {
            CHECK(flag, "MPI_Test never completed the request");
            MPI_Wait(req, st);
            return;
        }
    }
    CHECK(*req == MPI_REQUEST_NULL, "a completed request is not MPI_REQUEST_NULL");
}

static MPI_File open_world(const char *name)
{
    MPI_File fh = MPI_FILE_NULL;
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                MPI_SUCCESS);
    return fh;
}

/* iwrite_at of four chunks at once; iread_at of them (one by MPI_Test, the others by MPI_Wait); the
 * neighbour's region after sync-barrier-sync. */
static void explicit_offsets(void)
{
    MPI_File fh = open_world("nb-at");
    if (fh == MPI_FILE_NULL)
        return;
    int out[4][CH], in[4][CH], nb[4 * CH], want[4 * CH];
    MPI_Request req[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[4];
    MPI_Offset base = (MPI_Offset)rank * 4 * CH * 4;
    for (int k = 0; k < 4; k++) {
        chunk(out[k], rank, k);
        CHECK_CLASS(MPI_File_iwrite_at(fh, base + k * CH * 4, out[k], CH, MPI_INT, &req[k]), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_Waitall(4, req, sts), MPI_SUCCESS);
    for (int k = 0; k < 4; k++)
        CHECK(io_count(&sts[k], MPI_INT) == CH, "iwrite_at %d: count %d", k, io_count(&sts[k], MPI_INT));
    memset(in, 0, sizeof in);
    for (int k = 0; k < 4; k++)
        CHECK_CLASS(MPI_File_iread_at(fh, base + k * CH * 4, in[k], CH, MPI_INT, &req[k]), MPI_SUCCESS);
    test_loop(&req[0], &sts[0]);
    for (int k = 1; k < 4; k++)
        CHECK_CLASS(MPI_Wait(&req[k], &sts[k]), MPI_SUCCESS);
    for (int k = 0; k < 4; k++) {
        CHECK(io_count(&sts[k], MPI_INT) == CH, "iread_at %d: count %d", k, io_count(&sts[k], MPI_INT));
        CHECK_INTS(in[k], out[k], CH, "a chunk read back by iread_at");
    }
    io_sync_barrier(fh, MPI_COMM_WORLD);
    int n = (rank + 1) % size;
    for (int k = 0; k < 4; k++)
        chunk(want + k * CH, n, k);
    memset(nb, 0, sizeof nb);
    CHECK_CLASS(MPI_File_iread_at(fh, (MPI_Offset)n * 4 * CH * 4, nb, 4 * CH, MPI_INT, &req[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&req[0], &sts[0]), MPI_SUCCESS);
    CHECK(io_count(&sts[0], MPI_INT) == 4 * CH, "iread_at of the neighbour's: count %d", io_count(&sts[0], MPI_INT));
    CHECK_INTS(nb, want, 4 * CH, "the neighbour's region by iread_at");
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
}

/* iwrite/iread at the individual pointer, which moves when the call starts. */
static void individual(void)
{
    MPI_File fh = open_world("nb-ptr");
    if (fh == MPI_FILE_NULL)
        return;
    int a[CH], b[CH], ga[CH], gb[CH];
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[2];
    MPI_Offset base = (MPI_Offset)rank * 2 * CH * 4, pos = -1;
    chunk(a, rank, 10);
    chunk(b, rank, 11);
    CHECK_CLASS(MPI_File_seek(fh, base, MPI_SEEK_SET), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_iwrite(fh, a, CH, MPI_INT, &req[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_iwrite(fh, b, CH, MPI_INT, &req[1]), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == base + 2 * CH * 4, "position %lld with two iwrites pending, want %lld", (long long)pos,
          (long long)(base + 2 * CH * 4));
    CHECK_CLASS(MPI_Waitall(2, req, sts), MPI_SUCCESS);
    CHECK(io_count(&sts[0], MPI_INT) == CH && io_count(&sts[1], MPI_INT) == CH, "iwrite counts %d %d",
          io_count(&sts[0], MPI_INT), io_count(&sts[1], MPI_INT));
    CHECK_CLASS(MPI_File_seek(fh, base, MPI_SEEK_SET), MPI_SUCCESS);
    memset(ga, 0, sizeof ga);
    memset(gb, 0, sizeof gb);
    CHECK_CLASS(MPI_File_iread(fh, ga, CH, MPI_INT, &req[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_iread(fh, gb, CH, MPI_INT, &req[1]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Waitall(2, req, sts), MPI_SUCCESS);
    CHECK(io_count(&sts[0], MPI_INT) == CH && io_count(&sts[1], MPI_INT) == CH, "iread counts %d %d",
          io_count(&sts[0], MPI_INT), io_count(&sts[1], MPI_INT));
    CHECK_INTS(ga, a, CH, "the first iwrite read back by iread");
    CHECK_INTS(gb, b, CH, "the second iwrite read back by iread");
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == base + 2 * CH * 4, "position %lld after two ireads", (long long)pos);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
}

#define RI 16 /* ints in a record */

/* Two records from every process by iwrite_shared, then read back by iread_shared: as many reads
 * as records, so each read gets a distinct record. */
static void shared_ptr(void)
{
    MPI_File fh = open_world("nb-shared");
    if (fh == MPI_FILE_NULL)
        return;
    int rec[2][RI], got[2][RI], total = 2 * size;
    int *all = calloc((size_t)total + 1, RI * sizeof(int)), *seen = calloc((size_t)total, sizeof(int));
    int *ids = malloc(sizeof(int) * (size_t)total), myids[2];
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[2];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < RI; i++)
            rec[k][i] = cval(rank, k, i);
    for (int k = 0; k < 2; k++)
        CHECK_CLASS(MPI_File_iwrite_shared(fh, rec[k], RI, MPI_INT, &req[k]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Waitall(2, req, sts), MPI_SUCCESS);
    io_sync_barrier(fh, MPI_COMM_WORLD);
    MPI_Status st;
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, (total + 1) * RI, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == total * RI, "the file holds %d ints, want %d", io_count(&st, MPI_INT),
          total * RI);
    for (int j = 0; j < total; j++) {
        int *x = all + j * RI, r = x[0] / 6400000, k = x[0] / 100000 % 64, ok = r >= 0 && r < size && k < 2;
        for (int i = 0; ok && i < RI; i++)
            ok = x[i] == cval(r, k, i);
        CHECK(ok, "record %d in the file is not one written whole", j);
        if (ok)
            CHECK(seen[r * 2 + k]++ == 0, "record (%d, %d) is in the file twice", r, k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    memset(got, 0, sizeof got);
    for (int k = 0; k < 2; k++)
        CHECK_CLASS(MPI_File_iread_shared(fh, got[k], RI, MPI_INT, &req[k]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Waitall(2, req, sts), MPI_SUCCESS);
    for (int k = 0; k < 2; k++) {
        int r = got[k][0] / 6400000, kk = got[k][0] / 100000 % 64, ok = io_count(&sts[k], MPI_INT) == RI;
        ok = ok && r >= 0 && r < size && kk < 2;
        for (int i = 0; ok && i < RI; i++)
            ok = got[k][i] == cval(r, kk, i);
        CHECK(ok, "iread_shared %d: %d ints, not a whole record", k, io_count(&sts[k], MPI_INT));
        myids[k] = ok ? r * 2 + kk : -1;
    }
    MPI_Allgather(myids, 2, MPI_INT, ids, 2, MPI_INT, MPI_COMM_WORLD);
    memset(seen, 0, sizeof(int) * (size_t)total);
    for (int j = 0; j < total; j++)
        if (ids[j] >= 0)
            seen[ids[j]]++;
    for (int j = 0; j < total; j++)
        CHECK(seen[j] == 1, "record (%d, %d) was read %d times by iread_shared", j / 2, j % 2, seen[j]);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    free(all);
    free(seen);
    free(ids);
}

#define CB 7 /* ints in a block of the interleaved view */
#define RB 4 /* blocks each process has in it */

/* iwrite_at_all/iread_at_all (the neighbour's block), then iwrite_all/iread_all through an
 * interleaved view; the whole file checked with the default view. */
static void collective(void)
{
    MPI_File fh = open_world("nb-coll");
    if (fh == MPI_FILE_NULL)
        return;
    int a[CH], got[CH], want[CH];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    int n = (rank + 1) % size;
    chunk(a, rank, 20);
    chunk(want, n, 20);
    CHECK_CLASS(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * CH * 4, a, CH, MPI_INT, &req), MPI_SUCCESS);
    test_loop(&req, &st);
    CHECK(io_count(&st, MPI_INT) == CH, "iwrite_at_all: count %d", io_count(&st, MPI_INT));
    io_sync_barrier(fh, MPI_COMM_WORLD);
    memset(got, 0, sizeof got);
    CHECK_CLASS(MPI_File_iread_at_all(fh, (MPI_Offset)n * CH * 4, got, CH, MPI_INT, &req), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == CH, "iread_at_all: count %d", io_count(&st, MPI_INT));
    CHECK_INTS(got, want, CH, "the neighbour's block by iread_at_all");
    MPI_Barrier(MPI_COMM_WORLD);

    /* blocks of CB ints, process r's at r in each row of size blocks, after the first region */
    MPI_Offset disp = (MPI_Offset)size * CH * 4;
    MPI_Datatype t, ft;
    int d = rank * CB, mine[RB * CB], back[RB * CB];
    MPI_Type_create_indexed_block(1, CB, &d, MPI_INT, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint)size * CB * 4, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&t);
    for (int i = 0; i < RB * CB; i++)
        mine[i] = cval(rank, 21, i);
    CHECK_CLASS(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_iwrite_all(fh, mine, RB * CB, MPI_INT, &req), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == RB * CB, "iwrite_all: count %d", io_count(&st, MPI_INT));
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    memset(back, 0, sizeof back);
    CHECK_CLASS(MPI_File_iread_all(fh, back, RB * CB, MPI_INT, &req), MPI_SUCCESS);
    test_loop(&req, &st);
    CHECK(io_count(&st, MPI_INT) == RB * CB, "iread_all: count %d", io_count(&st, MPI_INT));
    CHECK_INTS(back, mine, RB * CB, "own blocks by iread_all");
    MPI_Type_free(&ft);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the whole file: the first region by blocks of CH, then the interleaved rows */
    long ntot = (long)size * CH + (long)size * RB * CB;
    int *all = malloc(sizeof(int) * (size_t)ntot), *w = malloc(sizeof(int) * (size_t)ntot);
    for (int r = 0; r < size; r++)
        chunk(w + r * CH, r, 20);
    for (long i = 0; i < (long)size * RB * CB; i++) {
        long rowlen = (long)size * CB;
        int r = (int)(i % rowlen / CB), k = (int)(i / rowlen * CB + i % CB);
        w[size * CH + i] = cval(r, 21, k);
    }
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    memset(all, 0, sizeof(int) * (size_t)ntot);
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, (int)ntot, MPI_INT, &st), MPI_SUCCESS);
    CHECK_INTS(all, w, (size_t)ntot, "the whole file after the nonblocking collectives");
    free(all);
    free(w);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
}

/* The split collectives: at explicit offsets, at the individual pointer (after a displacement),
 * and ordered at the shared pointer (after another). */
static void split(void)
{
    MPI_File fh = open_world("split");
    if (fh == MPI_FILE_NULL)
        return;
    int a[CH], b[CH], got[CH], want[CH], o[64];
    MPI_Status st;
    int n = (rank + 1) % size, first = size * (size + 1) / 2;
    chunk(a, rank, 30);
    chunk(b, rank, 31);
    CHECK_CLASS(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * CH * 4, a, CH, MPI_INT), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_at_all_end(fh, a, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == CH, "write_at_all_end: count %d", io_count(&st, MPI_INT));
    io_sync_barrier(fh, MPI_COMM_WORLD);
    memset(got, 0, sizeof got);
    CHECK_CLASS(MPI_File_read_at_all_begin(fh, (MPI_Offset)n * CH * 4, got, CH, MPI_INT), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_read_at_all_end(fh, got, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == CH, "read_at_all_end: count %d", io_count(&st, MPI_INT));
    chunk(want, n, 30);
    CHECK_INTS(got, want, CH, "the neighbour's chunk by read_at_all_begin/end");

    CHECK_CLASS(MPI_File_set_view(fh, (MPI_Offset)size * CH * 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_File_seek(fh, (MPI_Offset)rank * CH, MPI_SEEK_SET), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_all_begin(fh, b, CH, MPI_INT), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_all_end(fh, b, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == CH, "write_all_end: count %d", io_count(&st, MPI_INT));
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_seek(fh, (MPI_Offset)n * CH, MPI_SEEK_SET), MPI_SUCCESS);
    memset(got, 0, sizeof got);
    CHECK_CLASS(MPI_File_read_all_begin(fh, got, CH, MPI_INT), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_read_all_end(fh, got, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == CH, "read_all_end: count %d", io_count(&st, MPI_INT));
    chunk(want, n, 31);
    CHECK_INTS(got, want, CH, "the neighbour's chunk by read_all_begin/end");

    /* ordered: rank r's r + 1 ints of 1000 + r, in rank order (set_view puts the shared pointer at 0) */
    CHECK_CLASS(MPI_File_set_view(fh, (MPI_Offset)2 * size * CH * 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
                MPI_SUCCESS);
    for (int i = 0; i <= rank; i++)
        o[i] = 1000 + rank;
    CHECK_CLASS(MPI_File_write_ordered_begin(fh, o, rank + 1, MPI_INT), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_ordered_end(fh, o, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == rank + 1, "write_ordered_end: count %d", io_count(&st, MPI_INT));
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    memset(got, 0, sizeof got);
    CHECK_CLASS(MPI_File_read_ordered_begin(fh, got, rank + 1, MPI_INT), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_read_ordered_end(fh, got, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == rank + 1, "read_ordered_end: count %d", io_count(&st, MPI_INT));
    CHECK_INTS(got, o, (size_t)rank + 1, "own ints by read_ordered_begin/end");
    MPI_Barrier(MPI_COMM_WORLD);

    long ntot = 2L * size * CH + first;
    int *all = malloc(sizeof(int) * (size_t)ntot + 16), *w = malloc(sizeof(int) * (size_t)ntot), j = 0;
    for (int r = 0; r < size; r++) {
        chunk(w + r * CH, r, 30);
        chunk(w + (size + r) * CH, r, 31);
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++)
            w[2 * size * CH + j++] = 1000 + r;
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    memset(all, 0, sizeof(int) * (size_t)ntot);
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, (int)ntot + 4, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == ntot, "the file holds %d ints, want %ld", io_count(&st, MPI_INT), ntot);
    CHECK_INTS(all, w, (size_t)ntot, "the whole file after the split collectives");
    free(all);
    free(w);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
}

#define LS ((MPI_Count)2 * 1024 * 1024 + 12) /* bytes per process in large() */

static unsigned char pat(int r, MPI_Count i)
{
    return (unsigned char)(r * 37 + i * 11 + (i >> 12) + 1);
}

/* The MPI_Count forms: write_at_c of bytes, read_at_c of the neighbour's as ints, iread_at_c. */
static void large(void)
{
    MPI_File fh = open_world("large");
    if (fh == MPI_FILE_NULL)
        return;
    unsigned char *mine = malloc((size_t)LS), *got = malloc((size_t)LS), *want = malloc((size_t)LS);
    int n = (rank + 1) % size;
    MPI_Status st;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Count c = -1;
    for (MPI_Count i = 0; i < LS; i++) {
        mine[i] = pat(rank, i);
        want[i] = pat(n, i);
    }
    CHECK_CLASS(MPI_File_write_at_c(fh, (MPI_Offset)rank * LS, mine, LS, MPI_BYTE, &st), MPI_SUCCESS);
    MPI_Get_count_c(&st, MPI_BYTE, &c);
    CHECK(c == LS, "write_at_c: count %lld, want %lld", (long long)c, (long long)LS);
    io_sync_barrier(fh, MPI_COMM_WORLD);
    memset(got, 0, (size_t)LS);
    CHECK_CLASS(MPI_File_read_at_c(fh, (MPI_Offset)n * LS, got, LS / 4, MPI_INT, &st), MPI_SUCCESS);
    c = -1;
    MPI_Get_count_c(&st, MPI_INT, &c);
    CHECK(c == LS / 4, "read_at_c: count %lld ints, want %lld", (long long)c, (long long)(LS / 4));
    CHECK_BYTES(got, want, (size_t)LS, "the neighbour's MiBs by read_at_c");
    memset(got, 0, (size_t)LS);
    CHECK_CLASS(MPI_File_iread_at_c(fh, (MPI_Offset)rank * LS, got, LS, MPI_BYTE, &req), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
    c = -1;
    MPI_Get_count_c(&st, MPI_BYTE, &c);
    CHECK(c == LS, "iread_at_c: count %lld", (long long)c);
    CHECK_BYTES(got, mine, (size_t)LS, "own MiBs by iread_at_c");
    MPI_Offset sz = -1;
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == (MPI_Offset)size * LS, "size %lld, want %lld", (long long)sz, (long long)(size * LS));
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    free(mine);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup();
    explicit_offsets();
    individual();
    shared_ptr();
    collective();
    split();
    large();
    io_cleanup();
    return mt_finish();
}
