/* MPI_Alltoall and MPI_Ialltoall read in place (src/coll/node_large.c: each process reads its
 * blocks straight from the others' send buffers by cross-memory attach), and every way such a
 * call must stage instead, all processes alike, with no hang: a send or receive type that is
 * not contiguous on one process only, MPI_IN_PLACE, reads that fail (COURIER_DEBUG_COLL_UNREAD
 * makes one process's first read fail in some calls). Blocks of 1 int to several windows, on
 * MPI_COMM_WORLD and a duplicate, between staged gathers and scatters read in place (which
 * number their offers in the same sequence), nonblocking calls behind a pending MPI_Ibcast and
 * completed in reverse order, and a long run. Every element that arrived is checked, and the
 * gaps of strided types untouched. With COURIER_COLL_ALLTOALL_DIRECT=0 on one node and cross-
 * memory attach on (COURIER_SHM_CMA=on), the MPI_T counter coll.alltoall.node_read must count
 * exactly the calls that could read in place, and no other. */
#define _GNU_SOURCE /* process_vm_readv (mt_attach.h) */
#include "mpitest.h"
#include "mt_attach.h"

static int rank, size;
static int expect_reads; /* this run's settings make every eligible call read in place */
static int unread_every; /* COURIER_DEBUG_COLL_UNREAD */

static int val(int from, int to, size_t i, int t)
{
    return (int)((size_t)from * 1000003u + (size_t)to * 7919u + i * 13u + (size_t)t * 101u) & 0x3fffffff;
}

/* A type of n ints, every other int of 2n (the gaps hold -7). */
static MPI_Datatype strided(size_t n)
{
    MPI_Datatype v, r;
    MPI_Type_vector((int)n, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n * sizeof(int)), &r);
    MPI_Type_free(&v);
    MPI_Type_commit(&r);
    return r;
}

enum { PLAIN, SEND_STRIDED_ONE, RECV_STRIDED_ONE, IN_PLACE, NMODES };

typedef struct call {
    int *s, *r;
    size_t n;
    int t, mode, strided_send, strided_recv;
    MPI_Datatype st;
} call;

/* Fills the buffers of one call; `odd` is the process whose types differ in the mixed modes. */
static void prepare(call *c, size_t n, int t, int mode)
{
    int odd = t % size;
    *c = (call){.n = n, .t = t, .mode = mode};
    c->strided_send = mode == SEND_STRIDED_ONE && rank == odd;
    c->strided_recv = mode == RECV_STRIDED_ONE && rank == odd;
    c->s = malloc(2 * n * (size_t)size * sizeof(int) + 4);
    c->r = malloc(2 * n * (size_t)size * sizeof(int) + 4);
    c->st = strided(n ? n : 1);
    for (int to = 0; to < size; to++)
        for (size_t i = 0; i < n; i++) {
            size_t at = c->strided_send ? (size_t)to * 2 * n + 2 * i : (size_t)to * n + i;
            c->s[at] = val(rank, to, i, t);
            if (c->strided_send)
                c->s[at + 1] = -7;
        }
    for (size_t i = 0; i < 2 * n * (size_t)size; i++)
        c->r[i] = -7;
    if (mode == IN_PLACE)
        for (int to = 0; to < size; to++)
            for (size_t i = 0; i < n; i++)
                c->r[(size_t)to * n + i] = val(rank, to, i, t);
}

static void start(call *c, MPI_Comm comm, MPI_Request *req)
{
    const void *s = c->mode == IN_PLACE ? MPI_IN_PLACE : c->s;
    int scount = c->strided_send ? c->n > 0 : (int)c->n, rcount = c->strided_recv ? c->n > 0 : (int)c->n;
    MPI_Datatype sdt = c->strided_send ? c->st : MPI_INT, rdt = c->strided_recv ? c->st : MPI_INT;
    if (req)
        MPI_Ialltoall(s, scount, sdt, c->r, rcount, rdt, comm, req);
    else
        MPI_Alltoall(s, scount, sdt, c->r, rcount, rdt, comm);
}

static void check(call *c)
{
    size_t bad = 0, first = 0, gaps = 0;
    for (int from = 0; from < size; from++)
        for (size_t i = 0; i < c->n; i++) {
            size_t at = c->strided_recv ? (size_t)from * 2 * c->n + 2 * i : (size_t)from * c->n + i;
            if (c->r[at] != val(from, rank, i, c->t) && !bad++)
                first = (size_t)from * c->n + i;
            if (c->strided_recv && c->r[at + 1] != -7)
                gaps++;
        }
    CHECK(bad == 0, "alltoall of %zu ints (mode %d, tag %d): %zu wrong, first at %zu", c->n, c->mode, c->t, bad, first);
    CHECK(gaps == 0, "alltoall of %zu ints (mode %d, tag %d) wrote %zu gaps of the strided receive type", c->n,
          c->mode, c->t, gaps);
    CHECK(!c->strided_send || c->n == 0 || c->s[1] == -7, "alltoall wrote into the send buffer");
    MPI_Type_free(&c->st);
    free(c->s);
    free(c->r);
}

/* Calls that read in place under this run's settings: plain ones whose blocks are larger than
 * 1 KiB (smaller ones may go through the node's slots, a path of their own). A call whose read
 * fails stages, so with COURIER_DEBUG_COLL_UNREAD the count is only bounded. */
static unsigned long long reads_expected;

static void counted(const call *c)
{
    if (c->mode == PLAIN && c->n * sizeof(int) > 1024 && size > 1)
        reads_expected++;
}

static void one(MPI_Comm comm, size_t n, int t, int mode)
{
    call c;
    prepare(&c, n, t, mode);
    start(&c, comm, NULL);
    counted(&c);
    check(&c);
}

/* A gather and a scatter of `n` ints, root `root` (read and written in place when the testlist
 * sets their thresholds to 0: their offers share the alltoalls' numbering). */
static void gather_scatter(MPI_Comm comm, size_t n, int root, int t)
{
    int *mine = malloc(n * sizeof(int) + 4), *all = malloc(n * (size_t)size * sizeof(int) + 4);
    for (size_t i = 0; i < n; i++)
        mine[i] = val(rank, root, i, t);
    MPI_Gather(mine, (int)n, MPI_INT, all, (int)n, MPI_INT, root, comm);
    size_t bad = 0;
    if (rank == root)
        for (int from = 0; from < size; from++)
            for (size_t i = 0; i < n; i++)
                bad += all[(size_t)from * n + i] != val(from, root, i, t);
    CHECK(bad == 0, "gather of %zu ints to %d: %zu wrong", n, root, bad);
    if (rank == root)
        for (int to = 0; to < size; to++)
            for (size_t i = 0; i < n; i++)
                all[(size_t)to * n + i] = val(root, to, i, t + 1);
    MPI_Scatter(all, (int)n, MPI_INT, mine, (int)n, MPI_INT, root, comm);
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += mine[i] != val(root, rank, i, t + 1);
    CHECK(bad == 0, "scatter of %zu ints from %d: %zu wrong", n, root, bad);
    free(mine);
    free(all);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *direct = getenv("COURIER_COLL_ALLTOALL_DIRECT"), *cma = getenv("COURIER_SHM_CMA"),
               *unread = getenv("COURIER_DEBUG_COLL_UNREAD");
    unread_every = unread ? atoi(unread) : 0;
    int one_node = mt_one_node(MPI_COMM_WORLD);
    expect_reads = one_node && direct && strcmp(direct, "0") == 0 && cma &&
                   (strcmp(cma, "on") == 0 || strcmp(cma, "1") == 0) && mt_attach_everywhere(!one_node);
    unsigned long long reads0 = mt_pvar_value("coll.alltoall.node_read");
    size_t window = (128 * 1024 / (size_t)size) / sizeof(int);
    size_t sizes[] = {0, 1, 1000, window - 1, window + 1, 3 * window + 5, 40000};
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int t = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int mode = 0; mode < NMODES; mode++) {
            one(MPI_COMM_WORLD, sizes[i], t++, mode);
            one(dup, sizes[i], t++, mode);
        }

    /* Nonblocking: behind a pending broadcast, several at once, completed last first. */
    enum { NB = 4 };
    call c[NB];
    MPI_Request req[NB + 1];
    int b = rank == 0 ? 4242 : 0;
    MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[NB]);
    for (int k = 0; k < NB; k++) {
        prepare(&c[k], k % 2 ? window + 3 : 1500, t++, k == 2 ? SEND_STRIDED_ONE : PLAIN);
        start(&c[k], MPI_COMM_WORLD, &req[k]);
        counted(&c[k]);
    }
    for (int k = NB; k >= 0; k--)
        MPI_Wait(&req[k], MPI_STATUS_IGNORE);
    CHECK(b == 4242, "the broadcast before the nonblocking alltoalls gave %d", b);
    for (int k = 0; k < NB; k++)
        check(&c[k]);

    /* A long run, with gathers and scatters in place between (their offers and the alltoalls'
     * share one numbering), so that call numbers and the ring go round. */
    for (int k = 0; k < 150; k++) {
        size_t n = 300 + (size_t)(k * 7919) % 9000;
        one(k % 2 ? dup : MPI_COMM_WORLD, n, t++, k % 7 == 3 ? SEND_STRIDED_ONE : PLAIN);
        if (k % 4 == 0)
            gather_scatter(MPI_COMM_WORLD, n / 3 + 1, k % size, t), t += 2;
    }
    MPI_Comm_free(&dup);

    unsigned long long reads = mt_pvar_value("coll.alltoall.node_read") - reads0;
    if (expect_reads && !unread_every)
        CHECK(reads == reads_expected, "%llu alltoalls read in place, %llu expected", reads, reads_expected);
    else if (expect_reads)
        CHECK(reads > 0 && reads < reads_expected, "%llu alltoalls read in place with failed reads injected, "
              "between 1 and %llu expected", reads, reads_expected - 1);
    else if (cma && (strcmp(cma, "off") == 0 || strcmp(cma, "0") == 0))
        CHECK(reads == 0, "%llu alltoalls read in place without cross-memory attach", reads);
    return mt_finish();
}
