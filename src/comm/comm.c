/* comm.c: the predefined communicators and groups, and the calls about a communicator's
 * size, rank, name and attributes (see comm.h). */
#include "comm.h"

#include "core/attr.h"
#include "core/info.h"
#include "core/runtime.h"
#include "cr_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cr_comm cr_comm_world, cr_comm_self;
cr_group cr_group_empty;

/* Values of the predefined attributes; MPI_Comm_get_attr returns pointers to them. */
static int attr_tag_ub = INT32_MAX;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE;
static int attr_wtime_is_global;
static int attr_universe_size;
static int attr_appnum;
static int attr_lastusedcode;

void cr_comm_setup(void)
{
    cr_pool_setup(CR_KIND_COMM, sizeof(cr_comm));
    cr_pool_setup(CR_KIND_GROUP, sizeof(cr_group));
    cr_handle_predefine(&cr_comm_world.eo.obj, (uintptr_t)MPI_COMM_WORLD, CR_KIND_COMM);
    cr_handle_predefine(&cr_comm_self.eo.obj, (uintptr_t)MPI_COMM_SELF, CR_KIND_COMM);
    cr_handle_predefine(&cr_group_empty.obj, (uintptr_t)MPI_GROUP_EMPTY, CR_KIND_GROUP);
    cr_group_empty.rank = MPI_UNDEFINED;
    cr_comm_world.eo.errh = cr_comm_self.eo.errh = &cr_errh_fatal;
    strcpy(cr_comm_world.name, "MPI_COMM_WORLD");
    strcpy(cr_comm_self.name, "MPI_COMM_SELF");
    cr_err_default_target = &cr_comm_self.eo;
    /* Before MPI_Init, MPI_COMM_SELF is a world of one: it gives error handlers a home. */
    cr_comm_self.size = cr_comm_world.size = 1;
    cr_comm_self.remote_size = cr_comm_world.remote_size = 1;
}

static int self_world_rank;

int cr_comm_init(int world_rank, int world_size)
{
    cr_comm_world.ctx = 0;
    cr_comm_world.rank = world_rank;
    cr_comm_world.size = cr_comm_world.remote_size = world_size;
    cr_comm_world.world_ranks = NULL;
    cr_comm_self.ctx = 2;
    cr_comm_self.rank = 0;
    cr_comm_self.size = cr_comm_self.remote_size = 1;
    self_world_rank = world_rank;
    cr_comm_self.world_ranks = &self_world_rank;
    attr_wtime_is_global = cr_rt.nnodes == 1;
    attr_universe_size = cr_rt.universe_size;
    attr_appnum = cr_rt.appnum;
    return MPI_SUCCESS;
}

int cr_comm_finalize(void)
{
    /* The standard asks that MPI_COMM_SELF's attributes be deleted first, so tools can hook
     * MPI_Finalize with a delete callback. */
    int err = cr_attr_clear(CR_KIND_COMM, &cr_comm_self.attrs, (uintptr_t)MPI_COMM_SELF);
    int err2 = cr_attr_clear(CR_KIND_COMM, &cr_comm_world.attrs, (uintptr_t)MPI_COMM_WORLD);
    return err ? err : err2;
}

int cr_mpi_comm_size(cr_comm *comm, int *size)
{
    *size = comm->size;
    return MPI_SUCCESS;
}

int cr_mpi_comm_rank(cr_comm *comm, int *rank)
{
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int cr_mpi_comm_test_inter(cr_comm *comm, int *flag)
{
    *flag = comm->inter;
    return MPI_SUCCESS;
}

/* A process started by MPI_Comm_spawn would get the intercommunicator to its parents here; Courier
 * starts processes only through its launchers, so every process has none: MPI_COMM_NULL, the
 * standard's answer for a process that was not spawned. mpi4py and the MPICH suite ask at start. */
int cr_mpi_comm_get_parent(MPI_Comm *parent)
{
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int cr_mpi_comm_remote_size(cr_comm *comm, int *size)
{
    if (!comm->inter)
        return cr_err(MPI_ERR_COMM, "comm%s%s is not an intercommunicator", comm->name[0] ? "=" : "", comm->name);
    *size = comm->remote_size;
    return MPI_SUCCESS;
}

int cr_mpi_comm_get_name(cr_comm *comm, char *comm_name, int *resultlen)
{
    *resultlen = cr_strlcpy(comm_name, comm ? comm->name : "MPI_COMM_NULL", MPI_MAX_OBJECT_NAME);
    return MPI_SUCCESS;
}

int cr_mpi_comm_set_name(cr_comm *comm, const char *comm_name)
{
    if (!comm_name)
        return cr_err(MPI_ERR_ARG, "comm_name is NULL");
    if (strlen(comm_name) > MPI_MAX_OBJECT_NAME - 1)
        return cr_err(MPI_ERR_ARG, "comm_name is %zu characters long, more than MPI_MAX_OBJECT_NAME-1 (%d)",
                      strlen(comm_name), MPI_MAX_OBJECT_NAME - 1);
    cr_strlcpy(comm->name, comm_name, sizeof comm->name);
    return MPI_SUCCESS;
}

/* The predefined attributes: served from here, never stored in the list. */
static int *predefined_attr(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: return &attr_tag_ub;
    case MPI_HOST: return &attr_host;
    case MPI_IO: return &attr_io;
    case MPI_WTIME_IS_GLOBAL: return &attr_wtime_is_global;
    case MPI_UNIVERSE_SIZE: return &attr_universe_size;
    case MPI_APPNUM: return &attr_appnum;
    case MPI_LASTUSEDCODE: attr_lastusedcode = cr_err_last_used(); return &attr_lastusedcode;
    default: return NULL;
    }
}

int cr_mpi_comm_get_attr(cr_comm *comm, int comm_keyval, void *attribute_val, int *flag)
{
    int *p = predefined_attr(comm_keyval);
    if (p) {
        *flag = 1;
        memcpy(attribute_val, &p, sizeof p);
        return MPI_SUCCESS;
    }
    void *v = NULL;
    int err = cr_attr_get(CR_KIND_COMM, comm->attrs, comm_keyval, &v, flag);
    if (!err && *flag)
        memcpy(attribute_val, &v, sizeof v);
    return err;
}

int cr_mpi_comm_set_attr(cr_comm *comm, int comm_keyval, void *attribute_val)
{
    if (predefined_attr(comm_keyval))
        return cr_err(MPI_ERR_KEYVAL, "comm_keyval=%d is predefined and cannot be set", comm_keyval);
    return cr_attr_set(CR_KIND_COMM, &comm->attrs, comm->eo.obj.handle, comm_keyval, attribute_val);
}

int cr_mpi_comm_delete_attr(cr_comm *comm, int comm_keyval)
{
    if (predefined_attr(comm_keyval))
        return cr_err(MPI_ERR_KEYVAL, "comm_keyval=%d is predefined and cannot be deleted", comm_keyval);
    return cr_attr_delete(CR_KIND_COMM, &comm->attrs, comm->eo.obj.handle, comm_keyval);
}

int cr_mpi_comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn,
                              int *keyval, void *extra_state)
{
    return cr_keyval_create(CR_KIND_COMM, (void (*)(void))copy_fn, (void (*)(void))delete_fn, extra_state, keyval);
}

int cr_mpi_comm_free_keyval(int *keyval)
{
    if (predefined_attr(*keyval))
        return cr_err(MPI_ERR_KEYVAL, "comm_keyval=%d is predefined and cannot be freed", *keyval);
    return cr_keyval_free(CR_KIND_COMM, keyval);
}

/* The MPI-1 attribute calls (deprecated, still in the ABI): same semantics, older names. */
int cr_mpi_keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
    return cr_mpi_comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

int cr_mpi_keyval_free(int *keyval)
{
    return cr_mpi_comm_free_keyval(keyval);
}

int cr_mpi_attr_put(cr_comm *comm, int keyval, void *attribute_val)
{
    return cr_mpi_comm_set_attr(comm, keyval, attribute_val);
}

int cr_mpi_attr_get(cr_comm *comm, int keyval, void *attribute_val, int *flag)
{
    return cr_mpi_comm_get_attr(comm, keyval, attribute_val, flag);
}

int cr_mpi_attr_delete(cr_comm *comm, int keyval)
{
    return cr_mpi_comm_delete_attr(comm, keyval);
}

/* ----------------------------------------------------------------- info hints */

static const struct {
    const char *key;
    uint8_t bit;
} hint_keys[] = {
    {"mpi_assert_no_any_tag", CR_HINT_NO_ANY_TAG},
    {"mpi_assert_no_any_source", CR_HINT_NO_ANY_SOURCE},
    {"mpi_assert_exact_length", CR_HINT_EXACT_LENGTH},
    {"mpi_assert_allow_overtaking", CR_HINT_ALLOW_OVERTAKING},
    {"mpi_assert_strict_persistent_collective_ordering", CR_HINT_STRICT_PERSISTENT_ORDER},
};

int cr_comm_hints_apply(cr_comm *c, const cr_info *info)
{
    uint8_t set = c->hints_set, on = c->hints; /* all checked before any is applied */
    for (size_t k = 0; info && k < CR_ARRAY_LEN(hint_keys); k++) {
        const char *v = cr_info_find(info, hint_keys[k].key);
        if (!v)
            continue;
        bool yes = strcmp(v, "true") == 0;
        if (!yes && strcmp(v, "false") != 0)
            return cr_err(MPI_ERR_INFO_VALUE, "info key %s has value \"%s\": must be \"true\" or \"false\"",
                          hint_keys[k].key, v);
        set |= hint_keys[k].bit;
        on = (uint8_t)(yes ? on | hint_keys[k].bit : on & ~hint_keys[k].bit);
    }
    c->hints_set = set;
    c->hints = on;
    return MPI_SUCCESS;
}

int cr_mpi_comm_set_info(cr_comm *comm, cr_info *info)
{
    return cr_comm_hints_apply(comm, info);
}

/* The hints in effect: those of the standard that were set (keys Courier ignores are left out,
 * as MPICH does). */
int cr_mpi_comm_get_info(cr_comm *comm, MPI_Info *info_used)
{
    cr_info *out = NULL;
    *info_used = MPI_INFO_NULL;
    int err = cr_info_new(info_used, &out);
    for (size_t k = 0; !err && k < CR_ARRAY_LEN(hint_keys); k++)
        if (comm->hints_set & hint_keys[k].bit)
            err = cr_info_put(out, hint_keys[k].key, comm->hints & hint_keys[k].bit ? "true" : "false");
    if (err && *info_used != MPI_INFO_NULL)
        cr_mpi_info_free(info_used);
    return err;
}
