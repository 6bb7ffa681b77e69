/* integrate.c: pi as the integral of 4/(1+x^2) from 0 to 1, by the midpoint rule. Each
 * process sums every size-th strip; MPI_Reduce adds the partial sums on rank 0.
 *   mpiexec -n 4 ./integrate [strips] */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long strips = argc > 1 ? atol(argv[1]) : 10000000;
    double h = 1.0 / (double)strips, mine = 0, pi = 0;
    double t0 = MPI_Wtime();
    for (long i = rank; i < strips; i += size) {
        double x = h * ((double)i + 0.5);
        mine += 4.0 / (1.0 + x * x);
    }
    mine *= h;
    MPI_Reduce(&mine, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pi ~= %.12f (error %.2e) from %ld strips on %d processes in %.3f s\n", pi, fabs(pi - M_PI), strips,
               size, MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
