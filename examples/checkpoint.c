/* checkpoint.c: a distributed 2-D grid saved to one file with MPI I/O, and read back in
 * another decomposition.
 *
 * The grid (NX x NY doubles, default 300 x 200) is cut into blocks over a Cartesian grid of
 * processes (MPI_Dims_create). Rank 0 writes a small header; then every process sets a file
 * view whose filetype (MPI_Type_create_subarray) says where its block lies in the row-major
 * grid after the header, and all write with one collective call, MPI_File_write_all: the file
 * is the grid as a serial program would write it. Then the file is read back in rows (each
 * process a band of whole rows, MPI_File_read_at_all with explicit offsets) and every value is
 * checked against the formula that made it.
 *
 * usage: mpiexec -n 4 checkpoint [NX NY [FILE]]     (FILE defaults to checkpoint.dat, removed
 *                                                     at the end unless it is named) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The part of a dimension of n cells that process `coord` of `parts` owns: [first, first + len). */
static void split(int n, int parts, int coord, int *first, int *len)
{
    *len = n / parts + (coord < n % parts);
    *first = coord * (n / parts) + (coord < n % parts ? coord : n % parts);
}

static double value(int i, int j)
{
    return i * 1000.0 + j + 0.25;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nx = argc > 2 ? atoi(argv[1]) : 300, ny = argc > 2 ? atoi(argv[2]) : 200;
    const char *name = argc > 3 ? argv[3] : "checkpoint.dat";
    if (nx < 1 || ny < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: checkpoint [NX NY [FILE]] with NX, NY >= 1\n");
        MPI_Finalize();
        return 1;
    }

    /* This process's block of the grid. */
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Cart_coords(grid, rank, 2, coords);
    int x0, nxl, y0, nyl;
    split(nx, dims[0], coords[0], &x0, &nxl);
    split(ny, dims[1], coords[1], &y0, &nyl);
    double *block = malloc((size_t)(nxl > 0 ? nxl : 1) * (size_t)(nyl > 0 ? nyl : 1) * sizeof *block);
    for (int i = 0; i < nxl; i++)
        for (int j = 0; j < nyl; j++)
            block[i * nyl + j] = value(x0 + i, y0 + j);

    /* Errors in file calls return (MPI_ERRORS_RETURN is the default for files): say so and stop. */
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        fprintf(stderr, "rank %d: %s\n", rank, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_size(fh, 0);

    /* The header: the grid's shape, written by one process at the start of the file. */
    int header[2] = {nx, ny};
    if (rank == 0)
        MPI_File_write_at(fh, 0, header, 2, MPI_INT, MPI_STATUS_IGNORE);

    /* Every block in one collective write: the view starts after the header and shows this
     * process only its block of the row-major grid. */
    int gsizes[2] = {nx, ny}, lsizes[2] = {nxl, nyl}, starts[2] = {x0, y0};
    MPI_Datatype filetype;
    MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype);
    MPI_Type_commit(&filetype);
    MPI_File_set_view(fh, sizeof header, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL);
    double t0 = MPI_Wtime();
    MPI_File_write_all(fh, block, nxl * nyl, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh); /* written data reaches the other processes' reads: sync, barrier, sync */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    double t_write = MPI_Wtime() - t0;

    /* Read back in bands of whole rows, through the plain view of bytes. */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    int r0, nr;
    split(nx, size, rank, &r0, &nr);
    double *rows = malloc((size_t)(nr > 0 ? nr : 1) * (size_t)ny * sizeof *rows);
    int got_header[2] = {0, 0};
    MPI_File_read_at_all(fh, 0, got_header, 2, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Status st;
    MPI_Offset at = (MPI_Offset)sizeof header + (MPI_Offset)r0 * ny * (MPI_Offset)sizeof(double);
    MPI_File_read_at_all(fh, at, rows, nr * ny, MPI_DOUBLE, &st);
    int count;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    long wrong = count != nr * ny || got_header[0] != nx || got_header[1] != ny;
    for (int i = 0; i < nr && count == nr * ny; i++)
        for (int j = 0; j < ny; j++)
            wrong += rows[i * ny + j] != value(r0 + i, j);
    long wrong_all = 0;
    MPI_Reduce(&wrong, &wrong_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Offset bytes;
    MPI_File_get_size(fh, &bytes);
    MPI_File_close(&fh);
    if (rank == 0) {
        printf("checkpoint of a %d x %d grid by %d processes (%d x %d blocks): %lld bytes in %s, written in %.3f ms\n",
               nx, ny, size, dims[0], dims[1], (long long)bytes, name, t_write * 1e3);
        printf("read back in %d bands of rows: %ld values wrong\n", size, wrong_all);
        if (argc <= 3)
            MPI_File_delete(name, MPI_INFO_NULL);
    }
    MPI_Type_free(&filetype);
    MPI_Comm_free(&grid);
    free(block);
    free(rows);
    MPI_Finalize();
    return rank == 0 && wrong_all != 0;
}
