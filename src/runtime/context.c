/* context.c: context ids, agreed by the processes of a new communicator, blocking
 * (cr_comm_slot_agree) or as a nonblocking operation (MPI_Comm_idup, MPI_Comm_idup_with_info).
 *
 * Each communicator takes a slot s of a per-process bitmap and uses contexts 2s (point-to-point)
 * and 2s + 1 (collectives); slots 0 and 1 are MPI_COMM_WORLD and MPI_COMM_SELF. An agreement
 * is a series of rounds, each two allreduces over the processes concerned:
 *   1. the AND of their free-slot bitmaps; the lowest slot free everywhere is the candidate,
 *      and each process marks it used at once if it still is free (another agreement of this
 *      process may have taken it since the bitmap was read: nonblocking ones run in the
 *      background, and blocking ones make progress on them while they wait);
 *   2. the MAX of (ok, none free, or taken meanwhile; the slot's epoch here; a random draw):
 *      ok everywhere takes the slot, with an epoch one more than the largest any member used
 *      (comm.h: a message still in flight for a freed communicator carries an older epoch, and
 *      pt2pt drops it instead of matching it on the new one); otherwise the marks are undone
 *      and the next round starts, picking its candidate by the draw (round_pick).
 * No agreement waits for another, or holds anything while it waits for its own members, so
 * agreements in flight at once (on different communicators, in any order) cannot deadlock;
 * a round fails only when two of them picked the same slot at one process, and the retry
 * reads the bitmap again. */
#include "coll/coll.h"
#include "comm/comm.h"
#include "comm_create.h"
#include "core/runtime.h"
#include "cr_impl.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS CR_CTX_SLOTS
#define WORDS (SLOTS / 64)
static uint64_t slot_used[WORDS] = {3}; /* slots 0 and 1: world and self */
static uint32_t slot_epoch[SLOTS];      /* the epoch this process last used for each slot */

/* Verdicts, in the order MAX settles them: retrying beats giving up while some process still
 * has a slot marked by a round in flight (it may be undone). */
enum { ROUND_OK = 0, ROUND_FULL = 1, ROUND_TAKEN = 2 };

static int marked_in_flight; /* slots marked by rounds not settled yet, at this process */

typedef struct slot_round {
    uint64_t mask[WORDS];
    uint32_t verdict[3]; /* ROUND_*; the candidate's epoch here; a random draw */
    int slot;            /* the candidate, or -1 */
    bool marked;         /* this process marked the candidate used */
    uint32_t draw;       /* after a round that failed: the largest draw of its members */
    int rounds;          /* rounds done */
} slot_round;

/* A draw for the next round's choice: rounds of different agreements that collided pick
 * differently next time (see round_pick). */
static uint32_t random_draw(void)
{
    static uint64_t x;
    if (!x)
        x = (uint64_t)cr_rt.rank * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&x ^ 0x2545f4914f6cdd1dull;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    return (uint32_t)(x >> 32);
}

static void round_begin(slot_round *r)
{
    for (int i = 0; i < WORDS; i++)
        r->mask[i] = ~slot_used[i];
    r->marked = false;
}

/* After the first allreduce: picks the candidate and marks it. The first round takes the
 * lowest slot free everywhere (slots stay compact). After a collision it takes the k-th free
 * slot, k from the members' largest draw: every member of one agreement picks the same, and
 * two agreements that keep meeting at one process (started in opposite orders at two
 * processes, say) pick apart instead of colliding on the same lowest slot for ever. */
static void round_pick(slot_round *r)
{
    int free_slots = 0;
    for (int i = 0; i < WORDS; i++)
        free_slots += __builtin_popcountll(r->mask[i]);
    int k = r->rounds && free_slots ? (int)(r->draw % (uint32_t)free_slots) : 0;
    r->slot = -1;
    for (int i = 0; i < WORDS && r->slot < 0; i++) {
        int n = __builtin_popcountll(r->mask[i]);
        if (k >= n) {
            k -= n;
            continue;
        }
        uint64_t m = r->mask[i];
        while (k--)
            m &= m - 1; /* drop the lowest set bit */
        r->slot = i * 64 + __builtin_ctzll(m);
    }
    r->rounds++;
    r->verdict[2] = random_draw();
    if (r->slot < 0) { /* none free everywhere: for good, unless marks in flight may go away */
        r->verdict[0] = marked_in_flight ? ROUND_TAKEN : ROUND_FULL;
        r->verdict[1] = 0;
        return;
    }
    uint64_t bit = 1ull << (r->slot % 64);
    r->verdict[1] = slot_epoch[r->slot];
    if (slot_used[r->slot / 64] & bit) {
        r->verdict[0] = ROUND_TAKEN;
    } else {
        slot_used[r->slot / 64] |= bit;
        r->marked = true;
        marked_in_flight++;
        r->verdict[0] = ROUND_OK;
    }
}

static void round_undo(slot_round *r)
{
    if (r->marked) {
        slot_used[r->slot / 64] &= ~(1ull << (r->slot % 64));
        marked_in_flight--;
    }
    r->marked = false;
}

/* After the second allreduce: *done with *ctx when agreed; not done to go again; or an error. */
static int round_end(slot_round *r, uint32_t *ctx, bool *done)
{
    *done = false;
    if (r->verdict[0] == ROUND_OK) {
        uint32_t epoch = (r->verdict[1] + 1) & CR_CTX_EPOCH_MASK;
        slot_epoch[r->slot] = epoch;
        *ctx = CR_CTX_MAKE(epoch, r->slot);
        marked_in_flight--; /* settled: the mark stays */
        r->marked = false;
        *done = true;
        return MPI_SUCCESS;
    }
    round_undo(r);
    r->draw = r->verdict[2];
    if (r->verdict[0] == ROUND_FULL)
        return cr_err(MPI_ERR_OTHER, "no context id is free in all processes (%d communicators exist)", SLOTS);
    return MPI_SUCCESS;
}

int cr_comm_slot_agree(cr_comm_allreduce_fn *allreduce, void *arg, uint32_t *ctx)
{
    slot_round r = {.rounds = 0};
    for (;;) {
        round_begin(&r);
        int err = allreduce(r.mask, WORDS, cr_dtype_get(MPI_UINT64_T), cr_op_get(MPI_BAND), arg);
        if (err)
            return err;
        round_pick(&r);
        if ((err = allreduce(r.verdict, 3, cr_dtype_get(MPI_UINT32_T), cr_op_get(MPI_MAX), arg))) {
            round_undo(&r);
            return err;
        }
        bool done;
        if ((err = round_end(&r, ctx, &done)) || done)
            return err;
    }
}

void cr_comm_slot_release(uint32_t ctx)
{
    int slot = (int)(CR_CTX_INDEX(ctx) >> 1);
    slot_used[slot / 64] &= ~(1ull << (slot % 64));
}

/* ----------------------------------------------------------------- nonblocking */

/* One agreement run in the background: its allreduces are schedules (`sub`) that a call step
 * of the operation's own schedule advances. */
typedef struct agreement {
    cr_comm *comm;   /* the sub-schedules run on it */
    bool across;     /* comm is an intercommunicator and the agreement spans both groups */
    int tag;         /* on comm's collective context: the operation's tag */
    int local_tag;   /* across: the tag of the steps within each group */
    int phase;       /* 0: start a round; 1, 2: its first or second allreduce is running */
    slot_round round;
    cr_sched sub;
    uint32_t ctx; /* the result */
} agreement;

static void sub_start(agreement *ag, void *buf, int count, cr_dtype *dt, cr_op *op)
{
    cr_sched *s = &ag->sub;
    cr_sched_init_tagged(s, ag->comm, ag->tag);
    if (!ag->across) {
        cr_coll_allreduce_select(s, buf, count, dt, op, false);
        return;
    }
    /* Both groups: within each, across the two rank 0s, back within each. */
    s->local_tag = ag->local_tag;
    s->has_local_tag = true;
    cr_sched_local(s, true);
    cr_coll_allreduce_select(s, buf, count, dt, op, false);
    cr_sched_local(s, false);
    if (s->rank == 0) {
        void *theirs = cr_sched_scratch(s, (size_t)count * dt->size);
        cr_sched_fence(s);
        cr_sched_send(s, buf, count, dt, 0);
        cr_sched_recv(s, theirs, count, dt, 0);
        cr_sched_fence(s);
        cr_sched_reduce(s, theirs, buf, count, dt, op);
    }
    cr_sched_local(s, true);
    if (s->size > 1) {
        cr_sched_fence(s);
        cr_coll_bcast_binomial(s, buf, count, dt, 0);
    }
}

/* CR_SCHED_AGAIN while the running allreduce goes on; else its error. */
static int sub_finish(agreement *ag)
{
    if (!cr_sched_advance(&ag->sub))
        return CR_SCHED_AGAIN;
    int err = ag->sub.err;
    cr_sched_destroy(&ag->sub);
    return err;
}

/* Advances an agreement: MPI_SUCCESS when it has ag->ctx, CR_SCHED_AGAIN, or an error. */
static int agreement_advance(agreement *ag)
{
    for (;;) {
        int err;
        switch (ag->phase) {
        case 0:
            round_begin(&ag->round);
            sub_start(ag, ag->round.mask, WORDS, cr_dtype_get(MPI_UINT64_T), cr_op_get(MPI_BAND));
            ag->phase = 1;
            break;
        case 1:
            if ((err = sub_finish(ag)))
                return err;
            round_pick(&ag->round);
            sub_start(ag, ag->round.verdict, 3, cr_dtype_get(MPI_UINT32_T), cr_op_get(MPI_MAX));
            ag->phase = 2;
            break;
        default: {
            if ((err = sub_finish(ag))) {
                if (err != CR_SCHED_AGAIN)
                    round_undo(&ag->round);
                return err;
            }
            bool done;
            if ((err = round_end(&ag->round, &ag->ctx, &done)) || done)
                return err;
            ag->phase = 0;
        }
        }
    }
}

/* An MPI_Comm_idup in flight: one agreement for the new communicator's context, and for an
 * intercommunicator a second, within each group, for its local intracommunicator's. */
typedef struct idup {
    agreement ag[2];
    int n, at;
    cr_comm *child; /* held until the operation ends */
} idup;

static int idup_step(cr_sched *s, void *arg)
{
    (void)s;
    idup *d = arg;
    int err = MPI_SUCCESS;
    while (d->at < d->n && !(err = agreement_advance(&d->ag[d->at])))
        d->at++;
    if (err == CR_SCHED_AGAIN)
        return err;
    if (err) {
        if (d->at == 1) /* the first context was agreed: it goes back */
            cr_comm_slot_release(d->ag[0].ctx);
    } else {
        d->child->ctx = d->ag[0].ctx;
        if (d->n == 2)
            d->child->local->ctx = d->ag[1].ctx;
    }
    cr_comm_release(d->child);
    return err;
}

/* The new communicator, at once, with no context yet: of the same members as comm. */
static int child_new(cr_comm *comm, MPI_Comm *newcomm, cr_comm **out)
{
    int *w = cr_comm_world_ranks_of(comm), *theirs = NULL;
    cr_comm *c = NULL, *local = NULL;
    int err = w ? cr_comm_new(comm, CR_CTX_NONE, w, comm->size, comm->rank, newcomm, &c)
                : cr_err(MPI_ERR_NO_MEM, "out of memory duplicating a communicator");
    if (err || !comm->inter) {
        *out = c;
        return err;
    }
    MPI_Comm lh;
    if (!(theirs = malloc((size_t)comm->remote_size * sizeof *theirs)) || !(w = cr_comm_world_ranks_of(comm)) ||
        (err = cr_comm_new(comm->local, CR_CTX_NONE, w, comm->size, comm->rank, &lh, &local))) {
        free(theirs);
        cr_mpi_comm_free(newcomm);
        return err ? err : cr_err(MPI_ERR_NO_MEM, "out of memory duplicating an intercommunicator");
    }
    memcpy(theirs, comm->remote_world_ranks, (size_t)comm->remote_size * sizeof *theirs);
    c->inter = true;
    c->remote_size = comm->remote_size;
    c->remote_world_ranks = theirs;
    c->local = local;
    *out = c;
    return MPI_SUCCESS;
}

static int idup_start(cr_comm *comm, cr_info *info, bool with_info, MPI_Comm *newcomm, MPI_Request *request)
{
    cr_comm *c = NULL;
    int err = child_new(comm, newcomm, &c);
    if (err || (err = cr_comm_dup_extras(comm, newcomm, c)))
        return err;
    if (with_info) { /* the new communicator's hints are those of `info`, not its parent's */
        c->hints_set = c->hints = 0;
        if ((err = cr_comm_hints_apply(c, info))) {
            cr_mpi_comm_free(newcomm);
            return err;
        }
    }
    cr_sched *s = cr_sched_new(comm);
    idup *d = s ? cr_sched_scratch(s, sizeof *d) : NULL;
    if (!d) {
        if (s)
            cr_sched_free(s);
        cr_mpi_comm_free(newcomm);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for MPI_Comm_idup");
    }
    memset(d, 0, sizeof *d);
    d->child = c;
    cr_comm_hold(c); /* the operation sets its context even if the handle is freed first */
    d->ag[0] = (agreement){.comm = comm, .tag = s->tag};
    d->n = 1;
    if (comm->inter) { /* tags of the local group's sequence, taken now, in call order */
        d->ag[0].across = true;
        d->ag[0].local_tag = (int)(comm->local->coll_tag++ & 0x7fffffff);
        d->ag[1] = (agreement){.comm = comm->local, .tag = (int)(comm->local->coll_tag++ & 0x7fffffff)};
        d->n = 2;
    }
    cr_sched_call(s, idup_step, d);
    if ((err = cr_sched_post(s, false, request))) {
        cr_comm_release(c);
        cr_mpi_comm_free(newcomm);
    }
    return err;
}

int cr_mpi_comm_idup(cr_comm *comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_start(comm, NULL, false, newcomm, request);
}

int cr_mpi_comm_idup_with_info(cr_comm *comm, cr_info *info, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_start(comm, info, true, newcomm, request);
}
