/* bsend.c: buffered sends. MPI_Bsend copies the message into a buffer the user attached and
 * returns; the copy is sent from there and its space is given back when that send completes.
 * The buffer is the communicator's (MPI_Comm_attach_buffer) if it has one, else its session's
 * (MPI_Session_attach_buffer) if it derives from a session that has one, else the process's
 * (MPI_Buffer_attach), as MPI-4.1 section 3.6 orders them.
 *
 * Space is accounted exactly as the standard tells users to size their buffers: every message
 * takes its packed size plus MPI_BSEND_OVERHEAD. A message that does not fit is an error
 * (MPI_ERR_BUFFER), never a wait. MPI_BUFFER_AUTOMATIC attaches an unlimited buffer: copies are
 * then allocated one by one. */
#include "pt2pt.h"

#include "core/error.h"
#include "cr_impl.h"

#include <stdlib.h>

typedef struct segment {
    struct segment *next; /* by offset */
    size_t off, len;
    struct cr_bsend_buf *buf;
    void *data; /* automatic buffers: the allocation */
} segment;

typedef struct cr_bsend_buf {
    char *base;
    size_t size;
    bool automatic;
    segment *used;           /* sorted by offset */
    int live;                /* sends still using the buffer */
    cr_request *flushers;    /* MPI_*_iflush requests waiting for live == 0 (linked by next) */
} cr_bsend_buf;

static cr_bsend_buf *process_buf;

static void finish_flushers(cr_bsend_buf *b)
{
    while (b->live == 0 && b->flushers) {
        cr_request *f = b->flushers;
        b->flushers = f->next;
        f->next = NULL;
        cr_request_complete(f);
    }
}

static void release(cr_request *send)
{
    segment *s = send->owner, **p;
    cr_bsend_buf *b = s->buf;
    for (p = &b->used; *p && *p != s; p = &(*p)->next)
        ;
    if (*p)
        *p = s->next;
    free(s->data);
    free(s);
    b->live--;
    finish_flushers(b);
}

/* First fit among the gaps between used segments. */
static segment *reserve(cr_bsend_buf *b, size_t len)
{
    segment *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->len = len;
    s->buf = b;
    if (b->automatic) {
        s->data = malloc(len ? len : 1);
        if (!s->data) {
            free(s);
            return NULL;
        }
        s->next = b->used;
        b->used = s;
        return s;
    }
    size_t at = 0;
    segment **p = &b->used;
    for (; *p; p = &(*p)->next) {
        if ((*p)->off - at >= len)
            break;
        at = (*p)->off + (*p)->len;
    }
    if (!*p && b->size - at < len) {
        free(s);
        return NULL;
    }
    s->off = at;
    s->next = *p;
    *p = s;
    return s;
}

static size_t used_bytes(const cr_bsend_buf *b)
{
    size_t n = 0;
    for (const segment *s = b->used; s; s = s->next)
        n += s->len;
    return n;
}

/* Copies the message of `r` into the attached buffer and sends the copy; r itself completes
 * at once (a buffered send is complete when its data is copied). */
int cr_bsend_start(cr_request *r)
{
    cr_bsend_buf *b = r->comm->bsend                                       ? r->comm->bsend
                      : r->comm->session && r->comm->session->bsend ? r->comm->session->bsend
                                                                     : process_buf;
    uint64_t bytes = (uint64_t)r->count * (uint64_t)r->dt->size;
    cr_status_empty(&r->status);
    if (r->peer == MPI_PROC_NULL) {
        cr_request_complete(r);
        return MPI_SUCCESS;
    }
    if (!b)
        return cr_err(MPI_ERR_BUFFER, "no buffer is attached for buffered sends (use MPI_Buffer_attach)");
    size_t need = (size_t)bytes + MPI_BSEND_OVERHEAD;
    segment *s = reserve(b, need);
    if (!s) {
        cr_progress(); /* sends that finished may give space back */
        s = reserve(b, need);
    }
    if (!s)
        return cr_err(MPI_ERR_BUFFER,
                      "the attached buffer (%zu bytes, %zu in use) has no room for a message of %llu bytes plus "
                      "MPI_BSEND_OVERHEAD (%d)",
                      b->size, used_bytes(b), (unsigned long long)bytes, MPI_BSEND_OVERHEAD);
    b->live++;
    char *copy = s->data ? s->data : b->base + s->off;
    cr_dt_pack(r->buf, r->count, r->dt, 0, copy, bytes);
    cr_request *send = cr_request_new(CR_REQ_SEND, &cr_pt2pt_request_ops);
    if (!send) {
        release(&(cr_request){.owner = s});
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a buffered send");
    }
    cr_pt2pt_prepare(send, CR_REQ_SEND, copy, (MPI_Count)bytes, cr_dtype_get(MPI_BYTE), r->peer, r->tag, r->comm,
                     r->ctx, CR_MODE_STANDARD);
    cr_pt2pt_hold_comm(send);
    send->owner = s;
    send->on_complete = release;
    send->freed = 1; /* nobody waits for it: it goes when it completes */
    int err = cr_pt2pt_send_start(send);
    if (err)
        return err;
    cr_request_complete(r);
    return MPI_SUCCESS;
}

static int attach(cr_bsend_buf **slot, void *buffer, MPI_Count size, const char *where)
{
    if (*slot)
        return cr_err(MPI_ERR_BUFFER, "a buffer is already attached to %s (detach it first)", where);
    bool automatic = buffer == MPI_BUFFER_AUTOMATIC;
    if (!automatic && size < 0)
        return cr_err(MPI_ERR_ARG, "size=%lld must not be negative", (long long)size);
    if (!automatic && size > 0 && !buffer)
        return cr_err(MPI_ERR_BUFFER, "buffer is NULL but size=%lld", (long long)size);
    cr_bsend_buf *b = calloc(1, sizeof *b);
    if (!b)
        return cr_err(MPI_ERR_NO_MEM, "out of memory attaching a buffer");
    b->automatic = automatic;
    b->base = automatic ? NULL : buffer;
    b->size = automatic ? 0 : (size_t)size;
    *slot = b;
    return MPI_SUCCESS;
}

static bool drained(void *arg)
{
    return ((cr_bsend_buf *)arg)->live == 0;
}

/* Waits until every message sent from the buffer has left it, then detaches it. */
static int detach(cr_bsend_buf **slot, void *buffer_addr, MPI_Count *size)
{
    cr_bsend_buf *b = *slot;
    void *addr = NULL;
    if (b) {
        cr_progress_wait_until(drained, b);
        addr = b->automatic ? MPI_BUFFER_AUTOMATIC : b->base;
        *size = (MPI_Count)b->size;
        free(b);
        *slot = NULL;
    } else {
        *size = 0;
    }
    memcpy(buffer_addr, &addr, sizeof addr);
    return MPI_SUCCESS;
}

static int flush(cr_bsend_buf *b)
{
    if (b)
        cr_progress_wait_until(drained, b);
    return MPI_SUCCESS;
}

static int iflush(cr_bsend_buf *b, MPI_Request *request)
{
    cr_request *r = cr_request_new(CR_REQ_DONE, &cr_pt2pt_request_ops);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a request");
    cr_status_empty(&r->status);
    *request = cr_request_handle(r);
    if (!b || b->live == 0) {
        cr_request_complete(r);
        return MPI_SUCCESS;
    }
    r->next = b->flushers;
    b->flushers = r;
    return MPI_SUCCESS;
}

int cr_mpi_buffer_attach(void *buffer, MPI_Count size)
{
    return attach(&process_buf, buffer, size, "the process");
}

int cr_mpi_buffer_detach(void *buffer_addr, MPI_Count *size)
{
    return detach(&process_buf, buffer_addr, size);
}

int cr_mpi_comm_attach_buffer(cr_comm *comm, void *buffer, MPI_Count size)
{
    return attach(&comm->bsend, buffer, size, "this communicator");
}

int cr_mpi_comm_detach_buffer(cr_comm *comm, void *buffer_addr, MPI_Count *size)
{
    return detach(&comm->bsend, buffer_addr, size);
}

int cr_mpi_session_attach_buffer(cr_session *session, void *buffer, MPI_Count size)
{
    return attach(&session->bsend, buffer, size, "this session");
}

int cr_mpi_session_detach_buffer(cr_session *session, void *buffer_addr, MPI_Count *size)
{
    return detach(&session->bsend, buffer_addr, size);
}

int cr_mpi_session_flush_buffer(cr_session *session)
{
    return flush(session->bsend);
}

int cr_mpi_session_iflush_buffer(cr_session *session, MPI_Request *request)
{
    return iflush(session->bsend, request);
}

int cr_mpi_buffer_flush(void)
{
    return flush(process_buf);
}

int cr_mpi_comm_flush_buffer(cr_comm *comm)
{
    return flush(comm->bsend);
}

int cr_mpi_buffer_iflush(MPI_Request *request)
{
    return iflush(process_buf, request);
}

int cr_mpi_comm_iflush_buffer(cr_comm *comm, MPI_Request *request)
{
    return iflush(comm->bsend, request);
}
