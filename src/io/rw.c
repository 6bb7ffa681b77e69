/* rw.c: the data access calls: explicit offsets, the individual and the shared file pointer,
 * blocking, nonblocking, collective and split collective. All go through cr_io_access.
 *
 * Nonblocking calls do their I/O when they start and return a request that is complete (the
 * standard lets an implementation complete an operation at its start); collective calls move
 * each process's data independently (the file's consistency rules ask for no more). */
#include "io/io.h"

#include "cr_impl.h"
#include "coll/op.h"
#include "comm/comm.h"
#include "dt/dtype.h"
#include "req/request.h"

#include <stdlib.h>

int cr_io_shared_add(cr_file *f, MPI_Offset add, MPI_Offset *before); /* file.c */

typedef enum { AT, INDIVIDUAL, SHARED, ORDERED } where;

/* The checks every access makes: the mode allows it, and the buffer and count are sound. */
static int access_check(const cr_file *f, bool write, where w, MPI_Offset offset, const void *buf, MPI_Count count,
                        const cr_dtype *dt)
{
    if (write && (f->amode & MPI_MODE_RDONLY))
        return cr_err(MPI_ERR_READ_ONLY, "the file %s was opened with MPI_MODE_RDONLY", f->path);
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return cr_err(MPI_ERR_ACCESS, "the file %s was opened with MPI_MODE_WRONLY: it cannot be read", f->path);
    if ((w == AT || w == INDIVIDUAL) && (f->amode & MPI_MODE_SEQUENTIAL))
        return cr_err(MPI_ERR_UNSUPPORTED_OPERATION, "the file %s was opened with MPI_MODE_SEQUENTIAL: only the "
                                                     "shared file pointer may be used", f->path);
    if (w == AT && offset < 0)
        return cr_err(MPI_ERR_ARG, "invalid offset=%lld: must not be negative", (long long)offset);
    if (count < 0)
        return cr_err(MPI_ERR_COUNT, "invalid count=%lld: must not be negative", (long long)count);
    if (!buf && count > 0 && dt->size > 0 && cr_dtype_starts_at_buffer(dt))
        return cr_err(MPI_ERR_BUFFER, "buf is NULL but count=%lld elements are to be accessed", (long long)count);
    uint64_t total;
    if (__builtin_mul_overflow((uint64_t)dt->size, (uint64_t)count, &total) || total > (uint64_t)CR_IO_OFFSET_MAX)
        return cr_err(MPI_ERR_COUNT, "count=%lld elements of %lld bytes: more than a file holds", (long long)count,
                      (long long)dt->size);
    if (!cr_io_same_size(f, f->external, f->rep, (cr_dtype *)dt))
        return cr_err(MPI_ERR_UNSUPPORTED_DATAREP, "the datatype's size in datarep \"%s\" differs from its native "
                                                   "size: Courier converts types stored in as many bytes as in memory",
                      f->datarep);
    if (total % (uint64_t)f->etype->size != 0)
        return cr_err(MPI_ERR_TYPE, "count=%lld elements of %lld bytes are not a whole number of the view's etypes "
                                    "(%lld bytes)", (long long)count, (long long)dt->size, (long long)f->etype->size);
    return MPI_SUCCESS;
}

static void status_of(MPI_Status *status, uint64_t bytes)
{
    if (status != MPI_STATUS_IGNORE)
        cr_status_out_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, bytes);
}

/* Positions of an ordered access: this process's first etype and everyone's total. */
static int ordered_place(cr_file *f, MPI_Offset mine, MPI_Offset *start)
{
    cr_dtype *off = cr_dtype_get(MPI_OFFSET);
    MPI_Offset before = 0, total = 0, base = 0;
    int err = cr_mpi_exscan(&mine, &before, 1, off, cr_op_get(MPI_SUM), f->comm);
    if (!err)
        err = cr_mpi_allreduce(&mine, &total, 1, off, cr_op_get(MPI_SUM), f->comm);
    if (!err && f->comm->rank == 0)
        err = cr_io_shared_add(f, total, &base);
    int code = err;
    int err2 = cr_mpi_bcast(&base, 1, off, 0, f->comm);
    if (!err2)
        err2 = cr_mpi_bcast(&code, 1, cr_dtype_get(MPI_INT), 0, f->comm);
    if (err || err2)
        return err ? err : err2;
    if (code)
        return cr_err(MPI_ERR_IO, "the first process could not move the shared file pointer");
    *start = base + (f->comm->rank == 0 ? 0 : before);
    return MPI_SUCCESS;
}

/* An access. `coll`: every process of the file makes it (the _all calls); collective writes go
 * through aggregators (coll.c), and a process whose arguments fail still takes part. */
static int rw_any(cr_file *f, bool write, where w, bool coll, MPI_Offset offset, void *buf, MPI_Count count,
                  cr_dtype *dt, MPI_Status *status)
{
    bool two_phase = coll && write && (w == AT || w == INDIVIDUAL) && cr_io_coll_write_eligible(f);
    uint64_t moved = 0, total;
    bool handled;
    int err = access_check(f, write, w, offset, buf, count, dt);
    if (err) {
        if (w == ORDERED) /* the others take part in the placement all the same */
            ordered_place(f, 0, &offset);
        if (two_phase)
            cr_io_coll_write(f, 0, NULL, 0, dt, false, &moved, &handled);
        return err;
    }
    MPI_Offset esize = f->etype->size, n = (MPI_Offset)((uint64_t)dt->size * (uint64_t)count) / esize, start;
    switch (w) {
    case AT: start = offset; break;
    case INDIVIDUAL: start = f->pos; break;
    case SHARED: err = n ? cr_io_shared_add(f, n, &start) : cr_mpi_file_get_position_shared(f, &start); break;
    default: err = ordered_place(f, n, &start); break;
    }
    if (err && !two_phase)
        return err;
    if (err) /* (the others wait for this process's part) */
        start = 0;
    else if (start > (CR_IO_OFFSET_MAX - n * esize) / esize)
        err = cr_err(MPI_ERR_ARG, "offset=%lld etypes is past what a file holds", (long long)start);
    else if (two_phase)
        err = cr_io_access_reach(f, start * esize, count, dt, &total);
    if (two_phase) {
        int e2 = cr_io_coll_write(f, err ? 0 : start * esize, buf, err ? 0 : count, dt, !err, &moved, &handled);
        err = err ? err : e2;
        if (!err && !handled)
            err = cr_io_access(f, write, start * esize, buf, count, dt, &moved);
    } else if (!err) {
        err = cr_io_access(f, write, start * esize, buf, count, dt, &moved);
    }
    if (err && !moved)
        return err;
    if (w == INDIVIDUAL)
        f->pos = start + (MPI_Offset)moved / esize;
    if (!err)
        status_of(status, moved);
    return err;
}

static int rw(cr_file *f, bool write, where w, MPI_Offset offset, void *buf, MPI_Count count, cr_dtype *dt,
              MPI_Status *status)
{
    return rw_any(f, write, w, false, offset, buf, count, dt, status);
}

/* A request that is complete when the call returns, with the access's status. */
static int done_request(int err, const MPI_Status *st, MPI_Request *request)
{
    if (err)
        return err;
    static const cr_request_ops ops = {0};
    cr_request *r = cr_request_new(CR_REQ_OTHER, &ops);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a request");
    r->status = *st;
    *request = cr_request_handle(r);
    cr_request_complete(r);
    return MPI_SUCCESS;
}

/* (A nonblocking collective access is made independently: its start must not wait for the
 * other processes, as the aggregators of a blocking collective write do.) */
static int irw(cr_file *f, bool write, where w, MPI_Offset offset, void *buf, MPI_Count count, cr_dtype *dt,
               MPI_Request *request)
{
    MPI_Status st;
    cr_status_set(&st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    return done_request(rw(f, write, w, offset, buf, count, dt, &st), &st, request);
}

/* Split collectives: the _begin call does the access, the _end call reports it. */
enum { SPLIT_AT_READ = 1, SPLIT_AT_WRITE, SPLIT_READ, SPLIT_WRITE, SPLIT_ORDERED_READ, SPLIT_ORDERED_WRITE };

static int split_begin(cr_file *f, int kind, bool write, where w, MPI_Offset offset, void *buf, MPI_Count count,
                       cr_dtype *dt)
{
    if (f->split_on) { /* the others take part all the same: the access with nothing to move */
        rw_any(f, write, w, true, 0, NULL, 0, dt, MPI_STATUS_IGNORE);
        return cr_err(MPI_ERR_OTHER, "a split collective is already active on the file %s: end it first", f->path);
    }
    cr_status_set(&f->split_status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    int err = rw_any(f, write, w, true, offset, buf, count, dt, &f->split_status);
    if (err)
        return err;
    f->split_on = true;
    f->split_kind = kind;
    return MPI_SUCCESS;
}

static int split_end(cr_file *f, int kind, const char *begin, MPI_Status *status)
{
    if (!f->split_on || f->split_kind != kind)
        return cr_err(MPI_ERR_OTHER, "no %s is active on the file %s", begin, f->path);
    f->split_on = false;
    if (status != MPI_STATUS_IGNORE)
        cr_status_out(status, &f->split_status);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ the calls */

int cr_mpi_file_read_at(cr_file *fh, MPI_Offset offset, void *buf, MPI_Count count, cr_dtype *datatype,
                        MPI_Status *status)
{
    return rw(fh, false, AT, offset, buf, count, datatype, status);
}

int cr_mpi_file_read_at_all(cr_file *fh, MPI_Offset offset, void *buf, MPI_Count count, cr_dtype *datatype,
                            MPI_Status *status)
{
    return rw_any(fh, false, AT, true, offset, buf, count, datatype, status);
}

int cr_mpi_file_write_at(cr_file *fh, MPI_Offset offset, const void *buf, MPI_Count count, cr_dtype *datatype,
                         MPI_Status *status)
{
    return rw(fh, true, AT, offset, (void *)buf, count, datatype, status);
}

int cr_mpi_file_write_at_all(cr_file *fh, MPI_Offset offset, const void *buf, MPI_Count count, cr_dtype *datatype,
                             MPI_Status *status)
{
    return rw_any(fh, true, AT, true, offset, (void *)buf, count, datatype, status);
}

int cr_mpi_file_iread_at(cr_file *fh, MPI_Offset offset, void *buf, MPI_Count count, cr_dtype *datatype,
                         MPI_Request *request)
{
    return irw(fh, false, AT, offset, buf, count, datatype, request);
}

int cr_mpi_file_iread_at_all(cr_file *fh, MPI_Offset offset, void *buf, MPI_Count count, cr_dtype *datatype,
                             MPI_Request *request)
{
    return irw(fh, false, AT, offset, buf, count, datatype, request);
}

int cr_mpi_file_iwrite_at(cr_file *fh, MPI_Offset offset, const void *buf, MPI_Count count, cr_dtype *datatype,
                          MPI_Request *request)
{
    return irw(fh, true, AT, offset, (void *)buf, count, datatype, request);
}

int cr_mpi_file_iwrite_at_all(cr_file *fh, MPI_Offset offset, const void *buf, MPI_Count count, cr_dtype *datatype,
                              MPI_Request *request)
{
    return irw(fh, true, AT, offset, (void *)buf, count, datatype, request);
}

int cr_mpi_file_read(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw(fh, false, INDIVIDUAL, 0, buf, count, datatype, status);
}

int cr_mpi_file_read_all(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw_any(fh, false, INDIVIDUAL, true, 0, buf, count, datatype, status);
}

int cr_mpi_file_write(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw(fh, true, INDIVIDUAL, 0, (void *)buf, count, datatype, status);
}

int cr_mpi_file_write_all(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw_any(fh, true, INDIVIDUAL, true, 0, (void *)buf, count, datatype, status);
}

int cr_mpi_file_iread(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype, MPI_Request *request)
{
    return irw(fh, false, INDIVIDUAL, 0, buf, count, datatype, request);
}

int cr_mpi_file_iread_all(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype, MPI_Request *request)
{
    return irw(fh, false, INDIVIDUAL, 0, buf, count, datatype, request);
}

int cr_mpi_file_iwrite(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype, MPI_Request *request)
{
    return irw(fh, true, INDIVIDUAL, 0, (void *)buf, count, datatype, request);
}

int cr_mpi_file_iwrite_all(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype, MPI_Request *request)
{
    return irw(fh, true, INDIVIDUAL, 0, (void *)buf, count, datatype, request);
}

int cr_mpi_file_read_shared(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw(fh, false, SHARED, 0, buf, count, datatype, status);
}

int cr_mpi_file_write_shared(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw(fh, true, SHARED, 0, (void *)buf, count, datatype, status);
}

int cr_mpi_file_iread_shared(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype, MPI_Request *request)
{
    return irw(fh, false, SHARED, 0, buf, count, datatype, request);
}

int cr_mpi_file_iwrite_shared(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype, MPI_Request *request)
{
    return irw(fh, true, SHARED, 0, (void *)buf, count, datatype, request);
}

int cr_mpi_file_read_ordered(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw(fh, false, ORDERED, 0, buf, count, datatype, status);
}

int cr_mpi_file_write_ordered(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype, MPI_Status *status)
{
    return rw(fh, true, ORDERED, 0, (void *)buf, count, datatype, status);
}

int cr_mpi_file_read_at_all_begin(cr_file *fh, MPI_Offset offset, void *buf, MPI_Count count, cr_dtype *datatype)
{
    return split_begin(fh, SPLIT_AT_READ, false, AT, offset, buf, count, datatype);
}

int cr_mpi_file_read_at_all_end(cr_file *fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_AT_READ, "MPI_File_read_at_all_begin", status);
}

int cr_mpi_file_write_at_all_begin(cr_file *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                   cr_dtype *datatype)
{
    return split_begin(fh, SPLIT_AT_WRITE, true, AT, offset, (void *)buf, count, datatype);
}

int cr_mpi_file_write_at_all_end(cr_file *fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_AT_WRITE, "MPI_File_write_at_all_begin", status);
}

int cr_mpi_file_read_all_begin(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype)
{
    return split_begin(fh, SPLIT_READ, false, INDIVIDUAL, 0, buf, count, datatype);
}

int cr_mpi_file_read_all_end(cr_file *fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_READ, "MPI_File_read_all_begin", status);
}

int cr_mpi_file_write_all_begin(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype)
{
    return split_begin(fh, SPLIT_WRITE, true, INDIVIDUAL, 0, (void *)buf, count, datatype);
}

int cr_mpi_file_write_all_end(cr_file *fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_WRITE, "MPI_File_write_all_begin", status);
}

int cr_mpi_file_read_ordered_begin(cr_file *fh, void *buf, MPI_Count count, cr_dtype *datatype)
{
    return split_begin(fh, SPLIT_ORDERED_READ, false, ORDERED, 0, buf, count, datatype);
}

int cr_mpi_file_read_ordered_end(cr_file *fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_ORDERED_READ, "MPI_File_read_ordered_begin", status);
}

int cr_mpi_file_write_ordered_begin(cr_file *fh, const void *buf, MPI_Count count, cr_dtype *datatype)
{
    return split_begin(fh, SPLIT_ORDERED_WRITE, true, ORDERED, 0, (void *)buf, count, datatype);
}

int cr_mpi_file_write_ordered_end(cr_file *fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_ORDERED_WRITE, "MPI_File_write_ordered_begin", status);
}
