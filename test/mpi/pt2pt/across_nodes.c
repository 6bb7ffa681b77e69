/* Point-to-point between nodes (the TCP transport), run with `mpiexec --simulate-nodes K`
 * (MPIEXEC_SIMULATE_NODES=K): the ranks are told they run on K nodes in blocks of consecutive
 * ranks, so ranks of different blocks talk over TCP and ranks of one block over shared memory.
 *   (a) the layout: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives this rank's block;
 *   (b) exchanges with a partner on another node at every protocol's size (eager, long eager,
 *       rendezvous streamed in frames: 1 MiB to 16 MiB), both ways at once so both sides' socket
 *       buffers fill, contiguous and strided (packed straight into the frames);
 *   (c) MPI_ANY_SOURCE over a mix of shared-memory and TCP senders: per-source order holds;
 *   (d) a flood: 24 MiB sent with MPI_Isend before the receiver posts anything (more than a
 *       connection queues before it pushes back, and more than the receiver's budget for early
 *       messages), received in order after a pause;
 *   (e) messages sent with MPI_Send just before the sender's MPI_Finalize, received by a
 *       receiver that waits first: the sender's finalize must let them all leave.
 * Without simulated nodes it runs the same over shared memory. Across real hosts (mpiexec
 * -hosts, as many ranks on each as the ranks divide evenly), TEST_NODES gives their number. */
#include "mpitest.h"

#include <stdint.h>
#include <unistd.h>

static int rank, size, nodes;

/* This rank's node in the launcher's block layout: the first size % nodes nodes one rank more. */
static int node_of(int r)
{
    int q = size / nodes, extra = size % nodes;
    return r < extra * (q + 1) ? r / (q + 1) : extra + (r - extra * (q + 1)) / q;
}

static unsigned char pattern(uint64_t i, int src, int k)
{
    return (unsigned char)(i * 131 + (uint64_t)src * 17 + (uint64_t)k * 7 + (i >> 12));
}

static int first_of(int node)
{
    int r = 0;
    while (node_of(r) != node)
        r++;
    return r;
}

/* A partner on another node (or -1): the same position in the block of node (mine ^ 1). With
 * one node, rank ^ 1 (then the exchanges run over shared memory). */
static int partner(void)
{
    if (nodes < 2)
        return (rank ^ 1) < size ? rank ^ 1 : -1;
    int me = node_of(rank), other = me ^ 1;
    if (other >= nodes)
        return -1;
    int p = first_of(other) + (rank - first_of(me));
    return p < size && node_of(p) == other ? p : -1;
}

static void exchanges(void)
{
    int p = partner();
    if (p < 0)
        return;
    const size_t sizes[] = {0, 8, 1000, 40000, 200000, 1 << 20, (size_t)5 << 20, (size_t)16 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        unsigned char *out = malloc(n + 1), *in = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            out[i] = pattern(i, rank, (int)s);
        memset(in, 0, n + 1);
        MPI_Sendrecv(out, (int)n, MPI_BYTE, p, (int)s, in, (int)n, MPI_BYTE, p, (int)s, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += in[i] != pattern(i, p, (int)s);
        CHECK(bad == 0, "exchange of %zu bytes with rank %d: %zu bytes wrong", n, p, bad);
        free(out);
        free(in);
    }
    /* strided: every other int of 2 Mi ints, into a contiguous buffer on the other side */
    int count = 1 << 20;
    MPI_Datatype vec;
    MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *sparse = malloc(2 * (size_t)count * sizeof(int)), *dense = malloc((size_t)count * sizeof(int));
    for (int i = 0; i < 2 * count; i++)
        sparse[i] = i % 2 ? -1 : rank * 10000000 + i / 2;
    MPI_Request rq[2];
    MPI_Irecv(dense, count, MPI_INT, p, 99, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(sparse, 1, vec, p, 99, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    int bad = 0;
    for (int i = 0; i < count; i++)
        bad += dense[i] != p * 10000000 + i;
    CHECK(bad == 0, "strided 4 MiB from rank %d: %d ints wrong", p, bad);
    MPI_Type_free(&vec);
    free(sparse);
    free(dense);
}

/* (c) every rank sends 300 numbered messages of varied sizes to rank 0, which takes them with
 * MPI_ANY_SOURCE. */
static void any_source(void)
{
    enum { N = 300 };
    if (rank != 0) {
        unsigned char *buf = malloc(70000);
        for (int k = 0; k < N; k++) {
            int bytes = k % 7 == 3 ? 40000 + k * 100 : 4 + k % 64;
            memcpy(buf, &k, 4);
            for (int i = 4; i < bytes; i++)
                buf[i] = pattern((uint64_t)i, rank, k);
            MPI_Send(buf, bytes, MPI_BYTE, 0, k % 5, MPI_COMM_WORLD);
        }
        free(buf);
        return;
    }
    int *next = calloc((size_t)size, sizeof *next);
    unsigned char *buf = malloc(70000);
    for (int m = 0; m < N * (size - 1); m++) {
        MPI_Status st;
        MPI_Recv(buf, 70000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int k, bytes, src = st.MPI_SOURCE;
        memcpy(&k, buf, 4);
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        CHECK(k == next[src], "from rank %d: message %d arrived when %d was due", src, k, next[src]);
        CHECK(st.MPI_TAG == k % 5 && bytes == (k % 7 == 3 ? 40000 + k * 100 : 4 + k % 64),
              "from rank %d: message %d has tag %d and %d bytes", src, k, st.MPI_TAG, bytes);
        int bad = 0;
        for (int i = 4; i < bytes; i++)
            bad += buf[i] != pattern((uint64_t)i, src, k);
        CHECK(bad == 0, "from rank %d: message %d has %d bytes wrong", src, k, bad);
        next[src] = k + 1;
    }
    free(next);
    free(buf);
}

/* (d) the last rank floods rank 0 (another node when there are several): 96 messages of 256 KiB
 * minus a little (long eager), all started before rank 0 receives any. */
static void flood(void)
{
    enum { N = 96, BYTES = (256 << 10) - 64 };
    int last = size - 1;
    if (size < 2 || (rank != 0 && rank != last))
        return;
    unsigned char *buf = malloc((size_t)N * BYTES);
    if (rank == last) {
        MPI_Request rq[N];
        for (int k = 0; k < N; k++) {
            for (size_t i = 0; i < BYTES; i++)
                buf[(size_t)k * BYTES + i] = pattern(i, last, k);
            MPI_Isend(buf + (size_t)k * BYTES, BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &rq[k]);
        }
        MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
    } else {
        usleep(300 * 1000);
        for (int k = 0; k < N; k++) {
            MPI_Recv(buf, BYTES, MPI_BYTE, last, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            size_t bad = 0;
            for (size_t i = 0; i < BYTES; i++)
                bad += buf[i] != pattern(i, last, k);
            CHECK(bad == 0, "flood message %d: %zu bytes wrong", k, bad);
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* how many nodes the launcher placed the ranks on, in blocks: TEST_NODES when the job runs
     * across hosts (mpiexec -hosts), else the simulated ones */
    const char *sim = getenv("TEST_NODES") ? getenv("TEST_NODES") : getenv("MPIEXEC_SIMULATE_NODES");
    nodes = sim ? atoi(sim) : 1;

    /* (a) */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize, expect = 0;
    MPI_Comm_size(node, &nsize);
    for (int r = 0; r < size; r++)
        expect += node_of(r) == node_of(rank);
    CHECK(nsize == expect, "%d processes share this node, expected %d of %d nodes", nsize, expect, nodes);
    MPI_Comm_free(&node);

    exchanges();
    any_source();
    MPI_Barrier(MPI_COMM_WORLD); /* the flood must not meet (c)'s wildcard receives */
    flood();

    /* (e) the first rank of the last node sends, then finalizes at once; rank 0 waits, then
     * receives (over TCP when the two are on different nodes) */
    int sender = size - 1;
    while (sender > 0 && node_of(sender - 1) == node_of(size - 1))
        sender--;
    enum { M = 24, BYTES = 200000 };
    if (sender != 0 && rank == sender) {
        unsigned char *buf = malloc(BYTES);
        for (int k = 0; k < M; k++) {
            for (int i = 0; i < BYTES; i++)
                buf[i] = pattern((uint64_t)i, sender, 1000 + k);
            MPI_Send(buf, BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
        free(buf);
    } else if (sender != 0 && rank == 0) {
        usleep(500 * 1000);
        unsigned char *buf = malloc(BYTES);
        for (int k = 0; k < M; k++) {
            MPI_Recv(buf, BYTES, MPI_BYTE, sender, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int bad = 0;
            for (int i = 0; i < BYTES; i++)
                bad += buf[i] != pattern((uint64_t)i, sender, 1000 + k);
            CHECK(bad == 0, "message %d sent before the sender's MPI_Finalize: %d bytes wrong", k, bad);
        }
        free(buf);
    }
    return mt_finish();
}
