/* request.c: request objects and the calls that complete them: MPI_Wait/Test and their
 * any/all/some forms, MPI_Request_get_status*, MPI_Start(all), MPI_Request_free, MPI_Cancel,
 * and the status accessors (see request.h). */
#include "request.h"
#include "core/thread.h"

#include "cr_impl.h"
#include "core/error.h"

#include <limits.h>
#include <stdlib.h>

cr_request *cr_request_sent;

void cr_request_setup(void)
{
    cr_pool_setup(CR_KIND_REQUEST, sizeof(cr_request));
    /* Read-only from here on: every call that sees it only reads it (release skips it, a wait
     * finds it done and never enrols it, cancel of a done send does nothing). */
    cr_request *r = cr_request_new(CR_REQ_SEND, NULL);
    if (!r)
        abort(); /* at library load, before anything could use the memory */
    r->obj.predefined = 1;
    r->done = 1;
    cr_status_empty(&r->status);
    cr_request_sent = r;
}

cr_request *cr_request_new(cr_req_kind kind, const cr_request_ops *ops)
{
    return cr_request_take(kind, ops);
}

int cr_request_release(cr_request *r)
{
    if (r->obj.predefined) /* cr_request_sent: shared by threads, so not even its count moves */
        return MPI_SUCCESS;
    if (!cr_obj_unref(r))
        return MPI_SUCCESS;
    int err = r->ops && r->ops->release ? r->ops->release(r) : MPI_SUCCESS;
    cr_obj_free(r);
    return err;
}

void cr_request_complete_any(cr_request *r)
{
    if (r->on_complete)
        r->on_complete(r);
    r->done = 1;
    cr_thread_event();
    if (r->waiter)
        r->waiter->completed += r->waits;
    if (r->freed && !r->persistent) {
        r->freed = 0;
        /* (no call to report an error to here: a generalized request, whose free_fn can fail,
         * never gets here freed, since MPI_Grequest_complete releases it itself) */
        cr_request_release(r);
    }
}

/* ----------------------------------------------------------------- completing requests */

/* What a completed request reports, and what happens to it: a one-shot request is freed and
 * its handle becomes MPI_REQUEST_NULL; a persistent one becomes inactive. Returns the
 * operation's error code. */
/* The status of a completed request, as it reports now (generalized requests ask the user). */
static const MPI_Status *report(cr_request *r)
{
    if (CR_UNLIKELY(r->queried)) /* a flag on the request's own line, not a look at its ops */
        r->ops->query(r);
    return &r->status;
}

static int finish(MPI_Request *h, cr_request *r, MPI_Status *status, bool several)
{
    int err = report(r)->MPI_ERROR;
    if (status && several)
        *status = r->status;
    else if (status)
        cr_status_out(status, &r->status);
    struct cr_errobj *target = r->err_target; /* (read before the request may be released) */
    if (r->persistent) {
        r->active = 0;
    } else {
        /* A generalized request's free_fn runs here, after its query_fn. When it fails, its
         * error is the call's and the status's: the standard has the error of "the last
         * callback, namely free_fn". When only query_fn fails, the call reports query_fn's
         * error (as MPICH does; mpi4py's tests expect it), not free_fn's MPI_SUCCESS. */
        int release_err = cr_request_release(r);
        *h = MPI_REQUEST_NULL;
        if (release_err) {
            err = release_err;
            if (status && several)
                status->MPI_ERROR = err;
        }
    }
    if (err)
        cr_err_target_hint = target;
    return err;
}

/* The state of a handle in a request array: NULL and inactive persistent requests are
 * "inactive" (they complete at once with an empty status). */
static int lookup(MPI_Request h, const char *what, int index, cr_request **out)
{
    *out = NULL;
    if (h == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    cr_request *r = cr_request_get(h);
    if (!r) {
        if (index >= 0)
            return cr_err(MPI_ERR_REQUEST, "%s[%d]=%#lx is not a valid request", what, index, (unsigned long)(uintptr_t)h);
        return cr_err(MPI_ERR_REQUEST, "%s=%#lx is not a valid request", what, (unsigned long)(uintptr_t)h);
    }
    if (!r->persistent || r->active)
        *out = r;
    return MPI_SUCCESS;
}

static int check_array(int count, const MPI_Request *reqs)
{
    if (count > 0 && !reqs)
        return cr_err(MPI_ERR_ARG, "array_of_requests is NULL but count=%d", count);
    return MPI_SUCCESS;
}

int cr_mpi_wait(MPI_Request *h, MPI_Status *status)
{
    cr_request *r;
    int err = lookup(*h, "request", -1, &r);
    if (err)
        return err;
    if (!r) {
        if (status)
            cr_status_empty(status);
        return MPI_SUCCESS;
    }
    cr_progress_wait(&r->done);
    return finish(h, r, status, false);
}

int cr_mpi_test(MPI_Request *h, int *flag, MPI_Status *status)
{
    cr_request *r;
    int err = lookup(*h, "request", -1, &r);
    if (err)
        return err;
    if (!r) {
        *flag = 1;
        if (status)
            cr_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!r->done)
        cr_progress_poll();
    *flag = r->done;
    return r->done ? finish(h, r, status, false) : MPI_SUCCESS;
}

/* A set of requests waited on together by the *any and *some forms (inactive entries, NULL,
 * do not count). Looking at the set costs O(count) once, when the
 * wait starts and ends; while it waits, each round checks one counter that completions
 * advance (cr_waiter), so 10,000 outstanding requests cost no more per round than one. */
typedef struct {
    int count;
    cr_request **r;
    int need;
    int done;        /* done when the wait started */
    cr_waiter waiter; /* completions since */
} waitset;

static void waitset_start(waitset *w, int count, cr_request **r, int need)
{
    *w = (waitset){count, r, need, 0, {0}};
    for (int i = 0; i < count; i++) {
        if (!r[i])
            continue;
        else if (r[i]->done)
            w->done++;
        else if (r[i]->waiter == &w->waiter)
            r[i]->waits++;
        else {
            r[i]->waiter = &w->waiter;
            r[i]->waits = 1;
        }
    }
}

static void waitset_end(waitset *w)
{
    for (int i = 0; i < w->count; i++)
        if (w->r[i] && w->r[i]->waiter == &w->waiter) { /* enrolled: was not done at the start */
            w->r[i]->waiter = NULL;
            w->r[i]->waits = 0;
        }
}

static bool waitset_ready(void *arg)
{
    waitset *w = arg;
    return w->done + w->waiter.completed >= w->need;
}

/* Waits for (or, with !wait, polls once for) `need` of the set. */
static void waitset_wait(int count, cr_request **r, int need, bool wait)
{
    waitset w;
    waitset_start(&w, count, r, need);
    if (wait)
        cr_progress_wait_until_pure(waitset_ready, &w);
    else if (!waitset_ready(&w))
        cr_progress_poll();
    waitset_end(&w);
}

/* Waitall and Testall need every request of the set, so they look at them in order: a cursor
 * passes the done ones and stops at the first that is not, which is all a round needs to look
 * at. That costs one load a request over the whole wait, where enrolling the set in a waitset
 * (above) costs a store to every request when the wait starts and another when it ends: with
 * 128 receives a window, the two passes were about a twentieth of a receiver's time in
 * bench/msgrate.c. */
typedef struct {
    int count, next;
    cr_request **r;
} in_order;

static bool all_done(void *arg)
{
    in_order *w = arg;
    while (w->next < w->count && (!w->r[w->next] || w->r[w->next]->done))
        w->next++;
    return w->next == w->count;
}

/* Resolves an array of handles; `active` counts the requests that are not inactive. */
static int resolve_all(int count, const MPI_Request *reqs, cr_request **r, int *active)
{
    *active = 0;
    for (int i = 0; i < count; i++) {
        int err = lookup(reqs[i], "array_of_requests", i, &r[i]);
        if (err)
            return err;
        *active += r[i] != NULL;
    }
    return MPI_SUCCESS;
}

/* Request arrays up to this long are resolved on the stack (a window of 128 receives, say). */
#define SMALL_SET 256

/* Completes every done request of the set into statuses (when given); for *all forms
 * errors are reported per status with MPI_ERR_IN_STATUS. */
static int finish_all(int count, MPI_Request *reqs, cr_request **r, MPI_Status *statuses)
{
    int errors = 0;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses ? &statuses[i] : NULL;
        if (!r[i]) {
            if (st)
                cr_status_empty(st);
            continue;
        }
        if (finish(&reqs[i], r[i], st, true) != MPI_SUCCESS)
            errors++;
    }
    if (!errors)
        return MPI_SUCCESS;
    return cr_err(MPI_ERR_IN_STATUS, "%d of the %d requests failed: see the MPI_ERROR field of their statuses",
                  errors, count);
}

int cr_mpi_waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    cr_request *small[SMALL_SET], **r = count <= SMALL_SET ? small : malloc((size_t)count * sizeof *r);
    int active, err = check_array(count, reqs);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d requests", count);
    if (!err)
        err = resolve_all(count, reqs, r, &active);
    if (!err) {
        in_order w = {count, 0, r};
        if (!all_done(&w))
            cr_progress_wait_until_pure(all_done, &w);
        err = finish_all(count, reqs, r, statuses);
    }
    if (r != small)
        free(r);
    return err;
}

int cr_mpi_testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    cr_request *small[SMALL_SET], **r = count <= SMALL_SET ? small : malloc((size_t)count * sizeof *r);
    int active, err = check_array(count, reqs);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d requests", count);
    if (!err)
        err = resolve_all(count, reqs, r, &active);
    if (!err) {
        in_order w = {count, 0, r};
        if (!all_done(&w))
            cr_progress_poll();
        *flag = all_done(&w);
        if (*flag)
            err = finish_all(count, reqs, r, statuses);
    }
    if (r != small)
        free(r);
    return err;
}

/* Waitany/Testany: the first done request in array order. */
static int any(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status, bool wait)
{
    cr_request *small[SMALL_SET], **r = count <= SMALL_SET ? small : malloc((size_t)count * sizeof *r);
    int active, err = check_array(count, reqs);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d requests", count);
    if (!err)
        err = resolve_all(count, reqs, r, &active);
    if (err)
        goto out;
    *index = MPI_UNDEFINED;
    if (active == 0) { /* nothing to wait for */
        *flag = 1;
        if (status)
            cr_status_empty(status);
        goto out;
    }
    waitset_wait(count, r, 1, wait);
    *flag = 0;
    for (int i = 0; i < count; i++) {
        if (r[i] && r[i]->done) {
            *index = i;
            *flag = 1;
            err = finish(&reqs[i], r[i], status, false);
            break;
        }
    }
out:
    if (r != small)
        free(r);
    return err;
}

int cr_mpi_waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    int flag;
    return any(count, reqs, index, &flag, status, true);
}

int cr_mpi_testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    return any(count, reqs, index, flag, status, false);
}

static int some(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[], bool wait)
{
    cr_request *small[SMALL_SET], **r = count <= SMALL_SET ? small : malloc((size_t)count * sizeof *r);
    int active, err = check_array(count, reqs);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d requests", count);
    if (!err)
        err = resolve_all(count, reqs, r, &active);
    if (err)
        goto out;
    if (active == 0) {
        *outcount = MPI_UNDEFINED;
        goto out;
    }
    waitset_wait(count, r, 1, wait);
    /* Each call costs a look at the whole array: take in what else has arrived meanwhile, so a
     * loop of MPI_Waitsome needs fewer calls (the rounds are bounded; they stop when idle). */
    for (int round = 0; round < 16 && cr_progress() > 0; round++)
        ;
    int n = 0, errors = 0;
    for (int i = 0; i < count; i++) {
        if (r[i] && r[i]->done) {
            MPI_Status *st = statuses ? &statuses[n] : NULL;
            indices[n] = i;
            if (finish(&reqs[i], r[i], st, true) != MPI_SUCCESS)
                errors++;
            n++;
        }
    }
    *outcount = n;
    if (errors)
        err = cr_err(MPI_ERR_IN_STATUS, "%d of the %d completed requests failed: see their statuses", errors, n);
out:
    if (r != small)
        free(r);
    return err;
}

int cr_mpi_waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return some(incount, reqs, outcount, indices, statuses, true);
}

int cr_mpi_testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return some(incount, reqs, outcount, indices, statuses, false);
}

/* ----------------------------------------------------------------- status without completing */

int cr_mpi_request_get_status(MPI_Request h, int *flag, MPI_Status *status)
{
    cr_request *r;
    int err = lookup(h, "request", -1, &r);
    if (err)
        return err;
    if (r && !r->done)
        cr_progress_poll();
    *flag = !r || r->done;
    if (*flag && status) {
        if (r)
            cr_status_out(status, report(r));
        else
            cr_status_empty(status);
    }
    return MPI_SUCCESS;
}

int cr_mpi_request_get_status_all(int count, const MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    int err = check_array(count, reqs);
    if (err)
        return err;
    cr_progress_poll();
    *flag = 1;
    for (int i = 0; i < count && *flag; i++) {
        cr_request *r;
        if ((err = lookup(reqs[i], "array_of_requests", i, &r)))
            return err;
        *flag = !r || r->done;
    }
    for (int i = 0; *flag && statuses && i < count; i++) {
        cr_request *r;
        lookup(reqs[i], "array_of_requests", i, &r);
        if (r)
            statuses[i] = *report(r);
        else
            cr_status_empty(&statuses[i]);
    }
    return MPI_SUCCESS;
}

int cr_mpi_request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    int err = check_array(count, reqs), active = 0;
    if (err)
        return err;
    cr_progress_poll();
    *flag = 0;
    *index = MPI_UNDEFINED;
    for (int i = 0; i < count; i++) {
        cr_request *r;
        if ((err = lookup(reqs[i], "array_of_requests", i, &r)))
            return err;
        active += r != NULL;
        if (r && r->done) {
            *flag = 1;
            *index = i;
            if (status)
                cr_status_out(status, report(r));
            return MPI_SUCCESS;
        }
    }
    if (!active) {
        *flag = 1;
        if (status)
            cr_status_empty(status);
    }
    return MPI_SUCCESS;
}

int cr_mpi_request_get_status_some(int incount, const MPI_Request reqs[], int *outcount, int indices[],
                                   MPI_Status statuses[])
{
    int err = check_array(incount, reqs), active = 0, n = 0;
    if (err)
        return err;
    cr_progress_poll();
    for (int i = 0; i < incount; i++) {
        cr_request *r;
        if ((err = lookup(reqs[i], "array_of_requests", i, &r)))
            return err;
        active += r != NULL;
        if (r && r->done) {
            if (statuses)
                statuses[n] = *report(r);
            indices[n++] = i;
        }
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- persistent, free, cancel */

static int start_one(MPI_Request h, int index)
{
    cr_request *r = cr_request_get(h);
    if (!r || !r->persistent) {
        if (index >= 0)
            return cr_err(MPI_ERR_REQUEST, "array_of_requests[%d] is not a persistent request", index);
        return cr_err(MPI_ERR_REQUEST, "request=%#lx is not a persistent request", (unsigned long)(uintptr_t)h);
    }
    int err;
    if (r->active)
        err = cr_err(MPI_ERR_REQUEST, "the persistent request%s is already active (wait for it before starting it again)",
                     index >= 0 ? " in the array" : "");
    else if (!r->ops || !r->ops->start)
        err = cr_err(MPI_ERR_REQUEST, "the persistent request%s cannot be started", index >= 0 ? " in the array" : "");
    else
        r->active = 1, err = r->ops->start(r);
    if (err)
        cr_err_target_hint = r->err_target; /* the error goes to the request's communicator */
    return err;
}

int cr_mpi_start(MPI_Request *request)
{
    return start_one(*request, -1);
}

int cr_mpi_startall(int count, MPI_Request reqs[])
{
    int err = check_array(count, reqs);
    for (int i = 0; !err && i < count; i++)
        err = start_one(reqs[i], i);
    return err;
}

int cr_mpi_request_free(MPI_Request *h)
{
    cr_request *r = cr_request_get(*h);
    if (!r)
        return cr_err(MPI_ERR_REQUEST, "request=%#lx is not a valid request", (unsigned long)(uintptr_t)*h);
    *h = MPI_REQUEST_NULL;
    if (r->persistent && r->active && !r->done) {
        /* an active persistent request completes by itself, then goes */
        r->persistent = 0;
        r->freed = 1;
        return MPI_SUCCESS;
    }
    if (!r->persistent && !r->done) {
        r->freed = 1; /* released when the operation completes */
        return MPI_SUCCESS;
    }
    return cr_request_release(r);
}

int cr_mpi_cancel(MPI_Request *h)
{
    cr_request *r;
    int err = lookup(*h, "request", -1, &r);
    if (err)
        return err;
    if (!r)
        return *h == MPI_REQUEST_NULL ? cr_err(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL") : MPI_SUCCESS;
    err = r->ops && r->ops->cancel ? r->ops->cancel(r) : MPI_SUCCESS;
    if (err)
        cr_err_target_hint = r->err_target; /* the error goes to the request's communicator */
    return err;
}

int cr_mpi_test_cancelled(const MPI_Status *status, int *flag)
{
    *flag = status->MPI_internal[2] != 0;
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- status accessors */

int cr_mpi_status_set_cancelled(MPI_Status *status, int flag)
{
    status->MPI_internal[2] = flag != 0;
    return MPI_SUCCESS;
}

int cr_mpi_status_set_source(MPI_Status *status, int source)
{
    status->MPI_SOURCE = source;
    return MPI_SUCCESS;
}

int cr_mpi_status_set_tag(MPI_Status *status, int tag)
{
    status->MPI_TAG = tag;
    return MPI_SUCCESS;
}

int cr_mpi_status_set_error(MPI_Status *status, int err)
{
    status->MPI_ERROR = err;
    return MPI_SUCCESS;
}

int cr_mpi_status_get_source(const MPI_Status *status, int *source)
{
    *source = status->MPI_SOURCE;
    return MPI_SUCCESS;
}

int cr_mpi_status_get_tag(const MPI_Status *status, int *tag)
{
    *tag = status->MPI_TAG;
    return MPI_SUCCESS;
}

int cr_mpi_status_get_error(const MPI_Status *status, int *err)
{
    *err = status->MPI_ERROR;
    return MPI_SUCCESS;
}
