/* grequest.c: generalized requests (MPI_Grequest_start, MPI_Grequest_complete): operations the
 * user runs (often in a thread of its own) and completes, waited on and tested like any other.
 *
 * The user's three functions: query_fn fills the status each time a completed request reports
 * (MPI_Wait, MPI_Test, MPI_Request_get_status), and its return value is the operation's error;
 * free_fn runs once, when the request is released (after the wait that completes it, or at
 * MPI_Grequest_complete when the user freed the request before); cancel_fn runs at MPI_Cancel
 * with whether the request already completed. Nothing here polls: completion is the user's
 * call, which wakes the threads that wait (core/thread.h). */
#include "cr_impl.h"
#include "request.h"

#include <stdlib.h>

typedef struct grequest {
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
} grequest;

static int g_query(cr_request *r)
{
    grequest *g = r->owner;
    MPI_Status st;
    cr_status_empty(&st);
    st.MPI_SOURCE = MPI_UNDEFINED;
    st.MPI_TAG = MPI_UNDEFINED;
    int err = g->query_fn ? g->query_fn(g->extra_state, &st) : MPI_SUCCESS;
    st.MPI_ERROR = err;
    r->status = st;
    return err;
}

static int g_cancel(cr_request *r)
{
    grequest *g = r->owner;
    return g->cancel_fn ? g->cancel_fn(g->extra_state, r->done) : MPI_SUCCESS;
}

/* free_fn's error goes to the completion call that released the request; when the release
 * comes from MPI_Request_free or MPI_Grequest_complete (a request the user freed before), that
 * call returns it. */
static int g_release(cr_request *r)
{
    grequest *g = r->owner;
    int err = g->free_fn ? g->free_fn(g->extra_state) : MPI_SUCCESS;
    free(g);
    return err;
}

static const cr_request_ops grequest_ops = {.cancel = g_cancel, .release = g_release, .query = g_query};

int cr_mpi_grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                          MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    grequest *g = malloc(sizeof *g);
    cr_request *r = g ? cr_request_new(CR_REQ_OTHER, &grequest_ops) : NULL;
    if (!r) {
        free(g);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a generalized request");
    }
    *g = (grequest){query_fn, free_fn, cancel_fn, extra_state};
    r->owner = g;
    r->queried = 1;
    cr_status_empty(&r->status);
    *request = cr_request_handle(r);
    return MPI_SUCCESS;
}

int cr_mpi_grequest_complete(MPI_Request request)
{
    cr_request *r = cr_request_get(request);
    if (!r || r->ops != &grequest_ops)
        return cr_err(MPI_ERR_REQUEST, "request=%#lx is not a generalized request from MPI_Grequest_start",
                      (unsigned long)(uintptr_t)request);
    if (r->done)
        return cr_err(MPI_ERR_REQUEST, "request=%#lx was already completed by MPI_Grequest_complete",
                      (unsigned long)(uintptr_t)request);
    if (r->freed) { /* the user freed it before: it goes now, and free_fn's error is this call's */
        r->freed = 0;
        cr_request_complete(r);
        return cr_request_release(r);
    }
    cr_request_complete(r);
    return MPI_SUCCESS;
}
