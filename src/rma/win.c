/* win.c: windows: their creation in every flavour (create, allocate, allocate_shared, dynamic),
 * the node segment that holds their control block and allocated memory, free, shared query,
 * attributes, info, group, name and error handler. See rma.h. */
#include "rma.h"

#include "coll/coll.h"
#include "core/info.h"
#include "core/runtime.h"
#include "cr_impl.h"
#include "runtime/comm_create.h"
#include "xport/shm/segment.h"
#include "xport/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

static void win_setup(void)
{
    static bool done;
    if (!done) {
        cr_pool_setup(CR_KIND_WIN, sizeof(cr_win));
        done = true;
    }
}

static bool info_true(const cr_info *info, const char *key)
{
    const char *v = info ? cr_info_find(info, key) : NULL;
    return v && !strcmp(v, "true");
}

static void hints_read(cr_win_hints *h, const cr_info *info)
{
    const char *v;
    h->no_locks = info_true(info, "no_locks");
    h->same_size = info_true(info, "same_size");
    h->same_disp_unit = info_true(info, "same_disp_unit");
    h->alloc_shared_noncontig = info_true(info, "alloc_shared_noncontig");
    v = info ? cr_info_find(info, "accumulate_ordering") : NULL;
    snprintf(h->accumulate_ordering, sizeof h->accumulate_ordering, "%s", v ? v : "rar,raw,war,waw");
    v = info ? cr_info_find(info, "accumulate_ops") : NULL;
    snprintf(h->accumulate_ops, sizeof h->accumulate_ops, "%s", v ? v : "same_op_no_op");
}

static void win_release(cr_win *w)
{
    if (w->seg)
        munmap(w->seg, w->seg_bytes);
    if (w->comm)
        cr_comm_release(w->comm);
    free(w->base_of);
    free(w->bytes_of);
    free(w->unit_of);
    free(w->direct);
    free(w->am);
    free(w->am_waiting);
    free((void *)w->am_sent);
    free((void *)w->am_flushed);
    free(w->held);
    free(w->quick);
    free(w->start_group);
    free(w->post_group);
    free(w->posts_seen);
    free(w->completes_seen);
    if (w->eo.errh && cr_obj_unref(w->eo.errh))
        cr_obj_free(w->eo.errh);
    cr_obj_free(w);
}

/* The first process of the window on this process's node: it makes the node's segment. */
static int node_leader(const cr_win *w)
{
    int r = 0;
    while (cr_rt.node_of[cr_comm_world_rank(w->comm, r)] != cr_rt.node_of[cr_rt.rank])
        r++;
    return r;
}

/* Maps the node segment of `bytes` bytes: created by the node's first process, attached by the
 * others of the node. `*reached`, true when this process reaches some other by message, becomes
 * true when any process does (then every one serves messages). */
static int segment_map(cr_win *w, size_t bytes, bool *reached, bool failed_here)
{
    long pid_fd[2] = {0, -1};
    int fd = -1, leader = node_leader(w);
    w->seg_bytes = bytes;
    int failed = failed_here, err;
    if (w->rank == leader) {
        if (cr_seg_create("courier-win", bytes, &fd, &w->seg) == 0) {
            /* before anyone else maps it: the fence's count of completed fences starts where
             * the debug tunable says (near its wrap, in tests) */
            atomic_store(&((cr_win_fence *)w->seg)->generation, cr_xport_seq_start());
            pid_fd[0] = getpid();
            pid_fd[1] = fd;
        }
    }
    if (w->spans_nodes) { /* each node's leader: everyone takes the one of its node */
        long *all = calloc((size_t)w->size * 2, sizeof *all);
        if (!all)
            err = cr_err(MPI_ERR_NO_MEM, "out of memory for a window of %d processes", w->size);
        else {
            all[2 * w->rank] = pid_fd[0];
            all[2 * w->rank + 1] = pid_fd[1];
            err = cr_coll_allgather_auto(all, 2, cr_dtype_get(MPI_LONG), w->comm);
            pid_fd[0] = all[2 * leader];
            pid_fd[1] = all[2 * leader + 1];
            free(all);
        }
    } else {
        cr_sched s;
        cr_sched_init(&s, w->comm);
        cr_coll_bcast_binomial(&s, pid_fd, 2, cr_dtype_get(MPI_LONG), leader);
        err = cr_sched_run(&s);
    }
    if (err) {
        if (fd >= 0)
            close(fd);
        return err;
    }
    if (pid_fd[1] < 0)
        failed = 1;
    else if (w->rank != leader && cr_seg_attach((int)pid_fd[0], (int)pid_fd[1], bytes, &w->seg) != 0)
        failed = 1;
    /* everyone has mapped it (or failed) before the leaders let their files go */
    int flags = failed | (*reached ? 2 : 0);
    err = cr_coll_allreduce_auto(&flags, 1, cr_dtype_get(MPI_INT), cr_op_get(MPI_BOR), w->comm);
    if (fd >= 0)
        close(fd);
    *reached = flags & 2;
    if (!err && (flags & 1))
        err = cr_err(MPI_ERR_NO_MEM, "cannot share %zu bytes of memory among the window's processes", bytes);
    return err;
}

/* A byte each process shows its peers: reading it tells whether cross-memory attach works. */
static const volatile char reach_probe = 1;

/* Whether this process can reach user memory of `peer` (same node) by single copy. */
static bool single_copy_reaches(int world_peer, MPI_Aint probe)
{
    char got = 0;
    struct iovec local = {&got, 1}, remote = {(void *)(uintptr_t)probe, 1};
    return cr_xport_read(world_peer, &local, 1, &remote, 1) == 0 && got == 1;
}

/* The parts of every window: a communicator of its own, the processes' sizes, units and
 * addresses, the control block. `alloc`: Courier allocates the memory, in the segment. */
static int win_new(cr_comm *comm, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, cr_info *info,
                   cr_win **out)
{
    if (comm->inter)
        return cr_err(MPI_ERR_COMM, "comm is an intercommunicator: windows are made over intracommunicators");
    bool spans = false;
    for (int r = 0; r < comm->size; r++)
        spans |= cr_rt.node_of[cr_comm_world_rank(comm, r)] != cr_rt.node_of[cr_rt.rank];
    if (size < 0)
        return cr_err(MPI_ERR_SIZE, "invalid size=%lld: must not be negative", (long long)size);
    if (disp_unit <= 0 || disp_unit > INT32_MAX)
        return cr_err(MPI_ERR_DISP, "invalid disp_unit=%lld: must be positive", (long long)disp_unit);
    if (spans && flavor == MPI_WIN_FLAVOR_SHARED)
        return cr_err(MPI_ERR_COMM, "comm has processes on several nodes: MPI_Win_allocate_shared needs processes "
                                    "that can share memory (split it with MPI_Comm_split_type and "
                                    "MPI_COMM_TYPE_SHARED)");
    win_setup();
    cr_win *w = cr_obj_alloc(CR_KIND_WIN);
    if (!w)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a window");
    w->eo.errh = &cr_errh_fatal; /* the standard's default for windows */
    cr_obj_ref(w->eo.errh);
    w->flavor = flavor;
    w->spans_nodes = spans;
    hints_read(&w->hints, info);
    MPI_Comm h;
    int err = cr_comm_dup_bare(comm, &h, &w->comm);
    if (err) {
        w->comm = NULL;
        win_release(w);
        return err;
    }
    int p = comm->size;
    w->rank = comm->rank;
    w->size = p;
    w->base_of = calloc((size_t)p, sizeof *w->base_of);
    w->bytes_of = calloc((size_t)p, sizeof *w->bytes_of);
    w->unit_of = calloc((size_t)p, sizeof *w->unit_of);
    w->direct = calloc((size_t)p, sizeof *w->direct);
    w->am = calloc((size_t)p, sizeof *w->am);
    w->am_sent = calloc((size_t)p, sizeof *w->am_sent);
    w->am_flushed = calloc((size_t)p, sizeof *w->am_flushed);
    w->held = calloc((size_t)p, sizeof *w->held);
    w->quick = calloc((size_t)p, sizeof *w->quick);
    w->start_group = calloc((size_t)p, sizeof *w->start_group);
    w->post_group = calloc((size_t)p, sizeof *w->post_group);
    w->posts_seen = calloc((size_t)p, sizeof *w->posts_seen);
    w->completes_seen = calloc((size_t)p, sizeof *w->completes_seen);
    MPI_Aint *all = calloc((size_t)p * 4, sizeof *all);
    if (!w->base_of || !w->bytes_of || !w->unit_of || !w->direct || !w->am || !w->am_sent || !w->am_flushed || !w->held ||
        !w->quick || !w->start_group || !w->post_group || !w->posts_seen || !w->completes_seen || !all) {
        free(all);
        win_release(w);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a window of %d processes", p);
    }
    all[4 * w->rank] = size;
    all[4 * w->rank + 1] = disp_unit;
    all[4 * w->rank + 2] = (MPI_Aint)(uintptr_t)base;
    all[4 * w->rank + 3] = (MPI_Aint)(uintptr_t)&reach_probe;
    if ((err = cr_coll_allgather_auto(all, 4, cr_dtype_get(MPI_AINT), w->comm))) {
        free(all);
        win_release(w);
        return err;
    }
    /* Who is reached how: memory Courier allocates on this node is mapped here; user memory of
     * this node by single copy when cross-memory attach works (tried once per window), else,
     * like every process of another node, by message. */
    bool alloc = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED, reached = false;
    for (int r = 0; r < p; r++) {
        int world = cr_comm_world_rank(w->comm, r);
        bool here = cr_rt.node_of[world] == cr_rt.node_of[cr_rt.rank];
        w->direct[r] = r == w->rank || (here && alloc);
        w->am[r] = !here || (!w->direct[r] && !single_copy_reaches(world, all[4 * r + 3]));
        reached |= w->am[r];
    }
    /* The segment: the control block, then (allocated flavours) the memory of every process of
     * this node, in rank order: contiguous for MPI_Win_allocate_shared unless alloc_shared_noncontig (each
     * part then starts a page), 64-byte aligned parts for MPI_Win_allocate. The control block
 * holds a cache line per process and two words per pair of processes (rma.h). */
    size_t align = flavor == MPI_WIN_FLAVOR_SHARED ? (w->hints.alloc_shared_noncontig ? 4096 : 1) : 64;
    size_t pairs = (size_t)p * (size_t)p * sizeof(uint32_t); /* posted, completed */
    size_t ctl_bytes = (sizeof(cr_win_fence) + (size_t)p * sizeof(cr_win_ctl) + 2 * pairs + 4095) & ~(size_t)4095;
    size_t at = ctl_bytes;
    size_t *offset = malloc((size_t)p * sizeof *offset);
    bool too_big = false; /* the processes of a node find the same, from the same sizes */
    for (int r = 0; offset && r < p; r++) {
        at = (at + align - 1) & ~(align - 1);
        offset[r] = at;
        size_t part = alloc && !w->am[r] ? (size_t)all[4 * r] : 0;
        too_big |= __builtin_add_overflow(at, part, &at) || at > (size_t)1 << 56;
    }
    /* Every process takes part in the segment's collectives, a failing one too, so that all
     * fail together. */
    bool failed_here = !offset || too_big;
    err = segment_map(w, failed_here || at < ctl_bytes ? ctl_bytes : at, &reached, failed_here);
    if (failed_here)
        err = too_big ? cr_err(MPI_ERR_NO_MEM, "the window's processes ask for more memory than can be mapped")
                      : cr_err(MPI_ERR_NO_MEM, "out of memory for a window");
    if (err) {
        free(offset);
        free(all);
        win_release(w);
        return err;
    }
    w->fence = w->seg;
    w->ctl = (cr_win_ctl *)(w->fence + 1);
    w->posted = (_Atomic uint32_t *)(w->ctl + p);
    w->completed = w->posted + (size_t)p * (size_t)p;
    for (int r = 0; r < p; r++) {
        w->bytes_of[r] = all[4 * r];
        w->unit_of[r] = (int)all[4 * r + 1];
        if (w->am[r])
            w->base_of[r] = NULL;
        else if (alloc)
            w->base_of[r] = (char *)w->seg + offset[r];
        else
            w->base_of[r] = (char *)(uintptr_t)all[4 * r + 2];
        w->quick[r] = (struct cr_win_quick){w->base_of[r], (uint64_t)w->bytes_of[r], (uint32_t)w->unit_of[r], false};
    }
    free(offset);
    free(all);
    w->base = alloc ? w->base_of[w->rank] : base;
    w->bytes = size;
    w->disp_unit = (int)disp_unit;
    w->am_serving = reached;
    if (reached && (err = cr_win_am_open(w))) {
        win_release(w);
        return err;
    }
    *out = w;
    return MPI_SUCCESS;
}

static MPI_Win handle_of(const cr_win *w)
{
    return (MPI_Win)(uintptr_t)w->eo.obj.handle;
}

int cr_mpi_win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, cr_info *info, cr_comm *comm, MPI_Win *win)
{
    if (!base && size > 0)
        return cr_err(MPI_ERR_BUFFER, "base is NULL but size=%lld", (long long)size);
    cr_win *w;
    int err = win_new(comm, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, &w);
    if (!err)
        *win = handle_of(w);
    return err;
}

int cr_mpi_win_create_dynamic(cr_info *info, cr_comm *comm, MPI_Win *win)
{
    cr_win *w;
    int err = win_new(comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, &w);
    if (!err)
        *win = handle_of(w);
    return err;
}

static int allocate(int flavor, MPI_Aint size, MPI_Aint disp_unit, cr_info *info, cr_comm *comm, void *baseptr,
                    MPI_Win *win)
{
    cr_win *w;
    int err = win_new(comm, flavor, NULL, size, disp_unit, info, &w);
    if (err)
        return err;
    void *base = w->base;
    memcpy(baseptr, &base, sizeof base); /* baseptr is a void ** passed as void * */
    *win = handle_of(w);
    return MPI_SUCCESS;
}

int cr_mpi_win_allocate(MPI_Aint size, MPI_Aint disp_unit, cr_info *info, cr_comm *comm, void *baseptr, MPI_Win *win)
{
    return allocate(MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, info, comm, baseptr, win);
}

int cr_mpi_win_allocate_shared(MPI_Aint size, MPI_Aint disp_unit, cr_info *info, cr_comm *comm, void *baseptr,
                               MPI_Win *win)
{
    return allocate(MPI_WIN_FLAVOR_SHARED, size, disp_unit, info, comm, baseptr, win);
}

/* Dynamic windows: any memory of a process is reachable by its address, so attaching only
 * checks the flavour. */
static int check_dynamic(const cr_win *w, const char *call)
{
    return w->flavor == MPI_WIN_FLAVOR_DYNAMIC
               ? MPI_SUCCESS
               : cr_err(MPI_ERR_RMA_FLAVOR, "%s needs a window from MPI_Win_create_dynamic", call);
}

int cr_mpi_win_attach(cr_win *win, void *base, MPI_Aint size)
{
    if (size < 0)
        return cr_err(MPI_ERR_SIZE, "invalid size=%lld: must not be negative", (long long)size);
    if (!base && size > 0)
        return cr_err(MPI_ERR_BUFFER, "base is NULL but size=%lld", (long long)size);
    return check_dynamic(win, "MPI_Win_attach");
}

int cr_mpi_win_detach(cr_win *win, const void *base)
{
    (void)base;
    return check_dynamic(win, "MPI_Win_detach");
}

int cr_mpi_win_free(MPI_Win *h)
{
    cr_win *w = cr_win_get(*h);
    if (!w)
        return cr_err_bad_handle(MPI_ERR_WIN, "window", (uintptr_t)*h, "win");
    if (w->start_open || w->post_open)
        return cr_err(MPI_ERR_RMA_SYNC, "an epoch of MPI_Win_%s is still open: end it before MPI_Win_free",
                      w->start_open ? "start" : "post");
    for (int r = 0; r < w->size; r++)
        if (w->held[r])
            return cr_err(MPI_ERR_RMA_SYNC, "this process still holds a lock on process %d: unlock before MPI_Win_free",
                          r);
    int err = cr_attr_clear(CR_KIND_WIN, &w->attrs, w->eo.obj.handle);
    if (!err) /* none are left once the epochs are closed, but a request form's may be */
        err = cr_win_am_answers(w, -1);
    if (err)
        return err;
    /* Every process is done with every other's memory before any of it goes. */
    if ((err = cr_mpi_barrier(w->comm)))
        return err;
    cr_win_am_close(w);
    *h = MPI_WIN_NULL;
    win_release(w);
    return MPI_SUCCESS;
}

int cr_win_target(cr_win *w, int target, MPI_Aint disp, MPI_Aint lo, MPI_Aint span, char **at)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) { /* a displacement is an address */
        *at = (char *)(uintptr_t)disp;
        return MPI_SUCCESS;
    }
    MPI_Aint off, first, end;
    if (disp < 0 || __builtin_mul_overflow(disp, (MPI_Aint)w->unit_of[target], &off) ||
        __builtin_add_overflow(off, lo, &first) || first < 0 || __builtin_add_overflow(first, span, &end) ||
        end > w->bytes_of[target])
        return cr_err(MPI_ERR_RMA_RANGE, "target_disp=%lld (x disp_unit %d) and %lld bytes of data reach beyond the "
                      "%lld bytes of process %d's window", (long long)disp, w->unit_of[target], (long long)span,
                      (long long)w->bytes_of[target], target);
    /* a target reached by message: the offset travels (rma.h) */
    *at = w->am[target] ? (char *)(CR_WIN_AM_BIAS + (uintptr_t)off) : w->base_of[target] + off;
    return MPI_SUCCESS;
}

int cr_mpi_win_shared_query(cr_win *win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= win->size))
        return cr_err(MPI_ERR_RANK, "invalid rank=%d: the window has ranks 0..%d or MPI_PROC_NULL", rank, win->size - 1);
    if (rank == MPI_PROC_NULL) { /* the first process with memory */
        rank = 0;
        while (rank < win->size - 1 && win->bytes_of[rank] == 0)
            rank++;
    }
    /* Memory this process can load and store: allocated windows' (all of it) and its own. */
    void *base = win->direct[rank] && win->bytes_of[rank] > 0 ? win->base_of[rank] : NULL;
    *size = base ? win->bytes_of[rank] : 0;
    *disp_unit = win->unit_of[rank];
    memcpy(baseptr, &base, sizeof base);
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- attributes */

int cr_mpi_win_get_attr(cr_win *win, int keyval, void *attribute_val, int *flag)
{
    static int model = MPI_WIN_UNIFIED;
    void *v;
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE: v = win->base; break;
    case MPI_WIN_SIZE: v = &win->bytes; break;
    case MPI_WIN_DISP_UNIT: v = &win->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = &win->flavor; break;
    case MPI_WIN_MODEL: v = &model; break;
    default: {
        int err = cr_attr_get(CR_KIND_WIN, win->attrs, keyval, &v, flag);
        if (err || !*flag)
            return err;
    }
    }
    memcpy(attribute_val, &v, sizeof v); /* attribute_val is a void ** passed as void * */
    return MPI_SUCCESS;
}

static bool predefined_keyval(int keyval)
{
    return keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL;
}

int cr_mpi_win_set_attr(cr_win *win, int keyval, void *attribute_val)
{
    if (predefined_keyval(keyval))
        return cr_err(MPI_ERR_KEYVAL, "win_keyval=%d is predefined and cannot be set", keyval);
    return cr_attr_set(CR_KIND_WIN, &win->attrs, win->eo.obj.handle, keyval, attribute_val);
}

int cr_mpi_win_delete_attr(cr_win *win, int keyval)
{
    if (predefined_keyval(keyval))
        return cr_err(MPI_ERR_KEYVAL, "win_keyval=%d is predefined and cannot be deleted", keyval);
    return cr_attr_delete(CR_KIND_WIN, &win->attrs, win->eo.obj.handle, keyval);
}

int cr_mpi_win_create_keyval(MPI_Win_copy_attr_function *copy_fn, MPI_Win_delete_attr_function *delete_fn,
                             int *keyval, void *extra_state)
{
    return cr_keyval_create(CR_KIND_WIN, (void (*)(void))copy_fn, (void (*)(void))delete_fn, extra_state, keyval);
}

int cr_mpi_win_free_keyval(int *keyval)
{
    if (predefined_keyval(*keyval))
        return cr_err(MPI_ERR_KEYVAL, "win_keyval=%d is predefined and cannot be freed", *keyval);
    return cr_keyval_free(CR_KIND_WIN, keyval);
}

/* ----------------------------------------------------------------- group, name, errors, info */

int cr_mpi_win_get_group(cr_win *win, MPI_Group *group)
{
    return cr_mpi_comm_group(win->comm, group);
}

int cr_mpi_win_set_name(cr_win *win, const char *name)
{
    if (!name)
        return cr_err(MPI_ERR_ARG, "win_name is NULL");
    if (strlen(name) > MPI_MAX_OBJECT_NAME - 1)
        return cr_err(MPI_ERR_ARG, "win_name is %zu characters long, more than MPI_MAX_OBJECT_NAME-1 (%d)",
                      strlen(name), MPI_MAX_OBJECT_NAME - 1);
    cr_strlcpy(win->name, name, sizeof win->name);
    return MPI_SUCCESS;
}

int cr_mpi_win_get_name(cr_win *win, char *name, int *resultlen)
{
    *resultlen = cr_strlcpy(name, win ? win->name : "MPI_WIN_NULL", MPI_MAX_OBJECT_NAME);
    return MPI_SUCCESS;
}

int cr_mpi_win_set_errhandler(cr_win *win, cr_errhandler *errhandler)
{
    return cr_errhandler_attach(&win->eo.errh, errhandler, CR_KIND_WIN);
}

int cr_mpi_win_get_errhandler(cr_win *win, MPI_Errhandler *errhandler)
{
    return cr_errhandler_get(win->eo.errh, errhandler);
}

int cr_mpi_win_call_errhandler(cr_win *win, int errorcode)
{
    cr_err_raise(&win->eo, "MPI_Win_call_errhandler", errorcode);
    return MPI_SUCCESS;
}

int cr_mpi_win_set_info(cr_win *win, cr_info *info)
{
    /* The hints given replace those set before (and MPI_Win_get_info reports them, as MPICH
     * does); keys not given keep their values. */
    cr_win_hints h;
    hints_read(&h, info);
    if (!info)
        return MPI_SUCCESS;
    if (cr_info_find(info, "no_locks"))
        win->hints.no_locks = h.no_locks;
    if (cr_info_find(info, "same_size"))
        win->hints.same_size = h.same_size;
    if (cr_info_find(info, "same_disp_unit"))
        win->hints.same_disp_unit = h.same_disp_unit;
    if (cr_info_find(info, "alloc_shared_noncontig"))
        win->hints.alloc_shared_noncontig = h.alloc_shared_noncontig;
    if (cr_info_find(info, "accumulate_ordering"))
        memcpy(win->hints.accumulate_ordering, h.accumulate_ordering, sizeof h.accumulate_ordering);
    if (cr_info_find(info, "accumulate_ops"))
        memcpy(win->hints.accumulate_ops, h.accumulate_ops, sizeof h.accumulate_ops);
    return MPI_SUCCESS;
}

int cr_mpi_win_get_info(cr_win *win, MPI_Info *info_used)
{
    cr_info *i;
    int err = cr_info_new(info_used, &i);
    if (err)
        return err;
    const cr_win_hints *h = &win->hints;
    if ((err = cr_info_put(i, "no_locks", h->no_locks ? "true" : "false")) ||
        (err = cr_info_put(i, "accumulate_ordering", h->accumulate_ordering)) ||
        (err = cr_info_put(i, "accumulate_ops", h->accumulate_ops)) ||
        (err = cr_info_put(i, "same_size", h->same_size ? "true" : "false")) ||
        (err = cr_info_put(i, "same_disp_unit", h->same_disp_unit ? "true" : "false")) ||
        (win->flavor == MPI_WIN_FLAVOR_SHARED &&
         (err = cr_info_put(i, "alloc_shared_noncontig", h->alloc_shared_noncontig ? "true" : "false"))))
        cr_mpi_info_free(info_used);
    return err;
}
