/* shm.c: the shared-memory transport.
 *
 * One segment per node, created by the node's first process as an anonymous memory file
 * (memfd, segment.c): it never has a name in /dev/shm, so no crash, kill or missed cleanup can
 * leave one behind. The others open it through /proc/<pid>/fd/<fd> (the PMI key-value space
 * carries pid and fd) and map it.
 *
 * Layout (cr_seg_layout, the same in every process): a header, one `shm_proc` per process (its
 * pid and its doorbell), the collective component's region, one ring control line per ordered
 * pair, the "joined" bitmaps (which processes ever sent to each one), then one ring per ordered
 * pair of processes (sender, receiver).
 *
 * Rings cost only what is used: the segment is a sparse memory file, a ring's pages are touched
 * when its sender first writes to it, and a receiver polls only the rings of the processes that
 * joined it: a sender announces itself once, before its first frame to a receiver, by setting
 * its bit in that receiver's bitmap and counting up the receiver's `joined`; the receiver looks
 * at the bitmap again when that count moves. So a job of N processes whose processes talk to k
 * peers each costs N * k rings of memory and k ring polls a round, not N^2 and N.
 *
 * A ring is a single-producer single-consumer byte ring of 64-byte cells. A frame occupies
 * whole cells: a 40-byte header (commit word, length, the 32-byte envelope) and its payload
 * (from 1 KiB, starting at the next cell: hdr_room), contiguous except where it wraps around
 * the end of the ring. The sender writes the payload,
 * then the header's commit word `seq` with release order; the receiver polls the commit word of
 * the cell at its read position with acquire order. `seq` counts frames and is never 0 (the
 * count skips 0 when it wraps around 2^32, see next_seq), so a cleared cell never looks
 * committed, with one caveat handled in send(): a cell that held *payload* in the previous lap
 * may hold any bytes, so before committing a frame the sender zeroes the commit word of the
 * cell where the next frame will start (when that cell is free; when it is not, it is the
 * header of an older frame, less than one ring of frames old, whose seq cannot match: frames
 * in a ring number far fewer than 2^32 - 1).
 * The receiver publishes how many cells it consumed (`tail`) after each frame; the sender
 * reads it only when its cached copy says the ring is full.
 *
 * Waiting: when ranks outnumber cores ("sleep mode"), an idle process announces `sleeping`,
 * re-checks its rings and sleeps on its doorbell: the eventfd in its epoll set (xport/wait.c),
 * which network sockets will share, or a futex word in its shm_proc where peers cannot reach
 * the eventfd. A sender that commits a frame checks the receiver's `sleeping` after a full
 * fence and rings the bell (Dekker-style: no lost wake-up). Receivers ring a sleeping sender after freeing ring space. Without oversubscription
 * nobody sleeps and senders skip the fence.
 *
 * Peers that die: see "watching the node's peers" below. */
#include "shm.h"

#include "core/copy.h"
#include "core/base.h"
#include "core/config.h"
#include "core/pvar.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "pmi/pmi.h"
#include "segment.h"
#include "xport/wait.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC 0x31726569726f43ull /* "Courier1" */
#define CELL 64
#define HDR_BYTES 40
#define REWIND_MIN 1024 /* smaller frames gain less than the rewind's own header costs */
#define REWIND_CLASS 0xff /* a header that sends the receiver to the ring's start (rewind_ring) */

static int64_t tune_ring_size, tune_cma, tune_wait, tune_seq_start, tune_doorbell, tune_rewind, tune_pieces;
CR_TUNABLE(tune_pieces, COURIER_SHM_PIECES_FROM, CR_TUNE_SIZE, "4K",
           "a message above this many bytes goes to a process of the node in several frames (of this size up to "
           "8 times it, of 16 KiB above), so that the receiver copies one out while the sender copies the next in "
           "(see doc/design/protocols.md); 0: frames of 16 KiB, for messages above the eager limit only");
CR_TUNABLE(tune_rewind, COURIER_SHM_REWIND_MAX, CR_TUNE_SIZE, "8K",
           "a frame of at most this many bytes that finds its ring empty goes back to the ring's start, "
           "into cache lines the two processes used last time (see doc/design/shm.md); 0: never");
CR_TUNABLE(tune_ring_size, COURIER_SHM_RING_SIZE, CR_TUNE_SIZE, "0",
           "bytes of each shared-memory ring between two processes (a power of two, 4K..64M); 0 picks by process count");
CR_TUNABLE_EX(tune_cma, COURIER_SHM_CMA, CR_TUNE_CHOICE, "auto", "auto|on|off|1|0|split", 0, 5,
              "how large messages move: with cross-memory attach (process_vm_readv/writev), or in a pipelined "
              "copy through the rings. on: the receiver copies it all (one copy by one process); split: the "
              "receiver reads the front half while the sender writes the back half (one copy by two processes); "
              "off: the pipeline; auto: on when processes outnumber cores or the sender is not inside MPI (it "
              "computes after MPI_Isend, so the message moves meanwhile), split otherwise "
              "(see doc/design/shm.md); off also keeps the aggregators of collective writes from reading the "
              "pieces from the other processes' memory (doc/design/io.md)");
CR_TUNABLE_EX(tune_seq_start, COURIER_DEBUG_SEQ_START, CR_TUNE_INT, "1", NULL, 1, UINT32_MAX,
              "for testing: the first value of the 32-bit frame and collective counters (set just below 2^32 = "
              "4294967296 to run across their wrap-around); every process of a job must have the same value");
CR_TUNABLE_EX(tune_wait, COURIER_WAIT, CR_TUNE_CHOICE, "auto", "auto|spin|sleep", 0, 2,
              "how a waiting process waits: spin (poll, yielding now and then), sleep (poll briefly, then sleep until a peer "
              "sends), or auto (sleep when processes outnumber cores)");

CR_TUNABLE_EX(tune_doorbell, COURIER_DOORBELL, CR_TUNE_CHOICE, "eventfd", "eventfd|futex|unreachable", 0, 2,
              "what a sleeping process waits on: its eventfd (in the epoll set network sockets share), or a futex "
              "word in shared memory; unreachable, for testing, makes peers fail to fetch this process's eventfd, "
              "as when the kernel refuses pidfd_getfd, so it moves to the futex");

typedef struct shm_header {
    uint64_t magic;
    uint32_t nlocal;
    uint32_t pad;
    uint64_t ring_bytes;
    uint64_t procs_off, ctrl_off, rings_off, total;
    _Alignas(CELL) atomic_uint attached; /* processes that mapped the segment */
} shm_header;

typedef struct shm_proc {
    _Alignas(CELL) int32_t pid;
    int32_t world_rank;
    int32_t bell_fd;                 /* its doorbell eventfd, as its own descriptor number (-1: none) */
    uint64_t cpus[16];               /* the CPUs it may run on (1024 bits), for the oversubscription test */
    _Alignas(CELL) atomic_uint bell; /* futex word: the doorbell when the eventfd cannot be used */
    atomic_uint sleeping;
    atomic_uint futex_only; /* a peer could not reach our eventfd: sleep on the futex */
    atomic_uint joined; /* senders that announced themselves in our bitmap (see above) */
    atomic_uint done;   /* it reached its MPI_Finalize: its end is no death (watch_check) */
    _Alignas(CELL) atomic_uint polls; /* rounds of progress it made: moves while it is inside MPI */
} shm_proc;

typedef struct shm_ctrl {
    _Alignas(CELL) _Atomic uint64_t tail; /* cells consumed, written by the receiver */
} shm_ctrl;

typedef struct frame_hdr {
    _Atomic uint32_t seq;
    uint32_t len_cls; /* payload bytes (below 2^24: frames are at most a quarter of 64 MiB) | class << 24 */
    cr_xenv env;
} frame_hdr;

_Static_assert(sizeof(shm_proc) == 5 * CELL,
               "shm_proc: identity and CPUs, then the doorbell and the progress count on lines of their own");
_Static_assert(sizeof(shm_ctrl) == CELL, "shm_ctrl is one cache line");
_Static_assert(sizeof(frame_hdr) == HDR_BYTES, "frame header layout");
_Static_assert(offsetof(frame_hdr, env) == 8, "frame header layout");

typedef struct out_ring {
    char *cells;
    shm_ctrl *ctrl;
    shm_proc *peer;
    uint64_t head, tail_cache;
    uint64_t cleared; /* the cells from head up to this one are free with `seq` 0 (frame_end) */
    uint32_t seq; /* commit word of the next frame */
    uint32_t answers_seen; /* the `seq` of the ring from this peer when we last sent */
    uint64_t burst;        /* cells sent since the peer last sent us something, but aligned frames' header cells */
    bool announced; /* we set our bit in the receiver's joined bitmap */
} out_ring;

typedef struct in_ring {
    char *cells;
    shm_ctrl *ctrl;
    shm_proc *peer;
    uint64_t pos;
    uint32_t seq; /* commit word of the next frame */
    int world_src;
    /* `seq` as our senders see it (frame_begin: has the peer sent since our last frame?): a
     * copy they may read outside the critical section while drain moves on (cr_xport_parallel_below) */
    _Atomic uint32_t seq_seen;
} in_ring;

static struct {
    char *base;
    size_t size;
    int fd; /* the memfd, kept open by its creator until finalize so peers can open it */
    int me, n;
    uint64_t ncells, mask; /* cells per ring, ncells - 1 */
    size_t ring_bytes;
    shm_proc *procs;
    out_ring *out;
    in_ring *in;
    _Atomic uint64_t *joins; /* [receiver][words]: bit s set when process s joined the receiver */
    int words;               /* of one bitmap */
    int *active, nactive;    /* the processes that joined us, whose rings we poll */
    unsigned joined_seen;    /* our `joined` count when we last read our bitmap */
    bool sleep_mode;
    bool oversubscribed; /* the node's processes outnumber its CPUs (the same in every process) */
    int cpus;            /* the CPUs the node's processes may run on, all together (the same in every process) */
    bool cma_ok;     /* single copy is allowed (not turned off, and not refused by the kernel) */
    bool cma_prefer; /* and the receiver copies it all, whatever the sender does */
    bool split_forced; /* COURIER_SHM_CMA=split: both copy a part, whatever the sender does */
    cr_seg_layout layout; /* the segment's regions */
    bool eventfd_bell; /* our doorbell is the eventfd in our epoll set (xport/wait.h) */
    _Atomic int *peer_bells; /* per process: 0 not fetched yet, -1 unreachable, else its eventfd + 1 in our table */
    int poll_start;
    int watch_ep;      /* epoll set of the watched peers' pidfds (-1: none watched) */
    int nwatch;        /* pidfds in it */
    int watch_fd[64];  /* the pidfds (-1: let go), WATCH_MAX */
} S = {.fd = -1, .watch_ep = -1};

static size_t pow2_floor(size_t x)
{
    size_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

/* Rings shrink as process counts grow, so that all of them together stay near 256 MiB: 2 MiB
 * up to 11 processes, 1 MiB up to 16, 256 KiB up to 32, 16 KiB at 128, 4 KiB (frames of under
 * 1 KiB) from 256 on, where the floor lets them grow again: n(n-1) x 4 KiB is 4 GiB at 1024
 * processes if every pair talks. Only the rings of pairs that talk are ever touched (see the
 * top of this file). Why as large as 2 MiB: a sender that writes ring cells the receiver read
 * a few messages ago (and still holds in its cache) pays for taking those lines back from the
 * other core; a ring that takes longer to come round halves the time of 16 KiB to 256 KiB
 * messages here (doc/design/shm.md). */
static size_t pick_ring_bytes(int n)
{
    if (tune_ring_size)
        return (size_t)tune_ring_size;
    size_t pairs = (size_t)n * (size_t)(n - 1);
    size_t r = pow2_floor((256u << 20) / (pairs ? pairs : 1));
    return CR_MAX((size_t)4096, CR_MIN(r, (size_t)(2 << 20)));
}

/* The CPUs the node's processes may run on, all together. Each process has published its CPU
 * mask; a job whose ranks are each bound to a core of their own is not oversubscribed, whatever
 * each one's mask says alone. */
static int node_cpus(void)
{
    uint64_t all[16] = {0};
    for (int p = 0; p < S.n; p++)
        for (int w = 0; w < 16; w++)
            all[w] |= S.procs[p].cpus[w];
    int cpus = 0;
    for (int w = 0; w < 16; w++)
        cpus += __builtin_popcountll(all[w]);
    return cpus ? cpus : 1;
}

static void publish_cpus(shm_proc *me)
{
    cpu_set_t set;
    memset(me->cpus, 0, sizeof me->cpus);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < n && c < 1024; c++)
            me->cpus[c / 64] |= 1ull << (c % 64);
        return;
    }
    for (int c = 0; c < 1024 && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            me->cpus[c / 64] |= 1ull << (c % 64);
}

/* The commit word after `seq`: 0 is skipped, since it is what a cleared cell holds. */
static inline uint32_t next_seq(uint32_t seq)
{
    return seq + 1 ? seq + 1 : 1;
}

uint32_t cr_shm_seq_start(void)
{
    return (uint32_t)tune_seq_start;
}

static int futex(atomic_uint *addr, int op, unsigned val, const struct timespec *ts)
{
    return (int)syscall(SYS_futex, (unsigned *)addr, op, val, ts, NULL, 0);
}

/* A peer's doorbell, as a descriptor of ours: fetched once, the first time we ring it, with
 * pidfd_getfd (the permission is the one cross-memory attach needs). When that is refused the
 * peer is told to sleep on its futex instead, and is rung there from then on. */
static int peer_bell(shm_proc *p)
{
    int i = (int)(p - S.procs), v = S.peer_bells ? atomic_load_explicit(&S.peer_bells[i], memory_order_acquire) : -1;
    if (v != 0)
        return v > 0 ? v - 1 : -1;
    int fd = -1;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    if (p->bell_fd >= 0 && p->bell_fd != INT32_MAX) {
        int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)p->pid, 0);
        if (pidfd >= 0) {
            fd = (int)syscall(SYS_pidfd_getfd, pidfd, p->bell_fd, 0);
            close(pidfd);
        }
    }
#endif
    /* Two threads may fetch it at once (senders to this peer outside the critical section, a
     * wake-up of the node inside it): the first to install its result wins, the other closes
     * its copy. The peer is told to sleep on its futex only when "unreachable" is what stays. */
    int got = 0;
    if (atomic_compare_exchange_strong_explicit(&S.peer_bells[i], &got, fd < 0 ? -1 : fd + 1, memory_order_acq_rel,
                                                memory_order_acquire))
        got = fd < 0 ? -1 : fd + 1;
    else if (fd >= 0)
        close(fd);
    if (got < 0)
        atomic_store_explicit(&p->futex_only, 1, memory_order_seq_cst);
    return got > 0 ? got - 1 : -1;
}

static void ring_bell(shm_proc *p)
{
    int fd = peer_bell(p);
    if (fd >= 0) {
        cr_wait_ring(fd);
        return;
    }
    atomic_fetch_add_explicit(&p->bell, 1, memory_order_relaxed);
    futex(&p->bell, FUTEX_WAKE, 1, NULL);
}

/* ----------------------------------------------------------------- watching the node's peers
 *
 * Courier's mpiexec names a rank that dies and ends the job at once. Other launchers may leave
 * the rest running (srun without -K): over TCP a death closes connections, which their peers
 * notice (tcp.c), but a process waiting for a peer of its own node would wait for ever. So
 * under those launchers each process watches up to WATCH_MAX of its node's peers, the ones
 * after it in local rank order (all of them on nodes of up to WATCH_MAX + 1 processes: every
 * death has watchers, until a run of WATCH_MAX consecutive peers has already gone), through
 * pidfds in an epoll set of their own:
 *   - that set is in the sleep's epoll set, so a death wakes a sleeper (no cost otherwise:
 *     cr_wait_fired reads what the sleep's epoll_wait reported);
 *   - a sleeper on the futex, and a waiter that spins, look every so often (cr_shm_watch).
 * A peer that ends after its MPI_Finalize (`done`) is let go; one that ends before ends the
 * job, named: the launcher's abort then stops the others. */
enum { WATCH_MAX = (int)(sizeof S.watch_fd / sizeof S.watch_fd[0]) };

static void watch_stop(void)
{
    for (int k = 0; k < WATCH_MAX && S.watch_ep >= 0; k++)
        if (S.watch_fd[k] >= 0)
            close(S.watch_fd[k]);
    if (S.watch_ep >= 0)
        close(S.watch_ep);
    S.watch_ep = -1;
    S.nwatch = 0;
}

static void watch_start(void)
{
    for (int k = 0; k < WATCH_MAX; k++)
        S.watch_fd[k] = -1;
    if (S.n <= 1 || cr_pmi_launcher_names_failures())
        return;
    S.watch_ep = epoll_create1(EPOLL_CLOEXEC);
    if (S.watch_ep < 0)
        return;
    for (int k = 1; k < S.n && k <= WATCH_MAX; k++) {
        int p = (S.me + k) % S.n;
        int fd = (int)syscall(SYS_pidfd_open, (pid_t)S.procs[p].pid, 0);
        if (fd < 0)
            continue; /* gone already (the launcher's business then), or no pidfds: not watched */
        /* (pidfds are close-on-exec; the descriptor stays open while watched: closing it
         * would take it out of the set) */
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)p << 32 | (uint32_t)(k - 1)};
        if (epoll_ctl(S.watch_ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
            fd = -1;
        }
        S.watch_fd[k - 1] = fd;
        S.nwatch += fd >= 0;
    }
    if (!S.nwatch || (S.eventfd_bell && cr_wait_add(S.watch_ep) != 0))
        watch_stop();
}

/* Looks whether a watched peer ended; ends the job when one ended before its MPI_Finalize. */
static void watch_check(void)
{
    struct epoll_event ev[16];
    int n = epoll_wait(S.watch_ep, ev, 16, 0);
    for (int i = 0; i < n; i++) {
        int p = (int)(ev[i].data.u64 >> 32), k = (int)(uint32_t)ev[i].data.u64;
        if (atomic_load_explicit(&S.procs[p].done, memory_order_acquire)) {
            /* a peer that finished: let it go (its pidfd stays readable) */
            epoll_ctl(S.watch_ep, EPOLL_CTL_DEL, S.watch_fd[k], NULL);
            close(S.watch_fd[k]);
            S.watch_fd[k] = -1;
            S.nwatch--;
            continue;
        }
        /* A launcher that acts on deaths and aborts (Hydra, srun on MPI_Abort) ends the job
         * with the real cause, the abort's own code among it, if given a moment first. */
        usleep(500 * 1000);
        char why[200];
        snprintf(why, sizeof why, "world rank %d (pid %d, on this node) ended without MPI_Finalize",
                 S.procs[p].world_rank, S.procs[p].pid);
        cr_runtime_abort(NULL, 1, why);
    }
    if (n > 0 && S.nwatch <= 0)
        watch_stop(); /* (closing the set takes it out of the sleep's set too) */
}

void cr_shm_watch(void)
{
    if (S.watch_ep >= 0)
        watch_check();
}

int cr_shm_init(int me, int n, const int *local_world_ranks, bool job_barrier, char *why, size_t cap)
{
    S.me = me;
    S.n = n;
    if (n <= 1)
        return job_barrier && cr_pmi_barrier() ? snprintf(why, cap, "the PMI barrier of start-up failed"), -1 : 0;
    cr_thread_set_doorbell(cr_shm_ring_self);
    if (tune_ring_size && (tune_ring_size & (tune_ring_size - 1) || tune_ring_size < 4096 || tune_ring_size > (64 << 20)))
        return snprintf(why, cap, "COURIER_SHM_RING_SIZE=%lld is not a power of two from 4K to 64M",
                        (long long)tune_ring_size), -1;
    S.ring_bytes = pick_ring_bytes(n);
    S.ncells = S.ring_bytes / CELL;
    S.mask = S.ncells - 1;
    S.words = (n + 63) / 64;
    cr_seg_layout *L = &S.layout;
    *L = (cr_seg_layout){0};
    cr_seg_place(L, CR_SEG_HEADER, sizeof(shm_header), CELL);
    cr_seg_place(L, CR_SEG_PROCS, (size_t)n * sizeof(shm_proc), CELL);
    cr_seg_place(L, CR_SEG_COLL, CR_SHM_COLL_BYTES(n), CELL);
    cr_seg_place(L, CR_SEG_CTRL, (size_t)n * n * sizeof(shm_ctrl), CELL);
    cr_seg_place(L, CR_SEG_JOINS, (size_t)n * S.words * sizeof(uint64_t), CELL);
    cr_seg_place(L, CR_SEG_RINGS, (size_t)n * n * S.ring_bytes, 4096);
    cr_seg_place(L, CR_SEG_COLL_LARGE, CR_SHM_COLL_LARGE_BYTES(n), 4096);
    size_t total = L->total;
    S.size = total;

    char key[64], val[128];
    snprintf(key, sizeof key, "cr-shm-%d", local_world_ranks[0]);
    if (me == 0) {
        void *base;
        if (cr_seg_create("courier-shm", total, &S.fd, &base) != 0)
            return snprintf(why, cap, "cannot create a %zu-byte shared memory file: %s", total, strerror(errno)), -1;
        S.base = base;
        shm_header *h = (shm_header *)S.base;
        h->magic = SHM_MAGIC;
        h->nlocal = (uint32_t)n;
        h->ring_bytes = S.ring_bytes;
        h->procs_off = L->off[CR_SEG_PROCS];
        h->ctrl_off = L->off[CR_SEG_CTRL];
        h->rings_off = L->off[CR_SEG_RINGS];
        h->total = total;
        snprintf(val, sizeof val, "%d:%d:%zu", (int)getpid(), S.fd, total);
        if (cr_pmi_put(key, val))
            return snprintf(why, cap, "cannot publish the shared memory segment through PMI"), -1;
    }
    if (cr_pmi_barrier())
        return snprintf(why, cap, "the PMI barrier of shared-memory start-up failed"), -1;
    if (me != 0) {
        int pid, fd;
        size_t size;
        void *base;
        if (cr_pmi_get(key, val, sizeof val) || sscanf(val, "%d:%d:%zu", &pid, &fd, &size) != 3 || size != total)
            return snprintf(why, cap, "the shared memory segment of this node is not in the PMI key-value space"), -1;
        if (cr_seg_attach(pid, fd, total, &base) != 0)
            return snprintf(why, cap, "cannot map the node's shared memory (/proc/%d/fd/%d): %s", pid, fd,
                            strerror(errno)), -1;
        S.base = base;
        if (((shm_header *)S.base)->magic != SHM_MAGIC)
            return snprintf(why, cap, "the shared memory segment is not Courier's"), -1;
    }
    S.procs = (shm_proc *)(S.base + L->off[CR_SEG_PROCS]);
    S.procs[me].pid = (int32_t)getpid();
    S.procs[me].world_rank = local_world_ranks[me];
    S.eventfd_bell = tune_doorbell != 1 && cr_wait_init();
    /* (a descriptor number no process has open stands for one that cannot be fetched) */
    S.procs[me].bell_fd = !S.eventfd_bell ? -1 : tune_doorbell == 2 ? INT32_MAX : cr_wait_bell_fd();
    publish_cpus(&S.procs[me]);
    atomic_fetch_add_explicit(&((shm_header *)S.base)->attached, 1, memory_order_release);
    S.out = calloc((size_t)n, sizeof *S.out);
    S.in = calloc((size_t)n, sizeof *S.in);
    S.active = calloc((size_t)n, sizeof *S.active);
    S.peer_bells = calloc((size_t)n, sizeof *S.peer_bells);
    S.joins = (_Atomic uint64_t *)(S.base + L->off[CR_SEG_JOINS]);
    S.nactive = 0;
    S.joined_seen = 0;
    if (!S.out || !S.in || !S.active || !S.peer_bells)
        return snprintf(why, cap, "out of memory"), -1;
    shm_ctrl *ctrl = (shm_ctrl *)(S.base + L->off[CR_SEG_CTRL]);
    char *rings = S.base + L->off[CR_SEG_RINGS];
    for (int p = 0; p < n; p++) {
        size_t to = (size_t)me * n + p, from = (size_t)p * n + me;
        uint32_t first = cr_shm_seq_start();
        S.out[p] = (out_ring){.cells = rings + to * S.ring_bytes, .ctrl = &ctrl[to], .peer = &S.procs[p], .seq = first};
        S.in[p] = (in_ring){rings + from * S.ring_bytes, &ctrl[from], &S.procs[p], 0, first,
                            local_world_ranks[p], first};
    }
    /* Every process's CPU mask is needed, and every one must decide alike (a sender that does
     * not look for sleepers must never face one that sleeps): wait for all to have attached. */
    while (atomic_load_explicit(&((shm_header *)S.base)->attached, memory_order_acquire) < (unsigned)n)
        sched_yield();
    S.cpus = node_cpus();
    bool oversubscribed = S.oversubscribed = S.n > S.cpus;
    cr_copy_shared_adapt(true); /* (core/copy.h: with processes sharing cores too) */
    S.sleep_mode = tune_wait == 2 || (tune_wait == 0 && oversubscribed);
    /* One copy by the receiver alone, or one copy split between the two processes (the
     * receiver reads the front half, the sender writes the back half)? With a core each, the
     * split copy is about twice as fast; sharing cores, the receiver alone does the same work
     * without waiting for the sender to be scheduled: see doc/design/shm.md. */
    S.cma_ok = tune_cma != 2 && tune_cma != 4;
    S.cma_prefer = tune_cma == 1 || tune_cma == 3 || (tune_cma == 0 && oversubscribed);
    S.split_forced = tune_cma == 5;
    watch_start();
    return 0;
}

void cr_shm_finalize(void)
{
    if (S.procs) /* from now on, this process's end is no death (watch_check) */
        atomic_store_explicit(&S.procs[S.me].done, 1, memory_order_release);
    watch_stop();
    /* The creator's memfd is how the others reach the segment: it stays open until every one
     * of them has mapped it (a quick job could otherwise finish before a peer got there). */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (S.fd >= 0 && S.base && atomic_load(&((shm_header *)S.base)->attached) < (unsigned)S.n) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) /* a peer died before attaching: its launcher ends the job */
            break;
        sched_yield();
    }
    if (S.base)
        munmap(S.base, S.size);
    if (S.fd >= 0)
        close(S.fd);
    free(S.out);
    free(S.in);
    free(S.active);
    S.active = NULL;
    for (int p = 0; S.peer_bells && p < S.n; p++)
        if (S.peer_bells[p] > 0)
            close(S.peer_bells[p] - 1);
    free((void *)S.peer_bells);
    S.peer_bells = NULL;
    cr_wait_finalize();
    S.nactive = 0;
    S.base = NULL;
    S.fd = -1;
    S.out = NULL;
    S.in = NULL;
}

static size_t shm_max_frame(int peer)
{
    (void)peer;
    return S.ring_bytes / 4 - HDR_BYTES;
}

/* Messages go in frames of at most 16 KiB, however large the ring's frames: the receiver copies
 * a frame out while the sender copies the next one in, so the two copies overlap. A message
 * sent as one 256 KiB frame costs both copies one after the other: one-way latency at 64 KiB
 * fell from 3.65 to 2.59 us, at 256 KiB from 12.5 to 8.4 us with 16 KiB frames (8 KiB frames
 * did worse, 9.6 us at 256 KiB; 32 KiB frames 3.0 us at 64 KiB). The same holds for messages
 * of a few KiB: an 8 KiB message in two 4 KiB frames arrives sooner than in one (the receiver
 * starts copying when half of it is in), so above COURIER_SHM_PIECES_FROM (4 KiB) messages
 * go in pieces of that size, up to 8 of them; pieces smaller than 4 KiB gained nothing
 * (doc/design/protocols.md, "Why 4 KiB pieces"). */
static size_t shm_stream_frame(int peer, uint64_t bytes)
{
    size_t most = shm_max_frame(peer), large = CR_MIN(most, (size_t)16 << 10), piece = (size_t)tune_pieces;
    if (bytes <= (piece ? CR_MIN(piece, most) : large))
        return most; /* one frame */
    if (piece && bytes <= 8 * (uint64_t)piece)
        return CR_MIN(piece, most);
    return large;
}

bool cr_shm_sleep_mode(void)
{
    return S.sleep_mode;
}

uint32_t cr_shm_coll_nblocks(int n)
{
    return (uint32_t)(S.oversubscribed ? CR_SHM_COLL_NBLOCKS_SHALLOW(n) : CR_SHM_COLL_NBLOCKS(n));
}

int cr_shm_node_cpus(void)
{
    return S.cpus ? S.cpus : 1;
}

bool cr_shm_attach_allowed(void)
{
    return S.cma_ok;
}

static bool shm_can_read(int peer)
{
    (void)peer;
    return S.cma_ok && S.cma_prefer;
}

/* Whether `local` is making progress now: its count of progress rounds moves within a few
 * microseconds (it is inside MPI, waiting or polling), or not (it computes, or sleeps). */
static bool peer_active(int local)
{
    atomic_uint *polls = &S.procs[local].polls;
    unsigned first = atomic_load_explicit(polls, memory_order_relaxed);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (atomic_load_explicit(polls, memory_order_relaxed) != first)
            return true;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 4000);
    return false;
}

static bool shm_pull_preferred(int local)
{
    return S.cma_ok && (S.cma_prefer || (!S.split_forced && !peer_active(local)));
}

/* Asked when the receiver does not pull it all (shm_pull_preferred): then the sender is inside
 * MPI and has a core of its own. A message larger than the ring is faster shared; without
 * cross-memory attach, the pipeline. A message that fits in the ring streams through it (16 KiB
 * frames, both copies overlapped) faster than two cores share the copy while the machine is
 * in its fast phase (one-way at 512 KiB: 22-26 against 34-40 us), and 3 times slower in its
 * slow phase (82-120 against 34-40 us: each line of the ring crosses between the cores twice
 * while dirty in the other's cache; doc/performance.md, 2026-11-29), so the layer above chooses
 * by what it measures (EITHER). COURIER_SHM_CMA=split shares every message it can. */
static cr_xsplit shm_split_preferred(int local, uint64_t bytes)
{
    (void)local;
    if (!S.cma_ok)
        return CR_XSPLIT_NO;
    return S.split_forced || bytes > S.ring_bytes ? CR_XSPLIT_YES : CR_XSPLIT_EITHER;
}

/* Where a frame's payload starts: right after the 40-byte header, or, from 1 KiB, at the next
 * cell, so that the copies into and out of the ring run on whole, aligned cache lines instead
 * of splitting every line of the copy between two (doc/design/shm.md, "Cells"; 64 KiB one way
 * 3.8 against 3.2 us). The receiver knows which from the header's length. */
#define ALIGN_FROM 1024
static inline size_t hdr_room(size_t len)
{
    return len >= ALIGN_FROM ? CELL : HDR_BYTES;
}

static inline uint64_t cells_for(size_t len)
{
    return (hdr_room(len) + len + CELL - 1) / CELL;
}

/* Copies `len` bytes into the ring at byte offset `off` (mod ring size); returns the new offset. */
static CR_ALWAYS_INLINE size_t ring_put(char *cells, size_t off, const void *src, size_t len, size_t ring_bytes)
{
    size_t first = CR_MIN(len, ring_bytes - off);
    if (CR_UNLIKELY(len >= CR_COPY_SHARED_SMALL)) { /* (core/copy.h: stores that adapt) */
        cr_copy_shared(cells + off, src, first);
        if (len > first)
            cr_copy_shared(cells, (const char *)src + first, len - first);
    } else {
        cr_copy(cells + off, src, first);
        if (len > first)
            cr_copy(cells, (const char *)src + first, len - first);
    }
    off += len;
    return off >= ring_bytes ? off - ring_bytes : off;
}

/* Our first frame to `peer`: set our bit in its bitmap, then count up its `joined` (release:
 * a receiver that sees the count sees the bit). Its first frame follows, and the bell after
 * it reaches a sleeping receiver, which re-reads its bitmap when it wakes. */
static __attribute__((noinline)) void announce(int peer)
{
    atomic_fetch_or_explicit(&S.joins[(size_t)peer * S.words + S.me / 64], 1ull << (S.me % 64), memory_order_relaxed);
    atomic_fetch_add_explicit(&S.procs[peer].joined, 1, memory_order_release);
    S.out[peer].announced = true;
}

/* Sends the receiver back to the ring's start when the ring is empty: a header of class
 * REWIND at the head, the rest of the lap skipped. Why: in a request and its answer (a
 * ping-pong), a frame written where the last one was takes cache lines both processes hold
 * already, where one written further on takes lines last touched a lap (2 MiB) ago, from far
 * away. That gains only while what is reused is small: a frame of 1 to 8 KiB
 * (COURIER_SHM_REWIND_MAX) just after the peer sent us something, when what we sent it before
 * that took at most 8 KiB too (see doc/design/shm.md). A stream in one direction, or a window of frames, would write where
 * the receiver just read, which costs more than fresh lines. Returns whether it rewound. */
static bool rewind_ring(out_ring *o)
{
    if (o->head != o->tail_cache) {
        o->tail_cache = atomic_load_explicit(&o->ctrl->tail, memory_order_acquire);
        if (o->head != o->tail_cache)
            return false;
    }
    frame_hdr *h = (frame_hdr *)(o->cells + (o->head & S.mask) * CELL);
    h->len_cls = (uint32_t)REWIND_CLASS << 24;
    uint64_t next = (o->head | S.mask) + 1;
    /* the ring is empty: the start's cell is free, clear it (it may hold an old payload's bytes) */
    atomic_store_explicit(&((frame_hdr *)o->cells)->seq, 0, memory_order_relaxed);
    atomic_store_explicit(&h->seq, o->seq, memory_order_release);
    o->seq = next_seq(o->seq);
    o->head = next; /* (tail_cache stays behind the header until the receiver has read it) */
    o->cleared = next + 1;
    return true;
}

CR_PVAR_DEFINE(rewinds, "xport.shm.rewinds", "frames sent back to the start of an empty shared-memory ring");

/* Room in the ring to `peer` for a frame of `len` payload bytes: its header, with the class and
 * envelope written, and where its payload starts; NULL when the ring is full for now. */
static CR_ALWAYS_INLINE frame_hdr *frame_begin(out_ring *o, int peer, cr_xclass cls, const cr_xenv *env, size_t len, size_t *payload)
{
    if (CR_UNLIKELY(!o->announced))
        announce(peer);
    uint64_t need = cells_for(len);
    uint32_t answered = atomic_load_explicit(&S.in[peer].seq_seen, memory_order_relaxed);
    if (answered != o->answers_seen) { /* the peer answered since our last frame */
        o->answers_seen = answered;
        /* (need <= head & mask: the cells from the start to the head are the room the frame
         * has until the receiver reads the rewind; it never waits for them) */
        if (len >= REWIND_MIN && len <= (uint64_t)tune_rewind && o->burst * CELL <= (uint64_t)tune_rewind &&
            need <= (o->head & S.mask))
            rewinds += rewind_ring(o);
        o->burst = 0;
    }
    /* Room for the frame, plus (when possible) the next header to clear. */
    if (o->head + need - o->tail_cache > S.ncells) {
        o->tail_cache = atomic_load_explicit(&o->ctrl->tail, memory_order_acquire);
        if (o->head + need - o->tail_cache > S.ncells)
            return NULL;
    }
    /* (a header in a cell of its own is left out: an 8 KiB message in two 4 KiB pieces takes
     * 8 KiB of payload cells and two headers, and rewinding it gains as it does for 8 KiB in one:
     * one-way 0.77 against 1.06 us; three pieces, 9000 bytes, rewound lost: 0.87 against 0.77) */
    o->burst += need - (hdr_room(len) == CELL);
    size_t start = (size_t)(o->head & S.mask) * CELL;
    frame_hdr *h = (frame_hdr *)(o->cells + start);
    h->len_cls = (uint32_t)len | (uint32_t)cls << 24;
    h->env = *env;
    *payload = start + hdr_room(len);
    if (*payload >= S.ring_bytes)
        *payload -= S.ring_bytes;
    return h;
}

static inline void clear_cell(out_ring *o, uint64_t cell)
{
    atomic_store_explicit(&((frame_hdr *)(o->cells + (cell & S.mask) * CELL))->seq, 0, memory_order_relaxed);
}

/* Cells cleared ahead of the head, after each commit (see frame_end). */
#define CLEAR_AHEAD 8

/* Publishes a frame whose payload is written: the receiver may take it from now on.
 * The cell where the next frame will start must not look committed before it is: if it is
 * free, it may hold an old payload's bytes, so its `seq` is cleared before this commit (if it is
 * not free, it holds an unread header, whose `seq` differs). A store just before the commit
 * delays the commit (stores are seen in order) and takes a line the receiver's prefetcher
 * has likely fetched, so it costs a trip between the cores: a 0-byte one-way latency of 0.14
 * against 0.10 us, 0.47 against 0.29 in the machine's slow phase. So cells are cleared
 * CLEAR_AHEAD ahead of the head, after the commit, and only a frame that outruns them clears
 * its next cell first. */
static CR_ALWAYS_INLINE void frame_end(out_ring *o, frame_hdr *h, size_t len)
{
    uint64_t next = o->head + cells_for(len);
    if (next >= o->cleared) {
        bool free_cell = next - o->tail_cache < S.ncells;
        if (free_cell)
            clear_cell(o, next);
        o->cleared = next + free_cell;
    }
    atomic_store_explicit(&h->seq, o->seq, memory_order_release);
    o->seq = next_seq(o->seq);
    o->head = next;
    if (len < REWIND_MIN) /* (larger frames are answered by a rewind, or stream: nothing to gain) */
        while (o->cleared < next + CLEAR_AHEAD && o->cleared - o->tail_cache < S.ncells)
            clear_cell(o, o->cleared++);
    if (S.sleep_mode) {
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&o->peer->sleeping, memory_order_relaxed))
            ring_bell(o->peer);
    }
}

static bool shm_send(int peer, cr_xclass cls, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2)
{
    out_ring *o = &S.out[peer];
    size_t off;
    frame_hdr *h = frame_begin(o, peer, cls, env, n1 + n2, &off);
    if (!h)
        return false;
    if (n1)
        off = ring_put(o->cells, off, p1, n1, S.ring_bytes);
    if (n2)
        ring_put(o->cells, off, p2, n2, S.ring_bytes);
    frame_end(o, h, n1 + n2);
    return true;
}

static bool shm_send_gather(int peer, cr_xclass cls, const cr_xenv *env, size_t len, cr_xgather *g)
{
    out_ring *o = &S.out[peer];
    size_t off;
    frame_hdr *h = frame_begin(o, peer, cls, env, len, &off);
    if (!h)
        return false;
    size_t first = CR_MIN(len, S.ring_bytes - off); /* the payload may wrap around the ring's end */
    if (first)
        g->fill(g, o->cells + off, first);
    if (len > first)
        g->fill(g, o->cells, len - first);
    frame_end(o, h, len);
    return true;
}

/* Frames delivered from one ring per poll. Bounded, or a sender that keeps refilling the ring
 * as fast as it empties would keep the receiver in here, moving message after message into
 * its unexpected queue long after the one it waits for has arrived. */
#define DRAIN_BATCH 32

/* Delivers the frames waiting in one ring; returns how many. */
static int drain(in_ring *r)
{
    int got = 0;
    while (got < DRAIN_BATCH) {
        frame_hdr *h = (frame_hdr *)(r->cells + (r->pos & S.mask) * CELL);
        if (atomic_load_explicit(&h->seq, memory_order_acquire) != r->seq)
            break;
        size_t len = h->len_cls & 0xffffff;
        size_t off = (size_t)(r->pos & S.mask) * CELL + hdr_room(len);
        if (off >= S.ring_bytes)
            off -= S.ring_bytes;
        if (CR_UNLIKELY((h->len_cls >> 24) == REWIND_CLASS)) {
            r->pos = (r->pos | S.mask) + 1;
            r->seq = next_seq(r->seq);
            atomic_store_explicit(&r->seq_seen, r->seq, memory_order_relaxed);
            atomic_store_explicit(&r->ctrl->tail, r->pos, memory_order_release);
            continue;
        }
        cr_xframe f = {.src = r->world_src, .cls = (cr_xclass)(h->len_cls >> 24), .env = &h->env, .len = len,
                       .p1 = r->cells + off, .n1 = CR_MIN(len, S.ring_bytes - off), .p2 = r->cells};
        cr_xport_deliver(&f);
        r->pos += cells_for(len);
        r->seq = next_seq(r->seq);
        atomic_store_explicit(&r->seq_seen, r->seq, memory_order_relaxed);
        atomic_store_explicit(&r->ctrl->tail, r->pos, memory_order_release);
        got++;
    }
    if (got && S.sleep_mode) {
        /* The sender may be asleep waiting for room in this ring. */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&r->peer->sleeping, memory_order_relaxed))
            ring_bell(r->peer);
    }
    return got;
}

/* Adds the processes that joined us since we last looked to the rings we poll. */
static __attribute__((noinline)) void read_joins(unsigned joined)
{
    S.joined_seen = joined;
    _Atomic uint64_t *mine = &S.joins[(size_t)S.me * S.words];
    for (int w = 0; w < S.words; w++) {
        uint64_t bits = atomic_load_explicit(&mine[w], memory_order_acquire);
        while (bits) {
            int p = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            bool known = false;
            for (int a = 0; a < S.nactive && !known; a++)
                known = S.active[a] == p;
            if (!known)
                S.active[S.nactive++] = p;
        }
    }
}

static inline void check_joins(void)
{
    unsigned joined = atomic_load_explicit(&S.procs[S.me].joined, memory_order_acquire);
    if (CR_UNLIKELY(joined != S.joined_seen))
        read_joins(joined);
}

int cr_shm_poll(void)
{
    int got = 0;
    if (S.n <= 1)
        return 0;
    atomic_uint *polls = &S.procs[S.me].polls; /* one writer: no read-modify-write needed */
    atomic_store_explicit(polls, atomic_load_explicit(polls, memory_order_relaxed) + 1, memory_order_relaxed);
    check_joins();
    int n = S.nactive;
    if (!n)
        return 0;
    /* Start at a different peer each time, so a chatty peer cannot starve the others. */
    int start = S.poll_start = S.poll_start + 1 < n ? S.poll_start + 1 : 0;
    for (int k = 0; k < n; k++) {
        int a = start + k < n ? start + k : start + k - n;
        got += drain(&S.in[S.active[a]]);
    }
    return got;
}

static bool anything_pending(void)
{
    if (atomic_load_explicit(&S.procs[S.me].joined, memory_order_acquire) != S.joined_seen)
        return true;
    for (int a = 0; a < S.nactive; a++) {
        in_ring *r = &S.in[S.active[a]];
        if (atomic_load_explicit(&((frame_hdr *)(r->cells + (r->pos & S.mask) * CELL))->seq, memory_order_acquire) ==
            r->seq)
            return true;
    }
    return false;
}

void cr_shm_sleep(bool (*ready)(void *), void *arg)
{
    if (S.n <= 1) {
        int held = cr_cs_suspend();
        sched_yield();
        cr_cs_resume(held);
        return;
    }
    shm_proc *me = &S.procs[S.me];
    bool on_eventfd = S.eventfd_bell && !atomic_load_explicit(&me->futex_only, memory_order_relaxed);
    unsigned bell = atomic_load_explicit(&me->bell, memory_order_relaxed);
    atomic_store_explicit(&me->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (!anything_pending() && !(ready && ready(arg))) {
        /* The timeout is a safety net only: every frame rings the bell of a sleeper. (It also
         * bounds the one sleep that a peer's switch to the futex can cost, see peer_bell.)
         * Threads of this process run meanwhile (MPI_THREAD_MULTIPLE): one that completes
         * something rings this bell through cr_shm_ring_self (it sees `sleeping`). */
        int held = cr_cs_suspend();
        bool look = false; /* at the watched peers (watch_check), once back in the section */
        if (on_eventfd) {
            cr_wait_sleep(100);
            look = S.watch_ep >= 0 && cr_wait_fired(S.watch_ep);
        } else {
            struct timespec ts = {0, 100 * 1000 * 1000};
            look = futex(&me->bell, FUTEX_WAIT, bell, &ts) != 0 && errno == ETIMEDOUT && S.watch_ep >= 0;
        }
        cr_cs_resume(held);
        if (look)
            watch_check();
    }
    atomic_store_explicit(&me->sleeping, 0, memory_order_relaxed);
}

void cr_shm_ring_self(void)
{
    if (S.n <= 1)
        return;
    shm_proc *me = &S.procs[S.me];
    if (!atomic_load_explicit(&me->sleeping, memory_order_relaxed))
        return;
    if (S.eventfd_bell && !atomic_load_explicit(&me->futex_only, memory_order_relaxed)) {
        cr_wait_ring(cr_wait_bell_fd());
        return;
    }
    atomic_fetch_add_explicit(&me->bell, 1, memory_order_relaxed);
    futex(&me->bell, FUTEX_WAKE, 1, NULL);
}

void *cr_shm_coll_area(size_t *bytes)
{
    if (!S.base)
        return NULL;
    *bytes = S.layout.bytes[CR_SEG_COLL];
    return S.base + S.layout.off[CR_SEG_COLL];
}

void *cr_shm_coll_large_area(size_t *bytes)
{
    *bytes = S.base ? S.layout.bytes[CR_SEG_COLL_LARGE] : 0;
    return *bytes ? S.base + S.layout.off[CR_SEG_COLL_LARGE] : NULL;
}

int cr_shm_local_rank(void)
{
    return S.me;
}

int cr_shm_local_size(void)
{
    return S.n;
}

void cr_shm_wake_world(const int *world_ranks, int from, int to)
{
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = from; i < to; i++) {
        int w = world_ranks ? world_ranks[i] : i, p = w < S.n && S.procs[w].world_rank == w ? w : -1;
        for (int q = 0; p < 0 && q < S.n; q++) /* (a node whose local order is not the world's) */
            p = S.procs[q].world_rank == w ? q : -1;
        if (p >= 0 && p != S.me && atomic_load_explicit(&S.procs[p].sleeping, memory_order_relaxed))
            ring_bell(&S.procs[p]);
    }
}

void cr_shm_wake_sleepers(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    for (int p = 0; p < S.n; p++)
        if (p != S.me && atomic_load_explicit(&S.procs[p].sleeping, memory_order_relaxed))
            ring_bell(&S.procs[p]);
}

/* One copy between a peer's memory and ours: reads it, or writes it (one-sided put).
 * process_vm_readv/writev may copy less than asked (large transfers, page faults on the far
 * side); continue from where it stopped. */
static int shm_move(int peer, const struct iovec *liov, int nl, const struct iovec *riov, int nr, bool write)
{
    if (!S.cma_ok)
        return -1;
    struct iovec l[64], r[64];
    if (nl > 64 || nr > 64)
        return -1;
    memcpy(l, liov, (size_t)nl * sizeof *l);
    memcpy(r, riov, (size_t)nr * sizeof *r);
    struct iovec *lp = l, *rp = r;
    size_t left = 0;
    for (int i = 0; i < nl; i++)
        left += l[i].iov_len;
    pid_t pid = S.procs[peer].pid;
    while (left) {
        ssize_t got = write ? process_vm_writev(pid, lp, (unsigned long)nl, rp, (unsigned long)nr, 0)
                            : process_vm_readv(pid, lp, (unsigned long)nl, rp, (unsigned long)nr, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0 && (errno == EPERM || errno == ENOSYS))
                S.cma_ok = false; /* not allowed here (ptrace policy, seccomp): never try again */
            return -1;           /* (a bad address, EFAULT, fails this copy only) */
        }
        left -= (size_t)got;
        for (size_t g = (size_t)got; g;) { /* advance both vectors by `got` bytes */
            size_t a = CR_MIN(g, lp->iov_len);
            lp->iov_base = (char *)lp->iov_base + a;
            lp->iov_len -= a;
            g -= a;
            if (!lp->iov_len && nl > 1) {
                lp++;
                nl--;
            }
        }
        for (size_t g = (size_t)got; g;) {
            size_t a = CR_MIN(g, rp->iov_len);
            rp->iov_base = (char *)rp->iov_base + a;
            rp->iov_len -= a;
            g -= a;
            if (!rp->iov_len && nr > 1) {
                rp++;
                nr--;
            }
        }
    }
    return 0;
}

static int shm_read(int peer, const struct iovec *liov, int nl, const struct iovec *riov, int nr)
{
    return shm_move(peer, liov, nl, riov, nr, false);
}

static int shm_write(int peer, const struct iovec *liov, int nl, const struct iovec *riov, int nr)
{
    return shm_move(peer, liov, nl, riov, nr, true);
}

/* parallel_below: a frame below REWIND_MIN bytes copies with cr_copy (no shared state, as
 * cr_copy_shared's timing has) and never rewinds (no shared counter); everything else it
 * touches is the destination's ring (the caller's lock), atomics, or read-only after MPI_Init. */
const cr_xport_ops cr_shm_ops = {"shm",    shm_send,     shm_send_gather, shm_max_frame, shm_stream_frame,
                                 shm_read, shm_write,    shm_can_read,    shm_pull_preferred,
                                 shm_split_preferred, .parallel_below = REWIND_MIN};
_Static_assert(REWIND_MIN <= CR_COPY_SHARED_SMALL, "frames sent outside the section copy with cr_copy");
