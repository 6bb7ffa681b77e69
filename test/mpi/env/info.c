/* Info objects: set/get/delete, ordering of keys, dup independence, limits and their errors. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Info info, dup;
    char v[MPI_MAX_INFO_VAL], key[MPI_MAX_INFO_KEY];
    int flag, n, len;
    /* Info calls work before MPI_Init (MPI-4). */
    CHECK_CLASS(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_CLASS(MPI_Info_set(info, "alpha", "1"), MPI_SUCCESS);
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Info_set(info, "beta", "two words");
    MPI_Info_set(info, "gamma", "3");
    MPI_Info_set(info, "alpha", "one"); /* replaces, keeps its place */
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 3, "nkeys %d", n);
    const char *order[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < n; i++) {
        MPI_Info_get_nthkey(info, i, key);
        CHECK(!strcmp(key, order[i]), "key %d is %s, expected %s", i, key, order[i]);
    }
    len = sizeof v;
    MPI_Info_get_string(info, "alpha", &len, v, &flag);
    CHECK(flag && !strcmp(v, "one") && len == 4, "alpha=%s len %d", v, len);
    len = 4; /* too short: truncated, and the needed length is reported */
    MPI_Info_get_string(info, "beta", &len, v, &flag);
    CHECK(flag && !strcmp(v, "two") && len == 10, "truncated beta=\"%s\" needed %d", v, len);
    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    CHECK(flag && len == 9, "valuelen %d", len);
    MPI_Info_get(info, "gamma", sizeof v - 1, v, &flag);
    CHECK(flag && !strcmp(v, "3"), "MPI_Info_get gamma=%s", v);
    MPI_Info_get_string(info, "delta", &(int){sizeof v}, v, &flag);
    CHECK(!flag, "missing key reported present");

    MPI_Info_dup(info, &dup);
    MPI_Info_delete(info, "beta");
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 2, "after delete nkeys %d", n);
    MPI_Info_get_nkeys(dup, &n);
    CHECK(n == 3, "the dup changed with its original: nkeys %d", n);

    /* Errors: the right class, and a message naming the call and the argument. */
    char longkey[MPI_MAX_INFO_KEY + 10];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    int rc = CHECK_CLASS(MPI_Info_set(info, longkey, "x"), MPI_ERR_INFO_KEY);
    CHECK(mt_string_has(rc, "MPI_Info_set") && mt_string_has(rc, "MPI_MAX_INFO_KEY"), "message does not explain");
    CHECK_CLASS(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_delete(info, "nope"), MPI_ERR_INFO_NOKEY);
    rc = CHECK_CLASS(MPI_Info_get_nthkey(info, 7, key), MPI_ERR_ARG);
    CHECK(mt_string_has(rc, "n=7"), "message does not name n=7");
    rc = CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_INFO);
    CHECK(mt_string_has(rc, "MPI_INFO_NULL"), "message does not name MPI_INFO_NULL");
    CHECK_CLASS(MPI_Info_set(MPI_INFO_ENV, "a", "b"), MPI_ERR_INFO);

    MPI_Info_free(&info);
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not reset the handle");
    MPI_Info_free(&dup);
    CHECK_CLASS(MPI_Info_free(&info), MPI_ERR_INFO);

    MPI_Info env;
    char *fake_argv[] = {"prog", "a", "b", NULL};
    MPI_Info_create_env(3, fake_argv, &env);
    MPI_Info_get_string(env, "command", &(int){sizeof v}, v, &flag);
    CHECK(flag && !strcmp(v, "prog"), "create_env command=%s", v);
    MPI_Info_get_string(env, "argv", &(int){sizeof v}, v, &flag);
    CHECK(flag && !strcmp(v, "a b"), "create_env argv=%s", v);
    MPI_Info_free(&env);
    return mt_finish();
}
