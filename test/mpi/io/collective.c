/* Collective writes through aggregators (two-phase, src/io/coll.c), checked by the bytes in the
 * file afterwards, read back independently:
 *   - interleaved blocks (a vector filetype, each process every p-th block): the file holds every
 *     process's blocks, the counter io.write_all.aggregated moves once a call, and the
 *     aggregators wrote far fewer runs than there are pieces; with a few pieces a process the
 *     automatic choice writes independently (the counter stays);
 *   - the holes nobody writes keep the file's earlier bytes (no read-modify-write);
 *   - many rounds (hints romio_cb_write=enable, cb_buffer_size=4096), strided memory over a
 *     strided view, MPI_File_write_at_all at an offset, the individual file pointer after it;
 *   - processes writing nothing beside others writing, and one process whose access fails its
 *     checks (MPI_ERR_TYPE there, the others' data written: nobody waits forever);
 *   - romio_cb_write=disable: each process writes its own pieces (the counter stays).
 * At one process the calls write independently (the counter stays). Each round of an aggregated
 * call reads the pieces from the other processes' memory (io.write_all.read_rounds) when all
 * processes share a node and cross-memory attach is allowed, and sends them by messages
 * otherwise (io.write_all.sent_rounds: testlist runs it across simulated nodes, and with
 * COURIER_SHM_CMA=off, and with one process whose reads the kernel refuses: `collective refuse
 * R`, found at its first read), and the automatic choice's threshold follows (MID pieces a
 * process). */
#define _GNU_SOURCE /* process_vm_readv */
#include "iotest.h"
#include "mt_attach.h"
#include "refuse_attach.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <unistd.h>

/* ints a block; blocks a process: R at least both of the automatic choice's thresholds (64
 * pieces a process where the aggregators read the others' memory, 1024 where the pieces go by
 * messages), MID between them, FEW below both */
enum { B = 16, R = 1024, MID = 128, FEW = 8 };
#define IO_MIN(a, b) ((a) < (b) ? (a) : (b))

static int rank, size;

static int value(int r, int k, int i)
{
    return r * 1000000 + k * 100 + i;
}

/* Opens `name` with the given hints (NULL: none), pre-filled with `fill` bytes of 0xEE by rank 0. */
static MPI_File open_with(const char *name, const char *cb_write, const char *cb_size, int fill)
{
    if (rank == 0) {
        FILE *fp = fopen(io_path(name), "w");
        for (int i = 0; fp && i < fill; i++)
            fputc(0xEE, fp);
        if (fp)
            fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info info;
    MPI_Info_create(&info);
    if (cb_write)
        MPI_Info_set(info, "romio_cb_write", cb_write);
    if (cb_size)
        MPI_Info_set(info, "cb_buffer_size", cb_size);
    MPI_File fh = MPI_FILE_NULL;
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path(name), MPI_MODE_RDWR, info, &fh), MPI_SUCCESS);
    MPI_Info_free(&info);
    return fh;
}

/* The view where this process owns blocks rank, rank + size, ... of bs ints, from byte disp. */
static void interleave_bs(MPI_File fh, MPI_Offset disp, int bs, MPI_Datatype *ft)
{
    MPI_Datatype block;
    MPI_Type_contiguous(bs, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)size * bs * (MPI_Aint)sizeof(int), ft);
    MPI_Type_commit(ft);
    MPI_Type_free(&block);
    CHECK_CLASS(MPI_File_set_view(fh, disp + (MPI_Offset)rank * bs * (MPI_Offset)sizeof(int), MPI_INT, *ft, "native",
                                  MPI_INFO_NULL),
                MPI_SUCCESS);
}

static void interleave(MPI_File fh, MPI_Offset disp, MPI_Datatype *ft)
{
    interleave_bs(fh, disp, B, ft);
}

/* Reads the whole file independently and checks blocks of bs ints written by every process in
 * `wrote` (nblocks each, the interleaved view's blocks first, first + 1, ... from byte disp;
 * block k of a process's data holding value(r, k, i)), 0xEE bytes everywhere else below `fill`,
 * and the file's size: the end of the last block written, or `fill`. */
static void check_file_bs(MPI_File fh, MPI_Offset disp, int bs, int first, int nblocks, const int *wrote, int fill,
                          const char *what)
{
    io_sync_barrier(fh, MPI_COMM_WORLD);
    MPI_Offset fsize = 0;
    MPI_File_get_size(fh, &fsize);
    size_t end = (size_t)fill;
    for (int r = 0; r < size; r++)
        if (wrote[r] && nblocks > 0) {
            size_t e = (size_t)disp + (((size_t)(first + nblocks - 1) * (size_t)size + (size_t)r) + 1) * (size_t)bs * sizeof(int);
            end = end > e ? end : e;
        }
    CHECK((size_t)fsize == end, "%s: the file has %lld bytes, want %zu", what, (long long)fsize, end);
    size_t n = end;
    unsigned char *got = calloc(n + 1, 1), *want = malloc(n + 1);
    memset(want, 0, n);
    memset(want, 0xEE, IO_MIN((size_t)fill, n));
    for (int r = 0; r < size; r++)
        for (int k = 0; wrote[r] && k < nblocks; k++)
            for (int i = 0; i < bs; i++) {
                int v = value(r, k, i);
                size_t at = (size_t)disp + (((size_t)(first + k) * (size_t)size + (size_t)r) * (size_t)bs + (size_t)i) * sizeof(int);
                memcpy(want + at, &v, sizeof v);
            }
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Status st;
    CHECK_CLASS(MPI_File_read_at(fh, 0, got, (int)n, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK_BYTES(got, want, n, what);
    free(got);
    free(want);
}

static void check_file(MPI_File fh, MPI_Offset disp, int nblocks, const int *wrote, int fill, const char *what)
{
    check_file_bs(fh, disp, B, 0, nblocks, wrote, fill, what);
}


/* Whether the processes span nodes (the same answer everywhere). */
static bool across_nodes(void)
{
    int node_size;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int spans = node_size != size, any = 0;
    MPI_Allreduce(&spans, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return any;
}

static unsigned long long aggregated(void)
{
    return mt_pvar_value("io.write_all.aggregated");
}

static unsigned long long runs_everywhere(void)
{
    unsigned long long mine = mt_pvar_value("io.write_all.aggregator_runs"), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static void fill_blocks_bs(int *buf, int bs, int nblocks)
{
    for (int k = 0; k < nblocks; k++)
        for (int i = 0; i < bs; i++)
            buf[k * bs + i] = value(rank, k, i);
}

static void fill_blocks(int *buf, int nblocks)
{
    fill_blocks_bs(buf, B, nblocks);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2 && !strcmp(argv[1], "refuse") && rank == atoi(argv[2]) % size)
        mt_refuse_attach("read");
    io_setup();
    int *all = malloc(sizeof(int) * (size_t)size), *mine = malloc(sizeof(int) * B * R);
    for (int r = 0; r < size; r++)
        all[r] = 1;
    fill_blocks(mine, R);
    MPI_Datatype ft;
    MPI_Status st;
    bool spans = across_nodes(), can_read = mt_attach_everywhere(spans);
    unsigned long long agg_start = aggregated(), read_start = mt_pvar_value("io.write_all.read_rounds"),
                       sent_start = mt_pvar_value("io.write_all.sent_rounds");

    /* Interleaved blocks, the automatic choice: aggregated at more than one process. */
    unsigned long long agg0 = aggregated(), runs0 = runs_everywhere();
    MPI_File fh = open_with("interleaved", NULL, NULL, 0);
    interleave(fh, 0, &ft);
    CHECK_CLASS(MPI_File_write_all(fh, mine, B * R, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == B * R, "write_all wrote %d ints, want %d", io_count(&st, MPI_INT), B * R);
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == B * R, "the individual file pointer is at %lld after write_all, want %d", (long long)pos, B * R);
    unsigned long long agg = aggregated() - agg0, runs = runs_everywhere() - runs0;
    CHECK(agg == (size > 1 ? 1u : 0u), "io.write_all.aggregated moved by %llu at %d processes", agg, size);
    if (size > 1) /* every block abuts another process's: one run a domain, not size * R pieces */
        CHECK(runs >= 1 && runs <= (unsigned long long)size, "the aggregators wrote %llu runs for %d pieces", runs,
              size * R);
    check_file(fh, 0, R, all, 0, "interleaved blocks");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);

    /* A few pieces a process: the automatic choice writes them independently. */
    fh = open_with("few", NULL, NULL, 0);
    interleave(fh, 0, &ft);
    agg0 = aggregated();
    CHECK_CLASS(MPI_File_write_all(fh, mine, B * FEW, MPI_INT, &st), MPI_SUCCESS);
    CHECK(aggregated() == agg0, "%d pieces a process were aggregated", FEW);
    check_file(fh, 0, FEW, all, 0, "a few interleaved blocks");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);

    /* Between the thresholds: aggregated where the aggregators read the others' memory; where
     * they cannot (across nodes, attach off, or refused: found by the first call above), each
     * process writes its own. */
    fh = open_with("mid", NULL, NULL, 0);
    interleave(fh, 0, &ft);
    for (int call = 0; call < 2; call++) {
        agg0 = aggregated();
        CHECK_CLASS(MPI_File_write_at_all(fh, 0, mine, B * MID, MPI_INT, &st), MPI_SUCCESS);
        bool want = size > 1 && can_read;
        CHECK(aggregated() - agg0 == (want ? 1u : 0u), "call %d of %d pieces a process: aggregated %llu times (%s)",
              call, MID, aggregated() - agg0, can_read ? "attach works" : spans ? "across nodes" : "attach off");
    }
    check_file(fh, 0, MID, all, 0, "interleaved blocks between the thresholds");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);

    /* Holes: the first half of each block is written, the rest keeps its 0xEE; many rounds. */
    int fill = size * R * B * (int)sizeof(int) + 100;
    fh = open_with("holes", "enable", "4096", fill);
    MPI_Datatype half, hft;
    MPI_Type_contiguous(B / 2, MPI_INT, &half);
    MPI_Type_create_resized(half, 0, (MPI_Aint)size * B * (MPI_Aint)sizeof(int), &hft);
    MPI_Type_commit(&hft);
    CHECK_CLASS(MPI_File_set_view(fh, (MPI_Offset)rank * B * (MPI_Offset)sizeof(int), MPI_INT, hft, "native",
                                  MPI_INFO_NULL),
                MPI_SUCCESS);
    /* strided memory: the first half of each of this process's blocks */
    MPI_Datatype mem;
    MPI_Type_vector(R, B / 2, B, MPI_INT, &mem);
    MPI_Type_commit(&mem);
    agg0 = aggregated();
    CHECK_CLASS(MPI_File_write_at_all(fh, 0, mine, 1, mem, &st), MPI_SUCCESS);
    CHECK(aggregated() - agg0 == (size > 1 ? 1u : 0u), "the hint romio_cb_write=enable did not aggregate");
    io_sync_barrier(fh, MPI_COMM_WORLD);
    {
        size_t n = (size_t)fill;
        unsigned char *got = malloc(n), *want = malloc(n);
        memset(want, 0xEE, n);
        for (int r = 0; r < size; r++)
            for (int k = 0; k < R; k++)
                for (int i = 0; i < B / 2; i++) {
                    int v = value(r, k, i);
                    memcpy(want + (((size_t)k * (size_t)size + (size_t)r) * B + (size_t)i) * sizeof(int), &v, sizeof v);
                }
        CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
        CHECK_CLASS(MPI_File_read_at(fh, 0, got, (int)n, MPI_BYTE, &st), MPI_SUCCESS);
        CHECK_BYTES(got, want, n, "half blocks over 0xEE, in rounds of 4 KiB");
        free(got);
        free(want);
    }
    MPI_Type_free(&hft);
    MPI_Type_free(&half);
    MPI_Type_free(&mem);
    MPI_File_close(&fh);

    /* Some processes write nothing (the even ranks but 0 when there are several), at an offset. */
    fh = open_with("some", NULL, NULL, 0);
    MPI_Offset disp = 4096;
    interleave(fh, disp, &ft);
    int writes = size == 1 || rank % 2 == 1 || rank == 0;
    for (int r = 0; r < size; r++)
        all[r] = size == 1 || r % 2 == 1 || r == 0;
    CHECK_CLASS(MPI_File_write_at_all(fh, 0, mine, writes ? B * R : 0, MPI_INT, &st), MPI_SUCCESS);
    check_file(fh, disp, R, all, 0, "some processes writing nothing");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);

    /* The last process's access fails its checks (3 bytes are no whole number of the view's int
     * etypes): its error, the others' data in the file. */
    fh = open_with("badcount", "enable", NULL, 0);
    interleave(fh, 0, &ft);
    int bad = rank == size - 1;
    for (int r = 0; r < size; r++)
        all[r] = r != size - 1;
    if (bad)
        CHECK_CLASS(MPI_File_write_all(fh, mine, 3, MPI_BYTE, &st), MPI_ERR_TYPE);
    else
        CHECK_CLASS(MPI_File_write_all(fh, mine, B * R, MPI_INT, &st), MPI_SUCCESS);
    check_file(fh, 0, R, all, 0, "one process's bad count");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);

    /* Pieces that straddle the domains' and rounds' bounds: 48-byte blocks from byte 100, and
     * 10 KiB blocks, in rounds of 4 KiB, by write_at_all at an offset of 3 blocks (which leaves
     * the individual file pointer where it was). */
    const int bss[2] = {12, 2560}, nbs[2] = {40, 6};
    for (int r = 0; r < size; r++)
        all[r] = 1;
    for (int t = 0; t < 2; t++) {
        int bs = bss[t], nb = nbs[t];
        int *data = malloc(sizeof(int) * (size_t)bs * (size_t)nb);
        fill_blocks_bs(data, bs, nb);
        fh = open_with(t ? "straddle10k" : "straddle48", "enable", "4096", 0);
        interleave_bs(fh, 100, bs, &ft);
        agg0 = aggregated();
        CHECK_CLASS(MPI_File_write_at_all(fh, 3 * bs, data, bs * nb, MPI_INT, &st), MPI_SUCCESS);
        CHECK(aggregated() - agg0 == (size > 1 ? 1u : 0u), "%d-int blocks were not aggregated", bs);
        MPI_File_get_position(fh, &pos);
        CHECK(pos == 0, "write_at_all moved the individual file pointer to %lld", (long long)pos);
        check_file_bs(fh, 100, bs, 3, nb, all, 0, t ? "10 KiB blocks in rounds of 4 KiB" : "48-byte blocks from byte 100");
        MPI_Type_free(&ft);
        MPI_File_close(&fh);
        free(data);
    }

    /* One int from rank 0 only: every other domain is empty. */
    fh = open_with("one", "enable", NULL, 0);
    interleave(fh, 0, &ft);
    int one = value(0, 0, 0);
    CHECK_CLASS(MPI_File_write_all(fh, &one, rank == 0, MPI_INT, &st), MPI_SUCCESS);
    for (int r = 0; r < size; r++)
        all[r] = r == 0;
    check_file_bs(fh, 0, 1, 0, 1, all, 0, "one int from rank 0");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
    for (int r = 0; r < size; r++)
        all[r] = 1;

    /* The nonblocking form is written independently (its start must not wait for the others);
     * the split form aggregates, and a second begin while one is active takes part all the same. */
    fh = open_with("iwrite", "enable", NULL, 0);
    interleave(fh, 0, &ft);
    agg0 = aggregated();
    MPI_Request req;
    CHECK_CLASS(MPI_File_iwrite_all(fh, mine, B * R, MPI_INT, &req), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
    CHECK(aggregated() == agg0, "MPI_File_iwrite_all went through the aggregators");
    check_file(fh, 0, R, all, 0, "iwrite_all");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
    fh = open_with("split", "enable", NULL, 0);
    interleave(fh, 0, &ft);
    agg0 = aggregated();
    CHECK_CLASS(MPI_File_write_all_begin(fh, mine, B * R, MPI_INT), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_all_begin(fh, mine, B * R, MPI_INT), MPI_ERR_OTHER);
    CHECK_CLASS(MPI_File_write_all_end(fh, mine, &st), MPI_SUCCESS);
    /* (the refused begin takes part with nothing to write: no aggregation) */
    CHECK(aggregated() - agg0 == (size > 1 ? 1u : 0u), "the split write and the refused one aggregated %llu times",
          aggregated() - agg0);
    check_file(fh, 0, R, all, 0, "write_all_begin/end");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);

    /* A view whose tiles reach back (pieces at 0, 4096, 8, 4100, ... of each process's region):
     * not in file order, so written independently even with the hint, and every piece lands. */
    fh = open_with("backwards", "enable", NULL, 0);
    {
        int bl[2] = {1, 1};
        MPI_Aint dp[2] = {0, 4096};
        MPI_Datatype two, back;
        MPI_Type_create_hindexed(2, bl, dp, MPI_INT, &two);
        MPI_Type_create_resized(two, 0, 8, &back);
        MPI_Type_commit(&back);
        CHECK_CLASS(MPI_File_set_view(fh, (MPI_Offset)rank * 16384, MPI_INT, back, "native", MPI_INFO_NULL),
                    MPI_SUCCESS);
        int v6[5]; /* (five: the last piece, at 16, ends before the one at 4096) */
        for (int i = 0; i < 5; i++)
            v6[i] = value(rank, 0, i);
        agg0 = aggregated();
        CHECK_CLASS(MPI_File_write_all(fh, v6, 5, MPI_INT, &st), MPI_SUCCESS);
        CHECK(aggregated() == agg0, "a view reaching back went through the aggregators");
        io_sync_barrier(fh, MPI_COMM_WORLD);
        CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
        for (int i = 0; i < 5; i++) { /* int i lies at tile i / 2 (8 bytes each) + 4096 for odd i */
            int got = -1;
            MPI_File_read_at(fh, (MPI_Offset)rank * 16384 + (i / 2) * 8 + (i % 2) * 4096, &got, (int)sizeof got,
                             MPI_BYTE, &st);
            CHECK(got == v6[i], "backwards view: int %d is %d, want %d", i, got, v6[i]);
        }
        MPI_Type_free(&back);
        MPI_Type_free(&two);
    }
    MPI_File_close(&fh);

    /* Disabled: each writes its own pieces. */
    fh = open_with("disabled", "disable", NULL, 0);
    interleave(fh, 0, &ft);
    for (int r = 0; r < size; r++)
        all[r] = 1;
    agg0 = aggregated();
    CHECK_CLASS(MPI_File_write_all(fh, mine, B * R, MPI_INT, &st), MPI_SUCCESS);
    CHECK(aggregated() == agg0, "romio_cb_write=disable aggregated");
    check_file(fh, 0, R, all, 0, "interleaved blocks, aggregation disabled");
    MPI_Type_free(&ft);
    MPI_File_close(&fh);

    /* Every aggregated call took at least one round. */
    unsigned long long calls = aggregated() - agg_start, read = mt_pvar_value("io.write_all.read_rounds") - read_start,
                       sent = mt_pvar_value("io.write_all.sent_rounds") - sent_start;
    CHECK((calls > 0) == (size > 1), "%llu calls aggregated at %d processes", calls, size);
    /* (a round in which each aggregator's pieces are all its own needs no attach: it counts as read) */
    CHECK(read + sent >= calls && (can_read ? sent == 0 : sent > 0) && !(spans && read),
          "%llu rounds read and %llu sent in %llu aggregated calls (%s)", read, sent, calls,
          can_read ? "one node, attach allowed" : spans ? "across nodes" : "attach off");

    free(all);
    free(mine);
    io_cleanup();
    return mt_finish();
}
