/* bounce.c: latency and bandwidth of blocking send/receive. Processes pair up (0 with 1, 2
 * with 3, ...); each pair bounces messages of increasing size back and forth and rank 0
 * reports, per size, the one-way time and the bandwidth. Needs an even number of processes.
 *   mpiexec -n 2 ./bounce */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2) {
        if (rank == 0)
            printf("bounce needs an even number of processes (got %d)\n", size);
        MPI_Finalize();
        return 0;
    }
    const int repeats = 50, max_doubles = 1 << 20;
    double *sbuf = calloc(max_doubles, sizeof(double)), *rbuf = calloc(max_doubles, sizeof(double));
    int partner = rank % 2 ? rank - 1 : rank + 1;
    if (rank == 0)
        printf("%12s %14s %14s\n", "bytes", "one-way (us)", "MB/s");
    for (int n = 1; n <= max_doubles; n *= 8) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < repeats; i++) {
            if (rank % 2 == 0) {
                MPI_Send(sbuf, n, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD);
                MPI_Recv(rbuf, n, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, n, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, n, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD);
            }
        }
        double one_way = (MPI_Wtime() - t0) / (2.0 * repeats);
        if (rank == 0)
            printf("%12zu %14.2f %14.1f\n", (size_t)n * sizeof(double), one_way * 1e6,
                   (double)n * sizeof(double) / one_way / 1e6);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
