/* match.h: matching (see match.c): which receive a message goes to. Internal to pt2pt. */
#ifndef CR_MATCH_H
#define CR_MATCH_H

#include "pt2pt.h"

/* The matching state of one context index (a slot and its collective twin; every epoch of
 * the slot shares it, but at most one epoch is open at a time). */
typedef struct cr_match_ctx {
    cr_request *posted_head, *posted_tail;
    cr_unexp *unexp_head, *unexp_tail;
    bool has_closed;       /* a communicator of this slot was freed here, */
    uint32_t closed_epoch; /* the latest such: frames of it or older epochs are stale */
} cr_match_ctx;

/* Every slot's state, by context index (NULL: not used yet); read inline on every post. */
extern cr_match_ctx **cr_match_ctxs;
extern uint32_t cr_match_nctxs;

/* cr_match_ctx_get's first use of a slot: grows the table, creates the state. */
cr_match_ctx *cr_match_ctx_create(uint32_t ctx);

/* The state of a context id's slot: created on first use, or NULL when out of memory. */
static inline cr_match_ctx *cr_match_ctx_get(uint32_t full_ctx)
{
    uint32_t ctx = CR_CTX_INDEX(full_ctx);
    if (CR_LIKELY(ctx < cr_match_nctxs && cr_match_ctxs[ctx]))
        return cr_match_ctxs[ctx];
    return cr_match_ctx_create(full_ctx);
}
/* The same without creating it. */
cr_match_ctx *cr_match_ctx_find(uint32_t ctx);

/* A frame for an epoch of this slot that was closed here, or an older one. */
static inline bool cr_match_ctx_stale(const cr_match_ctx *m, uint32_t full_ctx)
{
    uint32_t behind = (m->closed_epoch - CR_CTX_EPOCH(full_ctx)) & CR_CTX_EPOCH_MASK;
    return m->has_closed && behind <= CR_CTX_EPOCH_MASK / 2;
}

static inline bool cr_matches(int want_src, int want_tag, int src, int tag)
{
    return (want_src == src || want_src == MPI_ANY_SOURCE) && (want_tag == tag || want_tag == MPI_ANY_TAG);
}

/* Whether a message of this protocol type carries its data (eager, long eager). */
static inline bool cr_match_carries_data(uint8_t type)
{
    return type == P_EAGER || type == P_LONG;
}

/* The first posted receive of context `ctx` that a message from `src` with `tag` matches,
 * taken out of the queue; NULL when none. */
cr_request *cr_match_take_posted(cr_match_ctx *m, uint32_t ctx, int src, int tag);
/* Posts a receive (r->ctx, r->peer, r->tag) behind the others. */
void cr_match_post(cr_match_ctx *m, cr_request *r);
/* Takes a posted receive out of the queue (MPI_Cancel); false when it is not there. */
bool cr_match_unpost(cr_match_ctx *m, cr_request *r);

/* The first unexpected message of context `ctx` that a receive for (`source`, `tag`), wildcards
 * allowed, matches; with `take`, taken out of the queue. NULL when none. */
cr_unexp *cr_match_find_unexp(cr_match_ctx *m, uint32_t ctx, int source, int tag, bool take);
/* A record for an unexpected message with room for `bytes` of data; NULL when out of memory. */
cr_unexp *cr_match_unexp_alloc(size_t bytes);
void cr_match_unexp_append(cr_match_ctx *m, cr_unexp *u);
void cr_match_unexp_remove(cr_match_ctx *m, cr_unexp *u);
/* The oldest unexpected message (then u->next, in arrival order), for walks that take some. */
static inline cr_unexp *cr_match_unexp_first(cr_match_ctx *m)
{
    return m ? m->unexp_head : NULL;
}

/* MPI_Finalize: frees every queue and cached record. */
void cr_match_finalize(void);

#endif
