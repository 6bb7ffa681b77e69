/* courier-info: prints Courier's version, how it was built, where it is, and every COURIER_*
 * tunable with its current value, default and help. It is an ordinary MPI_T tool: everything
 * it prints comes through the standard interfaces, so it shows what any tool would see. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
    printf("usage: courier-info [--tunables]\n"
           "\n"
           "Prints Courier MPI's version and build, then every tunable (a COURIER_* environment\n"
           "variable) with its current value, default and meaning. With --tunables, only the\n"
           "tunables, one per line as NAME=VALUE.\n");
}

int main(int argc, char **argv)
{
    int only_tunables = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tunables")) {
            only_tunables = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            return 0;
        } else {
            fprintf(stderr, "courier-info: unknown argument '%s'\n", argv[i]);
            usage();
            return 2;
        }
    }
    if (!only_tunables) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len, major, minor, abi_major, abi_minor;
        MPI_Get_library_version(version, &len);
        MPI_Get_version(&major, &minor);
        MPI_Abi_get_version(&abi_major, &abi_minor);
        printf("%s\n", version);
        printf("  MPI standard:   %d.%d\n", major, minor);
        printf("  ABI:            standard ABI %d.%d, MPI_Aint/MPI_Count/MPI_Offset of %zu/%zu/%zu bytes\n",
               abi_major, abi_minor, sizeof(MPI_Aint), sizeof(MPI_Count), sizeof(MPI_Offset));
        Dl_info where;
        if (dladdr((void *)MPI_Get_library_version, &where) && where.dli_fname)
            printf("  library:        %s\n", where.dli_fname);
        printf("\n");
    }

    int provided, n;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "courier-info: the tool interface did not start (see the message above)\n");
        return 1;
    }
    MPI_T_cvar_get_num(&n);
    if (!only_tunables)
        printf("Tunables (%d): set them in the environment, e.g. COURIER_VERBOSE=1 mpiexec -n 2 ./app\n\n", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024], value[MPI_MAX_INFO_VAL];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope, count;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, desc, &desc_len, &bind, &scope);
        MPI_T_cvar_handle h;
        MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
        if (dt == MPI_CHAR) {
            MPI_T_cvar_read(h, value);
        } else if (dt == MPI_INT) {
            int v;
            MPI_T_cvar_read(h, &v);
            snprintf(value, sizeof value, "%d", v);
        } else {
            MPI_Count v;
            MPI_T_cvar_read(h, &v);
            snprintf(value, sizeof value, "%lld", (long long)v);
        }
        MPI_T_cvar_handle_free(&h);
        if (only_tunables)
            printf("%s=%s\n", name, value);
        else
            printf("  %s = %s\n      %s\n", name, value, desc);
    }
    MPI_T_finalize();
    return 0;
}
