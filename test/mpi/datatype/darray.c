/* MPI_Type_create_darray: for block, cyclic and undistributed dimensions in C and Fortran order,
 * in one to three dimensions, every rank's type is checked against ownership computed here
 * from the distribution's definition:
 *   - MPI_Pack of the global array (element = its global index) gives exactly the indices the
 *     rank owns, in array order;
 *   - rank 0 receives every rank's part into a global array through that rank's darray type, and
 *     every element arrives once, from its owner, with the gaps between parts untouched;
 *   - bounds are the whole array's, and the contents give back the arguments.
 * Bad arguments return MPI_ERR_ARG under MPI_ERRORS_RETURN. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int ndims, gsizes[3], distribs[3], dargs[3], order;
} config;

static int errs;
#define CHECK(cond, ...) do { if (!(cond)) { errs++; if (errs < 20) { printf(__VA_ARGS__); printf("\n"); } } } while (0)

/* Does process coordinate `coord` of a dimension own index `idx`? From the standard's words. */
static int owns(int idx, int g, int distrib, int darg, int p, int coord)
{
    if (distrib == MPI_DISTRIBUTE_NONE)
        return 1;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        return idx / b == coord;
    }
    int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (idx / b) % p == coord;
}

/* A process grid of `size` over the distributed dimensions (undistributed ones get 1). */
static void grid(const config *c, int size, int *psizes)
{
    int dims[3] = {0, 0, 0}, nd = 0, map[3];
    for (int i = 0; i < c->ndims; i++) {
        psizes[i] = 1;
        if (c->distribs[i] != MPI_DISTRIBUTE_NONE)
            map[nd++] = i;
    }
    /* spread size over nd dimensions: the first gets the largest factor not above size^(1/nd) */
    int left = size;
    for (int k = 0; k < nd; k++) {
        int f = left;
        if (k < nd - 1) {
            f = 1;
            for (int d = 1; d <= left; d++)
                if (left % d == 0 && (long)d * d <= left)
                    f = d;
        }
        dims[k] = f;
        left /= f;
    }
    for (int k = 0; k < nd; k++)
        psizes[map[k]] = dims[k];
}

static MPI_Datatype make(const config *c, int size, int rank, const int *psizes)
{
    MPI_Datatype t;
    int rc = MPI_Type_create_darray(size, rank, c->ndims, c->gsizes, c->distribs, c->dargs, psizes, c->order,
                                    MPI_INT, &t);
    CHECK(rc == MPI_SUCCESS, "darray: rc=%d", rc);
    MPI_Type_commit(&t);
    return t;
}

/* The global index of element number k in memory order, as coordinates. */
static void coords_of(const config *c, long k, int *x)
{
    for (int j = 0; j < c->ndims; j++) {
        int i = c->order == MPI_ORDER_C ? c->ndims - 1 - j : j;
        x[i] = (int)(k % c->gsizes[i]);
        k /= c->gsizes[i];
    }
}

static void run(const config *c, int size, int rank)
{
    int psizes[3];
    grid(c, size, psizes);
    long total = 1;
    for (int i = 0; i < c->ndims; i++)
        total *= c->gsizes[i];
    int *global = malloc(total * sizeof *global), *packed = malloc(total * sizeof *packed + 4);
    for (long k = 0; k < total; k++)
        global[k] = (int)k;

    /* the rank's coordinates in the row-major process grid */
    int me[3];
    for (int i = c->ndims - 1, r = rank; i >= 0; i--) {
        me[i] = r % psizes[i];
        r /= psizes[i];
    }
    MPI_Datatype t = make(c, size, rank, psizes);
    int tsize;
    MPI_Aint lb, extent;
    MPI_Type_size(t, &tsize);
    MPI_Type_get_extent(t, &lb, &extent);
    CHECK(lb == 0 && extent == total * (MPI_Aint)sizeof(int), "bounds lb=%ld extent=%ld, want 0 and %ld", (long)lb,
          (long)extent, total * (long)sizeof(int));

    int pos = 0;
    MPI_Pack(global, 1, t, packed, (int)(total * sizeof(int)), &pos, MPI_COMM_SELF);
    CHECK(pos == tsize, "packed %d bytes, type size %d", pos, tsize);
    long n = 0;
    for (long k = 0; k < total; k++) {
        int x[3], mine = 1;
        coords_of(c, k, x);
        for (int i = 0; i < c->ndims; i++)
            mine &= owns(x[i], c->gsizes[i], c->distribs[i], c->dargs[i], psizes[i], me[i]);
        if (mine) {
            CHECK(n * (long)sizeof(int) < tsize && packed[n] == (int)k, "rank %d: packed[%ld] = %d, want %ld", rank,
                  n, n * (long)sizeof(int) < tsize ? packed[n] : -1, k);
            n++;
        }
    }
    CHECK(n * (long)sizeof(int) == tsize, "rank %d owns %ld elements, the type has %d bytes", rank, n, tsize);

    /* contents give back the arguments */
    int ni, na, nt, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * c->ndims + 4 && na == 0 && nt == 1, "envelope %d %d %d %d", comb,
          ni, na, nt);
    int ints[16];
    MPI_Datatype old;
    MPI_Type_get_contents(t, 16, 0, 1, ints, NULL, &old);
    CHECK(ints[0] == size && ints[1] == rank && ints[2] == c->ndims && ints[3 + 4 * c->ndims] == c->order &&
              old == MPI_INT, "contents");
    for (int i = 0; i < c->ndims; i++)
        CHECK(ints[3 + i] == c->gsizes[i] && ints[3 + c->ndims + i] == c->distribs[i] &&
                  ints[3 + 2 * c->ndims + i] == c->dargs[i] && ints[3 + 3 * c->ndims + i] == psizes[i],
              "contents of dimension %d", i);

    /* every part to rank 0, received through the sender's darray type */
    if (rank == 0) {
        int *got = malloc(total * sizeof *got), *hits = calloc(total, sizeof *hits);
        for (long k = 0; k < total; k++)
            got[k] = -1;
        for (int r = 0; r < size; r++) {
            MPI_Datatype tr = make(c, size, r, psizes);
            int *part = malloc(total * sizeof *part + 4);
            for (long k = 0; k < total; k++)
                part[k] = -7;
            if (r == 0)
                MPI_Sendrecv(packed, tsize / 4, MPI_INT, 0, 1, part, 1, tr, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Recv(part, 1, tr, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long k = 0; k < total; k++)
                if (part[k] != -7) {
                    hits[k]++;
                    got[k] = part[k];
                }
            free(part);
            MPI_Type_free(&tr);
        }
        for (long k = 0; k < total; k++)
            CHECK(hits[k] == 1 && got[k] == (int)k, "element %ld arrived %d times, value %d", k, hits[k], got[k]);
        free(got);
        free(hits);
    } else {
        MPI_Send(packed, tsize / 4, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    MPI_Type_free(&t);
    free(global);
    free(packed);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
              D = MPI_DISTRIBUTE_DFLT_DARG;
    config configs[] = {
        {1, {17}, {B}, {D}, MPI_ORDER_C},
        {1, {17}, {C}, {D}, MPI_ORDER_C},
        {1, {23}, {C}, {3}, MPI_ORDER_FORTRAN},
        {1, {40}, {B}, {40}, MPI_ORDER_C},          /* one process owns everything, the others nothing */
        {2, {7, 9}, {B, C}, {D, 2}, MPI_ORDER_C},
        {2, {7, 9}, {C, B}, {3, D}, MPI_ORDER_FORTRAN},
        {2, {6, 5}, {N, C}, {D, 2}, MPI_ORDER_C},
        {3, {5, 4, 6}, {C, N, B}, {2, D, D}, MPI_ORDER_C},
        {3, {5, 4, 6}, {B, C, C}, {D, 1, 4}, MPI_ORDER_FORTRAN},
    };
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        /* a block of darg = gsize needs psizes whose product still is size: fine for any size */
        run(&configs[i], size, rank);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* bad arguments */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;
    int g[1] = {10}, dist[1] = {B}, darg[1] = {D}, ps[1] = {size + 1}, cls;
    int rc = MPI_Type_create_darray(size, rank, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "psizes that do not multiply to size: class %d", cls);
    ps[0] = size, darg[0] = 1; /* blocks of 1 cannot cover 10 elements unless size >= 10 */
    rc = MPI_Type_create_darray(size, rank, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(rc, &cls);
    if (size < 10)
        CHECK(cls == MPI_ERR_ARG, "blocks that do not cover the dimension: class %d", cls);
    else if (rc == MPI_SUCCESS)
        MPI_Type_free(&t);
    dist[0] = 99, darg[0] = D;
    rc = MPI_Type_create_darray(size, rank, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "distribution 99: class %d", cls);

    int all;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d errors\n" : " No Errors\n", all);
    MPI_Finalize();
    return errs != 0;
}
