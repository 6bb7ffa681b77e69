/* coll.c: collective writes in two phases (what ROMIO calls collective buffering). The span of
 * file bytes the call writes is cut into one contiguous domain per process; every process sends
 * each piece of its view to the domain's owner (the aggregator), and each aggregator writes the
 * runs its domain received, one pwrite a run. A strided view whose pieces interleave across the
 * processes (a distributed array's rows, a checkpoint's blocks) becomes a few large writes
 * instead of one per piece per process.
 *
 * Domains are handled in rounds of at most cb_buffer_size bytes (16 MiB, as ROMIO's default),
 * so an aggregator holds one round of its domain at a time. Only the bytes the processes wrote
 * are written: the holes between runs are left as they were (no read-modify-write), so no lock
 * is needed. The hint romio_cb_write (ROMIO's name) turns it on ("enable") or off ("disable");
 * by default it is on for many small pieces (AUTO_PIECE, AUTO_PIECES below). */
#include "io/io.h"

#include "cr_impl.h"
#include "coll/op.h"
#include "comm/comm.h"
#include "core/pvar.h"
#include "dt/dtype.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* The automatic choice aggregates when the pieces average under AUTO_PIECE bytes and number at
 * least AUTO_PIECES a process: bench/io.c's interleaved 4 KiB pieces at 4 processes on 2 cores
 * (2026-11-30) wrote 16 MiB a process (4096 pieces) at 1430-1480 MB/s aggregated against
 * 625 independently, but 1 MiB (256 pieces) at 940-1060 against about 1800, and 64 KiB at
 * 760-920 against 6300: the rounds' collectives and the alltoallv of the data cost more than a
 * few hundred pwrite calls. */
enum { DEFAULT_CB = 16 << 20, AUTO_PIECE = 64 << 10, AUTO_PIECES = 1024, DOMAIN_ALIGN = 4096, IOV_BATCH = 1024 };

CR_PVAR_DEFINE(aggregated_writes, "io.write_all.aggregated",
               "collective writes this process took part in through aggregators (two-phase)");
CR_PVAR_DEFINE(aggregator_pwrites, "io.write_all.aggregator_runs",
               "runs of file bytes this process wrote as an aggregator of collective writes, one pwrite each");

bool cr_io_coll_write_eligible(const cr_file *f)
{
    return f->comm->size > 1 && !f->atomic && !f->external && !(f->rep && (f->rep->write || f->rep->write_c));
}

/* A place in this process's pieces: piece i, `in` bytes into it, at byte `data` of its packed
 * data. */
typedef struct {
    size_t i;
    uint64_t in, data;
} cursor;

/* What a piece sent to an aggregator says (its bytes follow in the data message, in order). */
typedef struct {
    int64_t off, len;
} piece_head;

typedef struct {
    int64_t off, len;
    const char *data;
} arrived;

static int by_offset(const void *a, const void *b)
{
    const arrived *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The hints: 0 disable, 1 automatic, 2 enable; the round size. */
static void hints(const cr_file *f, int *mode, int64_t *cb)
{
    const char *w = f->info ? cr_info_find(f->info, "romio_cb_write") : NULL;
    const char *b = f->info ? cr_info_find(f->info, "cb_buffer_size") : NULL;
    *mode = !w ? 1 : !strcmp(w, "disable") ? 0 : !strcmp(w, "enable") ? 2 : 1;
    long long v = b ? atoll(b) : 0;
    *cb = v > 0 ? v : DEFAULT_CB;
}

/* Appends this process's pieces of stream bytes [at, at + total) to *ps (merged where they abut);
 * *ordered says whether each starts at or after the previous one's end. A filetype's typemap
 * goes forward within a tile, but its tiles may reach back (a resized type whose extent is
 * shorter than its reach): the rounds assume file order, so such a view is written
 * independently. */
static int my_pieces(const cr_file *f, MPI_Offset at, uint64_t total, cr_io_seg **ps, size_t *np, bool *ordered)
{
    size_t cap = 0;
    *ps = NULL;
    *np = 0;
    *ordered = true;
    for (uint64_t s = 0; s < total;) {
        cr_io_seg sg[CR_IO_MAXSEG];
        int n = 0;
        uint64_t got = cr_io_view_segments(f, at + (MPI_Offset)s, total - s, sg, &n);
        for (int k = 0; k < n; k++) {
            if (*np && (*ps)[*np - 1].off + (MPI_Offset)(*ps)[*np - 1].len == sg[k].off) {
                (*ps)[*np - 1].len += sg[k].len;
                continue;
            }
            if (*np && sg[k].off < (*ps)[*np - 1].off + (MPI_Offset)(*ps)[*np - 1].len)
                *ordered = false;
            if (*np == cap) {
                cap = cap ? 2 * cap : 64;
                cr_io_seg *grown = realloc(*ps, cap * sizeof *grown);
                if (!grown)
                    return cr_err(MPI_ERR_NO_MEM, "out of memory for the pieces of a collective write");
                *ps = grown;
            }
            (*ps)[(*np)++] = sg[k];
        }
        if (!got)
            break;
        s += got;
    }
    return MPI_SUCCESS;
}

/* Takes from cursor c the parts of the pieces below file byte `end`: their number and bytes,
 * and (heads not NULL) their offsets and lengths. Their data is the packed data from c's `data`
 * on, in one stretch: pieces come in the view's order, which is the file's. */
static void take(const cr_io_seg *ps, size_t np, cursor *c, MPI_Offset end, piece_head *heads, int64_t *nparts,
                 int64_t *nbytes)
{
    *nparts = *nbytes = 0;
    while (c->i < np && ps[c->i].off + (MPI_Offset)c->in < end) {
        MPI_Offset from = ps[c->i].off + (MPI_Offset)c->in;
        uint64_t len = (uint64_t)CR_MIN(ps[c->i].off + (MPI_Offset)ps[c->i].len, end) - (uint64_t)from;
        if (heads)
            heads[*nparts] = (piece_head){from, (int64_t)len};
        ++*nparts;
        *nbytes += (int64_t)len;
        c->in += len;
        c->data += len;
        if (c->in == ps[c->i].len) {
            c->i++;
            c->in = 0;
        }
    }
}

/* pwritev of all of iov[0..n) at `off`. Returns 0 or an errno. */
static int full_writev(int fd, struct iovec *iov, int n, MPI_Offset off)
{
    while (n > 0) {
        ssize_t w = pwritev(fd, iov, n, off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (w == 0)
            return ENOSPC;
        off += w;
        for (; n > 0 && (size_t)w >= iov->iov_len; n--, iov++)
            w -= (ssize_t)iov->iov_len;
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* The aggregator's part of a round: writes the runs the arrived pieces make, each with pwritev
 * straight from where the pieces arrived (a piece that overlaps the run so far adds only its
 * part beyond it: overlapping writes of one collective call leave either's bytes, MPI-4.1
 * 14.6.1). Returns 0 or an errno. */
static int write_window(const cr_file *f, const piece_head *heads, int64_t nheads, const char *data)
{
    if (!nheads)
        return 0;
    arrived *a = malloc((size_t)nheads * sizeof *a);
    struct iovec *iov = malloc(IOV_BATCH * sizeof *iov);
    int e = a && iov ? 0 : ENOMEM;
    int64_t pos = 0;
    for (int64_t k = 0; k < nheads && !e; k++) {
        a[k] = (arrived){heads[k].off, heads[k].len, data + pos};
        pos += heads[k].len;
    }
    if (!e)
        qsort(a, (size_t)nheads, sizeof *a, by_offset);
    for (int64_t k = 0; k < nheads && !e;) {
        MPI_Offset run = a[k].off, end = a[k].off;
        int n = 0;
        for (; k < nheads && a[k].off <= end && n < IOV_BATCH; k++) {
            MPI_Offset skip = end - a[k].off;
            if (a[k].len <= skip)
                continue;
            iov[n++] = (struct iovec){(void *)(a[k].data + skip), (size_t)(a[k].len - skip)};
            end = a[k].off + a[k].len;
        }
        if (n) {
            e = full_writev(f->fd, iov, n, run);
            aggregator_pwrites++;
        }
    }
    free(iov);
    free(a);
    return e;
}

int cr_io_coll_write(cr_file *f, MPI_Offset at, const void *buf, MPI_Count count, cr_dtype *dt, bool have,
                     uint64_t *moved, bool *handled)
{
    cr_comm *comm = f->comm;
    int p = comm->size, err = MPI_SUCCESS, e = 0;
    *moved = 0;
    *handled = false;
    uint64_t total = have ? (uint64_t)count * (uint64_t)dt->size : 0;
    cr_io_seg *ps = NULL;
    size_t np = 0;
    bool ordered = true;
    int local = total ? my_pieces(f, at, total, &ps, &np, &ordered) : MPI_SUCCESS;
    if (local)
        np = 0, total = 0; /* (still takes part: the others wait for this process) */
    cursor *cur = calloc((size_t)p, sizeof *cur);
    /* counts and displacements of the two alltoallv (MPI_Count: a process's data can pass 2 GiB) */
    int64_t *v = calloc(8 * (size_t)p + 8, sizeof *v), *scount = v, *sdisp = v + p + 1, *rcount = v + 2 * (p + 1),
            *rdisp = v + 3 * (p + 1), *counts = v + 4 * (p + 1), *rcounts = counts + 2 * p;

    /* What every process must agree on: the span, the hints (and whether this process can take
     * part: its view in file order, its bookkeeping allocated), the pieces' count and bytes. */
    int mode;
    int64_t cb;
    hints(f, &mode, &cb);
    bool able = ordered && cur && v;
    int64_t mins[5] = {np ? ps[0].off : INT64_MAX, np ? -(ps[np - 1].off + (int64_t)ps[np - 1].len) : INT64_MAX,
                       mode == 0 || !able ? 0 : 1, mode == 2 ? -1 : 0, cb};
    /* (bytes counted up to 2^50 a process, so that the sum cannot overflow) */
    int64_t my_sums[2] = {(int64_t)np, (int64_t)CR_MIN(total, (uint64_t)1 << 50)}, my_mins[5], sums[2];
    memcpy(my_mins, mins, sizeof mins);
    cr_dtype *i64 = cr_dtype_get(MPI_INT64_T);
    if ((err = cr_mpi_allreduce(my_mins, mins, 5, i64, cr_op_get(MPI_MIN), comm)) ||
        (err = cr_mpi_allreduce(my_sums, sums, 2, i64, cr_op_get(MPI_SUM), comm)))
        goto out;
    bool aggregate = sums[0] > 0 && mins[2] == 1 &&
                     (mins[3] == -1 || (sums[1] / sums[0] < AUTO_PIECE && sums[0] / p >= AUTO_PIECES));
    if (!aggregate) {
        *handled = sums[0] == 0; /* nothing anywhere: done; otherwise each writes its own */
        goto out;
    }
    *handled = true;
    aggregated_writes++;
    MPI_Offset lo = mins[0] / DOMAIN_ALIGN * DOMAIN_ALIGN, hi = -mins[1]; /* (domains on page bounds) */
    uint64_t domain = ((uint64_t)(hi - lo) + (uint64_t)p - 1) / (uint64_t)p;
    domain = (domain + DOMAIN_ALIGN - 1) / DOMAIN_ALIGN * DOMAIN_ALIGN;
    uint64_t round_bytes = (uint64_t)CR_MIN((int64_t)domain, mins[4]);
    uint64_t rounds = (domain + round_bytes - 1) / round_bytes;

    /* This process's data in view order, and a cursor at the start of each domain. */
    bool contig = cr_dtype_is_contig_n(dt, count), no_mem = false;
    char *packed = NULL;
    const char *data = contig ? (const char *)buf + dt->true_lb : NULL;
    if (!contig && total) {
        if (!(packed = malloc(total))) {
            no_mem = true; /* (told to all at the first round: they stop together) */
            total = 0, np = 0;
        } else {
            cr_dt_pack(buf, count, dt, 0, packed, total);
            data = packed;
        }
    }
    {
        cursor c = {0, 0, 0};
        for (int a = 0; a < p; a++) { /* skip to the first piece reaching domain a */
            MPI_Offset start = lo + (MPI_Offset)((uint64_t)a * domain);
            while (c.i < np && ps[c.i].off + (MPI_Offset)ps[c.i].len <= start) {
                c.data += ps[c.i].len - c.in;
                c.i++, c.in = 0;
            }
            if (c.i < np && ps[c.i].off < start && start - ps[c.i].off > (MPI_Offset)c.in) {
                c.data += (uint64_t)(start - ps[c.i].off) - c.in;
                c.in = (uint64_t)(start - ps[c.i].off);
            }
            cur[a] = c;
        }
    }
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    for (uint64_t r = 0; r < rounds && !err; r++) {
        /* Count what goes to each aggregator in this round: pieces and bytes. */
        int64_t hsum = 0;
        for (int a = 0; a < p; a++) {
            cursor c = cur[a];
            MPI_Offset end = CR_MIN(lo + (MPI_Offset)((uint64_t)a * domain + CR_MIN((r + 1) * round_bytes, domain)), hi);
            take(ps, np, &c, end, NULL, &counts[2 * a], &counts[2 * a + 1]);
            hsum += counts[2 * a];
        }
        if ((err = cr_mpi_alltoall(counts, 2, MPI_INT64_T, rcounts, 2, i64, comm)))
            break;
        int64_t rh = 0, rd = 0;
        for (int a = 0; a < p; a++)
            rh += rcounts[2 * a], rd += rcounts[2 * a + 1];
        piece_head *sh = malloc((size_t)(hsum + 1) * sizeof *sh), *rhd = malloc((size_t)(rh + 1) * sizeof *rhd);
        if ((size_t)rd > f->agg_cap) {
            free(f->agg_buf);
            f->agg_cap = (size_t)rd;
            if (!(f->agg_buf = malloc(f->agg_cap)))
                f->agg_cap = 0;
        }
        /* Every process learns whether any lacks memory for this round, so that all stop
         * together instead of some waiting in the alltoallv for the others. */
        no_mem = no_mem || !sh || !rhd || (rd && !f->agg_buf);
        int mine = no_mem, any = 0;
        if (!(err = cr_mpi_allreduce(&mine, &any, 1, cr_dtype_get(MPI_INT), cr_op_get(MPI_MAX), comm)) && any)
            err = no_mem ? cr_err(MPI_ERR_NO_MEM, "out of memory for a round of a collective write to %s (%lld "
                                                  "bytes)", f->path, (long long)rd)
                         : cr_err(MPI_ERR_NO_MEM, "another process ran out of memory for a round of a collective "
                                                  "write to %s", f->path);
        if (!err) {
            /* The heads, then the data: each aggregator's part of this process's data is one
             * stretch of it (sent from where it is: no copy). */
            int64_t ho = 0;
            for (int a = 0; a < p; a++) {
                MPI_Offset end = CR_MIN(lo + (MPI_Offset)((uint64_t)a * domain + CR_MIN((r + 1) * round_bytes, domain)), hi);
                int64_t nh, nd;
                int64_t data_at = (int64_t)cur[a].data;
                take(ps, np, &cur[a], end, sh + ho, &nh, &nd);
                scount[a] = nh * (int64_t)sizeof *sh, sdisp[a] = ho * (int64_t)sizeof *sh;
                rcount[a] = rcounts[2 * a] * (int64_t)sizeof *sh;
                rdisp[a + 1] = rdisp[a] + rcount[a];
                counts[2 * a] = data_at; /* (reused: where this aggregator's data starts) */
                ho += nh;
            }
            err = cr_mpi_alltoallv(sh, cr_cvec_of(scount, 1), cr_cvec_of(sdisp, 1), MPI_BYTE, rhd, cr_cvec_of(rcount, 1),
                                   cr_cvec_of(rdisp, 1), byte, comm);
            if (!err) {
                for (int a = 0; a < p; a++) {
                    scount[a] = counts[2 * a + 1], sdisp[a] = counts[2 * a];
                    rcount[a] = rcounts[2 * a + 1];
                    rdisp[a + 1] = rdisp[a] + rcount[a];
                }
                err = cr_mpi_alltoallv(data ? data : "", cr_cvec_of(scount, 1), cr_cvec_of(sdisp, 1), MPI_BYTE,
                                       f->agg_buf, cr_cvec_of(rcount, 1), cr_cvec_of(rdisp, 1), byte, comm);
            }
            if (!err && !e)
                e = write_window(f, rhd, rh, f->agg_buf);
        }
        free(sh), free(rhd);
    }
    if (!err) { /* every process learns whether any aggregator failed */
        int mine = e != 0, failed = 0;
        err = cr_mpi_allreduce(&mine, &failed, 1, cr_dtype_get(MPI_INT), cr_op_get(MPI_MAX), comm);
        if (!err && e)
            err = cr_io_errno(e, "writing (as an aggregator of a collective write)", f->path);
        else if (!err && failed)
            err = cr_err(MPI_ERR_IO, "writing %s: another process failed writing this collective's data", f->path);
        if (!err)
            *moved = total;
    }
    free(packed);
out:
    free(cur), free(v), free(ps);
    return local ? local : err;
}
