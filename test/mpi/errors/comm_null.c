/* Which error handler an error on an invalid communicator argument goes to (doc/errors.md).
 * MPI-4.1 section 2.8: an error with no communicator, window, file or session to be raised on
 * is raised on MPI_COMM_SELF. A call given MPI_COMM_NULL, a garbage handle or a freed
 * communicator has no valid communicator, so its error goes to MPI_COMM_SELF's handler, never
 * to MPI_COMM_WORLD's.
 *
 *   comm_null          MPI_ERRORS_RETURN on MPI_COMM_SELF only (MPI_COMM_WORLD keeps the fatal
 *                      default, so an error sent there would end the job): point-to-point,
 *                      collective and communicator calls with invalid communicators return
 *                      MPI_ERR_COMM with messages naming the call and the bad argument; then
 *                      user handlers on both show which one is called, and with which handle.
 *   comm_null world    MPI_ERRORS_RETURN on MPI_COMM_WORLD only: MPI_Barrier(MPI_COMM_NULL)
 *                      at the last rank ends the job, because MPI_COMM_SELF's handler is still
 *                      MPI_ERRORS_ARE_FATAL, and the message says so (test/CMakeLists.txt
 *                      checks it). */
#include "mpitest.h"

#include <stdint.h>
#include <unistd.h>

static int self_calls, world_calls, last_code;
static MPI_Comm self_got;
static void self_handler(MPI_Comm *comm, int *code, ...)
{
    self_calls++;
    self_got = *comm;
    last_code = *code;
}
static void world_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    world_calls++;
    last_code = *code;
}

/* The call returned MPI_ERR_COMM, and its message names the call and shows the argument. */
static void check_comm_error(int rc, const char *call, const char *arg_text, const char *what)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "%s returned class %d, expected MPI_ERR_COMM", what, cls);
    CHECK(mt_string_has(rc, call) && mt_string_has(rc, arg_text), "the message of %s does not name %s and show %s",
          what, call, arg_text);
}

static void world_only(int rank, int size)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == size - 1) {
        MPI_Barrier(MPI_COMM_NULL);
        printf("FAIL: MPI_Barrier(MPI_COMM_NULL) returned, so its error did not go to MPI_COMM_SELF's fatal "
               "handler\n");
        fflush(stdout);
        exit(1);
    }
    sleep(30); /* the others wait to be stopped */
    MPI_Finalize();
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size, rc, x = 0, y = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "world")) {
        world_only(rank, size);
        return 0;
    }

    /* MPI_ERRORS_RETURN on MPI_COMM_SELF only. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm garbage = (MPI_Comm)(uintptr_t)0x7ffff123;
    int peer = (rank + 1) % size;

    rc = MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_NULL);
    check_comm_error(rc, "MPI_Send", "comm=MPI_COMM_NULL", "MPI_Send(MPI_COMM_NULL)");
    CHECK(mt_string_has(rc, "null handle"), "the message does not say MPI_COMM_NULL is a null handle");
    rc = MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE);
    check_comm_error(rc, "MPI_Recv", "comm=MPI_COMM_NULL", "MPI_Recv(MPI_COMM_NULL)");
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Isend(&x, 1, MPI_INT, peer, 0, garbage, &req);
    check_comm_error(rc, "MPI_Isend", "0x7ffff123", "MPI_Isend(garbage)");
    CHECK(req == MPI_REQUEST_NULL, "a failed MPI_Isend set the request");
    rc = MPI_Barrier(MPI_COMM_NULL);
    check_comm_error(rc, "MPI_Barrier", "comm=MPI_COMM_NULL", "MPI_Barrier(MPI_COMM_NULL)");
    rc = MPI_Barrier(garbage);
    check_comm_error(rc, "MPI_Barrier", "0x7ffff123", "MPI_Barrier(garbage)");
    rc = MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_NULL);
    check_comm_error(rc, "MPI_Bcast", "comm=MPI_COMM_NULL", "MPI_Bcast(MPI_COMM_NULL)");
    rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);
    check_comm_error(rc, "MPI_Allreduce", "comm=MPI_COMM_NULL", "MPI_Allreduce(MPI_COMM_NULL)");
    rc = MPI_Comm_rank(garbage, &x);
    check_comm_error(rc, "MPI_Comm_rank", "0x7ffff123", "MPI_Comm_rank(garbage)");
    MPI_Comm dup = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_NULL, &dup);
    check_comm_error(rc, "MPI_Comm_dup", "MPI_COMM_NULL", "MPI_Comm_dup(MPI_COMM_NULL)");
    MPI_Comm null = MPI_COMM_NULL;
    rc = MPI_Comm_free(&null);
    check_comm_error(rc, "MPI_Comm_free", "MPI_COMM_NULL", "MPI_Comm_free(&MPI_COMM_NULL)");

    /* A freed communicator is no communicator either. */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm stale = dup;
    MPI_Comm_free(&dup);
    rc = MPI_Barrier(stale);
    check_comm_error(rc, "MPI_Barrier", "comm=", "MPI_Barrier(a freed communicator)");

    /* The job is intact: a collective on MPI_COMM_WORLD works. */
    x = rank + 1;
    CHECK_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(y == size * (size + 1) / 2, "MPI_Allreduce after the errors gave %d", y);

    /* User handlers on both: an invalid communicator calls MPI_COMM_SELF's, with MPI_COMM_SELF;
     * an error on a valid communicator calls that communicator's. */
    MPI_Errhandler on_self, on_world;
    MPI_Comm_create_errhandler(self_handler, &on_self);
    MPI_Comm_create_errhandler(world_handler, &on_world);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, on_self);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, on_world);
    MPI_Errhandler_free(&on_self);
    MPI_Errhandler_free(&on_world);
    rc = MPI_Barrier(MPI_COMM_NULL);
    CHECK(self_calls == 1 && world_calls == 0, "MPI_Barrier(MPI_COMM_NULL) called MPI_COMM_SELF's handler %d times "
          "and MPI_COMM_WORLD's %d times, expected once and never", self_calls, world_calls);
    CHECK(self_got == MPI_COMM_SELF, "MPI_COMM_SELF's handler was given another communicator");
    CHECK(last_code == rc, "the handler got code %d, the call returned %d", last_code, rc);
    rc = MPI_Send(&x, 1, MPI_INT, peer, 0, garbage);
    CHECK(self_calls == 2 && world_calls == 0, "MPI_Send(garbage): %d calls of MPI_COMM_SELF's handler, %d of "
          "MPI_COMM_WORLD's", self_calls, world_calls);
    rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    CHECK(world_calls == 1 && self_calls == 2, "MPI_Send(rank %d, MPI_COMM_WORLD): %d calls of MPI_COMM_WORLD's "
          "handler, %d of MPI_COMM_SELF's", size + 5, world_calls, self_calls);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "MPI_Send to rank %d: class %d", size + 5, cls);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return mt_finish();
}
