/* MPI_Allgather: every block that arrives, at every process, in rank order, for
 *   - counts 0, 1, 2, 3, 7, 100, 1000, 5000 and 20000 of MPI_INT, MPI_DOUBLE_INT and
 *     MPI_SHORT_INT (pair types: packed on the way), which crosses
 *     COURIER_COLL_ALLGATHER_LARGE (64 KiB in all) at every process count;
 *   - MPI_IN_PLACE (each block already in place and left there);
 *   - send and receive types that differ with the same signature (2n MPI_INT sent, n MPI_2INT
 *     received per process, and the other way round);
 *   - no byte written past the receive buffer, the send buffer left alone;
 *   - communicators that renumber the processes (split with reversed keys) and that do not have
 *     a power-of-two size (halves of the world).
 * Listed once per algorithm (COURIER_COLL_ALLGATHER; recursive_doubling falls back to bruck when
 * the size is not a power of two) and with automatic selection. */
#include "blockdata.h"

static void one(MPI_Comm comm, int k, MPI_Count count, int in_place, int round)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    size_t block = (size_t)count * bd_extent(k);
    char *sbuf = bd_alloc(k, count), *rbuf = bd_alloc(k, count * p);
    uint64_t mine = bd_seed(r, p, count, round);
    bd_fill(k, sbuf, count, mine);
    if (in_place)
        bd_fill(k, rbuf + (size_t)r * block, count, mine);
    int rc = MPI_Allgather(in_place ? MPI_IN_PLACE : sbuf, in_place ? 0 : (int)count,
                           in_place ? MPI_DATATYPE_NULL : bd_type(k), rbuf, (int)count, bd_type(k), comm);
    char what[200];
    snprintf(what, sizeof what, "MPI_Allgather %lld %s%s%s (rank %d of %d)", (long long)count, bd_name(k),
             in_place ? " in place" : "", comm == MPI_COMM_WORLD ? "" : " on a split communicator", r, p);
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    for (int q = 0; q < p; q++) {
        char w[400];
        snprintf(w, sizeof w, "%s, block of rank %d", what, q);
        bd_check(k, rbuf + (size_t)q * block, count, bd_seed(q, p, count, round), w);
    }
    guard_check(rbuf, block * p, what);
    bd_check(k, sbuf, count, mine, "the send buffer after MPI_Allgather");
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const MPI_Count counts[] = {0, 1, 2, 3, 7, 100, 1000, 5000, 20000};
    const int kinds[] = {B_INT, B_DOUBLE_INT, B_SHORT_INT};
    int round = 0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++) {
            one(MPI_COMM_WORLD, kinds[t], counts[c], 0, round++);
            one(MPI_COMM_WORLD, kinds[t], counts[c], 1, round++);
        }
    one(MPI_COMM_WORLD, B_LONG_DOUBLE_INT, 77, 0, round++);
    one(MPI_COMM_WORLD, B_DOUBLE, 60000, 1, round++);

    /* Same signature, different types, both ways. */
    for (int way = 0; way < 2; way++) {
        MPI_Count n = 999;
        size_t block = (size_t)n * bd_extent(B_2INT);
        char *sbuf = bd_alloc(B_2INT, n), *rbuf = bd_alloc(B_2INT, n * size);
        bd_fill(B_2INT, sbuf, n, bd_seed(rank, 0, n, 700 + way));
        if (way == 0)
            MPI_Allgather(sbuf, (int)(2 * n), MPI_INT, rbuf, (int)n, MPI_2INT, MPI_COMM_WORLD);
        else
            MPI_Allgather(sbuf, (int)n, MPI_2INT, rbuf, (int)(2 * n), MPI_INT, MPI_COMM_WORLD);
        for (int q = 0; q < size; q++)
            bd_check(B_2INT, rbuf + (size_t)q * block, n, bd_seed(q, 0, n, 700 + way),
                     way ? "MPI_Allgather of MPI_2INT received as MPI_INT" : "MPI_Allgather of MPI_INT received as MPI_2INT");
        guard_check(rbuf, block * size, "MPI_Allgather with different types");
        free(sbuf);
        free(rbuf);
    }

    /* Communicators that renumber the processes, of sizes p and about p/2. */
    MPI_Comm rev, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, rank < (size + 1) / 2, size - rank, &half);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c += 2) {
        one(rev, B_DOUBLE_INT, counts[c], c % 4 == 0, round++);
        one(half, B_INT, counts[c], c % 4 != 0, round++);
    }
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    return mt_finish();
}
