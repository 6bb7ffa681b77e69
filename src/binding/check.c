/* check.c: the slow halves of the argument checkers (the message-building error paths) and the
 * checkers for handle kinds that are off the hot path. See binding.h. */
#include "binding/binding.h"

#include <stdio.h>

int cr_binding_unsupported(const char *fname, cr_errobj *target)
{
    int code = cr_err(MPI_ERR_UNSUPPORTED_OPERATION, "this procedure is not implemented in Courier %s yet",
                      CR_VERSION_STRING);
    return cr_err_raise(target, fname, code);
}

int cr_check_fail_comm(MPI_Comm h, const char *arg)
{
    return cr_err_bad_handle(MPI_ERR_COMM, "communicator", (uintptr_t)h, arg);
}

int cr_check_fail_rank(const cr_comm *c, int rank, const char *arg, int mode)
{
    const char *extra = mode == CR_RANK_SOURCE ? ", MPI_ANY_SOURCE or MPI_PROC_NULL"
                        : mode == CR_RANK_DEST ? " or MPI_PROC_NULL" : "";
    const char *name = c->name[0] ? c->name : "the communicator";
    const char *group = c->inter ? "the remote group of " : "";
    if (mode == CR_RANK_ROOT)
        return cr_err(MPI_ERR_ROOT, "invalid root %s=%d: %s%s has ranks 0..%d%s", arg, rank, group, name,
                      c->remote_size - 1, c->inter ? ", MPI_ROOT or MPI_PROC_NULL" : "");
    return cr_err(MPI_ERR_RANK, "invalid rank %s=%d: %s%s has ranks 0..%d%s", arg, rank, group, name,
                  c->remote_size - 1, extra);
}

int cr_check_fail_tag(int tag, const char *arg, int any_ok)
{
    return cr_err(MPI_ERR_TAG, "invalid tag %s=%d: tags are 0..%d%s", arg, tag, CR_TAG_UB,
                  any_ok ? " or MPI_ANY_TAG" : "");
}

int cr_check_group(MPI_Group h, const char *arg, int flags, cr_group **out)
{
    if ((flags & CR_CHECK_NULL_OK) && h == MPI_GROUP_NULL)
        return *out = NULL, MPI_SUCCESS;
    cr_group *g = cr_handle_get((uintptr_t)h, CR_KIND_GROUP);
    if (!g)
        return cr_err_bad_handle(MPI_ERR_GROUP, "group", (uintptr_t)h, arg);
    *out = g;
    return MPI_SUCCESS;
}

int cr_check_info(MPI_Info h, const char *arg, int flags, cr_info **out)
{
    if ((flags & CR_CHECK_NULL_OK) && h == MPI_INFO_NULL)
        return *out = NULL, MPI_SUCCESS;
    cr_info *i = cr_info_get(h);
    if (!i)
        return cr_err_bad_handle(MPI_ERR_INFO, "info object", (uintptr_t)h, arg);
    *out = i;
    return MPI_SUCCESS;
}

int cr_check_errhandler(MPI_Errhandler h, const char *arg, int flags, cr_errhandler **out)
{
    (void)flags;
    cr_errhandler *e = cr_handle_get((uintptr_t)h, CR_KIND_ERRHANDLER);
    if (!e)
        return cr_err_bad_handle(MPI_ERR_ERRHANDLER, "error handler", (uintptr_t)h, arg);
    *out = e;
    return MPI_SUCCESS;
}

int cr_check_session(MPI_Session h, const char *arg, int flags, cr_session **out)
{
    (void)flags;
    cr_session *s = cr_handle_get((uintptr_t)h, CR_KIND_SESSION);
    if (!s || s->finalized)
        return cr_err_bad_handle(MPI_ERR_SESSION, "session", (uintptr_t)h, arg);
    *out = s;
    return MPI_SUCCESS;
}

int cr_check_file(MPI_File h, const char *arg, int flags, cr_file **out)
{
    if ((flags & CR_CHECK_NULL_OK) && h == MPI_FILE_NULL)
        return *out = NULL, MPI_SUCCESS;
    cr_file *f = cr_file_get(h);
    if (!f)
        return cr_err_bad_handle(MPI_ERR_FILE, "file", (uintptr_t)h, arg);
    *out = f;
    return MPI_SUCCESS;
}

cr_checked cr_check_win_slow(MPI_Win h, const char *arg, int flags)
{
    if ((flags & CR_CHECK_NULL_OK) && h == MPI_WIN_NULL)
        return (cr_checked){NULL, MPI_SUCCESS};
    cr_win *w = cr_handle_get((uintptr_t)h, CR_KIND_WIN);
    if (!w)
        return (cr_checked){NULL, cr_err_bad_handle(MPI_ERR_WIN, "window", (uintptr_t)h, arg)};
    return (cr_checked){w, MPI_SUCCESS};
}

cr_checked cr_check_dtype_slow(MPI_Datatype h, const char *arg, int flags)
{
    if ((flags & CR_CHECK_NULL_OK) && h == MPI_DATATYPE_NULL)
        return (cr_checked){NULL, MPI_SUCCESS};
    cr_dtype *dt = NULL;
    int rc = cr_dtype_check(h, arg, flags & CR_CHECK_COMMITTED, &dt);
    return (cr_checked){rc ? NULL : dt, rc};
}

int cr_check_buffer_fail(const void *buf, MPI_Count count, const cr_dtype *dt, const char *arg)
{
    (void)buf;
    return cr_err(MPI_ERR_BUFFER, "%s is NULL but count=%lld elements of %s are to be accessed", arg,
                  (long long)count, dt->name ? dt->name : "a datatype");
}

int cr_check_op(MPI_Op h, const char *arg, int flags, cr_op **out)
{
    (void)flags;
    cr_op *op = cr_op_get(h);
    if (!op)
        return cr_err_bad_handle(MPI_ERR_OP, "operation", (uintptr_t)h, arg);
    *out = op;
    return MPI_SUCCESS;
}
