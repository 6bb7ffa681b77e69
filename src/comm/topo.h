/* topo.h: process topologies attached to communicators (Cartesian, graph, distributed graph):
 * what they are, the queries on them, and the neighbour lists neighbourhood collectives use.
 * Communicators with a topology are made in runtime/topo_create.c; the topology is owned by its
 * communicator (freed with it, copied by MPI_Comm_dup).
 *
 * Neighbour order (what neighbourhood collectives send and receive, slot by slot), as the
 * standard defines it:
 *   - Cartesian: for each dimension d, the neighbour at displacement -1 then +1 (MPI_PROC_NULL
 *     past a non-periodic edge), the same list for sources and destinations;
 *   - graph: the node's edges in order, for both;
 *   - distributed graph: sources and destinations as given. */
#ifndef CR_TOPO_H
#define CR_TOPO_H

#include "comm/comm.h"

typedef struct cr_topo {
    int kind;        /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* Cartesian */
    int ndims;
    int *dims, *periods, *coords; /* coords: this process's */
    /* graph */
    int nnodes, nedges;
    int *index, *edges;
    /* neighbours in order, and for distributed graphs their weights */
    int nin, nout;
    int *in, *out;
    int *inw, *outw;  /* NULL: unweighted */
    bool weighted;
} cr_topo;

void cr_topo_free(cr_topo *t);
/* A copy for a duplicated communicator; NULL when out of memory. */
cr_topo *cr_topo_copy(const cr_topo *t);

/* Builders (the communicator must already exist: its rank and size are used). */
int cr_topo_cart(cr_comm *c, int ndims, const int *dims, const int *periods);
int cr_topo_graph(cr_comm *c, int nnodes, const int *index, const int *edges);
/* Takes over the arrays (malloc'd; weights may be NULL). */
int cr_topo_dist_graph(cr_comm *c, int nin, int *in, int *inw, int nout, int *out, int *outw, bool weighted);

/* The number of processes of a grid of `dims`, checked (positive dims, no more than c's size). */
int cr_topo_grid_size(const cr_comm *c, int ndims, const int *dims, int *n);
/* The rank at Cartesian coordinates (wrapped in periodic dimensions), or MPI_PROC_NULL when
 * off the grid in a non-periodic one. */
int cr_topo_cart_rank(const cr_topo *t, const int *coords);
/* Coordinates of `rank`. */
void cr_topo_cart_coords(const cr_topo *t, int rank, int *coords);

/* Placement with reordering (topo_place.c): *newrank is the rank this process takes in a
 * Cartesian grid of `n` positions, or in a graph, made from `comm`, chosen so that neighbours
 * share a node; its own rank when that is as good; MPI_UNDEFINED for a process left out
 * (rank >= n). Every process computes the same placement, with no message. false: out of
 * memory (*newrank is then its own rank, or MPI_UNDEFINED). The graph must be valid
 * (cr_topo_graph_check). */
bool cr_topo_cart_place(const cr_comm *comm, int ndims, const int *dims, const int *periods, int n, int *newrank);
bool cr_topo_graph_place(const cr_comm *comm, int nnodes, const int *index, const int *edges, int *newrank);
/* MPI_ERR_ARG naming `call` unless `index` and `edges` describe a graph of nnodes nodes (from 1 up
 * to comm's size; with nnodes = 0 allowed when `empty_ok`). */
int cr_topo_graph_check(const cr_comm *comm, int nnodes, const int *index, const int *edges, bool empty_ok,
                        const char *call);

/* MPI_ERR_COMM naming `call` when comm is an intercommunicator (topologies live on
 * intracommunicators only). */
int cr_topo_check_intra(const cr_comm *comm, const char *call);

#endif
