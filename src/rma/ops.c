/* ops.c: the one-sided operations: put, get, the accumulate family (accumulate,
 * get_accumulate, fetch_and_op, compare_and_swap) and their request forms. Each completes
 * before it returns (rma.h): a copy into or out of the target's window memory, in this
 * process's address space when the window's memory is shared, else by single copy. */
#include "rma.h"

#include "coll/op.h"
#include "core/copy.h"
#include "cr_impl.h"
#include "req/request.h"
#include "xport/xport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* The checks every operation makes; false with *err set, or with MPI_SUCCESS for a target of
 * MPI_PROC_NULL (nothing to do). */
static bool op_valid(cr_win *w, int target, int *err)
{
    *err = MPI_SUCCESS;
    if (target == MPI_PROC_NULL)
        return false;
    if (target < 0 || target >= w->size) {
        *err = cr_err(MPI_ERR_RANK, "invalid target_rank=%d: the window has ranks 0..%d or MPI_PROC_NULL", target,
                      w->size - 1);
        return false;
    }
    if ((*err = cr_win_check_epoch(w, target)))
        return false;
    cr_win_epoch_use(w, target);
    cr_win_am_serve(w);
    return true;
}

static int check_count(MPI_Count count, const char *arg)
{
    return count < 0 ? cr_err(MPI_ERR_COUNT, "invalid %s=%lld: must not be negative", arg, (long long)count)
                     : MPI_SUCCESS;
}

/* Where (tcount, tdt) at target_disp of `target` is, checked against its window: the bytes it
 * touches run from true_lb to true_lb + true_extent, stretched by (tcount - 1) extents either
 * way (an extent may be negative); any overflow is out of range. */
static int locate(cr_win *w, int target, MPI_Aint disp, MPI_Count tcount, const cr_dtype *tdt, char **at)
{
    if (tcount == 0) /* touches nothing, wherever it points */
        return cr_win_target(w, target, 0, 0, 0, at);
    MPI_Aint step, lo = tdt->true_lb, hi;
    if (__builtin_mul_overflow((MPI_Aint)(tcount - 1), tdt->extent, &step) ||
        __builtin_add_overflow(lo, tdt->true_extent, &hi) ||
        (step < 0 ? __builtin_add_overflow(lo, step, &lo) : __builtin_add_overflow(hi, step, &hi)))
        return cr_err(MPI_ERR_RMA_RANGE, "target_count=%lld of the target datatype spans more bytes than any window "
                                         "holds", (long long)tcount);
    return cr_win_target(w, target, disp, lo, hi - lo, at);
}

static int same_size(MPI_Count ocount, const cr_dtype *odt, MPI_Count tcount, const cr_dtype *tdt, const char *what)
{
    uint64_t o = (uint64_t)ocount * odt->size, t = (uint64_t)tcount * tdt->size;
    return o == t ? MPI_SUCCESS
                  : cr_err(MPI_ERR_ARG, "the %s data (%llu bytes) and the target data (%llu bytes) differ in size", what,
                           (unsigned long long)o, (unsigned long long)t);
}

/* Moves bytes [off, off + n) of the packed stream of the target memory (tcount, tdt) at `at`
 * between it and `packed`. */
static int target_io(cr_win *w, int target, char *at, MPI_Count tcount, cr_dtype *tdt, uint64_t off, void *packed,
                     uint64_t n, bool write)
{
    if (w->direct[target]) {
        if (write)
            cr_dt_unpack(at, tcount, tdt, off, packed, n);
        else
            cr_dt_pack(at, tcount, tdt, off, packed, n);
        return MPI_SUCCESS;
    }
    int world = cr_comm_world_rank(w->comm, target);
    struct iovec remote[64];
    for (uint64_t done = 0; done < n;) {
        int k;
        uint64_t got = cr_dt_iov(at, tcount, tdt, off + done, n - done, remote, 64, &k);
        struct iovec local = {(char *)packed + done, got};
        if ((write ? cr_xport_write(world, &local, 1, remote, k) : cr_xport_read(world, &local, 1, remote, k)) != 0)
            return cr_err(MPI_ERR_RMA_SHARED, "cannot reach the window memory of process %d: windows on memory the "
                                              "user allocated need cross-memory attach, which is switched off "
                                              "(COURIER_SHM_CMA) or not permitted here (ptrace policy); memory from "
                                              "MPI_Win_allocate or MPI_Win_allocate_shared needs none", target);
        done += got;
    }
    return MPI_SUCCESS;
}

/* Put (write) or get: a typed copy between the origin buffer and the target's memory, direct
 * when the window's memory is mapped here, else packed and moved by single copy. */
static int transfer(void *obuf, MPI_Count ocount, cr_dtype *odt, int target, MPI_Aint disp, MPI_Count tcount,
                    cr_dtype *tdt, cr_win *w, bool write)
{
    int err;
    char *at;
    if (!op_valid(w, target, &err))
        return err;
    if ((err = check_count(ocount, "origin_count")) || (err = check_count(tcount, "target_count")) ||
        (err = same_size(ocount, odt, tcount, tdt, "origin")) || (err = locate(w, target, disp, tcount, tdt, &at)))
        return err;
    if (w->am[target])
        return write ? cr_win_am_put(w, target, at, obuf, ocount, odt, tcount, tdt)
                     : cr_win_am_get(w, target, at, obuf, ocount, odt, tcount, tdt);
    if (w->direct[target]) {
        uint64_t n = (uint64_t)tcount * tdt->size;
        if (n == 0)
            return MPI_SUCCESS;
        if (cr_dtype_is_contig_n(odt, ocount) && cr_dtype_is_contig_n(tdt, tcount)) {
            /* one run each: a plain copy, streaming when larger than the caches */
            char *mine = (char *)obuf + odt->true_lb, *theirs = at + tdt->true_lb;
            char *to = write ? theirs : mine, *from = write ? mine : theirs;
            if (to + n <= from || from + n <= to)
                cr_copy(to, from, (size_t)n);
            else
                memmove(to, from, (size_t)n);
            return MPI_SUCCESS;
        }
        if (write)
            cr_dt_copy(obuf, ocount, odt, at, tcount, tdt);
        else
            cr_dt_copy(at, tcount, tdt, obuf, ocount, odt);
        return MPI_SUCCESS;
    }
    uint64_t n = (uint64_t)tcount * tdt->size;
    void *packed = malloc(n ? n : 1);
    if (!packed)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %llu bytes of a %s", (unsigned long long)n,
                      write ? "put" : "get");
    if (write)
        cr_dt_pack(obuf, ocount, odt, 0, packed, n);
    if (!(err = target_io(w, target, at, tcount, tdt, 0, packed, n, write)) && !write)
        cr_dt_unpack(obuf, ocount, odt, 0, packed, n);
    free(packed);
    return err;
}

/* The common case, kept short (a put or get is a few tens of instructions here, issue 13):
 * contiguous data towards a process whose memory is mapped here, inside a lock or lock_all
 * epoch, on a window no process reaches by message (quick[target].on, rma.h). It makes the full
 * path's checks in fewer steps: held[target] means the epoch is open and no fence's is in use;
 * CR_DT_CONTIG means both data are one run from offset 0, so the target bytes are
 * [disp x unit, + n); counts, displacement and sizes below 2^31 keep every product below 2^62.
 * False sends anything else, errors included, down the full path. */
static CR_ALWAYS_INLINE bool quick_transfer(void *obuf, MPI_Count ocount, const cr_dtype *odt, int target, MPI_Aint disp,
                                  MPI_Count tcount, const cr_dtype *tdt, cr_win *w, bool write)
{
    if ((unsigned)target >= (unsigned)w->size)
        return false;
    const struct cr_win_quick *q = &w->quick[target];
    if (!q->on || !(odt->flags & tdt->flags & CR_DT_CONTIG) ||
        ((uint64_t)ocount | (uint64_t)tcount | (uint64_t)disp | (uint64_t)odt->size | (uint64_t)tdt->size) >> 31)
        return false;
    uint64_t n = (uint64_t)tcount * (uint64_t)tdt->size, off = (uint64_t)disp * q->unit;
    if (n == 0 || n != (uint64_t)ocount * (uint64_t)odt->size || off + n > q->bytes)
        return false;
    char *theirs = q->base + off, *mine = obuf;
    char *to = write ? theirs : mine;
    const char *from = write ? mine : theirs;
    if (!(to + n <= from || from + n <= to)) /* overlapping: memmove, down the full path */
        return false;
    cr_copy(to, from, (size_t)n); /* (up to 16 bytes inline: no call) */
    return true;
}

/* The quick entry points' part (override key `quick`, doc/design/bindings.md): the whole call
 * when it is the common case. The binding has resolved the handles and made no other check:
 * quick_transfer declines negative counts (they exceed 2^31 as unsigned) and an empty transfer,
 * and a NULL origin buffer is declined here, so each goes down the full entry point, which
 * raises the error. */
CR_ALWAYS_INLINE bool cr_mpi_put_quick(const void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype,
                                       int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                       cr_dtype *target_datatype, cr_win *win)
{
    return origin_addr && quick_transfer((void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                         target_count, target_datatype, win, true);
}

CR_ALWAYS_INLINE bool cr_mpi_get_quick(void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype,
                                       int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                       cr_dtype *target_datatype, cr_win *win)
{
    return origin_addr && quick_transfer(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                         target_count, target_datatype, win, false);
}

/* The full paths, out of line: what the entry points inline (cr_mpi_put, cr_mpi_get) is the
 * quick path and a call. */
static __attribute__((noinline)) int put(const void *obuf, MPI_Count ocount, cr_dtype *odt, int target,
                                         MPI_Aint disp, MPI_Count tcount, cr_dtype *tdt, cr_win *w)
{
    return transfer((void *)obuf, ocount, odt, target, disp, tcount, tdt, w, true);
}

static __attribute__((noinline)) int get(void *obuf, MPI_Count ocount, cr_dtype *odt, int target, MPI_Aint disp,
                                         MPI_Count tcount, cr_dtype *tdt, cr_win *w)
{
    return transfer(obuf, ocount, odt, target, disp, tcount, tdt, w, false);
}

/* Inlined into the generated entry points (link-time optimisation): a put of 8 bytes is then one
 * call from the program, 7.5 ns on the test VM (9.3 with a call more). */
CR_ALWAYS_INLINE int cr_mpi_put(const void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype,
                                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                cr_dtype *target_datatype, cr_win *win)
{
    if (quick_transfer((void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, true)) /* read only */
        return MPI_SUCCESS;
    return put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
               win);
}

CR_ALWAYS_INLINE int cr_mpi_get(void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype,
                                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                cr_dtype *target_datatype, cr_win *win)
{
    if (quick_transfer(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, false))
        return MPI_SUCCESS;
    return get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
               win);
}

/* ----------------------------------------------------------------- the accumulate family */

/* The accumulate family on one process's memory: two kinds of operation, never at once.
 * An operation on one element the CPU can change atomically (memory mapped here, 1, 2, 4 or 8
 * bytes, aligned) is a CPU atomic; any number run together, and none waits for a holder that
 * lost its core. Any other operation is exclusive: it sets CR_WIN_WRITER in the target's `acc`
 * word, waits until no atomic on that target is in flight, then reads, combines and writes.
 * An atomic announces itself in its own process's `atomic_on` word (its own cache line, so the
 * announcement costs no contended access), then checks for a writer; the writer sets its bit,
 * then checks the announcements. Both sides are sequentially consistent, so at least one sees
 * the other (Dekker): the atomic backs off, or the writer waits. Every element is thus changed
 * atomically whichever way each operation went. (Wait predicates must not change anything:
 * they may be tested many times.) */
static bool acc_no_writer(void *arg)
{
    return !(atomic_load_explicit((_Atomic uint32_t *)arg, memory_order_relaxed) & CR_WIN_WRITER);
}

static void acc_enter_atomic(cr_win *w, int target)
{
    _Atomic uint32_t *mine = &w->ctl[w->rank].atomic_on, *word = &w->ctl[target].acc;
    for (;;) {
        atomic_store_explicit(mine, (uint32_t)target + 1, memory_order_seq_cst);
        if (!(atomic_load_explicit(word, memory_order_seq_cst) & CR_WIN_WRITER))
            return;
        atomic_store_explicit(mine, 0, memory_order_seq_cst);
        cr_xport_wake_node(); /* the writer may sleep until the atomics are gone */
        cr_win_wait(acc_no_writer, word);
    }
}

static void acc_leave_atomic(cr_win *w, int target)
{
    atomic_store_explicit(&w->ctl[w->rank].atomic_on, 0, memory_order_seq_cst);
    if (atomic_load_explicit(&w->ctl[target].acc, memory_order_seq_cst) & CR_WIN_WRITER)
        cr_xport_wake_node();
}

typedef struct {
    cr_win *w;
    int target;
} acc_target;

static bool atomics_drained(void *arg)
{
    const acc_target *t = arg;
    for (int o = 0; o < t->w->size; o++)
        if (atomic_load_explicit(&t->w->ctl[o].atomic_on, memory_order_seq_cst) == (uint32_t)t->target + 1)
            return false;
    return true;
}

static void acc_enter_exclusive(cr_win *w, int target)
{
    _Atomic uint32_t *word = &w->ctl[target].acc;
    for (;;) {
        uint32_t free_word = 0;
        if (atomic_compare_exchange_weak_explicit(word, &free_word, CR_WIN_WRITER, memory_order_seq_cst,
                                                  memory_order_relaxed))
            break;
        if (free_word & CR_WIN_WRITER)
            cr_win_wait(acc_no_writer, word);
    }
    acc_target t = {w, target};
    if (!atomics_drained(&t))
        cr_win_wait(atomics_drained, &t);
    atomic_thread_fence(memory_order_acquire); /* after the atomics' changes */
}

static void acc_leave_exclusive(cr_win *w, int target)
{
    atomic_store_explicit(&w->ctl[target].acc, 0, memory_order_release);
    cr_xport_wake_node(); /* a waiter may sleep */
}

/* One try at the exclusive word, for a target's progress applying what came by message: it
 * never waits, since the word may be held further up this process's own stack (an exclusive
 * accumulate waiting for atomics to drain, making progress), or by a process that waits the same
 * way for a word of ours. The caller tries again in a later round. */
static bool acc_try_exclusive(cr_win *w, int target)
{
    uint32_t free_word = 0;
    if (!atomic_compare_exchange_strong_explicit(&w->ctl[target].acc, &free_word, CR_WIN_WRITER, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return false;
    acc_target t = {w, target};
    if (!atomics_drained(&t)) {
        acc_leave_exclusive(w, target);
        return false;
    }
    atomic_thread_fence(memory_order_acquire); /* after the atomics' changes */
    return true;
}

/* The element at `p` if the CPU can change it atomically (see above), else NULL. */
static void *atomic_element(cr_win *w, int target, char *at, MPI_Count tcount, const cr_dtype *tdt)
{
    const cr_dtype *leaf = tdt->leaf;
    uint64_t n = (uint64_t)tcount * tdt->size;
    char *p = at + tdt->true_lb;
    if (!w->direct[target] || !leaf || n != (uint64_t)leaf->size || leaf->extent != (MPI_Aint)leaf->size ||
        !cr_dtype_is_contig_n(tdt, tcount))
        return NULL;
    return (n == 1 || n == 2 || n == 4 || n == 8) && (uintptr_t)p % n == 0 ? p : NULL;
}

/* *old = *p, then *p = origin op *old, as one atomic change of the element. kind: 'n'
 * MPI_NO_OP (a load), 'r' MPI_REPLACE (an exchange), '+' '&' '|' '^' integer sums and bitwise
 * operations (one instruction each), 'u' any other (a compare-and-swap loop around the
 * operation's own code, so every predefined operation on every type of these sizes is atomic,
 * floating point included). Integers are added as unsigned: the same bits as two's complement. */
#define CR_ATOMIC_UPDATE(T)                                                                                         \
    do {                                                                                                            \
        T *q = p, o, v, x;                                                                                          \
        memcpy(&x, origin, sizeof x);                                                                               \
        switch (kind) {                                                                                             \
        case 'n': o = __atomic_load_n(q, __ATOMIC_ACQUIRE); break;                                                  \
        case 'r': o = __atomic_exchange_n(q, x, __ATOMIC_ACQ_REL); break;                                           \
        case '+': o = __atomic_fetch_add(q, x, __ATOMIC_ACQ_REL); break;                                            \
        case '&': o = __atomic_fetch_and(q, x, __ATOMIC_ACQ_REL); break;                                            \
        case '|': o = __atomic_fetch_or(q, x, __ATOMIC_ACQ_REL); break;                                             \
        case '^': o = __atomic_fetch_xor(q, x, __ATOMIC_ACQ_REL); break;                                            \
        default:                                                                                                    \
            o = __atomic_load_n(q, __ATOMIC_ACQUIRE);                                                               \
            do {                                                                                                    \
                v = o;                                                                                              \
                cr_op_apply(op, origin, &v, 1, leaf);                                                               \
            } while (!__atomic_compare_exchange_n(q, &o, v, true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));             \
        }                                                                                                           \
        memcpy(old, &o, sizeof o);                                                                                  \
    } while (0)

static void atomic_update(void *p, const void *origin, void *old, cr_op *op, cr_dtype *leaf, char kind)
{
    switch (leaf->size) {
    case 1: CR_ATOMIC_UPDATE(uint8_t); break;
    case 2: CR_ATOMIC_UPDATE(uint16_t); break;
    case 4: CR_ATOMIC_UPDATE(uint32_t); break;
    default: CR_ATOMIC_UPDATE(uint64_t); break;
    }
}

/* The one-instruction atomic for `op` on `leaf`, or 'u' (see CR_ATOMIC_UPDATE). */
static char atomic_kind(const cr_op *op, const cr_dtype *leaf)
{
    unsigned cat = leaf->category;
    bool integer = cat == CR_CAT_C_INT || cat == CR_CAT_F_INT || cat == CR_CAT_MULTI || cat == CR_CAT_CHAR;
    if (op == cr_op_get(MPI_SUM) && integer)
        return '+';
    if (op == cr_op_get(MPI_BAND))
        return '&';
    if (op == cr_op_get(MPI_BOR))
        return '|';
    if (op == cr_op_get(MPI_BXOR))
        return '^';
    return 'u';
}

/* inout = in op inout over n packed bytes of `leaf` elements (through arrays laid out with the
 * leaf's extent when its elements have padding, as the pair types do). */
static int combine(cr_op *op, const void *in, void *inout, uint64_t n, cr_dtype *leaf)
{
    MPI_Count count = (MPI_Count)(n / (uint64_t)leaf->size);
    if ((MPI_Count)leaf->extent == leaf->size) {
        cr_op_apply(op, in, inout, count, leaf);
        return MPI_SUCCESS;
    }
    size_t bytes = (size_t)count * (size_t)leaf->extent;
    char *a = malloc(bytes ? bytes : 1), *b = malloc(bytes ? bytes : 1);
    if (!a || !b) {
        free(a);
        free(b);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for an accumulate of %lld elements", (long long)count);
    }
    cr_dt_unpack(a, count, leaf, 0, in, n);
    cr_dt_unpack(b, count, leaf, 0, inout, n);
    cr_op_apply(op, a, b, count, leaf);
    cr_dt_pack(b, count, leaf, 0, inout, n);
    free(a);
    free(b);
    return MPI_SUCCESS;
}

/* Accumulates move through buffers of at most this many bytes, whatever their size. */
enum { ACC_PIECE = 64 << 10 };

/* The exclusive path, piece by piece: the result gets the target data as it was, then the
 * target gets origin op target. Contiguous target data in mapped memory is combined in place. */
static int accumulate_pieces(const void *obuf, MPI_Count ocount, cr_dtype *odt, void *rbuf, MPI_Count rcount,
                             cr_dtype *rdt, int target, char *at, MPI_Count tcount, cr_dtype *tdt, cr_op *op,
                             char kind, cr_win *w)
{
    cr_dtype *leaf = (cr_dtype *)tdt->leaf;
    uint64_t n = (uint64_t)tcount * tdt->size;
    uint64_t piece = (uint64_t)(ACC_PIECE / leaf->size) * (uint64_t)leaf->size;
    if (piece == 0)
        piece = (uint64_t)leaf->size;
    /* Target data in place (mapped, one run) and origin data read where it is (one run), when
     * aligned as the operation's code loads its elements; else through buffers of a piece. */
    size_t lsize = (size_t)leaf->size;
    bool natural = lsize <= 16 && (lsize & (lsize - 1)) == 0;
    bool in_place = natural && w->direct[target] && cr_dtype_is_contig_n(tdt, tcount) &&
                    (uintptr_t)(at + tdt->true_lb) % lsize == 0;
    const char *origin_run = kind != 'n' && natural && cr_dtype_is_contig_n(odt, ocount) &&
                                     (uintptr_t)((const char *)obuf + odt->true_lb) % lsize == 0
                                 ? (const char *)obuf + odt->true_lb
                                 : NULL;
    size_t bytes = (size_t)(n < piece ? n : piece);
    bool need_mine = kind != 'n' && !origin_run;
    char *theirs = in_place ? NULL : malloc(bytes ? bytes : 1), *mine = need_mine ? malloc(bytes ? bytes : 1) : NULL;
    if ((!in_place && !theirs) || (need_mine && !mine)) {
        free(theirs);
        free(mine);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %zu bytes of an accumulate", bytes);
    }
    int err = MPI_SUCCESS;
    acc_enter_exclusive(w, target);
    for (uint64_t off = 0; off < n && !err; off += piece) {
        uint64_t len = n - off < piece ? n - off : piece;
        char *t = in_place ? at + tdt->true_lb + off : theirs;
        const char *m = origin_run ? origin_run + off : mine;
        if (mine)
            cr_dt_pack(obuf, ocount, odt, off, mine, len);
        if (!in_place && (rdt || kind == 'u'))
            err = target_io(w, target, at, tcount, tdt, off, theirs, len, false);
        if (!err && rdt)
            cr_dt_unpack(rbuf, rcount, rdt, off, t, len);
        if (!err && kind == 'r') {
            if (in_place)
                memmove(t, m, len);
            else
                err = target_io(w, target, at, tcount, tdt, off, (void *)m, len, true); /* read only */
        } else if (!err && kind == 'u' && !(err = combine(op, m, t, len, leaf)) && !in_place) {
            err = target_io(w, target, at, tcount, tdt, off, theirs, len, true);
        }
    }
    acc_leave_exclusive(w, target);
    free(theirs);
    free(mine);
    return err;
}

/* Accumulate and get_accumulate (rdt != NULL: fetch; rbuf may be MPI_BOTTOM): the result gets
 * the target data as it was, then the target gets origin op target (origin, for MPI_REPLACE;
 * nothing, for MPI_NO_OP). */
static int accumulate(const void *obuf, MPI_Count ocount, cr_dtype *odt, void *rbuf, MPI_Count rcount, cr_dtype *rdt,
                      int target, MPI_Aint disp, MPI_Count tcount, cr_dtype *tdt, cr_op *op, cr_win *w)
{
    bool fetch = rdt != NULL;
    int err;
    char *at;
    if (!op_valid(w, target, &err))
        return err;
    if (op->index < 0)
        return cr_err(MPI_ERR_OP, "user-defined operations are not allowed in one-sided accumulates (MPI-4.1 12.3.4): "
                                  "use a predefined operation, MPI_REPLACE or MPI_NO_OP");
    /* 'n': MPI_NO_OP (a read), 'r': MPI_REPLACE (a write), 'u': an update by the operation */
    char kind = op == cr_op_get(MPI_NO_OP) ? 'n' : op == cr_op_get(MPI_REPLACE) ? 'r' : 'u';
    cr_dtype *leaf = (cr_dtype *)tdt->leaf; /* predefined: never changed */
    if (!leaf)
        return cr_err(MPI_ERR_TYPE, "target_datatype mixes several predefined types: accumulates need a type made of "
                                    "one predefined type");
    if ((err = check_count(tcount, "target_count")) || (err = locate(w, target, disp, tcount, tdt, &at)))
        return err;
    if (kind != 'n' &&
        ((err = check_count(ocount, "origin_count")) || (err = same_size(ocount, odt, tcount, tdt, "origin"))))
        return err;
    if (fetch && ((err = check_count(rcount, "result_count")) || (err = same_size(rcount, rdt, tcount, tdt, "result"))))
        return err;
    if (kind == 'u' && (err = cr_op_check(op, leaf)))
        return err;
    if (w->am[target])
        return cr_win_am_accumulate(w, target, at, kind == 'n' ? NULL : obuf, ocount, kind == 'n' ? NULL : odt, rbuf,
                                    rcount, rdt, tcount, tdt, op, NULL);
    void *p = atomic_element(w, target, at, tcount, tdt);
    if (!p)
        return accumulate_pieces(obuf, ocount, odt, rbuf, rcount, rdt, target, at, tcount, tdt, op, kind, w);
    _Alignas(8) unsigned char mine[8] = {0}, old[8];
    if (kind != 'n')
        cr_dt_pack(obuf, ocount, odt, 0, mine, (uint64_t)leaf->size);
    acc_enter_atomic(w, target);
    atomic_update(p, mine, old, op, leaf, kind == 'u' ? atomic_kind(op, leaf) : kind);
    acc_leave_atomic(w, target);
    if (fetch)
        cr_dt_unpack(rbuf, rcount, rdt, 0, old, (uint64_t)leaf->size);
    return MPI_SUCCESS;
}

int cr_mpi_accumulate(const void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_op *op, cr_win *win)
{
    return accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank, target_disp,
                      target_count, target_datatype, op, win);
}

/* Get_accumulate's origin arguments: not significant with MPI_NO_OP, checked otherwise. */
static int origin_of(const void *obuf, MPI_Count ocount, MPI_Datatype otype, const cr_op *op, cr_dtype **odt)
{
    *odt = NULL;
    if (op == cr_op_get(MPI_NO_OP))
        return MPI_SUCCESS;
    int err = cr_dtype_check(otype, "origin_datatype", true, odt);
    if (!err && !obuf && ocount > 0 && cr_dtype_starts_at_buffer(*odt))
        err = cr_err(MPI_ERR_BUFFER, "origin_addr is NULL but origin_count=%lld", (long long)ocount);
    return err;
}

int cr_mpi_get_accumulate(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void *result_addr, MPI_Count result_count, cr_dtype *result_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_op *op,
                          cr_win *win)
{
    cr_dtype *odt;
    int err = origin_of(origin_addr, origin_count, origin_datatype, op, &odt);
    return err ? err
               : accumulate(origin_addr, origin_count, odt, result_addr, result_count, result_datatype, target_rank,
                            target_disp, target_count, target_datatype, op, win);
}

int cr_mpi_fetch_and_op(const void *origin_addr, void *result_addr, cr_dtype *datatype, int target_rank,
                        MPI_Aint target_disp, cr_op *op, cr_win *win)
{
    /* The common case without the general path's packing: an aligned element of mapped memory
     * in an open epoch. Anything else (and every error) takes the general path. */
    size_t n = (size_t)datatype->size;
    char *p;
    if ((unsigned)target_rank < (unsigned)win->size && win->direct[target_rank] &&
        (datatype->flags & CR_DT_PREDEFINED) && (n == 1 || n == 2 || n == 4 || n == 8) &&
        datatype->extent == (MPI_Aint)n && op->index >= 0 && cr_win_epoch_open(win, target_rank)) {
        cr_win_epoch_use(win, target_rank);
        cr_win_am_serve(win);
        int err = cr_win_target(win, target_rank, target_disp, 0, (MPI_Aint)n, &p);
        char kind = op == cr_op_get(MPI_NO_OP) ? 'n' : op == cr_op_get(MPI_REPLACE) ? 'r' : 'u';
        if (!err && kind == 'u')
            err = cr_op_check(op, datatype);
        if (err)
            return err;
        if ((uintptr_t)p % n != 0) /* unaligned: exclusive */
            return accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                              datatype, op, win);
        _Alignas(8) unsigned char mine[8] = {0}, old[8];
        if (kind != 'n')
            memcpy(mine, origin_addr, n);
        acc_enter_atomic(win, target_rank);
        atomic_update(p, mine, old, op, datatype, kind == 'u' ? atomic_kind(op, datatype) : kind);
        acc_leave_atomic(win, target_rank);
        memcpy(result_addr, old, n);
        return MPI_SUCCESS;
    }
    return accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op,
                      win);
}

/* *result = *p; *p = origin if *p == compare; as one atomic change (the caller's buffers may be
 * unaligned: copied through locals). */
#define CR_ATOMIC_CAS(T)                                                                                            \
    do {                                                                                                            \
        T expect, desired;                                                                                          \
        memcpy(&expect, compare_addr, sizeof expect);                                                               \
        memcpy(&desired, origin_addr, sizeof desired);                                                              \
        __atomic_compare_exchange_n((T *)p, &expect, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);            \
        memcpy(result_addr, &expect, sizeof expect);                                                                \
    } while (0)

int cr_mpi_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, cr_dtype *datatype,
                            int target_rank, MPI_Aint target_disp, cr_win *win)
{
    int err;
    char *at;
    if (!op_valid(win, target_rank, &err))
        return err;
    unsigned cat = datatype->category;
    bool allowed = cat == CR_CAT_C_INT || cat == CR_CAT_F_INT || cat == CR_CAT_LOGICAL || cat == CR_CAT_BYTE ||
                   cat == CR_CAT_MULTI || cat == CR_CAT_CHAR || cat == CR_CAT_LOGICAL_SIZED;
    if (!(datatype->flags & CR_DT_PREDEFINED) || !allowed)
        return cr_err(MPI_ERR_TYPE, "MPI_Compare_and_swap takes a predefined integer, logical, multi-language or byte "
                                    "datatype, not %s", datatype->name ? datatype->name : "a derived one");
    if (!origin_addr || !compare_addr || !result_addr)
        return cr_err(MPI_ERR_BUFFER, "%s is NULL", !origin_addr ? "origin_addr" : !compare_addr ? "compare_addr"
                                                                                    : "result_addr");
    if ((err = locate(win, target_rank, target_disp, 1, datatype, &at)))
        return err;
    size_t n = (size_t)datatype->size;
    char theirs[64];
    if (n > sizeof theirs)
        return cr_err(MPI_ERR_TYPE, "datatype of %zu bytes is too large for MPI_Compare_and_swap", n);
    if (win->am[target_rank])
        return cr_win_am_accumulate(win, target_rank, at, origin_addr, 1, datatype, result_addr, 1, datatype, 1,
                                    datatype, NULL, compare_addr);
    void *p = atomic_element(win, target_rank, at, 1, datatype);
    if (p) {
        acc_enter_atomic(win, target_rank);
        switch (n) {
        case 1: CR_ATOMIC_CAS(uint8_t); break;
        case 2: CR_ATOMIC_CAS(uint16_t); break;
        case 4: CR_ATOMIC_CAS(uint32_t); break;
        default: CR_ATOMIC_CAS(uint64_t); break;
        }
        acc_leave_atomic(win, target_rank);
        return MPI_SUCCESS;
    }
    acc_enter_exclusive(win, target_rank);
    err = target_io(win, target_rank, at, 1, datatype, 0, theirs, n, false);
    if (!err) {
        bool equal = memcmp(theirs, compare_addr, n) == 0;
        memcpy(result_addr, theirs, n);
        if (equal)
            err = target_io(win, target_rank, at, 1, datatype, 0, (void *)origin_addr, n, true);
    }
    acc_leave_exclusive(win, target_rank);
    return err;
}

int cr_win_apply_accumulate(cr_win *w, const cr_win_run *runs, uint64_t nruns, uint64_t n, const void *in,
                            void *old, cr_op *op, cr_dtype *leaf, const void *compare)
{
    /* 'n' MPI_NO_OP, 'r' MPI_REPLACE (and compare-and-swap), 'u' an update by the operation */
    char kind = !in ? 'n' : compare || op == cr_op_get(MPI_REPLACE) ? 'r' : 'u';
    if (!acc_try_exclusive(w, w->rank))
        return CR_WIN_BUSY;
    size_t lsize = (size_t)leaf->size;
    if (kind == 'u' && !old && nruns == 1 && leaf->extent == (MPI_Aint)lsize && lsize <= 16 && !(lsize & (lsize - 1)) &&
        (uintptr_t)cr_win_run_at(w, runs[0].off) % lsize == 0) {
        /* one run of aligned elements and nothing to fetch: combined in place */
        int err = combine(op, in, cr_win_run_at(w, runs[0].off), n, leaf);
        acc_leave_exclusive(w, w->rank);
        return err;
    }
    char *was = old ? old : kind == 'u' || compare ? malloc(n) : NULL;
    char *now = kind == 'u' ? malloc(n) : NULL;
    if ((!old && (kind == 'u' || compare) && !was) || (kind == 'u' && !now)) {
        acc_leave_exclusive(w, w->rank);
        if (!old)
            free(was);
        free(now);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %llu bytes of an accumulate", (unsigned long long)n);
    }
    int err = MPI_SUCCESS;
    char *p = was;
    for (uint64_t i = 0; was && i < nruns; p += runs[i].len, i++)
        memcpy(p, cr_win_run_at(w, runs[i].off), runs[i].len);
    const char *put = kind == 'r' && (!compare || !memcmp(was, compare, n)) ? in : NULL;
    if (kind == 'u') {
        memcpy(now, was, n);
        err = combine(op, in, now, n, leaf);
        put = err ? NULL : now;
    }
    for (uint64_t i = 0; put && i < nruns; put += runs[i].len, i++)
        memcpy(cr_win_run_at(w, runs[i].off), put, runs[i].len);
    acc_leave_exclusive(w, w->rank);
    if (!old)
        free(was);
    free(now);
    return err;
}

/* ----------------------------------------------------------------- request forms */

static const cr_request_ops done_ops = {NULL, NULL, NULL};

/* The operation has completed already: its request is complete from the start. */
static int completed(int err, cr_win *w, int target, MPI_Request *request)
{
    /* a target reached by message answers later: its answer is in before the request says so */
    if (!err && target >= 0 && target < w->size && w->am[target])
        err = cr_win_am_answers(w, target);
    if (err)
        return err;
    cr_request *r = cr_request_new(CR_REQ_OTHER, &done_ops);
    if (!r)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a request");
    cr_status_empty(&r->status);
    cr_request_complete(r);
    *request = cr_request_handle(r);
    return MPI_SUCCESS;
}

int cr_mpi_rput(const void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_win *win,
                MPI_Request *request)
{
    return completed(put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype, win),
                     win, target_rank, request);
}

int cr_mpi_rget(void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_win *win,
                MPI_Request *request)
{
    return completed(get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype, win),
                     win, target_rank, request);
}

int cr_mpi_raccumulate(const void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_op *op, cr_win *win,
                       MPI_Request *request)
{
    return completed(accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank, target_disp,
                                target_count, target_datatype, op, win),
                     win, target_rank, request);
}

int cr_mpi_rget_accumulate(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void *result_addr, MPI_Count result_count, cr_dtype *result_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_op *op,
                           cr_win *win, MPI_Request *request)
{
    return completed(cr_mpi_get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                           result_datatype, target_rank, target_disp, target_count, target_datatype,
                                           op, win),
                     win, target_rank, request);
}
