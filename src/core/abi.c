/* abi.c: the standard ABI's own procedures: its version, the sizes of its integer types, the
 * Fortran properties a Fortran layer registers, and the MPI_<Obj>_toint/_fromint conversions.
 *
 * Handles are integers already (handle.h), so toint and fromint are the identity: predefined
 * handles give their ABI constants, user handles a stable int above 4095. */
#include "cr_impl.h"
#include "error.h"
#include "info.h"

#include <stdio.h>

int cr_mpi_abi_get_version(int *abi_major, int *abi_minor)
{
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}

int cr_mpi_abi_get_info(MPI_Info *out)
{
    cr_info *info;
    int err = cr_info_new(out, &info);
    char v[8];
    snprintf(v, sizeof v, "%zu", sizeof(MPI_Aint));
    if (!err)
        err = cr_info_put(info, "mpi_aint_size", v);
    snprintf(v, sizeof v, "%zu", sizeof(MPI_Count));
    if (!err)
        err = cr_info_put(info, "mpi_count_size", v);
    snprintf(v, sizeof v, "%zu", sizeof(MPI_Offset));
    if (!err)
        err = cr_info_put(info, "mpi_offset_size", v);
    return err;
}

/* Fortran properties are unknown until a Fortran layer (or the user) sets them, once. */
static MPI_Info fortran_info = MPI_INFO_NULL;
static struct {
    bool set;
    int size;
    unsigned char t[16], f[16];
} fortran_booleans;

int cr_mpi_abi_get_fortran_info(MPI_Info *info)
{
    if (fortran_info == MPI_INFO_NULL) {
        *info = MPI_INFO_NULL;
        return MPI_SUCCESS;
    }
    return cr_mpi_info_dup(cr_info_get(fortran_info), info);
}

int cr_mpi_abi_set_fortran_info(cr_info *info)
{
    if (fortran_info != MPI_INFO_NULL)
        return cr_err(MPI_ERR_ABI, "the Fortran ABI properties were set already (the first call wins)");
    if (!info)
        return cr_err(MPI_ERR_INFO, "info is MPI_INFO_NULL");
    return cr_mpi_info_dup(info, &fortran_info);
}

int cr_mpi_abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false, int *is_set)
{
    if (logical_size < 1 || logical_size > 16)
        return cr_err(MPI_ERR_ARG, "logical_size=%d is not a LOGICAL size (1..16 bytes)", logical_size);
    *is_set = fortran_booleans.set && fortran_booleans.size == logical_size;
    if (*is_set) {
        memcpy(logical_true, fortran_booleans.t, (size_t)logical_size);
        memcpy(logical_false, fortran_booleans.f, (size_t)logical_size);
    }
    return MPI_SUCCESS;
}

int cr_mpi_abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    if (fortran_booleans.set)
        return cr_err(MPI_ERR_ABI, "the Fortran LOGICAL values were set already (they may be set once)");
    if (logical_size < 1 || logical_size > 16)
        return cr_err(MPI_ERR_ARG, "logical_size=%d is not a LOGICAL size (1..16 bytes)", logical_size);
    fortran_booleans.set = true;
    fortran_booleans.size = logical_size;
    memcpy(fortran_booleans.t, logical_true, (size_t)logical_size);
    memcpy(fortran_booleans.f, logical_false, (size_t)logical_size);
    return MPI_SUCCESS;
}

#define TOINT_FROMINT(Obj, obj, Type)                                                              \
    int cr_mpi_##obj##_toint(Type h)                                                               \
    {                                                                                              \
        return (int)(uintptr_t)h;                                                                  \
    }                                                                                              \
    Type cr_mpi_##obj##_fromint(int i)                                                             \
    {                                                                                              \
        return (Type)(uintptr_t)(unsigned)i;                                                       \
    }

TOINT_FROMINT(Comm, comm, MPI_Comm)
TOINT_FROMINT(Errhandler, errhandler, MPI_Errhandler)
TOINT_FROMINT(File, file, MPI_File)
TOINT_FROMINT(Group, group, MPI_Group)
TOINT_FROMINT(Info, info, MPI_Info)
TOINT_FROMINT(Message, message, MPI_Message)
TOINT_FROMINT(Op, op, MPI_Op)
TOINT_FROMINT(Request, request, MPI_Request)
TOINT_FROMINT(Session, session, MPI_Session)
TOINT_FROMINT(Type, type, MPI_Datatype)
TOINT_FROMINT(Win, win, MPI_Win)
