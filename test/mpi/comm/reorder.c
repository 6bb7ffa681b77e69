/* Topologies made with reorder = 1 across nodes (run under mpiexec --simulate-nodes K, and on
 * one node):
 *   - MPI_Cart_create and MPI_Graph_create with reorder give a correct topology: every process
 *     once, coordinates and ranks that round-trip, and a halo exchange along every dimension
 *     (MPI_Cart_shift, MPI_Sendrecv of world ranks) and over the graph's edges
 *     (MPI_Neighbor_allgather) that delivers each neighbour's own value;
 *   - MPI_Cart_map / MPI_Graph_map give every process the rank it gets from the create call;
 *   - locality: the edges whose ends are on different nodes are never more with reorder than
 *     without, on MPI_COMM_WORLD (placed in blocks by the launcher) and on a communicator whose
 *     ranks alternate between the nodes; on the alternating one a non-periodic line is cut only
 *     between nodes (K - 1 edges), a ring twice per node pair, and with 4 nodes of 4 a 4 x 4 grid
 *     is cut into 2 x 2 blocks (8 edges, against 12 for slabs of rows);
 *   - on one node, reorder keeps every rank.
 * Nodes are found the portable way: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). */
#include "mpitest.h"

static int wsize, wrank, nnodes, per_node; /* per_node: 0 when the nodes hold different counts */
static int *node_of_world;                 /* node (0..nnodes-1) of every world rank */

static void find_nodes(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int leader = wrank; /* the lowest world rank on this node names it */
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
    node_of_world = malloc((size_t)wsize * sizeof(int));
    MPI_Allgather(&leader, 1, MPI_INT, node_of_world, 1, MPI_INT, MPI_COMM_WORLD);
    int *count = calloc((size_t)wsize, sizeof(int));
    nnodes = 0;
    for (int r = 0; r < wsize; r++) { /* leaders -> 0.. in order of their world rank */
        int l = node_of_world[r];
        node_of_world[r] = l == r ? nnodes++ : node_of_world[l];
        count[node_of_world[r]]++;
    }
    per_node = count[0];
    for (int k = 0; k < nnodes; k++)
        if (count[k] != per_node)
            per_node = 0;
    free(count);
}

/* MPI_COMM_WORLD's processes with ranks that alternate between nodes: the i-th process of each
 * node comes before the (i+1)-th of any. */
static MPI_Comm alternating(void)
{
    int index_on_node = 0;
    for (int r = 0; r < wrank; r++)
        index_on_node += node_of_world[r] == node_of_world[wrank];
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, index_on_node * wsize + node_of_world[wrank], &c);
    return c;
}

/* The node of each rank of `c`, by rank. */
static int *nodes_by_rank(MPI_Comm c)
{
    int n;
    MPI_Comm_size(c, &n);
    int *nodes = malloc((size_t)n * sizeof(int));
    MPI_Allgather(&node_of_world[wrank], 1, MPI_INT, nodes, 1, MPI_INT, c);
    return nodes;
}

/* Edges of the Cartesian grid `cart` between nodes, summed over its processes: each process
 * counts its neighbour at +1 in every dimension (in a periodic dimension of 2 the wrap is the
 * neighbour at -1 again, and counts again: the halo goes to it twice). Also checks the halo
 * along every dimension. */
static int cart_cut_and_halo(MPI_Comm cart, int nd, const int *dims, const int *periods)
{
    int me, n, *nodes = nodes_by_rank(cart), cut = 0, coords[4];
    MPI_Comm_rank(cart, &me);
    MPI_Comm_size(cart, &n);
    int *world_of = malloc((size_t)n * sizeof(int));
    MPI_Allgather(&wrank, 1, MPI_INT, world_of, 1, MPI_INT, cart);
    MPI_Cart_coords(cart, me, nd, coords);
    (void)periods;
    for (int d = 0; d < nd; d++) {
        int src, dst, from_src = -2, from_dst = -2;
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        /* halo: my world rank to both neighbours, theirs from both */
        MPI_Sendrecv(&wrank, 1, MPI_INT, dst, 1, &from_src, 1, MPI_INT, src, 1, cart, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&wrank, 1, MPI_INT, src, 2, &from_dst, 1, MPI_INT, dst, 2, cart, MPI_STATUS_IGNORE);
        CHECK(src == MPI_PROC_NULL ? from_src == -2 : from_src == world_of[src], "halo from -1 in dim %d: %d", d,
              from_src);
        CHECK(dst == MPI_PROC_NULL ? from_dst == -2 : from_dst == world_of[dst], "halo from +1 in dim %d: %d", d,
              from_dst);
        if (dst != MPI_PROC_NULL && dims[d] > 1)
            cut += nodes[dst] != nodes[me];
    }
    int total;
    MPI_Allreduce(&cut, &total, 1, MPI_INT, MPI_SUM, cart);
    free(nodes), free(world_of);
    return total;
}

/* A Cartesian grid of `n` processes of `comm` in `nd` dimensions, with and without reorder. */
static void cart_case(MPI_Comm comm, const char *what, int n, int nd, int periodic, int want_cut)
{
    int csize, crank;
    MPI_Comm_size(comm, &csize);
    MPI_Comm_rank(comm, &crank);
    int dims[4] = {0, 0, 0, 0}, periods[4];
    MPI_Dims_create(n, nd, dims);
    for (int d = 0; d < nd; d++)
        periods[d] = periodic;
    int *comm_world = malloc((size_t)csize * sizeof(int));
    MPI_Allgather(&wrank, 1, MPI_INT, comm_world, 1, MPI_INT, comm);
    MPI_Comm keep, moved;
    MPI_Cart_create(comm, nd, dims, periods, 0, &keep);
    MPI_Cart_create(comm, nd, dims, periods, 1, &moved);
    int mapped;
    MPI_Cart_map(comm, nd, dims, periods, &mapped);
    CHECK((keep == MPI_COMM_NULL) == (crank >= n), "%s: rank %d in the grid of %d without reorder", what, crank, n);
    CHECK((moved == MPI_COMM_NULL) == (mapped == MPI_UNDEFINED), "%s: Cart_map %d but %s communicator", what,
          mapped, moved == MPI_COMM_NULL ? "no" : "a");
    int in_grid = moved != MPI_COMM_NULL, placed;
    MPI_Allreduce(&in_grid, &placed, 1, MPI_INT, MPI_SUM, comm);
    CHECK(placed == n, "%s: %d processes in a grid of %d", what, placed, n);
    if (moved != MPI_COMM_NULL) {
        int me, size, c[4], back;
        MPI_Comm_rank(moved, &me);
        MPI_Comm_size(moved, &size);
        CHECK(size == n && me == mapped, "%s: size %d rank %d, Cart_map said %d", what, size, me, mapped);
        if (nnodes == 1)
            CHECK(me == crank, "%s: reorder on one node moved rank %d to %d", what, crank, me);
        MPI_Cart_coords(moved, me, nd, c);
        MPI_Cart_rank(moved, c, &back);
        CHECK(back == me, "%s: coords round trip %d -> %d", what, me, back);
        /* the grid's processes are comm's first n, each once */
        int *world = malloc((size_t)n * sizeof(int)), *seen = calloc((size_t)wsize, sizeof(int));
        MPI_Allgather(&wrank, 1, MPI_INT, world, 1, MPI_INT, moved);
        for (int r = 0; r < n; r++)
            seen[world[r]]++;
        for (int r = 0; r < n; r++)
            CHECK(seen[comm_world[r]] == 1, "%s: comm rank %d (world %d) is %d times in the grid", what, r,
                  comm_world[r], seen[comm_world[r]]);
        free(world), free(seen);
        int cut1 = cart_cut_and_halo(moved, nd, dims, periods);
        int cut0 = cart_cut_and_halo(keep, nd, dims, periods);
        CHECK(cut1 <= cut0, "%s %dD%s of %d: %d edges between nodes with reorder, %d without", what, nd,
              periodic ? " periodic" : "", n, cut1, cut0);
        if (want_cut >= 0)
            CHECK(cut1 == want_cut, "%s %dD%s of %d: %d edges between nodes with reorder, want %d", what, nd,
                  periodic ? " periodic" : "", n, cut1, want_cut);
        MPI_Comm_free(&moved);
    }
    if (keep != MPI_COMM_NULL)
        MPI_Comm_free(&keep);
    free(comm_world);
}

/* A ring (each process's neighbours at -1 and +1) over the first n processes of comm. */
static void graph_case(MPI_Comm comm, const char *what, int n, int want_cut)
{
    int crank;
    MPI_Comm_rank(comm, &crank);
    int *index = malloc((size_t)n * sizeof(int)), *edges = malloc((size_t)(2 * n) * sizeof(int)), e = 0;
    for (int v = 0; v < n; v++) {
        edges[e++] = (v + n - 1) % n;
        edges[e++] = (v + 1) % n;
        index[v] = e;
    }
    MPI_Comm keep, moved;
    MPI_Graph_create(comm, n, index, edges, 0, &keep);
    MPI_Graph_create(comm, n, index, edges, 1, &moved);
    int mapped;
    MPI_Graph_map(comm, n, index, edges, &mapped);
    CHECK((moved == MPI_COMM_NULL) == (mapped == MPI_UNDEFINED), "%s: Graph_map %d", what, mapped);
    int cut[2] = {0, 0};
    MPI_Comm g[2] = {keep, moved};
    for (int k = 0; k < 2; k++) {
        if (g[k] == MPI_COMM_NULL)
            continue;
        int me, nn, *nodes = nodes_by_rank(g[k]), *world_of = malloc((size_t)n * sizeof(int));
        MPI_Comm_rank(g[k], &me);
        if (k == 1) {
            CHECK(me == mapped, "%s: Graph_create gave rank %d, Graph_map %d", what, me, mapped);
            if (nnodes == 1)
                CHECK(me == crank, "%s: reorder on one node moved rank %d to %d", what, crank, me);
        }
        MPI_Allgather(&wrank, 1, MPI_INT, world_of, 1, MPI_INT, g[k]);
        MPI_Graph_neighbors_count(g[k], me, &nn);
        int nb[2], got[2] = {-1, -1};
        MPI_Graph_neighbors(g[k], me, 2, nb);
        MPI_Neighbor_allgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, g[k]);
        for (int j = 0; j < nn && j < 2; j++) {
            CHECK(got[j] == world_of[nb[j]], "%s: neighbour %d sent %d, is world rank %d", what, nb[j], got[j],
                  world_of[nb[j]]);
            cut[k] += nodes[nb[j]] != nodes[me];
        }
        int total;
        MPI_Allreduce(&cut[k], &total, 1, MPI_INT, MPI_SUM, g[k]);
        cut[k] = total;
        free(nodes), free(world_of);
    }
    if (moved != MPI_COMM_NULL) {
        CHECK(cut[1] <= cut[0], "%s ring of %d: %d edges between nodes with reorder, %d without", what, n, cut[1],
              cut[0]);
        if (want_cut >= 0)
            CHECK(cut[1] == want_cut, "%s ring of %d: %d edges between nodes with reorder, want %d", what, n, cut[1],
                  want_cut);
        MPI_Comm_free(&moved);
    }
    if (keep != MPI_COMM_NULL)
        MPI_Comm_free(&keep);
    free(index), free(edges);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    find_nodes();
    MPI_Comm alt = alternating();
    MPI_Comm comms[2] = {MPI_COMM_WORLD, alt};
    const char *names[2] = {"world", "alternating"};
    for (int k = 0; k < 2; k++)
        for (int nd = 1; nd <= 3; nd++)
            for (int periodic = 0; periodic <= 1; periodic++) {
                /* a line of every process, cut once between consecutive nodes, when nodes are equal */
                int want = k == 1 && nd == 1 && !periodic && per_node ? nnodes - 1 : -1;
                cart_case(comms[k], names[k], wsize, nd, periodic, want);
                if (wsize > 2)
                    cart_case(comms[k], names[k], wsize - 1, nd, periodic, -1);
            }
    if (wsize == 16 && nnodes == 4 && per_node == 4)
        cart_case(alt, "alternating 4 x 4", 16, 2, 0, 8);
    for (int k = 0; k < 2; k++) {
        /* a ring over every process, cut twice (both directions) at each of 2 node boundaries */
        int want = k == 1 && nnodes == 2 && per_node > 1 ? 4 : -1;
        graph_case(comms[k], names[k], wsize, want);
        if (wsize > 3)
            graph_case(comms[k], names[k], wsize - 1, -1);
    }
    MPI_Comm_free(&alt);
    free(node_of_world);
    return mt_finish();
}
