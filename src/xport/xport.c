/* xport.c: routing frames to the transport that reaches each process, chosen per peer at
 * MPI_Init (this process itself: the self transport below; a process on this node: shared
 * memory; a process on another node: TCP), and delivering arriving frames to the handler of
 * their class.
 *
 * The self transport: frames a process sends to itself wait in a local queue until the next
 * poll, so sending never re-enters the layer above. */
#include "xport.h"

#include "core/copy.h"
#include "core/base.h"
#include "core/runtime.h"
#include "shm/shm.h"
#include "tcp/tcp.h"
#include "wait.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct self_frame {
    struct self_frame *next;
    cr_xclass cls;
    cr_xenv env;
    size_t len;
    char data[];
} self_frame;

/* How one world rank is reached: a transport and its own index of that process. */
typedef struct route {
    const cr_xport_ops *ops;
    int peer;
} route;

static struct {
    cr_xport_handler *handlers[CR_XCLASS_COUNT];
    cr_xport_placer *placers[CR_XCLASS_COUNT];
    route *routes; /* by world rank */
    self_frame *self_head, **self_tail;
    bool tcp; /* the job spans nodes */
} X = {.self_tail = &X.self_head};

void cr_xport_set_handler(cr_xclass cls, cr_xport_handler *h)
{
    X.handlers[cls] = h;
}

void cr_xport_set_placer(cr_xclass cls, cr_xport_placer *p)
{
    X.placers[cls] = p;
}

void *cr_xport_place(int src, cr_xclass cls, const cr_xenv *env, size_t len)
{
    cr_xport_placer *p = (unsigned)cls < CR_XCLASS_COUNT ? X.placers[cls] : NULL;
    return p ? p(src, env, len) : NULL;
}

void cr_xport_deliver(const cr_xframe *f)
{
    cr_xport_handler *h = (unsigned)f->cls < CR_XCLASS_COUNT ? X.handlers[f->cls] : NULL;
    if (CR_LIKELY(h != NULL)) {
        h(f);
        return;
    }
    fprintf(stderr, "Courier: a frame of class %d from world rank %d has no handler here: dropped\n", (int)f->cls,
            f->src);
}

/* ----------------------------------------------------------------- the self transport */

/* A frame to ourselves: a heap copy, queued until the next poll. */
static self_frame *self_frame_new(cr_xclass cls, const cr_xenv *env, size_t len)
{
    self_frame *f = malloc(sizeof *f + len);
    if (f)
        *f = (self_frame){.cls = cls, .env = *env, .len = len};
    return f;
}

static void self_queue(self_frame *f)
{
    *X.self_tail = f;
    X.self_tail = &f->next;
}

static bool self_send(int peer, cr_xclass cls, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2)
{
    (void)peer;
    self_frame *f = self_frame_new(cls, env, n1 + n2);
    if (!f)
        return false;
    if (n1)
        cr_copy(f->data, p1, n1);
    if (n2)
        cr_copy(f->data + n1, p2, n2);
    self_queue(f);
    return true;
}

static bool self_send_gather(int peer, cr_xclass cls, const cr_xenv *env, size_t len, cr_xgather *g)
{
    (void)peer;
    self_frame *f = self_frame_new(cls, env, len);
    if (!f)
        return false;
    if (len)
        g->fill(g, f->data, len);
    self_queue(f);
    return true;
}

static size_t self_max_frame(int peer)
{
    (void)peer;
    return (size_t)1 << 20;
}

static size_t self_stream_frame(int peer, uint64_t bytes)
{
    (void)bytes;
    return self_max_frame(peer);
}

static int self_poll(void)
{
    int got = 0;
    /* Deliver only what is queued now: frames the handler sends to itself wait for the next poll. */
    self_frame *f = X.self_head;
    X.self_head = NULL;
    X.self_tail = &X.self_head;
    while (f) {
        self_frame *next = f->next;
        cr_xframe fr = {.src = cr_rt.rank, .cls = f->cls, .env = &f->env, .len = f->len, .p1 = f->data, .n1 = f->len,
                        .p2 = NULL};
        cr_xport_deliver(&fr);
        free(f);
        f = next;
        got++;
    }
    return got;
}

/* Our own memory: a plain copy, from remote to local (read) or back (write). */
static int self_move(const struct iovec *local, int nlocal, const struct iovec *remote, int nremote, bool write)
{
    size_t li = 0, lo = 0, ri = 0, ro = 0;
    while ((int)li < nlocal && (int)ri < nremote) {
        size_t n = CR_MIN(local[li].iov_len - lo, remote[ri].iov_len - ro);
        char *l = (char *)local[li].iov_base + lo, *r = (char *)remote[ri].iov_base + ro;
        if (write)
            cr_copy(r, l, n);
        else
            cr_copy(l, r, n);
        lo += n;
        ro += n;
        if (lo == local[li].iov_len)
            li++, lo = 0;
        if (ro == remote[ri].iov_len)
            ri++, ro = 0;
    }
    return 0;
}

static int self_read(int peer, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote)
{
    (void)peer;
    return self_move(local, nlocal, remote, nremote, false);
}

static int self_write(int peer, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote)
{
    (void)peer;
    return self_move(local, nlocal, remote, nremote, true);
}

static bool self_yes(int peer)
{
    (void)peer;
    return true;
}

static cr_xsplit self_no_split(int peer, uint64_t bytes)
{
    (void)peer, (void)bytes;
    return CR_XSPLIT_NO;
}

static const cr_xport_ops self_ops = {"self",   self_send, self_send_gather, self_max_frame, self_stream_frame,
                                      self_read, self_write, self_yes, self_yes, self_no_split};

/* ----------------------------------------------------------------- routing */

int cr_xport_init(char *why, size_t cap)
{
    X.routes = calloc((size_t)cr_rt.size, sizeof *X.routes);
    if (!X.routes)
        return snprintf(why, cap, "out of memory"), -1;
    X.tcp = cr_rt.nnodes > 1;
    for (int r = 0; r < cr_rt.size; r++)
        X.routes[r] = (route){&cr_tcp_ops, r};
    for (int l = 0; l < cr_rt.local_size; l++)
        X.routes[cr_rt.local_world_ranks[l]] = (route){&cr_shm_ops, l};
    X.routes[cr_rt.rank] = (route){&self_ops, 0};
    /* Every transport publishes its addresses before the one PMI barrier of start-up (in
     * cr_shm_init), which then has to happen in every process of the job, even one alone on its
     * node, as soon as another node's processes need this one's TCP address. */
    if (X.tcp && cr_tcp_init(why, cap))
        return -1;
    if (cr_shm_init(cr_rt.local_rank, cr_rt.local_size, cr_rt.local_world_ranks, X.tcp, why, cap))
        return -1;
    /* TCP traffic wakes a process that sleeps on its doorbell (its node's sleep mode). */
    if (X.tcp && cr_rt.local_size > 1 && cr_wait_bell_fd() >= 0 && cr_wait_add(cr_tcp_wait_fd()) != 0)
        return snprintf(why, cap, "cannot add the TCP sockets to the process's sleep"), -1;
    return 0;
}

int cr_xport_finalize(char *why, size_t cap)
{
    (void)why;
    (void)cap;
    cr_tcp_finalize();
    cr_shm_finalize();
    while (X.self_head) {
        self_frame *f = X.self_head;
        X.self_head = f->next;
        free(f);
    }
    X.self_tail = &X.self_head;
    free(X.routes);
    X.routes = NULL;
    X.tcp = false;
    return 0;
}

bool cr_xport_send(int dst, cr_xclass cls, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2)
{
    const route *r = &X.routes[dst];
    return r->ops->send(r->peer, cls, env, p1, n1, p2, n2);
}

cr_xsend_result cr_xport_send_lent(int dst, cr_xclass cls, const cr_xenv *env, const void *p, size_t n,
                                   void (*done)(void *), void *arg)
{
    const route *r = &X.routes[dst];
    if (r->ops->send_lent)
        return r->ops->send_lent(r->peer, cls, env, p, n, done, arg);
    return r->ops->send(r->peer, cls, env, p, n, NULL, 0) ? CR_XSEND_DONE : CR_XSEND_FULL;
}

bool cr_xport_send_gather(int dst, cr_xclass cls, const cr_xenv *env, size_t len, cr_xgather *g)
{
    const route *r = &X.routes[dst];
    return r->ops->send_gather(r->peer, cls, env, len, g);
}

size_t cr_xport_max_frame(int dst)
{
    const route *r = &X.routes[dst];
    return r->ops->max_frame(r->peer);
}

size_t cr_xport_parallel_below(int dst)
{
    return X.routes[dst].ops->parallel_below;
}

size_t cr_xport_stream_frame(int dst, uint64_t bytes)
{
    const route *r = &X.routes[dst];
    return r->ops->stream_frame(r->peer, bytes);
}

int cr_xport_poll(void)
{
    int got = cr_shm_poll();
    if (X.tcp)
        got += cr_tcp_poll();
    if (CR_UNLIKELY(X.self_head != NULL))
        got += self_poll();
    return got;
}

int cr_xport_read(int src, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote)
{
    const route *r = &X.routes[src];
    return r->ops->read(r->peer, local, nlocal, remote, nremote);
}

uint32_t cr_xport_seq_start(void)
{
    return cr_shm_seq_start();
}

void cr_xport_wake_node(void)
{
    cr_shm_wake_sleepers();
}

int cr_xport_write(int dst, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote)
{
    const route *r = &X.routes[dst];
    return r->ops->write(r->peer, local, nlocal, remote, nremote);
}

bool cr_xport_attach_allowed(void)
{
    return cr_shm_attach_allowed();
}

bool cr_xport_can_read(int peer)
{
    const route *r = &X.routes[peer];
    return r->ops->can_read(r->peer);
}

bool cr_xport_pull_preferred(int peer)
{
    const route *r = &X.routes[peer];
    return r->ops->pull_preferred(r->peer);
}

cr_xsplit cr_xport_split_preferred(int peer, uint64_t bytes)
{
    const route *r = &X.routes[peer];
    return r->ops->split_preferred(r->peer, bytes);
}

void cr_xport_sleep(bool (*ready)(void *), void *arg)
{
    if (X.self_head)
        return;
    cr_shm_sleep(ready, arg);
}

void cr_xport_watch(void)
{
    cr_shm_watch();
}

bool cr_xport_should_sleep(void)
{
    return cr_shm_sleep_mode();
}
