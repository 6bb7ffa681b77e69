/* Attribute caching on communicators: keyvals, set/get/delete, delete callbacks (including
 * the ones MPI_Finalize runs on MPI_COMM_SELF), predefined keyvals, and the errors. */
#include "mpitest.h"

static int deleted, finalize_hook_ran;
static int delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    deleted += *(int *)extra;
    *(int *)value = -1;
    return MPI_SUCCESS;
}
static int finalize_hook(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)value;
    (void)extra;
    finalize_hook_ran = comm == MPI_COMM_SELF;
    printf("finalize hook ran on %s\n", comm == MPI_COMM_SELF ? "MPI_COMM_SELF" : "another communicator");
    return MPI_SUCCESS;
}
/* Fails the first time only, so the attribute can still be removed later. */
static int failing_delete(MPI_Comm c, int k, void *v, void *e)
{
    static int calls;
    (void)c, (void)k, (void)v, (void)e;
    return calls++ == 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int one = 1, key, flag, value = 42, other = 7, *got;
    CHECK_CLASS(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &key, &one), MPI_SUCCESS);
    CHECK(key != MPI_KEYVAL_INVALID, "keyval %d", key);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag);
    CHECK(!flag, "attribute present before being set");
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &value);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag);
    CHECK(flag && got == &value, "attribute read back %p, set %p", (void *)got, (void *)&value);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &other); /* replacing runs the delete callback */
    CHECK(deleted == 1 && value == -1, "replacing did not delete the old value (%d, %d)", deleted, value);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    CHECK(deleted == 2 && other == -1, "delete_attr did not run the callback");
    CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, key), MPI_ERR_KEYVAL);

    /* A freed keyval stays usable by the attributes that still hold it. */
    int v2 = 5;
    MPI_Comm_set_attr(MPI_COMM_SELF, key, &v2);
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");

    int fkey;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &fkey, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, fkey, &v2);
    int rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, fkey);
    CHECK(rc != MPI_SUCCESS, "a failing delete callback did not fail MPI_Comm_delete_attr");
    CHECK(mt_string_has(rc, "delete callback"), "message does not mention the callback");
    int *still;
    MPI_Comm_get_attr(MPI_COMM_WORLD, fkey, &still, &flag);
    CHECK(flag && still == &v2, "a failed delete removed the attribute");
    CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, fkey), MPI_SUCCESS);

    /* Errors about keyvals. */
    rc = CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &got, &flag), MPI_ERR_KEYVAL);
    CHECK(mt_string_has(rc, "123456") && mt_string_has(rc, "MPI_Comm_get_attr"), "message");
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v2), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_free_keyval(&(int){MPI_TAG_UB}), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &got, &flag), MPI_ERR_COMM);

    /* The deprecated MPI-1 calls share the mechanism. */
    int k1;
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k1, NULL);
    MPI_Attr_put(MPI_COMM_WORLD, k1, &v2);
    MPI_Attr_get(MPI_COMM_WORLD, k1, &got, &flag);
    CHECK(flag && *got == 5, "MPI_Attr_get");
    MPI_Attr_delete(MPI_COMM_WORLD, k1);
    MPI_Keyval_free(&k1);

    /* MPI_Finalize deletes MPI_COMM_SELF's attributes first: the tool hook. */
    int hook;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_hook, &hook, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, hook, NULL);
    if (mt_errors) {
        fprintf(stderr, "rank %d: %d errors\n", mt_rank, mt_errors);
        return 1;
    }
    MPI_Finalize();
    if (!finalize_hook_ran || deleted != 3) {
        fprintf(stderr, "FAIL: finalize hook %d, deletes %d (expected 3)\n", finalize_hook_ran, deleted);
        return 1;
    }
    if (mt_rank == 0)
        printf("No Errors\n");
    return 0;
}
