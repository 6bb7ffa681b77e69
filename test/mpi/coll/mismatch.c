/* mismatch.c: collectives whose processes pass amounts that do not match (an erroneous program,
 * and a common mistake: MPICH's errors/coll tests exist for it) end, at every process, with
 * MPI_ERR_TRUNCATE where a process's data is wrong, and never hang; the communicator works
 * afterwards. Before, a broadcast whose root sent more than a middle process of the tree
 * expected stopped that process's schedule at the truncation, and the processes below it
 * waited for ever; a process whose own block did not match itself (MPI_Allgather's sendcount
 * against its recvcount) returned at once and left the others waiting for its block.
 * What this cannot cover: counts on different sides of a size threshold choose different
 * algorithms (an allreduce of 1 element and one of 10 under COURIER_COLL_ALLREDUCE=rabenseifner,
 * which needs as many elements as processes), whose messages do not pair up; such a program
 * hangs as it does with MPICH (its errors/coll tests mark those xfail). The counts here differ
 * by no more than that: 1 element against 10, and at the end 600, 4000 and 300000 elements
 * against one fewer (and for MPI_Alltoallv one more), which cross the node slots' size, the staging blocks' and the direct scatter's
 * threshold alike at every process. */
#include "mpitest.h"

#include <unistd.h>

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* A correct call after each wrong one: the data arrives, so no stale message or state is left. */
static void check_works(int rank, int size)
{
    int v[10];
    for (int i = 0; i < 10; i++)
        v[i] = rank == size - 1 ? 7 * i + 1 : -1;
    CHECK_CLASS(MPI_Bcast(v, 10, MPI_INT, size - 1, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < 10; i++)
        CHECK(v[i] == 7 * i + 1, "after a mismatch, MPI_Bcast delivered v[%d]=%d, expected %d", i, v[i], 7 * i + 1);
    int sum = 0;
    CHECK_CLASS(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(sum == size * (size - 1) / 2, "after a mismatch, MPI_Allreduce gave %d, expected %d", sum,
          size * (size - 1) / 2);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[10] = {0}, *rbuf = calloc((size_t)size * 10, sizeof *rbuf);

    /* Broadcasts from each root: the root sends fewer elements than the others expect (every
     * other process has less data than it asked for), then more (every other process is
     * truncated). The root learns of it only where the algorithm sends it data back (scatter +
     * allgather). */
    for (int root = 0; root < size && size > 1; root++) {
        for (int longer = 0; longer < 2; longer++) {
            int mine = rank == root ? (longer ? 10 : 1) : (longer ? 1 : 10);
            int rc = MPI_Bcast(buf, mine, MPI_INT, root, MPI_COMM_WORLD);
            CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank == root && rc == MPI_SUCCESS),
                  "MPI_Bcast from root %d with %s counts at the root: class %d at rank %d", root,
                  longer ? "larger" : "smaller", class_of(rc), rank);
            MPI_Request req;
            rc = MPI_Ibcast(buf, mine, MPI_INT, root, MPI_COMM_WORLD, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank == root && rc == MPI_SUCCESS),
                  "MPI_Ibcast from root %d with %s counts at the root: class %d at rank %d", root,
                  longer ? "larger" : "smaller", class_of(rc), rank);
        }
        check_works(rank, size);
    }

    /* Rank 0's own block does not match itself: it learns at once, and so do the others, whose
     * data from it is wrong (its empty block reaches them as a short message, or its slot in
     * shared memory says so: the node paths carry sizes, coll/node.h). */
    int rc = MPI_Allgather(buf, rank == 0 ? 1 : 10, MPI_INT, rbuf, 10, MPI_INT, MPI_COMM_WORLD);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "MPI_Allgather with a short own block at rank 0: class %d at rank %d",
          class_of(rc), rank);
    check_works(rank, size);
    MPI_Request req;
    rc = MPI_Iallgather(buf, rank == 0 ? 1 : 10, MPI_INT, rbuf, 10, MPI_INT, MPI_COMM_WORLD, &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "MPI_Iallgather with a short own block at rank 0: class %d at rank %d",
          class_of(rc), rank);
    check_works(rank, size);
    /* Persistent: rank 0's initialisation fails (it moves no data), the others' succeed and are
     * freed unstarted. The calls after it must still pair up: rank 0 used its tag too. */
    req = MPI_REQUEST_NULL;
    rc = MPI_Allgather_init(buf, rank == 0 ? 1 : 10, MPI_INT, rbuf, 10, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    CHECK(class_of(rc) == (rank == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS),
          "MPI_Allgather_init with a short own block at rank 0: class %d at rank %d", class_of(rc), rank);
    if (rc == MPI_SUCCESS)
        MPI_Request_free(&req);
    check_works(rank, size);
    /* The root's own block of a scatterv does not match itself: only the root hears of it; the
     * others get their blocks, whole. */
    if (size > 1) {
        int *counts = malloc((size_t)size * sizeof *counts), *displs = malloc((size_t)size * sizeof *displs);
        int *all = malloc((size_t)size * 2 * sizeof *all), got[2] = {-1, -1};
        for (int i = 0; i < size; i++)
            counts[i] = 2, displs[i] = 2 * i, all[2 * i] = 100 * i, all[2 * i + 1] = 100 * i + 1;
        int root = size - 1;
        rc = MPI_Scatterv(all, counts, displs, MPI_INT, got, rank == root ? 1 : 2, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(class_of(rc) == (rank == root ? MPI_ERR_TRUNCATE : MPI_SUCCESS),
              "MPI_Scatterv with a mismatched own block at the root: class %d at rank %d", class_of(rc), rank);
        CHECK(rank == root || (got[0] == 100 * rank && got[1] == 100 * rank + 1),
              "MPI_Scatterv with a mismatched own block at the root: rank %d got %d %d", rank, got[0], got[1]);
        free(counts), free(displs), free(all);
        check_works(rank, size);
    }
    int *sbuf = calloc((size_t)size * 2, sizeof *sbuf); /* (room for rank 0's long blocks) */
    rc = MPI_Alltoall(sbuf, rank == 0 ? 2 : 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD);
    free(sbuf);
    CHECK(rank != 0 || class_of(rc) == MPI_ERR_TRUNCATE, "MPI_Alltoall with long own blocks: class %d at rank 0",
          class_of(rc));
    CHECK(rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_TRUNCATE, "MPI_Alltoall: class %d at rank %d", class_of(rc),
          rank);
    check_works(rank, size);
    /* The same with large blocks: staged, or read in place where the testlist forces it (the
     * process whose own block does not match takes part in the offers all the same, and every
     * process stages, where the mismatch is found; before, the others waited for its offer). */
    {
        const int L = 40000;
        int *lsbuf = calloc((size_t)size * 2 * L, sizeof *lsbuf), *lrbuf = calloc((size_t)size * L, sizeof *lrbuf);
        rc = MPI_Alltoall(lsbuf, rank == 0 ? 2 * L : L, MPI_INT, lrbuf, L, MPI_INT, MPI_COMM_WORLD);
        CHECK(rank != 0 || class_of(rc) == MPI_ERR_TRUNCATE,
              "MPI_Alltoall with long own blocks of %d ints: class %d at rank 0", L, class_of(rc));
        CHECK(rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_TRUNCATE, "MPI_Alltoall of %d ints: class %d at rank %d", L,
              class_of(rc), rank);
        free(lsbuf), free(lrbuf);
        check_works(rank, size);
    }
    rc = MPI_Gather(buf, rank == 0 ? 2 : 1, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(class_of(rc) == (rank == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS), "MPI_Gather with a long own block at the "
          "root: class %d at rank %d", class_of(rc), rank);
    check_works(rank, size);

    /* Every process but the last sends 1 element; the last sends 2: the root is truncated, as a
     * message or through the node component's slots, which carry sizes (in a binomial tree,
     * the process the last one sends to is too). */
    if (size > 1) {
        rc = MPI_Gather(buf, rank == size - 1 ? 2 : 1, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(rank == 0 ? class_of(rc) == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_TRUNCATE,
              "MPI_Gather with a long block from rank %d: class %d at rank %d", size - 1, class_of(rc), rank);
        check_works(rank, size);
    }

    /* Reductions and a scatter of different lengths, blocking and nonblocking, as MPICH's
     * errors/coll tests make them: a process whose result is wrong learns it (the others may
     * too). Nobody hangs, and every error is a truncation. */
    int in[10] = {0}, out[10];
    for (int nb = 0; nb < 2 && size > 1; nb++) {
        const char *how = nb ? "nonblocking" : "blocking";
        for (int longer = 0; longer < 2; longer++) { /* rank 0's count: 1 against 10, then 10 against 1 */
            int mine = (rank == 0) == (longer == 0) ? 1 : 10;
            rc = nb ? MPI_Iallreduce(in, out, mine, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req)
                    : MPI_Allreduce(in, out, mine, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (nb && rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank == 0 && rc == MPI_SUCCESS),
                  "%s MPI_Allreduce of %d elements where rank 0 passes %d: class %d at rank %d", how, mine,
                  longer ? 10 : 1, class_of(rc), rank);
            check_works(rank, size);
        }
        rc = nb ? MPI_Ireduce(in, out, rank == 0 ? 10 : 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req)
                : MPI_Reduce(in, out, rank == 0 ? 10 : 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (nb && rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank != 0 && rc == MPI_SUCCESS),
              "%s MPI_Reduce of 10 elements at the root, 1 elsewhere: class %d at rank %d", how, class_of(rc), rank);
        check_works(rank, size);
        /* The root sends blocks of 1 element where the others expect 10 (and to itself). */
        rc = nb ? MPI_Iscatter(rbuf, rank == 0 ? 1 : 10, MPI_INT, buf, 10, MPI_INT, 0, MPI_COMM_WORLD, &req)
                : MPI_Scatter(rbuf, rank == 0 ? 1 : 10, MPI_INT, buf, 10, MPI_INT, 0, MPI_COMM_WORLD);
        if (nb && rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "%s MPI_Scatter of 1-element blocks to processes that expect 10: "
              "class %d at rank %d", how, class_of(rc), rank);
        check_works(rank, size);
    }

    /* From 256 bytes, with processes sharing cores, the last process to arrive at a small
     * allreduce combines for everyone (coll/node.c): it must notice the sizes differ, whether
     * it is the process that differs or another, and leave each process to report it. 100 ints
     * against 99, each process in turn the one that differs; the process made late (so, most
     * likely, the last to arrive) is that one, then its neighbour. Through shared memory every
     * process compares the others' sizes with its own, so every one reports the truncation. */
    bool node_path = getenv("COURIER_COLL_ALLREDUCE") == NULL;
    for (int late = 0; late < 2 && size > 1; late++)
        for (int odd = 0; odd < size; odd++) {
            int v[100] = {0}, w[100];
            if (rank == (odd + late) % size)
                usleep(20000);
            rc = MPI_Allreduce(v, w, rank == odd ? 99 : 100, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (!node_path && rank == odd && rc == MPI_SUCCESS),
                  "MPI_Allreduce of 100 ints where rank %d passes 99 (rank %d late): class %d at rank %d", odd,
                  (odd + late) % size, class_of(rc), rank);
            check_works(rank, size);
        }

    /* Blocks too large for the node component's slots go through its staging blocks, whose
     * first block of a call carries its writer's size; a scatter of 4 MiB or more in all is read
     * straight from the root's buffer, whose offer carries it. Sizes differ by one element. */
    static const int counts[] = {600, 300000};
    for (int c = 0; c < 2 && size > 1; c++) {
        int n = counts[c], *big = calloc((size_t)(size + 1) * (size_t)n, sizeof *big); /* (a block, then p) */
        if (c == 0) {
            rc = MPI_Allgather(big, rank == 0 ? n - 1 : n, MPI_INT, big + n, rank == 0 ? n - 1 : n, MPI_INT,
                               MPI_COMM_WORLD);
            CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank == 0 && rc == MPI_SUCCESS),
                  "MPI_Allgather of %d elements where rank 0 passes %d: class %d at rank %d", n, n - 1, class_of(rc),
                  rank);
            check_works(rank, size);
        }
        int *all = rank == 0 ? calloc((size_t)size * (size_t)n, sizeof *all) : NULL;
        rc = MPI_Scatter(all, n, MPI_INT, big, rank == 0 ? n : n - 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank == 0 && rc == MPI_SUCCESS),
              "MPI_Scatter of %d-element blocks to processes that expect %d: class %d at rank %d", n, n - 1,
              class_of(rc), rank);
        check_works(rank, size);
        free(all), free(big);
    }

    /* Large broadcasts and reductions go through the staging blocks in pieces (coll/node_large.c):
     * the root's first block, and each process's slot of the first piece, carry the sizes. One
     * process passes one element less, which takes as many blocks and pieces as the others. */
    static const int large[] = {4000, 300000};
    for (int c = 0; c < 2 && size > 1; c++) {
        int n = large[c], last = size - 1;
        int *v = calloc((size_t)n, sizeof *v), *w = calloc((size_t)n, sizeof *w);
        rc = MPI_Bcast(v, rank == last ? n - 1 : n, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(rank == last ? class_of(rc) == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_TRUNCATE,
              "MPI_Bcast of %d elements where rank %d passes %d: class %d at rank %d", n, last, n - 1, class_of(rc),
              rank);
        check_works(rank, size);
        rc = MPI_Allreduce(v, w, rank == 0 ? n - 1 : n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank == 0 && rc == MPI_SUCCESS),
              "MPI_Allreduce of %d elements where rank 0 passes %d: class %d at rank %d", n, n - 1, class_of(rc), rank);
        check_works(rank, size);
        rc = MPI_Reduce(v, w, rank == last ? n - 1 : n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        CHECK(rank == 0 ? class_of(rc) == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_TRUNCATE,
              "MPI_Reduce of %d elements where rank %d passes %d: class %d at rank %d", n, last, n - 1, class_of(rc),
              rank);
        check_works(rank, size);
        free(v), free(w);
    }

    /* A gather of 8 MiB or more in all is written straight into the root's buffer; here the
     * root receives exactly 8 MiB and the others send one element less (below 8 MiB): each
     * decides alike (by whole staging windows), and the root finds the mismatch. */
    if (size > 1) {
        int n = (2097152 + size - 1) / size, *mine = calloc((size_t)n, sizeof *mine);
        int *all = rank == 0 ? calloc((size_t)size * (size_t)n, sizeof *all) : NULL;
        rc = MPI_Gather(mine, rank == 0 ? n : n - 1, MPI_INT, all, n, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE || (rank != 0 && rc == MPI_SUCCESS),
              "MPI_Gather of %d-element blocks to a root that expects %d: class %d at rank %d", n - 1, n, class_of(rc),
              rank);
        check_works(rank, size);
        free(all), free(mine);
    }

    /* Alltoallv: rank 0 sends rank `size - 1` one element fewer, then one more, than it expects
     * (and then the receiver expects one more than it gets: with the last size, a second piece
     * that only the receiver's streams reach, which the sender never stages),
     * in blocks of 1, 10 and 300000 elements (the staged path's first piece, a few pieces, more
     * pieces than the ring has blocks), and of as many as fill the first piece after its 64-byte
     * header (one more takes a second piece, which only the sender's streams reach), blocking
     * and (10 elements, the last size) nonblocking. The
     * receiver must learn, nobody hangs, and nothing is written beyond a block. */
    int sizes_v[] = {1, 10, 300000, (int)((((128 * 1024) / (size_t)size) & ~(size_t)63) - 64) / 4};
    for (int c = 0; c < 4 && size > 1; c++)
        for (int more = 0; more < 3; more++) {
            int n = sizes_v[c], last = size - 1;
            int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
            int *rcounts = malloc(sizeof(int) * (size_t)size);
            for (int j = 0; j < size; j++)
                counts[j] = rcounts[j] = n, displs[j] = j * (n + 2);
            if (rank == 0 && more < 2)
                counts[last] = more ? n + 1 : n - 1;
            if (rank == last && more == 2)
                rcounts[0] = n + 1;
            int *v = calloc((size_t)size * (size_t)(n + 2), sizeof *v), *w = calloc((size_t)size * (size_t)(n + 2), sizeof *w);
            for (int j = 0; j < size; j++)
                w[j * (n + 2) + rcounts[j]] = -3; /* (the int after each block) */
            if (c % 2) { /* (nonblocking: the error comes from the wait) */
                MPI_Request q;
                rc = MPI_Ialltoallv(v, counts, displs, MPI_INT, w, rcounts, displs, MPI_INT, MPI_COMM_WORLD, &q);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else {
                rc = MPI_Alltoallv(v, counts, displs, MPI_INT, w, rcounts, displs, MPI_INT, MPI_COMM_WORLD);
            }
            /* (By pairs, a process that found a mismatch sends the rest empty: others may learn.) */
            CHECK(rank == last ? class_of(rc) == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_TRUNCATE,
                  "MPI_Alltoallv of %d elements where rank 0 sends rank %d %d and it expects %d: class %d at rank %d",
                  n, last, more == 0 ? n - 1 : more == 1 ? n + 1 : n, more == 2 ? n + 1 : n, class_of(rc), rank);
            for (int j = 0; j < size; j++)
                CHECK(w[j * (n + 2) + rcounts[j]] == -3,
                      "MPI_Alltoallv of %d elements with a mismatch wrote past block %d", n, j);
            check_works(rank, size);
            free(counts), free(displs), free(rcounts), free(v), free(w);
        }

    free(rbuf);
    return mt_finish();
}
