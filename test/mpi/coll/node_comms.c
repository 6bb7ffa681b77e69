/* The node component on communicators other than MPI_COMM_WORLD (src/coll/node.h): from its
 * third blocking collective on, a communicator whose processes share a node gets shared areas of its
 * own (a memory file its members map, visible in /proc/self/maps as "courier-coll"), and its
 * barrier, small and large reductions and large broadcasts take the shared-memory paths.
 * Checked here: results on a duplicate of MPI_COMM_WORLD, on the two halves of a split whose
 * ranks run in reverse order (both halves at once), and on a group's subset communicator,
 * interleaved with MPI_COMM_WORLD's own calls, and on the node's communicator in a job of
 * several nodes (those across nodes get none); an operation that does not commute (rank order
 * of the communicator, not of the world); that the areas appear after setup and go with
 * MPI_Comm_free, over a hundred communicators made, used and freed. */
#include "mpitest.h"

#include "affine.h"

static int wrank, wsize;

/* Mappings of the node component's per-communicator memory files in this process. */
static int coll_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        n += strstr(line, "courier-coll") != NULL;
    fclose(f);
    return n;
}

/* 1 when `c` (collective over it) has two or more processes and all of them share a node. */
static int shared_areas(MPI_Comm c)
{
    int size, nsize;
    MPI_Comm n;
    MPI_Comm_size(c, &size);
    MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &n);
    MPI_Comm_size(n, &nsize);
    MPI_Comm_free(&n);
    return size > 1 && nsize == size;
}

/* Every kind of call the component serves, on `comm`, with checks; `k` varies the data. */
static void exercise(MPI_Comm comm, MPI_Op affine_op, int k)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Barrier(comm);
    /* Small allreduce and reduce (slots). */
    int v = rank + k, sum = -1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == size * (size - 1) / 2 + size * k, "k %d: small allreduce %d", k, sum);
    affine mine[3], out[3];
    for (int i = 0; i < 3; i++)
        mine[i] = map_of(rank, k, i);
    int root = k % size;
    MPI_Reduce(mine, out, 3, MPI_2INT, affine_op, root, comm);
    if (rank == root)
        for (int i = 0; i < 3; i++) {
            affine w = expected(size, k, i);
            CHECK(out[i].a == w.a && out[i].b == w.b, "k %d: small reduce element %d (%d,%d) want (%d,%d)", k, i,
                  out[i].a, out[i].b, w.a, w.b);
        }
    /* Large allreduce (staging blocks), in place every other time. */
    int n = 40000 + k;
    long long *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    for (int i = 0; i < n; i++)
        a[i] = (long long)rank * 100003 + i + k;
    if (k % 2) {
        memcpy(b, a, (size_t)n * sizeof *a);
        MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_LONG_LONG, MPI_SUM, comm);
    } else {
        MPI_Allreduce(a, b, n, MPI_LONG_LONG, MPI_SUM, comm);
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += b[i] != (long long)size * (size - 1) / 2 * 100003 + (long long)size * (i + k);
    CHECK(bad == 0, "k %d: large allreduce, %d wrong", k, bad);
    /* Large reduce of maps that do not commute: the communicator's rank order. */
    affine *m = malloc(30000 * sizeof *m), *r = malloc(30000 * sizeof *r);
    for (int i = 0; i < 30000; i++)
        m[i] = map_of(rank, k, i);
    MPI_Reduce(m, r, 30000, MPI_2INT, affine_op, (root + 1) % size, comm);
    if (rank == (root + 1) % size) {
        bad = 0;
        for (int i = 0; i < 30000; i++) {
            affine w = expected(size, k, i);
            bad += r[i].a != w.a || r[i].b != w.b;
        }
        CHECK(bad == 0, "k %d: large reduce of affine maps, %d wrong", k, bad);
    }
    /* Large broadcast. */
    for (int i = 0; i < n; i++)
        a[i] = rank == root ? (long long)i * 3 + k : -1;
    MPI_Bcast(a, n, MPI_LONG_LONG, root, comm);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += a[i] != (long long)i * 3 + k;
    CHECK(bad == 0, "k %d: large bcast from %d, %d wrong", k, root, bad);
    free(a);
    free(b);
    free(m);
    free(r);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Op op;
    MPI_Op_create(compose, 0, &op);
    /* The processes of this node, which the shared-memory collectives serve in a job of several. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);

    MPI_Comm dup, half, sub = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* Halves whose ranks run in reverse world order. */
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half);
    /* Every process but world rank 0 (if there are at least 3). */
    MPI_Group wg, sg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int zero = 0;
    MPI_Group_excl(wg, wsize >= 3 ? 1 : 0, &zero, &sg);
    if (wsize >= 3 && wrank != 0)
        MPI_Comm_create_group(MPI_COMM_WORLD, sg, 7, &sub);
    MPI_Group_free(&sg);
    MPI_Group_free(&wg);

    for (int k = 0; k < 12; k++) {
        exercise(dup, op, k);
        exercise(MPI_COMM_WORLD, op, k + 100);
        exercise(half, op, k + 200);
        if (sub != MPI_COMM_NULL)
            exercise(sub, op, k + 300);
        exercise(node, op, k + 400);
    }
    /* Once set up, each communicator of two or more processes that share a node has its areas
     * (mpiexec --simulate-nodes puts the processes on several nodes). */
    int expect_maps = shared_areas(dup) + shared_areas(half) + shared_areas(node);
    if (sub != MPI_COMM_NULL)
        expect_maps += shared_areas(sub);
    CHECK(coll_maps() == expect_maps, "%d courier-coll mappings, expected %d", coll_maps(), expect_maps);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&node);
    CHECK(coll_maps() == 0, "%d courier-coll mappings left after MPI_Comm_free", coll_maps());

    /* Many communicators made, used past setup, freed: nothing stays mapped. */
    for (int i = 0; i < 100; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        for (int j = 0; j < 4; j++)
            MPI_Barrier(c);
        int one = 1, all = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, c);
        CHECK(all == wsize, "dup %d: allreduce %d", i, all);
        MPI_Comm_free(&c);
    }
    CHECK(coll_maps() == 0, "%d courier-coll mappings left after 100 communicators", coll_maps());
    MPI_Op_free(&op);
    return mt_finish();
}
