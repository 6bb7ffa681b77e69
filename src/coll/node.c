/* node.c: the shared-memory collective component. This file deliberately reaches into the
 * node's shared segment (through the small interface shm.h offers it), which no other
 * collective does: with flags and buffers there, a barrier or a small reduction among the
 * node's processes is one round instead of log2(p) rounds of messages. That matters most with
 * more ranks than cores, where every message round waits for the receiver to be scheduled.
 *
 * Used for MPI_COMM_WORLD when all its processes share this node (its areas are regions of the
 * transport's segment), and for any other intracommunicator of such a job from its third
 * blocking collective on (setup(): areas of its own, in a memory file its members map; node.h).
 *
 * Barrier: a counter of arrivals and a generation number. Each process notes the generation,
 * counts itself in; the last to arrive resets the counter, advances the generation and wakes
 * every sleeping process; the others wait (polling their rings meanwhile, so point-to-point
 * traffic keeps moving) until the generation changes.
 * Cost: p atomic increments on one line + one wake-up round: about one scheduling round.
 *
 * Small allreduce (up to CR_SHM_COLL_SLOT bytes per process): each process writes its data to
 * its slot of generation g (two sets of slots alternate), passes the barrier, then combines all
 * slots in rank order itself: the result is the same on every process and respects operations
 * that do not commute. A set of slots is written again only two generations later, when
 * everyone has passed the barrier after reading it.
 * When every process has a core (not the transport's sleep mode, which every process decides
 * alike), the barrier's shared counter is left out: each slot starts with a flag, the call's
 * number, written after the data, and a process waits for every other slot's flag instead.
 * At 2 processes that is one cache line each way, read while the other writes, where the
 * counter cost a chain of four or five transfers between the cores one after another (an
 * 8-byte allreduce 0.6-0.75 us against Open MPI's 0.45-0.6). Reuse needs no more: a process
 * writes a set again in call g + 2 after it saw every flag of call g + 1, which each process
 * raised only once it had read call g's slots (node collectives run one at a time in each
 * process, node.h). Sleepers would need a wake-up from each writer, so sleep mode keeps the
 * barrier; there, from 256 bytes a process, the last process to arrive combines every slot
 * for everyone and the others copy its one (allreduce_last).
 * Small allgather, alltoall and reduce_scatter_block use the same slots: each process writes
 * its block, its whole send buffer or its whole vector, then flags (or, in sleep mode, the
 * barrier), then takes its part of every slot.
 *
 * Small reduce, scan, exscan, gather and scatter (up to RING_SLOT bytes per process), without
 * synchronizing:
 * each process has a ring of RING_DEPTH slots, each starting with a flag, and a line with a
 * counter `done`.
 * All of them count these calls alike (every process makes them in the same order); for call g
 * a process
 *   - waits until its slot g % RING_DEPTH is free: the process that read it in call
 *     g - RING_DEPTH is done with that call (each process notes who reads its slot in each of
 *     the last RING_DEPTH calls; when nobody did, or for a scatter's root, which writes
 *     everyone's slots, everyone must be done with g - RING_DEPTH);
 *   - writes its data into the slot and raises the slot's flag for call g (a scatter's root
 *     writes each process's block into that process's slot instead; a gather's root and a
 *     scatter's others write nothing);
 *   - waits until the slots it folds have their flags of call g up (reduce and gather:
 *     everyone's, at the root only; scatter: its own, which the root wrote);
 *   - folds their slots in rank order straight from shared memory (gather and scatter: copies
 *     them out), then publishes done = g + 1 (a process that reads nothing, a reduce's or
 *     gather's non-root and a scatter's root, publishes it at once and leaves).
 * A scan or exscan is a chain instead (ring_chain): process r waits for process r - 1's slot,
 * which holds the prefix of processes 0..r - 1, and writes its own prefix into its slot for
 * process r + 1; so each process reads one slot.
 * Nobody waits for a later process but to reuse a slot, so processes run up to RING_DEPTH - 1
 * calls ahead of those they do not wait for, as after eager messages (along a scan's chain,
 * that many per process). That is what a loop of these calls needs on more processes than
 * cores: 8 processes on 2 cores paid a few context switches per call with a ring of 8 (an
 * 8-byte scan 3.3 us, reduce 1.3-1.8 us), a few per 64 calls with 64 (0.8 and 0.9-1.2 us).
 * When every process waited for everyone to be done with call g - RING_DEPTH, a scan's chain
 * of 8 processes could spread only 64 calls in all, so each ran about 8 calls a turn: 0.4-0.7
 * context switches a call, against 0.13 for Open MPI's chain of eager messages. Each process
 * remembers the least `done` it last saw among those it waits for, so it reads the others'
 * lines only when that is not enough. A reader polls the flag in the slot itself, so 48 bytes
 * or less arrive with it in one cache line: with a counter line beside the slots (`staged`,
 * until 2026-11-29) a reader took that line and then the slot's, two transfers between cores
 * one after the other (an 8-byte scatter at 2 processes 0.13-0.15 us against Open MPI's
 * 0.09-0.12). Raising flags wakes only the sleepers that may read them: the next process
 * (scan), the root (reduce, gather) or everyone (scatter); a `done` wakes those that said they
 * wait for a slot (`wants_done`, counted in `ring_waiters`, so that usually one line says
 * nobody).
 *
 * Counters are 32 bits and wrap around: the barrier's generation is only compared for
 * equality, and call numbers are compared by their signed difference (processes are at most
 * RING_DEPTH calls apart, n RING_DEPTH along a scan's chain; what a process remembers of the
 * others' counters is forgotten every RING_FORGET calls), so 2^32 collectives later nothing
 * changes. All of them start
 * at cr_shm_seq_start(), which a test sets just below 2^32 to run across the wrap. */
#include "node.h"

#include "core/config.h"
#include "core/pvar.h"
#include "core/runtime.h"
#include "xport/shm/segment.h"
#include "xport/shm/shm.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RING_DEPTH CR_SHM_COLL_RING_DEPTH
#define RING_SLOT CR_SHM_COLL_SLOT
#define RING_STRIDE CR_SHM_COLL_RING_STRIDE
/* Every RING_FORGET calls the counters a process remembers of others are forgotten (set below
 * anything a later call asks, so the lines are read again): a remembered value only says
 * "at least this" while it is less than 2^31 calls old, and a process may go that long without
 * asking one of them (the slot-reuse check that asks everyone is needed only after a scatter
 * or an unused slot; a scan's previous process after 2^31 reduces). */
#define RING_FORGET (1u << 28)


typedef struct counter {
    _Alignas(64) _Atomic uint32_t v;
} counter;

/* The barrier's generation, and beside it in its line what a sleep-mode allreduce's last process
 * left for the others (read after the generation's acquire, written before its release). */
typedef struct generation_line {
    _Alignas(64) _Atomic uint32_t v; /* completed barriers */
    _Atomic int32_t result_from;     /* the rank whose slot holds the combined result of the
                                      * allreduce that just completed, or -1: each combines */
} generation_line;

typedef struct node_area {
    counter ready;            /* 0, then 1 while the first user sets the counters, then 2 */
    counter arrive;           /* barrier: processes in */
    generation_line generation;
    counter ring_waiters;     /* ring: processes that wait for a slot (wants_done set) */
    _Alignas(64) char slots[]; /* [2][n][SLOT] for allreduce, then the ring lines and slots */
} node_area;

_Static_assert(offsetof(node_area, slots) == 4 * 64, "the layout CR_SHM_COLL_BYTES assumes");
_Static_assert(sizeof(counter) == 64 && sizeof(generation_line) == 64, "one counter a cache line");
_Static_assert(sizeof ((cr_coll_node *)0)->ring_reader == RING_DEPTH * sizeof(int32_t), "a reader per ring call");
_Static_assert((1ull << 32) % RING_DEPTH == 0 && RING_STRIDE % 64 == 0, "ring slots: g % RING_DEPTH across the wrap");

/* After the allreduce slots: a ring line per process, then each process's RING_DEPTH slots. */
typedef struct ring_line {
    _Alignas(64) _Atomic uint32_t done; /* the last call it finished reading others' slots for, + 1 */
    _Atomic uint32_t wants_done;        /* it waits for a slot: wake it when a `done` moves */
} ring_line;

/* A ring slot starts with its flag, the writer's 64-bit call number + 1 once the call's data is
 * in it (stored with release order after the data), then the data's size (node.h: counts beside
 * the data); the data follows RING_FLAG_BYTES in,
 * aligned for any type's operations (long double, complex), so up to 48 bytes travel in the
 * flag's line. The flag is 64 bits because a slot may go unwritten for any number of calls (the
 * last process's slots in a run of scans, a gather root's own): a 32-bit call number + 1 left
 * in it 2^32 calls before would look like this call's. */
enum { RING_FLAG_BYTES = 16, RING_SIZE_AT = 8 }; /* (the size of the data: node.h, put_size) */

static ring_line *ring_lines(node_area *a, int n)
{
    return (ring_line *)(a->slots + 2 * (size_t)n * CR_SHM_COLL_ALLREDUCE_STRIDE);
}

static char *ring_slot(node_area *a, uint32_t g, int rank, int n)
{
    return (char *)(ring_lines(a, n) + n) + ((size_t)rank * RING_DEPTH + g % RING_DEPTH) * RING_STRIDE;
}

/* Where the data of a ring slot starts. */
static char *ring_data(node_area *a, uint32_t g, int rank, int n)
{
    return ring_slot(a, g, rank, n) + RING_FLAG_BYTES;
}

/* The first process to get here runs `init` (which sets counters to their first values,
 * cr_shm_seq_start()); the others wait until it has: a zeroed file is all they can assume. */
void cr_coll_node_once(_Atomic uint32_t *ready, void (*init)(void *), void *arg)
{
    uint32_t expect = 0, idle = 0;
    if (atomic_compare_exchange_strong(ready, &expect, 1)) {
        init(arg);
        atomic_store_explicit(ready, 2, memory_order_release);
    } else {
        while (atomic_load_explicit(ready, memory_order_acquire) != 2)
            if (++idle % 64 == 0)
                sched_yield();
    }
}

typedef struct small_init {
    node_area *a;
    int n;
} small_init;

static void init_small(void *arg)
{
    small_init *x = arg;
    node_area *a = x->a;
    atomic_store_explicit(&a->generation.v, cr_shm_seq_start(), memory_order_relaxed);
    ring_line *lines = ring_lines(a, x->n);
    for (int r = 0; r < x->n; r++) /* every call before the first is done */
        atomic_store_explicit(&lines[r].done, cr_shm_seq_start(), memory_order_relaxed);
}

/* Starts both areas of `st` (for n processes) in this process. */
static cr_coll_node *start(cr_coll_node *st, int n)
{
    small_init x = {st->small, n};
    cr_coll_node_once(&st->small->ready.v, init_small, &x);
    st->ring_calls = st->ring_free_until = cr_shm_seq_start();
    st->allreduce_calls = cr_shm_seq_start();
    st->ring_seen_reader = -1;
    for (int i = 0; i < RING_DEPTH; i++) /* (no slot used yet: the first calls wait for nothing) */
        st->ring_reader[i] = -1;
    if (st->large)
        cr_coll_node_large_start(st, n);
    return st;
}

static cr_coll_node world_node;
static cr_coll_node disabled; /* communicators the component cannot serve (setup failed) */

cr_coll_node *cr_coll_node_of(cr_comm *c)
{
    cr_coll_node *st = c->coll_node;
    if (CR_LIKELY(st != NULL))
        return st->small ? st : NULL;
    size_t bytes;
    if (c != &cr_comm_world || cr_rt.nnodes != 1 || c->size < 2 || cr_shm_local_size() != c->size ||
        !(world_node.small = cr_shm_coll_area(&bytes)))
        return NULL;
    world_node.large = cr_shm_coll_large_area(&bytes);
    return c->coll_node = start(&world_node, c->size);
}

/* Gives `c` (an intracommunicator whose members share a node, not MPI_COMM_WORLD) areas of its own:
 * rank 0 makes a memory file, broadcasts where it is (its pid and descriptor, which the others
 * open through /proc), everyone maps it and says whether that worked; rank 0 then closes its
 * descriptor (the mappings keep the file). Runs inside a blocking collective that every member
 * calls, with message algorithms, before the collective's own schedule. */
static int setup(cr_comm *c)
{
    int n = c->size;
    size_t small = (CR_SHM_COLL_BYTES(n) + 4095) & ~(size_t)4095, bytes = small + CR_SHM_COLL_LARGE_BYTES(n);
    int64_t card[2] = {-1, -1};
    int fd = -1;
    void *base = NULL;
    if (c->rank == 0 && cr_seg_create("courier-coll", bytes, &fd, &base) == 0) {
        card[0] = getpid();
        card[1] = fd;
    }
    cr_sched s;
    cr_sched_init(&s, c);
    cr_coll_bcast_binomial(&s, card, 2, cr_dtype_get(MPI_INT64_T), 0);
    int err = cr_sched_run(&s);
    if (!err && c->rank != 0 && card[1] >= 0 && cr_seg_attach((int)card[0], (int)card[1], bytes, &base) != 0)
        base = NULL;
    int32_t ok = !err && base;
    if (!err) {
        cr_sched_init(&s, c);
        cr_coll_allreduce_recursive_doubling(&s, &ok, 1, cr_dtype_get(MPI_INT32_T), cr_op_get(MPI_MIN));
        err = cr_sched_run(&s);
    }
    if (fd >= 0)
        close(fd);
    cr_coll_node *st = ok && !err ? calloc(1, sizeof *st) : NULL;
    if (!st) {
        if (base)
            munmap(base, bytes);
        c->coll_node = &disabled; /* every member decided alike (the allreduce) */
        return err;
    }
    st->small = base;
    st->large = CR_SHM_COLL_LARGE_BYTES(n) ? (struct large_area *)((char *)base + small) : NULL;
    st->map = base;
    st->map_bytes = bytes;
    c->coll_node = start(st, n);
    return MPI_SUCCESS;
}

/* Blocking collectives on a communicator before it gets areas of its own: the members count
 * them alike (blocking collectives are called in the same order everywhere and never match
 * nonblocking ones), so they all set up in the same call. */
#define SETUP_AFTER 3

/* Whether every member of `c` is on this process's node (then all members find the same). */
static bool on_one_node(cr_comm *c)
{
    int mine = cr_rt.node_of[cr_rt.rank];
    for (int r = 0; r < c->size; r++)
        if (cr_rt.node_of[cr_comm_world_rank(c, r)] != mine)
            return false;
    return true;
}

int cr_coll_node_prepare(cr_comm *c)
{
    if (CR_LIKELY(c->coll_node != NULL) || c == &cr_comm_world || c->inter || c->size < 2 ||
        ++c->coll_blocking < SETUP_AFTER)
        return MPI_SUCCESS;
    if (cr_rt.nnodes > 1 && !on_one_node(c)) {
        c->coll_node = &disabled; /* a communicator across nodes: message algorithms */
        return MPI_SUCCESS;
    }
    return setup(c);
}

void cr_coll_node_release(cr_comm *c)
{
    cr_coll_node *st = c->coll_node;
    c->coll_node = NULL;
    if (st && st->map) {
        munmap(st->map, st->map_bytes);
        free(st);
    }
}

bool cr_coll_node_take_turn(cr_sched *s, cr_coll_node *st)
{
    if (!s->node_turn) {
        s->node = st;
        s->node_ticket = st->issued++;
        s->node_turn = 1;
    }
    if (st->retired != s->node_ticket)
        return false;
    s->node_turn = 2;
    return true;
}

void cr_coll_node_end_turn(cr_sched *s)
{
    /* A schedule ends only after its turn came: node steps hold back every later step, and no
     * message step precedes them, so nothing can fail while a ticket waits. */
    s->node->retired++;
    s->node_turn = 0;
}

static node_area *area_of(cr_comm *c)
{
    cr_coll_node *st = cr_coll_node_of(c);
    return st ? st->small : NULL;
}

bool cr_coll_node_usable(cr_comm *c, uint64_t bytes_per_process)
{
    return area_of(c) != NULL && bytes_per_process <= CR_SHM_COLL_SLOT;
}

/* Flags in the allreduce slots: every process has a core (decided once, alike everywhere). */
static bool allreduce_flags(void)
{
    return !cr_shm_sleep_mode();
}

static int64_t slots_in_sleep;
CR_TUNABLE(slots_in_sleep, COURIER_COLL_NODE_SLOTS_SLEEP, CR_TUNE_BOOL, "1",
           "with more processes than cores (sleep mode), small allgathers, alltoalls and reduce_scatter_blocks go "
           "through the small allreduce's slots and its barrier (1), or through the staging blocks (0)");

enum { FLAG_BYTES = 8 }; /* a slot's header: the flag (32 bits), then the size of the data
                          * (32 bits: put_size); the data follows (the slots are
                          * CR_SHM_COLL_ALLREDUCE_STRIDE apart: room for CR_SHM_COLL_SLOT bytes
                          * after the header). Sleep mode uses the size alone. */
enum { SLOT_SIZE_AT = 4 };

void cr_coll_node_check_size(cr_sched *s, int from, uint64_t got, uint64_t want)
{
    if (CR_LIKELY(got == want) || s->err) /* (the first mismatch is the call's result) */
        return;
    int err = got == CR_COLL_NODE_MARKED
                  ? cr_err(MPI_ERR_TRUNCATE,
                           "rank %d marked what it contributed as not valid: it, or a process whose data reached it "
                           "first (a scan's chain), passed counts (or types) that do not match the others'",
                           from)
                  : cr_err(MPI_ERR_TRUNCATE,
                           "rank %d contributed %llu bytes where this process expects %llu: the processes of the "
                           "collective passed counts (or types) that do not match",
                           from, (unsigned long long)got, (unsigned long long)want);
    cr_sched_note_mismatch(s, err);
}

/* The size field of a slot (node.h: counts beside the data): 32 bits are room for a slot's
 * bytes, and UINT32_MAX stands for CR_COLL_NODE_MARKED. Written before the flag's release (or
 * the barrier's), read after its acquire, like the data. */
static void put_size(const cr_sched *s, char *at, uint64_t bytes)
{
    uint64_t m = cr_coll_node_size_mark(s, bytes);
    uint32_t v = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
    memcpy(at, &v, sizeof v);
}

static void check_size(cr_sched *s, const char *at, int from, uint64_t want)
{
    uint32_t v;
    memcpy(&v, at, sizeof v);
    cr_coll_node_check_size(s, from, v == UINT32_MAX ? CR_COLL_NODE_MARKED : v, want);
}

/* Slot of `rank` for allreduce generation `gen`. */
static char *slot(node_area *a, uint32_t gen, int rank, int n)
{
    return a->slots + ((gen % 2) * (size_t)n + (size_t)rank) * CR_SHM_COLL_ALLREDUCE_STRIDE;
}

/* The node algorithms as schedule steps (call steps; the first of each waits for the call's
 * turn, node.h). The call's arguments live in the schedule's `args` and its per-run state
 * in `state`: state[0] the generation or reduction number this call uses. */

/* Counts this process in to the barrier of generation state[0]; whether it is the last one in
 * (state[1]), which must then call open_generation. */
static bool count_in(cr_sched *s, node_area *a)
{
    s->state[0] = atomic_load_explicit(&a->generation.v, memory_order_acquire);
    s->state[1] = atomic_fetch_add_explicit(&a->arrive.v, 1, memory_order_acq_rel) == (uint32_t)s->size - 1;
    return s->state[1];
}

/* The last one in: opens the next generation, which releases everyone. */
static void open_generation(cr_sched *s, node_area *a)
{
    atomic_store_explicit(&a->arrive.v, 0, memory_order_relaxed);
    atomic_store_explicit(&a->generation.v, (uint32_t)s->state[0] + 1, memory_order_release);
    cr_shm_wake_sleepers();
}

/* Barrier, step 1: notes the generation and counts this process in; the last one in opens
 * the next generation. state[1] says whether this process was the last. */
static int arrive(cr_sched *s, void *arg)
{
    node_area *a = arg;
    if (!cr_coll_node_turn(s, s->comm->coll_node))
        return CR_SCHED_AGAIN;
    if (count_in(s, a))
        open_generation(s, a);
    return MPI_SUCCESS;
}

/* Barrier, step 2: everyone has arrived once the generation moved on. */
static int generation_moved(cr_sched *s, void *arg)
{
    node_area *a = arg;
    return atomic_load_explicit(&a->generation.v, memory_order_acquire) != s->state[0] ? MPI_SUCCESS
                                                                                       : CR_SCHED_AGAIN;
}

void cr_coll_node_barrier(cr_sched *s)
{
    node_area *a = area_of(s->comm);
    cr_sched_call(s, arrive, a);
    cr_sched_call(s, generation_moved, a);
}

/* Combines the slots of processes 0 .. upto - 1 (process r's at first + r * stride) in rank
 * order into `out`. */
static int combine_slots(const char *first, size_t stride, int upto, void *out, MPI_Count count, cr_dtype *dt,
                         cr_op *op)
{
    void *alloc;
    char *tmp = cr_coll_tmp(count, dt, &alloc);
    if (!tmp)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a reduction");
    /* Slots hold packed data; combine in out (typed), one contribution at a time. */
    cr_dt_unpack(out, count, dt, 0, first, (uint64_t)count * (uint64_t)dt->size);
    for (int r = 1; r < upto; r++) {
        cr_dt_unpack(tmp, count, dt, 0, first + (size_t)r * stride, (uint64_t)count * (uint64_t)dt->size);
        cr_op_apply(op, out, tmp, count, dt); /* tmp = out op slot[r] */
        cr_dt_copy(tmp, count, dt, out, count, dt);
    }
    cr_coll_scratch_release(alloc);
    return MPI_SUCCESS;
}

/* Combines every process's slot of allreduce generation `gen` in rank order into `out`. */
static int combine(node_area *a, uint32_t gen, void *out, MPI_Count count, cr_dtype *dt, cr_op *op, int n)
{
    return combine_slots(slot(a, gen, 0, n) + FLAG_BYTES, CR_SHM_COLL_ALLREDUCE_STRIDE, n, out, count, dt, op);
}

/* Allreduce in sleep mode, the last process in: with every contribution there and of this
 * process's size, combines them in rank order into its receive buffer and puts the result in its
 * own slot (whose contribution nobody needs any more) for the others to copy: one process reads
 * every slot, the others one. With more processes than cores that is most of the call's work
 * beyond the switches (an 8-process allreduce of 1 KiB read 8 slots in each process). With a
 * mismatch, or no memory to combine, it leaves -1 and each process combines and reports as
 * before. Before the generation's release: the others read result_from after its acquire. */
enum { LAST_COMBINES_FROM = 256 }; /* bytes a process; below, the last one's combining delays everyone
                                   * about as much as it saves them (against each combining, on 2 cores:
                                   * 8 B 1.00-1.10x the time at 4 processes, 0.96-1.01x at 8; 256 B
                                   * 0.90-0.95x at 4 and 8; 1 KiB 0.76-0.85x) */
CR_PVAR_DEFINE(ran_last_combined, "coll.allreduce.node_last",
               "MPI_Allreduce calls through shared memory whose result the last process to arrive combined for "
               "everyone (processes sharing cores)");
static void allreduce_last(cr_sched *s, node_area *a)
{
    cr_sched_args *x = &s->args;
    uint32_t gen = (uint32_t)s->state[0];
    uint64_t bytes = (uint64_t)x->count * (uint64_t)x->dt->size;
    int32_t from = -1;
    bool same = cr_coll_node_size_mark(s, bytes) == bytes;
    for (int r = 0; r < s->size && same; r++) {
        uint32_t v;
        memcpy(&v, slot(a, gen, r, s->size) + SLOT_SIZE_AT, sizeof v);
        same = v == bytes;
    }
    if (same && combine(a, gen, x->rbuf, x->count, x->dt, x->op, s->size) == MPI_SUCCESS) {
        cr_dt_pack(x->rbuf, x->count, x->dt, 0, slot(a, gen, s->rank, s->size) + FLAG_BYTES, bytes);
        from = s->rank;
    }
    atomic_store_explicit(&a->generation.result_from, from, memory_order_relaxed);
}

/* Allreduce, step 1: this process's data into its slot of the coming generation, then the
 * barrier's arrival (the last one in combines for everyone first). */
static int allreduce_put(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_sched_args *x = &s->args;
    if (!cr_coll_node_turn(s, s->comm->coll_node))
        return CR_SCHED_AGAIN;
    uint32_t gen = atomic_load_explicit(&a->generation.v, memory_order_acquire);
    char *mine = slot(a, gen, s->rank, s->size);
    uint64_t bytes = (uint64_t)x->count * (uint64_t)x->dt->size;
    cr_dt_pack(x->rbuf, x->count, x->dt, 0, mine + FLAG_BYTES, bytes);
    put_size(s, mine + SLOT_SIZE_AT, bytes);
    if (count_in(s, a)) {
        if (bytes >= LAST_COMBINES_FROM)
            allreduce_last(s, a);
        else
            atomic_store_explicit(&a->generation.result_from, -1, memory_order_relaxed);
        open_generation(s, a);
    }
    return MPI_SUCCESS;
}

/* Allreduce, step 3: everyone's data is in: take the result the last process combined, or
 * combine it here. */
static int allreduce_combine(cr_sched *s, void *arg)
{
    cr_sched_args *x = &s->args;
    int32_t from = atomic_load_explicit(&((node_area *)arg)->generation.result_from, memory_order_relaxed);
    if (from >= 0) {
        ran_last_combined++;
        if (from != s->rank)
            cr_dt_unpack(x->rbuf, x->count, x->dt, 0, slot(arg, s->state[0], from, s->size) + FLAG_BYTES,
                         (uint64_t)x->count * (uint64_t)x->dt->size);
        return MPI_SUCCESS;
    }
    for (int r = 0; r < s->size; r++)
        if (r != s->rank)
            check_size(s, slot(arg, s->state[0], r, s->size) + SLOT_SIZE_AT, r,
                       (uint64_t)x->count * (uint64_t)x->dt->size);
    if (s->err) /* (node.h: nothing combined after a mismatch) */
        return MPI_SUCCESS;
    return combine(arg, s->state[0], x->rbuf, x->count, x->dt, x->op, s->size);
}

/* The flag a slot carries for call g: never 0, which a slot not yet written holds. */
static uint32_t flag_of(uint32_t g)
{
    return g + 1 ? g + 1 : 1;
}

/* The collectives the flag slots serve (state[2]): each process writes its slot once, and
 * reads every other process's, so the reuse rule above holds for a mix of them; they count
 * their calls together (allreduce_calls). What a process writes: an allreduce's vector, an
 * allgather's own block, an alltoall's whole send buffer (its p blocks), a
 * reduce_scatter_block's whole vector; what it takes: the combination of every slot, every
 * other slot, its block of every slot, the combination of its block of every slot. */
enum { FLAGS_ALLREDUCE, FLAGS_ALLGATHER, FLAGS_ALLTOALL, FLAGS_REDUCE_SCATTER_BLOCK };

/* This process's data for a call of kind state[2] into its slot `mine`, with its size; the
 * bytes written, also in state[3] (what every other slot should hold too: at most a slot). */
static uint64_t put_data(cr_sched *s, char *mine)
{
    cr_sched_args *x = &s->args;
    uint64_t bytes = (uint64_t)x->count * (uint64_t)x->dt->size;
    switch (s->state[2]) {
    case FLAGS_ALLREDUCE:
        cr_dt_pack(x->rbuf, x->count, x->dt, 0, mine + FLAG_BYTES, bytes);
        break;
    case FLAGS_ALLGATHER:
        cr_dt_pack(cr_coll_at(x->rbuf, (MPI_Count)s->rank * x->count, x->dt), x->count, x->dt, 0, mine + FLAG_BYTES,
                   bytes);
        break;
    default: /* p consecutive blocks of the send buffer (sbuf, scount, sdt: resolved for MPI_IN_PLACE) */
        bytes = (uint64_t)x->scount * (uint64_t)s->size * (uint64_t)x->sdt->size;
        cr_dt_pack(x->sbuf, x->scount * s->size, x->sdt, 0, mine + FLAG_BYTES, bytes);
    }
    put_size(s, mine + SLOT_SIZE_AT, bytes);
    s->state[3] = (uint32_t)bytes;
    return bytes;
}

/* With flags, step 1: the call's number, this process's data into its slot of the call's set,
 * then the flag. state[0] the call's number, state[1] the next rank to look at. */
static int flags_put(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_coll_node *st = s->comm->coll_node;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    uint32_t g = st->allreduce_calls++;
    char *mine = slot(a, g, s->rank, s->size);
    put_data(s, mine);
    atomic_store_explicit((_Atomic uint32_t *)mine, flag_of(g), memory_order_release);
    s->state[0] = g;
    s->state[1] = 0;
    return MPI_SUCCESS;
}

/* In sleep mode, step 1 instead: the data into this process's slot of the barrier's coming
 * generation, then the barrier's arrival (sleepers need the last one's wake-up, which one
 * counter gives where flags would need one from every writer). Then generation_moved, then
 * flags_take on the slots of generation state[0], reused two generations later as an
 * allreduce's are. */
CR_PVAR_DEFINE(ran_slots_barrier, "coll.node.slots_barrier",
               "small MPI_Allgather, MPI_Alltoall and MPI_Reduce_scatter_block calls (and their nonblocking forms) "
               "through the small allreduce's slots and its barrier (processes sharing cores)");
static int barrier_put(cr_sched *s, void *arg)
{
    node_area *a = arg;
    if (!cr_coll_node_turn(s, s->comm->coll_node))
        return CR_SCHED_AGAIN;
    ran_slots_barrier++;
    uint32_t gen = atomic_load_explicit(&a->generation.v, memory_order_acquire);
    put_data(s, slot(a, gen, s->rank, s->size));
    if (count_in(s, a))
        open_generation(s, a);
    return MPI_SUCCESS;
}

/* Allreduce with flags, step 2: every other process's flag of this call is up. */
static int flags_seen(cr_sched *s, void *arg)
{
    node_area *a = arg;
    uint32_t g = s->state[0], want = flag_of(g);
    for (int r = (int)s->state[1]; r < s->size; r++) {
        if (r != s->rank &&
            atomic_load_explicit((_Atomic uint32_t *)slot(a, g, r, s->size), memory_order_acquire) != want) {
            s->state[1] = (uint32_t)r;
            return CR_SCHED_AGAIN;
        }
    }
    return MPI_SUCCESS;
}

/* With flags (or, in sleep mode, after the barrier), step 3: every slot is in; take what this
 * process needs from them. */
static int flags_take(cr_sched *s, void *arg)
{
    cr_sched_args *x = &s->args;
    const size_t stride = CR_SHM_COLL_ALLREDUCE_STRIDE;
    const char *first = slot(arg, s->state[0], 0, s->size) + FLAG_BYTES;
    uint64_t bytes = (uint64_t)x->count * (uint64_t)x->dt->size; /* (one block) */
    for (int r = 0; r < s->size; r++)
        if (r != s->rank)
            check_size(s, first - FLAG_BYTES + SLOT_SIZE_AT + (size_t)r * stride, r, s->state[3]);
    if (s->err && x->op) /* (node.h: nothing combined after a mismatch) */
        return MPI_SUCCESS;
    switch (s->state[2]) {
    case FLAGS_ALLREDUCE:
        return combine_slots(first, stride, s->size, x->rbuf, x->count, x->dt, x->op);
    case FLAGS_REDUCE_SCATTER_BLOCK:
        return combine_slots(first + (size_t)s->rank * bytes, stride, s->size, x->rbuf, x->count, x->dt, x->op);
    case FLAGS_ALLGATHER:
        for (int r = 0; r < s->size; r++)
            if (r != s->rank)
                cr_dt_unpack(cr_coll_at(x->rbuf, (MPI_Count)r * x->count, x->dt), x->count, x->dt, 0,
                             first + (size_t)r * stride, bytes);
        return MPI_SUCCESS;
    default: /* FLAGS_ALLTOALL */
        for (int r = 0; r < s->size; r++)
            cr_dt_unpack(cr_coll_at(x->rbuf, (MPI_Count)r * x->count, x->dt), x->count, x->dt, 0,
                         first + (size_t)r * stride + (size_t)s->rank * bytes, bytes);
        return MPI_SUCCESS;
    }
}

/* Appends a call through the flag slots: put, wait for every flag, take; in sleep mode, put,
 * pass the barrier, take. */
static void flags_call(cr_sched *s, int kind, const cr_sched_args *x)
{
    node_area *a = area_of(s->comm);
    s->args = *x;
    s->state[2] = (uint32_t)kind;
    bool flags = allreduce_flags();
    cr_sched_call(s, flags ? flags_put : barrier_put, a);
    cr_sched_call(s, flags ? flags_seen : generation_moved, a);
    cr_sched_call(s, flags_take, a);
}

bool cr_coll_node_flags_usable(cr_comm *c, int blocks, uint64_t block_bytes)
{
    /* (zero-byte blocks go the staging blocks' way: the flag steps would index by counts that a
     * zero-size type lets be anything) */
    return (allreduce_flags() || slots_in_sleep) && block_bytes > 0 &&
           block_bytes <= CR_SHM_COLL_SLOT / (uint64_t)blocks && cr_coll_node_usable(c, 0);
}

void cr_coll_node_flags_allgather(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt)
{
    flags_call(s, FLAGS_ALLGATHER, &(cr_sched_args){.rbuf = rbuf, .count = count, .dt = dt});
}

void cr_coll_node_flags_alltoall(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                                 MPI_Count rcount, cr_dtype *rdt)
{
    flags_call(s, FLAGS_ALLTOALL,
               &(cr_sched_args){.sbuf = sbuf, .scount = scount, .sdt = sdt, .rbuf = rbuf, .count = rcount, .dt = rdt});
}

void cr_coll_node_flags_reduce_scatter_block(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt,
                                             cr_op *op)
{
    flags_call(s, FLAGS_REDUCE_SCATTER_BLOCK,
               &(cr_sched_args){.sbuf = sbuf, .scount = count, .sdt = dt, .rbuf = rbuf, .count = count, .dt = dt,
                                .op = op});
}

void cr_coll_node_allreduce(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    node_area *a = area_of(s->comm);
    if (allreduce_flags()) {
        flags_call(s, FLAGS_ALLREDUCE, &(cr_sched_args){.rbuf = rbuf, .count = count, .dt = dt, .op = op});
        return;
    }
    s->args = (cr_sched_args){.rbuf = rbuf, .count = count, .dt = dt, .op = op};
    cr_sched_call(s, allreduce_put, a);
    cr_sched_call(s, generation_moved, a);
    cr_sched_call(s, allreduce_combine, a);
}

/* ----------------------------------------------------------------- the ring: small reduce, scan, exscan */

enum { RING_SCAN, RING_EXSCAN, RING_REDUCE, RING_GATHER, RING_SCATTER };

bool cr_coll_node_ring_usable(cr_comm *c, uint64_t bytes_per_process)
{
    return area_of(c) != NULL && bytes_per_process <= RING_SLOT;
}

/* Whether the counter `field` of every process in [from, to) has reached `at_least`; `*until`
 * remembers the least value seen (for the same range every time), so that usually no line is
 * read. */
static bool ring_reached(node_area *a, int n, size_t field, int from, int to, uint32_t at_least, uint32_t *until)
{
    if ((int32_t)(*until - at_least) >= 0)
        return true;
    ring_line *lines = ring_lines(a, n);
    uint32_t least = at_least + 0x7fffffffu; /* above anything within reach */
    for (int r = from; r < to; r++) {
        uint32_t v = atomic_load_explicit((_Atomic uint32_t *)((char *)&lines[r] + field), memory_order_acquire);
        if ((int32_t)(v - at_least) < 0)
            return false;
        if ((int32_t)(v - least) < 0)
            least = v;
    }
    *until = from < to ? least : at_least;
    return true;
}

/* What process `rank` does in a reduce, gather or scatter with this root: whether it writes a slot (its own,
 * or for a scatter's root everyone's), and whether it reads others' slots. */
static bool ring_writes(int kind, int rank, int root)
{
    return kind == RING_SCATTER ? rank == root : kind == RING_GATHER ? rank != root : true;
}

static bool ring_reads(int kind, int rank, int root)
{
    return kind == RING_SCATTER ? rank != root : rank == root;
}

/* The flag of the schedule's ring call: its 64-bit number (state[4] the high half, state[0] the
 * low) + 1, never 0, which a slot not yet written holds. */
static uint64_t ring_flag(const cr_sched *s)
{
    return ((uint64_t)s->state[4] << 32 | s->state[0]) + 1;
}

/* Raises the flag of a slot this process wrote for the schedule's call. */
static void ring_raise(const cr_sched *s, char *slot)
{
    atomic_store_explicit((_Atomic uint64_t *)slot, ring_flag(s), memory_order_release);
}

static bool ring_raised(const cr_sched *s, const char *slot)
{
    return atomic_load_explicit((_Atomic uint64_t *)slot, memory_order_acquire) == ring_flag(s);
}

/* After this process raised its flags of a call: wakes the sleepers that read those slots (the
 * root of a reduce or gather, the next process of a scan, everyone for a scatter). */
static void ring_wake_readers(cr_sched *s)
{
    if (!cr_shm_sleep_mode())
        return;
    atomic_thread_fence(memory_order_seq_cst); /* (the flags, then a reader's `sleeping`) */
    const int *world = s->comm->world_ranks;
    int kind = (int)s->state[1], root = s->args.root;
    if (kind == RING_REDUCE || kind == RING_GATHER)
        cr_shm_wake_world(world, root, root + 1);
    else if (kind == RING_SCAN || kind == RING_EXSCAN)
        cr_shm_wake_world(world, s->rank + 1, CR_MIN(s->rank + 2, s->size));
    else
        cr_shm_wake_world(world, 0, s->size);
}

/* Publishes that this process is done reading others' slots of call g, and wakes those that
 * wait for one of its slots to be free. */
static void ring_publish_done(cr_sched *s, node_area *a, uint32_t g)
{
    ring_line *lines = ring_lines(a, s->size);
    atomic_store_explicit(&lines[s->rank].done, g + 1, memory_order_release);
    if (!cr_shm_sleep_mode())
        return;
    atomic_thread_fence(memory_order_seq_cst); /* (against a waiter's wants_done, then its `sleeping`) */
    const int *world = s->comm->world_ranks;
    if (!atomic_load_explicit(&a->ring_waiters.v, memory_order_relaxed))
        return; /* (the usual case: one line every process keeps in its cache, no scan of n lines) */
    for (int r = 0; r < s->size; r++)
        if (r != s->rank && atomic_load_explicit(&lines[r].wants_done, memory_order_relaxed))
            cr_shm_wake_world(world, r, r + 1);
}

/* Who reads this process's slot in a call of `kind` (see the top of the file), or -1 if
 * nobody does or the process writes other processes' slots (a scatter's root). */
static int ring_reader_of(int kind, int rank, int root, int n)
{
    switch (kind) {
    case RING_SCAN:
    case RING_EXSCAN:
        return rank + 1 < n ? rank + 1 : -1;
    case RING_REDUCE:
        return root;
    case RING_GATHER:
        return rank != root ? root : -1;
    default: /* RING_SCATTER: the root wrote this process's slot, which reads it */
        return rank != root ? rank : -1;
    }
}

/* Step 1: takes this process's call number g (state[0]), and remembers who read its slot in
 * call g - RING_DEPTH (state[2], as ring_free needs it) before noting who reads it in g.
 * state[3] is the next rank whose flag ring_fold looks at, state[4] the high half of the
 * 64-bit call number (ring_flag), state[5] whether ring_free found the ring full. */
static int ring_number(cr_sched *s, void *arg)
{
    (void)arg;
    cr_coll_node *st = s->comm->coll_node;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    uint64_t number = st->ring_calls++;
    uint32_t g = (uint32_t)number;
    if ((g & (RING_FORGET - 1)) == 0) /* (a counter remembered since 2^31 calls would compare the wrong way) */
        st->ring_free_until = st->ring_seen_done = g - RING_DEPTH;
    int kind = (int)s->state[1], *reader = &st->ring_reader[g % RING_DEPTH];
    s->state[0] = g;
    s->state[3] = 0;
    s->state[5] = 0;
    s->state[4] = (uint32_t)(number >> 32);
    s->state[2] = kind == RING_SCATTER && s->rank == s->args.root ? (uint32_t)-1 : (uint32_t)*reader;
    *reader = ring_reader_of(kind, s->rank, s->args.root, s->size);
    return MPI_SUCCESS;
}

/* A pause of about 0.1 us between two looks at a full ring's `done` lines, with no `pause`
 * instruction (whose loops a hypervisor may take as a spinning vCPU and deschedule). A writer
 * whose ring is full is RING_DEPTH / 2 calls or more ahead of its reader, so the pause costs the
 * pipeline nothing; looking without one took the reader's line from it between every two
 * `done`s it published, which cost the reader, the slower of the two, a transfer between cores
 * each call. */
static void ring_back_off(void)
{
    for (int i = 0; i < 256; i++)
        __asm__ volatile("" ::: "memory");
}

/* Whether this process may write its slot of call g (a scatter's root: everyone's): the process
 * that read it in call g - RING_DEPTH is done with that call. When nobody read it then (or the
 * slots are others'), an older call may have used it, so everyone must be done with g -
 * RING_DEPTH, which covers every use before. In sleep mode the wait sets wants_done, so that
 * a `done` wakes this process (see ring_publish_done). With a core each, a writer that found its
 * slot not free waits until the same check passes for call g - RING_DEPTH / 2 (half a ring of
 * calls more; state[5] says it found the slot taken), looking now and then (ring_back_off): an 8-byte reduce loop at 2 processes, where the flags made the writer
 * faster than the root, went from 0.097 to 0.114 us while the writer looked at every turn, and
 * fell below the counters' time with the pause. */
static bool ring_free(cr_sched *s, node_area *a, uint32_t g)
{
    cr_coll_node *st = s->comm->coll_node;
    ring_line *me = &ring_lines(a, s->size)[s->rank];
    int reader = (int)s->state[2];
    uint32_t need = g - (s->state[5] ? RING_DEPTH / 2 : RING_DEPTH) + 1;
    bool free;
    if (reader < 0) {
        free = ring_reached(a, s->size, offsetof(ring_line, done), 0, s->size, need, &st->ring_free_until);
    } else if (reader == s->rank) {
        free = true;
    } else { /* (the reader's `done` remembered: in a loop of scans it is always the next process, whose line
              * would otherwise travel from its core every call) */
        if (reader != st->ring_seen_reader) {
            st->ring_seen_reader = reader;
            st->ring_seen_done = g - RING_DEPTH;
        }
        free = ring_reached(a, s->size, offsetof(ring_line, done), reader, reader + 1, need, &st->ring_seen_done);
    }
    if (!free && !cr_shm_sleep_mode()) { /* (nobody sleeps: no wants_done) */
        s->state[5] = 1;
        ring_back_off();
        return false;
    }
    if (!free) {
        if (!atomic_load_explicit(&me->wants_done, memory_order_relaxed)) { /* then looked at again: see ring_publish_done */
            atomic_store_explicit(&me->wants_done, 1, memory_order_seq_cst);
            atomic_fetch_add_explicit(&a->ring_waiters.v, 1, memory_order_seq_cst);
        }
        return false;
    }
    if (atomic_load_explicit(&me->wants_done, memory_order_relaxed)) {
        atomic_store_explicit(&me->wants_done, 0, memory_order_relaxed);
        atomic_fetch_sub_explicit(&a->ring_waiters.v, 1, memory_order_relaxed);
    }
    return true;
}

/* Step 2 of a reduce, gather or scatter, for a process that writes: once its slot is free, its
 * data into it (a scatter's root: each block into its process's slot), published. A process
 * that reads nothing is then done too. */
static int ring_put(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_sched_args *x = &s->args;
    uint32_t g = s->state[0];
    int kind = (int)s->state[1];
    if (!ring_free(s, a, g))
        return CR_SCHED_AGAIN;
    if (kind == RING_SCATTER) {
        uint64_t bytes = (uint64_t)x->scount * (uint64_t)x->sdt->size;
        for (int r = 0; r < s->size; r++)
            if (r != s->rank) {
                cr_dt_pack(cr_coll_at(x->sbuf, (MPI_Count)r * x->scount, x->sdt), x->scount, x->sdt, 0,
                           ring_data(a, g, r, s->size), bytes);
                put_size(s, ring_slot(a, g, r, s->size) + RING_SIZE_AT, bytes);
            }
        for (int r = 0; r < s->size; r++) /* (each flag after all the data: readers wake sooner) */
            if (r != s->rank)
                ring_raise(s, ring_slot(a, g, r, s->size));
        if (x->rbuf != MPI_IN_PLACE)
            cr_dt_copy(cr_coll_at(x->sbuf, (MPI_Count)s->rank * x->scount, x->sdt), x->scount, x->sdt, x->rbuf,
                       x->count, x->dt);
    } else {
        bool gather = kind == RING_GATHER;
        MPI_Count count = gather ? x->scount : x->count;
        cr_dtype *dt = gather ? x->sdt : x->dt;
        uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
        char *mine = ring_slot(a, g, s->rank, s->size);
        cr_dt_pack(x->sbuf, count, dt, 0, mine + RING_FLAG_BYTES, bytes);
        put_size(s, mine + RING_SIZE_AT, bytes);
        ring_raise(s, mine);
    }
    ring_wake_readers(s);
    if (!ring_reads(kind, s->rank, x->root))
        ring_publish_done(s, a, g);
    return MPI_SUCCESS;
}

/* Step 3 of a reduce, gather or scatter, for a process that reads (a reduce's or gather's
 * root, a scatter's others): once the slots it reads have their flags of call g up (a
 * scatter: its own, which the root wrote; otherwise everyone's but a gather root's own), take
 * them (folded in rank order for a reduce); then it is done with them. */
static int ring_fold(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_sched_args *x = &s->args;
    uint32_t g = s->state[0];
    int kind = (int)s->state[1], n = s->size;
    if (kind == RING_SCATTER) {
        if (!ring_raised(s, ring_slot(a, g, s->rank, n)))
            return CR_SCHED_AGAIN;
    } else {
        for (int r = (int)s->state[3]; r < n; r++)
            if (!(r == s->rank && kind == RING_GATHER) && !ring_raised(s, ring_slot(a, g, r, n))) {
                s->state[3] = (uint32_t)r;
                return CR_SCHED_AGAIN;
            }
    }
    int err = MPI_SUCCESS;
    size_t stride = (size_t)RING_DEPTH * RING_STRIDE;
    const char *first = ring_data(a, g, 0, n);
    uint64_t bytes = (uint64_t)x->count * (uint64_t)x->dt->size;
    for (int r = 0; r < n; r++) /* (a scatter reads its own slot, which the root wrote) */
        if ((kind == RING_SCATTER) == (r == s->rank))
            check_size(s, first - RING_FLAG_BYTES + RING_SIZE_AT + (size_t)r * stride,
                       kind == RING_SCATTER ? x->root : r, bytes);
    if (kind == RING_SCATTER) { /* the slot the root wrote for us */
        cr_dt_unpack(x->rbuf, x->count, x->dt, 0, first + (size_t)s->rank * stride, bytes);
    } else if (kind == RING_GATHER) {
        if (x->sbuf != MPI_IN_PLACE)
            cr_dt_copy(x->sbuf, x->scount, x->sdt, cr_coll_at(x->rbuf, (MPI_Count)s->rank * x->count, x->dt), x->count,
                       x->dt);
        for (int r = 0; r < n; r++)
            if (r != s->rank)
                cr_dt_unpack(cr_coll_at(x->rbuf, (MPI_Count)r * x->count, x->dt), x->count, x->dt, 0,
                             first + (size_t)r * stride, bytes);
    } else if (s->err) {
        /* a reduce after a mismatch: nothing combined (node.h) */
    } else if (cr_dtype_is_contig(x->dt) && x->dt->true_lb == 0) {
        /* rbuf is laid out as the packed slots: fold from the last contribution down (acc =
         * in_j op acc, rank order kept) straight from the slots, no scratch */
        if (n - 1 != s->rank || x->sbuf != x->rbuf)
            memcpy(x->rbuf, first + (size_t)(n - 1) * stride, (size_t)bytes);
        for (int r = n - 2; r >= 0; r--)
            cr_op_apply(x->op, first + (size_t)r * stride, x->rbuf, x->count, x->dt);
    } else {
        err = combine_slots(first, stride, n, x->rbuf, x->count, x->dt, x->op);
    }
    ring_publish_done(s, a, g);
    return err;
}

/* A scan's or exscan's only step after its number: a chain. Process r's slot of call g holds
 * the prefix in_0 op ... op in_r, so it waits for process r - 1's prefix alone, combines it with
 * its own data, stages its prefix for process r + 1 (the last process stages nothing) and is
 * done. Each process reads one slot, not r of them, and waits only for its neighbours: process r
 * may run up to RING_DEPTH - 1 calls ahead of process r + 1 (the reader of its slot), and process
 * 0 that many per process ahead of the last, as along a chain of eager messages. Operands keep
 * rank order and the same bracketing every time, ((in_0 op in_1) op in_2) ..., so a result
 * never depends on timing. */
static int ring_chain(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_sched_args *x = &s->args;
    uint32_t g = s->state[0];
    int r = s->rank, n = s->size;
    bool exclusive = s->state[1] == RING_EXSCAN, stages = r + 1 < n;
    if (stages && !ring_free(s, a, g))
        return CR_SCHED_AGAIN;
    if (r > 0 && !ring_raised(s, ring_slot(a, g, r - 1, n)))
        return CR_SCHED_AGAIN;
    uint64_t bytes = (uint64_t)x->count * (uint64_t)x->dt->size;
    const char *prev = r > 0 ? ring_data(a, g, r - 1, n) : NULL;
    char *mine = stages ? ring_data(a, g, r, n) : NULL;
    int err = MPI_SUCCESS;
    if (prev) /* (before this process's own size: a mismatch marks it, down the chain) */
        check_size(s, prev - RING_FLAG_BYTES + RING_SIZE_AT, r - 1, bytes);
    if (s->err) {
        /* nothing combined after a mismatch (node.h); the slot goes on, marked */
    } else if (cr_dtype_is_contig(x->dt) && x->dt->true_lb == 0) { /* rbuf and the slots alike are packed */
        if (exclusive) {
            if (mine)
                memcpy(mine, x->sbuf, (size_t)bytes); /* (before rbuf changes: sbuf may be rbuf) */
            if (prev) {
                memcpy(x->rbuf, prev, (size_t)bytes);
                if (mine)
                    cr_op_apply(x->op, prev, mine, x->count, x->dt);
            }
        } else {
            if (x->sbuf != x->rbuf)
                memcpy(x->rbuf, x->sbuf, (size_t)bytes);
            if (prev)
                cr_op_apply(x->op, prev, x->rbuf, x->count, x->dt);
            if (mine)
                memcpy(mine, x->rbuf, (size_t)bytes);
        }
    } else if (exclusive) { /* typed: prefix = prev op own in a scratch copy, rbuf = prev */
        void *alloc = NULL;
        char *own = mine && prev ? cr_coll_tmp(x->count, x->dt, &alloc) : NULL;
        if (mine && prev && !own) {
            err = cr_err(MPI_ERR_NO_MEM, "out of memory for a scan");
        } else if (!prev) {
            if (mine)
                cr_dt_pack(x->sbuf, x->count, x->dt, 0, mine, bytes);
        } else {
            if (own)
                cr_dt_copy(x->sbuf, x->count, x->dt, own, x->count, x->dt);
            cr_dt_unpack(x->rbuf, x->count, x->dt, 0, prev, bytes);
            if (own) {
                cr_op_apply(x->op, x->rbuf, own, x->count, x->dt);
                cr_dt_pack(own, x->count, x->dt, 0, mine, bytes);
            }
        }
        cr_coll_scratch_release(alloc);
    } else { /* typed: rbuf = prev op own, then staged */
        void *alloc = NULL;
        char *before = prev ? cr_coll_tmp(x->count, x->dt, &alloc) : NULL;
        if (prev && !before) {
            err = cr_err(MPI_ERR_NO_MEM, "out of memory for a scan");
        } else {
            if (x->sbuf != x->rbuf)
                cr_dt_copy(x->sbuf, x->count, x->dt, x->rbuf, x->count, x->dt);
            if (prev) {
                cr_dt_unpack(before, x->count, x->dt, 0, prev, bytes);
                cr_op_apply(x->op, before, x->rbuf, x->count, x->dt);
            }
            if (mine)
                cr_dt_pack(x->rbuf, x->count, x->dt, 0, mine, bytes);
        }
        cr_coll_scratch_release(alloc);
    }
    if (mine) {
        put_size(s, mine - RING_FLAG_BYTES + RING_SIZE_AT, bytes);
        ring_raise(s, ring_slot(a, g, r, n));
        ring_wake_readers(s);
    }
    ring_publish_done(s, a, g);
    return err;
}

/* Appends a ring call; `x` holds its arguments (sbuf already resolved for MPI_IN_PLACE where the
 * call's data is in rbuf). */
static void ring_call(cr_sched *s, int kind, const cr_sched_args *x)
{
    node_area *a = area_of(s->comm);
    s->args = *x;
    s->state[1] = (uint32_t)kind;
    cr_sched_call(s, ring_number, a);
    if (kind == RING_SCAN || kind == RING_EXSCAN) {
        cr_sched_call(s, ring_chain, a);
        return;
    }
    if (ring_writes(kind, s->rank, x->root))
        cr_sched_call(s, ring_put, a);
    if (ring_reads(kind, s->rank, x->root))
        cr_sched_call(s, ring_fold, a);
}

void cr_coll_node_reduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root)
{
    ring_call(s, RING_REDUCE,
              &(cr_sched_args){.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf, .rbuf = rbuf, .count = count, .dt = dt,
                               .op = op, .root = root});
}

void cr_coll_node_scan(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                       bool exclusive)
{
    ring_call(s, exclusive ? RING_EXSCAN : RING_SCAN,
              &(cr_sched_args){.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf, .rbuf = rbuf, .count = count, .dt = dt,
                               .op = op});
}

void cr_coll_node_ring_gather(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                              MPI_Count rcount, cr_dtype *rdt, int root)
{
    ring_call(s, RING_GATHER,
              &(cr_sched_args){.sbuf = sbuf, .scount = scount, .sdt = sdt, .rbuf = rbuf, .count = rcount, .dt = rdt,
                               .root = root});
}

void cr_coll_node_ring_scatter(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                               MPI_Count rcount, cr_dtype *rdt, int root)
{
    ring_call(s, RING_SCATTER,
              &(cr_sched_args){.sbuf = sbuf, .scount = scount, .sdt = sdt, .rbuf = rbuf, .count = rcount, .dt = rdt,
                               .root = root});
}
