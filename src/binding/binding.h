/* binding.h: what the generated entry points (build/gen/bindings_*.c) need: the layers' object
 * types, the argument checkers, and the generated implementation prototypes.
 *
 * Checkers return MPI_SUCCESS or an error code whose message names the argument and its value;
 * the generated code raises it on the call's object, which adds the call's name. The checks on
 * every call's hot path (communicator, rank, tag) are inline. */
#ifndef CR_BINDING_H
#define CR_BINDING_H

#include "core/types.h"
#include "comm/comm.h"
#include "core/error.h"
#include "core/info.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "coll/op.h"
#include "cr_impl.h"
#include "dt/dtype.h"
#include "io/io.h"

#include <stdint.h>

#define CR_API __attribute__((visibility("default")))

enum { CR_CHECK_NULL_OK = 1, CR_CHECK_COMMITTED = 2 };
enum { CR_RANK_DEST, CR_RANK_SOURCE, CR_RANK_ROOT };

/* The largest tag users may use; MPI_TAG_UB reports it. */
#define CR_TAG_UB INT32_MAX

int cr_binding_unsupported(const char *fname, cr_errobj *target);
int cr_check_fail_comm(MPI_Comm h, const char *arg);
int cr_check_fail_rank(const cr_comm *c, int rank, const char *arg, int mode);
int cr_check_fail_tag(int tag, const char *arg, int any_ok);
int cr_check_group(MPI_Group h, const char *arg, int flags, cr_group **out);
int cr_check_info(MPI_Info h, const char *arg, int flags, cr_info **out);
int cr_check_errhandler(MPI_Errhandler h, const char *arg, int flags, cr_errhandler **out);
int cr_check_session(MPI_Session h, const char *arg, int flags, cr_session **out);
int cr_check_file(MPI_File h, const char *arg, int flags, cr_file **out);
/* What an out-of-line checker of a hot handle returns: the object (NULL when rc is an error, or
 * for an accepted null handle) and the error code, in registers. */
typedef struct cr_checked {
    void *obj;
    int rc;
} cr_checked;
cr_checked cr_check_win_slow(MPI_Win h, const char *arg, int flags);
cr_checked cr_check_dtype_slow(MPI_Datatype h, const char *arg, int flags);
int cr_check_op(MPI_Op h, const char *arg, int flags, cr_op **out);
int cr_check_buffer_fail(const void *buf, MPI_Count count, const cr_dtype *dt, const char *arg);

static inline int cr_check_comm(MPI_Comm h, const char *arg, int flags, cr_comm **out)
{
    cr_comm *c = cr_comm_get(h);
    if (CR_UNLIKELY(!c)) {
        if ((flags & CR_CHECK_NULL_OK) && h == MPI_COMM_NULL) {
            *out = NULL;
            return MPI_SUCCESS;
        }
        return cr_check_fail_comm(h, arg);
    }
    *out = c;
    return MPI_SUCCESS;
}

/* Windows and datatypes are on the hot path of one-sided calls (a put is a few nanoseconds of
 * work): a valid handle is checked inline, anything else (null, invalid, uncommitted) out of
 * line. The out-of-line part returns the object rather than storing it through `out`: `out`
 * is the address of the entry point's local, and handing it to a function the compiler cannot
 * see into would keep that local in memory (a store and a load on every call's path). */
static CR_ALWAYS_INLINE int cr_check_win(MPI_Win h, const char *arg, int flags, cr_win **out)
{
    cr_win *w = cr_handle_get((uintptr_t)h, CR_KIND_WIN);
    if (CR_UNLIKELY(w == NULL)) {
        cr_checked c = cr_check_win_slow(h, arg, flags);
        *out = c.obj;
        return c.rc;
    }
    *out = w;
    return MPI_SUCCESS;
}

static CR_ALWAYS_INLINE int cr_check_dtype(MPI_Datatype h, const char *arg, int flags, cr_dtype **out)
{
    cr_dtype *dt = cr_dtype_get(h);
    if (CR_UNLIKELY(dt == NULL || !(dt->flags & CR_DT_COMMITTED))) {
        cr_checked c = cr_check_dtype_slow(h, arg, flags);
        *out = c.obj;
        return c.rc;
    }
    *out = dt;
    return MPI_SUCCESS;
}

/* Peeks for the quick entry points (gen_bindings.py, override key `quick`): the object of a
 * valid handle (a datatype also committed, with CR_CHECK_COMMITTED), or NULL for anything else,
 * which sends the call down the full entry point and its checks. Inline, with no call. */
static CR_ALWAYS_INLINE cr_comm *cr_peek_comm(MPI_Comm h)
{
    return cr_comm_get(h);
}

static CR_ALWAYS_INLINE cr_win *cr_peek_win(MPI_Win h)
{
    return cr_handle_get((uintptr_t)h, CR_KIND_WIN);
}

static CR_ALWAYS_INLINE cr_dtype *cr_peek_dtype(MPI_Datatype h, int flags)
{
    cr_dtype *dt = cr_dtype_get(h);
    if (dt && (flags & CR_CHECK_COMMITTED) && !(dt->flags & CR_DT_COMMITTED))
        return NULL;
    return dt;
}

static inline int cr_check_rank(const cr_comm *c, int rank, const char *arg, int mode)
{
    if (CR_LIKELY((unsigned)rank < (unsigned)c->remote_size))
        return MPI_SUCCESS;
    if (rank == MPI_PROC_NULL && (mode != CR_RANK_ROOT || c->inter))
        return MPI_SUCCESS;
    if (rank == MPI_ANY_SOURCE && mode == CR_RANK_SOURCE)
        return MPI_SUCCESS;
    if (rank == MPI_ROOT && mode == CR_RANK_ROOT && c->inter) /* the root's side of an intercommunicator */
        return MPI_SUCCESS;
    return cr_check_fail_rank(c, rank, arg, mode);
}

static inline int cr_check_tag(int tag, const char *arg, int any_ok)
{
    if (CR_LIKELY(tag >= 0) || (any_ok && tag == MPI_ANY_TAG))
        return MPI_SUCCESS;
    return cr_check_fail_tag(tag, arg, any_ok);
}

/* A buffer that holds data (count > 0 of a type whose data starts at the buffer) cannot be
 * NULL. MPI_BOTTOM (also NULL) is fine with types that carry absolute addresses. */
static CR_ALWAYS_INLINE int cr_check_buffer(const void *buf, MPI_Count count, const cr_dtype *dt, const char *arg)
{
    if (CR_LIKELY(buf != NULL) || count == 0 || !cr_dtype_starts_at_buffer(dt))
        return MPI_SUCCESS;
    return cr_check_buffer_fail(buf, count, dt, arg);
}

static inline cr_errobj *cr_errobj_of_comm(MPI_Comm h)
{
    cr_comm *c = cr_comm_get(h);
    return c ? &c->eo : NULL;
}

/* Windows, files and sessions start with their cr_errobj. A handle that is no open file
 * (MPI_FILE_NULL, for MPI_File_open and MPI_File_delete; or an invalid one) raises on
 * MPI_FILE_NULL's handler, the default for files, as the standard says. */
static inline cr_errobj *cr_errobj_of_window(uintptr_t h)
{
    return cr_handle_get(h, CR_KIND_WIN);
}
static inline cr_errobj *cr_errobj_of_file(uintptr_t h)
{
    cr_file *f = cr_handle_get(h, CR_KIND_FILE);
    return f ? &f->eo : &cr_file_null;
}
static inline cr_errobj *cr_errobj_of_session(uintptr_t h)
{
    /* (a finalized session that groups or communicators still hold has no error handler left:
     * its errors go where errors of no object go) */
    cr_session *s = cr_handle_get(h, CR_KIND_SESSION);
    return s && !s->finalized ? &s->eo : NULL;
}

#endif
