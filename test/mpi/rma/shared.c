/* shared.c: MPI-3 shared-memory windows as users write them: the node's processes allocate one
 * window with MPI_Win_allocate_shared, find each other's parts with MPI_Win_shared_query, and
 * read and write them directly between MPI_Win_fence calls, and within MPI_Win_lock_all with
 * MPI_Win_sync and MPI_Barrier; the parts are contiguous by default. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int size, rank;
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, &rank);
    const int n = 1000 + rank; /* parts of different sizes */
    double *mine;
    MPI_Win win;
    CHECK_CLASS(MPI_Win_allocate_shared((MPI_Aint)n * sizeof(double), sizeof(double), MPI_INFO_NULL, node, &mine, &win),
                MPI_SUCCESS);
    for (int i = 0; i < n; i++)
        mine[i] = -1;
    /* Every part, and contiguity: part r + 1 starts where part r ends. */
    double **part = malloc((size_t)size * sizeof *part);
    for (int r = 0; r < size; r++) {
        MPI_Aint bytes;
        int unit;
        CHECK_CLASS(MPI_Win_shared_query(win, r, &bytes, &unit, &part[r]), MPI_SUCCESS);
        CHECK(bytes == (MPI_Aint)(1000 + r) * (MPI_Aint)sizeof(double) && unit == sizeof(double),
              "part %d: %ld bytes, unit %d", r, (long)bytes, unit);
        if (r > 0)
            CHECK(part[r] == part[r - 1] + 1000 + (r - 1), "part %d does not follow part %d", r, r - 1);
    }
    CHECK(part[rank] == mine, "my part from MPI_Win_shared_query is not my base");

    /* Fence epochs: each process writes its right neighbour's part directly. */
    MPI_Win_fence(0, win);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int i = 0; i < 1000 + right; i++)
        part[right][i] = rank * 10000 + i;
    MPI_Win_fence(0, win);
    for (int i = 0; i < n; i++)
        if (mine[i] != left * 10000 + i) {
            CHECK(0, "fence: mine[%d] = %g, want %d", i, mine[i], left * 10000 + i);
            break;
        }
    MPI_Win_fence(0, win); /* everyone has read before the next epoch writes again */

    /* Passive target, the unified model: lock_all, store, sync, barrier, sync, load. */
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 1000 + left; i++)
        part[left][i] = -(rank * 10000 + i);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int i = 0; i < n; i++)
        if (mine[i] != -(right * 10000 + i)) {
            CHECK(0, "lock_all: mine[%d] = %g, want %d", i, mine[i], -(right * 10000 + i));
            break;
        }
    MPI_Win_unlock_all(win);

    /* The same memory through MPI calls: a get of the left neighbour's last element, a
     * fetch-and-add on process 0's first, an accumulate on everyone's second. */
    MPI_Win_fence(0, win);
    if (rank == 0)
        mine[0] = 0, mine[1] = 0;
    MPI_Win_fence(0, win);
    double got = 0, one = 1, before = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(&got, 1, MPI_DOUBLE, left, 1000 + left - 1, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(left, win);
    CHECK(got == -(rank * 10000 + 1000 + left - 1), "get: %g", got);
    MPI_Win_lock_all(0, win);
    MPI_Fetch_and_op(&one, &before, MPI_DOUBLE, 0, 0, MPI_SUM, win);
    for (int r = 0; r < size; r++)
        MPI_Accumulate(&one, 1, MPI_DOUBLE, r, 1, 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    CHECK(before >= 0 && before < size, "fetch_and_op saw %g", before);
    MPI_Win_fence(0, win);
    if (rank == 0)
        CHECK(mine[0] == size, "fetch_and_op total %g, want %d", mine[0], size);
    MPI_Win_fence(0, win);
    if (rank != 0)
        CHECK(mine[1] == -(right * 10000 + 1) + size, "accumulate total %g", mine[1]);
    else
        CHECK(mine[1] == size, "accumulate total at 0: %g", mine[1]);

    int flavor_ok = 0, *flavor, model_ok = 0, *model;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flavor_ok);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &model_ok);
    CHECK(flavor_ok && *flavor == MPI_WIN_FLAVOR_SHARED && model_ok && *model == MPI_WIN_UNIFIED, "flavor/model");
    free(part);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
    MPI_Comm_free(&node);
    return mt_finish();
}
