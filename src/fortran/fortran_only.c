/* fortran_only.c: the procedures only Fortran has: MPI_F_SYNC_REG and the conversions between
 * the two Fortran statuses (TYPE(MPI_Status) and INTEGER(MPI_STATUS_SIZE)). */
#include "fortran.h"

#include <string.h>

/* Does nothing, on purpose: a call the compiler cannot see into makes it assume the buffer was
 * read and written, so it keeps no copy of it in registers across a nonblocking operation. */
void pmpi_f_sync_reg_(void *buf)
{
}
extern __typeof__(pmpi_f_sync_reg_) mpi_f_sync_reg_ __attribute__((weak, alias("pmpi_f_sync_reg_")));

/* Both statuses are the C status's eight ints (fortran.h). */
void pmpi_status_f082f_(const MPI_Status *f08_status, cr_fint *f_status, cr_fint *ierror)
{
    memcpy(f_status, f08_status, sizeof *f08_status);
    *ierror = MPI_SUCCESS;
}
extern __typeof__(pmpi_status_f082f_) mpi_status_f082f_ __attribute__((weak, alias("pmpi_status_f082f_")));

void pmpi_status_f2f08_(const cr_fint *f_status, MPI_Status *f08_status, cr_fint *ierror)
{
    memcpy(f08_status, f_status, sizeof *f08_status);
    *ierror = MPI_SUCCESS;
}
extern __typeof__(pmpi_status_f2f08_) mpi_status_f2f08_ __attribute__((weak, alias("pmpi_status_f2f08_")));
