/* group.c: process groups: ordered lists of processes, named by world rank, and the group
 * calls (size, rank, translation, comparison, and the set operations). */
#include "comm.h"

#include "core/runtime.h"
#include "cr_impl.h"

#include <stdlib.h>
#include <string.h>

static inline int world_of(const cr_group *g, int r)
{
    return g->world_ranks ? g->world_ranks[r] : r;
}

/* Position of world rank w in g, or MPI_UNDEFINED. */
static int find(const cr_group *g, int w)
{
    if (!g->world_ranks)
        return w < g->size ? w : MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->world_ranks[i] == w)
            return i;
    return MPI_UNDEFINED;
}

void cr_session_hold(cr_session *s)
{
    if (s)
        cr_obj_ref(s);
}

void cr_session_release(cr_session *s)
{
    if (s && cr_obj_unref(s))
        cr_obj_free(s);
}

/* Makes a group from a list of world ranks (taken over by the group), derived from `session`
 * (NULL: the world model). */
int cr_group_new(int *world_ranks, int n, cr_session *session, MPI_Group *out)
{
    if (n == 0) {
        free(world_ranks);
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    cr_group *g = cr_obj_alloc(CR_KIND_GROUP);
    if (!g) {
        free(world_ranks);
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a group");
    }
    g->size = n;
    g->world_ranks = world_ranks;
    g->session = session;
    cr_session_hold(session);
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (world_ranks[i] == cr_rt.rank)
            g->rank = i;
    *out = (MPI_Group)(uintptr_t)g->obj.handle;
    return MPI_SUCCESS;
}

static int *ranks_alloc(int n)
{
    return malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
}

int cr_mpi_comm_group(cr_comm *comm, MPI_Group *group)
{
    int *w = ranks_alloc(comm->size);
    if (!w)
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a group");
    for (int i = 0; i < comm->size; i++)
        w[i] = cr_comm_world_rank(comm, i);
    return cr_group_new(w, comm->size, comm->session, group);
}

int cr_mpi_comm_remote_group(cr_comm *comm, MPI_Group *group)
{
    if (!comm->inter)
        return cr_err(MPI_ERR_COMM, "comm%s%s is not an intercommunicator", comm->name[0] ? "=" : "", comm->name);
    int *w = ranks_alloc(comm->remote_size);
    if (!w)
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating a group");
    memcpy(w, comm->remote_world_ranks, (size_t)comm->remote_size * sizeof *w);
    return cr_group_new(w, comm->remote_size, comm->session, group);
}

int cr_mpi_group_size(cr_group *g, int *size)
{
    *size = g->size;
    return MPI_SUCCESS;
}

int cr_mpi_group_rank(cr_group *g, int *rank)
{
    *rank = g->rank;
    return MPI_SUCCESS;
}

int cr_mpi_group_free(MPI_Group *h)
{
    cr_group *g = cr_handle_get((uintptr_t)*h, CR_KIND_GROUP);
    if (!g)
        return cr_err_bad_handle(MPI_ERR_GROUP, "group", (uintptr_t)*h, "group");
    if (!g->obj.predefined && cr_obj_unref(g)) {
        cr_session_release(g->session);
        free(g->world_ranks);
        cr_obj_free(g);
    }
    *h = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int cr_mpi_group_translate_ranks(cr_group *g1, int n, const int ranks1[], cr_group *g2, int ranks2[])
{
    if (n > 0 && (!ranks1 || !ranks2))
        return cr_err(MPI_ERR_ARG, "ranks1 or ranks2 is NULL with n=%d", n);
    for (int i = 0; i < n; i++) {
        int r = ranks1[i];
        if (r == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (r < 0 || r >= g1->size)
            return cr_err(MPI_ERR_RANK, "ranks1[%d]=%d is not a rank of group1 (size %d)", i, r, g1->size);
        ranks2[i] = find(g2, world_of(g1, r));
    }
    return MPI_SUCCESS;
}

int cr_mpi_group_compare(cr_group *g1, cr_group *g2, int *result)
{
    if (g1 == g2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (g1->size != g2->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    bool same_order = true;
    for (int i = 0; i < g1->size; i++) {
        int pos = find(g2, world_of(g1, i));
        if (pos == MPI_UNDEFINED) {
            *result = MPI_UNEQUAL;
            return MPI_SUCCESS;
        }
        same_order &= pos == i;
    }
    *result = same_order ? MPI_IDENT : MPI_SIMILAR;
    return MPI_SUCCESS;
}

static int check_ranks(const cr_group *g, int n, const int ranks[], bool *seen)
{
    if (n < 0 || n > g->size)
        return cr_err(MPI_ERR_ARG, "n=%d is not in 0..%d (the group's size)", n, g->size);
    if (n > 0 && !ranks)
        return cr_err(MPI_ERR_ARG, "ranks is NULL with n=%d", n);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return cr_err(MPI_ERR_RANK, "ranks[%d]=%d is not a rank of the group (size %d)", i, ranks[i], g->size);
        if (seen[ranks[i]])
            return cr_err(MPI_ERR_RANK, "ranks[%d]=%d appears twice", i, ranks[i]);
        seen[ranks[i]] = true;
    }
    return MPI_SUCCESS;
}

static int incl_excl(cr_group *g, int n, const int ranks[], bool excl, MPI_Group *out)
{
    bool *seen = calloc((size_t)g->size + 1, sizeof *seen);
    int *w = ranks_alloc(g->size);
    int err = !seen || !w ? cr_err(MPI_ERR_NO_MEM, "out of memory") : check_ranks(g, n, ranks, seen);
    if (err) {
        free(seen);
        free(w);
        return err;
    }
    int k = 0;
    if (excl) {
        for (int i = 0; i < g->size; i++)
            if (!seen[i])
                w[k++] = world_of(g, i);
    } else {
        for (int i = 0; i < n; i++)
            w[k++] = world_of(g, ranks[i]);
    }
    free(seen);
    return cr_group_new(w, k, g->session, out);
}

int cr_mpi_group_incl(cr_group *g, int n, const int ranks[], MPI_Group *out)
{
    return incl_excl(g, n, ranks, false, out);
}

int cr_mpi_group_excl(cr_group *g, int n, const int ranks[], MPI_Group *out)
{
    return incl_excl(g, n, ranks, true, out);
}

/* Expands (first, last, stride) triplets into a rank list. */
static int expand_ranges(const cr_group *g, int n, int ranges[][3], int **list, int *count)
{
    if (n < 0 || (n > 0 && !ranges))
        return cr_err(MPI_ERR_ARG, "n=%d ranges are not valid", n);
    int *l = ranks_alloc(g->size), k = 0;
    if (!l)
        return cr_err(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= g->size || last < 0 || last >= g->size ||
            (stride > 0 && first > last) || (stride < 0 && first < last)) {
            free(l);
            return cr_err(MPI_ERR_ARG, "ranges[%d] = (%d, %d, %d) is not a valid range of a group of %d", i, first,
                          last, stride, g->size);
        }
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (k == g->size) {
                free(l);
                return cr_err(MPI_ERR_RANK, "the ranges name rank %d more than once", r);
            }
            l[k++] = r;
        }
    }
    *list = l;
    *count = k;
    return MPI_SUCCESS;
}

int cr_mpi_group_range_incl(cr_group *g, int n, int ranges[][3], MPI_Group *out)
{
    int *l, k, err = expand_ranges(g, n, ranges, &l, &k);
    if (err)
        return err;
    err = incl_excl(g, k, l, false, out);
    free(l);
    return err;
}

int cr_mpi_group_range_excl(cr_group *g, int n, int ranges[][3], MPI_Group *out)
{
    int *l, k, err = expand_ranges(g, n, ranges, &l, &k);
    if (err)
        return err;
    err = incl_excl(g, k, l, true, out);
    free(l);
    return err;
}

/* Set operations keep the order of group1, then (union) group2's new members in its order. */
static int set_op(cr_group *g1, cr_group *g2, int which, MPI_Group *out)
{
    int *w = ranks_alloc(g1->size + g2->size), k = 0;
    if (!w)
        return cr_err(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < g1->size; i++) {
        bool in2 = find(g2, world_of(g1, i)) != MPI_UNDEFINED;
        if (which == 0 || (which == 1 && in2) || (which == 2 && !in2))
            w[k++] = world_of(g1, i);
    }
    if (which == 0)
        for (int i = 0; i < g2->size; i++)
            if (find(g1, world_of(g2, i)) == MPI_UNDEFINED)
                w[k++] = world_of(g2, i);
    /* (groups of two sessions, or of a session and the world model, are erroneous together) */
    return cr_group_new(w, k, g1->session ? g1->session : g2->session, out);
}

int cr_mpi_group_union(cr_group *g1, cr_group *g2, MPI_Group *out)
{
    return set_op(g1, g2, 0, out);
}

int cr_mpi_group_intersection(cr_group *g1, cr_group *g2, MPI_Group *out)
{
    return set_op(g1, g2, 1, out);
}

int cr_mpi_group_difference(cr_group *g1, cr_group *g2, MPI_Group *out)
{
    return set_op(g1, g2, 2, out);
}
