/* overlap.c: a send buffer that shares bytes with the receive buffer without being its start
 * (the "manual in place" of MPI_Allgather, &recvbuf[rank], which MPICH's errors/coll/noalias2
 * makes) is MPI_ERR_BUFFER at every process that passes it, before anything moves, so nobody
 * waits for a process that left; a send buffer in a gap that MPI_Allgatherv's blocks leave, and
 * strided types whose spans interleave without sharing a byte, still work. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *buf = calloc((size_t)size * 4 + 4, sizeof *buf), *counts = malloc((size_t)size * sizeof *counts),
        *displs = malloc((size_t)size * sizeof *displs);

    /* Own block inside the receive buffer: every process (rank 0's is the buffer's start). */
    CHECK_CLASS(MPI_Allgather(&buf[rank], 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Iallgather(&buf[rank], 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Iallgather left a request");
    for (int i = 0; i < size; i++)
        counts[i] = 2, displs[i] = 2 * i;
    CHECK_CLASS(MPI_Allgatherv(&buf[2 * rank], 2, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_BUFFER);
    /* A tail that runs into the receive buffer's first byte. */
    CHECK_CLASS(MPI_Allgather(buf, 2, MPI_INT, buf + 1, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);

    /* Blocks 4 elements apart with 2 each: a send buffer in a gap is no alias. */
    for (int i = 0; i < size; i++)
        counts[i] = 2, displs[i] = 4 * i;
    buf[4 * rank + 2] = 10 * rank + 1, buf[4 * rank + 3] = 10 * rank + 2;
    CHECK_CLASS(MPI_Allgatherv(&buf[4 * rank + 2], 2, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD),
                MPI_SUCCESS);
    for (int i = 0; i < size; i++)
        CHECK(buf[4 * i] == 10 * i + 1 && buf[4 * i + 1] == 10 * i + 2, "MPI_Allgatherv from a gap: block %d is %d %d",
              i, buf[4 * i], buf[4 * i + 1]);

    /* The even elements of an array sent, gathered into its odd ones (size == 1: its own). */
    if (size == 1) {
        int a[4] = {1, -1, 2, -1};
        MPI_Datatype every_other, every_other_shifted;
        MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
        MPI_Type_commit(&every_other);
        MPI_Type_dup(every_other, &every_other_shifted);
        MPI_Type_commit(&every_other_shifted);
        CHECK_CLASS(MPI_Allgather(a, 1, every_other, a + 1, 1, every_other_shifted, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK(a[1] == 1 && a[3] == 2, "interleaved MPI_Allgather gave %d %d", a[1], a[3]);
        MPI_Type_free(&every_other);
        MPI_Type_free(&every_other_shifted);
    }

    /* The communicator still works: nobody is left waiting. */
    int sum = 0;
    CHECK_CLASS(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(sum == size * (size - 1) / 2, "MPI_Allreduce after the refused calls gave %d", sum);
    free(buf), free(counts), free(displs);
    return mt_finish();
}
