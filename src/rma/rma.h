/* rma.h: one-sided communication: windows (win.c), their operations (ops.c) and
 * synchronisation (sync.c). See doc/design/rma.md.
 *
 * On one node, memory is memory. Windows allocated by Courier (MPI_Win_allocate,
 * MPI_Win_allocate_shared) live in one node-shared segment, mapped by every process of the
 * window, so a put is a copy into the target's part and a get a copy out of it. Windows over
 * the user's memory (MPI_Win_create, MPI_Win_create_dynamic) are reached by single copy
 * (cr_xport_read/cr_xport_write, cross-memory attach). Every operation is complete when its
 * call returns, at origin and target, which the standard allows: flushes and the end of epochs
 * then only order memory. Accumulates on one target are atomic with respect to each other
 * under that target's lock word in a small shared control block (one per process), which also
 * holds the passive-target lock and the counters of post/start/complete/wait.
 *
 * Invariants:
 *   - `comm` is a duplicate of the creating communicator, held by the window: its collectives
 *     (fence, free) never meet the user's;
 *   - base_of[r] is where process r's memory is in this process's address space when
 *     direct[r]; NULL when am[r] (reached by message, am.c); else its address in r's (reached
 *     by single copy);
 *   - each node has its own segment, with the memory of that node's processes only;
 *   - dynamic windows have base 0 everywhere: a displacement is an address (MPI_Get_address). */
#ifndef CR_RMA_H
#define CR_RMA_H

#include "comm/comm.h"
#include "coll/op.h"
#include "core/attr.h"
#include "dt/dtype.h"
#include "req/request.h"

#include <stdatomic.h>

/* A process's control words, shared with the window's other processes: what others change
 * (its locks) on one cache line, what it changes itself on another. */
typedef struct cr_win_ctl {
    _Atomic uint32_t lock; /* passive target: CR_WIN_WRITER, or the number of readers */
    _Atomic uint32_t acc;  /* CR_WIN_WRITER while an exclusive accumulate runs on this process's memory */
    char pad[56];
    _Alignas(64) _Atomic uint32_t atomic_on; /* 1 + the process whose memory this one is changing by a
                                                CPU atomic (ops.c), 0 when none */
    char pad2[60];
} cr_win_ctl;

#define CR_WIN_WRITER 0x80000000u

/* The window's fence: a barrier in its segment (a cache line each for the count of processes
 * in and the number of fences completed, compared for inequality only, so it may wrap). */
typedef struct cr_win_fence {
    _Alignas(64) _Atomic uint32_t arrived;
    _Alignas(64) _Atomic uint32_t generation;
} cr_win_fence;

/* The window's info hints (MPI-4.1 section 12.2.1), as MPI_Win_get_info reports them. */
typedef struct cr_win_hints {
    bool no_locks, same_size, same_disp_unit, alloc_shared_noncontig;
    char accumulate_ordering[64];
    char accumulate_ops[32];
} cr_win_hints;

typedef struct cr_win {
    cr_errobj eo;
    cr_comm *comm;
    int flavor; /* MPI_WIN_FLAVOR_* */
    int rank, size;
    void *base; /* this process's memory */
    MPI_Aint bytes;
    int disp_unit;
    char **base_of; /* per process (see above) */
    MPI_Aint *bytes_of;
    int *unit_of;
    bool *direct;
    bool *am;       /* per process: reached by message (am.c), not memory: on another node, or user memory
                       without cross-memory attach; base_of[r] is then NULL */
    /* per process reached by message: operations sent to it, and of those, how many a flush (or
     * unlock, or complete) has seen applied (am.c); counted so that threads sharing the window
     * never take one's flush for another's */
    _Atomic uint64_t *am_sent, *am_flushed;
    _Atomic uint32_t am_seq; /* tags of the answers this process waits for, one per request */
    struct cr_win_answer *am_waiting; /* answers of gets and fetching operations on their way */
    int am_nwaiting, am_cap_waiting;
    bool am_serving; /* some process reaches this one's memory by message: its progress serves them */
    bool spans_nodes; /* processes on several nodes: the fence is the communicator's barrier */
    struct cr_win_am *am_in; /* the target side of messages (am.c), while am_serving */
    void *seg; /* the mapped node segment: control block, then allocated memory */
    size_t seg_bytes;
    cr_win_fence *fence; /* at the start of the segment */
    cr_win_ctl *ctl;     /* ctl[r]: process r's control words, after the fence */
    /* General active target, pair by pair (a post of one target never stands in for another's):
     * posted[o * size + t] counts t's MPI_Win_post calls that named origin o, completed[t * size
     * + o] o's MPI_Win_complete calls towards t; both in the segment, compared modulo 2^32. */
    _Atomic uint32_t *posted, *completed;
    uint32_t *posts_seen;     /* per target: the posts this origin's epochs have used */
    uint32_t *completes_seen; /* per origin: the completes this target's epochs have used */
    int *held;       /* passive target: the lock this process holds at each process (0 for none);
                        changed only through cr_win_set_held, which keeps quick[].on */
    /* Per process, what the quick path of put and get reads (ops.c), on one line: `on` while
     * held[r] is set, direct[r], the window is not dynamic and no process reaches this one by
     * message; base, bytes and unit are base_of[r], bytes_of[r] and unit_of[r]. */
    struct cr_win_quick {
        char *base;
        uint64_t bytes;
        uint32_t unit;
        bool on;
    } *quick;
    int *start_group, nstart; /* the access epoch of MPI_Win_start: its targets */
    int *post_group, npost;   /* the exposure epoch of MPI_Win_post: its origins */
    uint32_t fence_generation; /* the fence generation this process waits to see pass */
    bool fence_open;          /* a fence began an epoch (its assertion did not say MPI_MODE_NOSUCCEED) */
    bool fence_used;          /* an operation was issued in it: then only a fence may end it */
    bool start_open, post_open; /* MPI_Win_start ... complete, MPI_Win_post ... wait/test */
    cr_win_hints hints;
    cr_attr *attrs;
    char name[MPI_MAX_OBJECT_NAME];
} cr_win;

static inline cr_win *cr_win_get(MPI_Win h)
{
    return (cr_win *)cr_handle_get((uintptr_t)h, CR_KIND_WIN);
}

/* Where displacement `disp` of process `target` is (see base_of), and MPI_ERR_RMA_RANGE when
 * `span` bytes from there leave its window. */
int cr_win_target(cr_win *w, int target, MPI_Aint disp, MPI_Aint lo, MPI_Aint span, char **at);
/* MPI_ERR_RMA_SYNC unless an access epoch towards `target` is open (fence, start, lock). */
int cr_win_check_epoch(const cr_win *w, int target);
/* The same question, without raising anything. */
bool cr_win_epoch_open(const cr_win *w, int target);

/* An operation towards `target` is issued in its open epoch: if that is a fence's, the fence
 * epoch is in use (a lock can no longer take over from it, as it can from an unused one). */
static inline void cr_win_epoch_use(cr_win *w, int target)
{
    if (w->fence_open && !w->held[target])
        w->fence_used = true;
}
/* Sets the lock this process holds at `target` (0: none), and with it quick[target].on. */
static inline void cr_win_set_held(cr_win *w, int target, int lock)
{
    w->held[target] = lock;
    w->quick[target].on = lock && w->direct[target] && !w->am_serving && w->flavor != MPI_WIN_FLAVOR_DYNAMIC;
}
/* Waits, making progress, until ready(arg). */
void cr_win_wait(bool (*ready)(void *), void *arg);

/* ----------------------------------------------------------------- operations by message (am.c)
 *
 * A target whose memory this process cannot reach (another node; user memory without
 * cross-memory attach) is sent each operation as a message on the window's communicator; the
 * target's progress applies it to its own memory, so everything that is atomic on the target's
 * node (its accumulate words, its lock word) stays so. Requests from one origin are applied in
 * the order they were sent; so a flush, an unlock or a complete, answered (or counted) after the
 * operations before it, finds them applied. Puts and accumulates complete at the origin when
 * their message is sent (its data copied or delivered); gets and fetching operations return
 * once their request is sent, their answer received straight into the caller's buffer by the
 * next synchronisation towards that target (or at once, for the request forms). */

/* Where process r's displacement `off` (bytes) is, for a target reached by message: off plus this
 * bias, a pointer never dereferenced here (the datatype code that lays out the target's runs
 * works on pointers; the runs travel as offsets from the target's base, the bias taken off). It
 * keeps that arithmetic away from the null pointer. */
#define CR_WIN_AM_BIAS ((uintptr_t)1 << 46)

/* A run of target memory: an offset from the target's base (an address, in dynamic windows). */
typedef struct cr_win_run {
    uint64_t off, len;
} cr_win_run;

/* Every one-sided call on a window some process reaches by message serves those messages: a
 * process that spins on its own memory (a mutex by compare-and-swap on itself) lets the others
 * in (one round of progress). */
static inline void cr_win_am_serve(const cr_win *w)
{
    if (w->am_serving)
        cr_progress();
}
/* An answer on its way: a receive into the caller's buffer (am.c). */
typedef struct cr_win_answer {
    struct cr_request *r;
    int target;
    uint64_t upto; /* operations sent to target before it (am_sent): applied once it is in */
} cr_win_answer;

int cr_win_am_open(cr_win *w);  /* collective: after the window's parts are known */
void cr_win_am_close(cr_win *w); /* after the barrier of MPI_Win_free */
int cr_win_am_put(cr_win *w, int target, char *at, const void *obuf, MPI_Count ocount, cr_dtype *odt,
                  MPI_Count tcount, cr_dtype *tdt);
int cr_win_am_get(cr_win *w, int target, char *at, void *obuf, MPI_Count ocount, cr_dtype *odt, MPI_Count tcount,
                  cr_dtype *tdt);
/* The accumulate family: origin data (NULL for MPI_NO_OP), result (rdt NULL: no fetch),
 * compare (compare-and-swap: one element, op unused). */
int cr_win_am_accumulate(cr_win *w, int target, char *at, const void *obuf, MPI_Count ocount, cr_dtype *odt,
                         void *rbuf, MPI_Count rcount, cr_dtype *rdt, MPI_Count tcount, cr_dtype *tdt, cr_op *op,
                         const void *compare);
/* Passive target: a lock taken at the target by its progress (`try`: answered at once, *granted
 * false when it is not free), released after the operations before it. */
int cr_win_am_lock(cr_win *w, int target, int type, bool try, bool *granted);
int cr_win_am_unlock(cr_win *w, int target, int type);
/* Waits for the answers of gets and fetching operations towards `target` (-1: all), which
 * return before their answer comes: their buffers are filled (local completion). */
int cr_win_am_answers(cr_win *w, int target);
/* Every operation sent to `target` (all: every target reached by message) is applied, and its
 * answers are in. */
int cr_win_am_flush(cr_win *w, int target);
int cr_win_am_flush_all(cr_win *w);
/* General active target: counts a post at `origin`, or a complete at `target`, by message. */
int cr_win_am_post(cr_win *w, int origin);
int cr_win_am_complete(cr_win *w, int target);

/* sync.c: one try at process `rank`'s lock word (`type`: MPI_LOCK_*), and its release. */
bool cr_win_lock_try(cr_win *w, int rank, int type);
void cr_win_lock_release(cr_win *w, int rank, int type);

/* ops.c: what the target's progress does with an accumulate, get_accumulate or
 * compare-and-swap sent by message: on this process's own memory at `runs` (packed order; n
 * bytes in all), under its exclusive accumulate word, taken without waiting (CR_WIN_BUSY). `in`: the origin data (NULL for
 * MPI_NO_OP); `old`: gets the data as it was (NULL: no fetch); `compare`: compare-and-swap. */
enum { CR_WIN_BUSY = -1 }; /* not an MPI error: the word is taken, try again in a later round */
int cr_win_apply_accumulate(cr_win *w, const cr_win_run *runs, uint64_t nruns, uint64_t n, const void *in,
                            void *old, cr_op *op, cr_dtype *leaf, const void *compare);
/* This process's address of a run's offset. */
static inline char *cr_win_run_at(const cr_win *w, uint64_t off)
{
    return (char *)(uintptr_t)((uintptr_t)w->base + off);
}

#endif
