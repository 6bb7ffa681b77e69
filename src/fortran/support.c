/* support.c: the Fortran layer's COMMON-block sentinels and the conversions the generated entry
 * points call (strings, attribute values, the lengths of handle arrays). */
#include "fortran.h"

#include <string.h>

/* Sizes agree with the Fortran declarations in mpif.h (gen/gen_fortran.py: SENTINELS), so the
 * linker sees one size for each block; gfortran aligns COMMON blocks to 16 bytes, 32 from 32 bytes up. */
#define COMMON_BLOCK __attribute__((aligned(16)))
COMMON_BLOCK cr_fint mpi_fortran_bottom_;
COMMON_BLOCK cr_fint mpi_fortran_in_place_;
COMMON_BLOCK cr_fint mpi_fortran_buffer_automatic_;
__attribute__((aligned(32))) MPI_Status mpi_fortran_status_ignore_;
__attribute__((aligned(32))) MPI_Status mpi_fortran_statuses_ignore_;
COMMON_BLOCK cr_fint mpi_fortran_errcodes_ignore_;
COMMON_BLOCK cr_fint mpi_fortran_unweighted_;
COMMON_BLOCK cr_fint mpi_fortran_weights_empty_;
COMMON_BLOCK char mpi_fortran_argv_null_;
COMMON_BLOCK char mpi_fortran_argvs_null_;

void cr_f_nomem(cr_fint *ierror)
{
    *ierror = MPI_ERR_NO_MEM;
}

/* A Fortran CHARACTER argument as a C string: trailing blanks are not part of it (the standard's
 * rule for names, keys and values); for info keys and values leading blanks are not either. */
char *cr_f_string_in(const char *s, size_t len, int strip_leading)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    while (strip_leading && len > 0 && s[0] == ' ') {
        s++;
        len--;
    }
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

/* A C string into a Fortran CHARACTER of length len: truncated to fit, padded with blanks. */
void cr_f_string_out(char *f, size_t len, const char *c)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

/* The value Fortran gets for an attribute. Attributes Fortran sets are integers stored as the
 * C pointer's value; the predefined ones point at the value in C, and Fortran gets the value. */
MPI_Aint cr_f_attr_value(int objkind, int keyval, void *value)
{
    if (objkind == CR_F_ATTR_COMM) {
        if (keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
            keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM)
            return *(int *)value;
    } else if (objkind == CR_F_ATTR_WIN) {
        if (keyval == MPI_WIN_SIZE)
            return *(MPI_Aint *)value;
        if (keyval == MPI_WIN_DISP_UNIT || keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL)
            return *(int *)value;
    }
    return (MPI_Aint)(intptr_t)value; /* MPI_WIN_BASE: the address itself */
}

/* Elements of MPI_Alltoallw's type arrays: one per process of the (remote) group. An invalid
 * communicator gives 0, and the C procedure reports it. */
int cr_f_group_size(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    if ((inter ? MPI_Comm_remote_size(comm, &n) : MPI_Comm_size(comm, &n)) != MPI_SUCCESS)
        return 0;
    return n;
}

/* Elements of MPI_Neighbor_alltoallw's type arrays: the topology's out- or in-degree. */
int cr_f_neighbor_count(MPI_Comm comm, int outgoing)
{
    int topo = MPI_UNDEFINED, indeg = 0, outdeg = 0, weighted = 0, rank = 0;
    if (MPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return 0;
    if (topo == MPI_CART) {
        int ndims = 0;
        MPI_Cartdim_get(comm, &ndims);
        return 2 * ndims;
    }
    if (topo == MPI_GRAPH) {
        MPI_Comm_rank(comm, &rank);
        MPI_Graph_neighbors_count(comm, rank, &indeg);
        return indeg;
    }
    if (topo == MPI_DIST_GRAPH && MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted) == MPI_SUCCESS)
        return outgoing ? outdeg : indeg;
    return 0;
}
