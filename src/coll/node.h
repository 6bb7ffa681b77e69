/* node.h: the node component's state for one communicator (node.c: barrier and small
 * reductions; node_large.c: large broadcasts and reductions), private to src/coll.
 *
 * MPI_COMM_WORLD's areas are regions of the transport's segment. Any other intracommunicator of
 * a job on one node gets areas of its own at its SETUP_AFTER-th blocking collective (node.c):
 * its rank 0 makes a memory file, the others map it, and from then on its collectives take the
 * same paths as MPI_COMM_WORLD's. Communicators used for one or two collectives (made, used
 * once, freed) never pay for that. */
#ifndef CR_COLL_NODE_H
#define CR_COLL_NODE_H

#include "coll.h"

struct node_area;
struct large_area;

typedef struct cr_coll_node {
    struct node_area *small; /* node.c's counters and slots; NULL until set up */
    uint64_t ring_calls;        /* the number of this process's next ring call (small reduce, scan, gather, scatter; node.c) */
    uint32_t ring_free_until;   /* every process's ring `done` was at least this when last looked at */
    int32_t ring_seen_reader;   /* the last process ring_free looked at alone, */
    uint32_t ring_seen_done;    /* and its `done` then */
    int32_t ring_reader[64];    /* [g % CR_SHM_COLL_RING_DEPTH]: who reads this process's slot in call g, or -1 */
    struct large_area *large; /* node_large.c's control lines and blocks; NULL when absent */
    char *blocks;
    uint64_t *sizes;          /* beside each block place, the size its writer staged (counts beside the data, below) */
    uint32_t nblocks;         /* blocks in the ring */
    uint32_t large_procs;     /* the processes that share it (a control line each) */
    uint32_t next, place;     /* the number of this process's next block, and its place */
    uint32_t free_until;      /* every process's `done` was at least this when last looked at */
    uint32_t offers;          /* the number of this process's next large scatter or gather (node_large.c: in place) */
    void *map;                /* the communicator's own memory file, mapped (NULL for the world) */
    size_t map_bytes;
    uint32_t issued, retired; /* turns: node collectives started here, and those finished */
    uint32_t allreduce_calls; /* the number of this process's next small allreduce with flags (node.c) */
} cr_coll_node;

/* Turns. The counters above (and node_large.c's) assume that this process runs one node
 * collective at a time, in the order every member starts them. Blocking calls do so by nature;
 * nonblocking ones may be waited for in any order and advance together. So each node
 * collective's first step takes a ticket (in start order: nothing precedes that step but
 * local copies) and waits until every node collective started before it on this communicator
 * has finished here; the schedule's completion ends the turn (cr_coll_node_end_turn). Each
 * waits only for earlier ones, which progress advances whatever the process waits for, so
 * turns never deadlock where the standard's ordering rule holds. Persistent collectives do not
 * use the component: their starts need not come in the same order everywhere. */
bool cr_coll_node_take_turn(cr_sched *s, cr_coll_node *st);
static inline bool cr_coll_node_turn(cr_sched *s, cr_coll_node *st)
{
    return CR_LIKELY(s->node_turn == 2) || cr_coll_node_take_turn(s, st);
}

/* Counts beside the data. A contribution a process leaves in the node's shared memory for the
 * others to take carries its size in bytes: in its slot's flag line (node.c: allreduce and the
 * flag slots, the ring), beside its first staging block of a call (node_large.c: the exchanges,
 * a broadcast's root, each process's slot of a reduction's first piece; alltoallv and
 * alltoallw put each pair's bytes in a header before its data, the word beside the slot being
 * the process's reach), in a scatter root's offer of its buffer. So a reader can tell that the processes passed counts
 * or types that do not match, as a short message tells the message algorithms (sched.c). A
 * process whose schedule already has an error (its own block did not match, cr_sched_mismatch,
 * or it found a mismatch in what it read) leaves CR_COLL_NODE_MARKED instead, as its sends would
 * go empty. A reader that finds a size other than its own still reads as much as it expects (in
 * bounds: each process chose the path for its own size, and every slot and block has room for
 * that), finishes the call and returns MPI_ERR_TRUNCATE.
 * Limits: only processes that take the same path, and there the same number of pieces, can
 * tell (sizes of the same order do: MPICH's tests pass 1 element against 10); a process that
 * stages 1 MiB where another passes 8 bytes through a slot never meets it (nor, in either
 * wait mode, does one whose block just fits a slot, CR_SHM_COLL_SLOT / p, another's just not), and processes whose
 * staged calls take different numbers of blocks count their blocks apart from then on (and,
 * for a scatter or gather where only some of them decide to copy in place, one side waits for
 * an offer or answers that never come: node_large.c decides by whole pieces, so sizes within a
 * staging window of each other meet). Large broadcasts and reductions meet when their sizes
 * take the same number of blocks (a broadcast) or of pieces of n + 1 blocks (a reduction). */
#define CR_COLL_NODE_MARKED UINT64_MAX
static inline uint64_t cr_coll_node_size_mark(const cr_sched *s, uint64_t bytes)
{
    return CR_UNLIKELY(s->err) ? CR_COLL_NODE_MARKED : bytes;
}
/* Notes a mismatch (cr_sched_note_mismatch) when `got`, the size process `from` left, is not
 * `want`, this process's own. After a mismatch a reduction combines nothing (as its message
 * steps do not, sched.c): the slots hold other calls' data or none. */
void cr_coll_node_check_size(cr_sched *s, int from, uint64_t got, uint64_t want);

/* The state of `comm` once its areas exist and are started, or NULL (the node component is
 * not usable for it). */
cr_coll_node *cr_coll_node_of(cr_comm *comm);
/* node_large.c: starts the large area's counters (its first user sets them). */
void cr_coll_node_large_start(cr_coll_node *st, int n);

#endif
