/* io.c: MPI I/O through the page cache (what the library adds on top of the kernel's copies).
 * Rows ("bytes" = what each process moves in one call):
 *   io_write_contig, io_read_contig    each process its own block at rank * bytes, by
 *                                      MPI_File_write_at_all / MPI_File_read_at_all (MB/s, all
 *                                      processes together);
 *   io_write_strided, io_read_strided  the blocks interleaved in pieces of 4 KiB (piece k of
 *                                      process r at (k * P + r) * 4 KiB) through a file view of a
 *                                      resized vector, by MPI_File_write_all / MPI_File_read_all;
 *   io_write_shared                    MPI_File_write_ordered of `bytes` per process (MB/s);
 *   io_open_close                      MPI_File_open + MPI_File_close of one file (us per pair).
 * The file lives in $BENCH_IO_DIR (default /tmp) and is removed at the end; nothing is synced
 * to the disk (that would time the disk, not the library). Each figure is the median of REPS
 * timed calls, each after a barrier and timed by the slowest process. Reads check the bytes
 * they find; a mismatch aborts.
 * usage: mpiexec -n P io [max_bytes]   (default 16 MiB) */
#include "common.h"

#include <stdbool.h>
#include <unistd.h>

#define REPS 7
#define PIECE 4096

static int rank, size;

static double slowest(double t)
{
    double worst;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t)
{
    qsort(t, REPS, sizeof *t, cmp);
    return t[REPS / 2];
}

static void fill(char *buf, size_t bytes, int who)
{
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (char)(who * 31 + i % 251);
}

static void check(const char *buf, size_t bytes, int who, const char *row)
{
    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != (char)(who * 31 + i % 251)) {
            fprintf(stderr, "%s: rank %d byte %zu of rank %d's data is wrong\n", row, rank, i, who);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* One row: the median time of REPS calls of `op`, reported as bandwidth of all processes. */
static void row(const char *name, MPI_File fh, size_t bytes, char *buf, bool write, bool strided)
{
    double t[REPS];
    for (int k = 0; k < REPS; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int err;
        if (strided)
            err = write ? MPI_File_write_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE)
                        : MPI_File_read_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            err = write ? MPI_File_write_at_all(fh, (MPI_Offset)rank * (MPI_Offset)bytes, buf, (int)bytes, MPI_BYTE,
                                                MPI_STATUS_IGNORE)
                        : MPI_File_read_at_all(fh, (MPI_Offset)rank * (MPI_Offset)bytes, buf, (int)bytes, MPI_BYTE,
                                               MPI_STATUS_IGNORE);
        t[k] = slowest(MPI_Wtime() - t0);
        if (err != MPI_SUCCESS) {
            fprintf(stderr, "%s: an I/O call failed\n", name);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (!write)
        check(buf, bytes, rank, name);
    if (rank == 0)
        printf("%s np=%d bytes=%zu value=%.1f unit=MB/s\n", name, size, bytes,
               (double)bytes * size / median(t) / 1e6);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)16 << 20;
    const char *dir = getenv("BENCH_IO_DIR") ? getenv("BENCH_IO_DIR") : "/tmp";
    char path[512];
    int tag = 0;
    if (rank == 0)
        tag = (int)getpid();
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/bench-io-%d.dat", dir, tag);
    char *buf = bench_alloc(max);

    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS) {
        fprintf(stderr, "io: cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const size_t sizes[] = {64 << 10, 1 << 20, 16 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max; i++) {
        size_t bytes = sizes[i];
        fill(buf, bytes, rank);
        row("io_write_contig", fh, bytes, buf, true, false);
        row("io_read_contig", fh, bytes, buf, false, false);
        /* the interleaved view: piece k of this process at (k * size + rank) pieces */
        MPI_Datatype vec, ft;
        MPI_Type_vector(1, PIECE, PIECE * size, MPI_BYTE, &vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint)PIECE * size, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, (MPI_Offset)rank * PIECE, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        fill(buf, bytes, rank);
        row("io_write_strided", fh, bytes, buf, true, true);
        row("io_read_strided", fh, bytes, buf, false, true);
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        MPI_Type_free(&ft);
        MPI_Type_free(&vec);
        double t[REPS];
        for (int k = 0; k < REPS; k++) {
            MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_File_write_ordered(fh, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
            t[k] = slowest(MPI_Wtime() - t0);
        }
        if (rank == 0)
            printf("io_write_shared np=%d bytes=%zu value=%.1f unit=MB/s\n", size, bytes,
                   (double)bytes * size / median(t) / 1e6);
    }
    MPI_File_close(&fh);

    double t[REPS];
    snprintf(path, sizeof path, "%s/bench-io-%d-oc.dat", dir, tag);
    for (int k = 0; k < REPS; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_close(&fh);
        t[k] = slowest(MPI_Wtime() - t0);
    }
    if (rank == 0) {
        printf("io_open_close np=%d value=%.2f unit=us\n", size, median(t) * 1e6);
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    bench_free(buf);
    MPI_Finalize();
    return 0;
}
