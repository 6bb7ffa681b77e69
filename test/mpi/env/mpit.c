/* MPI_T control variables: every COURIER_* tunable is listed with a description and a value,
 * and reads reflect the environment. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int provided, n, rc;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "MPI_T used before MPI_T_init_thread");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    mt_init(&argc, &argv);
    MPI_T_cvar_get_num(&n);
    CHECK(n >= 1, "%d control variables", n);
    int found_verbose = 0;
    for (int i = 0; i < n; i++) {
        char name[128], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verb, bind, scope, count;
        MPI_Datatype dt;
        MPI_T_enum en;
        rc = MPI_T_cvar_get_info(i, name, &name_len, &verb, &dt, &en, desc, &desc_len, &bind, &scope);
        CHECK(rc == MPI_SUCCESS, "cvar_get_info(%d) = %d", i, rc);
        CHECK(!strncmp(name, "COURIER_", 8) && name_len == (int)strlen(name) + 1, "cvar name %s", name);
        CHECK(strstr(desc, "default") != NULL, "%s has no default in its description", name);
        int idx;
        MPI_T_cvar_get_index(name, &idx);
        CHECK(idx == i, "index of %s is %d, not %d", name, idx, i);
        if (!strcmp(name, "COURIER_VERBOSE")) {
            found_verbose = 1;
            MPI_T_cvar_handle h;
            MPI_Count v = -1;
            MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
            CHECK(dt == MPI_COUNT && count == 1, "COURIER_VERBOSE type/count");
            MPI_T_cvar_read(h, &v);
            const char *env = getenv("COURIER_VERBOSE");
            CHECK(v == (env ? atoi(env) : 0), "COURIER_VERBOSE reads %lld", (long long)v);
            CHECK(MPI_T_cvar_write(h, &v) == MPI_T_ERR_CVAR_SET_NEVER, "read-only variable was written");
            MPI_T_cvar_handle_free(&h);
            CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset");
        }
    }
    CHECK(found_verbose, "COURIER_VERBOSE is not listed");
    CHECK(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "out-of-range index accepted");
    CHECK(MPI_T_cvar_get_index("NO_SUCH_VAR", &(int){0}) == MPI_T_ERR_INVALID_NAME, "unknown name accepted");
    /* An MPI_T procedure not implemented yet says so by its return code. */
    int num;
    char ename[8];
    CHECK(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, ename, &(int){8}) == MPI_T_ERR_NOT_SUPPORTED, "enums");
    MPI_T_finalize();
    return mt_finish();
}
