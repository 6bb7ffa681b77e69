/* sched.h: collective schedules. An algorithm is written once, as a function that appends
 * steps to a schedule: sends and receives on the collective context, local reductions and
 * copies, and calls into code that polls shared memory (the node component). The blocking
 * call builds the schedule on its stack and runs it to completion; the nonblocking call
 * returns it inside a request that progress advances; the persistent call keeps it and runs it
 * again at every MPI_Start.
 *
 * Order and dependencies: steps start in the order they were added. A step added after
 * cr_sched_fence() starts only once every message step before it has completed (a reduction
 * of data just received, or a send of a buffer a receive fills). Local steps (reduce, copy,
 * call) run when they are reached; a call that reports "not yet" holds back every later step
 * and is called again on the next round, so a wait on a flag is a step too.
 *
 * Invariants:
 *   - every pointer in a step is fixed when the schedule is built: buffers, and scratch memory
 *     the schedule owns (cr_sched_tmp) until it is destroyed, so a persistent schedule runs
 *     again on the same memory;
 *   - the requests of message steps live inside the steps: the step array does not move once
 *     the schedule has started;
 *   - one schedule uses one tag of its communicator's collective sequence, taken when it is
 *     built (all processes build collectives in the same order, so they agree on it).
 *   - on an intercommunicator, message steps added in local mode (cr_sched_local) go to
 *     ranks of the local group, on the context of the intercommunicator's local
 *     intracommunicator and with a tag of that communicator's own sequence, taken the first
 *     time a schedule enters local mode: every member of a group enters it in the same
 *     schedules, since what a group does in an intercommunicator collective is the same at
 *     each of its members. */
#ifndef CR_SCHED_H
#define CR_SCHED_H

#include "comm/comm.h"
#include "coll/op.h"
#include "dt/dtype.h"
#include "req/request.h"

struct cr_sched;

/* A call step: returns MPI_SUCCESS when done, CR_SCHED_AGAIN to be called again later, or an
 * MPI error code (which ends the schedule with it). */
#define CR_SCHED_AGAIN (-1)
typedef int cr_sched_fn(struct cr_sched *s, void *arg);

typedef enum { CR_STEP_SEND, CR_STEP_RECV, CR_STEP_REDUCE, CR_STEP_COPY, CR_STEP_CALL } cr_step_kind;

typedef struct cr_step {
    uint8_t kind;  /* cr_step_kind */
    bool fence;    /* waits for every message step before it */
    bool local;    /* a message step within the local group of an intercommunicator */
    union {
        struct { const void *buf; MPI_Count count; cr_dtype *dt; int peer; } msg;
        struct { const void *in; void *inout; MPI_Count count; cr_dtype *dt; cr_op *op; } red; /* inout = in op inout */
        struct { const void *src; MPI_Count scount; cr_dtype *sdt; void *dst; MPI_Count dcount; cr_dtype *ddt; } copy;
        struct { cr_sched_fn *fn; void *arg; } call;
    } u;
    cr_request req; /* message steps */
} cr_step;

/* The arguments of a collective call, for call steps that need them (the node component). */
typedef struct cr_sched_args {
    const void *sbuf;
    void *rbuf;
    MPI_Count count;   /* of dt, at rbuf (and at sbuf, unless scount/sdt say otherwise) */
    cr_dtype *dt;
    MPI_Count scount;  /* the send side, for calls whose sides differ */
    cr_dtype *sdt;
    void *tmp;         /* scratch the call's steps share */
    cr_op *op;
    int root;
} cr_sched_args;

#define CR_SCHED_INLINE_STEPS 8
#define CR_SCHED_INLINE_TMPS 4

typedef struct cr_sched {
    cr_comm *comm;
    uint32_t ctx;
    int tag;
    int rank, size;
    int nsteps, cap;
    int next;       /* the first step not started */
    int pending;    /* message steps started and not complete */
    int err;        /* the first error: the call's result */
    bool halted;    /* an error after which no step starts (any but a count mismatch, see sched.c) */
    int mismatch;   /* a count mismatch found before the run (cr_sched_mismatch), or MPI_SUCCESS */
    bool fence_next; /* the next step added waits (cr_sched_fence) */
    bool built_ok;  /* false once building ran out of memory */
    bool local_mode; /* message steps added now are local (intercommunicators) */
    bool has_local_tag;
    int local_tag;  /* the tag of local steps */
    const int *peer_map; /* when not NULL, algorithm ranks 0..size-1 name comm ranks peer_map[r] */
    cr_step *steps;
    void **tmps;    /* scratch owned by the schedule */
    int ntmps, tmps_cap;
    uint32_t state[8]; /* per-run state of call steps (a generation number, say) */
    cr_sched_args args; /* for call steps */
    cr_request *req;  /* nonblocking or persistent: the request that runs this schedule */
    cr_op *held_op;   /* a user operation kept alive while the request lives */
    cr_dtype **held_dts; /* and the derived datatypes its steps use */
    int nheld_dts;
    struct cr_coll_node *node; /* the node component whose turn this schedule awaits or holds */
    uint32_t node_ticket;      /* its place in that component's order of collectives */
    uint8_t node_turn;         /* 0: none; 1: ticket taken, waiting; 2: holding the turn */
    bool starting;             /* inside a nonblocking collective's start (its first advance) */
    bool async;                /* run by a request (nonblocking or persistent), not by the caller */
    struct cr_sched *active_next, *active_prev;
    void *tmps_inline[CR_SCHED_INLINE_TMPS];
    cr_step steps_inline[CR_SCHED_INLINE_STEPS];
} cr_sched;

/* The call is already known to be wrong at this process (its own block's sizes differ, an
 * MPI_ERR_TRUNCATE `err`): every run starts as after a count mismatch (sched.c), so it ends
 * with `err` and the others are told. MPI_SUCCESS: nothing. */
void cr_sched_mismatch(cr_sched *s, int err);
/* Starts building a schedule for one collective call on `comm` (takes its tag). */
void cr_sched_init(cr_sched *s, cr_comm *comm);
/* The same, with a tag of the caller's choosing instead of the next of the sequence (internal
 * exchanges that not every member of `comm` takes part in). */
void cr_sched_init_tagged(cr_sched *s, cr_comm *comm, int tag);
/* Runs the algorithms added from now on among a subset of comm: `rank` and `size` in the
 * subset, and `map` (size entries, kept by the caller while the schedule lives) the comm rank
 * of each. Messages carry comm ranks, so concurrent schedules of disjoint subsets never meet. */
void cr_sched_subset(cr_sched *s, int rank, int size, const int *map);
/* On an intercommunicator: message steps added from now on stay within the local group (on),
 * or go to the remote group (off, the default). */
void cr_sched_local(cr_sched *s, bool on);
/* Releases what the schedule owns (scratch, grown arrays); it must not be running. */
void cr_sched_destroy(cr_sched *s);

/* Appending steps. Errors (out of memory) are remembered and reported by the run. */
void cr_sched_send(cr_sched *s, const void *buf, MPI_Count count, cr_dtype *dt, int peer);
void cr_sched_recv(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int peer);
/* inout = in op inout, elementwise. */
void cr_sched_reduce(cr_sched *s, const void *in, void *inout, MPI_Count count, cr_dtype *dt, cr_op *op);
/* A typed copy between buffers of the same type signature (pack and unpack, with MPI_BYTE). */
void cr_sched_copy(cr_sched *s, const void *src, MPI_Count scount, cr_dtype *sdt, void *dst, MPI_Count dcount,
                   cr_dtype *ddt);
void cr_sched_call(cr_sched *s, cr_sched_fn *fn, void *arg);
/* The next step added waits for every message step added before it. */
static inline void cr_sched_fence(cr_sched *s)
{
    s->fence_next = true;
}
/* Scratch memory for `bytes`, owned by the schedule; NULL (and the schedule fails) when out
 * of memory. */
void *cr_sched_scratch(cr_sched *s, size_t bytes);
/* Room for `count` elements of dt laid out like a user buffer (see cr_coll_tmp). */
void *cr_sched_tmp(cr_sched *s, MPI_Count count, const cr_dtype *dt);
/* Marks the build failed with `err` (an algorithm's own check). */
void cr_sched_fail(cr_sched *s, int err);
/* A call step found that the processes' counts differ (an MPI_ERR_TRUNCATE `err`, as a short
 * message tells a message step): the call's result unless an error came first. The step still
 * finishes its work and the schedule goes on (sched.c), and from now on the schedule's err is
 * set, so what it leaves for others says so (empty sends; node.h: marked contributions). */
void cr_sched_note_mismatch(cr_sched *s, int err);

/* Runs a schedule to completion (blocking calls); returns its error code. */
int cr_sched_run(cr_sched *s);
/* Advances a running schedule as far as it goes without waiting; true when it is complete. */
bool cr_sched_advance(cr_sched *s);

/* Nonblocking and persistent collectives: a heap schedule inside a request. */
cr_sched *cr_sched_new(cr_comm *comm);
/* Hands the built schedule to a new request; starts it unless `persistent`. On error the
 * schedule is freed. */
int cr_sched_post(cr_sched *s, bool persistent, MPI_Request *request);
/* Frees a schedule that was never posted. */
void cr_sched_free(cr_sched *s);
/* Keeps a derived datatype alive while the schedule lives (the user may free it meanwhile);
 * predefined types need nothing. False when out of memory. */
bool cr_sched_hold_dtype(cr_sched *s, cr_dtype *dt);

#endif
