/* Alltoall, allgather, gather and scatter through the node component's staging blocks
 * (src/coll/node_large.c; its testlist lines also force the message algorithms, and the
 * results must be the same): blocks of 0, 1 and 1000 ints, around a window (128 KiB / p) and
 * of several windows, with a strided derived type on the send side and plain ints on the
 * receive side (gathers also with plain ints from every process or from odd ranks only),
 * MPI_IN_PLACE wherever the standard allows it, every root, on MPI_COMM_WORLD
 * and on a duplicate of it (which sets up areas of its own at its third blocking collective),
 * and a long run of calls so the ring of blocks goes round many times. Every element that
 * arrived is checked, and what must not be written (gaps of the strided type, the root's own
 * block in place) is checked untouched. */
#include "mpitest.h"

static int rank, size;

/* The value process `from` sends to process `to`, element i, call tag t. */
static int val(int from, int to, size_t i, int t)
{
    return (int)((size_t)from * 1000003u + (size_t)to * 7919u + i * 13u + (size_t)t * 101u) & 0x3fffffff;
}

/* A type of n ints, every other int of 2n (the gaps hold -7). */
static MPI_Datatype strided(size_t n)
{
    MPI_Datatype v;
    MPI_Type_vector((int)n, 1, 2, MPI_INT, &v);
    MPI_Datatype r;
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n * sizeof(int)), &r);
    MPI_Type_free(&v);
    MPI_Type_commit(&r);
    return r;
}

static size_t bad_count(const int *got, size_t n, int from, int to, int t, size_t *first)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != val(from, to, i, t) && !bad++)
            *first = i;
    return bad;
}

/* mode 0: plain ints both sides; 1: the strided type on the send side; 2: MPI_IN_PLACE. */
static void alltoall(MPI_Comm comm, size_t n, int t, int mode)
{
    int *s = malloc(2 * n * (size_t)size * sizeof(int) + 4), *r = malloc(n * (size_t)size * sizeof(int) + 4);
    MPI_Datatype st = strided(n);
    for (int to = 0; to < size; to++)
        for (size_t i = 0; i < n; i++) {
            if (mode == 0) {
                s[(size_t)to * n + i] = val(rank, to, i, t);
            } else {
                s[(size_t)to * 2 * n + 2 * i] = val(rank, to, i, t);
                s[(size_t)to * 2 * n + 2 * i + 1] = -7;
            }
            r[(size_t)to * n + i] = mode == 2 ? val(rank, to, i, t) : -1;
        }
    if (mode == 0)
        MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, comm);
    else if (mode == 1)
        MPI_Alltoall(s, 1, st, r, (int)n, MPI_INT, comm);
    else
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, r, (int)n, MPI_INT, comm);
    size_t bad = 0, first = 0;
    for (int from = 0; from < size; from++)
        bad += bad_count(r + (size_t)from * n, n, from, rank, t, &first);
    CHECK(bad == 0, "alltoall of %zu ints (mode %d, tag %d): %zu wrong, first at %zu", n, mode, t, bad, first);
    CHECK(mode != 1 || n == 0 || s[1] == -7, "alltoall wrote into the send buffer");
    MPI_Type_free(&st);
    free(s);
    free(r);
}

static void allgather(MPI_Comm comm, size_t n, int t, int in_place)
{
    int *s = malloc(2 * n * sizeof(int) + 4), *r = malloc(n * (size_t)size * sizeof(int) + 4);
    MPI_Datatype st = strided(n);
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = val(rank, 0, i, t);
        s[2 * i + 1] = -7;
    }
    for (size_t i = 0; i < n * (size_t)size; i++)
        r[i] = -1;
    if (in_place) {
        for (size_t i = 0; i < n; i++)
            r[(size_t)rank * n + i] = val(rank, 0, i, t);
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, r, (int)n, MPI_INT, comm);
    } else {
        MPI_Allgather(s, 1, st, r, (int)n, MPI_INT, comm);
    }
    size_t bad = 0, first = 0;
    for (int from = 0; from < size; from++)
        bad += bad_count(r + (size_t)from * n, n, from, 0, t, &first);
    CHECK(bad == 0, "allgather of %zu ints (in place %d, tag %d): %zu wrong, first at %zu", n, in_place, t, bad, first);
    MPI_Type_free(&st);
    free(s);
    free(r);
}

/* Gather; `plain`: 0 every process sends the strided type, 1 plain ints, 2 odd ranks plain
 * ints (a gather written in place: those write their blocks into the root's buffer, the
 * others refuse and stage theirs, and the root takes those alone). */
static void gather(MPI_Comm comm, size_t n, int root, int t, int in_place, int plain)
{
    int *s = malloc(2 * n * sizeof(int) + 4), *r = malloc(n * (size_t)size * sizeof(int) + 4);
    MPI_Datatype st = strided(n);
    bool contiguous = plain == 1 || (plain == 2 && rank % 2);
    for (size_t i = 0; i < n; i++) {
        s[contiguous ? i : 2 * i] = val(rank, root, i, t);
        if (!contiguous)
            s[2 * i + 1] = -7;
    }
    for (size_t i = 0; i < n * (size_t)size; i++)
        r[i] = -1;
    if (rank == root && in_place) {
        for (size_t i = 0; i < n; i++)
            r[(size_t)rank * n + i] = val(rank, root, i, t);
        MPI_Gather(MPI_IN_PLACE, 0, MPI_INT, r, (int)n, MPI_INT, root, comm);
    } else {
        MPI_Gather(s, contiguous ? (int)n : 1, contiguous ? MPI_INT : st, r, (int)n, MPI_INT, root, comm);
    }
    if (rank == root) {
        size_t bad = 0, first = 0;
        for (int from = 0; from < size; from++)
            bad += bad_count(r + (size_t)from * n, n, from, root, t, &first);
        CHECK(bad == 0, "gather of %zu ints to %d (in place %d, plain %d, tag %d): %zu wrong, first at %zu", n, root,
              in_place, plain, t, bad, first);
    }
    MPI_Type_free(&st);
    free(s);
    free(r);
}

static void scatter(MPI_Comm comm, size_t n, int root, int t, int in_place)
{
    int *s = malloc(2 * n * (size_t)size * sizeof(int) + 4), *r = malloc(n * (size_t)size * sizeof(int) + 4);
    MPI_Datatype st = strided(n);
    for (int to = 0; to < size; to++)
        for (size_t i = 0; i < n; i++) {
            s[(size_t)to * 2 * n + 2 * i] = val(root, to, i, t);
            s[(size_t)to * 2 * n + 2 * i + 1] = -7;
        }
    for (size_t i = 0; i < n * (size_t)size; i++)
        r[i] = -1;
    if (rank == root && in_place) {
        MPI_Scatter(s, 1, st, MPI_IN_PLACE, (int)n, MPI_INT, root, comm);
        size_t bad = 0;
        for (size_t i = 0; i < n * (size_t)size; i++)
            bad += r[i] != -1;
        CHECK(bad == 0, "scatter in place wrote %zu ints into an unused buffer", bad);
    } else {
        MPI_Scatter(s, 1, st, r, (int)n, MPI_INT, root, comm);
        size_t bad = 0, first = 0;
        bad = bad_count(r, n, root, rank, t, &first);
        CHECK(bad == 0, "scatter of %zu ints from %d (tag %d): %zu wrong, first at %zu", n, root, t, bad, first);
    }
    MPI_Type_free(&st);
    free(s);
    free(r);
}

static void all_kinds(MPI_Comm comm, size_t n, int t)
{
    for (int mode = 0; mode < 3; mode++)
        alltoall(comm, n, t, mode);
    allgather(comm, n, t, 0);
    allgather(comm, n, t + 1, 1);
    for (int root = 0; root < size; root += size > 4 ? size / 3 : 1) {
        gather(comm, n, root, t + 2, 0, 0);
        gather(comm, n, root, t + 3, 1, 0);
        gather(comm, n, root, t + 6, 0, 1);
        gather(comm, n, root, t + 7, 1, 2);
        scatter(comm, n, root, t + 4, 0);
        scatter(comm, n, root, t + 5, 1);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t window = (128 * 1024 / (size_t)size) / sizeof(int);
    size_t sizes[] = {0, 1, 1000, window - 1, window, window + 1, 3 * window + 5, 40000};
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int t = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        all_kinds(MPI_COMM_WORLD, sizes[i], t);
        all_kinds(dup, sizes[i], t + 10);
        t += 20;
    }
    /* Gathers to a new root each time, the mixed kind (a root that takes from some, while the
     * others may already write into the next root) between ones where every process writes. */
    for (int k = 0; k < 60; k++)
        gather(k / 2 % 2 ? dup : MPI_COMM_WORLD, window + 3 + (size_t)(k % 3), k % size, t++, 0, k % 2 ? 1 : 2);
    /* and mixed ones of more pieces than the ring has blocks */
    for (int k = 0; k < 4; k++)
        gather(MPI_COMM_WORLD, 400000, (k * (size - 1)) % size, t++, k % 2, k < 2 ? 2 : 1);
    for (int k = 0; k < 200; k++) {
        size_t n = (size_t)(k * 7919) % 9000;
        alltoall(k % 2 ? dup : MPI_COMM_WORLD, n, t++, k % 3);
        allgather(MPI_COMM_WORLD, n / 2, t++, k % 2);
        if (k % 5 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&dup);
    return mt_finish();
}
