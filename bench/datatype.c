/* datatype.c: derived datatypes, sent and packed. Rows (MB/s = 10^6 bytes of data per second,
 * "bytes" counts the data only, not the gaps between it):
 *   datatype_vector         ping-pong of MPI_Type_vector(n, 1, 2, MPI_DOUBLE): every other double;
 *   datatype_indexed        ping-pong of an MPI_Type_indexed of doubles with irregular blocks
 *                           (lengths cycling 1,3,7,2,5, gaps of 1,2,4 doubles cycling);
 *   datatype_subarray_face  ping-pong of one face of a grid x grid x grid array of doubles
 *                           (MPI_Type_create_subarray, subsizes {grid, grid, 1} in C order: the
 *                           face across the contiguous dimension, one double every grid doubles);
 *   datatype_pack_vector    MPI_Pack of the stride-2 vector into a contiguous buffer, one rank;
 *   datatype_unpack_vector  MPI_Unpack of it back into the strided layout, one rank;
 *   datatype_memcpy_ref     for reference: memcpy of the same number of contiguous bytes.
 * Ping-pong: rank 0 sends the type to rank 1, which receives it in the same type and sends it
 * back; bandwidth = data bytes / one-way time. Every row is the median of REPS timed
 * repetitions, each after a barrier and (the first) after warm-up iterations. The receivers check
 * a sample of elements (and of the gaps between them) after every size, so a broken datatype
 * path aborts instead of printing a figure.
 * usage: mpiexec -n 2 datatype [max_bytes [grid]]   (defaults 16 MiB and 256) */
#include "common.h"

#define REPS 5
#define SAMPLES 64

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* Where the i-th double of a layout (in type order) lies, in doubles from the buffer. */
enum kind { VECTOR, INDEXED, FACE };
struct layout {
    enum kind kind;
    size_t n;           /* doubles of data */
    size_t extent;      /* doubles the buffer must hold */
    size_t shift;       /* rank 0 receives the reply this many doubles further on */
    /* INDEXED: blocks, and how many doubles come before each */
    int nblocks, *blen, *displ;
    size_t *before;
    /* FACE: grid size, and the index of the face in the last dimension (sender, receiver) */
    size_t grid, face_send, face_recv;
};

static size_t offset(const struct layout *L, size_t i, int reply)
{
    switch (L->kind) {
    case VECTOR:
        return 2 * i + (reply ? L->shift : 0);
    case INDEXED: {
        int lo = 0, hi = L->nblocks - 1; /* the last block with before <= i */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (L->before[mid] <= i)
                lo = mid;
            else
                hi = mid - 1;
        }
        return (size_t)L->displ[lo] + (i - L->before[lo]) + (reply ? L->shift : 0);
    }
    case FACE:
        return (i / L->grid) * L->grid * L->grid + (i % L->grid) * L->grid +
               (reply ? L->face_recv : L->face_send);
    }
    return 0;
}

/* Checks the sampled elements of `buf` after a receive (`reply`: rank 0's, of the reply; else
 * rank 1's): the data must be the sender's offsets (rank 0 fills its buffer with each double's
 * own offset, rank 1 with -1), and the double after each sampled one, when it is a gap, must
 * still hold what it held before. */
static void verify(const char *what, const struct layout *L, const double *buf, int reply, int rank)
{
    for (size_t s = 0; s < SAMPLES; s++) {
        size_t i = s == SAMPLES - 1 ? L->n - 1 : s * L->n / SAMPLES + s % 7;
        if (i >= L->n)
            i = L->n - 1;
        size_t o = offset(L, i, reply);
        double want = (double)offset(L, i, 0);
        const char *bad = NULL;
        size_t at = o;
        if (buf[o] != want)
            bad = "data";
        else if (i + 1 < L->n && offset(L, i + 1, reply) > o + 1) {
            at = o + 1; /* a gap: untouched by the receive */
            want = reply ? (double)at : -1.0;
            if (buf[at] != want)
                bad = "gap";
        }
        if (bad) {
            fprintf(stderr, "datatype: %s, %zu bytes: rank %d: wrong %s at double %zu (element %zu): %g, not %g\n",
                    what, L->n * 8, rank, bad, at, i, buf[at], want);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

/* Ping-pong of `type` (one element of it); prints the row `name`. */
static void pingpong(const char *name, const struct layout *L, MPI_Datatype type, MPI_Datatype reply_type,
                     double *buf, int rank)
{
    size_t len = L->extent + L->shift;
    for (size_t o = 0; o < len; o++)
        buf[o] = rank == 0 ? (double)o : -1.0;
    size_t bytes = L->n * 8;
    int iters = iters_for(bytes, 2000, 40), warm = iters / 10 + 2;
    double t[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        for (int i = rep ? 0 : -warm; i < iters; i++) {
            if (i == 0)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, 1, type, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf + L->shift, 1, reply_type, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, 1, type, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, 1, type, 0, 1, MPI_COMM_WORLD);
            }
        }
        t[rep] = (MPI_Wtime() - t0) / iters / 2;
    }
    if (rank <= 1)
        verify(name, L, buf, rank == 0, rank);
    MPI_Barrier(MPI_COMM_WORLD); /* no figure before both sides have checked theirs */
    if (rank == 0)
        printf("%s bytes=%zu value=%.1f unit=MB/s\n", name, bytes, (double)bytes / median(t, REPS) / 1e6);
    fflush(stdout);
}

static double pack_rate(int op, MPI_Datatype vec, double *strided, char *packed, int psize, size_t bytes)
{
    void *(*volatile copy)(void *, const void *, size_t) = memcpy; /* not optimised away */
    int iters = iters_for(bytes, 4000, 100), warm = iters / 10 + 2;
    double t[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = 0;
        for (int i = rep ? 0 : -warm; i < iters; i++) {
            if (i == 0)
                t0 = MPI_Wtime();
            int pos = 0;
            if (op == 0)
                MPI_Pack(strided, 1, vec, packed, psize, &pos, MPI_COMM_SELF);
            else if (op == 1)
                MPI_Unpack(packed, psize, &pos, strided, 1, vec, MPI_COMM_SELF);
            else
                copy(packed, strided, bytes);
        }
        t[rep] = (MPI_Wtime() - t0) / iters;
    }
    return (double)bytes / median(t, REPS) / 1e6;
}

/* MPI_Pack, MPI_Unpack and memcpy of the stride-2 vector of `bytes` bytes of data, on rank 0. */
static void pack(size_t bytes, int rank)
{
    if (rank == 0) {
        size_t n = bytes / 8;
        MPI_Datatype vec;
        MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        int psize;
        MPI_Pack_size(1, vec, MPI_COMM_SELF, &psize);
        double *strided = bench_alloc(2 * n * 8);
        char *packed = bench_alloc((size_t)psize);
        for (size_t o = 0; o < 2 * n; o++)
            strided[o] = (double)o;
        /* Correctness: pack, unpack into a cleared buffer, compare. */
        int pos = 0;
        MPI_Pack(strided, 1, vec, packed, psize, &pos, MPI_COMM_SELF);
        for (size_t o = 0; o < 2 * n; o++)
            strided[o] = -1.0;
        pos = 0;
        MPI_Unpack(packed, psize, &pos, strided, 1, vec, MPI_COMM_SELF);
        struct layout L = {.kind = VECTOR, .n = n, .extent = 2 * n - 1};
        verify("pack/unpack", &L, strided, 0, rank); /* like rank 1's receive: gaps hold -1 */
        double pk = pack_rate(0, vec, strided, packed, psize, bytes);
        double un = pack_rate(1, vec, strided, packed, psize, bytes);
        double mc = pack_rate(2, vec, strided, packed, psize, bytes);
        printf("datatype_pack_vector bytes=%zu value=%.1f unit=MB/s\n", bytes, pk);
        printf("datatype_unpack_vector bytes=%zu value=%.1f unit=MB/s\n", bytes, un);
        printf("datatype_memcpy_ref bytes=%zu value=%.1f unit=MB/s\n", bytes, mc);
        fflush(stdout);
        bench_free(packed);
        bench_free(strided);
        MPI_Type_free(&vec);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)16 << 20;
    size_t grid = argc > 2 ? (size_t)atol(argv[2]) : 256;

    /* One buffer for the vector and indexed rows: rank 0 keeps its data and the reply side by
     * side (the vector's reply lands in its gaps, the indexed one's after it; an indexed type's
     * extent is about 1.65 times its data). */
    size_t nmax = max / 8, cap_doubles = 4 * nmax + 64;
    double *buf = bench_alloc(cap_doubles * 8);

    static const size_t vsizes[] = {1 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
    for (size_t s = 0; s < sizeof vsizes / sizeof *vsizes && vsizes[s] <= max; s++) {
        size_t n = vsizes[s] / 8;
        struct layout L = {.kind = VECTOR, .n = n, .extent = 2 * n - 1, .shift = 1};
        MPI_Datatype vec;
        MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        pingpong("datatype_vector", &L, vec, vec, buf, rank);
        MPI_Type_free(&vec);
    }

    static const size_t isizes[] = {64 << 10, 1 << 20, 16 << 20};
    static const int lens[] = {1, 3, 7, 2, 5}, gaps[] = {1, 2, 4};
    for (size_t s = 0; s < sizeof isizes / sizeof *isizes && isizes[s] <= max; s++) {
        size_t n = isizes[s] / 8;
        int cap = (int)n + 1, nb = 0;
        int *blen = malloc(cap * sizeof(int)), *displ = malloc(cap * sizeof(int));
        size_t *before = malloc(cap * sizeof(size_t));
        size_t have = 0, at = 0;
        while (have < n) {
            int l = lens[nb % 5];
            if ((size_t)l > n - have)
                l = (int)(n - have);
            blen[nb] = l, displ[nb] = (int)at, before[nb] = have;
            have += l, at += l + gaps[nb % 3];
            nb++;
        }
        struct layout L = {.kind = INDEXED, .n = n, .nblocks = nb, .blen = blen, .displ = displ, .before = before};
        L.extent = (size_t)displ[nb - 1] + blen[nb - 1];
        L.shift = L.extent;
        if (2 * L.extent > cap_doubles) {
            fprintf(stderr, "datatype: indexed extent too large\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Datatype idx;
        MPI_Type_indexed(nb, blen, displ, MPI_DOUBLE, &idx);
        MPI_Type_commit(&idx);
        pingpong("datatype_indexed", &L, idx, idx, buf, rank);
        MPI_Type_free(&idx);
        free(blen), free(displ), free(before);
    }
    bench_free(buf);

    if (grid >= 2) {
        /* The face across the contiguous dimension; rank 0 sends the first one and gets the
         * reply into the last one. */
        int sizes[3] = {(int)grid, (int)grid, (int)grid}, sub[3] = {(int)grid, (int)grid, 1};
        int lo[3] = {0, 0, 0}, hi[3] = {0, 0, (int)grid - 1};
        MPI_Datatype face, face_hi;
        MPI_Type_create_subarray(3, sizes, sub, lo, MPI_ORDER_C, MPI_DOUBLE, &face);
        MPI_Type_create_subarray(3, sizes, sub, hi, MPI_ORDER_C, MPI_DOUBLE, &face_hi);
        MPI_Type_commit(&face);
        MPI_Type_commit(&face_hi);
        struct layout L = {.kind = FACE, .n = grid * grid, .extent = grid * grid * grid, .grid = grid,
                           .face_send = 0, .face_recv = grid - 1};
        double *g = bench_alloc(L.extent * 8);
        pingpong("datatype_subarray_face", &L, face, face_hi, g, rank);
        bench_free(g);
        MPI_Type_free(&face);
        MPI_Type_free(&face_hi);
    }

    static const size_t psizes[] = {64 << 10, 1 << 20, 16 << 20};
    for (size_t s = 0; s < sizeof psizes / sizeof *psizes && psizes[s] <= max; s++)
        pack(psizes[s], rank);

    MPI_Finalize();
    return 0;
}
