/* comm_create.c: making and freeing communicators: dup, split (and split by type), create from a
 * group, free, compare; and the context ids that keep their traffic apart (intercommunicators'
 * own constructors are in intercomm.c).
 * Context ids are agreed in context.c. Communicators made by one split share a context: their
 * members are disjoint, so their traffic can never meet. */
#include "coll/coll.h"
#include "comm/comm.h"
#include "comm/topo.h"
#include "core/attr.h"
#include "core/hwtopo.h"
#include "core/info.h"
#include "core/runtime.h"
#include "comm_create.h"
#include "cr_impl.h"
#include "pt2pt/pt2pt.h"

#include <stdlib.h>
#include <string.h>

int cr_group_new(int *world_ranks, int n, cr_session *session, MPI_Group *out);

static int intra_allreduce(void *buf, int count, cr_dtype *dt, cr_op *op, void *comm)
{
    return cr_coll_allreduce_auto(buf, count, dt, op, comm);
}

/* Agrees with the other members of `parent` (an intracommunicator) on a context id free in
 * all of them. */
static int slot_agree(cr_comm *parent, uint32_t *ctx)
{
    return cr_comm_slot_agree(intra_allreduce, parent, ctx);
}

int cr_comm_new(cr_comm *parent, uint32_t ctx, int *world_ranks, int size, int rank, MPI_Comm *out, cr_comm **obj)
{
    cr_comm *c = cr_obj_alloc(CR_KIND_COMM);
    if (!c) {
        free(world_ranks);
        if (ctx != CR_CTX_NONE)
            cr_comm_slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    }
    c->ctx = ctx;
    c->size = c->remote_size = size;
    c->rank = rank;
    c->world_ranks = world_ranks;
    c->eo.errh = parent->eo.errh;
    cr_obj_ref(c->eo.errh);
    c->session = parent->session;
    cr_session_hold(c->session);
    *out = (MPI_Comm)(uintptr_t)c->eo.obj.handle;
    if (obj)
        *obj = c;
    return MPI_SUCCESS;
}

int *cr_comm_world_ranks_of(const cr_comm *c)
{
    int *w = malloc((size_t)c->size * sizeof *w);
    if (w)
        for (int i = 0; i < c->size; i++)
            w[i] = cr_comm_world_rank(c, i);
    return w;
}

int cr_comm_dup_bare(cr_comm *comm, MPI_Comm *newcomm, cr_comm **obj)
{
    if (comm->inter)
        return cr_comm_inter_dup(comm, newcomm, obj);
    uint32_t ctx;
    int err = slot_agree(comm, &ctx);
    if (err)
        return err;
    int *w = cr_comm_world_ranks_of(comm);
    if (!w) {
        cr_comm_slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory duplicating a communicator");
    }
    return cr_comm_new(comm, ctx, w, comm->size, comm->rank, newcomm, obj);
}

int cr_mpi_comm_dup(cr_comm *comm, MPI_Comm *newcomm)
{
    cr_comm *c = NULL;
    int err = cr_comm_dup_bare(comm, newcomm, &c);
    return err ? err : cr_comm_dup_extras(comm, newcomm, c);
}

int cr_comm_dup_extras(cr_comm *comm, MPI_Comm *newcomm, cr_comm *c)
{
    int err;
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

int cr_comm_color_members(const int *pairs, int p, int color, const int *world, int *out)
{
    split_entry *mine = malloc((size_t)(p > 0 ? p : 1) * sizeof *mine);
    if (!mine)
        return -1;
    int n = 0;
    for (int r = 0; r < p; r++)
        if (pairs[2 * r] == color)
            mine[n++] = (split_entry){color, pairs[2 * r + 1], r};
    qsort(mine, (size_t)n, sizeof *mine, by_key);
    for (int i = 0; i < n; i++)
        out[i] = world ? world[mine[i].rank] : mine[i].rank;
    free(mine);
    return n;
}

int cr_mpi_comm_split(cr_comm *comm, int color, int key, MPI_Comm *newcomm)
{
    if (color < 0 && color != MPI_UNDEFINED)
        return cr_err(MPI_ERR_ARG, "color=%d must be non-negative or MPI_UNDEFINED", color);
    if (comm->inter)
        return cr_comm_inter_split(comm, color, key, newcomm);
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
        cr_comm_slot_release(ctx);
        free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int *w = malloc((size_t)p * sizeof(int));
    int n = w ? cr_comm_color_members(all, p, color, comm->world_ranks, w) : -1;
    free(all);
    if (n < 0) {
        free(w);
        cr_comm_slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory splitting a communicator");
    }
    int rank = 0, me = cr_comm_world_rank(comm, comm->rank);
    while (w[rank] != me)
        rank++;
    return cr_comm_new(comm, ctx, w, n, rank, newcomm, NULL);
}

/* Split colors for hardware objects: the kind of object (0..7), the node and the object's id
 * (< 2^16) apart, in a non-negative int. */
static int hw_color(int kind, int node, int id)
{
    return ((kind * 4096 + (node & 4095)) << 16) | (id & 0xffff);
}

/* MPI_COMM_TYPE_HW_UNGUIDED: the largest hardware object (node, package, NUMA node, caches,
 * core, hardware thread, coarsest first) whose processes in comm are a strict subset of comm.
 * Processes that share an object share every coarser one too, so they all stop at the same
 * level and agree on the color. */
static int unguided_color(cr_comm *comm, int *color)
{
    enum { W = CR_HW_LEVELS + 1 }; /* node, then the levels */
    int p = comm->size, *all = malloc((size_t)p * W * sizeof *all);
    if (!all)
        return cr_err(MPI_ERR_NO_MEM, "out of memory splitting a communicator of %d processes", p);
    int *mine = all + comm->rank * W;
    mine[0] = cr_rt.node_of[cr_comm_world_rank(comm, comm->rank)];
    cr_hw_place(mine + 1);
    int err = cr_coll_allgather_auto(all, W, cr_dtype_get(MPI_INT), comm);
    static const int coarse_first[] = {0, 1 + CR_HW_PACKAGE, 1 + CR_HW_NUMA, 1 + CR_HW_L3, 1 + CR_HW_L2,
                                       1 + CR_HW_L1, 1 + CR_HW_CORE, 1 + CR_HW_HWTHREAD}; /* columns */
    *color = MPI_UNDEFINED;
    for (int i = 0; !err && i < W; i++) {
        int col = coarse_first[i], members = 0;
        if (col > 0 && mine[col] < 0) /* not within one object of this level */
            continue;
        for (int r = 0; r < p; r++)
            members += all[r * W] == mine[0] && all[r * W + col] == mine[col];
        if (members < p) {
            *color = hw_color(col, mine[0], col ? mine[col] : 0);
            break;
        }
    }
    free(all);
    return err;
}

int cr_mpi_comm_split_type(cr_comm *comm, int split_type, int key, cr_info *info, MPI_Comm *newcomm)
{
    /* On an intercommunicator each group splits by the same rule and the result is an
     * intercommunicator (MPI_Comm_split's intercommunicator case), as in MPICH and Open MPI. */
    int color = MPI_UNDEFINED, node = cr_rt.node_of[cr_comm_world_rank(comm, comm->rank)], err;
    switch (split_type) {
    case MPI_UNDEFINED:
        color = MPI_UNDEFINED;
        break;
    case MPI_COMM_TYPE_SHARED: /* the processes that can share memory: this node's */
        color = node;
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED: {
        /* The level the "mpi_hw_resource_type" info value names; one Courier does not know, or
         * none, gives MPI_COMM_NULL (MPI-4.1 section 7.4.2). The hardware's levels are the only
         * resources Courier knows, so resource-guided splits follow the same names. */
        const char *want = info ? cr_info_find(info, "mpi_hw_resource_type") : NULL;
        int level = cr_hw_level_of(want), ids[CR_HW_LEVELS];
        color = MPI_UNDEFINED;
        if (want && !strcmp(want, "mpi_shared_memory")) {
            color = node;
        } else if (level >= 0) {
            cr_hw_place(ids);
            if (ids[level] >= 0)
                color = hw_color(level, node, ids[level]);
        }
        break;
    }
    case MPI_COMM_TYPE_HW_UNGUIDED:
        if (comm->inter)
            return cr_err(MPI_ERR_COMM, "comm is an intercommunicator: MPI_COMM_TYPE_HW_UNGUIDED splits an "
                                        "intracommunicator");
        if ((err = unguided_color(comm, &color)))
            return err;
        break;
    default:
        return cr_err(MPI_ERR_ARG, "split_type=%d is not MPI_COMM_TYPE_SHARED or another split type", split_type);
    }
    return cr_mpi_comm_split(comm, color, key, newcomm);
}

int cr_comm_check_subgroup(const cr_comm *comm, const cr_group *group)
{
    for (int i = 0; i < group->size; i++) {
        int w = group->world_ranks ? group->world_ranks[i] : i, found = 0;
        for (int r = 0; r < comm->size && !found; r++)
            found = cr_comm_world_rank(comm, r) == w;
        if (!found)
            return cr_err(MPI_ERR_GROUP, "rank %d of the group is not in the communicator%s", i,
                          comm->inter ? "'s local group" : "");
    }
    return MPI_SUCCESS;
}

/* The members of a group, as a new list of world ranks. */
static int *group_members(const cr_group *group)
{
    int *w = malloc((size_t)(group->size > 0 ? group->size : 1) * sizeof *w);
    for (int i = 0; w && i < group->size; i++)
        w[i] = group->world_ranks ? group->world_ranks[i] : i;
    return w;
}

int cr_mpi_comm_create(cr_comm *comm, cr_group *group, MPI_Comm *newcomm)
{
    if (comm->inter)
        return cr_comm_inter_create(comm, group, newcomm);
    int err = cr_comm_check_subgroup(comm, group);
    if (err)
        return err;
    uint32_t ctx;
    if ((err = slot_agree(comm, &ctx)))
        return err;
    if (group->rank == MPI_UNDEFINED) {
        cr_comm_slot_release(ctx);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int *w = group_members(group);
    if (!w) {
        cr_comm_slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    }
    return cr_comm_new(comm, ctx, w, group->size, group->rank, newcomm, NULL);
}

/* MPI_Comm_create_group's tag: the user's folded into negative tags apart from
 * MPI_Intercomm_create's (intercomm.c) and from collective sequences, on the parent's
 * collective context. Concurrent calls over overlapping groups of one parent need tags that
 * differ modulo 2^30 (the standard asks them to differ). */
#define CREATE_GROUP_TAG(tag) (INT32_MIN + ((tag) & 0x3fffffff))

/* The members of a group agreeing among themselves over `comm`, which spans them all: the
 * allreduce algorithms run on the group's ranks, their messages carry comm ranks (so groups
 * that share a tag but no member never meet). */
typedef struct subset {
    cr_comm *comm;
    int tag, rank, size;
    int *map; /* group rank -> comm rank */
} subset;

static int subset_allreduce(void *buf, int count, cr_dtype *dt, cr_op *op, void *arg)
{
    subset *g = arg;
    cr_sched s;
    cr_sched_init_tagged(&s, g->comm, g->tag);
    cr_sched_subset(&s, g->rank, g->size, g->map);
    cr_coll_allreduce_select(&s, buf, count, dt, op, false);
    return cr_sched_run(&s);
}

int cr_comm_subset_agree(cr_comm *comm, const cr_group *group, int tag, uint32_t *ctx)
{
    subset g = {comm, tag, group->rank, group->size, malloc((size_t)group->size * sizeof(int))};
    if (!g.map)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a group of %d processes", group->size);
    for (int i = 0; i < group->size; i++) {
        int w = group->world_ranks ? group->world_ranks[i] : i, r = 0;
        if (comm->world_ranks)
            while (comm->world_ranks[r] != w) /* cr_comm_check_subgroup: it is there */
                r++;
        else
            r = w;
        g.map[i] = r;
    }
    int err = cr_comm_slot_agree(subset_allreduce, &g, ctx);
    free(g.map);
    return err;
}

/* Every process, on a context no communicator uses across processes: MPI_COMM_SELF's
 * collective context (its collectives never send). For the calls that make communicators from
 * groups alone; their tags come from their string tags. */
cr_comm *cr_comm_everyone(void)
{
    static cr_comm all;
    all.eo.obj.kind = CR_KIND_COMM;
    all.eo.obj.predefined = 1; /* holding and releasing it never frees it */
    all.eo.obj.refs = 1;
    all.eo.errh = cr_comm_self.eo.errh;
    all.ctx = cr_comm_self.ctx;
    all.rank = cr_comm_world.rank;
    all.size = all.remote_size = cr_comm_world.size;
    return &all;
}

int cr_comm_string_tag(const char *stringtag, int salt)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = stringtag; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    h = (h ^ (uint32_t)salt) * 16777619u;
    return -16 - (int)(h & 0x3fffffff);
}

int cr_mpi_comm_create_group(cr_comm *comm, cr_group *group, int tag, MPI_Comm *newcomm)
{
    if (comm->inter)
        return cr_err(MPI_ERR_COMM, "comm is an intercommunicator: MPI_Comm_create_group needs an intracommunicator");
    int err = cr_comm_check_subgroup(comm, group);
    if (err)
        return err;
    if (group->rank == MPI_UNDEFINED) { /* only the group's members call; others get nothing */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    uint32_t ctx;
    if ((err = cr_comm_subset_agree(comm, group, CREATE_GROUP_TAG(tag), &ctx)))
        return err;
    int *w = group_members(group);
    if (!w) {
        cr_comm_slot_release(ctx);
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    }
    return cr_comm_new(comm, ctx, w, group->size, group->rank, newcomm, NULL);
}

int cr_mpi_comm_create_from_group(cr_group *group, const char *stringtag, cr_info *info, cr_errhandler *errhandler,
                                  MPI_Comm *newcomm)
{
    if (!stringtag)
        return cr_err(MPI_ERR_ARG, "stringtag is NULL");
    if (group->rank == MPI_UNDEFINED)
        return cr_err(MPI_ERR_GROUP, "this process is not in the group: only its members call MPI_Comm_create_from_group");
    uint32_t ctx;
    cr_comm *c;
    int err = cr_comm_subset_agree(cr_comm_everyone(), group, cr_comm_string_tag(stringtag, 0), &ctx);
    int *w = err ? NULL : group_members(group);
    if (err || !w) {
        if (!err)
            cr_comm_slot_release(ctx);
        return err ? err : cr_err(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    }
    if ((err = cr_comm_new(&cr_comm_self, ctx, w, group->size, group->rank, newcomm, &c)))
        return err;
    c->session = group->session; /* (MPI_COMM_SELF, the parent, is of no session) */
    cr_session_hold(c->session);
    if ((err = cr_mpi_comm_set_errhandler(c, errhandler)) || (err = cr_comm_hints_apply(c, info)))
        cr_mpi_comm_free(newcomm);
    return err;
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

/* Without dynamic processes every communicator is one this job made: disconnecting is freeing
 * it once every member has called (a barrier: the members' communication on it that MPI_Comm_free
 * would leave running is matched by then, MPI-4.1 section 11.10.4). */
int cr_mpi_comm_disconnect(MPI_Comm *h)
{
    cr_comm *c = cr_comm_get(*h);
    if (!c)
        return cr_err_bad_handle(MPI_ERR_COMM, "communicator", (uintptr_t)*h, "comm");
    if (c->eo.obj.predefined)
        return cr_err(MPI_ERR_COMM, "comm=%s is predefined and cannot be disconnected", c->name);
    int err = cr_mpi_barrier(c);
    return err ? err : cr_mpi_comm_free(h);
}

void cr_comm_destroy(cr_comm *c)
{
    if (c->ctx != CR_CTX_NONE) { /* (none: an MPI_Comm_idup that failed) */
        cr_pt2pt_ctx_close(c->ctx); /* and ctx + 1: what still comes for them is dropped */
        cr_comm_slot_release(c->ctx);
    }
    if (cr_obj_unref(c->eo.errh))
        cr_obj_free(c->eo.errh);
    cr_session_release(c->session);
    free(c->world_ranks);
    free(c->remote_world_ranks);
    if (c->local)
        cr_comm_release(c->local);
    cr_topo_free(c->topo);
    cr_coll_node_release(c);
    cr_coll_tiers_release(c);
    cr_obj_free(c);
}

/* How two lists of world ranks compare: MPI_IDENT (same order), MPI_SIMILAR or MPI_UNEQUAL. */
static int compare_members(const cr_comm *c1, const int *w1, int n1, const cr_comm *c2, const int *w2, int n2)
{
    if (n1 != n2)
        return MPI_UNEQUAL;
    bool same_order = true;
    for (int i = 0; i < n1; i++) {
        int w = w1 ? w1[i] : cr_comm_world_rank(c1, i), pos = -1;
        for (int j = 0; j < n2 && pos < 0; j++)
            if ((w2 ? w2[j] : cr_comm_world_rank(c2, j)) == w)
                pos = j;
        if (pos < 0)
            return MPI_UNEQUAL;
        same_order &= pos == i;
    }
    return same_order ? MPI_IDENT : MPI_SIMILAR;
}

int cr_mpi_comm_compare(cr_comm *c1, cr_comm *c2, int *result)
{
    if (c1 == c2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (c1->inter != c2->inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    /* Intercommunicators compare both groups; the weaker answer holds. */
    int r = compare_members(c1, NULL, c1->size, c2, NULL, c2->size);
    if (c1->inter && r != MPI_UNEQUAL) {
        int r2 = compare_members(c1, c1->remote_world_ranks, c1->remote_size, c2, c2->remote_world_ranks,
                                 c2->remote_size);
        r = CR_MAX(r, r2); /* MPI_IDENT < MPI_SIMILAR < MPI_UNEQUAL */
    }
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}
