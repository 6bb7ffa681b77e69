/* The request layer on its own: a kind of request that no MPI chapter owns (like a generalized
 * request), run through MPI_Start, MPI_Test, MPI_Wait, MPI_Waitall, MPI_Cancel and
 * MPI_Request_free by its own cr_request_ops; and the progress engine with more hooks than the
 * eight it once had room for (each runs every round, in order, and can be removed). */
#include "req/request.h"
#include "cr_impl.h"
#include "unit.h"

/* ---- a toy kind: an operation that completes after `rounds` rounds of progress */

typedef struct {
    int starts, cancels, releases;
} counts;
static counts C;
static cr_request *running[16];
static int nrunning;

static int toy_start(cr_request *r)
{
    C.starts++;
    r->done = 0;
    r->offset = 3; /* rounds to go */
    cr_status_empty(&r->status);
    running[nrunning++] = r;
    return MPI_SUCCESS;
}

static void toy_finish(cr_request *r, int cancelled)
{
    for (int i = 0; i < nrunning; i++)
        if (running[i] == r)
            running[i] = running[--nrunning];
    cr_status_set(&r->status, 7, 8, 16);
    r->status.MPI_internal[2] = cancelled;
    cr_request_complete(r);
}

static int toy_cancel(cr_request *r)
{
    C.cancels++;
    toy_finish(r, 1);
    return MPI_SUCCESS;
}

static int toy_release(cr_request *r)
{
    (void)r;
    C.releases++;
    return MPI_SUCCESS;
}

static const cr_request_ops toy_ops = {toy_start, toy_cancel, toy_release};

static int toy_progress(void)
{
    int got = 0;
    for (int i = nrunning - 1; i >= 0; i--)
        if (--running[i]->offset == 0)
            toy_finish(running[i], 0), got++;
    return got;
}

/* ---- twenty hooks that count their calls */

static int calls[20], order[20], norder;
#define HOOK(i)                                                                                    \
    static int hook##i(void)                                                                       \
    {                                                                                              \
        calls[i]++;                                                                                \
        if (norder < 20)                                                                           \
            order[norder++] = i;                                                                   \
        return 0;                                                                                  \
    }
HOOK(0) HOOK(1) HOOK(2) HOOK(3) HOOK(4) HOOK(5) HOOK(6) HOOK(7) HOOK(8) HOOK(9)
HOOK(10) HOOK(11) HOOK(12) HOOK(13) HOOK(14) HOOK(15) HOOK(16) HOOK(17) HOOK(18) HOOK(19)
static cr_progress_hook *const hooks[20] = {hook0,  hook1,  hook2,  hook3,  hook4,  hook5,  hook6,
                                            hook7,  hook8,  hook9,  hook10, hook11, hook12, hook13,
                                            hook14, hook15, hook16, hook17, hook18, hook19};

static MPI_Request new_persistent(void)
{
    cr_request *r = cr_request_new(CR_REQ_OTHER, &toy_ops);
    r->persistent = 1;
    cr_status_empty(&r->status);
    return cr_request_handle(r);
}

int main(void)
{
    EXPECT(cr_progress_add_hook(toy_progress) == 0, "adding the toy's hook");

    /* Start, wait: completes by progress, the status is the one the kind set. */
    MPI_Request h = new_persistent();
    MPI_Status st;
    int flag = -1;
    EXPECT(cr_mpi_start(&h) == MPI_SUCCESS && C.starts == 1, "start");
    EXPECT(cr_mpi_start(&h) != MPI_SUCCESS, "starting an active request again is an error");
    EXPECT(cr_mpi_test(&h, &flag, &st) == MPI_SUCCESS && flag == 0, "not done after one round");
    EXPECT(cr_mpi_wait(&h, &st) == MPI_SUCCESS, "wait");
    EXPECT(st.MPI_SOURCE == 7 && st.MPI_TAG == 8 && h != MPI_REQUEST_NULL, "status %d %d, persistent handle kept",
           st.MPI_SOURCE, st.MPI_TAG);
    cr_mpi_test_cancelled(&st, &flag);
    EXPECT(flag == 0, "not cancelled");

    /* Start and cancel: the kind's cancel runs, the status says cancelled. */
    cr_mpi_start(&h);
    EXPECT(cr_mpi_cancel(&h) == MPI_SUCCESS && C.cancels == 1, "cancel ran the kind's operation");
    cr_mpi_wait(&h, &st);
    cr_mpi_test_cancelled(&st, &flag);
    EXPECT(flag == 1, "cancelled");

    /* Several at once, through the array forms. */
    MPI_Request many[5];
    for (int i = 0; i < 5; i++)
        many[i] = new_persistent();
    EXPECT(cr_mpi_startall(5, many) == MPI_SUCCESS && C.starts == 7, "startall: %d starts", C.starts);
    EXPECT(cr_mpi_waitall(5, many, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
    EXPECT(nrunning == 0, "all completed");

    /* Free: the kind lets go once per request, and not before. */
    EXPECT(C.releases == 0, "nothing released yet");
    cr_mpi_request_free(&h);
    for (int i = 0; i < 5; i++)
        cr_mpi_request_free(&many[i]);
    EXPECT(C.releases == 6 && h == MPI_REQUEST_NULL, "%d releases", C.releases);

    /* A request freed while it runs is released by its completion. */
    h = new_persistent();
    cr_mpi_start(&h);
    cr_mpi_request_free(&h);
    EXPECT(C.releases == 6, "not released while running");
    while (nrunning)
        cr_progress();
    EXPECT(C.releases == 7, "released when it completed (%d)", C.releases);

    /* Twenty hooks: all run every round, in the order added; a hook added twice runs once. */
    for (int i = 0; i < 20; i++)
        EXPECT(cr_progress_add_hook(hooks[i]) == 0, "hook %d", i);
    cr_progress_add_hook(hooks[3]);
    norder = 0;
    cr_progress();
    cr_progress();
    for (int i = 0; i < 20; i++) {
        EXPECT(calls[i] == 2, "hook %d ran %d times in two rounds", i, calls[i]);
        EXPECT(order[i] == i, "hook %d ran at place %d", order[i], i);
    }
    cr_progress_remove_hook(hooks[5]);
    cr_progress();
    EXPECT(calls[5] == 2 && calls[4] == 3 && calls[6] == 3, "a removed hook no longer runs");
    return UNIT_DONE();
}
