/* sent_at_once.c: nonblocking sends that are complete when they start. A small standard or
 * ready send that the transport takes at once gets a request shared with every other such send
 * (cr_request_sent): read-only, never released. Each round sends 64 small messages around a
 * ring of processes and completes them through every call that takes a request: Wait, Test,
 * Request_get_status then Request_free, Cancel then Wait (told to the receiver), Request_free
 * alone, and Waitall, Waitany or Testsome over the rest; MPI_Start on one must fail with
 * MPI_ERR_REQUEST and leave it usable. 300 rounds: a shared request that went back to the pool
 * would be handed out again as someone's receive, and the data or the handles would show it.
 * Sends that do not complete at once (rings full: the receiver posts late in odd rounds) take
 * the ordinary path in the same arrays, so the two kinds mix in every completion call. */
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>

#define K 64
#define ROUNDS 300

static int rank, size, next, prev;

static void check_sent_status(const MPI_Status *st, const char *what, int round, int i)
{
    int cancelled = -1;
    MPI_Test_cancelled(st, &cancelled);
    CHECK(cancelled == 0, "round %d send %d: %s reports a cancelled send", round, i, what);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mt_errors_return();
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;

    int64_t out[K], in[K];
    MPI_Request sreq[K], rreq[K];
    for (int round = 0; round < ROUNDS; round++) {
        bool late = round % 2; /* odd rounds: the messages arrive before their receives */
        for (int i = 0; i < K; i++)
            in[i] = -1;
        if (!late)
            for (int i = 0; i < K; i++)
                MPI_Irecv(&in[i], 1, MPI_INT64_T, prev, i, MPI_COMM_WORLD, &rreq[i]);
        for (int i = 0; i < K; i++) {
            out[i] = (int64_t)round * 1000 + i + (int64_t)rank * 1000000;
            CHECK(MPI_Isend(&out[i], 1, MPI_INT64_T, next, i, MPI_COMM_WORLD, &sreq[i]) == MPI_SUCCESS,
                  "round %d: MPI_Isend %d failed", round, i);
            CHECK(sreq[i] != MPI_REQUEST_NULL, "round %d: MPI_Isend %d gave MPI_REQUEST_NULL", round, i);
        }

        /* MPI_Start on a request that is not persistent: an error, and the request unchanged. */
        MPI_Request keep = sreq[4];
        CHECK_CLASS(MPI_Start(&sreq[4]), MPI_ERR_REQUEST);
        CHECK(sreq[4] == keep, "round %d: a failed MPI_Start changed the handle", round);

        int cancelled[K] = {0};
        MPI_Request rest[K];
        int nrest = 0, restidx[K];
        for (int i = 0; i < K; i++) {
            MPI_Status st;
            int flag = 0;
            switch (i % 8) {
            case 0:
                MPI_Wait(&sreq[i], &st);
                check_sent_status(&st, "MPI_Wait", round, i);
                break;
            case 1:
                while (!flag)
                    MPI_Test(&sreq[i], &flag, &st);
                check_sent_status(&st, "MPI_Test", round, i);
                break;
            case 2:
                while (!flag)
                    MPI_Request_get_status(sreq[i], &flag, &st);
                check_sent_status(&st, "MPI_Request_get_status", round, i);
                CHECK(sreq[i] != MPI_REQUEST_NULL, "round %d: MPI_Request_get_status freed the request", round);
                MPI_Request_free(&sreq[i]);
                break;
            case 3:
                CHECK(MPI_Cancel(&sreq[i]) == MPI_SUCCESS, "round %d: MPI_Cancel of send %d failed", round, i);
                MPI_Wait(&sreq[i], &st);
                MPI_Test_cancelled(&st, &cancelled[i]);
                break;
            case 4:
                MPI_Request_free(&sreq[i]);
                break;
            default:
                restidx[nrest] = i;
                rest[nrest++] = sreq[i];
                sreq[i] = MPI_REQUEST_NULL;
            }
            CHECK(sreq[i] == MPI_REQUEST_NULL, "round %d: send %d's handle is not MPI_REQUEST_NULL after completion",
                  round, i);
        }
        MPI_Status sts[K];
        if (round % 3 == 0) {
            CHECK(MPI_Waitall(nrest, rest, sts) == MPI_SUCCESS, "round %d: MPI_Waitall failed", round);
            for (int j = 0; j < nrest; j++)
                check_sent_status(&sts[j], "MPI_Waitall", round, restidx[j]);
        } else if (round % 3 == 1) {
            int seen[K] = {0};
            for (int j = 0; j < nrest; j++) {
                int index = -1;
                MPI_Waitany(nrest, rest, &index, &sts[0]);
                CHECK(index >= 0 && index < nrest && !seen[index], "round %d: MPI_Waitany gave index %d", round, index);
                if (index >= 0 && index < nrest)
                    seen[index] = 1;
            }
            int index = 0;
            MPI_Waitany(nrest, rest, &index, &sts[0]);
            CHECK(index == MPI_UNDEFINED, "round %d: MPI_Waitany over completed sends gave %d", round, index);
        } else {
            int left = nrest;
            while (left > 0) {
                int n = 0, idx[K];
                MPI_Testsome(nrest, rest, &n, idx, sts);
                CHECK(n != MPI_UNDEFINED && n <= left, "round %d: MPI_Testsome gave %d of %d", round, n, left);
                if (n == MPI_UNDEFINED)
                    break;
                left -= n;
            }
        }
        for (int j = 0; j < nrest; j++)
            CHECK(rest[j] == MPI_REQUEST_NULL, "round %d: a completed send's handle was left set", round);

        /* The receiver learns which sends were cancelled (none here, but any MPI may). */
        int theirs[K];
        MPI_Sendrecv(cancelled, K, MPI_INT, next, K + 1, theirs, K, MPI_INT, prev, K + 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (late)
            for (int i = 0; i < K; i++)
                if (!theirs[i])
                    MPI_Irecv(&in[i], 1, MPI_INT64_T, prev, i, MPI_COMM_WORLD, &rreq[i]);
                else
                    rreq[i] = MPI_REQUEST_NULL;
        else
            for (int i = 0; i < K; i++)
                if (theirs[i]) {
                    MPI_Cancel(&rreq[i]);
                    MPI_Request_free(&rreq[i]);
                }
        MPI_Waitall(K, rreq, sts);
        for (int i = 0; i < K; i++) {
            int64_t want = (int64_t)round * 1000 + i + (int64_t)prev * 1000000;
            if (theirs[i])
                continue;
            CHECK(in[i] == want, "round %d: message %d from %d holds %lld, expected %lld", round, i, prev,
                  (long long)in[i], (long long)want);
            CHECK(sts[i].MPI_SOURCE == prev && sts[i].MPI_TAG == i, "round %d: message %d's status (%d, %d)", round,
                  i, sts[i].MPI_SOURCE, sts[i].MPI_TAG);
        }

        /* A ready send, its receive posted before the barrier. */
        int64_t rv = -1, sv = round + 7;
        MPI_Request rr, rs;
        MPI_Irecv(&rv, 1, MPI_INT64_T, prev, K, MPI_COMM_WORLD, &rr);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Irsend(&sv, 1, MPI_INT64_T, next, K, MPI_COMM_WORLD, &rs);
        MPI_Status st;
        MPI_Wait(&rs, &st);
        check_sent_status(&st, "MPI_Wait of MPI_Irsend", round, K);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        CHECK(rv == round + 7, "round %d: the ready send brought %lld", round, (long long)rv);
    }
    return mt_finish();
}
