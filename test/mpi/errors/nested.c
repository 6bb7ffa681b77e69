/* An error raised inside a user error handler: the handler calls an MPI procedure that fails on
 * the same communicator (so the same handler is raised again, and again). The nesting stops at
 * a bound instead of overflowing the stack; the outer call returns its error code, and the
 * handler ran a bounded number of times. A handler that calls a failing procedure once (on
 * another communicator with MPI_ERRORS_RETURN) sees that procedure's error returned. */
#include "mpitest.h"

static int calls, inner_class;

static void again(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    calls++;
    /* fails: a negative count, raised on *comm, whose handler is this one */
    MPI_Send(NULL, -1, MPI_INT, 0, 0, *comm);
}

static void once(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    calls++;
    int rc = MPI_Send(NULL, -1, MPI_INT, 0, 0, MPI_COMM_SELF);
    MPI_Error_class(rc, &inner_class);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Errhandler eh;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(again, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    int rc = MPI_Send(NULL, -1, MPI_INT, 0, 0, dup);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "the outer call returned class %d", cls);
    CHECK(calls >= 1 && calls <= 64, "the handler ran %d times", calls);
    MPI_Errhandler_free(&eh);

    calls = 0;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_create_errhandler(once, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    rc = MPI_Send(NULL, -1, MPI_INT, 0, 0, dup);
    CHECK(calls == 1 && inner_class == MPI_ERR_COUNT, "handler calls %d, inner class %d", calls, inner_class);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);
    return mt_finish();
}
