/* comm.h: communicators: who is in them (a map from communicator rank to world rank), their
 * matching context, error handler, name and cached attributes.
 *
 * Invariants:
 *   - ctx is the context id used for point-to-point traffic; ctx + 1 carries the communicator's
 *     collective traffic, so collectives never match user messages. Context ids are even.
 *   - a context id is epoch << 13 | slot << 1 (| 1 for collectives): the slot (0..4095) is
 *     reused when communicators are freed, the epoch changes with each reuse (agreed by the
 *     members as one more than any of them used for that slot), so a message sent on a freed
 *     communicator never matches on the one that reuses its slot.
 *   - world_ranks == NULL means the identity map (MPI_COMM_WORLD and its duplicates).
 *   - an intercommunicator (inter) has a local group (rank, size, world_ranks, as any
 *     communicator) and a remote group (remote_size, remote_world_ranks): point-to-point
 *     ranks name remote processes, and a message carries the sender's local rank. Its `local`
 *     intracommunicator spans the local group with a context of its own: collectives run
 *     their local steps there. For an intracommunicator remote_size == size and the remote
 *     group is the group itself. */
#ifndef CR_COMM_H
#define CR_COMM_H

#include "core/error.h"
#include "core/types.h"

struct cr_attr;
struct cr_match_ctx;
struct cr_topo;

#define CR_CTX_SLOTS 4096
#define CR_CTX_INDEX_BITS 13 /* slot and collective bit */
#define CR_CTX_EPOCH_MASK ((1u << (32 - CR_CTX_INDEX_BITS)) - 1)
/* Where a context's matching state lives: the same for every epoch of a slot. */
#define CR_CTX_INDEX(ctx) ((ctx) & ((1u << CR_CTX_INDEX_BITS) - 1))
#define CR_CTX_EPOCH(ctx) ((ctx) >> CR_CTX_INDEX_BITS)
#define CR_CTX_MAKE(epoch, slot) ((uint32_t)(epoch) << CR_CTX_INDEX_BITS | (uint32_t)(slot) << 1)

/* A session of the sessions model (runtime/session.c makes and ends them). Here, in the objects
 * layer, because the groups and communicators derived from it hold it: a buffered send on such a
 * communicator uses the session's attached buffer when the communicator has none of its own
 * (MPI-4.1 section 3.6). It lives while its handle or any holder does (refs). */
struct cr_session {
    cr_errobj eo; /* first: the binding finds a session's error handler through it */
    int thread_level;
    struct cr_bsend_buf *bsend; /* buffer attached with MPI_Session_attach_buffer, or NULL */
    bool finalized;             /* MPI_Session_finalize ended it: its handle no longer names it */
};

/* Takes and drops a holder's reference to a session (NULL: none, the world model). */
void cr_session_hold(cr_session *s);
void cr_session_release(cr_session *s);

typedef struct cr_group {
    cr_obj obj;
    int size;
    int rank;           /* this process's rank in the group, or MPI_UNDEFINED */
    int *world_ranks;   /* NULL for the identity map 0..size-1 */
    cr_session *session; /* the session it derives from (held), or NULL */
} cr_group;

typedef struct cr_comm {
    cr_errobj eo;
    uint32_t ctx;
    int rank;
    int size;
    int *world_ranks; /* comm rank -> world rank; NULL for the identity */
    struct cr_attr *attrs;
    struct cr_match_ctx *match; /* point-to-point matching state, owned by pt2pt */
    uint32_t coll_tag;          /* collective sequence, advanced identically on every member */
    uint32_t coll_blocking;     /* blocking collectives called, until the node component sets up */
    struct cr_coll_node *coll_node; /* the node component's state for it (src/coll/node.h), or NULL */
    struct cr_coll_tiers *coll_tiers; /* its processes by node, when it spans nodes (src/coll/tiers.c), or NULL */
    struct cr_bsend_buf *bsend; /* buffer attached with MPI_Comm_attach_buffer, or NULL */
    cr_session *session;        /* the session it derives from (held), or NULL (the world model) */
    struct cr_topo *topo;       /* its process topology (topo.h), or NULL */
    bool inter;                 /* an intercommunicator */
    int remote_size;            /* the size of the group point-to-point ranks name (== size unless inter) */
    int *remote_world_ranks;    /* inter: remote rank -> world rank (never NULL); else NULL */
    struct cr_comm *local;      /* inter: the local group's intracommunicator (held); else NULL */
    uint8_t hints_set, hints;   /* the info hints Courier knows (CR_HINT_*) that were set, and which are true */
    char name[MPI_MAX_OBJECT_NAME];
} cr_comm;

/* The communicator info hints of the standard (MPI-4.1 section 7.4.4), which Courier keeps and
 * reports; other keys are ignored, as the standard allows. */
enum {
    CR_HINT_NO_ANY_TAG = 1,
    CR_HINT_NO_ANY_SOURCE = 2,
    CR_HINT_EXACT_LENGTH = 4,
    CR_HINT_ALLOW_OVERTAKING = 8,
    CR_HINT_STRICT_PERSISTENT_ORDER = 16,
};
struct cr_info;
/* Sets the hints found in `info` (NULL: none); MPI_ERR_INFO_VALUE for a value not true/false. */
int cr_comm_hints_apply(cr_comm *c, const struct cr_info *info);

extern cr_comm cr_comm_world, cr_comm_self;
extern cr_group cr_group_empty;

static inline int cr_comm_world_rank(const cr_comm *c, int rank)
{
    return c->world_ranks ? c->world_ranks[rank] : rank;
}

/* The world rank of the process that point-to-point rank `rank` names: in the remote group
 * of an intercommunicator, in the group itself otherwise. */
static inline int cr_comm_peer_world(const cr_comm *c, int rank)
{
    return CR_UNLIKELY(c->inter) ? c->remote_world_ranks[rank] : cr_comm_world_rank(c, rank);
}

static inline cr_comm *cr_comm_get(MPI_Comm h)
{
    return (cr_comm *)cr_handle_get((uintptr_t)h, CR_KIND_COMM);
}

/* Communicators live while referenced: by the user's handle, and by every pending operation
 * (a request holds its communicator), so MPI_Comm_free with operations still pending lets them
 * complete normally and the communicator (with its context id) goes with the last of them. */
static inline void cr_comm_hold(cr_comm *c)
{
    cr_obj_ref(c);
}
/* cr_comm_release's last reference: frees the communicator's context and everything it holds. */
void cr_comm_destroy(cr_comm *c);
/* Drops a reference (inline: every request of a point-to-point call holds its communicator). */
static inline void cr_comm_release(cr_comm *c)
{
    if (cr_obj_unref(c))
        cr_comm_destroy(c);
}

/* Replaces `*slot` (an object's handler) with `eh`, keeping reference counts; MPI_ERR_ARG for a
 * user handler made for another kind of object. */
int cr_errhandler_attach(cr_errhandler **slot, cr_errhandler *eh, cr_kind objkind);

/* A new user handle for `eh` (MPI_*_get_errhandler). */
int cr_errhandler_get(cr_errhandler *eh, MPI_Errhandler *errhandler);

/* Library load: registers the predefined communicators and groups. */
void cr_comm_setup(void);
/* MPI_Init: fills MPI_COMM_WORLD and MPI_COMM_SELF for this process. */
int cr_comm_init(int world_rank, int world_size);
/* MPI_Finalize: frees MPI_COMM_SELF's then MPI_COMM_WORLD's attributes (running delete
 * callbacks, as the standard asks) and releases the communicators' resources. */
int cr_comm_finalize(void);

#endif
