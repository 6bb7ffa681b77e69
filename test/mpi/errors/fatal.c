/* Under the default handler (MPI_ERRORS_ARE_FATAL) or MPI_ERRORS_ABORT, an error ends the job
 * with a message naming the call, the argument and its value. argv[1] picks the handler; the
 * launcher test checks the message and the exit status. Rank size-1 makes the error. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "abort"))
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
    if (rank == size - 1) {
        int flag;
        void *v;
        MPI_Comm_get_attr(MPI_COMM_WORLD, 31337, &v, &flag); /* no such keyval */
        printf("FAIL: the error did not end the job\n");
        return 1;
    }
    sleep(30); /* the others wait to be stopped */
    MPI_Finalize();
    return 0;
}
