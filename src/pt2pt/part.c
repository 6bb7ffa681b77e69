/* part.c: partitioned point-to-point communication (MPI 4: MPI_Psend_init, MPI_Precv_init,
 * MPI_Pready, MPI_Pready_range, MPI_Pready_list, MPI_Parrived), built on this layer's messages.
 *
 * Matching. A partitioned send matches only a partitioned receive, by communicator, source and
 * tag, and where those repeat, in the order of the initialisation calls (MPI-4.1, 4.2.3). At
 * MPI_Psend_init the sender sends the receiver a *hello*: its tag, its partitions, the bytes of
 * one partition and the tags its data will use. Hellos travel on the communicator's collective
 * context with tag HELLO_TAG, a negative tag no collective uses (their tags are never negative)
 * and no user receive can name, and between two processes they arrive in the sender's order
 * of initialisation. A receive that has no sender yet is *pending*; while any is, a progress
 * hook takes the hellos of its (communicator, source) out of the unexpected queue into the
 * inbox (arrival order) and gives each pending receive, in initialisation order, the first
 * hello with its tag: exactly the standard's rule, whatever order the tags come in.
 *
 * Data. Each partition of the send is one message, sent by MPI_Pready (so partitions ready
 * early leave early), on the collective context with a tag of its own, -4 and below, taken from
 * a counter at MPI_Psend_init. The receiver, once it has its hello and is started, posts one
 * receive per *sender's* partition at that partition's byte offset: the two sides may cut the
 * buffer differently, MPI_Parrived(j) answers from the sender's partitions that cover the
 * receiver's partition j. Each start of a pair sends and receives each tag once, and messages
 * with one tag between two processes never overtake each other, so every round matches its
 * own round. A receive whose type is not one run of bytes receives into a packed copy and
 * unpacks each partition as it arrives.
 *
 * Invariants: a pending receive is on `pending` (and the hook registered) exactly while it has
 * no hello; the user's request counts in `parts` the messages still to complete in this round;
 * the internal messages release themselves when they complete. */
#include "pt2pt.h"

#include "core/error.h"
#include "cr_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELLO_TAG (-3)
#define DATA_TAG_FIRST (-4)
#define DATA_TAGS 0x7ffffff0u /* tags -4 .. -(4 + DATA_TAGS - 1), used in turn */

typedef struct hello {
    int64_t tag, partitions, part_bytes, first_tag;
} hello;

typedef struct part {
    bool send;
    bool bound;         /* receive: it has its sender's hello */
    char *buf;
    int partitions;
    MPI_Count count;    /* elements per partition */
    cr_dtype *dt;
    uint64_t part_bytes; /* data bytes of one partition */
    int peer, tag;
    cr_comm *comm;
    cr_request *req;    /* the user's request */
    uint32_t first_tag; /* send: its data tags (index into the counter's cycle) */
    uint8_t *ready;     /* send: partitions marked ready in this round */
    hello h;            /* receive: the sender's description */
    uint8_t *arrived;   /* receive: the sender's partitions arrived in this round */
    char *packed;       /* receive: where data lands when it cannot land in buf */
    int err;            /* receive: the error of this round (a size mismatch) */
    struct part *next;  /* pending receives, in initialisation order */
} part;

/* A hello taken from the unexpected queue, not yet given to a receive. */
typedef struct inbox_entry {
    uint32_t ctx; /* the communicator's context, with its epoch */
    int src;
    hello h;
    cr_request *rq;
    struct inbox_entry *next;
} inbox_entry;

static part *pending, **pending_tail = &pending;
static inbox_entry *inbox, **inbox_tail = &inbox;
static uint32_t next_data_tag;
static bool hooked;

static int data_tag(uint32_t first, int i)
{
    return DATA_TAG_FIRST - (int)((first + (uint32_t)i) % DATA_TAGS);
}

static const cr_request_ops part_ops; /* (defined below, with the functions it names) */

static part *part_of(cr_request *r, bool send)
{
    if (!r || r->ops != &part_ops)
        return NULL;
    part *p = r->owner;
    return p->send == send ? p : NULL;
}

/* An internal message of `p` (a hello, or a partition's data): it releases itself when it
 * completes, after on_complete. */
static cr_request *message(part *p, cr_req_kind kind, void *buf, MPI_Count count, cr_dtype *dt, int tag,
                           void (*on_complete)(cr_request *), void *owner)
{
    cr_request *m = cr_request_new(kind, &cr_pt2pt_request_ops);
    if (!m)
        return NULL;
    cr_pt2pt_prepare(m, kind, buf, count, dt, p->peer, tag, p->comm, p->comm->ctx + 1, CR_MODE_STANDARD);
    cr_pt2pt_hold_comm(m);
    m->owner = owner;
    m->on_complete = on_complete;
    m->freed = 1;
    return m;
}

static void finish_round(part *p)
{
    cr_request *r = p->req;
    if (p->send)
        cr_status_empty(&r->status);
    else
        cr_status_set(&r->status, p->peer, p->tag, p->h.partitions * p->h.part_bytes);
    r->status.MPI_ERROR = p->err;
    cr_request_complete(r);
}

/* ----------------------------------------------------------------- sending */

static void hello_sent(cr_request *m)
{
    free(m->owner);
}

static void data_sent(cr_request *m)
{
    part *p = m->owner;
    if (m->status.MPI_ERROR && !p->err)
        p->err = m->status.MPI_ERROR;
    if (--p->req->parts == 0)
        finish_round(p);
}

static int send_partition(part *p, int i)
{
    if (p->ready[i])
        return cr_err(MPI_ERR_ARG, "partition %d of the partitioned send is already marked ready in this round", i);
    p->ready[i] = 1;
    if (p->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    char *at = p->buf + (MPI_Aint)i * (MPI_Aint)p->count * p->dt->extent;
    cr_request *m = message(p, CR_REQ_SEND, at, p->count, p->dt, data_tag(p->first_tag, i), data_sent, p);
    if (!m)
        return cr_err(MPI_ERR_NO_MEM, "out of memory sending partition %d", i);
    return cr_pt2pt_send_start(m);
}

/* ----------------------------------------------------------------- receiving */

/* Which of the sender's partitions the data message `m` carries: its tag says (data_tag). */
static int64_t partition_of(const part *p, const cr_request *m)
{
    uint32_t first = (uint32_t)p->h.first_tag % DATA_TAGS, at = (uint32_t)(DATA_TAG_FIRST - m->tag);
    return (int64_t)((at + DATA_TAGS - first) % DATA_TAGS);
}

static void data_arrived(cr_request *m)
{
    part *p = m->owner;
    int64_t k = partition_of(p, m); /* (not from the address: partitions of 0 bytes share one) */
    if (m->status.MPI_ERROR && !p->err)
        p->err = m->status.MPI_ERROR;
    if (p->packed && !p->err) /* (the round's error, a mismatch, leaves buf alone) */
        cr_dt_unpack(p->buf, (MPI_Count)p->partitions * p->count, p->dt, (uint64_t)k * p->h.part_bytes,
                     m->buf, p->h.part_bytes);
    p->arrived[k] = 1;
    if (--p->req->parts == 0)
        finish_round(p);
}

/* Posts this round's receives, one per sender's partition (the receive is started and bound). */
static int post_round(part *p)
{
    uint64_t theirs = (uint64_t)p->h.partitions * p->h.part_bytes,
             mine = (uint64_t)p->partitions * p->part_bytes;
    memset(p->arrived, 0, (size_t)p->h.partitions);
    p->err = theirs > mine ? cr_err(MPI_ERR_TRUNCATE,
                                    "the partitioned send sends %llu bytes (%lld partitions of %llu) to a "
                                    "partitioned receive of %llu",
                                    (unsigned long long)theirs, (long long)p->h.partitions,
                                    (unsigned long long)p->h.part_bytes, (unsigned long long)mine)
                           : MPI_SUCCESS;
    bool direct = !p->err && cr_dtype_is_contig_n(p->dt, (MPI_Count)p->partitions * p->count);
    if (!direct && !p->packed && theirs > 0 && !(p->packed = malloc(theirs)))
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a partitioned receive of %llu bytes",
                      (unsigned long long)theirs);
    if (direct) { /* (a buffer reused with another layout later: the packed copy goes) */
        free(p->packed);
        p->packed = NULL;
    }
    p->req->parts = (int)p->h.partitions;
    if (p->h.partitions == 0) {
        finish_round(p);
        return MPI_SUCCESS;
    }
    char *base = direct ? p->buf + p->dt->true_lb : p->packed;
    cr_dtype *bytes = cr_dtype_get(MPI_BYTE);
    for (int64_t k = 0; k < p->h.partitions; k++) {
        cr_request *m = message(p, CR_REQ_RECV, base + k * (int64_t)p->h.part_bytes, (MPI_Count)p->h.part_bytes,
                                bytes, data_tag((uint32_t)p->h.first_tag, (int)k), data_arrived, p);
        if (!m)
            return cr_err(MPI_ERR_NO_MEM, "out of memory receiving a partition");
        int err = cr_pt2pt_recv_post(m);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

static int bind(part *p, const hello *h)
{
    p->h = *h;
    p->bound = true;
    if (!(p->arrived = calloc((size_t)(h->partitions ? h->partitions : 1), 1)))
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a partitioned receive");
    return p->req->active && !p->req->done ? post_round(p) : MPI_SUCCESS;
}

/* Moves the hellos from `src` on `comm` out of the unexpected queue into the inbox. */
static void collect_hellos(cr_comm *comm, int src)
{
    cr_unexp *u;
    while ((u = cr_pt2pt_probe(comm, comm->ctx + 1, src, HELLO_TAG, true))) {
        inbox_entry *e = calloc(1, sizeof *e);
        cr_request *rq = e ? cr_request_new(CR_REQ_RECV, &cr_pt2pt_request_ops) : NULL;
        if (!rq) {
            fprintf(stderr, "Courier: out of memory matching a partitioned receive\n");
            abort();
        }
        cr_pt2pt_prepare(rq, CR_REQ_RECV, &e->h, (MPI_Count)sizeof e->h, cr_dtype_get(MPI_BYTE), src, HELLO_TAG, comm,
                         comm->ctx + 1, CR_MODE_STANDARD);
        cr_pt2pt_recv_message(rq, u); /* (a hello is one eager frame: it is here, whole) */
        e->ctx = comm->ctx;
        e->src = src;
        e->rq = rq;
        *inbox_tail = e;
        inbox_tail = &e->next;
    }
}

/* Gives `p` the first hello of the inbox from its source with its tag; false if none yet. */
static bool take_hello(part *p, int *err)
{
    for (inbox_entry **at = &inbox; *at; at = &(*at)->next) {
        inbox_entry *e = *at;
        if (e->ctx != p->comm->ctx || e->src != p->peer || !e->rq->done || e->h.tag != p->tag)
            continue;
        if (!(*at = e->next))
            inbox_tail = at;
        hello h = e->h;
        cr_request_release(e->rq);
        free(e);
        *err = bind(p, &h);
        return true;
    }
    return false;
}

static void unpend(part *p)
{
    for (part **at = &pending; *at; at = &(*at)->next) {
        if (*at == p) {
            if (!(*at = p->next))
                pending_tail = at;
            p->next = NULL;
            return;
        }
    }
}

static int matching_hook(void);

static void hook_update(void)
{
    if (pending && !hooked)
        hooked = cr_progress_add_hook(matching_hook) == 0;
    else if (!pending && hooked) {
        cr_progress_remove_hook(matching_hook);
        hooked = false;
    }
}

/* Progress hook, registered while receives are pending: matches them, in initialisation order. */
static int matching_hook(void)
{
    int got = 0;
    for (part *p = pending, *next; p; p = next) {
        next = p->next;
        collect_hellos(p->comm, p->peer);
        int err = MPI_SUCCESS;
        if (take_hello(p, &err)) {
            unpend(p);
            got++;
            if (err && p->req->active && !p->req->done) { /* (no call to report it to: the round fails) */
                p->err = err;
                finish_round(p);
            }
        }
    }
    hook_update();
    return got;
}

/* ----------------------------------------------------------------- the request */

static int part_start(cr_request *r)
{
    part *p = r->owner;
    r->done = 0;
    p->err = MPI_SUCCESS;
    if (p->send) {
        memset(p->ready, 0, (size_t)(p->partitions ? p->partitions : 1));
        r->parts = p->peer == MPI_PROC_NULL ? 0 : p->partitions;
        if (r->parts == 0)
            finish_round(p);
        return MPI_SUCCESS;
    }
    if (p->peer == MPI_PROC_NULL) {
        cr_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        cr_request_complete(r);
        return MPI_SUCCESS;
    }
    return p->bound ? post_round(p) : MPI_SUCCESS;
}

static int part_release(cr_request *r)
{
    part *p = r->owner;
    if (!p)
        return MPI_SUCCESS;
    if (!p->send && !p->bound) {
        unpend(p);
        hook_update();
    }
    cr_comm_release(p->comm);
    if (p->dt->d)
        cr_dtype_release(p->dt);
    free(p->ready);
    free(p->arrived);
    free(p->packed);
    free(p);
    r->owner = NULL;
    return MPI_SUCCESS;
}

static const cr_request_ops part_ops = {part_start, NULL, part_release, NULL};

static int part_init(bool send, void *buf, int partitions, MPI_Count count, cr_dtype *dt, int peer, int tag,
                     cr_comm *comm, MPI_Request *request)
{
    if (partitions < 0)
        return cr_err(MPI_ERR_ARG, "partitions=%d: must not be negative", partitions);
    if (!buf && partitions > 0 && count > 0 && cr_dtype_starts_at_buffer(dt))
        return cr_err(MPI_ERR_BUFFER, "buf is NULL but %d partitions of %lld elements of %s are to be %s", partitions,
                      (long long)count, dt->name ? dt->name : "a datatype", send ? "sent" : "received");
    if (!send && peer == MPI_ANY_SOURCE)
        return cr_err(MPI_ERR_RANK, "source=MPI_ANY_SOURCE: a partitioned receive names its sender");
    if (!send && tag == MPI_ANY_TAG)
        return cr_err(MPI_ERR_TAG, "tag=MPI_ANY_TAG: a partitioned receive names its tag");
    part *p = calloc(1, sizeof *p);
    cr_request *r = p ? cr_request_new(CR_REQ_OTHER, &part_ops) : NULL;
    if (!r) {
        free(p);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a partitioned request");
    }
    *p = (part){.send = send, .buf = buf, .partitions = partitions, .count = count, .dt = dt,
                .part_bytes = (uint64_t)count * (uint64_t)dt->size, .peer = peer, .tag = tag, .comm = comm, .req = r};
    r->owner = p;
    r->persistent = 1;
    r->comm = comm;
    r->err_target = &comm->eo;
    cr_status_empty(&r->status);
    cr_comm_hold(comm);
    if (dt->d)
        cr_obj_ref(dt);
    *request = cr_request_handle(r);
    if (send) {
        if (!(p->ready = calloc((size_t)(partitions ? partitions : 1), 1)))
            goto nomem;
        p->first_tag = next_data_tag;
        next_data_tag = (uint32_t)((next_data_tag + (uint64_t)partitions) % DATA_TAGS);
        if (peer == MPI_PROC_NULL)
            return MPI_SUCCESS;
        hello *h = malloc(sizeof *h);
        cr_request *m = h ? message(p, CR_REQ_SEND, h, (MPI_Count)sizeof *h, cr_dtype_get(MPI_BYTE), HELLO_TAG,
                                    hello_sent, h)
                          : NULL;
        if (!m) {
            free(h);
            goto nomem;
        }
        *h = (hello){tag, partitions, (int64_t)p->part_bytes, p->first_tag};
        return cr_pt2pt_send_start(m);
    }
    if (peer == MPI_PROC_NULL) {
        p->bound = true;
        return MPI_SUCCESS;
    }
    collect_hellos(comm, peer);
    int err = MPI_SUCCESS;
    if (!take_hello(p, &err)) {
        *pending_tail = p;
        pending_tail = &p->next;
        hook_update();
    }
    return err;
nomem:
    *request = MPI_REQUEST_NULL;
    cr_request_release(r);
    return cr_err(MPI_ERR_NO_MEM, "out of memory for a partitioned request");
}

int cr_mpi_psend_init(const void *buf, int partitions, MPI_Count count, cr_dtype *datatype, int dest, int tag,
                      cr_comm *comm, cr_info *info, MPI_Request *request)
{
    (void)info;
    return part_init(true, (void *)buf, partitions, count, datatype, dest, tag, comm, request);
}

int cr_mpi_precv_init(void *buf, int partitions, MPI_Count count, cr_dtype *datatype, int source, int tag,
                      cr_comm *comm, cr_info *info, MPI_Request *request)
{
    (void)info;
    return part_init(false, buf, partitions, count, datatype, source, tag, comm, request);
}

/* ----------------------------------------------------------------- MPI_Pready*, MPI_Parrived */

/* The active partitioned send behind `h`, or an error (raised on its communicator). */
static int active_send(MPI_Request h, part **out)
{
    part *p = part_of(cr_request_get(h), true);
    if (!p)
        return cr_err(MPI_ERR_REQUEST, "request=%#lx is not a partitioned send request", (unsigned long)(uintptr_t)h);
    cr_err_target_hint = &p->comm->eo;
    if (!p->req->active)
        return cr_err(MPI_ERR_REQUEST, "the partitioned send is not active: MPI_Start it first");
    *out = p;
    return MPI_SUCCESS;
}

static int check_partition(const part *p, int i, const char *what)
{
    if (i < 0 || i >= p->partitions)
        return cr_err(MPI_ERR_ARG, "%s=%d: the request has partitions 0 to %d", what, i, p->partitions - 1);
    return MPI_SUCCESS;
}

int cr_mpi_pready(int partition, MPI_Request request)
{
    part *p;
    int err = active_send(request, &p);
    if (!err)
        err = check_partition(p, partition, "partition");
    return err ? err : send_partition(p, partition);
}

int cr_mpi_pready_range(int partition_low, int partition_high, MPI_Request request)
{
    part *p;
    int err = active_send(request, &p);
    if (!err)
        err = check_partition(p, partition_low, "partition_low");
    if (!err)
        err = check_partition(p, partition_high, "partition_high");
    if (!err && partition_high < partition_low)
        err = cr_err(MPI_ERR_ARG, "partition_high=%d is below partition_low=%d", partition_high, partition_low);
    for (int i = partition_low; !err && i <= partition_high; i++)
        err = send_partition(p, i);
    return err;
}

int cr_mpi_pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    part *p;
    int err = active_send(request, &p);
    if (!err && length < 0)
        err = cr_err(MPI_ERR_ARG, "length=%d: must not be negative", length);
    if (!err && length > 0 && !array_of_partitions)
        err = cr_err(MPI_ERR_ARG, "array_of_partitions is NULL with length=%d", length);
    for (int i = 0; !err && i < length; i++) {
        char what[48];
        snprintf(what, sizeof what, "array_of_partitions[%d]", i);
        err = check_partition(p, array_of_partitions[i], what);
    }
    for (int i = 0; !err && i < length; i++)
        err = send_partition(p, array_of_partitions[i]);
    return err;
}

int cr_mpi_parrived(MPI_Request request, int partition, int *flag)
{
    *flag = 1;
    if (request == MPI_REQUEST_NULL)
        return MPI_SUCCESS; /* (a null or inactive request: flag = true, MPI-4.1 4.2.2) */
    part *p = part_of(cr_request_get(request), false);
    if (!p)
        return cr_err(MPI_ERR_REQUEST, "request=%#lx is not a partitioned receive request",
                      (unsigned long)(uintptr_t)request);
    cr_err_target_hint = &p->comm->eo;
    int err = check_partition(p, partition, "partition");
    if (err || !p->req->active)
        return err;
    if (!p->req->done)
        cr_progress_poll();
    if (p->req->done)
        return MPI_SUCCESS;
    if (!p->bound) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    if (p->part_bytes == 0 || p->h.part_bytes == 0) {
        /* Partitions of no data still arrive only when their sender marks them ready: with as
         * many partitions on both sides, partition i is the sender's i; otherwise (no bytes to
         * map them by) when all of the sender's have come. */
        for (int64_t k = 0; k < p->h.partitions; k++)
            if (!p->arrived[k] && (p->h.partitions != p->partitions || k == partition)) {
                *flag = 0;
                break;
            }
        return MPI_SUCCESS;
    }
    /* the sender's partitions that hold this one's bytes */
    uint64_t from = (uint64_t)partition * p->part_bytes, to = from + p->part_bytes - 1;
    for (uint64_t k = from / p->h.part_bytes; k <= to / p->h.part_bytes && k < (uint64_t)p->h.partitions; k++)
        if (!p->arrived[k]) {
            *flag = 0;
            break;
        }
    return MPI_SUCCESS;
}
