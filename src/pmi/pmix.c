/* pmix.c: the PMIx client, for launchers that speak only PMIx (Open MPI's mpirun and PRRTE's
 * prterun, Slurm's srun --mpi=pmix). PMIx defines an API, not a wire protocol, and OpenPMIx is
 * its one implementation: so Courier loads the launcher's libpmix at run time (dlopen) and has
 * no link dependency on it. COURIER_PMIX_LIB names the library; else the launcher's own, under
 * the PMIX_PREFIX it sets (lib/, lib64/, or lib/openmpi/ as Open MPI's packages place it: the
 * client of the server's version, which a newer server's messages need); else libpmix.so.2 and
 * libpmix.so, looked up as the dynamic loader does.
 *
 * The few types used here are declared below with the layout of OpenPMIx's pmix_common.h
 * (stable across its 3.x to 5.x series): a process is a 256-byte namespace and a 32-bit rank;
 * a value a 16-bit type then an 8-byte-aligned union; an info a 512-byte key, 32-bit flags and
 * a value. Only single infos are ever passed, so the union's full size does not matter, and
 * values the library returns are read by their type's field, at its fixed offset.
 *
 * Mapping onto pmi.h: a put is PMIx_Put(GLOBAL); a barrier is PMIx_Commit then PMIx_Fence
 * collecting the data; a get asks the process that put the key, which Courier's keys name at
 * their end ("cr-tcp-12": world rank 12) — a key without one is asked of every process.
 * "PMI_process_mapping" is made from each rank's PMIX_NODEID or, where the server gives only
 * its own node's, from each rank's PMIX_HOSTNAME (the launcher's node name). */
#include "backends.h"

#include <dlfcn.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct px_proc {
    char nspace[256];
    uint32_t rank;
} px_proc;

typedef struct px_value {
    uint16_t type;
    union {
        bool flag;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        char *string;
        void *align; /* the union holds pointers: 8-byte aligned, at offset 8 */
    } data;
} px_value;

typedef struct px_info {
    char key[512];
    uint32_t flags;
    px_value value;
} px_info;

enum { PX_BOOL = 1, PX_STRING = 3, PX_UINT16 = 13, PX_UINT32 = 14, PX_GLOBAL = 3 };
#define PX_RANK_WILDCARD (UINT32_MAX - 1)

static struct {
    void *lib;
    int (*init)(px_proc *, px_info *, size_t);
    int (*get)(const px_proc *, const char *, const px_info *, size_t, px_value **);
    int (*put)(uint8_t, const char *, px_value *);
    int (*commit)(void);
    int (*fence)(const px_proc *, size_t, const px_info *, size_t);
    int (*finalize)(const px_info *, size_t);
    int (*abort)(int, const char *, px_proc *, size_t);
    px_proc me;
    int size;
    bool up;
    char *mapping; /* PMI_process_mapping, made at init */
} X;

bool cr_pmix_wanted(void)
{
    const char *ns = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
    return ns && *ns && rank && *rank;
}

/* A value the library allocated: its string (if any) and itself. */
static void value_free(px_value *v)
{
    if (v && v->type == PX_STRING)
        free(v->data.string);
    free(v);
}

/* An unsigned number of `proc` (uint16 or uint32, as servers differ); -1 when missing. */
static long get_number(uint32_t rank, const char *key)
{
    px_proc p = X.me;
    p.rank = rank;
    px_value *v = NULL;
    long r = -1;
    if (X.get(&p, key, NULL, 0, &v) == 0 && v)
        r = v->type == PX_UINT32 ? (long)v->data.u32 : v->type == PX_UINT16 ? (long)v->data.u16 : -1;
    value_free(v);
    return r;
}

/* Each rank's node: its pmix.nodeid where the server gives every rank's (Open MPI's mpirun);
 * else the node name the launcher gives each rank (pmix.hname: srun --mpi=pmix gives node ids
 * of this node's processes only), numbered in order of first appearance. -1 when neither. */
static int node_ids(int *node)
{
    int r = 0;
    while (r < X.size && (node[r] = (int)get_number((uint32_t)r, "pmix.nodeid")) >= 0)
        r++;
    if (r == X.size)
        return 0;
    char **names = calloc((size_t)X.size, sizeof *names);
    if (!names)
        return -1;
    int nnodes = 0, rc = 0;
    for (r = 0; r < X.size && rc == 0; r++) {
        px_proc p = X.me;
        p.rank = (uint32_t)r;
        px_value *v = NULL;
        if (X.get(&p, "pmix.hname", NULL, 0, &v) != 0 || !v || v->type != PX_STRING || !v->data.string) {
            rc = -1;
        } else {
            int k = 0;
            while (k < r && strcmp(names[k], v->data.string) != 0)
                k++;
            node[r] = k < r ? node[k] : nnodes++;
            names[r] = v->data.string;
            v->data.string = NULL; /* kept in names[] */
        }
        value_free(v);
    }
    for (r = 0; r < X.size; r++)
        free(names[r]);
    free(names);
    return rc;
}

/* "(vector,(node,1,ranks),...)": one entry per run of consecutive ranks on one node. */
static char *make_mapping(void)
{
    size_t len = 64 + (size_t)X.size * 24, at = 0;
    char *m = malloc(len);
    int *node = malloc((size_t)X.size * sizeof *node);
    if (!m || !node || node_ids(node) != 0) {
        free(m);
        free(node);
        return NULL; /* no node ids: the runtime compares host names instead */
    }
    at += (size_t)snprintf(m, len, "(vector");
    int run_node = -1, run = 0;
    for (int r = 0; r <= X.size; r++) {
        if (r < X.size && node[r] == run_node) {
            run++;
            continue;
        }
        if (run)
            at += (size_t)snprintf(m + at, len - at, ",(%d,1,%d)", run_node, run);
        if (r < X.size)
            run_node = node[r];
        run = 1;
    }
    snprintf(m + at, len - at, ")");
    free(node);
    return m;
}

#define LOAD(field, name)                                                                                              \
    do {                                                                                                               \
        *(void **)&X.field = dlsym(X.lib, name);                                                                       \
        if (!X.field)                                                                                                  \
            return snprintf(why, whycap, "%s has no %s: not a PMIx library", lib, name), -1;                          \
    } while (0)

int cr_pmix_init(cr_pmi_job *job, char *why, size_t whycap)
{
    const char *prefix = getenv("PMIX_PREFIX");
    char under[3][1024] = {"", "", ""};
    if (prefix && *prefix) {
        snprintf(under[0], sizeof under[0], "%s/lib/libpmix.so.2", prefix);
        snprintf(under[1], sizeof under[1], "%s/lib64/libpmix.so.2", prefix);
        snprintf(under[2], sizeof under[2], "%s/lib/openmpi/libpmix.so.2", prefix);
    }
    const char *names[] = {getenv("COURIER_PMIX_LIB"), under[0], under[1], under[2], "libpmix.so.2", "libpmix.so"};
    const char *lib = NULL;
    char err[512] = "";
    for (size_t i = 0; i < sizeof names / sizeof *names && !X.lib; i++) {
        if (!names[i] || !*names[i])
            continue;
        lib = names[i];
        X.lib = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
        if (!X.lib && (!err[0] || names[i] == names[0])) /* the first failure, or the one asked for */
            snprintf(err, sizeof err, "%s", dlerror());
    }
    if (!X.lib)
        return snprintf(why, whycap,
                        "this process was started by a PMIx launcher (PMIX_NAMESPACE=%s), but no PMIx library "
                        "could be loaded (%s). Install libpmix (Debian: libpmix2), or name it with "
                        "COURIER_PMIX_LIB=/path/to/libpmix.so.2",
                        getenv("PMIX_NAMESPACE"), err),
               -1;
    LOAD(init, "PMIx_Init");
    LOAD(get, "PMIx_Get");
    LOAD(put, "PMIx_Put");
    LOAD(commit, "PMIx_Commit");
    LOAD(fence, "PMIx_Fence");
    LOAD(finalize, "PMIx_Finalize");
    LOAD(abort, "PMIx_Abort");
    int rc = X.init(&X.me, NULL, 0);
    if (rc != 0)
        return snprintf(why, whycap, "PMIx_Init failed (status %d): the PMIx server named by the environment "
                                     "cannot be reached", rc),
               -1;
    X.up = true;
    long size = get_number(PX_RANK_WILDCARD, "pmix.job.size");
    if (size < 1)
        return snprintf(why, whycap, "the PMIx server does not give the job's size (pmix.job.size)"), -1;
    X.size = (int)size;
    long appnum = get_number(X.me.rank, "pmix.appnum"), univ = get_number(PX_RANK_WILDCARD, "pmix.univ.size");
    *job = (cr_pmi_job){.rank = (int)X.me.rank, .size = X.size, .appnum = appnum < 0 ? 0 : (int)appnum,
                        .universe_size = univ < X.size ? X.size : (int)univ};
    X.mapping = make_mapping();
    return 0;
}

bool cr_pmix_connected(void)
{
    return X.up;
}

int cr_pmix_put(const char *key, const char *value)
{
    px_value v = {.type = PX_STRING, .data.string = (char *)value};
    return X.put(PX_GLOBAL, key, &v) == 0 ? 0 : -1;
}

int cr_pmix_get(const char *key, char *value, size_t cap)
{
    if (!strcmp(key, "PMI_process_mapping")) {
        if (!X.mapping || strlen(X.mapping) >= cap)
            return -1;
        memcpy(value, X.mapping, strlen(X.mapping) + 1);
        return 0;
    }
    /* the rank that put it: the number the key ends with */
    size_t n = strlen(key), d = n;
    while (d > 0 && isdigit((unsigned char)key[d - 1]))
        d--;
    px_proc p = X.me;
    p.rank = d < n && d > 0 && key[d - 1] == '-' ? (uint32_t)strtoul(key + d, NULL, 10) : PX_RANK_WILDCARD;
    px_value *v = NULL;
    int rc = X.get(&p, key, NULL, 0, &v) == 0 && v && v->type == PX_STRING && v->data.string &&
                     strlen(v->data.string) < cap
                 ? 0
                 : -1;
    if (rc == 0)
        memcpy(value, v->data.string, strlen(v->data.string) + 1);
    value_free(v);
    return rc;
}

int cr_pmix_barrier(void)
{
    px_info collect = {.key = "pmix.collect", .value = {.type = PX_BOOL, .data.flag = true}};
    if (X.commit() != 0)
        return -1;
    return X.fence(NULL, 0, &collect, 1) == 0 ? 0 : -1;
}

int cr_pmix_finalize(void)
{
    if (!X.up)
        return 0;
    X.up = false;
    free(X.mapping);
    X.mapping = NULL;
    return X.finalize(NULL, 0) == 0 ? 0 : -1;
    /* (the library stays loaded: its threads may still be ending) */
}

void cr_pmix_abort(int exitcode, const char *message)
{
    if (X.up)
        X.abort(exitcode, message ? message : "", NULL, 0);
}
