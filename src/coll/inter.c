/* inter.c: collectives on intercommunicators. Data flows between the two groups: a rooted
 * collective goes from the root (root = MPI_ROOT there, MPI_PROC_NULL at the rest of its group)
 * to every process of the other group, or back; the others give each group what the other
 * group contributed.
 *
 * Each is a schedule (sched.h) of steps across the groups and steps within a group (local
 * mode, on the group's own intracommunicator): a group combines or collects its data at its
 * rank 0 with the intracommunicator algorithms, the two rank 0s trade, and each passes on what
 * it got. Where every block has its own destination (scatter, gather, their v forms,
 * allgatherv and the all-to-alls) the blocks go straight to their processes instead.
 * Cost, for a group of p processes and one of q: the combining collectives take
 * 2 log2(max(p, q)) + 1 message times; the direct ones send max(p, q) messages per process. */
#include "coll.h"

#include "core/error.h"

/* What this process does in a rooted collective. */
typedef enum { ROOT, PEER, IDLE } role;

static role role_of(int root)
{
    return root == MPI_ROOT ? ROOT : root == MPI_PROC_NULL ? IDLE : PEER;
}

void cr_coll_inter_barrier(cr_sched *s)
{
    /* Once all of a group has entered, its rank 0 tells the other's; once told, the other
     * group's rank 0 lets its group go. */
    static char none;
    cr_dtype *byte = cr_dtype_get(MPI_BYTE);
    cr_sched_local(s, true);
    if (s->size > 1)
        cr_coll_barrier_dissemination(s);
    cr_sched_local(s, false);
    if (s->rank == 0) {
        cr_sched_fence(s);
        cr_sched_send(s, &none, 0, byte, 0);
        cr_sched_recv(s, &none, 0, byte, 0);
    }
    cr_sched_local(s, true);
    if (s->size > 1) {
        cr_sched_fence(s);
        cr_coll_barrier_dissemination(s);
    }
}

void cr_coll_inter_bcast(cr_sched *s, const cr_coll_call *a)
{
    switch (role_of(a->root)) {
    case ROOT: cr_sched_send(s, a->rbuf, a->rcount, a->rdt, 0); break;
    case PEER:
        if (s->rank == 0)
            cr_sched_recv(s, a->rbuf, a->rcount, a->rdt, a->root);
        if (s->size > 1) {
            cr_sched_local(s, true);
            cr_sched_fence(s);
            cr_coll_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, 0);
        }
        break;
    case IDLE: break;
    }
}

/* The group's contributions combined at its rank 0, into a buffer it returns (NULL
 * elsewhere), in rank order. */
static void *reduce_to_leader(cr_sched *s, const void *sbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    void *tmp = s->rank == 0 ? cr_sched_tmp(s, count, dt) : NULL;
    cr_sched_local(s, true);
    if (s->size == 1)
        cr_sched_copy(s, sbuf, count, dt, tmp, count, dt);
    else
        cr_coll_reduce_binomial(s, sbuf, tmp, count, dt, op, 0);
    cr_sched_local(s, false);
    cr_sched_fence(s);
    return tmp;
}

void cr_coll_inter_reduce(cr_sched *s, const cr_coll_call *a)
{
    switch (role_of(a->root)) {
    case ROOT: cr_sched_recv(s, a->rbuf, a->rcount, a->rdt, 0); break;
    case PEER: {
        void *tmp = reduce_to_leader(s, a->sbuf, a->rcount, a->rdt, a->op);
        if (s->rank == 0)
            cr_sched_send(s, tmp, a->rcount, a->rdt, a->root);
        break;
    }
    case IDLE: break;
    }
}

/* Rank 0 of each group sends `mine` to the other's rank 0 and receives `theirs`, which then
 * goes to the whole group. */
static void trade_and_spread(cr_sched *s, const void *mine, MPI_Count scount, cr_dtype *sdt, void *theirs,
                             MPI_Count rcount, cr_dtype *rdt)
{
    if (s->rank == 0) {
        cr_sched_send(s, mine, scount, sdt, 0);
        cr_sched_recv(s, theirs, rcount, rdt, 0);
    }
    if (s->size > 1) {
        cr_sched_local(s, true);
        cr_sched_fence(s);
        cr_coll_bcast_binomial(s, theirs, rcount, rdt, 0);
    }
}

void cr_coll_inter_allreduce(cr_sched *s, const cr_coll_call *a)
{
    void *tmp = reduce_to_leader(s, a->sbuf, a->rcount, a->rdt, a->op);
    trade_and_spread(s, tmp, a->rcount, a->rdt, a->rbuf, a->rcount, a->rdt);
}

void cr_coll_inter_allgather(cr_sched *s, const cr_coll_call *a)
{
    /* The group's blocks meet at its rank 0, in rank order, as sendtype elements. */
    MPI_Count all = a->scount * s->size;
    void *tmp = s->rank == 0 ? cr_sched_tmp(s, all, a->sdt) : NULL;
    cr_sched_local(s, true);
    if (s->size == 1)
        cr_sched_copy(s, a->sbuf, a->scount, a->sdt, tmp, a->scount, a->sdt);
    else
        cr_coll_gather_binomial(s, a->sbuf, a->scount, a->sdt, tmp, a->scount, a->sdt, 0);
    cr_sched_local(s, false);
    cr_sched_fence(s);
    trade_and_spread(s, tmp, all, a->sdt, a->rbuf, a->rcount * s->comm->remote_size, a->rdt);
}

void cr_coll_inter_reduce_scatter(cr_sched *s, const cr_coll_call *a)
{
    /* The group's vectors combined at its rank 0, traded for the other group's, scattered by
     * this group's counts. */
    int p = s->size;
    bool block = a->rcounts.p == NULL;
    MPI_Count total = 0;
    int64_t *counts = cr_sched_scratch(s, 2 * (size_t)p * sizeof *counts), *displs = counts ? counts + p : NULL;
    if (!counts) { /* the schedule fails; its group's local tags must still move on together */
        cr_sched_local(s, true);
        return;
    }
    for (int i = 0; i < p; i++) {
        counts[i] = block ? a->rcount : cr_cvec_at(a->rcounts, (size_t)i);
        displs[i] = total;
        total += counts[i];
    }
    void *tmp = reduce_to_leader(s, a->sbuf, total, a->rdt, a->op);
    void *theirs = s->rank == 0 ? cr_sched_tmp(s, total, a->rdt) : NULL;
    if (s->rank == 0) {
        cr_sched_send(s, tmp, total, a->rdt, 0);
        cr_sched_recv(s, theirs, total, a->rdt, 0);
    }
    cr_sched_local(s, true);
    cr_sched_fence(s);
    cr_coll_scatterv_linear(s, theirs, cr_cvec_of(counts, 1), cr_cvec_of(displs, 1), a->rdt, a->rbuf,
                            counts[s->rank], a->rdt, 0);
}

/* Gather and scatter, with blocks of one size or of many: straight between the root and each
 * process of the other group. */
void cr_coll_inter_gatherv(cr_sched *s, const cr_coll_call *a)
{
    switch (role_of(a->root)) {
    case ROOT:
        for (int i = 0; i < s->comm->remote_size; i++) {
            bool v = a->rcounts.p != NULL;
            MPI_Count n = v ? cr_cvec_at(a->rcounts, (size_t)i) : a->rcount;
            MPI_Count at = v ? cr_cvec_at(a->rdispls, (size_t)i) : (MPI_Count)i * a->rcount;
            cr_sched_recv(s, cr_coll_at(a->rbuf, at, a->rdt), n, a->rdt, i);
        }
        break;
    case PEER: cr_sched_send(s, a->sbuf, a->scount, a->sdt, a->root); break;
    case IDLE: break;
    }
}

void cr_coll_inter_scatterv(cr_sched *s, const cr_coll_call *a)
{
    switch (role_of(a->root)) {
    case ROOT:
        for (int i = 0; i < s->comm->remote_size; i++) {
            bool v = a->scounts.p != NULL;
            MPI_Count n = v ? cr_cvec_at(a->scounts, (size_t)i) : a->scount;
            MPI_Count at = v ? cr_cvec_at(a->sdispls, (size_t)i) : (MPI_Count)i * a->scount;
            cr_sched_send(s, cr_coll_at(a->sbuf, at, a->sdt), n, a->sdt, i);
        }
        break;
    case PEER: cr_sched_recv(s, a->rbuf, a->rcount, a->rdt, a->root); break;
    case IDLE: break;
    }
}

void cr_coll_inter_allgatherv(cr_sched *s, const cr_coll_call *a)
{
    for (int i = 0; i < s->comm->remote_size; i++) {
        cr_sched_recv(s, cr_coll_at(a->rbuf, cr_cvec_at(a->rdispls, (size_t)i), a->rdt),
                      cr_cvec_at(a->rcounts, (size_t)i), a->rdt, i);
        cr_sched_send(s, a->sbuf, a->scount, a->sdt, i);
    }
}

void cr_coll_inter_alltoall(cr_sched *s, const cr_coll_call *a, cr_coll_peer_fn *peer)
{
    /* Pairwise, over the larger group: at step i this process sends to remote rank + i and
     * receives from remote rank - i (mod the larger size), which are the ones that, at the same
     * step, receive from it and send to it. */
    int q = s->comm->remote_size, big = CR_MAX(s->size, q);
    for (int i = 0; i < big; i++) {
        int to = (s->rank + i) % big, from = (s->rank - i + big) % big;
        if (i && i % CR_COLL_ALLTOALL_WINDOW == 0) /* a window of steps at a time, as intra */
            cr_sched_fence(s);
        cr_coll_block b;
        if (from < q) {
            peer(a, from, &b);
            cr_sched_recv(s, b.rbuf, b.rcount, b.rdt, from);
        }
        if (to < q) {
            peer(a, to, &b);
            cr_sched_send(s, b.sbuf, b.scount, b.sdt, to);
        }
    }
}
