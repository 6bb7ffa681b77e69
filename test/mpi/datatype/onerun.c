/* onerun.c: types whose data is one run away from the buffer's start (a row of a subarray,
 * an indexed block with a lower bound, a resized run with gaps between elements): sent and
 * received at eager, long-eager and rendezvous sizes, one element and several, into contiguous
 * and strided buffers, between every pair of processes; the one-run types without packing
 * (MPI_T counter pt2pt.packed_bytes). */
#include "mpitest.h"

static void fill(double *a, size_t n, double base)
{
    for (size_t i = 0; i < n; i++)
        a[i] = base + (double)i;
}

/* Row r of a rows x cols grid of doubles as a subarray: the whole row (inset 0), or its interior
 * without `inset` cells at each end, as a halo exchange sends it (one run at r * cols + inset
 * doubles; before it counted as one run only at the grid's start). */
static void check_row(int rows, int cols, int inset)
{
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = (size_t)rows * cols;
    int len = cols - 2 * inset;
    double *grid = malloc(n * sizeof *grid), *flat = malloc((size_t)cols * 2 * sizeof *flat);
    int sizes[2] = {rows, cols}, sub[2] = {1, len};
    for (int r = 0; r < rows; r += rows > 2 ? rows - 1 : 1) {
        int start[2] = {r, inset};
        MPI_Datatype row;
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &row);
        MPI_Type_commit(&row);
        for (int peer = 0; peer < size; peer++) {
            if (peer == rank && size > 1)
                continue;
            fill(grid, n, 1000.0 * rank);
            for (size_t i = 0; i < (size_t)cols * 2; i++)
                flat[i] = -1;
            MPI_Request rq[2];
            MPI_Irecv(flat, len, MPI_DOUBLE, peer, r, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(grid, 1, row, peer, r, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            for (int j = 0; j < len; j++)
                CHECK(flat[j] == 1000.0 * peer + (double)((size_t)r * cols + inset + j),
                      "row %d (inset %d) of %dx%d from %d: [%d] = %g", r, inset, rows, cols, peer, j, flat[j]);
            CHECK(flat[len] == -1, "wrote past the row");
            /* and back into a row of a zeroed grid */
            for (size_t i = 0; i < n; i++)
                grid[i] = 0;
            fill(flat, (size_t)len, 7000.0 * rank);
            MPI_Irecv(grid, 1, row, peer, r, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(flat, len, MPI_DOUBLE, peer, r, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            for (size_t i = 0; i < n; i++) {
                size_t j = i % (size_t)cols;
                bool in_row = i / (size_t)cols == (size_t)r && j >= (size_t)inset && j < (size_t)(inset + len);
                double want = in_row ? 7000.0 * peer + (double)(j - (size_t)inset) : 0;
                if (grid[i] != want) {
                    CHECK(0, "row %d (inset %d) into %dx%d from %d: cell %zu = %g, want %g", r, inset, rows, cols, peer,
                          i, grid[i], want);
                    break;
                }
            }
        }
        MPI_Type_free(&row);
    }
    free(grid);
    free(flat);
}

/* Several elements of a run type whose extent leaves gaps: not one run as a whole. */
static void check_gaps(int len)
{
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype run, spaced;
    int bl = len, disp = 3;
    MPI_Type_indexed(1, &bl, &disp, MPI_INT, &run); /* one run, 3 ints from the start */
    MPI_Type_create_resized(run, 0, (MPI_Aint)(len + 5) * (MPI_Aint)sizeof(int), &spaced);
    MPI_Type_commit(&run);
    MPI_Type_commit(&spaced);
    int count = 3, span = count * (len + 5);
    int *a = malloc((size_t)span * sizeof *a), *b = malloc((size_t)len * count * sizeof *b);
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    for (int i = 0; i < span; i++)
        a[i] = rank * 1000000 + i;
    MPI_Sendrecv(a, count, spaced, to, 5, b, len * count, MPI_INT, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int e = 0; e < count; e++)
        for (int i = 0; i < len; i++) {
            int want = from * 1000000 + e * (len + 5) + 3 + i;
            if (b[e * len + i] != want) {
                CHECK(0, "element %d [%d] of %d: %d, want %d", e, i, len, b[e * len + i], want);
                e = count;
                break;
            }
        }
    /* one element of the plain run type, by itself */
    MPI_Sendrecv(a, 1, run, to, 6, b, len, MPI_INT, from, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < len; i++)
        if (b[i] != from * 1000000 + 3 + i) {
            CHECK(0, "run [%d] of %d: %d", i, len, b[i]);
            break;
        }
    MPI_Type_free(&run);
    MPI_Type_free(&spaced);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    /* Types that are one run move as contiguous bytes, never packed or unpacked: the MPI_T
     * counter pt2pt.packed_bytes stays where it was across every row (and a type that is not
     * one run, below, moves it). */
    unsigned long long packed = mt_pvar_value("pt2pt.packed_bytes");
    int shapes[][2] = {{4, 16}, {3, 1024}, {4, 16384}, {3, 131072}};
    for (int s = 0; s < 4; s++)
        for (int inset = 0; inset <= 1; inset++)
            check_row(shapes[s][0], shapes[s][1], inset);
    unsigned long long after_rows = mt_pvar_value("pt2pt.packed_bytes");
    CHECK(after_rows == packed, "rows of subarrays were packed: pt2pt.packed_bytes %llu -> %llu", packed, after_rows);
    int lens[] = {1, 100, 5000, 70000, 300000};
    for (int l = 0; l < 5; l++)
        check_gaps(lens[l]);
    unsigned long long after_gaps = mt_pvar_value("pt2pt.packed_bytes");
    CHECK(after_gaps > after_rows, "elements with gaps between them were not counted as packed (%llu)", after_gaps);
    return mt_finish();
}
