/* Start-up and environment queries: MPI_Init/Finalize state, versions, processor name, timers,
 * memory, thread levels, the parent (none) and the predefined attributes of MPI_COMM_WORLD. */
#include "mpitest.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    int flag, rank, size;
    MPI_Initialized(&flag);
    CHECK(flag == 0, "MPI_Initialized before MPI_Init gave %d", flag);
    MPI_Finalized(&flag);
    CHECK(flag == 0, "MPI_Finalized before MPI_Init gave %d", flag);
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    CHECK(provided == MPI_THREAD_FUNNELED, "asked FUNNELED, provided %d", provided);
    MPI_Query_thread(&flag);
    CHECK(flag == provided, "MPI_Query_thread %d != provided %d", flag, provided);
    MPI_Is_thread_main(&flag);
    CHECK(flag == 1, "the thread that called MPI_Init is not main");
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized after MPI_Init gave %d", flag);

    /* A process its launcher started (not MPI_Comm_spawn) has no parent. */
    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_get_parent(&parent), MPI_SUCCESS);
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent gave %p, not MPI_COMM_NULL", (void *)parent);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int expected = argc > 1 ? atoi(argv[1]) : size;
    CHECK(size == expected, "world size %d, expected %d", size, expected);
    CHECK(rank >= 0 && rank < size, "rank %d out of 0..%d", rank, size - 1);
    MPI_Comm_rank(MPI_COMM_SELF, &rank);
    MPI_Comm_size(MPI_COMM_SELF, &size);
    CHECK(rank == 0 && size == 1, "MPI_COMM_SELF has rank %d size %d", rank, size);

    int version, subversion;
    MPI_Get_version(&version, &subversion);
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION, "version %d.%d", version, subversion);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    CHECK(strstr(lib, "Courier") != NULL && len == (int)strlen(lib), "library version \"%s\" len %d", lib, len);

    char name[MPI_MAX_PROCESSOR_NAME], host[256];
    MPI_Get_processor_name(name, &len);
    gethostname(host, sizeof host);
    CHECK(strcmp(name, host) == 0 && len == (int)strlen(name), "processor name \"%s\", host \"%s\"", name, host);

    double t0 = MPI_Wtime(), tick = MPI_Wtick();
    usleep(2000);
    double t1 = MPI_Wtime();
    CHECK(t1 - t0 >= 0.0019 && t1 - t0 < 5, "2 ms of sleep measured as %g s", t1 - t0);
    CHECK(tick > 0 && tick <= 1e-6, "MPI_Wtick %g is not a nanosecond-class clock", tick);

    void *mem = NULL;
    CHECK_CLASS(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem), MPI_SUCCESS);
    CHECK(mem != NULL && ((uintptr_t)mem & 63) == 0, "MPI_Alloc_mem gave %p", mem);
    memset(mem, 0xab, 1 << 20);
    CHECK_CLASS(MPI_Free_mem(mem), MPI_SUCCESS);

    int *val;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag);
    CHECK(flag && *val >= 32767, "MPI_TAG_UB flag %d value %d", flag, flag ? *val : 0);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag);
    CHECK(flag && (*val == 0 || *val == 1), "MPI_WTIME_IS_GLOBAL flag %d value %d", flag, flag ? *val : -1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag);
    CHECK(flag && *val == 0, "MPI_APPNUM flag %d value %d", flag, flag ? *val : -1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag);
    CHECK(flag && *val >= size, "MPI_UNIVERSE_SIZE flag %d", flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &val, &flag);
    CHECK(flag && *val == MPI_PROC_NULL, "MPI_HOST flag %d", flag);

    MPI_Info env;
    char value[MPI_MAX_INFO_VAL];
    MPI_Info_get_string(MPI_INFO_ENV, "command", &(int){sizeof value}, value, &flag);
    CHECK(flag && strstr(value, "init") != NULL, "MPI_INFO_ENV command \"%s\"", flag ? value : "");
    (void)env;

    int errs = mt_errors;
    MPI_Finalize();
    MPI_Finalized(&flag);
    if (!flag || errs) {
        fprintf(stderr, "FAIL: finalized flag %d, %d errors\n", flag, errs);
        return 1;
    }
    MPI_Initialized(&flag);
    if (!flag) {
        fprintf(stderr, "FAIL: MPI_Initialized after MPI_Finalize must stay true\n");
        return 1;
    }
    if (mt_rank == 0)
        printf("No Errors\n");
    return 0;
}
