/* comm_create.c: the cost of making communicators. Rows (us per call, as the slowest process
 * saw it, the new communicator freed again inside the timing):
 *   comm_dup          MPI_Comm_dup of MPI_COMM_WORLD, then MPI_Comm_free;
 *   comm_split        MPI_Comm_split of MPI_COMM_WORLD into halves (color rank % 2, key -rank:
 *                     each half in reverse order), then MPI_Comm_free;
 *   cart_create       MPI_Cart_create of a 2-D periodic grid from MPI_Dims_create (reorder 1),
 *                     then MPI_Comm_free.
 * Each new communicator is used once before it is freed (an MPI_Allreduce of one int, checked),
 * so an implementation that defers work to the first use pays it inside the timing too. Timing:
 * batches of `reps` calls after a barrier, the median of 7 batches.
 * usage: mpiexec -n P comm_create [reps]   (default 200) */
#include "common.h"

#define BATCHES 7

static int rank, size;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void use(MPI_Comm c, int members)
{
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    if (sum != members) {
        fprintf(stderr, "comm_create: rank %d: a new communicator of %d processes summed %d\n", rank, members, sum);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void dup_once(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    use(c, size);
    MPI_Comm_free(&c);
}

static void split_once(void)
{
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c);
    use(c, size / 2 + (rank % 2 == 0 ? size % 2 : 0));
    MPI_Comm_free(&c);
}

static void cart_once(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c);
    use(c, size);
    MPI_Comm_free(&c);
}

static void measure(const char *name, void (*once)(void), int reps)
{
    double t[BATCHES];
    once(); /* warm up */
    for (int b = 0; b < BATCHES; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++)
            once();
        double mine = (MPI_Wtime() - t0) / reps, slowest;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[b] = slowest;
    }
    qsort(t, BATCHES, sizeof *t, cmp);
    if (rank == 0)
        printf("%s np=%d value=%.3f unit=us\n", name, size, t[BATCHES / 2] * 1e6);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    measure("comm_dup", dup_once, reps);
    measure("comm_split", split_once, reps);
    measure("cart_create", cart_once, reps);
    MPI_Finalize();
    return 0;
}
