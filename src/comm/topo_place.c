/* topo_place.c: where each process goes in a process topology made with `reorder` (MPI_Cart_map,
 * MPI_Graph_map, and MPI_Cart_create / MPI_Graph_create with reorder = 1).
 *
 * The aim is the one users reorder for: neighbours on the same node, so that their halo goes
 * through shared memory and not over the network. Every process computes the same placement
 * from what all of them know already (the node of every world rank, cr_rt.node_of), so placing
 * costs no message.
 *
 * Candidates, each judged by the number of topology edges whose two ends are on different
 * nodes (a periodic wrap counts as an edge, also in a dimension of 2, where it doubles the
 * neighbour at +1: the halo goes to it twice):
 *   - the ranks as they are (the standard's default, and kept on a tie, so that a job on one
 *     node, or one already placed well, never moves);
 *   - Cartesian: the processes sorted by node (nodes in order of their lowest rank, ranks in
 *     order within a node), given positions in row-major order: each node a slab of the grid;
 *   - Cartesian, when every node has the same number c of processes: the grid cut into blocks
 *     of c positions (every block shape whose sides divide the grid's), each node a block, the
 *     shape with the fewest cut edges: a 8 x 8 grid on 4 nodes cuts 16 edges as 4 x 4 blocks
 *     against 24 as slabs of 2 x 8;
 *   - graph: the processes sorted by node, given the graph's nodes in their own order, and in
 *     breadth-first order (a node's neighbours come soon after it, so mostly on its own node).
 * Any permutation gives a correct topology; only locality depends on the choice. So a process
 * that cannot allocate the work space keeps its rank in MPI_Cart_create and MPI_Graph_create:
 * MPI_Comm_split breaks the tie of two equal keys by the old ranks, and the topology is built
 * on the ranks that result (MPI_Cart_map and MPI_Graph_map, which are local, say
 * MPI_ERR_NO_MEM instead). */
#include "topo.h"

#include "core/runtime.h"
#include "cr_impl.h"

#include <stdlib.h>
#include <string.h>

/* The processes 0..n-1 of `comm` sorted by node: nodes in order of their lowest rank, ranks in
 * order within a node. Also the node of each (node_of_rank) and whether they span more than one
 * node. */
typedef struct {
    int n;
    int *node_of_rank; /* node of comm rank r (node numbers renamed 0.. in order of lowest rank) */
    int *sorted;       /* comm ranks, by node */
    int nnodes;
    int per_node;      /* processes on every node, or 0 when the nodes differ */
} by_node;

static void by_node_free(by_node *b)
{
    free(b->node_of_rank);
    free(b->sorted);
}

/* false: out of memory (nothing to free). Node numbers out of range (none should be: every
 * process has the same cr_rt.node_of) count as one node, where nothing moves. */
static bool by_node_make(const cr_comm *comm, int n, by_node *b)
{
    *b = (by_node){.n = n};
    b->node_of_rank = malloc((size_t)n * sizeof(int));
    b->sorted = malloc((size_t)n * sizeof(int));
    int *rename = malloc((size_t)(cr_rt.nnodes > 0 ? cr_rt.nnodes : 1) * sizeof(int));
    int *count = calloc((size_t)n, sizeof(int)), *start = malloc((size_t)(n + 1) * sizeof(int));
    bool ok = b->node_of_rank && b->sorted && rename && count && start;
    if (ok) {
        for (int k = 0; k < cr_rt.nnodes; k++)
            rename[k] = -1;
        for (int r = 0; r < n; r++) {
            int world = cr_comm_world_rank(comm, r), node = cr_rt.node_of[world];
            if (node < 0 || node >= cr_rt.nnodes) {
                b->nnodes = 1;
                break;
            }
            if (rename[node] < 0)
                rename[node] = b->nnodes++;
            b->node_of_rank[r] = rename[node];
            count[rename[node]]++;
        }
    }
    if (ok && b->nnodes > 1) {
        start[0] = 0;
        b->per_node = count[0];
        for (int k = 0; k < b->nnodes; k++) {
            start[k + 1] = start[k] + count[k];
            if (count[k] != b->per_node)
                b->per_node = 0;
        }
        for (int r = 0; r < n; r++) /* counting sort: ranks stay in order within a node */
            b->sorted[start[b->node_of_rank[r]]++] = r;
    } else if (!ok) {
        by_node_free(b);
    }
    free(rename), free(count), free(start);
    return ok;
}

/* ----------------------------------------------------------------- Cartesian */

/* Edges of the grid whose ends lie on different nodes, with node_at[p] the node at row-major
 * position p. */
static long cart_cut(int ndims, const int *dims, const int *periods, int n, const int *node_at)
{
    long cut = 0;
    for (int p = 0; p < n; p++) {
        int stride = n, rest = p;
        for (int d = 0; d < ndims; d++) {
            stride /= dims[d];
            int x = rest / stride;
            rest %= stride;
            if (dims[d] < 2)
                continue;
            int q;
            if (x + 1 < dims[d])
                q = p + stride;
            else if (periods[d])
                q = p - x * stride;
            else
                continue;
            cut += node_at[p] != node_at[q];
        }
    }
    return cut;
}

/* pos[k]: the row-major position of the k-th position in block order, blocks of shape `b`
 * (each dims[d] a multiple of b[d]) in row-major order, positions row-major within a block. */
static void block_order(int ndims, const int *dims, const int *b, int n, int *pos)
{
    int c = 1;
    for (int d = 0; d < ndims; d++)
        c *= b[d];
    for (int k = 0; k < n; k++) {
        int block = k / c, within = k % c, p = 0;
        int bstride = n / c, wstride = c;
        for (int d = 0; d < ndims; d++) {
            bstride /= dims[d] / b[d];
            wstride /= b[d];
            int x = (block / bstride) % (dims[d] / b[d]) * b[d] + (within / wstride) % b[d];
            p = p * dims[d] + x;
        }
        pos[k] = p;
    }
}

/* Edges between nodes when each node holds a block of shape `b`: every edge that crosses a
 * block boundary joins two nodes. In dimension d the grid has dims[d] / b[d] blocks, so as many
 * boundaries less one, plus the wrap when periodic, each crossed by n / dims[d] edges. */
static long block_cut(int ndims, const int *dims, const int *periods, int n, const int *b)
{
    long cut = 0;
    for (int d = 0; d < ndims; d++) {
        int blocks = dims[d] / b[d];
        if (blocks > 1)
            cut += (long)(blocks - 1 + (periods[d] != 0)) * (n / dims[d]);
    }
    return cut;
}

typedef struct {
    int ndims, n;
    const int *dims, *periods;
    int *b, *best_b;
    long best_cut;
} block_search;

/* Tries every block shape b[d..] whose sides divide the grid's and multiply to `left`. */
static void try_blocks(block_search *s, int d, int left)
{
    if (d == s->ndims) {
        long cut = left == 1 ? block_cut(s->ndims, s->dims, s->periods, s->n, s->b) : -1;
        if (cut >= 0 && (s->best_cut < 0 || cut < s->best_cut)) {
            s->best_cut = cut;
            memcpy(s->best_b, s->b, (size_t)s->ndims * sizeof(int));
        }
        return;
    }
    for (int f = 1; f <= s->dims[d] && f <= left; f++)
        if (s->dims[d] % f == 0 && left % f == 0) {
            s->b[d] = f;
            try_blocks(s, d + 1, left / f);
        }
}

bool cr_topo_cart_place(const cr_comm *comm, int ndims, const int *dims, const int *periods, int n, int *newrank)
{
    *newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
    if (comm->rank >= n || cr_rt.nnodes < 2 || n < 2 || ndims < 1)
        return true;
    by_node bn;
    if (!by_node_make(comm, n, &bn))
        return false;
    int *node_at = malloc((size_t)n * sizeof(int)), *pos = malloc((size_t)n * sizeof(int));
    int *b = malloc((size_t)ndims * sizeof(int)), *best_b = malloc((size_t)ndims * sizeof(int));
    bool ok = node_at && pos && b && best_b;
    if (ok && bn.nnodes > 1) {
        long keep = cart_cut(ndims, dims, periods, n, bn.node_of_rank); /* the ranks as they are */
        /* slabs: the k-th process by node at row-major position k */
        for (int k = 0; k < n; k++)
            node_at[k] = bn.node_of_rank[bn.sorted[k]];
        long best = cart_cut(ndims, dims, periods, n, node_at);
        for (int k = 0; k < n; k++)
            pos[k] = k;
        block_search s = {ndims, n, dims, periods, b, best_b, -1};
        if (bn.per_node > 1)
            try_blocks(&s, 0, bn.per_node);
        if (s.best_cut >= 0 && s.best_cut < best) {
            best = s.best_cut;
            block_order(ndims, dims, best_b, n, pos);
        }
        if (best < keep)
            for (int k = 0; k < n; k++)
                if (bn.sorted[k] == comm->rank)
                    *newrank = pos[k];
    }
    free(node_at), free(pos), free(b), free(best_b);
    by_node_free(&bn);
    return ok;
}

/* ----------------------------------------------------------------- graphs */

static long graph_cut(int nnodes, const int *index, const int *edges, const int *node_at)
{
    long cut = 0;
    for (int v = 0, e = 0; v < nnodes; v++)
        for (; e < index[v]; e++)
            cut += node_at[v] != node_at[edges[e]];
    return cut;
}

bool cr_topo_graph_place(const cr_comm *comm, int nnodes, const int *index, const int *edges, int *newrank)
{
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    if (comm->rank >= nnodes || cr_rt.nnodes < 2 || nnodes < 2)
        return true;
    by_node bn;
    if (!by_node_make(comm, nnodes, &bn))
        return false;
    int *order = malloc((size_t)nnodes * sizeof(int)), *node_at = malloc((size_t)nnodes * sizeof(int));
    char *seen = calloc((size_t)nnodes, 1);
    bool ok = order && node_at && seen;
    if (ok && bn.nnodes > 1) {
        long keep = graph_cut(nnodes, index, edges, bn.node_of_rank); /* the ranks as they are */
        /* the graph's own order: graph node v gets the v-th process by node */
        for (int v = 0; v < nnodes; v++)
            node_at[v] = bn.node_of_rank[bn.sorted[v]];
        long own = graph_cut(nnodes, index, edges, node_at);
        /* breadth-first from each graph node not reached yet, in order */
        int tail = 0;
        for (int root = 0; root < nnodes; root++) {
            if (seen[root])
                continue;
            seen[root] = 1;
            order[tail++] = root;
            for (int head = tail - 1; head < tail; head++) {
                int v = order[head];
                for (int e = v ? index[v - 1] : 0; e < index[v]; e++)
                    if (!seen[edges[e]]) {
                        seen[edges[e]] = 1;
                        order[tail++] = edges[e];
                    }
            }
        }
        for (int k = 0; k < nnodes; k++)
            node_at[order[k]] = bn.node_of_rank[bn.sorted[k]];
        long bfs = graph_cut(nnodes, index, edges, node_at);
        if (CR_MIN(own, bfs) < keep)
            for (int k = 0; k < nnodes; k++)
                if (bn.sorted[k] == comm->rank)
                    *newrank = own <= bfs ? k : order[k];
    }
    free(order), free(node_at), free(seen);
    by_node_free(&bn);
    return ok;
}
