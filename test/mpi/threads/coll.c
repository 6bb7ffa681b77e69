/* coll.c: threads run collectives at once, each on a communicator of its own: each thread
 * duplicates its own parent (communicator creation in several threads at once, whose context
 * ids must not collide), splits it, and runs barrier, bcast, allreduce (small, and large
 * enough for the staged path), alltoall, allgather and a nonblocking allreduce on them,
 * checking every element; then frees them, also at once. */
#include "mtthreads.h"

enum { ITERS = 6, BIG = 40000 };
static MPI_Comm parent[64];

static void *work(void *arg)
{
    int t = (int)(long)arg;
    int *a = malloc(BIG * sizeof *a), *b = malloc(BIG * sizeof *b);
    int *all = malloc((size_t)tt_size * 4 * sizeof *all), *got = malloc((size_t)tt_size * 4 * sizeof *got);
    for (int it = 0; it < ITERS; it++) {
        MPI_Comm mine, half;
        MPI_Comm_dup(parent[t], &mine);
        MPI_Comm_split(mine, tt_rank % 2, -tt_rank, &half);
        int hr, hs;
        MPI_Comm_rank(half, &hr);
        MPI_Comm_size(half, &hs);
        CHECK(hs == (tt_size + 1 - tt_rank % 2) / 2, "split size %d", hs);

        MPI_Barrier(mine);
        int v = tt_rank == 0 ? 1000 * t + it : -1;
        MPI_Bcast(&v, 1, MPI_INT, 0, mine);
        CHECK(v == 1000 * t + it, "thread %d bcast got %d", t, v);

        for (int i = 0; i < BIG; i++)
            a[i] = tt_rank + i + t;
        int n = it % 2 ? BIG : 3;
        MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, mine);
        for (int i = 0; i < n; i++)
            if (b[i] != tt_size * (tt_size - 1) / 2 + tt_size * (i + t)) {
                CHECK(0, "thread %d allreduce[%d] of %d = %d", t, i, n, b[i]);
                break;
            }

        for (int i = 0; i < tt_size * 4; i++)
            all[i] = tt_rank * 100000 + i * 10 + t;
        MPI_Alltoall(all, 4, MPI_INT, got, 4, MPI_INT, mine);
        for (int s = 0; s < tt_size; s++)
            for (int k = 0; k < 4; k++)
                CHECK(got[s * 4 + k] == s * 100000 + (tt_rank * 4 + k) * 10 + t, "thread %d alltoall from %d", t, s);

        int me = tt_rank * 10 + t;
        MPI_Allgather(&me, 1, MPI_INT, got, 1, MPI_INT, half);
        for (int s = 0; s < hs; s++) {
            int wr = tt_rank % 2 + 2 * (hs - 1 - s); /* the key -rank puts higher world ranks first */
            CHECK(got[s] == wr * 10 + t, "thread %d allgather on the split: [%d] = %d, not %d", t, s, got[s], wr * 10 + t);
        }

        MPI_Request req;
        int x = tt_rank + t, sum = -1;
        MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, mine, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(sum == tt_size * (tt_size - 1) / 2 + tt_size * t, "thread %d iallreduce %d", t, sum);

        MPI_Comm_free(&half);
        MPI_Comm_free(&mine);
    }
    free(a), free(b), free(all), free(got);
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int n = tt_threads(argc, argv, 4);
    for (int t = 0; t < n; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]); /* in one thread: calls on one communicator go in order */
    tt_run(n, work);
    for (int t = 0; t < n; t++)
        MPI_Comm_free(&parent[t]);
    return tt_finish();
}
