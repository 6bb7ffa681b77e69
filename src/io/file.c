/* file.c: file objects: open and close (collective), delete, size, info, group, the view, file
 * pointers (individual and shared), atomicity, sync, and their error handlers. */
#include "io/io.h"

#include "cr_impl.h"
#include "coll/op.h"
#include "comm/comm.h"
#include "dt/dtype.h"
#include "rma/rma.h"
#include "runtime/comm_create.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cr_errobj cr_file_null = {.obj = {.handle = (uintptr_t)MPI_FILE_NULL, .kind = CR_KIND_FILE, .predefined = 1},
                          .errh = &cr_errh_return};

static void file_setup(void)
{
    static bool done;
    if (!done) {
        cr_pool_setup(CR_KIND_FILE, sizeof(cr_file));
        done = true;
    }
}

static cr_dtype *offset_type(void)
{
    return cr_dtype_get(MPI_OFFSET);
}

/* One collective agreement: every process learns the first nonzero error code of `mine` across
 * the file's processes (the lowest rank's), so that all fail together. */
static int agree(cr_comm *comm, int mine)
{
    int worst = mine ? 1 : 0, any = 0;
    int err = cr_mpi_allreduce(&worst, &any, 1, cr_dtype_get(MPI_INT), cr_op_get(MPI_MAX), comm);
    if (err)
        return err;
    if (!any)
        return MPI_SUCCESS;
    return mine ? mine : cr_err(MPI_ERR_IO, "another process of the file's group failed the call");
}

/* ------------------------------------------------------------------ the shared file pointer */

/* Applies `op` (MPI_SUM, MPI_REPLACE, MPI_NO_OP) with `value` to the shared file pointer and
 * returns the value before. */
static int shared_op(cr_file *f, MPI_Offset value, MPI_Op op, MPI_Offset *before)
{
    int err = cr_mpi_win_lock(MPI_LOCK_SHARED, 0, 0, f->shared);
    if (err)
        return err;
    err = cr_mpi_fetch_and_op(&value, before, offset_type(), 0, 0, cr_op_get(op), f->shared);
    int err2 = cr_mpi_win_unlock(0, f->shared);
    return err ? err : err2;
}

static int shared_make(cr_file *f, MPI_Offset initial)
{
    void *base = NULL;
    int rank = f->comm->rank;
    int err = cr_mpi_win_allocate(rank == 0 ? (MPI_Aint)sizeof(MPI_Offset) : 0, 1, NULL, f->comm, &base,
                                  &f->shared_win);
    if (err)
        return err;
    f->shared = cr_handle_get((uintptr_t)f->shared_win, CR_KIND_WIN);
    if (rank == 0)
        memcpy(base, &initial, sizeof initial);
    /* nobody moves the pointer before it holds its first value */
    return cr_mpi_barrier(f->comm);
}

/* ------------------------------------------------------------------ open, close, delete */

/* "ufs:/path" and the like name a file system as ROMIO's prefixes do; the path follows. */
static const char *strip_prefix(const char *name)
{
    static const char *const fs[] = {"ufs:", "nfs:", "lustre:", "gpfs:", "xfs:", "pvfs2:", "panfs:", "daos:"};
    for (size_t i = 0; i < sizeof fs / sizeof *fs; i++)
        if (strncmp(name, fs[i], strlen(fs[i])) == 0)
            return name + strlen(fs[i]);
    return name;
}

static int check_amode(int amode)
{
    const int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL |
                      MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    int access = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0);
    if (amode & ~known)
        return cr_err(MPI_ERR_AMODE, "invalid amode=%#x: bits %#x are not MPI_MODE_* file modes", (unsigned)amode,
                      (unsigned)(amode & ~known));
    if (access != 1)
        return cr_err(MPI_ERR_AMODE, "invalid amode=%#x: exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and "
                                     "MPI_MODE_WRONLY is required", (unsigned)amode);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return cr_err(MPI_ERR_AMODE, "invalid amode=%#x: MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or "
                                     "MPI_MODE_EXCL", (unsigned)amode);
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return cr_err(MPI_ERR_AMODE, "invalid amode=%#x: MPI_MODE_SEQUENTIAL cannot go with MPI_MODE_RDWR",
                      (unsigned)amode);
    return MPI_SUCCESS;
}

static void file_free(cr_file *f)
{
    if (f->shared_win != MPI_WIN_NULL && f->shared_win)
        cr_mpi_win_free(&f->shared_win);
    if (f->fd >= 0)
        close(f->fd);
    if (f->etype)
        cr_dtype_release(f->etype);
    if (f->ftype)
        cr_dtype_release(f->ftype);
    if (f->info) {
        MPI_Info h = (MPI_Info)(uintptr_t)f->info->obj.handle;
        cr_mpi_info_free(&h);
    }
    if (f->comm)
        cr_comm_release(f->comm);
    if (f->eo.errh && cr_obj_unref(f->eo.errh))
        cr_obj_free(f->eo.errh);
    free(f->path);
    free(f->agg_buf);
    cr_obj_free(f);
}

static const cr_io_rep *rep_find(const char *name);

static void view_set(cr_file *f, MPI_Offset disp, cr_dtype *etype, cr_dtype *ftype, const char *datarep)
{
    cr_obj_ref(etype);
    cr_obj_ref(ftype);
    if (f->etype)
        cr_dtype_release(f->etype);
    if (f->ftype)
        cr_dtype_release(f->ftype);
    f->disp = disp;
    f->etype = etype;
    f->ftype = ftype;
    f->view_contig = cr_dtype_is_contig(ftype) && ftype->size == ftype->extent;
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->external = strcmp(datarep, "external32") == 0;
    f->rep = rep_find(datarep);
    f->pos = 0;
}

int cr_mpi_file_open(cr_comm *comm, const char *filename, int amode, cr_info *info, MPI_File *fh)
{
    if (comm->inter)
        return cr_err(MPI_ERR_COMM, "comm is an intercommunicator: files are opened over intracommunicators");
    if (!filename)
        return cr_err(MPI_ERR_ARG, "filename is NULL");
    int err = check_amode(amode);
    /* Every process must pass the same amode: learn it (an error on any process fails all). */
    int modes[2] = {amode, ~amode}, seen[2];
    int err2 = cr_mpi_allreduce(modes, seen, 2, cr_dtype_get(MPI_INT), cr_op_get(MPI_BAND), comm);
    if (err2)
        return err2;
    if (!err && (seen[0] != amode || seen[1] != ~amode))
        err = cr_err(MPI_ERR_NOT_SAME, "amode=%#x differs between the processes of comm", (unsigned)amode);
    if ((err = agree(comm, err)))
        return err;
    const char *path = strip_prefix(filename);
    int flags = amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    /* The first process creates the file (so that MPI_MODE_EXCL means the job made it), then
     * the others open what it made. */
    int fd = -1, e = 0;
    if (comm->rank == 0) {
        int create = (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
        while ((fd = open(path, flags | create | O_CLOEXEC, 0666)) < 0 && errno == EINTR)
            ;
        e = fd < 0 ? errno : 0;
    }
    if ((err = cr_mpi_bcast(&e, 1, cr_dtype_get(MPI_INT), 0, comm))) {
        if (fd >= 0)
            close(fd);
        return err;
    }
    if (e)
        return cr_io_errno(e, "opening", path);
    if (comm->rank != 0) {
        while ((fd = open(path, flags | O_CLOEXEC)) < 0 && errno == EINTR)
            ;
        e = fd < 0 ? errno : 0;
    }
    file_setup();
    cr_file *f = cr_obj_alloc(CR_KIND_FILE);
    char *copy = strdup(path);
    if (!f || !copy)
        err = cr_err(MPI_ERR_NO_MEM, "out of memory for a file");
    else if (e)
        err = cr_io_errno(e, "opening", path);
    if ((err = agree(comm, err))) {
        if (fd >= 0)
            close(fd);
        free(copy);
        if (f)
            cr_obj_free(f);
        return err;
    }
    f->fd = fd;
    f->path = copy;
    f->amode = amode;
    f->shared_win = MPI_WIN_NULL;
    f->eo.errh = cr_file_null.errh; /* the default for files opened from now on */
    cr_obj_ref(f->eo.errh);
    if (info) {
        MPI_Info h;
        if ((err = cr_mpi_info_dup(info, &h)) == MPI_SUCCESS)
            f->info = cr_info_get(h);
    }
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    view_set(f, 0, byte, byte, "native");
    MPI_Comm dup;
    MPI_Offset start = 0;
    if (!err && (amode & MPI_MODE_APPEND)) {
        struct stat st;
        start = fstat(fd, &st) == 0 ? st.st_size : 0;
    }
    f->pos = start;
    if (!err)
        err = cr_comm_dup_bare(comm, &dup, &f->comm);
    if ((err = agree(comm, err)) || (err = shared_make(f, start))) {
        file_free(f);
        return err;
    }
    *fh = (MPI_File)(uintptr_t)f->eo.obj.handle;
    return MPI_SUCCESS;
}

int cr_mpi_file_close(MPI_File *fh)
{
    cr_file *f = cr_file_get(*fh);
    if (!f)
        return cr_err_bad_handle(MPI_ERR_FILE, "file", (uintptr_t)*fh, "fh");
    /* Everyone's accesses are done before the file may go. */
    int err = cr_mpi_barrier(f->comm);
    if (!err && (f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->comm->rank == 0 && unlink(f->path) != 0 && errno != ENOENT)
        err = cr_io_errno(errno, "deleting", f->path);
    file_free(f);
    *fh = MPI_FILE_NULL;
    return err;
}

int cr_mpi_file_delete(const char *filename, cr_info *info)
{
    (void)info;
    if (!filename)
        return cr_err(MPI_ERR_ARG, "filename is NULL");
    const char *path = strip_prefix(filename);
    if (unlink(path) != 0)
        return cr_io_errno(errno, "deleting", path);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ size, info, group, modes */

static int writable(const cr_file *f)
{
    if (f->amode & MPI_MODE_RDONLY)
        return cr_err(MPI_ERR_READ_ONLY, "the file %s was opened with MPI_MODE_RDONLY", f->path);
    return MPI_SUCCESS;
}

/* A collective change of the file's size, made by the first process and agreed by all. */
static int resize(cr_file *f, MPI_Offset size, bool grow_only)
{
    int err = MPI_SUCCESS;
    if (size < 0)
        err = cr_err(MPI_ERR_ARG, "invalid size=%lld: must not be negative", (long long)size);
    else if (f->amode & MPI_MODE_SEQUENTIAL)
        err = cr_err(MPI_ERR_UNSUPPORTED_OPERATION, "the file %s was opened with MPI_MODE_SEQUENTIAL", f->path);
    else
        err = writable(f);
    if (!err && f->comm->rank == 0) {
        struct stat st;
        int e = 0;
        if (fstat(f->fd, &st) != 0)
            e = errno;
        else if (!grow_only)
            e = ftruncate(f->fd, size) == 0 ? 0 : errno;
        else if (st.st_size < size && (e = posix_fallocate(f->fd, st.st_size, size - st.st_size)) != 0 &&
                 (e == EOPNOTSUPP || e == EINVAL))
            e = ftruncate(f->fd, size) == 0 ? 0 : errno; /* (file systems without fallocate) */
        if (e)
            err = cr_io_errno(e, "resizing", f->path);
    }
    return agree(f->comm, err);
}

int cr_mpi_file_set_size(cr_file *fh, MPI_Offset size)
{
    return resize(fh, size, false);
}

int cr_mpi_file_preallocate(cr_file *fh, MPI_Offset size)
{
    return resize(fh, size, true);
}

int cr_mpi_file_get_size(cr_file *fh, MPI_Offset *size)
{
    struct stat st;
    if (fstat(fh->fd, &st) != 0)
        return cr_io_errno(errno, "examining", fh->path);
    *size = st.st_size;
    return MPI_SUCCESS;
}

int cr_mpi_file_get_group(cr_file *fh, MPI_Group *group)
{
    return cr_mpi_comm_group(fh->comm, group);
}

int cr_mpi_file_get_amode(cr_file *fh, int *amode)
{
    *amode = fh->amode;
    return MPI_SUCCESS;
}

int cr_mpi_file_set_info(cr_file *fh, cr_info *info)
{
    if (!info)
        return MPI_SUCCESS;
    if (!fh->info) {
        MPI_Info h;
        cr_info *i;
        int err = cr_info_new(&h, &i);
        if (err)
            return err;
        fh->info = i;
    }
    for (int k = 0; k < info->n; k++) {
        int err = cr_info_put(fh->info, info->entries[k].key, info->entries[k].value);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

int cr_mpi_file_get_info(cr_file *fh, MPI_Info *info_used)
{
    if (fh->info)
        return cr_mpi_info_dup(fh->info, info_used);
    cr_info *i;
    return cr_info_new(info_used, &i);
}

int cr_mpi_file_set_atomicity(cr_file *fh, int flag)
{
    int mine[2] = {flag ? 1 : 0, flag ? 0 : 1}, all[2];
    int err = cr_mpi_allreduce(mine, all, 2, cr_dtype_get(MPI_INT), cr_op_get(MPI_BAND), fh->comm);
    if (err)
        return err;
    if (!all[0] && !all[1])
        return cr_err(MPI_ERR_NOT_SAME, "flag=%d differs between the processes of the file", flag);
    fh->atomic = flag != 0;
    return MPI_SUCCESS;
}

int cr_mpi_file_get_atomicity(cr_file *fh, int *flag)
{
    *flag = fh->atomic;
    return MPI_SUCCESS;
}

int cr_mpi_file_sync(cr_file *fh)
{
    int err = MPI_SUCCESS;
    if (!(fh->amode & MPI_MODE_RDONLY) && fsync(fh->fd) != 0 && errno != EINVAL && errno != EROFS)
        err = cr_io_errno(errno, "syncing", fh->path);
    return agree(fh->comm, err);
}

/* ------------------------------------------------------------------ error handlers */

int cr_mpi_file_set_errhandler(cr_file *file, cr_errhandler *errhandler)
{
    return cr_errhandler_attach(file ? &file->eo.errh : &cr_file_null.errh, errhandler, CR_KIND_FILE);
}

int cr_mpi_file_get_errhandler(cr_file *file, MPI_Errhandler *errhandler)
{
    return cr_errhandler_get(file ? file->eo.errh : cr_file_null.errh, errhandler);
}

int cr_mpi_file_call_errhandler(cr_file *fh, int errorcode)
{
    cr_err_raise(&fh->eo, "MPI_File_call_errhandler", errorcode);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ the view */

/* ------------------------------------------------------------------ data representations */

static cr_io_rep *reps; /* MPI_Register_datarep's, newest first */

static const cr_io_rep *rep_find(const char *name)
{
    for (const cr_io_rep *r = reps; r; r = r->next)
        if (strcmp(r->name, name) == 0)
            return r;
    return NULL;
}

static int register_rep(const char *datarep, MPI_Datarep_conversion_function *rd, MPI_Datarep_conversion_function *wr,
                        MPI_Datarep_conversion_function_c *rd_c, MPI_Datarep_conversion_function_c *wr_c,
                        MPI_Datarep_extent_function *extent, void *extra)
{
    if (!datarep)
        return cr_err(MPI_ERR_ARG, "datarep is NULL");
    if (strlen(datarep) >= MPI_MAX_DATAREP_STRING || !datarep[0])
        return cr_err(MPI_ERR_ARG, "invalid datarep=\"%.40s\": names are 1 to %d characters", datarep,
                      MPI_MAX_DATAREP_STRING - 1);
    if (!extent)
        return cr_err(MPI_ERR_ARG, "dtype_file_extent_fn is NULL: a data representation needs its extents");
    if (!strcmp(datarep, "native") || !strcmp(datarep, "internal") || !strcmp(datarep, "external32") ||
        rep_find(datarep))
        return cr_err(MPI_ERR_DUP_DATAREP, "datarep=\"%s\" is already defined", datarep);
    cr_io_rep *r = calloc(1, sizeof *r);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a data representation");
    *r = (cr_io_rep){reps, {0}, rd, wr, rd_c, wr_c, extent, extra};
    snprintf(r->name, sizeof r->name, "%s", datarep);
    reps = r;
    return MPI_SUCCESS;
}

int cr_mpi_register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                            MPI_Datarep_conversion_function *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_rep(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL, dtype_file_extent_fn,
                        extra_state);
}

int cr_mpi_register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                              MPI_Datarep_conversion_function_c *write_conversion_fn,
                              MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_rep(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
                        extra_state);
}

bool cr_io_same_size(const cr_file *f, bool external, const cr_io_rep *rep, cr_dtype *dt)
{
    (void)f;
    if (external) {
        MPI_Count ext = 0;
        return cr_mpi_pack_external_size("external32", 1, dt, &ext) == MPI_SUCCESS && ext == dt->size;
    }
    if (!rep)
        return true;
    /* a user's representation: every element of one predefined type, whose file extent is its size */
    const cr_dtype *leaf = dt->leaf;
    MPI_Aint ext = -1;
    return leaf && rep->extent((MPI_Datatype)(uintptr_t)leaf->obj.handle, &ext, rep->extra) == MPI_SUCCESS &&
           ext == leaf->size;
}

int cr_mpi_file_set_view(cr_file *fh, MPI_Offset disp, cr_dtype *etype, cr_dtype *filetype, const char *datarep,
                         cr_info *info)
{
    int err = MPI_SUCCESS;
    bool read_only = fh->amode & MPI_MODE_RDONLY;
    if (!datarep)
        err = cr_err(MPI_ERR_ARG, "datarep is NULL");
    else if (strcmp(datarep, "native") != 0 && strcmp(datarep, "internal") != 0 && strcmp(datarep, "external32") != 0 &&
             !rep_find(datarep))
        err = cr_err(MPI_ERR_UNSUPPORTED_DATAREP, "datarep=\"%s\" is not a data representation: \"native\", "
                                                  "\"internal\", \"external32\" or one MPI_Register_datarep made", datarep);
    else if (!cr_io_same_size(fh, !strcmp(datarep, "external32"), rep_find(datarep), etype) ||
             !cr_io_same_size(fh, !strcmp(datarep, "external32"), rep_find(datarep), filetype))
        err = cr_err(MPI_ERR_UNSUPPORTED_DATAREP, "the %s's size in datarep \"%s\" differs from its native size: "
                     "Courier's views take types stored in as many bytes as in memory (in external32 not long, long "
                     "double or wchar_t; in a user's representation, types of one predefined type whose file extent "
                     "is its size)", !cr_io_same_size(fh, !strcmp(datarep, "external32"), rep_find(datarep), etype)
                     ? "etype" : "filetype", datarep);
    else if (disp == MPI_DISPLACEMENT_CURRENT && !(fh->amode & MPI_MODE_SEQUENTIAL))
        err = cr_err(MPI_ERR_ARG, "disp=MPI_DISPLACEMENT_CURRENT is only for files opened with MPI_MODE_SEQUENTIAL");
    else if ((disp < 0 && disp != MPI_DISPLACEMENT_CURRENT) || disp > CR_IO_OFFSET_MAX)
        err = cr_err(MPI_ERR_ARG, "invalid disp=%lld: must be 0 to 2^62", (long long)disp);
    else if (!(etype->flags & CR_DT_COMMITTED) || !(filetype->flags & CR_DT_COMMITTED))
        err = cr_err(MPI_ERR_TYPE, "the %s is not committed", !(etype->flags & CR_DT_COMMITTED) ? "etype" : "filetype");
    else if (etype->size <= 0)
        err = cr_err(MPI_ERR_ARG, "the etype holds no data: etypes must be at least a byte");
    else if (filetype->size % etype->size != 0)
        err = cr_err(MPI_ERR_ARG, "the filetype holds %lld bytes, not a whole number of etypes of %lld bytes",
                     (long long)filetype->size, (long long)etype->size);
    else if (filetype->size == 0)
        err = cr_err(MPI_ERR_ARG, "the filetype holds no data");
    /* MPI_ERR_IO for typemaps that go back, as ROMIO (MPICH, Open MPI) reports them */
    else if (!cr_io_type_forward(etype, read_only) || !cr_io_type_forward(filetype, read_only))
        err = cr_err(MPI_ERR_IO, "the %s has data at negative or decreasing displacements%s: etypes and filetypes "
                                 "must go forward", !cr_io_type_forward(etype, read_only) ? "etype" : "filetype",
                     read_only ? "" : ", or overlapping (allowed only in files opened MPI_MODE_RDONLY)");
    else if (filetype->extent <= 0)
        err = cr_err(MPI_ERR_IO, "the filetype's extent is %lld: filetypes tile forward from disp",
                     (long long)filetype->extent);
    else if (fh->split_on)
        err = cr_err(MPI_ERR_OTHER, "a split collective is active on the file (finish it with its _end call)");
    if ((err = agree(fh->comm, err)))
        return err;
    /* MPI_DISPLACEMENT_CURRENT: the new view starts at the file byte the shared pointer is at,
     * read once everyone is here (no access of the old view is still to move it), by the
     * first process, for all. */
    MPI_Offset start = disp;
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        MPI_Offset now = 0;
        if (fh->comm->rank == 0 && !(err = shared_op(fh, 0, MPI_NO_OP, &now)))
            start = cr_io_byte_of(fh, now * fh->etype->size);
        if ((err = agree(fh->comm, err)) || (err = cr_mpi_bcast(&start, 1, offset_type(), 0, fh->comm)))
            return err;
    }
    view_set(fh, start, etype, filetype, datarep);
    if (info)
        err = cr_mpi_file_set_info(fh, info);
    /* Both file pointers go back to the view's start, the shared one once everyone is here. */
    MPI_Offset before;
    if (!err && fh->comm->rank == 0)
        err = shared_op(fh, 0, MPI_REPLACE, &before);
    return agree(fh->comm, err);
}

static int type_out(cr_dtype *dt, MPI_Datatype *out)
{
    if (dt->d)
        return cr_mpi_type_dup(dt, out);
    *out = (MPI_Datatype)(uintptr_t)dt->obj.handle;
    return MPI_SUCCESS;
}

int cr_mpi_file_get_view(cr_file *fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    int err = type_out(fh->etype, etype);
    if (!err && (err = type_out(fh->ftype, filetype)) && fh->etype->d)
        cr_mpi_type_free(etype);
    if (err)
        return err;
    *disp = fh->disp;
    if (datarep)
        snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", fh->datarep);
    return MPI_SUCCESS;
}

int cr_mpi_file_get_type_extent(cr_file *fh, cr_dtype *datatype, MPI_Count *extent)
{
    /* native, internal (and the types external32 and users' representations are taken for)
     * have the memory's extents; a predefined type's extent in a user's representation is
     * what its extent function says */
    MPI_Aint ext = datatype->extent;
    if (fh->rep && datatype->obj.predefined) {
        int err = fh->rep->extent((MPI_Datatype)(uintptr_t)datatype->obj.handle, &ext, fh->rep->extra);
        if (err)
            return cr_err(MPI_ERR_CONVERSION, "the extent function of datarep \"%s\" returned %d", fh->rep->name, err);
    }
    *extent = ext;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ file pointers */

static int not_sequential(const cr_file *f)
{
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return cr_err(MPI_ERR_UNSUPPORTED_OPERATION, "the file %s was opened with MPI_MODE_SEQUENTIAL: only the "
                                                     "shared file pointer may be used", f->path);
    return MPI_SUCCESS;
}

/* The view position (etypes) `offset` from `whence` names, or an error. */
static int seek_to(cr_file *f, MPI_Offset offset, int whence, MPI_Offset current, MPI_Offset *to)
{
    MPI_Offset from;
    if (whence == MPI_SEEK_SET) {
        from = 0;
    } else if (whence == MPI_SEEK_CUR) {
        from = current;
    } else if (whence == MPI_SEEK_END) {
        struct stat st;
        if (fstat(f->fd, &st) != 0)
            return cr_io_errno(errno, "examining", f->path);
        from = cr_io_view_bytes_below(f, st.st_size) / f->etype->size;
    } else {
        return cr_err(MPI_ERR_ARG, "invalid whence=%d: MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", whence);
    }
    if (__builtin_add_overflow(from, offset, to) || *to < 0)
        return cr_err(MPI_ERR_ARG, "offset=%lld from position %lld is before the start of the view",
                      (long long)offset, (long long)from);
    return MPI_SUCCESS;
}

int cr_mpi_file_seek(cr_file *fh, MPI_Offset offset, int whence)
{
    int err = not_sequential(fh);
    MPI_Offset to;
    if (err || (err = seek_to(fh, offset, whence, fh->pos, &to)))
        return err;
    fh->pos = to;
    return MPI_SUCCESS;
}

int cr_mpi_file_get_position(cr_file *fh, MPI_Offset *offset)
{
    int err = not_sequential(fh);
    if (!err)
        *offset = fh->pos;
    return err;
}

int cr_mpi_file_get_byte_offset(cr_file *fh, MPI_Offset offset, MPI_Offset *disp)
{
    if (offset < 0 || offset > CR_IO_OFFSET_MAX / fh->etype->size)
        return cr_err(MPI_ERR_ARG, "invalid offset=%lld: must be 0 to 2^62 bytes of the view", (long long)offset);
    *disp = cr_io_byte_of(fh, offset * fh->etype->size);
    return MPI_SUCCESS;
}

/* Collective: the first process moves the pointer, then tells the others how it went. */
int cr_mpi_file_seek_shared(cr_file *fh, MPI_Offset offset, int whence)
{
    /* Every process's accesses before the seek are done before the pointer moves. */
    int err = cr_mpi_barrier(fh->comm);
    if (err)
        return err;
    if (fh->comm->rank == 0) {
        MPI_Offset now = 0, to, before;
        if (whence == MPI_SEEK_CUR)
            err = shared_op(fh, 0, MPI_NO_OP, &now);
        if (!err && !(err = seek_to(fh, offset, whence, now, &to)))
            err = shared_op(fh, to, MPI_REPLACE, &before);
    }
    int code = err;
    int err2 = cr_mpi_bcast(&code, 1, cr_dtype_get(MPI_INT), 0, fh->comm);
    if (err2)
        return err2;
    if (code && !err)
        return cr_err(cr_err_class(code) > 0 ? cr_err_class(code) : MPI_ERR_ARG,
                      "offset=%lld whence=%d: the shared file pointer could not move there", (long long)offset, whence);
    return err;
}

int cr_mpi_file_get_position_shared(cr_file *fh, MPI_Offset *offset)
{
    return shared_op(fh, 0, MPI_NO_OP, offset);
}

/* For rw.c: the shared pointer's fetch-and-add. */
int cr_io_shared_add(cr_file *f, MPI_Offset add, MPI_Offset *before)
{
    return shared_op(f, add, MPI_SUM, before);
}
