/* errhandler.c: the error-handling calls: creating, setting, getting, calling and freeing
 * error handlers; error strings and classes; user-added classes, codes and strings. */
#include "comm/comm.h"
#include "cr_impl.h"
#include "core/error.h"

static int create(cr_kind objkind, void (*fn)(void), MPI_Errhandler *out)
{
    if (!fn)
        return cr_err(MPI_ERR_ARG, "the error handler function is NULL");
    cr_errhandler *eh = cr_obj_alloc(CR_KIND_ERRHANDLER);
    if (!eh)
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating an error handler");
    eh->type = CR_EH_USER;
    eh->objkind = (uint8_t)objkind;
    eh->fn = fn;
    *out = (MPI_Errhandler)(uintptr_t)eh->obj.handle;
    return MPI_SUCCESS;
}

int cr_mpi_comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(CR_KIND_COMM, (void (*)(void))fn, errhandler);
}

int cr_mpi_win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(CR_KIND_WIN, (void (*)(void))fn, errhandler);
}

int cr_mpi_file_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(CR_KIND_FILE, (void (*)(void))fn, errhandler);
}

int cr_mpi_session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(CR_KIND_SESSION, (void (*)(void))fn, errhandler);
}

static const char *kind_word(int kind)
{
    switch (kind) {
    case CR_KIND_COMM: return "communicator";
    case CR_KIND_WIN: return "window";
    case CR_KIND_FILE: return "file";
    default: return "session";
    }
}

/* Replaces `*slot` (an object's handler) with `eh`, keeping reference counts. */
int cr_errhandler_attach(cr_errhandler **slot, cr_errhandler *eh, cr_kind objkind)
{
    if (eh->type == CR_EH_USER && eh->objkind != objkind)
        return cr_err(MPI_ERR_ARG, "errhandler was created for a %s, not a %s", kind_word(eh->objkind),
                      kind_word(objkind));
    cr_obj_ref(eh);
    cr_errhandler *old = *slot;
    *slot = eh;
    if (old && cr_obj_unref(old))
        cr_obj_free(old);
    return MPI_SUCCESS;
}

int cr_mpi_comm_set_errhandler(cr_comm *comm, cr_errhandler *errhandler)
{
    return cr_errhandler_attach(&comm->eo.errh, errhandler, CR_KIND_COMM);
}

int cr_errhandler_get(cr_errhandler *eh, MPI_Errhandler *errhandler)
{
    cr_obj_ref(eh); /* the user's new handle, freed with MPI_Errhandler_free */
    *errhandler = (MPI_Errhandler)(uintptr_t)eh->obj.handle;
    return MPI_SUCCESS;
}

int cr_mpi_comm_get_errhandler(cr_comm *comm, MPI_Errhandler *errhandler)
{
    return cr_errhandler_get(comm->eo.errh, errhandler);
}

int cr_mpi_errhandler_free(MPI_Errhandler *errhandler)
{
    cr_errhandler *eh = cr_handle_get((uintptr_t)*errhandler, CR_KIND_ERRHANDLER);
    if (!eh)
        return cr_err(MPI_ERR_ERRHANDLER, "errhandler=%#lx is not a valid error handler",
                      (unsigned long)(uintptr_t)*errhandler);
    if (cr_obj_unref(eh))
        cr_obj_free(eh);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int cr_mpi_comm_call_errhandler(cr_comm *comm, int errorcode)
{
    cr_err_raise(&comm->eo, "MPI_Comm_call_errhandler", errorcode);
    return MPI_SUCCESS;
}

int cr_mpi_error_string(int errorcode, char *string, int *resultlen)
{
    if (cr_err_class(errorcode) < 0)
        return cr_err(MPI_ERR_ARG, "errorcode=%d is not a valid error code", errorcode);
    char text[MPI_MAX_ERROR_STRING];
    cr_err_string(errorcode, text, sizeof text);
    *resultlen = cr_strlcpy(string, text, MPI_MAX_ERROR_STRING);
    return MPI_SUCCESS;
}

int cr_mpi_error_class(int errorcode, int *errorclass)
{
    int cls = cr_err_class(errorcode);
    if (cls < 0)
        return cr_err(MPI_ERR_ARG, "errorcode=%d is not a valid error code", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}

int cr_mpi_add_error_class(int *errorclass)
{
    return cr_err_add_class(errorclass);
}

int cr_mpi_add_error_code(int errorclass, int *errorcode)
{
    return cr_err_add_code(errorclass, errorcode);
}

int cr_mpi_add_error_string(int errorcode, const char *string)
{
    if (!string)
        return cr_err(MPI_ERR_ARG, "string is NULL");
    return cr_err_add_string(errorcode, string);
}

int cr_mpi_remove_error_class(int errorclass)
{
    return cr_err_remove(errorclass, 0);
}

int cr_mpi_remove_error_code(int errorcode)
{
    return cr_err_remove(errorcode, 1);
}

int cr_mpi_remove_error_string(int errorcode)
{
    return cr_err_remove(errorcode, 2);
}
