/* check.c: the slow halves of the argument checkers (the message-building error paths) and the
 * checkers for handle kinds that are off the hot path. See binding.h. */
#include "binding/binding.h"

#include <stdio.h>

const char *cr_handle_describe(uintptr_t h, char *buf, size_t cap)
{
    const char *name = cr_handle_predef_name(h);
    if (name)
        return name;
    if (h == 0)
        return "NULL (0)";
    snprintf(buf, cap, "%#lx", (unsigned long)h);
    return buf;
}

int cr_binding_unsupported(const char *fname, cr_errobj *target)
{
    int code = cr_err(MPI_ERR_UNSUPPORTED_OPERATION, "this procedure is not implemented in Courier %s yet",
                      CR_VERSION_STRING);
    return cr_err_raise(target, fname, code);
}

/* A handle that is not of the expected kind: say what it is when we can tell. */
static int bad_handle(int cls, const char *what, uintptr_t h, const char *arg)
{
    char buf[32];
    const char *d = cr_handle_describe(h, buf, sizeof buf);
    const char *name = cr_handle_predef_name(h);
    if (name && strstr(name, "_NULL"))
        return cr_err(cls, "%s=%s is a null handle, not a valid %s", arg, d, what);
    return cr_err(cls, "%s=%s is not a valid %s", arg, d, what);
}

int cr_check_fail_comm(MPI_Comm h, const char *arg)
{
    return bad_handle(MPI_ERR_COMM, "communicator", (uintptr_t)h, arg);
}

int cr_check_fail_rank(const cr_comm *c, int rank, const char *arg, int mode)
{
    const char *extra = mode == CR_RANK_SOURCE ? ", MPI_ANY_SOURCE or MPI_PROC_NULL"
                        : mode == CR_RANK_DEST ? " or MPI_PROC_NULL" : "";
    const char *name = c->name[0] ? c->name : "the communicator";
    if (mode == CR_RANK_ROOT)
        return cr_err(MPI_ERR_ROOT, "invalid root %s=%d: %s has ranks 0..%d", arg, rank, name, c->size - 1);
    return cr_err(MPI_ERR_RANK, "invalid rank %s=%d: %s has ranks 0..%d%s", arg, rank, name, c->size - 1, extra);
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
        return bad_handle(MPI_ERR_GROUP, "group", (uintptr_t)h, arg);
    *out = g;
    return MPI_SUCCESS;
}

int cr_check_info(MPI_Info h, const char *arg, int flags, cr_info **out)
{
    if ((flags & CR_CHECK_NULL_OK) && h == MPI_INFO_NULL)
        return *out = NULL, MPI_SUCCESS;
    cr_info *i = cr_info_get(h);
    if (!i)
        return bad_handle(MPI_ERR_INFO, "info object", (uintptr_t)h, arg);
    *out = i;
    return MPI_SUCCESS;
}

int cr_check_errhandler(MPI_Errhandler h, const char *arg, int flags, cr_errhandler **out)
{
    (void)flags;
    cr_errhandler *e = cr_handle_get((uintptr_t)h, CR_KIND_ERRHANDLER);
    if (!e)
        return bad_handle(MPI_ERR_ERRHANDLER, "error handler", (uintptr_t)h, arg);
    *out = e;
    return MPI_SUCCESS;
}

int cr_check_dtype(MPI_Datatype h, const char *arg, int flags, cr_dtype **out)
{
    cr_dtype *dt = cr_dtype_get(h);
    if (CR_UNLIKELY(!dt))
        return bad_handle(MPI_ERR_TYPE, "datatype", (uintptr_t)h, arg);
    if (CR_UNLIKELY((flags & CR_CHECK_COMMITTED) && !(dt->flags & CR_DT_COMMITTED)))
        return cr_err(MPI_ERR_TYPE, "%s is a datatype that was not committed (call MPI_Type_commit first)", arg);
    *out = dt;
    return MPI_SUCCESS;
}

int cr_check_buffer_fail(const void *buf, MPI_Count count, const cr_dtype *dt, const char *arg)
{
    (void)buf;
    return cr_err(MPI_ERR_BUFFER, "%s is NULL but count=%lld elements of %s are to be accessed", arg,
                  (long long)count, dt->name ? dt->name : "a datatype");
}
