/* Collectives mixed with point-to-point traffic: collective messages never match user ones.
 * In each round, before a sequence of different collectives on MPI_COMM_WORLD, a duplicate, a
 * split and a duplicate of the split:
 *   - receives are posted with MPI_ANY_SOURCE and MPI_ANY_TAG (or tag 0, the first tag of a
 *     collective sequence) on each communicator;
 *   - user messages with small tags (the ones collectives use internally) are left unexpected
 *     on MPI_COMM_WORLD, and a large (rendezvous) message is in flight on the split's duplicate.
 * Then (communicators are also made and freed meanwhile): every collective's data is checked; the posted receives are still pending (MPI_Test)
 * and MPI_Iprobe sees only the user messages; finally the user messages are sent/received and
 * each receive gets exactly its user message (source, tag, contents). */
#include "blockdata.h"

static int rank, size;

typedef struct {
    int from, tag, round, magic;
} umsg;

static void check_umsg(const umsg *m, const MPI_Status *st, int from, int tag, int round, const char *what)
{
    CHECK(m->magic == 0x5eed && m->from == from && m->tag == tag && m->round == round,
          "%s: got {from %d tag %d round %d magic %#x}, expected {from %d tag %d round %d}", what, m->from, m->tag,
          m->round, m->magic, from, tag, round);
    if (st)
        CHECK(st->MPI_SOURCE == from && st->MPI_TAG == tag, "%s: status source %d tag %d, expected %d %d", what,
              st->MPI_SOURCE, st->MPI_TAG, from, tag);
}

/* A few collectives on comm, with their data checked. */
static void collectives(MPI_Comm comm, int round, int salt)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    int root = (round + salt) % p;
    char what[80];
    snprintf(what, sizeof what, "round %d collective set %d", round, salt);

    /* Bcast. */
    int *b = bd_alloc(B_INT, 500);
    if (r == root)
        bd_fill(B_INT, b, 500, bd_seed(root, round, salt, 1));
    MPI_Bcast(b, 500, MPI_INT, root, comm);
    bd_check(B_INT, b, 500, bd_seed(root, round, salt, 1), what);
    free(b);

    /* Allreduce and reduce. */
    long v = r + 1, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, comm);
    CHECK(sum == (long)p * (p + 1) / 2, "%s: allreduce gave %ld", what, sum);
    sum = -1;
    MPI_Reduce(&v, &sum, 1, MPI_LONG, MPI_MAX, root, comm);
    if (r == root)
        CHECK(sum == p, "%s: reduce MAX gave %ld", what, sum);

    /* Gather, scatter, allgather. */
    int *all = bd_alloc(B_DOUBLE_INT, 3 * p), *mine = bd_alloc(B_DOUBLE_INT, 3);
    size_t block = 3 * bd_extent(B_DOUBLE_INT);
    bd_fill(B_DOUBLE_INT, mine, 3, bd_seed(r, round, salt, 2));
    MPI_Gather(mine, 3, MPI_DOUBLE_INT, all, 3, MPI_DOUBLE_INT, root, comm);
    if (r == root)
        for (int q = 0; q < p; q++)
            bd_check(B_DOUBLE_INT, (char *)all + q * block, 3, bd_seed(q, round, salt, 2), what);
    MPI_Scatter(all, 3, MPI_DOUBLE_INT, mine, 3, MPI_DOUBLE_INT, root, comm);
    bd_check(B_DOUBLE_INT, mine, 3, bd_seed(r, round, salt, 2), what);
    MPI_Allgather(mine, 3, MPI_DOUBLE_INT, all, 3, MPI_DOUBLE_INT, comm);
    for (int q = 0; q < p; q++)
        bd_check(B_DOUBLE_INT, (char *)all + q * block, 3, bd_seed(q, round, salt, 2), what);
    free(all);
    free(mine);
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    MPI_Comm dup, split, splitdup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
    MPI_Comm_dup(split, &splitdup);
    int srank, ssize;
    MPI_Comm_rank(split, &srank);
    MPI_Comm_size(split, &ssize);
    int sleft = (srank + ssize - 1) % ssize, sright = (srank + 1) % ssize;

    const int big = 300000; /* ints: well past the eager limit */
    int *bigsend = malloc(big * sizeof(int)), *bigrecv = malloc(big * sizeof(int));

    for (int round = 0; round < 4; round++) {
        /* Receives posted before the collectives. */
        umsg ra, rb, rc, rd, early[3];
        MPI_Request pre[4], bigreq[2];
        MPI_Status st[4];
        MPI_Irecv(&ra, 4, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &pre[0]);
        MPI_Irecv(&rb, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &pre[1]);
        MPI_Irecv(&rc, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, split, &pre[2]);
        MPI_Irecv(&rd, 4, MPI_INT, MPI_ANY_SOURCE, 1, splitdup, &pre[3]);

        /* Unexpected user messages with the tags collectives use, on MPI_COMM_WORLD. */
        MPI_Request ereq[3];
        umsg esend[3];
        for (int t = 1; t <= 3; t++) {
            esend[t - 1] = (umsg){rank, t, round, 0x5eed};
            MPI_Isend(&esend[t - 1], 4, MPI_INT, right, t, MPI_COMM_WORLD, &ereq[t - 1]);
        }
        /* A large message in flight on the duplicate of the split, with a tag of its own. */
        for (int i = 0; i < big; i++)
            bigsend[i] = srank * 1000003 + i + round;
        MPI_Irecv(bigrecv, big, MPI_INT, sleft, 99, splitdup, &bigreq[0]);
        MPI_Isend(bigsend, big, MPI_INT, sright, 99, splitdup, &bigreq[1]);

        /* Communicators made and freed meanwhile (their agreement is collective traffic too). */
        MPI_Comm t1, t2;
        MPI_Comm_dup(MPI_COMM_WORLD, &t1);
        MPI_Comm_split(dup, rank % 3, rank, &t2);
        collectives(t2, round, 9);
        MPI_Comm_free(&t1);
        MPI_Comm_free(&t2);

        /* Collectives, in an order that changes with the round. */
        MPI_Comm order[4] = {MPI_COMM_WORLD, dup, split, splitdup};
        for (int k = 0; k < 4; k++)
            collectives(order[(k + round) % 4], round, k);
        collectives(MPI_COMM_WORLD, round, 7);

        /* Nothing of theirs matched the posted receives. */
        for (int k = 0; k < 4; k++) {
            int done = 1;
            MPI_Test(&pre[k], &done, MPI_STATUS_IGNORE);
            CHECK(!done, "round %d: posted receive %d completed during collectives", round, k);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* nobody sends the awaited messages before all have tested */
        /* Only the user messages are there to be probed on MPI_COMM_WORLD. */
        /* (Their sends may not complete before they are matched: with COURIER_EAGER_MAX=0 every
         * message waits for its receive.) MPI_Probe waits for each to arrive. */
        for (int t = 1; t <= 3; t++) {
            MPI_Status ps;
            MPI_Probe(left, t, MPI_COMM_WORLD, &ps);
            CHECK(ps.MPI_SOURCE == left && ps.MPI_TAG == t, "round %d: probe found source %d tag %d", round,
                  ps.MPI_SOURCE, ps.MPI_TAG);
        }
        int flag = 0;
        MPI_Status ps;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ps);
        CHECK(flag && ps.MPI_SOURCE == left && ps.MPI_TAG >= 1 && ps.MPI_TAG <= 3,
              "round %d: MPI_Iprobe(ANY, ANY) found flag %d source %d tag %d", round, flag, flag ? ps.MPI_SOURCE : -1,
              flag ? ps.MPI_TAG : -1);

        /* Now the user messages the posted receives wait for. */
        umsg sa = {rank, 0, round, 0x5eed}, sb = {rank, 5, round, 0x5eed}, sc = {srank, 6, round, 0x5eed},
             sd = {srank, 1, round, 0x5eed};
        MPI_Request sreq[4];
        MPI_Isend(&sa, 4, MPI_INT, right, 0, MPI_COMM_WORLD, &sreq[0]);
        MPI_Isend(&sb, 4, MPI_INT, right, 5, dup, &sreq[1]);
        MPI_Isend(&sc, 4, MPI_INT, sright, 6, split, &sreq[2]);
        MPI_Isend(&sd, 4, MPI_INT, sright, 1, splitdup, &sreq[3]);
        MPI_Waitall(4, pre, st);
        MPI_Waitall(4, sreq, MPI_STATUSES_IGNORE);
        check_umsg(&ra, &st[0], left, 0, round, "MPI_COMM_WORLD tag 0");
        check_umsg(&rb, &st[1], left, 5, round, "duplicate, any tag");
        check_umsg(&rc, &st[2], sleft, 6, round, "split, any tag");
        check_umsg(&rd, &st[3], sleft, 1, round, "duplicate of the split, tag 1");
        /* The early ones, newest first. */
        for (int t = 3; t >= 1; t--) {
            MPI_Status s;
            MPI_Recv(&early[t - 1], 4, MPI_INT, left, t, MPI_COMM_WORLD, &s);
            check_umsg(&early[t - 1], &s, left, t, round, "unexpected message kept across collectives");
        }
        MPI_Waitall(3, ereq, MPI_STATUSES_IGNORE);
        MPI_Waitall(2, bigreq, MPI_STATUSES_IGNORE);
        long bad = 0;
        for (int i = 0; i < big; i++)
            bad += bigrecv[i] != sleft * 1000003 + i + round;
        CHECK(bad == 0, "round %d: the large message across collectives has %ld wrong ints", round, bad);
    }

    free(bigsend);
    free(bigrecv);
    MPI_Comm_free(&splitdup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    return mt_finish();
}
