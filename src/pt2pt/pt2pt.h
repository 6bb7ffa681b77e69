/* pt2pt.h: point-to-point messaging: matching, the eager and rendezvous protocols, send modes,
 * buffered sends; used by the MPI calls of chapter 3, by request completion, and by the
 * collectives (which use it on each communicator's collective context).
 *
 * Protocols (the envelope `cr_penv` rides in every transport frame):
 *   eager       EAGER {ctx, src, tag, bytes} + data. Synchronous sends set SYNC and wait for
 *               the receiver's ACK, sent when the message matches.
 *   rendezvous  RTS {ctx, src, tag, bytes, sender request} + the sender's data address.
 *               When it matches, the receiver copies the data straight out of the sender's
 *               memory (cr_xport_read: one copy), then sends FIN; the sender completes on FIN.
 *               Where that is impossible, the receiver sends CTS instead and the sender
 *               streams the data in DATA frames. Where both have a core, they share the copy:
 *               SPLIT {a = receiver request, b = sender request} + {receiver's buffer, offset,
 *               length} asks the sender to write the back part (cr_xport_write) while the
 *               receiver reads the front, then sends FIN once its read is done; SPLIT_DONE
 *               {a = receiver request, b = 0 or 1 when the write failed} answers and completes
 *               the receive, or, when a part failed, the receiver sends CTS (the whole message
 *               is streamed; a sender whose write failed ignores the FIN before it).
 *   long eager  messages a few frames long go without a handshake: LONG {ctx, src, tag,
 *               a = bytes, b = sender request} is matched like an eager message and brings the
 *               first piece, LONG_DATA {a = sender request, b = offset} frames bring the rest
 *               into the same buffer (the receiver finds the message by its sender and
 *               request, so any number may be in flight, interleaved).
 *   cancel      CANCEL asks the receiver to drop an unmatched message; CANCEL_RESP answers.
 *   credit      eager and long-eager data may arrive before its receive is posted, so each
 *               sender may have at most COURIER_UNEXPECTED_BUDGET bytes (plus a small charge
 *               per message) sent eagerly to one receiver and not yet taken by a receive there;
 *               past that it sends by rendezvous, which costs the receiver a small record, not
 *               the data. The receiver gives the bytes back in CREDIT {a = bytes} frames as
 *               receives take them, a quarter of the budget at a time.
 * Context ids carry an epoch (comm.h): a frame for a context that was closed here (its
 * communicator freed) is dropped, answered as if received where its sender waits for an answer. 
 * Frames between two processes arrive in order, which gives MPI's non-overtaking rule. */
#ifndef CR_PT2PT_H
#define CR_PT2PT_H

#include "comm/comm.h"
#include "req/request.h"
#include "dt/dtype.h"

enum { P_EAGER = 1, P_RTS, P_FIN, P_ACK, P_CTS, P_DATA, P_CANCEL, P_CANCEL_RESP, P_LONG, P_LONG_DATA, P_CREDIT,
       P_SPLIT, P_SPLIT_DONE };
enum { PF_SYNC = 1 };

typedef struct cr_penv {
    uint32_t ctx;
    int32_t src;  /* rank of the sender in the communicator */
    int32_t tag;
    uint8_t type;
    uint8_t flags;
    uint16_t pad;
    uint64_t a;   /* EAGER, RTS, LONG: message bytes; CTS: receiver request; DATA: offset;
                   * CANCEL_RESP: 1 when cancelled */
    uint64_t b;   /* the sender's request (sync EAGER, RTS, FIN, ACK, CTS, CANCEL*);
                   * DATA: the receiver's request; LONG: offset of this frame's data */
} cr_penv;

/* A message that arrived before its receive was posted. */
typedef struct cr_unexp {
    struct cr_unexp *next, *prev;
    uint32_t ctx;  /* with its epoch */
    int src, tag, world_src;
    uint8_t type, flags;
    uint64_t bytes;
    uint64_t sreq;
    uint64_t addr; /* RTS: the data's address in the sender */
    uint64_t arrived; /* LONG: bytes of data arrived so far */
    char data[];   /* EAGER, LONG: the data */
} cr_unexp;

void cr_pt2pt_setup(void);
int cr_pt2pt_init(void);
void cr_pt2pt_finalize(void);

/* Starts a send: r has kind SEND and comm, buf, count, dt, peer (destination), tag, mode set.
 * Completion is reported through r (done, status). */
int cr_pt2pt_send_start(cr_request *r);
/* The fast path of a standard send: a small contiguous message goes out at once as one eager
 * frame, with no request, when nothing is queued before it and there is room; false when the
 * message must take the request path. `dest` is not MPI_PROC_NULL. */
bool cr_pt2pt_send_now(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, uint32_t ctx);
/* cr_pt2pt_send_now for the quick entry points of MPI_Send and MPI_Isend (and the ready forms),
 * which resolved the handles and checked nothing else: declines (false, nothing done) whatever
 * the full entry point would reject. At MPI_THREAD_MULTIPLE it runs outside the critical
 * section, for messages the transport to `dest` can send there (cr_xport_parallel_below). */
bool cr_pt2pt_send_quick(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm);
/* Posts a receive: r has kind RECV and comm, buf, count, dt, peer (source), tag set. */
int cr_pt2pt_recv_post(cr_request *r);
/* Receives a message taken by MPI_Mprobe into r (kind RECV, with buf, count, dt set). */
void cr_pt2pt_recv_message(cr_request *r, cr_unexp *u);
/* MPI_Cancel of an active send or receive. */
int cr_pt2pt_cancel(cr_request *r);

/* Looks for a matching unexpected message; with `take`, removes it from the queue. */
cr_unexp *cr_pt2pt_probe(cr_comm *comm, uint32_t ctx, int source, int tag, bool take);
void cr_pt2pt_unexp_free(cr_unexp *u);
/* The status a probe reports for an unexpected message. */
void cr_pt2pt_unexp_status(const cr_unexp *u, MPI_Status *status);

/* Blocking helpers shared by the MPI calls and the collectives. */
int cr_pt2pt_send(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, uint32_t ctx,
                  int mode);
int cr_pt2pt_recv(void *buf, MPI_Count count, cr_dtype *dt, int source, int tag, cr_comm *comm, uint32_t ctx,
                  MPI_Status *status);

/* Fills a request for a send or receive on `ctx` (comm->ctx for users, comm->ctx + 1 for
 * collectives). */
void cr_pt2pt_prepare(cr_request *r, int kind, const void *buf, MPI_Count count, cr_dtype *dt, int peer, int tag,
                      cr_comm *comm, uint32_t ctx, int mode);

/* A communicator with context `ctx` (and ctx + 1) was freed: drops what arrived for it and
 * whatever still arrives for it or an older epoch of its slot. */
void cr_pt2pt_ctx_close(uint32_t ctx);

/* The request operations of point-to-point requests (start, cancel, release), and making a
 * request keep its communicator (and a derived datatype) alive while it lives (requests that
 * outlive their call). */
extern const cr_request_ops cr_pt2pt_request_ops;
void cr_pt2pt_hold_comm(cr_request *r);

/* Buffered sends (bsend.c). */
int cr_bsend_start(cr_request *r);

#endif
