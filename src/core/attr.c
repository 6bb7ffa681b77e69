/* attr.c: keyvals and cached attributes (see attr.h). */
#include "attr.h"

#include "core/error.h"

#include <stdlib.h>

typedef int copy_fn_t(uintptr_t oldobj, int keyval, void *extra, void *in, void *out, int *flag);
typedef int delete_fn_t(uintptr_t obj, int keyval, void *value, void *extra);

typedef struct keyval {
    uint8_t kind;    /* CR_KIND_FREE when the slot is unused */
    bool freed;      /* the user freed it; kept while attributes remain */
    int uses;        /* attributes stored under it */
    void (*copy_fn)(void);
    void (*delete_fn)(void);
    void *extra;
} keyval;

static keyval *keyvals;
static int nkeyvals;

static keyval *kv_get(cr_kind kind, int k)
{
    if (k < CR_KEYVAL_FIRST || k >= CR_KEYVAL_FIRST + nkeyvals)
        return NULL;
    keyval *kv = &keyvals[k - CR_KEYVAL_FIRST];
    return kv->kind == kind && !kv->freed ? kv : NULL;
}

/* A keyval the user freed lives on while attributes are stored under it (MPI 4.1 section 7.7.2:
 * "the actual free does not transpire until after all references to the key have been freed"):
 * those attributes can still be read and deleted through it. */
static keyval *kv_get_in_use(cr_kind kind, int k)
{
    if (k < CR_KEYVAL_FIRST || k >= CR_KEYVAL_FIRST + nkeyvals)
        return NULL;
    keyval *kv = &keyvals[k - CR_KEYVAL_FIRST];
    return kv->kind == kind && (!kv->freed || kv->uses > 0) ? kv : NULL;
}

static const char *kind_word(cr_kind kind)
{
    return kind == CR_KIND_COMM ? "communicator" : kind == CR_KIND_DATATYPE ? "datatype" : "window";
}

int cr_keyval_create(cr_kind kind, void (*copy_fn)(void), void (*delete_fn)(void), void *extra, int *out)
{
    int i;
    for (i = 0; i < nkeyvals; i++)
        if (keyvals[i].kind == CR_KIND_FREE)
            break;
    if (i == nkeyvals) {
        keyval *grown = realloc(keyvals, (size_t)(nkeyvals + 16) * sizeof *grown);
        if (!grown)
            return cr_err(MPI_ERR_NO_MEM, "out of memory creating a keyval");
        memset(grown + nkeyvals, 0, 16 * sizeof *grown);
        keyvals = grown;
        nkeyvals += 16;
    }
    keyvals[i] = (keyval){.kind = (uint8_t)kind, .copy_fn = copy_fn, .delete_fn = delete_fn, .extra = extra};
    *out = CR_KEYVAL_FIRST + i;
    return MPI_SUCCESS;
}

static void kv_release(keyval *kv)
{
    if (kv->freed && kv->uses == 0)
        kv->kind = CR_KIND_FREE;
}

int cr_keyval_free(cr_kind kind, int *k)
{
    keyval *kv = kv_get(kind, *k);
    if (!kv)
        return cr_err(MPI_ERR_KEYVAL, "keyval=%d is not a %s keyval that can be freed", *k, kind_word(kind));
    kv->freed = true;
    kv_release(kv);
    *k = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static cr_attr **find(cr_attr **list, int k)
{
    for (; *list; list = &(*list)->next)
        if ((*list)->keyval == k)
            return list;
    return NULL;
}

static int run_delete(keyval *kv, uintptr_t handle, int k, void *value)
{
    if (!kv->delete_fn)
        return MPI_SUCCESS;
    int rc = ((delete_fn_t *)kv->delete_fn)(handle, k, value, kv->extra);
    if (rc != MPI_SUCCESS)
        return cr_err(cr_err_class(rc) > 0 ? cr_err_class(rc) : MPI_ERR_OTHER,
                      "the attribute delete callback of keyval %d returned error %d", k, rc);
    return MPI_SUCCESS;
}

static keyval *kv_any(int k)
{
    return &keyvals[k - CR_KEYVAL_FIRST];
}

int cr_attr_set(cr_kind kind, cr_attr **list, uintptr_t handle, int k, void *value)
{
    keyval *kv = kv_get(kind, k);
    if (!kv)
        return cr_err(MPI_ERR_KEYVAL, "keyval=%d is not a valid %s keyval", k, kind_word(kind));
    cr_attr **at = find(list, k);
    if (at) {
        int err = run_delete(kv, handle, k, (*at)->value);
        if (err)
            return err;
        (*at)->value = value;
        return MPI_SUCCESS;
    }
    cr_attr *a = malloc(sizeof *a);
    if (!a)
        return cr_err(MPI_ERR_NO_MEM, "out of memory storing an attribute");
    *a = (cr_attr){.next = *list, .keyval = k, .value = value};
    *list = a;
    kv->uses++;
    return MPI_SUCCESS;
}

int cr_attr_get(cr_kind kind, cr_attr *list, int k, void **value, int *flag)
{
    if (!kv_get_in_use(kind, k))
        return cr_err(MPI_ERR_KEYVAL, "keyval=%d is not a valid %s keyval", k, kind_word(kind));
    cr_attr **at = find(&list, k);
    *flag = at != NULL;
    if (at)
        *value = (*at)->value;
    return MPI_SUCCESS;
}

int cr_attr_delete(cr_kind kind, cr_attr **list, uintptr_t handle, int k)
{
    keyval *kv = kv_get_in_use(kind, k);
    if (!kv)
        return cr_err(MPI_ERR_KEYVAL, "keyval=%d is not a valid %s keyval", k, kind_word(kind));
    cr_attr **at = find(list, k);
    if (!at)
        return cr_err(MPI_ERR_KEYVAL, "no attribute is stored under keyval=%d", k);
    int err = run_delete(kv, handle, k, (*at)->value);
    if (err)
        return err;
    cr_attr *a = *at;
    *at = a->next;
    free(a);
    kv->uses--;
    kv_release(kv);
    return MPI_SUCCESS;
}

int cr_attr_copy(cr_kind kind, cr_attr *src, uintptr_t src_handle, cr_attr **dst)
{
    *dst = NULL;
    for (cr_attr *a = src; a; a = a->next) {
        keyval *kv = kv_any(a->keyval);
        void *out = NULL;
        int flag = 0;
        if (kv->copy_fn == (void (*)(void))1) { /* MPI_*_DUP_FN */
            out = a->value;
            flag = 1;
        } else if (kv->copy_fn) {
            int rc = ((copy_fn_t *)kv->copy_fn)(src_handle, a->keyval, kv->extra, a->value, &out, &flag);
            if (rc != MPI_SUCCESS) {
                cr_attr_clear(kind, dst, 0);
                return cr_err(cr_err_class(rc) > 0 ? cr_err_class(rc) : MPI_ERR_OTHER,
                              "the attribute copy callback of keyval %d returned error %d", a->keyval, rc);
            }
        }
        if (!flag)
            continue;
        cr_attr *c = malloc(sizeof *c);
        if (!c) {
            cr_attr_clear(kind, dst, 0);
            return cr_err(MPI_ERR_NO_MEM, "out of memory copying attributes");
        }
        *c = (cr_attr){.next = *dst, .keyval = a->keyval, .value = out};
        *dst = c;
        kv->uses++;
    }
    return MPI_SUCCESS;
}

int cr_attr_clear(cr_kind kind, cr_attr **list, uintptr_t handle)
{
    (void)kind;
    int first_err = MPI_SUCCESS;
    while (*list) {
        cr_attr *a = *list;
        keyval *kv = kv_any(a->keyval);
        int err = handle ? run_delete(kv, handle, a->keyval, a->value) : MPI_SUCCESS;
        if (err && !first_err)
            first_err = err;
        *list = a->next;
        free(a);
        kv->uses--;
        kv_release(kv);
    }
    return first_err;
}
