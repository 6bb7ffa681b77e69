/* halo.c: the 2-D heat equation on a Cartesian grid of processes, with a halo exchange.
 *
 * The global grid (NX x NY cells, default 96 x 64) is cut into blocks, one per process, laid out
 * by MPI_Dims_create and MPI_Cart_create. Each block keeps a one-cell halo around it; every step
 * the halos are refreshed from the four neighbours, then each cell moves towards the average of
 * its neighbours (explicit Euler, fixed zero temperature outside the grid).
 *
 * The halo exchange is one call, MPI_Neighbor_alltoallw: the block's edge rows and columns are
 * described in place by subarray datatypes, so nothing is copied by hand. With "sendrecv" as
 * the last argument the same exchange is done with MPI_Cart_shift and four MPI_Sendrecv calls.
 * At the end rank 0 gathers the grid, runs the same steps serially, and prints the largest
 * difference (0: the parallel run computed exactly what the serial one does).
 *
 * usage: mpiexec -n 4 halo [NX NY STEPS] [sendrecv] */
#include <math.h>
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

static double initial(int i, int j)
{
    return sin(0.1 * i) * cos(0.07 * j) + (i == j ? 1.0 : 0.0);
}

/* One step on an (rows + 2) x (cols + 2) array whose halo is filled: into `next`. */
static void step(const double *u, double *next, int rows, int cols)
{
    int w = cols + 2;
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j <= cols; j++) {
            double c = u[i * w + j];
            next[i * w + j] = c + 0.1 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1] - 4 * c);
        }
}

/* A rows x cols patch of the local (ny + 2)-wide array starting at (r, c). */
static MPI_Datatype patch(int nx, int ny, int r, int c, int rows, int cols)
{
    int sizes[2] = {nx + 2, ny + 2}, sub[2] = {rows, cols}, start[2] = {r, c};
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int NX = argc > 3 ? atoi(argv[1]) : 96, NY = argc > 3 ? atoi(argv[2]) : 64, STEPS = argc > 3 ? atoi(argv[3]) : 100;
    int use_sendrecv = argc > 1 && strcmp(argv[argc - 1], "sendrecv") == 0;

    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords);
    int x0, nx, y0, ny;
    split(NX, dims[0], coords[0], &x0, &nx);
    split(NY, dims[1], coords[1], &y0, &ny);

    size_t cells = (size_t)(nx + 2) * (ny + 2);
    double *u = calloc(cells, sizeof *u), *next = calloc(cells, sizeof *next);
    for (int i = 1; i <= nx; i++)
        for (int j = 1; j <= ny; j++)
            u[i * (ny + 2) + j] = initial(x0 + i - 1, y0 + j - 1);

    /* Neighbour order of a 2-D Cartesian grid: up, down (dimension 0), left, right (dimension 1).
     * What goes to each: the first or last interior row or column; what comes from each: the
     * halo row or column on that side. */
    MPI_Datatype send[4] = {patch(nx, ny, 1, 1, 1, ny), patch(nx, ny, nx, 1, 1, ny), patch(nx, ny, 1, 1, nx, 1),
                            patch(nx, ny, 1, ny, nx, 1)};
    MPI_Datatype recv[4] = {patch(nx, ny, 0, 1, 1, ny), patch(nx, ny, nx + 1, 1, 1, ny), patch(nx, ny, 1, 0, nx, 1),
                            patch(nx, ny, 1, ny + 1, nx, 1)};
    int counts[4] = {1, 1, 1, 1};
    MPI_Aint displs[4] = {0, 0, 0, 0};

    double t0 = MPI_Wtime();
    for (int s = 0; s < STEPS; s++) {
        if (use_sendrecv) {
            for (int d = 0; d < 2; d++) {
                int lo, hi;
                MPI_Cart_shift(grid, d, 1, &lo, &hi);
                MPI_Sendrecv(u, 1, send[2 * d], lo, 0, u, 1, recv[2 * d + 1], hi, 0, grid, MPI_STATUS_IGNORE);
                MPI_Sendrecv(u, 1, send[2 * d + 1], hi, 1, u, 1, recv[2 * d], lo, 1, grid, MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Neighbor_alltoallw(u, counts, displs, send, u, counts, displs, recv, grid);
        }
        step(u, next, nx, ny);
        double *t = u;
        u = next, next = t;
    }
    double elapsed = MPI_Wtime() - t0;

    /* Rank 0 gathers every block's interior and checks it against a serial run. */
    double *mine = malloc((size_t)nx * ny * sizeof *mine + 1);
    for (int i = 0; i < nx; i++)
        memcpy(mine + (size_t)i * ny, u + (size_t)(i + 1) * (ny + 2) + 1, (size_t)ny * sizeof *mine);
    if (rank != 0) {
        MPI_Send(mine, nx * ny, MPI_DOUBLE, 0, 2, grid);
    } else {
        double *g = malloc((size_t)NX * NY * sizeof *g);
        for (int r = 0; r < size; r++) {
            int c[2], bx0, bnx, by0, bny;
            MPI_Cart_coords(grid, r, 2, c);
            split(NX, dims[0], c[0], &bx0, &bnx);
            split(NY, dims[1], c[1], &by0, &bny);
            double *blk = r == 0 ? mine : malloc((size_t)bnx * bny * sizeof *blk + 1);
            if (r != 0)
                MPI_Recv(blk, bnx * bny, MPI_DOUBLE, r, 2, grid, MPI_STATUS_IGNORE);
            for (int i = 0; i < bnx; i++)
                memcpy(g + (size_t)(bx0 + i) * NY + by0, blk + (size_t)i * bny, (size_t)bny * sizeof *g);
            if (r != 0)
                free(blk);
        }
        double *su = calloc((size_t)(NX + 2) * (NY + 2), sizeof *su), *sn = calloc((size_t)(NX + 2) * (NY + 2), sizeof *sn);
        for (int i = 1; i <= NX; i++)
            for (int j = 1; j <= NY; j++)
                su[i * (NY + 2) + j] = initial(i - 1, j - 1);
        for (int s = 0; s < STEPS; s++) {
            step(su, sn, NX, NY);
            double *t = su;
            su = sn, sn = t;
        }
        double diff = 0, sum = 0;
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NY; j++) {
                diff = fmax(diff, fabs(g[(size_t)i * NY + j] - su[(size_t)(i + 1) * (NY + 2) + j + 1]));
                sum += g[(size_t)i * NY + j];
            }
        printf("halo: %dx%d grid on %d processes (%dx%d), %d steps by %s in %.3f s: sum %.12f, max difference from "
               "the serial run %g\n",
               NX, NY, size, dims[0], dims[1], STEPS, use_sendrecv ? "MPI_Sendrecv" : "MPI_Neighbor_alltoallw",
               elapsed, sum, diff);
        free(g), free(su), free(sn);
    }
    for (int k = 0; k < 4; k++) {
        MPI_Type_free(&send[k]);
        MPI_Type_free(&recv[k]);
    }
    free(mine), free(u), free(next);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
