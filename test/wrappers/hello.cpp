// A C++ program built with mpicxx by the wrapper tests.
#include <iostream>
#include <mpi.h>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<char> name(MPI_MAX_PROCESSOR_NAME);
    int len = 0;
    MPI_Get_processor_name(name.data(), &len);
    std::cout << "C++ rank " << rank << " of " << size << " on " << std::string(name.data(), len) << std::endl;
    MPI_Finalize();
    return 0;
}
