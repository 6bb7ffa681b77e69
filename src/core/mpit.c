/* mpit.c: the tool information interface (MPI_T): Courier's tunables (config.h) as control
 * variables, its counters (pvar.h) as performance variables, both in categories by layer, and
 * the event calls (no event types are defined yet). Every control variable is
 * read-only: tunables are read from the environment at start-up.
 * MPI_T calls return their error codes and never invoke error handlers (as MPI requires). */
#include "config.h"
#include "pvar.h"
#include "cr_impl.h"
#include "error.h"
#include "thread.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether `index` names one of the n variables of a table, once MPI_T is initialised. */
static int check_index(int index, int n)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return index < 0 || index >= n ? MPI_T_ERR_INVALID_INDEX : MPI_SUCCESS;
}

static const cr_tunable *cvar(int index, int *err)
{
    int n;
    const cr_tunable *tab = cr_config_table(&n);
    return (*err = check_index(index, n)) ? NULL : &tab[index];
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

/* The index of the variable called `name` in a table of n entries of `stride` bytes, each
 * starting with its name (cr_tunable and cr_pvar both do). */
_Static_assert(offsetof(cr_tunable, name) == 0 && offsetof(cr_pvar, name) == 0, "find_name reads names there");

static int find_name(const void *tab, size_t stride, int n, const char *name, int *index)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!name || !index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < n; i++)
        if (strcmp(*(const char *const *)((const char *)tab + (size_t)i * stride), name) == 0)
            return *index = i, MPI_SUCCESS;
    return MPI_T_ERR_INVALID_NAME;
}

int cr_mpi_t_cvar_get_index(const char *name, int *cvar_index)
{
    int n;
    const cr_tunable *tab = cr_config_table(&n);
    return find_name(tab, sizeof *tab, n, name, cvar_index);
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

/* ----------------------------------------------------------------- performance variables */

/* Every performance variable is a counter (pvar.h): continuous (no start or stop: it counts
 * from MPI_Init on), and writable per handle: a handle reads the counter minus a base, which
 * is 0 when the handle is allocated and the counter's value at its last reset (or what makes it
 * read the value written), so sessions never disturb each other or the counter. */

extern const cr_pvar __start_cr_pvars[] __attribute__((weak));
extern const cr_pvar __stop_cr_pvars[] __attribute__((weak));

const cr_pvar *cr_pvar_table(int *count)
{
    *count = __start_cr_pvars ? (int)(__stop_cr_pvars - __start_cr_pvars) : 0;
    return __start_cr_pvars;
}

typedef struct pvar_handle {
    const cr_pvar *var;
    uint64_t base;     /* subtracted from the counter (0, or its value at the last reset) */
    struct pvar_handle *next;
    struct pvar_session *session;
} pvar_handle;

typedef struct pvar_session {
    uint32_t magic;    /* SESSION_MAGIC while it lives: a freed or foreign pointer is refused */
    pvar_handle *handles;
} pvar_session;

#define SESSION_MAGIC 0x70766172u /* "pvar" */

static const cr_pvar *pvar(int index, int *err)
{
    int n;
    const cr_pvar *tab = cr_pvar_table(&n);
    return (*err = check_index(index, n)) ? NULL : &tab[index];
}

int cr_mpi_t_pvar_get_num(int *num_pvar)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    cr_pvar_table(num_pvar);
    return MPI_SUCCESS;
}

int cr_mpi_t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                           MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                           int *readonly, int *continuous, int *atomic)
{
    int err;
    const cr_pvar *v = pvar(pvar_index, &err);
    if (!v)
        return err;
    put_string(v->name, name, name_len);
    put_string(v->help, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_DETAIL;
    if (var_class)
        *var_class = MPI_T_PVAR_CLASS_COUNTER;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = 0;
    if (continuous)
        *continuous = 1;
    if (atomic)
        *atomic = 0;
    return MPI_SUCCESS;
}

int cr_mpi_t_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    int n;
    const cr_pvar *tab = cr_pvar_table(&n);
    int index, err = find_name(tab, sizeof *tab, n, name, &index);
    if (err)
        return err;
    if (var_class != MPI_T_PVAR_CLASS_COUNTER) /* (a name and a class name a variable) */
        return MPI_T_ERR_INVALID_NAME;
    *pvar_index = index;
    return MPI_SUCCESS;
}

static pvar_session *session_of(MPI_T_pvar_session s, int *err)
{
    pvar_session *p = (pvar_session *)s;
    if (t_refs == 0)
        return *err = MPI_T_ERR_NOT_INITIALIZED, NULL;
    if (!p || p->magic != SESSION_MAGIC)
        return *err = MPI_T_ERR_INVALID_SESSION, NULL;
    *err = MPI_SUCCESS;
    return p;
}

int cr_mpi_t_pvar_session_create(MPI_T_pvar_session *pe_session)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!pe_session)
        return MPI_T_ERR_INVALID;
    pvar_session *p = calloc(1, sizeof *p);
    if (!p)
        return MPI_T_ERR_MEMORY;
    p->magic = SESSION_MAGIC;
    *pe_session = (MPI_T_pvar_session)p;
    return MPI_SUCCESS;
}

int cr_mpi_t_pvar_session_free(MPI_T_pvar_session *pe_session)
{
    int err;
    pvar_session *p = pe_session ? session_of(*pe_session, &err) : NULL;
    if (!p)
        return pe_session ? err : MPI_T_ERR_INVALID;
    for (pvar_handle *h = p->handles, *nx; h; h = nx) { /* the session's handles go with it */
        nx = h->next;
        free(h);
    }
    p->magic = 0;
    free(p);
    *pe_session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

int cr_mpi_t_pvar_handle_alloc(MPI_T_pvar_session pe_session, int pvar_index, void *obj_handle,
                               MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle; /* no variable is bound to an object */
    int err;
    pvar_session *p = session_of(pe_session, &err);
    if (!p)
        return err;
    const cr_pvar *v = pvar(pvar_index, &err);
    if (!v)
        return err;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    pvar_handle *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    *h = (pvar_handle){.var = v, .base = 0, .next = p->handles, .session = p}; /* reads all since MPI_Init */
    p->handles = h;
    *handle = (MPI_T_pvar_handle)h;
    *count = 1;
    return MPI_SUCCESS;
}

/* The handle `hd` of session `p` (not MPI_T_PVAR_ALL_HANDLES), or NULL with the error. */
static pvar_handle *handle_of(pvar_session *p, MPI_T_pvar_handle hd, int *err)
{
    for (pvar_handle *h = p->handles; h; h = h->next)
        if ((MPI_T_pvar_handle)h == hd)
            return *err = MPI_SUCCESS, h;
    *err = MPI_T_ERR_INVALID_HANDLE;
    return NULL;
}

int cr_mpi_t_pvar_handle_free(MPI_T_pvar_session pe_session, MPI_T_pvar_handle *handle)
{
    int err;
    pvar_session *p = session_of(pe_session, &err);
    if (!p)
        return err;
    if (!handle)
        return MPI_T_ERR_INVALID;
    pvar_handle *h = handle_of(p, *handle, &err);
    if (!h)
        return err;
    for (pvar_handle **at = &p->handles; *at; at = &(*at)->next)
        if (*at == h) {
            *at = h->next;
            break;
        }
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* Start and stop: every variable is continuous (MPI_T_ERR_PVAR_NO_STARTSTOP), which holds for
 * MPI_T_PVAR_ALL_HANDLES too, since no handle of the session can be started. */
static int start_stop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    int err;
    pvar_session *p = session_of(pe_session, &err);
    if (!p)
        return err;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_SUCCESS;
    return handle_of(p, handle, &err) ? MPI_T_ERR_PVAR_NO_STARTSTOP : err;
}

int cr_mpi_t_pvar_start(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return start_stop(pe_session, handle);
}

int cr_mpi_t_pvar_stop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return start_stop(pe_session, handle);
}

/* MPI_T_PVAR_ALL_HANDLES is for start, stop and reset only. */
static pvar_handle *one_handle(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, int *err)
{
    pvar_session *p = session_of(pe_session, err);
    return p ? handle_of(p, handle, err) : NULL;
}

int cr_mpi_t_pvar_read(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    int err;
    pvar_handle *h = one_handle(pe_session, handle, &err);
    if (!h)
        return err;
    if (!buf)
        return MPI_T_ERR_INVALID;
    unsigned long long v = (unsigned long long)(*h->var->value - h->base);
    memcpy(buf, &v, sizeof v);
    return MPI_SUCCESS;
}

int cr_mpi_t_pvar_write(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, const void *buf)
{
    int err;
    pvar_handle *h = one_handle(pe_session, handle, &err);
    if (!h)
        return err;
    if (!buf)
        return MPI_T_ERR_INVALID;
    unsigned long long v;
    memcpy(&v, buf, sizeof v);
    h->base = *h->var->value - (uint64_t)v; /* reads v now, and counts on from it */
    return MPI_SUCCESS;
}

int cr_mpi_t_pvar_reset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    int err;
    pvar_session *p = session_of(pe_session, &err);
    if (!p)
        return err;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (pvar_handle *h = p->handles; h; h = h->next)
            h->base = *h->var->value;
        return MPI_SUCCESS;
    }
    pvar_handle *h = handle_of(p, handle, &err);
    if (!h)
        return err;
    h->base = *h->var->value;
    return MPI_SUCCESS;
}

int cr_mpi_t_pvar_readreset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    int err = cr_mpi_t_pvar_read(pe_session, handle, buf);
    return err ? err : cr_mpi_t_pvar_reset(pe_session, handle);
}

/* ----------------------------------------------------------------- categories
 *
 * One category per layer of the library that declares variables (the folder under src/ of the
 * file that declares each one: doc/design/layers.md), named after it, holding that layer's
 * control and performance variables in index order; no subcategories. The set is fixed when
 * the library is built, so MPI_T_category_changed always answers 0. */
typedef struct category {
    char name[16];
    const char *desc;
    int ncvars, npvars;
    int *cvars, *pvars; /* indices, ascending */
} category;

static category *cats;
static int ncats = -1; /* -1: not built yet */

static const struct {
    const char *layer, *desc;
} layer_desc[] = {
    {"core", "the process's place in the job, errors, tunables and debugging"},
    {"pmi", "how the process reaches its launcher (PMI-1, PMI-2, PMIx)"},
    {"xport", "the transports: shared memory within a node, TCP between nodes, and waiting"},
    {"req", "requests and the progress engine: how waiting processes spin, yield and sleep"},
    {"dt", "derived datatypes"},
    {"comm", "communicators, groups and topologies"},
    {"pt2pt", "point-to-point protocols: eager limits, the unexpected-message budget"},
    {"coll", "collective operations: the algorithm each collective chooses, and its thresholds"},
    {"rma", "one-sided communication"},
    {"runtime", "start-up and shut-down"},
    {"binding", "the entry points"},
};

/* The layer of a variable declared in `file`: the folder after the last "src/" ("other" when
 * there is none). */
static void layer_of(const char *file, char *out, size_t cap)
{
    const char *at = NULL;
    for (const char *p = file; p && (p = strstr(p, "src/")); p += 4)
        if (p == file || p[-1] == '/')
            at = p + 4;
    size_t n = 0;
    if (at)
        while (at[n] && at[n] != '/' && n + 1 < cap)
            n++;
    if (!at || !at[n])
        cr_strlcpy(out, "other", cap);
    else
        memcpy(out, at, n), out[n] = 0;
}

static int category_of(const char *file)
{
    char layer[16];
    layer_of(file, layer, sizeof layer);
    for (int c = 0; c < ncats; c++)
        if (!strcmp(cats[c].name, layer))
            return c;
    category *k = &cats[ncats];
    cr_strlcpy(k->name, layer, sizeof k->name);
    k->desc = "variables of the library's other parts";
    for (size_t i = 0; i < sizeof layer_desc / sizeof layer_desc[0]; i++)
        if (!strcmp(layer_desc[i].layer, layer))
            k->desc = layer_desc[i].desc;
    return ncats++;
}

/* Builds the categories once; MPI_T_ERR_MEMORY when out of memory (tried again next call). */
static int categories(void)
{
    if (ncats >= 0)
        return MPI_SUCCESS;
    int nc, np;
    const cr_tunable *ct = cr_config_table(&nc);
    const cr_pvar *pt = cr_pvar_table(&np);
    int *of_c = malloc((size_t)(nc + 1) * sizeof(int)), *of_p = malloc((size_t)(np + 1) * sizeof(int));
    int *idx = malloc((size_t)(nc + np + 1) * sizeof(int));
    cats = calloc((size_t)(nc + np + 1), sizeof *cats);
    if (!of_c || !of_p || !idx || !cats) {
        free(of_c), free(of_p), free(idx), free(cats);
        cats = NULL;
        return MPI_T_ERR_MEMORY;
    }
    ncats = 0;
    for (int i = 0; i < nc; i++)
        cats[of_c[i] = category_of(ct[i].file)].ncvars++;
    for (int i = 0; i < np; i++)
        cats[of_p[i] = category_of(pt[i].file)].npvars++;
    /* one array for all the lists: each category's cvars, then its pvars */
    int at = 0;
    for (int c = 0; c < ncats; c++) {
        cats[c].cvars = idx + at;
        at += cats[c].ncvars;
        cats[c].pvars = idx + at;
        at += cats[c].npvars;
        cats[c].ncvars = cats[c].npvars = 0;
    }
    for (int i = 0; i < nc; i++)
        cats[of_c[i]].cvars[cats[of_c[i]].ncvars++] = i;
    for (int i = 0; i < np; i++)
        cats[of_p[i]].pvars[cats[of_p[i]].npvars++] = i;
    free(of_c), free(of_p);
    return MPI_SUCCESS;
}

static const category *category_at(int index, int *err)
{
    if (t_refs == 0)
        return *err = MPI_T_ERR_NOT_INITIALIZED, NULL;
    if ((*err = categories()))
        return NULL;
    if (index < 0 || index >= ncats)
        return *err = MPI_T_ERR_INVALID_INDEX, NULL;
    return &cats[index];
}

int cr_mpi_t_category_get_num(int *num_cat)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    int err = categories();
    if (!err)
        *num_cat = ncats;
    return err;
}

int cr_mpi_t_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                               int *num_pvars, int *num_categories)
{
    int err;
    const category *k = category_at(cat_index, &err);
    if (!k)
        return err;
    put_string(k->name, name, name_len);
    put_string(k->desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = k->ncvars;
    if (num_pvars)
        *num_pvars = k->npvars;
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}

int cr_mpi_t_category_get_num_events(int cat_index, int *num_events)
{
    int err;
    const category *k = category_at(cat_index, &err);
    if (!k)
        return err;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0; /* Courier has no MPI_T events */
    return MPI_SUCCESS;
}

int cr_mpi_t_category_get_index(const char *name, int *cat_index)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    int err = categories();
    if (err)
        return err;
    for (int c = 0; c < ncats; c++)
        if (!strcmp(cats[c].name, name))
            return *cat_index = c, MPI_SUCCESS;
    return MPI_T_ERR_INVALID_NAME;
}

/* The first `len` of a category's `n` indices. */
static int put_indices(const category *k, const int *list, int n, int len, int indices[], int err)
{
    if (!k)
        return err;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < n && i < len; i++)
        indices[i] = list[i];
    return MPI_SUCCESS;
}

int cr_mpi_t_category_get_cvars(int cat_index, int len, int indices[])
{
    int err;
    const category *k = category_at(cat_index, &err);
    return put_indices(k, k ? k->cvars : NULL, k ? k->ncvars : 0, len, indices, err);
}

int cr_mpi_t_category_get_pvars(int cat_index, int len, int indices[])
{
    int err;
    const category *k = category_at(cat_index, &err);
    return put_indices(k, k ? k->pvars : NULL, k ? k->npvars : 0, len, indices, err);
}

int cr_mpi_t_category_get_categories(int cat_index, int len, int indices[])
{
    int err;
    const category *k = category_at(cat_index, &err);
    return put_indices(k, NULL, 0, len, indices, err);
}

int cr_mpi_t_category_get_events(int cat_index, int len, int indices[])
{
    int err;
    const category *k = category_at(cat_index, &err);
    return put_indices(k, NULL, 0, len, indices, err);
}

int cr_mpi_t_category_changed(int *update_number)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0; /* the categories never change */
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- events
 *
 * Courier defines no event types yet (and so no event sources): the number of each is 0, no
 * name or index names one, and no registration or instance can exist, so every call that takes
 * one answers MPI_T_ERR_INVALID_HANDLE. */
static int no_events(void)
{
    return t_refs == 0 ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID_INDEX;
}

int cr_mpi_t_event_get_num(int *num_events)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

int cr_mpi_t_event_get_index(const char *name, int *event_index)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    return !name || !event_index ? MPI_T_ERR_INVALID : MPI_T_ERR_INVALID_NAME;
}

int cr_mpi_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                            MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[], int *num_elements,
                            MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc, (void)desc_len;
    (void)bind;
    return no_events();
}

int cr_mpi_t_event_handle_alloc(int event_index, void *obj_handle, cr_info *info,
                                MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    return no_events();
}

int cr_mpi_t_source_get_num(int *num_sources)
{
    if (t_refs == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 0;
    return MPI_SUCCESS;
}

int cr_mpi_t_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                             MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                             MPI_Info *info)
{
    (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len, (void)ordering;
    (void)ticks_per_second, (void)max_ticks, (void)info;
    return no_events();
}

int cr_mpi_t_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    (void)source_index, (void)timestamp;
    return no_events();
}

static int no_handle(void)
{
    return t_refs == 0 ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID_HANDLE;
}

int cr_mpi_t_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                               MPI_T_event_free_cb_function free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    return no_handle();
}

int cr_mpi_t_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    return no_handle();
}

int cr_mpi_t_event_handle_set_info(MPI_T_event_registration event_registration, cr_info *info)
{
    (void)event_registration, (void)info;
    return no_handle();
}

int cr_mpi_t_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                     cr_info *info, void *user_data, MPI_T_event_cb_function event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data, (void)event_cb_function;
    return no_handle();
}

int cr_mpi_t_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                     MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    return no_handle();
}

int cr_mpi_t_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                     cr_info *info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    return no_handle();
}

int cr_mpi_t_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                       MPI_T_event_dropped_cb_function dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    return no_handle();
}

int cr_mpi_t_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    return no_handle();
}

int cr_mpi_t_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    return no_handle();
}

int cr_mpi_t_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    return no_handle();
}

int cr_mpi_t_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    return no_handle();
}
