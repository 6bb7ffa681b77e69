/* Point-to-point on other communicators:
 *   - messages on MPI_COMM_WORLD and on duplicates of it never match each other, even with the
 *     same source and tag and wildcard receives (eager and rendezvous), also with 64
 *     communicators in use at once;
 *   - on a communicator with the ranks reversed (MPI_Comm_split with key -rank), destinations
 *     and status MPI_SOURCE are ranks of that communicator, wildcard receives included;
 *   - on a communicator of a subset (even world ranks), ranks are renumbered;
 *   - MPI_COMM_SELF: rank 0 is oneself, eager and rendezvous, with MPI_ANY_SOURCE. */
#include "mpitest.h"

#define BIG 30000 /* ints: rendezvous */

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = seed * 100003 + i;
}

static int intact(const int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != seed * 100003 + i)
            return 0;
    return 1;
}

/* Receives one message and checks its source, tag, size and seed. */
static void expect(MPI_Comm comm, int src_spec, int tag_spec, int src, int tag, int n, int seed, const char *what)
{
    static int buf[BIG + 1];
    MPI_Status st;
    int count = -1;
    memset(buf, 0, sizeof buf);
    MPI_Recv(buf, BIG + 1, MPI_INT, src_spec, tag_spec, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag && count == n && intact(buf, n, seed),
          "%s: (source %d, tag %d, %d ints, first %d), expected (%d, %d, %d ints, seed %d)", what, st.MPI_SOURCE,
          st.MPI_TAG, count, buf[0], src, tag, n, seed);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *out = malloc(4 * BIG * sizeof(int));
    MPI_Request reqs[4];

    /* World and two duplicates, same source and tag. */
    MPI_Comm d1, d2;
    MPI_Comm_dup(MPI_COMM_WORLD, &d1);
    MPI_Comm_dup(d1, &d2);
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : 10;
        MPI_Comm order[3] = {d2, MPI_COMM_WORLD, d1};
        for (int k = 0; k < 3; k++) {
            fill(out + k * BIG, n, 10 * big + k);
            MPI_Isend(out + k * BIG, n, MPI_INT, peer, 5, order[k], &reqs[k]);
        }
        /* receive in another order, with wildcards */
        expect(d1, MPI_ANY_SOURCE, MPI_ANY_TAG, peer, 5, n, 10 * big + 2, "a duplicate");
        expect(MPI_COMM_WORLD, MPI_ANY_SOURCE, 5, peer, 5, n, 10 * big + 1, "MPI_COMM_WORLD");
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "MPI_COMM_WORLD sees a message of a duplicate");
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d1, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a duplicate sees a message of another one");
        expect(d2, peer, MPI_ANY_TAG, peer, 5, n, 10 * big, "the duplicate of a duplicate");
        MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD); /* the next round's messages must not meet the probes above */
    }

    /* Many communicators at once: messages sent on 64 duplicates in reverse order, received in
     * order with wildcards; each receive gets its own communicator's message. */
    enum { ND = 64 };
    MPI_Comm many[ND];
    MPI_Request mr[ND];
    int vals[ND], got[ND];
    for (int i = 0; i < ND; i++)
        MPI_Comm_dup(i % 2 ? d1 : MPI_COMM_WORLD, &many[i]);
    for (int i = ND - 1; i >= 0; i--) {
        vals[i] = rank * 1000 + i;
        MPI_Isend(&vals[i], 1, MPI_INT, peer, 0, many[i], &mr[i]);
    }
    for (int i = 0; i < ND; i++) {
        got[i] = -1;
        MPI_Recv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, many[i], MPI_STATUS_IGNORE);
        CHECK(got[i] == peer * 1000 + i, "duplicate %d received %d, expected %d", i, got[i], peer * 1000 + i);
    }
    MPI_Waitall(ND, mr, MPI_STATUSES_IGNORE);
    for (int i = 0; i < ND; i++)
        MPI_Comm_free(&many[i]);

    /* Reversed ranks. */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev);
    int rrank, rsize;
    MPI_Comm_rank(rev, &rrank);
    MPI_Comm_size(rev, &rsize);
    CHECK(rrank == size - 1 - rank && rsize == size, "reversed communicator: rank %d of %d", rrank, rsize);
    int right = (rrank + 1) % rsize, left = (rrank + rsize - 1) % rsize;
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : 7;
        fill(out, n, 100 + rrank + big);
        MPI_Isend(out, n, MPI_INT, right, 6, rev, &reqs[0]);
        expect(rev, big ? MPI_ANY_SOURCE : left, 6, left, 6, n, 100 + left + big, "reversed communicator");
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    }

    /* A subset: the even world ranks, renumbered 0, 1, ... */
    MPI_Comm even;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : 0, rank, &even);
    if (rank % 2 == 0) {
        int er, es;
        MPI_Comm_rank(even, &er);
        MPI_Comm_size(even, &es);
        CHECK(er == rank / 2 && es == (size + 1) / 2, "even communicator: rank %d of %d", er, es);
        int to = (er + 1) % es, from = (er + es - 1) % es;
        for (int big = 0; big < 2; big++) {
            int n = big ? BIG : 3;
            fill(out, n, 200 + er + big);
            MPI_Isend(out, n, MPI_INT, to, 7, even, &reqs[0]);
            expect(even, MPI_ANY_SOURCE, MPI_ANY_TAG, from, 7, n, 200 + from + big, "subset communicator");
            MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        }
        MPI_Comm_free(&even);
    } else {
        CHECK(even == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
    }

    /* MPI_COMM_SELF. */
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : 9;
        fill(out, n, 300 + big);
        MPI_Isend(out, n, MPI_INT, 0, 8, MPI_COMM_SELF, &reqs[0]);
        expect(MPI_COMM_SELF, MPI_ANY_SOURCE, 8, 0, 8, n, 300 + big, "MPI_COMM_SELF");
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    }

    MPI_Comm_free(&rev);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d1);
    free(out);
    return mt_finish();
}
