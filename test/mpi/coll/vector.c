/* Collectives whose blocks differ by process, all-to-all, reduce-scatter and prefix
 * reductions: MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoall, MPI_Alltoallv,
 * MPI_Alltoallw, MPI_Reduce_scatter, MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan, each
 * in its three forms — blocking, nonblocking (MPI_I<coll>, completed by MPI_Wait or an MPI_Test
 * loop) and persistent (MPI_<coll>_init, started several times with new data each run) — and
 * their _c (large-count) twins. Every element that arrives is checked, and every byte of a
 * receive buffer outside the blocks (the gaps between displacements, alignment padding, a guard
 * after the end) must be left alone; send buffers must be unchanged. With
 *   - counts that differ by process, zero on some; displacements that are not in rank order
 *     (reversed, rotated, evens then odds) with gaps between the blocks; every root for
 *     gatherv and scatterv; the arrays that matter only at the root passed as NULL elsewhere
 *     every other time;
 *   - MPI_IN_PLACE wherever the standard allows it: gatherv and scatterv at the root,
 *     allgatherv, alltoall(v,w), reduce_scatter(_block), scan, exscan;
 *   - MPI_INT and MPI_DOUBLE; for alltoallw a type per peer (MPI_INT, MPI_DOUBLE, MPI_CHAR)
 *     at byte displacements, each block aligned for its type;
 *   - sizes from a few elements to 100000 in all, so that automatic selection takes both
 *     allgatherv algorithms (direct below 64 KiB in all, ring above) and both allreduce
 *     algorithms under reduce_scatter;
 *   - scan and exscan with MPI_SUM, MPI_MAX and a non-commutative user operation (composition
 *     of affine maps, i.e. 2x2 matrix products, on MPI_2INT) against the serially computed
 *     prefix in rank order (exscan's result at rank 0 is undefined and not checked);
 *     reduce_scatter(_block) with the same operations;
 *   - a communicator that renumbers the processes (halves, ranks reversed);
 *   - many nonblocking calls of every kind outstanding at once on two communicators, with
 *     persistent ones started among them, completed by one MPI_Waitall;
 *   - wrong arguments under MPI_ERRORS_RETURN on a duplicate communicator, in every form: a
 *     negative count in recvcounts (MPI_ERR_COUNT), MPI_IN_PLACE as gatherv's sendbuf at a
 *     process that is not the root (MPI_ERR_BUFFER), alltoall blocks of different byte sizes
 *     (MPI_ERR_TRUNCATE), MPI_DATATYPE_NULL among alltoallw's recvtypes (MPI_ERR_TYPE),
 *     MPI_OP_NULL for scan and exscan (MPI_ERR_OP); the program goes on, and the
 *     communicator still works.
 * A mismatch names the rank, the call and its form, the counts, the block, the element, what
 * was expected and what arrived. */
#include "blockdata.h"

static int rank, size;
static uint64_t calls; /* a different salt for every call, the same at every process */

/* ----------------------------------------------------------------- element data */

/* Kinds of element for the data-movement calls. */
enum { K_INT, K_DOUBLE, K_CHAR, NK };
static MPI_Datatype k_type(int k)
{
    return k == K_INT ? MPI_INT : k == K_DOUBLE ? MPI_DOUBLE : MPI_CHAR;
}
static size_t k_size(int k)
{
    return k == K_INT ? sizeof(int) : k == K_DOUBLE ? sizeof(double) : 1;
}
static const char *const k_name[NK] = {"MPI_INT", "MPI_DOUBLE", "MPI_CHAR"};

/* Element i of the block whose seed is `seed`, written to `at` (which need not be aligned). */
static void k_put(int k, uint64_t seed, MPI_Count i, void *at)
{
    uint64_t h = bd_mix(seed ^ ((uint64_t)i * 0xd1b54a32d192ed03ull));
    if (k == K_INT) {
        int v = (int)h;
        memcpy(at, &v, sizeof v);
    } else if (k == K_DOUBLE) {
        double v = (double)(int64_t)(h >> 11) * 0x1p-20;
        memcpy(at, &v, sizeof v);
    } else {
        *(unsigned char *)at = (unsigned char)(h >> 23);
    }
}
static void k_show(int k, const void *at, char *out, size_t n)
{
    if (k == K_INT) {
        int v;
        memcpy(&v, at, sizeof v);
        snprintf(out, n, "%d", v);
    } else if (k == K_DOUBLE) {
        double v;
        memcpy(&v, at, sizeof v);
        snprintf(out, n, "%.17g", v);
    } else {
        snprintf(out, n, "char %d", *(const unsigned char *)at);
    }
}

/* ----------------------------------------------------------------- reduction data */

/* Reductions: MPI_SUM and MPI_MAX on MPI_INT and MPI_DOUBLE, and a non-commutative user
 * operation on MPI_2INT (affine maps x -> a x + b mod 2^32, i.e. [[a, b], [0, 1]]). */
enum { R_INT_SUM, R_DBL_SUM, R_INT_MAX, R_DBL_MAX, R_AFF, NR };
static const char *const r_name[NR] = {"MPI_INT MPI_SUM", "MPI_DOUBLE MPI_SUM", "MPI_INT MPI_MAX",
                                       "MPI_DOUBLE MPI_MAX", "MPI_2INT non-commutative user op (affine maps)"};
static MPI_Op aff_op;

typedef struct {
    int a, b;
} affine;

static MPI_Datatype r_type(int k)
{
    return k == R_AFF ? MPI_2INT : (k == R_DBL_SUM || k == R_DBL_MAX) ? MPI_DOUBLE : MPI_INT;
}
static size_t r_size(int k)
{
    return k == R_AFF ? sizeof(affine) : (k == R_DBL_SUM || k == R_DBL_MAX) ? sizeof(double) : sizeof(int);
}
static MPI_Op r_op(int k)
{
    return k == R_AFF ? aff_op : (k == R_INT_MAX || k == R_DBL_MAX) ? MPI_MAX : MPI_SUM;
}

/* io = in o io: the matrix product in * io (in comes from the lower ranks). */
static void aff_compose(const affine *in, affine *io)
{
    uint32_t a1 = (uint32_t)in->a, b1 = (uint32_t)in->b, a2 = (uint32_t)io->a, b2 = (uint32_t)io->b;
    io->a = (int)(a1 * a2);
    io->b = (int)(a1 * b2 + b1);
}
static void aff_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        aff_compose((affine *)in + k, (affine *)inout + k);
}

/* Process q's input element g; small integers, so that sums of doubles are exact in any order. */
static int r_int(int q, MPI_Count g, uint64_t salt)
{
    return (int)(bd_mix(((uint64_t)q << 44) ^ ((uint64_t)g << 3) ^ (salt << 26) ^ 0x77) % 2001) - 1000;
}
static void aff_gen(int q, MPI_Count g, uint64_t salt, affine *f)
{
    uint64_t h = bd_mix(((uint64_t)q << 40) ^ (uint64_t)g ^ (salt << 20) ^ 0x5a5a);
    f->a = 1 + 2 * (int)(h & 7);
    f->b = (int)((h >> 8) & 0xffff);
}
static void r_put(int k, int q, MPI_Count g, uint64_t salt, void *at)
{
    if (k == R_AFF) {
        affine f;
        aff_gen(q, g, salt, &f);
        memcpy(at, &f, sizeof f);
    } else if (k == R_DBL_SUM || k == R_DBL_MAX) {
        double d = 0.5 * r_int(q, g, salt);
        memcpy(at, &d, sizeof d);
    } else {
        int v = r_int(q, g, salt);
        memcpy(at, &v, sizeof v);
    }
}
/* The inputs of processes 0..nq-1 (nq >= 1) for element g, combined in rank order. */
static void r_expect(int k, int nq, MPI_Count g, uint64_t salt, void *out)
{
    switch (k) {
    case R_INT_SUM:
    case R_INT_MAX: {
        int acc = r_int(0, g, salt);
        for (int q = 1; q < nq; q++) {
            int v = r_int(q, g, salt);
            acc = k == R_INT_SUM ? acc + v : (v > acc ? v : acc);
        }
        memcpy(out, &acc, sizeof acc);
        break;
    }
    case R_DBL_SUM:
    case R_DBL_MAX: {
        double acc = 0.5 * r_int(0, g, salt);
        for (int q = 1; q < nq; q++) {
            double v = 0.5 * r_int(q, g, salt);
            acc = k == R_DBL_SUM ? acc + v : (v > acc ? v : acc);
        }
        memcpy(out, &acc, sizeof acc);
        break;
    }
    case R_AFF: {
        affine acc, next;
        aff_gen(0, g, salt, &acc);
        for (int q = 1; q < nq; q++) {
            aff_gen(q, g, salt, &next);
            aff_compose(&acc, &next); /* next = acc * next */
            acc = next;
        }
        memcpy(out, &acc, sizeof acc);
        break;
    }
    }
}
static int r_equal(int k, const void *a, const void *b)
{
    if (k == R_DBL_SUM || k == R_DBL_MAX) {
        double x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x == y;
    }
    return memcmp(a, b, r_size(k)) == 0;
}
static void r_show(int k, const void *at, char *out, size_t n)
{
    if (k == R_AFF) {
        affine f;
        memcpy(&f, at, sizeof f);
        snprintf(out, n, "(a=%d,b=%d)", f.a, f.b);
    } else if (k == R_DBL_SUM || k == R_DBL_MAX) {
        double d;
        memcpy(&d, at, sizeof d);
        snprintf(out, n, "%.17g", d);
    } else {
        int v;
        memcpy(&v, at, sizeof v);
        snprintf(out, n, "%d", v);
    }
}

/* ----------------------------------------------------------------- counts and layouts */

enum { C_GATHERV, C_SCATTERV, C_ALLGATHERV, C_ALLTOALL, C_ALLTOALLV, C_ALLTOALLW, C_RSCAT, C_RSCAT_BLOCK, C_SCAN,
       C_EXSCAN, NC };
enum { F_BLOCKING, F_NONBLOCKING, F_PERSISTENT, NF };
static const char *const c_name[NC][NF] = {
    {"MPI_Gatherv", "MPI_Igatherv", "MPI_Gatherv_init"},
    {"MPI_Scatterv", "MPI_Iscatterv", "MPI_Scatterv_init"},
    {"MPI_Allgatherv", "MPI_Iallgatherv", "MPI_Allgatherv_init"},
    {"MPI_Alltoall", "MPI_Ialltoall", "MPI_Alltoall_init"},
    {"MPI_Alltoallv", "MPI_Ialltoallv", "MPI_Alltoallv_init"},
    {"MPI_Alltoallw", "MPI_Ialltoallw", "MPI_Alltoallw_init"},
    {"MPI_Reduce_scatter", "MPI_Ireduce_scatter", "MPI_Reduce_scatter_init"},
    {"MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", "MPI_Reduce_scatter_block_init"},
    {"MPI_Scan", "MPI_Iscan", "MPI_Scan_init"},
    {"MPI_Exscan", "MPI_Iexscan", "MPI_Exscan_init"},
};
static const char *const f_name[NF] = {"blocking", "nonblocking", "persistent"};
static int is_reduction(int coll)
{
    return coll >= C_RSCAT;
}

/* Size classes: a few elements, a few hundred, about 100000 in all. */
enum { SC_TINY, SC_MEDIUM, SC_LARGE, NSC, SC_ZERO = NSC /* every count 0 */ };
static const char *const sc_name[NSC + 1] = {"tiny", "medium", "large", "zero"};

/* Process q's block in the v variants and reduce_scatter (zero at some processes). */
static MPI_Count vcount(int coll, int sc, int q, int p, int v)
{
    if (sc == SC_ZERO)
        return 0;
    if (sc == SC_TINY)
        return (q + v) % 3;
    if (sc == SC_MEDIUM)
        return (MPI_Count)((q * 5 + v) % 4) * 37;
    MPI_Count total = coll == C_RSCAT ? 40000 : 100000;
    int w = 0;
    for (int x = 0; x < p; x++)
        w += (x + v) % 4;
    if (w == 0)
        return q == 0 ? total : 0;
    return total * ((q + v) % 4) / w;
}

/* What process s sends to process d in alltoallv and alltoallw (symmetric for MPI_IN_PLACE,
 * where what d expects from s is what s keeps for d). */
static MPI_Count pcount(int sc, int s, int d, int p, int v, int sym)
{
    int x = sym ? s + d + v : s + 2 * d + v;
    if (sc == SC_ZERO)
        return 0;
    if (sc == SC_TINY)
        return x % 3;
    if (sc == SC_MEDIUM)
        return (MPI_Count)(x % 4) * 23;
    MPI_Count unit = 60000 / ((MPI_Count)p * p);
    return (MPI_Count)(x % 4) * (unit > 0 ? unit : 1);
}
/* Alltoallw's element kind for what s sends to d: K_INT, K_DOUBLE, K_CHAR, or (not in place)
 * P_2INT: the same signature in different types, c MPI_2INT sent as 2c MPI_INT received. */
enum { P_2INT = NK };
static int ptype(int s, int d, int v, int sym)
{
    return sym ? (s + d + v) % 3 : (s + 2 * d + v) % 4;
}

/* The same count for every process: alltoall blocks, reduce_scatter_block, scan and exscan. */
static MPI_Count ucount(int coll, int sc, int p, int v)
{
    if (sc == SC_ZERO)
        return 0;
    if (sc == SC_TINY)
        return v % 3 == 0 ? 0 : coll == C_ALLTOALL ? 2 : 1;
    if (coll == C_ALLTOALL) {
        if (sc == SC_MEDIUM)
            return 100;
        MPI_Count n = 100000 / ((MPI_Count)p * p);
        return n > 0 ? n : 1;
    }
    if (coll == C_RSCAT_BLOCK)
        return sc == SC_MEDIUM ? 50 : 40000 / p;
    return sc == SC_MEDIUM ? 100 : 20000;
}

/* The k-th block placed in a buffer: not in rank order. */
static int order(int p, int k, int how)
{
    switch (how % 3) {
    case 0: return p - 1 - k; /* reversed */
    case 1: return p > 1 ? (k + 1 + how % (p - 1)) % p : 0; /* rotated, never by 0 */
    default: {
        int evens = (p + 1) / 2; /* evens, then odds */
        return k < evens ? 2 * k : 2 * (k - evens) + 1;
    }
    }
}

/* Places p blocks of cnt[q] elements in a buffer in the order above, with gaps of 0 to 2
 * elements between them; displ[q] in elements; returns the length in elements. */
static MPI_Count place(int p, const MPI_Count *cnt, int how, MPI_Count *displ)
{
    MPI_Count off = how % 2;
    for (int k = 0; k < p; k++) {
        int q = order(p, k, how);
        displ[q] = off;
        off += cnt[q] + (q + how) % 3;
    }
    return off + 1;
}

/* The same in bytes for blocks of different kinds, each aligned for its kind, with gaps of 0
 * to 4 bytes; returns the length in bytes. */
static MPI_Count place_bytes(int p, const MPI_Count *cnt, const int *kind, int how, MPI_Count *displ)
{
    MPI_Count off = how % 3;
    for (int k = 0; k < p; k++) {
        int q = order(p, k, how);
        MPI_Count a = (MPI_Count)k_size(kind[q]);
        off = (off + a - 1) / a * a;
        displ[q] = off;
        off += cnt[q] * a + (q + how) % 5;
    }
    return off + 1;
}

/* ----------------------------------------------------------------- one call */

/* A block of a buffer: n elements of kind `kind` at byte `off`, going from process src to
 * process dst (dst -1: to every process). */
typedef struct {
    size_t off;
    MPI_Count n;
    int kind, src, dst;
} seg;

typedef struct {
    int coll, form, c, kind, sc, root, in_place, v, nulls, runs;
    MPI_Comm comm;
    const char *comm_name;
    int r, p;
    uint64_t base, salt;
    int run, how;
    MPI_Op op;
    /* arguments */
    MPI_Count scount, rcount;
    int *isc, *isd, *irc, *ird;
    MPI_Count *csc, *crc;
    MPI_Aint *csd, *crd;
    MPI_Datatype *stypes, *rtypes;
    /* buffers */
    char *sbuf, *rbuf, *scopy;
    size_t sbytes, rbytes;
    seg *ss, *rs, *pre;
    int nss, nrs, npre;
    /* reductions: the vector's length, where this process's result starts in it, its length */
    MPI_Count total, before, nres;
    MPI_Request req;
    int inited;
    char counts[900];
    char what[400];
} job;

static uint64_t seg_seed(const job *j, const seg *s)
{
    return bd_seed(s->src + 1, s->dst + 1, (long long)j->salt, j->coll);
}

static void add_seg(seg *list, int *n, size_t off, MPI_Count cnt, int kind, int src, int dst)
{
    list[*n].off = off, list[*n].n = cnt, list[*n].kind = kind, list[*n].src = src, list[*n].dst = dst;
    ++*n;
}

/* The count and displacement arrays in both widths (int and MPI_Count/MPI_Aint). */
static void set_arrays(int p, const MPI_Count *cnt, const MPI_Count *dis, int **ic, int **id, MPI_Count **cc,
                       MPI_Aint **cd)
{
    *ic = malloc(sizeof(int) * (size_t)p);
    *id = malloc(sizeof(int) * (size_t)p);
    *cc = malloc(sizeof(MPI_Count) * (size_t)p);
    *cd = malloc(sizeof(MPI_Aint) * (size_t)p);
    for (int q = 0; q < p; q++) {
        (*ic)[q] = (int)cnt[q], (*cc)[q] = cnt[q];
        (*id)[q] = dis ? (int)dis[q] : 0, (*cd)[q] = dis ? (MPI_Aint)dis[q] : 0;
    }
}

static void append_counts(char *buf, size_t cap, const char *label, const MPI_Count *cnt, int p)
{
    size_t len = strlen(buf);
    if (len < cap)
        len += (size_t)snprintf(buf + len, cap - len, " %s {", label);
    for (int q = 0; q < p && len < cap; q++)
        len += (size_t)snprintf(buf + len, cap - len, q ? ",%lld" : "%lld", (long long)cnt[q]);
    if (len < cap)
        snprintf(buf + len, cap - len, "}");
}

static void set_what(job *j)
{
    static const char *const how_name[2] = {"MPI_Wait", "an MPI_Test loop"};
    char form[80];
    if (j->form == F_BLOCKING)
        snprintf(form, sizeof form, "blocking");
    else if (j->form == F_NONBLOCKING)
        snprintf(form, sizeof form, "nonblocking, completed by %s", j->how >= 0 ? how_name[j->how] : "MPI_Waitall");
    else
        snprintf(form, sizeof form, "persistent, run %d of %d, completed by %s", j->run + 1, j->runs,
                 j->how >= 0 ? how_name[j->how] : "MPI_Waitall");
    char rootstr[24] = "";
    if (j->coll == C_GATHERV || j->coll == C_SCATTERV)
        snprintf(rootstr, sizeof rootstr, " root %d", j->root);
    const char *type = is_reduction(j->coll) ? r_name[j->kind] : j->coll == C_ALLTOALLW ? "mixed types" : k_name[j->kind];
    snprintf(j->what, sizeof j->what, "%s%s (%s) %s %s sizes%s%s on %s (rank %d of %d, call %llu)",
             c_name[j->coll][j->form], j->c ? "_c" : "", form, type, sc_name[j->sc], rootstr,
             j->in_place ? " MPI_IN_PLACE" : "", j->comm_name, j->r, j->p, (unsigned long long)j->base);
}

/* Sets up a call: its counts, arrays and buffers (kept for all the runs of a persistent one). */
static void job_make(job *j, int coll, MPI_Comm comm, const char *comm_name, int form, int c, int kind, int sc, int root,
                     int in_place)
{
    memset(j, 0, sizeof *j);
    j->coll = coll, j->comm = comm, j->comm_name = comm_name, j->form = form, j->c = c, j->kind = kind, j->sc = sc;
    j->root = root, j->in_place = in_place, j->req = MPI_REQUEST_NULL, j->how = -1;
    j->base = j->salt = ++calls;
    j->v = (int)(calls % 1000);
    j->nulls = (j->v / 2) % 2;
    j->runs = form == F_PERSISTENT ? (sc == SC_LARGE ? 2 : 3) : 1;
    MPI_Comm_rank(comm, &j->r);
    MPI_Comm_size(comm, &j->p);
    int r = j->r, p = j->p, v = j->v, at_root = r == root;
    MPI_Count *cnt = calloc((size_t)p, sizeof *cnt), *dis = calloc((size_t)p, sizeof *dis);
    MPI_Count *cnt2 = calloc((size_t)p, sizeof *cnt2), *dis2 = calloc((size_t)p, sizeof *dis2);
    j->ss = calloc((size_t)p + 1, sizeof(seg));
    j->rs = calloc((size_t)p + 1, sizeof(seg));
    j->pre = calloc((size_t)p + 1, sizeof(seg));
    size_t esz = is_reduction(coll) ? r_size(kind) : k_size(kind);
    switch (coll) {
    case C_GATHERV:
    case C_SCATTERV:
    case C_ALLGATHERV: {
        for (int q = 0; q < p; q++)
            cnt[q] = vcount(coll, sc, q, p, v);
        MPI_Count len = place(p, cnt, v, dis);
        append_counts(j->counts, sizeof j->counts, "counts", cnt, p);
        append_counts(j->counts, sizeof j->counts, "displs", dis, p);
        if (coll == C_ALLGATHERV) {
            j->in_place = in_place;
            set_arrays(p, cnt, dis, &j->irc, &j->ird, &j->crc, &j->crd);
            j->rbytes = (size_t)len * esz;
            for (int q = 0; q < p; q++)
                add_seg(j->rs, &j->nrs, (size_t)dis[q] * esz, cnt[q], kind, q, -1);
            if (in_place)
                add_seg(j->pre, &j->npre, (size_t)dis[r] * esz, cnt[r], kind, r, -1);
            else
                j->scount = cnt[r], j->sbytes = (size_t)cnt[r] * esz, add_seg(j->ss, &j->nss, 0, cnt[r], kind, r, -1);
        } else if (coll == C_GATHERV) {
            j->in_place = in_place && at_root;
            if (at_root || !j->nulls)
                set_arrays(p, cnt, dis, &j->irc, &j->ird, &j->crc, &j->crd);
            if (at_root) {
                j->rbytes = (size_t)len * esz;
                for (int q = 0; q < p; q++)
                    add_seg(j->rs, &j->nrs, (size_t)dis[q] * esz, cnt[q], kind, q, root);
                if (j->in_place)
                    add_seg(j->pre, &j->npre, (size_t)dis[r] * esz, cnt[r], kind, r, root);
            }
            if (!j->in_place)
                j->scount = cnt[r], j->sbytes = (size_t)cnt[r] * esz, add_seg(j->ss, &j->nss, 0, cnt[r], kind, r, root);
        } else {
            j->in_place = in_place && at_root;
            if (at_root || !j->nulls)
                set_arrays(p, cnt, dis, &j->isc, &j->isd, &j->csc, &j->csd);
            if (at_root) {
                j->sbytes = (size_t)len * esz;
                for (int q = 0; q < p; q++)
                    add_seg(j->ss, &j->nss, (size_t)dis[q] * esz, cnt[q], kind, root, q);
            }
            if (!j->in_place)
                j->rcount = cnt[r], j->rbytes = (size_t)cnt[r] * esz, add_seg(j->rs, &j->nrs, 0, cnt[r], kind, root, r);
        }
        break;
    }
    case C_ALLTOALL: {
        MPI_Count n = ucount(coll, sc, p, v);
        j->scount = j->rcount = n;
        snprintf(j->counts, sizeof j->counts, " count %lld per process", (long long)n);
        size_t block = (size_t)n * esz;
        j->rbytes = block * (size_t)p;
        for (int q = 0; q < p; q++) {
            add_seg(j->rs, &j->nrs, block * (size_t)q, n, kind, q, r);
            if (in_place)
                add_seg(j->pre, &j->npre, block * (size_t)q, n, kind, r, q);
            else
                add_seg(j->ss, &j->nss, block * (size_t)q, n, kind, r, q);
        }
        if (!in_place)
            j->sbytes = j->rbytes;
        break;
    }
    case C_ALLTOALLV:
    case C_ALLTOALLW: {
        int w = coll == C_ALLTOALLW;
        int *sk = malloc(sizeof(int) * (size_t)p), *rk = malloc(sizeof(int) * (size_t)p);
        int *s2 = malloc(sizeof(int) * (size_t)p);
        MPI_Count *spass = malloc(sizeof(MPI_Count) * (size_t)p);
        for (int q = 0; q < p; q++) {
            cnt[q] = pcount(sc, r, q, p, v, in_place);  /* what this process sends to q */
            cnt2[q] = pcount(sc, q, r, p, v, in_place); /* what it receives from q */
            sk[q] = w ? ptype(r, q, v, in_place) : kind;
            rk[q] = w ? ptype(q, r, v, in_place) : kind;
            /* P_2INT: cnt MPI_2INT sent, 2 cnt MPI_INT received: the data are 2 cnt ints */
            s2[q] = sk[q] == P_2INT;
            spass[q] = cnt[q];
            if (s2[q])
                cnt[q] *= 2, sk[q] = K_INT;
            if (rk[q] == P_2INT)
                cnt2[q] *= 2, rk[q] = K_INT;
        }
        MPI_Count slen, rlen;
        if (w) {
            slen = place_bytes(p, cnt, sk, v + 1, dis);
            rlen = place_bytes(p, cnt2, rk, v + 2, dis2);
        } else {
            slen = place(p, cnt, v + 1, dis) * (MPI_Count)esz;
            rlen = place(p, cnt2, v + 2, dis2) * (MPI_Count)esz;
        }
        size_t sunit = w ? 1 : esz; /* bytes per displacement unit */
        if (!in_place) {
            set_arrays(p, spass, dis, &j->isc, &j->isd, &j->csc, &j->csd);
            j->sbytes = (size_t)slen;
            for (int q = 0; q < p; q++)
                add_seg(j->ss, &j->nss, (size_t)dis[q] * sunit, cnt[q], sk[q], r, q);
            append_counts(j->counts, sizeof j->counts, "sendcounts", spass, p);
            append_counts(j->counts, sizeof j->counts, w ? "sdispls (bytes)" : "sdispls", dis, p);
        }
        set_arrays(p, cnt2, dis2, &j->irc, &j->ird, &j->crc, &j->crd);
        append_counts(j->counts, sizeof j->counts, "recvcounts", cnt2, p);
        append_counts(j->counts, sizeof j->counts, w ? "rdispls (bytes)" : "rdispls", dis2, p);
        j->rbytes = (size_t)rlen;
        for (int q = 0; q < p; q++) {
            add_seg(j->rs, &j->nrs, (size_t)dis2[q] * sunit, cnt2[q], rk[q], q, r);
            if (in_place) /* symmetric: what q expects from here is the block kept for q */
                add_seg(j->pre, &j->npre, (size_t)dis2[q] * sunit, cnt2[q], rk[q], r, q);
        }
        if (w) {
            j->stypes = malloc(sizeof(MPI_Datatype) * (size_t)p);
            j->rtypes = malloc(sizeof(MPI_Datatype) * (size_t)p);
            for (int q = 0; q < p; q++)
                j->stypes[q] = s2[q] ? MPI_2INT : k_type(sk[q]), j->rtypes[q] = k_type(rk[q]);
            size_t len = strlen(j->counts);
            if (len < sizeof j->counts)
                len += (size_t)snprintf(j->counts + len, sizeof j->counts - len, " sendtypes {");
            for (int q = 0; q < p && len < sizeof j->counts; q++)
                len += (size_t)snprintf(j->counts + len, sizeof j->counts - len, q ? ",%s" : "%s",
                                        s2[q] ? "2INT" : k_name[sk[q]] + 4);
            if (len < sizeof j->counts)
                len += (size_t)snprintf(j->counts + len, sizeof j->counts - len, "}");
            if (len < sizeof j->counts)
                len += (size_t)snprintf(j->counts + len, sizeof j->counts - len, " recvtypes {");
            for (int q = 0; q < p && len < sizeof j->counts; q++)
                len += (size_t)snprintf(j->counts + len, sizeof j->counts - len, q ? ",%s" : "%s", k_name[rk[q]] + 4);
            if (len < sizeof j->counts)
                snprintf(j->counts + len, sizeof j->counts - len, "}");
        }
        free(sk);
        free(rk);
        free(s2);
        free(spass);
        break;
    }
    case C_RSCAT:
    case C_RSCAT_BLOCK: {
        MPI_Count total = 0, before = 0;
        MPI_Count n = coll == C_RSCAT_BLOCK ? ucount(coll, sc, p, v) : 0;
        for (int q = 0; q < p; q++) {
            cnt[q] = coll == C_RSCAT_BLOCK ? n : vcount(coll, sc, q, p, v);
            if (q < r)
                before += cnt[q];
            total += cnt[q];
        }
        j->total = total, j->before = before, j->nres = cnt[r], j->rcount = n;
        if (coll == C_RSCAT) {
            set_arrays(p, cnt, NULL, &j->irc, &j->ird, &j->crc, &j->crd);
            append_counts(j->counts, sizeof j->counts, "recvcounts", cnt, p);
        } else {
            snprintf(j->counts, sizeof j->counts, " recvcount %lld", (long long)n);
        }
        if (in_place) {
            j->rbytes = (size_t)total * esz;
        } else {
            j->sbytes = (size_t)total * esz;
            j->rbytes = (size_t)cnt[r] * esz;
        }
        break;
    }
    case C_SCAN:
    case C_EXSCAN: {
        MPI_Count n = ucount(coll, sc, p, v);
        j->rcount = j->nres = j->total = n;
        snprintf(j->counts, sizeof j->counts, " count %lld", (long long)n);
        j->rbytes = (size_t)n * esz;
        if (!in_place)
            j->sbytes = j->rbytes;
        break;
    }
    }
    if (is_reduction(coll))
        j->op = r_op(kind);
    /* Buffers: the receive buffer with a guard after it; absent where not significant. */
    int has_rbuf = !((coll == C_GATHERV && !at_root) || (coll == C_SCATTERV && j->in_place));
    int has_sbuf = coll == C_SCATTERV ? at_root : !j->in_place;
    if (has_rbuf)
        j->rbuf = malloc(j->rbytes + GUARD);
    if (has_sbuf) {
        j->sbuf = malloc(j->sbytes + 1);
        j->scopy = malloc(j->sbytes + 1);
    }
    free(cnt);
    free(dis);
    free(cnt2);
    free(dis2);
    set_what(j);
}

/* New data for a run: the send buffers refilled, the receive buffers poisoned (0xEE), the
 * blocks that MPI_IN_PLACE takes from the receive buffer written there. */
static void job_fill(job *j, int run)
{
    j->run = run;
    j->salt = j->base * 1000 + (uint64_t)run * 7919;
    if (j->rbuf)
        memset(j->rbuf, 0xEE, j->rbytes + GUARD);
    if (j->sbuf)
        memset(j->sbuf, 0xD5, j->sbytes);
    if (is_reduction(j->coll)) {
        size_t esz = r_size(j->kind);
        char *in = j->in_place ? j->rbuf : j->sbuf;
        /* reduce_scatter: the whole vector; scan and exscan: count elements */
        for (MPI_Count g = 0; g < j->total; g++)
            r_put(j->kind, j->r, g, j->salt, in + (size_t)g * esz);
    } else {
        for (int i = 0; i < j->nss; i++)
            for (MPI_Count e = 0; e < j->ss[i].n; e++)
                k_put(j->ss[i].kind, seg_seed(j, &j->ss[i]), e, j->sbuf + j->ss[i].off + (size_t)e * k_size(j->ss[i].kind));
        for (int i = 0; i < j->npre; i++)
            for (MPI_Count e = 0; e < j->pre[i].n; e++)
                k_put(j->pre[i].kind, seg_seed(j, &j->pre[i]), e,
                      j->rbuf + j->pre[i].off + (size_t)e * k_size(j->pre[i].kind));
    }
    if (j->sbuf)
        memcpy(j->scopy, j->sbuf, j->sbytes);
    set_what(j);
}

/* The call in its form: blocking, MPI_I..., or MPI_..._init then MPI_Start (later runs only
 * MPI_Start). */
#define RUN3(B, I, ...)                                                                            \
    (j->form == F_BLOCKING      ? B(__VA_ARGS__)                                                   \
     : j->form == F_NONBLOCKING ? I(__VA_ARGS__, &j->req)                                          \
                                : B##_init(__VA_ARGS__, MPI_INFO_NULL, &j->req))
#define RUN3C(B, I, ...)                                                                           \
    (j->form == F_BLOCKING      ? B##_c(__VA_ARGS__)                                               \
     : j->form == F_NONBLOCKING ? I##_c(__VA_ARGS__, &j->req)                                      \
                                : B##_init_c(__VA_ARGS__, MPI_INFO_NULL, &j->req))

static int job_start(job *j)
{
    int rc;
    if (j->form == F_PERSISTENT && j->inited) {
        rc = MPI_Start(&j->req);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Start returned %d", j->what, rc);
        return rc;
    }
    void *ip = MPI_IN_PLACE;
    const void *sb = j->in_place ? ip : j->sbuf;
    void *rb = j->rbuf;
    MPI_Comm comm = j->comm;
    int root = j->root;
    MPI_Datatype dt = is_reduction(j->coll) ? r_type(j->kind) : k_type(j->kind);
    MPI_Datatype sdt = j->in_place ? MPI_DATATYPE_NULL : dt;
    switch (j->coll) {
    case C_GATHERV: {
        MPI_Datatype rdt = j->r == root || !j->nulls ? dt : MPI_DATATYPE_NULL;
        rc = j->c ? RUN3C(MPI_Gatherv, MPI_Igatherv, sb, j->scount, sdt, rb, j->crc, j->crd, rdt, root, comm)
                  : RUN3(MPI_Gatherv, MPI_Igatherv, sb, (int)j->scount, sdt, rb, j->irc, j->ird, rdt, root, comm);
        break;
    }
    case C_SCATTERV: {
        MPI_Datatype st = j->r == root || !j->nulls ? dt : MPI_DATATYPE_NULL;
        void *r2 = j->in_place ? ip : rb;
        MPI_Datatype rdt = j->in_place ? MPI_DATATYPE_NULL : dt;
        rc = j->c ? RUN3C(MPI_Scatterv, MPI_Iscatterv, j->sbuf, j->csc, j->csd, st, r2, j->rcount, rdt, root, comm)
                  : RUN3(MPI_Scatterv, MPI_Iscatterv, j->sbuf, j->isc, j->isd, st, r2, (int)j->rcount, rdt, root, comm);
        break;
    }
    case C_ALLGATHERV:
        rc = j->c ? RUN3C(MPI_Allgatherv, MPI_Iallgatherv, sb, j->scount, sdt, rb, j->crc, j->crd, dt, comm)
                  : RUN3(MPI_Allgatherv, MPI_Iallgatherv, sb, (int)j->scount, sdt, rb, j->irc, j->ird, dt, comm);
        break;
    case C_ALLTOALL: {
        MPI_Count sc = j->in_place ? 0 : j->scount;
        rc = j->c ? RUN3C(MPI_Alltoall, MPI_Ialltoall, sb, sc, sdt, rb, j->rcount, dt, comm)
                  : RUN3(MPI_Alltoall, MPI_Ialltoall, sb, (int)sc, sdt, rb, (int)j->rcount, dt, comm);
        break;
    }
    case C_ALLTOALLV:
        rc = j->c ? RUN3C(MPI_Alltoallv, MPI_Ialltoallv, sb, j->csc, j->csd, sdt, rb, j->crc, j->crd, dt, comm)
                  : RUN3(MPI_Alltoallv, MPI_Ialltoallv, sb, j->isc, j->isd, sdt, rb, j->irc, j->ird, dt, comm);
        break;
    case C_ALLTOALLW:
        rc = j->c ? RUN3C(MPI_Alltoallw, MPI_Ialltoallw, sb, j->csc, j->csd, j->stypes, rb, j->crc, j->crd, j->rtypes,
                          comm)
                  : RUN3(MPI_Alltoallw, MPI_Ialltoallw, sb, j->isc, j->isd, j->stypes, rb, j->irc, j->ird, j->rtypes,
                         comm);
        break;
    case C_RSCAT:
        rc = j->c ? RUN3C(MPI_Reduce_scatter, MPI_Ireduce_scatter, sb, rb, j->crc, dt, j->op, comm)
                  : RUN3(MPI_Reduce_scatter, MPI_Ireduce_scatter, sb, rb, j->irc, dt, j->op, comm);
        break;
    case C_RSCAT_BLOCK:
        rc = j->c ? RUN3C(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, sb, rb, j->rcount, dt, j->op, comm)
                  : RUN3(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, sb, rb, (int)j->rcount, dt, j->op, comm);
        break;
    case C_SCAN:
        rc = j->c ? RUN3C(MPI_Scan, MPI_Iscan, sb, rb, j->rcount, dt, j->op, comm)
                  : RUN3(MPI_Scan, MPI_Iscan, sb, rb, (int)j->rcount, dt, j->op, comm);
        break;
    default:
        rc = j->c ? RUN3C(MPI_Exscan, MPI_Iexscan, sb, rb, j->rcount, dt, j->op, comm)
                  : RUN3(MPI_Exscan, MPI_Iexscan, sb, rb, (int)j->rcount, dt, j->op, comm);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "%s returned %d", j->what, rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (j->form != F_BLOCKING)
        CHECK(j->req != MPI_REQUEST_NULL, "%s returned MPI_REQUEST_NULL", j->what);
    if (j->form == F_PERSISTENT) {
        j->inited = 1;
        rc = MPI_Start(&j->req);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Start returned %d", j->what, rc);
    }
    return rc;
}

/* Completes a nonblocking or persistent call: how 0 MPI_Wait, 1 an MPI_Test loop. */
static void job_complete(job *j, int how)
{
    if (j->form == F_BLOCKING)
        return;
    j->how = how;
    set_what(j);
    int rc = MPI_SUCCESS, flag = 0;
    long polls = 0;
    if (how == 0) {
        rc = MPI_Wait(&j->req, MPI_STATUS_IGNORE);
    } else {
        while (!flag && rc == MPI_SUCCESS && polls++ < 200000000)
            rc = MPI_Test(&j->req, &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "%s: MPI_Test never reported completion", j->what);
    }
    CHECK(rc == MPI_SUCCESS, "%s: completion returned %d", j->what, rc);
}

/* Every byte of the receive buffer (and its guard) that map[] leaves at 0 still holds 0xEE. */
static void check_untouched(const job *j, const unsigned char *map)
{
    const unsigned char *b = (const unsigned char *)j->rbuf;
    long bad = 0;
    for (size_t i = 0; i < j->rbytes + GUARD; i++) {
        if (map[i] || b[i] == 0xEE)
            continue;
        if (bad++ < 3)
            CHECK(0, "%s: byte %zu of the receive buffer (%s) was written: it is 0x%02x, expected the untouched 0xee;%s",
                  j->what, i, i >= j->rbytes ? "past the end" : "outside every block: a gap or padding", b[i],
                  j->counts);
    }
    if (bad > 3)
        CHECK(0, "%s: %ld bytes outside the blocks were written in all", j->what, bad);
}

static void check_sbuf(const job *j)
{
    if (!j->sbuf || memcmp(j->sbuf, j->scopy, j->sbytes) == 0)
        return;
    size_t i = 0;
    while (((unsigned char *)j->sbuf)[i] == ((unsigned char *)j->scopy)[i])
        i++;
    CHECK(0, "%s: the send buffer was modified (first at byte %zu of %zu: 0x%02x, was 0x%02x)", j->what, i, j->sbytes,
          ((unsigned char *)j->sbuf)[i], ((unsigned char *)j->scopy)[i]);
}

static void check_movement(const job *j)
{
    if (!j->rbuf)
        return;
    unsigned char *map = calloc(j->rbytes + GUARD, 1);
    for (int b = 0; b < j->nrs; b++) {
        const seg *s = &j->rs[b];
        size_t ksz = k_size(s->kind);
        uint64_t seed = seg_seed(j, s);
        unsigned char want[8];
        long bad = 0;
        memset(map + s->off, 1, (size_t)s->n * ksz);
        for (MPI_Count i = 0; i < s->n; i++) {
            const unsigned char *got = (const unsigned char *)j->rbuf + s->off + (size_t)i * ksz;
            k_put(s->kind, seed, i, want);
            if (memcmp(got, want, ksz) == 0)
                continue;
            if (bad++ < 3) {
                char g[64], w[64], to[16];
                k_show(s->kind, got, g, sizeof g);
                k_show(s->kind, want, w, sizeof w);
                snprintf(to, sizeof to, s->dst < 0 ? "everyone" : "rank %d", s->dst);
                CHECK(0, "%s: the block from rank %d to %s (count %lld of %s at byte %zu): element %lld is %s, expected %s;%s",
                      j->what, s->src, to, (long long)s->n, k_name[s->kind], s->off, (long long)i, g, w, j->counts);
            }
        }
        if (bad > 3)
            CHECK(0, "%s: the block from rank %d: %ld of its %lld elements wrong", j->what, s->src, bad, (long long)s->n);
    }
    check_untouched(j, map);
    free(map);
}

static void check_reduction(const job *j)
{
    size_t esz = r_size(j->kind);
    unsigned char *map = calloc(j->rbytes + GUARD, 1);
    int nq = j->coll == C_SCAN ? j->r + 1 : j->coll == C_EXSCAN ? j->r : j->p;
    MPI_Count first = j->coll == C_SCAN || j->coll == C_EXSCAN ? 0 : j->before;
    if (j->in_place) /* past this process's result, the input vector: undefined afterwards */
        memset(map, 2, j->rbytes);
    memset(map, 1, (size_t)j->nres * esz);
    if (nq > 0) { /* exscan's result at rank 0 is undefined */
        long bad = 0;
        for (MPI_Count i = 0; i < j->nres; i++) {
            unsigned char want[16];
            const char *got = j->rbuf + (size_t)i * esz;
            r_expect(j->kind, nq, first + i, j->salt, want);
            if (r_equal(j->kind, got, want))
                continue;
            if (bad++ < 3) {
                char g[64], w[64];
                r_show(j->kind, got, g, sizeof g);
                r_show(j->kind, want, w, sizeof w);
                CHECK(0, "%s: result element %lld (element %lld of the vector, ranks 0..%d combined in order) is %s, "
                         "expected %s;%s",
                      j->what, (long long)i, (long long)(first + i), nq - 1, g, w, j->counts);
            }
        }
        if (bad > 3)
            CHECK(0, "%s: %ld of %lld result elements wrong", j->what, bad, (long long)j->nres);
    }
    check_untouched(j, map);
    free(map);
}

static void job_check(job *j)
{
    if (j->form == F_NONBLOCKING)
        CHECK(j->req == MPI_REQUEST_NULL, "%s: the request is not MPI_REQUEST_NULL after completion", j->what);
    if (j->form == F_PERSISTENT)
        CHECK(j->req != MPI_REQUEST_NULL, "%s: the persistent request became MPI_REQUEST_NULL on completion", j->what);
    if (is_reduction(j->coll))
        check_reduction(j);
    else
        check_movement(j);
    check_sbuf(j);
}

static void job_free(job *j)
{
    if (j->form == F_PERSISTENT && j->req != MPI_REQUEST_NULL) {
        int rc = MPI_Request_free(&j->req);
        CHECK(rc == MPI_SUCCESS && j->req == MPI_REQUEST_NULL, "%s: MPI_Request_free returned %d", j->what, rc);
    }
    free(j->isc), free(j->isd), free(j->irc), free(j->ird);
    free(j->csc), free(j->csd), free(j->crc), free(j->crd);
    free(j->stypes), free(j->rtypes);
    free(j->sbuf), free(j->rbuf), free(j->scopy);
    free(j->ss), free(j->rs), free(j->pre);
    memset(j, 0, sizeof *j);
}

/* One call from start to check, in its form: a persistent one runs several times, its data
 * changing from run to run. */
static void one(int coll, MPI_Comm comm, const char *cname, int form, int c, int kind, int sc, int root, int in_place)
{
    job j;
    job_make(&j, coll, comm, cname, form, c, kind, sc, root, in_place);
    for (int run = 0; run < j.runs; run++) {
        job_fill(&j, run);
        if (job_start(&j) != MPI_SUCCESS)
            break;
        job_complete(&j, (run + j.v) % 2);
        job_check(&j);
    }
    job_free(&j);
}

/* ----------------------------------------------------------------- the sweeps */

static const char *const world = "MPI_COMM_WORLD";

/* Gatherv and scatterv: every root in every form, in place or not, tiny and medium sizes;
 * the large size at the first, middle and last root. */
static void sweep_rooted(int coll)
{
    int reps = size >= 4 ? 1 : 4 / size, t = 0;
    for (int rep = 0; rep < reps; rep++)
        for (int root = 0; root < size; root++)
            for (int f = 0; f < NF; f++, t++)
                one(coll, MPI_COMM_WORLD, world, f, (t / 4) % 2, (t / 8) % 2 ? K_DOUBLE : K_INT,
                    t % 2 ? SC_MEDIUM : SC_TINY, root, (t / 2) % 2);
    int roots[3] = {0, size / 2, size - 1};
    for (int i = 0; i < 3; i++) {
        if ((i == 1 && roots[1] == roots[0]) || (i == 2 && (roots[2] == roots[1] || roots[2] == roots[0])))
            continue;
        for (int f = 0; f < NF; f++)
            one(coll, MPI_COMM_WORLD, world, f, (i + f) % 2, (i + f) % 2 ? K_INT : K_DOUBLE, SC_LARGE, roots[i],
                (i + f + 1) % 2);
    }
}

/* Allgatherv and the alltoalls: every size, every form, in place or not. */
static void sweep_all(int coll)
{
    for (int sc = 0; sc < NSC; sc++)
        for (int f = 0; f < NF; f++)
            for (int ip = 0; ip < 2; ip++) {
                int t = sc * 6 + f * 2 + ip;
                one(coll, MPI_COMM_WORLD, world, f, (t / 3) % 2, (sc + f + ip) % 2 ? K_DOUBLE : K_INT, sc, 0, ip);
            }
}

/* Reductions: every operation in every form, the sizes taking turns, in place every other
 * time; the large size for a commutative and the non-commutative operation. */
static void sweep_reduction(int coll)
{
    for (int k = 0; k < NR; k++)
        for (int f = 0; f < NF; f++) {
            int t = k * NF + f;
            one(coll, MPI_COMM_WORLD, world, f, (t / 2) % 2, k, t % 2 ? SC_MEDIUM : SC_TINY, 0, (k + f) % 2);
        }
    for (int f = 0; f < NF; f++) {
        one(coll, MPI_COMM_WORLD, world, f, f % 2, f == 1 ? R_DBL_SUM : R_INT_SUM, SC_LARGE, 0, f % 2 == 0);
        one(coll, MPI_COMM_WORLD, world, f, (f + 1) % 2, R_AFF, SC_LARGE, 0, f % 2);
    }
}

/* Every count zero (nothing moves; the buffers stay as they were), each call in each form. */
static void zeros(void)
{
    for (int f = 0; f < NF; f++)
        for (int coll = 0; coll < NC; coll++) {
            int kind = is_reduction(coll) ? (f == 1 ? R_AFF : R_INT_SUM) : f == 2 ? K_DOUBLE : K_INT;
            one(coll, MPI_COMM_WORLD, world, f, (coll + f) % 2, kind, SC_ZERO, (coll + f) % size, (coll + f) % 2);
        }
}

/* A communicator that renumbers the processes: two halves, ranks reversed. The halves make
 * the same calls, so the salt stays in step. */
static void split(void)
{
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    int hs;
    MPI_Comm_size(half, &hs);
    const char *hn = "a split communicator (halves, ranks reversed)";
    for (int f = 0; f < NF; f++) {
        one(C_GATHERV, half, hn, f, f == 1, K_INT, SC_MEDIUM, (f * 2) % hs, f % 2);
        one(C_SCATTERV, half, hn, f, f == 2, K_DOUBLE, SC_MEDIUM, hs - 1, f % 2 == 0);
        one(C_ALLGATHERV, half, hn, f, 0, K_DOUBLE, SC_TINY, 0, f % 2);
        one(C_ALLTOALL, half, hn, f, f == 0, K_INT, SC_MEDIUM, 0, f % 2 == 0);
        one(C_ALLTOALLV, half, hn, f, f == 1, K_DOUBLE, SC_MEDIUM, 0, f % 2);
        one(C_ALLTOALLW, half, hn, f, f == 2, 0, SC_MEDIUM, 0, f % 2 == 0);
        one(C_RSCAT, half, hn, f, 0, R_AFF, SC_MEDIUM, 0, f % 2);
        one(C_RSCAT_BLOCK, half, hn, f, 1, R_AFF, SC_MEDIUM, 0, f % 2 == 0);
        one(C_SCAN, half, hn, f, f == 0, R_AFF, SC_MEDIUM, 0, f % 2);
        one(C_EXSCAN, half, hn, f, f == 2, R_AFF, SC_MEDIUM, 0, f % 2 == 0);
    }
    MPI_Comm_free(&half);
}

/* Nonblocking calls of every kind outstanding at once on MPI_COMM_WORLD and a duplicate, with
 * persistent ones started among them, all completed by one MPI_Waitall; three rounds, the
 * persistent requests rerun each round with new data. */
static void outstanding(void)
{
    enum { NP = 3, N = 13 + NP };
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    const char *dn = "a duplicate of MPI_COMM_WORLD (many outstanding)", *wn = "MPI_COMM_WORLD (many outstanding)";
    job pers[NP];
    job_make(&pers[0], C_ALLGATHERV, MPI_COMM_WORLD, wn, F_PERSISTENT, 0, K_INT, SC_MEDIUM, 0, 0);
    job_make(&pers[1], C_SCAN, dup, dn, F_PERSISTENT, 1, R_AFF, SC_MEDIUM, 0, 1);
    job_make(&pers[2], C_ALLTOALLW, MPI_COMM_WORLD, wn, F_PERSISTENT, 0, 0, SC_TINY, 0, 0);
    for (int round = 0; round < 3; round++) {
        job j[N];
        int n = 0, fn = F_NONBLOCKING;
        job_make(&j[n++], C_GATHERV, MPI_COMM_WORLD, wn, fn, 0, K_DOUBLE, SC_MEDIUM, round % size, round == 1);
        job_make(&j[n++], C_SCATTERV, dup, dn, fn, 1, K_INT, SC_MEDIUM, size - 1 - round % size, round == 2);
        job_make(&j[n++], C_ALLGATHERV, MPI_COMM_WORLD, wn, fn, round == 0, K_INT, round == 1 ? SC_LARGE : SC_TINY, 0,
                 round % 2);
        job_make(&j[n++], C_ALLTOALL, dup, dn, fn, 0, K_DOUBLE, SC_MEDIUM, 0, round == 0);
        job_make(&j[n++], C_ALLTOALLV, MPI_COMM_WORLD, wn, fn, 1, K_INT, SC_MEDIUM, 0, round == 1);
        job_make(&j[n++], C_ALLTOALLW, dup, dn, fn, 0, 0, SC_MEDIUM, 0, round == 2);
        job_make(&j[n++], C_RSCAT, MPI_COMM_WORLD, wn, fn, 0, R_AFF, SC_MEDIUM, 0, round == 0);
        job_make(&j[n++], C_RSCAT_BLOCK, dup, dn, fn, 1, R_DBL_SUM, SC_MEDIUM, 0, round == 1);
        job_make(&j[n++], C_SCAN, MPI_COMM_WORLD, wn, fn, 0, R_INT_MAX, SC_MEDIUM, 0, round == 2);
        job_make(&j[n++], C_EXSCAN, dup, dn, fn, 1, R_AFF, SC_MEDIUM, 0, round == 0);
        job_make(&j[n++], C_EXSCAN, MPI_COMM_WORLD, wn, fn, 0, R_DBL_SUM, SC_TINY, 0, round == 1);
        job_make(&j[n++], C_ALLGATHERV, dup, dn, fn, 1, K_DOUBLE, SC_MEDIUM, 0, round == 2);
        job_make(&j[n++], C_GATHERV, dup, dn, fn, 0, K_INT, SC_TINY, (round + 1) % size, 0);
        MPI_Request reqs[N];
        int first = n;
        for (int i = 0; i < first; i++) {
            job_fill(&j[i], 0);
            job_start(&j[i]);
            reqs[i] = j[i].req;
            if (i % 4 == 1) { /* the persistent ones start among them */
                int k = i / 4;
                if (k < NP) {
                    job_fill(&pers[k], round);
                    job_start(&pers[k]);
                    reqs[n++] = pers[k].req;
                }
            }
        }
        int rc = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        CHECK(rc == MPI_SUCCESS, "MPI_Waitall of %d outstanding collectives (round %d) returned %d", n, round, rc);
        for (int i = 0; i < first; i++) {
            j[i].req = reqs[i];
            job_check(&j[i]);
            job_free(&j[i]);
        }
        for (int k = 0; k < NP; k++) {
            CHECK(reqs[first + k] == pers[k].req, "%s: MPI_Waitall changed the persistent request's handle", pers[k].what);
            job_check(&pers[k]);
        }
    }
    for (int k = 0; k < NP; k++)
        job_free(&pers[k]);
    MPI_Comm_free(&dup);
}

/* ----------------------------------------------------------------- wrong arguments */

static void expect_class(int rc, int cls, const char *name, const char *what, int form, int c)
{
    int got = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    if (got != cls) {
        char s[MPI_MAX_ERROR_STRING] = "";
        int len;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, s, &len);
        CHECK(0, "%s%s (%s) with %s on a communicator with MPI_ERRORS_RETURN: error class %d, expected %d (%s)", name,
              c ? "_c" : "", f_name[form], what, got, cls, s);
    }
}

/* An error about element i of a per-process array names it: "sendtypes[3]". */
static void expect_names(int rc, const char *name, const char *array, int i, int form, int c)
{
    char elem[48];
    snprintf(elem, sizeof elem, "%s[%d]", array, i);
    CHECK(rc == MPI_SUCCESS || mt_string_has(rc, elem), "%s%s (%s): the error does not name %s", name, c ? "_c" : "",
          f_name[form], elem);
}

#define ERR3(B, I, ...)                                                                            \
    (form == F_BLOCKING      ? B(__VA_ARGS__)                                                      \
     : form == F_NONBLOCKING ? I(__VA_ARGS__, &req)                                                \
                             : B##_init(__VA_ARGS__, MPI_INFO_NULL, &req))
#define ERR3C(B, I, ...)                                                                           \
    (form == F_BLOCKING      ? B##_c(__VA_ARGS__)                                                  \
     : form == F_NONBLOCKING ? I##_c(__VA_ARGS__, &req)                                            \
                             : B##_init_c(__VA_ARGS__, MPI_INFO_NULL, &req))

static void errors(void)
{
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    int p = size, r = rank;
    int *cnt = malloc(sizeof(int) * (size_t)p), *dis = malloc(sizeof(int) * (size_t)p);
    MPI_Count *ccnt = malloc(sizeof(MPI_Count) * (size_t)p);
    MPI_Aint *cdis = malloc(sizeof(MPI_Aint) * (size_t)p);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)p);
    int *sbuf = calloc(4 * (size_t)p + 4, sizeof(int)), *rbuf = calloc(4 * (size_t)p + 4, sizeof(int));
    char what[160];
    for (int form = 0; form < NF; form++)
        for (int c = 0; c < 2; c++) {
            MPI_Request req = MPI_REQUEST_NULL;
            int bad = (r + form + c) % p, rc;
            /* A negative count in recvcounts, at every process (at a different index each). */
            for (int q = 0; q < p; q++)
                cnt[q] = 1, dis[q] = q, ccnt[q] = 1, cdis[q] = q;
            cnt[bad] = -1, ccnt[bad] = -1;
            snprintf(what, sizeof what, "recvcounts[%d] = -1", bad);
            rc = c ? ERR3C(MPI_Allgatherv, MPI_Iallgatherv, sbuf, 1, MPI_INT, rbuf, ccnt, cdis, MPI_INT, d)
                   : ERR3(MPI_Allgatherv, MPI_Iallgatherv, sbuf, 1, MPI_INT, rbuf, cnt, dis, MPI_INT, d);
            expect_class(rc, MPI_ERR_COUNT, "MPI_Allgatherv", what, form, c);
            rc = c ? ERR3C(MPI_Alltoallv, MPI_Ialltoallv, sbuf, ccnt, cdis, MPI_INT, rbuf, ccnt, cdis, MPI_INT, d)
                   : ERR3(MPI_Alltoallv, MPI_Ialltoallv, sbuf, cnt, dis, MPI_INT, rbuf, cnt, dis, MPI_INT, d);
            expect_class(rc, MPI_ERR_COUNT, "MPI_Alltoallv", what, form, c);
            rc = c ? ERR3C(MPI_Reduce_scatter, MPI_Ireduce_scatter, sbuf, rbuf, ccnt, MPI_INT, MPI_SUM, d)
                   : ERR3(MPI_Reduce_scatter, MPI_Ireduce_scatter, sbuf, rbuf, cnt, MPI_INT, MPI_SUM, d);
            expect_class(rc, MPI_ERR_COUNT, "MPI_Reduce_scatter", what, form, c);
            /* Gatherv: MPI_IN_PLACE at the processes that are not the root; the root has a
             * negative count (so that no process starts the call). */
            int root = (form + c) % p;
            if (r == root) {
                rc = c ? ERR3C(MPI_Gatherv, MPI_Igatherv, sbuf, 1, MPI_INT, rbuf, ccnt, cdis, MPI_INT, root, d)
                       : ERR3(MPI_Gatherv, MPI_Igatherv, sbuf, 1, MPI_INT, rbuf, cnt, dis, MPI_INT, root, d);
                snprintf(what, sizeof what, "recvcounts[%d] = -1 at the root %d", bad, root);
                expect_class(rc, MPI_ERR_COUNT, "MPI_Gatherv", what, form, c);
            } else {
                rc = c ? ERR3C(MPI_Gatherv, MPI_Igatherv, MPI_IN_PLACE, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, d)
                       : ERR3(MPI_Gatherv, MPI_Igatherv, MPI_IN_PLACE, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, d);
                snprintf(what, sizeof what, "sendbuf = MPI_IN_PLACE at rank %d, not the root %d", r, root);
                expect_class(rc, MPI_ERR_BUFFER, "MPI_Gatherv", what, form, c);
            }
            /* Scatterv, the mirror: MPI_IN_PLACE as recvbuf away from the root, a negative
             * sendcounts entry at the root. */
            if (r == root) {
                rc = c ? ERR3C(MPI_Scatterv, MPI_Iscatterv, sbuf, ccnt, cdis, MPI_INT, rbuf, 1, MPI_INT, root, d)
                       : ERR3(MPI_Scatterv, MPI_Iscatterv, sbuf, cnt, dis, MPI_INT, rbuf, 1, MPI_INT, root, d);
                snprintf(what, sizeof what, "sendcounts[%d] = -1 at the root %d", bad, root);
                expect_class(rc, MPI_ERR_COUNT, "MPI_Scatterv", what, form, c);
            } else {
                rc = c ? ERR3C(MPI_Scatterv, MPI_Iscatterv, NULL, NULL, NULL, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, d)
                       : ERR3(MPI_Scatterv, MPI_Iscatterv, NULL, NULL, NULL, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, d);
                snprintf(what, sizeof what, "recvbuf = MPI_IN_PLACE at rank %d, not the root %d", r, root);
                expect_class(rc, MPI_ERR_BUFFER, "MPI_Scatterv", what, form, c);
            }
            /* Allgatherv: this process's block of a different byte size from recvcounts[rank]. */
            for (int q = 0; q < p; q++)
                cnt[q] = 1, dis[q] = q, ccnt[q] = 1, cdis[q] = q;
            rc = c ? ERR3C(MPI_Allgatherv, MPI_Iallgatherv, sbuf, 2, MPI_INT, rbuf, ccnt, cdis, MPI_INT, d)
                   : ERR3(MPI_Allgatherv, MPI_Iallgatherv, sbuf, 2, MPI_INT, rbuf, cnt, dis, MPI_INT, d);
            expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Allgatherv", "sendcount 2 MPI_INT, recvcounts[rank] 1 MPI_INT", form,
                         c);
            /* Alltoall: blocks of different byte sizes. */
            rc = c ? ERR3C(MPI_Alltoall, MPI_Ialltoall, sbuf, 2, MPI_INT, rbuf, 1, MPI_INT, d)
                   : ERR3(MPI_Alltoall, MPI_Ialltoall, sbuf, 2, MPI_INT, rbuf, 1, MPI_INT, d);
            expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Alltoall", "sendcount 2 MPI_INT, recvcount 1 MPI_INT", form, c);
            rc = c ? ERR3C(MPI_Alltoall, MPI_Ialltoall, sbuf, 1, MPI_DOUBLE, rbuf, 1, MPI_INT, d)
                   : ERR3(MPI_Alltoall, MPI_Ialltoall, sbuf, 1, MPI_DOUBLE, rbuf, 1, MPI_INT, d);
            expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Alltoall", "sendcount 1 MPI_DOUBLE, recvcount 1 MPI_INT", form, c);
            /* Aliased buffers: sendbuf == recvbuf where both matter (MPI_IN_PLACE is the way). */
            rc = c ? ERR3C(MPI_Alltoall, MPI_Ialltoall, rbuf, 1, MPI_INT, rbuf, 1, MPI_INT, d)
                   : ERR3(MPI_Alltoall, MPI_Ialltoall, rbuf, 1, MPI_INT, rbuf, 1, MPI_INT, d);
            expect_class(rc, MPI_ERR_BUFFER, "MPI_Alltoall", "sendbuf == recvbuf", form, c);
            rc = c ? ERR3C(MPI_Scan, MPI_Iscan, rbuf, rbuf, 1, MPI_INT, MPI_SUM, d)
                   : ERR3(MPI_Scan, MPI_Iscan, rbuf, rbuf, 1, MPI_INT, MPI_SUM, d);
            expect_class(rc, MPI_ERR_BUFFER, "MPI_Scan", "sendbuf == recvbuf", form, c);
            /* Alltoallw: MPI_DATATYPE_NULL among the recvtypes. */
            for (int q = 0; q < p; q++)
                cnt[q] = 1, dis[q] = q * (int)sizeof(int), ccnt[q] = 1, cdis[q] = q * (MPI_Aint)sizeof(int),
                types[q] = MPI_INT;
            MPI_Datatype *rtypes = malloc(sizeof(MPI_Datatype) * (size_t)p);
            memcpy(rtypes, types, sizeof(MPI_Datatype) * (size_t)p);
            rtypes[bad] = MPI_DATATYPE_NULL;
            snprintf(what, sizeof what, "recvtypes[%d] = MPI_DATATYPE_NULL", bad);
            rc = c ? ERR3C(MPI_Alltoallw, MPI_Ialltoallw, sbuf, ccnt, cdis, types, rbuf, ccnt, cdis, rtypes, d)
                   : ERR3(MPI_Alltoallw, MPI_Ialltoallw, sbuf, cnt, dis, types, rbuf, cnt, dis, rtypes, d);
            expect_class(rc, MPI_ERR_TYPE, "MPI_Alltoallw", what, form, c);
            expect_names(rc, "MPI_Alltoallw", "recvtypes", bad, form, c);
            snprintf(what, sizeof what, "sendtypes[%d] = MPI_DATATYPE_NULL", bad);
            rc = c ? ERR3C(MPI_Alltoallw, MPI_Ialltoallw, sbuf, ccnt, cdis, rtypes, rbuf, ccnt, cdis, types, d)
                   : ERR3(MPI_Alltoallw, MPI_Ialltoallw, sbuf, cnt, dis, rtypes, rbuf, cnt, dis, types, d);
            expect_class(rc, MPI_ERR_TYPE, "MPI_Alltoallw", what, form, c);
            expect_names(rc, "MPI_Alltoallw", "sendtypes", bad, form, c);
            free(rtypes);
            /* Scan and exscan with MPI_OP_NULL. */
            rc = c ? ERR3C(MPI_Scan, MPI_Iscan, sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, d)
                   : ERR3(MPI_Scan, MPI_Iscan, sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, d);
            expect_class(rc, MPI_ERR_OP, "MPI_Scan", "op = MPI_OP_NULL", form, c);
            rc = c ? ERR3C(MPI_Exscan, MPI_Iexscan, MPI_IN_PLACE, rbuf, 1, MPI_INT, MPI_OP_NULL, d)
                   : ERR3(MPI_Exscan, MPI_Iexscan, MPI_IN_PLACE, rbuf, 1, MPI_INT, MPI_OP_NULL, d);
            expect_class(rc, MPI_ERR_OP, "MPI_Exscan", "op = MPI_OP_NULL (in place)", form, c);
        }
    /* The communicator still works, its collectives in step at every process. */
    const char *dn = "the duplicate with MPI_ERRORS_RETURN, after the refused calls";
    for (int f = 0; f < NF; f++) {
        one(C_ALLGATHERV, d, dn, f, f == 1, K_INT, SC_TINY, 0, 0);
        one(C_GATHERV, d, dn, f, 0, K_DOUBLE, SC_TINY, f % size, f == 2);
        one(C_SCAN, d, dn, f, 0, R_AFF, SC_MEDIUM, 0, 0);
    }
    int rc = MPI_Barrier(d);
    CHECK(rc == MPI_SUCCESS, "MPI_Barrier on the duplicate after the refused calls returned %d", rc);
    free(cnt), free(dis), free(ccnt), free(cdis), free(types), free(sbuf), free(rbuf);
    MPI_Comm_free(&d);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op_create(aff_fn, 0, &aff_op);

    sweep_rooted(C_GATHERV);
    sweep_rooted(C_SCATTERV);
    sweep_all(C_ALLGATHERV);
    sweep_all(C_ALLTOALL);
    sweep_all(C_ALLTOALLV);
    sweep_all(C_ALLTOALLW);
    sweep_reduction(C_RSCAT);
    sweep_reduction(C_RSCAT_BLOCK);
    sweep_reduction(C_SCAN);
    sweep_reduction(C_EXSCAN);
    zeros();
    split();
    outstanding();
    errors();

    MPI_Op_free(&aff_op);
    return mt_finish();
}
