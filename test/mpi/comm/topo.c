/* Process topologies and neighbourhood collectives, checked against direct computation:
 *   - MPI_Dims_create for every N up to 64 and 1 to 4 dimensions: the dims multiply to N, do
 *     not increase, and are the most balanced such tuple (smallest spread, then the largest
 *     smallest factors), found here by brute force; fixed dims are kept;
 *   - MPI_Cart_create (periodic and not, 1 to 4 dimensions), MPI_Cart_coords/Cart_rank round
 *     trips against row-major order, MPI_Cart_shift against wrapped coordinates, MPI_Cart_get,
 *     MPI_Cartdim_get, MPI_Cart_sub, MPI_Topo_test, MPI_Comm_dup keeping the topology;
 *   - MPI_Neighbor_allgather / alltoall on Cartesian grids (including periodic dimensions of 1
 *     and 2 processes, whose neighbours at -1 and +1 coincide: each block must land in the
 *     right slot) and the slots of MPI_PROC_NULL neighbours left untouched;
 *   - MPI_Graph_create (a ring with a chord), MPI_Graph_neighbors, and MPI_Dist_graph_create
 *     (edges named by rank 0 only) and MPI_Dist_graph_create_adjacent with weights, with
 *     MPI_Ineighbor_alltoallv, persistent MPI_Neighbor_alltoall_init started twice, and
 *     MPI_Neighbor_alltoallw;
 *   - errors: a grid larger than the communicator (MPI_ERR_DIMS), Cartesian calls on a
 *     communicator without a topology and neighbourhood collectives on MPI_COMM_WORLD
 *     (MPI_ERR_TOPOLOGY). */
#include "mpitest.h"

#include <stddef.h>

typedef struct {
    double d;
    int i;
} dbl_int;

static int size, rank;

/* Brute force: among the non-increasing k-tuples multiplying to n, the one with the smallest
 * spread (largest minus smallest factor), then the largest smallest factor, the largest second
 * smallest, ... (MPICH's answers, which its own test suite checks). */
static int best[8], cur[8], found;
static int closer(const int *a, const int *b, int k)
{
    if (a[0] - a[k - 1] != b[0] - b[k - 1])
        return a[0] - a[k - 1] < b[0] - b[k - 1];
    for (int j = k - 1; j >= 0; j--)
        if (a[j] != b[j])
            return a[j] > b[j];
    return 0;
}

static void search(int n, int k, int pos, int maxf)
{
    if (pos == k) {
        if (n != 1)
            return;
        if (!found || closer(cur, best, k))
            for (int i = 0; i < k; i++)
                best[i] = cur[i];
        found = 1;
        return;
    }
    for (int f = 1; f <= maxf && f <= n; f++)
        if (n % f == 0) {
            cur[pos] = f;
            search(n / f, k, pos + 1, f);
        }
}

static void dims_tests(void)
{
    for (int n = 1; n <= 64; n++)
        for (int k = 1; k <= 4; k++) {
            int dims[4] = {0, 0, 0, 0};
            MPI_Dims_create(n, k, dims);
            found = 0;
            search(n, k, 0, n);
            for (int i = 0; i < k; i++)
                CHECK(dims[i] == best[i], "Dims_create(%d, %d)[%d] = %d, want %d", n, k, i, dims[i], best[i]);
        }
    int dims[3] = {0, 3, 0};
    MPI_Dims_create(24, 3, dims);
    CHECK(dims[1] == 3 && dims[0] * dims[2] == 8 && dims[0] >= dims[2], "fixed dims: %d %d %d", dims[0], dims[1],
          dims[2]);
}

/* Row-major rank of coordinates, wrapped or off the grid. */
static int direct_rank(int nd, const int *dims, const int *periods, const int *c)
{
    int r = 0;
    for (int d = 0; d < nd; d++) {
        int x = c[d];
        if (x < 0 || x >= dims[d]) {
            if (!periods[d])
                return MPI_PROC_NULL;
            x = ((x % dims[d]) + dims[d]) % dims[d];
        }
        r = r * dims[d] + x;
    }
    return r;
}

static void cart_tests(int nd, int periodic_mask)
{
    int dims[4] = {0, 0, 0, 0}, periods[4];
    MPI_Dims_create(size, nd, dims);
    for (int d = 0; d < nd; d++)
        periods[d] = (periodic_mask >> d) & 1;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart);
    int status, n, me;
    MPI_Topo_test(cart, &status);
    CHECK(status == MPI_CART, "Topo_test %d", status);
    MPI_Cartdim_get(cart, &n);
    CHECK(n == nd, "Cartdim_get %d", n);
    MPI_Comm_rank(cart, &me);
    int gd[4], gp[4], gc[4];
    MPI_Cart_get(cart, nd, gd, gp, gc);
    CHECK(direct_rank(nd, dims, periods, gc) == me, "Cart_get coords of rank %d", me);
    for (int r = 0; r < size; r++) {
        int c[4], back;
        MPI_Cart_coords(cart, r, nd, c);
        CHECK(direct_rank(nd, dims, periods, c) == r, "Cart_coords(%d)", r);
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == r, "Cart_rank round trip %d -> %d", r, back);
    }
    for (int d = 0; d < nd; d++)
        for (int disp = -2; disp <= 2; disp++) {
            int src, dst, c[4];
            MPI_Cart_shift(cart, d, disp, &src, &dst);
            for (int i = 0; i < nd; i++)
                c[i] = gc[i];
            c[d] = gc[d] + disp;
            int wd = direct_rank(nd, dims, periods, c);
            c[d] = gc[d] - disp;
            int ws = direct_rank(nd, dims, periods, c);
            CHECK(src == ws && dst == wd, "Cart_shift(%d, %d) = (%d, %d), want (%d, %d)", d, disp, src, dst, ws, wd);
        }
    /* neighbour alltoall: the block towards slot j carries (me, j) */
    int nn = 2 * nd, sb[8], rb[8], ag[8];
    for (int j = 0; j < nn; j++)
        sb[j] = me * 100 + j, rb[j] = -1, ag[j] = -1;
    MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart);
    MPI_Neighbor_allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, cart);
    for (int d = 0; d < nd; d++)
        for (int side = 0; side < 2; side++) {
            int src, dst;
            MPI_Cart_shift(cart, d, side ? 1 : -1, &dst, &src); /* src: neighbour at -1 or +1 */
            int slot = 2 * d + side;
            /* the neighbour at -1 sent its +1 block here, and the other way round */
            int want = src == MPI_PROC_NULL ? -1 : src * 100 + (2 * d + (1 - side));
            CHECK(rb[slot] == want, "dims %d periodic %x: slot %d got %d, want %d", nd, periodic_mask, slot, rb[slot],
                  want);
            CHECK(ag[slot] == (src == MPI_PROC_NULL ? -1 : src), "allgather slot %d got %d", slot, ag[slot]);
        }
    /* dup keeps the topology; sub keeps the chosen dimensions */
    MPI_Comm dup, sub;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &status);
    CHECK(status == MPI_CART, "dup lost the topology");
    int remain[4] = {1, 0, 1, 0};
    MPI_Cart_sub(cart, remain, &sub);
    int sn, ssize, expect = 1;
    MPI_Cartdim_get(sub, &sn);
    MPI_Comm_size(sub, &ssize);
    for (int d = 0; d < nd; d++)
        expect *= remain[d] ? dims[d] : 1;
    CHECK(ssize == expect && sn == (nd >= 3 ? 2 : 1), "Cart_sub: size %d (want %d), %d dims", ssize, expect, sn);
    MPI_Comm_free(&sub);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);
}

static void graph_tests(void)
{
    /* a ring with a chord from 0 to size/2 (both ways) */
    int index[64], edges[256], e = 0;
    for (int r = 0; r < size; r++) {
        if (size > 1) {
            edges[e++] = (r + size - 1) % size;
            edges[e++] = (r + 1) % size;
        }
        if (size > 3 && (r == 0 || r == size / 2))
            edges[e++] = r == 0 ? size / 2 : 0;
        index[r] = e;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
    int status, nn, nb[8], nnodes, nedges;
    MPI_Topo_test(g, &status);
    MPI_Graphdims_get(g, &nnodes, &nedges);
    CHECK(status == MPI_GRAPH && nnodes == size && nedges == e, "graph dims %d %d", nnodes, nedges);
    MPI_Graph_neighbors_count(g, rank, &nn);
    MPI_Graph_neighbors(g, rank, 8, nb);
    int first = rank ? index[rank - 1] : 0;
    CHECK(nn == index[rank] - first, "neighbours count %d", nn);
    for (int i = 0; i < nn; i++)
        CHECK(nb[i] == edges[first + i], "neighbour %d", i);
    int got[8];
    for (int i = 0; i < 8; i++)
        got[i] = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, g);
    for (int i = 0; i < nn; i++)
        CHECK(got[i] == nb[i], "graph allgather slot %d: %d, want %d", i, got[i], nb[i]);
    MPI_Comm_free(&g);

    /* distributed graph: rank 0 names every edge r -> r+1 and r -> r+2 (weights r*10 + k) */
    int n = rank == 0 ? size : 0, srcs[64], degs[64], dsts[128], wts[128];
    for (int r = 0; r < n; r++) {
        srcs[r] = r;
        degs[r] = 2;
        dsts[2 * r] = (r + 1) % size, wts[2 * r] = r * 10;
        dsts[2 * r + 1] = (r + 2) % size, wts[2 * r + 1] = r * 10 + 1;
    }
    MPI_Comm dg;
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, wts, MPI_INFO_NULL, 0, &dg);
    int indeg, outdeg, weighted, in[4], inw[4], out[4], outw[4];
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    CHECK(indeg == 2 && outdeg == 2 && weighted, "dist graph degrees %d %d %d", indeg, outdeg, weighted);
    MPI_Dist_graph_neighbors(dg, 4, in, inw, 4, out, outw);
    CHECK(out[0] == (rank + 1) % size && out[1] == (rank + 2) % size && outw[0] == rank * 10 && outw[1] == rank * 10 + 1,
          "out edges %d %d weights %d %d", out[0], out[1], outw[0], outw[1]);
    int p1 = (rank + size - 1) % size, p2 = (rank + size - 2) % size;
    CHECK(((in[0] == p1 && in[1] == p2) || (in[0] == p2 && in[1] == p1)), "in edges %d %d", in[0], in[1]);
    for (int i = 0; i < 2; i++)
        CHECK(inw[i] / 10 == in[i] && inw[i] % 10 <= 1, "in weight %d from %d", inw[i], in[i]);
    /* alltoallv: 1 int to the first destination, 2 to the second */
    int sc[2] = {1, 2}, sd[2] = {0, 1}, sbuf[3] = {rank, rank + 1000, rank + 2000}, rc[2], rd[2], rbuf[4] = {-1, -1, -1, -1};
    /* from in[i]: 1 int if this rank is its first destination (weight ending in 0), else 2 */
    for (int i = 0; i < 2; i++)
        rc[i] = inw[i] % 10 == 0 ? 1 : 2;
    rd[0] = 0, rd[1] = rc[0];
    MPI_Request req;
    MPI_Ineighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, dg, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2; i++) {
        const int *r = rbuf + rd[i];
        if (rc[i] == 1)
            CHECK(r[0] == in[i], "alltoallv from %d: %d", in[i], r[0]);
        else
            CHECK(r[0] == in[i] + 1000 && r[1] == in[i] + 2000, "alltoallv from %d: %d %d", in[i], r[0], r[1]);
    }
    /* persistent alltoall, started twice */
    int ps[2], pr[2];
    MPI_Neighbor_alltoall_init(ps, 1, MPI_INT, pr, 1, MPI_INT, dg, MPI_INFO_NULL, &req);
    for (int round = 0; round < 2; round++) {
        ps[0] = rank * 2 + round * 100, ps[1] = rank * 2 + 1 + round * 100;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < 2; i++) {
            int slot = inw[i] % 10; /* which of its destinations this rank is */
            CHECK(pr[i] == in[i] * 2 + slot + round * 100, "persistent round %d from %d: %d", round, in[i], pr[i]);
        }
    }
    MPI_Request_free(&req);
    /* alltoallw with byte displacements, a double then an int */
    dbl_int wsend = {rank + 0.25, rank}, wrecv[2];
    int wsc[2] = {1, 1}, wrc[2] = {1, 1};
    MPI_Aint wsd[2] = {0, offsetof(dbl_int, i)}, wrd[2] = {0, sizeof wrecv[0]};
    MPI_Datatype wst[2] = {MPI_DOUBLE, MPI_INT}, wrt[2];
    for (int i = 0; i < 2; i++) /* from in[i]: a double if this rank is its first destination */
        wrt[i] = inw[i] % 10 == 0 ? MPI_DOUBLE : MPI_INT;
    MPI_Neighbor_alltoallw(&wsend, wsc, wsd, wst, wrecv, wrc, wrd, wrt, dg);
    for (int i = 0; i < 2; i++) {
        if (wrt[i] == MPI_DOUBLE)
            CHECK(*(double *)((char *)wrecv + wrd[i]) == in[i] + 0.25, "alltoallw double from %d", in[i]);
        else
            CHECK(*(int *)((char *)wrecv + wrd[i]) == in[i], "alltoallw int from %d", in[i]);
    }
    MPI_Comm_free(&dg);

    /* adjacent, unweighted */
    int a_in[1] = {(rank + size - 1) % size}, a_out[1] = {(rank + 1) % size};
    /* (through a volatile pointer: GCC 12 warns about reading the ABI's small constant address) */
    int *volatile unweighted = MPI_UNWEIGHTED;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, a_in, unweighted, 1, a_out, unweighted, MPI_INFO_NULL, 0, &dg);
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && !weighted, "adjacent degrees");
    int token = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, &token, 1, MPI_INT, dg);
    CHECK(token == a_in[0], "ring allgather: %d", token);
    MPI_Comm_free(&dg);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    dims_tests();
    for (int nd = 1; nd <= 4; nd++)
        for (int mask = 0; mask < (1 << nd); mask += (nd > 2 ? 3 : 1))
            cart_tests(nd, mask);
    graph_tests();

    /* a distributed graph where this process only receives: MPI_Ineighbor_alltoallw with no
     * destination (and no send types); and no attribute of the old communicator is copied */
    {
        int kv, copies = 0, left = (rank + size - 1) % size, got = -1, one = 1;
        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv, &copies);
        MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &copies);
        MPI_Comm ring;
        int *volatile unweighted = MPI_UNWEIGHTED;
        /* each process receives from its left neighbour; only even ranks' data is sent (odd ranks
         * name no destination), so size must be even for everyone to get something */
        int dest = (rank + 1) % size, nout = (size % 2 == 0 && rank % 2 == 0) || size == 1 ? 1 : 0;
        int nin = (size % 2 == 0 && left % 2 == 0) || size == 1 ? 1 : 0;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, &left, unweighted, nout, &dest, unweighted, MPI_INFO_NULL,
                                       0, &ring);
        void *val;
        int flag;
        MPI_Comm_get_attr(ring, kv, &val, &flag);
        CHECK(!flag, "MPI_Dist_graph_create_adjacent copied an attribute of the old communicator");
        MPI_Aint zero = 0;
        MPI_Datatype it = MPI_INT;
        MPI_Request req;
        MPI_Ineighbor_alltoallw(&rank, &one, &zero, &it, &got, &one, &zero, &it, ring, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(!nin || got == left, "receive-only alltoallw: %d, want %d", got, left);
        MPI_Comm_free(&ring);
        MPI_Comm_delete_attr(MPI_COMM_WORLD, kv);
        MPI_Comm_free_keyval(&kv);
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0}, c[2], x;
    MPI_Comm bad;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &bad), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Neighbor_allgather(&rank, 1, MPI_INT, &x, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    int one[1] = {size}, per[1] = {1};
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, one, per, 0, &ring);
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    int two[2];
    CHECK_CLASS(MPI_Neighbor_alltoall(two, 1, MPI_DATATYPE_NULL, two, 1, MPI_INT, ring), MPI_ERR_TYPE);
    MPI_Comm_free(&ring);
    return mt_finish();
}
