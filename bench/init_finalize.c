/* init_finalize.c: the smallest MPI program, to time start-up and shut-down of a whole job
 * (bench/compare.py runs `mpiexec -n N init_finalize` and measures its wall time). */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
