/* fortran.h: what the Fortran entry points share: the Fortran INTEGER, the sentinels Fortran passes
 * by address, and the conversions of strings, attribute values and array lengths.
 *
 * The Fortran layer sits on libmpi_abi's public API only (it includes nothing but mpi.h), as a
 * library of its own, libmpifort_abi. Its invariants:
 *   - a Fortran handle is MPI_<Obj>_toint of the C handle; a Fortran LOGICAL is an int that is 1
 *     for .TRUE. and 0 for .FALSE. (gfortran's values), so LOGICAL arguments pass unchanged;
 *   - a Fortran status (INTEGER status(MPI_STATUS_SIZE)) is the C MPI_Status: the ABI's status
 *     is eight ints with MPI_SOURCE, MPI_TAG and MPI_ERROR first, which are MPI_STATUS_SIZE = 8 and
 *     the indices 1, 2, 3 Fortran uses;
 *   - the sentinels are COMMON blocks defined here; a Fortran program's references bind to these
 *     definitions, so the address of MPI_BOTTOM in any Fortran unit is &mpi_fortran_bottom_. They
 *     are read through the GOT (default visibility, no -fno-semantic-interposition), which is what
 *     makes a copy in the executable still compare equal. */
#ifndef CR_FORTRAN_H
#define CR_FORTRAN_H

#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef int cr_fint; /* Fortran's default INTEGER and LOGICAL (gfortran: 4 bytes) */

/* Handle arrays up to this many elements are converted on the stack. */
#define CR_F_SMALL 16
/* Room for the longest string a C procedure writes (MPI_MAX_LIBRARY_VERSION_STRING is the
 * longest of the MPI_MAX_* constants). */
#define CR_F_MAX_STRING 8192
_Static_assert(MPI_MAX_LIBRARY_VERSION_STRING <= CR_F_MAX_STRING, "CR_F_MAX_STRING too small");
_Static_assert(sizeof(MPI_Status) == 8 * sizeof(cr_fint), "the Fortran status is the C status");

/* The COMMON blocks of mpif.h and module mpi_constants. */
extern cr_fint mpi_fortran_bottom_, mpi_fortran_in_place_, mpi_fortran_buffer_automatic_;
extern MPI_Status mpi_fortran_status_ignore_, mpi_fortran_statuses_ignore_;
extern cr_fint mpi_fortran_errcodes_ignore_, mpi_fortran_unweighted_, mpi_fortran_weights_empty_;
extern char mpi_fortran_argv_null_, mpi_fortran_argvs_null_;

static inline void *cr_f_buf(void *p)
{
    if (p == &mpi_fortran_bottom_)
        return MPI_BOTTOM;
    if (p == &mpi_fortran_in_place_)
        return MPI_IN_PLACE;
    if (p == &mpi_fortran_buffer_automatic_)
        return MPI_BUFFER_AUTOMATIC;
    return p;
}

static inline MPI_Status *cr_f_status(MPI_Status *s)
{
    return s == &mpi_fortran_status_ignore_ ? MPI_STATUS_IGNORE : s;
}

static inline MPI_Status *cr_f_statuses(MPI_Status *s)
{
    return s == &mpi_fortran_statuses_ignore_ ? MPI_STATUSES_IGNORE : s;
}

/* Integer arrays that may be a sentinel (MPI_ERRCODES_IGNORE, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY). */
static inline int *cr_f_ints(cr_fint *a)
{
    if (a == &mpi_fortran_errcodes_ignore_)
        return MPI_ERRCODES_IGNORE;
    if (a == &mpi_fortran_unweighted_)
        return MPI_UNWEIGHTED;
    if (a == &mpi_fortran_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return a;
}

/* A count used to size a conversion array: a negative one converts nothing (the C procedure
 * then reports the bad count, naming it). */
static inline int cr_f_len(int n)
{
    return n < 0 ? 0 : n;
}

/* The Fortran procedures MPI_Op_create and the MPI_*_create_errhandler calls take are called by
 * the C library as they are. The C library passes (void *, void *, int *, MPI_Datatype *) and
 * (MPI_Comm *, int *, ...); Fortran reads every argument by reference, and reads the handle as a
 * default INTEGER at the handle's address. That is the handle's MPI_<Obj>_toint because Courier's
 * handles are those integers (toint is the identity, values below 2^31) and x86-64 is
 * little-endian, so the INTEGER is the low half of the handle. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "Fortran callbacks read a C handle's low half as the Fortran handle: little-endian only"
#endif
typedef void (*cr_f_procedure)(void);
static inline cr_f_procedure cr_f_function(cr_f_procedure f)
{
    return f;
}

void cr_f_nomem(cr_fint *ierror);
char *cr_f_string_in(const char *s, size_t len, int strip_leading);
void cr_f_string_out(char *f, size_t len, const char *c);

int cr_f_section(const CFI_cdesc_t *desc, MPI_Count count, MPI_Datatype dtype, void **buf, MPI_Count *count_out,
                 MPI_Datatype *dtype_out, MPI_Datatype *tmp, cr_fint *ierror);

enum { CR_F_ATTR_COMM, CR_F_ATTR_TYPE, CR_F_ATTR_WIN };
/* Attribute values Fortran sets (attrs.c). */
void *cr_f_attr_cell(MPI_Aint value);
_Bool cr_f_attr_is_cell(const void *p, MPI_Aint *value);
void cr_f_attr_free(void *p);
MPI_Aint cr_f_attr_value(int objkind, int keyval, void *value);
int cr_f_neighbor_count(MPI_Comm comm, int outgoing);
int cr_f_group_size(MPI_Comm comm);

#endif
