/* latency.c: ping-pong between ranks 0 and 1: one-way latency from 0 B to 4 MiB.
 * usage: mpiexec -n 2 latency [max_bytes]   (other ranks, if any, just wait) */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)4 << 20;
    char *buf = bench_alloc(max);
    for (size_t bytes = 0; bytes <= max; bytes = bytes ? bytes * 2 : 1) {
        if (bytes == 2 || bytes == 4)
            continue;
        int iters = iters_for(bytes, 20000, 400), warm = iters / 10 + 5;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = 0;
            for (int i = -warm; i < iters; i++) {
                if (i == 0)
                    t0 = MPI_Wtime();
                if (rank == 0) {
                    MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
                }
            }
            double t = (MPI_Wtime() - t0) / iters / 2;
            best = t < best ? t : best;
        }
        if (rank == 0)
            printf("latency bytes=%zu value=%.3f unit=us\n", bytes, best * 1e6);
        fflush(stdout);
    }
    bench_free(buf);
    MPI_Finalize();
    return 0;
}
