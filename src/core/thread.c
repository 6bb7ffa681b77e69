/* thread.c: the critical section of MPI_THREAD_MULTIPLE (a ticket lock that sleeps on a
 * futex), the poller's role, and the list of the other waiting threads (thread.h). */
#include "thread.h"
#include "config.h"

#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

bool cr_thread_multiple;
bool cr_thread_pending;

static int64_t lock_spin, park_yields;
CR_TUNABLE_EX(park_yields, COURIER_THREAD_PARK_YIELDS, CR_TUNE_INT, "20", NULL, 0, 100000000,
              "at MPI_THREAD_MULTIPLE, how many times a thread waiting for another's progress yields its core "
              "before it sleeps in the kernel");
CR_TUNABLE_EX(lock_spin, COURIER_THREAD_SPIN, CR_TUNE_INT, "200", NULL, 0, 100000000,
              "at MPI_THREAD_MULTIPLE, how many times a thread looks at a busy critical section before it sleeps "
              "on it");

/* The section: a ticket lock, so a thread that lets go of it between progress rounds cannot
 * take it straight back while others queue (first come, first served). `serving` is also the
 * futex word the queued threads sleep on. Each on its own line: every thread that enters
 * writes `next`. */
static struct {
    _Alignas(64) atomic_uint next;
    _Alignas(64) atomic_uint serving;
    atomic_uint lock_sleepers;
} cs;

/* A thread sleeping in cr_thread_wait_event, on the list while it sleeps (under the section);
 * `woken` is its futex word. */
typedef struct sleeper {
    bool (*ready)(void *);
    void *arg;
    bool pure;
    atomic_uint woken;
    atomic_uint parked; /* it went to sleep in the kernel: a waker must wake it there */
    struct sleeper *next;
} sleeper;
static sleeper *sleepers;
static bool handoff; /* the poller left: wake one sleeper to take its role */

static CR_THREAD_LOCAL int depth;    /* how deeply this thread holds the section; 0: not */
static CR_THREAD_LOCAL bool polling; /* this thread is the poller */
static bool poller_taken;             /* some thread is (under the section) */
static sleeper poller;                /* its condition (ready, arg, pure) */
static void (*doorbell)(void);

static long futex(atomic_uint *word, int op, unsigned val, const struct timespec *ts)
{
    return syscall(SYS_futex, (unsigned *)word, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

void cr_thread_enable(void)
{
    cr_thread_multiple = true;
}

void cr_thread_set_doorbell(void (*ring_self)(void))
{
    doorbell = ring_self;
}

static void take(void)
{
    unsigned my = atomic_fetch_add_explicit(&cs.next, 1, memory_order_relaxed);
    for (int64_t i = 0;; i++) {
        unsigned s = atomic_load_explicit(&cs.serving, memory_order_acquire);
        if (s == my)
            return;
        if (i < lock_spin) {
            __builtin_ia32_pause();
            continue;
        }
        /* Dekker with release(): it bumps `serving`, then reads the sleepers; we count
         * ourselves, then the futex compares `serving`. One of the two sees the other. */
        atomic_fetch_add(&cs.lock_sleepers, 1);
        futex(&cs.serving, FUTEX_WAIT, s, NULL);
        atomic_fetch_sub(&cs.lock_sleepers, 1);
    }
}

/* Wakes the threads waiting for an event, and the poller if it sleeps on the doorbell (not
 * when the poller itself is the one leaving: it is awake). Under the section. */
static void notify(void)
{
    cr_thread_pending = false;
    for (sleeper *w = sleepers; w; w = w->next) {
        if (atomic_load_explicit(&w->woken, memory_order_relaxed))
            continue;
        bool wake = handoff || !w->pure || w->ready(w->arg);
        handoff = handoff && !wake;
        if (wake) {
            atomic_store(&w->woken, 1);
            if (atomic_load(&w->parked))
                futex(&w->woken, FUTEX_WAKE, 1, NULL);
        }
    }
    if (poller_taken && !polling && doorbell && (!poller.pure || poller.ready(poller.arg)))
        doorbell();
}

static void give(void)
{
    if (cr_thread_pending)
        notify();
    atomic_fetch_add(&cs.serving, 1);
    if (atomic_load(&cs.lock_sleepers))
        futex(&cs.serving, FUTEX_WAKE, INT_MAX, NULL);
}

void cr_spin_lock_slow(cr_spin *s)
{
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (!atomic_load_explicit(&s->held, memory_order_relaxed) &&
                !atomic_exchange_explicit(&s->held, 1, memory_order_acquire))
                return;
            __builtin_ia32_pause();
        }
        sched_yield(); /* the holder may be waiting for this core */
    }
}

void cr_cs_lock_slow(void)
{
    if (depth++ == 0)
        take();
}

void cr_cs_unlock_slow(void)
{
    if (--depth == 0)
        give();
}

/* Only the outermost level lets go: a call nested in a callback (an error handler, a user
 * reduction) runs in the middle of its outer call's work, which other threads must not see
 * half done. */
void cr_cs_yield(void)
{
    if (!cr_thread_multiple || depth != 1)
        return;
    if (cr_thread_pending)
        notify();
    unsigned s = atomic_load_explicit(&cs.serving, memory_order_relaxed);
    if (atomic_load_explicit(&cs.next, memory_order_relaxed) == s + 1)
        return; /* nobody queued */
    give();
    take();
}

int cr_cs_suspend(void)
{
    if (!cr_thread_multiple || depth != 1)
        return 0;
    depth = 0;
    give();
    return 1;
}

void cr_cs_resume(int d)
{
    if (!d)
        return;
    take();
    depth = d;
}

/* No lost wake-up: the sleeper joins the list inside the section, and every waker looks at the
 * list inside it; the futex compares `woken`, which a waker sets before it wakes. */
/* It first gives its core away a few times (COURIER_THREAD_PARK_YIELDS) while it watches its
 * word: a wake-up that comes soon (the next message of a stream) then costs neither the waker's
 * system call nor a trip through the kernel's sleep. Dekker with notify(): the sleeper sets
 * `parked` then reads `woken`; the waker sets `woken` then reads `parked`. */
void cr_thread_wait_event(bool (*ready)(void *), void *arg, bool pure, unsigned timeout_us)
{
    sleeper w = {ready, arg, pure, 0, 0, sleepers};
    sleepers = &w;
    int d = cr_cs_suspend();
    for (int64_t i = 0; i < park_yields && !atomic_load_explicit(&w.woken, memory_order_acquire); i++)
        sched_yield();
    atomic_store(&w.parked, 1);
    if (!atomic_load(&w.woken)) {
        struct timespec ts = {timeout_us / 1000000, (long)(timeout_us % 1000000) * 1000};
        futex(&w.woken, FUTEX_WAIT, 0, &ts);
    }
    cr_cs_resume(d);
    for (sleeper **p = &sleepers; *p; p = &(*p)->next)
        if (*p == &w) {
            *p = w.next;
            break;
        }
}

bool cr_thread_crowded(void)
{
    if (depth == 0) /* (a wait outside any call, at exit: nobody else is left) */
        return false;
    return sleepers || atomic_load_explicit(&cs.next, memory_order_relaxed) !=
                           atomic_load_explicit(&cs.serving, memory_order_relaxed) + 1;
}

int cr_thread_poller_claim(bool (*ready)(void *), void *arg, bool pure)
{
    if (polling)
        return CR_POLLER_ALREADY;
    if (poller_taken)
        return CR_POLLER_OTHER;
    poller_taken = polling = true;
    poller.ready = ready;
    poller.arg = arg;
    poller.pure = pure;
    return CR_POLLER_MINE;
}

void cr_thread_poller_drop(void)
{
    poller_taken = polling = false;
    handoff = sleepers != NULL; /* a waiting thread takes the role over */
    cr_thread_event();
}
