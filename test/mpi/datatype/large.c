/* A derived datatype of more than 2 GiB through the _c calls: two blocks of 1.125 GiB, 1.25 GiB
 * apart (MPI_Type_contiguous_c of MPI_BYTE inside MPI_Type_create_hvector_c), sent from rank 0
 * to rank 1 (to itself with one process) with one element. The receiver checks bytes across
 * both blocks (sampled every 4093 bytes, and both ends of each block), that the 128 MiB gap is
 * untouched, MPI_Get_count_c (1) and MPI_Get_elements_c (the byte count), and that the int
 * MPI_Type_size says MPI_UNDEFINED. */
#include "mpitest.h"

#include <stdint.h>

#define BLOCK (((MPI_Count)9) << 27)   /* 1.125 GiB */
#define STRIDE (((MPI_Count)10) << 27) /* 1.25 GiB */

static unsigned char pattern(MPI_Count i)
{
    return (unsigned char)(i * 2654435761u >> 13);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype block, t;
    MPI_Type_contiguous_c(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_hvector_c(2, 1, STRIDE, block, &t);
    MPI_Type_commit(&t);
    MPI_Count tsize, lb, extent;
    MPI_Type_size_c(t, &tsize);
    MPI_Type_get_extent_c(t, &lb, &extent);
    CHECK(tsize == 2 * BLOCK && lb == 0 && extent == STRIDE + BLOCK, "size %lld extent %lld", (long long)tsize,
          (long long)extent);
    int isize;
    MPI_Type_size(t, &isize);
    CHECK(isize == MPI_UNDEFINED, "MPI_Type_size of a type over 2 GiB: %d", isize);

    int peer = size > 1 ? 1 : 0;
    unsigned char *buf = NULL;
    if (rank == 0 || rank == peer) {
        buf = malloc((size_t)extent);
        CHECK(buf != NULL, "no memory for %lld bytes", (long long)extent);
    }
    if (rank == 0) {
        for (MPI_Count b = 0; b < 2; b++)
            for (MPI_Count i = 0; i < BLOCK; i++)
                buf[b * STRIDE + i] = pattern(b * BLOCK + i);
        MPI_Request req;
        MPI_Isend(buf, 1, t, peer, 0, MPI_COMM_WORLD, &req);
        unsigned char *rbuf = buf;
        if (peer == 0) { /* one process: receive into a second buffer */
            rbuf = malloc((size_t)extent);
            CHECK(rbuf != NULL, "no memory");
        }
        if (peer == 0) {
            memset(rbuf, 0xee, (size_t)extent);
            MPI_Recv(rbuf, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (peer == 0) {
            buf = rbuf; /* checked below like rank 1's */
        }
    }
    if (rank == peer) {
        MPI_Status st;
        if (peer != 0) {
            memset(buf, 0xee, (size_t)extent);
            MPI_Recv(buf, 1, t, 0, 0, MPI_COMM_WORLD, &st);
            MPI_Count count, elements;
            MPI_Get_count_c(&st, t, &count);
            MPI_Get_elements_c(&st, t, &elements);
            CHECK(count == 1 && elements == 2 * BLOCK, "count %lld elements %lld", (long long)count,
                  (long long)elements);
        }
        long bad = 0;
        for (MPI_Count b = 0; b < 2; b++) {
            for (MPI_Count i = 0; i < BLOCK; i += 4093)
                bad += buf[b * STRIDE + i] != pattern(b * BLOCK + i);
            bad += buf[b * STRIDE + BLOCK - 1] != pattern(b * BLOCK + BLOCK - 1);
        }
        CHECK(bad == 0, "%ld sampled bytes wrong", bad);
        for (MPI_Count i = BLOCK; i < STRIDE; i += 4099)
            bad += buf[i] != 0xee;
        CHECK(buf[BLOCK] == 0xee && buf[STRIDE - 1] == 0xee && bad == 0, "the gap was written");
    }
    MPI_Type_free(&block);
    MPI_Type_free(&t);
    return mt_finish();
}
