/* zero_alias.c: the root's send and receive buffers may be one buffer when the root moves no
 * block of its own (zero counts, as mpi4py passes for empty messages): gather(v) and scatter(v)
 * succeed, where nonzero counts with one buffer are MPI_ERR_BUFFER. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *counts = calloc((size_t)size, sizeof *counts), *displs = calloc((size_t)size, sizeof *displs);
    int buf[4] = {0, 0, 0, 0};
    CHECK_CLASS(MPI_Gatherv(buf, 0, MPI_INT, buf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Scatterv(buf, counts, displs, MPI_INT, buf, 0, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Gather(buf, 0, MPI_INT, buf, 0, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Scatter(buf, 0, MPI_INT, buf, 0, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    if (size == 1) /* one buffer with data to move: still refused */
        CHECK_CLASS(MPI_Gather(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    free(counts);
    free(displs);
    return mt_finish();
}
