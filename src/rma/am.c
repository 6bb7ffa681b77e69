/* am.c: one-sided operations by message, for targets whose memory this process cannot reach
 * (another node; user memory without cross-memory attach): the origin's side sends each
 * operation on the window's communicator, the target's progress applies it (rma.h). */
#include "rma.h"

#include "core/copy.h"
#include "core/runtime.h"
#include "cr_impl.h"
#include "pt2pt/pt2pt.h"
#include "req/request.h"
#include "xport/xport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* The window's communicator is a duplicate no user sees: its point-to-point context carries
 * these and nothing else (its collectives have their own). Each request that is answered names
 * the tag of its answer, one of 2^24 from TAG_ANSWER on, taken in turn, so a waiter never takes
 * another's answer (threads sharing a window, a flush of every target). A put's separate data
 * goes on a tag of another 2^24 (TAG_DATA on): an answer from T to O and data that T puts at O
 * travel the same way, and the two processes draw their tags from counters of their own, so in
 * one range they met (O's get took T's put data: MPI_ERR_TRUNCATE, or worse, wrong bytes). */
enum { TAG_REQUEST = 1, TAG_ANSWER = 2, ANSWER_TAGS = 1 << 24, TAG_DATA = TAG_ANSWER + ANSWER_TAGS };

enum am_kind { AM_PUT = 1, AM_GET, AM_ACC, AM_LOCK, AM_UNLOCK, AM_FLUSH, AM_POST, AM_COMPLETE };
enum { AM_FETCH = 1, AM_NO_DATA = 2, AM_CAS = 4, AM_TRY = 8, AM_SEPARATE = 16 };

/* A put of this many bytes or more sends its data as a message of its own, straight from the
 * caller's buffer with the caller's datatype, on the tag its request names; the target receives
 * it straight into the window when the target data is one run. Below, the data rides in the
 * request (one message, one copy each side). */
enum { SEPARATE_MIN = 32 << 10 };

/* A request: this header, `nruns` runs of target memory, then `bytes` of data (the origin's
 * packed data; for compare-and-swap the origin element then the compare element). 16-byte
 * multiples up to the data, so the data is aligned for the reduction loops. */
typedef struct am_hdr {
    uint32_t kind;  /* am_kind */
    uint32_t flags; /* AM_* */
    int32_t lock;   /* MPI_LOCK_* */
    int32_t answer; /* the tag of the answer */
    uint64_t op;    /* predefined handles, the same in every process (the standard ABI) */
    uint64_t leaf;
    uint64_t nruns;
    uint64_t target_bytes; /* bytes of target data the runs hold */
    uint64_t bytes;        /* bytes of data after the runs */
    uint64_t pad2;
} am_hdr;

_Static_assert(sizeof(am_hdr) % 16 == 0 && sizeof(cr_win_run) == 16, "data after the runs must stay aligned");

/* ----------------------------------------------------------------- the origin's side */

static cr_dtype *bytes_type(void)
{
    return cr_dtype_get(MPI_BYTE);
}

/* The runs of target memory that (tcount, tdt) at `at` covers, as offsets from the target's
 * base (addresses, in dynamic windows: cr_win_target gives them as they are). */
static int runs_of(cr_win *w, char *at, MPI_Count tcount, cr_dtype *tdt, cr_win_run **out, uint64_t *nout)
{
    uint64_t n = (uint64_t)tcount * tdt->size, cap = 16, k = 0;
    cr_win_run *runs = malloc(cap * sizeof *runs);
    uintptr_t bias = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : CR_WIN_AM_BIAS;
    struct iovec iov[64];
    for (uint64_t done = 0; runs && done < n;) {
        int got;
        done += cr_dt_iov(at, tcount, tdt, done, n - done, iov, 64, &got);
        for (int i = 0; runs && i < got; i++) {
            uint64_t off = (uint64_t)((uintptr_t)iov[i].iov_base - bias);
            if (k && runs[k - 1].off + runs[k - 1].len == off) { /* adjacent: one run */
                runs[k - 1].len += iov[i].iov_len;
                continue;
            }
            if (k == cap) {
                cr_win_run *grown = realloc(runs, 2 * cap * sizeof *runs);
                if (!grown) {
                    free(runs);
                    runs = NULL;
                    break;
                }
                runs = grown;
                cap *= 2;
            }
            runs[k++] = (cr_win_run){off, iov[i].iov_len};
        }
    }
    if (!runs)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for the layout of %llu bytes of target data",
                      (unsigned long long)n);
    *out = runs;
    *nout = k;
    return MPI_SUCCESS;
}

/* A request message with room for `bytes` of data (returned in *data). */
static am_hdr *message(uint32_t kind, const cr_win_run *runs, uint64_t nruns, uint64_t bytes, char **data)
{
    size_t total = sizeof(am_hdr) + nruns * sizeof *runs + bytes;
    am_hdr *h = calloc(1, total);
    if (!h)
        return NULL;
    h->kind = kind;
    h->nruns = nruns;
    h->bytes = bytes;
    if (nruns)
        memcpy(h + 1, runs, nruns * sizeof *runs);
    if (data)
        *data = (char *)(h + 1) + nruns * sizeof *runs;
    return h;
}

/* A tag for an answer to this process (from TAG_ANSWER), or for data it sends (from TAG_DATA). */
static int new_tag(cr_win *w, int from)
{
    return from + (int)(atomic_fetch_add_explicit(&w->am_seq, 1, memory_order_relaxed) % ANSWER_TAGS);
}

/* Sends a request (and frees it); with `tag`, one that is answered, on a new tag set there. */
static int send_request(cr_win *w, int target, am_hdr *h, int *tag)
{
    if (tag)
        h->answer = *tag = new_tag(w, TAG_ANSWER);
    size_t total = sizeof *h + h->nruns * sizeof(cr_win_run) + h->bytes;
    int err = cr_pt2pt_send(h, (MPI_Count)total, bytes_type(), target, TAG_REQUEST, w->comm, w->comm->ctx,
                            CR_MODE_STANDARD);
    free(h);
    return err;
}

static int answer(cr_win *w, int target, int tag, void *buf, uint64_t bytes)
{
    return cr_pt2pt_recv(buf, (MPI_Count)bytes, bytes_type(), target, tag, w->comm, w->comm->ctx, NULL);
}

static void note_flushed(cr_win *w, int target, uint64_t upto);

/* The answer of a get or a fetching operation, on `tag`, received straight into the caller's
 * buffer (its datatype unpacks it) whenever it comes: the call returns at once, and the next
 * synchronisation towards that target waits for it (cr_win_am_answers). The target applies
 * requests in order, so when the answer is in, so are the operations sent to it before this
 * one: a flush after it has nothing left to ask (fetching operations are not counted in
 * am_sent, their answer says they are applied). */
static int expect_answer(cr_win *w, int target, int tag, void *buf, MPI_Count count, cr_dtype *dt)
{
    uint64_t upto = atomic_load_explicit(&w->am_sent[target], memory_order_acquire);
    if (w->am_nwaiting == w->am_cap_waiting) {
        int cap = w->am_cap_waiting ? 2 * w->am_cap_waiting : 16;
        cr_win_answer *grown = realloc(w->am_waiting, (size_t)cap * sizeof *grown);
        if (!grown)
            return cr_err(MPI_ERR_NO_MEM, "out of memory for the answers a window waits for");
        w->am_waiting = grown;
        w->am_cap_waiting = cap;
    }
    cr_request *r = cr_request_new(CR_REQ_RECV, &cr_pt2pt_request_ops);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a request");
    cr_pt2pt_prepare(r, CR_REQ_RECV, buf, count, dt, target, tag, w->comm, w->comm->ctx, CR_MODE_STANDARD);
    cr_pt2pt_hold_comm(r); /* and a derived datatype the caller may free before the answer comes */
    int err = cr_pt2pt_recv_post(r);
    if (err) {
        cr_request_release(r);
        return err;
    }
    w->am_waiting[w->am_nwaiting++] = (cr_win_answer){r, target, upto};
    return MPI_SUCCESS;
}

int cr_win_am_answers(cr_win *w, int target)
{
    int err = MPI_SUCCESS, k = 0;
    for (int i = 0; i < w->am_nwaiting; i++) {
        cr_win_answer a = w->am_waiting[i];
        if (target >= 0 && a.target != target) {
            w->am_waiting[k++] = a;
            continue;
        }
        cr_progress_wait(&a.r->done);
        if (!a.r->status.MPI_ERROR)
            note_flushed(w, a.target, a.upto);
        err = err ? err : a.r->status.MPI_ERROR;
        cr_request_release(a.r);
    }
    w->am_nwaiting = k;
    return err;
}

/* A request that carries only its header; with `tag`, answered there (the caller waits). */
static int control_send(cr_win *w, int target, uint32_t kind, uint32_t flags, int lock, int *tag)
{
    am_hdr *h = message(kind, NULL, 0, 0, NULL);
    if (!h)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a one-sided message");
    h->flags = flags;
    h->lock = lock;
    return send_request(w, target, h, tag);
}

/* The same, and its answer of `bytes` into buf. */
static int control(cr_win *w, int target, uint32_t kind, uint32_t flags, int lock, void *buf, uint64_t bytes)
{
    int tag, err = control_send(w, target, kind, flags, lock, &tag);
    return err ? err : answer(w, target, tag, buf, bytes);
}

/* Operations sent to `target` are counted once sent, so a flush that read the count before it
 * went out covers them all (they precede it from this process). */
static void note_sent(cr_win *w, int target)
{
    atomic_fetch_add_explicit(&w->am_sent[target], 1, memory_order_release);
}

static void note_flushed(cr_win *w, int target, uint64_t upto)
{
    uint64_t f = atomic_load_explicit(&w->am_flushed[target], memory_order_relaxed);
    while (f < upto && !atomic_compare_exchange_weak_explicit(&w->am_flushed[target], &f, upto, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

/* Whether some operation sent to `target` may not be applied yet; *upto: the count to flush. */
static bool unflushed(cr_win *w, int target, uint64_t *upto)
{
    *upto = atomic_load_explicit(&w->am_sent[target], memory_order_acquire);
    return atomic_load_explicit(&w->am_flushed[target], memory_order_relaxed) < *upto;
}

/* A request of `kind` for (tcount, tdt) at `at` with room for `bytes` of data (*data); NULL
 * with *err set, or with MPI_SUCCESS when there is nothing to move. */
static am_hdr *data_request(cr_win *w, uint32_t kind, char *at, MPI_Count tcount, cr_dtype *tdt, uint64_t bytes,
                            char **data, int *err)
{
    uint64_t n = (uint64_t)tcount * tdt->size, nruns;
    cr_win_run *runs;
    *err = MPI_SUCCESS;
    if (n == 0 || (*err = runs_of(w, at, tcount, tdt, &runs, &nruns)))
        return NULL;
    am_hdr *h = message(kind, runs, nruns, bytes, data);
    free(runs);
    if (!h)
        *err = cr_err(MPI_ERR_NO_MEM, "out of memory for %llu bytes of a one-sided operation",
                      (unsigned long long)n);
    else
        h->target_bytes = n;
    return h;
}

int cr_win_am_put(cr_win *w, int target, char *at, const void *obuf, MPI_Count ocount, cr_dtype *odt,
                  MPI_Count tcount, cr_dtype *tdt)
{
    int err;
    char *data;
    uint64_t n = (uint64_t)tcount * tdt->size;
    bool separate = n >= SEPARATE_MIN;
    am_hdr *h = data_request(w, AM_PUT, at, tcount, tdt, separate ? 0 : n, &data, &err);
    if (!h)
        return err;
    int tag = 0;
    if (separate) {
        h->flags = AM_SEPARATE;
        tag = h->answer = new_tag(w, TAG_DATA); /* the data's tag */
    } else {
        cr_dt_pack(obuf, ocount, odt, 0, data, n);
    }
    if ((err = send_request(w, target, h, NULL)) ||
        (separate && (err = cr_pt2pt_send(obuf, ocount, odt, target, tag, w->comm, w->comm->ctx, CR_MODE_STANDARD))))
        return err;
    note_sent(w, target);
    return MPI_SUCCESS;
}

int cr_win_am_get(cr_win *w, int target, char *at, void *obuf, MPI_Count ocount, cr_dtype *odt, MPI_Count tcount,
                  cr_dtype *tdt)
{
    int err;
    am_hdr *h = data_request(w, AM_GET, at, tcount, tdt, 0, NULL, &err);
    if (!h)
        return err;
    int tag = h->answer = new_tag(w, TAG_ANSWER);
    if ((err = expect_answer(w, target, tag, obuf, ocount, odt))) {
        free(h);
        return err;
    }
    return send_request(w, target, h, NULL);
}

int cr_win_am_accumulate(cr_win *w, int target, char *at, const void *obuf, MPI_Count ocount, cr_dtype *odt,
                         void *rbuf, MPI_Count rcount, cr_dtype *rdt, MPI_Count tcount, cr_dtype *tdt, cr_op *op,
                         const void *compare)
{
    int err;
    bool data = odt != NULL;
    char *payload;
    uint64_t n = (uint64_t)tcount * tdt->size;
    am_hdr *h = data_request(w, AM_ACC, at, tcount, tdt, data ? (compare ? 2 * n : n) : 0, &payload, &err);
    if (!h)
        return err;
    h->flags = (rdt ? AM_FETCH : 0) | (data ? 0 : AM_NO_DATA) | (compare ? AM_CAS : 0);
    h->op = op ? (uint64_t)op->obj.handle : 0;
    h->leaf = (uint64_t)((const cr_dtype *)tdt->leaf)->obj.handle;
    if (data)
        cr_dt_pack(obuf, ocount, odt, 0, payload, n);
    if (compare)
        memcpy(payload + n, compare, n);
    if (rdt && (err = expect_answer(w, target, h->answer = new_tag(w, TAG_ANSWER), rbuf, rcount, rdt))) {
        free(h);
        return err;
    }
    if ((err = send_request(w, target, h, NULL)))
        return err;
    if (!rdt) /* (a fetching one is known applied when its answer is in) */
        note_sent(w, target);
    return MPI_SUCCESS;
}

int cr_win_am_lock(cr_win *w, int target, int type, bool try, bool *granted)
{
    unsigned char yes = 0;
    int err = control(w, target, AM_LOCK, try ? AM_TRY : 0, type, &yes, 1);
    *granted = !err && yes;
    return err;
}

int cr_win_am_unlock(cr_win *w, int target, int type)
{
    unsigned char none;
    uint64_t upto;
    unflushed(w, target, &upto);
    int err = cr_win_am_answers(w, target);
    err = err ? err : control(w, target, AM_UNLOCK, 0, type, &none, 0);
    if (!err) /* answered after the operations before it */
        note_flushed(w, target, upto);
    return err;
}

int cr_win_am_flush(cr_win *w, int target)
{
    unsigned char none;
    uint64_t upto;
    int err = cr_win_am_answers(w, target);
    if (err || !unflushed(w, target, &upto))
        return err;
    err = control(w, target, AM_FLUSH, 0, 0, &none, 0);
    if (!err)
        note_flushed(w, target, upto);
    return err;
}

int cr_win_am_flush_all(cr_win *w)
{
    /* Every flush goes out before the first answer is awaited: one round trip in all. Each
     * answer is awaited once its flush is out, even after an error, so none is left behind. */
    int *tag = NULL, err = cr_win_am_answers(w, -1);
    uint64_t *upto = NULL;
    for (int r = 0; r < w->size && !err; r++) {
        uint64_t u;
        if (!unflushed(w, r, &u))
            continue;
        if (!tag) {
            tag = malloc((size_t)w->size * sizeof *tag);
            upto = malloc((size_t)w->size * sizeof *upto);
            if (!tag || !upto) {
                err = cr_err(MPI_ERR_NO_MEM, "out of memory for the flushes of a window of %d processes", w->size);
                break;
            }
            for (int q = 0; q < w->size; q++)
                tag[q] = -1;
        }
        upto[r] = u;
        if ((err = control_send(w, r, AM_FLUSH, 0, 0, &tag[r])))
            tag[r] = -1;
    }
    for (int r = 0; tag && upto && r < w->size; r++) {
        unsigned char none;
        if (tag[r] < 0)
            continue;
        int e = answer(w, r, tag[r], &none, 0);
        if (!e)
            note_flushed(w, r, upto[r]);
        err = err ? err : e;
    }
    free(tag);
    free(upto);
    return err;
}

int cr_win_am_post(cr_win *w, int origin)
{
    return control_send(w, origin, AM_POST, 0, 0, NULL);
}

int cr_win_am_complete(cr_win *w, int target)
{
    /* counted there after the operations before it; the target's wait sees them applied */
    return control_send(w, target, AM_COMPLETE, 0, 0, NULL);
}

/* ----------------------------------------------------------------- the target's side */

/* An answer still being sent (the request lives in it until it completes). */
typedef struct am_out {
    cr_request r;
    struct am_out *next;
    _Alignas(16) char data[];
} am_out;

typedef struct am_waiter {
    int origin, type, tag;
} am_waiter;

typedef struct cr_win_am {
    cr_win *w;
    struct cr_win_am *next; /* the windows this process serves */
    cr_request in;          /* the request being received, when receiving */
    bool receiving;
    bool data_posted;       /* and, for a put with its data apart, the receive of that data */
    cr_request data;
    char *data_tmp;         /* where it lands when the target data is several runs */
    int in_src;
    am_hdr *in_buf;
    am_out *out;
    am_waiter *waiting; /* lock requests not granted yet, in arrival order */
    int nwaiting, cap_waiting;
} cr_win_am;

static cr_win_am *serving;
static bool in_hook; /* a request's work may wait, making progress: it is not served again */

/* One byte more than asked, so a zero-byte answer still has a buffer. */
static am_out *out_new(uint64_t bytes)
{
    am_out *o = calloc(1, sizeof *o + bytes + 1);
    if (!o)
        cr_runtime_abort(NULL, MPI_ERR_NO_MEM, "out of memory for the answer to a one-sided operation");
    return o;
}

/* Sends an answer now if it can, else leaves it to complete (the request keeps its buffer). */
static void out_send(cr_win_am *a, int origin, int tag, am_out *o, uint64_t bytes)
{
    cr_win *w = a->w;
    if (cr_pt2pt_send_now(o->data, (MPI_Count)bytes, bytes_type(), origin, tag, w->comm, w->comm->ctx)) {
        free(o);
        return;
    }
    cr_pt2pt_prepare(&o->r, CR_REQ_SEND, o->data, (MPI_Count)bytes, bytes_type(), origin, tag, w->comm,
                     w->comm->ctx, CR_MODE_STANDARD);
    if (cr_pt2pt_send_start(&o->r) != MPI_SUCCESS)
        cr_runtime_abort(NULL, MPI_ERR_INTERN, "cannot answer a one-sided operation");
    o->next = a->out;
    a->out = o;
}

static void answer_byte(cr_win_am *a, int origin, int tag, unsigned char v)
{
    am_out *o = out_new(1);
    o->data[0] = (char)v;
    out_send(a, origin, tag, o, 1);
}

static bool grant(cr_win_am *a, am_waiter l)
{
    if (!cr_win_lock_try(a->w, a->w->rank, l.type))
        return false;
    answer_byte(a, l.origin, l.tag, 1);
    return true;
}

/* Locks asked for while held: granted as they come free, in arrival order, where a shared one
 * never passes an exclusive one waiting before it (a stream of readers cannot starve a writer;
 * an exclusive one may pass shared ones that cannot go yet). A new request waits behind any
 * already waiting; a try is refused then. */
static int grant_waiting(cr_win_am *a)
{
    int k = 0, got = 0;
    bool writer_ahead = false;
    for (int i = 0; i < a->nwaiting; i++) {
        am_waiter l = a->waiting[i];
        if (!(writer_ahead && l.type == MPI_LOCK_SHARED) && grant(a, l)) {
            got++;
        } else {
            a->waiting[k++] = l;
            writer_ahead |= l.type == MPI_LOCK_EXCLUSIVE;
        }
    }
    a->nwaiting = k;
    return got;
}

static void lock_wait(cr_win_am *a, am_waiter l)
{
    if (a->nwaiting == a->cap_waiting) {
        int cap = a->cap_waiting ? 2 * a->cap_waiting : 8;
        am_waiter *grown = realloc(a->waiting, (size_t)cap * sizeof *grown);
        if (!grown)
            cr_runtime_abort(NULL, MPI_ERR_NO_MEM, "out of memory for a one-sided lock request");
        a->waiting = grown;
        a->cap_waiting = cap;
    }
    a->waiting[a->nwaiting++] = l;
}

static void runs_copy(cr_win *w, const cr_win_run *runs, uint64_t nruns, char *packed, bool into_window)
{
    for (uint64_t i = 0; i < nruns; i++) {
        char *at = cr_win_run_at(w, runs[i].off);
        if (into_window)
            cr_copy(at, packed, runs[i].len);
        else
            cr_copy(packed, at, runs[i].len);
        packed += runs[i].len;
    }
}

enum { APPLIED, BUSY, DATA_POSTED };

/* The receive of a put's data sent apart (AM_SEPARATE): into the window when it is one run. */
static void post_data(cr_win_am *a, int origin, const am_hdr *h, const cr_win_run *runs)
{
    cr_win *w = a->w;
    uint64_t n = h->target_bytes;
    char *to = h->nruns == 1 ? cr_win_run_at(w, runs[0].off) : (a->data_tmp = malloc(n));
    if (!to)
        cr_runtime_abort(NULL, MPI_ERR_NO_MEM, "out of memory for the data of a one-sided put");
    memset(&a->data, 0, sizeof a->data);
    cr_pt2pt_prepare(&a->data, CR_REQ_RECV, to, (MPI_Count)n, bytes_type(), origin, h->answer, w->comm, w->comm->ctx,
                     CR_MODE_STANDARD);
    if (cr_pt2pt_recv_post(&a->data) != MPI_SUCCESS)
        cr_runtime_abort(NULL, MPI_ERR_INTERN, "cannot receive the data of a one-sided put");
    a->data_posted = true;
}

/* Applies one request from `origin` (its answer, if any, goes back on the tag it names): BUSY
 * when it cannot be applied yet (an accumulate whose word is taken; it stays first in line),
 * DATA_POSTED when a put's data, sent apart, is still to come. */
static int apply(cr_win_am *a, int origin, am_hdr *h)
{
    cr_win *w = a->w;
    const cr_win_run *runs = (const cr_win_run *)(h + 1);
    char *data = (char *)(runs + h->nruns);
    uint64_t n = h->target_bytes;
    switch (h->kind) {
    case AM_PUT:
        if (h->flags & AM_SEPARATE) {
            post_data(a, origin, h, runs);
            return DATA_POSTED;
        }
        runs_copy(w, runs, h->nruns, data, true);
        break;
    case AM_GET: {
        am_out *o = out_new(n);
        runs_copy(w, runs, h->nruns, o->data, false);
        out_send(a, origin, h->answer, o, n);
        break;
    }
    case AM_ACC: {
        am_out *o = h->flags & AM_FETCH ? out_new(n) : NULL;
        cr_op *op = h->op ? cr_op_get((MPI_Op)(uintptr_t)h->op) : NULL;
        cr_dtype *leaf = cr_dtype_get((MPI_Datatype)(uintptr_t)h->leaf);
        int err = cr_win_apply_accumulate(w, runs, h->nruns, n, h->flags & AM_NO_DATA ? NULL : data,
                                          o ? o->data : NULL, op, leaf, h->flags & AM_CAS ? data + n : NULL);
        if (err == CR_WIN_BUSY) {
            free(o);
            return BUSY;
        }
        if (err)
            cr_runtime_abort(NULL, err, "a one-sided accumulate sent by message could not be applied");
        if (o)
            out_send(a, origin, h->answer, o, n);
        break;
    }
    case AM_LOCK: {
        am_waiter l = {origin, h->lock, h->answer};
        if (a->nwaiting || !grant(a, l)) { /* behind those waiting already */
            if (h->flags & AM_TRY)
                answer_byte(a, origin, h->answer, 0);
            else
                lock_wait(a, l);
        }
        break;
    }
    case AM_UNLOCK:
        cr_win_lock_release(w, w->rank, h->lock);
        out_send(a, origin, h->answer, out_new(0), 0);
        if (a->nwaiting)
            grant_waiting(a);
        break;
    case AM_FLUSH: out_send(a, origin, h->answer, out_new(0), 0); break;
    case AM_POST: /* `origin` posted an exposure epoch that names this process */
        atomic_fetch_add_explicit(&w->posted[(size_t)w->rank * (size_t)w->size + (size_t)origin], 1,
                                  memory_order_release);
        cr_xport_wake_node();
        break;
    case AM_COMPLETE:
        atomic_fetch_add_explicit(&w->completed[(size_t)w->rank * (size_t)w->size + (size_t)origin], 1,
                                  memory_order_release);
        cr_xport_wake_node();
        break;
    default: cr_runtime_abort(NULL, MPI_ERR_INTERN, "a one-sided message of an unknown kind arrived");
    }
    return APPLIED;
}

/* Applies what has arrived for one window, one request at a time (in order: a request being
 * received holds back the ones behind it); returns how many. */
static int serve(cr_win_am *a)
{
    cr_win *w = a->w;
    int got = 0;
    for (am_out **p = &a->out; *p;) {
        if ((*p)->r.done) {
            am_out *o = *p;
            *p = o->next;
            free(o);
        } else {
            p = &(*p)->next;
        }
    }
    if (a->nwaiting)
        got += grant_waiting(a);
    for (;;) {
        if (a->receiving) {
            if (!a->in.done)
                break;
            if (a->in.status.MPI_ERROR)
                cr_runtime_abort(NULL, a->in.status.MPI_ERROR, "a one-sided message could not be received");
            if (!a->data_posted && apply(a, a->in_src, a->in_buf) == BUSY)
                break; /* again in the next round, before anything behind it */
            if (a->data_posted) { /* a put whose data comes apart: applied once it is in */
                if (!a->data.done)
                    break;
                if (a->data.status.MPI_ERROR)
                    cr_runtime_abort(NULL, a->data.status.MPI_ERROR, "the data of a one-sided put could not be "
                                                                     "received");
                if (a->data_tmp)
                    runs_copy(w, (const cr_win_run *)(a->in_buf + 1), a->in_buf->nruns, a->data_tmp, true);
                free(a->data_tmp);
                a->data_tmp = NULL;
                a->data_posted = false;
            }
            a->receiving = false;
            free(a->in_buf);
            a->in_buf = NULL;
            got++;
            continue;
        }
        cr_unexp *u = cr_pt2pt_probe(w->comm, w->comm->ctx, MPI_ANY_SOURCE, TAG_REQUEST, true);
        if (!u)
            break;
        a->in_src = u->src;
        a->in_buf = malloc(u->bytes ? u->bytes : 1);
        if (!a->in_buf)
            cr_runtime_abort(NULL, MPI_ERR_NO_MEM, "out of memory for a one-sided message");
        memset(&a->in, 0, sizeof a->in);
        cr_pt2pt_prepare(&a->in, CR_REQ_RECV, a->in_buf, (MPI_Count)u->bytes, bytes_type(), u->src, TAG_REQUEST,
                         w->comm, w->comm->ctx, CR_MODE_STANDARD);
        a->receiving = true;
        cr_pt2pt_recv_message(&a->in, u);
    }
    return got;
}

static int am_progress(void)
{
    if (in_hook)
        return 0;
    in_hook = true;
    int got = 0;
    for (cr_win_am *a = serving; a; a = a->next)
        got += serve(a);
    in_hook = false;
    return got;
}

int cr_win_am_open(cr_win *w)
{
    cr_win_am *a = calloc(1, sizeof *a);
    if (!a || (!serving && cr_progress_add_hook(am_progress) != 0)) {
        free(a);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a window reached by messages");
    }
    a->w = w;
    a->next = serving;
    serving = a;
    w->am_in = a;
    return MPI_SUCCESS;
}

static bool answers_sent(void *arg)
{
    const cr_win_am *a = arg;
    for (const am_out *o = a->out; o; o = o->next)
        if (!o->r.done)
            return false;
    return !a->receiving;
}

void cr_win_am_close(cr_win *w)
{
    cr_win_am *a = w->am_in;
    if (!a)
        return;
    /* Every process is past its last epoch: what is left is answers on their way out. */
    if (!answers_sent(a))
        cr_win_wait(answers_sent, a);
    for (cr_win_am **p = &serving; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            break;
        }
    if (!serving)
        cr_progress_remove_hook(am_progress);
    while (a->out) {
        am_out *o = a->out;
        a->out = o->next;
        free(o);
    }
    free(a->waiting);
    free(a);
    w->am_in = NULL;
}
