/* topo_create.c: communicators with a process topology: MPI_Cart_create, MPI_Cart_sub,
 * MPI_Graph_create, MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create. Each makes its
 * communicator with the communicator calls (split or dup) and attaches the topology
 * (comm/topo.h). With `reorder`, Cartesian and graph topologies place neighbours on the same
 * node (comm/topo_place.c: the same placement MPI_Cart_map and MPI_Graph_map give); distributed
 * graphs keep their ranks, which the standard allows. */
#include "coll/coll.h"
#include "comm/topo.h"
#include "comm_create.h"
#include "dt/dtype.h"

#include "cr_impl.h"

#include <stdlib.h>
#include <string.h>

/* The processes that `newrank` places (not MPI_UNDEFINED) as a new communicator, each at the
 * rank it is given; the others get MPI_COMM_NULL. */
static int placed(cr_comm *comm, int newrank, MPI_Comm *out)
{
    return cr_mpi_comm_split(comm, newrank != MPI_UNDEFINED ? 0 : MPI_UNDEFINED, newrank, out);
}

static int attach_failed(MPI_Comm *h, int err)
{
    cr_mpi_comm_free(h);
    return err;
}

int cr_mpi_cart_create(cr_comm *comm, int ndims, const int dims[], const int periods[], int reorder,
                       MPI_Comm *comm_cart)
{
    int n, err = cr_topo_check_intra(comm, "MPI_Cart_create");
    if (err || (err = cr_topo_grid_size(comm, ndims, dims, &n)))
        return err;
    /* (out of memory, this process keeps its rank: see topo_place.c) */
    int newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
    if (reorder)
        cr_topo_cart_place(comm, ndims, dims, periods, n, &newrank);
    err = placed(comm, newrank, comm_cart);
    if (err || *comm_cart == MPI_COMM_NULL)
        return err;
    if ((err = cr_topo_cart(cr_comm_get(*comm_cart), ndims, dims, periods)))
        return attach_failed(comm_cart, err);
    return MPI_SUCCESS;
}

int cr_mpi_cart_sub(cr_comm *comm, const int remain_dims[], MPI_Comm *newcomm)
{
    cr_topo *t = comm->topo;
    if (!t || t->kind != MPI_CART)
        return cr_err(MPI_ERR_TOPOLOGY, "comm has no Cartesian topology, which MPI_Cart_sub needs");
    /* color: the coordinates in the dimensions dropped; key: those in the dimensions kept */
    int color = 0, key = 0, nkept = 0;
    int dims[t->ndims ? t->ndims : 1], periods[t->ndims ? t->ndims : 1];
    for (int d = 0; d < t->ndims; d++) {
        if (remain_dims[d]) {
            key = key * t->dims[d] + t->coords[d];
            dims[nkept] = t->dims[d];
            periods[nkept++] = t->periods[d];
        } else {
            color = color * t->dims[d] + t->coords[d];
        }
    }
    /* Keeping no dimension gives a 0-dimensional grid of one process, as MPI_Cart_create with
     * ndims = 0 does: the first process's, the others get MPI_COMM_NULL (as in MPICH). */
    if (nkept == 0)
        color = comm->rank == 0 ? 0 : MPI_UNDEFINED;
    int err = cr_mpi_comm_split(comm, color, key, newcomm);
    if (err || *newcomm == MPI_COMM_NULL)
        return err;
    if ((err = cr_topo_cart(cr_comm_get(*newcomm), nkept, dims, periods)))
        return attach_failed(newcomm, err);
    return MPI_SUCCESS;
}

int cr_mpi_graph_create(cr_comm *comm, int nnodes, const int index[], const int edges[], int reorder,
                        MPI_Comm *comm_graph)
{
    int err = cr_topo_graph_check(comm, nnodes, index, edges, true, "MPI_Graph_create");
    if (err)
        return err;
    int newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    if (reorder)
        cr_topo_graph_place(comm, nnodes, index, edges, &newrank);
    err = placed(comm, newrank, comm_graph);
    if (err || *comm_graph == MPI_COMM_NULL)
        return err;
    if ((err = cr_topo_graph(cr_comm_get(*comm_graph), nnodes, index, edges)))
        return attach_failed(comm_graph, err);
    return MPI_SUCCESS;
}

static bool weights_given(const int *w)
{
    return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY && w != NULL;
}

static int *copy_or_null(const int *a, int n, bool *nomem)
{
    int *c = malloc((size_t)(n ? n : 1) * sizeof *c);
    if (!c)
        *nomem = true;
    else if (n && a)
        memcpy(c, a, (size_t)n * sizeof *c);
    return c;
}

static int check_ranks(const int *r, int n, int size, const char *arg)
{
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return cr_err(MPI_ERR_RANK, "invalid %s[%d]=%d: the communicator has %d processes", arg, i, r[i], size);
    return MPI_SUCCESS;
}

int cr_mpi_dist_graph_create_adjacent(cr_comm *comm, int indegree, const int sources[], const int sourceweights[],
                                      int outdegree, const int destinations[], const int destweights[],
                                      cr_info *info, int reorder, MPI_Comm *comm_dist_graph)
{
    (void)info, (void)reorder;
    int err0 = cr_topo_check_intra(comm, "MPI_Dist_graph_create_adjacent");
    if (err0)
        return err0;
    if (indegree < 0 || outdegree < 0)
        return cr_err(MPI_ERR_ARG, "invalid indegree=%d or outdegree=%d: must not be negative", indegree, outdegree);
    int err;
    if ((err = check_ranks(sources, indegree, comm->size, "sources")) ||
        (err = check_ranks(destinations, outdegree, comm->size, "destinations")))
        return err;
    /* MPI_WEIGHTS_EMPTY (no edges on that side) still says the graph is weighted */
    bool weighted = sourceweights != MPI_UNWEIGHTED || destweights != MPI_UNWEIGHTED;
    bool nomem = false;
    int *in = copy_or_null(sources, indegree, &nomem), *out = copy_or_null(destinations, outdegree, &nomem);
    int *inw = weights_given(sourceweights) ? copy_or_null(sourceweights, indegree, &nomem) : NULL;
    int *outw = weights_given(destweights) ? copy_or_null(destweights, outdegree, &nomem) : NULL;
    cr_comm *c = NULL;
    /* (the new communicator is made even when this process ran out of memory: the others are
     * making it too) */
    if ((err = cr_comm_dup_bare(comm, comm_dist_graph, &c)) || nomem) {
        free(in), free(out), free(inw), free(outw);
        if (!err)
            cr_mpi_comm_free(comm_dist_graph);
        return nomem ? cr_err(MPI_ERR_NO_MEM, "out of memory for a distributed graph") : err;
    }
    if ((err = cr_topo_dist_graph(c, indegree, in, inw, outdegree, out, outw, weighted)))
        return attach_failed(comm_dist_graph, err);
    return MPI_SUCCESS;
}

/* MPI_Dist_graph_create: any process may name any edge. Each edge (s -> d, weight) is sent to
 * s (an out-edge) and to d (an in-edge) with one all-to-all exchange; each process then lists
 * its edges in the order of the processes that named them, and within one process in the
 * order it named them. */
int cr_mpi_dist_graph_create(cr_comm *comm, int n, const int sources[], const int degrees[], const int destinations[],
                             const int weights[], cr_info *info, int reorder, MPI_Comm *comm_dist_graph)
{
    (void)info, (void)reorder;
    int p = comm->size, err = cr_topo_check_intra(comm, "MPI_Dist_graph_create");
    if (err)
        return err;
    if (n < 0)
        return cr_err(MPI_ERR_ARG, "invalid n=%d: must not be negative", n);
    if ((err = check_ranks(sources, n, p, "sources")))
        return err;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return cr_err(MPI_ERR_ARG, "invalid degrees[%d]=%d: must not be negative", i, degrees[i]);
        total += degrees[i];
    }
    /* each edge travels as 6 ints (an out-edge and an in-edge record) in int-counted exchanges */
    if (total > INT32_MAX / 6)
        return cr_err(MPI_ERR_ARG, "the degrees add up to %lld edges, more than this implementation takes "
                      "(%d)", (long long)total, INT32_MAX / 6);
    int nedges = (int)total;
    if ((err = check_ranks(destinations, nedges, p, "destinations")))
        return err;
    /* Weighted when weights are given anywhere (a process naming no edge may pass
     * MPI_WEIGHTS_EMPTY, or nothing that says it): agreed by all. */
    int any_weights = weights != MPI_UNWEIGHTED;
    if ((err = cr_coll_allreduce_auto(&any_weights, 1, cr_dtype_get(MPI_INT), cr_op_get(MPI_MAX), comm)))
        return err;
    bool weighted = any_weights != 0, have_weights = weights_given(weights);
    /* Every edge named here becomes two records of 3 ints: (kind, other end, weight). */
    int *scount = calloc((size_t)p, sizeof *scount), *rcount = calloc((size_t)p, sizeof *rcount);
    int *sdisp = calloc((size_t)p + 1, sizeof *sdisp), *rdisp = calloc((size_t)p + 1, sizeof *rdisp);
    int *sendrec = malloc((size_t)(6 * nedges + 1) * sizeof *sendrec), *fill = calloc((size_t)p, sizeof *fill);
    int *recvrec = NULL, *in = NULL, *out = NULL, *inw = NULL, *outw = NULL;
    MPI_Datatype ints = MPI_INT;
    cr_dtype *int_t = cr_dtype_get(ints);
    if (!scount || !rcount || !sdisp || !rdisp || !sendrec || !fill) {
        err = cr_err(MPI_ERR_NO_MEM, "out of memory for %d edges", nedges);
        goto done;
    }
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++)
            scount[sources[i]] += 3, scount[destinations[e]] += 3;
    for (int r = 0; r < p; r++)
        sdisp[r + 1] = sdisp[r] + scount[r];
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int w = have_weights ? weights[e] : 1, s = sources[i], d = destinations[e];
            int *a = &sendrec[sdisp[s] + fill[s]];
            a[0] = 1, a[1] = d, a[2] = w; /* to s: an out-edge to d */
            fill[s] += 3;
            int *b = &sendrec[sdisp[d] + fill[d]];
            b[0] = 0, b[1] = s, b[2] = w; /* to d: an in-edge from s */
            fill[d] += 3;
        }
    if ((err = cr_mpi_alltoall(scount, 1, ints, rcount, 1, int_t, comm)))
        goto done;
    for (int r = 0; r < p; r++)
        rdisp[r + 1] = rdisp[r] + rcount[r];
    recvrec = malloc((size_t)(rdisp[p] + 1) * sizeof *recvrec);
    if (!recvrec) {
        err = cr_err(MPI_ERR_NO_MEM, "out of memory for %d edge records", rdisp[p] / 3);
        goto done;
    }
    if ((err = cr_mpi_alltoallv(sendrec, cr_cvec_of(scount, 0), cr_cvec_of(sdisp, 0), ints, recvrec,
                                cr_cvec_of(rcount, 0), cr_cvec_of(rdisp, 0), int_t, comm)))
        goto done;
    int nin = 0, nout = 0, nrec = rdisp[p] / 3;
    for (int k = 0; k < nrec; k++) {
        if (recvrec[3 * k])
            nout++;
        else
            nin++;
    }
    in = malloc((size_t)(nin + 1) * sizeof *in), out = malloc((size_t)(nout + 1) * sizeof *out);
    inw = weighted ? malloc((size_t)(nin + 1) * sizeof *inw) : NULL;
    outw = weighted ? malloc((size_t)(nout + 1) * sizeof *outw) : NULL;
    if (!in || !out || (weighted && (!inw || !outw))) {
        err = cr_err(MPI_ERR_NO_MEM, "out of memory for %d neighbours", nin + nout);
        goto done;
    }
    for (int k = 0, i = 0, o = 0; k < nrec; k++) {
        const int *rec = &recvrec[3 * k];
        if (rec[0]) {
            out[o] = rec[1];
            if (weighted)
                outw[o] = rec[2];
            o++;
        } else {
            in[i] = rec[1];
            if (weighted)
                inw[i] = rec[2];
            i++;
        }
    }
    cr_comm *c = NULL;
    if ((err = cr_comm_dup_bare(comm, comm_dist_graph, &c)))
        goto done;
    err = cr_topo_dist_graph(c, nin, in, inw, nout, out, outw, weighted);
    in = out = inw = outw = NULL; /* taken over (or freed) */
    if (err)
        attach_failed(comm_dist_graph, err);
done:
    free(scount), free(rcount), free(sdisp), free(rdisp), free(sendrec), free(fill), free(recvrec);
    free(in), free(out), free(inw), free(outw);
    return err;
}
