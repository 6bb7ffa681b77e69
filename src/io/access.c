/* access.c: the one path of every data access call: count elements of a datatype in memory to
 * or from the bytes of the file view, through pread/pwrite on the file's descriptor.
 *
 * The view's data is a stream: stream byte P lies in tile P / size(filetype) of the filetype,
 * tiled from disp with its extent. The datatype engine's iovec walk (cr_dt_iov) describes a
 * window of that stream as addresses; given a made-up base, those addresses are file offsets.
 * Memory that is not one run is packed into (or unpacked from) a bounce buffer in chunks. */
#include "io/io.h"

#include "cr_impl.h"
#include "dt/dtype.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

enum { MAXSEG = CR_IO_MAXSEG };
/* The base the iovec walk adds the view's offsets to. It only has to keep base + offset inside
 * the address arithmetic of uintptr_t: offsets are below 2^62 (MPI_Offset, checked). */
#define FAKE_BASE ((uintptr_t)1 << 40)
/* Bytes packed (or read into the bounce buffer) at a time for memory that is not one run, and
 * the largest span a strided read takes in one pread (data sieving). */
#define CHUNK ((uint64_t)4 << 20)

typedef cr_io_seg seg;

int cr_io_errno(int e, const char *doing, const char *path)
{
    int cls;
    switch (e) {
    case ENOENT: cls = MPI_ERR_NO_SUCH_FILE; break;
    case EEXIST: cls = MPI_ERR_FILE_EXISTS; break;
    case EACCES:
    case EPERM: cls = MPI_ERR_ACCESS; break;
    case EROFS: cls = MPI_ERR_READ_ONLY; break;
    case ENOSPC:
    case EFBIG: cls = MPI_ERR_NO_SPACE; break;
    case EDQUOT: cls = MPI_ERR_QUOTA; break;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: cls = MPI_ERR_BAD_FILE; break;
    case EBUSY:
    case ETXTBSY: cls = MPI_ERR_FILE_IN_USE; break;
    default: cls = MPI_ERR_IO; break;
    }
    return cr_err(cls, "%s %s: %s", doing, path, strerror(e));
}

uint64_t cr_io_view_segments(const cr_file *f, MPI_Offset at, uint64_t len, cr_io_seg *out, int *nseg)
{
    const cr_dtype *ft = f->ftype;
    if (f->view_contig) {
        out[0] = (seg){f->disp + ft->true_lb + at, len};
        *nseg = 1;
        return len;
    }
    uint64_t fsize = (uint64_t)ft->size, tile = (uint64_t)at / fsize, within = (uint64_t)at % fsize;
    uint64_t ntiles = (within + len + fsize - 1) / fsize;
    uintptr_t base = FAKE_BASE + (uintptr_t)f->disp + (uintptr_t)(tile * (uint64_t)ft->extent);
    struct iovec iov[MAXSEG];
    int n = 0, k = 0;
    uint64_t got = cr_dt_iov((void *)base, (MPI_Count)ntiles, ft, within, len, iov, MAXSEG, &n);
    for (int i = 0; i < n; i++) {
        MPI_Offset o = (MPI_Offset)((uintptr_t)iov[i].iov_base - FAKE_BASE);
        if (k && out[k - 1].off + (MPI_Offset)out[k - 1].len == o)
            out[k - 1].len += iov[i].iov_len;
        else
            out[k++] = (seg){o, iov[i].iov_len};
    }
    *nseg = k;
    return got;
}

MPI_Offset cr_io_byte_of(const cr_file *f, MPI_Offset at)
{
    seg s;
    int n;
    cr_io_view_segments(f, at, 1, &s, &n);
    return s.off;
}

bool cr_io_type_forward(const cr_dtype *dt, bool overlap_ok)
{
    uint64_t size = (uint64_t)dt->size, done = 0;
    MPI_Offset start = 0, end = 0;
    while (done < size) {
        struct iovec iov[MAXSEG];
        int n = 0;
        uint64_t got = cr_dt_iov((void *)FAKE_BASE, 1, dt, done, size - done, iov, MAXSEG, &n);
        for (int i = 0; i < n; i++) {
            MPI_Offset o = (MPI_Offset)((intptr_t)((uintptr_t)iov[i].iov_base - FAKE_BASE));
            if (o < start || (o < end && !overlap_ok))
                return false;
            start = o;
            end = CR_MAX(end, o + (MPI_Offset)iov[i].iov_len);
        }
        if (!got)
            break;
        done += got;
    }
    return true;
}

/* Bytes of one tile (at file offset 0) whose offset is below `rel`. */
static uint64_t tile_bytes_below(const cr_file *f, MPI_Offset rel)
{
    uint64_t fsize = (uint64_t)f->ftype->size, done = 0, below = 0;
    while (done < fsize) {
        struct iovec iov[MAXSEG];
        int n = 0;
        uint64_t got = cr_dt_iov((void *)FAKE_BASE, 1, f->ftype, done, fsize - done, iov, MAXSEG, &n);
        for (int i = 0; i < n; i++) {
            MPI_Offset o = (MPI_Offset)((uintptr_t)iov[i].iov_base - FAKE_BASE);
            if (o < rel)
                below += (uint64_t)CR_MIN((MPI_Offset)iov[i].iov_len, rel - o);
        }
        if (!got)
            break;
        done += got;
    }
    return below;
}

MPI_Offset cr_io_view_bytes_below(const cr_file *f, MPI_Offset end)
{
    const cr_dtype *ft = f->ftype;
    if (f->view_contig)
        return CR_MAX(end - f->disp - ft->true_lb, 0);
    MPI_Offset rel = end - f->disp;
    if (rel <= 0 || ft->size == 0)
        return 0;
    /* Filetypes have nondecreasing displacements: the tiles that start more than the type's
     * reach (its true upper bound) before `rel` are whole. */
    MPI_Offset reach = (ft->true_lb + ft->true_extent + ft->extent - 1) / ft->extent;
    MPI_Offset t = rel / ft->extent, whole = t > reach ? t - reach : 0;
    MPI_Offset bytes = whole * ft->size;
    for (MPI_Offset k = whole; k <= t; k++)
        bytes += (MPI_Offset)tile_bytes_below(f, rel - k * ft->extent);
    return bytes;
}

int cr_io_full(int fd, bool write, char *p, uint64_t len, MPI_Offset off, uint64_t *done)
{
    *done = 0;
    while (*done < len) {
        size_t n = (size_t)CR_MIN(len - *done, (uint64_t)1 << 30);
        ssize_t r = write ? pwrite(fd, p + *done, n, off + (MPI_Offset)*done) : pread(fd, p + *done, n, off + (MPI_Offset)*done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (r == 0) {
            if (write)
                return ENOSPC;
            break;
        }
        *done += (uint64_t)r;
    }
    return 0;
}

/* Reads segments that lie close together with one pread of their span (data sieving: a
 * strided view costs one system call a chunk instead of one a piece). */
static int sieve_read(int fd, const seg *s, int n, MPI_Offset span, char *mem, uint64_t *got, char **sieve)
{
    MPI_Offset first = s[0].off;
    if (!*sieve && !(*sieve = malloc(CHUNK)))
        return ENOMEM;
    uint64_t have;
    int e = cr_io_full(fd, false, *sieve, (uint64_t)span, first, &have);
    if (e)
        return e;
    for (int i = 0; i < n; i++) {
        uint64_t at = (uint64_t)(s[i].off - first);
        uint64_t take = at >= have ? 0 : CR_MIN(s[i].len, have - at);
        memcpy(mem + *got, *sieve + at, take);
        *got += take;
        if (take < s[i].len)
            break;
    }
    return 0;
}

/* Moves stream bytes [at, at + len) between the view and `mem` (one run); *got is short only
 * when a read meets the end of the file. Returns 0 or an errno. */
static int move_stream(const cr_file *f, bool write, MPI_Offset at, char *mem, uint64_t len, uint64_t *got)
{
    *got = 0;
    seg s[MAXSEG];
    char *sieve = NULL;
    int e = 0;
    while (*got < len && !e) {
        int n;
        uint64_t desc = cr_io_view_segments(f, at + (MPI_Offset)*got, len - *got, s, &n), before = *got;
        MPI_Offset end = 0; /* (segments of a read-only view may overlap: the span ends at the furthest) */
        for (int i = 0; i < n; i++)
            end = CR_MAX(end, s[i].off + (MPI_Offset)s[i].len);
        MPI_Offset span = end - s[0].off;
        if (!write && n > 1 && (uint64_t)span <= CHUNK && (uint64_t)span <= 2 * desc) {
            e = sieve_read(f->fd, s, n, span, mem, got, &sieve);
        } else {
            for (int i = 0; i < n && !e; i++) {
                uint64_t done;
                e = cr_io_full(f->fd, write, mem + *got, s[i].len, s[i].off, &done);
                *got += done;
                if (done < s[i].len)
                    break;
            }
        }
        if (*got - before < desc)
            break; /* the end of the file */
    }
    free(sieve);
    return e;
}

/* Atomic mode: the access holds a lock on its file span (open file description locks, so the
 * processes of one node exclude each other too). */
static int span_lock(const cr_file *f, MPI_Offset first, MPI_Offset last, short type)
{
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = first, .l_len = last - first};
#ifdef F_OFD_SETLKW
    int cmd = F_OFD_SETLKW;
#else
    int cmd = F_SETLKW;
#endif
    while (fcntl(f->fd, cmd, &l) != 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

/* A user's conversion function over the first `items` data items (the predefined elements of
 * dt's typemap, tiled: the standard's count) between buf and the file's bytes, in calls of at
 * most INT32_MAX items for functions with an int count, `position` naming the first item of each. */
static int user_convert(const cr_file *f, bool write, void *buf, uint64_t items, cr_dtype *dt, char *filebuf)
{
    const cr_io_rep *r = f->rep;
    MPI_Datatype h = (MPI_Datatype)(uintptr_t)dt->obj.handle;
    uint64_t item_bytes = (uint64_t)dt->leaf->size; /* (types in a user's representation have a leaf: rw.c) */
    for (uint64_t done = 0; done < items;) {
        uint64_t n = r->read_c || r->write_c ? items - done : CR_MIN(items - done, (uint64_t)INT32_MAX);
        char *fb = filebuf + done * item_bytes;
        int rc = r->read_c || r->write_c ? (write ? r->write_c : r->read_c)(buf, h, (MPI_Count)n, fb, (MPI_Offset)done, r->extra)
                                         : (write ? r->write : r->read)(buf, h, (int)n, fb, (MPI_Offset)done, r->extra);
        if (rc != MPI_SUCCESS)
            return cr_err(MPI_ERR_CONVERSION, "the %s conversion function of datarep \"%s\" returned %d",
                          write ? "write" : "read", r->name, rc);
        done += n;
    }
    return MPI_SUCCESS;
}

int cr_io_access_reach(const cr_file *f, MPI_Offset at, MPI_Count count, const cr_dtype *dt, uint64_t *total_out)
{
    uint64_t total;
    *total_out = 0;
    if (__builtin_mul_overflow((uint64_t)count, (uint64_t)dt->size, &total) || total > (uint64_t)INT64_MAX / 2 ||
        (uint64_t)at > (uint64_t)INT64_MAX / 2 - total)
        return cr_err(MPI_ERR_COUNT, "count=%lld elements of %lld bytes at stream byte %lld reach past what a file "
                                     "offset holds", (long long)count, (long long)dt->size, (long long)at);
    if (total == 0)
        return MPI_SUCCESS;
    /* The last tile's end stays inside CR_IO_OFFSET_MAX, so no offset sum below overflows. */
    const cr_dtype *ft = f->ftype;
    uint64_t last_tile = (uint64_t)(at + (MPI_Offset)total - 1) / (uint64_t)ft->size, reach;
    if (__builtin_mul_overflow(last_tile + 1, (uint64_t)ft->extent, &reach) ||
        __builtin_add_overflow(reach, (uint64_t)(f->disp + ft->true_lb + ft->true_extent), &reach) ||
        reach > (uint64_t)CR_IO_OFFSET_MAX)
        return cr_err(MPI_ERR_ARG, "the access reaches past file offset 2^62 (stream bytes %lld to %lld of the view)",
                      (long long)at, (long long)(at + (MPI_Offset)total));
    *total_out = total;
    return MPI_SUCCESS;
}

int cr_io_access(cr_file *f, bool write, MPI_Offset at, void *buf, MPI_Count count, cr_dtype *dt, uint64_t *moved)
{
    *moved = 0;
    uint64_t total;
    int reach_err = cr_io_access_reach(f, at, count, dt, &total);
    if (reach_err || total == 0)
        return reach_err;
    /* (converted data has its native size here: rw.c's checks refuse other types) */
    bool convert = f->external || (f->rep && (write ? f->rep->write || f->rep->write_c : f->rep->read || f->rep->read_c));
    bool contig = cr_dtype_is_contig_n(dt, count) && !convert;
    uint64_t chunk = contig || convert ? total : CR_MIN(total, CHUNK);
    char *tmp = contig ? NULL : malloc(chunk);
    if (!contig && !tmp)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a bounce buffer of %llu bytes", (unsigned long long)chunk);
    MPI_Offset first = 0, last = 0;
    int e = 0;
    bool locked = false;
    if (f->atomic) {
        first = cr_io_byte_of(f, at);
        last = cr_io_byte_of(f, at + (MPI_Offset)total - 1) + 1;
        e = span_lock(f, first, last, write ? F_WRLCK : F_RDLCK);
        locked = !e;
    }
    if (convert && !e) {
        /* external32 (types whose external size is their native size, set_view and the check
         * below make sure): the stream converted whole, big-endian in the file */
        uint64_t got = 0;
        MPI_Count position = 0;
        int err = MPI_SUCCESS;
        if (write) {
            err = f->external ? cr_mpi_pack_external("external32", buf, count, dt, tmp, (MPI_Count)total, &position)
                              : user_convert(f, true, buf, total / (uint64_t)dt->leaf->size, dt, tmp);
            if (!err)
                e = move_stream(f, true, at, tmp, total, &got);
        } else {
            /* whole elements (external32) or whole items (a user's representation) only: a
             * partial one at the end of the file stays as it was */
            e = move_stream(f, false, at, tmp, total, &got);
            MPI_Count whole = (MPI_Count)(got / (uint64_t)dt->size);
            if (!e && f->external && whole)
                err = cr_mpi_unpack_external("external32", tmp, (MPI_Count)total, &position, buf, whole, dt);
            else if (!e && !f->external && got >= (uint64_t)dt->leaf->size)
                err = user_convert(f, false, buf, got / (uint64_t)dt->leaf->size, dt, tmp);
        }
        *moved = got;
        if (err) {
            if (locked)
                span_lock(f, first, last, F_UNLCK);
            free(tmp);
            return err;
        }
    }
    for (uint64_t s = 0; s < total && !e && !convert;) {
        uint64_t n = CR_MIN(chunk, total - s), got = 0;
        char *mem = contig ? (char *)buf + dt->true_lb + s : tmp;
        if (write && !contig)
            cr_dt_pack(buf, count, dt, s, tmp, n);
        e = move_stream(f, write, at + (MPI_Offset)s, mem, n, &got);
        if (!write && !contig && got)
            cr_dt_unpack(buf, count, dt, s, tmp, got);
        s += got;
        *moved = s;
        if (got < n)
            break;
    }
    if (locked) {
        int u = span_lock(f, first, last, F_UNLCK);
        e = e ? e : u;
    }
    free(tmp);
    return e ? cr_io_errno(e, write ? "writing" : "reading", f->path) : MPI_SUCCESS;
}
