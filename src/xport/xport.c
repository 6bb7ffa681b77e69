/* xport.c: routing frames to the transport that reaches each process (this process itself,
 * or a process on this node through shared memory), and the self transport: frames a process
 * sends to itself wait in a local queue until the next poll, so sending never re-enters the
 * layer above. */
#include "xport.h"

#include "core/base.h"
#include "core/runtime.h"
#include "shm/shm.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct self_frame {
    struct self_frame *next;
    cr_xenv env;
    size_t len;
    char data[];
} self_frame;

static struct {
    cr_xport_handler *handler;
    int *route; /* world rank -> local index on this node (self included), -1 elsewhere */
    int self_local;
    self_frame *self_head, **self_tail;
} X = {.self_tail = &X.self_head};

void cr_xport_set_handler(cr_xport_handler *h)
{
    X.handler = h;
}

int cr_xport_init(char *why, size_t cap)
{
    if (cr_rt.nnodes > 1)
        return snprintf(why, cap,
                        "this job spans %d nodes, but Courier can only communicate within one node for now "
                        "(the TCP transport comes later)",
                        cr_rt.nnodes),
               -1;
    X.route = malloc((size_t)cr_rt.size * sizeof(int));
    if (!X.route)
        return snprintf(why, cap, "out of memory"), -1;
    for (int r = 0; r < cr_rt.size; r++)
        X.route[r] = -1;
    for (int l = 0; l < cr_rt.local_size; l++)
        X.route[cr_rt.local_world_ranks[l]] = l;
    X.self_local = cr_rt.local_rank;
    return cr_shm_init(cr_rt.local_rank, cr_rt.local_size, cr_rt.local_world_ranks, why, cap);
}

int cr_xport_finalize(char *why, size_t cap)
{
    (void)why;
    (void)cap;
    cr_shm_finalize();
    while (X.self_head) {
        self_frame *f = X.self_head;
        X.self_head = f->next;
        free(f);
    }
    X.self_tail = &X.self_head;
    free(X.route);
    X.route = NULL;
    return 0;
}

static bool self_send(const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2)
{
    self_frame *f = malloc(sizeof *f + n1 + n2);
    if (!f)
        return false;
    f->next = NULL;
    f->env = *env;
    f->len = n1 + n2;
    if (n1)
        memcpy(f->data, p1, n1);
    if (n2)
        memcpy(f->data + n1, p2, n2);
    *X.self_tail = f;
    X.self_tail = &f->next;
    return true;
}

bool cr_xport_send(int dst, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2)
{
    int local = X.route[dst];
    if (CR_UNLIKELY(local == X.self_local))
        return self_send(env, p1, n1, p2, n2);
    return cr_shm_send(local, env, p1, n1, p2, n2);
}

size_t cr_xport_max_frame(int dst)
{
    if (X.route[dst] == X.self_local)
        return (size_t)1 << 20;
    return cr_shm_max_frame();
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
        cr_xframe fr = {.src = cr_rt.rank, .env = &f->env, .len = f->len, .p1 = f->data, .n1 = f->len, .p2 = NULL};
        X.handler(&fr);
        free(f);
        f = next;
        got++;
    }
    return got;
}

int cr_xport_poll(void)
{
    int got = cr_shm_poll(X.handler);
    if (CR_UNLIKELY(X.self_head != NULL))
        got += self_poll();
    return got;
}

int cr_xport_read(int src, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote)
{
    int l = X.route[src];
    if (l == X.self_local) { /* our own memory: a plain copy */
        size_t li = 0, lo = 0, ri = 0, ro = 0;
        while ((int)li < nlocal && (int)ri < nremote) {
            size_t n = CR_MIN(local[li].iov_len - lo, remote[ri].iov_len - ro);
            memcpy((char *)local[li].iov_base + lo, (char *)remote[ri].iov_base + ro, n);
            lo += n;
            ro += n;
            if (lo == local[li].iov_len)
                li++, lo = 0;
            if (ro == remote[ri].iov_len)
                ri++, ro = 0;
        }
        return 0;
    }
    return cr_shm_read(l, local, nlocal, remote, nremote);
}

bool cr_xport_can_read(int peer)
{
    return X.route[peer] == X.self_local || cr_shm_can_read();
}

bool cr_xport_pull_preferred(int peer)
{
    return X.route[peer] == X.self_local || cr_shm_pull_preferred(X.route[peer]);
}

void cr_xport_sleep(bool (*ready)(void *), void *arg)
{
    if (X.self_head)
        return;
    cr_shm_sleep(ready, arg);
}

bool cr_xport_should_sleep(void)
{
    return cr_shm_sleep_mode();
}
