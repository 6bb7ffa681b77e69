/* callbacks.c: the Fortran entry points that take Fortran procedures the C library calls with
 * C conventions (attribute copy and delete functions, generalized requests' functions), and the
 * predefined callbacks Fortran names (MPI_COMM_DUP_FN, ...).
 *
 * Each registration keeps its Fortran procedures and extra_state in a record the C library holds
 * as its extra_state, and a C trampoline calls the Fortran procedure with every argument by
 * reference, the handle as its INTEGER and the value out of its cell (attrs.c). Keyval records live as long as the process (a keyval
 * can be freed while attributes still use it, and C does not say when it is gone); they stay on
 * a list so that they are never lost memory. A generalized request's record dies with it. */
#include "fortran.h"

#include <stdatomic.h>
#include <stdbool.h>

/* ---------------------------------------------------------------- predefined callbacks */
void mpi_comm_null_copy_fn_(cr_fint *oldobj, cr_fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                            cr_fint *flag, cr_fint *ierror)
{
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

void mpi_comm_dup_fn_(cr_fint *oldobj, cr_fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                      cr_fint *flag, cr_fint *ierror)
{
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

void mpi_comm_null_delete_fn_(cr_fint *obj, cr_fint *keyval, MPI_Aint *value, MPI_Aint *extra, cr_fint *ierror)
{
    *ierror = MPI_SUCCESS;
}

/* MPI-1's forms take INTEGER values instead of INTEGER(KIND=MPI_ADDRESS_KIND). */
void mpi_null_copy_fn_(cr_fint *oldobj, cr_fint *keyval, cr_fint *extra, cr_fint *in, cr_fint *out, cr_fint *flag,
                       cr_fint *ierror)
{
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

void mpi_dup_fn_(cr_fint *oldobj, cr_fint *keyval, cr_fint *extra, cr_fint *in, cr_fint *out, cr_fint *flag,
                 cr_fint *ierror)
{
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

void mpi_null_delete_fn_(cr_fint *obj, cr_fint *keyval, cr_fint *value, cr_fint *extra, cr_fint *ierror)
{
    *ierror = MPI_SUCCESS;
}

void mpi_conversion_fn_null_(void)
{
}

/* The type and window forms are the same procedures (the handle is an INTEGER in all). */
extern __typeof__(mpi_comm_null_copy_fn_) mpi_type_null_copy_fn_ __attribute__((alias("mpi_comm_null_copy_fn_")));
extern __typeof__(mpi_comm_null_copy_fn_) mpi_win_null_copy_fn_ __attribute__((alias("mpi_comm_null_copy_fn_")));
extern __typeof__(mpi_comm_dup_fn_) mpi_type_dup_fn_ __attribute__((alias("mpi_comm_dup_fn_")));
extern __typeof__(mpi_comm_dup_fn_) mpi_win_dup_fn_ __attribute__((alias("mpi_comm_dup_fn_")));
extern __typeof__(mpi_comm_null_delete_fn_) mpi_type_null_delete_fn_ __attribute__((alias("mpi_comm_null_delete_fn_")));
extern __typeof__(mpi_comm_null_delete_fn_) mpi_win_null_delete_fn_ __attribute__((alias("mpi_comm_null_delete_fn_")));

/* ---------------------------------------------------------------- keyvals */
typedef void (*cr_f_copy_fn)(cr_fint *, cr_fint *, void *extra, void *in, void *out, cr_fint *flag, cr_fint *ierror);
typedef void (*cr_f_delete_fn)(cr_fint *, cr_fint *, void *value, void *extra, cr_fint *ierror);

typedef struct cr_f_keyval {
    cr_f_copy_fn copy;
    cr_f_delete_fn del;
    MPI_Aint extra;      /* the Fortran extra_state (an INTEGER in MPI_KEYVAL_CREATE's form) */
    bool mpi1;           /* MPI_KEYVAL_CREATE: values and extra_state are default INTEGERs */
    struct cr_f_keyval *next;
} cr_f_keyval;

static _Atomic(cr_f_keyval *) keyvals; /* every record made, never freed (see above) */

static cr_f_keyval *keyval_record(cr_f_procedure copy, cr_f_procedure del, MPI_Aint extra, bool mpi1)
{
    cr_f_keyval *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->copy = (cr_f_copy_fn)copy;
    k->del = (cr_f_delete_fn)del;
    k->extra = extra;
    k->mpi1 = mpi1;
    k->next = atomic_load(&keyvals);
    while (!atomic_compare_exchange_weak(&keyvals, &k->next, k))
        ;
    return k;
}

/* Calls the Fortran copy function for an object whose Fortran handle is `obj`. A value Fortran
 * set is a cell (attrs.c): the function gets what it holds, and a copied value gets a cell of its
 * own. MPI_KEYVAL_CREATE's functions take and give default INTEGERs, stored as the pointer. */
static int keyval_copy(cr_f_keyval *k, cr_fint obj, int keyval, void *in, void *out, int *flag)
{
    cr_fint kv = keyval, f = 0, ierr = MPI_SUCCESS;
    MPI_Aint vin = (MPI_Aint)(intptr_t)in, vout = 0;
    bool cell = cr_f_attr_is_cell(in, &vin);
    if (k->mpi1) {
        cr_fint extra = (cr_fint)k->extra, in32 = (cr_fint)vin, out32 = 0;
        k->copy(&obj, &kv, &extra, &in32, &out32, &f, &ierr);
        vout = out32;
    } else {
        k->copy(&obj, &kv, &k->extra, &vin, &vout, &f, &ierr);
    }
    *flag = f != 0;
    if (f) {
        void *v = cell || !k->mpi1 ? cr_f_attr_cell(vout) : (void *)(intptr_t)vout;
        if (!v)
            return MPI_ERR_NO_MEM;
        *(void **)out = v;
    }
    return ierr;
}

/* Calls the Fortran delete function with the value, then frees the value's cell. */
static int keyval_delete(cr_f_keyval *k, cr_fint obj, int keyval, void *value)
{
    cr_fint kv = keyval, ierr = MPI_SUCCESS;
    MPI_Aint v = (MPI_Aint)(intptr_t)value;
    bool cell = cr_f_attr_is_cell(value, &v);
    if (k->mpi1) {
        cr_fint extra = (cr_fint)k->extra, v32 = (cr_fint)v;
        k->del(&obj, &kv, &v32, &extra, &ierr);
    } else {
        k->del(&obj, &kv, &v, &k->extra, &ierr);
    }
    if (cell)
        cr_f_attr_free(value);
    return ierr;
}

#define TRAMPOLINES(obj, Type, Obj)                                                                \
    static int obj##_copy_trampoline(Type old, int keyval, void *extra, void *in, void *out, int *flag) \
    {                                                                                              \
        return keyval_copy(extra, MPI_##Obj##_toint(old), keyval, in, out, flag);                 \
    }                                                                                              \
    static int obj##_delete_trampoline(Type o, int keyval, void *value, void *extra)               \
    {                                                                                              \
        return keyval_delete(extra, MPI_##Obj##_toint(o), keyval, value);                          \
    }
TRAMPOLINES(comm, MPI_Comm, Comm)
TRAMPOLINES(type, MPI_Datatype, Type)
TRAMPOLINES(win, MPI_Win, Win)

/* The C library always calls the trampolines, even for Fortran's predefined functions (which are
 * real functions above): the trampolines also make and free the cells of the values. */
#define CREATE_KEYVAL(obj, Obj)                                                                    \
    void pmpi_##obj##_create_keyval_(cr_f_procedure copy, cr_f_procedure del, cr_fint *keyval,     \
                                     MPI_Aint *extra, cr_fint *ierror)                             \
    {                                                                                              \
        cr_f_keyval *k = keyval_record(copy, del, *extra, false);                                 \
        if (!k) {                                                                                  \
            cr_f_nomem(ierror);                                                                    \
            return;                                                                                \
        }                                                                                          \
        *ierror = MPI_##Obj##_create_keyval(obj##_copy_trampoline, obj##_delete_trampoline, keyval, k); \
    }                                                                                              \
    extern __typeof__(pmpi_##obj##_create_keyval_) mpi_##obj##_create_keyval_                     \
        __attribute__((weak, alias("pmpi_" #obj "_create_keyval_")));
CREATE_KEYVAL(comm, Comm)
CREATE_KEYVAL(type, Type)
CREATE_KEYVAL(win, Win)

void pmpi_keyval_create_(cr_f_procedure copy, cr_f_procedure del, cr_fint *keyval, cr_fint *extra, cr_fint *ierror)
{
    cr_f_keyval *k = keyval_record(copy, del, *extra, true);
    if (!k) {
        cr_f_nomem(ierror);
        return;
    }
    *ierror = MPI_Comm_create_keyval(comm_copy_trampoline, comm_delete_trampoline, keyval, k);
}
extern __typeof__(pmpi_keyval_create_) mpi_keyval_create_ __attribute__((weak, alias("pmpi_keyval_create_")));

/* ---------------------------------------------------------------- generalized requests */
/* The Fortran functions get the caller's extra_state variable itself, as MPICH passes it: what
 * they store there (a free function counting down, say) is what the program sees. */
typedef struct {
    void (*query)(MPI_Aint *extra, MPI_Status *status, cr_fint *ierror);
    void (*free)(MPI_Aint *extra, cr_fint *ierror);
    void (*cancel)(MPI_Aint *extra, cr_fint *complete, cr_fint *ierror);
    MPI_Aint *extra;
} cr_f_grequest;

static int grequest_query(void *extra, MPI_Status *status)
{
    cr_f_grequest *g = extra;
    cr_fint ierr = MPI_SUCCESS;
    g->query(g->extra, status, &ierr);
    return ierr;
}

/* Called once, when the request is freed or completed and waited for: the record goes with it. */
static int grequest_free(void *extra)
{
    cr_f_grequest *g = extra;
    cr_fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int grequest_cancel(void *extra, int complete)
{
    cr_f_grequest *g = extra;
    cr_fint c = complete != 0, ierr = MPI_SUCCESS;
    g->cancel(g->extra, &c, &ierr);
    return ierr;
}

void pmpi_grequest_start_(cr_f_procedure query, cr_f_procedure freefn, cr_f_procedure cancel, MPI_Aint *extra,
                          cr_fint *request, cr_fint *ierror)
{
    cr_f_grequest *g = malloc(sizeof *g);
    if (!g) {
        cr_f_nomem(ierror);
        return;
    }
    g->query = (__typeof__(g->query))query;
    g->free = (__typeof__(g->free))freefn;
    g->cancel = (__typeof__(g->cancel))cancel;
    g->extra = extra;
    MPI_Request r = MPI_REQUEST_NULL;
    *ierror = MPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, g, &r);
    if (*ierror != MPI_SUCCESS)
        free(g);
    *request = MPI_Request_toint(r);
}
extern __typeof__(pmpi_grequest_start_) mpi_grequest_start_ __attribute__((weak, alias("pmpi_grequest_start_")));
