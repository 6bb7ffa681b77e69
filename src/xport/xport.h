/* xport.h: the transports that move bytes between processes (self, shared memory; TCP later),
 * behind one narrow interface.
 *
 * A transport knows processes by world rank and moves *frames*: a class, an opaque 32-byte
 * envelope (its meaning belongs to the layer of that class) and a payload. It never knows about
 * communicators, tags or datatypes. Frames of one class between one pair of processes are
 * delivered in the order they were sent. Delivery happens inside cr_xport_poll(), which calls
 * the handler the frame's class registered, once per frame; the frame's memory is valid only
 * during that call.
 *
 * Each peer is reached by one transport, chosen at MPI_Init (cr_xport_ops: send, frame size,
 * single-copy read); this file's functions route to it.
 *
 * Large messages do not travel as frames: the receiver pulls them straight from the sender's
 * memory with cr_xport_read() when the transport can (cross-memory attach on one node). */
#ifndef CR_XPORT_H
#define CR_XPORT_H

#include "core/copy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Who a frame is for: each layer that talks over the transports registers a handler for its
 * class, so one-sided or collective traffic never passes through point-to-point matching. */
typedef enum {
    CR_XCLASS_PT2PT,   /* point-to-point messages and their protocol frames */
    CR_XCLASS_COLL,    /* collective algorithms that talk in frames of their own */
    CR_XCLASS_RMA,     /* one-sided communication */
    CR_XCLASS_CONTROL, /* the library's own control traffic */
    CR_XCLASS_COUNT
} cr_xclass;

/* The envelope: 32 bytes owned by the layer above; transports copy it verbatim. */
typedef struct cr_xenv {
    uint64_t w[4];
} cr_xenv;

/* A received frame. Its payload may be split in two pieces (a ring wrapped around). */
typedef struct cr_xframe {
    int src;               /* world rank of the sender */
    cr_xclass cls;
    const cr_xenv *env;
    size_t len;            /* payload bytes */
    const char *p1, *p2;   /* payload: n1 bytes at p1, then len - n1 at p2 */
    size_t n1;
    bool placed;           /* the payload was read straight to where the class's placer said
                              (p1, that address): it is already there (cr_xport_set_placer) */
} cr_xframe;

typedef void cr_xport_handler(const cr_xframe *f);

/* Where the payload of a frame whose header has arrived should land, for a transport that reads
 * frames from a byte stream (TCP): a class that knows (a matched rendezvous's buffer) returns an
 * address with room for `len` bytes, which stays valid until the frame is delivered; the
 * transport reads the payload straight there instead of through its own buffer, and delivers
 * the frame with `placed` set. NULL: the transport keeps the payload as usual. Called in the
 * frames' order, before the frame's delivery and after the delivery of every frame before it
 * from the same process. */
typedef void *cr_xport_placer(int src, const cr_xenv *env, size_t len);

/* A frame whose payload stays in the caller's memory until it has left (cr_xport_send_lent). */
typedef enum {
    CR_XSEND_FULL, /* nothing sent: the way is busy for now, try again later */
    CR_XSEND_DONE, /* sent (or copied by the transport): the memory is free again */
    CR_XSEND_LENT  /* the transport still reads the memory: `done(arg)` says when it is free */
} cr_xsend_result;

/* A payload the transport fetches while it writes the frame, so a non-contiguous buffer is
 * packed straight into the frame with no copy in between: fill(g, to, n) is called for each
 * contiguous piece of the frame's payload, in order (two when a ring wraps). The caller embeds
 * this in its own state and advances its position on each call. */
typedef struct cr_xgather {
    void (*fill)(struct cr_xgather *g, char *to, size_t n);
} cr_xgather;

/* Copies `len` payload bytes starting at `offset` out of a frame. */
static inline void cr_xframe_copy(const cr_xframe *f, void *dst, size_t offset, size_t len);

/* MPI_Init: brings up every transport this job needs (after the node layout is known). */
int cr_xport_init(char *why, size_t cap);
/* MPI_Finalize: closes them; every frame sent has been delivered by then. */
int cr_xport_finalize(char *why, size_t cap);
/* Frames of class `cls` go to `h` (the last handler set wins; none set: the frame is dropped
 * with a message, a bug). */
void cr_xport_set_handler(cr_xclass cls, cr_xport_handler *h);
/* Called by transports for every frame they deliver. */
void cr_xport_deliver(const cr_xframe *f);

/* A transport, as the routing sees it. `peer` is the transport's own index of the process. */
/* Whether the two processes of a large message should each copy a part of it (see
 * cr_xport_split_preferred). */
typedef enum {
    CR_XSPLIT_NO,     /* stream it through frames */
    CR_XSPLIT_YES,    /* share the copy */
    CR_XSPLIT_EITHER, /* both work and neither is always faster: the caller chooses by what it measures */
} cr_xsplit;

typedef struct cr_xport_ops {
    const char *name;
    bool (*send)(int peer, cr_xclass cls, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2);
    bool (*send_gather)(int peer, cr_xclass cls, const cr_xenv *env, size_t len, cr_xgather *g);
    size_t (*max_frame)(int peer);
    size_t (*stream_frame)(int peer, uint64_t bytes); /* see cr_xport_stream_frame */
    int (*read)(int peer, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote);
    int (*write)(int peer, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote);
    bool (*can_read)(int peer);       /* single copy is the policy towards it */
    bool (*pull_preferred)(int peer); /* single copy is better now (see cr_xport_pull_preferred) */
    cr_xsplit (*split_preferred)(int peer, uint64_t bytes); /* both copy a part (cr_xport_split_preferred) */
    /* optional (NULL: send copies): see cr_xport_send_lent */
    cr_xsend_result (*send_lent)(int peer, cr_xclass cls, const cr_xenv *env, const void *p, size_t n,
                                 void (*done)(void *), void *arg);
    /* see cr_xport_parallel_below (0, the default: never) */
    size_t parallel_below;
} cr_xport_ops;

/* Sends one frame to world rank `dst`, or returns false (nothing sent) when the way there is
 * full for now: the caller makes progress and tries again later. `len` is at most
 * cr_xport_max_frame(dst). Two payload pieces are sent back to back (header + data). */
bool cr_xport_send(int dst, cr_xclass cls, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2);
size_t cr_xport_max_frame(int dst);
/* Frames to `dst` whose payload is smaller than this may be sent by cr_xport_send outside the
 * critical section of MPI_THREAD_MULTIPLE, while other threads run the transport inside it
 * (its progress, its sends to other processes), provided the callers serialise their sends to
 * `dst` among themselves; 0 when the transport to `dst` needs the section for every send. */
size_t cr_xport_parallel_below(int dst);
/* The frame size for the pieces of a message of `bytes` streamed to `dst` (at most max_frame;
 * at least `bytes` when the transport would rather send it in one frame): a transport whose two
 * ends copy at once (rings) gains from pieces, so that the receiver copies one out while the
 * sender copies the next in; one whose every frame costs a system call (sockets) from large
 * ones. */
size_t cr_xport_stream_frame(int dst, uint64_t bytes);
/* The same with a payload of `len` bytes that `g` writes into the frame. */
bool cr_xport_send_gather(int dst, cr_xclass cls, const cr_xenv *env, size_t len, cr_xgather *g);

/* Sends one frame whose payload the transport may go on reading from `p` after the call, where
 * copying it first would cost a copy of every byte (a socket that is full while a long message
 * streams). CR_XSEND_LENT: `p` must stay valid and unchanged until the transport calls
 * `done(arg)` (may be NULL), from a later cr_xport_poll, never from inside this call; a frame to
 * a peer that is gone counts as sent. Transports that cannot lend copy (cr_xport_send). */
cr_xsend_result cr_xport_send_lent(int dst, cr_xclass cls, const cr_xenv *env, const void *p, size_t n,
                                   void (*done)(void *), void *arg);
/* Frames of class `cls` may be placed by `p` (see cr_xport_placer); NULL: none is. */
void cr_xport_set_placer(cr_xclass cls, cr_xport_placer *p);
/* Called by transports: where the payload of a frame of `cls` from world rank `src` goes, or NULL. */
void *cr_xport_place(int src, cr_xclass cls, const cr_xenv *env, size_t len);

/* Delivers pending frames to the handler; returns how many. */
int cr_xport_poll(void);

/* Copies remote memory of world rank `src` into local memory, in one go (single copy).
 * Returns 0, or -1 when this transport cannot (then the caller falls back to frames). */
int cr_xport_read(int src, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote);
/* Wakes this node's processes that sleep in cr_xport_sleep, after changing shared memory one of
 * them may wait on without a frame to ring its bell (one-sided locks and counters). */
/* Where sequence counters in shared memory start (a debug tunable starts them near their wrap). */
uint32_t cr_xport_seq_start(void);
void cr_xport_wake_node(void);
/* The other way: local memory into world rank `dst`'s (one-sided operations on memory the
 * target did not allocate in shared memory). 0, or -1 when this transport cannot. */
int cr_xport_write(int dst, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote);
/* Whether this process may read other processes' memory on its node at all (cross-memory
 * attach not turned off, nor refused by the kernel so far), whatever the policy for messages. */
bool cr_xport_attach_allowed(void);
/* True when cr_xport_read may work towards `peer` (it may still fail once, then never again). */
bool cr_xport_can_read(int peer);
/* True when the receiver of a large message from `peer` should read it itself rather than ask
 * `peer` to send it: where single copy is the policy (cr_xport_can_read), and also where it is
 * allowed and `peer` is not making progress now (computing between MPI calls), so that a
 * message sent with MPI_Isend moves while its sender computes. */
bool cr_xport_pull_preferred(int peer);
/* When the receiver should not read a message of `bytes` from `peer` all itself: YES when the
 * two processes should each copy part of it with one copy (the receiver reads the front with
 * cr_xport_read while the sender writes the back with cr_xport_write), NO when it should be
 * streamed through frames, EITHER when both can and which is faster changes with the state of
 * the machine. Two cores copying halves beat a pipeline through the transport's buffers for
 * messages larger than those buffers (see doc/design/shm.md); below that, it depends. */
cr_xsplit cr_xport_split_preferred(int peer, uint64_t bytes);

/* Waiting: a process that found nothing to do may sleep until a peer sends it a frame or
 * wakes it. cr_xport_sleep() announces the sleep, then checks `ready(arg)` (and its rings) once
 * more before sleeping, so a waker that changed the condition and then looked for sleepers can
 * never be missed. It returns after a frame may have arrived, or a wake-up (or spuriously). */
void cr_xport_sleep(bool (*ready)(void *), void *arg);
/* Whether waiting processes should sleep rather than spin (more ranks than cores here). */
bool cr_xport_should_sleep(void);
/* For waits that spin, every so often: ends the job when a peer of this node died before its
 * MPI_Finalize under a launcher that would leave the job waiting (shm.c, cr_shm_watch). */
void cr_xport_watch(void);

static inline void cr_xframe_copy(const cr_xframe *f, void *dst, size_t offset, size_t len)
{
    char *d = (char *)dst;
    if (offset < f->n1) {
        size_t a = f->n1 - offset < len ? f->n1 - offset : len;
        cr_copy(d, f->p1 + offset, a);
        d += a;
        len -= a;
        offset = f->n1;
    }
    if (len)
        cr_copy(d, f->p2 + (offset - f->n1), len);
}

#endif
