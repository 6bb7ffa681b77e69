/* timings.c: how long the basic operations take here: blocking and nonblocking send/receive
 * between ranks 0 and 1, and MPI_Barrier, MPI_Bcast and MPI_Reduce over all processes.
 *   mpiexec -n 4 ./timings */
#include <mpi.h>
#include <stdio.h>

#define N 2000

int main(int argc, char **argv)
{
    int rank, size, x = 0, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t;
    if (size >= 2) {
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        for (int i = 0; i < N; i++) {
            if (rank == 0) {
                MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&y, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
            }
        }
        if (rank == 0)
            printf("send/recv round trip:    %8.2f us\n", (MPI_Wtime() - t) / N * 1e6);
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        for (int i = 0; i < N && rank < 2; i++) {
            MPI_Request r[2];
            MPI_Irecv(&y, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(&x, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
        if (rank == 0)
            printf("isend/irecv exchange:    %8.2f us\n", (MPI_Wtime() - t) / N * 1e6);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < N; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("barrier (%2d processes):  %8.2f us\n", size, (MPI_Wtime() - t) / N * 1e6);
    t = MPI_Wtime();
    for (int i = 0; i < N; i++)
        MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bcast of 1 int:          %8.2f us\n", (MPI_Wtime() - t) / N * 1e6);
    t = MPI_Wtime();
    for (int i = 0; i < N; i++)
        MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("reduce of 1 int:         %8.2f us\n", (MPI_Wtime() - t) / N * 1e6);
    MPI_Finalize();
    return 0;
}
