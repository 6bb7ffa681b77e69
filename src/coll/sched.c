/* sched.c: building and running collective schedules (see sched.h), and the request that
 * carries a nonblocking or persistent one. */
#include "sched.h"

#include "coll.h"
#include "core/error.h"
#include "pt2pt/pt2pt.h"

#include <stdlib.h>

void cr_sched_init(cr_sched *s, cr_comm *comm)
{
    cr_sched_init_tagged(s, comm, (int)(comm->coll_tag++ & 0x7fffffff));
}

void cr_sched_local(cr_sched *s, bool on)
{
    if (on && !s->has_local_tag) {
        s->local_tag = (int)(s->comm->local->coll_tag++ & 0x7fffffff);
        s->has_local_tag = true;
    }
    s->local_mode = on;
}

void cr_sched_subset(cr_sched *s, int rank, int size, const int *map)
{
    s->rank = rank;
    s->size = size;
    s->peer_map = map;
}

void cr_sched_init_tagged(cr_sched *s, cr_comm *comm, int tag)
{
    s->comm = comm;
    s->ctx = comm->ctx + 1;
    s->tag = tag;
    s->local_mode = s->has_local_tag = false;
    s->peer_map = NULL;
    s->local_tag = 0;
    s->rank = comm->rank;
    s->size = comm->size;
    s->nsteps = 0;
    s->cap = CR_SCHED_INLINE_STEPS;
    s->next = s->pending = 0;
    s->err = MPI_SUCCESS;
    s->halted = false;
    s->mismatch = MPI_SUCCESS;
    s->fence_next = false;
    s->built_ok = true;
    s->steps = s->steps_inline;
    s->tmps = s->tmps_inline;
    s->ntmps = 0;
    s->tmps_cap = CR_SCHED_INLINE_TMPS;
    s->req = NULL;
    s->held_op = NULL;
    s->held_dts = NULL;
    s->nheld_dts = 0;
    s->active_next = s->active_prev = NULL;
    s->node = NULL;
    s->node_turn = 0;
    s->starting = false;
    s->async = false;
}

void cr_sched_destroy(cr_sched *s)
{
    for (int i = 0; i < s->ntmps; i++)
        cr_coll_scratch_release(s->tmps[i]);
    if (s->tmps != s->tmps_inline)
        free(s->tmps);
    if (s->steps != s->steps_inline)
        free(s->steps);
    s->ntmps = s->nsteps = 0;
    s->tmps = s->tmps_inline;
    s->steps = s->steps_inline;
}

void cr_sched_mismatch(cr_sched *s, int err)
{
    s->mismatch = err;
    if (s->built_ok)
        s->err = err;
}

void cr_sched_fail(cr_sched *s, int err)
{
    if (s->built_ok) {
        s->built_ok = false;
        s->halted = true;
        s->err = err;
    }
}

static cr_step *add(cr_sched *s, cr_step_kind kind)
{
    if (!s->built_ok)
        return NULL;
    if (s->nsteps == s->cap) {
        int cap = 2 * s->cap;
        cr_step *grown = malloc((size_t)cap * sizeof *grown);
        if (!grown) {
            cr_sched_fail(s, cr_err(MPI_ERR_NO_MEM, "out of memory for a collective schedule of %d steps", cap));
            return NULL;
        }
        memcpy(grown, s->steps, (size_t)s->nsteps * sizeof *grown);
        if (s->steps != s->steps_inline)
            free(s->steps);
        s->steps = grown;
        s->cap = cap;
    }
    cr_step *st = &s->steps[s->nsteps++];
    st->kind = (uint8_t)kind;
    st->fence = s->fence_next;
    st->local = s->local_mode;
    s->fence_next = false;
    return st;
}

static void add_msg(cr_sched *s, cr_step_kind kind, const void *buf, MPI_Count count, cr_dtype *dt, int peer)
{
    cr_step *st = add(s, kind);
    if (st) {
        st->u.msg.buf = buf;
        st->u.msg.count = count;
        st->u.msg.dt = dt;
        st->u.msg.peer = s->peer_map && peer >= 0 ? s->peer_map[peer] : peer;
    }
}

void cr_sched_send(cr_sched *s, const void *buf, MPI_Count count, cr_dtype *dt, int peer)
{
    add_msg(s, CR_STEP_SEND, buf, count, dt, peer);
}

void cr_sched_recv(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int peer)
{
    add_msg(s, CR_STEP_RECV, buf, count, dt, peer);
}

void cr_sched_reduce(cr_sched *s, const void *in, void *inout, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    cr_step *st = add(s, CR_STEP_REDUCE);
    if (st) {
        st->u.red.in = in;
        st->u.red.inout = inout;
        st->u.red.count = count;
        st->u.red.dt = dt;
        st->u.red.op = op;
    }
}

void cr_sched_copy(cr_sched *s, const void *src, MPI_Count scount, cr_dtype *sdt, void *dst, MPI_Count dcount,
                   cr_dtype *ddt)
{
    cr_step *st = add(s, CR_STEP_COPY);
    if (st) {
        st->u.copy.src = src;
        st->u.copy.scount = scount;
        st->u.copy.sdt = sdt;
        st->u.copy.dst = dst;
        st->u.copy.dcount = dcount;
        st->u.copy.ddt = ddt;
    }
}

void cr_sched_call(cr_sched *s, cr_sched_fn *fn, void *arg)
{
    cr_step *st = add(s, CR_STEP_CALL);
    if (st) {
        st->u.call.fn = fn;
        st->u.call.arg = arg;
    }
}

void *cr_sched_scratch(cr_sched *s, size_t bytes)
{
    if (!s->built_ok)
        return NULL;
    if (s->ntmps == s->tmps_cap) {
        int cap = 2 * s->tmps_cap;
        void **grown = malloc((size_t)cap * sizeof *grown);
        if (!grown) {
            cr_sched_fail(s, cr_err(MPI_ERR_NO_MEM, "out of memory for a collective schedule"));
            return NULL;
        }
        memcpy(grown, s->tmps, (size_t)s->ntmps * sizeof *grown);
        if (s->tmps != s->tmps_inline)
            free(s->tmps);
        s->tmps = grown;
        s->tmps_cap = cap;
    }
    void *p = cr_coll_scratch(bytes ? bytes : 1);
    if (!p) {
        cr_sched_fail(s, cr_err(MPI_ERR_NO_MEM, "out of memory for %zu bytes of collective scratch", bytes));
        return NULL;
    }
    s->tmps[s->ntmps++] = p;
    return p;
}

void *cr_sched_tmp(cr_sched *s, MPI_Count count, const cr_dtype *dt)
{
    /* Room for `count` extents, shifted so data at offsets true_lb.. lands in the allocation. */
    char *p = cr_sched_scratch(s, cr_coll_tmp_bytes(count, dt));
    return p ? p - dt->true_lb : NULL;
}

/* ----------------------------------------------------------------- running */

/* Errors, and why a count mismatch does not stop a schedule. The processes of a collective
 * must pass matching amounts; a program that does not (a root broadcasting 1 element to
 * processes that expect 10, or 10 to processes that expect 1) is erroneous, and every process
 * whose data is wrong should hear of it. A schedule that stopped at its first truncated or short
 * message would never send what its children wait for: they would hang. So after a mismatch
 * (MPI_ERR_TRUNCATE) every step still starts, and the sends carry no data: a process that
 * expected some sees a short message and fails in turn, down the whole tree, while a process
 * whose messages all matched finishes as usual (it may not learn of the error, as in MPICH).
 * Any other error (out of memory, say) halts the schedule: nothing more starts. */
static void note_error(cr_sched *s, int err)
{
    if (!s->err)
        s->err = err;
    if (cr_err_class(err) != MPI_ERR_TRUNCATE)
        s->halted = true;
}

void cr_sched_note_mismatch(cr_sched *s, int err)
{
    note_error(s, err);
}

/* A message step completed (called by pt2pt's completion, inside progress): count it. The
 * schedule moves on in cr_sched_advance, never from inside a frame handler. A receive must
 * get all it asked for: every algorithm posts the exact size its peer sends, so a shorter
 * message means the processes' counts differ (or an earlier mismatch emptied it, above). */
static void step_done(cr_request *r)
{
    cr_sched *s = r->owner;
    int err = r->status.MPI_ERROR;
    if (!err && r->kind == CR_REQ_RECV && r->peer != MPI_PROC_NULL) {
        uint64_t want = (uint64_t)r->count * r->dt->size, got = cr_status_bytes(&r->status);
        if (CR_UNLIKELY(got < want))
            err = cr_err(MPI_ERR_TRUNCATE,
                         "rank %d sent %llu bytes where this process expects %llu: the processes of the collective "
                         "passed counts (or types) that do not match, or an error at rank %d emptied its message",
                         r->status.MPI_SOURCE, (unsigned long long)got, (unsigned long long)want, r->status.MPI_SOURCE);
    }
    if (CR_UNLIKELY(err))
        note_error(s, err);
    s->pending--;
}

static int start_msg(cr_sched *s, cr_step *st)
{
    cr_comm *comm = s->comm;
    uint32_t ctx = s->ctx;
    int tag = s->tag;
    if (CR_UNLIKELY(st->local)) {
        comm = comm->local;
        ctx = comm->ctx + 1;
        tag = s->local_tag;
    }
    /* After a count mismatch, sends go empty (note_error). */
    MPI_Count count = st->kind == CR_STEP_SEND && CR_UNLIKELY(s->err) ? 0 : st->u.msg.count;
    /* A small send goes out at once with no request, as a blocking MPI_Send's would. */
    if (st->kind == CR_STEP_SEND && st->u.msg.peer != MPI_PROC_NULL &&
        cr_pt2pt_send_now(st->u.msg.buf, count, st->u.msg.dt, st->u.msg.peer, tag, comm, ctx))
        return MPI_SUCCESS;
    cr_request *r = &st->req;
    memset(r, 0, sizeof *r);
    int kind = st->kind == CR_STEP_SEND ? CR_REQ_SEND : CR_REQ_RECV;
    cr_pt2pt_prepare(r, kind, st->u.msg.buf, count, st->u.msg.dt, st->u.msg.peer, tag, comm, ctx,
                     CR_MODE_STANDARD);
    r->owner = s;
    r->on_complete = step_done;
    s->pending++; /* before the start: a send may complete inside it */
    int err = kind == CR_REQ_SEND ? cr_pt2pt_send_start(r) : cr_pt2pt_recv_post(r);
    if (err && !r->done)
        s->pending--;
    return err;
}

bool cr_sched_advance(cr_sched *s)
{
    while (s->next < s->nsteps && !s->halted) {
        cr_step *st = &s->steps[s->next];
        if (st->fence && s->pending)
            return false;
        int err = MPI_SUCCESS;
        switch (st->kind) {
        case CR_STEP_SEND:
        case CR_STEP_RECV: err = start_msg(s, st); break;
        case CR_STEP_REDUCE:
            /* After a count mismatch the operands are short or empty messages' buffers, partly
             * never written: the result is not valid anyway, and combining bytes that were never
             * data could trap (a signed overflow, a user operation reading them). */
            if (CR_LIKELY(!s->err))
                cr_op_apply(st->u.red.op, st->u.red.in, st->u.red.inout, st->u.red.count, st->u.red.dt);
            break;
        case CR_STEP_COPY:
            cr_dt_copy(st->u.copy.src, st->u.copy.scount, st->u.copy.sdt, st->u.copy.dst, st->u.copy.dcount,
                         st->u.copy.ddt);
            break;
        case CR_STEP_CALL:
            err = st->u.call.fn(s, st->u.call.arg);
            if (err == CR_SCHED_AGAIN)
                return false;
            break;
        }
        if (err)
            note_error(s, err);
        s->next++;
    }
    /* Complete when every step has started and every message has finished; after an error
     * that halts, when the messages already started have finished (their requests live in
     * the steps). */
    bool complete = s->pending == 0 && (s->next == s->nsteps || s->halted);
    if (complete && s->node_turn)
        cr_coll_node_end_turn(s); /* the next node collective of the communicator may run */
    return complete;
}

static bool advance_ready(void *arg)
{
    return cr_sched_advance(arg);
}

static void rewind_sched(cr_sched *s)
{
    s->next = 0;
    s->pending = 0;
    s->node_turn = 0;
    s->err = s->built_ok ? s->mismatch : s->err;
    s->halted = !s->built_ok;
}

int cr_sched_run(cr_sched *s)
{
    if (!s->built_ok) {
        cr_sched_destroy(s);
        return s->err;
    }
    if (!cr_sched_advance(s))
        cr_progress_wait_until(advance_ready, s);
    int err = s->err;
    cr_sched_destroy(s);
    return err;
}

/* ----------------------------------------------------------------- as a request */

/* Schedules running as requests, advanced by a progress hook while there are any. */
static cr_sched *active;
static bool advancing;

static void finish(cr_sched *s);

static int advance_active(void)
{
    if (advancing) /* a step's start made progress, which called back here */
        return 0;
    advancing = true;
    int moved = 0;
    for (cr_sched *s = active, *nx; s; s = nx) {
        nx = s->active_next;
        if (cr_sched_advance(s)) {
            finish(s);
            moved++;
        }
    }
    advancing = false;
    return moved;
}

static void activate(cr_sched *s)
{
    if (!active)
        cr_progress_add_hook(advance_active);
    s->active_prev = NULL;
    s->active_next = active;
    if (active)
        active->active_prev = s;
    active = s;
}

static void deactivate(cr_sched *s)
{
    if (s->active_prev)
        s->active_prev->active_next = s->active_next;
    else
        active = s->active_next;
    if (s->active_next)
        s->active_next->active_prev = s->active_prev;
    s->active_next = s->active_prev = NULL;
    if (!active)
        cr_progress_remove_hook(advance_active);
}

static void complete_request(cr_sched *s)
{
    cr_request *r = s->req;
    cr_status_empty(&r->status);
    r->status.MPI_ERROR = s->err;
    cr_request_complete(r);
}

static void finish(cr_sched *s)
{
    deactivate(s);
    complete_request(s);
}

/* Starts (or restarts) the schedule of a request. */
static int sched_start(cr_request *r)
{
    cr_sched *s = r->owner;
    rewind_sched(s);
    r->done = 0;
    s->starting = true; /* call steps may do only their local part now (node_large.c) */
    bool complete = !s->built_ok || cr_sched_advance(s);
    s->starting = false;
    if (!complete) {
        activate(s);
        return MPI_SUCCESS;
    }
    complete_request(s); /* complete at once (or failed to build) */
    return MPI_SUCCESS;
}

static int sched_cancel(cr_request *r)
{
    (void)r;
    return cr_err(MPI_ERR_REQUEST, "a collective operation cannot be cancelled (MPI_Cancel of a nonblocking or "
                                   "persistent collective request)");
}

static int sched_release(cr_request *r)
{
    cr_sched_free(r->owner);
    return MPI_SUCCESS;
}

static const cr_request_ops sched_ops = {sched_start, sched_cancel, sched_release};

cr_sched *cr_sched_new(cr_comm *comm)
{
    cr_sched *s = malloc(sizeof *s);
    if (s) {
        cr_sched_init(s, comm);
        s->async = true;
    }
    return s;
}

void cr_sched_free(cr_sched *s)
{
    if (!s)
        return;
    cr_sched_destroy(s);
    if (s->held_op && cr_obj_unref(s->held_op))
        cr_obj_free(s->held_op);
    for (int i = 0; i < s->nheld_dts; i++)
        cr_dtype_release(s->held_dts[i]);
    free(s->held_dts);
    if (s->req)
        cr_comm_release(s->comm);
    free(s);
}

bool cr_sched_hold_dtype(cr_sched *s, cr_dtype *dt)
{
    if (!dt || !dt->d)
        return true;
    for (int i = 0; i < s->nheld_dts; i++)
        if (s->held_dts[i] == dt)
            return true;
    cr_dtype **grown = realloc(s->held_dts, (size_t)(s->nheld_dts + 1) * sizeof *grown);
    if (!grown)
        return false;
    cr_obj_ref(dt);
    grown[s->nheld_dts++] = dt;
    s->held_dts = grown;
    return true;
}

int cr_sched_post(cr_sched *s, bool persistent, MPI_Request *request)
{
    cr_request *r = cr_request_new(CR_REQ_OTHER, &sched_ops);
    if (!r) {
        cr_sched_free(s);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a request");
    }
    /* The request keeps the communicator (and a user operation) alive while it lives. */
    cr_comm_hold(s->comm);
    s->req = r;
    r->owner = s;
    r->comm = s->comm;
    r->err_target = &s->comm->eo;
    *request = cr_request_handle(r);
    if (persistent) {
        r->persistent = 1;
        cr_status_empty(&r->status);
        return MPI_SUCCESS;
    }
    return sched_start(r);
}
