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
 *
 * Small reduce, without synchronizing: a process writes its slot of reduction g, counts itself
 * in and leaves at once; the root waits for the count, combines in rank order and publishes
 * that reduction g is done. Slots come in CR_SHM_COLL_DEPTH sets used in turn: a process may
 * write a slot of reduction g only once reduction g - DEPTH (the last to use that set) is done,
 * so contributors run up to DEPTH - 1 reductions ahead of the roots; every process counts
 * reductions itself (all call them in the same order). Like messages sent eagerly, this lets
 * non-root processes go on while the root catches up.
 *
 * Small scan and exscan, without synchronizing: each process has a ring of SCAN_DEPTH slots
 * and a line with two counters, `staged` and `done`. Scan g: a process waits until every later
 * process (the readers of its slots) is done with scan g - SCAN_DEPTH, writes its slot g %
 * SCAN_DEPTH, publishes staged = g + 1, waits until every earlier process has staged g, combines
 * their slots in rank order (its own last, for scan) and publishes done = g + 1. Nobody waits
 * for a later process but to reuse a slot, so processes run up to SCAN_DEPTH - 1 scans ahead of
 * those after them: on 8 processes sharing 2 cores, a loop of scans then costs a few scheduling
 * rounds per SCAN_DEPTH scans instead of one per scan (8-byte scan 3.3 -> 1 us measured with
 * deeper staging). Each process remembers the least counter it last saw among those it waits
 * for, so it reads the others' lines only when that is not enough.
 *
 * Counters are 32 bits and wrap around: the barrier's generation is only compared for
 * equality, and reduction numbers are compared by their signed difference (processes are at
 * most DEPTH reductions apart), so 2^32 collectives later nothing changes. All of them start
 * at cr_shm_seq_start(), which a test sets just below 2^32 to run across the wrap. */
#include "node.h"

#include "core/runtime.h"
#include "xport/shm/segment.h"
#include "xport/shm/shm.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEPTH CR_SHM_COLL_DEPTH
#define SCAN_DEPTH CR_SHM_COLL_SCAN_DEPTH
#define SCAN_SLOT CR_SHM_COLL_SCAN_SLOT

typedef struct counter {
    _Alignas(64) _Atomic uint32_t v;
} counter;

typedef struct node_area {
    counter ready;            /* 0, then 1 while the first user sets the counters, then 2 */
    counter arrive;           /* barrier: processes in */
    counter generation;       /* barrier: completed barriers */
    counter red_done;         /* reduce: reductions the roots completed */
    counter red_in[DEPTH];    /* reduce: contributions to reduction g, at g % DEPTH */
    _Alignas(64) char slots[]; /* [2][n][SLOT] for allreduce, then [DEPTH][n][SLOT] for reduce */
} node_area;

_Static_assert(offsetof(node_area, slots) == (4 + DEPTH) * 64, "the layout CR_SHM_COLL_BYTES assumes");
_Static_assert(sizeof(counter) == 64, "one counter a cache line");
_Static_assert((1ull << 32) % SCAN_DEPTH == 0 && SCAN_SLOT % 64 == 0, "scan slots: g % SCAN_DEPTH across the wrap");

/* After the slots: a scan line per process, then each process's SCAN_DEPTH scan slots. */
typedef struct scan_line {
    _Alignas(64) _Atomic uint32_t staged; /* the last scan whose slot it wrote, + 1 */
    _Atomic uint32_t done;                /* the last scan it finished reading others' slots for, + 1 */
} scan_line;

static scan_line *scan_lines(node_area *a, int n)
{
    return (scan_line *)(a->slots + (2 + DEPTH) * (size_t)n * CR_SHM_COLL_SLOT);
}

static char *scan_slot(node_area *a, uint32_t g, int rank, int n)
{
    return (char *)(scan_lines(a, n) + n) + ((size_t)rank * SCAN_DEPTH + g % SCAN_DEPTH) * SCAN_SLOT;
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
    atomic_store_explicit(&a->red_done.v, cr_shm_seq_start(), memory_order_relaxed);
    scan_line *lines = scan_lines(a, x->n);
    for (int r = 0; r < x->n; r++) { /* every scan before the first is staged and done */
        atomic_store_explicit(&lines[r].staged, cr_shm_seq_start(), memory_order_relaxed);
        atomic_store_explicit(&lines[r].done, cr_shm_seq_start(), memory_order_relaxed);
    }
}

/* Starts both areas of `st` (for n processes) in this process. */
static cr_coll_node *start(cr_coll_node *st, int n)
{
    small_init x = {st->small, n};
    cr_coll_node_once(&st->small->ready.v, init_small, &x);
    st->reductions = st->scans = st->scan_free_until = st->scan_staged_until = cr_shm_seq_start();
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

/* Slot of `rank` for generation `gen` of set `set` (0: allreduce, 1: reduce). */
static char *slot(node_area *a, int set, uint32_t gen, int rank, int n)
{
    size_t generation = set == 0 ? gen % 2 : 2 + gen % DEPTH;
    return a->slots + (generation * (size_t)n + (size_t)rank) * CR_SHM_COLL_SLOT;
}

/* The node algorithms as schedule steps (call steps; the first of each waits for the call's
 * turn, node.h). The call's arguments live in the schedule's `args` and its per-run state
 * in `state`: state[0] the generation or reduction number this call uses. */

/* Barrier, step 1: notes the generation and counts this process in; the last one in opens
 * the next generation. state[1] says whether this process was the last. */
static int arrive(cr_sched *s, void *arg)
{
    node_area *a = arg;
    if (!cr_coll_node_turn(s, s->comm->coll_node))
        return CR_SCHED_AGAIN;
    uint32_t gen = atomic_load_explicit(&a->generation.v, memory_order_acquire);
    s->state[0] = gen;
    s->state[1] = 0;
    if (atomic_fetch_add_explicit(&a->arrive.v, 1, memory_order_acq_rel) == (uint32_t)s->size - 1) {
        atomic_store_explicit(&a->arrive.v, 0, memory_order_relaxed);
        atomic_store_explicit(&a->generation.v, gen + 1, memory_order_release);
        cr_shm_wake_sleepers();
        s->state[1] = 1;
    }
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

/* Combines every process's slot of generation `gen` of `set` in rank order into `out`. */
static int combine(node_area *a, int set, uint32_t gen, void *out, MPI_Count count, cr_dtype *dt, cr_op *op, int n)
{
    return combine_slots(slot(a, set, gen, 0, n), CR_SHM_COLL_SLOT, n, out, count, dt, op);
}

/* Allreduce, step 1: this process's data into its slot of the coming generation, then the
 * barrier's arrival. */
static int allreduce_put(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_sched_args *x = &s->args;
    if (!cr_coll_node_turn(s, s->comm->coll_node))
        return CR_SCHED_AGAIN;
    uint32_t gen = atomic_load_explicit(&a->generation.v, memory_order_acquire);
    cr_dt_pack(x->rbuf, x->count, x->dt, 0, slot(a, 0, gen, s->rank, s->size),
               (uint64_t)x->count * (uint64_t)x->dt->size);
    return arrive(s, a);
}

/* Allreduce, step 3: everyone's data is in: combine it. */
static int allreduce_combine(cr_sched *s, void *arg)
{
    cr_sched_args *x = &s->args;
    return combine(arg, 0, s->state[0], x->rbuf, x->count, x->dt, x->op, s->size);
}

void cr_coll_node_allreduce(cr_sched *s, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    node_area *a = area_of(s->comm);
    s->args = (cr_sched_args){.rbuf = rbuf, .count = count, .dt = dt, .op = op};
    cr_sched_call(s, allreduce_put, a);
    cr_sched_call(s, generation_moved, a);
    cr_sched_call(s, allreduce_combine, a);
}

/* Reduce, step 1: takes this process's reduction number g. */
static int reduce_number(cr_sched *s, void *arg)
{
    (void)arg;
    if (!cr_coll_node_turn(s, s->comm->coll_node))
        return CR_SCHED_AGAIN;
    s->state[0] = cr_coll_node_of(s->comm)->reductions++;
    return MPI_SUCCESS;
}

/* Reduce, step 2: the slots of reduction g - DEPTH must have been read (the counters start at
 * `first`, meaning every reduction before it is done). */
static int reduce_slots_free(cr_sched *s, void *arg)
{
    node_area *a = arg;
    return cr_coll_seq_reached(&a->red_done.v, s->state[0] - DEPTH + 1) ? MPI_SUCCESS : CR_SCHED_AGAIN;
}

/* Reduce, step 3: this process's contribution into its slot, counted in. */
static int reduce_put(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_sched_args *x = &s->args;
    uint32_t g = s->state[0];
    cr_dt_pack(x->sbuf, x->count, x->dt, 0, slot(a, 1, g, s->rank, s->size), (uint64_t)x->count * (uint64_t)x->dt->size);
    uint32_t in = atomic_fetch_add_explicit(&a->red_in[g % DEPTH].v, 1, memory_order_acq_rel) + 1;
    if (s->rank != x->root && in == (uint32_t)s->size)
        cr_shm_wake_sleepers(); /* the root may sleep waiting for the last contribution */
    return MPI_SUCCESS;
}

/* Reduce at the root, step 4: every contribution is in. */
static int reduce_all_in(cr_sched *s, void *arg)
{
    node_area *a = arg;
    return cr_coll_seq_reached(&a->red_in[s->state[0] % DEPTH].v, (uint32_t)s->size) ? MPI_SUCCESS : CR_SCHED_AGAIN;
}

/* Reduce at the root, step 5: combine, and publish that reduction g is done. */
static int reduce_combine(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_sched_args *x = &s->args;
    uint32_t g = s->state[0];
    int err = combine(a, 1, g, x->rbuf, x->count, x->dt, x->op, s->size);
    atomic_store_explicit(&a->red_in[g % DEPTH].v, 0, memory_order_relaxed);
    atomic_store_explicit(&a->red_done.v, g + 1, memory_order_release);
    cr_shm_wake_sleepers(); /* contributors may wait for the slots */
    return err;
}

void cr_coll_node_reduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root)
{
    node_area *a = area_of(s->comm);
    s->args = (cr_sched_args){
        .sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf, .rbuf = rbuf, .count = count, .dt = dt, .op = op, .root = root};
    cr_sched_call(s, reduce_number, a);
    cr_sched_call(s, reduce_slots_free, a);
    cr_sched_call(s, reduce_put, a);
    if (s->rank == root) {
        cr_sched_call(s, reduce_all_in, a);
        cr_sched_call(s, reduce_combine, a);
    }
}

/* ----------------------------------------------------------------- small scan and exscan */

bool cr_coll_node_scan_usable(cr_comm *c, uint64_t bytes_per_process)
{
    return area_of(c) != NULL && bytes_per_process <= SCAN_SLOT;
}

/* Whether the counter `field` of every process in [from, to) has reached `at_least`; `*until`
 * remembers the least value seen, so that usually no line is read. */
static bool scan_all_reached(node_area *a, int n, size_t field, int from, int to, uint32_t at_least,
                             uint32_t *until)
{
    if ((int32_t)(*until - at_least) >= 0)
        return true;
    scan_line *lines = scan_lines(a, n);
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

/* Publishes a counter; in sleep mode wakes those who may wait for it: the later processes for
 * `staged`, the earlier ones for `done` (waking the others too would only have them look,
 * find nothing, and sleep again, at a context switch each). */
static void scan_publish(cr_sched *s, node_area *a, size_t field, uint32_t value)
{
    atomic_store_explicit((_Atomic uint32_t *)((char *)&scan_lines(a, s->size)[s->rank] + field), value,
                          memory_order_release);
    if (!cr_shm_sleep_mode())
        return;
    bool later = field == offsetof(scan_line, staged);
    cr_shm_wake_world(s->comm->world_ranks, later ? s->rank + 1 : 0, later ? s->size : s->rank);
}

/* Scan, step 1: takes this process's scan number g (state[0]). */
static int scan_number(cr_sched *s, void *arg)
{
    (void)arg;
    cr_coll_node *st = s->comm->coll_node;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    s->state[0] = st->scans++;
    return MPI_SUCCESS;
}

/* Scan, step 2: the later processes are done with what this slot held (scan g - SCAN_DEPTH);
 * then this process's data into it, published. */
static int scan_put(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_coll_node *st = s->comm->coll_node;
    cr_sched_args *x = &s->args;
    uint32_t g = s->state[0];
    if (!scan_all_reached(a, s->size, offsetof(scan_line, done), s->rank + 1, s->size, g - SCAN_DEPTH + 1,
                          &st->scan_free_until))
        return CR_SCHED_AGAIN;
    cr_dt_pack(x->sbuf, x->count, x->dt, 0, scan_slot(a, g, s->rank, s->size),
               (uint64_t)x->count * (uint64_t)x->dt->size);
    scan_publish(s, a, offsetof(scan_line, staged), g + 1);
    return MPI_SUCCESS;
}

/* Scan, step 3: once every earlier process staged scan g, combine theirs (and, for scan, this
 * process's own) in rank order; then this process is done with their slots. state[1]: exscan. */
static int scan_combine(cr_sched *s, void *arg)
{
    node_area *a = arg;
    cr_coll_node *st = s->comm->coll_node;
    cr_sched_args *x = &s->args;
    uint32_t g = s->state[0];
    if (!scan_all_reached(a, s->size, offsetof(scan_line, staged), 0, s->rank, g + 1, &st->scan_staged_until))
        return CR_SCHED_AGAIN;
    int upto = s->state[1] ? s->rank : s->rank + 1, err = MPI_SUCCESS;
    size_t stride = (size_t)SCAN_DEPTH * SCAN_SLOT;
    const char *first = scan_slot(a, g, 0, s->size);
    if (upto > 0 && cr_dtype_is_contig(x->dt) && x->dt->true_lb == 0) {
        /* rbuf is laid out as the packed slots: fold from the last contribution down (acc = in_j
         * op acc, rank order kept) straight from the slots, no scratch */
        if (upto - 1 != s->rank || x->sbuf != x->rbuf)
            memcpy(x->rbuf, first + (size_t)(upto - 1) * stride, (size_t)x->count * (size_t)x->dt->size);
        for (int r = upto - 2; r >= 0; r--)
            cr_op_apply(x->op, first + (size_t)r * stride, x->rbuf, x->count, x->dt);
    } else if (upto > 0) { /* (exscan leaves process 0's rbuf alone: the standard defines nothing there) */
        err = combine_slots(first, stride, upto, x->rbuf, x->count, x->dt, x->op);
    }
    scan_publish(s, a, offsetof(scan_line, done), g + 1);
    return err;
}

void cr_coll_node_scan(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                       bool exclusive)
{
    node_area *a = area_of(s->comm);
    s->args = (cr_sched_args){.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf, .rbuf = rbuf, .count = count, .dt = dt, .op = op};
    s->state[1] = exclusive;
    cr_sched_call(s, scan_number, a);
    cr_sched_call(s, scan_put, a);
    cr_sched_call(s, scan_combine, a);
}
