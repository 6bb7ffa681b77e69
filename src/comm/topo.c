/* topo.c: process topologies (see topo.h): building the description a communicator carries,
 * and every query on it (MPI_Topo_test, MPI_Cart_*, MPI_Graph_*, MPI_Dist_graph_neighbors*),
 * plus MPI_Dims_create, which needs no communicator. */
#include "topo.h"

#include "cr_impl.h"

#include <stdlib.h>
#include <string.h>

void cr_topo_free(cr_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->in);
    free(t->out);
    free(t->inw);
    free(t->outw);
    free(t);
}

static int *dup_ints(const int *a, int n, bool *nomem)
{
    if (!a)
        return NULL;
    int *c = malloc((size_t)(n ? n : 1) * sizeof *c);
    if (!c)
        *nomem = true;
    else if (n)
        memcpy(c, a, (size_t)n * sizeof *c);
    return c;
}

cr_topo *cr_topo_copy(const cr_topo *t)
{
    cr_topo *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *t;
    bool nomem = false;
    c->dims = dup_ints(t->dims, t->ndims, &nomem);
    c->periods = dup_ints(t->periods, t->ndims, &nomem);
    c->coords = dup_ints(t->coords, t->ndims, &nomem);
    c->index = dup_ints(t->index, t->nnodes, &nomem);
    c->edges = dup_ints(t->edges, t->nedges, &nomem);
    c->in = dup_ints(t->in, t->nin, &nomem);
    c->out = dup_ints(t->out, t->nout, &nomem);
    c->inw = dup_ints(t->inw, t->nin, &nomem);
    c->outw = dup_ints(t->outw, t->nout, &nomem);
    if (nomem) {
        cr_topo_free(c);
        return NULL;
    }
    return c;
}

/* ----------------------------------------------------------------- Cartesian */

int cr_topo_cart_rank(const cr_topo *t, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d], n = t->dims[d];
        if (c < 0 || c >= n) {
            if (!t->periods[d])
                return MPI_PROC_NULL;
            c = ((c % n) + n) % n;
        }
        rank = rank * n + c; /* row-major: the last dimension varies fastest */
    }
    return rank;
}

void cr_topo_cart_coords(const cr_topo *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

int cr_topo_cart(cr_comm *c, int ndims, const int *dims, const int *periods)
{
    cr_topo *t = calloc(1, sizeof *t);
    bool nomem = !t;
    if (t) {
        t->kind = MPI_CART;
        t->ndims = ndims;
        t->dims = dup_ints(dims, ndims, &nomem);
        t->periods = malloc((size_t)(ndims ? ndims : 1) * sizeof *t->periods);
        t->coords = malloc((size_t)(ndims ? ndims : 1) * sizeof *t->coords);
        t->nin = t->nout = 2 * ndims;
        t->in = malloc((size_t)(2 * ndims + 1) * sizeof *t->in);
        t->out = malloc((size_t)(2 * ndims + 1) * sizeof *t->out);
        nomem |= !t->periods || !t->coords || !t->in || !t->out;
    }
    if (nomem) {
        cr_topo_free(t);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a Cartesian topology of %d dimensions", ndims);
    }
    for (int d = 0; d < ndims; d++)
        t->periods[d] = periods[d] != 0;
    cr_topo_cart_coords(t, c->rank, t->coords);
    for (int d = 0; d < ndims; d++) { /* neighbours: -1 then +1 in each dimension */
        int *x = t->coords;
        int keep = x[d];
        x[d] = keep - 1;
        t->in[2 * d] = t->out[2 * d] = cr_topo_cart_rank(t, x);
        x[d] = keep + 1;
        t->in[2 * d + 1] = t->out[2 * d + 1] = cr_topo_cart_rank(t, x);
        x[d] = keep;
    }
    c->topo = t;
    return MPI_SUCCESS;
}

static cr_topo *topo_of(cr_comm *c, int kind, const char *call, int *err)
{
    cr_topo *t = c->topo;
    if (!t || (kind && t->kind != kind)) {
        *err = cr_err(MPI_ERR_TOPOLOGY, "comm=%s has no %s topology, which %s needs", c->name[0] ? c->name : "the communicator",
                      kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph" : kind == MPI_DIST_GRAPH ? "distributed graph" : "process",
                      call);
        return NULL;
    }
    *err = MPI_SUCCESS;
    return t;
}

int cr_mpi_topo_test(cr_comm *comm, int *status)
{
    *status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int cr_mpi_cartdim_get(cr_comm *comm, int *ndims)
{
    int err;
    cr_topo *t = topo_of(comm, MPI_CART, "MPI_Cartdim_get", &err);
    if (t)
        *ndims = t->ndims;
    return err;
}

int cr_mpi_cart_get(cr_comm *comm, int maxdims, int dims[], int periods[], int coords[])
{
    int err;
    cr_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_get", &err);
    if (!t)
        return err;
    if (maxdims < t->ndims)
        return cr_err(MPI_ERR_ARG, "maxdims=%d is less than the topology's %d dimensions", maxdims, t->ndims);
    for (int d = 0; d < t->ndims; d++)
        dims[d] = t->dims[d], periods[d] = t->periods[d], coords[d] = t->coords[d];
    return MPI_SUCCESS;
}

int cr_mpi_cart_rank(cr_comm *comm, const int coords[], int *rank)
{
    int err;
    cr_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_rank", &err);
    if (!t)
        return err;
    for (int d = 0; d < t->ndims; d++)
        if (!t->periods[d] && (coords[d] < 0 || coords[d] >= t->dims[d]))
            return cr_err(MPI_ERR_ARG, "coords[%d]=%d is outside dimension %d (size %d, not periodic)", d, coords[d], d,
                          t->dims[d]);
    *rank = cr_topo_cart_rank(t, coords);
    return MPI_SUCCESS;
}

int cr_mpi_cart_coords(cr_comm *comm, int rank, int maxdims, int coords[])
{
    int err;
    cr_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_coords", &err);
    if (!t)
        return err;
    if (rank < 0 || rank >= comm->size)
        return cr_err(MPI_ERR_RANK, "invalid rank=%d: the communicator has %d processes", rank, comm->size);
    if (maxdims < t->ndims)
        return cr_err(MPI_ERR_ARG, "maxdims=%d is less than the topology's %d dimensions", maxdims, t->ndims);
    cr_topo_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

int cr_mpi_cart_shift(cr_comm *comm, int direction, int disp, int *source, int *dest)
{
    int err;
    cr_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_shift", &err);
    if (!t)
        return err;
    if (direction < 0 || direction >= t->ndims)
        return cr_err(MPI_ERR_ARG, "invalid direction=%d: the topology has %d dimensions", direction, t->ndims);
    int x[t->ndims ? t->ndims : 1];
    memcpy(x, t->coords, (size_t)t->ndims * sizeof *x);
    int keep = x[direction];
    x[direction] = keep + disp;
    *dest = cr_topo_cart_rank(t, x);
    x[direction] = keep - disp;
    *source = cr_topo_cart_rank(t, x);
    return MPI_SUCCESS;
}

int cr_topo_grid_size(const cr_comm *c, int ndims, const int *dims, int *n)
{
    if (ndims < 0)
        return cr_err(MPI_ERR_DIMS, "invalid ndims=%d: must not be negative", ndims);
    int64_t p = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return cr_err(MPI_ERR_DIMS, "invalid dims[%d]=%d: must be positive", d, dims[d]);
        p *= dims[d];
        if (p > c->size)
            return cr_err(MPI_ERR_DIMS, "the grid (dims[0..%d] multiply to %lld already) is larger than the "
                          "communicator's %d processes", d, (long long)p, c->size);
    }
    *n = (int)p;
    return MPI_SUCCESS;
}

int cr_topo_check_intra(const cr_comm *comm, const char *call)
{
    return comm->inter ? cr_err(MPI_ERR_COMM, "comm is an intercommunicator: %s needs an intracommunicator", call)
                       : MPI_SUCCESS;
}

/* The rank MPI_Cart_create with reorder gives this process (topo_place.c). */
int cr_mpi_cart_map(cr_comm *comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    int n, err = cr_topo_check_intra(comm, "MPI_Cart_map");
    if (err || (err = cr_topo_grid_size(comm, ndims, dims, &n)))
        return err;
    if (!cr_topo_cart_place(comm, ndims, dims, periods, n, newrank))
        return cr_err(MPI_ERR_NO_MEM, "out of memory placing %d processes", n);
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- graphs */

int cr_topo_graph(cr_comm *c, int nnodes, const int *index, const int *edges)
{
    cr_topo *t = calloc(1, sizeof *t);
    bool nomem = !t;
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (t) {
        t->kind = MPI_GRAPH;
        t->nnodes = nnodes;
        t->nedges = nedges;
        t->index = dup_ints(index, nnodes, &nomem);
        t->edges = dup_ints(edges, nedges, &nomem);
        int first = c->rank == 0 ? 0 : index[c->rank - 1], n = index[c->rank] - first;
        t->nin = t->nout = n;
        t->in = dup_ints(edges + first, n, &nomem);
        t->out = dup_ints(edges + first, n, &nomem);
    }
    if (nomem) {
        cr_topo_free(t);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a graph topology of %d nodes", nnodes);
    }
    c->topo = t;
    return MPI_SUCCESS;
}

int cr_topo_dist_graph(cr_comm *c, int nin, int *in, int *inw, int nout, int *out, int *outw, bool weighted)
{
    cr_topo *t = calloc(1, sizeof *t);
    if (!t) {
        free(in), free(inw), free(out), free(outw);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a distributed graph topology");
    }
    *t = (cr_topo){.kind = MPI_DIST_GRAPH, .nin = nin, .nout = nout, .in = in, .out = out, .inw = inw, .outw = outw,
                   .weighted = weighted};
    c->topo = t;
    return MPI_SUCCESS;
}

int cr_mpi_graphdims_get(cr_comm *comm, int *nnodes, int *nedges)
{
    int err;
    cr_topo *t = topo_of(comm, MPI_GRAPH, "MPI_Graphdims_get", &err);
    if (t)
        *nnodes = t->nnodes, *nedges = t->nedges;
    return err;
}

int cr_mpi_graph_get(cr_comm *comm, int maxindex, int maxedges, int index[], int edges[])
{
    int err;
    cr_topo *t = topo_of(comm, MPI_GRAPH, "MPI_Graph_get", &err);
    if (!t)
        return err;
    if (maxindex < t->nnodes || maxedges < t->nedges)
        return cr_err(MPI_ERR_ARG, "maxindex=%d or maxedges=%d is less than the graph's %d nodes and %d edges",
                      maxindex, maxedges, t->nnodes, t->nedges);
    memcpy(index, t->index, (size_t)t->nnodes * sizeof *index);
    memcpy(edges, t->edges, (size_t)t->nedges * sizeof *edges);
    return MPI_SUCCESS;
}

int cr_mpi_graph_neighbors_count(cr_comm *comm, int rank, int *nneighbors)
{
    int err;
    cr_topo *t = topo_of(comm, MPI_GRAPH, "MPI_Graph_neighbors_count", &err);
    if (!t)
        return err;
    if (rank < 0 || rank >= t->nnodes)
        return cr_err(MPI_ERR_RANK, "invalid rank=%d: the graph has %d nodes", rank, t->nnodes);
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

int cr_mpi_graph_neighbors(cr_comm *comm, int rank, int maxneighbors, int neighbors[])
{
    int n, err = cr_mpi_graph_neighbors_count(comm, rank, &n);
    if (err)
        return err;
    if (maxneighbors < n)
        return cr_err(MPI_ERR_ARG, "maxneighbors=%d is less than rank %d's %d neighbours", maxneighbors, rank, n);
    memcpy(neighbors, comm->topo->edges + (rank ? comm->topo->index[rank - 1] : 0), (size_t)n * sizeof *neighbors);
    return MPI_SUCCESS;
}

int cr_topo_graph_check(const cr_comm *comm, int nnodes, const int *index, const int *edges, bool empty_ok,
                        const char *call)
{
    int err = cr_topo_check_intra(comm, call);
    if (err)
        return err;
    if (nnodes < (empty_ok ? 0 : 1) || nnodes > comm->size)
        return cr_err(MPI_ERR_ARG, "invalid nnodes=%d: must be in [%d, %d]", nnodes, empty_ok ? 0 : 1, comm->size);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return cr_err(MPI_ERR_ARG, "index[%d]=%d is less than the entry before it: index must not decrease", i,
                          index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return cr_err(MPI_ERR_ARG, "edges[%d]=%d is not a node of the graph (0..%d)", e, edges[e], nnodes - 1);
    return MPI_SUCCESS;
}

/* The rank MPI_Graph_create with reorder gives this process (topo_place.c). */
int cr_mpi_graph_map(cr_comm *comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    int err = cr_topo_graph_check(comm, nnodes, index, edges, false, "MPI_Graph_map");
    if (err)
        return err;
    if (!cr_topo_graph_place(comm, nnodes, index, edges, newrank))
        return cr_err(MPI_ERR_NO_MEM, "out of memory placing %d processes", nnodes);
    return MPI_SUCCESS;
}

int cr_mpi_dist_graph_neighbors_count(cr_comm *comm, int *indegree, int *outdegree, int *weighted)
{
    int err;
    cr_topo *t = topo_of(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors_count", &err);
    if (t)
        *indegree = t->nin, *outdegree = t->nout, *weighted = t->weighted;
    return err;
}

int cr_mpi_dist_graph_neighbors(cr_comm *comm, int maxindegree, int sources[], int sourceweights[],
                                int maxoutdegree, int destinations[], int destweights[])
{
    int err;
    cr_topo *t = topo_of(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors", &err);
    if (!t)
        return err;
    if (maxindegree < t->nin || maxoutdegree < t->nout)
        return cr_err(MPI_ERR_ARG, "maxindegree=%d or maxoutdegree=%d is less than the %d sources and %d destinations",
                      maxindegree, maxoutdegree, t->nin, t->nout);
    memcpy(sources, t->in, (size_t)t->nin * sizeof *sources);
    memcpy(destinations, t->out, (size_t)t->nout * sizeof *destinations);
    bool want_sw = sourceweights && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY;
    bool want_dw = destweights && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY;
    if (t->weighted && want_sw && t->inw)
        memcpy(sourceweights, t->inw, (size_t)t->nin * sizeof *sourceweights);
    if (t->weighted && want_dw && t->outw)
        memcpy(destweights, t->outw, (size_t)t->nout * sizeof *destweights);
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- MPI_Dims_create */

/* Splitting n into k factors, non-increasing, as close to each other as possible. "Closest" is
 * MPICH's choice, which users see as the answer (its test suite checks 75,000 cases): the
 * smallest spread between the largest and the smallest factor, then the largest smallest
 * factor, then the largest second smallest, and so on upwards. The search walks the
 * non-increasing factorizations over n's divisors (at most a few hundred for an int). */
typedef struct dims_search {
    int k;
    const int *divs; /* n's divisors, increasing */
    int ndivs;
    int *cur, *best;
    bool found;
} dims_search;

/* Whether factors a are closer than b, by the rule above. */
static bool closer(const int *a, const int *b, int k)
{
    int sa = a[0] - a[k - 1], sb = b[0] - b[k - 1];
    if (sa != sb)
        return sa < sb;
    for (int j = k - 1; j >= 0; j--) /* then the smallest factors as large as they can be */
        if (a[j] != b[j])
            return a[j] > b[j];
    return false;
}

static void dims_walk(dims_search *s, int n, int pos, int maxf)
{
    if (pos == s->k - 1) {
        if (n > maxf)
            return;
        s->cur[pos] = n;
        if (!s->found || closer(s->cur, s->best, s->k)) {
            memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
            s->found = true;
        }
        return;
    }
    for (int i = s->ndivs - 1; i >= 0; i--) {
        int f = s->divs[i];
        if (f > maxf || n % f)
            continue;
        int64_t pw = 1; /* the factors after this one are at most f: f^(k - pos) must reach n */
        for (int r = pos; r < s->k && pw < n; r++)
            pw *= f;
        if (pw < n)
            break; /* smaller divisors cannot either */
        s->cur[pos] = f;
        dims_walk(s, n / f, pos + 1, f);
    }
}

static bool balanced(int n, int k, int *out)
{
    int ndivs = 0, cap = 64;
    int *divs = malloc((size_t)cap * sizeof *divs), *cur = malloc((size_t)k * sizeof *cur);
    bool ok = divs && cur;
    for (int d = 1; ok && (int64_t)d * d <= n; d++) { /* the divisors, increasing */
        if (n % d)
            continue;
        if (ndivs + 1 > cap) {
            int *grown = realloc(divs, (size_t)(cap *= 2) * sizeof *divs);
            if (!(ok = grown != NULL))
                break;
            divs = grown;
        }
        divs[ndivs++] = d;
    }
    if (ok && 2 * ndivs > cap) {
        int *grown = realloc(divs, (size_t)(cap = 2 * ndivs) * sizeof *divs);
        if (!(ok = grown != NULL))
            free(divs), divs = NULL;
        else
            divs = grown;
    }
    for (int i = ndivs - 1; ok && i >= 0; i--) /* and their cofactors */
        if (divs[i] != n / divs[i])
            divs[ndivs++] = n / divs[i];
    if (ok) {
        dims_search s = {.k = k, .divs = divs, .ndivs = ndivs, .cur = cur, .best = out};
        dims_walk(&s, n, 0, n);
        ok = s.found;
    }
    free(divs);
    free(cur);
    return ok;
}

/* The standard's rule: the free dimensions (dims[i] == 0) get a balanced factorization of what
 * nnodes leaves over after the fixed ones, in non-increasing order. */
int cr_mpi_dims_create(int nnodes, int ndims, int dims[])
{
    if (nnodes <= 0)
        return cr_err(MPI_ERR_ARG, "invalid nnodes=%d: must be positive", nnodes);
    if (ndims < 0)
        return cr_err(MPI_ERR_DIMS, "invalid ndims=%d: must not be negative", ndims);
    int64_t fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return cr_err(MPI_ERR_DIMS, "invalid dims[%d]=%d: must not be negative", i, dims[i]);
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            nfree++;
    }
    if (nfree == 0) {
        if (fixed != nnodes)
            return cr_err(MPI_ERR_DIMS, "the dims multiply to %lld, not nnodes=%d", (long long)fixed, nnodes);
        return MPI_SUCCESS;
    }
    if (nnodes % fixed)
        return cr_err(MPI_ERR_DIMS, "nnodes=%d is not a multiple of %lld, the product of the dims already set",
                      nnodes, (long long)fixed);
    int *f = malloc((size_t)nfree * sizeof *f);
    if (!f)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d dimensions", nfree);
    if (!balanced((int)(nnodes / fixed), nfree, f)) {
        free(f);
        return cr_err(MPI_ERR_NO_MEM, "out of memory factoring nnodes=%d", nnodes);
    }
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}
