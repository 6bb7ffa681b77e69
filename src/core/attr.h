/* attr.h: attribute caching: keyvals and the attributes stored under them on communicators,
 * datatypes and windows, with their copy and delete callbacks.
 *
 * Keyvals are small integers. The predefined ones (MPI_TAG_UB, MPI_WIN_BASE, ...) are served by
 * the object's layer through a lookup hook; user keyvals count up from CR_KEYVAL_FIRST. A keyval
 * freed while attributes still use it stays alive until the last attribute goes (as MPI asks). */
#ifndef CR_ATTR_H
#define CR_ATTR_H

#include "core/handle.h"

#define CR_KEYVAL_FIRST 1024

typedef struct cr_attr {
    struct cr_attr *next;
    int keyval;
    void *value;
} cr_attr;

/* Creates a keyval for objects of `kind`. copy_fn/delete_fn are the user's callbacks with the
 * shape of MPI_Comm_copy_attr_function/MPI_Comm_delete_attr_function (all kinds share it);
 * the ABI's MPI_*_NULL_COPY_FN is 0 and MPI_*_DUP_FN is 1. */
int cr_keyval_create(cr_kind kind, void (*copy_fn)(void), void (*delete_fn)(void), void *extra, int *keyval);
int cr_keyval_free(cr_kind kind, int *keyval);

/* `handle` is the object's user handle, passed to callbacks. */
int cr_attr_set(cr_kind kind, cr_attr **list, uintptr_t handle, int keyval, void *value);
int cr_attr_get(cr_kind kind, cr_attr *list, int keyval, void **value, int *flag);
int cr_attr_delete(cr_kind kind, cr_attr **list, uintptr_t handle, int keyval);
/* Copies attributes for a duplicated object (dup semantics); on error `dst` holds none. */
int cr_attr_copy(cr_kind kind, cr_attr *src, uintptr_t src_handle, cr_attr **dst);
/* Deletes every attribute, running delete callbacks (object free and MPI_Finalize). */
int cr_attr_clear(cr_kind kind, cr_attr **list, uintptr_t handle);

#endif
