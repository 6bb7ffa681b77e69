/* views.c: file views (MPI_File_set_view/get_view): interleaved blocks by resized and vector filetypes, a 2-D grid checkpointed by subarray filetypes, a header before a displacement, MPI_DOUBLE etypes (offsets and seeks in etypes), strided memory types over strided file types, get_byte_offset, get_type_extent, short reads (MPI_Get_count, MPI_Get_elements); the holes of a filetype keep what was there. */
#include "iotest.h"

static int rank, size;

#define HOLE 0xA5 /* every byte of the file before the processes write through their views */

static int val(int r, int k)
{
    return r * 1000000 + k + 1;
}

/* A file of n bytes of HOLE, written by rank 0 and visible to every process. */
static void prefill(MPI_File fh, long n)
{
    if (rank == 0) {
        unsigned char *b = malloc((size_t)n);
        MPI_Status st;
        memset(b, HOLE, (size_t)n);
        CHECK_CLASS(MPI_File_write_at(fh, 0, b, (int)n, MPI_BYTE, &st), MPI_SUCCESS);
        free(b);
    }
    io_sync_barrier(fh, MPI_COMM_WORLD);
}

/* Every process reads the whole file (n bytes) with the default view and compares it with want. */
static void check_whole(MPI_File fh, const unsigned char *want, long n, const char *what)
{
    unsigned char *got = malloc((size_t)n + 16);
    MPI_Status st;
    memset(got, 0, (size_t)n);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_read_at(fh, 0, got, (int)n + 16, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == n, "%s: read %d bytes, want %ld", what, io_count(&st, MPI_BYTE), n);
    CHECK_BYTES(got, want, (size_t)n, what);
    free(got);
}

/* get_view gives what set_view set; a derived filetype comes back as a new type to free. */
static void check_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Count ftsize, MPI_Aint ftextent)
{
    MPI_Offset d = -1;
    MPI_Datatype e = MPI_DATATYPE_NULL, f = MPI_DATATYPE_NULL;
    char rep[MPI_MAX_DATAREP_STRING + 1] = "";
    CHECK_CLASS(MPI_File_get_view(fh, &d, &e, &f, rep), MPI_SUCCESS);
    CHECK(d == disp, "get_view: displacement %lld, want %lld", (long long)d, (long long)disp);
    CHECK(e == etype, "get_view: not the etype set");
    CHECK(strcmp(rep, "native") == 0, "get_view: datarep \"%s\"", rep);
    if (f == MPI_DATATYPE_NULL) {
        CHECK(0, "get_view gave no filetype");
        return;
    }
    int ni, na, nt, comb = -1;
    MPI_Type_get_envelope(f, &ni, &na, &nt, &comb);
    MPI_Count sz = -1;
    MPI_Aint lb, ext = -1;
    MPI_Type_size_c(f, &sz);
    MPI_Type_get_extent(f, &lb, &ext);
    CHECK(sz == ftsize && ext == ftextent, "get_view: filetype of size %lld and extent %ld, want %lld and %ld",
          (long long)sz, (long)ext, (long long)ftsize, (long)ftextent);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(&f);
    else
        CHECK(ftsize == ftextent && f == etype, "get_view gave a predefined filetype for a derived one");
}

#define B 5 /* ints per block */
#define R 3 /* rows: blocks per process */

/* (a) Each process owns block `rank` of every row of P + 1 blocks; block P is a hole. Variant 0:
 * an indexed block resized to the row, tiled R times from displacement 0; variant 1: a vector of R
 * blocks from displacement rank * B ints. */
static void interleaved(int variant)
{
    char name[32];
    snprintf(name, sizeof name, "cols-%d", variant);
    long row = (long)(size + 1) * B, nints = R * row;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    MPI_Datatype t, ft;
    MPI_Offset disp = 0, pos = -1;
    int mine[R * B], got[R * B + 4];
    unsigned char *want = malloc((size_t)nints * 4);
    memset(want, HOLE, (size_t)nints * 4);
    for (long i = 0; i < nints; i++) {
        int slot = (int)(i % row / B), k = (int)(i / row * B + i % B);
        if (slot < size) {
            int v = val(slot, k);
            memcpy(want + i * 4, &v, 4);
        }
    }
    for (int k = 0; k < R * B; k++)
        mine[k] = val(rank, k);
    if (variant == 0) {
        int d = rank * B;
        MPI_Type_create_indexed_block(1, B, &d, MPI_INT, &t);
        MPI_Type_create_resized(t, 0, row * 4, &ft);
        MPI_Type_free(&t);
    } else {
        MPI_Type_vector(R, B, (int)row, MPI_INT, &ft);
        disp = (MPI_Offset)rank * B * 4;
    }
    MPI_Type_commit(&ft);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    prefill(fh, nints * 4);
    CHECK_CLASS(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_SUCCESS);
    if (variant == 0)
        check_view(fh, disp, MPI_INT, B * 4, row * 4);
    else
        check_view(fh, disp, MPI_INT, R * B * 4, ((R - 1) * row + B) * 4);
    CHECK_CLASS(MPI_File_write_all(fh, mine, R * B, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == R * B, "write_all wrote %d ints", io_count(&st, MPI_INT));
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == R * B, "variant %d: position %lld after write_all, want %d", variant, (long long)pos, R * B);
    /* (f) view offsets (etypes) to bytes */
    for (int o = 0; o < R * B + (variant == 0 ? 2 * B : 0); o += 2) {
        MPI_Offset byte = -1, want_byte = (MPI_Offset)rank * B * 4 + (MPI_Offset)(o / B) * row * 4 + (o % B) * 4;
        CHECK_CLASS(MPI_File_get_byte_offset(fh, o, &byte), MPI_SUCCESS);
        CHECK(byte == want_byte, "variant %d: offset %d is byte %lld, want %lld", variant, o, (long long)byte,
              (long long)want_byte);
    }
    io_sync_barrier(fh, MPI_COMM_WORLD);

    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    for (int k = 0; k < R * B + 4; k++)
        got[k] = -1;
    CHECK_CLASS(MPI_File_read_all(fh, got, R * B, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == R * B, "read_all read %d ints", io_count(&st, MPI_INT));
    CHECK_INTS(got, mine, R * B, "own blocks read back through the view");
    CHECK(got[R * B] == -1, "read_all wrote past its count");
    MPI_Barrier(MPI_COMM_WORLD);
    check_whole(fh, want, nints * 4, variant == 0 ? "interleaved (resized): the whole file" :
                                                    "interleaved (vector): the whole file");
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
out:
    MPI_Type_free(&ft);
    free(want);
}

#define G0 37 /* global grid rows */
#define G1 23 /* and columns */

static int cell(int i, int j)
{
    return i * 1000 + j + 7;
}

/* (b) A grid in blocks over a 2-D process grid: each process's block (inside a halo of one cell)
 * is written collectively through a subarray filetype, as a checkpoint is; rank 0 reads the file
 * back whole, then every process reads its block back. */
static void grid(void)
{
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    int c0 = rank / dims[1], c1 = rank % dims[1];
    int s0 = c0 * G0 / dims[0], s1 = c1 * G1 / dims[1];
    int l0 = (c0 + 1) * G0 / dims[0] - s0, l1 = (c1 + 1) * G1 / dims[1] - s1;
    int gs[2] = {G0, G1}, ls[2] = {l0, l1}, st0[2] = {s0, s1}, ms[2] = {l0 + 2, l1 + 2}, one[2] = {1, 1};
    int nl = (l0 + 2) * (l1 + 2);
    int *local = malloc(sizeof(int) * (size_t)nl), *back = malloc(sizeof(int) * (size_t)nl);
    MPI_Datatype ft, mt;
    MPI_Type_create_subarray(2, gs, ls, st0, MPI_ORDER_C, MPI_INT, &ft);
    MPI_Type_create_subarray(2, ms, ls, one, MPI_ORDER_C, MPI_INT, &mt);
    MPI_Type_commit(&ft);
    MPI_Type_commit(&mt);
    for (int i = 0; i < l0 + 2; i++)
        for (int j = 0; j < l1 + 2; j++) {
            int inside = i >= 1 && i <= l0 && j >= 1 && j <= l1;
            local[i * (l1 + 2) + j] = inside ? cell(s0 + i - 1, s1 + j - 1) : -2;
        }
    const char *p = io_path("grid");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_all(fh, local, 1, mt, &st), MPI_SUCCESS);
    int elements = -1;
    MPI_Get_elements(&st, mt, &elements);
    CHECK(io_count(&st, mt) == 1 && elements == l0 * l1, "write_all: count %d, elements %d, want 1 and %d",
          io_count(&st, mt), elements, l0 * l1);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);

    if (rank == 0 &&
        CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS) == MPI_SUCCESS) {
        int *all = malloc(sizeof(int) * G0 * G1), *want = malloc(sizeof(int) * G0 * G1);
        MPI_Offset sz = -1;
        for (int i = 0; i < G0; i++)
            for (int j = 0; j < G1; j++)
                want[i * G1 + j] = cell(i, j), all[i * G1 + j] = 0;
        CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
        CHECK(sz == (MPI_Offset)G0 * G1 * 4, "grid file of %lld bytes, want %d", (long long)sz, G0 * G1 * 4);
        CHECK_CLASS(MPI_File_read_at(fh, 0, all, G0 * G1, MPI_INT, &st), MPI_SUCCESS);
        CHECK_INTS(all, want, G0 * G1, "the whole grid read by rank 0");
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
        free(all);
        free(want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS) ==
        MPI_SUCCESS) {
        for (int i = 0; i < nl; i++)
            back[i] = -2;
        CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_SUCCESS);
        CHECK_CLASS(MPI_File_read_all(fh, back, 1, mt, &st), MPI_SUCCESS);
        CHECK_INTS(back, local, (size_t)nl, "own block (and untouched halo) read back");
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    }
out:
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    free(local);
    free(back);
}

#define HDR 100 /* header bytes before the displacement */
#define K 7     /* ints per process after it */

/* (c) A header written by rank 0, the processes' ints after it through a view with displacement. */
static void header(void)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    long n = HDR + (long)size * K * 4;
    unsigned char *want = malloc((size_t)n);
    for (int i = 0; i < HDR; i++)
        want[i] = (unsigned char)(i * 3 + 11);
    int mine[K];
    for (int r = 0; r < size; r++)
        for (int k = 0; k < K; k++) {
            int v = val(r, k);
            memcpy(want + HDR + ((long)r * K + k) * 4, &v, 4);
            if (r == rank)
                mine[k] = v;
        }
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("header"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    if (rank == 0)
        CHECK_CLASS(MPI_File_write_at(fh, 0, want, HDR, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_set_view(fh, HDR, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
    check_view(fh, HDR, MPI_INT, 4, 4);
    CHECK_CLASS(MPI_File_write_at_all(fh, (MPI_Offset)rank * K, mine, K, MPI_INT, &st), MPI_SUCCESS);
    MPI_Offset byte = -1, pos = -1, sz = -1;
    CHECK_CLASS(MPI_File_get_byte_offset(fh, 3, &byte), MPI_SUCCESS);
    CHECK(byte == HDR + 12, "offset 3 after a %d-byte displacement is byte %lld", HDR, (long long)byte);
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == n, "size %lld, want %ld", (long long)sz, n);
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_END), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == (MPI_Offset)size * K, "position %lld at the end, want %d ints", (long long)pos, size * K);
    MPI_Barrier(MPI_COMM_WORLD);
    check_whole(fh, want, n, "header and ints after the displacement");
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
out:
    free(want);
}

#define KD 9 /* doubles per process */

static double dval(int r, int k)
{
    return r * 100 + k + 0.25;
}

/* (d) An etype of MPI_DOUBLE: offsets, seeks and positions count doubles. (g) get_type_extent.
 * (h) Reads that reach the end of the file return what there is. */
static void doubles(void)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    double mine[KD], got[12];
    for (int k = 0; k < KD; k++)
        mine[k] = dval(rank, k);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("doubles"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        return;
    CHECK_CLASS(MPI_File_set_view(fh, 16, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_at(fh, (MPI_Offset)rank * KD, mine, KD, MPI_DOUBLE, &st), MPI_SUCCESS);
    MPI_Offset pos = -1, byte = -1, base = (MPI_Offset)rank * KD;
    CHECK_CLASS(MPI_File_seek(fh, base + 2, MPI_SEEK_SET), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == base + 2, "position %lld, want %lld", (long long)pos, (long long)(base + 2));
    CHECK_CLASS(MPI_File_read(fh, got, 3, MPI_DOUBLE, &st), MPI_SUCCESS);
    CHECK(got[0] == dval(rank, 2) && got[2] == dval(rank, 4), "read %g %g, want %g %g", got[0], got[2],
          dval(rank, 2), dval(rank, 4));
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == base + 5, "position %lld after 3 doubles, want %lld", (long long)pos, (long long)(base + 5));
    CHECK_CLASS(MPI_File_get_byte_offset(fh, base + 2, &byte), MPI_SUCCESS);
    CHECK(byte == 16 + (base + 2) * 8, "byte %lld, want %lld", (long long)byte, (long long)(16 + (base + 2) * 8));

    MPI_Aint ext = -1;
    MPI_Datatype t20;
    MPI_Type_contiguous(3, MPI_INT, &t20);
    MPI_Datatype r20;
    MPI_Type_create_resized(t20, 0, 20, &r20);
    MPI_Type_commit(&r20);
    CHECK_CLASS(MPI_File_get_type_extent(fh, MPI_INT, &ext), MPI_SUCCESS);
    CHECK(ext == 4, "extent of MPI_INT in the file: %ld", (long)ext);
    CHECK_CLASS(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext), MPI_SUCCESS);
    CHECK(ext == 8, "extent of MPI_DOUBLE in the file: %ld", (long)ext);
    CHECK_CLASS(MPI_File_get_type_extent(fh, r20, &ext), MPI_SUCCESS);
    CHECK(ext == 20, "extent of a type resized to 20 in the file: %ld", (long)ext);
    MPI_Type_free(&t20);
    MPI_Type_free(&r20);
    io_sync_barrier(fh, MPI_COMM_WORLD);

    MPI_Offset end = (MPI_Offset)size * KD;
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_END), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == end, "position %lld at the end, want %lld doubles", (long long)pos, (long long)end);
    int count, elements;
    CHECK_CLASS(MPI_File_read_at(fh, end - 2, got, 10, MPI_DOUBLE, &st), MPI_SUCCESS);
    MPI_Get_elements(&st, MPI_DOUBLE, &elements);
    CHECK(io_count(&st, MPI_DOUBLE) == 2 && elements == 2, "read of 10 with 2 left: count %d, elements %d",
          io_count(&st, MPI_DOUBLE), elements);
    CHECK(got[0] == dval(size - 1, KD - 2) && got[1] == dval(size - 1, KD - 1), "short read gave %g %g", got[0],
          got[1]);
    /* 6 doubles left for 3 of a 4-double type: no whole count, 6 elements */
    MPI_Datatype four;
    MPI_Type_contiguous(4, MPI_DOUBLE, &four);
    MPI_Type_commit(&four);
    CHECK_CLASS(MPI_File_read_at(fh, end - 6, got, 3, four, &st), MPI_SUCCESS);
    MPI_Get_count(&st, four, &count);
    MPI_Get_elements(&st, four, &elements);
    CHECK(count == MPI_UNDEFINED && elements == 6, "6 doubles as 4-double types: count %d, elements %d", count,
          elements);
    MPI_Type_free(&four);
    CHECK_CLASS(MPI_File_read_at(fh, end, got, 10, MPI_DOUBLE, &st), MPI_SUCCESS);
    MPI_Get_elements(&st, MPI_DOUBLE, &elements);
    CHECK(io_count(&st, MPI_DOUBLE) == 0 && elements == 0, "read at the end: count %d, elements %d",
          io_count(&st, MPI_DOUBLE), elements);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
}

#define NS 50 /* ints per process in strided() */

/* (e) Memory every third int, file every (P + 1)-th int from the process's own: both sides
 * non-contiguous, the file's slot P a hole. */
static void strided(void)
{
    long n = (long)NS * (size + 1);
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    MPI_Datatype ft, mt;
    int buf[3 * NS], back[3 * NS], want_back[3 * NS];
    unsigned char *want = malloc((size_t)n * 4);
    memset(want, HOLE, (size_t)n * 4);
    for (long i = 0; i < n; i++)
        if (i % (size + 1) < size) {
            int v = val((int)(i % (size + 1)), (int)(i / (size + 1)));
            memcpy(want + i * 4, &v, 4);
        }
    for (int i = 0; i < 3 * NS; i++) {
        buf[i] = i % 3 ? -7 : val(rank, i / 3);
        back[i] = -9;
        want_back[i] = i % 3 ? -9 : val(rank, i / 3);
    }
    MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)(size + 1) * 4, &ft);
    MPI_Type_vector(NS, 1, 3, MPI_INT, &mt);
    MPI_Type_commit(&ft);
    MPI_Type_commit(&mt);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("strided"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    prefill(fh, n * 4);
    CHECK_CLASS(MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_at_all(fh, 0, buf, 1, mt, &st), MPI_SUCCESS);
    int elements = -1;
    MPI_Get_elements(&st, mt, &elements);
    CHECK(io_count(&st, mt) == 1 && elements == NS, "strided write: count %d, elements %d", io_count(&st, mt),
          elements);
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_read_at_all(fh, 0, back, 1, mt, &st), MPI_SUCCESS);
    CHECK_INTS(back, want_back, 3 * NS, "strided read back (every third int, the others untouched)");
    MPI_Barrier(MPI_COMM_WORLD);
    check_whole(fh, want, n * 4, "strided: the whole file");
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
out:
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    free(want);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup();
    interleaved(0);
    interleaved(1);
    grid();
    header();
    doubles();
    strided();
    io_cleanup();
    return mt_finish();
}
