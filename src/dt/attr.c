/* attr.c: attributes cached on datatypes: their keyvals, and set/get/delete. Copying them on
 * MPI_Type_dup and deleting them on MPI_Type_free happen in derived.c, which calls
 * cr_dtype_attrs_copy and cr_dtype_attrs_clear. */
#include "dtype.h"

#include "core/attr.h"
#include "core/error.h"
#include "cr_impl.h"

int cr_mpi_type_create_keyval(MPI_Type_copy_attr_function *copy_fn, MPI_Type_delete_attr_function *delete_fn,
                              int *keyval, void *extra_state)
{
    return cr_keyval_create(CR_KIND_DATATYPE, (void (*)(void))copy_fn, (void (*)(void))delete_fn, extra_state,
                            keyval);
}

int cr_mpi_type_free_keyval(int *keyval)
{
    return cr_keyval_free(CR_KIND_DATATYPE, keyval);
}

int cr_mpi_type_set_attr(cr_dtype *dt, int keyval, void *value)
{
    return cr_attr_set(CR_KIND_DATATYPE, &dt->attrs, dt->obj.handle, keyval, value);
}

int cr_mpi_type_get_attr(cr_dtype *dt, int keyval, void *value, int *flag)
{
    void *v = NULL;
    int err = cr_attr_get(CR_KIND_DATATYPE, dt->attrs, keyval, &v, flag);
    if (!err && *flag)
        memcpy(value, &v, sizeof v); /* attribute_val is a void ** passed as void * */
    return err;
}

int cr_mpi_type_delete_attr(cr_dtype *dt, int keyval)
{
    return cr_attr_delete(CR_KIND_DATATYPE, &dt->attrs, dt->obj.handle, keyval);
}

int cr_dtype_attrs_copy(const cr_dtype *from, cr_dtype *to)
{
    return from->attrs ? cr_attr_copy(CR_KIND_DATATYPE, from->attrs, from->obj.handle, &to->attrs) : MPI_SUCCESS;
}

int cr_dtype_attrs_clear(cr_dtype *dt)
{
    return dt->attrs ? cr_attr_clear(CR_KIND_DATATYPE, &dt->attrs, dt->obj.handle) : MPI_SUCCESS;
}
