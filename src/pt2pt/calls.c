/* calls.c: the point-to-point calls of chapter 3 (send modes, receives, combined calls,
 * probes, matched receives, persistent requests), on top of pt2pt.c. Blocking calls run the
 * nonblocking code on a request on their stack. */
#include "pt2pt.h"

#include "core/error.h"
#include "cr_impl.h"

#include <stdlib.h>

/* ----------------------------------------------------------------- blocking sends and receives */

int cr_mpi_send(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm)
{
    return cr_pt2pt_send(buf, count, dt, dest, tag, comm, comm->ctx, CR_MODE_STANDARD);
}

int cr_mpi_ssend(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm)
{
    return cr_pt2pt_send(buf, count, dt, dest, tag, comm, comm->ctx, CR_MODE_SYNC);
}

int cr_mpi_rsend(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm)
{
    /* A ready send may assume its receive is posted; sending it as a standard send is always
     * correct. */
    return cr_pt2pt_send(buf, count, dt, dest, tag, comm, comm->ctx, CR_MODE_READY);
}

int cr_mpi_bsend(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm)
{
    cr_request r = {0};
    cr_pt2pt_prepare(&r, CR_REQ_SEND, buf, count, dt, dest, tag, comm, comm->ctx, CR_MODE_BUFFERED);
    return cr_bsend_start(&r);
}

int cr_mpi_recv(void *buf, MPI_Count count, cr_dtype *dt, int source, int tag, cr_comm *comm, MPI_Status *status)
{
    return cr_pt2pt_recv(buf, count, dt, source, tag, comm, comm->ctx, status);
}

/* ----------------------------------------------------------------- nonblocking */

/* Inlined into each caller: with `kind`, `mode` and `persistent` constant there, MPI_Irecv's
 * path is the allocation, the fields and the post, without the branches of the others. */
static CR_ALWAYS_INLINE int start_new(int kind, const void *buf, MPI_Count count, cr_dtype *dt, int peer, int tag, cr_comm *comm,
                     int mode, bool persistent, MPI_Request *request)
{
    cr_request *r = cr_request_take(kind, &cr_pt2pt_request_ops);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a request");
    cr_pt2pt_prepare(r, kind, buf, count, dt, peer, tag, comm, comm->ctx, mode);
    cr_pt2pt_hold_comm(r);
    if (persistent) {
        r->persistent = 1;
        cr_status_empty(&r->status);
        *request = cr_request_handle(r);
        return MPI_SUCCESS;
    }
    int err = kind == CR_REQ_RECV ? cr_pt2pt_recv_post(r)
              : mode == CR_MODE_BUFFERED ? cr_bsend_start(r)
                                         : cr_pt2pt_send_start(r);
    if (err) {
        cr_request_release(r);
        return err;
    }
    *request = cr_request_handle(r);
    return MPI_SUCCESS;
}

/* A standard or ready send that the transport takes at once is complete when it starts. */
static bool isend_now(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm,
                      MPI_Request *req)
{
    if (CR_LIKELY(dest != MPI_PROC_NULL && cr_pt2pt_send_now(buf, count, dt, dest, tag, comm, comm->ctx))) {
        *req = cr_request_handle(cr_request_sent);
        return true;
    }
    return false;
}

/* The quick entry points (gen/overrides/pt2pt.toml): handles resolved, nothing else checked;
 * at MPI_THREAD_MULTIPLE outside the critical section. A send that completes at once gets the
 * shared request that is always complete, as isend_now gives. */
bool cr_mpi_send_quick(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm)
{
    return cr_pt2pt_send_quick(buf, count, dt, dest, tag, comm);
}

bool cr_mpi_isend_quick(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm,
                        MPI_Request *req)
{
    if (CR_UNLIKELY(!req) || !cr_pt2pt_send_quick(buf, count, dt, dest, tag, comm))
        return false;
    *req = cr_request_handle(cr_request_sent);
    return true;
}

int cr_mpi_isend(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, MPI_Request *req)
{
    if (isend_now(buf, count, dt, dest, tag, comm, req))
        return MPI_SUCCESS;
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_STANDARD, false, req);
}

int cr_mpi_issend(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, MPI_Request *req)
{
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_SYNC, false, req);
}

int cr_mpi_irsend(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, MPI_Request *req)
{
    if (isend_now(buf, count, dt, dest, tag, comm, req))
        return MPI_SUCCESS;
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_READY, false, req);
}

int cr_mpi_ibsend(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, MPI_Request *req)
{
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_BUFFERED, false, req);
}

int cr_mpi_irecv(void *buf, MPI_Count count, cr_dtype *dt, int source, int tag, cr_comm *comm, MPI_Request *req)
{
    return start_new(CR_REQ_RECV, buf, count, dt, source, tag, comm, CR_MODE_STANDARD, false, req);
}

/* ----------------------------------------------------------------- persistent */

int cr_mpi_send_init(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm,
                     MPI_Request *req)
{
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_STANDARD, true, req);
}

int cr_mpi_ssend_init(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm,
                      MPI_Request *req)
{
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_SYNC, true, req);
}

int cr_mpi_rsend_init(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm,
                      MPI_Request *req)
{
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_READY, true, req);
}

int cr_mpi_bsend_init(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm,
                      MPI_Request *req)
{
    return start_new(CR_REQ_SEND, buf, count, dt, dest, tag, comm, CR_MODE_BUFFERED, true, req);
}

int cr_mpi_recv_init(void *buf, MPI_Count count, cr_dtype *dt, int source, int tag, cr_comm *comm, MPI_Request *req)
{
    return start_new(CR_REQ_RECV, buf, count, dt, source, tag, comm, CR_MODE_STANDARD, true, req);
}

/* ----------------------------------------------------------------- send and receive together */

int cr_mpi_sendrecv(const void *sendbuf, MPI_Count sendcount, cr_dtype *sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, cr_dtype *recvtype, int source, int recvtag, cr_comm *comm,
                    MPI_Status *status)
{
    /* The receive is posted first, so two processes exchanging large messages cannot block
     * each other. */
    cr_request r = {0};
    cr_pt2pt_prepare(&r, CR_REQ_RECV, recvbuf, recvcount, recvtype, source, recvtag, comm, comm->ctx,
                     CR_MODE_STANDARD);
    int err = cr_pt2pt_recv_post(&r);
    if (err)
        return err;
    err = cr_pt2pt_send(sendbuf, sendcount, sendtype, dest, sendtag, comm, comm->ctx, CR_MODE_STANDARD);
    cr_progress_wait(&r.done);
    if (status)
        cr_status_out(status, &r.status);
    return err ? err : r.status.MPI_ERROR;
}

int cr_mpi_sendrecv_replace(void *buf, MPI_Count count, cr_dtype *dt, int dest, int sendtag, int source, int recvtag,
                            cr_comm *comm, MPI_Status *status)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a %llu-byte copy", (unsigned long long)bytes);
    cr_dt_pack(buf, count, dt, 0, copy, bytes);
    int err = cr_mpi_sendrecv(copy, (MPI_Count)bytes, cr_dtype_get(MPI_BYTE), dest, sendtag, buf, count, dt, source,
                              recvtag, comm, status);
    free(copy);
    return err;
}

/* Isendrecv: a compound request whose parts (a receive and a send) report to it; it completes
 * with the receive's status when both are done. */
static void part_done(cr_request *part)
{
    cr_request *whole = part->owner;
    if (part->kind == CR_REQ_RECV)
        whole->status = part->status;
    else if (part->status.MPI_ERROR && !whole->status.MPI_ERROR)
        whole->status.MPI_ERROR = part->status.MPI_ERROR;
    if (--whole->parts == 0) {
        free(whole->tmp);
        whole->tmp = NULL;
        cr_request_complete(whole);
    }
}

static int isendrecv(const void *sendbuf, MPI_Count sendcount, cr_dtype *sendtype, int dest, int sendtag,
                     void *recvbuf, MPI_Count recvcount, cr_dtype *recvtype, int source, int recvtag, cr_comm *comm,
                     void *owned_copy, MPI_Request *request)
{
    cr_request *whole = cr_request_new(CR_REQ_RECV, &cr_pt2pt_request_ops);
    cr_request *parts[2] = {cr_request_new(CR_REQ_RECV, &cr_pt2pt_request_ops),
                            cr_request_new(CR_REQ_SEND, &cr_pt2pt_request_ops)};
    if (!whole || !parts[0] || !parts[1]) {
        free(owned_copy);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for requests");
    }
    whole->comm = comm;
    whole->err_target = &comm->eo;
    cr_pt2pt_hold_comm(whole);
    whole->tmp = owned_copy;
    whole->parts = 2;
    cr_status_empty(&whole->status);
    cr_pt2pt_prepare(parts[0], CR_REQ_RECV, recvbuf, recvcount, recvtype, source, recvtag, comm, comm->ctx,
                     CR_MODE_STANDARD);
    cr_pt2pt_prepare(parts[1], CR_REQ_SEND, sendbuf, sendcount, sendtype, dest, sendtag, comm, comm->ctx,
                     CR_MODE_STANDARD);
    for (int i = 0; i < 2; i++) {
        parts[i]->owner = whole;
        parts[i]->on_complete = part_done;
        parts[i]->freed = 1; /* released by their own completion */
    }
    *request = cr_request_handle(whole);
    int err = cr_pt2pt_recv_post(parts[0]);
    return err ? err : cr_pt2pt_send_start(parts[1]);
}

int cr_mpi_isendrecv(const void *sendbuf, MPI_Count sendcount, cr_dtype *sendtype, int dest, int sendtag,
                     void *recvbuf, MPI_Count recvcount, cr_dtype *recvtype, int source, int recvtag, cr_comm *comm,
                     MPI_Request *request)
{
    return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                     comm, NULL, request);
}

int cr_mpi_isendrecv_replace(void *buf, MPI_Count count, cr_dtype *dt, int dest, int sendtag, int source,
                             int recvtag, cr_comm *comm, MPI_Request *request)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a %llu-byte copy", (unsigned long long)bytes);
    cr_dt_pack(buf, count, dt, 0, copy, bytes);
    return isendrecv(copy, (MPI_Count)bytes, cr_dtype_get(MPI_BYTE), dest, sendtag, buf, count, dt, source, recvtag,
                     comm, copy, request);
}

/* ----------------------------------------------------------------- probes and matched receives */

typedef struct {
    cr_comm *comm;
    int source, tag;
    bool take;
    cr_unexp *found;
} probe_arg;

/* Once true, stays true without looking again: a probe that takes the message (MPI_Mprobe)
 * must take it once, however many times a wait asks. */
static bool probe_ready(void *arg)
{
    probe_arg *p = arg;
    if (p->found)
        return true;
    p->found = cr_pt2pt_probe(p->comm, p->comm->ctx, p->source, p->tag, p->take);
    return p->found != NULL;
}

int cr_mpi_probe(int source, int tag, cr_comm *comm, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        if (status)
            cr_status_out_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    probe_arg p = {comm, source, tag, false, NULL};
    cr_progress_wait_until(probe_ready, &p);
    if (status)
        cr_pt2pt_unexp_status(p.found, status);
    return MPI_SUCCESS;
}

int cr_mpi_iprobe(int source, int tag, cr_comm *comm, int *flag, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status)
            cr_status_out_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    probe_arg p = {comm, source, tag, false, NULL};
    if (!probe_ready(&p)) {
        cr_progress_poll();
        probe_ready(&p);
    }
    *flag = p.found != NULL;
    if (p.found && status)
        cr_pt2pt_unexp_status(p.found, status);
    return MPI_SUCCESS;
}

/* A message taken by MPI_Mprobe: no other receive can match it any more. */
typedef struct cr_message {
    cr_obj obj;
    cr_comm *comm;
    cr_unexp *msg;
} cr_message;

static int message_new(cr_comm *comm, cr_unexp *u, MPI_Message *message)
{
    cr_message *m = cr_obj_alloc(CR_KIND_MESSAGE);
    if (!m)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a message handle");
    m->comm = comm;
    cr_comm_hold(comm);
    m->msg = u;
    *message = (MPI_Message)(uintptr_t)m->obj.handle;
    return MPI_SUCCESS;
}

int cr_mpi_mprobe(int source, int tag, cr_comm *comm, MPI_Message *message, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        if (status)
            cr_status_out_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    probe_arg p = {comm, source, tag, true, NULL};
    cr_progress_wait_until(probe_ready, &p);
    if (status)
        cr_pt2pt_unexp_status(p.found, status);
    return message_new(comm, p.found, message);
}

int cr_mpi_improbe(int source, int tag, cr_comm *comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    if (source == MPI_PROC_NULL)
        return *flag = 1, cr_mpi_mprobe(source, tag, comm, message, status);
    probe_arg p = {comm, source, tag, true, NULL};
    if (!probe_ready(&p)) {
        cr_progress_poll();
        probe_ready(&p);
    }
    *flag = p.found != NULL;
    if (!p.found)
        return MPI_SUCCESS;
    if (status)
        cr_pt2pt_unexp_status(p.found, status);
    return message_new(comm, p.found, message);
}

/* Takes the message out of its handle (which becomes MPI_MESSAGE_NULL). */
static int take_message(MPI_Message *message, cr_comm **comm, cr_unexp **u)
{
    cr_message *m = cr_handle_get((uintptr_t)*message, CR_KIND_MESSAGE);
    if (!m)
        return cr_err(MPI_ERR_REQUEST, "message=%#lx is not a message from MPI_Mprobe or MPI_Improbe",
                      (unsigned long)(uintptr_t)*message);
    *comm = m->comm;
    *u = m->msg;
    cr_obj_free(m);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

/* The message handle's hold on its communicator, dropped once the receive holds its own. */
static void drop_message_comm(cr_comm *comm)
{
    cr_comm_release(comm);
}

int cr_mpi_mrecv(void *buf, MPI_Count count, cr_dtype *dt, MPI_Message *message, MPI_Status *status)
{
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        if (status)
            cr_status_out_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    cr_comm *comm;
    cr_unexp *u;
    int err = take_message(message, &comm, &u);
    if (err)
        return err;
    cr_request r = {0};
    cr_pt2pt_prepare(&r, CR_REQ_RECV, buf, count, dt, u->src, u->tag, comm, comm->ctx, CR_MODE_STANDARD);
    cr_pt2pt_recv_message(&r, u);
    cr_progress_wait(&r.done);
    drop_message_comm(comm);
    if (status)
        cr_status_out(status, &r.status);
    if (r.status.MPI_ERROR)
        cr_err_target_hint = &comm->eo;
    return r.status.MPI_ERROR;
}

int cr_mpi_imrecv(void *buf, MPI_Count count, cr_dtype *dt, MPI_Message *message, MPI_Request *request)
{
    cr_request *r = cr_request_new(CR_REQ_RECV, &cr_pt2pt_request_ops);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a request");
    *request = cr_request_handle(r);
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        cr_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        cr_request_complete(r);
        return MPI_SUCCESS;
    }
    cr_comm *comm;
    cr_unexp *u;
    int err = take_message(message, &comm, &u);
    if (err) {
        cr_request_release(r);
        *request = MPI_REQUEST_NULL;
        return err;
    }
    cr_pt2pt_prepare(r, CR_REQ_RECV, buf, count, dt, u->src, u->tag, comm, comm->ctx, CR_MODE_STANDARD);
    cr_pt2pt_hold_comm(r);
    drop_message_comm(comm);
    cr_pt2pt_recv_message(r, u);
    return MPI_SUCCESS;
}

void cr_pt2pt_calls_setup(void)
{
    cr_pool_setup(CR_KIND_MESSAGE, sizeof(cr_message));
}
