/* Stale context: messages sent on a communicator that is then freed unreceived (an erroneous
 * program, but one that must not corrupt the others) never match on a communicator that
 * reuses its context, whether they arrived before the free or are still in flight after it.
 * Every kind of message is left behind: eager, long eager, rendezvous, synchronous; the sends
 * still complete (their receiver answers for the dropped message). Processes whose histories
 * of communicators differ (the halves of a split) still agree on fresh context ids. */
#include "mpitest.h"

#define BIG (1 << 20)

static const int sizes[] = {8, 20000, 100000, BIG}; /* eager, long eager (two sizes), rendezvous */

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int partner = mt_rank ^ 1;
    char *sbuf = malloc(BIG), *rbuf = malloc(BIG);
    memset(sbuf, 'x', BIG);

    for (int round = 0; round < 6; round++) {
        MPI_Comm old, fresh;
        MPI_Comm_dup(MPI_COMM_WORLD, &old);
        MPI_Request reqs[8];
        int nreq = 0;
        int arrived_first = round % 2; /* free after the messages arrived, or while in flight */
        if (partner < n && mt_rank % 2 == 0) {
            for (int k = 0; k < 4; k++) {
                MPI_Isend(sbuf, sizes[k], MPI_BYTE, partner, 7, old, &reqs[nreq++]);
                MPI_Issend(sbuf, sizes[k] / 2, MPI_BYTE, partner, 7, old, &reqs[nreq++]);
            }
        }
        if (arrived_first && partner < n && mt_rank % 2 == 1) {
            int flag = 0;
            while (!flag) /* the first message is here: frames behind it are queued or coming */
                MPI_Iprobe(partner, 7, old, &flag, MPI_STATUS_IGNORE);
        }
        MPI_Comm_free(&old);
        /* The sends complete although nobody receives them (their receiver answered them). */
        MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);

        MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
        if (partner < n) {
            int flag = 1;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, fresh, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag, "round %d: a message of the freed communicator shows on its successor", round);
        }
        MPI_Barrier(fresh); /* only now does anything legitimate go out on it */
        if (partner < n) {
            int value = 1000 + round, got = -1;
            MPI_Status st;
            if (mt_rank % 2 == 0)
                MPI_Send(&value, 1, MPI_INT, partner, 7, fresh);
            else {
                MPI_Recv(&got, 1, MPI_INT, partner, 7, fresh, &st);
                int count;
                MPI_Get_count(&st, MPI_INT, &count);
                CHECK(got == value && count == 1, "round %d: received %d (%d ints) on the new communicator, expected %d",
                      round, got, count, value);
            }
        }
        MPI_Barrier(fresh);
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, fresh, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "round %d: a message is left over on the new communicator", round);
        MPI_Comm_free(&fresh);
    }

    /* Different histories: one half makes and frees more communicators than the other, then
     * all make one together, and traffic on it stays apart from the halves' own. */
    MPI_Comm half, extra, together;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half);
    for (int i = 0; i < (mt_rank % 2 ? 5 : 1); i++) {
        MPI_Comm_dup(half, &extra);
        MPI_Comm_free(&extra);
    }
    MPI_Comm_dup(half, &extra);
    MPI_Comm_dup(MPI_COMM_WORLD, &together);
    int right = (mt_rank + 1) % n, left = (mt_rank + n - 1) % n, a = mt_rank, b = -1, c = -1;
    int hsize, hrank;
    MPI_Comm_size(extra, &hsize);
    MPI_Comm_rank(extra, &hrank);
    MPI_Request rq[4];
    MPI_Irecv(&b, 1, MPI_INT, left, 3, together, &rq[0]);
    MPI_Irecv(&c, 1, MPI_INT, (hrank + hsize - 1) % hsize, 3, extra, &rq[1]);
    int neg = -mt_rank - 1;
    MPI_Isend(&a, 1, MPI_INT, right, 3, together, &rq[2]);
    MPI_Isend(&neg, 1, MPI_INT, (hrank + 1) % hsize, 3, extra, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    int hleft_world = mt_rank % 2 + 2 * ((hrank + hsize - 1) % hsize);
    CHECK(b == left, "on the common communicator: got %d from rank %d", b, left);
    CHECK(c == -hleft_world - 1, "on the half's communicator: got %d, expected %d", c, -hleft_world - 1);
    MPI_Comm_free(&together);
    MPI_Comm_free(&extra);
    MPI_Comm_free(&half);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
