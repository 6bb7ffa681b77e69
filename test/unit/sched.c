/* Collective schedules on their own: a schedule of messages (to this process, over
 * MPI_COMM_SELF), fences, reductions, copies and call steps that poll, run blocking, as a
 * nonblocking request and as a persistent one started again and again. Checks the order the
 * dependencies impose, the data, and that an error in a step or in building ends the run with
 * that error. */
#include "coll/coll.h"
#include "comm/comm.h"
#include "cr_impl.h"
#include "unit.h"

#include <mpi.h>

/* A call step that is "not yet" for its first `arg` calls, recording when it finally ran. */
static int order[64], norder;
static int polls_left;

static int poll_step(cr_sched *s, void *arg)
{
    (void)s;
    if (polls_left > 0) {
        polls_left--;
        return CR_SCHED_AGAIN;
    }
    order[norder++] = (int)(intptr_t)arg;
    return MPI_SUCCESS;
}

static int mark(cr_sched *s, void *arg)
{
    (void)s;
    order[norder++] = (int)(intptr_t)arg;
    return MPI_SUCCESS;
}

static int fail_step(cr_sched *s, void *arg)
{
    (void)s;
    (void)arg;
    return MPI_ERR_OTHER;
}

/* in: {1..n}; out after the schedule: buf = in + received copy of in (sum), then copied to dst,
 * with marks 1 (start), 2 (after the poll), 3 (after the fence: messages done). */
static int a[100], b[100], c[100], dst[100];

static void build(cr_sched *s, int n)
{
    cr_dtype *i32 = cr_dtype_get(MPI_INT);
    cr_op *sum = cr_op_get(MPI_SUM);
    cr_sched_call(s, mark, (void *)1);
    cr_sched_recv(s, b, n, i32, 0);
    cr_sched_send(s, a, n, i32, 0);
    cr_sched_call(s, poll_step, (void *)2);
    cr_sched_fence(s);
    cr_sched_call(s, mark, (void *)3);
    cr_sched_reduce(s, a, b, n, i32, sum); /* b = a + b = 2a */
    cr_sched_copy(s, b, n, i32, c, n, i32);
    cr_sched_reduce(s, c, b, n, i32, sum); /* b = 4a */
    cr_sched_copy(s, b, n, i32, dst, n, i32);
}

static void reset(int n, int base)
{
    for (int i = 0; i < n; i++)
        a[i] = base + i, b[i] = c[i] = dst[i] = -1;
    norder = 0;
    polls_left = 5;
}

static void check(int n, int base, const char *how)
{
    for (int i = 0; i < n; i++)
        EXPECT(dst[i] == 4 * (base + i), "%s: dst[%d] = %d, want %d", how, i, dst[i], 4 * (base + i));
    EXPECT(norder == 3 && order[0] == 1 && order[1] == 2 && order[2] == 3, "%s: steps ran out of order (%d marks)", how,
           norder);
    EXPECT(polls_left == 0, "%s: the poll step was not retried until done", how);
}

int main(void)
{
    MPI_Init(NULL, NULL);
    cr_comm *self = cr_comm_get(MPI_COMM_SELF);

    /* Blocking, with enough steps to grow past the inline array. */
    for (int n = 1; n <= 100; n += 33) {
        reset(n, 10 * n);
        cr_sched s;
        cr_sched_init(&s, self);
        build(&s, n);
        for (int k = 0; k < 20; k++)
            cr_sched_call(&s, mark, (void *)(intptr_t)(100 + k));
        EXPECT(cr_sched_run(&s) == MPI_SUCCESS, "blocking run failed");
        norder = 3; /* the 20 extra marks follow */
        check(n, 10 * n, "blocking");
    }

    /* Nonblocking: returns before the poll step is done; MPI_Test drives it. */
    {
        reset(50, 7);
        cr_sched *s = cr_sched_new(self);
        build(s, 50);
        MPI_Request r;
        EXPECT(cr_sched_post(s, false, &r) == MPI_SUCCESS, "post failed");
        EXPECT(norder == 1, "the schedule ran past a step that was not done (%d marks)", norder);
        int flag = 0, tests = 0;
        while (!flag && tests < 1000)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE), tests++;
        EXPECT(flag && r == MPI_REQUEST_NULL, "nonblocking schedule did not complete");
        check(50, 7, "nonblocking");
    }

    /* A fence holds back what follows until the receive before it is matched: schedule A
     * waits on a message that schedule B (given A's tag) sends only later. */
    {
        reset(8, 40);
        cr_dtype *i32 = cr_dtype_get(MPI_INT);
        cr_sched *sa = cr_sched_new(self);
        cr_sched_recv(sa, b, 8, i32, 0);
        cr_sched_fence(sa);
        cr_sched_call(sa, mark, (void *)3);
        MPI_Request r;
        EXPECT(cr_sched_post(sa, false, &r) == MPI_SUCCESS, "post failed");
        for (int k = 0; k < 10; k++) {
            int flag = 1;
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            EXPECT(!flag && norder == 0, "the step after the fence ran before the receive was matched");
        }
        cr_sched sb;
        cr_sched_init(&sb, self);
        sb.tag = sa->tag;
        cr_sched_send(&sb, a, 8, i32, 0);
        EXPECT(cr_sched_run(&sb) == MPI_SUCCESS, "the matching send failed");
        EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && norder == 1 && order[0] == 3,
               "the fenced step did not run after the receive completed");
        EXPECT(b[7] == 47, "received b[7] = %d, want 47", b[7]);
    }

    /* Persistent: the same schedule, started again on new data. */
    {
        cr_sched *s = cr_sched_new(self);
        build(s, 20);
        MPI_Request r;
        EXPECT(cr_sched_post(s, true, &r) == MPI_SUCCESS, "persistent post failed");
        for (int it = 0; it < 30; it++) {
            reset(20, it * 3);
            EXPECT(MPI_Start(&r) == MPI_SUCCESS, "start %d failed", it);
            EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait %d failed", it);
            check(20, it * 3, "persistent");
        }
        EXPECT(r != MPI_REQUEST_NULL, "a persistent request stays after its wait");
        MPI_Request_free(&r);
    }

    /* An error in a step ends the run with it: later steps never start, and the messages
     * already started still finish (their requests live in the steps). */
    {
        reset(4, 5);
        cr_dtype *i32 = cr_dtype_get(MPI_INT);
        cr_sched s;
        cr_sched_init(&s, self);
        cr_sched_recv(&s, b, 4, i32, 0);
        cr_sched_send(&s, a, 4, i32, 0);
        cr_sched_call(&s, fail_step, NULL);
        cr_sched_call(&s, mark, (void *)9);
        EXPECT(cr_sched_run(&s) == MPI_ERR_OTHER, "a failing step's error is the run's");
        EXPECT(norder == 0, "a step after the failure ran");
        EXPECT(b[3] == 8, "the receive started before the failure finished (b[3] = %d)", b[3]);
    }

    /* A schedule whose build failed reports the build's error without running. */
    {
        reset(4, 0);
        cr_sched s;
        cr_sched_init(&s, self);
        cr_sched_call(&s, mark, (void *)1);
        cr_sched_fail(&s, MPI_ERR_NO_MEM);
        cr_sched_call(&s, mark, (void *)2);
        EXPECT(cr_sched_run(&s) == MPI_ERR_NO_MEM, "a failed build reports its error");
        EXPECT(norder == 0, "a failed build ran %d steps", norder);
    }

    MPI_Finalize();
    return UNIT_DONE();
}
