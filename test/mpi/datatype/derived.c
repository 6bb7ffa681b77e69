/* Derived datatypes: every constructor alone and nested, what a type says about itself, packing,
 * and communication with derived types in every point-to-point mode and the collectives.
 *
 * A reference model in this file (ref_t: the flattened type map of one element, as byte runs in
 * type-map order, with lb and ub computed by the standard's rules) mirrors every constructor
 * call. Every check that data arrived compares the whole receive buffer with an image built
 * from the model: the bytes the type covers must hold the message's bytes in type-map order,
 * and every other byte (the gaps between blocks, alignment padding, the guard zones around the
 * buffer) must keep the poison it was filled with. Buffers have their origin in the middle of
 * the allocation, so negative displacements land inside it.
 *
 *   - constructors: contiguous, vector (negative stride, zero count, zero blocklength),
 *     hvector (negative stride), indexed (zero-length block, negative displacements),
 *     hindexed, indexed_block, hindexed_block, struct (padding inside, alignment padding at
 *     the end, a zero-length block, negative displacements, a predefined pair type inside),
 *     subarray in C and Fortran order (2-D and 3-D), resized (of resized too), dup; nested:
 *     struct of vector of indexed of resized, vector of a struct with padding, hvector of a
 *     subarray, indexed_block of a resized type with a negative lb, a column type whose true
 *     extent exceeds its extent; each built with the int forms and again with the _c forms;
 *   - MPI_Type_size(_c), MPI_Type_get_extent(_c), MPI_Type_get_true_extent(_c) against values
 *     computed by hand (and against the model);
 *   - MPI_Pack/MPI_Unpack (and _c) round trips, MPI_Pack_size(_c), positions accumulated over
 *     several calls, packed data sent as MPI_PACKED and received typed (and the reverse),
 *     MPI_ERR_TRUNCATE when outsize or insize is too small;
 *   - MPI_Send/Recv, Ssend, Isend/Irecv, Send_init/Recv_init (started twice), Bsend (the user
 *     buffer overwritten right after), Sendrecv, Probe then Recv, Mprobe then Mrecv,
 *     Sendrecv_replace, at sizes below 1 KiB (eager), about 100 KiB (long eager; rendezvous for
 *     Ssend) and several MiB (rendezvous; a vector of 1M doubles with stride 2), with the
 *     receiver using the derived type or a contiguous array of the basic type (same signature)
 *     and vice versa; the status (source, tag, MPI_Get_count, MPI_Get_elements) of each;
 *   - MPI_Bcast, Gather, Scatter, Allgather, Alltoall, Gatherv with derived types, processes of
 *     one call mixing derived and contiguous types, on MPI_COMM_WORLD and a renumbered split;
 *   - MPI_Get_count / MPI_Get_elements (and _c, _x) after partial messages (fewer basic
 *     elements than the type holds) for every case with one basic type, and for a struct {int,
 *     double}; MPI_Status_set_elements with a derived type;
 *   - sizes, extents and strides beyond an int with the _c constructors (no data moves), and
 *     MPI_Aint bounds beyond 2^31 through the MPI_Aint calls;
 *   - MPI_BOTTOM with a struct of absolute addresses (MPI_Get_address); MPI_Type_free of the
 *     types a type was built from (the built type keeps working); a duplicate of a committed
 *     type is committed; names;
 *   - wrong arguments under MPI_ERRORS_RETURN (on MPI_COMM_WORLD and MPI_COMM_SELF): an
 *     uncommitted type in communication and packing (MPI_ERR_TYPE), negative counts and
 *     blocklengths (MPI_ERR_COUNT), a subarray that does not fit (MPI_ERR_ARG), MPI_Type_free
 *     of a predefined type (MPI_ERR_TYPE), MPI_DATATYPE_NULL where a type is needed, a typed
 *     receive too small for the message (MPI_ERR_TRUNCATE).
 * Not tested (known gap): MPI_Type_free while a nonblocking operation using the type is pending.
 * A mismatch names the rank, the case, the call, the byte, what was expected and what came. */
/* The model's byte loops are the test's own cost, not what it tests: optimize them even in the
 * sanitizer build (a debug build, -O0), which still instruments every access. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

#include "mpitest.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>

static int rank, size;
static uint32_t tid; /* one number per operation, the same at every process */
static int verbose;

#define POISON 0xA5 /* receive buffers before the data comes */
#define NOISE 0x3C  /* send buffers around the data */
#define GUARD 64    /* bytes before and after every buffer's data */

static int64_t i64min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
static int64_t i64max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* ----------------------------------------------------------------- the reference model */

typedef struct {
    int64_t d, n;
} run_t;

typedef struct {
    int64_t d, n, stride, count; /* count runs of n bytes, stride apart, from d */
} grp_t;

typedef struct {
    run_t *r;          /* the data of one element: byte runs in type-map order */
    int64_t nr, cap;
    grp_t *g;          /* the same runs grouped, built when first needed (put_stream) */
    int64_t ng;
    int64_t tlb, tub, true_nr; /* the true bounds, when computed with true_nr runs */
    int64_t size;      /* bytes of data */
    int64_t nel;       /* basic elements */
    int64_t lb, ub;    /* by the standard's rules */
    int64_t align;     /* largest alignment of a basic type in it (struct padding) */
    bool bounded;
} ref_t;

static void ref_run(ref_t *x, int64_t d, int64_t n)
{
    if (n <= 0)
        return;
    x->true_nr = -1; /* the cached true bounds and groups are stale */
    free(x->g);
    x->g = NULL;
    x->size += n;
    if (x->nr && x->r[x->nr - 1].d + x->r[x->nr - 1].n == d) {
        x->r[x->nr - 1].n += n;
        return;
    }
    if (x->nr == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 8;
        x->r = realloc(x->r, (size_t)x->cap * sizeof *x->r);
        if (!x->r) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    x->r[x->nr++] = (run_t){d, n};
}

static void ref_bounds(ref_t *x, int64_t lb, int64_t ub)
{
    if (!x->bounded) {
        x->lb = lb, x->ub = ub, x->bounded = true;
        return;
    }
    x->lb = i64min(x->lb, lb), x->ub = i64max(x->ub, ub);
}

static int64_t ref_ext(const ref_t *x)
{
    return x->ub - x->lb;
}

static void ref_true(const ref_t *x, int64_t *tlb, int64_t *tub)
{
    if (x->true_nr == x->nr) { /* computed since the last run was added */
        *tlb = x->tlb, *tub = x->tub;
        return;
    }
    *tlb = *tub = 0;
    for (int64_t i = 0; i < x->nr; i++) {
        int64_t a = x->r[i].d, b = x->r[i].d + x->r[i].n;
        *tlb = i ? i64min(*tlb, a) : a;
        *tub = i ? i64max(*tub, b) : b;
    }
    ref_t *w = (ref_t *)x;
    w->tlb = *tlb, w->tub = *tub, w->true_nr = x->nr;
}

static void ref_free(ref_t *x)
{
    free(x->r);
    free(x->g);
    memset(x, 0, sizeof *x);
}

static ref_t ref_basic(int bytes)
{
    ref_t x = {0};
    ref_run(&x, 0, bytes);
    x.nel = 1, x.lb = 0, x.ub = bytes, x.align = bytes, x.bounded = true;
    return x;
}

/* n copies of old at disp, old's extent apart (one block of a constructor). */
static void ref_copies(ref_t *x, const ref_t *old, int64_t disp, int64_t n)
{
    if (n <= 0)
        return;
    int64_t ext = ref_ext(old), span = (n - 1) * ext;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < old->nr; i++)
            ref_run(x, disp + j * ext + old->r[i].d, old->r[i].n);
    x->nel += n * old->nel;
    ref_bounds(x, disp + old->lb + i64min(0, span), disp + old->ub + i64max(0, span));
    x->align = i64max(x->align, old->align);
}

static ref_t ref_hvector(int64_t count, int64_t bl, int64_t stride, const ref_t *old)
{
    ref_t x = {0};
    for (int64_t i = 0; i < count; i++)
        ref_copies(&x, old, i * stride, bl);
    return x;
}

static ref_t ref_vector(int64_t count, int64_t bl, int64_t stride, const ref_t *old)
{
    return ref_hvector(count, bl, stride * ref_ext(old), old);
}

static ref_t ref_contig(int64_t n, const ref_t *old)
{
    return ref_hvector(n, 1, ref_ext(old), old);
}

static ref_t ref_hindexed(int n, const int64_t *bl, const int64_t *disp, const ref_t *old)
{
    ref_t x = {0};
    for (int i = 0; i < n; i++)
        ref_copies(&x, old, disp[i], bl[i]);
    return x;
}

static ref_t ref_indexed(int n, const int64_t *bl, const int64_t *disp, const ref_t *old)
{
    int64_t d[16];
    for (int i = 0; i < n; i++)
        d[i] = disp[i] * ref_ext(old);
    return ref_hindexed(n, bl, d, old);
}

/* pad: round the extent up to the largest alignment (the standard's epsilon). */
static ref_t ref_struct(int n, const int64_t *bl, const int64_t *disp, const ref_t *const *old, bool pad)
{
    ref_t x = {0};
    for (int i = 0; i < n; i++)
        ref_copies(&x, old[i], disp[i], bl[i]);
    if (pad && x.align > 1 && ref_ext(&x) % x.align)
        x.ub += x.align - ref_ext(&x) % x.align;
    return x;
}

static ref_t ref_resized(const ref_t *old, int64_t lb, int64_t ext)
{
    ref_t x = {0};
    for (int64_t i = 0; i < old->nr; i++)
        ref_run(&x, old->r[i].d, old->r[i].n);
    x.nel = old->nel, x.align = old->align;
    x.lb = lb, x.ub = lb + ext, x.bounded = true;
    return x;
}

static ref_t ref_subarray(int nd, const int64_t *sizes, const int64_t *subs, const int64_t *starts, bool corder,
                          const ref_t *old)
{
    ref_t x = {0};
    int64_t stride[8], total = 1, all = 1;
    for (int k = 0; k < nd; k++) {
        int i = corder ? nd - 1 - k : k; /* from the fastest dimension out */
        stride[i] = all;
        all *= sizes[i];
        total *= subs[i];
    }
    for (int64_t idx = 0; idx < total; idx++) {
        int64_t rest = idx, lin = 0;
        for (int k = 0; k < nd; k++) {
            int i = corder ? nd - 1 - k : k;
            lin += (starts[i] + rest % subs[i]) * stride[i];
            rest /= subs[i];
        }
        ref_copies(&x, old, lin * ref_ext(old), 1);
    }
    x.lb = 0, x.ub = all * ref_ext(old), x.bounded = true;
    return x;
}

static ref_t ref_dup(const ref_t *old)
{
    ref_t x = ref_resized(old, old->lb, ref_ext(old));
    return x;
}

static ref_t R_INT, R_DOUBLE, R_SHORT, R_CHAR, R_DOUBLE_INT;

/* ----------------------------------------------------------------- buffers and images */

/* The stream of a message with seed s: byte k is T[(k + offset(s)) mod TL], a pseudo-random
 * table whose length is a prime (no power-of-two shift of the data, as pipelines cut messages,
 * maps the stream onto itself). */
enum { TL = 2097143 };
static unsigned char T[TL];

static void table_init(void)
{
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < TL; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        T[i] = (unsigned char)(x >> 32);
    }
}

static int64_t stream_at(uint32_t seed, int64_t k)
{
    return (int64_t)(((uint64_t)seed * 2654435761u + (uint64_t)k) % TL);
}

static uint32_t seed_of(uint32_t t, int r)
{
    return t * 1000003u + (uint32_t)r * 7919u + 1u;
}

static uint32_t seed2_of(uint32_t t, int from, int to)
{
    return t * 1000003u + (uint32_t)from * 7919u + (uint32_t)to * 104729u + 7u;
}

typedef struct {
    unsigned char *alloc, *base;
    size_t len;
} buf_t;

/* Freed buffers are kept for the next ones (big buffers come and go with every operation,
 * and 16 processes share 2 cores: no unmapping and faulting them in each time). */
enum { NPOOL = 8 };
static struct {
    unsigned char *p;
    size_t cap;
} pool[NPOOL];

static unsigned char *pool_get(size_t n)
{
    int best = -1;
    for (int i = 0; i < NPOOL; i++)
        if (pool[i].p && pool[i].cap >= n && (best < 0 || pool[i].cap < pool[best].cap))
            best = i;
    if (best >= 0) {
        unsigned char *p = pool[best].p;
        pool[best].p = NULL;
        return p;
    }
    size_t *h = malloc(n + 16);
    if (!h) {
        fprintf(stderr, "rank %d: out of memory for %zu bytes\n", rank, n);
        exit(2);
    }
    h[0] = n;
    return (unsigned char *)h + 16;
}

static void pool_put(unsigned char *p)
{
    if (!p)
        return;
    size_t cap = *(size_t *)(p - 16);
    int slot = 0; /* an empty slot, else the one with the smallest block */
    for (int i = 0; i < NPOOL; i++) {
        if (!pool[i].p) {
            slot = i;
            break;
        }
        if (pool[i].cap < pool[slot].cap)
            slot = i;
    }
    if (pool[slot].p) {
        if (pool[slot].cap >= cap) { /* keep the bigger ones */
            free(p - 16);
            return;
        }
        free(pool[slot].p - 16);
    }
    pool[slot].p = p, pool[slot].cap = cap;
}

static void pool_clear(void)
{
    for (int i = 0; i < NPOOL; i++)
        if (pool[i].p)
            free(pool[i].p - 16), pool[i].p = NULL;
}

/* Room for n elements of r, extent ext apart, with guards; base is the buffer address. */
static buf_t buf_new(const ref_t *r, int64_t ext, int64_t n)
{
    int64_t tlb, tub, lo = 0, hi = 0;
    ref_true(r, &tlb, &tub);
    if (n > 0 && r->size > 0) {
        lo = i64min(0, tlb + i64min(0, (n - 1) * ext));
        hi = i64max(0, tub + i64max(0, (n - 1) * ext));
    }
    buf_t b;
    b.len = (size_t)(hi - lo + 2 * GUARD);
    b.alloc = pool_get(b.len);
    b.base = b.alloc + GUARD - lo;
    return b;
}

static buf_t buf_like(const buf_t *o, int fill)
{
    buf_t b = *o;
    b.alloc = pool_get(o->len);
    b.base = b.alloc + (o->base - o->alloc);
    memset(b.alloc, fill, b.len);
    return b;
}

static void buf_free(buf_t *b)
{
    pool_put(b->alloc);
    b->alloc = b->base = NULL;
}

/* Groups a model's runs: runs of the same length at a constant stride make one group. */
static const grp_t *groups(const ref_t *cr, int64_t *ng)
{
    ref_t *r = (ref_t *)cr;
    if (!r->g && r->nr) {
        r->g = malloc(sizeof(grp_t) * (size_t)r->nr);
        r->ng = 0;
        for (int64_t i = 0; i < r->nr; i++) {
            grp_t *l = r->ng ? &r->g[r->ng - 1] : NULL;
            if (l && l->n == r->r[i].n) {
                if (l->count == 1)
                    l->stride = r->r[i].d - l->d; /* a second run sets the stride */
                if (r->r[i].d - l->d == l->count * l->stride) {
                    l->count++;
                    continue;
                }
            }
            r->g[r->ng++] = (grp_t){r->r[i].d, r->r[i].n, 0, 1};
        }
    }
    *ng = r->ng;
    return r->g;
}

/* Writes the stream of `seed` (its first `limit` bytes) into elements first.. first+n-1. */
static void put_stream(unsigned char *base, const ref_t *r, int64_t ext, int64_t first, int64_t n, uint32_t seed,
                       int64_t limit)
{
    int64_t k = 0, at = stream_at(seed, 0), ng;
    const grp_t *g = groups(r, &ng);
    for (int64_t e = first; e < first + n; e++)
        for (int64_t i = 0; i < ng; i++)
            for (int64_t c = 0; c < g[i].count; c++) {
                unsigned char *p = base + e * ext + g[i].d + c * g[i].stride;
                int64_t len = i64min(g[i].n, limit - k);
                k += len;
                if (len == 8 && at + 8 <= TL) { /* the common case: one double */
                    memcpy(p, T + at, 8);
                    at += 8;
                    len = 0;
                }
                while (len > 0) {
                    int64_t take = i64min(len, TL - at);
                    memcpy(p, T + at, (size_t)take);
                    p += take, len -= take, at += take;
                    if (at == TL)
                        at = 0;
                }
                if (k >= limit)
                    return;
            }
}

/* Which byte of the message (counted in type-map order over elements 0.. n-1) byte `off` of
 * the buffer holds; -1 when the type does not cover it. */
static int64_t covered(const ref_t *r, int64_t ext, int64_t n, int64_t off)
{
    int64_t k = 0;
    for (int64_t e = 0; e < n; e++)
        for (int64_t i = 0; i < r->nr; i++) {
            int64_t a = e * ext + r->r[i].d;
            if (off >= a && off < a + r->r[i].n)
                return k + off - a;
            k += r->r[i].n;
        }
    return -1;
}

/* The buffer against its image; a mismatch names the byte (offset from the buffer address). */
static int compare(const buf_t *got, const buf_t *img, const ref_t *r, int64_t ext, int64_t n, const char *what)
{
    if (memcmp(got->alloc, img->alloc, got->len) == 0)
        return 0;
    int64_t bad = 0, origin = got->base - got->alloc;
    for (size_t i = 0; i < got->len; i++) {
        if (got->alloc[i] == img->alloc[i])
            continue;
        if (bad++ < 5) {
            int64_t off = (int64_t)i - origin, k = covered(r, ext, n, off);
            char where[64] = "not covered by the type: must stay untouched";
            if (k >= 0)
                snprintf(where, sizeof where, "byte %lld of the data in type-map order", (long long)k);
            CHECK(0, "%s: byte at offset %lld from the buffer address (%s): expected 0x%02x, got 0x%02x", what,
                  (long long)off, where, img->alloc[i], got->alloc[i]);
        }
    }
    CHECK(0, "%s: %lld bytes of %zu differ", what, (long long)bad, got->len);
    return 1;
}

/* ----------------------------------------------------------------- the cases */

typedef struct {
    char name[112];
    MPI_Datatype t;
    ref_t ref;
    MPI_Count size;                  /* computed by hand */
    MPI_Aint lb, extent, tlb, textent;
    MPI_Datatype flat;               /* a homogeneous signature's basic type, or MPI_DATATYPE_NULL */
    bool props_only;                 /* bounds and a single element only */
} tcase;

enum { MAXC = 40 };
static tcase cases[2][MAXC];
static int ncases;

static const ref_t *ref_of_basic(MPI_Datatype t)
{
    return t == MPI_INT ? &R_INT : t == MPI_DOUBLE ? &R_DOUBLE : t == MPI_SHORT ? &R_SHORT : &R_CHAR;
}

static const char *form(int c)
{
    return c ? " (_c forms)" : "";
}

static void ok(int rc, const char *call, int c)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING] = "";
        int len;
        MPI_Error_string(rc, s, &len);
        CHECK(0, "%s%s returned %d (%s)", call, form(c), rc, s);
    }
}

/* The constructors in their int or _c form. */
static MPI_Datatype T_contig(int c, int64_t n, MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    ok(c ? MPI_Type_contiguous_c(n, old, &t) : MPI_Type_contiguous((int)n, old, &t), "MPI_Type_contiguous", c);
    return t;
}

static MPI_Datatype T_vector(int c, int64_t n, int64_t bl, int64_t st, MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    ok(c ? MPI_Type_vector_c(n, bl, st, old, &t) : MPI_Type_vector((int)n, (int)bl, (int)st, old, &t),
       "MPI_Type_vector", c);
    return t;
}

static MPI_Datatype T_hvector(int c, int64_t n, int64_t bl, int64_t st, MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    ok(c ? MPI_Type_create_hvector_c(n, bl, st, old, &t) : MPI_Type_create_hvector((int)n, (int)bl, st, old, &t),
       "MPI_Type_create_hvector", c);
    return t;
}

static MPI_Datatype T_indexed(int c, int n, const int64_t *bl, const int64_t *d, MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int ib[16], id[16];
    MPI_Count cb[16], cd[16];
    for (int i = 0; i < n; i++)
        ib[i] = (int)bl[i], id[i] = (int)d[i], cb[i] = bl[i], cd[i] = d[i];
    ok(c ? MPI_Type_indexed_c(n, cb, cd, old, &t) : MPI_Type_indexed(n, ib, id, old, &t), "MPI_Type_indexed", c);
    return t;
}

static MPI_Datatype T_hindexed(int c, int n, const int64_t *bl, const int64_t *d, MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int ib[16];
    MPI_Aint ad[16];
    MPI_Count cb[16], cd[16];
    for (int i = 0; i < n; i++)
        ib[i] = (int)bl[i], ad[i] = d[i], cb[i] = bl[i], cd[i] = d[i];
    ok(c ? MPI_Type_create_hindexed_c(n, cb, cd, old, &t) : MPI_Type_create_hindexed(n, ib, ad, old, &t),
       "MPI_Type_create_hindexed", c);
    return t;
}

static MPI_Datatype T_indexed_block(int c, int n, int64_t bl, const int64_t *d, MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int id[16];
    MPI_Count cd[16];
    for (int i = 0; i < n; i++)
        id[i] = (int)d[i], cd[i] = d[i];
    ok(c ? MPI_Type_create_indexed_block_c(n, bl, cd, old, &t) : MPI_Type_create_indexed_block(n, (int)bl, id, old, &t),
       "MPI_Type_create_indexed_block", c);
    return t;
}

static MPI_Datatype T_hindexed_block(int c, int n, int64_t bl, const int64_t *d, MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Aint ad[16];
    MPI_Count cd[16];
    for (int i = 0; i < n; i++)
        ad[i] = d[i], cd[i] = d[i];
    ok(c ? MPI_Type_create_hindexed_block_c(n, bl, cd, old, &t)
         : MPI_Type_create_hindexed_block(n, (int)bl, ad, old, &t),
       "MPI_Type_create_hindexed_block", c);
    return t;
}

static MPI_Datatype T_struct(int c, int n, const int64_t *bl, const int64_t *d, const MPI_Datatype *types)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int ib[16];
    MPI_Aint ad[16];
    MPI_Count cb[16], cd[16];
    for (int i = 0; i < n; i++)
        ib[i] = (int)bl[i], ad[i] = d[i], cb[i] = bl[i], cd[i] = d[i];
    ok(c ? MPI_Type_create_struct_c(n, cb, cd, types, &t) : MPI_Type_create_struct(n, ib, ad, types, &t),
       "MPI_Type_create_struct", c);
    return t;
}

static MPI_Datatype T_subarray(int c, int nd, const int64_t *sz, const int64_t *sub, const int64_t *st, int order,
                               MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int a[8], b[8], s[8];
    MPI_Count ca[8], cb[8], cs[8];
    for (int i = 0; i < nd; i++)
        a[i] = (int)sz[i], b[i] = (int)sub[i], s[i] = (int)st[i], ca[i] = sz[i], cb[i] = sub[i], cs[i] = st[i];
    ok(c ? MPI_Type_create_subarray_c(nd, ca, cb, cs, order, old, &t)
         : MPI_Type_create_subarray(nd, a, b, s, order, old, &t),
       "MPI_Type_create_subarray", c);
    return t;
}

static MPI_Datatype T_resized(int c, MPI_Datatype old, int64_t lb, int64_t ext)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    ok(c ? MPI_Type_create_resized_c(old, lb, ext, &t) : MPI_Type_create_resized(old, lb, ext, &t),
       "MPI_Type_create_resized", c);
    return t;
}

static MPI_Datatype T_dup(MPI_Datatype old)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    ok(MPI_Type_dup(old, &t), "MPI_Type_dup", 0);
    return t;
}

static void tfree(MPI_Datatype *t)
{
    ok(MPI_Type_free(t), "MPI_Type_free", 0);
    CHECK(*t == MPI_DATATYPE_NULL, "MPI_Type_free did not set the handle to MPI_DATATYPE_NULL");
}

static void add(int c, const char *name, MPI_Datatype t, ref_t ref, int64_t sz, int64_t lb, int64_t ext, int64_t tlb,
                int64_t text, MPI_Datatype flat, bool props_only)
{
    tcase *k = &cases[c][ncases++];
    snprintf(k->name, sizeof k->name, "%s%s", name, form(c));
    ok(MPI_Type_commit(&t), "MPI_Type_commit", c);
    k->t = t, k->ref = ref, k->size = sz, k->lb = lb, k->extent = ext, k->tlb = tlb, k->textent = text;
    k->flat = flat, k->props_only = props_only;
    /* the model must agree with the hand-computed values, or the test itself is wrong */
    int64_t mtlb, mtub;
    ref_true(&ref, &mtlb, &mtub);
    if (ref.size != sz || ref.lb != lb || ref_ext(&ref) != ext || mtlb != tlb || mtub - mtlb != text) {
        fprintf(stderr,
                "TEST BUG: case %s: model size %lld lb %lld extent %lld true lb %lld true extent %lld; by hand %lld %lld "
                "%lld %lld %lld\n",
                k->name, (long long)ref.size, (long long)ref.lb, (long long)ref_ext(&ref), (long long)mtlb,
                (long long)(mtub - mtlb), (long long)sz, (long long)lb, (long long)ext, (long long)tlb, (long long)text);
        exit(3);
    }
}

#define A(...) ((const int64_t[]){__VA_ARGS__})

/* Builds the cases with the int forms (c = 0) or the _c forms (c = 1). Types a case is built
 * from are freed as soon as it exists: the case must keep working without them. */
static void build_cases(int c)
{
    ncases = 0;
    MPI_Datatype t1, t2, t3;
    ref_t r1, r2, r3;

    add(c, "contiguous(5, MPI_INT)", T_contig(c, 5, MPI_INT), ref_contig(5, &R_INT), 20, 0, 20, 0, 20, MPI_INT, false);
    add(c, "contiguous(0, MPI_INT)", T_contig(c, 0, MPI_INT), ref_contig(0, &R_INT), 0, 0, 0, 0, 0, MPI_INT, false);
    add(c, "vector(3, 2, 4, MPI_INT)", T_vector(c, 3, 2, 4, MPI_INT), ref_vector(3, 2, 4, &R_INT), 24, 0, 40, 0, 40,
        MPI_INT, false);
    add(c, "vector(3, 2, -3, MPI_DOUBLE) (negative stride)", T_vector(c, 3, 2, -3, MPI_DOUBLE),
        ref_vector(3, 2, -3, &R_DOUBLE), 48, -48, 64, -48, 64, MPI_DOUBLE, false);
    add(c, "vector(0, 2, 3, MPI_INT) (zero count)", T_vector(c, 0, 2, 3, MPI_INT), ref_vector(0, 2, 3, &R_INT), 0, 0,
        0, 0, 0, MPI_INT, false);
    add(c, "vector(4, 0, 3, MPI_INT) (zero blocklength)", T_vector(c, 4, 0, 3, MPI_INT), ref_vector(4, 0, 3, &R_INT), 0,
        0, 0, 0, 0, MPI_INT, false);
    add(c, "hvector(3, 2, 20 bytes, MPI_INT)", T_hvector(c, 3, 2, 20, MPI_INT), ref_hvector(3, 2, 20, &R_INT), 24, 0,
        48, 0, 48, MPI_INT, false);
    add(c, "hvector(2, 3, -16 bytes, MPI_CHAR) (negative stride, odd extent)", T_hvector(c, 2, 3, -16, MPI_CHAR),
        ref_hvector(2, 3, -16, &R_CHAR), 6, -16, 19, -16, 19, MPI_CHAR, false);
    add(c, "indexed(4, {2,0,3,1}, {5,-2,1,-3}, MPI_INT)", T_indexed(c, 4, A(2, 0, 3, 1), A(5, -2, 1, -3), MPI_INT),
        ref_indexed(4, A(2, 0, 3, 1), A(5, -2, 1, -3), &R_INT), 24, -12, 40, -12, 40, MPI_INT, false);
    add(c, "hindexed(3, {1,2,0}, {-40,8,1000} bytes, MPI_DOUBLE)",
        T_hindexed(c, 3, A(1, 2, 0), A(-40, 8, 1000), MPI_DOUBLE),
        ref_hindexed(3, A(1, 2, 0), A(-40, 8, 1000), &R_DOUBLE), 24, -40, 64, -40, 64, MPI_DOUBLE, false);
    add(c, "indexed_block(3, 2, {4,0,-2}, MPI_SHORT)", T_indexed_block(c, 3, 2, A(4, 0, -2), MPI_SHORT),
        ref_indexed(3, A(2, 2, 2), A(4, 0, -2), &R_SHORT), 12, -4, 16, -4, 16, MPI_SHORT, false);
    add(c, "hindexed_block(2, 3, {0,7} bytes, MPI_CHAR)", T_hindexed_block(c, 2, 3, A(0, 7), MPI_CHAR),
        ref_hindexed(2, A(3, 3), A(0, 7), &R_CHAR), 6, 0, 10, 0, 10, MPI_CHAR, false);
    {
        const ref_t *o[] = {&R_INT, &R_DOUBLE};
        add(c, "struct {int @0, double @8}", T_struct(c, 2, A(1, 1), A(0, 8), (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}),
            ref_struct(2, A(1, 1), A(0, 8), o, true), 12, 0, 16, 0, 16, MPI_DATATYPE_NULL, false);
    }
    {
        const ref_t *o[] = {&R_INT, &R_INT, &R_INT};
        add(c, "struct {2 int @-8, int @4, 0 int @100}",
            T_struct(c, 3, A(2, 1, 0), A(-8, 4, 100), (MPI_Datatype[]){MPI_INT, MPI_INT, MPI_INT}),
            ref_struct(3, A(2, 1, 0), A(-8, 4, 100), o, true), 12, -8, 16, -8, 16, MPI_INT, false);
    }
    {
        /* the standard's epsilon: the extent, 9, rounds up to the alignment of double */
        const ref_t *o[] = {&R_DOUBLE, &R_CHAR};
        add(c, "struct {double @0, char @8} (alignment padding at the end)",
            T_struct(c, 2, A(1, 1), A(0, 8), (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}),
            ref_struct(2, A(1, 1), A(0, 8), o, true), 9, 0, 16, 0, 9, MPI_DATATYPE_NULL, true);
    }
    add(c, "contiguous(3, MPI_DOUBLE_INT)", T_contig(c, 3, MPI_DOUBLE_INT), ref_contig(3, &R_DOUBLE_INT), 36, 0, 48, 0,
        44, MPI_DATATYPE_NULL, false);
    add(c, "resized(MPI_INT, -4, 12)", T_resized(c, MPI_INT, -4, 12), ref_resized(&R_INT, -4, 12), 4, -4, 12, 0, 4,
        MPI_INT, false);
    t1 = T_resized(c, MPI_INT, -4, 12);
    r1 = ref_resized(&R_INT, -4, 12);
    add(c, "resized(resized(MPI_INT, -4, 12), 2, 6)", T_resized(c, t1, 2, 6), ref_resized(&r1, 2, 6), 4, 2, 6, 0, 4,
        MPI_INT, false);
    tfree(&t1);
    ref_free(&r1);
    t1 = T_vector(c, 3, 2, 4, MPI_INT);
    ok(MPI_Type_commit(&t1), "MPI_Type_commit", c);
    r1 = ref_vector(3, 2, 4, &R_INT);
    add(c, "dup(vector(3, 2, 4, MPI_INT))", T_dup(t1), ref_dup(&r1), 24, 0, 40, 0, 40, MPI_INT, false);
    tfree(&t1);
    ref_free(&r1);
    add(c, "subarray C {4,5} {2,3} {1,2} MPI_INT",
        T_subarray(c, 2, A(4, 5), A(2, 3), A(1, 2), MPI_ORDER_C, MPI_INT),
        ref_subarray(2, A(4, 5), A(2, 3), A(1, 2), true, &R_INT), 24, 0, 80, 28, 32, MPI_INT, false);
    add(c, "subarray Fortran {4,5} {2,3} {1,2} MPI_DOUBLE",
        T_subarray(c, 2, A(4, 5), A(2, 3), A(1, 2), MPI_ORDER_FORTRAN, MPI_DOUBLE),
        ref_subarray(2, A(4, 5), A(2, 3), A(1, 2), false, &R_DOUBLE), 48, 0, 160, 72, 80, MPI_DOUBLE, false);
    add(c, "subarray C {3,2,4} {2,2,4} {1,0,0} MPI_CHAR",
        T_subarray(c, 3, A(3, 2, 4), A(2, 2, 4), A(1, 0, 0), MPI_ORDER_C, MPI_CHAR),
        ref_subarray(3, A(3, 2, 4), A(2, 2, 4), A(1, 0, 0), true, &R_CHAR), 16, 0, 24, 8, 16, MPI_CHAR, false);
    add(c, "subarray Fortran {4,3,2} {2,1,2} {1,2,0} MPI_SHORT",
        T_subarray(c, 3, A(4, 3, 2), A(2, 1, 2), A(1, 2, 0), MPI_ORDER_FORTRAN, MPI_SHORT),
        ref_subarray(3, A(4, 3, 2), A(2, 1, 2), A(1, 2, 0), false, &R_SHORT), 8, 0, 48, 18, 28, MPI_SHORT, false);

    add(c, "dup(MPI_DOUBLE)", T_dup(MPI_DOUBLE), ref_dup(&R_DOUBLE), 8, 0, 8, 0, 8, MPI_DOUBLE, false);
    {
        const ref_t *o[] = {&R_INT, &R_DOUBLE};
        t1 = T_struct(c, 2, A(1, 1), A(0, 8), (MPI_Datatype[]){MPI_INT, MPI_DOUBLE});
        r1 = ref_struct(2, A(1, 1), A(0, 8), o, true);
    }
    add(c, "subarray C {3,4} {2,2} {1,1} struct {int @0, double @8}",
        T_subarray(c, 2, A(3, 4), A(2, 2), A(1, 1), MPI_ORDER_C, t1),
        ref_subarray(2, A(3, 4), A(2, 2), A(1, 1), true, &r1), 48, 0, 192, 80, 96, MPI_DATATYPE_NULL, false);
    tfree(&t1);
    ref_free(&r1);

    /* nested: struct of vector of indexed of resized */
    t1 = T_resized(c, MPI_INT, -4, 12);
    r1 = ref_resized(&R_INT, -4, 12);
    t2 = T_indexed(c, 2, A(2, 1), A(0, 3), t1);
    r2 = ref_indexed(2, A(2, 1), A(0, 3), &r1);
    tfree(&t1);
    t3 = T_vector(c, 2, 1, -1, t2);
    r3 = ref_vector(2, 1, -1, &r2);
    tfree(&t2);
    {
        const ref_t *o[] = {&r3, &R_DOUBLE};
        add(c, "struct {vector(2, 1, -1, indexed(2, {2,1}, {0,3}, resized(MPI_INT, -4, 12))) @100, 2 double @0}",
            T_struct(c, 2, A(1, 2), A(100, 0), (MPI_Datatype[]){t3, MPI_DOUBLE}), ref_struct(2, A(1, 2), A(100, 0), o, true),
            40, 0, 144, 0, 140, MPI_DATATYPE_NULL, false);
    }
    tfree(&t3);
    ref_free(&r1), ref_free(&r2), ref_free(&r3);

    /* vector of a struct with padding */
    {
        const ref_t *o[] = {&R_INT, &R_DOUBLE};
        t1 = T_struct(c, 2, A(1, 1), A(0, 8), (MPI_Datatype[]){MPI_INT, MPI_DOUBLE});
        r1 = ref_struct(2, A(1, 1), A(0, 8), o, true);
    }
    add(c, "vector(3, 2, 3, struct {int @0, double @8})", T_vector(c, 3, 2, 3, t1), ref_vector(3, 2, 3, &r1), 72, 0,
        128, 0, 128, MPI_DATATYPE_NULL, false);
    add(c, "hindexed(2, {1,2}, {-64,16} bytes, struct {int @0, double @8})", T_hindexed(c, 2, A(1, 2), A(-64, 16), t1),
        ref_hindexed(2, A(1, 2), A(-64, 16), &r1), 36, -64, 112, -64, 112, MPI_DATATYPE_NULL, false);
    tfree(&t1);
    ref_free(&r1);

    /* hvector of a subarray */
    t1 = T_subarray(c, 2, A(4, 5), A(2, 3), A(1, 2), MPI_ORDER_C, MPI_INT);
    r1 = ref_subarray(2, A(4, 5), A(2, 3), A(1, 2), true, &R_INT);
    add(c, "hvector(2, 2, -200 bytes, subarray C {4,5} {2,3} {1,2} MPI_INT)", T_hvector(c, 2, 2, -200, t1),
        ref_hvector(2, 2, -200, &r1), 96, -200, 360, -172, 312, MPI_INT, false);
    tfree(&t1);
    ref_free(&r1);

    /* indexed_block of a resized type with a negative lb */
    t1 = T_resized(c, MPI_DOUBLE, -8, 24);
    r1 = ref_resized(&R_DOUBLE, -8, 24);
    add(c, "indexed_block(3, 2, {2,-1,5}, resized(MPI_DOUBLE, -8, 24))", T_indexed_block(c, 3, 2, A(2, -1, 5), t1),
        ref_indexed(3, A(2, 2, 2), A(2, -1, 5), &r1), 48, -32, 192, -24, 176, MPI_DOUBLE, false);
    tfree(&t1);
    ref_free(&r1);

    /* a column of a 2 x 2^18 matrix: the true extent exceeds the extent, elements interleave
     * (up to 2^18 of them without overlapping) */
    t1 = T_vector(c, 2, 1, 1 << 18, MPI_INT);
    r1 = ref_vector(2, 1, 1 << 18, &R_INT);
    add(c, "resized(vector(2, 1, 2^18, MPI_INT), 0, 4) (a column)", T_resized(c, t1, 0, 4), ref_resized(&r1, 0, 4), 8,
        0, 4, 0, ((1 << 18) + 1) * 4, MPI_INT, false);
    tfree(&t1);
    ref_free(&r1);
}

/* The large type: a vector of 1M doubles with stride 2 (8 MiB of data). */
enum { BIGN = 1 << 20 };

/* ----------------------------------------------------------------- properties */

static void props(const tcase *k)
{
    MPI_Count sz = -1, clb = -1, cext = -1, ctlb = -1, ctext = -1;
    MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;
    int isz = -1;
    ok(MPI_Type_size(k->t, &isz), "MPI_Type_size", 0);
    ok(MPI_Type_size_c(k->t, &sz), "MPI_Type_size_c", 0);
    ok(MPI_Type_get_extent(k->t, &lb, &ext), "MPI_Type_get_extent", 0);
    ok(MPI_Type_get_extent_c(k->t, &clb, &cext), "MPI_Type_get_extent_c", 0);
    ok(MPI_Type_get_true_extent(k->t, &tlb, &text), "MPI_Type_get_true_extent", 0);
    ok(MPI_Type_get_true_extent_c(k->t, &ctlb, &ctext), "MPI_Type_get_true_extent_c", 0);
    CHECK(isz == k->size && sz == k->size, "case %s: MPI_Type_size %d, MPI_Type_size_c %lld, expected %lld", k->name, isz,
          (long long)sz, (long long)k->size);
    CHECK(lb == k->lb && clb == k->lb, "case %s: lb %ld (_c: %lld), expected %ld", k->name, (long)lb, (long long)clb,
          (long)k->lb);
    CHECK(ext == k->extent && cext == k->extent, "case %s: extent %ld (_c: %lld), expected %ld", k->name, (long)ext,
          (long long)cext, (long)k->extent);
    CHECK(tlb == k->tlb && ctlb == k->tlb, "case %s: true lb %ld (_c: %lld), expected %ld", k->name, (long)tlb,
          (long long)ctlb, (long)k->tlb);
    CHECK(text == k->textent && ctext == k->textent, "case %s: true extent %ld (_c: %lld), expected %ld", k->name,
          (long)text, (long long)ctext, (long)k->textent);
}

/* ----------------------------------------------------------------- one side of a transfer */

typedef struct {
    MPI_Datatype t;
    const ref_t *ref;
    int64_t ext;   /* from the model */
    MPI_Count n;   /* elements of t */
    const char *desc;
    char descbuf[160];
} side_t;

/* count elements of case k, as k's type or (flat) as its basic type. */
static void side_of(side_t *s, const tcase *k, MPI_Count count, bool flat)
{
    if (flat && k->flat != MPI_DATATYPE_NULL) {
        s->t = k->flat;
        s->ref = ref_of_basic(k->flat);
        s->n = count * k->ref.nel;
        char tn[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(k->flat, tn, &len);
        snprintf(s->descbuf, sizeof s->descbuf, "%lld %s", (long long)s->n, tn);
    } else {
        s->t = k->t;
        s->ref = &k->ref;
        s->n = count;
        snprintf(s->descbuf, sizeof s->descbuf, "%lld of the type", (long long)count);
    }
    s->ext = ref_ext(s->ref);
    s->desc = s->descbuf;
}

/* A send buffer for `nblocks` blocks of s->n elements, block b carrying seeds[b]. */
static buf_t send_buf(const side_t *s, int nblocks, const uint32_t *seeds)
{
    buf_t b = buf_new(s->ref, s->ext, s->n * nblocks);
    memset(b.alloc, NOISE, b.len);
    for (int i = 0; i < nblocks; i++)
        put_stream(b.base, s->ref, s->ext, i * s->n, s->n, seeds[i], INT64_MAX);
    return b;
}

static void check_status(const MPI_Status *st, const side_t *r, int src, int tag, const char *what)
{
    int cnt = -2;
    MPI_Count ccnt = -2;
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag, "%s: status says source %d tag %d, expected %d and %d", what,
          st->MPI_SOURCE, st->MPI_TAG, src, tag);
    MPI_Get_count(st, r->t, &cnt);
    MPI_Get_count_c(st, r->t, &ccnt);
    MPI_Count n = r->ref->size ? r->n : 0; /* a type of size 0 counts 0 (MPI-4.1 3.2.5) */
    CHECK(cnt == n && ccnt == n, "%s: MPI_Get_count %d (_c: %lld), expected %lld", what, cnt, (long long)ccnt,
          (long long)n);
    MPI_Count el = -2;
    MPI_Get_elements_c(st, r->t, &el);
    CHECK(el == r->n * r->ref->nel, "%s: MPI_Get_elements_c %lld, expected %lld", what, (long long)el,
          (long long)(r->n * r->ref->nel));
}

/* ----------------------------------------------------------------- point-to-point */

enum { M_SEND, M_SSEND, M_ISEND, M_PERSIST, M_BSEND, M_SENDRECV, M_PROBE, M_MPROBE, M_REPLACE, NMODES };
static const char *mname[NMODES] = {"MPI_Send + MPI_Recv",          "MPI_Ssend + MPI_Recv",
                                    "MPI_Isend + MPI_Irecv",        "MPI_Send_init + MPI_Recv_init",
                                    "MPI_Bsend + MPI_Recv",         "MPI_Sendrecv",
                                    "MPI_Isend + MPI_Probe + MPI_Recv", "MPI_Isend + MPI_Mprobe + MPI_Mrecv",
                                    "MPI_Sendrecv_replace"};

/* variant: 0 type to type, 1 basic type to the type, 2 the type to basic type */
static void p2p(const tcase *k, MPI_Count count, int mode, int variant, const char *szname)
{
    side_t s, r;
    if (mode == M_REPLACE)
        variant = 0; /* one buffer, one type */
    side_of(&s, k, count, variant == 1);
    side_of(&r, k, count, variant == 2);
    char what[512];
    snprintf(what, sizeof what, "rank %d, case %s, %s, %s, sent as %s, received as %s", rank, k->name, mname[mode],
             szname, s.desc, r.desc);
    int dst, src;
    bool pairs = mode == M_SEND || mode == M_SSEND;
    if (pairs) {
        int p = rank ^ 1;
        dst = src = p < size ? p : rank;
    } else {
        dst = (rank + 1) % size;
        src = (rank + size - 1) % size;
    }
    int tag = (int)(tid % 30000);
    MPI_Request rq[2];
    buf_t sb = buf_new(s.ref, s.ext, s.n), rb = buf_new(r.ref, r.ext, r.n);
    if (mode == M_PERSIST) {
        ok(MPI_Recv_init(rb.base, (int)r.n, r.t, src, tag, MPI_COMM_WORLD, &rq[1]), "MPI_Recv_init", 0);
        ok(MPI_Send_init(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD, &rq[0]), "MPI_Send_init", 0);
    }
    for (int round = 0; round < (mode == M_PERSIST ? 2 : 1); round++, tid++) {
        uint32_t my = seed_of(tid, rank), their = seed_of(tid, src);
        memset(sb.alloc, NOISE, sb.len);
        put_stream(sb.base, s.ref, s.ext, 0, s.n, my, INT64_MAX);
        memset(rb.alloc, POISON, rb.len);
        MPI_Status st;
        MPI_Status sts[2];
        MPI_Request sreq;
        memset(&st, 0, sizeof st);
        switch (mode) {
        case M_SEND:
        case M_SSEND:
            if (dst == rank) {
                ok(mode == M_SEND ? MPI_Isend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD, &sreq)
                                  : MPI_Issend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD, &sreq),
                   "MPI_Isend/MPI_Issend to self", 0);
                ok(MPI_Recv(rb.base, (int)r.n, r.t, src, tag, MPI_COMM_WORLD, &st), "MPI_Recv", 0);
                ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "MPI_Wait", 0);
            } else if (rank < dst) {
                ok(mode == M_SEND ? MPI_Send(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD)
                                  : MPI_Ssend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD),
                   mname[mode], 0);
                ok(MPI_Recv(rb.base, (int)r.n, r.t, src, tag, MPI_COMM_WORLD, &st), "MPI_Recv", 0);
            } else {
                ok(MPI_Recv(rb.base, (int)r.n, r.t, src, tag, MPI_COMM_WORLD, &st), "MPI_Recv", 0);
                ok(mode == M_SEND ? MPI_Send(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD)
                                  : MPI_Ssend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD),
                   mname[mode], 0);
            }
            break;
        case M_ISEND:
            ok(MPI_Irecv(rb.base, (int)r.n, r.t, src, tag, MPI_COMM_WORLD, &rq[1]), "MPI_Irecv", 0);
            ok(MPI_Isend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD, &rq[0]), "MPI_Isend", 0);
            ok(MPI_Waitall(2, rq, sts), "MPI_Waitall", 0);
            st = sts[1];
            break;
        case M_PERSIST:
            ok(MPI_Startall(2, rq), "MPI_Startall", 0);
            ok(MPI_Waitall(2, rq, sts), "MPI_Waitall", 0);
            st = sts[1];
            break;
        case M_BSEND:
            ok(MPI_Bsend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD), "MPI_Bsend", 0);
            memset(sb.alloc, NOISE ^ 0xff, sb.len); /* the buffered copy must not see this */
            ok(MPI_Recv(rb.base, (int)r.n, r.t, src, tag, MPI_COMM_WORLD, &st), "MPI_Recv", 0);
            break;
        case M_SENDRECV:
            ok(MPI_Sendrecv(sb.base, (int)s.n, s.t, dst, tag, rb.base, (int)r.n, r.t, src, tag, MPI_COMM_WORLD, &st),
               "MPI_Sendrecv", 0);
            break;
        case M_MPROBE: {
            ok(MPI_Isend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD, &sreq), "MPI_Isend", 0);
            MPI_Status pst;
            MPI_Message msg;
            ok(MPI_Mprobe(src, tag, MPI_COMM_WORLD, &msg, &pst), "MPI_Mprobe", 0);
            char pw[600];
            snprintf(pw, sizeof pw, "%s (status of MPI_Mprobe)", what);
            check_status(&pst, &r, src, tag, pw);
            ok(MPI_Mrecv(rb.base, (int)r.n, r.t, &msg, &st), "MPI_Mrecv", 0);
            ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "MPI_Wait", 0);
            break;
        }
        case M_REPLACE:
            /* the send buffer receives: its gaps keep the send buffer's noise */
            ok(MPI_Sendrecv_replace(sb.base, (int)s.n, s.t, dst, tag, src, tag, MPI_COMM_WORLD, &st),
               "MPI_Sendrecv_replace", 0);
            break;
        case M_PROBE: {
            ok(MPI_Isend(sb.base, (int)s.n, s.t, dst, tag, MPI_COMM_WORLD, &sreq), "MPI_Isend", 0);
            MPI_Status pst;
            ok(MPI_Probe(src, tag, MPI_COMM_WORLD, &pst), "MPI_Probe", 0);
            char pw[600];
            snprintf(pw, sizeof pw, "%s (status of MPI_Probe)", what);
            check_status(&pst, &r, src, tag, pw);
            ok(MPI_Recv(rb.base, (int)r.n, r.t, pst.MPI_SOURCE, pst.MPI_TAG, MPI_COMM_WORLD, &st), "MPI_Recv", 0);
            ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "MPI_Wait", 0);
            break;
        }
        }
        check_status(&st, &r, src, tag, what);
        const buf_t *got = mode == M_REPLACE ? &sb : &rb;
        buf_t img = buf_like(got, mode == M_REPLACE ? NOISE : POISON);
        put_stream(img.base, r.ref, r.ext, 0, r.n, their, INT64_MAX);
        compare(got, &img, r.ref, r.ext, r.n, what);
        buf_free(&img);
    }
    if (mode == M_PERSIST) {
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
    }
    buf_free(&sb);
    buf_free(&rb);
}

/* ----------------------------------------------------------------- collectives */

enum { C_BCAST, C_GATHER, C_SCATTER, C_ALLGATHER, C_ALLTOALL, C_GATHERV, NCOLL };
static const char *cname[NCOLL] = {"MPI_Bcast", "MPI_Gather", "MPI_Scatter", "MPI_Allgather", "MPI_Alltoall",
                                   "MPI_Gatherv"};

/* variant bit 0: odd ranks send (or, in bcast and scatter, receive) the basic type; bit 1: the
 * receivers of gathered data (or the root of bcast and scatter) use the basic type. */
static void coll(int which, const tcase *k, MPI_Count count, int variant, MPI_Comm comm, const char *commname,
                 const char *szname)
{
    int cr, cs;
    MPI_Comm_rank(comm, &cr);
    MPI_Comm_size(comm, &cs);
    int root = (int)(tid % (uint32_t)cs);
    bool odd_flat = (variant & 1) && cr % 2 == 1, recv_flat = (variant & 2) != 0;
    side_t s, r;
    char what[512];
    int rc = MPI_SUCCESS;
    uint32_t *seeds = malloc(sizeof(uint32_t) * (size_t)cs);
    buf_t sb = {0}, rb = {0}, img = {0};
    int64_t nimg = 0;
    const side_t *rs = &r; /* the side whose buffer is checked */
    switch (which) {
    case C_BCAST: {
        side_of(&r, k, count, cr == root ? recv_flat : odd_flat);
        snprintf(what, sizeof what, "rank %d, case %s, %s on %s (root %d), %s, %s here", rank, k->name, cname[which],
                 commname, root, szname, r.desc);
        uint32_t sd = seed_of(tid, root);
        if (cr == root) {
            rb = send_buf(&r, 1, &sd);
            img = buf_like(&rb, NOISE);
        } else {
            rb = buf_new(r.ref, r.ext, r.n);
            memset(rb.alloc, POISON, rb.len);
            img = buf_like(&rb, POISON);
        }
        put_stream(img.base, r.ref, r.ext, 0, r.n, sd, INT64_MAX);
        nimg = r.n;
        rc = MPI_Bcast(rb.base, (int)r.n, r.t, root, comm);
        break;
    }
    case C_GATHER:
    case C_ALLGATHER:
    case C_GATHERV: {
        bool all = which == C_ALLGATHER, v = which == C_GATHERV;
        side_of(&s, k, count, odd_flat);
        side_of(&r, k, count, recv_flat);
        /* gatherv: counts that differ (0 at rank 1), blocks in reverse rank order with a
         * one-element gap between them */
        int *rc_ = malloc(sizeof(int) * (size_t)cs), *rd = malloc(sizeof(int) * (size_t)cs);
        MPI_Count mycount = count;
        int64_t pos = 0;
        for (int i = cs - 1; i >= 0; i--) {
            MPI_Count ci = v ? (i % 3 == 1 ? 0 : count + i % 2) : count;
            rc_[i] = (int)(ci * (r.n / (count ? count : 1)));
            if (count == 0)
                rc_[i] = 0;
            rd[i] = (int)pos;
            pos += v ? rc_[i] + (r.n / (count ? count : 1)) : rc_[i];
            if (i == cr)
                mycount = ci;
        }
        if (!v)
            for (int i = 0; i < cs; i++)
                rd[i] = i * (int)r.n;
        if (v) {
            pos = 0;
            for (int i = 0; i < cs; i++)
                pos = i64max(pos, rd[i] + rc_[i]);
        } else {
            pos = (int64_t)cs * r.n;
        }
        side_of(&s, k, mycount, odd_flat);
        snprintf(what, sizeof what, "rank %d, case %s, %s on %s (root %d), %s, sending %s, receiving %s each", rank,
                 k->name, cname[which], commname, root, szname, s.desc, r.desc);
        uint32_t my = seed_of(tid, cr);
        sb = send_buf(&s, 1, &my);
        bool receives = all || cr == root;
        if (receives) {
            rb = buf_new(r.ref, r.ext, pos);
            memset(rb.alloc, POISON, rb.len);
            img = buf_like(&rb, POISON);
            for (int i = 0; i < cs; i++)
                put_stream(img.base, r.ref, r.ext, rd[i], rc_[i], seed_of(tid, i), INT64_MAX);
            nimg = pos;
        }
        if (which == C_GATHER)
            rc = MPI_Gather(sb.base, (int)s.n, s.t, receives ? rb.base : NULL, (int)r.n, r.t, root, comm);
        else if (which == C_ALLGATHER)
            rc = MPI_Allgather(sb.base, (int)s.n, s.t, rb.base, (int)r.n, r.t, comm);
        else
            rc = MPI_Gatherv(sb.base, (int)s.n, s.t, receives ? rb.base : NULL, rc_, rd, r.t, root, comm);
        free(rc_), free(rd);
        break;
    }
    case C_SCATTER: {
        side_of(&s, k, count, recv_flat);
        side_of(&r, k, count, odd_flat);
        snprintf(what, sizeof what, "rank %d, case %s, %s on %s (root %d), %s, root sends %s each, received as %s",
                 rank, k->name, cname[which], commname, root, szname, s.desc, r.desc);
        for (int i = 0; i < cs; i++)
            seeds[i] = seed_of(tid, i);
        if (cr == root)
            sb = send_buf(&s, cs, seeds);
        rb = buf_new(r.ref, r.ext, r.n);
        memset(rb.alloc, POISON, rb.len);
        img = buf_like(&rb, POISON);
        put_stream(img.base, r.ref, r.ext, 0, r.n, seeds[cr], INT64_MAX);
        nimg = r.n;
        rc = MPI_Scatter(cr == root ? sb.base : NULL, (int)s.n, s.t, rb.base, (int)r.n, r.t, root, comm);
        break;
    }
    case C_ALLTOALL: {
        side_of(&s, k, count, odd_flat);
        side_of(&r, k, count, recv_flat && cr % 2 == 0);
        snprintf(what, sizeof what, "rank %d, case %s, %s on %s, %s, sending %s, receiving %s per process", rank,
                 k->name, cname[which], commname, szname, s.desc, r.desc);
        for (int j = 0; j < cs; j++)
            seeds[j] = seed2_of(tid, cr, j);
        sb = send_buf(&s, cs, seeds);
        rb = buf_new(r.ref, r.ext, r.n * cs);
        memset(rb.alloc, POISON, rb.len);
        img = buf_like(&rb, POISON);
        for (int i = 0; i < cs; i++)
            put_stream(img.base, r.ref, r.ext, i * r.n, r.n, seed2_of(tid, i, cr), INT64_MAX);
        nimg = r.n * cs;
        rc = MPI_Alltoall(sb.base, (int)s.n, s.t, rb.base, (int)r.n, r.t, comm);
        break;
    }
    }
    tid++;
    if (rc != MPI_SUCCESS) {
        char e[MPI_MAX_ERROR_STRING] = "";
        int len;
        MPI_Error_string(rc, e, &len);
        CHECK(0, "%s: returned %d (%s)", what, rc, e);
    }
    if (img.alloc)
        compare(&rb, &img, rs->ref, rs->ext, nimg, what);
    buf_free(&sb), buf_free(&rb), buf_free(&img);
    free(seeds);
}

/* ----------------------------------------------------------------- packing */

static void pack_case(const tcase *k, MPI_Count count, int c)
{
    char what[400];
    snprintf(what, sizeof what, "rank %d, case %s, MPI_Pack%s/MPI_Unpack%s of %lld", rank, k->name, c ? "_c" : "",
             c ? "_c" : "", (long long)count);
    MPI_Count psize = -1;
    int ipsize = -1;
    if (c)
        ok(MPI_Pack_size_c(count, k->t, MPI_COMM_WORLD, &psize), "MPI_Pack_size_c", 0);
    else
        ok(MPI_Pack_size((int)count, k->t, MPI_COMM_WORLD, &ipsize), "MPI_Pack_size", 0), psize = ipsize;
    MPI_Count bytes = count * k->size;
    CHECK(psize >= bytes, "%s: MPI_Pack_size says %lld, less than the %lld bytes of data", what, (long long)psize,
          (long long)bytes);
    if (psize < bytes)
        return;
    const MPI_Count pos0 = 24; /* packing starts at a position that is not 0 */
    MPI_Count outsize = pos0 + psize;
    unsigned char *out = malloc((size_t)outsize + GUARD);
    memset(out, 0xC3, (size_t)outsize + GUARD);
    uint32_t sd = seed_of(tid++, rank);
    buf_t in = buf_new(&k->ref, ref_ext(&k->ref), count);
    memset(in.alloc, NOISE, in.len);
    put_stream(in.base, &k->ref, ref_ext(&k->ref), 0, count, sd, INT64_MAX);
    buf_t before = buf_like(&in, 0);
    memcpy(before.alloc, in.alloc, in.len);

    /* too small: MPI_ERR_TRUNCATE, the position stays */
    if (bytes > 0) {
        int ipos = (int)pos0;
        MPI_Count cpos = pos0;
        int rc = c ? MPI_Pack_c(in.base, count, k->t, out, outsize - psize + bytes - 1, &cpos, MPI_COMM_WORLD)
                   : MPI_Pack(in.base, (int)count, k->t, out, (int)(outsize - psize + bytes - 1), &ipos, MPI_COMM_WORLD);
        int cls = rc;
        if (rc)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "%s: packing into outsize one byte too small gave class %d, expected MPI_ERR_TRUNCATE (%d)",
              what, cls, MPI_ERR_TRUNCATE);
        CHECK(ipos == (int)pos0 && cpos == pos0, "%s: the failed MPI_Pack moved the position to %lld", what,
              (long long)(c ? cpos : ipos));
    }

    MPI_Count pos = pos0;
    int ipos = (int)pos0;
    int rc = c ? MPI_Pack_c(in.base, count, k->t, out, outsize, &pos, MPI_COMM_WORLD)
               : MPI_Pack(in.base, (int)count, k->t, out, (int)outsize, &ipos, MPI_COMM_WORLD);
    if (!c)
        pos = ipos;
    ok(rc, "MPI_Pack", c);
    CHECK(pos - pos0 >= bytes && pos - pos0 <= psize, "%s: MPI_Pack advanced the position by %lld (data %lld, Pack_size %lld)",
          what, (long long)(pos - pos0), (long long)bytes, (long long)psize);
    for (MPI_Count i = 0; i < (MPI_Count)outsize + GUARD; i++)
        if ((i < pos0 || i >= pos) && out[i] != 0xC3) {
            CHECK(0, "%s: MPI_Pack wrote byte %lld of outbuf, outside [%lld, %lld)", what, (long long)i, (long long)pos0,
                  (long long)pos);
            break;
        }
    CHECK(memcmp(before.alloc, in.alloc, in.len) == 0, "%s: MPI_Pack changed its input buffer", what);

    /* unpack into another buffer: the same data in the same places, nothing else touched */
    buf_t rb = buf_like(&in, POISON);
    MPI_Count upos = pos0;
    int iupos = (int)pos0;
    rc = c ? MPI_Unpack_c(out, pos, &upos, rb.base, count, k->t, MPI_COMM_WORLD)
           : MPI_Unpack(out, (int)pos, &iupos, rb.base, (int)count, k->t, MPI_COMM_WORLD);
    if (!c)
        upos = iupos;
    ok(rc, "MPI_Unpack", c);
    CHECK(upos == pos, "%s: MPI_Unpack ended at position %lld, MPI_Pack at %lld", what, (long long)upos, (long long)pos);
    buf_t img = buf_like(&in, POISON);
    put_stream(img.base, &k->ref, ref_ext(&k->ref), 0, count, sd, INT64_MAX);
    compare(&rb, &img, &k->ref, ref_ext(&k->ref), count, what);

    /* insize too small for the unpack */
    if (bytes > 0) {
        MPI_Count p2 = pos0;
        int ip2 = (int)pos0;
        rc = c ? MPI_Unpack_c(out, pos - 1, &p2, rb.base, count, k->t, MPI_COMM_WORLD)
               : MPI_Unpack(out, (int)pos - 1, &ip2, rb.base, (int)count, k->t, MPI_COMM_WORLD);
        int cls = rc;
        if (rc)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_ARG,
              "%s: unpacking from insize one byte too small gave class %d, expected MPI_ERR_TRUNCATE", what, cls);
    }

    /* the packed data travels as MPI_PACKED and arrives typed, and the reverse */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    uint32_t lsd = seed_of(tid - 1, left);
    MPI_Status st;
    char w2[500];
    memset(rb.alloc, POISON, rb.len);
    ok(MPI_Sendrecv(out + pos0, (int)(pos - pos0), MPI_PACKED, right, 7, rb.base, (int)count, k->t, left, 7,
                    MPI_COMM_WORLD, &st),
       "MPI_Sendrecv (MPI_PACKED to typed)", 0);
    memset(img.alloc, POISON, img.len);
    put_stream(img.base, &k->ref, ref_ext(&k->ref), 0, count, lsd, INT64_MAX);
    snprintf(w2, sizeof w2, "%s, packed data sent as MPI_PACKED, received typed", what);
    compare(&rb, &img, &k->ref, ref_ext(&k->ref), count, w2);
    unsigned char *pk = malloc((size_t)psize + 1);
    ok(MPI_Sendrecv(in.base, (int)count, k->t, right, 8, pk, (int)psize, MPI_PACKED, left, 8, MPI_COMM_WORLD, &st),
       "MPI_Sendrecv (typed to MPI_PACKED)", 0);
    int got = -1;
    MPI_Get_count(&st, MPI_PACKED, &got);
    memset(rb.alloc, POISON, rb.len);
    upos = 0;
    rc = MPI_Unpack_c(pk, got, &upos, rb.base, count, k->t, MPI_COMM_WORLD);
    ok(rc, "MPI_Unpack_c of a message received as MPI_PACKED", 0);
    CHECK(upos == got, "%s: unpacking %d bytes received as MPI_PACKED ended at %lld", what, got, (long long)upos);
    snprintf(w2, sizeof w2, "%s, sent typed, received as MPI_PACKED and unpacked", what);
    compare(&rb, &img, &k->ref, ref_ext(&k->ref), count, w2);
    free(pk);
    free(out);
    buf_free(&in), buf_free(&before), buf_free(&rb), buf_free(&img);
}

/* Three packs in a row into one buffer (positions accumulate), then three unpacks. */
static void pack_sequence(const tcase *a, const tcase *b)
{
    char what[400];
    snprintf(what, sizeof what, "rank %d, packing 2 of %s, 3 MPI_INT, 1 of %s in a row", rank, a->name, b->name);
    int pa, pi, pb;
    MPI_Count pbc;
    MPI_Pack_size(2, a->t, MPI_COMM_WORLD, &pa);
    MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &pi);
    MPI_Pack_size_c(1, b->t, MPI_COMM_WORLD, &pbc);
    pb = (int)pbc;
    int total = pa + pi + pb;
    unsigned char *out = malloc((size_t)total);
    uint32_t sa = seed_of(tid, rank), sb_ = seed_of(tid + 1, rank);
    tid += 2;
    buf_t ina = buf_new(&a->ref, ref_ext(&a->ref), 2), inb = buf_new(&b->ref, ref_ext(&b->ref), 1);
    memset(ina.alloc, NOISE, ina.len), memset(inb.alloc, NOISE, inb.len);
    put_stream(ina.base, &a->ref, ref_ext(&a->ref), 0, 2, sa, INT64_MAX);
    put_stream(inb.base, &b->ref, ref_ext(&b->ref), 0, 1, sb_, INT64_MAX);
    int ints[3] = {rank, -17, 123456789};
    int pos = 0;
    ok(MPI_Pack(ina.base, 2, a->t, out, total, &pos, MPI_COMM_WORLD), "MPI_Pack (1 of 3)", 0);
    int p1 = pos;
    ok(MPI_Pack(ints, 3, MPI_INT, out, total, &pos, MPI_COMM_WORLD), "MPI_Pack (2 of 3)", 0);
    int p2 = pos;
    MPI_Count cpos = pos;
    ok(MPI_Pack_c(inb.base, 1, b->t, out, total, &cpos, MPI_COMM_WORLD), "MPI_Pack_c (3 of 3)", 0);
    CHECK(p1 <= pa && p2 - p1 <= pi && cpos - p2 <= pb && cpos <= total,
          "%s: positions %d, %d, %lld against Pack_size %d, %d, %d", what, p1, p2, (long long)cpos, pa, pi, pb);
    /* the third pack with outsize too small (the buffer is full) */
    MPI_Count full = cpos;
    int rc = MPI_Pack_c(ints, 1, MPI_INT, out, cpos, &full, MPI_COMM_WORLD), cls = rc;
    if (rc)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE && full == cpos, "%s: packing into a full buffer: class %d (expected MPI_ERR_TRUNCATE), position %lld",
          what, cls, (long long)full);
    buf_t ra = buf_like(&ina, POISON), rb = buf_like(&inb, POISON);
    int rints[4] = {0, 0, 0, 0x5a5a5a5a};
    int upos = 0;
    ok(MPI_Unpack(out, (int)cpos, &upos, ra.base, 2, a->t, MPI_COMM_WORLD), "MPI_Unpack (1 of 3)", 0);
    CHECK(upos == p1, "%s: first unpack ended at %d, the pack at %d", what, upos, p1);
    ok(MPI_Unpack(out, (int)cpos, &upos, rints, 3, MPI_INT, MPI_COMM_WORLD), "MPI_Unpack (2 of 3)", 0);
    CHECK(upos == p2, "%s: second unpack ended at %d, the pack at %d", what, upos, p2);
    MPI_Count cu = upos;
    ok(MPI_Unpack_c(out, cpos, &cu, rb.base, 1, b->t, MPI_COMM_WORLD), "MPI_Unpack_c (3 of 3)", 0);
    CHECK(cu == cpos, "%s: third unpack ended at %lld, the pack at %lld", what, (long long)cu, (long long)cpos);
    for (int i = 0; i < 3; i++)
        CHECK(rints[i] == ints[i], "%s: int %d: expected %d, got %d", what, i, ints[i], rints[i]);
    CHECK(rints[3] == 0x5a5a5a5a, "%s: the unpack of 3 ints wrote a fourth", what);
    buf_t img = buf_like(&ina, POISON);
    put_stream(img.base, &a->ref, ref_ext(&a->ref), 0, 2, sa, INT64_MAX);
    compare(&ra, &img, &a->ref, ref_ext(&a->ref), 2, what);
    buf_free(&img);
    img = buf_like(&inb, POISON);
    put_stream(img.base, &b->ref, ref_ext(&b->ref), 0, 1, sb_, INT64_MAX);
    compare(&rb, &img, &b->ref, ref_ext(&b->ref), 1, what);
    buf_free(&img), buf_free(&ina), buf_free(&inb), buf_free(&ra), buf_free(&rb);
    free(out);
}

/* ----------------------------------------------------------------- counts and elements */

static void expect_counts(const MPI_Status *st, MPI_Datatype t, int count, int elems, const char *what)
{
    int c = -2, e = -2;
    MPI_Count cc = -2, ce = -2, xe = -2;
    MPI_Get_count(st, t, &c);
    MPI_Get_count_c(st, t, &cc);
    MPI_Get_elements(st, t, &e);
    MPI_Get_elements_c(st, t, &ce);
    MPI_Get_elements_x(st, t, &xe);
    CHECK(c == count && cc == count, "rank %d, %s: MPI_Get_count %d (_c: %lld), expected %d", rank, what, c,
          (long long)cc, count);
    CHECK(e == elems && ce == elems && xe == elems, "rank %d, %s: MPI_Get_elements %d (_c: %lld, _x: %lld), expected %d",
          rank, what, e, (long long)ce, (long long)xe, elems);
}

static void elements(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype P, Q, V;
    const ref_t *po[] = {&R_INT, &R_DOUBLE};
    ref_t rp = ref_struct(2, A(1, 1), A(0, 8), po, true);
    P = T_struct(0, 2, A(1, 1), A(0, 8), (MPI_Datatype[]){MPI_INT, MPI_DOUBLE});
    MPI_Type_commit(&P);
    /* Q: the signature int, double, int */
    Q = T_struct(0, 2, A(1, 1), A(0, 16), (MPI_Datatype[]){P, MPI_INT});
    MPI_Type_commit(&Q);
    V = T_vector(0, 3, 2, 4, MPI_INT);
    MPI_Type_commit(&V);
    ref_t rv = ref_vector(3, 2, 4, &R_INT);
    MPI_Status st;
    uint32_t my = seed_of(tid, rank), their = seed_of(tid, left);
    tid++;

    /* one Q (16 bytes) into 3 P: count undefined, 3 elements; the first P and the next int arrive */
    {
        buf_t sb = buf_new(&rp, 16, 2), rb = buf_new(&rp, 16, 3);
        memset(sb.alloc, NOISE, sb.len);
        put_stream(sb.base, &rp, 16, 0, 2, my, 16);
        memset(rb.alloc, POISON, rb.len);
        ok(MPI_Sendrecv(sb.base, 1, Q, right, 1, rb.base, 3, P, left, 1, MPI_COMM_WORLD, &st), "MPI_Sendrecv", 0);
        expect_counts(&st, P, MPI_UNDEFINED, 3, "struct {int, int, double} received as 3 struct {int @0, double @8}");
        buf_t img = buf_like(&rb, POISON);
        put_stream(img.base, &rp, 16, 0, 3, their, 16);
        char w[160];
        snprintf(w, sizeof w, "rank %d, struct {int, double, int} received as 3 struct {int @0, double @8}", rank);
        compare(&rb, &img, &rp, 16, 3, w);
        /* two whole P */
        memset(rb.alloc, POISON, rb.len);
        ok(MPI_Sendrecv(sb.base, 2, P, right, 2, rb.base, 3, P, left, 2, MPI_COMM_WORLD, &st), "MPI_Sendrecv", 0);
        expect_counts(&st, P, 2, 4, "2 struct {int @0, double @8} received as 3");
        /* nothing */
        ok(MPI_Sendrecv(sb.base, 0, P, right, 3, rb.base, 3, P, left, 3, MPI_COMM_WORLD, &st), "MPI_Sendrecv", 0);
        expect_counts(&st, P, 0, 0, "an empty message received as struct {int @0, double @8}");
        buf_free(&img), buf_free(&sb), buf_free(&rb);
    }
    /* 7 ints into 2 vector(3, 2, 4, MPI_INT): count undefined, 7 elements, in their places */
    {
        int ints[7];
        for (int i = 0; i < 7; i++)
            ints[i] = rank * 100 + i;
        buf_t rb = buf_new(&rv, 40, 2);
        memset(rb.alloc, POISON, rb.len);
        ok(MPI_Sendrecv(ints, 7, MPI_INT, right, 4, rb.base, 2, V, left, 4, MPI_COMM_WORLD, &st), "MPI_Sendrecv", 0);
        expect_counts(&st, V, MPI_UNDEFINED, 7, "7 MPI_INT received as 2 vector(3, 2, 4, MPI_INT)");
        buf_t img = buf_like(&rb, POISON);
        int offs[7] = {0, 4, 16, 20, 32, 36, 40}; /* ints 0-5 in element 0, int 6 at element 1's start */
        for (int i = 0; i < 7; i++) {
            int v = left * 100 + i;
            memcpy(img.base + offs[i], &v, sizeof v);
        }
        char w[160];
        snprintf(w, sizeof w, "rank %d, 7 MPI_INT received as 2 vector(3, 2, 4, MPI_INT)", rank);
        compare(&rb, &img, &rv, 40, 2, w);
        buf_free(&img), buf_free(&rb);
    }
    /* a probe's status counts the same way */
    {
        double d[4] = {1.5, 2.5, 3.5, 4.5};
        MPI_Request rq;
        ok(MPI_Isend(d, 3, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &rq), "MPI_Isend", 0);
        MPI_Datatype W = T_vector(0, 2, 2, 3, MPI_DOUBLE); /* 4 doubles */
        MPI_Type_commit(&W);
        ok(MPI_Probe(left, 5, MPI_COMM_WORLD, &st), "MPI_Probe", 0);
        expect_counts(&st, W, MPI_UNDEFINED, 3, "MPI_Probe of 3 MPI_DOUBLE, counted in vector(2, 2, 3, MPI_DOUBLE)");
        double r[6] = {0, 0, 0, 0, 0, 0};
        ok(MPI_Recv(r, 1, W, left, 5, MPI_COMM_WORLD, &st), "MPI_Recv", 0);
        expect_counts(&st, W, MPI_UNDEFINED, 3, "3 MPI_DOUBLE received as vector(2, 2, 3, MPI_DOUBLE)");
        CHECK(r[0] == 1.5 && r[1] == 2.5 && r[2] == 0 && r[3] == 3.5 && r[4] == 0 && r[5] == 0,
              "rank %d: 3 doubles into vector(2, 2, 3, MPI_DOUBLE): got %g %g %g %g %g %g, expected 1.5 2.5 0 3.5 0 0",
              rank, r[0], r[1], r[2], r[3], r[4], r[5]);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        tfree(&W);
    }
    /* MPI_Status_set_elements with a derived type: MPI_Get_elements gives the count back */
    {
        MPI_Status s2;
        memset(&s2, 0, sizeof s2);
        ok(MPI_Status_set_elements(&s2, P, 3), "MPI_Status_set_elements", 0);
        expect_counts(&s2, P, MPI_UNDEFINED, 3, "MPI_Status_set_elements(3) with struct {int @0, double @8}");
        ok(MPI_Status_set_elements(&s2, V, 7), "MPI_Status_set_elements", 0);
        expect_counts(&s2, V, MPI_UNDEFINED, 7, "MPI_Status_set_elements(7) with vector(3, 2, 4, MPI_INT)");
        ok(MPI_Status_set_elements(&s2, V, 12), "MPI_Status_set_elements", 0);
        expect_counts(&s2, V, 2, 12, "MPI_Status_set_elements(12) with vector(3, 2, 4, MPI_INT)");
    }
    tfree(&P), tfree(&Q), tfree(&V);
    ref_free(&rp), ref_free(&rv);
}

/* Partial messages: m basic elements (fewer than 2 elements of the type hold) received as 2 of
 * a case's type: MPI_Get_elements says m, MPI_Get_count says MPI_UNDEFINED unless m fills
 * whole elements, and the m elements are in the type's first m places. */
static void partial(const tcase *k)
{
    if (k->flat == MPI_DATATYPE_NULL || k->props_only || k->size == 0)
        return;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int64_t per = k->ref.nel, total = 2 * per, bsize = ref_of_basic(k->flat)->size;
    int64_t ms[3] = {total - 1, per, per / 2 + 1};
    for (int i = 0; i < 3; i++, tid++) {
        int64_t m = ms[i];
        uint32_t my = seed_of(tid, rank), their = seed_of(tid, left);
        const ref_t *fr = ref_of_basic(k->flat);
        buf_t sb = buf_new(fr, bsize, m), rb = buf_new(&k->ref, ref_ext(&k->ref), 2);
        put_stream(sb.base, fr, bsize, 0, m, my, INT64_MAX);
        memset(rb.alloc, POISON, rb.len);
        MPI_Status st;
        ok(MPI_Sendrecv(sb.base, (int)m, k->flat, right, 21, rb.base, 2, k->t, left, 21, MPI_COMM_WORLD, &st),
           "MPI_Sendrecv", 0);
        char what[300];
        snprintf(what, sizeof what, "case %s, %lld basic elements received as 2 of the type", k->name, (long long)m);
        expect_counts(&st, k->t, m % per ? MPI_UNDEFINED : (int)(m / per), (int)m, what);
        buf_t img = buf_like(&rb, POISON);
        put_stream(img.base, &k->ref, ref_ext(&k->ref), 0, 2, their, m * bsize);
        char w2[340];
        snprintf(w2, sizeof w2, "rank %d, %s", rank, what);
        compare(&rb, &img, &k->ref, ref_ext(&k->ref), 2, w2);
        buf_free(&img), buf_free(&sb), buf_free(&rb);
    }
}

/* ----------------------------------------------------------------- the rest */

/* MPI_BOTTOM and a struct of absolute addresses; MPI_Get_address. */
static void bottom(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a[3] = {rank, rank + 1, rank + 2}, ra[4] = {-1, -1, -1, -1};
    double d[2] = {rank * 0.5, rank * 0.25}, rd[3] = {-1, -1, -1};
    short s = (short)(rank + 7), rs[2] = {-1, -1};
    MPI_Aint ad[3], rad[3];
    MPI_Get_address(a, &ad[0]);
    MPI_Get_address(d, &ad[1]);
    MPI_Get_address(&s, &ad[2]);
    MPI_Get_address(&ra[1], &rad[0]); /* ra[0] and ra[3] must stay */
    MPI_Get_address(&rd[1], &rad[1]);
    MPI_Get_address(&rs[1], &rad[2]);
    CHECK(MPI_Aint_diff(ad[1], ad[0]) == (char *)d - (char *)a, "MPI_Get_address: addresses differ by %ld, pointers by %ld",
          (long)MPI_Aint_diff(ad[1], ad[0]), (long)((char *)d - (char *)a));
    MPI_Aint mid;
    MPI_Get_address(&a[2], &mid);
    CHECK(mid - ad[0] == 2 * (MPI_Aint)sizeof(int), "MPI_Get_address(&a[2]) - MPI_Get_address(a) = %ld", (long)(mid - ad[0]));
    MPI_Datatype ts, tr;
    int bl[3] = {3, 2, 1};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
    ok(MPI_Type_create_struct(3, bl, ad, ty, &ts), "MPI_Type_create_struct (absolute)", 0);
    ok(MPI_Type_create_struct(3, bl, rad, ty, &tr), "MPI_Type_create_struct (absolute)", 0);
    MPI_Type_commit(&ts);
    MPI_Type_commit(&tr);
    MPI_Aint tlb = -1, text = -1, lo = ad[0], hi = ad[0] + 3 * (MPI_Aint)sizeof(int);
    for (int i = 1; i < 3; i++) {
        lo = ad[i] < lo ? ad[i] : lo;
        MPI_Aint end = ad[i] + (i == 1 ? 2 * (MPI_Aint)sizeof(double) : (MPI_Aint)sizeof(short));
        hi = end > hi ? end : hi;
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    ok(MPI_Type_get_true_extent(ts, &tlb, &text), "MPI_Type_get_true_extent of a struct of absolute addresses", 0);
    CHECK(tlb == lo && text == hi - lo,
          "rank %d: struct of absolute addresses: true lb %ld, true extent %ld, expected the lowest address %ld and %ld",
          rank, (long)tlb, (long)text, (long)lo, (long)(hi - lo));
    MPI_Count ctlb = -1, ctext = -1;
    ok(MPI_Type_get_true_extent_c(ts, &ctlb, &ctext), "MPI_Type_get_true_extent_c of a struct of absolute addresses", 0);
    CHECK(ctlb == lo && ctext == hi - lo, "rank %d: struct of absolute addresses: true lb %lld (_c), expected %ld", rank,
          (long long)ctlb, (long)lo);
    /* bounds beyond 2^31 in MPI_Aint: a resized type */
    MPI_Datatype huge;
    ok(MPI_Type_create_resized(MPI_INT, -((MPI_Aint)1 << 32), (MPI_Aint)1 << 33, &huge), "MPI_Type_create_resized", 0);
    MPI_Aint hlb = -1, hext = -1;
    ok(MPI_Type_get_extent(huge, &hlb, &hext), "MPI_Type_get_extent of resized(MPI_INT, -2^32, 2^33)", 0);
    CHECK(hlb == -((MPI_Aint)1 << 32) && hext == (MPI_Aint)1 << 33,
          "resized(MPI_INT, -2^32, 2^33): MPI_Type_get_extent gives lb %ld extent %ld", (long)hlb, (long)hext);
    tfree(&huge);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Status st;
    ok(MPI_Sendrecv(MPI_BOTTOM, 1, ts, right, 9, MPI_BOTTOM, 1, tr, left, 9, MPI_COMM_WORLD, &st),
       "MPI_Sendrecv from and to MPI_BOTTOM", 0);
    CHECK(ra[0] == -1 && ra[1] == left && ra[2] == left + 1 && ra[3] == left + 2 && rd[0] == -1 && rd[1] == left * 0.5 &&
              rd[2] == left * 0.25 && rs[0] == -1 && rs[1] == left + 7,
          "rank %d: MPI_BOTTOM with absolute addresses: got ints %d %d %d %d, doubles %g %g %g, shorts %d %d", rank,
          ra[0], ra[1], ra[2], ra[3], rd[0], rd[1], rd[2], rs[0], rs[1]);
    /* pack from MPI_BOTTOM, unpack to MPI_BOTTOM */
    char pk[256];
    int pos = 0;
    ok(MPI_Pack(MPI_BOTTOM, 1, ts, pk, sizeof pk, &pos, MPI_COMM_WORLD), "MPI_Pack from MPI_BOTTOM", 0);
    memset(ra, 0xff, sizeof ra), memset(rd, 0, sizeof rd), memset(rs, 0, sizeof rs);
    int upos = 0;
    ok(MPI_Unpack(pk, pos, &upos, MPI_BOTTOM, 1, tr, MPI_COMM_WORLD), "MPI_Unpack to MPI_BOTTOM", 0);
    CHECK(ra[1] == rank && ra[3] == rank + 2 && rd[2] == rank * 0.25 && rs[1] == rank + 7 && upos == pos,
          "rank %d: MPI_Pack/MPI_Unpack with MPI_BOTTOM: got %d %d %g %d", rank, ra[1], ra[3], rd[2], rs[1]);
    tfree(&ts), tfree(&tr);
}

/* Counts beyond an int with the _c constructors: what the type says about itself (no data). */
static void large_counts(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const MPI_Count n = (MPI_Count)3 << 30; /* 3 GiB */
    MPI_Datatype t = MPI_DATATYPE_NULL, v = MPI_DATATYPE_NULL;
    ok(MPI_Type_contiguous_c(n, MPI_CHAR, &t), "MPI_Type_contiguous_c(3 GiB, MPI_CHAR)", 0);
    MPI_Count sz = -1, lb = -1, ext = -1;
    int isz = -1;
    ok(MPI_Type_size_c(t, &sz), "MPI_Type_size_c", 0);
    ok(MPI_Type_size(t, &isz), "MPI_Type_size", 0);
    ok(MPI_Type_get_extent_c(t, &lb, &ext), "MPI_Type_get_extent_c", 0);
    CHECK(sz == n && isz == MPI_UNDEFINED && lb == 0 && ext == n,
          "contiguous_c(3 GiB, MPI_CHAR): size_c %lld, size %d (expected MPI_UNDEFINED), lb %lld, extent %lld", (long long)sz,
          isz, (long long)lb, (long long)ext);
    MPI_Aint alb = -1, aext = -1;
    ok(MPI_Type_get_extent(t, &alb, &aext), "MPI_Type_get_extent of contiguous_c(3 GiB, MPI_CHAR) (MPI_Aint outputs)", 0);
    CHECK(alb == 0 && aext == (MPI_Aint)n, "contiguous_c(3 GiB, MPI_CHAR): MPI_Type_get_extent gives lb %ld extent %ld",
          (long)alb, (long)aext);
    /* a vector whose stride is beyond an int: 2 blocks of 1 GiB, 4 GiB apart */
    ok(MPI_Type_vector_c(2, (MPI_Count)1 << 30, (MPI_Count)1 << 32, MPI_CHAR, &v), "MPI_Type_vector_c", 0);
    ok(MPI_Type_size_c(v, &sz), "MPI_Type_size_c", 0);
    ok(MPI_Type_get_extent_c(v, &lb, &ext), "MPI_Type_get_extent_c", 0);
    MPI_Count tlb = -1, text = -1;
    ok(MPI_Type_get_true_extent_c(v, &tlb, &text), "MPI_Type_get_true_extent_c", 0);
    CHECK(sz == (MPI_Count)2 << 30 && lb == 0 && ext == ((MPI_Count)1 << 32) + ((MPI_Count)1 << 30) && tlb == 0 &&
              text == ext,
          "vector_c(2, 2^30, 2^32, MPI_CHAR): size %lld lb %lld extent %lld true lb %lld true extent %lld", (long long)sz,
          (long long)lb, (long long)ext, (long long)tlb, (long long)text);
    tfree(&t), tfree(&v);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

static void names(void)
{
    MPI_Datatype t = T_vector(0, 2, 1, 2, MPI_INT), d;
    char n[MPI_MAX_OBJECT_NAME];
    int len = -1;
    ok(MPI_Type_get_name(t, n, &len), "MPI_Type_get_name", 0);
    CHECK(len == 0 && n[0] == 0, "an unnamed derived type's name is \"%s\" (length %d), expected empty", n, len);
    ok(MPI_Type_set_name(t, "my column type"), "MPI_Type_set_name", 0);
    ok(MPI_Type_get_name(t, n, &len), "MPI_Type_get_name", 0);
    CHECK(len == 14 && strcmp(n, "my column type") == 0, "name \"%s\" (length %d), expected \"my column type\"", n, len);
    ok(MPI_Type_set_name(t, "renamed"), "MPI_Type_set_name", 0);
    ok(MPI_Type_get_name(t, n, &len), "MPI_Type_get_name", 0);
    CHECK(len == 7 && strcmp(n, "renamed") == 0, "name \"%s\" (length %d), expected \"renamed\"", n, len);
    ok(MPI_Type_get_name(MPI_INT, n, &len), "MPI_Type_get_name", 0);
    CHECK(strcmp(n, "MPI_INT") == 0 && len == 7, "MPI_INT's name is \"%s\"", n);
    /* a duplicate of a committed type is committed: it can be sent at once */
    MPI_Type_commit(&t);
    ok(MPI_Type_dup(t, &d), "MPI_Type_dup", 0);
    int x[4] = {rank, 0, rank + 1, 0}, y[4] = {-1, -1, -1, -1};
    MPI_Status st;
    int rc = MPI_Sendrecv(x, 1, d, rank, 3, y, 1, d, rank, 3, MPI_COMM_WORLD, &st);
    CHECK(rc == MPI_SUCCESS && y[0] == rank && y[1] == -1 && y[2] == rank + 1 && y[3] == -1,
          "rank %d: a duplicate of a committed vector type: rc %d, got %d %d %d %d", rank, rc, y[0], y[1], y[2], y[3]);
    tfree(&d), tfree(&t);
}

/* Wrong arguments: errors come back (MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF). */
static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Datatype t = MPI_DATATYPE_NULL, u = MPI_DATATYPE_NULL;
    int buf[64] = {0};
    int rc;
    /* an uncommitted type in communication and packing */
    ok(MPI_Type_vector(2, 1, 2, MPI_INT, &u), "MPI_Type_vector", 0);
    rc = CHECK_CLASS(MPI_Send(buf, 1, u, rank, 11, MPI_COMM_WORLD), MPI_ERR_TYPE);
    if (rc == MPI_SUCCESS)
        MPI_Recv(buf, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request rq = MPI_REQUEST_NULL;
    rc = CHECK_CLASS(MPI_Irecv(buf, 1, u, rank, 12, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    if (rc == MPI_SUCCESS) {
        MPI_Cancel(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    CHECK_CLASS(MPI_Bcast(buf, 1, u, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    int pos = 0;
    char pk[64];
    CHECK_CLASS(MPI_Pack(buf, 1, u, pk, sizeof pk, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    tfree(&u);
    /* negative counts and blocklengths */
    CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_contiguous_c(-5, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_vector(-1, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    {
        int bl[2] = {1, -2}, d[2] = {0, 4};
        rc = MPI_Type_indexed(2, bl, d, MPI_INT, &t);
        int cls = rc;
        if (rc)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_COUNT || cls == MPI_ERR_ARG,
              "MPI_Type_indexed with a negative blocklength: class %d, expected MPI_ERR_COUNT (%d) or MPI_ERR_ARG (%d)",
              cls, MPI_ERR_COUNT, MPI_ERR_ARG);
        if (verbose && rank == 0)
            printf("MPI_Type_indexed with blocklength -2: class %d\n", cls);
        MPI_Aint ad[2] = {0, 8};
        rc = MPI_Type_create_hindexed(2, bl, ad, MPI_INT, &t);
        cls = rc;
        if (rc)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_COUNT || cls == MPI_ERR_ARG,
              "MPI_Type_create_hindexed with a negative blocklength: class %d, expected MPI_ERR_COUNT or MPI_ERR_ARG", cls);
        CHECK_CLASS(MPI_Type_create_indexed_block(2, -1, d, MPI_INT, &t), MPI_ERR_COUNT);
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        rc = MPI_Type_create_struct(2, bl, ad, ty, &t);
        cls = rc;
        if (rc)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_COUNT || cls == MPI_ERR_ARG,
              "MPI_Type_create_struct with a negative blocklength: class %d, expected MPI_ERR_COUNT or MPI_ERR_ARG", cls);
        ty[1] = MPI_DATATYPE_NULL;
        int bl2[2] = {1, 1};
        rc = CHECK_CLASS(MPI_Type_create_struct(2, bl2, ad, ty, &t), MPI_ERR_TYPE);
        CHECK(rc == MPI_SUCCESS || mt_string_has(rc, "array_of_types[1]"),
              "MPI_Type_create_struct with MPI_DATATYPE_NULL second: the error does not name array_of_types[1]");
    }
    /* subarrays that do not fit */
    {
        int sz[2] = {4, 5}, sub[2] = {2, 6}, st[2] = {0, 0};
        CHECK_CLASS(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        int sub2[2] = {2, 3}, st2[2] = {3, 0};
        CHECK_CLASS(MPI_Type_create_subarray(2, sz, sub2, st2, MPI_ORDER_FORTRAN, MPI_INT, &t), MPI_ERR_ARG);
        int st3[2] = {0, -1};
        CHECK_CLASS(MPI_Type_create_subarray(2, sz, sub2, st3, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_subarray(2, sz, sub2, st, 12345, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_subarray(0, sz, sub2, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        int sub0[2] = {0, 3};
        rc = MPI_Type_create_subarray(2, sz, sub0, st, MPI_ORDER_C, MPI_INT, &t);
        CHECK(rc != MPI_SUCCESS, "MPI_Type_create_subarray with a subsize of 0 succeeded (the standard requires >= 1)");
        if (rc == MPI_SUCCESS)
            MPI_Type_free(&t);
    }
    /* freeing a predefined type; null handles */
    MPI_Datatype pre = MPI_INT;
    CHECK_CLASS(MPI_Type_free(&pre), MPI_ERR_TYPE);
    CHECK(pre == MPI_INT, "a refused MPI_Type_free(MPI_INT) changed the handle");
    MPI_Datatype nul = MPI_DATATYPE_NULL;
    CHECK_CLASS(MPI_Type_commit(&nul), MPI_ERR_TYPE);
    MPI_Aint lb, ext;
    CHECK_CLASS(MPI_Type_get_extent(MPI_DATATYPE_NULL, &lb, &ext), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    /* a typed receive too small for the message */
    {
        MPI_Datatype v;
        MPI_Type_vector(2, 1, 3, MPI_INT, &v);
        MPI_Type_commit(&v);
        int src[5] = {1, 2, 3, 4, 5}, dst[8];
        MPI_Status st;
        rc = MPI_Sendrecv(src, 5, MPI_INT, rank, 13, dst, 2, v, rank, 13, MPI_COMM_WORLD, &st);
        int cls = rc;
        if (rc)
            MPI_Error_class(rc, &cls);
        if (cls == MPI_ERR_IN_STATUS)
            MPI_Error_class(st.MPI_ERROR, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "rank %d: 5 ints into 2 vector(2, 1, 3, MPI_INT): class %d, expected MPI_ERR_TRUNCATE",
              rank, cls);
        tfree(&v);
    }
    /* everything still works */
    int x = rank, y = -1;
    CHECK_CLASS(MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 14, &y, 1, MPI_INT, (rank + size - 1) % size, 14,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                MPI_SUCCESS);
    CHECK(y == (rank + size - 1) % size, "after the refused calls: got %d", y);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* ----------------------------------------------------------------- main */

static double t0;
static void phase(const char *name)
{
    if (!verbose)
        return;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%-40s %.3f s\n", name, MPI_Wtime() - t0);
    fflush(stdout);
    t0 = MPI_Wtime();
}

/* Elements for about `bytes` bytes of data of case k. */
static MPI_Count count_for(const tcase *k, int64_t bytes)
{
    return k->size ? (bytes + k->size - 1) / k->size : 3;
}

int main(int argc, char **argv)
{
    /* the library's temporary buffers for big messages too: no mapping and faulting in of
     * megabytes for every operation (glibc; the sanitizers' allocator ignores this) */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    t0 = MPI_Wtime();
    table_init();
    R_INT = ref_basic(4), R_DOUBLE = ref_basic(8), R_SHORT = ref_basic(2), R_CHAR = ref_basic(1);
    {
        const ref_t *o[] = {&R_DOUBLE, &R_INT};
        R_DOUBLE_INT = ref_struct(2, A(1, 1), A(0, 8), o, true);
    }
    build_cases(0);
    build_cases(1);
    tcase big = {.t = T_vector(0, BIGN, 1, 2, MPI_DOUBLE), .ref = ref_vector(BIGN, 1, 2, &R_DOUBLE),
                 .size = (MPI_Count)BIGN * 8, .lb = 0, .extent = (MPI_Aint)(2 * (BIGN - 1) + 1) * 8, .tlb = 0,
                 .textent = (MPI_Aint)(2 * (BIGN - 1) + 1) * 8, .flat = MPI_DOUBLE};
    MPI_Type_commit(&big.t);
    snprintf(big.name, sizeof big.name, "vector(%d, 1, 2, MPI_DOUBLE)", BIGN);
    /* Bsend: room for two of the largest messages */
    int bsize = 2 * (BIGN * 8 + MPI_BSEND_OVERHEAD) + 4096;
    void *battach = malloc((size_t)bsize);
    MPI_Buffer_attach(battach, bsize);
    phase("setup");

    /* what the types say about themselves */
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < ncases; i++)
            props(&cases[c][i]);
    props(&big);
    {
        /* the pair type the case above is built on: {(double, 0), (int, 8)}, extent 16 */
        MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;
        MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
        MPI_Type_get_true_extent(MPI_DOUBLE_INT, &tlb, &text);
        CHECK(lb == 0 && ext == 16 && tlb == 0 && text == 12,
              "MPI_DOUBLE_INT: lb %ld extent %ld true lb %ld true extent %ld, expected 0, 16, 0, 12", (long)lb, (long)ext,
              (long)tlb, (long)text);
    }
    phase("properties");

    /* packing (MPI_ERR_TRUNCATE comes back: MPI_ERRORS_RETURN on MPI_COMM_WORLD) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < ncases; i++)
            pack_case(&cases[c][i], cases[c][i].props_only ? 1 : 3, c);
    pack_case(&cases[0][2], 4000, 0);
    pack_case(&big, 1, 1);
    pack_sequence(&cases[0][3], &cases[1][ncases - 2]);
    pack_sequence(&cases[1][ncases - 4], &cases[0][8]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    phase("packing");

    /* point-to-point, small (eager) */
    for (int i = 0; i < ncases; i++)
        for (int m = 0; m < NMODES; m++) {
            const tcase *k = &cases[(i + m) % 2][i];
            MPI_Count n = k->props_only ? 1 : k->size ? i64max(1, 600 / k->size) : 3;
            p2p(k, n, m, (i + m) % 3, "small");
        }
    phase("point-to-point small");
    /* Medium (~100 KiB: long eager, rendezvous for MPI_Ssend) and large (several MiB:
     * rendezvous): every mode up to 4 processes; with more (the same paths, more processes
     * sharing the cores) every other one, each mode still taken by half the cases. */
    bool all_modes = size <= 4;
    for (int i = 0; i < ncases; i++) {
        const tcase *k = &cases[i % 2][i];
        if (k->props_only || k->size == 0)
            continue;
        for (int m = 0; m < NMODES; m++)
            if (all_modes || (i + m) % 2 == 0)
                p2p(k, count_for(k, 100 * 1024), m, (i + m + 1) % 3, "medium");
    }
    phase("point-to-point medium");
    for (int m = 0; m < NMODES; m++)
        if (all_modes || m % 2 == 0)
            p2p(&big, 1, m, m % 3, "large");
    phase("point-to-point large, the 1M vector");
    {
        const int large_cases[] = {3, ncases - 3, ncases - 2, ncases - 1}; /* negative stride, nested, column */
        for (int j = 0; j < 4; j++)
            for (int m = 0; m < NMODES; m += 3) {
                if (!all_modes && m != (3 * j) % NMODES)
                    continue;
                const tcase *k = &cases[(j + m) % 2][large_cases[j]];
                p2p(k, count_for(k, 2 << 20), m, (j + m) % 3, "large");
            }
    }
    phase("point-to-point large");

    /* collectives */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    for (int i = 0; i < ncases; i++)
        for (int w = 0; w < NCOLL; w++) {
            const tcase *k = &cases[(i + w) % 2][i];
            MPI_Count n = k->props_only ? 1 : k->size ? i64max(1, 300 / k->size) : 2;
            if (k->props_only && w != C_BCAST)
                continue; /* one element: where the extent does not matter */
            coll(w, k, n, (i + w) % 4, (i + w) % 3 == 2 ? rev : MPI_COMM_WORLD,
                 (i + w) % 3 == 2 ? "a split with ranks reversed" : "MPI_COMM_WORLD", "small");
        }
    phase("collectives small");
    {
        const int med[] = {2, 3, 8, 12, ncases - 6, ncases - 5, ncases - 3, ncases - 2, ncases - 1};
        for (int j = 0; j < (int)(sizeof med / sizeof *med); j++)
            for (int w = 0; w < NCOLL; w++) {
                const tcase *k = &cases[(j + w) % 2][med[j]];
                int64_t bytes = w == C_BCAST ? 100 * 1024 : (100 * 1024) / size + 1024;
                coll(w, k, count_for(k, bytes), (j + w) % 4, w % 2 ? rev : MPI_COMM_WORLD,
                     w % 2 ? "a split with ranks reversed" : "MPI_COMM_WORLD", "medium");
            }
    }
    phase("collectives medium");
    coll(C_BCAST, &big, 1, 1, MPI_COMM_WORLD, "MPI_COMM_WORLD", "large");
    coll(C_BCAST, &big, 1, 2, rev, "a split with ranks reversed", "large");
    {
        const tcase *k = &cases[1][3];
        MPI_Count n = count_for(k, 300 * 1024);
        coll(C_GATHER, k, n, 1, MPI_COMM_WORLD, "MPI_COMM_WORLD", "large (300 KiB a process)");
        coll(C_SCATTER, k, n, 2, rev, "a split with ranks reversed", "large (300 KiB a process)");
        coll(C_GATHERV, &cases[0][ncases - 2], count_for(&cases[0][ncases - 2], 300 * 1024), 3, MPI_COMM_WORLD,
             "MPI_COMM_WORLD", "large (300 KiB a process)");
        if (size <= 4) {
            coll(C_ALLGATHER, k, n, 3, MPI_COMM_WORLD, "MPI_COMM_WORLD", "large (300 KiB a process)");
            coll(C_ALLTOALL, &cases[0][ncases - 1], count_for(&cases[0][ncases - 1], 300 * 1024), 1, rev,
                 "a split with ranks reversed", "large (300 KiB a process)");
        }
    }
    MPI_Comm_free(&rev);
    phase("collectives large");

    elements();
    for (int i = 0; i < ncases; i++)
        partial(&cases[i % 2][i]);
    bottom();
    large_counts();
    names();
    errors();
    phase("elements, MPI_BOTTOM, names, errors");

    int bs;
    void *bp;
    MPI_Buffer_detach(&bp, &bs);
    free(battach);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < ncases; i++) {
            tfree(&cases[c][i].t);
            ref_free(&cases[c][i].ref);
        }
    tfree(&big.t);
    ref_free(&big.ref);
    pool_clear();
    ref_free(&R_INT), ref_free(&R_DOUBLE), ref_free(&R_SHORT), ref_free(&R_CHAR), ref_free(&R_DOUBLE_INT);
    return mt_finish();
}
