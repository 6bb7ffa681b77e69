/* Errors of a generalized request's own functions reach the call that ran them:
 *   - query_fn's error is the completion call's (MPI_Wait, MPI_Test, MPI_Waitany, MPI_Testany;
 *     the all and some forms report it as MPI_ERR_IN_STATUS with the status's MPI_ERROR, and
 *     of three requests only the failing one's status says so);
 *   - free_fn's error is the error of the call that released the request (also when query_fn
 *     failed too: "the last callback, namely free_fn"): MPI_Wait, MPI_Test, MPI_Waitall (per status), MPI_Request_free of a completed
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

enum { BY_WAIT, BY_TEST, BY_WAITANY, BY_TESTANY, BY_WAITALL, BY_TESTALL, BY_WAITSOME, BY_TESTSOME, NWAYS };
static const char *const way_name[NWAYS] = {"MPI_Wait",    "MPI_Test",    "MPI_Waitany",  "MPI_Testany",
                                            "MPI_Waitall", "MPI_Testall", "MPI_Waitsome", "MPI_Testsome"};

/* Whether the way reports errors per status (MPI_ERR_IN_STATUS). */
static int in_status(int way)
{
    return way >= BY_WAITALL;
}

/* Completes r the given way; returns the call's error class, and the status's where the way
 * sets it (-1 where it does not). */
static int complete_by(int way, MPI_Request *r, MPI_Status *st, int *status_class)
{
    int rc = MPI_SUCCESS, flag = 0, index = -1, outcount = 0;
    st->MPI_ERROR = MPI_SUCCESS;
    switch (way) {
    case BY_WAIT: rc = MPI_Wait(r, st); flag = 1; break;
    case BY_TEST: rc = MPI_Test(r, &flag, st); break;
    case BY_WAITANY: rc = MPI_Waitany(1, r, &index, st); flag = index == 0; break;
    case BY_TESTANY: rc = MPI_Testany(1, r, &index, &flag, st); flag = flag && index == 0; break;
    case BY_WAITALL: rc = MPI_Waitall(1, r, st); flag = 1; break;
    case BY_TESTALL: rc = MPI_Testall(1, r, &flag, st); break;
    case BY_WAITSOME: rc = MPI_Waitsome(1, r, &outcount, &index, st); flag = outcount == 1 && index == 0; break;
    case BY_TESTSOME: rc = MPI_Testsome(1, r, &outcount, &index, st); flag = outcount == 1 && index == 0; break;
    }
    CHECK(flag, "%s of a completed generalized request did not complete it", way_name[way]);
    *status_class = in_status(way) ? class_of(st->MPI_ERROR) : -1;
    return class_of(rc);
}

/* Three requests completed together, the middle one's free_fn failing: MPI_ERR_IN_STATUS, and
 * only its status says so (MPI_Waitall, MPI_Testall, MPI_Waitsome), with and without statuses. */
static void one_of_three(void)
{
    gstate g[3];
    MPI_Request r[3];
    for (int way = 0; way < 3; way++)
        for (int ignore = 0; ignore < 2; ignore++) {
            for (int i = 0; i < 3; i++) {
                g[i] = (gstate){MPI_SUCCESS, i == 1 ? MPI_ERR_OTHER : MPI_SUCCESS, MPI_SUCCESS, 0, 0, 0, 0};
                MPI_Grequest_start(g_query, g_free, g_cancel, &g[i], &r[i]);
                MPI_Grequest_complete(r[i]);
            }
            MPI_Status st[3];
            for (int i = 0; i < 3; i++)
                st[i].MPI_ERROR = -1;
            MPI_Status *sts = ignore ? MPI_STATUSES_IGNORE : st;
            int rc, flag = 1, outcount = 3, idx[3];
            const char *w = way == 0 ? "MPI_Waitall" : way == 1 ? "MPI_Testall" : "MPI_Waitsome";
            if (way == 0)
                rc = MPI_Waitall(3, r, sts);
            else if (way == 1)
                rc = MPI_Testall(3, r, &flag, sts);
            else
                rc = MPI_Waitsome(3, r, &outcount, idx, sts);
            CHECK(class_of(rc) == MPI_ERR_IN_STATUS && flag && outcount == 3, "%s of three, one failing: class %d "
                  "(flag %d, %d completed), expected MPI_ERR_IN_STATUS", w, class_of(rc), flag, outcount);
            for (int i = 0; i < 3; i++) {
                CHECK(g[i].freed == 1 && r[i] == MPI_REQUEST_NULL, "%s of three: request %d freed %d times", w, i,
                      g[i].freed);
                int at = way == 2 ? idx[i] : i; /* Waitsome's statuses follow its indices */
                if (!ignore && at >= 0 && at < 3)
                    CHECK(class_of(st[i].MPI_ERROR) == (at == 1 ? MPI_ERR_OTHER : MPI_SUCCESS), "%s of three: "
                          "status %d (request %d) has class %d", w, i, at, class_of(st[i].MPI_ERROR));
            }
        }
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
        int want = in_status(way) ? MPI_ERR_IN_STATUS : MPI_ERR_BUFFER;
        CHECK(cls == want, "%s with query_fn failing: class %d, expected %d", w, cls, want);
        if (in_status(way))
            CHECK(sc == MPI_ERR_BUFFER, "%s with query_fn failing: status class %d, expected %d", w, sc,
                  MPI_ERR_BUFFER);
        CHECK(g.freed == 1 && r == MPI_REQUEST_NULL, "%s with query_fn failing: free_fn ran %d times, the "
              "request is %snull", w, g.freed, r == MPI_REQUEST_NULL ? "" : "not ");

        /* free_fn fails (query_fn succeeds): the completion call reports it. */
        r = started(&g, MPI_SUCCESS, MPI_ERR_OTHER, MPI_SUCCESS, 1);
        cls = complete_by(way, &r, &st, &sc);
        want = in_status(way) ? MPI_ERR_IN_STATUS : MPI_ERR_OTHER;
        CHECK(cls == want, "%s with free_fn failing: class %d, expected %d", w, cls, want);
        if (in_status(way))
            CHECK(sc == MPI_ERR_OTHER, "%s with free_fn failing: status class %d, expected %d", w, sc,
                  MPI_ERR_OTHER);
        CHECK(g.freed == 1 && !g.freed_before_query && r == MPI_REQUEST_NULL, "%s with free_fn failing: free_fn "
              "ran %d times (before query_fn: %d)", w, g.freed, g.freed_before_query);

        /* Both fail: free_fn's error, the last callback's, is the call's (the standard's words). */
        r = started(&g, MPI_ERR_BUFFER, MPI_ERR_OTHER, MPI_SUCCESS, 1);
        cls = complete_by(way, &r, &st, &sc);
        want = in_status(way) ? MPI_ERR_IN_STATUS : MPI_ERR_OTHER;
        CHECK(cls == want, "%s with both failing: class %d, expected %d", w, cls, want);
        if (in_status(way))
            CHECK(sc == MPI_ERR_OTHER, "%s with both failing: status class %d, expected %d", w, sc, MPI_ERR_OTHER);
        CHECK(g.freed == 1, "%s with both failing: free_fn ran %d times", w, g.freed);
    }

    one_of_three();

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
