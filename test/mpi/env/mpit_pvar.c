/* MPI_T performance variables: Courier's counters of which collective algorithm ran
 * (coll.<collective>.<algorithm>). Every variable is described alike (a continuous counter of
 * unsigned long long, bound to no object, writable); indices and names map both ways; a
 * counter grows by exactly the calls that picked its algorithm (node barriers, message
 * barriers forced by COURIER_COLL_BARRIER, persistent calls, which always take the message
 * algorithms); reset, write, readreset and MPI_T_PVAR_ALL_HANDLES do what MPI-4.0 15.3.7 says,
 * per handle and per session; and bad sessions, handles, indices and names get the MPI_T error
 * codes. */
#include "mpitest.h"

static MPI_T_pvar_session session;
static int rank, size;

static int index_of(const char *name)
{
    int i = -1;
    CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i) == MPI_SUCCESS, "%s is not listed", name);
    return i;
}

static unsigned long long read_handle(MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    CHECK(MPI_T_pvar_read(session, h, &v) == MPI_SUCCESS, "MPI_T_pvar_read");
    return v;
}

static MPI_T_pvar_handle handle_of(const char *name)
{
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count = 0;
    CHECK(MPI_T_pvar_handle_alloc(session, index_of(name), NULL, &h, &count) == MPI_SUCCESS && count == 1,
          "handle of %s (count %d)", name, count);
    return h;
}

int main(int argc, char **argv)
{
    int provided, n = -1;
    CHECK(MPI_T_pvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "MPI_T used before MPI_T_init_thread");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Descriptions. */
    CHECK(MPI_T_pvar_get_num(&n) == MPI_SUCCESS && n >= 20, "%d performance variables", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[512];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, cls, bind, ro, cont, atomic, back = -1;
        MPI_Datatype dt;
        MPI_T_enum en;
        CHECK(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &dt, &en, desc, &desc_len, &bind, &ro, &cont,
                                  &atomic) == MPI_SUCCESS, "MPI_T_pvar_get_info(%d)", i);
        CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && bind == MPI_T_BIND_NO_OBJECT &&
                  cont == 1 && ro == 0 && en == MPI_T_ENUM_NULL,
              "%s: class %d, bind %d, continuous %d, readonly %d", name, cls, bind, cont, ro);
        CHECK(name_len == (int)strlen(name) + 1 && desc_len == (int)strlen(desc) + 1 && desc[0],
              "%s: lengths %d and %d", name, name_len, desc_len);
        CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &back) == MPI_SUCCESS && back == i,
              "%s: index %d, back %d", name, i, back);
        CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_TIMER, &back) == MPI_T_ERR_INVALID_NAME,
              "%s found as a timer", name);
    }
    CHECK(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX, "index %d accepted", n);
    CHECK(MPI_T_pvar_get_index("coll.no_such.thing", MPI_T_PVAR_CLASS_COUNTER, &(int){0}) == MPI_T_ERR_INVALID_NAME,
          "unknown name accepted");

    /* Counting. Barriers on MPI_COMM_WORLD go through shared memory unless the environment
     * forces dissemination; a persistent barrier always takes the message algorithm. */
    CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS, "MPI_T_pvar_session_create");
    const char *forced = getenv("COURIER_COLL_BARRIER");
    int node = !(forced && strcmp(forced, "dissemination") == 0);
    MPI_T_pvar_handle hn = handle_of("coll.barrier.node"), hd = handle_of("coll.barrier.dissemination");
    unsigned long long n0 = read_handle(hn), d0 = read_handle(hd);
    for (int i = 0; i < 10; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long grew = size > 1 ? 10 : 0;
    CHECK(read_handle(hn) - n0 == (node ? grew : 0) && read_handle(hd) - d0 == (node ? 0 : grew),
          "10 barriers (%s): node +%llu, dissemination +%llu", node ? "node" : "dissemination",
          read_handle(hn) - n0, read_handle(hd) - d0);
    MPI_Request r;
    d0 = read_handle(hd);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int i = 0; i < 3; i++) { /* built once, at MPI_Barrier_init: one pick of the algorithm */
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    CHECK(read_handle(hd) - d0 == (size > 1 ? 1 : 0), "persistent barrier: dissemination +%llu",
          read_handle(hd) - d0);
    MPI_Request_free(&r);

    /* Reset, write, readreset: per handle. A second handle on the same counter is untouched. */
    MPI_T_pvar_handle hn2 = handle_of("coll.barrier.node");
    CHECK(MPI_T_pvar_reset(session, hn) == MPI_SUCCESS && read_handle(hn) == 0, "reset reads %llu", read_handle(hn));
    unsigned long long five = 5, got = 0;
    CHECK(MPI_T_pvar_write(session, hn, &five) == MPI_SUCCESS && read_handle(hn) == 5, "write 5 reads %llu",
          read_handle(hn));
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long after = node && size > 1 ? 6 : 5;
    CHECK(MPI_T_pvar_readreset(session, hn, &got) == MPI_SUCCESS && got == after && read_handle(hn) == 0,
          "readreset read %llu, not %llu", got, after);
    CHECK(read_handle(hn2) >= read_handle(hn) + (node && size > 1 ? 11 : 0), "the second handle was disturbed");
    CHECK(MPI_T_pvar_reset(session, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS && read_handle(hn2) == 0 &&
              read_handle(hd) == 0, "reset of every handle");

    /* Start and stop: continuous variables have none; ALL_HANDLES starts none, successfully. */
    CHECK(MPI_T_pvar_start(session, hn) == MPI_T_ERR_PVAR_NO_STARTSTOP, "start of a continuous variable");
    CHECK(MPI_T_pvar_stop(session, hn) == MPI_T_ERR_PVAR_NO_STARTSTOP, "stop of a continuous variable");
    CHECK(MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "start of every handle");
    CHECK(MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES, &got) == MPI_T_ERR_INVALID_HANDLE,
          "read of MPI_T_PVAR_ALL_HANDLES");

    /* Sessions are separate: a handle of one is not one of another. */
    MPI_T_pvar_session other;
    CHECK(MPI_T_pvar_session_create(&other) == MPI_SUCCESS, "second session");
    CHECK(MPI_T_pvar_read(other, hn, &got) == MPI_T_ERR_INVALID_HANDLE, "a handle read through another session");
    CHECK(MPI_T_pvar_handle_free(other, &hn) == MPI_T_ERR_INVALID_HANDLE, "a handle freed through another session");
    CHECK(MPI_T_pvar_session_free(&other) == MPI_SUCCESS && other == MPI_T_PVAR_SESSION_NULL, "session_free");
    CHECK(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, hn, &got) == MPI_T_ERR_INVALID_SESSION, "null session");
    CHECK(MPI_T_pvar_handle_alloc(session, n, NULL, &hn2, &(int){0}) == MPI_T_ERR_INVALID_INDEX, "bad index");

    CHECK(MPI_T_pvar_handle_free(session, &hd) == MPI_SUCCESS && hd == MPI_T_PVAR_HANDLE_NULL, "handle_free");
    CHECK(MPI_T_pvar_read(session, hd, &got) == MPI_T_ERR_INVALID_HANDLE, "read of a freed handle");
    /* The session's other handles go with it. */
    CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS && session == MPI_T_PVAR_SESSION_NULL, "session_free");
    MPI_T_finalize();
    return mt_finish();
}
