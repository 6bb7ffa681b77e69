/* thread.h: MPI_THREAD_MULTIPLE: the library's critical section, and how threads that wait in
 * MPI calls share the progress engine and the process's one sleep (doc/design/threads.md).
 *
 * Invariants:
 *   - `cr_thread_multiple` is decided once, by MPI_Init_thread or a session asking for
 *     MPI_THREAD_MULTIPLE, before any second thread may call MPI; it never goes back to false.
 *     Below MPI_THREAD_MULTIPLE every function here returns at its first test of it: no atomic
 *     operation and no lock is on the path of a program that does not use threads;
 *   - every MPI entry point holds the critical section while it runs (the generated bindings
 *     enter and leave it), so every structure of the library is read and written by one
 *     thread at a time; it is recursive per thread (an error handler, a user reduction or an
 *     attribute callback may call MPI again). The exception: the quick entry points of small
 *     sends run outside it, and touch only what a cr_spin of their destination guards (which
 *     code inside the section takes too), atomics, and what is read-only while they run;
 *   - a thread that waits inside a call lets go of the section between progress rounds and
 *     while it sleeps, so other threads' calls run meanwhile; whatever it holds across that
 *     gap lives on its own stack or in objects the user may not touch while the call runs;
 *   - one waiting thread at a time (the poller) drives the progress engine and sleeps on the
 *     transport's doorbell; the others sleep each on its own futex word and are woken by
 *     whoever completes what they wait for (cr_thread_wait_event). */
#ifndef CR_THREAD_H
#define CR_THREAD_H

#include "base.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern bool cr_thread_multiple;

/* Turns thread safety on (MPI_THREAD_MULTIPLE granted). Called before other threads use MPI. */
void cr_thread_enable(void);

void cr_cs_lock_slow(void);
void cr_cs_unlock_slow(void);

/* Enters the critical section if the process runs at MPI_THREAD_MULTIPLE; the result says
 * whether it did, and goes to the matching cr_cs_exit (so a call that turns threads on half
 * way, MPI_Init_thread, leaves as it came in). */
static inline bool cr_cs_enter(void)
{
    if (CR_LIKELY(!cr_thread_multiple))
        return false;
    cr_cs_lock_slow();
    return true;
}

static inline void cr_cs_exit(bool entered)
{
    if (CR_UNLIKELY(entered))
        cr_cs_unlock_slow();
}

/* Lets threads queued for the section go first, if any are, and takes it back. Waits call it
 * between their progress rounds. */
void cr_cs_yield(void);

/* Leaves the section entirely (however deeply this thread holds it) for a blocking system
 * call, and returns the depth to give back to cr_cs_resume. 0, and nothing done, when not
 * multithreaded or not held. */
int cr_cs_suspend(void);
void cr_cs_resume(int depth);

/* Something completed (a request, a round of progress that delivered): threads that sleep
 * waiting for something are woken when the section is next left. A plain store, made under
 * the section (and harmless without threads), so completion paths need no test of the level. */
extern bool cr_thread_pending;
static inline void cr_thread_event(void)
{
    cr_thread_pending = true;
}

/* The wait of a thread that is not the poller: sleeps (outside the section) until some
 * thread reports an event that may concern it, or `timeout_us` passes. A `pure` condition
 * (one that only reads: a request's flag, a wait set's count; or that moves only its own state
 * forward, as Waitall's cursor does) is evaluated by the thread that
 * reports the event, under the section, and its sleeper woken only when it holds: a completion
 * costs no system call when nobody waits for it. Other conditions (which act: advance a
 * schedule, take a lock) are woken at every event to look for themselves. */
void cr_thread_wait_event(bool (*ready)(void *), void *arg, bool pure, unsigned timeout_us);

/* The poller's role (see the invariants), claimed and dropped under the section: claiming
 * answers CR_POLLER_MINE when this thread took it, CR_POLLER_ALREADY when it had it (a wait
 * nested in a callback of its own wait), CR_POLLER_OTHER when another thread has it. Its
 * condition is kept, so that a thread that completes something rings the doorbell the poller
 * sleeps on only when that condition may hold (as for sleepers: pure ones are evaluated). */
enum { CR_POLLER_OTHER, CR_POLLER_MINE, CR_POLLER_ALREADY };
int cr_thread_poller_claim(bool (*ready)(void *), void *arg, bool pure);
void cr_thread_poller_drop(void);

/* Under the section: other threads of this process are in MPI calls too (asleep for an
 * event, or queued for the section to start or go on with a call); false when the section is
 * not held (a wait at exit, with no other thread left). The poller then gives its core away sooner: the thread it
 * waits for may be one of them, or share its core (doc/design/threads.md). */
bool cr_thread_crowded(void);

/* A lock for a small piece of state that threads reach outside the critical section too (at
 * MPI_THREAD_MULTIPLE only: point-to-point's per-destination send state, doc/design/threads.md).
 * Held for a frame's copy at most, never across a call that may take the section, another
 * cr_spin or user code; so a thread that holds the section may take one, and one that holds
 * one never waits for the section. A waiter spins a little, then yields its core: with more
 * threads than cores, the holder may be waiting for one. A line of its own each. */
typedef struct cr_spin {
    _Alignas(64) atomic_uint held;
} cr_spin;

void cr_spin_lock_slow(cr_spin *s);

static inline void cr_spin_lock(cr_spin *s)
{
    if (CR_LIKELY(!atomic_exchange_explicit(&s->held, 1, memory_order_acquire)))
        return;
    cr_spin_lock_slow(s);
}

static inline void cr_spin_unlock(cr_spin *s)
{
    atomic_store_explicit(&s->held, 0, memory_order_release);
}

/* Registered by the transport: wakes the poller if it sleeps on the doorbell (called when an
 * event was reported and the section is left). */
void cr_thread_set_doorbell(void (*ring_self)(void));

#endif
