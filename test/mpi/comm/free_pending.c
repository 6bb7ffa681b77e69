/* MPI_Comm_free with a receive still pending on the communicator. The standard (MPI 4.1,
 * MPI_COMM_FREE): "Any pending operations that use this communicator will complete normally;
 * the object is actually deallocated only if there are no other active references to it."
 *   A. The freed communicator's matching context must not be handed to a new communicator while
 *      the receive is pending: a message sent on the new communicator (same source and tag) goes
 *      to the new communicator's receive, never to the old pending one, which can still be
 *      cancelled.
 *   B. The pending receive still belongs to the freed communicator: an error in it (truncation)
 *      is reported by that communicator's error handler (MPI_ERRORS_RETURN), not by the one of a
 *      communicator created meanwhile (MPI_ERRORS_ARE_FATAL by default). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int src = 0, dst = size - 1;

    /* A. */
    {
        MPI_Comm x, y;
        MPI_Request stale = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
        MPI_Status st;
        int a = -1, b = -1, v = 42;
        MPI_Comm_dup(MPI_COMM_WORLD, &x);
        if (rank == dst)
            MPI_Irecv(&a, 1, MPI_INT, src, 5, x, &stale);
        MPI_Comm_free(&x);
        MPI_Comm_dup(MPI_COMM_WORLD, &y);
        if (rank == src)
            MPI_Isend(&v, 1, MPI_INT, dst, 5, y, &sreq);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == dst) {
            int done = 0, cancelled = 0;
            MPI_Test(&stale, &done, &st);
            CHECK(!done, "a receive pending on a freed communicator got the message sent on a new communicator "
                         "(value %d): the context id was reused while still in use", a);
            if (!done) {
                MPI_Recv(&b, 1, MPI_INT, src, 5, y, MPI_STATUS_IGNORE);
                CHECK(b == 42, "the receive on the new communicator got %d", b);
                MPI_Cancel(&stale);
                MPI_Wait(&stale, &st);
                MPI_Test_cancelled(&st, &cancelled);
                CHECK(cancelled, "the pending receive of the freed communicator could not be cancelled");
            }
        }
        if (rank == src)
            MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        MPI_Comm_free(&y);
    }

    /* B (needs a sender that still has the communicator). */
    if (size > 1) {
        MPI_Comm x, y;
        MPI_Request q = MPI_REQUEST_NULL;
        int a = -1, v[2] = {1, 2};
        MPI_Comm_dup(MPI_COMM_WORLD, &x);
        MPI_Comm_set_errhandler(x, MPI_ERRORS_RETURN);
        if (rank == dst) {
            MPI_Irecv(&a, 1, MPI_INT, src, 6, x, &q);
            MPI_Comm_free(&x);
        }
        MPI_Comm_dup(MPI_COMM_WORLD, &y); /* MPI_ERRORS_ARE_FATAL, inherited from MPI_COMM_WORLD */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == src)
            MPI_Send(v, 2, MPI_INT, dst, 6, x); /* two ints for a receive of one */
        if (rank == dst) {
            int rc = MPI_Wait(&q, MPI_STATUS_IGNORE), cls = rc;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "the truncated receive of the freed communicator returned class %d", cls);
        }
        if (x != MPI_COMM_NULL)
            MPI_Comm_free(&x);
        MPI_Comm_free(&y);
    }
    return mt_finish();
}
