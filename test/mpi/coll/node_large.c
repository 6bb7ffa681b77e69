/* Large broadcasts and reductions on MPI_COMM_WORLD, which on one node go through the staging
 * blocks of src/coll/node_large.c (its testlist lines move the threshold to 0 so every size
 * does): sizes around a block (128 KiB) and larger than the whole ring of blocks in one call,
 * rotating roots, a derived type at the root against a plain one elsewhere, derived types in
 * reductions (combined as arrays of their element; a gap in the send buffer), MPI_IN_PLACE,
 * an operation that does not commute (results must follow rank order), MINLOC on a padded
 * pair type, and long runs of mixed calls with point-to-point traffic and small collectives in
 * between, so the ring's counters go round many times (and across 2^32 with
 * COURIER_DEBUG_SEQ_START). Every element that arrived is checked. */
#include "mpitest.h"

#include "affine.h"
#include "gapped.h"

static int rank, size;

/* Broadcast of n ints from root; the root sends them as every other int of a twice-as-long
 * array (a vector type) when `strided`. */
static void bcast_check(size_t n, int root, int tag, int strided)
{
    int *buf = malloc((strided ? 2 * n : n) * sizeof(int) + sizeof(int));
    if (rank == root) {
        for (size_t i = 0; i < n; i++)
            buf[strided ? 2 * i : i] = (int)(i * 31 + (size_t)tag);
        if (strided) {
            MPI_Datatype v;
            MPI_Type_vector((int)n, 1, 2, MPI_INT, &v);
            MPI_Type_commit(&v);
            MPI_Bcast(buf, 1, v, root, MPI_COMM_WORLD);
            MPI_Type_free(&v);
        } else {
            MPI_Bcast(buf, (int)n, MPI_INT, root, MPI_COMM_WORLD);
        }
    } else {
        memset(buf, 0xee, n * sizeof(int));
        MPI_Bcast(buf, (int)n, MPI_INT, root, MPI_COMM_WORLD);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++)
            if (buf[i] != (int)(i * 31 + (size_t)tag) && !bad++)
                first = i;
        CHECK(bad == 0, "bcast of %zu ints from %d (tag %d): %zu wrong, first at %zu", n, root, tag, bad, first);
    }
    free(buf);
}

/* Allreduce (root < 0) or reduce of n long longs with MPI_SUM, in place or not; exact sums. */
static void sum_check(size_t n, int root, int tag, int in_place)
{
    long long *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        in[i] = (long long)rank * 1000003 + (long long)i * 7 + tag;
    int at_root = root < 0 || rank == root;
    if (in_place && at_root) {
        memcpy(out, in, n * sizeof *in);
        if (root < 0)
            MPI_Allreduce(MPI_IN_PLACE, out, (int)n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Reduce(MPI_IN_PLACE, out, (int)n, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD);
    } else if (root < 0) {
        MPI_Allreduce(in, out, (int)n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    } else {
        MPI_Reduce(in, rank == root ? out : NULL, (int)n, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD);
    }
    if (at_root) {
        long long ranks = (long long)size * (size - 1) / 2;
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++)
            if (out[i] != ranks * 1000003 + (long long)size * ((long long)i * 7 + tag) && !bad++)
                first = i;
        CHECK(bad == 0, "%s of %zu (root %d, tag %d, in place %d): %zu wrong, first at %zu", root < 0 ? "allreduce" : "reduce",
              n, root, tag, in_place, bad, first);
    }
    free(in);
    free(out);
}

/* The affine composition on elements of any number of maps (a contiguous type of them). */
static void compose_wide(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int bytes;
    MPI_Type_size(*dt, &bytes);
    int maps = *len * (bytes / (int)sizeof(affine));
    compose(in, inout, &maps, dt);
}

/* A non-commutative user operation on n affine maps: the result must follow rank order. The
 * maps go as MPI_2INT (packed into the staging blocks) or as a contiguous type of `per` maps
 * (combined straight into the receive buffer, in pieces of whole elements: 12 or 10,008 bytes
 * do not divide the 8 KiB pieces, and the second is larger). In place with a contiguous type,
 * a process combines its share in its own buffer with its own data copied aside, unless an
 * element is larger than 8 KiB (src/coll/node_large.c): both ways must keep the order. */
static void affine_check(MPI_Op op, MPI_Datatype dt, int per, size_t n, int root, int k, int in_place)
{
    n -= n % (size_t)per;
    affine *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        in[i] = out[i] = map_of(rank, k, (int)i);
    const void *send = in_place && (root < 0 || rank == root) ? MPI_IN_PLACE : in;
    int count = (int)(n / (size_t)per);
    if (root < 0)
        MPI_Allreduce(send, out, count, dt, op, MPI_COMM_WORLD);
    else
        MPI_Reduce(send, out, count, dt, op, root, MPI_COMM_WORLD);
    if (root < 0 || rank == root) {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++) {
            affine w = expected(size, k, (int)i);
            if ((out[i].a != w.a || out[i].b != w.b) && !bad++)
                first = i;
        }
        CHECK(bad == 0, "affine %s of %zu in %d-map elements (root %d, round %d, in place %d): %zu wrong, first at %zu",
              root < 0 ? "allreduce" : "reduce", n, per, root, k, in_place, bad, first);
    }
    free(in);
    free(out);
}

/* MPI_MAX on a derived type with gaps (two doubles, each followed by a gap: every other double
 * of the buffers), n doubles of data in n / 2 elements; the gaps must stay untouched. */
static void vector_max_check(int n, int root)
{
    MPI_Datatype v = gapped_doubles();
    n -= n % 2;
    double *in = malloc(2 * (size_t)n * sizeof *in), *out = malloc(2 * (size_t)n * sizeof *out);
    for (int i = 0; i < 2 * n; i++) {
        in[i] = (i % 2) ? -1.0 : (double)((i / 2 + rank * 13) % (size + 5));
        out[i] = -2.0;
    }
    if (root < 0)
        MPI_Allreduce(in, out, n / 2, v, MPI_MAX, MPI_COMM_WORLD);
    else
        MPI_Reduce(in, out, n / 2, v, MPI_MAX, root, MPI_COMM_WORLD);
    if (root < 0 || rank == root) {
        int bad = 0;
        for (int i = 0; i < n; i++) {
            double w = -1;
            for (int r = 0; r < size; r++)
                w = w > (double)((i + r * 13) % (size + 5)) ? w : (double)((i + r * 13) % (size + 5));
            bad += out[2 * i] != w || out[2 * i + 1] != -2.0;
        }
        CHECK(bad == 0, "vector max of %d (root %d): %d wrong", n, root, bad);
    }
    MPI_Type_free(&v);
    free(in);
    free(out);
}

/* Floating-point sums depend on their order: MPI_IN_PLACE must give the same bits as a
 * separate send buffer (each process combines its share in rank order either way; in place it
 * once started from its own data). Values of very different magnitudes, so that an order
 * changed shows in most elements. */
static void fp_order_check(int n, int root)
{
    double *in = malloc((size_t)n * sizeof *in), *sep = malloc((size_t)n * sizeof *sep),
           *inpl = malloc((size_t)n * sizeof *inpl);
    uint32_t x = 12345u + 7919u * (uint32_t)rank;
    for (int i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        double mag = 1.0;
        for (int e = (int)(x >> 27) % 24; e > 0; e--)
            mag *= 10.0;
        in[i] = inpl[i] = ((double)((x >> 8) % 2001) - 1000.0) * mag / 1e12;
    }
    int at_root = root < 0 || rank == root;
    if (root < 0) {
        MPI_Allreduce(in, sep, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, inpl, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else {
        MPI_Reduce(in, sep, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        MPI_Reduce(at_root ? MPI_IN_PLACE : in, inpl, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    }
    if (at_root) {
        int bad = 0, first = -1;
        for (int i = 0; i < n; i++)
            if (memcmp(&sep[i], &inpl[i], sizeof(double)) != 0 && !bad++)
                first = i;
        CHECK(bad == 0, "sum of %d doubles (root %d): %d differ in place, first at %d (%.17g against %.17g)", n, root,
              bad, first, first >= 0 ? inpl[first] : 0.0, first >= 0 ? sep[first] : 0.0);
    }
    free(in);
    free(sep);
    free(inpl);
}

static void minloc_check(int n)
{
    struct {
        double v;
        int i;
    } *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    for (int i = 0; i < n; i++) {
        in[i].v = (double)((i + 3 * rank) % 7);
        in[i].i = rank;
    }
    MPI_Allreduce(in, out, n, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double w = 1e9;
        int at = -1;
        for (int r = 0; r < size; r++)
            if ((double)((i + 3 * r) % 7) < w)
                w = (double)((i + 3 * r) % 7), at = r;
        bad += out[i].v != w || out[i].i != at;
    }
    CHECK(bad == 0, "minloc of %d: %d wrong", n, bad);
    free(in);
    free(out);
}

/* Which processes combine a staged reduce (src/coll/select.c, reduce_root_alone): with 2
 * processes the root alone at every size; with more, the root alone below
 * COURIER_COLL_NODE_REDUCE_SHARED (72 KiB unless set) and every process a share from there.
 * This checks the choice (its counter); the large reduces above check the data of both ways.
 * The counters move only where the reduce was staged (not with the message algorithms forced). */
static void reduce_path_check(int *tag)
{
    const size_t sizes[] = {4096, 131072}; /* long longs: 32 KiB and 1 MiB */
    for (int k = 0; k < 2; k++) {
        unsigned long long staged = mt_pvar_value("coll.reduce.node"),
                           alone = mt_pvar_value("coll.reduce.node_root_alone");
        sum_check(sizes[k], size - 1, (*tag)++, 0);
        staged = mt_pvar_value("coll.reduce.node") - staged;
        alone = mt_pvar_value("coll.reduce.node_root_alone") - alone;
        if (staged == 0 || (size > 2 && getenv("COURIER_COLL_NODE_REDUCE_SHARED")))
            continue;
        unsigned long long want = size == 2 || sizes[k] * sizeof(long long) < 72 * 1024;
        CHECK(staged == 1 && alone == want, "reduce of %zu bytes at %d processes: staged %llu, root alone %llu (want %llu)",
              sizes[k] * sizeof(long long), size, staged, alone, want);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op op;
    MPI_Op_create(compose, 0, &op);
    const size_t block_ints = 128 * 1024 / sizeof(int);
    /* Sizes around a block, and one call larger than the whole ring: 8 (n + 1) blocks when the
     * processes share cores, at least 16 MiB when each has its own (src/xport/shm/shm.h). */
    size_t ring_blocks = (size_t)(8 * (size + 1)) > 128 ? (size_t)(8 * (size + 1)) : 128;
    size_t sizes[] = {1, 2049, block_ints - 1, block_ints, block_ints + 3, 3 * block_ints + 17,
                      (ring_blocks + 3) * block_ints + 5};
    int tag = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (int root = 0; root < size; root += (size > 3 ? size / 3 : 1)) {
            bcast_check(sizes[s], root, tag++, 0);
            bcast_check(sizes[s], root, tag++, 1);
        }
        sum_check(sizes[s] / 2 + 1, -1, tag++, 0);
        sum_check(sizes[s] / 2 + 1, -1, tag++, 1);
        sum_check(sizes[s] / 2 + 1, size - 1, tag++, 0);
        sum_check(sizes[s] / 2 + 1, 0, tag++, 1);
    }
    reduce_path_check(&tag);
    MPI_Datatype pair, triple, wide;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_contiguous(3, pair, &triple);
    MPI_Type_contiguous(1251, pair, &wide);
    MPI_Type_commit(&pair);
    MPI_Type_commit(&triple);
    MPI_Type_commit(&wide);
    MPI_Op wide_op;
    MPI_Op_create(compose_wide, 0, &wide_op);
    for (int in_place = 0; in_place < 2; in_place++) {
        struct {
            MPI_Datatype dt;
            int per;
        } types[] = {{MPI_2INT, 1}, {pair, 1}, {triple, 3}, {wide, 1251}};
        for (int t = 0; t < 4; t++) {
            MPI_Op o = types[t].per > 1 ? wide_op : op;
            affine_check(o, types[t].dt, types[t].per, 40000, -1, 1, in_place);
            affine_check(o, types[t].dt, types[t].per, 70001, size / 2, 2, in_place);
            affine_check(o, types[t].dt, types[t].per, 70001, size - 1, 4, in_place);
            affine_check(o, types[t].dt, types[t].per, 40000, 0, 5, in_place);
        }
    }
    MPI_Op_free(&wide_op);
    MPI_Type_free(&triple);
    MPI_Type_free(&wide);
    vector_max_check(50000, -1);
    vector_max_check(30001, size - 1);
    minloc_check(20000);
    fp_order_check(70001, -1);
    fp_order_check(50000, 0);
    fp_order_check(50000, size - 1);
    /* A long run of mixed calls: the ring goes round many times. */
    for (int k = 0; k < 150; k++) {
        size_t n = 3000 + (size_t)(k * 7919) % 60000;
        bcast_check(n, k % size, tag++, k % 5 == 0);
        sum_check(n / 3 + 1, k % 4 == 0 ? -1 : (k / 4) % size, tag++, k % 3 == 0);
        if (k % 10 == 0)
            affine_check(op, k % 20 == 10 ? pair : MPI_2INT, 1, 9000, k % 20 ? -1 : 0, k, k % 30 == 10);
        if (k % 7 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        if (k % 11 == 0) {
            int v = rank + k, s = -1;
            MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK(s == size * (size - 1) / 2 + size * k, "round %d small allreduce %d", k, s);
        }
        if (k % 13 == 0 && size > 1) {
            int v = rank * 1000 + k, from = -1;
            MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 5, &from, 1, MPI_INT, (rank + size - 1) % size, 5,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(from == ((rank + size - 1) % size) * 1000 + k, "round %d: sendrecv got %d", k, from);
        }
    }
    /* The same calls on a duplicate of MPI_COMM_WORLD (message algorithms) agree. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    long long x = rank + 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_LONG_LONG, MPI_SUM, dup);
    CHECK(y == (long long)size * (size + 1) / 2, "dup allreduce %lld", y);
    MPI_Comm_free(&dup);
    MPI_Op_free(&op);
    MPI_Type_free(&pair);
    return mt_finish();
}
