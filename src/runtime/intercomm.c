/* intercomm.c: intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, and the
 * intercommunicator forms of MPI_Comm_dup, MPI_Comm_split and MPI_Comm_create.
 *
 * The two groups agree on things through a bridge: each group works within itself (on an
 * intracommunicator of its own), and one process of each, its leader, trades with the other
 * leader over a communicator that spans both (the peer communicator while an
 * intercommunicator is being made, the intercommunicator itself afterwards); then each leader
 * passes on within its group what it got. A new context must be free in both groups, so its
 * agreement (cr_comm_slot_agree) reduces over the bridge. Every intercommunicator also has an
 * intracommunicator of its local group (comm.h), made within the group, for the local steps of
 * its collectives and for the next agreements. */
#include "coll/coll.h"
#include "comm/comm.h"
#include "comm_create.h"
#include "cr_impl.h"

#include <stdlib.h>
#include <string.h>

/* The leaders' tag while an intercommunicator is made over the peer communicator: the user's
 * tag folded into negative tags, below the wildcards and apart from MPI_Comm_create_group's
 * (comm_create.c) and from collective sequences (never negative), on the peer communicator's
 * collective context: nothing else there can match the leaders' messages. Two concurrent
 * MPI_Intercomm_create calls over one peer communicator need tags that differ modulo 2^30. */
#define LEADER_TAG(tag) (-16 - ((tag) & 0x3fffffff))

typedef struct bridge {
    cr_comm *local;    /* this process's group, an intracommunicator */
    int leader;        /* the rank in `local` that talks to the other group */
    cr_comm *peer;     /* what the leaders talk over (meaningful at the leader) */
    int remote_leader; /* the other leader's rank in peer */
    int tag;           /* the leaders' tag on peer's collective context */
} bridge;

static bool is_leader(const bridge *b)
{
    return b->local->rank == b->leader;
}

/* An existing intercommunicator's bridge: the two rank 0s talk over it, with a tag of its
 * collective sequence (every member of both groups takes it, in the same call). */
static bridge inter_bridge(cr_comm *ic)
{
    return (bridge){ic->local, 0, ic, 0, (int)(ic->coll_tag++ & 0x7fffffff)};
}

/* The leaders trade: each sends scount and receives rcount elements of dt. */
static int trade(const bridge *b, const void *sbuf, MPI_Count scount, void *rbuf, MPI_Count rcount, cr_dtype *dt)
{
    cr_sched s;
    cr_sched_init_tagged(&s, b->peer, b->tag);
    cr_sched_recv(&s, rbuf, rcount, dt, b->remote_leader);
    cr_sched_send(&s, sbuf, scount, dt, b->remote_leader);
    return cr_sched_run(&s);
}

/* The leader passes buf on within its group. */
static int pass_on(const bridge *b, void *buf, MPI_Count count, cr_dtype *dt)
{
    if (b->local->size == 1)
        return MPI_SUCCESS;
    cr_sched s;
    cr_sched_init(&s, b->local);
    cr_coll_bcast_binomial(&s, buf, count, dt, b->leader);
    return cr_sched_run(&s);
}

/* Every process of each group gets the other group's `theirs` (rcount elements) for its own
 * `mine` (scount, significant at the leader). */
static int swap(const bridge *b, const void *mine, MPI_Count scount, void *theirs, MPI_Count rcount, cr_dtype *dt)
{
    int err = is_leader(b) ? trade(b, mine, scount, theirs, rcount, dt) : MPI_SUCCESS;
    return err ? err : pass_on(b, theirs, rcount, dt);
}

/* An allreduce over both groups (cr_comm_allreduce_fn) for the operations of context
 * agreement, which commute: within the group, across the leaders, back within the group. */
static int bridge_allreduce(void *buf, int count, cr_dtype *dt, cr_op *op, void *arg)
{
    const bridge *b = arg;
    uint64_t theirs[CR_CTX_SLOTS / 64];
    if ((size_t)count * dt->size > sizeof theirs)
        return cr_err(MPI_ERR_INTERN, "bridge_allreduce: %d elements do not fit", count);
    int err = cr_coll_allreduce_auto(buf, count, dt, op, b->local);
    if (!err && is_leader(b) && !(err = trade(b, buf, count, theirs, count, dt)))
        cr_op_apply(op, theirs, buf, count, dt);
    return err ? err : pass_on(b, buf, count, dt);
}

/* Each group learns the other's members (world ranks, in rank order): *theirs (allocated) and
 * *m. `mine` (n of them) is significant at the leader. A leader that found its own arguments
 * wrong (leader_err) tells its group instead of trading, so that no process of the group waits
 * for an exchange that will never come; they all return an error of the same class. */
static int swap_members(const bridge *b, const int *mine, int n, int **theirs, int *m, int leader_err)
{
    cr_dtype *int_t = cr_dtype_get(MPI_INT);
    int err = MPI_SUCCESS;
    if (is_leader(b)) {
        if (leader_err) {
            int cls;
            cr_mpi_error_class(leader_err, &cls);
            *m = -cls;
        } else {
            err = trade(b, &n, 1, m, 1, int_t);
        }
    }
    if (err || (err = pass_on(b, m, 1, int_t)))
        return err;
    if (*m < 0)
        return leader_err ? leader_err
                          : cr_err(-*m, "the local leader (rank %d of local_comm) found its peer_comm or "
                                        "remote_leader wrong", b->leader);
    if (!(*theirs = malloc((size_t)(*m > 0 ? *m : 1) * sizeof **theirs)))
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a group of %d processes", *m);
    if ((err = swap(b, mine, n, *theirs, *m, int_t))) {
        free(*theirs);
        *theirs = NULL;
    }
    return err;
}

/* The intercommunicator of a local group (`local`, held from now on, its members `mine`, taken
 * over) and a remote group (`theirs`, taken over), on context ctx. */
static int inter_new(cr_comm *parent, uint32_t ctx, cr_comm *local, int *theirs, int m, MPI_Comm *out, cr_comm **obj)
{
    int *mine = cr_comm_world_ranks_of(local);
    cr_comm *c = NULL;
    int err = mine ? cr_comm_new(parent, ctx, mine, local->size, local->rank, out, &c)
                   : cr_err(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    if (err) {
        if (!mine)
            cr_comm_slot_release(ctx);
        free(theirs);
        cr_comm_release(local);
        return err;
    }
    c->inter = true;
    c->remote_size = m;
    c->remote_world_ranks = theirs;
    c->local = local;
    if (obj)
        *obj = c;
    return MPI_SUCCESS;
}

/* The leader's own arguments of MPI_Intercomm_create (significant there only); sets b->peer. */
static int check_leader(bridge *b, const cr_comm *local_comm, MPI_Comm peer_comm)
{
    if (!(b->peer = cr_comm_get(peer_comm)))
        return cr_err_bad_handle(MPI_ERR_COMM, "communicator", (uintptr_t)peer_comm, "peer_comm");
    int rl = b->remote_leader;
    if (rl < 0 || rl >= b->peer->remote_size)
        return cr_err(MPI_ERR_RANK, "invalid remote_leader=%d: peer_comm has ranks 0..%d", rl, b->peer->remote_size - 1);
    int w = cr_comm_peer_world(b->peer, rl);
    for (int r = 0; r < local_comm->size; r++)
        if (cr_comm_world_rank(local_comm, r) == w)
            return cr_err(MPI_ERR_RANK, "remote_leader=%d of peer_comm is in local_comm (its rank %d): the leaders "
                                        "must be in different groups", rl, r);
    return MPI_SUCCESS;
}

int cr_mpi_intercomm_create(cr_comm *local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                            MPI_Comm *newintercomm)
{
    if (local_comm->inter)
        return cr_err(MPI_ERR_COMM, "local_comm is an intercommunicator: MPI_Intercomm_create needs an "
                                    "intracommunicator of the local group");
    if (local_leader < 0 || local_leader >= local_comm->size)
        return cr_err(MPI_ERR_RANK, "invalid local_leader=%d: local_comm has ranks 0..%d", local_leader,
                      local_comm->size - 1);
    bridge b = {local_comm, local_leader, NULL, remote_leader, LEADER_TAG(tag)};
    int leader_err = is_leader(&b) ? check_leader(&b, local_comm, peer_comm) : MPI_SUCCESS;
    int *mine = cr_comm_world_ranks_of(local_comm), *theirs = NULL, m = 0;
    if (!mine)
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    int err = swap_members(&b, mine, local_comm->size, &theirs, &m, leader_err);
    free(mine);
    if (err)
        return err;
    /* The groups must be disjoint: every process finds the same answer. */
    for (int i = 0; i < m; i++)
        for (int r = 0; r < local_comm->size; r++)
            if (theirs[i] == cr_comm_world_rank(local_comm, r)) {
                free(theirs);
                return cr_err(MPI_ERR_COMM, "the local and remote groups overlap: rank %d of local_comm is rank %d "
                                            "of the remote group", r, i);
            }
    uint32_t ctx;
    if ((err = cr_comm_slot_agree(bridge_allreduce, &b, &ctx))) {
        free(theirs);
        return err;
    }
    MPI_Comm lh;
    cr_comm *local;
    if ((err = cr_comm_dup_bare(local_comm, &lh, &local))) {
        cr_comm_slot_release(ctx);
        free(theirs);
        return err;
    }
    return inter_new(local_comm, ctx, local, theirs, m, newintercomm, NULL);
}

int cr_mpi_intercomm_create_from_groups(cr_group *local_group, int local_leader, cr_group *remote_group,
                                        int remote_leader, const char *stringtag, cr_info *info,
                                        cr_errhandler *errhandler, MPI_Comm *newintercomm)
{
    if (!stringtag)
        return cr_err(MPI_ERR_ARG, "stringtag is NULL");
    if (local_group->rank == MPI_UNDEFINED)
        return cr_err(MPI_ERR_GROUP, "this process is not in local_group");
    if (local_leader < 0 || local_leader >= local_group->size)
        return cr_err(MPI_ERR_RANK, "invalid local_leader=%d: local_group has ranks 0..%d", local_leader,
                      local_group->size - 1);
    if (remote_leader < 0 || remote_leader >= remote_group->size)
        return cr_err(MPI_ERR_RANK, "invalid remote_leader=%d: remote_group has ranks 0..%d", remote_leader,
                      remote_group->size - 1);
    int m = remote_group->size, *theirs = malloc((size_t)m * sizeof *theirs);
    if (!theirs)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a group of %d processes", m);
    for (int i = 0; i < m; i++) {
        theirs[i] = remote_group->world_ranks ? remote_group->world_ranks[i] : i;
        for (int j = 0; j < local_group->size; j++)
            if (theirs[i] == (local_group->world_ranks ? local_group->world_ranks[j] : j)) {
                free(theirs);
                return cr_err(MPI_ERR_GROUP, "local_group and remote_group overlap: rank %d of local_group is rank "
                                             "%d of remote_group", j, i);
            }
    }
    /* The local group's intracommunicator first, agreed among its members; then the two
     * leaders talk as processes of the whole job. */
    uint32_t ctx;
    MPI_Comm lh;
    cr_comm *local, *c;
    int err = cr_mpi_comm_create_from_group(local_group, stringtag, NULL, errhandler, &lh);
    if (err) {
        free(theirs);
        return err;
    }
    local = cr_comm_get(lh);
    bridge b = {local, local_leader, cr_comm_everyone(), theirs[remote_leader], cr_comm_string_tag(stringtag, 1)};
    if ((err = cr_comm_slot_agree(bridge_allreduce, &b, &ctx))) {
        free(theirs);
        cr_mpi_comm_free(&lh);
        return err;
    }
    if ((err = inter_new(local, ctx, local, theirs, m, newintercomm, &c)))
        return err;
    if ((err = cr_comm_hints_apply(c, info)))
        cr_mpi_comm_free(newintercomm);
    return err;
}

int cr_mpi_intercomm_merge(cr_comm *ic, int high, MPI_Comm *newintracomm)
{
    if (!ic->inter)
        return cr_err(MPI_ERR_COMM, "intercomm is not an intercommunicator");
    bridge b = inter_bridge(ic);
    int mine = high != 0, theirs = 0;
    int err = swap(&b, &mine, 1, &theirs, 1, cr_dtype_get(MPI_INT));
    if (err)
        return err;
    /* The group that said high = false comes first; when both said the same, the group whose
     * first process has the lower world rank (both groups reach the same answer). */
    bool first = mine != theirs ? !mine : cr_comm_world_rank(ic, 0) < ic->remote_world_ranks[0];
    int n = ic->size + ic->remote_size;
    int *w = malloc((size_t)n * sizeof *w);
    if (!w)
        return cr_err(MPI_ERR_NO_MEM, "out of memory merging an intercommunicator of %d processes", n);
    int at = first ? 0 : ic->remote_size;
    for (int i = 0; i < ic->size; i++)
        w[at + i] = cr_comm_world_rank(ic, i);
    memcpy(w + (first ? ic->size : 0), ic->remote_world_ranks, (size_t)ic->remote_size * sizeof *w);
    uint32_t ctx;
    if ((err = cr_comm_slot_agree(bridge_allreduce, &b, &ctx))) {
        free(w);
        return err;
    }
    return cr_comm_new(ic, ctx, w, n, at + ic->rank, newintracomm, NULL);
}

int cr_comm_inter_dup(cr_comm *ic, MPI_Comm *newcomm, cr_comm **obj)
{
    bridge b = inter_bridge(ic);
    uint32_t ctx;
    int err = cr_comm_slot_agree(bridge_allreduce, &b, &ctx);
    if (err)
        return err;
    MPI_Comm lh;
    cr_comm *local;
    int *theirs = malloc((size_t)ic->remote_size * sizeof *theirs);
    if (!theirs || (err = cr_comm_dup_bare(ic->local, &lh, &local))) {
        cr_comm_slot_release(ctx);
        free(theirs);
        return err ? err : cr_err(MPI_ERR_NO_MEM, "out of memory duplicating an intercommunicator");
    }
    memcpy(theirs, ic->remote_world_ranks, (size_t)ic->remote_size * sizeof *theirs);
    return inter_new(ic, ctx, local, theirs, ic->remote_size, newcomm, obj);
}

/* The rest of a split or create: the new local group's intracommunicator (lh, or
 * MPI_COMM_NULL when this process is in none) and the remote members (m of them) make an
 * intercommunicator, unless either side is empty. */
static int finish(cr_comm *ic, uint32_t ctx, MPI_Comm lh, int *theirs, int m, MPI_Comm *newcomm)
{
    if (lh == MPI_COMM_NULL || m == 0) {
        cr_comm_slot_release(ctx);
        free(theirs);
        if (lh != MPI_COMM_NULL)
            cr_mpi_comm_free(&lh);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    return inter_new(ic, ctx, cr_comm_get(lh), theirs, m, newcomm, NULL);
}

int cr_comm_inter_split(cr_comm *ic, int color, int key, MPI_Comm *newcomm)
{
    int n = ic->size, m = ic->remote_size, err;
    int *all = malloc((size_t)2 * (size_t)(n + m) * sizeof *all), *rall = all + 2 * n;
    if (!all)
        return cr_err(MPI_ERR_NO_MEM, "out of memory splitting an intercommunicator");
    all[2 * ic->rank] = color;
    all[2 * ic->rank + 1] = key;
    bridge b = inter_bridge(ic);
    uint32_t ctx;
    if ((err = cr_coll_allgather_auto(all, 2, cr_dtype_get(MPI_INT), ic->local)) ||
        (err = swap(&b, all, 2 * n, rall, 2 * m, cr_dtype_get(MPI_INT))) ||
        (err = cr_comm_slot_agree(bridge_allreduce, &b, &ctx))) {
        free(all);
        return err;
    }
    MPI_Comm lh;
    if ((err = cr_mpi_comm_split(ic->local, color, key, &lh))) {
        cr_comm_slot_release(ctx);
        free(all);
        return err;
    }
    int *theirs = malloc((size_t)(m > 0 ? m : 1) * sizeof *theirs);
    int k = theirs && color != MPI_UNDEFINED ? cr_comm_color_members(rall, m, color, ic->remote_world_ranks, theirs)
                                             : 0;
    free(all);
    if (!theirs || k < 0) {
        free(theirs);
        cr_comm_slot_release(ctx);
        if (lh != MPI_COMM_NULL)
            cr_mpi_comm_free(&lh);
        return cr_err(MPI_ERR_NO_MEM, "out of memory splitting an intercommunicator");
    }
    return finish(ic, ctx, lh, theirs, k, newcomm);
}

int cr_comm_inter_create(cr_comm *ic, cr_group *group, MPI_Comm *newcomm)
{
    int err = cr_comm_check_subgroup(ic, group);
    if (err)
        return err;
    int *gw = malloc((size_t)(group->size > 0 ? group->size : 1) * sizeof *gw), *theirs = NULL, m = 0;
    if (!gw)
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    for (int i = 0; i < group->size; i++)
        gw[i] = group->world_ranks ? group->world_ranks[i] : i;
    bridge b = inter_bridge(ic);
    err = swap_members(&b, gw, group->size, &theirs, &m, MPI_SUCCESS);
    free(gw);
    uint32_t ctx;
    if (err || (err = cr_comm_slot_agree(bridge_allreduce, &b, &ctx))) {
        free(theirs);
        return err;
    }
    MPI_Comm lh;
    if ((err = cr_mpi_comm_create(ic->local, group, &lh))) {
        cr_comm_slot_release(ctx);
        free(theirs);
        return err;
    }
    return finish(ic, ctx, lh, theirs, m, newcomm);
}
