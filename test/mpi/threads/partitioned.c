/* partitioned.c: partitioned communication with the partitions produced by threads, the way the
 * standard means it (MPI_THREAD_MULTIPLE): each process sends to the next one around a ring; in
 * every round T threads fill their share of the send buffer and mark it ready with MPI_Pready
 * (thread t owns partitions t, t + T, ...), while T other threads watch MPI_Parrived for
 * their share of the receive buffer and check each partition's data as soon as it says so.
 * The main thread starts both requests and waits for them. Partitions of the two sides differ
 * (the receiver cuts the buffer in half as many pieces). */
#include "mtthreads.h"

enum { PARTS = 32, PER = 48, ROUNDS = 25 };

static int nthreads, to, from, round_no;
static int sbuf[PARTS * PER], rbuf[PARTS * PER];
static MPI_Request sreq, rreq;
static pthread_barrier_t bar;

static int value(int i, int round, int who)
{
    return i * 17 + round * 100003 + who * 11;
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&bar); /* the main thread has started this round */
        if (t < nthreads) { /* a producer */
            for (int p = t; p < PARTS; p += nthreads) {
                for (int i = p * PER; i < (p + 1) * PER; i++)
                    sbuf[i] = value(i, round, tt_rank);
                CHECK_CLASS(MPI_Pready(p, sreq), MPI_SUCCESS);
            }
        } else { /* a consumer of the receiver's partitions (PARTS / 2, each of 2 * PER ints) */
            int me = t - nthreads, left = 0;
            for (int q = me; q < PARTS / 2; q += nthreads)
                left++;
            char seen[PARTS / 2] = {0};
            while (left > 0) {
                for (int q = me; q < PARTS / 2; q += nthreads) {
                    int flag = 0;
                    if (seen[q])
                        continue;
                    CHECK_CLASS(MPI_Parrived(rreq, q, &flag), MPI_SUCCESS);
                    if (!flag)
                        continue;
                    seen[q] = 1;
                    left--;
                    for (int i = q * 2 * PER; i < (q + 1) * 2 * PER; i++)
                        if (rbuf[i] != value(i, round, from)) {
                            CHECK(0, "round %d: receive partition %d arrived, int %d is %d, not %d", round, q, i,
                                  rbuf[i], value(i, round, from));
                            break;
                        }
                }
            }
        }
        pthread_barrier_wait(&bar); /* this round's partitions are all ready and seen */
    }
    return NULL;
}

static void *driver(void *arg)
{
    (void)arg;
    for (round_no = 0; round_no < ROUNDS; round_no++) {
        CHECK_CLASS(MPI_Start(&rreq), MPI_SUCCESS);
        CHECK_CLASS(MPI_Start(&sreq), MPI_SUCCESS);
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        MPI_Status st;
        CHECK_CLASS(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&rreq, &st), MPI_SUCCESS);
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 9, "round %d: status source %d tag %d", round_no,
              st.MPI_SOURCE, st.MPI_TAG);
        MPI_Barrier(MPI_COMM_WORLD); /* (the next round rewrites sbuf: the previous one was sent) */
    }
    return NULL;
}

static void *role(void *arg)
{
    long t = (long)arg;
    return t == 0 ? driver(NULL) : worker((void *)(t - 1));
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    nthreads = tt_threads(argc, argv, 2);
    to = (tt_rank + 1) % tt_size;
    from = (tt_rank + tt_size - 1) % tt_size;
    CHECK_CLASS(MPI_Precv_init(rbuf, PARTS / 2, 2 * PER, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Psend_init(sbuf, PARTS, PER, MPI_INT, to, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq), MPI_SUCCESS);
    pthread_barrier_init(&bar, NULL, (unsigned)(2 * nthreads + 1));
    tt_run(2 * nthreads + 1, role);
    pthread_barrier_destroy(&bar);
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
    return tt_finish();
}
