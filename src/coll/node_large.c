/* node_large.c: broadcast, reduce and allreduce of large messages among the processes of one
 * node, and the exchanges of the other collectives (allgather, alltoall, alltoallv, alltoallw,
 * gather, scatter, scans, reduce-scatter) beyond the node slots, through staging blocks in the node's shared segment
 * instead of messages.
 *
 * Why: a message algorithm moves every byte through a ring at each of its log2(p) rounds (two
 * copies a round) and waits for a process to be scheduled at each round. Staged, a byte is
 * copied into shared memory once and out of it once, and a process waits only for the data it
 * needs next, not for a round of the tree.
 *
 * The area is a ring of U = cr_shm_coll_nblocks(n) blocks of BLOCK bytes (deeper when every
 * process has a core: shm.h says why), shared by every large collective on MPI_COMM_WORLD in
 * the order the processes call them (all call them in the same order with the same sizes, so
 * all give the same block numbers to the same data). Each process owns one control line of
 * three counters, in blocks:
 *   staged   the blocks up to which it has written its data;
 *   reduced  the blocks up to which it has combined its share (reductions);
 *   done     the blocks up to which it will never touch the area again.
 * Block number b (a 32-bit count that wraps around) is written only once every process's done
 * has reached b + 1 - U: then the U blocks before it, whose places it would reuse, are free.
 * Block places are counted separately from block numbers (U is not a power of two, so b % U
 * would jump at the wrap); every process advances both in step. Beside each place the area
 * keeps a 64-bit size, which the writers set for their first block of a call (node.h: counts
 * beside the data): a broadcast's root for its first block, each process of a reduction for its
 * slot of the first piece, the exchanges' writers for their first block.
 *
 * Broadcast: the root packs the message into consecutive blocks (as many as the ring allows:
 * it leaves as soon as everything is staged, like an eager send) and counts them in `staged`;
 * the others unpack each block once it is staged. Cost: one copy in, p - 1 copies out,
 * pipelined by blocks.
 *
 * Reduce and allreduce: the vector goes in pieces of BLOCK bytes; a piece takes n + 1 blocks,
 * one slot per process and one for the result. Each process owns a chunk of 1/n of every
 * piece: it writes the rest of its piece to its slot (stage), then, once all have staged,
 * combines its chunk from every slot (its own chunk straight from its buffer, when that is
 * contiguous) into the result block (reduce), and once all have reduced, copies the whole
 * result out (allreduce: everyone; reduce: the root). A process that copies out into a
 * contiguous rbuf combines its chunk there instead, and copies out only the others' chunks
 * (combine_in_rbuf). Combining runs from the last process to
 * the first (acc = in_j op acc), so operations that do not commute get rank order. Each process
 * stages as far ahead as the ring allows before it reduces or copies out, so with more
 * processes than cores a process that gets its core does all the work it can at once.
 *
 * The counters assume one collective at a time per process: each call waits for its turn
 * (node.h) before its first block, so nonblocking calls run one after another in call order. */
#include "node.h"

#include "core/copy.h"
#include "core/config.h"
#include "core/error.h"
#include "core/pvar.h"
#include "core/runtime.h"
#include "xport/shm/shm.h"
#include "xport/xport.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>

#define BLOCK CR_SHM_COLL_BLOCK
#define COMBINE_SUB ((uint64_t)8192)

enum { STAGED, REDUCED, DONE };

typedef struct large_line {
    _Alignas(64) _Atomic uint32_t c[3]; /* STAGED, REDUCED, DONE; written by its process only */
    /* A scatter read in place or a gather written in place (below) whose root this line's
     * process is: */
    _Atomic uint32_t offered;  /* the number of the call whose buffer `addr` is (by the root) */
    _Atomic uint32_t answers;  /* processes that answered the offer (by them) */
    _Atomic uint32_t refused;  /* those among them that could not read or write (by them) */
    _Atomic uint64_t addr;     /* the root's send (scatter) or receive (gather) buffer, or 0: staged */
    _Atomic uint64_t bytes;    /* the size of each process's block there (node.h: counts beside the data) */
    /* An alltoall read in place (below), by this line's process: */
    _Atomic uint32_t read;     /* the number of the last such call whose blocks it has read (or tried to) */
    _Atomic uint32_t unread;   /* the number of the last such call in which a read of it failed */
} large_line;

typedef struct large_area {
    _Alignas(64) _Atomic uint32_t ready; /* 0, then 1 while the first user sets the counters, then 2 */
    large_line lines[];                  /* one per process */
} large_area;

_Static_assert(sizeof(large_line) == 64, "one line per process");

static void init_large(void *arg)
{
    cr_coll_node *st = arg;
    uint32_t n = st->large_procs;
    for (uint32_t r = 0; r < n; r++) {
        for (int f = STAGED; f <= DONE; f++)
            atomic_store_explicit(&st->large->lines[r].c[f], cr_shm_seq_start(), memory_order_relaxed);
        atomic_store_explicit(&st->large->lines[r].offered, cr_shm_seq_start() - 1, memory_order_relaxed);
        atomic_store_explicit(&st->large->lines[r].read, cr_shm_seq_start() - 1, memory_order_relaxed);
        atomic_store_explicit(&st->large->lines[r].unread, cr_shm_seq_start() - 1, memory_order_relaxed);
    }
}

void cr_coll_node_large_start(cr_coll_node *st, int n)
{
    st->blocks = (char *)st->large + CR_SHM_COLL_LARGE_CONTROL(n);
    st->sizes = (uint64_t *)(void *)((char *)st->large + ((size_t)n + 1) * 64); /* (after the lines) */
    st->nblocks = cr_shm_coll_nblocks(n);
    st->large_procs = (uint32_t)n;
    st->next = st->free_until = st->offers = cr_shm_seq_start();
    st->place = 0;
    cr_coll_node_once(&st->large->ready, init_large, st);
}

/* Whether a reduction of `count` elements of dt with op can combine packed data in the blocks:
 * predefined operations on types made of one contiguous predefined type (combined as an array
 * of it), or any operation on a contiguous type that starts at its buffer. Every process
 * decides alike (count, type and operation are the same everywhere). */
static bool reducible(const cr_dtype *dt, const cr_op *op)
{
    if (dt->size <= 0 || (size_t)dt->size > BLOCK)
        return false;
    if (op->index >= 0 && dt->leaf && cr_dtype_is_contig(dt->leaf) && dt->size % dt->leaf->size == 0)
        return true;
    /* Packed data laid out as in memory: contiguous types, and the predefined pairs without
     * padding (MPI_2INT: their two parts are in memory order). */
    return (cr_dtype_is_contig(dt) || ((dt->flags & CR_DT_PREDEFINED) && dt->size == dt->extent)) &&
           dt->true_lb == 0;
}

bool cr_coll_node_large_usable(cr_comm *comm, const cr_dtype *dt, const cr_op *op)
{
    cr_coll_node *st = cr_coll_node_of(comm);
    return st && st->large && (!op || reducible(dt, op));
}

static bool all_reached(const cr_coll_node *st, int n, int field, uint32_t at_least)
{
    for (int r = 0; r < n; r++)
        if (!cr_coll_seq_reached(&st->large->lines[r].c[field], at_least))
            return false;
    return true;
}

/* Whether blocks numbered below `end` - U may be written again: every process is done with
 * them. This process remembers the least `done` it last saw (st->free_until), so the usual
 * check reads no other process's line (the ring is rarely the limit). */
static bool ring_free(cr_coll_node *st, int n, uint32_t end)
{
    uint32_t need = end - st->nblocks;
    if ((int32_t)(st->free_until - need) >= 0)
        return true;
    uint32_t least = atomic_load_explicit(&st->large->lines[0].c[DONE], memory_order_acquire);
    for (int r = 1; r < n; r++) {
        uint32_t d = atomic_load_explicit(&st->large->lines[r].c[DONE], memory_order_acquire);
        if ((int32_t)(d - least) < 0)
            least = d;
    }
    st->free_until = least;
    return (int32_t)(least - need) >= 0;
}

static void publish(const cr_coll_node *st, int me, int field, uint32_t value)
{
    atomic_store_explicit(&st->large->lines[me].c[field], value, memory_order_release);
}

/* Publishes, and wakes sleeping processes when what they may wait for has just come true: a
 * counter of this kind on every line (or, `one`, on this one) reaching `value`. Sleepers are
 * woken only then, not at every publication, so that with more processes than cores a
 * sleeper is not scheduled to find that it must sleep again. Of two processes publishing at
 * once, the full fence lets at least one see the other's value (and wake). */
static void publish_wake(const cr_coll_node *st, int me, int n, int field, uint32_t value, bool one)
{
    publish(st, me, field, value);
    if (!cr_shm_sleep_mode())
        return;
    atomic_thread_fence(memory_order_seq_cst);
    if (one || all_reached(st, n, field, value))
        cr_shm_wake_sleepers();
}

/* Wakes sleeping processes whatever they wait for (a counter that jumped past several values). */
static void wake_if_sleeping(void)
{
    if (cr_shm_sleep_mode()) {
        atomic_thread_fence(memory_order_seq_cst);
        cr_shm_wake_sleepers();
    }
}

/* The end of a call that is not a reduction (`end`: its last block + 1): this process's
 * STAGED and REDUCED go there. Such a call never moves REDUCED (nor a broadcast's receivers
 * STAGED), and a counter left behind by every block later calls take would, 2^31 blocks back,
 * compare as ahead: a reduction would copy out a result not yet combined. Tiny alltoallv calls
 * take n blocks each, so a long run reaches that. Nothing waits for these values (later calls
 * wait for later blocks), so nobody is woken. */
static void call_end(const cr_coll_node *st, int me, uint32_t end)
{
    publish(st, me, STAGED, end);
    publish(st, me, REDUCED, end);
}

static size_t block_place(const cr_coll_node *st, uint32_t first_place, uint64_t i)
{
    return (size_t)((first_place + i) % st->nblocks);
}

static char *block_at(const cr_coll_node *st, uint32_t first_place, uint64_t i)
{
    return st->blocks + block_place(st, first_place, i) * BLOCK;
}

/* Nonblocking calls. The start of one (s->starting) stages this process's first piece and
 * returns: the others can begin with it, and the rest (more staging, combining, copying out)
 * is left to the MPI calls that follow, so the program computes meanwhile; otherwise the start
 * would copy the whole message and then follow the others' progress for as long as it lasted.
 * Each later call makes one pass over what is ready, so an MPI_Test returns promptly. Blocking
 * calls go on while anything moves. */

/* Takes `m` consecutive blocks for this call at its turn, once (state[7] != 0 after): state[0]
 * the number of the first, state[1] its place. Turns come in the order every process starts
 * its calls (node.h), so every process takes the same blocks for the same call. Taken at the
 * turn, not when the call is built: an alltoallv learns how many blocks it takes only once it
 * runs (its first piece), and no call can take blocks behind it before it has, since no later
 * call's turn comes before it has finished here (it takes m = 0, then moves st->next itself:
 * vlearn). A call that fails to build takes none. A schedule that ran is never run again
 * (persistent collectives do not use the node component), so the flag is not cleared. */
static void take_blocks(cr_sched *s, cr_coll_node *st, uint64_t m)
{
    if (s->state[7])
        return;
    s->state[7] = 1;
    s->state[0] = st->next;
    s->state[1] = st->place;
    st->next += (uint32_t)m;
    st->place = (uint32_t)((st->place + m) % st->nblocks);
}

/* ----------------------------------------------------------------- broadcast */

static int bcast_step(cr_sched *s, void *arg)
{
    cr_coll_node *st = arg;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    cr_sched_args *x = &s->args;
    uint64_t bytes = (uint64_t)x->count * (uint64_t)x->dt->size, nb = (bytes + BLOCK - 1) / BLOCK;
    take_blocks(s, st, nb);
    uint32_t b0 = s->state[0], *k = &s->state[2];
    while (*k < nb) {
        uint32_t end = b0 + *k + 1;
        uint64_t off = (uint64_t)*k * BLOCK, len = CR_MIN((uint64_t)BLOCK, bytes - off);
        if (s->rank == x->root) {
            if ((s->starting && *k > 0) || !ring_free(st, s->size, end))
                break;
            if (*k == 0) /* (its place is this call's until every process is done with the block) */
                st->sizes[block_place(st, s->state[1], 0)] = cr_coll_node_size_mark(s, bytes);
            cr_dt_pack_shared(x->rbuf, x->count, x->dt, off, block_at(st, s->state[1], *k), len);
            publish(st, s->rank, DONE, end);
            publish_wake(st, s->rank, s->size, STAGED, end, true);
        } else {
            if (s->starting || !cr_coll_seq_reached(&st->large->lines[x->root].c[STAGED], end))
                break;
            if (*k == 0) /* (a mismatch: unpacks what its own count says, and says so at the end) */
                cr_coll_node_check_size(s, x->root, st->sizes[block_place(st, s->state[1], 0)], bytes);
            cr_dt_unpack(x->rbuf, x->count, x->dt, off, block_at(st, s->state[1], *k), len);
            publish_wake(st, s->rank, s->size, DONE, end, false);
        }
        ++*k;
    }
    if (*k < nb)
        return CR_SCHED_AGAIN;
    call_end(st, s->rank, b0 + (uint32_t)nb);
    return MPI_SUCCESS;
}

void cr_coll_node_large_bcast(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int root)
{
    cr_coll_node *st = cr_coll_node_of(s->comm);
    s->args = (cr_sched_args){.rbuf = buf, .count = count, .dt = dt, .root = root};
    s->state[2] = s->state[7] = 0; /* (blocks: at its turn) */
    cr_sched_call(s, bcast_step, st);
}

/* ----------------------------------------------------------------- reduce and allreduce */

/* The geometry of a reduction: pieces of `per_piece` elements, n + 1 blocks each. */
typedef struct pieces {
    MPI_Count per_piece, count;
    uint64_t esize;
    uint32_t n, npieces;
    int root_alone; /* the root combines every piece alone (select.c: reduce_root_alone), or -1 */
    const cr_coll_node *st;
} pieces;

static pieces geometry(const cr_sched *s, const cr_coll_node *st)
{
    pieces g = {.count = s->args.count, .esize = (uint64_t)s->args.dt->size, .n = (uint32_t)s->size,
                .root_alone = (int)s->state[5] - 1, .st = st};
    g.per_piece = (MPI_Count)(BLOCK / g.esize);
    g.npieces = (uint32_t)((g.count + g.per_piece - 1) / g.per_piece);
    return g;
}

/* Piece k: its first element and element count; this process's chunk of it (the whole piece
 * at the root and nothing elsewhere when the root combines alone, `root` >= 0). */
static void piece_of(const pieces *g, uint32_t k, int rank, int root, MPI_Count *first, MPI_Count *len,
                     MPI_Count *cfirst, MPI_Count *clen)
{
    *first = (MPI_Count)k * g->per_piece;
    *len = CR_MIN(g->per_piece, g->count - *first);
    if (root >= 0) {
        *cfirst = 0;
        *clen = rank == root ? *len : 0;
        return;
    }
    MPI_Count base = *len / g->n, rem = *len % g->n;
    *cfirst = rank * base + CR_MIN((MPI_Count)rank, rem);
    *clen = base + (rank < rem);
}

/* The number one past the last block of piece k, its slot of process j, its result block. */
static uint32_t piece_end(const cr_sched *s, const pieces *g, uint32_t k)
{
    return s->state[0] + (k + 1) * (g->n + 1);
}

static char *piece_block(const cr_sched *s, const pieces *g, uint32_t k, uint32_t j)
{
    return block_at(g->st, s->state[1], (uint64_t)k * (g->n + 1) + j);
}

/* This process's own data of a piece can be read in place (not packed into its slot). */
static bool own_in_place(const cr_sched_args *x)
{
    return cr_dtype_is_contig_n(x->dt, x->count);
}

static void stage(cr_sched *s, const pieces *g, uint32_t k)
{
    cr_sched_args *x = &s->args;
    MPI_Count first, len, cfirst, clen;
    piece_of(g, k, s->rank, g->root_alone, &first, &len, &cfirst, &clen);
    char *slot = piece_block(s, g, k, (uint32_t)s->rank);
    if (k == 0) /* the size of the whole vector, beside this process's first slot */
        g->st->sizes[block_place(g->st, s->state[1], (uint64_t)s->rank)] =
            cr_coll_node_size_mark(s, (uint64_t)g->count * g->esize);
    uint64_t off = (uint64_t)first * g->esize, ce = (uint64_t)(cfirst + clen) * g->esize, pb = (uint64_t)len * g->esize;
    if (!own_in_place(x)) { /* the whole piece */
        cr_dt_pack_shared(x->sbuf, x->count, x->dt, off, slot, pb);
        return;
    }
    uint64_t cs = (uint64_t)cfirst * g->esize; /* the piece but this process's chunk */
    if (cs)
        cr_dt_pack_shared(x->sbuf, x->count, x->dt, off, slot, cs);
    if (pb > ce)
        cr_dt_pack_shared(x->sbuf, x->count, x->dt, off + ce, slot + ce, pb - ce);
}

/* acc = in op acc over `bytes` of packed data of dt (a whole number of elements): arrays of
 * the type's one predefined element for predefined operations, elements of dt otherwise
 * (reducible() said which applies). */
static void apply_packed(cr_op *op, cr_dtype *dt, const void *in, void *acc, uint64_t bytes)
{
    if (op->index >= 0 && dt->leaf && cr_dtype_is_contig(dt->leaf))
        cr_op_apply(op, in, acc, (MPI_Count)(bytes / (uint64_t)dt->leaf->size), (cr_dtype *)dt->leaf);
    else
        cr_op_apply(op, in, acc, (MPI_Count)(bytes / (uint64_t)dt->size), dt);
}

/* Where a process that copies the result out combines its chunk: straight into rbuf when that
 * is contiguous. The finished chunk then goes to the result block in one copy (the stores that
 * adapt), and the copy out skips it: the result block is written once and read only by the
 * others, where combining in it and copying it all out read it back, from lines the others'
 * reads have shared. In place, rbuf holds this process's own data, which the combining copies
 * aside a sub-chunk at a time (below), so that every operand keeps its place in rank order and
 * the result is the same bits as not in place; an element too large for that takes the result
 * block. */
static bool combine_in_rbuf(const cr_sched *s)
{
    const cr_sched_args *x = &s->args;
    return (x->root < 0 || s->rank == x->root) && cr_dtype_is_contig_n(x->dt, x->count) &&
           (x->sbuf != x->rbuf || (uint64_t)x->dt->size <= COMBINE_SUB);
}

static void combine(cr_sched *s, const pieces *g, uint32_t k)
{
    cr_sched_args *x = &s->args;
    MPI_Count first, len, cfirst, clen;
    piece_of(g, k, s->rank, g->root_alone, &first, &len, &cfirst, &clen);
    if (k == 0) /* (every process has staged piece 0: reduce_step waited for it) */
        for (int j = 0; j < s->size; j++)
            if (j != s->rank)
                cr_coll_node_check_size(s, j, g->st->sizes[block_place(g->st, s->state[1], (uint64_t)j)],
                                        (uint64_t)g->count * g->esize);
    if (clen == 0 || s->err) /* (after a mismatch, the slots hold bytes nobody wrote: combine nothing) */
        return;
    uint64_t cs = (uint64_t)cfirst * g->esize, cb = (uint64_t)clen * g->esize;
    bool direct = combine_in_rbuf(s);
    char *result = piece_block(s, g, k, g->n) + cs;
    char *acc = direct ? (char *)x->rbuf + x->dt->true_lb + (uint64_t)first * g->esize + cs : result;
    const char *own = own_in_place(x) ? (const char *)x->sbuf + x->dt->true_lb + (uint64_t)first * g->esize + cs : NULL;
    _Alignas(64) char aside[COMBINE_SUB]; /* in place: this process's data of the sub-chunk */
    bool own_is_acc = own == acc;
    /* In sub-chunks of about COMBINE_SUB bytes (whole elements), each combined from every slot
     * before the next: the accumulator stays in the first-level cache between operands. */
    uint64_t sub = COMBINE_SUB >= g->esize ? COMBINE_SUB - COMBINE_SUB % g->esize : g->esize;
    for (uint64_t at = 0; at < cb; at += sub) {
        uint64_t part = CR_MIN(sub, cb - at);
        if (own_is_acc) /* (direct in place: elements of at most COMBINE_SUB bytes, so part fits) */
            cr_copy(aside, acc + at, part);
        for (int j = s->size - 1; j >= 0; j--) {
            const char *in = j != s->rank || !own ? piece_block(s, g, k, (uint32_t)j) + cs + at
                             : own_is_acc         ? aside
                                                  : own + at;
            if (j == s->size - 1)
                cr_copy(acc + at, in, part);
            else
                apply_packed(x->op, x->dt, in, acc + at, part); /* acc = in_j op acc */
        }
    }
    if (direct && x->root < 0) /* allreduce: the others copy this chunk out */
        cr_copy_shared(result, acc, cb);
}

static int reduce_step(cr_sched *s, void *arg)
{
    cr_coll_node *st = arg;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    cr_sched_args *x = &s->args;
    pieces g = geometry(s, st);
    take_blocks(s, st, (uint64_t)g.npieces * (g.n + 1));
    int me = s->rank, n = s->size;
    bool copy_out = x->root < 0 || me == x->root;
    uint32_t *sp = &s->state[2], *rd = &s->state[3], *out = &s->state[4];
    for (;;) {
        bool moved = false;
        while (*sp < g.npieces && !(s->starting && *sp > 0) && ring_free(st, n, piece_end(s, &g, *sp))) {
            stage(s, &g, *sp);
            if (g.root_alone >= 0 && me != g.root_alone) { /* nothing more to do with this piece */
                publish(st, me, REDUCED, piece_end(s, &g, *sp));
                publish(st, me, DONE, piece_end(s, &g, *sp));
                ++*rd;
            }
            publish_wake(st, me, n, STAGED, piece_end(s, &g, *sp), false);
            ++*sp;
            moved = true;
        }
        while (!s->starting && *rd < *sp && all_reached(st, n, STAGED, piece_end(s, &g, *rd))) {
            combine(s, &g, *rd);
            if (!copy_out)
                publish_wake(st, me, n, DONE, piece_end(s, &g, *rd), false);
            publish_wake(st, me, n, REDUCED, piece_end(s, &g, *rd), false);
            ++*rd;
            moved = true;
        }
        while (!s->starting && copy_out && *out < *rd && all_reached(st, n, REDUCED, piece_end(s, &g, *out))) {
            MPI_Count first, len, cfirst, clen;
            piece_of(&g, *out, me, g.root_alone, &first, &len, &cfirst, &clen);
            uint64_t off = (uint64_t)first * g.esize, pb = (uint64_t)len * g.esize;
            const char *result = piece_block(s, &g, *out, g.n);
            if (!combine_in_rbuf(s)) {
                cr_dt_unpack(x->rbuf, x->count, x->dt, off, result, pb);
            } else { /* all but this process's chunk, which combine() left in rbuf */
                uint64_t cs = (uint64_t)cfirst * g.esize, ce = (uint64_t)(cfirst + clen) * g.esize;
                if (cs)
                    cr_dt_unpack(x->rbuf, x->count, x->dt, off, result, cs);
                if (pb > ce)
                    cr_dt_unpack(x->rbuf, x->count, x->dt, off + ce, result + ce, pb - ce);
            }
            publish_wake(st, me, n, DONE, piece_end(s, &g, *out), false);
            ++*out;
            moved = true;
        }
        if ((copy_out ? *out : *rd) == g.npieces)
            return MPI_SUCCESS;
        if (!moved || s->async) /* nonblocking: one pass a call (see take_blocks) */
            return CR_SCHED_AGAIN;
    }
}

/* root_alone: the root combines every piece, the others stage their data and leave at once
 * (as after eager sends: cheapest for vectors that the root combines quickly, and with 2
 * processes at any size; select.c, reduce_root_alone, says when); otherwise every process
 * combines its share. */
static void reduce_at(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root,
                      bool root_alone)
{
    s->args = (cr_sched_args){.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf, .rbuf = rbuf, .count = count, .dt = dt,
                              .op = op, .root = root};
    s->state[5] = root_alone ? (uint32_t)root + 1 : 0;
    cr_coll_node *st = cr_coll_node_of(s->comm);
    s->state[2] = s->state[3] = s->state[4] = s->state[7] = 0; /* (blocks: at its turn) */
    cr_sched_call(s, reduce_step, st);
}

void cr_coll_node_large_reduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op,
                               int root, bool root_alone)
{
    reduce_at(s, sbuf, rbuf, count, dt, op, root, root_alone);
}

void cr_coll_node_large_allreduce(cr_sched *s, const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    reduce_at(s, sbuf, rbuf, count, dt, op, -1, false);
}

/* ----------------------------------------------------------------- alltoall, allgather, gather, scatter */

/* Calls that move blocks between processes without combining them. A piece is one block per
 * process (its slot); each block of a call is cut into windows of `c` bytes, piece k moving
 * window k of every block. Alltoall and scatter put p sub-blocks of c = BLOCK / p bytes in a
 * slot (sub-block j for process j); allgather and gather put one sub-block of c = BLOCK. Every
 * process stages its piece into its slot (or, if it has nothing to send, just counts it
 * staged), then takes what is for it from the others' slots once they have staged, and is
 * done with the piece; a process that takes nothing is done once it has staged. Each process's
 * own block is copied directly (a copy step before this one).
 *
 * Three reductions take the same path, combining what they take instead of copying it: scan
 * and exscan stage the vector like allgather (but the last process, whose slot no one reads),
 * and process r starts from its own data (exscan: slot r - 1) and combines slots r - 1 (exscan:
 * r - 2) down to 0 (acc = in_j op acc: rank order), waiting only for those processes, straight
 * into a contiguous rbuf; reduce-scatter stages like alltoall (window j of block j for process
 * j), and process r combines window r of every slot, last first. Sums that cannot go straight
 * into rbuf go through a scratch window, then into rbuf. */
enum {
    X_ALLTOALL = CR_NODE_ALLTOALL, X_ALLGATHER = CR_NODE_ALLGATHER, X_GATHER = CR_NODE_GATHER,
    X_SCATTER = CR_NODE_SCATTER, X_SCAN = CR_NODE_SCAN, X_EXSCAN = CR_NODE_EXSCAN,
    X_REDUCE_SCATTER = CR_NODE_REDUCE_SCATTER,
    X_ALLTOALLV, /* and alltoallw: blocks of every size (below) */
    X_ALLGATHERV /* blocks of every size, which every process knows (below) */
};

/* Allgatherv: like allgather (a slot per process, one window of BLOCK bytes of its block), but
 * process j's block is rcounts[j] elements at rdispls[j], which every process knows (args.tmp:
 * a cr_coll_block each, the receive side set). The call takes the pieces of its largest block;
 * a process stages its block's pieces, then says it has staged the whole call (no one reads its
 * empty windows), so that the others need not wait for it at each piece of a larger block. Its
 * own block is in place in rbuf already (the select copied it there). */
static uint64_t gv_bytes(const cr_sched *s, int j)
{
    const cr_coll_block *t = s->args.tmp;
    return (uint64_t)t[j].rcount * (uint64_t)t[j].rdt->size;
}

typedef struct xgeom {
    uint64_t bytes, c; /* per block, per window */
    uint32_t n, npieces;
    uint32_t blocks; /* per piece: a slot per process, or the root's alone (scatter) */
    int kind, root, me;
    bool stages, takes;
} xgeom;

static xgeom xgeometry(const cr_sched *s)
{
    const cr_sched_args *x = &s->args;
    xgeom g = {.n = (uint32_t)s->size, .kind = (int)s->state[4], .root = x->root, .me = s->rank};
    uint64_t rb = x->dt ? (uint64_t)x->count * (uint64_t)x->dt->size : 0,
             sb = x->sdt ? (uint64_t)x->scount * (uint64_t)x->sdt->size : 0;
    bool at_root = g.me == g.root;
    switch (g.kind) {
    /* A scan's last process stages nothing: only later processes read a slot. */
    case X_SCAN: g.bytes = rb, g.stages = g.me < (int)g.n - 1, g.takes = true; break;
    case X_REDUCE_SCATTER: g.bytes = rb, g.stages = g.takes = true; break;
    case X_EXSCAN: g.bytes = rb, g.stages = g.me < (int)g.n - 1, g.takes = g.me > 0; break;
    case X_ALLTOALL: g.bytes = rb, g.stages = g.takes = true; break;
    case X_ALLTOALLV: g.stages = g.takes = true; break; /* (g.bytes differs by pair) */
    case X_ALLGATHERV: g.bytes = gv_bytes(s, g.me), g.stages = g.takes = true; break;
    case X_ALLGATHER: g.bytes = rb, g.stages = g.takes = true; break;
    case X_GATHER: g.bytes = at_root ? rb : sb, g.stages = !at_root, g.takes = at_root; break;
    default: g.bytes = at_root ? sb : rb, g.stages = at_root, g.takes = !at_root; break;
    }
    bool per_peer = g.kind == X_ALLTOALL || g.kind == X_SCATTER || g.kind == X_REDUCE_SCATTER || g.kind == X_ALLTOALLV;
    g.c = per_peer ? (BLOCK / g.n) & ~(uint64_t)63 : BLOCK;
    if (x->op) /* windows of whole elements */
        g.c -= g.c % (uint64_t)x->dt->size;
    if (g.kind == X_ALLTOALLV) /* the call's pieces once known, this process's own until then */
        g.npieces = s->state[5] ? s->state[5] : s->state[6];
    else if (g.kind == X_ALLGATHERV) /* (the largest block's, the same everywhere) */
        g.npieces = s->state[6];
    else
        g.npieces = (uint32_t)((g.bytes + g.c - 1) / g.c);
    g.blocks = g.kind == X_SCATTER ? 1 : g.n;
    return g;
}

/* The place of process j's slot of piece k, and the slot. */
static size_t xplace(const cr_sched *s, const cr_coll_node *st, const xgeom *g, uint32_t k, int j)
{
    return block_place(st, s->state[1], (uint64_t)k * g->blocks + (g->blocks == 1 ? 0 : (uint32_t)j));
}

static char *xslot(const cr_sched *s, const cr_coll_node *st, const xgeom *g, uint32_t k, int j)
{
    return st->blocks + xplace(s, st, g, k, j) * BLOCK;
}

/* Sizes (node.h: counts beside the data): a process's first slot of a call carries the bytes
 * of a block it stages for one process (all of them, for a scatter's root), g->bytes, which is
 * what every taker expects; the takers compare before they take the first piece. */
static void xput_size(cr_sched *s, const cr_coll_node *st, const xgeom *g)
{
    st->sizes[xplace(s, st, g, 0, g->me)] = cr_coll_node_size_mark(s, g->bytes);
}

/* Gathers written in place (below): a process that wrote its block into the root's buffer
 * leaves WROTE_IN_PLACE as the size beside its first slot of the call, and stages nothing. A
 * root that takes through the blocks (some process could not write) notes at its first piece,
 * in its scratch (one flag a process), who wrote, and skips their slots. The size beside a slot
 * is the call's own until the root is done with the slot's piece (the ring gives a block's place
 * to a later block only once every process is done with it), and the root reads the sizes
 * only once every process has staged its first piece or written in place. */
#define WROTE_IN_PLACE (CR_COLL_NODE_MARKED - 1)

static bool wrote_in_place(const cr_sched *s, const xgeom *g, int j)
{
    return g->kind == X_GATHER && s->state[5] == 1 && ((const uint8_t *)s->args.tmp)[j];
}

static void xcheck_sizes(cr_sched *s, const cr_coll_node *st, const xgeom *g)
{
    bool prefix = g->kind == X_SCAN || g->kind == X_EXSCAN; /* (they read processes before them) */
    int from = g->kind == X_SCATTER ? g->root : 0, to = g->kind == X_SCATTER ? g->root + 1 : prefix ? g->me : (int)g->n;
    for (int j = from; j < to; j++)
        if (j != g->me && !wrote_in_place(s, g, j))
            cr_coll_node_check_size(s, j, st->sizes[xplace(s, st, g, 0, j)], g->bytes);
}

/* Block j of a buffer of per-process blocks of `count` elements of dt. */
static void *block_of(const void *buf, MPI_Count count, const cr_dtype *dt, int j)
{
    return cr_coll_at(buf, (MPI_Count)j * count, dt);
}

/* Whether a reduce-scatter combines this process's own window straight from its send buffer
 * (contiguous, not in place: in place, rbuf's first block, where the sums go, is input too),
 * so that it stages the others' windows only. */
static bool rs_own_direct(const cr_sched_args *x)
{
    return x->sbuf != x->rbuf && cr_dtype_is_contig_n(x->dt, x->count);
}

/* Alltoallv and alltoallw: blocks of any size for each pair, in the same pieces as alltoall.
 * What process j sends process i is a stream: a header of VHEAD bytes, which carries the
 * stream's bytes (node.h: counts beside the data), then the data; piece k carries bytes
 * [k c, (k + 1) c) of every stream, at sub-block i of j's slot, so a window may hold the
 * header, data, both or nothing.
 *
 * How many pieces a call takes depends on its largest block anywhere, which no process knows
 * alone (a process knows what it sends and receives, not what the others exchange). Agreeing
 * by an allreduce first would cost every call a round where the small ones are a round long.
 * Instead the first piece carries it: each process writes its reach (VHEAD + the largest block
 * it sends or receives) into the size word beside its first slot; once every process has
 * staged the first piece, each reads the n words and takes the same npieces = ceil(max / c).
 * Until then a process stages only the pieces its own reach covers, which the call certainly
 * has. Receive sizes count too, so a process that expects more than its peer sends reads in
 * bounds (and reports the mismatch from the header). Like every call here it takes its
 * blocks at its turn (take_blocks), but none yet: it moves st->next past them once npieces is
 * known, before it finishes, and no later call takes blocks before that.
 *
 * A process whose own streams end before the call's last piece (its reach is less than the
 * largest) leaves once it has taken its last piece with data: it says it has staged and is
 * done with every block of the call at once (no one reads its later windows, and their places
 * are reused only once every process is done), and wakes the sleepers, whatever value they
 * wait for. Otherwise one large pair would hold every process in step for all its pieces
 * (8 processes on 2 cores, one pair of 1 MiB: 4.6-5.5 ms, against 0.2 by pairs).
 *
 * In place, the send side is the receive side: piece k of a block is staged before it is
 * taken (the stage loop runs ahead of the take loop), and the windows of a block cover
 * disjoint ranges of its packed bytes, so a window unpacked into rbuf overwrites nothing that
 * is still to be staged.
 *
 * The other state: [2], [3] pieces staged and taken, [5] npieces (0: not known yet), [6] this
 * process's own pieces, [7] 1 once its turn came, 2 when the call is too large (vlearn); args.tmp the call's table
 * of blocks, one a process (cr_coll_block), in place with the send side set to the receive
 * side, then every process's own pieces (vstops, from vlearn). */
#define VHEAD ((uint64_t)64) /* (keeps the data of every window 64-byte aligned) */

/* The part of piece k that holds data of a stream of `bytes`: its offset in the data, its
 * length (0: none) and its position in the window. */
typedef struct vwin {
    uint64_t off, len, at;
} vwin;

static vwin vwindow(const xgeom *g, uint32_t k, uint64_t bytes)
{
    uint64_t lo = (uint64_t)k * g->c, from = CR_MAX(lo, VHEAD), to = CR_MIN(lo + g->c, VHEAD + bytes);
    return from < to ? (vwin){from - VHEAD, to - from, from - lo} : (vwin){0, 0, 0};
}

/* Each process's own pieces, as vlearn read them (the pieces its streams reach, at most npieces). */
static uint32_t *vstops(const cr_sched *s)
{
    return (uint32_t *)(void *)((cr_coll_block *)s->args.tmp + s->size);
}

static uint64_t vbytes(MPI_Count count, const cr_dtype *dt)
{
    return (uint64_t)count * (uint64_t)dt->size;
}

/* VHEAD + the largest block this process sends or receives (not its own: that is a copy). */
static uint64_t vreach(const cr_sched *s)
{
    const cr_coll_block *t = s->args.tmp;
    uint64_t most = 0;
    for (int j = 0; j < s->size; j++)
        if (j != s->rank)
            most = CR_MAX(most, CR_MAX(vbytes(t[j].scount, t[j].sdt), vbytes(t[j].rcount, t[j].rdt)));
    return VHEAD + most;
}

static void vstage(cr_sched *s, const cr_coll_node *st, const xgeom *g, uint32_t k)
{
    const cr_coll_block *t = s->args.tmp;
    char *slot = xslot(s, st, g, k, g->me);
    if (k == 0)
        st->sizes[xplace(s, st, g, 0, g->me)] = vreach(s);
    for (uint32_t j = 0; j < g->n; j++) {
        if ((int)j == g->me)
            continue;
        uint64_t bytes = vbytes(t[j].scount, t[j].sdt);
        if (k == 0) {
            uint64_t head = cr_coll_node_size_mark(s, bytes);
            memcpy(slot + j * g->c, &head, sizeof head);
        }
        vwin w = vwindow(g, k, bytes);
        if (w.len)
            cr_dt_pack_shared(t[j].sbuf, t[j].scount, t[j].sdt, w.off, slot + j * g->c + w.at, w.len);
    }
}

static void vtake(cr_sched *s, const cr_coll_node *st, const xgeom *g, uint32_t k)
{
    const cr_coll_block *t = s->args.tmp;
    for (uint32_t j = 0; j < g->n; j++) {
        if ((int)j == g->me)
            continue;
        const char *sub = xslot(s, st, g, k, (int)j) + (uint64_t)g->me * g->c;
        uint64_t bytes = vbytes(t[j].rcount, t[j].rdt);
        if (k == 0) { /* (a mismatch: takes what it expects, in bounds, and says so at the end) */
            uint64_t head;
            memcpy(&head, sub, sizeof head);
            cr_coll_node_check_size(s, (int)j, head, bytes);
        }
        vwin w = vwindow(g, k, bytes);
        if (w.len)
            cr_dt_unpack(t[j].rbuf, t[j].rcount, t[j].rdt, w.off, sub + w.at, w.len);
    }
}

/* The most pieces a call may take: its blocks must stay far below 2^31, since the ring's
 * 32-bit counters compare by sign. */
static uint64_t vmax_pieces(uint32_t n)
{
    return ((uint64_t)INT32_MAX / 2) / n;
}

/* Once every process has staged the first piece: the call's pieces, from every reach, and the
 * blocks it takes. A call whose largest block needs more than vmax_pieces (a pair of about
 * 2^47 / n^2 bytes) moves that many pieces, as every process knows, and then fails
 * everywhere alike (state[7] = 2; no process staged more: state[6] has the same bound). */
static void vlearn(cr_sched *s, cr_coll_node *st, xgeom *g)
{
    uint64_t most = 0;
    uint32_t *stops = vstops(s);
    for (uint32_t j = 0; j < g->n; j++) {
        uint64_t reach = st->sizes[xplace(s, st, g, 0, (int)j)];
        most = CR_MAX(most, reach);
        stops[j] = (uint32_t)CR_MIN((reach + g->c - 1) / g->c, vmax_pieces(g->n));
    }
    uint64_t npieces = (most + g->c - 1) / g->c;
    if (npieces > vmax_pieces(g->n)) {
        npieces = vmax_pieces(g->n);
        s->state[7] = 2;
    }
    s->state[5] = (uint32_t)npieces;
    st->next = s->state[0] + (uint32_t)(npieces * g->n);
    st->place = (uint32_t)((s->state[1] + npieces * g->n) % st->nblocks);
    g->npieces = (uint32_t)npieces;
}

/* Publishes this process's counter for piece k (STAGED or DONE) and wakes those who may wait
 * for it. At the first piece and at the last, every sleeper, as publish_wake does (all wait
 * for the agreement; processes that left wait, in their next call, for the ring to free, and
 * are woken at the last piece only, though their next call's first piece may fit up to U
 * blocks earlier: fewer wakes); in between, only the processes whose streams reach past piece k: with one large pair, the
 * others (gone to their next call) would be scheduled at every piece only to sleep again
 * (8 processes on 2 cores, one pair of 1 MiB: 1.8 ms asleep, 0.64 spinning). The others'
 * counters move in whole pieces (or to the call's end), so a waiter needs waking only when
 * every process has reached the value (publish_wake). */
static void vpublish_wake(const cr_sched *s, const cr_coll_node *st, const xgeom *g, int field, uint32_t k)
{
    uint32_t value = s->state[0] + (k + 1) * g->blocks;
    if (k == 0 || k + 1 >= g->npieces || !s->state[5]) {
        publish_wake(st, g->me, (int)g->n, field, value, false);
        return;
    }
    publish(st, g->me, field, value);
    if (!cr_shm_sleep_mode())
        return;
    atomic_thread_fence(memory_order_seq_cst);
    if (!all_reached(st, (int)g->n, field, value))
        return;
    const uint32_t *stops = vstops(s);
    for (uint32_t j = 0; j < g->n; j++)
        if ((int)j != g->me && stops[j] > k)
            cr_shm_wake_world(s->comm->world_ranks, (int)j, (int)j + 1);
}

static void xstage(cr_sched *s, const cr_coll_node *st, const xgeom *g, uint32_t k)
{
    if (g->kind == X_ALLTOALLV) {
        vstage(s, st, g, k);
        return;
    }
    if (g->kind == X_ALLGATHERV) {
        const cr_coll_block *own = (const cr_coll_block *)s->args.tmp + g->me;
        uint64_t off = (uint64_t)k * g->c;
        if (k == 0)
            xput_size(s, st, g);
        if (off < g->bytes)
            cr_dt_pack_shared(own->rbuf, own->rcount, own->rdt, off, xslot(s, st, g, k, g->me),
                              CR_MIN(g->c, g->bytes - off));
        return;
    }
    const cr_sched_args *x = &s->args;
    uint64_t off = (uint64_t)k * g->c, len = CR_MIN(g->c, g->bytes - off);
    char *slot = xslot(s, st, g, k, g->me);
    if (k == 0)
        xput_size(s, st, g);
    if (g->kind == X_SCAN || g->kind == X_EXSCAN) {
        cr_dt_pack_shared(x->sbuf, x->count, x->dt, off, slot, len);
    } else if (g->kind == X_REDUCE_SCATTER) { /* sbuf: p blocks of count (rbuf when in place) */
        bool own_direct = rs_own_direct(x);
        for (uint32_t j = 0; j < g->n; j++)
            if (!(own_direct && (int)j == g->me))
                cr_dt_pack_shared(block_of(x->sbuf, x->count, x->dt, (int)j), x->count, x->dt, off, slot + j * g->c, len);
    } else if (g->kind == X_ALLGATHER) { /* this process's block is in place in rbuf already */
        cr_dt_pack_shared(block_of(x->rbuf, x->count, x->dt, g->me), x->count, x->dt, off, slot, len);
    } else if (g->kind == X_GATHER) {
        cr_dt_pack_shared(x->sbuf, x->scount, x->sdt, off, slot, len);
    } else { /* alltoall (from rbuf when in place) and scatter: a sub-block per process */
        bool in_place = x->sbuf == MPI_IN_PLACE;
        const void *buf = in_place ? x->rbuf : x->sbuf;
        MPI_Count count = in_place ? x->count : x->scount;
        const cr_dtype *dt = in_place ? x->dt : x->sdt;
        for (uint32_t j = 0; j < g->n; j++)
            if ((int)j != g->me)
                cr_dt_pack_shared(block_of(buf, count, dt, (int)j), count, dt, off, slot + j * g->c, len);
    }
}

static void xtake(cr_sched *s, const cr_coll_node *st, const xgeom *g, uint32_t k)
{
    const cr_sched_args *x = &s->args;
    if (g->kind == X_ALLTOALLV) {
        vtake(s, st, g, k);
        return;
    }
    if (g->kind == X_ALLGATHERV) {
        const cr_coll_block *t = x->tmp;
        uint64_t off = (uint64_t)k * g->c;
        for (uint32_t j = 0; j < g->n; j++) {
            if ((int)j == g->me)
                continue;
            uint64_t bytes = gv_bytes(s, (int)j);
            if (k == 0) /* (a mismatch: takes what it expects, in bounds of the slots, and says so) */
                cr_coll_node_check_size(s, (int)j, st->sizes[xplace(s, st, g, 0, (int)j)], bytes);
            if (off < bytes)
                cr_dt_unpack(t[j].rbuf, t[j].rcount, t[j].rdt, off, xslot(s, st, g, k, (int)j), CR_MIN(g->c, bytes - off));
        }
        return;
    }
    uint64_t off = (uint64_t)k * g->c, len = CR_MIN(g->c, g->bytes - off);
    if (k == 0 && g->kind == X_GATHER && s->state[5] == 1)
        for (uint32_t j = 0; j < g->n; j++)
            ((uint8_t *)x->tmp)[j] = (int)j != g->me && st->sizes[xplace(s, st, g, 0, (int)j)] == WROTE_IN_PLACE;
    if (k == 0)
        xcheck_sizes(s, st, g);
    if (x->op && s->err) /* (node.h: nothing combined after a mismatch) */
        return;
    if (x->op) { /* scan, exscan, reduce-scatter: combine, last process first */
        int last = g->kind == X_SCAN ? g->me : g->kind == X_EXSCAN ? g->me - 1 : (int)g->n - 1;
        uint64_t sub = g->kind == X_REDUCE_SCATTER ? (uint64_t)g->me * g->c : 0;
        /* Sums go straight into a contiguous rbuf (else through the scratch window), and a
         * scan starts from this process's own data where it is, not from its slot: process 0's
         * scan is one copy, and the last process, which stages nothing, reads only the others'
         * slots. */
        bool direct = cr_dtype_is_contig_n(x->dt, x->count);
        char *acc = direct ? (char *)x->rbuf + x->dt->true_lb + off : x->tmp;
        /* a reduce-scatter's own window, when it was not staged (rs_own_direct) */
        const char *own_rs = g->kind == X_REDUCE_SCATTER && rs_own_direct(x)
                                 ? (const char *)block_of(x->sbuf, x->count, x->dt, g->me) + x->dt->true_lb + off
                                 : NULL;
        if (g->kind == X_SCAN) {
            const void *own = x->sbuf == MPI_IN_PLACE ? x->rbuf : x->sbuf;
            if (!(direct && own == x->rbuf)) /* (in place and direct: acc holds it already) */
                cr_dt_pack(own, x->count, x->dt, off, acc, len);
        } else {
            cr_copy(acc, last == g->me && own_rs ? own_rs : xslot(s, st, g, k, last) + sub, len);
        }
        for (int j = last - 1; j >= 0; j--)
            apply_packed(x->op, x->dt, j == g->me && own_rs ? own_rs : xslot(s, st, g, k, j) + sub, acc, len);
        if (!direct)
            cr_dt_unpack(x->rbuf, x->count, x->dt, off, acc, len);
        return;
    }
    if (g->kind == X_SCATTER) {
        const char *slot = xslot(s, st, g, k, g->root);
        cr_dt_unpack(x->rbuf, x->count, x->dt, off, slot + (uint64_t)g->me * g->c, len);
        return;
    }
    uint64_t sub = g->kind == X_ALLTOALL ? (uint64_t)g->me * g->c : 0;
    for (uint32_t j = 0; j < g->n; j++)
        if ((int)j != g->me && !wrote_in_place(s, g, (int)j)) {
            const char *slot = xslot(s, st, g, k, (int)j);
            cr_dt_unpack(block_of(x->rbuf, x->count, x->dt, (int)j), x->count, x->dt, off, slot + sub, len);
        }
}

/* Whether everyone this process takes from has staged up to `end`: scatter's root; the
 * processes before this one for scans; everyone otherwise. */
static bool xstaged(const cr_coll_node *st, const xgeom *g, uint32_t end)
{
    if (g->kind == X_SCATTER)
        return cr_coll_seq_reached(&st->large->lines[g->root].c[STAGED], end);
    int upto = g->kind == X_SCAN || g->kind == X_EXSCAN ? g->me : (int)g->n;
    return all_reached(st, upto, STAGED, end);
}

static int exchange_step(cr_sched *s, void *arg)
{
    cr_coll_node *st = arg;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    xgeom g = xgeometry(s);
    bool v = g.kind == X_ALLTOALLV;
    take_blocks(s, st, v ? 0 : (uint64_t)g.npieces * g.blocks); /* (alltoallv: see VHEAD) */
    uint32_t *sp = &s->state[2], *tk = &s->state[3];
    for (;;) {
        bool moved = false;
        /* (alltoallv: a process stages as far as its own streams go, see VHEAD) */
        uint32_t stage_to = v ? CR_MIN(g.npieces, s->state[6]) : g.npieces;
        while (*sp < stage_to && !(s->starting && *sp > 0)) {
            uint32_t end = s->state[0] + (*sp + 1) * g.blocks;
            if (!ring_free(st, (int)g.n, end))
                break;
            if (g.stages)
                xstage(s, st, &g, *sp);
            if (!g.takes) {
                publish(st, g.me, DONE, end);
                ++*tk;
            }
            /* Scatter's takers wait for the root alone; the others for everyone. */
            ++*sp;
            moved = true;
            /* (allgatherv: past its block's last piece, it has staged the whole call; the
             * sleepers wait for lower values, which it may have been the last to reach) */
            if (g.kind == X_ALLGATHERV && (uint64_t)*sp * g.c >= g.bytes && *sp < g.npieces) {
                *sp = g.npieces;
                publish(st, g.me, STAGED, s->state[0] + g.npieces * g.blocks);
                wake_if_sleeping();
            } else if (v) {
                vpublish_wake(s, st, &g, STAGED, *sp - 1);
            } else {
                publish_wake(st, g.me, (int)g.n, STAGED, end, g.kind == X_SCATTER && g.stages);
            }
        }
        /* Nothing is taken before npieces is known: the size words stay the call's until this
         * process is done with the first piece. */
        if (v && !s->state[5]) {
            if (!xstaged(st, &g, s->state[0] + g.blocks))
                return CR_SCHED_AGAIN;
            vlearn(s, st, &g);
            moved = true;
        }
        while (!s->starting && g.takes && *tk < *sp && *tk < g.npieces && xstaged(st, &g, s->state[0] + (*tk + 1) * g.blocks)) {
            xtake(s, st, &g, *tk);
            if (v)
                vpublish_wake(s, st, &g, DONE, *tk);
            else
                publish_wake(st, g.me, (int)g.n, DONE, s->state[0] + (*tk + 1) * g.blocks, false);
            ++*tk;
            moved = true;
        }
        if (v && *tk == stage_to && stage_to < g.npieces) { /* its streams ended: it leaves (VHEAD) */
            uint32_t end = s->state[0] + g.npieces * g.blocks;
            publish(st, g.me, STAGED, end);
            publish(st, g.me, DONE, end);
            wake_if_sleeping();
            *sp = *tk = g.npieces;
        }
        if (*tk == g.npieces) {
            call_end(st, g.me, s->state[0] + g.npieces * g.blocks);
            if (v && s->state[7] == 2)
                return cr_err(MPI_ERR_COUNT, "a block of the call is larger than the node's shared memory can stage "
                                             "(%llu bytes a process pair at most)",
                              (unsigned long long)(vmax_pieces(g.n) * g.c - VHEAD));
            return MPI_SUCCESS;
        }
        if (!moved || s->async) /* nonblocking: one pass a call (see take_blocks) */
            return CR_SCHED_AGAIN;
    }
}

/* ----------------------------------------------------------------- scatter and gather in place */

/* A large scatter stages every block through the root's core: it copies p blocks in while the
 * others wait, then each copies its block out. Read in place instead, each process copies its
 * block straight from the root's buffer (cross-memory attach), all at once on every core, and
 * the root copies nothing. The reads cost a system call each and two rounds of waiting, which
 * pays from about 4 MiB scattered in all (8 processes of 1 MiB: 1.5-3x faster; 4 processes of
 * 64 KiB: 2x slower). A large gather is the mirror: each process writes its block straight
 * into the root's receive buffer, one copy where staging takes two, the second of them all on
 * the root's core. A write into another process costs more than a copy between cached blocks
 * (the kernel pins each page: about 12 GB/s here), so it pays later, where the root's share of
 * a core is small: 16 processes of 1 MiB on 2 cores 0.62x of the staged time, 8 even, 4
 * processes 1.7x slower. The blocks of the staged call are still taken, so that a refused
 * read or write can fall back to them:
 *   1. the root clears its line's count of answers and offers its buffer (addr, then
 *      `offered` = the call's number; addr 0 if its blocks are not contiguous: then they go
 *      staged);
 *   2. each other process reads (scatter) or writes (gather) its block if there is an offer,
 *      its own buffer is contiguous and the copy works; one that copied is done with the
 *      call's blocks (in a gather it says so beside its first slot: WROTE_IN_PLACE, above),
 *      and it answers in the root's line in any case (counts itself in `refused` if it could
 *      not, then in `answers`);
 *   3. once every process has answered, the root leaves if none refused, and stages (scatter)
 *      or takes (gather, from those that did not write) through the blocks otherwise, for
 *      those that could not (exchange_step, as without this step).
 * Every member numbers these calls alike (they call them in the same order). Answers go to the
 * root's line, which only this call uses until its root has counted them all (the root's next
 * offer comes after that), whatever calls with other roots the others go on to. state[5]: 0
 * not started, 1 offered, 2 done in place; state[6] the call's number. */
static int64_t scatter_direct, gather_direct;
CR_TUNABLE(scatter_direct, COURIER_COLL_SCATTER_DIRECT, CR_TUNE_SIZE, "4M",
           "bytes scattered in all from which MPI_Scatter on a node lets each process read its block straight "
           "from the root's buffer (cross-memory attach) instead of staging every block through shared memory");
CR_TUNABLE(gather_direct, COURIER_COLL_GATHER_DIRECT, CR_TUNE_SIZE, "8M",
           "bytes gathered in all from which MPI_Gather on a node lets each process write its block straight "
           "into the root's buffer (cross-memory attach) instead of staging every block through shared memory");

/* Marks this process done with every block of the call (it will not touch them). */
static void blocks_done(cr_sched *s, const cr_coll_node *st, const xgeom *g)
{
    uint32_t end = s->state[0] + g->npieces * g->blocks;
    publish(st, g->me, STAGED, end);
    publish_wake(st, g->me, (int)g->n, DONE, end, false);
    s->state[2] = s->state[3] = g->npieces;
}

/* A non-root process's part: reads its block from the root's buffer (scatter) or writes it
 * there (gather), if it can. Returns whether it did. */
static bool copy_in_place(cr_sched *s, const xgeom *g, uint64_t addr)
{
    const cr_sched_args *x = &s->args;
    int root = cr_comm_world_rank(s->comm, x->root);
    bool gather = g->kind == X_GATHER;
    const void *buf = gather ? x->sbuf : x->rbuf;
    const cr_dtype *dt = gather ? x->sdt : x->dt;
    MPI_Count count = gather ? x->scount : x->count;
    if (!addr || !cr_dtype_is_contig_n(dt, count) || !cr_xport_can_read(root))
        return false;
    struct iovec local = {(char *)buf + dt->true_lb, g->bytes},
                 remote = {(void *)(uintptr_t)(addr + (uint64_t)g->me * g->bytes), g->bytes};
    return (gather ? cr_xport_write(root, &local, 1, &remote, 1) : cr_xport_read(root, &local, 1, &remote, 1)) == 0;
}

static int in_place_step(cr_sched *s, void *arg)
{
    cr_coll_node *st = arg;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    const cr_sched_args *x = &s->args;
    xgeom g = xgeometry(s);
    take_blocks(s, st, (uint64_t)g.npieces * g.blocks);
    large_line *root = &st->large->lines[x->root];
    uint32_t number = s->state[6];
    if (g.me == x->root) {
        if (s->state[5] == 0) {
            bool gather = g.kind == X_GATHER;
            const void *buf = gather ? x->rbuf : x->sbuf;
            const cr_dtype *dt = gather ? x->dt : x->sdt;
            MPI_Count count = gather ? x->count : x->scount;
            bool whole = cr_dtype_is_contig_n(dt, count * (MPI_Count)g.n);
            atomic_store_explicit(&root->answers, 0, memory_order_relaxed);
            atomic_store_explicit(&root->refused, 0, memory_order_relaxed);
            atomic_store_explicit(&root->addr, whole ? (uint64_t)(uintptr_t)((const char *)buf + dt->true_lb) : 0,
                                  memory_order_relaxed);
            atomic_store_explicit(&root->bytes, cr_coll_node_size_mark(s, g.bytes), memory_order_relaxed);
            atomic_store_explicit(&root->offered, number, memory_order_release);
            wake_if_sleeping();
            s->state[5] = 1;
        }
        /* Every process answers, even an offer of nothing: the next offer may overwrite the
         * line only once each has looked at this one. */
        if (atomic_load_explicit(&root->answers, memory_order_acquire) != g.n - 1)
            return CR_SCHED_AGAIN;
        if (atomic_load_explicit(&root->addr, memory_order_relaxed) &&
            atomic_load_explicit(&root->refused, memory_order_relaxed) == 0) { /* nobody needs the blocks */
            blocks_done(s, st, &g);
            s->state[5] = 2;
        }
        return MPI_SUCCESS;
    }
    if (atomic_load_explicit(&root->offered, memory_order_acquire) != number)
        return CR_SCHED_AGAIN;
    /* A writer marks its first slot's size: once that slot is free (its place's earlier block
     * done with everywhere), as when it stages. */
    if (g.kind == X_GATHER && !ring_free(st, (int)g.n, s->state[0] + g.blocks))
        return CR_SCHED_AGAIN;
    uint64_t addr = atomic_load_explicit(&root->addr, memory_order_relaxed);
    bool copied;
    uint64_t root_bytes = atomic_load_explicit(&root->bytes, memory_order_relaxed);
    if (addr && root_bytes != g.bytes && g.kind == X_GATHER) {
        /* The root expects blocks of another size: write nothing; staged, the block carries its
         * size, and the root, which takes it, finds the mismatch (as it would without this step). */
        copied = false;
    } else if (addr && root_bytes != g.bytes) {
        /* The blocks at addr are not the size this process expects: copy nothing (in bounds of
         * neither buffer, the blocks staged would not pair up either), and say so. */
        cr_coll_node_check_size(s, x->root, root_bytes, g.bytes);
        copied = true;
    } else {
        copied = copy_in_place(s, &g, addr);
    }
    /* Done with the blocks before answering: the root, once answered, may wait for this
     * process's counters (a gather's root that takes from others waits for everyone's STAGED),
     * and an answer is what wakes it. */
    if (copied) {
        if (g.kind == X_GATHER)
            st->sizes[xplace(s, st, &g, 0, g.me)] = WROTE_IN_PLACE;
        blocks_done(s, st, &g);
        s->state[5] = 2;
    } else {
        atomic_fetch_add_explicit(&root->refused, 1, memory_order_relaxed);
    }
    /* Only the root waits for answers, and only for the last: waking every sleeper at each
     * answer scheduled processes (done, or still waiting for their turn on a core) only for
     * them to sleep again. */
    uint32_t answered = atomic_fetch_add_explicit(&root->answers, 1, memory_order_release) + 1;
    if (answered == g.n - 1 && cr_shm_sleep_mode()) {
        atomic_thread_fence(memory_order_seq_cst);
        cr_shm_wake_world(s->comm->world_ranks, x->root, x->root + 1);
    }
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- alltoall read in place */

/* A large alltoall staged copies every block twice (into its sender's slot, out of it), in
 * pieces of BLOCK / n bytes a pair, and each piece waits for all n processes to have staged
 * it: with more processes than cores, a round of scheduling every piece. Read in place, each
 * process reads its block from every other's send buffer (cross-memory attach): one copy, and
 * it waits for the others twice only, for their offers and, before it leaves (its send buffer
 * must stay as it is until all have read it), for their reads. A process that has a core reads
 * all its blocks then, whether their senders run or not. All processes do, or none:
 *   1. each offers its send buffer in its own line: addr (0 when it cannot take part: a send
 *      or receive buffer that is not contiguous, or a peer it cannot read), bytes (its blocks'
 *      size, CR_COLL_NODE_MARKED if it sends another size than it expects, or after an earlier
 *      mismatch), then offered = the call's number;
 *   2. once every line carries the call's number, each reads the n lines: if every addr is set
 *      and every size is the same, each reads its blocks; otherwise none does, and the call
 *      stages as without this step (which finds and reports a mismatch). All see the same
 *      n lines, so all decide alike;
 *   3. a reader marks its line `read` with the call's number (and `unread` first, if a read
 *      failed: cross-memory attach may fail once, cr_xport_can_read);
 *   4. once every line is read, a process leaves if no read failed, and otherwise every block
 *      is staged (a block read already is written again with the same bytes).
 * A process writes its line again only at its next offer, after every process has read (or,
 * when the call stages, after every process has staged its first piece, which each does only
 * after step 2), so nobody reads a line of a later call. The call's blocks are taken all the
 * same, for the fallback and so that every process numbers the blocks alike. Numbers come from
 * st->offers, as the scatters' and gathers' in place. Every process whose call is this large
 * takes part, whatever its buffers (the same decision everywhere: the block size in whole
 * windows), and one that cannot read offers nothing. state[2]: blocks read; state[5]: 0 not
 * started, 1 offered, 2 read, 3 staged; state[6]: the call's number. */
static int64_t alltoall_direct;
CR_TUNABLE(alltoall_direct, COURIER_COLL_ALLTOALL_DIRECT, CR_TUNE_SIZE, "1M",
           "bytes a process sends in all from which MPI_Alltoall on a node lets each process read its blocks straight "
           "from the others' send buffers (cross-memory attach) instead of staging every block through shared memory, "
           "where the node has 4 processes or more a CPU (0: always)");

static int64_t debug_unread;
CR_TUNABLE_EX(debug_unread, COURIER_DEBUG_COLL_UNREAD, CR_TUNE_INT, "0", NULL, 0, INT32_MAX,
              "for testing: in every this many alltoalls read in place, one process (the call's number modulo the "
              "processes) takes its first read as failed, so that every block of the call is staged after all; 0: none");

/* Whether an alltoall whose blocks take `bytes` in windows reads in place. It pays where the
 * processes share each core four ways or more, from 1 MiB a process (doc/performance.md: 8 and
 * 16 processes on 2 cores, 0.88-0.92x of the staged time; 4 processes 1.3-1.4x slower, from
 * 256 KiB to 1 MiB, where each piece's round of waiting costs less than the system calls and
 * the page pinning of the reads). Every process decides alike (the node's counts, the size in
 * whole windows). */
static bool alltoall_reads(uint64_t bytes)
{
    return bytes >= (uint64_t)alltoall_direct &&
           (alltoall_direct == 0 || cr_shm_local_size() >= 4 * cr_shm_node_cpus());
}

CR_PVAR_DEFINE(ran_alltoall_read, "coll.alltoall.node_read",
               "MPI_Alltoall calls on a node whose processes read their blocks straight from each other's send buffers");

/* Whether every line's `offered` (or `read`) has reached `number`. */
static bool lines_reached(const cr_coll_node *st, uint32_t n, bool read, uint32_t number)
{
    for (uint32_t r = 0; r < n; r++) {
        large_line *l = &st->large->lines[r];
        if (!cr_coll_seq_reached(read ? &l->read : &l->offered, number))
            return false;
    }
    return true;
}

/* Sets `word` of this process's line to `number`, and wakes the sleepers once every line's has
 * it (what they wait for; as publish_wake). */
static void line_publish(const cr_coll_node *st, uint32_t n, _Atomic uint32_t *word, bool read, uint32_t number)
{
    atomic_store_explicit(word, number, memory_order_release);
    if (!cr_shm_sleep_mode())
        return;
    atomic_thread_fence(memory_order_seq_cst);
    if (lines_reached(st, n, read, number))
        cr_shm_wake_sleepers();
}

/* Step 1: whether this process can take part, and its offer. */
static void direct_offer(cr_sched *s, const cr_coll_node *st, const xgeom *g)
{
    const cr_sched_args *x = &s->args;
    large_line *mine = &st->large->lines[g->me];
    /* In place (all processes, or, after a mismatch of its own block, this one alone: coll.h,
     * cr_coll_call) it offers nothing, and the call stages. */
    bool in_place = x->sbuf == MPI_IN_PLACE;
    bool whole = !in_place && cr_dtype_is_contig_n(x->sdt, x->scount * (MPI_Count)g->n) &&
                 cr_dtype_is_contig_n(x->dt, x->count * (MPI_Count)g->n);
    for (int j = 0; j < (int)g->n && whole; j++)
        whole = j == g->me || cr_xport_can_read(cr_comm_world_rank(s->comm, j));
    uint64_t sb = in_place ? 0 : (uint64_t)x->scount * (uint64_t)x->sdt->size;
    atomic_store_explicit(&mine->addr, whole ? (uint64_t)(uintptr_t)((const char *)x->sbuf + x->sdt->true_lb) : 0,
                          memory_order_relaxed);
    atomic_store_explicit(&mine->bytes, !in_place && sb == g->bytes ? cr_coll_node_size_mark(s, sb) : CR_COLL_NODE_MARKED,
                          memory_order_relaxed);
    line_publish(st, g->n, &mine->offered, false, s->state[6]);
}

/* Step 2's decision: every process offered a buffer, all of blocks of one size. */
static bool direct_agreed(const cr_coll_node *st, const xgeom *g)
{
    uint64_t bytes = atomic_load_explicit(&st->large->lines[0].bytes, memory_order_relaxed);
    for (uint32_t j = 0; j < g->n; j++) {
        const large_line *l = &st->large->lines[j];
        if (!atomic_load_explicit(&l->addr, memory_order_relaxed) ||
            atomic_load_explicit(&l->bytes, memory_order_relaxed) != bytes)
            return false;
    }
    return bytes != CR_COLL_NODE_MARKED;
}

/* Reads the next block (from the process after this one first, so that readers spread over the
 * senders); false if it could not. */
static bool direct_read(cr_sched *s, const cr_coll_node *st, const xgeom *g)
{
    const cr_sched_args *x = &s->args;
    int j = (int)(((uint32_t)g->me + 1 + s->state[2]) % g->n);
    uint64_t addr = atomic_load_explicit(&st->large->lines[j].addr, memory_order_relaxed);
    struct iovec local = {(char *)x->rbuf + x->dt->true_lb + (uint64_t)j * g->bytes, g->bytes},
                 remote = {(void *)(uintptr_t)(addr + (uint64_t)g->me * g->bytes), g->bytes};
    uint32_t number = s->state[6], first = s->state[2]++ == 0;
    if (CR_UNLIKELY(debug_unread) && first && number % (uint32_t)debug_unread == 0 &&
        number / (uint32_t)debug_unread % g->n == (uint32_t)g->me)
        return false; /* (COURIER_DEBUG_COLL_UNREAD) */
    return cr_xport_read(cr_comm_world_rank(s->comm, j), &local, 1, &remote, 1) == 0;
}

static int direct_step(cr_sched *s, void *arg)
{
    cr_coll_node *st = arg;
    if (!cr_coll_node_turn(s, st))
        return CR_SCHED_AGAIN;
    xgeom g = xgeometry(s);
    take_blocks(s, st, (uint64_t)g.npieces * g.blocks);
    large_line *mine = &st->large->lines[g.me];
    uint32_t number = s->state[6];
    if (s->state[5] == 0) {
        direct_offer(s, st, &g);
        s->state[5] = 1;
    }
    if (s->state[5] == 1) {
        if (s->starting || !lines_reached(st, g.n, false, number))
            return CR_SCHED_AGAIN;
        if (s->state[2] == 0 && !direct_agreed(st, &g)) {
            s->state[5] = 3;
            return MPI_SUCCESS;
        }
        /* All at once, nonblocking calls too: the reads wait for no one, and a pass that
         * returned with reads left would not count as progress, so a waiting process could
         * sleep with them undone while the others wait for its mark. */
        bool failed = false;
        while (s->state[2] < g.n - 1 && !failed)
            failed = !direct_read(s, st, &g);
        if (failed)
            atomic_store_explicit(&mine->unread, number, memory_order_relaxed);
        line_publish(st, g.n, &mine->read, true, number);
        s->state[5] = 2;
    }
    if (!lines_reached(st, g.n, true, number))
        return CR_SCHED_AGAIN;
    for (uint32_t j = 0; j < g.n; j++)
        if (atomic_load_explicit(&st->large->lines[j].unread, memory_order_relaxed) == number) {
            s->state[2] = 0;
            s->state[5] = 3;
            return MPI_SUCCESS;
        }
    blocks_done(s, st, &g);
    ran_alltoall_read++;
    return MPI_SUCCESS;
}

void cr_coll_node_large_exchange(cr_sched *s, int kind, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                                 MPI_Count rcount, cr_dtype *rdt, int root)
{
    cr_coll_node_large_combine(s, kind, sbuf, scount, sdt, rbuf, rcount, rdt, root, NULL);
}

void cr_coll_node_large_exchange_own(cr_sched *s, int kind, const cr_coll_call *a, int root, bool own,
                                     const void *own_src, MPI_Count own_scount, cr_dtype *own_sdt, void *own_dst, MPI_Count own_dcount,
                                     cr_dtype *own_ddt)
{
    if (own && !s->async)
        cr_sched_copy(s, own_src, own_scount, own_sdt, own_dst, own_dcount, own_ddt);
    cr_coll_node_large_exchange(s, kind, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, root);
    if (own && s->async)
        cr_sched_copy(s, own_src, own_scount, own_sdt, own_dst, own_dcount, own_ddt);
}

bool cr_coll_node_large_scan_usable(cr_comm *comm, const cr_dtype *dt, const cr_op *op, bool per_process)
{
    uint64_t window = per_process ? (BLOCK / (uint64_t)comm->size) & ~(uint64_t)63 : BLOCK;
    return cr_coll_node_large_usable(comm, dt, op) && (uint64_t)dt->size <= window;
}

void cr_coll_node_large_combine(cr_sched *s, int kind, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                                MPI_Count rcount, cr_dtype *rdt, int root, cr_op *op)
{
    cr_coll_node *st = cr_coll_node_of(s->comm);
    s->args = (cr_sched_args){.sbuf = sbuf, .rbuf = rbuf, .count = rcount, .dt = rdt, .scount = scount, .sdt = sdt,
                              .root = root, .op = op};
    s->state[4] = (uint32_t)kind;
    xgeom g = xgeometry(s);
    if (g.npieces == 0)
        return;
    /* Scatters and gathers large enough (the same decision everywhere: the block size is the
     * same; the size counted in whole windows, so that processes whose sizes differ but take
     * the same number of pieces decide alike, and find the mismatch as the staged path does)
     * first try to copy in place; exchange_step then has nothing left to do if that worked. */
    bool offers = (kind == X_SCATTER || kind == X_GATHER) && s->size > 1 &&
                  (uint64_t)g.n * g.npieces * g.c >= (uint64_t)(kind == X_SCATTER ? scatter_direct : gather_direct);
    bool reads = kind == X_ALLTOALL && s->size > 1 && alltoall_reads((uint64_t)g.n * g.npieces * g.c);
    if (op && !(s->args.tmp = cr_sched_scratch(s, g.c)))
        return;
    if (offers && kind == X_GATHER && g.me == root && !(s->args.tmp = cr_sched_scratch(s, g.n)))
        return;
    s->state[2] = s->state[3] = 0;
    s->state[5] = s->state[7] = 0; /* (blocks: at its turn) */
    if (offers || reads) {
        s->state[6] = st->offers++;
        cr_sched_call(s, offers ? in_place_step : direct_step, st);
    }
    cr_sched_call(s, exchange_step, st);
}

bool cr_coll_node_large_allgatherv(cr_sched *s, void *rbuf, cr_cvec rcounts, cr_cvec rdispls, cr_dtype *rdt)
{
    cr_coll_node *st = cr_coll_node_of(s->comm);
    uint64_t most = 0;
    for (int j = 0; j < s->size; j++)
        most = CR_MAX(most, (uint64_t)cr_cvec_at(rcounts, (size_t)j) * (uint64_t)rdt->size);
    uint64_t npieces = (most + BLOCK - 1) / BLOCK;
    if (npieces > vmax_pieces((uint32_t)s->size)) /* (the ring's counters: see vmax_pieces) */
        return false;
    if (npieces == 0)
        return true;
    cr_coll_block *t = cr_sched_scratch(s, sizeof *t * (size_t)s->size);
    if (!t)
        return true;
    for (int j = 0; j < s->size; j++)
        t[j] = (cr_coll_block){.rbuf = cr_coll_at(rbuf, cr_cvec_at(rdispls, (size_t)j), rdt),
                               .rcount = cr_cvec_at(rcounts, (size_t)j), .rdt = rdt};
    s->args = (cr_sched_args){.tmp = t};
    s->state[4] = X_ALLGATHERV;
    s->state[6] = (uint32_t)npieces;
    s->state[2] = s->state[3] = s->state[5] = s->state[7] = 0;
    cr_sched_call(s, exchange_step, st);
    return true;
}

void cr_coll_node_large_alltoallv(cr_sched *s, const cr_coll_call *a, cr_coll_peer_fn *peer)
{
    cr_coll_node *st = cr_coll_node_of(s->comm);
    bool in_place = a->sbuf == MPI_IN_PLACE;
    cr_coll_block *t = cr_sched_scratch(s, (sizeof *t + sizeof(uint32_t)) * (size_t)s->size); /* (and vstops) */
    if (!t)
        return;
    for (int j = 0; j < s->size; j++) {
        peer(a, j, &t[j]);
        if (in_place) /* (the blocks go out from where they come in: see VHEAD) */
            t[j].sbuf = t[j].rbuf, t[j].scount = t[j].rcount, t[j].sdt = t[j].rdt;
    }
    /* This process's own block: a copy before the exchange in a blocking call (while the others
     * stage), after it in a nonblocking one (coll.h, cr_coll_node_large_exchange_own, says why). */
    const cr_coll_block *own = &t[s->rank];
    if (!in_place && !s->async)
        cr_sched_copy(s, own->sbuf, own->scount, own->sdt, own->rbuf, own->rcount, own->rdt);
    s->args = (cr_sched_args){.tmp = t};
    s->state[4] = X_ALLTOALLV;
    s->state[2] = s->state[3] = s->state[5] = s->state[7] = 0;
    uint64_t c = (BLOCK / (uint64_t)s->size) & ~(uint64_t)63;
    s->state[6] = (uint32_t)CR_MIN((vreach(s) + c - 1) / c, vmax_pieces((uint32_t)s->size)); /* (see vlearn) */
    cr_sched_call(s, exchange_step, st);
    if (!in_place && s->async)
        cr_sched_copy(s, own->sbuf, own->scount, own->sdt, own->rbuf, own->rcount, own->rdt);
}
