/* first_to_last.c: the first process sends one integer to the last, which prints it.
 * The "big eight" calls in their simplest use: Init, Comm_rank, Comm_size, Send, Recv, Finalize.
 *   mpiexec -n 4 ./first_to_last */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, tag = 17;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int last = size - 1;
    if (size == 1) {
        printf("run me with at least 2 processes: mpiexec -n 2 %s\n", argv[0]);
    } else if (rank == 0) {
        int value = 1234;
        MPI_Send(&value, 1, MPI_INT, last, tag, MPI_COMM_WORLD);
        printf("rank 0 sent %d to rank %d\n", value, last);
    } else if (rank == last) {
        int value;
        MPI_Status status;
        MPI_Recv(&value, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &status);
        printf("rank %d received %d from rank %d (tag %d)\n", rank, value, status.MPI_SOURCE, status.MPI_TAG);
    }
    MPI_Finalize();
    return 0;
}
