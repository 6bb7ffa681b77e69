/* Errors of a generalized request's own functions reach the call that ran them:
 *   - query_fn's error is the completion call's (MPI_Wait, MPI_Test; MPI_Waitall reports it as
 *     MPI_ERR_IN_STATUS with the status's MPI_ERROR);
 *   - free_fn's error, when query_fn succeeded, is the error of the call that released the
 *     request: MPI_Wait, MPI_Test, MPI_Waitall (per status), MPI_Request_free of a completed
 *     request, MPI_Grequest_complete of a request the user freed before;
 *   - cancel_fn's error is MPI_Cancel's;
 *   - free_fn runs exactly once in each case, after query_fn; a request whose functions all
 *     succeed completes with MPI_SUCCESS and the status query_fn gave.
 * (mpi4py's test_grequest raises Python exceptions in these functions and expects them back.) */
#include "mpitest.h"

typedef struct {
    int query_err, free_err, cancel_err; /* what each function returns */
    int queried, freed, cancelled;       /* how often each ran */
    int freed_before_query;              /* free_fn ran while query_fn had not */
} gstate;

static int g_query(void *extra, MPI_Status *st)
{
    gstate *g = extra;
    g->queried++;
    MPI_Status_set_elements(st, MPI_BYTE, 7);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 44;
    return g->query_err;
}

static int g_free(void *extra)
{
    gstate *g = extra;
    g->freed++;
    if (!g->queried)
        g->freed_before_query = 1;
    return g->free_err;
}

static int g_cancel(void *extra, int complete)
{
    (void)complete;
    gstate *g = extra;
    g->cancelled++;
    return g->cancel_err;
}

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Starts a completed request with these results. */
static MPI_Request started(gstate *g, int query_err, int free_err, int cancel_err, int complete)
{
    *g = (gstate){query_err, free_err, cancel_err, 0, 0, 0, 0};
    MPI_Request r;
    CHECK_CLASS(MPI_Grequest_start(g_query, g_free, g_cancel, g, &r), MPI_SUCCESS);
    if (complete)
        CHECK_CLASS(MPI_Grequest_complete(r), MPI_SUCCESS);
    return r;
}

enum { BY_WAIT, BY_TEST, BY_WAITALL, NWAYS };
static const char *const way_name[NWAYS] = {"MPI_Wait", "MPI_Test", "MPI_Waitall"};

/* Completes r the given way; returns the call's error class and the status's. */
static int complete_by(int way, MPI_Request *r, MPI_Status *st, int *status_class)
{
    int rc, flag = 0;
    st->MPI_ERROR = -12345;
    if (way == BY_WAIT) {
        rc = MPI_Wait(r, st);
    } else if (way == BY_TEST) {
        rc = MPI_Test(r, &flag, st);
        CHECK(flag, "MPI_Test of a completed generalized request gave flag 0");
    } else {
        rc = MPI_Waitall(1, r, st);
    }
    *status_class = class_of(st->MPI_ERROR);
    return class_of(rc);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_errors_return();
    gstate g;
    MPI_Status st;
    int sc;

    for (int way = 0; way < NWAYS; way++) {
        const char *w = way_name[way];
        /* All succeed: the status is query_fn's. */
        MPI_Request r = started(&g, MPI_SUCCESS, MPI_SUCCESS, MPI_SUCCESS, 1);
        int cls = complete_by(way, &r, &st, &sc);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(cls == MPI_SUCCESS && r == MPI_REQUEST_NULL, "%s of a request that succeeded: class %d", w, cls);
        CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 44 && count == 7, "%s: status source %d tag %d count %d, "
              "expected query_fn's 3, 44, 7", w, st.MPI_SOURCE, st.MPI_TAG, count);
        CHECK(g.queried >= 1 && g.freed == 1 && !g.freed_before_query, "%s: query_fn ran %d times, free_fn %d "
              "(before query_fn: %d)", w, g.queried, g.freed, g.freed_before_query);

        /* query_fn fails. */
        r = started(&g, MPI_ERR_BUFFER, MPI_SUCCESS, MPI_SUCCESS, 1);
        cls = complete_by(way, &r, &st, &sc);
        int want = way == BY_WAITALL ? MPI_ERR_IN_STATUS : MPI_ERR_BUFFER;
        CHECK(cls == want, "%s with query_fn failing: class %d, expected %d", w, cls, want);
        if (way == BY_WAITALL)
            CHECK(sc == MPI_ERR_BUFFER, "%s with query_fn failing: status class %d, expected %d", w, sc,
                  MPI_ERR_BUFFER);
        CHECK(g.freed == 1 && r == MPI_REQUEST_NULL, "%s with query_fn failing: free_fn ran %d times, the "
              "request is %snull", w, g.freed, r == MPI_REQUEST_NULL ? "" : "not ");

        /* free_fn fails (query_fn succeeds): the completion call reports it. */
        r = started(&g, MPI_SUCCESS, MPI_ERR_OTHER, MPI_SUCCESS, 1);
        cls = complete_by(way, &r, &st, &sc);
        want = way == BY_WAITALL ? MPI_ERR_IN_STATUS : MPI_ERR_OTHER;
        CHECK(cls == want, "%s with free_fn failing: class %d, expected %d", w, cls, want);
        if (way == BY_WAITALL)
            CHECK(sc == MPI_ERR_OTHER, "%s with free_fn failing: status class %d, expected %d", w, sc,
                  MPI_ERR_OTHER);
        CHECK(g.freed == 1 && !g.freed_before_query && r == MPI_REQUEST_NULL, "%s with free_fn failing: free_fn "
              "ran %d times (before query_fn: %d)", w, g.freed, g.freed_before_query);

        /* Both fail: query_fn's error is the operation's. */
        r = started(&g, MPI_ERR_BUFFER, MPI_ERR_OTHER, MPI_SUCCESS, 1);
        cls = complete_by(way, &r, &st, &sc);
        want = way == BY_WAITALL ? MPI_ERR_IN_STATUS : MPI_ERR_BUFFER;
        CHECK(cls == want, "%s with both failing: class %d, expected %d", w, cls, want);
        CHECK(g.freed == 1, "%s with both failing: free_fn ran %d times", w, g.freed);
    }

    /* MPI_Request_free of a completed request runs free_fn and returns its error. */
    MPI_Request r = started(&g, MPI_SUCCESS, MPI_ERR_OTHER, MPI_SUCCESS, 1);
    CHECK_CLASS(MPI_Request_free(&r), MPI_ERR_OTHER);
    CHECK(g.freed == 1 && r == MPI_REQUEST_NULL, "MPI_Request_free: free_fn ran %d times", g.freed);

    /* Freed before it completes: free_fn runs at MPI_Grequest_complete, which returns its error. */
    r = started(&g, MPI_SUCCESS, MPI_ERR_OTHER, MPI_SUCCESS, 0);
    MPI_Request keep = r;
    CHECK_CLASS(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK(g.freed == 0, "free_fn ran at MPI_Request_free of a request not complete");
    CHECK_CLASS(MPI_Grequest_complete(keep), MPI_ERR_OTHER);
    CHECK(g.freed == 1, "MPI_Grequest_complete of a freed request: free_fn ran %d times", g.freed);

    /* The same with free_fn succeeding. */
    r = started(&g, MPI_SUCCESS, MPI_SUCCESS, MPI_SUCCESS, 0);
    keep = r;
    CHECK_CLASS(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Grequest_complete(keep), MPI_SUCCESS);
    CHECK(g.freed == 1, "MPI_Grequest_complete of a freed request: free_fn ran %d times", g.freed);

    /* cancel_fn's error is MPI_Cancel's; the request is still waited for as usual. */
    r = started(&g, MPI_SUCCESS, MPI_SUCCESS, MPI_ERR_BUFFER, 0);
    CHECK_CLASS(MPI_Cancel(&r), MPI_ERR_BUFFER);
    CHECK(g.cancelled == 1, "MPI_Cancel: cancel_fn ran %d times", g.cancelled);
    CHECK_CLASS(MPI_Grequest_complete(r), MPI_SUCCESS);
    CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(g.freed == 1, "after a failed cancel: free_fn ran %d times", g.freed);

    return mt_finish();
}
