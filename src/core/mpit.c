/* mpit.c: the tool information interface (MPI_T): Courier's tunables (config.h) as control
 * variables. Every variable is read-only: tunables are read from the environment at start-up.
 * MPI_T calls return their error codes and never invoke error handlers (as MPI requires). */
#include "config.h"
#include "cr_impl.h"
#include "error.h"
#include "thread.h"

#include <stdio.h>
#include <stdlib.h>

static int t_refs; /* MPI_T_init_thread calls not yet matched by MPI_T_finalize */
static char load_error[512];

int cr_mpi_t_init_thread(int required, int *provided)
{
    if (t_refs++ == 0 && cr_config_load(load_error, sizeof load_error)) {
        t_refs = 0;
        fprintf(stderr, "Courier: MPI_T_init_thread: %s\n", load_error);
        return MPI_T_ERR_CANNOT_INIT;
    }
    /* Every level, as MPI_Init_thread grants it: MPI_THREAD_MULTIPLE turns the critical section
     * on (thread.h), which MPI_T calls enter like every other. */
    if (required == MPI_THREAD_MULTIPLE)
        cr_thread_enable();
    bool level = required == MPI_THREAD_SINGLE || required == MPI_THREAD_FUNNELED ||
                 required == MPI_THREAD_SERIALIZED || required == MPI_THREAD_MULTIPLE;
    *provided = level ? required : MPI_THREAD_SINGLE;
    return MPI_SUCCESS;
}

int cr_mpi_t_finalize(void)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    t_refs--;
    return MPI_SUCCESS;
}

static const cr_tunable *cvar(int index, int *err)
{
    int n;
    const cr_tunable *tab = cr_config_table(&n);
    if (t_refs == 0)
        return *err = MPI_T_ERR_NOT_INITIALIZED, NULL;
    if (index < 0 || index >= n)
        return *err = MPI_T_ERR_INVALID_INDEX, NULL;
    *err = MPI_SUCCESS;
    return &tab[index];
}

/* MPI_T strings: copy what fits, report the full length including the terminating NUL. */
static void put_string(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    if (buf && *len > 0)
        cr_strlcpy(buf, s, (size_t)*len);
    *len = (int)strlen(s) + 1;
}

static MPI_Datatype cvar_type(const cr_tunable *t)
{
    switch (t->type) {
    case CR_TUNE_BOOL: return MPI_INT;
    case CR_TUNE_CHOICE: return MPI_CHAR;
    default: return MPI_COUNT;
    }
}

int cr_mpi_t_cvar_get_num(int *num_cvar)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    cr_config_table(num_cvar);
    return MPI_SUCCESS;
}

int cr_mpi_t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                           MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    int err;
    const cr_tunable *t = cvar(cvar_index, &err);
    if (!t)
        return err;
    put_string(t->name, name, name_len);
    char text[1024];
    if (t->type == CR_TUNE_CHOICE)
        snprintf(text, sizeof text, "%s (one of %s; default: %s)", t->help, t->choices, t->dflt);
    else
        snprintf(text, sizeof text, "%s (default: %s)", t->help, t->dflt);
    put_string(text, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (datatype)
        *datatype = cvar_type(t);
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}

int cr_mpi_t_cvar_get_index(const char *name, int *cvar_index)
{
    int n;
    const cr_tunable *tab = cr_config_table(&n);
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < n; i++)
        if (strcmp(tab[i].name, name) == 0)
            return *cvar_index = i, MPI_SUCCESS;
    return MPI_T_ERR_INVALID_NAME;
}

/* A handle is the variable's index plus one (0 is MPI_T_CVAR_HANDLE_NULL). */
int cr_mpi_t_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle; /* no variable is bound to an object */
    int err;
    const cr_tunable *t = cvar(cvar_index, &err);
    if (!t)
        return err;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    *handle = (MPI_T_cvar_handle)(uintptr_t)(cvar_index + 1);
    *count = t->type == CR_TUNE_CHOICE ? MPI_MAX_INFO_VAL : 1;
    return MPI_SUCCESS;
}

int cr_mpi_t_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!handle || *handle == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int cr_mpi_t_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    int err;
    const cr_tunable *t = cvar((int)(uintptr_t)handle - 1, &err);
    if (!t)
        return err == MPI_T_ERR_INVALID_INDEX ? MPI_T_ERR_INVALID_HANDLE : err;
    if (!buf)
        return MPI_T_ERR_INVALID;
    switch (t->type) {
    case CR_TUNE_BOOL: *(int *)buf = (int)*t->var; break;
    case CR_TUNE_CHOICE: cr_config_format(t, buf, MPI_MAX_INFO_VAL); break;
    default: *(MPI_Count *)buf = *t->var; break;
    }
    return MPI_SUCCESS;
}

int cr_mpi_t_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    (void)buf;
    int err;
    if (!cvar((int)(uintptr_t)handle - 1, &err))
        return err == MPI_T_ERR_INVALID_INDEX ? MPI_T_ERR_INVALID_HANDLE : err;
    return MPI_T_ERR_CVAR_SET_NEVER;
}

int cr_mpi_t_pvar_get_num(int *num_pvar)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    *num_pvar = 0;
    return MPI_SUCCESS;
}

int cr_mpi_t_category_get_num(int *num_cat)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    *num_cat = 0;
    return MPI_SUCCESS;
}
