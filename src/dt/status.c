/* status.c: the status calls that need a datatype: MPI_Get_count, MPI_Get_elements and
 * MPI_Status_set_elements (with their _x forms). The rest of the status calls live with the
 * requests (src/req/request.c). */
#include "dtype.h"
#include "loop.h"

#include "core/error.h"
#include "req/request.h"
#include "cr_impl.h"

int cr_mpi_get_count(const MPI_Status *status, cr_dtype *dt, MPI_Count *count)
{
    uint64_t bytes = cr_status_bytes(status);
    if (dt->size == 0)
        *count = bytes == 0 ? 0 : MPI_UNDEFINED;
    else
        *count = bytes % (uint64_t)dt->size ? MPI_UNDEFINED : (MPI_Count)(bytes / (uint64_t)dt->size);
    return MPI_SUCCESS;
}

int cr_mpi_get_elements(const MPI_Status *status, cr_dtype *dt, MPI_Count *count)
{
    MPI_Count n = cr_dt_elements(dt, cr_status_bytes(status));
    *count = n < 0 ? MPI_UNDEFINED : n;
    return MPI_SUCCESS;
}

int cr_mpi_get_elements_x(const MPI_Status *status, cr_dtype *dt, MPI_Count *count)
{
    return cr_mpi_get_elements(status, dt, count);
}

int cr_mpi_status_set_elements(MPI_Status *status, cr_dtype *dt, MPI_Count count)
{
    if (count < 0)
        return cr_err(MPI_ERR_COUNT, "count=%lld must not be negative", (long long)count);
    /* Whole items, then the leading elements of a partial one (a pair type has two elements
     * an item, of different sizes; a struct any mix), so MPI_Get_elements gives `count` back. */
    cr_status_set_bytes(status, cr_dt_loop_bytes_of_elements(dt->loop, count));
    return MPI_SUCCESS;
}

int cr_mpi_status_set_elements_x(MPI_Status *status, cr_dtype *dt, MPI_Count count)
{
    return cr_mpi_status_set_elements(status, dt, count);
}

