/* request.h: requests (the state of one nonblocking, persistent or internal operation), the
 * status they report, and the progress engine that completes them.
 *
 * Invariants:
 *   - `done` becomes 1 exactly once per activation, when the operation has completed; its
 *     status is final from then on;
 *   - a request stays allocated while any layer still needs it: a send freed by the user before
 *     it completed is released by its completion (`freed`);
 *   - blocking calls run the same code on a request that lives on their stack (never looked up
 *     by handle), so the blocking and nonblocking paths cannot drift apart;
 *   - a request's address is its identity on the wire (rendezvous ids), valid while it lives. */
#ifndef CR_REQUEST_H
#define CR_REQUEST_H

#include "core/error.h"
#include "core/handle.h"
#include "core/thread.h"

struct cr_comm;
struct cr_dtype;
struct cr_unexp;

typedef enum {
    CR_REQ_SEND = 1,
    CR_REQ_RECV,
    CR_REQ_DONE, /* an operation that completed when it started (MPI_PROC_NULL, empty) */
    CR_REQ_OTHER, /* anything else: its layer's cr_request_ops say what it does */
} cr_req_kind;

typedef enum { CR_MODE_STANDARD, CR_MODE_SYNC, CR_MODE_READY, CR_MODE_BUFFERED } cr_send_mode;

/* A call waiting on a set of requests (MPI_Waitall, Waitany, Waitsome): each request of the
 * set points to it while the call waits and counts itself in when it completes, so the wait
 * checks one number per round instead of every request. */
typedef struct cr_waiter {
    int completed;
} cr_waiter;

struct cr_request;
struct cr_errobj;

/* What the layer that owns a kind of request does for the calls of this layer: start it again
 * (MPI_Start of a persistent request), cancel it (MPI_Cancel), and let go of what it holds when
 * the request goes (a communicator it keeps alive, say). Any of them may be NULL. This layer
 * never calls a layer above it: point-to-point, collectives, generalized requests and later
 * one-sided operations each supply their own. */
typedef struct cr_request_ops {
    int (*start)(struct cr_request *r);
    int (*cancel)(struct cr_request *r);
    /* Returns an error code: a generalized request's free function can fail, and the call that
     * completed the request reports it. */
    int (*release)(struct cr_request *r);
    /* Fills `status` of a completed request each time it reports (generalized requests ask
     * the user's query function); returns the operation's error code. */
    int (*query)(struct cr_request *r);
} cr_request_ops;

typedef struct cr_request {
    cr_obj obj;
    const cr_request_ops *ops;
    struct cr_errobj *err_target; /* where an error of the operation is raised (its communicator) */
    uint8_t kind;       /* cr_req_kind */
    uint8_t persistent; /* made by a *_init call: restarted by MPI_Start, freed by MPI_Request_free */
    uint8_t active;     /* persistent: started and not yet completed by a wait or test */
    uint8_t freed;      /* the user freed it while it was running */
    uint8_t mode;       /* cr_send_mode */
    uint8_t proto;      /* protocol state, owned by pt2pt */
    uint8_t cancel;     /* cancellation state, owned by pt2pt */
    uint8_t holds_comm; /* keeps `comm` alive until the request is released (pt2pt's flag) */
    uint8_t holds_dt;   /* and keeps a derived `dt` alive (MPI_Type_free while it runs) */
    uint8_t queried;    /* its status comes from ops->query each time it reports (generalized) */
    volatile int done;
    MPI_Status status;
    struct cr_request *next, *prev; /* posted-receive queue or a pending-send queue */
    /* the operation */
    struct cr_comm *comm;
    uint32_t ctx;     /* matching context: comm->ctx (user traffic) or comm->ctx + 1 (collectives) */
    void *buf;
    MPI_Count count;
    struct cr_dtype *dt;
    int peer;         /* comm rank: destination, or source (possibly MPI_ANY_SOURCE) */
    int tag;
    int world_peer;   /* world rank of the destination (sends), or of the sender once matched */
    uint64_t bytes;   /* message size */
    void *tmp;        /* a compound request's copy of its data (MPI_Isendrecv_replace) */
    uint64_t remote;  /* the peer's request id, in rendezvous protocols */
    uint64_t offset;  /* bytes moved so far, in the pipelined protocol */
    /* Called when the operation completes, before `done` is visible to waiters: buffered
     * sends release their buffer space, parts of a compound operation report to their whole. */
    void (*on_complete)(struct cr_request *r);
    void *owner;      /* what on_complete works on (a buffer segment, the compound request) */
    cr_waiter *waiter; /* the set being waited on that holds this request, while it waits, */
    int waits;         /* and how many times it stands in that set (a handle may repeat) */
    int parts;        /* compound requests: parts still running */
} cr_request;

void cr_request_setup(void);

/* The request of every nonblocking send that was complete when it started (the message went
 * into the transport at once): one shared object, done, with an empty status, never released
 * or written after setup. Such a send then costs no request of its own (MPICH hands out a
 * built-in completed request the same way). Several outstanding handles may be equal. */
extern cr_request *cr_request_sent;

static inline cr_request *cr_request_get(MPI_Request h)
{
    return (cr_request *)cr_handle_get((uintptr_t)h, CR_KIND_REQUEST);
}

static inline MPI_Request cr_request_handle(const cr_request *r)
{
    return (MPI_Request)(uintptr_t)r->obj.handle;
}

/* A new request with one reference (the user's handle), run by `ops`. NULL when out of memory. */
cr_request *cr_request_new(cr_req_kind kind, const cr_request_ops *ops);

/* cr_request_new inlined, for the paths that take a request per message (MPI_Irecv). */
static CR_ALWAYS_INLINE cr_request *cr_request_take(cr_req_kind kind, const cr_request_ops *ops)
{
    cr_request *r = cr_obj_alloc_sized(CR_KIND_REQUEST, CR_POOL_OBJSIZE(sizeof(cr_request)));
    if (r) {
        r->kind = (uint8_t)kind;
        r->ops = ops;
    }
    return r;
}
/* Drops a reference; releases the request with the last. Returns the release's error (a
 * generalized request's free function), MPI_SUCCESS when it has none or the request lives on. */
int cr_request_release(cr_request *r);
/* Marks the operation complete. A request the user already freed is released. */
void cr_request_complete_any(cr_request *r);
/* The same, inline for the common request (no completion callback, no wait set enrolled, not
 * freed by the user): a flag and the event, where the call was a tenth of an 8-byte message's
 * receive. */
static CR_ALWAYS_INLINE void cr_request_complete(cr_request *r)
{
    if (CR_LIKELY(!r->on_complete && !r->waiter && !r->freed)) {
        r->done = 1;
        cr_thread_event();
        return;
    }
    cr_request_complete_any(r);
}

/* Status fields MPI leaves to the implementation: the byte count and the cancelled flag, in
 * MPI_internal (copied with memcpy: the ABI only promises int alignment). */
static inline void cr_status_set(MPI_Status *s, int source, int tag, uint64_t bytes)
{
    s->MPI_SOURCE = source;
    s->MPI_TAG = tag;
    s->MPI_ERROR = MPI_SUCCESS;
    memcpy(&s->MPI_internal[0], &bytes, sizeof bytes);
    s->MPI_internal[2] = 0;
}

static inline uint64_t cr_status_bytes(const MPI_Status *s)
{
    uint64_t b;
    memcpy(&b, &s->MPI_internal[0], sizeof b);
    return b;
}

static inline void cr_status_set_bytes(MPI_Status *s, uint64_t bytes)
{
    memcpy(&s->MPI_internal[0], &bytes, sizeof bytes);
}

/* Copies a status out to the user's. MPI_ERROR is left as it was when the operation succeeded:
 * calls that return one status do not set it (MPI 4.1, 3.2.5: only those that return several
 * do, with MPI_ERR_IN_STATUS), and programs rely on that (MPICH's tests store a value there and
 * check it survives). A failed operation's code is put there, as MPICH and Open MPI do, for
 * programs that look at it after MPI_ERRORS_RETURN. */
static inline void cr_status_out(MPI_Status *user, const MPI_Status *s)
{
    int e = user->MPI_ERROR;
    *user = *s;
    if (s->MPI_ERROR == MPI_SUCCESS)
        user->MPI_ERROR = e;
}

/* The same for a status made of its parts (a probe's, a receive from MPI_PROC_NULL). */
static inline void cr_status_out_set(MPI_Status *user, int source, int tag, uint64_t bytes)
{
    MPI_Status s;
    cr_status_set(&s, source, tag, bytes);
    cr_status_out(user, &s);
}

/* The status of an operation with nothing to report (MPI's "empty" status). */
static inline void cr_status_empty(MPI_Status *s)
{
    cr_status_set(s, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
}

/* Progress: delivers what transports have and pushes what waits to be sent. */
int cr_progress(void);
/* One round of progress for a call that polls (MPI_Test*, MPI_Iprobe, ...) and returns. A
 * program polling in a loop would keep its core from the processes it waits for when processes
 * outnumber cores: then an empty round also yields the core. */
int cr_progress_poll(void);
/* Makes progress until *flag becomes non-zero, spinning, yielding or sleeping as the machine
 * allows. */
void cr_progress_wait(volatile int *flag);
/* The same for a condition over several things: calls ready(arg) between rounds. */
void cr_progress_wait_until(bool (*ready)(void *), void *arg);
/* The same for a condition that only reads (calling it has no effect, so another thread may
 * call it: core/thread.h), which lets a thread that completes something wake only the waiters
 * it concerns at MPI_THREAD_MULTIPLE. It may keep state of its own that only moves forward
 * (Waitall's cursor past the requests done): every call is made under the critical section. */
void cr_progress_wait_until_pure(bool (*ready)(void *), void *arg);

/* Hooks the progress engine calls every round (pt2pt's pending sends, collective schedules). */
typedef int cr_progress_hook(void);
/* Adds a hook (once; adding it again does nothing); -1 when out of memory. Any number may be
 * added; each round runs them in the order they were added. */
int cr_progress_add_hook(cr_progress_hook *hook);
void cr_progress_remove_hook(cr_progress_hook *hook);

#endif
