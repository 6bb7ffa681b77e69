/* requests.c: what completing many outstanding requests costs. Rank 1 posts 10,000 receives
 * (argument 1 changes the count), rank 0 then sends 10,000 small messages one after the other,
 * and rank 1 completes them with one MPI_Waitall, or with a loop of MPI_Waitsome; microseconds
 * per message, from the first send to the last completion. An MPI whose wait looks at every
 * request on every round of progress pays count x rounds here.
 * usage: mpiexec -n 2 requests [count] */
#include "common.h"

static double run(int rank, int n, int some, int *data, MPI_Request *reqs, int *idx)
{
    double t = 0;
    if (rank == 1) {
        for (int i = 0; i < n; i++)
            MPI_Irecv(&data[i], 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &reqs[i]);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (!some)
            MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        else
            for (int left = n, out; left; left -= out)
                MPI_Waitsome(n, reqs, &out, idx, MPI_STATUSES_IGNORE);
        t = MPI_Wtime() - t0;
    } else if (rank == 0) {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            MPI_Send(&i, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    int *data = malloc((size_t)n * sizeof(int)), *idx = malloc((size_t)n * sizeof(int));
    MPI_Request *reqs = malloc((size_t)n * sizeof *reqs);
    for (int some = 0; some < 2; some++) {
        double times[5];
        for (int rep = 0; rep < 5; rep++)
            times[rep] = run(rank, n, some, data, reqs, idx);
        /* the median of five */
        for (int i = 0; i < 5; i++)
            for (int j = i + 1; j < 5; j++)
                if (times[j] < times[i]) {
                    double x = times[i];
                    times[i] = times[j];
                    times[j] = x;
                }
        if (rank == 1)
            printf("%s bytes=%d value=%.3f unit=us\n", some ? "waitsome" : "waitall", n, times[2] / n * 1e6);
    }
    free(data);
    free(idx);
    free(reqs);
    MPI_Finalize();
    return 0;
}
