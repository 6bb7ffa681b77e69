/* darray.c: MPI_Type_create_darray: one process's part of a distributed array (HPF-style
 * block and cyclic distributions over a process grid).
 *
 * The standard defines the type by composition, dimension by dimension from the fastest-varying
 * one: the process's blocks of the previous dimension's type, placed at their indices, resized
 * to the whole dimension. Courier builds exactly that composition from the other constructors
 * (a cyclic dimension is one strided vector of whole blocks plus at most one partial block, so
 * the type stays small however large the array is) and wraps it in a type whose contents are
 * the darray arguments (MPI_Type_get_contents) and whose bounds are the whole array's. */
#include "dtype.h"

#include "core/error.h"
#include "cr_impl.h"

#include <stdlib.h>

/* The indices a process owns along one dimension: `nfull` blocks of `block` indices starting at
 * `first`, `step` indices apart, then `tail` more indices at `tail_start`. */
typedef struct dim_part {
    MPI_Count first, block, step, nfull;
    MPI_Count tail_start, tail;
} dim_part;

static int dim_part_of(int dim, MPI_Count gsize, int distrib, int darg, int psize, int coord, dim_part *out)
{
    *out = (dim_part){0};
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (psize != 1)
            return cr_err(MPI_ERR_ARG, "dimension %d is MPI_DISTRIBUTE_NONE but array_of_psizes[%d]=%d: must be 1",
                          dim, dim, psize);
        *out = (dim_part){.first = 0, .block = gsize, .step = gsize, .nfull = 1};
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_BLOCK: {
        MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        if (b * psize < gsize)
            return cr_err(MPI_ERR_ARG,
                          "dimension %d: array_of_dargs[%d]=%d times array_of_psizes[%d]=%d is less than "
                          "array_of_gsizes[%d]=%lld: the blocks do not cover the dimension",
                          dim, dim, darg, dim, psize, dim, (long long)gsize);
        MPI_Count start = coord * b, len = CR_MAX((MPI_Count)0, CR_MIN(b, gsize - start));
        *out = (dim_part){.first = start, .block = len, .step = len, .nfull = len > 0};
        return MPI_SUCCESS;
    }
    case MPI_DISTRIBUTE_CYCLIC: {
        MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg, start = coord * b, step = (MPI_Count)psize * b;
        /* blocks at start, start + step, ... below gsize; all whole but maybe the last */
        MPI_Count nblocks = start < gsize ? (gsize - start + step - 1) / step : 0;
        MPI_Count last = start + (nblocks - 1) * step;
        bool partial = nblocks > 0 && last + b > gsize;
        *out = (dim_part){.first = start, .block = b, .step = step, .nfull = nblocks - partial};
        if (partial)
            out->tail_start = last, out->tail = gsize - last;
        return MPI_SUCCESS;
    }
    default:
        return cr_err(MPI_ERR_ARG,
                      "invalid array_of_distribs[%d]=%d: must be MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC or "
                      "MPI_DISTRIBUTE_NONE",
                      dim, distrib);
    }
}

/* The dimension's type: the process's copies of `elem` (one index apart is `stride` bytes),
 * resized to the whole dimension. Returns a new handle. */
static int dim_type(const dim_part *p, MPI_Count gsize, MPI_Aint stride, MPI_Datatype elem, MPI_Datatype *out)
{
    MPI_Datatype blocks = MPI_DATATYPE_NULL, placed = MPI_DATATYPE_NULL;
    int err = MPI_SUCCESS;
    cr_dtype *e = cr_dtype_get(elem);
    MPI_Count lens[2];
    MPI_Aint disps[2];
    MPI_Datatype types[2];
    int n = 0;
    if (p->nfull > 1) {
        err = cr_mpi_type_create_hvector(p->nfull, p->block, (MPI_Aint)p->step * stride, e, &blocks);
        lens[n] = 1, disps[n] = (MPI_Aint)p->first * stride, types[n++] = blocks;
    } else if (p->nfull == 1) {
        lens[n] = p->block, disps[n] = (MPI_Aint)p->first * stride, types[n++] = elem;
    }
    if (!err && p->tail > 0)
        lens[n] = p->tail, disps[n] = (MPI_Aint)p->tail_start * stride, types[n++] = elem;
    if (!err)
        err = cr_mpi_type_create_struct(n, cr_cvec_of(lens, 1), cr_cvec_of(disps, 1), types, &placed);
    if (!err)
        err = cr_mpi_type_create_resized(cr_dtype_get(placed), 0, (MPI_Aint)gsize * stride, out);
    if (blocks != MPI_DATATYPE_NULL)
        cr_mpi_type_free(&blocks);
    if (placed != MPI_DATATYPE_NULL)
        cr_mpi_type_free(&placed);
    return err;
}

int cr_mpi_type_create_darray(int size, int rank, int ndims, cr_cvec gsizes, const int distribs[],
                              const int dargs[], const int psizes[], int order, cr_dtype *oldtype,
                              MPI_Datatype *newtype)
{
    if (size <= 0)
        return cr_err(MPI_ERR_ARG, "invalid size=%d: must be positive", size);
    if (rank < 0 || rank >= size)
        return cr_err(MPI_ERR_RANK, "invalid rank=%d: must be in [0, size=%d)", rank, size);
    if (ndims <= 0)
        return cr_err(MPI_ERR_ARG, "invalid ndims=%d: must be positive", ndims);
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return cr_err(MPI_ERR_ARG, "invalid order=%d: must be MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
    int64_t procs = 1;
    for (int i = 0; i < ndims; i++) {
        if (cr_cvec_at(gsizes, (size_t)i) <= 0)
            return cr_err(MPI_ERR_ARG, "invalid array_of_gsizes[%d]=%lld: must be positive", i,
                          (long long)cr_cvec_at(gsizes, (size_t)i));
        if (psizes[i] <= 0)
            return cr_err(MPI_ERR_ARG, "invalid array_of_psizes[%d]=%d: must be positive", i, psizes[i]);
        if (dargs[i] <= 0 && dargs[i] != MPI_DISTRIBUTE_DFLT_DARG)
            return cr_err(MPI_ERR_ARG, "invalid array_of_dargs[%d]=%d: must be positive or MPI_DISTRIBUTE_DFLT_DARG",
                          i, dargs[i]);
        procs *= psizes[i];
        if (procs > size)
            break;
    }
    if (procs != size)
        return cr_err(MPI_ERR_ARG, "the process grid array_of_psizes has %s%lld processes, but size=%d",
                      procs > size ? "more than " : "", (long long)procs, size);

    /* The process's coordinates: the grid is numbered in row-major order whatever `order` is. */
    int *coords = malloc((size_t)ndims * sizeof *coords);
    dim_part *parts = malloc((size_t)ndims * sizeof *parts);
    MPI_Count *ints = malloc((size_t)(4 * (int64_t)ndims + 4) * sizeof *ints);
    int err = coords && parts && ints ? MPI_SUCCESS : cr_err(MPI_ERR_NO_MEM, "out of memory for ndims=%d", ndims);
    for (int i = ndims - 1, r = rank; i >= 0 && !err; i--) {
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    for (int i = 0; i < ndims && !err; i++)
        err = dim_part_of(i, cr_cvec_at(gsizes, (size_t)i), distribs[i], dargs[i], psizes[i], coords[i], &parts[i]);

    /* From the fastest-varying dimension out, each dimension's type is made of the previous one. */
    MPI_Datatype cur = (MPI_Datatype)cr_handle_of(oldtype);
    MPI_Aint stride = oldtype->extent;
    for (int k = 0; k < ndims && !err; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Count g = cr_cvec_at(gsizes, (size_t)i);
        MPI_Datatype next;
        err = dim_type(&parts[i], g, stride, cur, &next);
        if (k > 0)
            cr_mpi_type_free(&cur);
        cur = err ? MPI_DATATYPE_NULL : next;
        stride *= (MPI_Aint)g;
    }
    if (!err) {
        ints[0] = size, ints[1] = rank, ints[2] = ndims;
        for (int i = 0; i < ndims; i++) {
            ints[3 + i] = cr_cvec_at(gsizes, (size_t)i);
            ints[3 + ndims + i] = distribs[i];
            ints[3 + 2 * ndims + i] = dargs[i];
            ints[3 + 3 * ndims + i] = psizes[i];
        }
        ints[3 + 4 * ndims] = order;
        err = cr_dt_wrap(MPI_COMBINER_DARRAY, ints, 4 * ndims + 4, oldtype, cr_dtype_get(cur), 0, stride, newtype);
        cr_mpi_type_free(&cur);
    }
    free(coords);
    free(parts);
    free(ints);
    return err;
}
