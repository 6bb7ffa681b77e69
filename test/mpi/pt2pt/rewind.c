/* Rewind: the shared-memory rings send a frame of 1 to 8 KiB back to the ring's start when the
 * ring is empty and the peer has just answered (src/xport/shm/shm.c, rewind_ring). This program
 * drives that from every side and checks every byte: ping-pongs of sizes that rewind and sizes
 * that do not, a small frame then a large one (the large one cannot fit before the old head),
 * bursts of frames before an answer, messages sent before their receive is posted, rendezvous
 * messages that move the ring's head far on, and synchronous sends, between partners (rank r and
 * r ^ 1) while the others' rings carry a ring exchange. Run with small rings and with the frame
 * counters near their wrap-around (testlist). With the argument `rewinds`, every process with a
 * partner on its node checks that its rings did rewind (the MPI_T counter xport.shm.rewinds). */
#include "mpitest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 1200
#define MAXB (70 * 1024)

static unsigned char pattern(int src, int round, int k, int i)
{
    return (unsigned char)(src * 29 + round * 7 + k * 101 + i * 13 + (i >> 9));
}

static void fill(unsigned char *b, int bytes, int src, int round, int k)
{
    for (int i = 0; i < bytes; i++)
        b[i] = pattern(src, round, k, i);
}

static void check(const unsigned char *b, int bytes, int src, int round, int k, const char *what)
{
    int bad = -1;
    for (int i = 0; i < bytes && bad < 0; i++)
        if (b[i] != pattern(src, round, k, i))
            bad = i;
    CHECK(bad < 0, "round %d, %s %d: %d bytes from rank %d differ at byte %d", round, what, k, bytes, src, bad);
}

/* A deterministic size for the k-th message of a round, most of them in the rewinding range. */
static int size_of(int round, int k)
{
    static const int sizes[] = {1024, 4000, 8192, 1000, 8192, 2048, 100, 8192, 1024, 8000, 6000, 0, 5000, 8192};
    uint32_t x = (uint32_t)round * 2654435761u + (uint32_t)k * 40503u;
    return sizes[(x >> 7) % (sizeof sizes / sizeof sizes[0])];
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int partner = (mt_rank ^ 1) < n ? mt_rank ^ 1 : MPI_PROC_NULL;
    int first = partner == MPI_PROC_NULL || mt_rank < partner; /* who starts each exchange */
    int right = (mt_rank + 1) % n, left = (mt_rank + n - 1) % n;
    unsigned char *out = malloc(MAXB), *in = malloc(MAXB), *burst[6];
    for (int k = 0; k < 6; k++)
        burst[k] = malloc(MAXB);

    for (int round = 0; round < ROUNDS; round++) {
        if (partner != MPI_PROC_NULL) {
            /* A ping-pong of several sizes: each side answers what it got. */
            for (int k = 0; k < 6; k++) {
                int bytes = size_of(round, k);
                if (first) {
                    fill(out, bytes, mt_rank, round, k);
                    if (k == 3)
                        MPI_Ssend(out, bytes, MPI_BYTE, partner, k, MPI_COMM_WORLD);
                    else
                        MPI_Send(out, bytes, MPI_BYTE, partner, k, MPI_COMM_WORLD);
                    MPI_Recv(in, bytes, MPI_BYTE, partner, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    check(in, bytes, partner, round, k, "answer");
                } else {
                    MPI_Recv(in, bytes, MPI_BYTE, partner, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    check(in, bytes, partner, round, k, "ping");
                    fill(out, bytes, mt_rank, round, k);
                    MPI_Send(out, bytes, MPI_BYTE, partner, k, MPI_COMM_WORLD);
                }
            }
            /* A burst of 1 to 5 messages, some before their receives are posted, then one answer,
             * then one more message: the burst decides whether that one rewinds. */
            int nb = 1 + round % 5;
            MPI_Request rq[6];
            if (first) {
                for (int k = 0; k < nb; k++) {
                    int bytes = size_of(round, 10 + k);
                    fill(burst[k], bytes, mt_rank, round, 10 + k);
                    MPI_Isend(burst[k], bytes, MPI_BYTE, partner, 100 + k, MPI_COMM_WORLD, &rq[k]);
                }
                MPI_Waitall(nb, rq, MPI_STATUSES_IGNORE);
                MPI_Recv(in, 1, MPI_BYTE, partner, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int bytes = size_of(round, 20);
                fill(out, bytes, mt_rank, round, 20);
                MPI_Send(out, bytes, MPI_BYTE, partner, 201, MPI_COMM_WORLD);
            } else {
                if (round % 2) /* let the burst arrive unexpected */
                    MPI_Probe(partner, 100 + nb - 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int k = nb - 1; k >= 0; k--) /* posted in reverse: matched by tag */
                    MPI_Irecv(burst[k], MAXB, MPI_BYTE, partner, 100 + k, MPI_COMM_WORLD, &rq[k]);
                MPI_Waitall(nb, rq, MPI_STATUSES_IGNORE);
                for (int k = 0; k < nb; k++)
                    check(burst[k], size_of(round, 10 + k), partner, round, 10 + k, "burst");
                unsigned char one = 1;
                MPI_Send(&one, 1, MPI_BYTE, partner, 200, MPI_COMM_WORLD);
                int bytes = size_of(round, 20);
                MPI_Recv(in, bytes, MPI_BYTE, partner, 201, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(in, bytes, partner, round, 20, "after burst");
            }
            /* Now and then a message that moves the head far on (long eager or rendezvous). */
            if (round % 7 == 0) {
                int bytes = MAXB - round % 1000;
                if (first) {
                    fill(out, bytes, mt_rank, round, 30);
                    MPI_Send(out, bytes, MPI_BYTE, partner, 300, MPI_COMM_WORLD);
                } else {
                    MPI_Recv(in, bytes, MPI_BYTE, partner, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    check(in, bytes, partner, round, 30, "large");
                }
            }
        }
        /* Every process: a ring exchange in both directions, sizes in the rewinding range. */
        int bytes = size_of(round, 40);
        fill(out, bytes, mt_rank, round, 40);
        MPI_Sendrecv(out, bytes, MPI_BYTE, right, 400, in, bytes, MPI_BYTE, left, 400, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        check(in, bytes, left, round, 40, "ring");
        if (round % 50 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
    }

    /* (a partner on another node is reached over TCP: no ring to rewind) */
    int partner_here = MPI_UNDEFINED;
    MPI_Comm node;
    MPI_Group world_group, node_group;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node); /* (collective) */
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node, &node_group);
    if (partner != MPI_PROC_NULL)
        MPI_Group_translate_ranks(world_group, 1, &partner, node_group, &partner_here);
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    MPI_Comm_free(&node);
    if (argc > 1 && strcmp(argv[1], "rewinds") == 0 && partner_here != MPI_UNDEFINED) {
        unsigned long long rewinds = mt_pvar_value("xport.shm.rewinds");
        CHECK(rewinds > 0, "no ring rewound (xport.shm.rewinds = %llu)", rewinds);
        /* A ping-pong of 8 KiB, which goes in two 4 KiB pieces with a header cell each, rewinds
         * like 8 KiB in one frame (it once did not: the headers counted against the limit).
         * With the default ring, pieces and limits, where a piece is 4 KiB. */
        if (!getenv("COURIER_SHM_RING_SIZE") && !getenv("COURIER_SHM_REWIND_MAX") &&
            !getenv("COURIER_SHM_PIECES_FROM") && !getenv("COURIER_EAGER_MAX")) {
            enum { PINGS = 200 };
            for (int i = 0; i < PINGS; i++) {
                fill(out, 8192, mt_rank, i, 50);
                if (first) {
                    MPI_Send(out, 8192, MPI_BYTE, partner, 500, MPI_COMM_WORLD);
                    MPI_Recv(in, 8192, MPI_BYTE, partner, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(in, 8192, MPI_BYTE, partner, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(out, 8192, MPI_BYTE, partner, 500, MPI_COMM_WORLD);
                }
                check(in, 8192, partner, i, 50, "8 KiB ping-pong");
            }
            unsigned long long more = mt_pvar_value("xport.shm.rewinds") - rewinds;
            CHECK(more >= PINGS / 2, "%llu of %d 8 KiB messages rewound", more, PINGS);
        }
    }
    free(out);
    free(in);
    for (int k = 0; k < 6; k++)
        free(burst[k]);
    return mt_finish();
}
