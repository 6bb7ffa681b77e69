/* ops.c: the one-sided operations: put, get, the accumulate family (accumulate,
 * get_accumulate, fetch_and_op, compare_and_swap) and their request forms. Each completes
 * before it returns (rma.h): a copy into or out of the target's window memory, in this
 * process's address space when the window's memory is shared, else by single copy. */
#include "rma.h"

#include "coll/op.h"
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
    return !(*err = cr_win_check_epoch(w, target));
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

/* Moves n packed bytes between `packed` and the target memory (tcount, tdt) at `at`. */
static int target_io(cr_win *w, int target, char *at, MPI_Count tcount, cr_dtype *tdt, void *packed, uint64_t n,
                     bool write)
{
    if (w->direct[target]) {
        if (write)
            cr_dt_unpack(at, tcount, tdt, 0, packed, n);
        else
            cr_dt_pack(at, tcount, tdt, 0, packed, n);
        return MPI_SUCCESS;
    }
    int world = cr_comm_world_rank(w->comm, target);
    struct iovec remote[64];
    for (uint64_t off = 0; off < n;) {
        int k;
        uint64_t got = cr_dt_iov(at, tcount, tdt, off, n - off, remote, 64, &k);
        struct iovec local = {(char *)packed + off, got};
        if ((write ? cr_xport_write(world, &local, 1, remote, k) : cr_xport_read(world, &local, 1, remote, k)) != 0)
            return cr_err(MPI_ERR_RMA_SHARED, "cannot reach the window memory of process %d: windows on memory the "
                                              "user allocated need cross-memory attach, which is switched off "
                                              "(COURIER_SHM_CMA) or not permitted here (ptrace policy); memory from "
                                              "MPI_Win_allocate or MPI_Win_allocate_shared needs none", target);
        off += got;
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
    if (w->direct[target]) {
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
    if (!(err = target_io(w, target, at, tcount, tdt, packed, n, write)) && !write)
        cr_dt_unpack(obuf, ocount, odt, 0, packed, n);
    free(packed);
    return err;
}

static int put(const void *obuf, MPI_Count ocount, cr_dtype *odt, int target, MPI_Aint disp, MPI_Count tcount,
               cr_dtype *tdt, cr_win *w)
{
    return transfer((void *)obuf, ocount, odt, target, disp, tcount, tdt, w, true); /* read only */
}

static int get(void *obuf, MPI_Count ocount, cr_dtype *odt, int target, MPI_Aint disp, MPI_Count tcount,
               cr_dtype *tdt, cr_win *w)
{
    return transfer(obuf, ocount, odt, target, disp, tcount, tdt, w, false);
}

int cr_mpi_put(const void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_win *win)
{
    return put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
               win);
}

int cr_mpi_get(void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_win *win)
{
    return get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
               win);
}

/* ----------------------------------------------------------------- the accumulate family */

/* Accumulates on one process are atomic with respect to each other: they hold its `acc` word.
 * (A wait's predicate must not change anything, since it may be tested many times: it only
 * says the word looks free, and the taking is tried again after it.) */
static bool acc_free(void *arg)
{
    return atomic_load_explicit((_Atomic uint32_t *)arg, memory_order_relaxed) == 0;
}

static void acc_lock(cr_win *w, int target)
{
    _Atomic uint32_t *word = &w->ctl[target].acc;
    for (;;) {
        uint32_t zero = 0;
        if (atomic_compare_exchange_weak_explicit(word, &zero, 1, memory_order_acquire, memory_order_relaxed))
            return;
        cr_win_wait(acc_free, word);
    }
}

static void acc_unlock(cr_win *w, int target)
{
    atomic_store_explicit(&w->ctl[target].acc, 0, memory_order_release);
    cr_xport_wake_node(); /* a waiter may sleep */
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
    bool no_op = op == cr_op_get(MPI_NO_OP), replace = op == cr_op_get(MPI_REPLACE);
    cr_dtype *leaf = (cr_dtype *)tdt->leaf; /* predefined: never changed */
    if (!leaf)
        return cr_err(MPI_ERR_TYPE, "target_datatype mixes several predefined types: accumulates need a type made of "
                                    "one predefined type");
    if ((err = check_count(tcount, "target_count")) || (err = locate(w, target, disp, tcount, tdt, &at)))
        return err;
    if (!no_op && ((err = check_count(ocount, "origin_count")) || (err = same_size(ocount, odt, tcount, tdt, "origin"))))
        return err;
    if (fetch && ((err = check_count(rcount, "result_count")) || (err = same_size(rcount, rdt, tcount, tdt, "result"))))
        return err;
    if (!no_op && !replace && (err = cr_op_check(op, leaf)))
        return err;
    uint64_t n = (uint64_t)tcount * tdt->size;
    char *theirs = malloc(n ? n : 1), *mine = no_op ? NULL : malloc(n ? n : 1);
    if (!theirs || (!no_op && !mine)) {
        free(theirs);
        free(mine);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %llu bytes of an accumulate", (unsigned long long)n);
    }
    if (mine)
        cr_dt_pack(obuf, ocount, odt, 0, mine, n);
    acc_lock(w, target);
    if (fetch || (!no_op && !replace))
        err = target_io(w, target, at, tcount, tdt, theirs, n, false);
    if (!err && fetch)
        cr_dt_unpack(rbuf, rcount, rdt, 0, theirs, n);
    if (!err && replace)
        err = target_io(w, target, at, tcount, tdt, mine, n, true);
    else if (!err && !no_op && !(err = combine(op, mine, theirs, n, leaf)))
        err = target_io(w, target, at, tcount, tdt, theirs, n, true);
    acc_unlock(w, target);
    free(theirs);
    free(mine);
    return err;
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
    return accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op,
                      win);
}

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
    acc_lock(win, target_rank);
    err = target_io(win, target_rank, at, 1, datatype, theirs, n, false);
    if (!err) {
        bool equal = memcmp(theirs, compare_addr, n) == 0;
        memcpy(result_addr, theirs, n);
        if (equal)
            err = target_io(win, target_rank, at, 1, datatype, (void *)origin_addr, n, true);
    }
    acc_unlock(win, target_rank);
    return err;
}

/* ----------------------------------------------------------------- request forms */

static const cr_request_ops done_ops = {NULL, NULL, NULL};

/* The operation has completed already: its request is complete from the start. */
static int completed(int err, MPI_Request *request)
{
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
                     request);
}

int cr_mpi_rget(void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_win *win,
                MPI_Request *request)
{
    return completed(get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype, win),
                     request);
}

int cr_mpi_raccumulate(const void *origin_addr, MPI_Count origin_count, cr_dtype *origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_op *op, cr_win *win,
                       MPI_Request *request)
{
    return completed(accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank, target_disp,
                                target_count, target_datatype, op, win),
                     request);
}

int cr_mpi_rget_accumulate(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void *result_addr, MPI_Count result_count, cr_dtype *result_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count, cr_dtype *target_datatype, cr_op *op,
                           cr_win *win, MPI_Request *request)
{
    return completed(cr_mpi_get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                           result_datatype, target_rank, target_disp, target_count, target_datatype,
                                           op, win),
                     request);
}
