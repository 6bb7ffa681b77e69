/* MPI_Scatter: every block that arrives from the root, at every process, for
 *   - every root (the first, last and middle rank for large blocks), counts 0, 1, 7, 1000 and
 *     30000 of MPI_INT, MPI_DOUBLE and MPI_DOUBLE_INT (pair type: packed on the way);
 *   - MPI_IN_PLACE at the root (its block stays in the send buffer, untouched);
 *   - sendbuf, sendcount and sendtype not significant away from the root (NULL, 0,
 *     MPI_DATATYPE_NULL are passed there);
 *   - send and receive types that differ with the same signature (n MPI_2INT sent per process,
 *     2n MPI_INT received, and the other way round);
 *   - no byte written past a receive buffer, the root's send buffer left alone;
 *   - a communicator that renumbers the processes (split with reversed keys);
 *   - large blocks read in place from the root's buffer by some processes while others (a
 *     strided receive type) get them staged, in the same call. */
#include "blockdata.h"

static void one(MPI_Comm comm, int k, MPI_Count count, int root, int in_place, int round)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    size_t ext = bd_extent(k), block = (size_t)count * ext;
    char *sbuf = NULL, *rbuf = bd_alloc(k, count);
    if (r == root) {
        sbuf = bd_alloc(k, count * p);
        for (int q = 0; q < p; q++)
            bd_fill(k, sbuf + (size_t)q * block, count, bd_seed(q, root, count, round));
    }
    int rc;
    if (r == root)
        rc = MPI_Scatter(sbuf, (int)count, bd_type(k), in_place ? MPI_IN_PLACE : rbuf, in_place ? 0 : (int)count,
                         in_place ? MPI_DATATYPE_NULL : bd_type(k), root, comm);
    else
        rc = MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, rbuf, (int)count, bd_type(k), root, comm);
    char what[200];
    snprintf(what, sizeof what, "MPI_Scatter %lld %s from root %d%s%s (rank %d)", (long long)count, bd_name(k), root,
             in_place ? " in place" : "", comm == MPI_COMM_WORLD ? "" : " on a split communicator", r);
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    if (r == root) {
        for (int q = 0; q < p; q++) {
            char w[400];
            snprintf(w, sizeof w, "%s: the root's send buffer, block %d, afterwards", what, q);
            bd_check(k, sbuf + (size_t)q * block, count, bd_seed(q, root, count, round), w);
        }
        guard_check(sbuf, block * p, what);
    }
    if (r == root && in_place) {
        unsigned char *u = (unsigned char *)rbuf;
        size_t i = 0;
        while (i < block && u[i] == 0xEE)
            i++;
        CHECK(i == block, "%s: the unused receive buffer was written", what);
    } else {
        bd_check(k, rbuf, count, bd_seed(r, root, count, round), what);
    }
    guard_check(rbuf, block, what);
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const MPI_Count counts[] = {0, 1, 7, 1000, 30000};
    const int kinds[] = {B_INT, B_DOUBLE, B_DOUBLE_INT};
    int round = 0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++)
            for (int root = 0; root < size; root++) {
                if (counts[c] > 1000 && root != 0 && root != size - 1 && root != size / 2)
                    continue;
                one(MPI_COMM_WORLD, kinds[t], counts[c], root, 0, round++);
                if (counts[c] <= 1000 || root == size - 1)
                    one(MPI_COMM_WORLD, kinds[t], counts[c], root, 1, round++);
            }
    for (int root = 0; root < size; root++)
        one(MPI_COMM_WORLD, B_LONG_DOUBLE_INT, 100, root, root % 2, round++);

    /* Same signature, different types, both ways. */
    for (int root = 0; root < size; root += size > 4 ? size / 4 : 1) {
        for (int way = 0; way < 2; way++) {
            MPI_Count n = 1001;
            size_t block = (size_t)n * bd_extent(B_2INT);
            char *sbuf = NULL, *rbuf = bd_alloc(B_2INT, n);
            if (rank == root) {
                sbuf = bd_alloc(B_2INT, n * size);
                for (int q = 0; q < size; q++)
                    bd_fill(B_2INT, sbuf + (size_t)q * block, n, bd_seed(q, root, n, 500 + way));
            }
            if (way == 0)
                MPI_Scatter(sbuf, (int)n, MPI_2INT, rbuf, (int)(2 * n), MPI_INT, root, MPI_COMM_WORLD);
            else
                MPI_Scatter(sbuf, (int)(2 * n), MPI_INT, rbuf, (int)n, MPI_2INT, root, MPI_COMM_WORLD);
            bd_check(B_2INT, rbuf, n, bd_seed(rank, root, n, 500 + way),
                     way ? "MPI_Scatter of MPI_INT received as MPI_2INT" : "MPI_Scatter of MPI_2INT received as MPI_INT");
            guard_check(rbuf, block, "MPI_Scatter with different types");
            free(sbuf);
            free(rbuf);
        }
    }

    /* Large blocks (read in place from the root's buffer, src/coll/node_large.c), received
     * contiguously by the even ranks and through a strided type by the odd ones, which cannot
     * read in place: the root stages the blocks for them after the others have read theirs.
     * Every element and every gap checked, three calls in a row with each root. */
    {
        const int n = 20000; /* ints per process: 78 KiB (the testlist sets COURIER_COLL_SCATTER_DIRECT low) */
        MPI_Datatype strided;
        MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
        MPI_Type_commit(&strided);
        int *rbuf = malloc(2 * (size_t)n * sizeof *rbuf), *sbuf = malloc((size_t)n * (size_t)size * sizeof *sbuf);
        for (int root = 0; root < size; root++)
            for (int rep = 0; rep < 3; rep++) {
                for (size_t i = 0; rank == root && i < (size_t)n * (size_t)size; i++)
                    sbuf[i] = (int)(i * 7 + (size_t)root * 100003 + (size_t)rep * 13);
                for (int i = 0; i < 2 * n; i++)
                    rbuf[i] = -5;
                if (rank % 2)
                    MPI_Scatter(sbuf, n, MPI_INT, rbuf, 1, strided, root, MPI_COMM_WORLD);
                else
                    MPI_Scatter(sbuf, n, MPI_INT, rbuf, n, MPI_INT, root, MPI_COMM_WORLD);
                int bad = 0, first = -1;
                for (int i = 0; i < n; i++) {
                    int at = rank % 2 ? 2 * i : i;
                    int want = (int)(((size_t)rank * (size_t)n + (size_t)i) * 7 + (size_t)root * 100003 + (size_t)rep * 13);
                    if (rbuf[at] != want && !bad++)
                        first = i;
                    if (rank % 2 && rbuf[at + 1] != -5 && !bad++)
                        first = i;
                }
                for (int i = n; rank % 2 == 0 && i < 2 * n; i++)
                    if (rbuf[i] != -5 && !bad++)
                        first = i;
                CHECK(bad == 0, "large scatter from root %d (%s receive), repetition %d: %d bad elements from %d", root,
                      rank % 2 ? "strided" : "contiguous", rep, bad, first);
            }
        free(rbuf);
        free(sbuf);
        MPI_Type_free(&strided);
    }

    /* A communicator that renumbers the processes. */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    for (int root = 0; root < size; root++)
        one(rev, B_DOUBLE_INT, 50, root, root % 2, round++);
    MPI_Comm_free(&rev);
    return mt_finish();
}
