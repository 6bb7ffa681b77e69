/* A keyval freed while an attribute is stored under it lives on until that attribute goes: the
 * attribute can still be read and deleted through the old key value, its delete callback runs
 * once, and the key then becomes invalid. (MPICH's attr/fkeyval found Courier refusing this.) */
#include "mpitest.h"

static int deletes;

static int count_delete(MPI_Comm c, int k, void *value, void *extra)
{
    (void)c, (void)k, (void)extra;
    CHECK(value == (void *)&deletes, "the delete callback got %p", value);
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* Reduce_local has no communicator */
    for (int how = 0; how < 2; how++) {
        int key, saved, flag = 0;
        void *v = NULL;
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL);
        saved = key;
        MPI_Comm_set_attr(dup, key, &deletes);
        MPI_Comm_free_keyval(&key);
        CHECK(key == MPI_KEYVAL_INVALID, "the freed key is %d", key);
        CHECK_CLASS(MPI_Comm_get_attr(dup, saved, &v, &flag), MPI_SUCCESS);
        CHECK(flag && v == (void *)&deletes, "the attribute under the freed key: flag %d", flag);
        deletes = 0;
        if (how == 0)
            CHECK_CLASS(MPI_Comm_delete_attr(dup, saved), MPI_SUCCESS);
        MPI_Comm_free(&dup); /* how == 1: the free deletes it */
        CHECK(deletes == 1, "the delete callback ran %d times", deletes);
        CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, saved, &v, &flag), MPI_ERR_KEYVAL);
    }
    /* MPI_Reduce_local takes no MPI_IN_PLACE: an error, not a crash. */
    int a = 1, b = 2;
    CHECK_CLASS(MPI_Reduce_local(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce_local(&a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    CHECK(b == 2, "inoutbuf changed to %d", b);
    return mt_finish();
}
