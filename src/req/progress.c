/* progress.c: the progress engine. One round polls the transports (which deliver frames to
 * pt2pt) and runs the registered hooks (sends waiting for ring space, ...). A waiting process
 * spins on rounds, yields its core now and then, and, when processes outnumber cores, sleeps
 * until a peer sends it something: with more ranks than cores, a spinning rank steals the time
 * the rank it waits for needs. */
#include "core/config.h"
#include "core/thread.h"
#include "request.h"
#include "xport/xport.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static int64_t spin_polls, sleep_spin_polls, yields, crowd_polls;
CR_TUNABLE_EX(spin_polls, COURIER_SPIN_POLLS, CR_TUNE_INT, "500", NULL, 1, 100000000,
              "empty progress rounds a waiting process spins before it yields its core, when every process has a core");
CR_TUNABLE_EX(sleep_spin_polls, COURIER_SLEEP_SPIN_POLLS, CR_TUNE_INT, "10", NULL, 1, 100000000,
              "the same when processes outnumber cores (sleep mode, see COURIER_WAIT): spinning then only steals "
              "the core from the process being waited for");
CR_TUNABLE_EX(yields, COURIER_YIELDS, CR_TUNE_INT, "4", NULL, 0, 1000000,
              "in sleep mode, how many times a waiting process yields its core before it sleeps");
CR_TUNABLE_EX(crowd_polls, COURIER_THREAD_SPIN_POLLS, CR_TUNE_INT, "10", NULL, 1, 100000000,
              "at MPI_THREAD_MULTIPLE, empty progress rounds a waiting thread spins before it yields its core "
              "when other threads of its process wait in MPI calls too (instead of COURIER_SPIN_POLLS)");

/* The hooks, as many as the layers register (a growing array: the round walks it in order). */
static cr_progress_hook **hooks;
static int nhooks, hooks_cap;

int cr_progress_add_hook(cr_progress_hook *hook)
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == hook)
            return 0;
    if (nhooks == hooks_cap) {
        int cap = hooks_cap ? 2 * hooks_cap : 8;
        cr_progress_hook **grown = realloc(hooks, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        hooks = grown;
        hooks_cap = cap;
    }
    hooks[nhooks++] = hook;
    return 0;
}

void cr_progress_remove_hook(cr_progress_hook *hook)
{
    for (int i = 0; i < nhooks; i++) {
        if (hooks[i] == hook) {
            memmove(&hooks[i], &hooks[i + 1], (size_t)(nhooks - i - 1) * sizeof *hooks);
            nhooks--;
            return;
        }
    }
}

int cr_progress(void)
{
    int got = cr_xport_poll();
    for (int i = 0; i < nhooks; i++)
        got += hooks[i]();
    return got;
}

/* Gives the core away; at MPI_THREAD_MULTIPLE, the critical section too, meanwhile. */
static void yield_core(void)
{
    int held = cr_cs_suspend();
    sched_yield();
    cr_cs_resume(held);
}

int cr_progress_poll(void)
{
    int got = cr_progress();
    if (got)
        cr_thread_event();
    else if (cr_xport_should_sleep())
        yield_core();
    return got;
}

/* One idle step of a wait: `idle` counts empty rounds since the last event. */
static inline void idle_step(unsigned *idle, bool (*ready)(void *), void *arg, bool crowded)
{
    unsigned n = ++*idle;
    if (!cr_xport_should_sleep()) {
        /* With other threads of this process in MPI calls too, the thread this one waits
         * for may share its core: give it away early (after that, every 256 rounds alike). */
        unsigned spin = crowded ? (unsigned)crowd_polls : (unsigned)spin_polls;
        if (n >= spin && (n - spin) % 256 == 0) {
            yield_core();
            cr_thread_event(); /* other waiting threads look at their conditions now and then */
        }
        /* Counted from the uncrowded threshold, which does not move while the crowd comes
         * and goes: a peer that died would leave this wait spinning for ever. */
        if (n >= (unsigned)spin_polls && (n - (unsigned)spin_polls) % 65536 == 0)
            cr_xport_watch();
        return;
    }
    unsigned spin = (unsigned)sleep_spin_polls;
    if (n < spin)
        return;
    if (n < spin + (unsigned)yields) {
        yield_core();
        return;
    }
    cr_xport_sleep(ready, arg);
    /* What woke us may be what another waiting thread waits for (a peer's write to shared
     * memory that no frame announces): they look again. */
    cr_thread_event();
    *idle = spin + (unsigned)yields; /* woken with nothing to do: sleep again at once */
}

static bool flag_set(void *flag)
{
    return *(volatile int *)flag != 0;
}

/* At MPI_THREAD_MULTIPLE: one waiting thread polls (and sleeps on the doorbell), letting
 * queued threads into the section between its rounds; the others sleep until an event, then
 * look at their own conditions, and one of them takes the role over when the poller leaves.
 * The event futex's timeout is a safety net only. */
__attribute__((noinline, cold)) static void wait_threads(bool (*ready)(void *), void *arg, bool pure)
{
    while (!ready(arg)) {
        int role = cr_thread_poller_claim(ready, arg, pure);
        if (role == CR_POLLER_OTHER) {
            cr_thread_wait_event(ready, arg, pure, 10000);
            continue;
        }
        unsigned idle = 0;
        while (!ready(arg)) {
            if (cr_progress()) {
                idle = 0;
                cr_thread_event();
            } else if (!ready(arg)) {
                idle_step(&idle, ready, arg, cr_thread_crowded());
            }
            cr_cs_yield();
        }
        if (role == CR_POLLER_MINE)
            cr_thread_poller_drop();
        return;
    }
}

void cr_progress_wait(volatile int *flag)
{
    if (CR_UNLIKELY(cr_thread_multiple))
        return wait_threads(flag_set, (void *)flag, true);
    unsigned idle = 0;
    while (!*flag) {
        if (cr_progress())
            idle = 0;
        else if (!*flag)
            idle_step(&idle, flag_set, (void *)flag, false);
    }
}

void cr_progress_wait_until(bool (*ready)(void *), void *arg)
{
    if (CR_UNLIKELY(cr_thread_multiple))
        return wait_threads(ready, arg, false);
    cr_progress_wait_until_pure(ready, arg);
}

void cr_progress_wait_until_pure(bool (*ready)(void *), void *arg)
{
    if (CR_UNLIKELY(cr_thread_multiple))
        return wait_threads(ready, arg, true);
    unsigned idle = 0;
    while (!ready(arg)) {
        if (cr_progress())
            idle = 0;
        else if (!ready(arg))
            idle_step(&idle, ready, arg, false);
    }
}
