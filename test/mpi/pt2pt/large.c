/* Messages larger than 2 GiB: MPI_Send_c/MPI_Recv_c and MPI_Isend_c/MPI_Irecv_c with 2.2 GiB of
 * MPI_BYTE (a count beyond int), and MPI_Send/MPI_Recv with an int count of MPI_INT whose bytes
 * exceed INT_MAX. Every 64-bit word of the data that arrived is checked (a pattern that differs
 * per message, so stale data from an earlier message shows too), and the odd tail bytes.
 * Status: MPI_Get_count and MPI_Get_elements give MPI_UNDEFINED when the count does not fit an
 * int, their _c forms the right count; a probe reports the full size. Needs 2 processes (others
 * do nothing); about 2.4 GB of memory per process. */
#include "mpitest.h"

#include <limits.h>
#include <stdint.h>

static uint64_t word(uint64_t i, uint64_t seed)
{
    return (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
}

static void fill(unsigned char *buf, uint64_t bytes, uint64_t seed)
{
    uint64_t *w = (uint64_t *)buf, n = bytes / 8;
    for (uint64_t i = 0; i < n; i++)
        w[i] = word(i, seed);
    for (uint64_t i = n * 8; i < bytes; i++)
        buf[i] = (unsigned char)(i ^ seed);
}

/* Index of the first wrong byte (word-granular), or -1. */
static int64_t verify(const unsigned char *buf, uint64_t bytes, uint64_t seed)
{
    const uint64_t *w = (const uint64_t *)buf;
    uint64_t n = bytes / 8;
    for (uint64_t i = 0; i < n; i++)
        if (w[i] != word(i, seed))
            return (int64_t)(i * 8);
    for (uint64_t i = n * 8; i < bytes; i++)
        if (buf[i] != (unsigned char)(i ^ seed))
            return (int64_t)i;
    return -1;
}

static void check_status(const MPI_Status *st, MPI_Datatype dt, MPI_Count count, int src, int tag, const char *what)
{
    int n = 0;
    MPI_Count nc = -1;
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag, "%s: status source %d tag %d", what, st->MPI_SOURCE,
          st->MPI_TAG);
    MPI_Get_count_c(st, dt, &nc);
    CHECK(nc == count, "%s: MPI_Get_count_c %lld, expected %lld", what, (long long)nc, (long long)count);
    MPI_Get_elements_c(st, dt, &nc);
    CHECK(nc == count, "%s: MPI_Get_elements_c %lld, expected %lld", what, (long long)nc, (long long)count);
    MPI_Get_elements_x(st, dt, &nc);
    CHECK(nc == count, "%s: MPI_Get_elements_x %lld, expected %lld", what, (long long)nc, (long long)count);
    int expect = count > INT_MAX ? MPI_UNDEFINED : (int)count;
    MPI_Get_count(st, dt, &n);
    CHECK(n == expect, "%s: MPI_Get_count %d, expected %d", what, n, expect);
    MPI_Get_elements(st, dt, &n);
    CHECK(n == expect, "%s: MPI_Get_elements %d, expected %d", what, n, expect);
    /* the bytes never fit an int */
    MPI_Get_count(st, MPI_BYTE, &n);
    CHECK(n == MPI_UNDEFINED, "%s: MPI_Get_count in bytes %d, expected MPI_UNDEFINED", what, n);
    MPI_Get_count_c(st, MPI_BYTE, &nc);
    CHECK(nc == count * (dt == MPI_INT ? 4 : 1), "%s: MPI_Get_count_c in bytes %lld", what, (long long)nc);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const MPI_Count big = (MPI_Count)(2.2 * (1ull << 30)) | 1; /* odd: a tail after the last word */
    const int nints = INT_MAX / 4 + 12345;                      /* > 2 GiB of data, int count */
    const uint64_t maxbytes = (uint64_t)big > (uint64_t)nints * 4 ? (uint64_t)big : (uint64_t)nints * 4;
    if (rank < 2 && size >= 2) {
        unsigned char *buf = malloc(maxbytes);
        CHECK(buf != NULL, "cannot allocate %llu bytes", (unsigned long long)maxbytes);
        if (!buf)
            return mt_finish();
        int peer = 1 - rank;
        MPI_Status st;
        MPI_Request req;
        int64_t bad;

        /* 1: blocking, rank 0 -> 1, the receiver probes first */
        if (rank == 0) {
            fill(buf, (uint64_t)big, 1);
            CHECK_CLASS(MPI_Send_c(buf, big, MPI_BYTE, peer, 11, MPI_COMM_WORLD), MPI_SUCCESS);
        } else {
            CHECK_CLASS(MPI_Probe(peer, 11, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            check_status(&st, MPI_BYTE, big, peer, 11, "MPI_Probe of MPI_Send_c");
            CHECK_CLASS(MPI_Recv_c(buf, big, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            check_status(&st, MPI_BYTE, big, peer, 11, "MPI_Send_c -> MPI_Recv_c");
            bad = verify(buf, (uint64_t)big, 1);
            CHECK(bad < 0, "MPI_Send_c -> MPI_Recv_c: byte %lld of %lld is wrong", (long long)bad, (long long)big);
        }

        /* 2: nonblocking, rank 1 -> 0, the receive posted before the send starts */
        if (rank == 0) {
            CHECK_CLASS(MPI_Irecv_c(buf, big + 100, MPI_BYTE, peer, 12, MPI_COMM_WORLD, &req), MPI_SUCCESS);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            CHECK_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
            check_status(&st, MPI_BYTE, big, peer, 12, "MPI_Isend_c -> MPI_Irecv_c");
            bad = verify(buf, (uint64_t)big, 2);
            CHECK(bad < 0, "MPI_Isend_c -> MPI_Irecv_c: byte %lld of %lld is wrong", (long long)bad, (long long)big);
        } else {
            fill(buf, (uint64_t)big, 2);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_CLASS(MPI_Isend_c(buf, big, MPI_BYTE, peer, 12, MPI_COMM_WORLD, &req), MPI_SUCCESS);
            int flag = 0;
            while (!flag)
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        }

        /* 3: an int count of MPI_INT over 2 GiB, rank 0 -> 1 */
        if (rank == 0) {
            fill(buf, (uint64_t)nints * 4, 3);
            CHECK_CLASS(MPI_Send(buf, nints, MPI_INT, peer, 13, MPI_COMM_WORLD), MPI_SUCCESS);
        } else {
            CHECK_CLASS(MPI_Recv(buf, nints, MPI_INT, peer, 13, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            check_status(&st, MPI_INT, nints, peer, 13, "MPI_Send -> MPI_Recv of MPI_INT");
            bad = verify(buf, (uint64_t)nints * 4, 3);
            CHECK(bad < 0, "MPI_INT: byte %lld is wrong", (long long)bad);
        }
        free(buf);
    }
    return mt_finish();
}
