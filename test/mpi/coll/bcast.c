/* MPI_Bcast: every element that arrives, at every process, for
 *   - counts 0, 1, 7, 1000, 100000 and 300000 (past COURIER_COLL_BCAST_LARGE = 256 KiB) of
 *     MPI_INT, MPI_DOUBLE and MPI_DOUBLE_INT (a pair type with padding: packed on the way),
 *     and small counts of MPI_SHORT_INT and MPI_LONG_DOUBLE_INT;
 *   - every root for the small counts, the first, last and middle rank for the large ones;
 *   - no byte written past the buffer, the root's buffer left alone;
 *   - types that differ but have the same signature: the root sends n MPI_2INT, the others
 *     receive 2n MPI_INT;
 *   - a communicator that renumbers the processes (split with reversed keys).
 * Listed once per algorithm (COURIER_COLL_BCAST) and with automatic selection. */
#include "blockdata.h"

static int rank, size;

static void one(MPI_Comm comm, int k, MPI_Count count, int root, int round)
{
    int r;
    MPI_Comm_rank(comm, &r);
    size_t bytes = (size_t)count * bd_extent(k);
    uint64_t seed = bd_seed(root, k, count, round);
    char *buf = bd_alloc(k, count);
    if (r == root)
        bd_fill(k, buf, count, seed);
    int rc = MPI_Bcast(buf, (int)count, bd_type(k), root, comm);
    char what[160];
    snprintf(what, sizeof what, "MPI_Bcast %lld %s from root %d%s (rank %d)", (long long)count, bd_name(k), root,
             comm == MPI_COMM_WORLD ? "" : " on a split communicator", r);
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    bd_check(k, buf, count, seed, what);
    guard_check(buf, bytes, what);
    free(buf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const MPI_Count counts[] = {0, 1, 7, 1000, 100000, 300000};
    const int kinds[] = {B_INT, B_DOUBLE, B_DOUBLE_INT};
    int round = 0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++)
            for (int root = 0; root < size; root++) {
                if (counts[c] > 1000 && root != 0 && root != size - 1 && root != size / 2)
                    continue;
                one(MPI_COMM_WORLD, kinds[t], counts[c], root, round++);
            }
    for (int root = 0; root < size; root++) {
        one(MPI_COMM_WORLD, B_SHORT_INT, 13, root, round++);
        one(MPI_COMM_WORLD, B_LONG_DOUBLE_INT, 1001, root, round++);
    }

    /* Same signature, different types: n MPI_2INT at the root, 2n MPI_INT elsewhere. */
    for (int root = 0; root < size; root += size > 4 ? size / 4 : 1) {
        MPI_Count n = 50001;
        uint64_t seed = bd_seed(root, 77, n, 0);
        char *buf = bd_alloc(B_2INT, n);
        if (rank == root) {
            bd_fill(B_2INT, buf, n, seed);
            MPI_Bcast(buf, (int)n, MPI_2INT, root, MPI_COMM_WORLD);
        } else {
            MPI_Bcast(buf, (int)(2 * n), MPI_INT, root, MPI_COMM_WORLD);
        }
        bd_check(B_2INT, buf, n, seed, "MPI_Bcast of MPI_2INT received as twice as many MPI_INT");
        guard_check(buf, (size_t)n * bd_extent(B_2INT), "MPI_Bcast of MPI_2INT received as MPI_INT");
        free(buf);
    }

    /* A communicator that renumbers the processes. */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    for (int root = 0; root < size; root++)
        one(rev, B_DOUBLE_INT, 100, root, round++);
    one(rev, B_INT, 300000, size - 1, round++);
    MPI_Comm_free(&rev);
    return mt_finish();
}
