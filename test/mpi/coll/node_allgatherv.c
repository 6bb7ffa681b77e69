/* MPI_Allgatherv and MPI_Iallgatherv staged through the node's shared blocks
 * (src/coll/node_large.c, X_ALLGATHERV; its testlist lines also force the message algorithms,
 * and the results must be the same): blocks of different sizes, empty ones, one block far
 * larger than the others (the smaller ones stage their pieces and leave the rest to it), blocks
 * around a window's edge (128 KiB), displacements out of rank order with gaps between blocks,
 * one block of more pieces than the ring holds, a strided receive type, MPI_IN_PLACE, on
 * MPI_COMM_WORLD and a duplicate, nonblocking calls behind a pending staged MPI_Ibcast and
 * completed last first, and a long run so that the ring goes round.
 * Every element is checked, and every gap untouched. On one node with the default selection,
 * the MPI_T counter coll.allgatherv.node must count every blocking and nonblocking call. */
#include "mpitest.h"

static int rank, size;

static int val(int from, size_t i, int t)
{
    return (int)((size_t)from * 1000003u + i * 13u + (size_t)t * 101u) & 0x3fffffff;
}

enum { SHAPE_EQUAL, SHAPE_ONE_LARGE, SHAPE_MIXED, SHAPE_SOME_EMPTY, SHAPE_EDGE, SHAPE_HUGE, NSHAPES };

/* Process j's block, in ints, for shape `shape` and call tag t. */
static int count_of(int shape, int j, int t)
{
    const int window = 128 * 1024 / (int)sizeof(int);
    switch (shape) {
    case SHAPE_EQUAL: return 1000 + t % 7;
    case SHAPE_ONE_LARGE: return j == t % size ? 3 * window + 17 : j % 3;
    case SHAPE_MIXED: return (j * 7919 + t * 104729) % (2 * window);
    case SHAPE_SOME_EMPTY: return j % 2 ? 0 : 5000 + j;
    /* more pieces than the ring holds (at 3 processes sharing cores, 10 of 128 KiB a process):
     * the others stage their one piece and leave the rest to it, while it waits for the ring */
    case SHAPE_HUGE: return j == (t + 1) % size ? 600000 + t % 5 : 100 + j;
    default: return window - 1 + (j + t) % 3;
    }
}

typedef struct call {
    int *buf, *mine, *counts, *displs;
    size_t len; /* ints in buf */
    int t, shape, in_place, strided;
    MPI_Datatype rdt;
} call;

/* Displacements in reverse rank order with a gap of 3 elements after each block. */
static void prepare(call *c, int shape, int t, int in_place, int strided)
{
    *c = (call){.t = t, .shape = shape, .in_place = in_place, .strided = strided};
    c->counts = malloc((size_t)size * sizeof(int));
    c->displs = malloc((size_t)size * sizeof(int));
    int at = 0;
    for (int j = size - 1; j >= 0; j--) {
        c->counts[j] = count_of(shape, j, t);
        c->displs[j] = at;
        at += c->counts[j] + 3;
    }
    int stride = strided ? 2 : 1;
    c->len = (size_t)at * (size_t)stride + 1;
    c->buf = malloc(c->len * sizeof(int));
    for (size_t i = 0; i < c->len; i++)
        c->buf[i] = -7;
    if (strided) { /* every other int */
        MPI_Datatype v;
        MPI_Type_vector(1, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * sizeof(int), &c->rdt);
        MPI_Type_free(&v);
        MPI_Type_commit(&c->rdt);
    } else {
        c->rdt = MPI_INT;
    }
    c->mine = malloc(((size_t)c->counts[rank] + 1) * sizeof(int));
    for (int i = 0; i < c->counts[rank]; i++) {
        c->mine[i] = val(rank, (size_t)i, t);
        if (in_place)
            c->buf[((size_t)c->displs[rank] + (size_t)i) * (size_t)stride] = val(rank, (size_t)i, t);
    }
}

static void start(call *c, MPI_Comm comm, MPI_Request *req)
{
    const void *s = c->in_place ? MPI_IN_PLACE : c->mine;
    if (req)
        MPI_Iallgatherv(s, c->counts[rank], MPI_INT, c->buf, c->counts, c->displs, c->rdt, comm, req);
    else
        MPI_Allgatherv(s, c->counts[rank], MPI_INT, c->buf, c->counts, c->displs, c->rdt, comm);
}

static void check(call *c)
{
    int stride = c->strided ? 2 : 1;
    char *expect = calloc(c->len, 1); /* 1 where an element of a block goes */
    size_t bad = 0, gaps = 0;
    int first_from = -1;
    for (int j = 0; j < size; j++)
        for (int i = 0; i < c->counts[j]; i++) {
            size_t at = ((size_t)c->displs[j] + (size_t)i) * (size_t)stride;
            expect[at] = 1;
            if (c->buf[at] != val(j, (size_t)i, c->t) && !bad++)
                first_from = j;
        }
    for (size_t i = 0; i < c->len; i++)
        gaps += !expect[i] && c->buf[i] != -7;
    CHECK(bad == 0, "allgatherv (shape %d, tag %d, in place %d, strided %d): %zu wrong, the first from rank %d",
          c->shape, c->t, c->in_place, c->strided, bad, first_from);
    CHECK(gaps == 0, "allgatherv (shape %d, tag %d): %zu elements written outside the blocks", c->shape, c->t, gaps);
    if (c->strided)
        MPI_Type_free(&c->rdt);
    free(expect);
    free(c->buf), free(c->mine), free(c->counts), free(c->displs);
}

static void one(MPI_Comm comm, int shape, int t, int in_place, int strided)
{
    call c;
    prepare(&c, shape, t, in_place, strided);
    start(&c, comm, NULL);
    check(&c);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *alg = getenv("COURIER_COLL_ALLGATHERV");
    int expect_node = size > 1 && mt_one_node(MPI_COMM_WORLD) && (!alg || strcmp(alg, "auto") == 0 || strcmp(alg, "node") == 0);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int i = 0; i < 3; i++) /* (a communicator sets up its node areas at its third blocking collective) */
        MPI_Barrier(dup);
    unsigned long long node0 = mt_pvar_value("coll.allgatherv.node"), calls = 0;
    int t = 0;
    for (int shape = 0; shape < NSHAPES; shape++)
        for (int form = 0; form < 4; form++, calls += 2) {
            one(MPI_COMM_WORLD, shape, t++, form & 1, form >> 1);
            one(dup, shape, t++, form & 1, form >> 1);
        }

    /* Behind a broadcast staged through the ring too (it takes its turn first), waited for
     * last. */
    enum { NB = 4, NBCAST = 200000 };
    call c[NB];
    MPI_Request req[NB + 1];
    int *bc = malloc(NBCAST * sizeof(int));
    for (int i = 0; i < NBCAST; i++)
        bc[i] = rank == 0 ? val(0, (size_t)i, 999) : -1;
    MPI_Ibcast(bc, NBCAST, MPI_INT, 0, MPI_COMM_WORLD, &req[NB]);
    for (int k = 0; k < NB; k++, calls++) {
        prepare(&c[k], k % NSHAPES, t++, k == 2, k == 3);
        start(&c[k], MPI_COMM_WORLD, &req[k]);
    }
    for (int k = NB - 1; k >= 0; k--)
        MPI_Wait(&req[k], MPI_STATUS_IGNORE);
    MPI_Wait(&req[NB], MPI_STATUS_IGNORE);
    size_t bbad = 0;
    for (int i = 0; i < NBCAST; i++)
        bbad += bc[i] != val(0, (size_t)i, 999);
    CHECK(bbad == 0, "the broadcast before the nonblocking allgathervs: %zu wrong", bbad);
    free(bc);
    for (int k = 0; k < NB; k++)
        check(&c[k]);

    for (int k = 0; k < 120; k++, calls++) {
        one(k % 2 ? dup : MPI_COMM_WORLD, (k * 3) % NSHAPES, t++, k % 5 == 1, k % 7 == 3);
        if (k % 9 == 0) { /* another staged collective between */
            int *all = malloc((size_t)size * 3000 * sizeof(int)), mine[3000];
            for (int i = 0; i < 3000; i++)
                mine[i] = val(rank, (size_t)i, t);
            MPI_Allgather(mine, 3000, MPI_INT, all, 3000, MPI_INT, MPI_COMM_WORLD);
            size_t bad = 0;
            for (int j = 0; j < size; j++)
                for (int i = 0; i < 3000; i++)
                    bad += all[(size_t)j * 3000 + (size_t)i] != val(j, (size_t)i, t);
            CHECK(bad == 0, "the allgather between allgathervs: %zu wrong", bad);
            free(all);
            t++;
        }
    }
    MPI_Comm_free(&dup);
    unsigned long long node = mt_pvar_value("coll.allgatherv.node") - node0;
    if (expect_node)
        CHECK(node == calls, "%llu allgatherv calls staged through shared memory, %llu expected", node, calls);
    else if (alg && strcmp(alg, "node") != 0)
        CHECK(node == 0, "%llu allgatherv calls staged with COURIER_COLL_ALLGATHERV=%s", node, alg);
    return mt_finish();
}
