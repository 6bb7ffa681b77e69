/* coll.c: collective writes in two phases (what ROMIO calls collective buffering). The span of
 * file bytes the call writes is cut into one contiguous domain per process; each piece of every
 * process's view goes to the domain's owner (the aggregator), and each aggregator writes the
 * runs its domain received, one pwrite a run. A strided view whose pieces interleave across the
 * processes (a distributed array's rows, a checkpoint's blocks) becomes a few large writes
 * instead of one per piece per process.
 *
 * On one node an aggregator reads each process's pieces straight from that process's memory
 * (cross-memory attach: one copy, done by the aggregator while the others wait), so a round
 * costs an alltoall of descriptions and an allreduce beside the copies and the writes. Where a
 * process cannot read another's memory (across nodes, or attach not allowed) the pieces go by
 * two alltoallv instead, heads then data, and the file keeps to that from then on.
 *
 * Domains are handled in rounds of at most cb_buffer_size bytes (16 MiB, as ROMIO's default),
 * so an aggregator holds one round of its domain at a time. Only the bytes the processes wrote
 * are written: the holes between runs are left as they were (no read-modify-write), so no lock
 * is needed. The hint romio_cb_write (ROMIO's name) turns it on ("enable") or off ("disable");
 * by default it is on for many small pieces (AUTO_PIECE, AUTO_PIECES_* below). */
#include "io/io.h"

#include "cr_impl.h"
#include "coll/op.h"
#include "comm/comm.h"
#include "core/pvar.h"
#include "core/runtime.h"
#include "dt/dtype.h"
#include "xport/xport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* The automatic choice aggregates when the pieces average under AUTO_PIECE bytes and number at
 * least AUTO_PIECES_READ a process, or AUTO_PIECES_SENT where the pieces go by messages (the
 * processes span nodes, or attach was refused). bench/io.c's interleaved 4 KiB pieces at 4
 * processes on 2 cores (2026-11-30, medians of 15 calls in turn, doc/performance.md):
 *   read by the aggregators: 32 pieces a process (128 KiB) about even (129-190 us against
 *   150-181 independently), 64 pieces 246-297 against 307-340, 256 pieces 1254-1288 against
 *   1960-1981 (at 2 processes, 256 pieces: 437 against 834);
 *   sent by messages: 16 MiB a process (4096 pieces) at 1430-1480 MB/s aggregated against 625
 *   independently, but 1 MiB (256 pieces) at 940-1060 against about 1800, and 64 KiB at
 *   760-920 against 6300: the alltoallv of the data costs more than a few hundred pwrite calls. */
enum {
    DEFAULT_CB = 16 << 20, AUTO_PIECE = 64 << 10, AUTO_PIECES_READ = 64, AUTO_PIECES_SENT = 1024,
    DOMAIN_ALIGN = 4096, IOV_BATCH = 1024, COPY_ALIGN = 64
};

CR_PVAR_DEFINE(aggregated_writes, "io.write_all.aggregated",
               "collective writes this process took part in through aggregators (two-phase)");
CR_PVAR_DEFINE(read_rounds, "io.write_all.read_rounds",
               "rounds of collective writes through aggregators in which each aggregator read the pieces straight "
               "from the other processes' memory (cross-memory attach)");
CR_PVAR_DEFINE(sent_rounds, "io.write_all.sent_rounds",
               "rounds of collective writes through aggregators in which the pieces went to the aggregators by "
               "messages (some process could not read another's memory: across nodes, or attach not allowed)");
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

/* What a piece for an aggregator says (its bytes follow in the same order in the data the
 * aggregator reads or receives). */
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

/* The end (exclusive) of aggregator a's part of round r: its domain is [lo + a * domain,
 * lo + (a + 1) * domain), cut into rounds of round_bytes, and nothing lies at or past hi. */
static MPI_Offset round_end(MPI_Offset lo, MPI_Offset hi, uint64_t domain, uint64_t round_bytes, int a, uint64_t r)
{
    return CR_MIN(lo + (MPI_Offset)((uint64_t)a * domain + CR_MIN((r + 1) * round_bytes, domain)), hi);
}

/* The start of aggregator a's part of round r (see round_end). */
static MPI_Offset round_start(MPI_Offset lo, uint64_t domain, uint64_t round_bytes, int a, uint64_t r)
{
    return lo + (MPI_Offset)((uint64_t)a * domain + r * round_bytes);
}

/* Whether the heads an aggregator received lie in its part of the round [from, to) and their
 * lengths add up to each process's bytes (rdesc[4 * src + 1]), as the processes said in the
 * round's alltoall: 0, or EIO. What is read from another process's memory is checked before a
 * byte of it goes to the file (a process that failed and left would have freed it). */
static int heads_fit(const piece_head *heads, int64_t nheads, int p, const int64_t *rdesc, MPI_Offset from,
                     MPI_Offset to)
{
    int64_t k = 0;
    for (int src = 0; src < p; src++) {
        int64_t bytes = 0;
        for (int64_t j = 0; j < rdesc[4 * src]; j++, k++) {
            if (heads[k].len <= 0 || heads[k].off < from || heads[k].off > to - heads[k].len)
                return EIO;
            bytes += heads[k].len;
        }
        if (bytes != rdesc[4 * src + 1])
            return EIO;
    }
    return k == nheads ? 0 : EIO;
}

/* An aggregator's copy of what process `src` sends it in a round, described by d (its pieces,
 * their bytes, and where their heads and their data lie in src's memory: src keeps both there
 * until every aggregator has read them, which the round's allreduce after the reads marks):
 * read from src's memory by cross-memory attach (one copy, and src need not be scheduled: on
 * an oversubscribed node it sleeps meanwhile), or copied, from this process itself. False if
 * the transport cannot read src's memory (another node, or attach not allowed). */
static bool read_from(const cr_comm *comm, int src, const int64_t *d, char *heads, char *data)
{
    size_t hb = (size_t)d[0] * sizeof(piece_head), db = (size_t)d[1];
    const char *from_heads = (const char *)(uintptr_t)d[2], *from_data = (const char *)(uintptr_t)d[3];
    if (src == comm->rank) {
        if (hb)
            memcpy(heads, from_heads, hb);
        if (db)
            memcpy(data, from_data, db);
        return true;
    }
    struct iovec local[2], remote[2];
    int n = 0;
    if (hb)
        local[n] = (struct iovec){heads, hb}, remote[n++] = (struct iovec){(void *)from_heads, hb};
    if (db)
        local[n] = (struct iovec){data, db}, remote[n++] = (struct iovec){(void *)from_data, db};
    return !n || cr_xport_read(cr_comm_world_rank(comm, src), local, n, remote, n) == 0;
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

/* The aggregator's part of a round: writes the runs the arrived pieces make (the heads of every
 * process in turn, rdesc[4 * src] of process src's, whose data starts at data + ddisp[src]),
 * each with pwritev straight from where the pieces arrived (a piece that overlaps the run so
 * far adds only its part beyond it: overlapping writes of one collective call leave either's
 * bytes, MPI-4.1 14.6.1). Returns 0 or an errno. */
static int write_window(const cr_file *f, const piece_head *heads, int64_t nheads, const char *data, int p,
                        const int64_t *rdesc, const int64_t *ddisp)
{
    if (!nheads)
        return 0;
    arrived *a = malloc((size_t)nheads * sizeof *a);
    struct iovec *iov = malloc(IOV_BATCH * sizeof *iov);
    int e = a && iov ? 0 : ENOMEM;
    for (int64_t src = 0, k = 0; src < p && !e; src++) /* process src's heads, its data from ddisp[src] on */
        for (int64_t j = 0, pos = ddisp[src]; j < rdesc[4 * src]; j++, k++) {
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
    if (!f->attach_known) { /* (the same answer everywhere: one node, or not) */
        f->attach_known = true;
        for (int r = 0; r < p; r++)
            f->no_attach |= cr_rt.node_of[cr_comm_world_rank(comm, r)] != cr_rt.node_of[cr_rt.rank];
    }
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
    /* A round's description of what goes to each aggregator and what each receives (desc,
     * rdesc: 4 a process, see read_from), where this process's heads and data for each start
     * (ho, data_at), and the counts and displacements of the alltoallv that send them where
     * they cannot be read (MPI_Count: a process's data can pass 2 GiB). */
    int64_t *v = calloc(16 * (size_t)p + 16, sizeof *v), *desc = v, *rdesc = v + 4 * p, *ho = v + 8 * p,
            *data_at = ho + p + 1, *scount = data_at + p + 1, *sdisp = scount + p + 1, *rcount = sdisp + p + 1,
            *rdisp = rcount + p + 1, *dcount = rdisp + p + 1, *ddisp = dcount + p + 1;

    /* What every process must agree on: the span, the hints (and whether this process can take
     * part: its view in file order, its bookkeeping allocated), the pieces' count and bytes. */
    int mode;
    int64_t cb;
    hints(f, &mode, &cb);
    bool able = ordered && cur && v;
    int64_t mins[6] = {np ? ps[0].off : INT64_MAX, np ? -(ps[np - 1].off + (int64_t)ps[np - 1].len) : INT64_MAX,
                       mode == 0 || !able ? 0 : 1, mode == 2 ? -1 : 0, cb, !f->no_attach && cr_xport_attach_allowed()};
    /* (bytes counted up to 2^50 a process, so that the sum cannot overflow) */
    int64_t my_sums[2] = {(int64_t)np, (int64_t)CR_MIN(total, (uint64_t)1 << 50)}, my_mins[6], sums[2];
    memcpy(my_mins, mins, sizeof mins);
    cr_dtype *i64 = cr_dtype_get(MPI_INT64_T);
    if ((err = cr_mpi_allreduce(my_mins, mins, 6, i64, cr_op_get(MPI_MIN), comm)) ||
        (err = cr_mpi_allreduce(my_sums, sums, 2, i64, cr_op_get(MPI_SUM), comm)))
        goto out;
    f->no_attach = mins[5] == 0; /* (agreed: the aggregators could not all read) */
    bool aggregate = sums[0] > 0 && mins[2] == 1 &&
                     (mins[3] == -1 || (sums[1] / sums[0] < AUTO_PIECE &&
                                           sums[0] / p >= (f->no_attach ? AUTO_PIECES_SENT : AUTO_PIECES_READ)));
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
    bool contig = cr_dtype_is_contig_n(dt, count), no_mem = false, bad_heads = false;
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
        /* What goes to each aggregator in this round: its pieces' heads (in sh, from ho[a] on)
         * and their data (one stretch of this process's data, from data_at[a] on). */
        int64_t hsum = 0;
        for (int a = 0; a < p; a++) {
            cursor c = cur[a];
            take(ps, np, &c, round_end(lo, hi, domain, round_bytes, a, r), NULL, &desc[4 * a], &desc[4 * a + 1]);
            hsum += desc[4 * a];
        }
        piece_head *sh = malloc((size_t)(hsum + 1) * sizeof *sh), *rhd = NULL;
        for (int a = 0; a < p; a++) {
            data_at[a] = (int64_t)cur[a].data;
            ho[a + 1] = ho[a] + desc[4 * a];
            int64_t nh, nd;
            take(ps, np, &cur[a], round_end(lo, hi, domain, round_bytes, a, r), sh ? sh + ho[a] : NULL, &nh, &nd);
            desc[4 * a + 2] = sh ? (int64_t)(uintptr_t)(sh + ho[a]) : 0;
            desc[4 * a + 3] = data ? (int64_t)(uintptr_t)(data + data_at[a]) : 0;
        }
        if ((err = cr_mpi_alltoall(desc, 4, MPI_INT64_T, rdesc, 4, i64, comm))) {
            free(sh);
            break;
        }
        /* Each process's data lands at an address congruent to its own modulo COPY_ALIGN (the
         * buffer is aligned to it): the kernel's copy is `rep movsb`, which crawls when its source
         * and destination are not (core/copy.h); measured, 768 KiB from page-aligned buffers into
         * a malloc'ed one took 3 times as long. */
        int64_t rh = 0, rd = 0;
        for (int a = 0; a < p; a++) {
            rcount[a] = rdesc[4 * a] * (int64_t)sizeof *sh, rdisp[a + 1] = rdisp[a] + rcount[a];
            dcount[a] = rdesc[4 * a + 1];
            ddisp[a] = rd + (dcount[a] ? (int64_t)(((uint64_t)rdesc[4 * a + 3] - (uint64_t)rd) % COPY_ALIGN) : 0);
            rh += rdesc[4 * a], rd = ddisp[a] + dcount[a];
        }
        rhd = malloc((size_t)(rh + 1) * sizeof *rhd);
        if ((size_t)rd > f->agg_cap) {
            free(f->agg_buf);
            f->agg_cap = (size_t)rd;
            if (posix_memalign((void **)&f->agg_buf, COPY_ALIGN, f->agg_cap))
                f->agg_buf = NULL, f->agg_cap = 0;
        }
        no_mem = no_mem || !sh || !rhd || (rd && !f->agg_buf);
        /* Read the heads and data straight from each process's memory, where it can. */
        bool attached = !f->no_attach && !no_mem;
        for (int a = 0; a < p && attached; a++)
            attached = read_from(comm, a, &rdesc[4 * a], (char *)rhd + rdisp[a], rd ? f->agg_buf + ddisp[a] : NULL);
        /* Every process learns whether any lacks memory for this round, so that all stop
         * together instead of some waiting in the alltoallv for the others, and whether any
         * could not read: then all send by messages (and do from now on with this file). */
        int mine[2] = {no_mem, !attached}, any[2] = {0, 0};
        if (!(err = cr_mpi_allreduce(mine, any, 2, cr_dtype_get(MPI_INT), cr_op_get(MPI_MAX), comm)) && any[0])
            err = no_mem ? cr_err(MPI_ERR_NO_MEM, "out of memory for a round of a collective write to %s (%lld "
                                                  "bytes)", f->path, (long long)rd)
                         : cr_err(MPI_ERR_NO_MEM, "another process ran out of memory for a round of a collective "
                                                  "write to %s", f->path);
        if (!err && any[1]) {
            f->no_attach = true;
            for (int a = 0; a < p; a++)
                scount[a] = desc[4 * a] * (int64_t)sizeof *sh, sdisp[a] = ho[a] * (int64_t)sizeof *sh;
            err = cr_mpi_alltoallv(sh, cr_cvec_of(scount, 1), cr_cvec_of(sdisp, 1), MPI_BYTE, rhd, cr_cvec_of(rcount, 1),
                                   cr_cvec_of(rdisp, 1), byte, comm);
            for (int a = 0; a < p; a++)
                scount[a] = desc[4 * a + 1], sdisp[a] = data_at[a];
            if (!err)
                err = cr_mpi_alltoallv(data ? data : "", cr_cvec_of(scount, 1), cr_cvec_of(sdisp, 1), MPI_BYTE,
                                       f->agg_buf, cr_cvec_of(dcount, 1), cr_cvec_of(ddisp, 1), byte, comm);
            if (!err)
                sent_rounds++;
        } else if (!err) {
            read_rounds++;
        }
        if (!err && !e && (e = heads_fit(rhd, rh, p, rdesc, round_start(lo, domain, round_bytes, comm->rank, r),
                                         round_end(lo, hi, domain, round_bytes, comm->rank, r))))
            bad_heads = true;
        if (!err && !e)
            e = write_window(f, rhd, rh, f->agg_buf, p, rdesc, ddisp);
        free(sh), free(rhd);
    }
    if (!err) { /* every process learns whether any aggregator failed */
        int mine = e != 0, failed = 0;
        err = cr_mpi_allreduce(&mine, &failed, 1, cr_dtype_get(MPI_INT), cr_op_get(MPI_MAX), comm);
        if (!err && bad_heads)
            err = cr_err(MPI_ERR_IO, "writing %s: the pieces an aggregator of a collective write got do not match "
                                     "what the processes announced (nothing of that round written)", f->path);
        else if (!err && e)
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
