/* halo.c: the halo exchange of a 2-D stencil code, as examples/halo.c does it. Rows (us = time
 * per exchange, as the slowest process saw it; "bytes" = the size of one row face, see below):
 *   halo_neighbor_alltoallw  one MPI_Neighbor_alltoallw on the Cartesian communicator, with
 *                            subarray datatypes describing the edges and halos in place
 *                            (sendbuf == recvbuf: the same array, as in examples/halo.c);
 *   halo_sendrecv            the same exchange by MPI_Cart_shift (once, before timing) and four
 *                            MPI_Sendrecv calls, two per dimension, with the same datatypes.
 *
 * The processes form a non-periodic 2-D grid from MPI_Dims_create and MPI_Cart_create (so at
 * -n 4 each process has 2 neighbours, at -n 9 the middle one has 4 and the corners 2). Each owns
 * an R x N block of doubles (C order: a row of N doubles is contiguous) with a one-cell halo,
 * (R + 2) x (N + 2) in all; one exchange refreshes the 4 halo sides from the 4 neighbours: the
 * first and last interior rows (N doubles, contiguous) go up and down, the first and last
 * interior columns (R doubles, one every N + 2) left and right.
 *
 * Face sizes: bytes = N * 8 = 1 KiB, 8 KiB, 64 KiB and 1 MiB (N = 128 ... 131072). The block is
 * square (R = N: all four faces the same size) while it holds at most 2^23 doubles (64 MiB);
 * beyond that it keeps its row length and has fewer rows, R = 2^23 / N, so the memory stays at
 * 64 MiB a process:
 *   bytes=1024     128 x 128       row faces 1 KiB, column faces 1 KiB
 *   bytes=8192     1024 x 1024     row faces 8 KiB, column faces 8 KiB
 *   bytes=65536    1024 x 8192     row faces 64 KiB, column faces 8 KiB
 *   bytes=1048576  64 x 131072     row faces 1 MiB, column faces 512 B
 * (a square block with 64 KiB faces would take 512 MiB a process, with 1 MiB faces 128 GiB).
 *
 * Timing, as in collectives.c: exchanges run back to back in batches sized to take about
 * `budget` seconds (found by doubling a batch until it takes a tenth of that; this also warms
 * up), each batch after a barrier; a batch's figure is the slowest process's time / exchanges,
 * and each row is the median of REPS batches. Checking: every interior cell holds a value unique
 * to its process and place, every halo cell -1 before a variant is timed; afterwards each
 * process checks every halo cell against its neighbour's edge (or -1 where there is no
 * neighbour, and in the corners) and that no interior cell changed, and aborts on a mismatch.
 * usage: mpiexec -n P halo [max_face_bytes [budget_seconds]]   (defaults 1 MiB and 0.2) */
#include "common.h"

#define REPS 5
#define MAX_CELLS ((size_t)1 << 23)

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* A rows x cols patch of the (R + 2) x (N + 2) array starting at (r, c). */
static MPI_Datatype patch(int R, int N, int r, int c, int rows, int cols)
{
    int sizes[2] = {R + 2, N + 2}, sub[2] = {rows, cols}, start[2] = {r, c};
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

struct block {
    MPI_Comm grid;
    int rank, R, N;
    size_t width, cells; /* N + 2; (R + 2) * (N + 2) */
    double *u;
    int nb[4];           /* neighbours in MPI_Neighbor_alltoallw's order: up, down, left, right */
    MPI_Datatype send[4], recv[4];
};

enum variant { ALLTOALLW, SENDRECV };
static const char *names[] = {"halo_neighbor_alltoallw", "halo_sendrecv"};

static void exchange(enum variant v, struct block *b)
{
    if (v == ALLTOALLW) {
        static const int counts[4] = {1, 1, 1, 1};
        static const MPI_Aint displs[4] = {0, 0, 0, 0};
        MPI_Neighbor_alltoallw(b->u, counts, displs, b->send, b->u, counts, displs, b->recv, b->grid);
        return;
    }
    for (int d = 0; d < 2; d++) {
        int lo = b->nb[2 * d], hi = b->nb[2 * d + 1];
        MPI_Sendrecv(b->u, 1, b->send[2 * d], lo, 0, b->u, 1, b->recv[2 * d + 1], hi, 0, b->grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(b->u, 1, b->send[2 * d + 1], hi, 1, b->u, 1, b->recv[2 * d], lo, 1, b->grid, MPI_STATUS_IGNORE);
    }
}

/* What cell (i, j) of process `rank`'s block holds: unique to the process and the place. */
static double value(const struct block *b, int rank, size_t i, size_t j)
{
    return (double)rank * (double)b->cells + (double)(i * b->width + j);
}

static int is_halo(const struct block *b, size_t i, size_t j)
{
    return i == 0 || j == 0 || i == (size_t)b->R + 1 || j == (size_t)b->N + 1;
}

static void fill(struct block *b)
{
    for (size_t i = 0; i < (size_t)b->R + 2; i++)
        for (size_t j = 0; j < b->width; j++)
            b->u[i * b->width + j] = is_halo(b, i, j) ? -1.0 : value(b, b->rank, i, j);
}

/* What the halo cell (i, j) must hold after an exchange: the facing edge cell of the neighbour
 * on that side, or -1 (no neighbour; the corners, which no face covers). */
static double want(const struct block *b, size_t i, size_t j)
{
    size_t R = (size_t)b->R, N = (size_t)b->N;
    int corner = (i == 0 || i == R + 1) && (j == 0 || j == N + 1);
    if (corner)
        return -1.0;
    if (i == 0)
        return b->nb[0] == MPI_PROC_NULL ? -1.0 : value(b, b->nb[0], R, j);
    if (i == R + 1)
        return b->nb[1] == MPI_PROC_NULL ? -1.0 : value(b, b->nb[1], 1, j);
    if (j == 0)
        return b->nb[2] == MPI_PROC_NULL ? -1.0 : value(b, b->nb[2], i, N);
    return b->nb[3] == MPI_PROC_NULL ? -1.0 : value(b, b->nb[3], i, 1);
}

static void verify(enum variant v, const struct block *b)
{
    for (size_t i = 0; i < (size_t)b->R + 2; i++)
        for (size_t j = 0; j < b->width; j++) {
            double w = is_halo(b, i, j) ? want(b, i, j) : value(b, b->rank, i, j), got = b->u[i * b->width + j];
            if (got != w) {
                fprintf(stderr, "halo: %s, %dx%d block, face %zu bytes: process %d: wrong %s cell (%zu, %zu): %.17g, "
                        "not %.17g\n", names[v], b->R, b->N, (size_t)b->N * 8, b->rank,
                        is_halo(b, i, j) ? "halo" : "interior", i, j, got, w);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
}

/* Time per exchange (seconds): the median of REPS batches of about `budget` seconds. */
static double timed(enum variant v, struct block *b, double budget)
{
    double iters = 1;
    for (;;) { /* calibrate: double the batch until it takes a tenth of the budget */
        MPI_Barrier(b->grid);
        double t0 = MPI_Wtime();
        for (int i = 0; i < (int)iters; i++)
            exchange(v, b);
        double t = MPI_Wtime() - t0, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, b->grid);
        if (worst > budget / 10 || iters >= (1 << 20)) {
            iters = iters * budget / (worst > 1e-9 ? worst : 1e-9);
            break;
        }
        iters *= 2;
    }
    int n = iters < 3 ? 3 : iters > (1 << 24) ? (1 << 24) : (int)iters;
    double t[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        MPI_Barrier(b->grid);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++)
            exchange(v, b);
        double dt = (MPI_Wtime() - t0) / n;
        MPI_Allreduce(&dt, &t[rep], 1, MPI_DOUBLE, MPI_MAX, b->grid);
    }
    return median(t, REPS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 20;
    double budget = argc > 2 ? atof(argv[2]) : 0.2; /* seconds per batch */

    struct block b;
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &b.grid);
    MPI_Comm_rank(b.grid, &b.rank);
    MPI_Cart_shift(b.grid, 0, 1, &b.nb[0], &b.nb[1]);
    MPI_Cart_shift(b.grid, 1, 1, &b.nb[2], &b.nb[3]);

    static const size_t faces[] = {1 << 10, 8 << 10, 64 << 10, 1 << 20};
    for (size_t s = 0; s < sizeof faces / sizeof *faces && faces[s] <= max; s++) {
        size_t N = faces[s] / 8, R = N * N <= MAX_CELLS ? N : MAX_CELLS / N;
        b.R = (int)R, b.N = (int)N, b.width = N + 2, b.cells = (R + 2) * (N + 2);
        b.u = bench_alloc(b.cells * sizeof(double));
        /* Up, down: the first and last interior rows out, the halo rows in; left, right: the
         * first and last interior columns out, the halo columns in. */
        int r = b.R, n = b.N;
        b.send[0] = patch(r, n, 1, 1, 1, n), b.send[1] = patch(r, n, r, 1, 1, n);
        b.send[2] = patch(r, n, 1, 1, r, 1), b.send[3] = patch(r, n, 1, n, r, 1);
        b.recv[0] = patch(r, n, 0, 1, 1, n), b.recv[1] = patch(r, n, r + 1, 1, 1, n);
        b.recv[2] = patch(r, n, 1, 0, r, 1), b.recv[3] = patch(r, n, 1, n + 1, r, 1);
        for (int v = ALLTOALLW; v <= SENDRECV; v++) {
            fill(&b);
            double t = timed((enum variant)v, &b, budget);
            verify((enum variant)v, &b);
            MPI_Barrier(b.grid); /* no figure before every process has checked its halos */
            if (b.rank == 0)
                printf("%s np=%d bytes=%zu value=%.3f unit=us\n", names[v], size, faces[s], t * 1e6);
            fflush(stdout);
        }
        for (int k = 0; k < 4; k++) {
            MPI_Type_free(&b.send[k]);
            MPI_Type_free(&b.recv[k]);
        }
        bench_free(b.u);
    }
    MPI_Comm_free(&b.grid);
    MPI_Finalize();
    return 0;
}
