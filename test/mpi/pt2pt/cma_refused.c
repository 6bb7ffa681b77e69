/* Large messages when the kernel refuses cross-memory attach part way: one process installs a
 * seccomp filter that makes process_vm_readv, process_vm_writev or both fail with EPERM (as a
 * ptrace policy or a container's filter would), after MPI_Init. Every rendezvous protocol must
 * still deliver the data: a receiver whose read fails, and a sender whose write (its part of a
 * shared copy) fails, fall back to streaming through the rings. Messages of several sizes go
 * both ways, blocking and nonblocking, at offsets that are not page aligned; every byte that
 * arrived is checked.
 * usage: cma_refused read|write|both RANK   (the refusing process; others run unfiltered) */
#define _GNU_SOURCE /* process_vm_readv */
#include "refuse_attach.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static unsigned char pattern(size_t i, int seed)
{
    return (unsigned char)((i * 131 + (size_t)seed * 7 + (i >> 12)) & 0xff);
}

static void check_data(const unsigned char *buf, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pattern(i, seed)) {
            CHECK(0, "%s: byte %zu of %zu is %u, expected %u", what, i, n, buf[i], pattern(i, seed));
            return;
        }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *which = argc > 1 ? argv[1] : "both";
    int refuser = argc > 2 ? atoi(argv[2]) : 0;
    if (rank == refuser)
        mt_refuse_attach(which);
    if (size < 2 || rank > 1)
        return mt_finish();
    int peer = 1 - rank;
    const size_t sizes[] = {64 << 10, (300 << 10) + 13, (1 << 20) + 4097, (8 << 20) + 1};
    const size_t shift = 123; /* not page aligned, on either side */
    unsigned char *buf = malloc((8 << 20) + 4097 + shift);
    CHECK(buf != NULL, "out of memory");
    for (int round = 0; round < 3; round++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            for (int dir = 0; dir < 2; dir++) { /* rank 0 sends, then rank 1 */
                int seed = round * 16 + (int)k * 2 + dir;
                unsigned char *p = buf + (dir ? shift : 0);
                char what[96];
                snprintf(what, sizeof what, "round %d, %zu bytes from rank %d", round, n, dir);
                if (rank == dir) {
                    for (size_t i = 0; i < n; i++)
                        p[i] = pattern(i, seed);
                    if (round == 1) {
                        MPI_Request r;
                        MPI_Isend(p, (int)n, MPI_BYTE, peer, seed, MPI_COMM_WORLD, &r);
                        MPI_Wait(&r, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Send(p, (int)n, MPI_BYTE, peer, seed, MPI_COMM_WORLD);
                    }
                } else {
                    memset(p, 0, n);
                    MPI_Status st;
                    if (round == 2) { /* posted late: the message waits unexpected */
                        int flag = 0;
                        while (!flag)
                            MPI_Iprobe(peer, seed, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                    }
                    MPI_Recv(p, (int)n, MPI_BYTE, peer, seed, MPI_COMM_WORLD, &st);
                    int got;
                    MPI_Get_count(&st, MPI_BYTE, &got);
                    CHECK(got == (int)n, "%s: got a count of %d", what, got);
                    check_data(p, n, seed, what);
                }
            }
        }
    /* A truncated receive still reports the truncation and keeps what fits. */
    if (rank == 0) {
        for (size_t i = 0; i < (1 << 20); i++)
            buf[i] = pattern(i, 99);
        MPI_Send(buf, 1 << 20, MPI_BYTE, 1, 99, MPI_COMM_WORLD);
    } else {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        memset(buf, 0, 1 << 20);
        int rc = MPI_Recv(buf, (1 << 19) + 5, MPI_BYTE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "a truncated receive returned class %d", cls);
        check_data(buf, (1 << 19) + 5, 99, "the truncated message");
        CHECK(buf[(1 << 19) + 5] == 0, "the byte after the receive buffer was written");
    }
    free(buf);
    return mt_finish();
}
