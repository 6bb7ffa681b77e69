/* create.c: making and freeing communicators: dup, split (and split by type), create from a
 * group, free, compare; and the context ids that keep their traffic apart.
 *
 * Context ids: each communicator takes a slot s of a per-process bitmap and uses contexts 2s
 * (point-to-point) and 2s + 1 (collectives); slots 0 and 1 are MPI_COMM_WORLD and
 * MPI_COMM_SELF. Creating a communicator is collective over its parent: the members AND their
 * free-slot bitmaps together (an allreduce) and all take the lowest slot free everywhere; a
 * second allreduce agrees on the slot's new epoch (see comm.h), one more than the largest any
 * member used: a message still in flight for a freed communicator carries an older epoch, and
 * pt2pt drops it instead of matching it on the new one.
 * Communicators made by one split share a slot: their members are disjoint, so their traffic
 * can never meet. */
#include "coll/coll.h"
#include "comm/comm.h"
#include "comm/topo.h"
#include "core/attr.h"
#include "core/runtime.h"
#include "comm_create.h"
#include "cr_impl.h"
#include "pt2pt/pt2pt.h"

#include <stdlib.h>

#define SLOTS CR_CTX_SLOTS
static uint64_t slot_used[SLOTS / 64] = {3}; /* slots 0 and 1: world and self */
static uint32_t slot_epoch[SLOTS];           /* the epoch this process last used for each slot */

int cr_group_new(int *world_ranks, int n, MPI_Group *out);

/* Agrees with the other members of `parent` on a context id free in all of them. */
static int slot_agree(cr_comm *parent, uint32_t *ctx)
{
    uint64_t free_mask[SLOTS / 64];
    for (int i = 0; i < SLOTS / 64; i++)
        free_mask[i] = ~slot_used[i];
    int err = cr_coll_allreduce_auto(free_mask, SLOTS / 64, cr_dtype_get(MPI_UINT64_T), cr_op_get(MPI_BAND), parent);
    if (err)
        return err;
    for (int i = 0; i < SLOTS / 64; i++) {
        if (free_mask[i]) {
            int slot = i * 64 + __builtin_ctzll(free_mask[i]);
            uint32_t epoch = slot_epoch[slot];
            err = cr_coll_allreduce_auto(&epoch, 1, cr_dtype_get(MPI_UINT32_T), cr_op_get(MPI_MAX), parent);
            if (err)
                return err;
            epoch = (epoch + 1) & CR_CTX_EPOCH_MASK;
            slot_epoch[slot] = epoch;
            slot_used[slot / 64] |= 1ull << (slot % 64);
            *ctx = CR_CTX_MAKE(epoch, slot);
            return MPI_SUCCESS;
        }
    }
    return cr_err(MPI_ERR_OTHER, "no context id is free in all processes (%d communicators exist)", SLOTS);
}

static void slot_release(uint32_t ctx)
{
    int slot = (int)(CR_CTX_INDEX(ctx) >> 1);
    slot_used[slot / 64] &= ~(1ull << (slot % 64));
}

/* A new communicator of the given members (world ranks, in rank order; taken over), with this
 * process at `rank`, inheriting `parent`'s error handler. */
static int comm_new(cr_comm *parent, uint32_t ctx, int *world_ranks, int size, int rank, MPI_Comm *out, cr_comm **obj)
{
    cr_comm *c = cr_obj_alloc(CR_KIND_COMM);
    if (!c) {
        free(world_ranks);
        slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    }
    c->ctx = ctx;
    c->size = size;
    c->rank = rank;
    c->world_ranks = world_ranks;
    c->eo.errh = parent->eo.errh;
    cr_obj_ref(c->eo.errh);
    *out = (MPI_Comm)(uintptr_t)c->eo.obj.handle;
    if (obj)
        *obj = c;
    return MPI_SUCCESS;
}

static int *world_ranks_of(const cr_comm *c)
{
    int *w = malloc((size_t)c->size * sizeof *w);
    if (w)
        for (int i = 0; i < c->size; i++)
            w[i] = cr_comm_world_rank(c, i);
    return w;
}

int cr_comm_dup_bare(cr_comm *comm, MPI_Comm *newcomm, cr_comm **obj)
{
    uint32_t ctx;
    int err = slot_agree(comm, &ctx);
    if (err)
        return err;
    int *w = world_ranks_of(comm);
    if (!w) {
        slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory duplicating a communicator");
    }
    return comm_new(comm, ctx, w, comm->size, comm->rank, newcomm, obj);
}

int cr_mpi_comm_dup(cr_comm *comm, MPI_Comm *newcomm)
{
    cr_comm *c = NULL;
    int err = cr_comm_dup_bare(comm, newcomm, &c);
    if (err)
        return err;
    if ((err = cr_attr_copy(CR_KIND_COMM, comm->attrs, comm->eo.obj.handle, &c->attrs))) {
        cr_mpi_comm_free(newcomm);
        return err;
    }
    c->hints_set = comm->hints_set; /* and its info hints */
    c->hints = comm->hints;
    if (comm->topo && !(c->topo = cr_topo_copy(comm->topo))) { /* a duplicate keeps the topology */
        cr_mpi_comm_free(newcomm);
        return cr_err(MPI_ERR_NO_MEM, "out of memory copying a communicator's topology");
    }
    return MPI_SUCCESS;
}

int cr_mpi_comm_dup_with_info(cr_comm *comm, cr_info *info, MPI_Comm *newcomm)
{
    int err = cr_mpi_comm_dup(comm, newcomm);
    if (err)
        return err;
    /* the new communicator's hints are those of `info`, not its parent's */
    cr_comm *c = cr_comm_get(*newcomm);
    c->hints_set = c->hints = 0;
    if ((err = cr_comm_hints_apply(c, info)))
        cr_mpi_comm_free(newcomm);
    return err;
}

typedef struct {
    int color, key, rank;
} split_entry;

static int by_key(const void *a, const void *b)
{
    const split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

int cr_mpi_comm_split(cr_comm *comm, int color, int key, MPI_Comm *newcomm)
{
    if (color < 0 && color != MPI_UNDEFINED)
        return cr_err(MPI_ERR_ARG, "color=%d must be non-negative or MPI_UNDEFINED", color);
    int p = comm->size, err;
    int *all = malloc((size_t)p * 2 * sizeof(int));
    if (!all)
        return cr_err(MPI_ERR_NO_MEM, "out of memory splitting a communicator of %d processes", p);
    all[2 * comm->rank] = color;
    all[2 * comm->rank + 1] = key;
    err = cr_coll_allgather_auto(all, 2, cr_dtype_get(MPI_INT), comm);
    uint32_t ctx = 0;
    if (!err)
        err = slot_agree(comm, &ctx);
    if (err) {
        free(all);
        return err;
    }
    if (color == MPI_UNDEFINED) {
        slot_release(ctx);
        free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    split_entry *mine = malloc((size_t)p * sizeof *mine);
    int n = 0;
    for (int r = 0; mine && r < p; r++)
        if (all[2 * r] == color)
            mine[n++] = (split_entry){color, all[2 * r + 1], r};
    free(all);
    int *w = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!mine || !w) {
        free(mine);
        free(w);
        slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory splitting a communicator");
    }
    qsort(mine, (size_t)n, sizeof *mine, by_key);
    int rank = 0;
    for (int i = 0; i < n; i++) {
        w[i] = cr_comm_world_rank(comm, mine[i].rank);
        if (mine[i].rank == comm->rank)
            rank = i;
    }
    free(mine);
    return comm_new(comm, ctx, w, n, rank, newcomm, NULL);
}

int cr_mpi_comm_split_type(cr_comm *comm, int split_type, int key, cr_info *info, MPI_Comm *newcomm)
{
    (void)info;
    int color;
    switch (split_type) {
    case MPI_UNDEFINED:
        color = MPI_UNDEFINED;
        break;
    case MPI_COMM_TYPE_SHARED: /* the processes that can share memory: this node's */
        color = cr_rt.node_of[cr_comm_world_rank(comm, comm->rank)];
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED:
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        /* No finer hardware level is known: the standard's answer is MPI_COMM_NULL. */
        color = MPI_UNDEFINED;
        break;
    default:
        return cr_err(MPI_ERR_ARG, "split_type=%d is not MPI_COMM_TYPE_SHARED or another split type", split_type);
    }
    return cr_mpi_comm_split(comm, color, key, newcomm);
}

int cr_mpi_comm_create(cr_comm *comm, cr_group *group, MPI_Comm *newcomm)
{
    /* Every member of the group must belong to comm. */
    for (int i = 0; i < group->size; i++) {
        int w = group->world_ranks ? group->world_ranks[i] : i, found = 0;
        for (int r = 0; r < comm->size && !found; r++)
            found = cr_comm_world_rank(comm, r) == w;
        if (!found)
            return cr_err(MPI_ERR_GROUP, "rank %d of the group is not in the communicator", i);
    }
    uint32_t ctx;
    int err = slot_agree(comm, &ctx);
    if (err)
        return err;
    if (group->rank == MPI_UNDEFINED) {
        slot_release(ctx);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int *w = malloc((size_t)group->size * sizeof *w);
    if (!w) {
        slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    }
    for (int i = 0; i < group->size; i++)
        w[i] = group->world_ranks ? group->world_ranks[i] : i;
    return comm_new(comm, ctx, w, group->size, group->rank, newcomm, NULL);
}

int cr_mpi_comm_free(MPI_Comm *h)
{
    cr_comm *c = cr_comm_get(*h);
    if (!c)
        return cr_err_bad_handle(MPI_ERR_COMM, "communicator", (uintptr_t)*h, "comm");
    if (c->eo.obj.predefined)
        return cr_err(MPI_ERR_COMM, "comm=%s is predefined and cannot be freed", c->name);
    int err = cr_attr_clear(CR_KIND_COMM, &c->attrs, c->eo.obj.handle);
    if (err)
        return err;
    if (c->bsend) {
        void *addr;
        MPI_Count size;
        cr_mpi_comm_detach_buffer(c, &addr, &size);
    }
    *h = MPI_COMM_NULL;
    cr_comm_release(c);
    return MPI_SUCCESS;
}

void cr_comm_release(cr_comm *c)
{
    if (!cr_obj_unref(c))
        return;
    cr_pt2pt_ctx_close(c->ctx); /* and ctx + 1: what still comes for them is dropped */
    slot_release(c->ctx);
    if (cr_obj_unref(c->eo.errh))
        cr_obj_free(c->eo.errh);
    free(c->world_ranks);
    cr_topo_free(c->topo);
    cr_obj_free(c);
}

int cr_mpi_comm_compare(cr_comm *c1, cr_comm *c2, int *result)
{
    if (c1 == c2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (c1->size != c2->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    bool same_order = true;
    for (int i = 0; i < c1->size; i++) {
        int w = cr_comm_world_rank(c1, i), pos = -1;
        for (int j = 0; j < c2->size && pos < 0; j++)
            if (cr_comm_world_rank(c2, j) == w)
                pos = j;
        if (pos < 0) {
            *result = MPI_UNEQUAL;
            return MPI_SUCCESS;
        }
        same_order &= pos == i;
    }
    *result = same_order ? MPI_CONGRUENT : MPI_SIMILAR;
    return MPI_SUCCESS;
}
