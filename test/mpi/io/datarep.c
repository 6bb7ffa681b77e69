/* datarep.c: user data representations (MPI_Register_datarep and _c): names defined twice, conversion functions
 * called on write and on read with their extra state (the file then holds the converted bytes), no conversion with
 * MPI_CONVERSION_FN_NULL, a failing conversion (MPI_ERR_CONVERSION), file extents from the extent function. */
#include "iotest.h"

#include <stdint.h>

static int rank, size;

typedef struct {
    int reads, writes, extents;
} calls;

static uint32_t swap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

/* Conversions for data of contiguous ints (MPI_INT, or a contiguous type of them): the file holds each int
 * byte-swapped. As the standard says, count counts data items (the ints of the tiled typemap) and position is the
 * index of the first one in userbuf. */
static int swap_ints(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf, MPI_Offset position,
                     bool to_file)
{
    int sz;
    MPI_Type_size(dt, &sz);
    if (sz % 4)
        return MPI_ERR_TYPE;
    uint32_t *u = (uint32_t *)userbuf + position, *f = filebuf;
    for (MPI_Count i = 0; i < count; i++) {
        if (to_file)
            f[i] = swap32(u[i]);
        else
            u[i] = swap32(f[i]);
    }
    return MPI_SUCCESS;
}

static int read_fn(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
    ((calls *)extra)->reads++;
    return swap_ints(userbuf, dt, count, filebuf, position, false);
}

static int write_fn(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
    ((calls *)extra)->writes++;
    return swap_ints(userbuf, dt, count, filebuf, position, true);
}

static int read_fn_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf, MPI_Offset position, void *extra)
{
    ((calls *)extra)->reads++;
    return swap_ints(userbuf, dt, count, filebuf, position, false);
}

static int write_fn_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf, MPI_Offset position,
                      void *extra)
{
    ((calls *)extra)->writes++;
    return swap_ints(userbuf, dt, count, filebuf, position, true);
}

static int failing_fn(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
    (void)userbuf, (void)dt, (void)count, (void)filebuf, (void)position, (void)extra;
    return MPI_ERR_OTHER;
}

static int native_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    MPI_Aint lb;
    ((calls *)extra)->extents++;
    return MPI_Type_get_extent(dt, &lb, extent);
}

static int wide_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)dt, (void)extra;
    *extent = 8; /* every type 8 bytes in the file: not a layout Courier takes */
    return MPI_SUCCESS;
}

enum { N = 1000 };

/* Each process writes N ints at its place through `rep`, then the raw bytes are read through the native view
 * and the values through `rep` again. */
static void round_trip(const char *rep, calls *c, bool swapped, bool large, bool quads)
{
    const char *path = io_path("datarep");
    MPI_File fh;
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    int *mine = malloc(N * sizeof *mine), *got = malloc(N * sizeof *got);
    uint32_t *raw = malloc(N * sizeof *raw);
    for (int i = 0; i < N; i++)
        mine[i] = rank * 1000003 + i * 7 + 0x01020304;
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rep, MPI_INFO_NULL), MPI_SUCCESS);
    char shown[MPI_MAX_DATAREP_STRING] = "";
    MPI_Offset disp;
    MPI_Datatype et, ft;
    CHECK_CLASS(MPI_File_get_view(fh, &disp, &et, &ft, shown), MPI_SUCCESS);
    CHECK(strcmp(shown, rep) == 0, "get_view says datarep \"%s\", want \"%s\"", shown, rep);
    MPI_Status st;
    int before = c->writes;
    MPI_Datatype quad;
    MPI_Type_contiguous(4, MPI_INT, &quad);
    MPI_Type_commit(&quad);
    if (large)
        CHECK_CLASS(MPI_File_write_at_all_c(fh, (MPI_Offset)rank * N, mine, (MPI_Count)N, MPI_INT, &st), MPI_SUCCESS);
    else if (quads) /* 4 ints a memory element: the conversion gets N items, not N / 4 */
        CHECK_CLASS(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, mine, N / 4, quad, &st), MPI_SUCCESS);
    else
        CHECK_CLASS(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, mine, N, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == N, "wrote %d ints", io_count(&st, MPI_INT));
    CHECK(c->writes > before || !swapped, "the write conversion function was not called");
    io_sync_barrier(fh, MPI_COMM_WORLD);
    /* the file's bytes */
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    int peer = (rank + 1) % size;
    CHECK_CLASS(MPI_File_read_at(fh, (MPI_Offset)peer * N * 4, raw, N * 4, MPI_BYTE, &st), MPI_SUCCESS);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        uint32_t v = (uint32_t)(peer * 1000003 + i * 7 + 0x01020304);
        bad += raw[i] != (swapped ? swap32(v) : v);
    }
    CHECK(bad == 0, "%d of the file's ints written by rank %d are not %s", bad, peer, swapped ? "swapped" : "native");
    /* the values again, through the representation */
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rep, MPI_INFO_NULL), MPI_SUCCESS);
    before = c->reads;
    memset(got, 0, N * sizeof *got);
    if (quads)
        CHECK_CLASS(MPI_File_read_at(fh, (MPI_Offset)peer * N, got, N / 4, quad, &st), MPI_SUCCESS);
    else
        CHECK_CLASS(MPI_File_read_at(fh, (MPI_Offset)peer * N, got, N, MPI_INT, &st), MPI_SUCCESS);
    CHECK(c->reads > before || !swapped, "the read conversion function was not called");
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[i] != peer * 1000003 + i * 7 + 0x01020304;
    CHECK(bad == 0, "%d ints of rank %d read back wrong through \"%s\"", bad, peer, rep);
    /* a read that meets the end of the file converts what is there */
    CHECK_CLASS(MPI_File_read_at(fh, (MPI_Offset)size * N - 3, got, 10, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == 3, "read %d ints at the end, want 3", io_count(&st, MPI_INT));
    CHECK(got[2] == (size - 1) * 1000003 + (N - 1) * 7 + 0x01020304, "last int %d", got[2]);
    /* the file extent of a predefined type comes from the extent function */
    MPI_Aint ext = 0;
    int extents = c->extents;
    CHECK_CLASS(MPI_File_get_type_extent(fh, MPI_INT, &ext), MPI_SUCCESS);
    CHECK(ext == 4 && c->extents > extents, "extent %ld, extent function called %d times", (long)ext,
          c->extents - extents);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    MPI_Type_free(&quad);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    free(mine);
    free(got);
    free(raw);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup();

    static calls swap, plain, swap_c, failing, wide;
    CHECK_CLASS(MPI_Register_datarep("courier-swap", read_fn, write_fn, native_extent, &swap), MPI_SUCCESS);
    CHECK_CLASS(MPI_Register_datarep("courier-swap", read_fn, write_fn, native_extent, &swap), MPI_ERR_DUP_DATAREP);
    CHECK_CLASS(MPI_Register_datarep("native", read_fn, write_fn, native_extent, &swap), MPI_ERR_DUP_DATAREP);
    CHECK_CLASS(MPI_Register_datarep("external32", read_fn, write_fn, native_extent, &swap), MPI_ERR_DUP_DATAREP);
    CHECK_CLASS(MPI_Register_datarep("courier-plain", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, native_extent,
                                     &plain), MPI_SUCCESS);
    CHECK_CLASS(MPI_Register_datarep_c("courier-swap-c", read_fn_c, write_fn_c, native_extent, &swap_c), MPI_SUCCESS);
    CHECK_CLASS(MPI_Register_datarep_c("courier-swap-c", read_fn_c, write_fn_c, native_extent, &swap_c),
                MPI_ERR_DUP_DATAREP);
    CHECK_CLASS(MPI_Register_datarep("courier-failing", failing_fn, failing_fn, native_extent, &failing), MPI_SUCCESS);
    CHECK_CLASS(MPI_Register_datarep("courier-a-representation-whose-name-is-longer-than-sixteen-characters",
                                     read_fn, write_fn, native_extent, &swap), MPI_SUCCESS);
    round_trip("courier-a-representation-whose-name-is-longer-than-sixteen-characters", &swap, true, false, false);
    CHECK_CLASS(MPI_Register_datarep("courier-wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, wide_extent,
                                     &wide), MPI_SUCCESS);

    round_trip("courier-swap", &swap, true, false, false);
    round_trip("courier-swap", &swap, true, false, true);
    round_trip("courier-swap-c", &swap_c, true, true, false);
    round_trip("courier-plain", &plain, false, false, false);
    CHECK(plain.reads == 0 && plain.writes == 0, "calls counted for a representation without functions");

    const char *path = io_path("failing");
    MPI_File fh;
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                              MPI_INFO_NULL, &fh), MPI_SUCCESS);
    int v[4] = {1, 2, 3, 4};
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "courier-failing", MPI_INFO_NULL), MPI_SUCCESS);
    int rc = CHECK_CLASS(MPI_File_write_at(fh, rank * 4, v, 4, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_CONVERSION);
    CHECK(mt_string_has(rc, "courier-failing"), "the message does not name the representation");
    /* a representation whose file extents are not the memory's: refused, the view unchanged */
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "courier-wide", MPI_INFO_NULL),
                MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "courier-never-registered", MPI_INFO_NULL),
                MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);

    io_cleanup();
    return mt_finish();
}
