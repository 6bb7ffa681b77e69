/* bandwidth.c: streaming bandwidth from rank 0 to rank 1: a window of 64 nonblocking sends
 * (and 64 pre-posted receives), then a short acknowledgement; MB/s = 10^6 bytes per second.
 * usage: mpiexec -n 2 bandwidth [max_bytes] */
#include "common.h"

#define WINDOW 64

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)16 << 20;
    /* Every message of a window has its own buffer, as a real pipeline would. */
    size_t per = max, total = per * WINDOW;
    if (total > ((size_t)512 << 20)) /* big messages reuse fewer buffers */
        total = (size_t)512 << 20;
    char *buf = bench_alloc(total);
    MPI_Request req[WINDOW];
    for (size_t bytes = 1; bytes <= max; bytes *= 2) {
        int windows = iters_for(bytes * WINDOW / 16, 400, 4), warm = 2;
        size_t nbuf = total / (bytes ? bytes : 1) < WINDOW ? total / bytes : WINDOW;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = 0;
            for (int w = -warm; w < windows; w++) {
                if (w == 0)
                    t0 = MPI_Wtime();
                if (rank == 0) {
                    for (int i = 0; i < WINDOW; i++)
                        MPI_Isend(buf + (i % nbuf) * bytes, (int)bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[i]);
                    MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                    MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    for (int i = 0; i < WINDOW; i++)
                        MPI_Irecv(buf + (i % nbuf) * bytes, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[i]);
                    MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                    MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
                }
            }
            double t = MPI_Wtime() - t0;
            best = t < best ? t : best;
        }
        if (rank == 0)
            printf("bandwidth bytes=%zu value=%.1f unit=MB/s\n", bytes, (double)bytes * WINDOW * windows / best / 1e6);
        fflush(stdout);
    }
    bench_free(buf);
    MPI_Finalize();
    return 0;
}
