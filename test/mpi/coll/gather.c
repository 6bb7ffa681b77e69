/* MPI_Gather: every block that arrives at the root, in rank order, for
 *   - every root (the first, last and middle rank for large blocks), counts 0, 1, 7, 1000 and
 *     30000 of MPI_INT, MPI_DOUBLE and MPI_DOUBLE_INT (pair type: packed on the way);
 *   - MPI_IN_PLACE at the root (its block already in place and left there);
 *   - recvbuf, recvcount and recvtype not significant away from the root (NULL, 0,
 *     MPI_DATATYPE_NULL are passed there);
 *   - send and receive types that differ with the same signature (2n MPI_INT sent, n MPI_2INT
 *     received per process, and the other way round);
 *   - no byte written past the root's buffer, send buffers left alone;
 *   - a communicator that renumbers the processes (split with reversed keys). */
#include "blockdata.h"

static void one(MPI_Comm comm, int k, MPI_Count count, int root, int in_place, int round)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    size_t ext = bd_extent(k), block = (size_t)count * ext;
    char *sbuf = bd_alloc(k, count), *rbuf = NULL;
    bd_fill(k, sbuf, count, bd_seed(r, root, count, round));
    if (r == root) {
        rbuf = bd_alloc(k, count * p);
        if (in_place)
            bd_fill(k, rbuf + (size_t)r * block, count, bd_seed(r, root, count, round));
    }
    int rc;
    if (r == root)
        rc = MPI_Gather(in_place ? MPI_IN_PLACE : sbuf, in_place ? 0 : (int)count, in_place ? MPI_DATATYPE_NULL : bd_type(k),
                        rbuf, (int)count, bd_type(k), root, comm);
    else
        rc = MPI_Gather(sbuf, (int)count, bd_type(k), NULL, 0, MPI_DATATYPE_NULL, root, comm);
    char what[200];
    snprintf(what, sizeof what, "MPI_Gather %lld %s to root %d%s%s", (long long)count, bd_name(k), root,
             in_place ? " in place" : "", comm == MPI_COMM_WORLD ? "" : " on a split communicator");
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    if (r == root) {
        for (int q = 0; q < p; q++) {
            char w[400];
            snprintf(w, sizeof w, "%s, block of rank %d", what, q);
            bd_check(k, rbuf + (size_t)q * block, count, bd_seed(q, root, count, round), w);
        }
        guard_check(rbuf, block * p, what);
    }
    bd_check(k, sbuf, count, bd_seed(r, root, count, round), "the send buffer after MPI_Gather");
    guard_check(sbuf, block, "the send buffer of MPI_Gather");
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const MPI_Count counts[] = {0, 1, 7, 1000, 30000};
    const int kinds[] = {B_INT, B_DOUBLE, B_DOUBLE_INT};
    int round = 0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++)
            for (int root = 0; root < size; root++) {
                if (counts[c] > 1000 && root != 0 && root != size - 1 && root != size / 2)
                    continue;
                one(MPI_COMM_WORLD, kinds[t], counts[c], root, 0, round++);
                if (counts[c] <= 1000 || root == size - 1)
                    one(MPI_COMM_WORLD, kinds[t], counts[c], root, 1, round++);
            }
    for (int root = 0; root < size; root++)
        one(MPI_COMM_WORLD, B_LONG_DOUBLE_INT, 100, root, root % 2, round++);

    /* Same signature, different types, both ways. */
    for (int root = 0; root < size; root += size > 4 ? size / 4 : 1) {
        for (int way = 0; way < 2; way++) {
            MPI_Count n = 1001;
            char *sbuf = bd_alloc(B_2INT, n), *rbuf = rank == root ? bd_alloc(B_2INT, n * size) : NULL;
            bd_fill(B_2INT, sbuf, n, bd_seed(rank, root, n, 500 + way));
            if (way == 0)
                MPI_Gather(sbuf, (int)(2 * n), MPI_INT, rbuf, (int)n, MPI_2INT, root, MPI_COMM_WORLD);
            else
                MPI_Gather(sbuf, (int)n, MPI_2INT, rbuf, (int)(2 * n), MPI_INT, root, MPI_COMM_WORLD);
            if (rank == root) {
                for (int q = 0; q < size; q++)
                    bd_check(B_2INT, rbuf + (size_t)q * n * bd_extent(B_2INT), n, bd_seed(q, root, n, 500 + way),
                             way ? "MPI_Gather of MPI_2INT received as MPI_INT" : "MPI_Gather of MPI_INT received as MPI_2INT");
                guard_check(rbuf, (size_t)n * size * bd_extent(B_2INT), "MPI_Gather with different types");
            }
            free(sbuf);
            free(rbuf);
        }
    }

    /* A communicator that renumbers the processes. */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    for (int root = 0; root < size; root++)
        one(rev, B_DOUBLE_INT, 50, root, root % 2, round++);
    MPI_Comm_free(&rev);
    return mt_finish();
}
