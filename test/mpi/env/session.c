/* session.c: the sessions model: process sets, groups and communicators from them (intra and
 * inter, with string tags), session info and error handlers, sessions opened again after the
 * last closed, and MPI_Init beside an open session. */
#include "mpitest.h"

static int handler_calls, handler_code;

static void on_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    handler_calls++;
    handler_code = *code;
}

/* Everything a library in the sessions model does, on its own session. */
static void library(int round)
{
    MPI_Session s;
    MPI_Info want;
    MPI_Info_create(&want);
    MPI_Info_set(want, "thread_level", "MPI_THREAD_FUNNELED");
    CHECK_CLASS(MPI_Session_init(want, MPI_ERRORS_RETURN, &s), MPI_SUCCESS);
    MPI_Info_free(&want);

    MPI_Info got;
    char value[64];
    int flag = 0;
    CHECK_CLASS(MPI_Session_get_info(s, &got), MPI_SUCCESS);
    MPI_Info_get(got, "thread_level", sizeof value, value, &flag);
    CHECK(flag && !strcmp(value, "MPI_THREAD_FUNNELED"), "thread_level %s", flag ? value : "(absent)");
    MPI_Info_free(&got);

    int n = 0, world_size = 0;
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    CHECK(n >= 2, "%d process sets", n);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL);
        char *name = malloc((size_t)len);
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
        CHECK((int)strlen(name) + 1 == len, "pset %d: %s, length %d", i, name, len);
        MPI_Info pinfo;
        MPI_Session_get_pset_info(s, name, &pinfo);
        MPI_Info_get(pinfo, "mpi_size", sizeof value, value, &flag);
        CHECK(flag, "no mpi_size for %s", name);
        if (!strcmp(name, "mpi://WORLD")) {
            seen_world = 1;
            world_size = atoi(value);
        } else if (!strcmp(name, "mpi://SELF")) {
            seen_self = 1;
            CHECK(atoi(value) == 1, "mpi://SELF has mpi_size %s", value);
        }
        MPI_Info_free(&pinfo);
        free(name);
    }
    CHECK(seen_world && seen_self, "world %d self %d", seen_world, seen_self);

    MPI_Group world, self;
    CHECK_CLASS(MPI_Group_from_session_pset(s, "mpi://WORLD", &world), MPI_SUCCESS);
    CHECK_CLASS(MPI_Group_from_session_pset(s, "mpi://SELF", &self), MPI_SUCCESS);
    int size, rank, gsize;
    MPI_Group_size(world, &size);
    MPI_Group_rank(world, &rank);
    MPI_Group_size(self, &gsize);
    CHECK(size == world_size && gsize == 1, "world %d (mpi_size %d), self %d", size, world_size, gsize);

    /* A communicator of the world set, and one of each half, from string tags. */
    MPI_Comm all, half;
    CHECK_CLASS(MPI_Comm_create_from_group(world, "org.courier.test.all", MPI_INFO_NULL, MPI_ERRORS_RETURN, &all),
                MPI_SUCCESS);
    int sum = 0, crank;
    MPI_Comm_rank(all, &crank);
    CHECK(crank == rank, "rank %d in the communicator, %d in the group", crank, rank);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, all);
    CHECK(sum == size * (size - 1) / 2, "sum %d", sum);

    int cut = size / 2;
    MPI_Group low, high;
    int range_low[1][3] = {{0, cut - 1, 1}}, range_high[1][3] = {{cut, size - 1, 1}};
    if (cut > 0) {
        MPI_Group_range_incl(world, 1, range_low, &low);
        MPI_Group_range_incl(world, 1, range_high, &high);
        MPI_Group mine = rank < cut ? low : high, other = rank < cut ? high : low;
        CHECK_CLASS(MPI_Comm_create_from_group(mine, "org.courier.test.half", MPI_INFO_NULL, MPI_ERRORS_RETURN, &half),
                    MPI_SUCCESS);
        int hsize;
        MPI_Comm_size(half, &hsize);
        CHECK(hsize == (rank < cut ? cut : size - cut), "half of %d", hsize);
        MPI_Comm inter;
        CHECK_CLASS(MPI_Intercomm_create_from_groups(mine, 0, other, 0, "org.courier.test.inter", MPI_INFO_NULL,
                                                     MPI_ERRORS_RETURN, &inter),
                    MPI_SUCCESS);
        int remote, theirs = -1, one = 1;
        MPI_Comm_remote_size(inter, &remote);
        CHECK(remote == (rank < cut ? size - cut : cut), "remote size %d", remote);
        MPI_Allreduce(&one, &theirs, 1, MPI_INT, MPI_SUM, inter);
        CHECK(theirs == remote, "the other group's sum %d, expected %d", theirs, remote);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        MPI_Group_free(&low);
        MPI_Group_free(&high);
    }
    MPI_Comm_free(&all);

    /* Errors go to the session's handler. */
    MPI_Errhandler eh, cur;
    MPI_Session_create_errhandler(on_error, &eh);
    CHECK_CLASS(MPI_Session_set_errhandler(s, eh), MPI_SUCCESS);
    MPI_Session_get_errhandler(s, &cur);
    CHECK(cur == eh, "get_errhandler gave another handler");
    MPI_Errhandler_free(&cur);
    handler_calls = 0;
    MPI_Group bad = MPI_GROUP_NULL;
    MPI_Group_from_session_pset(s, "mpi://NOWHERE", &bad);
    int cls = -1;
    MPI_Error_class(handler_code, &cls);
    CHECK(handler_calls == 1 && cls == MPI_ERR_ARG, "handler called %d times, class %d", handler_calls, cls);
    MPI_Session_call_errhandler(s, MPI_ERR_OTHER);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler: %d calls", handler_calls);
    MPI_Errhandler_free(&eh);
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    int len = 0;
    CHECK_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n + round, &len, NULL), MPI_ERR_ARG);

    MPI_Group_free(&world);
    MPI_Group_free(&self);
    CHECK_CLASS(MPI_Session_finalize(&s), MPI_SUCCESS);
    CHECK(s == MPI_SESSION_NULL, "the handle is not MPI_SESSION_NULL after MPI_Session_finalize");
}

int main(int argc, char **argv)
{
    int flag = 1;
    /* Sessions alone, twice over (the library may be used again after its last session). */
    library(0);
    library(1);
    MPI_Initialized(&flag);
    CHECK(!flag, "MPI_Initialized is true though only sessions were used");

    /* The world model beside an open session. */
    MPI_Session s;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    mt_init(&argc, &argv);
    MPI_Initialized(&flag);
    CHECK(flag, "MPI_Initialized is false after MPI_Init");
    library(2);
    int size, sum = 0, one = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size, "world sum %d", sum);
    MPI_Session_finalize(&s);
    return mt_finish();
}
