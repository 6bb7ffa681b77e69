/* info.h: info objects: ordered (key, value) string pairs, and MPI_INFO_ENV. */
#ifndef CR_INFO_H
#define CR_INFO_H

#include "handle.h"

typedef struct cr_info_entry {
    char *key;
    char *value;
} cr_info_entry;

typedef struct cr_info {
    cr_obj obj;
    int n, cap;
    cr_info_entry *entries; /* in insertion order, as MPI_Info_get_nthkey reports them */
} cr_info;

static inline cr_info *cr_info_get(MPI_Info h)
{
    return (cr_info *)cr_handle_get((uintptr_t)h, CR_KIND_INFO);
}

/* Library-internal use (MPI_Abi_get_info, MPI_INFO_ENV): set a key, or find one (NULL if absent). */
int cr_info_put(cr_info *info, const char *key, const char *value);
const char *cr_info_find(const cr_info *info, const char *key);
/* Creates a new info object and returns its handle through *out. */
int cr_info_new(MPI_Info *out, cr_info **obj);

void cr_info_setup(void);
/* Fills MPI_INFO_ENV at MPI_Init. */
void cr_info_env_fill(int argc, char **argv, int maxprocs, const char *host, int thread_level);

#endif
