/* info.c: info objects and the MPI_Info_* calls (see info.h). */
#include "info.h"

#include "cr_impl.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static cr_info info_env;

void cr_info_setup(void)
{
    cr_pool_setup(CR_KIND_INFO, sizeof(cr_info));
    cr_handle_predefine(&info_env.obj, (uintptr_t)MPI_INFO_ENV, CR_KIND_INFO);
}

static cr_info_entry *find(const cr_info *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->entries[i].key, key) == 0)
            return &info->entries[i];
    return NULL;
}

const char *cr_info_find(const cr_info *info, const char *key)
{
    cr_info_entry *e = find(info, key);
    return e ? e->value : NULL;
}

int cr_info_put(cr_info *info, const char *key, const char *value)
{
    cr_info_entry *e = find(info, key);
    char *v = strdup(value);
    if (!v)
        return cr_err(MPI_ERR_NO_MEM, "out of memory storing info value");
    if (e) {
        free(e->value);
        e->value = v;
        return MPI_SUCCESS;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? info->cap * 2 : 8;
        cr_info_entry *grown = realloc(info->entries, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(v);
            return cr_err(MPI_ERR_NO_MEM, "out of memory growing an info object");
        }
        info->entries = grown;
        info->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return cr_err(MPI_ERR_NO_MEM, "out of memory storing info key");
    }
    info->entries[info->n++] = (cr_info_entry){k, v};
    return MPI_SUCCESS;
}

static void clear(cr_info *info)
{
    for (int i = 0; i < info->n; i++) {
        free(info->entries[i].key);
        free(info->entries[i].value);
    }
    free(info->entries);
    info->entries = NULL;
    info->n = info->cap = 0;
}

int cr_info_new(MPI_Info *out, cr_info **obj)
{
    cr_info *info = cr_obj_alloc(CR_KIND_INFO);
    if (!info)
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating an info object");
    *out = (MPI_Info)(uintptr_t)info->obj.handle;
    if (obj)
        *obj = info;
    return MPI_SUCCESS;
}

static int check_key(const char *key)
{
    if (!key)
        return cr_err(MPI_ERR_INFO_KEY, "key is NULL");
    size_t n = strlen(key);
    if (n == 0)
        return cr_err(MPI_ERR_INFO_KEY, "key is the empty string");
    if (n > MPI_MAX_INFO_KEY - 1)
        return cr_err(MPI_ERR_INFO_KEY, "key \"%.40s...\" is %zu characters long, more than MPI_MAX_INFO_KEY-1 (%d)",
                      key, n, MPI_MAX_INFO_KEY - 1);
    return MPI_SUCCESS;
}

int cr_mpi_info_create(MPI_Info *info)
{
    return cr_info_new(info, NULL);
}

int cr_mpi_info_set(cr_info *info, const char *key, const char *value)
{
    int err = check_key(key);
    if (err)
        return err;
    if (!value)
        return cr_err(MPI_ERR_INFO_VALUE, "value for key \"%s\" is NULL", key);
    if (strlen(value) > MPI_MAX_INFO_VAL - 1)
        return cr_err(MPI_ERR_INFO_VALUE, "value for key \"%s\" is %zu characters long, more than MPI_MAX_INFO_VAL-1 (%d)",
                      key, strlen(value), MPI_MAX_INFO_VAL - 1);
    if (info == &info_env)
        return cr_err(MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed");
    return cr_info_put(info, key, value);
}

int cr_mpi_info_delete(cr_info *info, const char *key)
{
    int err = check_key(key);
    if (err)
        return err;
    if (info == &info_env)
        return cr_err(MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed");
    cr_info_entry *e = find(info, key);
    if (!e)
        return cr_err(MPI_ERR_INFO_NOKEY, "key \"%s\" is not in the info object", key);
    free(e->key);
    free(e->value);
    memmove(e, e + 1, (size_t)(info->entries + info->n - (e + 1)) * sizeof *e);
    info->n--;
    return MPI_SUCCESS;
}

int cr_mpi_info_get(cr_info *info, const char *key, int valuelen, char *value, int *flag)
{
    int err = check_key(key);
    if (err)
        return err;
    if (valuelen < 0)
        return cr_err(MPI_ERR_ARG, "valuelen=%d must not be negative", valuelen);
    const char *v = cr_info_find(info, key);
    *flag = v != NULL;
    if (v) {
        /* MPI_Info_get's valuelen excludes the terminating NUL. */
        size_t n = CR_MIN(strlen(v), (size_t)valuelen);
        memcpy(value, v, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

int cr_mpi_info_get_string(cr_info *info, const char *key, int *buflen, char *value, int *flag)
{
    int err = check_key(key);
    if (err)
        return err;
    const char *v = cr_info_find(info, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    int need = (int)strlen(v) + 1;
    if (*buflen > 0)
        cr_strlcpy(value, v, (size_t)*buflen);
    *buflen = need;
    return MPI_SUCCESS;
}

int cr_mpi_info_get_valuelen(cr_info *info, const char *key, int *valuelen, int *flag)
{
    int err = check_key(key);
    if (err)
        return err;
    const char *v = cr_info_find(info, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

int cr_mpi_info_get_nkeys(cr_info *info, int *nkeys)
{
    *nkeys = info->n;
    return MPI_SUCCESS;
}

int cr_mpi_info_get_nthkey(cr_info *info, int n, char *key)
{
    if (n < 0 || n >= info->n)
        return cr_err(MPI_ERR_ARG, "n=%d is not in 0..%d (the info object has %d keys)", n, info->n - 1, info->n);
    cr_strlcpy(key, info->entries[n].key, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

int cr_mpi_info_dup(cr_info *info, MPI_Info *newinfo)
{
    cr_info *copy = NULL;
    MPI_Info h = MPI_INFO_NULL;
    int err = cr_info_new(&h, &copy);
    if (err)
        return err;
    for (int i = 0; !err && i < info->n; i++)
        err = cr_info_put(copy, info->entries[i].key, info->entries[i].value);
    if (err) {
        clear(copy);
        cr_obj_free(copy);
        return err;
    }
    *newinfo = h;
    return MPI_SUCCESS;
}

int cr_mpi_info_free(MPI_Info *h)
{
    cr_info *info = cr_info_get(*h);
    if (!info || info->obj.predefined)
        return cr_err(MPI_ERR_INFO, "info=%s is not an info object that can be freed",
                      *h == MPI_INFO_NULL ? "MPI_INFO_NULL" : *h == MPI_INFO_ENV ? "MPI_INFO_ENV" : "(invalid)");
    clear(info);
    cr_obj_free(info);
    *h = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

static void fill_env(cr_info *info, int argc, char **argv, int maxprocs, const char *host, int thread_level)
{
    char buf[MPI_MAX_INFO_VAL];
    if (argc > 0 && argv && argv[0])
        cr_info_put(info, "command", argv[0]);
    if (argc > 1 && argv) {
        size_t len = 0;
        buf[0] = '\0';
        for (int i = 1; i < argc && argv[i]; i++)
            len += (size_t)snprintf(buf + len, len < sizeof buf ? sizeof buf - len : 0, "%s%s", i > 1 ? " " : "", argv[i]);
        cr_info_put(info, "argv", buf);
    }
    if (maxprocs > 0) {
        snprintf(buf, sizeof buf, "%d", maxprocs);
        cr_info_put(info, "maxprocs", buf);
    }
    if (host)
        cr_info_put(info, "host", host);
    if (getcwd(buf, sizeof buf))
        cr_info_put(info, "wdir", buf);
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                         "MPI_THREAD_MULTIPLE"};
    /* The ABI's levels are 0, 1024, 2048 and 4096. */
    int level = thread_level == MPI_THREAD_MULTIPLE     ? 3
                : thread_level == MPI_THREAD_SERIALIZED ? 2
                : thread_level == MPI_THREAD_FUNNELED   ? 1
                : thread_level == MPI_THREAD_SINGLE     ? 0
                                                        : -1;
    if (level >= 0)
        cr_info_put(info, "thread_level", levels[level]);
}

void cr_info_env_fill(int argc, char **argv, int maxprocs, const char *host, int thread_level)
{
    clear(&info_env);
    fill_env(&info_env, argc, argv, maxprocs, host, thread_level);
}

int cr_mpi_info_create_env(int argc, char *argv[], MPI_Info *out)
{
    cr_info *info = NULL;
    int err = cr_info_new(out, &info);
    if (err)
        return err;
    fill_env(info, argc, argv, 0, NULL, -1);
    return MPI_SUCCESS;
}
