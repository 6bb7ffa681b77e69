/* tiers.c: collectives on communicators whose processes are on several nodes, in two tiers: the
 * processes of each node among themselves (messages through shared memory), and one leader per
 * node among the leaders (messages over the network).
 *
 * Why: an algorithm that ignores the nodes sends across them from every process at once (the
 * first step of a reduce-scatter pairs each process with one on the other node, half the data
 * each), where the network is the slow link and its bandwidth is shared. In tiers, each node
 * first combines on its leader, the leaders combine among themselves, and each leader hands the
 * result to its node: the network carries one copy of the data per node instead of one per
 * process.
 *
 * The tiers are subsets of the communicator (cr_sched_subset): messages keep the schedule's tag
 * and carry communicator ranks, so the phases of one schedule never meet (a node's pairs and the
 * leaders' pairs are different pairs; within a node, the reduction sends up the tree and the
 * broadcast down it). Every process computes the tiers alone, from the node of every world rank
 * (cr_rt.node_of), and keeps them with the communicator. The reduction runs in tier order, so
 * it is used for commutative operations only. */
#include "coll.h"

#include "core/runtime.h"

#include <stdlib.h>

struct cr_coll_tiers {
    bool useful;   /* several nodes, and some node with several processes */
    int node_rank, node_size;
    int *node_map; /* this process's node: comm ranks, ascending */
    int leader_rank, nleaders;
    int *leader_map; /* the first process of each node, ascending; leader_rank: this node's place */
};

/* What the tiers are for comm, computed once; NULL when out of memory. */
static cr_coll_tiers *tiers_of(cr_comm *c)
{
    if (c->coll_tiers)
        return c->coll_tiers;
    int p = c->size;
    cr_coll_tiers *t = calloc(1, sizeof *t);
    int *node = malloc((size_t)p * sizeof *node);
    if (t) {
        t->node_map = malloc((size_t)p * sizeof *t->node_map);
        t->leader_map = malloc((size_t)p * sizeof *t->leader_map);
    }
    if (!t || !node || !t->node_map || !t->leader_map) {
        if (t)
            free(t->node_map), free(t->leader_map);
        free(t), free(node);
        return NULL;
    }
    int mine = cr_rt.node_of[cr_rt.rank];
    for (int r = 0; r < p; r++) {
        node[r] = cr_rt.node_of[cr_comm_world_rank(c, r)];
        if (node[r] == mine) {
            if (r == c->rank)
                t->node_rank = t->node_size;
            t->node_map[t->node_size++] = r;
        }
        bool first = true; /* the first process of its node in comm: a leader */
        for (int q = 0; q < r && first; q++)
            first = node[q] != node[r];
        if (first) {
            if (node[r] == mine)
                t->leader_rank = t->nleaders;
            t->leader_map[t->nleaders++] = r;
        }
    }
    t->useful = t->nleaders > 1 && t->nleaders < p;
    free(node);
    c->coll_tiers = t;
    return t;
}

void cr_coll_tiers_release(cr_comm *c)
{
    cr_coll_tiers *t = c->coll_tiers;
    c->coll_tiers = NULL;
    if (t)
        free(t->node_map), free(t->leader_map), free(t);
}

bool cr_coll_tiers_usable(cr_sched *s, const cr_op *op)
{
    if (s->comm->inter || s->peer_map || (op && !op->commutative) || cr_rt.nnodes < 2)
        return false;
    const cr_coll_tiers *t = tiers_of(s->comm);
    return t && t->useful;
}

/* Back to the whole communicator. */
static void whole(cr_sched *s)
{
    cr_sched_subset(s, s->comm->rank, s->comm->size, NULL);
}

void cr_coll_allreduce_tiers(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    const cr_coll_tiers *t = s->comm->coll_tiers; /* cr_coll_tiers_usable made it */
    cr_sched_subset(s, t->node_rank, t->node_size, t->node_map);
    if (t->node_size > 1) /* the node's result on its leader (its data is in rbuf everywhere) */
        cr_coll_reduce_binomial(s, t->node_rank == 0 ? MPI_IN_PLACE : rbuf, rbuf, count, dt, op, 0);
    cr_sched_fence(s);
    if (t->node_rank == 0) {
        cr_sched_subset(s, t->leader_rank, t->nleaders, t->leader_map);
        cr_coll_allreduce_select(s, rbuf, count, dt, op, false);
        cr_sched_fence(s);
    }
    cr_sched_subset(s, t->node_rank, t->node_size, t->node_map);
    if (t->node_size > 1)
        cr_coll_bcast_binomial(s, rbuf, count, dt, 0);
    whole(s);
}
