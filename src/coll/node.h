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
    uint32_t nblocks;         /* blocks in the ring */
    uint32_t next, place;     /* the number of this process's next block, and its place */
    uint32_t free_until;      /* every process's `done` was at least this when last looked at */
    uint32_t scatters;        /* this process's next large scatter (node_large.c: read in place) */
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

/* The state of `comm` once its areas exist and are started, or NULL (the node component is
 * not usable for it). */
cr_coll_node *cr_coll_node_of(cr_comm *comm);
/* node_large.c: starts the large area's counters (its first user sets them). */
void cr_coll_node_large_start(cr_coll_node *st, int n);

#endif
