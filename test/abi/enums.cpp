// mpi.h from C++: it compiles, and the two named enums of the ABI have their enumerators.
#include <mpi.h>
#include <cstdio>
#include <type_traits>

static_assert(std::is_same<decltype(MPI_T_CB_REQUIRE_NONE), MPI_T_cb_safety>::value, "MPI_T_cb_safety");
static_assert(std::is_same<decltype(MPI_T_SOURCE_ORDERED), MPI_T_source_order>::value, "MPI_T_source_order");
static_assert(std::is_pointer<MPI_Comm>::value && sizeof(MPI_Comm) == sizeof(void *), "handles are pointers");
static_assert(!std::is_same<MPI_Comm, MPI_Datatype>::value, "handle types are distinct");

int main()
{
    std::printf("C++ checks passed\n");
    return MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE == 63 ? 0 : 1;
}
