/* MPI_Barrier: many in a row (on MPI_COMM_WORLD, a duplicate, a split and MPI_COMM_SELF), and
 * that no process leaves a barrier before every process has entered it. The late process takes
 * turns (first, last, middle rank) and sleeps 100 ms before entering; in a last round rank r
 * sleeps r * 10 ms (arrivals staggered in rank order). Two independent witnesses, both
 * about causal order only, never about durations:
 *   - before entering, each process creates a marker file; after the barrier every process
 *     must see every marker of the round;
 *   - MPI_Wtime when MPI_WTIME_IS_GLOBAL is set: the time each process leaves is no earlier than
 *     the latest entry time (gathered afterwards with an MPI_Allreduce of MPI_MAX). */
#include "mpitest.h"

#include <unistd.h>

static int rank, size;
static char dir[256];

static void marker(int round, int who, char *path, size_t cap)
{
    snprintf(path, cap, "%s/r%d-p%d", dir, round, who);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Many in a row, on several communicators, interleaved. */
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &split);
    for (int i = 0; i < 300; i++) {
        CHECK_CLASS(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
        if (i % 3 == 0)
            CHECK_CLASS(MPI_Barrier(dup), MPI_SUCCESS);
        if (i % 5 == 0)
            CHECK_CLASS(MPI_Barrier(split), MPI_SUCCESS);
        CHECK_CLASS(MPI_Barrier(MPI_COMM_SELF), MPI_SUCCESS);
    }

    /* A directory for the marker files, named by rank 0 and shared with the others. */
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/courier-barrier-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(dir[0] != 0, "could not make a temporary directory");

    int *flag, global = 0, have;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag, &have);
    global = have && *flag;

    enum { ROUNDS = 4 };
    int lates[ROUNDS] = {0, size - 1, size / 2, -1};
    char path[400];
    for (int round = 0; round < ROUNDS && dir[0]; round++) {
        MPI_Comm comm = round == 1 ? dup : MPI_COMM_WORLD;
        if (rank == lates[round])
            usleep(100 * 1000);
        if (lates[round] < 0)
            usleep(rank * 10 * 1000);
        double entered = MPI_Wtime();
        marker(round, rank, path, sizeof path);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL, "cannot create %s", path);
        if (f)
            fclose(f);
        MPI_Barrier(comm);
        double left = MPI_Wtime();
        for (int q = 0; q < size; q++) {
            marker(round, q, path, sizeof path);
            CHECK(access(path, F_OK) == 0, "round %d: rank %d left the barrier before rank %d entered it", round,
                  rank, q);
        }
        double latest;
        MPI_Allreduce(&entered, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (global)
            CHECK(left >= latest, "round %d: rank %d left at %.9f, before the last entry at %.9f", round, rank, left,
                  latest);
    }

    /* Clean up once everybody has looked. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (dir[0]) {
        for (int round = 0; round < ROUNDS; round++) {
            marker(round, rank, path, sizeof path);
            unlink(path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            rmdir(dir);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    return mt_finish();
}
