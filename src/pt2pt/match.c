/* match.c: matching, which receive a message goes to, and the storage of the messages that
 * arrived before their receive.
 *
 * State per context slot (a communicator's point-to-point and collective contexts, every epoch
 * of them; see comm.h): a FIFO of posted receives and a FIFO of unexpected messages, each entry
 * with its full context id. An arriving message takes the first posted receive that matches it;
 * a posted receive takes the first unexpected message that matches it. Both queues are in
 * arrival or posting order and frames from one sender arrive in order, so MPI's non-overtaking
 * rule holds, wildcards included. Lists are walked from the front: cheap while they are short,
 * as they are in most programs; this file is where a hash of exact (source, tag) keys beside a
 * wildcard list, merged by posting order, would go (doc/design/matching.md). */
#include "match.h"

#include <stdio.h>
#include <stdlib.h>

cr_match_ctx **cr_match_ctxs;
uint32_t cr_match_nctxs;

cr_match_ctx *cr_match_ctx_create(uint32_t full_ctx)
{
    uint32_t ctx = CR_CTX_INDEX(full_ctx);
    if (ctx >= cr_match_nctxs) {
        uint32_t n = CR_MAX(ctx + 1, cr_match_nctxs * 2);
        cr_match_ctx **grown = realloc(cr_match_ctxs, n * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + cr_match_nctxs, 0, (n - cr_match_nctxs) * sizeof *grown);
        cr_match_ctxs = grown;
        cr_match_nctxs = n;
    }
    if (!cr_match_ctxs[ctx])
        cr_match_ctxs[ctx] = calloc(1, sizeof(cr_match_ctx));
    return cr_match_ctxs[ctx];
}

cr_match_ctx *cr_match_ctx_find(uint32_t full_ctx)
{
    uint32_t ctx = CR_CTX_INDEX(full_ctx);
    return ctx < cr_match_nctxs ? cr_match_ctxs[ctx] : NULL;
}



static void posted_append(cr_match_ctx *m, cr_request *r)
{
    r->next = NULL;
    r->prev = m->posted_tail;
    if (m->posted_tail)
        m->posted_tail->next = r;
    else
        m->posted_head = r;
    m->posted_tail = r;
}

static void posted_remove(cr_match_ctx *m, cr_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        m->posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        m->posted_tail = r->prev;
    r->next = r->prev = NULL;
}

/* Unexpected messages come and go in bursts (a sender runs ahead of its receiver); their
 * buffers are kept in free lists by size class instead of going back to malloc each time,
 * which would give the memory back to the kernel at the top of the heap and fault it in again
 * for the next burst. Eight classes per power of two (128, 144, 160, ... 240, 256, 288, ...)
 * waste at most an eighth of a block; the cache as a whole keeps at most UNEXP_KEEP_BYTES. */
#define UNEXP_STEPS 8
#define UNEXP_CLASSES (12 * UNEXP_STEPS + 1) /* 128 B .. 512 KiB */
#define UNEXP_KEEP 64                        /* blocks kept per class, */
#define UNEXP_KEEP_BYTES (4 << 20)           /* and this much memory in all: a burst of long
                                              * messages must not leave tens of MiB cached */
static struct {
    cr_unexp *head;
    int n;
} unexp_cache[UNEXP_CLASSES];
static size_t unexp_cached_bytes;

static size_t class_bytes(int c)
{
    return ((size_t)(UNEXP_STEPS + c % UNEXP_STEPS) * (128 / UNEXP_STEPS)) << (c / UNEXP_STEPS);
}

static int unexp_class(size_t bytes)
{
    size_t total = sizeof(cr_unexp) + bytes;
    if (total <= 128)
        return 0;
    int octave = 63 - __builtin_clzll((unsigned long long)((total - 1) / 128)); /* 128 << o < total <= 256 << o */
    size_t step = ((size_t)128 / UNEXP_STEPS) << octave;
    int c = octave * UNEXP_STEPS + (int)((total - ((size_t)128 << octave) + step - 1) / step);
    return CR_MIN(c, UNEXP_CLASSES); /* UNEXP_CLASSES: too big to cache */
}

cr_unexp *cr_match_unexp_alloc(size_t bytes)
{
    int c = unexp_class(bytes);
    if (c < UNEXP_CLASSES && unexp_cache[c].head) {
        cr_unexp *u = unexp_cache[c].head;
        unexp_cache[c].head = u->next;
        unexp_cache[c].n--;
        unexp_cached_bytes -= class_bytes(c);
        return u;
    }
    return malloc(c < UNEXP_CLASSES ? class_bytes(c) : sizeof(cr_unexp) + bytes);
}


void cr_pt2pt_unexp_free(cr_unexp *u)
{
    int c = unexp_class(cr_match_carries_data(u->type) ? u->bytes : 0);
    if (c < UNEXP_CLASSES && unexp_cache[c].n < UNEXP_KEEP && unexp_cached_bytes + class_bytes(c) <= UNEXP_KEEP_BYTES) {
        u->next = unexp_cache[c].head;
        unexp_cache[c].head = u;
        unexp_cache[c].n++;
        unexp_cached_bytes += class_bytes(c);
        return;
    }
    free(u);
}

void cr_match_unexp_append(cr_match_ctx *m, cr_unexp *u)
{
    u->next = NULL;
    u->prev = m->unexp_tail;
    if (m->unexp_tail)
        m->unexp_tail->next = u;
    else
        m->unexp_head = u;
    m->unexp_tail = u;
}

void cr_match_unexp_remove(cr_match_ctx *m, cr_unexp *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        m->unexp_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        m->unexp_tail = u->prev;
}

cr_request *cr_match_take_posted(cr_match_ctx *m, uint32_t ctx, int src, int tag)
{
    for (cr_request *r = m->posted_head; r; r = r->next) {
        if (r->ctx == ctx && cr_matches(r->peer, r->tag, src, tag)) {
            posted_remove(m, r);
            return r;
        }
    }
    return NULL;
}

void cr_match_post(cr_match_ctx *m, cr_request *r)
{
    posted_append(m, r);
}

bool cr_match_unpost(cr_match_ctx *m, cr_request *r)
{
    for (cr_request *p = m ? m->posted_head : NULL; p; p = p->next) {
        if (p == r) {
            posted_remove(m, r);
            return true;
        }
    }
    return false;
}

cr_unexp *cr_match_find_unexp(cr_match_ctx *m, uint32_t ctx, int source, int tag, bool take)
{
    for (cr_unexp *u = m ? m->unexp_head : NULL; u; u = u->next) {
        if (u->ctx == ctx && cr_matches(source, tag, u->src, u->tag)) {
            if (take)
                cr_match_unexp_remove(m, u);
            return u;
        }
    }
    return NULL;
}

void cr_match_finalize(void)
{
    for (uint32_t c = 0; c < cr_match_nctxs; c++) {
        if (!cr_match_ctxs[c])
            continue;
        while (cr_match_ctxs[c]->unexp_head) {
            cr_unexp *u = cr_match_ctxs[c]->unexp_head;
            cr_match_ctxs[c]->unexp_head = u->next;
            free(u);
        }
        free(cr_match_ctxs[c]);
    }
    for (int c = 0; c < UNEXP_CLASSES; c++) {
        while (unexp_cache[c].head) {
            cr_unexp *u = unexp_cache[c].head;
            unexp_cache[c].head = u->next;
            free(u);
        }
        unexp_cache[c].n = 0;
    }
    unexp_cached_bytes = 0;
    free(cr_match_ctxs);
    cr_match_ctxs = NULL;
    cr_match_nctxs = 0;
}
