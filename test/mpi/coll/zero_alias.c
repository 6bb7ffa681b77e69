/* zero_alias.c: send and receive buffers may be one buffer when the process moves no data
 * (zero counts, as mpi4py passes for empty messages): every collective succeeds, where nonzero
 * counts with one buffer are MPI_ERR_BUFFER. And MPI_BOTTOM as both buffers, with datatypes
 * holding absolute addresses, moves each process's own block too (alltoallw, gather). */
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

    /* the others, with zero counts everywhere */
    MPI_Datatype *types = malloc((size_t)size * sizeof *types);
    for (int i = 0; i < size; i++)
        types[i] = MPI_INT;
    CHECK_CLASS(MPI_Allreduce(buf, buf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Reduce(buf, buf, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Scan(buf, buf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Exscan(buf, buf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Reduce_scatter_block(buf, buf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Reduce_scatter(buf, buf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Allgather(buf, 0, MPI_INT, buf, 0, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Allgatherv(buf, 0, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Alltoall(buf, 0, MPI_INT, buf, 0, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_CLASS(MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Alltoallw(buf, counts, displs, types, buf, counts, displs, types, MPI_COMM_WORLD), MPI_SUCCESS);
    /* ... and with data: refused, at every process */
    CHECK_CLASS(MPI_Allreduce(buf, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    counts[size - 1] = 1;
    CHECK_CLASS(MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_BUFFER);
    counts[size - 1] = 0;

    /* MPI_BOTTOM as both buffers: every block, the own one included, lands where the receive
     * types' absolute addresses say */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *sbuf = malloc((size_t)size * sizeof *sbuf), *rbuf = malloc((size_t)size * sizeof *rbuf);
    MPI_Datatype *st = malloc((size_t)size * sizeof *st), *rt = malloc((size_t)size * sizeof *rt);
    for (int i = 0; i < size; i++) {
        sbuf[i] = 1000 * rank + i;
        rbuf[i] = -1;
        counts[i] = 1;
        MPI_Aint sa, ra;
        int one = 1;
        MPI_Get_address(&sbuf[i], &sa);
        MPI_Get_address(&rbuf[i], &ra);
        MPI_Type_create_struct(1, &one, &sa, (MPI_Datatype[]){MPI_INT}, &st[i]);
        MPI_Type_create_struct(1, &one, &ra, (MPI_Datatype[]){MPI_INT}, &rt[i]);
        MPI_Type_commit(&st[i]);
        MPI_Type_commit(&rt[i]);
    }
    CHECK_CLASS(MPI_Alltoallw(MPI_BOTTOM, counts, displs, st, MPI_BOTTOM, counts, displs, rt, MPI_COMM_WORLD),
                MPI_SUCCESS);
    for (int i = 0; i < size; i++)
        CHECK(rbuf[i] == 1000 * i + rank, "alltoallw on MPI_BOTTOM: block from %d is %d, not %d", i, rbuf[i],
              1000 * i + rank);
    for (int i = 0; i < size; i++)
        rbuf[i] = -1;
    /* gather at the root: its own block travels from sbuf[0] to rbuf[0] on MPI_BOTTOM */
    if (rank == 0)
        CHECK_CLASS(MPI_Gather(MPI_BOTTOM, 1, st[0], MPI_BOTTOM, 1, rt[0], 0, MPI_COMM_WORLD), MPI_SUCCESS);
    else
        CHECK_CLASS(MPI_Gather(buf, 1, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    if (rank == 0)
        CHECK(rbuf[0] == 0, "gather on MPI_BOTTOM: the root's own block is %d, not 0", rbuf[0]);
    for (int i = 0; i < size; i++) {
        MPI_Type_free(&st[i]);
        MPI_Type_free(&rt[i]);
    }
    free(st);
    free(rt);
    free(sbuf);
    free(rbuf);
    free(types);
    free(counts);
    free(displs);
    return mt_finish();
}
