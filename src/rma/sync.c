/* sync.c: one-sided synchronisation: fence, passive target (lock, unlock, lock_all,
 * unlock_all, flush and sync) and general active target (post, start, complete, wait, test).
 * Operations complete when their call returns (rma.h), so an epoch's end orders memory and
 * tells the other side; nothing is left to drain. The words they use are in the window's
 * shared control block, one set per process (cr_win_ctl). */
#include "rma.h"

#include "coll/coll.h"
#include "cr_impl.h"
#include "req/request.h"
#include "xport/xport.h"

#include <stdlib.h>

void cr_win_wait(bool (*ready)(void *), void *arg)
{
    cr_progress_wait_until(ready, arg);
}

static void memory_fence(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}

static int check_assert(int assert, int allowed, const char *call)
{
    return assert & ~allowed ? cr_err(MPI_ERR_ASSERT, "assert=%#x has bits %s does not take", assert, call)
                             : MPI_SUCCESS;
}

static int check_rank(const cr_win *w, int rank)
{
    return rank >= 0 && rank < w->size
               ? MPI_SUCCESS
               : cr_err(MPI_ERR_RANK, "invalid rank=%d: the window has ranks 0..%d or MPI_PROC_NULL", rank,
                        w->size - 1);
}

bool cr_win_epoch_open(const cr_win *w, int target)
{
    if (w->fence_open || w->held[target])
        return true;
    for (int i = 0; w->start_open && i < w->nstart; i++)
        if (w->start_group[i] == target)
            return true;
    return false;
}

int cr_win_check_epoch(const cr_win *w, int target)
{
    if (cr_win_epoch_open(w, target))
        return MPI_SUCCESS;
    return cr_err(MPI_ERR_RMA_SYNC, "no access epoch towards process %d is open: begin one with MPI_Win_fence, "
                                    "MPI_Win_start (naming it), MPI_Win_lock or MPI_Win_lock_all", target);
}

/* The fence's barrier (rma.h): the last process in opens the next generation. */
static bool generation_passed(void *arg)
{
    cr_win *w = arg;
    return atomic_load_explicit(&w->fence->generation, memory_order_acquire) != w->fence_generation;
}

static void fence_barrier(cr_win *w)
{
    cr_win_fence *f = w->fence;
    w->fence_generation = atomic_load_explicit(&f->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&f->arrived, 1, memory_order_acq_rel) == (uint32_t)w->size - 1) {
        atomic_store_explicit(&f->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&f->generation, w->fence_generation + 1, memory_order_release);
        cr_xport_wake_node();
        return;
    }
    if (!generation_passed(w))
        cr_win_wait(generation_passed, w);
}

int cr_mpi_win_fence(int assert, cr_win *win)
{
    int err = check_assert(assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
                           "MPI_Win_fence");
    if (err)
        return err;
    memory_fence();
    /* Everyone's operations of the epoch are done (they completed in their calls, or were
     * applied by the targets reached by message: flushed) before anyone goes on: a barrier,
     * unless the epoch had none and no next one starts. */
    if (!(assert & MPI_MODE_NOPRECEDE) && (err = cr_win_am_flush_all(win)))
        return err;
    if (!((assert & MPI_MODE_NOPRECEDE) && (assert & MPI_MODE_NOSUCCEED))) {
        if (win->spans_nodes)
            err = cr_mpi_barrier(win->comm);
        else
            fence_barrier(win);
        if (err)
            return err;
    }
    memory_fence();
    win->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    win->fence_used = false;
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- passive target */

/* The lock word can be taken now (predicates only: waits test them many times). */
static bool exclusive_free(void *arg)
{
    return atomic_load_explicit((_Atomic uint32_t *)arg, memory_order_relaxed) == 0;
}

static bool shared_free(void *arg)
{
    return !(atomic_load_explicit((_Atomic uint32_t *)arg, memory_order_relaxed) & CR_WIN_WRITER);
}

/* One try at a shared lock: fails only while a writer holds it. */
static bool try_shared(_Atomic uint32_t *lock)
{
    uint32_t v = atomic_load_explicit(lock, memory_order_relaxed);
    while (!(v & CR_WIN_WRITER))
        if (atomic_compare_exchange_weak_explicit(lock, &v, v + 1, memory_order_acquire, memory_order_relaxed))
            return true;
    return false;
}

bool cr_win_lock_try(cr_win *w, int rank, int type)
{
    _Atomic uint32_t *lock = &w->ctl[rank].lock;
    if (type == MPI_LOCK_SHARED)
        return try_shared(lock);
    uint32_t v = 0;
    return atomic_compare_exchange_strong_explicit(lock, &v, CR_WIN_WRITER, memory_order_acquire,
                                                   memory_order_relaxed);
}

void cr_win_lock_release(cr_win *w, int rank, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        atomic_store_explicit(&w->ctl[rank].lock, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(&w->ctl[rank].lock, 1, memory_order_release);
    cr_xport_wake_node(); /* a process waiting for the lock may sleep */
}

static int lock_one(cr_win *w, int rank, int type)
{
    if (w->am[rank]) { /* the target takes it for us, in its progress */
        bool granted;
        int err = cr_win_am_lock(w, rank, type, false, &granted);
        if (!err)
            cr_win_set_held(w, rank, type);
        return err;
    }
    _Atomic uint32_t *lock = &w->ctl[rank].lock;
    for (;;) {
        uint32_t v = atomic_load_explicit(lock, memory_order_relaxed);
        if (type == MPI_LOCK_EXCLUSIVE) {
            if (v == 0 && atomic_compare_exchange_weak_explicit(lock, &v, CR_WIN_WRITER, memory_order_acquire,
                                                                memory_order_relaxed))
                break;
            cr_win_wait(exclusive_free, lock);
        } else {
            if (!(v & CR_WIN_WRITER) &&
                atomic_compare_exchange_weak_explicit(lock, &v, v + 1, memory_order_acquire, memory_order_relaxed))
                break;
            if (v & CR_WIN_WRITER)
                cr_win_wait(shared_free, lock);
        }
    }
    cr_win_set_held(w, rank, type);
    return MPI_SUCCESS;
}

/* Ends the epoch towards `rank`: a target reached by message has applied its operations
 * first (unlocking there answers after them; without a lock, a flush does). */
static int unlock_one(cr_win *w, int rank)
{
    int held = w->held[rank], err = MPI_SUCCESS;
    cr_win_set_held(w, rank, 0);
    if (w->am[rank])
        err = held > 0 ? cr_win_am_unlock(w, rank, held) : cr_win_am_flush(w, rank);
    else if (held > 0)
        cr_win_lock_release(w, rank, held);
    return err;
}

/* MPI_MODE_NOCHECK: the caller promises no conflicting lock, so none is taken; -1 marks it. */
enum { HELD_UNCHECKED = -1 };

/* A passive-target epoch cannot begin inside an active-target one: inside MPI_Win_start's, or
 * a fence's that operations used. A fence epoch no operation used is one a program leaves by
 * locking (MPI_Win_fence(0) before switching to locks, as MPICH allows): it ends there. */
static int no_active_epoch(cr_win *w, const char *call)
{
    if (w->start_open)
        return cr_err(MPI_ERR_RMA_SYNC, "%s inside the access epoch of MPI_Win_start: end it with MPI_Win_complete "
                                        "first", call);
    if (w->fence_open && w->fence_used)
        return cr_err(MPI_ERR_RMA_SYNC, "%s inside a fence epoch with operations: end it with MPI_Win_fence "
                                        "(MPI_MODE_NOSUCCEED) first", call);
    w->fence_open = false;
    return MPI_SUCCESS;
}

int cr_mpi_win_lock(int lock_type, int rank, int assert, cr_win *win)
{
    int err = check_assert(assert, MPI_MODE_NOCHECK, "MPI_Win_lock");
    if (err || rank == MPI_PROC_NULL || (err = check_rank(win, rank))) /* MPI_PROC_NULL: nothing to do */
        return err;
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return cr_err(MPI_ERR_LOCKTYPE, "invalid lock_type=%d: MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED", lock_type);
    if (win->held[rank])
        return cr_err(MPI_ERR_RMA_SYNC, "this process already holds a lock on process %d of the window", rank);
    if (win->hints.no_locks)
        return cr_err(MPI_ERR_RMA_SYNC, "the window was made with the info hint no_locks=true: it takes no locks");
    if ((err = no_active_epoch(win, "MPI_Win_lock")))
        return err;
    if (assert & MPI_MODE_NOCHECK)
        cr_win_set_held(win, rank, HELD_UNCHECKED);
    else if ((err = lock_one(win, rank, lock_type)))
        return err;
    memory_fence();
    return MPI_SUCCESS;
}

int cr_mpi_win_unlock(int rank, cr_win *win)
{
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int err = check_rank(win, rank);
    if (err)
        return err;
    if (!win->held[rank])
        return cr_err(MPI_ERR_RMA_SYNC, "this process holds no lock on process %d of the window", rank);
    memory_fence();
    return unlock_one(win, rank);
}

int cr_mpi_win_lock_all(int assert, cr_win *win)
{
    int err = check_assert(assert, MPI_MODE_NOCHECK, "MPI_Win_lock_all");
    if (err)
        return err;
    for (int r = 0; r < win->size; r++)
        if (win->held[r])
            return cr_err(MPI_ERR_RMA_SYNC, "this process already holds a lock on process %d of the window", r);
    if (win->hints.no_locks)
        return cr_err(MPI_ERR_RMA_SYNC, "the window was made with the info hint no_locks=true: it takes no locks");
    if ((err = no_active_epoch(win, "MPI_Win_lock_all")))
        return err;
    if (assert & MPI_MODE_NOCHECK) {
        for (int r = 0; r < win->size; r++)
            cr_win_set_held(win, r, HELD_UNCHECKED);
        memory_fence();
        return MPI_SUCCESS;
    }
    /* All the shared locks, or none: holding some while waiting for the next could close a
     * cycle with a process that holds an exclusive lock and waits for one of ours. A target
     * reached by message answers a try at once; one that refused is then waited for holding
     * nothing else, and kept when it grants. */
    for (;;) {
        int r = 0;
        for (; r < win->size; r++) {
            bool granted = true;
            if (win->held[r])
                continue;
            if (win->am[r] ? (err = cr_win_am_lock(win, r, MPI_LOCK_SHARED, true, &granted)) != 0
                           : !(granted = try_shared(&win->ctl[r].lock)))
                granted = false;
            if (err)
                return err;
            if (!granted)
                break;
            cr_win_set_held(win, r, MPI_LOCK_SHARED);
        }
        if (r == win->size)
            break;
        for (int k = 0; k < win->size; k++)
            if (win->held[k] && (err = unlock_one(win, k)))
                return err;
        if (win->am[r]) {
            if ((err = lock_one(win, r, MPI_LOCK_SHARED)))
                return err;
        } else {
            cr_win_wait(shared_free, &win->ctl[r].lock);
        }
    }
    memory_fence();
    return MPI_SUCCESS;
}

int cr_mpi_win_unlock_all(cr_win *win)
{
    for (int r = 0; r < win->size; r++)
        if (!win->held[r])
            return cr_err(MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all (no lock on process %d)", r);
    memory_fence();
    int err = MPI_SUCCESS;
    for (int r = 0; r < win->size; r++) {
        int e = unlock_one(win, r);
        err = err ? err : e;
    }
    return err;
}

/* Operations are complete when their calls return: flushes only order memory. What follows a
 * flush (a store that tells another process, a message) must come after the operations'
 * stores and loads: a release fence (free on x86, whose stores are seen in order). MPI_Win_sync
 * keeps the full fence: programs order their own loads and stores on shared windows with it. */
static void release_fence(void)
{
    atomic_thread_fence(memory_order_release);
}

/* Flushes belong to passive-target epochs (MPI-4.1 section 12.5.4): towards `rank`, or any.
 * `remote`: the operations must be complete at the target too (a flush, not a flush_local):
 * targets reached by message answer after them (local completion is already there, operations
 * having completed at the origin in their calls). */
static int flush(cr_win *win, int rank, bool remote)
{
    int err = rank == MPI_PROC_NULL ? MPI_SUCCESS : check_rank(win, rank);
    if (!err && rank != MPI_PROC_NULL && !win->held[rank])
        err = cr_err(MPI_ERR_RMA_SYNC, "no passive-target epoch towards process %d is open: flushes need "
                                       "MPI_Win_lock or MPI_Win_lock_all", rank);
    cr_win_am_serve(win);
    if (!err)
        release_fence();
    if (!err && rank != MPI_PROC_NULL && win->am[rank])
        err = remote ? cr_win_am_flush(win, rank) : cr_win_am_answers(win, rank);
    return err;
}

static int flush_all(cr_win *win, bool remote)
{
    int r = 0;
    while (r < win->size && !win->held[r])
        r++;
    if (r == win->size)
        return cr_err(MPI_ERR_RMA_SYNC, "no passive-target epoch is open: flushes need MPI_Win_lock or "
                                        "MPI_Win_lock_all");
    cr_win_am_serve(win);
    release_fence();
    return remote ? cr_win_am_flush_all(win) : cr_win_am_answers(win, -1);
}

/* The common case, kept short (the quick entry point's part, override key `quick`): a locked
 * target whose memory is mapped here, on a window no process reaches by message (nothing to
 * serve, nothing to wait for). */
CR_ALWAYS_INLINE bool cr_mpi_win_flush_quick(int rank, cr_win *win)
{
    if ((unsigned)rank < (unsigned)win->size && win->quick[rank].on) {
        release_fence();
        return true;
    }
    return false;
}

int cr_mpi_win_flush(int rank, cr_win *win)
{
    if (cr_mpi_win_flush_quick(rank, win))
        return MPI_SUCCESS;
    return flush(win, rank, true);
}

int cr_mpi_win_flush_local(int rank, cr_win *win)
{
    return flush(win, rank, false);
}

int cr_mpi_win_flush_all(cr_win *win)
{
    return flush_all(win, true);
}

int cr_mpi_win_flush_local_all(cr_win *win)
{
    return flush_all(win, false);
}

int cr_mpi_win_sync(cr_win *win)
{
    cr_win_am_serve(win);
    memory_fence();
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- general active target */

/* The window ranks of a group's members, into out; MPI_ERR_GROUP for one not in the window. */
static int group_ranks(cr_win *w, const cr_group *g, int *out)
{
    for (int i = 0; i < g->size; i++) {
        int wr = g->world_ranks ? g->world_ranks[i] : i, r = 0;
        while (r < w->size && cr_comm_world_rank(w->comm, r) != wr)
            r++;
        if (r == w->size)
            return cr_err(MPI_ERR_GROUP, "rank %d of the group is not a process of the window", i);
        out[i] = r;
    }
    return MPI_SUCCESS;
}

int cr_mpi_win_post(cr_group *group, int assert, cr_win *win)
{
    int err = check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, "MPI_Win_post");
    if (!err && win->post_open)
        err = cr_err(MPI_ERR_RMA_SYNC, "an exposure epoch from MPI_Win_post is already open: MPI_Win_wait first");
    if (err || (err = group_ranks(win, group, win->post_group)))
        return err;
    win->npost = group->size;
    win->post_open = true;
    memory_fence();
    /* Each origin of the group learns this process's memory is ready for its access epoch. */
    size_t p = (size_t)win->size;
    for (int i = 0; i < group->size; i++) {
        int o = win->post_group[i];
        if (win->am[o]) {
            if ((err = cr_win_am_post(win, o)))
                return err;
        } else {
            atomic_fetch_add_explicit(&win->posted[(size_t)o * p + (size_t)win->rank], 1, memory_order_release);
        }
    }
    cr_xport_wake_node();
    return MPI_SUCCESS;
}

/* A pair counter has passed what this process has used of it (modulo 2^32). */
typedef struct counter_wait {
    _Atomic uint32_t *counter;
    uint32_t seen;
} counter_wait;

static bool counter_passed(void *arg)
{
    counter_wait *c = arg;
    return (int32_t)(atomic_load_explicit(c->counter, memory_order_acquire) - c->seen) > 0;
}

static void counter_take(_Atomic uint32_t *counter, uint32_t *seen)
{
    counter_wait c = {counter, *seen};
    if (!counter_passed(&c))
        cr_win_wait(counter_passed, &c);
    (*seen)++;
}

int cr_mpi_win_start(cr_group *group, int assert, cr_win *win)
{
    int err = check_assert(assert, MPI_MODE_NOCHECK, "MPI_Win_start");
    if (!err && win->start_open)
        err = cr_err(MPI_ERR_RMA_SYNC, "an access epoch from MPI_Win_start is already open: MPI_Win_complete first");
    if (err || (err = group_ranks(win, group, win->start_group)))
        return err;
    win->nstart = group->size;
    win->start_open = true;
    /* Every target of the group has posted for this epoch (a post of its own, never another
     * target's), unless the caller promises it has: then its post is used when it comes. */
    size_t p = (size_t)win->size, me = (size_t)win->rank;
    for (int i = 0; i < group->size; i++) {
        int t = win->start_group[i];
        if (assert & MPI_MODE_NOCHECK)
            win->posts_seen[t]++; /* its post is there, or comes: this epoch uses it either way */
        else
            counter_take(&win->posted[me * p + (size_t)t], &win->posts_seen[t]);
    }
    memory_fence();
    return MPI_SUCCESS;
}

int cr_mpi_win_complete(cr_win *win)
{
    if (!win->start_open)
        return cr_err(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start: no access epoch is open");
    win->start_open = false;
    memory_fence();
    size_t p = (size_t)win->size, me = (size_t)win->rank;
    int err = cr_win_am_answers(win, -1); /* the epoch's gets are in */
    for (int i = 0; i < win->nstart && !err; i++) {
        int t = win->start_group[i];
        if (win->am[t]) /* counted there after the operations before it */
            err = cr_win_am_complete(win, t);
        else
            atomic_fetch_add_explicit(&win->completed[(size_t)t * p + me], 1, memory_order_release);
    }
    cr_xport_wake_node();
    win->nstart = 0;
    return err;
}

/* Whether origin o of the exposure epoch has completed towards this process. */
static counter_wait completion_of(cr_win *win, int o)
{
    size_t p = (size_t)win->size, me = (size_t)win->rank;
    return (counter_wait){&win->completed[me * p + (size_t)o], win->completes_seen[o]};
}

int cr_mpi_win_wait(cr_win *win)
{
    if (!win->post_open)
        return cr_err(MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post: no exposure epoch is open");
    win->post_open = false;
    for (int i = 0; i < win->npost; i++) {
        int o = win->post_group[i];
        counter_take(&win->completed[(size_t)win->rank * (size_t)win->size + (size_t)o], &win->completes_seen[o]);
    }
    win->npost = 0;
    memory_fence();
    return MPI_SUCCESS;
}

int cr_mpi_win_test(cr_win *win, int *flag)
{
    if (!win->post_open)
        return cr_err(MPI_ERR_RMA_SYNC, "MPI_Win_test without MPI_Win_post: no exposure epoch is open");
    for (int i = 0; i < win->npost; i++) {
        counter_wait c = completion_of(win, win->post_group[i]);
        if (!counter_passed(&c)) {
            cr_progress_poll();
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return cr_mpi_win_wait(win); /* every origin has completed: this does not wait */
}
