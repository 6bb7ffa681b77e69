/* support.c: the Fortran layer's COMMON-block sentinels and the conversions the generated entry
 * points call (strings, attribute values, the lengths of handle arrays). */
#include "fortran.h"

#include <stdbool.h>
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

/* An mpi_f08 choice buffer given as a C descriptor (TYPE(*), DIMENSION(..)): a contiguous array
 * or a scalar is its address; an array section with gaps (a(:, 2:6:2)) becomes one element of a
 * datatype that places the `count` elements of `dtype` on the section's elements, in Fortran's
 * element order, so nonblocking calls work on the section itself, without a copy. Each element
 * of the section must hold a whole number of `dtype`s with nothing between them (MPI_INTEGER on
 * an INTEGER array). Returns nonzero, with *ierror set, when the section cannot hold the data. */
int cr_f_section(const CFI_cdesc_t *desc, MPI_Count count, MPI_Datatype dtype, void **buf, MPI_Count *count_out,
                 MPI_Datatype *dtype_out, MPI_Datatype *tmp, cr_fint *ierror)
{
    *buf = cr_f_buf(desc->base_addr);
    *count_out = count;
    *dtype_out = dtype;
    *tmp = MPI_DATATYPE_NULL;
    size_t elems = 1;
    bool contiguous = true;
    CFI_index_t expect = (CFI_index_t)desc->elem_len;
    for (int d = 0; d < desc->rank; d++) {
        CFI_index_t n = desc->dim[d].extent;
        if (n > 1 && desc->dim[d].sm != expect)
            contiguous = false;
        expect *= n;
        elems *= (size_t)(n > 0 ? n : 0);
    }
    if (contiguous || count <= 0 || elems == 0)
        return 0;
    /* How many dtypes make one element. */
    MPI_Count size = 0, lb = 0, extent = 0;
    if (MPI_Type_size_c(dtype, &size) != MPI_SUCCESS || MPI_Type_get_extent_c(dtype, &lb, &extent) != MPI_SUCCESS ||
        size <= 0 || size != extent || lb != 0 || desc->elem_len % (size_t)size != 0) {
        *ierror = MPI_ERR_TYPE; /* the datatype does not tile the section's elements */
        return 1;
    }
    MPI_Count per_elem = (MPI_Count)desc->elem_len / size;
    MPI_Count needed = (count + per_elem - 1) / per_elem;
    if (count % per_elem != 0 || (size_t)needed > elems) {
        *ierror = MPI_ERR_BUFFER; /* more data than the section has elements */
        return 1;
    }
    /* The byte offset of each element used, walking the indices in Fortran order. */
    MPI_Count *offsets = malloc(sizeof *offsets * (size_t)needed);
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    if (!offsets) {
        *ierror = MPI_ERR_NO_MEM;
        return 1;
    }
    for (MPI_Count k = 0; k < needed; k++) {
        MPI_Count off = 0;
        for (int d = 0; d < desc->rank; d++)
            off += (MPI_Count)(idx[d] * desc->dim[d].sm);
        offsets[k] = off;
        for (int d = 0; d < desc->rank && ++idx[d] == desc->dim[d].extent; d++)
            idx[d] = 0;
    }
    int err = MPI_Type_create_hindexed_block_c(needed, per_elem, offsets, dtype, tmp);
    free(offsets);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(tmp);
    if (err != MPI_SUCCESS) {
        *ierror = err;
        return 1;
    }
    *count_out = 1;
    *dtype_out = *tmp;
    return 0;
}

/* The value Fortran gets for an attribute: what its cell holds when Fortran set it (attrs.c);
 * the value itself for the predefined ones (C points at it); else C's pointer, as an address. */
MPI_Aint cr_f_attr_value(int objkind, int keyval, void *value)
{
    MPI_Aint v;
    if (cr_f_attr_is_cell(value, &v))
        return v;
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
