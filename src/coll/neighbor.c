/* neighbor.c: neighbourhood collectives (MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w))
 * in their blocking, nonblocking and persistent forms: one schedule that receives a block from
 * every source and sends a block to every destination of the communicator's topology
 * (comm/topo.h), all at once.
 *
 * Matching: blocks between the same two processes pair up in the order they are posted. That
 * is the standard's rule for graphs; for a Cartesian topology whose neighbour at -1 and +1 in a
 * dimension is the same process (a periodic dimension of size 1 or 2), the block a process
 * sends towards -1 is the one its neighbour receives from +1, so in each dimension the receives
 * are posted +1 first and the sends -1 first: the pairs then match by order.
 *
 * Cost: one round, in + out messages per process, alpha + n beta each. */
#include "coll.h"

#include "comm/topo.h"
#include "cr_impl.h"

#include <stdio.h>
#include <stdlib.h>

typedef enum { NB_ALLGATHER, NB_ALLGATHERV, NB_ALLTOALL, NB_ALLTOALLV, NB_ALLTOALLW } nb_kind;

/* The block received from source i and the block sent to destination j. */
static void recv_block(const cr_coll_call *a, nb_kind k, int i, cr_coll_block *b)
{
    size_t n = (size_t)i;
    switch (k) {
    case NB_ALLGATHER:
    case NB_ALLTOALL:
        b->rbuf = cr_coll_at(a->rbuf, (MPI_Count)i * a->rcount, a->rdt), b->rcount = a->rcount, b->rdt = a->rdt;
        return;
    case NB_ALLGATHERV:
    case NB_ALLTOALLV:
        b->rbuf = cr_coll_at(a->rbuf, cr_cvec_at(a->rdispls, n), a->rdt);
        b->rcount = cr_cvec_at(a->rcounts, n), b->rdt = a->rdt;
        return;
    case NB_ALLTOALLW:
        b->rbuf = (char *)a->rbuf + cr_cvec_at(a->rdispls, n);
        b->rcount = cr_cvec_at(a->rcounts, n), b->rdt = a->rdts[i];
        return;
    }
}

static void send_block(const cr_coll_call *a, nb_kind k, int j, cr_coll_block *b)
{
    size_t n = (size_t)j;
    switch (k) {
    case NB_ALLGATHER:
    case NB_ALLGATHERV:
        b->sbuf = a->sbuf, b->scount = a->scount, b->sdt = a->sdt;
        return;
    case NB_ALLTOALL:
        b->sbuf = cr_coll_at(a->sbuf, (MPI_Count)j * a->scount, a->sdt), b->scount = a->scount, b->sdt = a->sdt;
        return;
    case NB_ALLTOALLV:
        b->sbuf = cr_coll_at(a->sbuf, cr_cvec_at(a->sdispls, n), a->sdt);
        b->scount = cr_cvec_at(a->scounts, n), b->sdt = a->sdt;
        return;
    case NB_ALLTOALLW:
        b->sbuf = (const char *)a->sbuf + cr_cvec_at(a->sdispls, n);
        b->scount = cr_cvec_at(a->scounts, n), b->sdt = a->sdts[j];
        return;
    }
}

static void build(cr_sched *s, const cr_coll_call *a, nb_kind k)
{
    const cr_topo *t = s->comm->topo;
    bool cart = t->kind == MPI_CART;
    cr_coll_block b;
    for (int i = 0; i < t->nin; i++) {
        int slot = cart ? (i ^ 1) : i; /* Cartesian: +1 before -1 in each dimension (see above) */
        recv_block(a, k, slot, &b);
        cr_sched_recv(s, b.rbuf, b.rcount, b.rdt, t->in[slot]);
    }
    for (int j = 0; j < t->nout; j++) {
        send_block(a, k, j, &b);
        cr_sched_send(s, b.sbuf, b.scount, b.sdt, t->out[j]);
    }
}

static void build_allgather(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)node_ok;
    build(s, a, NB_ALLGATHER);
}
static void build_allgatherv(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)node_ok;
    build(s, a, NB_ALLGATHERV);
}
static void build_alltoall(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)node_ok;
    build(s, a, NB_ALLTOALL);
}
static void build_alltoallv(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)node_ok;
    build(s, a, NB_ALLTOALLV);
}
static void build_alltoallw(cr_sched *s, const cr_coll_call *a, bool node_ok)
{
    (void)node_ok;
    build(s, a, NB_ALLTOALLW);
}

/* The communicator's topology, or MPI_ERR_TOPOLOGY. */
static int topology(const cr_comm *comm, const cr_topo **t)
{
    *t = comm->topo;
    if (!*t)
        return cr_err(MPI_ERR_TOPOLOGY, "comm has no process topology: neighbourhood collectives need one (from "
                                        "MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create)");
    return MPI_SUCCESS;
}

/* The checks every form shares: the topology, the send side's count and type. */
static int common(cr_comm *comm, const cr_topo **t, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                  cr_dtype **sdt)
{
    int err = topology(comm, t);
    if (!err && scount >= 0)
        err = cr_coll_check_count(scount, "sendcount");
    if (!err)
        err = cr_coll_resolve(stype, "sendtype", sdt);
    if (!err && scount >= 0)
        err = cr_coll_check_buffer(sbuf, scount, *sdt, "sendbuf");
    return err;
}

/* Allgather and alltoall: one count and type for every block. */
static int same_blocks(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                       cr_dtype *rdt, cr_comm *comm, cr_run_mode mode, MPI_Request *request, cr_coll_build_fn *builder)
{
    const cr_topo *t;
    cr_dtype *sdt = NULL;
    int err = common(comm, &t, sbuf, scount, stype, &sdt);
    if (err)
        return err;
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount, .sdt = sdt, .rdt = rdt,
                      .both_buffers = true};
    return cr_coll_launch(comm, mode, request, builder, &a);
}

static int neighbor_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                              cr_dtype *rdt, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    return same_blocks(sbuf, scount, stype, rbuf, rcount, rdt, comm, mode, request, build_allgather);
}

CR_COLL_THREE_FORMS(neighbor_allgather,
            (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, cr_dtype *rdt,
             cr_comm *comm),
            (sbuf, scount, stype, rbuf, rcount, rdt, comm))

static int neighbor_allgatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, cr_cvec rcounts,
                               cr_cvec displs, cr_dtype *rdt, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    const cr_topo *t;
    cr_dtype *sdt = NULL;
    int err = common(comm, &t, sbuf, scount, stype, &sdt);
    if (!err)
        err = cr_coll_check_counts(rcounts, t->nin, "recvcounts");
    if (err)
        return err;
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .scount = scount, .sdt = sdt, .rdt = rdt, .rcounts = rcounts,
                      .rdispls = displs, .both_buffers = true};
    return cr_coll_launch(comm, mode, request, build_allgatherv, &a);
}

CR_COLL_THREE_FORMS(neighbor_allgatherv,
            (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, cr_cvec rcounts, cr_cvec displs,
             cr_dtype *rdt, cr_comm *comm),
            (sbuf, scount, stype, rbuf, rcounts, displs, rdt, comm))

static int neighbor_alltoall(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                             cr_dtype *rdt, cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    return same_blocks(sbuf, scount, stype, rbuf, rcount, rdt, comm, mode, request, build_alltoall);
}

CR_COLL_THREE_FORMS(neighbor_alltoall,
            (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, cr_dtype *rdt,
             cr_comm *comm),
            (sbuf, scount, stype, rbuf, rcount, rdt, comm))

static int neighbor_alltoallv(const void *sbuf, cr_cvec scounts, cr_cvec sdispls, MPI_Datatype stype, void *rbuf,
                              cr_cvec rcounts, cr_cvec rdispls, cr_dtype *rdt, cr_comm *comm, cr_run_mode mode,
                              MPI_Request *request)
{
    const cr_topo *t;
    cr_dtype *sdt = NULL;
    int err = common(comm, &t, sbuf, -1, stype, &sdt);
    if (!err && !(err = cr_coll_check_counts(scounts, t->nout, "sendcounts")))
        err = cr_coll_check_counts(rcounts, t->nin, "recvcounts");
    if (err)
        return err;
    cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .sdt = sdt, .rdt = rdt, .scounts = scounts, .sdispls = sdispls,
                      .rcounts = rcounts, .rdispls = rdispls, .both_buffers = true};
    return cr_coll_launch(comm, mode, request, build_alltoallv, &a);
}

CR_COLL_THREE_FORMS(neighbor_alltoallv,
            (const void *sbuf, cr_cvec scounts, cr_cvec sdispls, MPI_Datatype stype, void *rbuf, cr_cvec rcounts,
             cr_cvec rdispls, cr_dtype *rdt, cr_comm *comm),
            (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rdt, comm))

static int neighbor_alltoallw(const void *sbuf, cr_cvec scounts, const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                              void *rbuf, cr_cvec rcounts, const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                              cr_comm *comm, cr_run_mode mode, MPI_Request *request)
{
    const cr_topo *t;
    int err = topology(comm, &t);
    if (err)
        return err;
    cr_dtype **types = calloc((size_t)(t->nin + t->nout + 1), sizeof *types);
    if (!types)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d datatypes", t->nin + t->nout);
    if (!(err = cr_coll_check_counts(scounts, t->nout, "sendcounts")) && !(err = cr_coll_check_counts(rcounts, t->nin, "recvcounts")) &&
        !(err = cr_coll_resolve_types(stypes, t->nout, "sendtypes", types)))
        err = cr_coll_resolve_types(rtypes, t->nin, "recvtypes", types + t->nout);
    if (!err) {
        cr_coll_call a = {.sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sdispls = cr_cvec_of(sdispls, 1),
                          .rcounts = rcounts, .rdispls = cr_cvec_of(rdispls, 1), .sdts = types, .rdts = types + t->nout, .per_neighbour = true,
                          .nsdts = t->nout, .nrdts = t->nin}; /* one buffer may hold both sides: the types say which
                                               bytes go and come (a halo exchange in place) */
        err = cr_coll_launch(comm, mode, request, build_alltoallw, &a);
    }
    free(types);
    return err;
}

CR_COLL_THREE_FORMS(neighbor_alltoallw,
            (const void *sbuf, cr_cvec scounts, const MPI_Aint sdispls[], const MPI_Datatype stypes[], void *rbuf,
             cr_cvec rcounts, const MPI_Aint rdispls[], const MPI_Datatype rtypes[], cr_comm *comm),
            (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm))
