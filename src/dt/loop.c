/* loop.c: walking compiled layouts (see loop.h): moving a window of a message's packed bytes
 * between a typed buffer and a stream, and counting basic elements. The walk seeks to the
 * window's start by division (REPEAT) or binary search (BLOCKS), so a pipeline that moves a
 * message in pieces pays for each piece only, and it allocates nothing. */
#include "loop.h"

#include "core/copy.h"

#include <string.h>
#include <sys/uio.h>

/* What a walk does with each piece of the layout: copy it to or from the stream, or (when `iov`
 * is set) describe it as an iovec, merging pieces that touch, until `maxiov` are used. */
typedef struct mover {
    char *stream;
    bool unpack;
    struct iovec *iov;
    int niov, maxiov;
    bool full;         /* iovecs: no room for the next piece; the walk stops */
    uint64_t described; /* iovecs: bytes described so far */
} mover;

static void describe(mover *m, char *addr, uint64_t n)
{
    if (m->full)
        return;
    struct iovec *last = m->niov ? &m->iov[m->niov - 1] : NULL;
    if (last && (char *)last->iov_base + last->iov_len == addr) {
        last->iov_len += n;
    } else if (m->niov == m->maxiov) {
        m->full = true;
        return;
    } else {
        m->iov[m->niov++] = (struct iovec){addr, n};
    }
    m->described += n;
}

static inline void move(mover *m, char *addr, uint64_t n)
{
    if (CR_UNLIKELY(m->iov != NULL)) {
        describe(m, addr, n);
        return;
    }
    if (m->unpack)
        cr_copy(addr, m->stream, n);
    else
        cr_copy(m->stream, addr, n);
    m->stream += n;
}

static void walk(const cr_dt_loop *l, char *base, uint64_t off, uint64_t len, mover *m);

/* `whole` runs of N bytes, `stride` bytes apart from p, to or from the stream s. Separate loops
 * per direction and per size let the compiler turn each copy into plain loads and stores and
 * unroll them; the runs of 8 bytes exactly 16 apart (every other double) get their own loop,
 * which it vectorizes. */
#define RUN_LOOPS(N)                                                                               \
    static void runs_##N(char *p, MPI_Aint stride, uint64_t whole, char *s, bool unpack)           \
    {                                                                                              \
        if (stride > FAR_STRIDE || stride < -FAR_STRIDE) {                                         \
            runs_far(p, stride, whole, s, (N), unpack);                                            \
            return;                                                                                \
        }                                                                                          \
        if (unpack)                                                                                \
            for (uint64_t k = 0; k < whole; k++, p += stride, s += (N))                            \
                memcpy(p, s, (N));                                                                 \
        else                                                                                       \
            for (uint64_t k = 0; k < whole; k++, p += stride, s += (N))                            \
                memcpy(s, p, (N));                                                                 \
    }
/* Runs far apart (a face of a 3-D grid: one element every few KiB) touch a new cache line and
 * often a new page each, which the hardware prefetcher does not follow across pages: fetch
 * PREFETCH_AHEAD runs ahead. */
enum { FAR_STRIDE = 512, PREFETCH_AHEAD = 16 };

static void runs_far(char *p, MPI_Aint stride, uint64_t whole, char *s, size_t n, bool unpack)
{
    if (unpack) {
        for (uint64_t k = 0; k < whole; k++, p += stride, s += n) {
            if (k + PREFETCH_AHEAD < whole)
                __builtin_prefetch(p + PREFETCH_AHEAD * stride, 1);
            cr_copy(p, s, n);
        }
    } else {
        for (uint64_t k = 0; k < whole; k++, p += stride, s += n) {
            if (k + PREFETCH_AHEAD < whole)
                __builtin_prefetch(p + PREFETCH_AHEAD * stride, 0);
            cr_copy(s, p, n);
        }
    }
}

RUN_LOOPS(4)
RUN_LOOPS(8)
RUN_LOOPS(16)
#undef RUN_LOOPS

__attribute__((optimize("O3"))) static void runs_8_every_16(char *restrict p, uint64_t whole, char *restrict s,
                                                             bool unpack)
{
    if (unpack)
        for (uint64_t k = 0; k < whole; k++)
            memcpy(p + 16 * k, s + 8 * k, 8);
    else
        for (uint64_t k = 0; k < whole; k++)
            memcpy(s + 8 * k, p + 16 * k, 8);
}

/* Strided runs: `run` bytes every `stride` bytes from base; bytes [off, off + len) of them. */
static void runs(char *base, MPI_Aint stride, uint64_t run, uint64_t off, uint64_t len, mover *m)
{
    uint64_t i = off / run, o = off - i * run;
    char *p = base + (MPI_Aint)i * stride;
    if (o) {
        uint64_t take = CR_MIN(run - o, len);
        move(m, p + o, take);
        len -= take;
        p += stride;
    }
    uint64_t whole = len / run;
    if (CR_UNLIKELY(m->iov != NULL)) {
        for (; whole && !m->full; whole--, len -= run, p += stride)
            describe(m, p, run);
        if (len && !m->full)
            describe(m, p, len);
        return;
    }
    char *s = m->stream;
    switch (run) {
    case 4: runs_4(p, stride, whole, s, m->unpack); break;
    case 8:
        if (stride == 16)
            runs_8_every_16(p, whole, s, m->unpack);
        else
            runs_8(p, stride, whole, s, m->unpack);
        break;
    case 16: runs_16(p, stride, whole, s, m->unpack); break;
    default:
        for (uint64_t k = 0; k < whole; k++) {
            char *at = p + (MPI_Aint)k * stride, *st = s + k * run;
            if (m->unpack)
                cr_copy(at, st, run);
            else
                cr_copy(st, at, run);
        }
        break;
    }
    p += (MPI_Aint)whole * stride;
    m->stream = s + whole * run;
    len -= whole * run;
    if (len)
        move(m, p, len);
}

/* Copies of `child` `stride` bytes apart from base; bytes [off, off + len) of them. */
static void copies(const cr_dt_loop *child, char *base, MPI_Aint stride, uint64_t off, uint64_t len, mover *m)
{
    if (child->kind == CR_LOOP_RUN) { /* copies of a run are strided runs: no walk per copy */
        runs(base, stride, child->size, off, len, m);
        return;
    }
    uint64_t i = off / child->size, o = off - i * child->size;
    for (char *p = base + (MPI_Aint)i * stride; len && !m->full; p += stride, o = 0) {
        uint64_t take = CR_MIN(child->size - o, len);
        walk(child, p, o, take, m);
        len -= take;
    }
}

/* The entry holding packed byte `off`: the last with prefix <= off. */
static int64_t find_entry(const cr_dt_loop *l, uint64_t off)
{
    int64_t lo = 0, hi = l->nentries - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (l->prefix[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void walk(const cr_dt_loop *l, char *base, uint64_t off, uint64_t len, mover *m)
{
    switch (l->kind) {
    case CR_LOOP_RUN:
        move(m, base + off, len);
        return;
    case CR_LOOP_REPEAT:
        if (l->child)
            copies(l->child, base, l->stride, off, len, m);
        else
            runs(base, l->stride, l->run, off, len, m);
        return;
    default:
        for (int64_t e = find_entry(l, off); len && !m->full; e++) {
            const cr_dt_entry *en = &l->entries[e];
            uint64_t o = off - l->prefix[e], take = CR_MIN(l->prefix[e + 1] - off, len);
            if (en->child)
                copies(en->child, base + en->disp, en->stride, o, take, m);
            else
                move(m, base + en->disp + o, take);
            off += take;
            len -= take;
        }
    }
}

void cr_dt_loop_move(const cr_dt_loop *l, char *base, MPI_Aint extent, uint64_t offset, char *stream, uint64_t len,
                     bool unpack)
{
    if (len == 0)
        return;
    mover m = {.stream = stream, .unpack = unpack};
    if (l->kind == CR_LOOP_RUN)
        runs(base, extent, l->size, offset, len, &m);
    else
        copies(l, base, extent, offset, len, &m);
}

uint64_t cr_dt_loop_iov(const cr_dt_loop *l, char *base, MPI_Aint extent, uint64_t offset, uint64_t len,
                        struct iovec *iov, int maxiov, int *niov)
{
    mover m = {.iov = iov, .maxiov = maxiov};
    if (len) {
        if (l->kind == CR_LOOP_RUN)
            runs(base, extent, l->size, offset, len, &m);
        else
            copies(l, base, extent, offset, len, &m);
    }
    *niov = m.niov;
    return m.described;
}

/* Elements in the first `bytes` (<= l->size) bytes of one instance; sets *cut when a basic
 * element is split. */
static MPI_Count elements(const cr_dt_loop *l, uint64_t bytes, bool *cut);

static MPI_Count elements_of_copies(const cr_dt_loop *child, uint32_t elem, uint64_t bytes, bool *cut)
{
    if (!child) {
        if (bytes % elem)
            *cut = true;
        return (MPI_Count)(bytes / elem);
    }
    uint64_t whole = bytes / child->size;
    return (MPI_Count)whole * elements(child, child->size, cut) + elements(child, bytes - whole * child->size, cut);
}

static MPI_Count elements(const cr_dt_loop *l, uint64_t bytes, bool *cut)
{
    if (bytes == 0)
        return 0;
    if (l->elem) {
        if (bytes % l->elem)
            *cut = true;
        return (MPI_Count)(bytes / l->elem);
    }
    if (l->kind == CR_LOOP_REPEAT)
        return elements_of_copies(l->child, l->elem, bytes, cut);
    MPI_Count n = 0;
    for (int64_t e = 0; e < l->nentries && bytes; e++) {
        const cr_dt_entry *en = &l->entries[e];
        uint64_t take = CR_MIN(l->prefix[e + 1] - l->prefix[e], bytes);
        n += elements_of_copies(en->child, en->elem, take, cut);
        bytes -= take;
    }
    return n;
}

MPI_Count cr_dt_loop_elements(const cr_dt_loop *l, uint64_t bytes)
{
    if (l->size == 0)
        return 0;
    bool cut = false;
    uint64_t whole = bytes / l->size;
    MPI_Count n = (MPI_Count)whole * elements(l, l->size, &cut) + elements(l, bytes - whole * l->size, &cut);
    return cut ? -1 : n;
}

/* Bytes that hold the first n basic elements of one instance (n below the instance's count). */
static uint64_t bytes_of_elements(const cr_dt_loop *l, MPI_Count n);

static uint64_t bytes_of_copies(const cr_dt_loop *child, uint32_t elem, MPI_Count n)
{
    if (!child)
        return (uint64_t)n * elem;
    bool cut = false;
    MPI_Count per = elements(child, child->size, &cut);
    if (per <= 0)
        return 0;
    return (uint64_t)(n / per) * child->size + bytes_of_elements(child, n % per);
}

static uint64_t bytes_of_elements(const cr_dt_loop *l, MPI_Count n)
{
    if (n <= 0)
        return 0;
    if (l->elem)
        return (uint64_t)n * l->elem;
    if (l->kind == CR_LOOP_REPEAT)
        return bytes_of_copies(l->child, l->elem, n);
    uint64_t bytes = 0;
    for (int64_t e = 0; e < l->nentries && n > 0; e++) {
        const cr_dt_entry *en = &l->entries[e];
        uint64_t eb = l->prefix[e + 1] - l->prefix[e];
        bool cut = false;
        MPI_Count in_entry = elements_of_copies(en->child, en->elem, eb, &cut);
        if (n >= in_entry) {
            n -= in_entry;
            bytes += eb;
        } else {
            return bytes + bytes_of_copies(en->child, en->elem, n);
        }
    }
    return bytes;
}

uint64_t cr_dt_loop_bytes_of_elements(const cr_dt_loop *l, MPI_Count n)
{
    bool cut = false;
    MPI_Count per = l->size ? elements(l, l->size, &cut) : 0;
    if (per <= 0)
        return 0;
    return (uint64_t)(n / per) * l->size + bytes_of_elements(l, n % per);
}
