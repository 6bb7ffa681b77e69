/* MPI_Scan, MPI_Exscan and MPI_Reduce_scatter_block through the node component's small scan
 * slots (src/coll/node.c, up to 1 KiB per process, processes running ahead of each other)
 * and staging blocks (src/coll/node_large.c; a testlist line forces the message algorithms on
 * the same data): contiguous and lower-bound types combined straight into rbuf, an operation that does not commute (prefixes must follow rank order), exact integer
 * sums, MINLOC on a padded pair type (not combinable as packed data: the message algorithms
 * take it), a derived type with gaps, vectors from one element to several windows (128 KiB for
 * scans, 128 KiB / p per block for reduce-scatter), MPI_IN_PLACE, on MPI_COMM_WORLD and on a
 * duplicate, and a long run of calls. Every element is checked (but exscan's at rank 0, which
 * the standard leaves undefined). */
#include "mpitest.h"

#include <stdint.h>

#include "affine.h"
#include "gapped.h"

static int rank, size;

/* The same maps, each packed into one 64-bit integer (a above b): a type contiguous from its
 * start, which the slots' fold combines in place (MPI_2INT, a pair type, goes through a typed
 * scratch copy instead); odd rounds use it, so both ways meet an operation that does not commute. */
static MPI_Op op64;

static int64_t pack64(affine m)
{
    return (int64_t)((uint64_t)(uint32_t)m.a << 32 | (uint32_t)m.b);
}

static affine unpack64(int64_t v)
{
    return (affine){(int)((uint64_t)v >> 32), (int)(uint32_t)v};
}

static void compose64(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int64_t *f = in, *g = inout;
    for (int i = 0; i < *len; i++) {
        affine x = unpack64(f[i]), y = unpack64(g[i]);
        int one = 1;
        compose(&x, &y, &one, NULL);
        g[i] = pack64(y);
    }
}

static void scan_affine(MPI_Comm comm, MPI_Op op, size_t n, int k, int exclusive, int in_place)
{
    affine *in = malloc(n * sizeof *in + 8), *out = malloc(n * sizeof *out + 8);
    for (size_t i = 0; i < n; i++) {
        in[i] = map_of(rank, k, (int)i);
        out[i] = in_place ? in[i] : (affine){-5, -5};
    }
    void *sbuf = in_place ? MPI_IN_PLACE : (void *)in;
    if (k % 2) { /* odd rounds: packed */
        int64_t *in64 = malloc(n * sizeof *in64 + 8), *out64 = malloc(n * sizeof *out64 + 8);
        for (size_t i = 0; i < n; i++)
            in64[i] = pack64(in[i]), out64[i] = pack64(out[i]);
        void *sbuf64 = in_place ? MPI_IN_PLACE : (void *)in64;
        if (exclusive)
            MPI_Exscan(sbuf64, out64, (int)n, MPI_INT64_T, op64, comm);
        else
            MPI_Scan(sbuf64, out64, (int)n, MPI_INT64_T, op64, comm);
        for (size_t i = 0; i < n; i++)
            out[i] = unpack64(out64[i]);
        free(in64);
        free(out64);
    } else if (exclusive)
        MPI_Exscan(sbuf, out, (int)n, MPI_2INT, op, comm);
    else
        MPI_Scan(sbuf, out, (int)n, MPI_2INT, op, comm);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        affine w;
        if (exclusive && rank == 0) {
            break; /* undefined by the standard */
        } else {
            w = (affine){1, 0};
            for (int r = 0; r < (exclusive ? rank : rank + 1); r++) {
                affine m = map_of(r, k, (int)i);
                w = (affine){(m.a * w.a) % P, (m.a * w.b + m.b) % P};
            }
        }
        if ((out[i].a != w.a || out[i].b != w.b) && !bad++)
            first = i;
    }
    CHECK(bad == 0, "%s of %zu maps (round %d, in place %d): %zu wrong, first at %zu", exclusive ? "exscan" : "scan", n,
          k, in_place, bad, first);
    free(in);
    free(out);
}

static void scan_sum(MPI_Comm comm, size_t n, int k)
{
    long long *in = malloc(n * sizeof *in + 8), *out = malloc(n * sizeof *out + 8);
    for (size_t i = 0; i < n; i++)
        in[i] = (long long)rank * 1000 + (long long)i + k;
    MPI_Scan(in, out, (int)n, MPI_LONG_LONG, MPI_SUM, comm);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += out[i] != (long long)rank * (rank + 1) / 2 * 1000 + (long long)(rank + 1) * ((long long)i + k);
    CHECK(bad == 0, "scan sum of %zu: %zu wrong", n, bad);
    free(in);
    free(out);
}

/* Reduce-scatter-block of n maps per process, in place or not. */
static void rsb_affine(MPI_Comm comm, MPI_Op op, size_t n, int k, int in_place)
{
    affine *in = malloc(n * (size_t)size * sizeof *in + 8), *out = malloc(n * sizeof *out + 8);
    for (size_t i = 0; i < n * (size_t)size; i++)
        in[i] = map_of(rank, k, (int)i);
    if (in_place)
        MPI_Reduce_scatter_block(MPI_IN_PLACE, in, (int)n, MPI_2INT, op, comm);
    else
        MPI_Reduce_scatter_block(in, out, (int)n, MPI_2INT, op, comm);
    affine *got = in_place ? in : out;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        affine w = expected(size, k, (int)((size_t)rank * n + i));
        if ((got[i].a != w.a || got[i].b != w.b) && !bad++)
            first = i;
    }
    CHECK(bad == 0, "reduce_scatter_block of %zu maps (round %d, in place %d): %zu wrong, first at %zu", n, k, in_place,
          bad, first);
    free(in);
    free(out);
}

/* MAX through a type of two doubles each followed by a gap, and MINLOC on MPI_DOUBLE_INT. */
static void rsb_types(MPI_Comm comm, size_t n)
{
    MPI_Datatype v = gapped_doubles();
    size_t elems = n * (size_t)size; /* elements of v, 2 doubles of data each */
    double *in = malloc(elems * 4 * sizeof *in), *out = malloc(n * 4 * sizeof *out);
    for (size_t e = 0; e < elems * 4; e++)
        in[e] = e % 2 ? -3.0 : (double)((e / 2 + (size_t)rank * 5) % 17);
    for (size_t e = 0; e < n * 4; e++)
        out[e] = -9.0;
    MPI_Reduce_scatter_block(in, out, (int)n, v, MPI_MAX, comm);
    size_t bad = 0;
    for (size_t e = 0; e < n * 4; e++) {
        size_t g = (size_t)rank * n * 4 + e;
        double w = -1;
        for (int r = 0; r < size; r++) {
            double x = (double)((g / 2 + (size_t)r * 5) % 17);
            w = x > w ? x : w;
        }
        bad += e % 2 ? out[e] != -9.0 : out[e] != w;
    }
    CHECK(bad == 0, "reduce_scatter_block MAX on a type with gaps, %zu per process: %zu wrong", n, bad);
    struct {
        double v;
        int i;
    } *pin = malloc(n * (size_t)size * 16), *pout = malloc(n * 16 + 16);
    for (size_t i = 0; i < n * (size_t)size; i++)
        pin[i].v = (double)((i + (size_t)rank * 3) % 11), pin[i].i = rank;
    MPI_Reduce_scatter_block(pin, pout, (int)n, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g = (size_t)rank * n + i;
        double w = 1e9;
        int at = -1;
        for (int r = 0; r < size; r++)
            if ((double)((g + (size_t)r * 3) % 11) < w)
                w = (double)((g + (size_t)r * 3) % 11), at = r;
        bad += pout[i].v != w || pout[i].i != at;
    }
    CHECK(bad == 0, "reduce_scatter_block MINLOC, %zu per process: %zu wrong", n, bad);
    MPI_Type_free(&v);
    free(in);
    free(out);
    free(pin);
    free(pout);
}

/* Large scans on types the staged path combines straight into rbuf: a contiguous derived type
 * (3 long longs) and a single run at a nonzero lower bound (one hindexed block 24 bytes into
 * the buffer, whose first bytes must stay untouched), with MPI_SUM, blocking, nonblocking and
 * persistent, scan and exscan; and the operation that does not commute on MPI_INT64_T through
 * MPI_Iscan and MPI_Scan_init (prefixes in rank order on the direct path). */
static void scan_types(MPI_Comm comm, size_t n, int k)
{
    MPI_Datatype three, run;
    MPI_Type_contiguous(3, MPI_LONG_LONG, &three);
    MPI_Type_commit(&three);
    int len = (int)n;
    MPI_Aint disp = 24;
    MPI_Type_create_hindexed(1, &len, &disp, MPI_LONG_LONG, &run);
    MPI_Type_commit(&run);
    long long *in = malloc((n + 3) * sizeof *in), *out = malloc((n + 3) * sizeof *out);
    for (int form = 0; form < 12; form++) {
        int exclusive = form % 2, how = form / 2 % 3, shape = form / 6; /* how: blocking, i, init */
        MPI_Datatype dt = shape ? run : three;
        int count = shape ? 1 : (int)(n / 3);
        size_t first = shape ? 3 : 0, elems = shape ? n : (n / 3) * 3;
        for (size_t i = 0; i < n + 3; i++)
            in[i] = (long long)rank * 100003 + (long long)i * 7 + k + form, out[i] = -1;
        MPI_Request rq;
        if (how == 0 && exclusive)
            MPI_Exscan(in, out, count, dt, MPI_SUM, comm);
        else if (how == 0)
            MPI_Scan(in, out, count, dt, MPI_SUM, comm);
        else if (how == 1 && exclusive)
            MPI_Iexscan(in, out, count, dt, MPI_SUM, comm, &rq);
        else if (how == 1)
            MPI_Iscan(in, out, count, dt, MPI_SUM, comm, &rq);
        else if (exclusive)
            MPI_Exscan_init(in, out, count, dt, MPI_SUM, comm, MPI_INFO_NULL, &rq);
        else
            MPI_Scan_init(in, out, count, dt, MPI_SUM, comm, MPI_INFO_NULL, &rq);
        if (how == 2)
            MPI_Start(&rq);
        if (how)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (how == 2)
            MPI_Request_free(&rq);
        size_t bad = 0;
        int upto = exclusive ? rank : rank + 1;
        for (size_t i = 0; i < n + 3 && upto > 0; i++) {
            long long want = -1;
            if (i >= first && i < first + elems) {
                want = 0;
                for (int r = 0; r < upto; r++)
                    want += (long long)r * 100003 + (long long)i * 7 + k + form;
            }
            bad += out[i] != want;
        }
        CHECK(bad == 0, "%s of %zu long longs as %s (%s): %zu wrong", exclusive ? "exscan" : "scan", elems,
              shape ? "one run at lb 24" : "contiguous triples", how == 0 ? "blocking" : how == 1 ? "nonblocking" : "persistent",
              bad);
    }
    MPI_Type_free(&three);
    MPI_Type_free(&run);
    free(in);
    free(out);
    int64_t *m = malloc(n * sizeof *m), *r = malloc(n * sizeof *r);
    for (int how = 1; how < 3; how++) {
        for (size_t i = 0; i < n; i++)
            m[i] = pack64(map_of(rank, k + how, (int)i)), r[i] = 0;
        MPI_Request rq;
        if (how == 1)
            MPI_Iscan(m, r, (int)n, MPI_INT64_T, op64, comm, &rq);
        else
            MPI_Scan_init(m, r, (int)n, MPI_INT64_T, op64, comm, MPI_INFO_NULL, &rq), MPI_Start(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (how == 2)
            MPI_Request_free(&rq);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            affine w = {1, 0};
            for (int q = 0; q <= rank; q++) {
                affine x = map_of(q, k + how, (int)i);
                w = (affine){(x.a * w.a) % P, (x.a * w.b + x.b) % P};
            }
            affine got = unpack64(r[i]);
            bad += got.a != w.a || got.b != w.b;
        }
        CHECK(bad == 0, "%s scan of %zu maps that do not commute: %zu wrong", how == 1 ? "nonblocking" : "persistent", n, bad);
    }
    free(m);
    free(r);
}

/* One reduce-scatter-block in form `how`: 0 blocking, 1 nonblocking (MPI_Ireduce_scatter_block,
 * waited at once), 2 persistent (MPI_Reduce_scatter_block_init, started twice: the second start
 * must give the same result from the same input, in place too, where the first start's result
 * overwrote this process's block of the input, so that block is restored before it). */
static void rsb_form(int how, const void *sbuf, void *rbuf, void *keep, size_t keep_bytes, size_t n, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm)
{
    MPI_Request rq;
    if (how == 0) {
        MPI_Reduce_scatter_block(sbuf, rbuf, (int)n, dt, op, comm);
    } else if (how == 1) {
        MPI_Ireduce_scatter_block(sbuf, rbuf, (int)n, dt, op, comm, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
        void *saved = malloc(keep_bytes);
        memcpy(saved, keep, keep_bytes);
        MPI_Reduce_scatter_block_init(sbuf, rbuf, (int)n, dt, op, comm, MPI_INFO_NULL, &rq);
        for (int start = 0; start < 2; start++) {
            memcpy(keep, saved, keep_bytes);
            if (rbuf != keep) /* (8-byte elements: a stale result from the first start cannot pass) */
                memset(rbuf, 0x5a, n * 8);
            MPI_Start(&rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&rq);
        free(saved);
    }
}

/* Reduce-scatter-block on a contiguous type, whose own window each process combines straight
 * from its send buffer (not in place) and whose sums go straight into rbuf: the operation that
 * does not commute on MPI_INT64_T (rank order, every process's part counted once), and MPI_SUM
 * on long longs; in place too; blocking, nonblocking and persistent (`how`). n per process. */
static void rsb_direct(MPI_Comm comm, size_t n, int k, int how)
{
    size_t all = n * (size_t)size;
    int64_t *in = malloc(all * sizeof *in), *out = malloc(n * sizeof *out + 8);
    for (int in_place = 0; in_place < 2; in_place++) {
        for (size_t i = 0; i < all; i++)
            in[i] = pack64(map_of(rank, k + in_place, (int)i));
        for (size_t i = 0; i < n; i++)
            out[i] = -1;
        rsb_form(how, in_place ? MPI_IN_PLACE : (void *)in, in_place ? (void *)in : (void *)out, in,
                 all * sizeof *in, n, MPI_INT64_T, op64, comm);
        const int64_t *got = in_place ? in : out;
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            affine w = expected(size, k + in_place, (int)((size_t)rank * n + i)), g = unpack64(got[i]);
            bad += g.a != w.a || g.b != w.b;
        }
        CHECK(bad == 0, "reduce_scatter_block (form %d) of %zu int64 maps (in place %d): %zu wrong", how, n, in_place, bad);
        long long *l = (long long *)in, *lo = (long long *)out;
        for (size_t i = 0; i < all; i++)
            l[i] = (long long)rank * 1000003 + (long long)i * 3 + k;
        rsb_form(how, in_place ? MPI_IN_PLACE : (void *)l, in_place ? (void *)l : (void *)lo, l, all * sizeof *l, n,
                 MPI_LONG_LONG, MPI_SUM, comm);
        const long long *lg = in_place ? l : lo;
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            long long want = 0, idx = (long long)((size_t)rank * n + i);
            for (int q = 0; q < size; q++)
                want += (long long)q * 1000003 + idx * 3 + k;
            bad += lg[i] != want;
        }
        CHECK(bad == 0, "reduce_scatter_block (form %d) sum of %zu long longs (in place %d): %zu wrong", how, n, in_place, bad);
    }
    free(in);
    free(out);
}

/* Many outstanding nonblocking scans of one long long each (node.c's small scans, one turn at a
 * time), completed together: each must hold its own prefix sum. */
static void iscan_burst(MPI_Comm comm, int calls, int k)
{
    long long *in = malloc((size_t)calls * sizeof *in), *out = malloc((size_t)calls * sizeof *out);
    MPI_Request *rq = malloc((size_t)calls * sizeof *rq);
    for (int c = 0; c < calls; c++) {
        in[c] = (long long)rank * 7919 + c * 31 + k;
        if (c % 2)
            MPI_Iexscan(&in[c], &out[c], 1, MPI_LONG_LONG, MPI_SUM, comm, &rq[c]);
        else
            MPI_Iscan(&in[c], &out[c], 1, MPI_LONG_LONG, MPI_SUM, comm, &rq[c]);
    }
    MPI_Waitall(calls, rq, MPI_STATUSES_IGNORE);
    int bad = 0;
    for (int c = 0; c < calls; c++) {
        int upto = c % 2 ? rank : rank + 1;
        long long want = 0;
        for (int r = 0; r < upto; r++)
            want += (long long)r * 7919 + c * 31 + k;
        bad += (upto > 0 && out[c] != want);
    }
    CHECK(bad == 0, "%d of %d outstanding small scans wrong", bad, calls);
    free(in);
    free(out);
    free(rq);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op op;
    MPI_Op_create(compose, 0, &op);
    MPI_Op_create(compose64, 0, &op64);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    size_t window = 128 * 1024 / sizeof(affine), per_block = ((128 * 1024 / (size_t)size) & ~(size_t)63) / sizeof(affine);
    size_t scan_sizes[] = {1, 7, window - 1, window, window + 1, 2 * window + 3};
    /* Blocks of many windows, their total held near 640 KB (affine pairs) and 1.3 MB (int64) a
     * process past 4 processes: every element takes size - 1 combines, so a fixed block would
     * grow the work with size squared (at 16 processes under AddressSanitizer, 40001 int64 per
     * block took 24 s of the test's 38). Five windows or more at every size, never a whole
     * number of them. */
    size_t rsb_long = size <= 4 ? 40001 : 160003 / (size_t)size, rsb_affine_long = size <= 4 ? 20000 : 80001 / (size_t)size;
    size_t rsb_sizes[] = {1, 5, per_block - 1, per_block, per_block + 1, 3 * per_block + 2, rsb_affine_long};
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c ? dup : MPI_COMM_WORLD;
        for (size_t i = 0; i < sizeof scan_sizes / sizeof *scan_sizes; i++)
            for (int mode = 0; mode < 4; mode++)
                scan_affine(comm, op, scan_sizes[i], (int)i, mode & 1, mode >> 1);
        for (size_t i = 0; i < sizeof rsb_sizes / sizeof *rsb_sizes; i++) {
            rsb_affine(comm, op, rsb_sizes[i], (int)i, 0);
            rsb_affine(comm, op, rsb_sizes[i], (int)i + 50, 1);
        }
        rsb_types(comm, 3);
        rsb_types(comm, 5000);
        scan_sum(comm, 100000, c);
        scan_types(comm, 5000, c);
        scan_types(comm, 40000, c + 2);
        for (int how = 0; how < 3; how++) {
            rsb_direct(comm, 3, c, how);
            rsb_direct(comm, 5000, c + 4, how);
            rsb_direct(comm, rsb_long, c + 8, how);
        }
    }
    /* Small scans (node.c, up to 1 KiB: 128 maps; these go up to 40) back to back, with no other collective
     * between them, so processes run ahead of each other by up to its depth and beyond: sizes
     * around the limit, both kinds, in place or not, on both communicators. */
    for (int k = 0; k < 600; k++)
        scan_affine(k % 3 ? MPI_COMM_WORLD : dup, op, (size_t)(k % 40) + 1, k, k % 5 == 1, k % 7 == 3);
    iscan_burst(MPI_COMM_WORLD, 150, 1);
    iscan_burst(dup, 70, 2);
    for (int k = 0; k < 150; k++) {
        scan_affine(k % 2 ? dup : MPI_COMM_WORLD, op, (size_t)(k * 37) % 3000 + 1, k, k % 3 == 0, k % 4 == 1);
        rsb_affine(MPI_COMM_WORLD, op, (size_t)(k * 13) % 700 + 1, k, k % 2);
        if (k % 9 == 0)
            scan_sum(dup, 50, k);
    }
    MPI_Comm_free(&dup);
    MPI_Op_free(&op);
    MPI_Op_free(&op64);
    return mt_finish();
}
