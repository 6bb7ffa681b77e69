/* error.c: error classes and codes, the ring of recent error messages, user-added classes,
 * codes and strings, and error handler dispatch (see error.h for the code layout). */
#include "error.h"

#include "runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

cr_errhandler cr_errh_fatal, cr_errh_return, cr_errh_abort;
cr_errobj *cr_err_default_target;
CR_THREAD_LOCAL cr_errobj *cr_err_target_hint;

/* The last predefined error class of MPI 5.0. */
#define CR_LAST_CLASS MPI_ERR_ABI

static const struct {
    const char *name;
    const char *text;
} class_info[] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "no error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "invalid datatype"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "invalid tag"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "invalid rank"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "invalid request"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "invalid operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "invalid argument"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "message truncated on receive"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "other error"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "internal error"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "operation pending"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "error code is in status"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "permission denied"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "invalid file access mode"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "invalid assertion"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "invalid file name"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "invalid base address"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION", "data conversion failed"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "invalid displacement"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP", "data representation already registered"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "file exists"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE", "file in use"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "invalid file handle"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "invalid info key"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "info key not found"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "invalid info value"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "invalid info object"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "I/O error"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "invalid attribute key"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "invalid lock type"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "invalid service name"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "out of memory"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME", "arguments not the same on all processes"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "no space left"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "no such file"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "invalid port name"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE", "target memory outside the window"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "invalid service"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "invalid size"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "could not spawn processes"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION", "operation not supported"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "invalid window"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    [MPI_ERR_PROC_ABORTED] = {"MPI_ERR_PROC_ABORTED", "peer process aborted"},
    [MPI_ERR_VALUE_TOO_LARGE] = {"MPI_ERR_VALUE_TOO_LARGE", "value too large for the output argument"},
    [MPI_ERR_SESSION] = {"MPI_ERR_SESSION", "invalid session"},
    [MPI_ERR_ERRHANDLER] = {"MPI_ERR_ERRHANDLER", "invalid error handler"},
    [MPI_ERR_ABI] = {"MPI_ERR_ABI", "ABI property already set"},
};

static const struct {
    int cls;
    const char *name;
    const char *text;
} tool_class_info[] = {
    {MPI_T_ERR_CANNOT_INIT, "MPI_T_ERR_CANNOT_INIT", "the tool interface cannot be initialized"},
    {MPI_T_ERR_NOT_ACCESSIBLE, "MPI_T_ERR_NOT_ACCESSIBLE", "not accessible now"},
    {MPI_T_ERR_NOT_INITIALIZED, "MPI_T_ERR_NOT_INITIALIZED", "the tool interface is not initialized"},
    {MPI_T_ERR_NOT_SUPPORTED, "MPI_T_ERR_NOT_SUPPORTED", "not supported"},
    {MPI_T_ERR_MEMORY, "MPI_T_ERR_MEMORY", "out of memory"},
    {MPI_T_ERR_INVALID, "MPI_T_ERR_INVALID", "invalid argument"},
    {MPI_T_ERR_INVALID_INDEX, "MPI_T_ERR_INVALID_INDEX", "invalid index"},
    {MPI_T_ERR_INVALID_ITEM, "MPI_T_ERR_INVALID_ITEM", "invalid item"},
    {MPI_T_ERR_INVALID_SESSION, "MPI_T_ERR_INVALID_SESSION", "invalid performance session"},
    {MPI_T_ERR_INVALID_HANDLE, "MPI_T_ERR_INVALID_HANDLE", "invalid handle"},
    {MPI_T_ERR_INVALID_NAME, "MPI_T_ERR_INVALID_NAME", "invalid name"},
    {MPI_T_ERR_OUT_OF_HANDLES, "MPI_T_ERR_OUT_OF_HANDLES", "out of handles"},
    {MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T_ERR_OUT_OF_SESSIONS", "out of sessions"},
    {MPI_T_ERR_CVAR_SET_NOT_NOW, "MPI_T_ERR_CVAR_SET_NOT_NOW", "control variable cannot be set now"},
    {MPI_T_ERR_CVAR_SET_NEVER, "MPI_T_ERR_CVAR_SET_NEVER", "control variable can never be set"},
    {MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_ERR_PVAR_NO_WRITE", "performance variable cannot be written"},
    {MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T_ERR_PVAR_NO_STARTSTOP", "performance variable cannot be started or stopped"},
    {MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T_ERR_PVAR_NO_ATOMIC", "performance variable cannot be read and reset atomically"},
};

/* Recent error events: the message, and the call that raised it (set at raise time). */
static struct {
    int code;
    const char *call;
    char text[384];
} ring[CR_ERR_RING];
static uint32_t ring_serial;

/* User-added classes and codes: entry n describes value CR_ERR_USER_BASE + n. */
static struct {
    int cls;     /* its class (itself for a class); -1 when removed or never added */
    char *text;  /* from MPI_Add_error_string, or NULL */
} user[CR_ERR_USER_MAX];
static int user_count;

static int rank_for_messages = -1;

void cr_err_set_rank(int rank)
{
    rank_for_messages = rank;
}

static bool is_predefined_class(int c)
{
    if (c >= 0 && c <= CR_LAST_CLASS)
        return true;
    return c >= MPI_T_ERR_CANNOT_INIT && c <= MPI_T_ERR_PVAR_NO_ATOMIC;
}

static bool is_user_value(int c)
{
    return c >= CR_ERR_USER_BASE && c < CR_ERR_USER_BASE + user_count && user[c - CR_ERR_USER_BASE].cls >= 0;
}

int cr_err(int cls, const char *fmt, ...)
{
    uint32_t serial = ring_serial++;
    int code = CR_ERR_INSTANCE | (int)((serial & 0x3fff) << 16) | (cls & 0xffff);
    unsigned slot = serial % CR_ERR_RING;
    ring[slot].code = code;
    ring[slot].call = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ring[slot].text, sizeof(ring[slot].text), fmt, ap);
    va_end(ap);
    return code;
}

int cr_err_bad_handle(int cls, const char *what, uintptr_t h, const char *arg)
{
    char buf[32];
    const char *d = cr_handle_describe(h, buf, sizeof buf);
    const char *name = cr_handle_predef_name(h);
    if (name && strstr(name, "_NULL"))
        return cr_err(cls, "%s=%s is a null handle, not a valid %s", arg, d, what);
    return cr_err(cls, "%s=%s is not a valid %s", arg, d, what);
}

int cr_err_class(int code)
{
    if (code & CR_ERR_INSTANCE) {
        int c = code & 0xffff;
        return cr_err_class(c) == c ? c : -1;
    }
    if (is_predefined_class(code))
        return code;
    if (is_user_value(code))
        return user[code - CR_ERR_USER_BASE].cls;
    return -1;
}

const char *cr_err_class_name(int cls, char *buf, size_t cap)
{
    if (cls >= 0 && cls <= CR_LAST_CLASS)
        return class_info[cls].name;
    for (size_t i = 0; i < CR_ARRAY_LEN(tool_class_info); i++)
        if (tool_class_info[i].cls == cls)
            return tool_class_info[i].name;
    snprintf(buf, cap, "user error class %d", cls);
    return buf;
}

static const char *class_text(int cls)
{
    if (cls >= 0 && cls <= CR_LAST_CLASS)
        return class_info[cls].text;
    for (size_t i = 0; i < CR_ARRAY_LEN(tool_class_info); i++)
        if (tool_class_info[i].cls == cls)
            return tool_class_info[i].text;
    if (is_user_value(cls) && user[cls - CR_ERR_USER_BASE].text)
        return user[cls - CR_ERR_USER_BASE].text;
    return "";
}

int cr_err_string(int code, char *buf, size_t cap)
{
    int cls = cr_err_class(code);
    if (cls < 0)
        return snprintf(buf, cap, "unknown error code %d", code);
    if (code & CR_ERR_INSTANCE) {
        unsigned slot = ((unsigned)code >> 16 & 0x3fff) % CR_ERR_RING;
        if (ring[slot].code == code) {
            char namebuf[40];
            const char *name = cr_err_class_name(cls, namebuf, sizeof namebuf);
            if (ring[slot].call)
                return snprintf(buf, cap, "%s: %s (%s)", ring[slot].call, ring[slot].text, name);
            return snprintf(buf, cap, "%s (%s)", ring[slot].text, name);
        }
        code = cls;
    }
    if (is_user_value(code))
        return snprintf(buf, cap, "%s", class_text(code));
    return snprintf(buf, cap, "%s", class_text(cls));
}

/* `unbound`: the call had no valid object to raise the error on (an invalid or null handle, or
 * a call about no object), so it went to MPI_COMM_SELF; the message says so, since a user who
 * set MPI_ERRORS_RETURN on MPI_COMM_WORLD alone would otherwise not see why the job ended. */
static CR_NORETURN void fatal(cr_errobj *target, const char *fname, int code, bool abort_mode, bool unbound)
{
    char msg[MPI_MAX_ERROR_STRING], namebuf[40], why[160], who[24] = "";
    cr_err_string(code, msg, sizeof msg);
    int cls = cr_err_class(code);
    const char *what = abort_mode ? "MPI_ERRORS_ABORT" : "MPI_ERRORS_ARE_FATAL";
    if (rank_for_messages >= 0)
        snprintf(who, sizeof who, "rank %d: ", rank_for_messages);
    const char *end = rank_for_messages >= 0 ? "the job ends" : "the program ends";
    if (unbound)
        fprintf(stderr,
                "Courier: %s%s\nCourier: %sthe error is not about a valid communicator, window, file or session, so "
                "it was raised on MPI_COMM_SELF, whose error handler is %s: %s\n",
                who, msg, who, what, end);
    else
        fprintf(stderr, "Courier: %s%s\nCourier: %sthe error handler is %s, so %s\n", who, msg, who, what, end);
    fflush(stderr);
    snprintf(why, sizeof why, "fatal error in %s (%s; the message is above)", fname ? fname : "an MPI call",
             cr_err_class_name(cls, namebuf, sizeof namebuf));
    cr_runtime_abort(target, cls > 0 && cls < 256 ? cls : 1, why);
}

/* User error handlers nested deeper than this are not called (see cr_err_raise). */
enum { CR_ERR_HANDLER_DEPTH = 8 };

int cr_err_raise(cr_errobj *target, const char *fname, int code)
{
    if (code & CR_ERR_INSTANCE) {
        unsigned slot = ((unsigned)code >> 16 & 0x3fff) % CR_ERR_RING;
        if (ring[slot].code == code && !ring[slot].call)
            ring[slot].call = fname;
    }
    /* No object to raise it on: MPI_COMM_SELF's handler (MPI-4.1 section 2.8, doc/errors.md). */
    bool unbound = !target;
    if (!target)
        target = cr_err_default_target;
    cr_errhandler *eh = target ? target->errh : &cr_errh_fatal;
    switch (eh->type) {
    case CR_EH_RETURN:
        return code;
    case CR_EH_FATAL:
        fatal(target, fname, code, false, unbound);
    case CR_EH_ABORT:
        fatal(target, fname, code, true, unbound);
    case CR_EH_USER: {
        /* A handler may call MPI, and that call may fail and raise again, maybe on the same
         * object: nested handlers run up to a bound, past which errors are returned as with
         * MPI_ERRORS_RETURN, so a handler that fails every time cannot recurse without end. */
        static CR_THREAD_LOCAL int depth;
        if (depth >= CR_ERR_HANDLER_DEPTH)
            return code;
        MPI_Comm h = (MPI_Comm)(uintptr_t)target->obj.handle;
        int c = code;
        depth++;
        /* Every user handler type has the shape (Handle *, int *, ...). */
        ((MPI_Comm_errhandler_function *)(void (*)(void))eh->fn)(&h, &c);
        depth--;
        return code;
    }
    }
    return code;
}

int cr_err_add_class(int *cls)
{
    if (user_count == CR_ERR_USER_MAX)
        return cr_err(MPI_ERR_OTHER, "no more error classes can be added (limit %d)", CR_ERR_USER_MAX);
    int c = CR_ERR_USER_BASE + user_count;
    user[user_count].cls = c;
    user[user_count].text = NULL;
    user_count++;
    *cls = c;
    return MPI_SUCCESS;
}

int cr_err_add_code(int cls, int *code)
{
    if (!is_predefined_class(cls) && !(is_user_value(cls) && user[cls - CR_ERR_USER_BASE].cls == cls))
        return cr_err(MPI_ERR_ARG, "errorclass=%d is not a valid error class", cls);
    int c = 0;
    int err = cr_err_add_class(&c);
    if (err)
        return err;
    user[c - CR_ERR_USER_BASE].cls = cls;
    *code = c;
    return MPI_SUCCESS;
}

int cr_err_add_string(int code, const char *s)
{
    if (strlen(s) >= MPI_MAX_ERROR_STRING)
        return cr_err(MPI_ERR_ARG, "string is %zu characters long, more than MPI_MAX_ERROR_STRING-1 (%d)",
                      strlen(s), MPI_MAX_ERROR_STRING - 1);
    char **slot;
    if (is_user_value(code))
        slot = &user[code - CR_ERR_USER_BASE].text;
    else if (code > MPI_SUCCESS && code <= CR_LAST_CLASS)
        return cr_err(MPI_ERR_ARG, "errorcode=%d is predefined; its string cannot be changed", code);
    else
        return cr_err(MPI_ERR_ARG, "errorcode=%d was not added with MPI_Add_error_code/_class", code);
    char *copy = strdup(s);
    if (!copy)
        return cr_err(MPI_ERR_NO_MEM, "out of memory copying the error string");
    free(*slot);
    *slot = copy;
    return MPI_SUCCESS;
}

int cr_err_remove(int code, int what)
{
    static const char *const kind[] = {"errorclass", "errorcode", "errorcode"};
    if (!is_user_value(code))
        return cr_err(MPI_ERR_ARG, "%s=%d was not added by the user", kind[what], code);
    int n = code - CR_ERR_USER_BASE;
    if (what == 2) {
        if (!user[n].text)
            return cr_err(MPI_ERR_ARG, "errorcode=%d has no string to remove", code);
        free(user[n].text);
        user[n].text = NULL;
        return MPI_SUCCESS;
    }
    bool is_class = user[n].cls == code;
    if (is_class != (what == 0))
        return cr_err(MPI_ERR_ARG, "%s=%d is an error %s", kind[what], code, is_class ? "class" : "code");
    if (is_class)
        for (int i = 0; i < user_count; i++)
            if (i != n && user[i].cls == code)
                return cr_err(MPI_ERR_ARG, "errorclass=%d still has error code %d", code, CR_ERR_USER_BASE + i);
    if (user[n].text)
        return cr_err(MPI_ERR_ARG, "%s=%d still has a string; remove it first", kind[what], code);
    user[n].cls = -1;
    return MPI_SUCCESS;
}

int cr_err_last_used(void)
{
    return user_count ? CR_ERR_USER_BASE + user_count - 1 : MPI_ERR_LASTCODE;
}

void cr_error_setup(void)
{
    cr_pool_setup(CR_KIND_ERRHANDLER, sizeof(cr_errhandler));
    cr_handle_predefine(&cr_errh_fatal.obj, (uintptr_t)MPI_ERRORS_ARE_FATAL, CR_KIND_ERRHANDLER);
    cr_handle_predefine(&cr_errh_return.obj, (uintptr_t)MPI_ERRORS_RETURN, CR_KIND_ERRHANDLER);
    cr_handle_predefine(&cr_errh_abort.obj, (uintptr_t)MPI_ERRORS_ABORT, CR_KIND_ERRHANDLER);
    cr_errh_fatal.type = CR_EH_FATAL;
    cr_errh_return.type = CR_EH_RETURN;
    cr_errh_abort.type = CR_EH_ABORT;
}
