/* requests.c: requests that cross threads, and the thread calls of the standard.
 *   - MPI_Query_thread, MPI_Is_thread_main (true only in the thread that initialised), the
 *     thread_level of MPI_INFO_ENV;
 *   - receives started in one thread, completed by MPI_Wait/Waitall/Test in another;
 *   - a thread blocked in MPI_Recv from its own process, woken by another thread's send;
 *   - generalized requests: a thread completes them with MPI_Grequest_complete while the main
 *     thread waits (MPI_Wait, then MPI_Waitall over several), their query, free and cancel
 *     functions called as the standard says, the status the query function sets reported;
 *   - MPI_Grequest_complete twice, or on a request that is not generalized: MPI_ERR_REQUEST. */
#include "mtthreads.h"

#include <unistd.h>

enum { NREQ = 16 };
static MPI_Request handed[NREQ];
static int inbox[NREQ];
static pthread_barrier_t bar;

static void *waiter(void *arg)
{
    (void)arg;
    int flag = 0;
    pthread_barrier_wait(&bar); /* the main thread has started the receives */
    MPI_Wait(&handed[0], MPI_STATUS_IGNORE);
    while (!flag)
        MPI_Test(&handed[1], &flag, MPI_STATUS_IGNORE);
    MPI_Waitall(NREQ - 2, handed + 2, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NREQ; i++)
        CHECK(inbox[i] == 500 + i + ((tt_rank + tt_size - 1) % tt_size) * 1000, "inbox[%d] = %d", i, inbox[i]);
    return NULL;
}

static int self_value = -1;
static void *self_receiver(void *arg)
{
    (void)arg;
    int main_flag = -1;
    MPI_Is_thread_main(&main_flag);
    CHECK(main_flag == 0, "MPI_Is_thread_main says %d in a thread MPI_Init_thread did not run in", main_flag);
    MPI_Recv(&self_value, 1, MPI_INT, tt_rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

/* Generalized requests */
typedef struct {
    int id;
    atomic_int queried, freed, cancelled;
    MPI_Request req;
} gstate;

static int g_query(void *extra, MPI_Status *st)
{
    gstate *g = extra;
    atomic_fetch_add(&g->queried, 1);
    MPI_Status_set_elements(st, MPI_INT, g->id + 1);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = g->id;
    return MPI_SUCCESS;
}
static int g_free(void *extra)
{
    gstate *g = extra;
    atomic_fetch_add(&g->freed, 1);
    return MPI_SUCCESS;
}
static int g_cancel(void *extra, int complete)
{
    gstate *g = extra;
    atomic_fetch_add(&g->cancelled, 1 + complete * 10);
    return MPI_SUCCESS;
}

enum { NG = 6 };
static gstate gs[NG];
static void *completer(void *arg)
{
    (void)arg;
    for (int i = 0; i < NG; i++) {
        usleep(2000);
        MPI_Grequest_complete(gs[i].req);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int level = -1, main_flag = -1;
    MPI_Query_thread(&level);
    CHECK(level == MPI_THREAD_MULTIPLE, "MPI_Query_thread gives %d", level);
    MPI_Is_thread_main(&main_flag);
    CHECK(main_flag == 1, "MPI_Is_thread_main says %d in the main thread", main_flag);
    char value[64] = "";
    int flag_env = 0, len = sizeof value;
    MPI_Info_get_string(MPI_INFO_ENV, "thread_level", &len, value, &flag_env);
    CHECK(flag_env && strcmp(value, "MPI_THREAD_MULTIPLE") == 0, "MPI_INFO_ENV's thread_level is \"%s\"", value);

    /* Receives started here, completed there. */
    int next = (tt_rank + 1) % tt_size, prev = (tt_rank + tt_size - 1) % tt_size;
    for (int i = 0; i < NREQ; i++)
        MPI_Irecv(&inbox[i], 1, MPI_INT, prev, i, MPI_COMM_WORLD, &handed[i]);
    pthread_barrier_init(&bar, NULL, 2);
    pthread_t th;
    pthread_create(&th, NULL, waiter, NULL);
    pthread_barrier_wait(&bar);
    for (int i = NREQ - 1; i >= 0; i--) {
        int v = 500 + i + tt_rank * 1000;
        MPI_Send(&v, 1, MPI_INT, next, i, MPI_COMM_WORLD);
    }
    pthread_join(th, NULL);
    pthread_barrier_destroy(&bar);

    /* A receiver blocked on its own process; the send comes later from this thread. */
    pthread_create(&th, NULL, self_receiver, NULL);
    usleep(20000);
    int v = 4242 + tt_rank;
    MPI_Send(&v, 1, MPI_INT, tt_rank, 99, MPI_COMM_WORLD);
    pthread_join(th, NULL);
    CHECK(self_value == 4242 + tt_rank, "the blocked receive got %d", self_value);

    /* Generalized requests completed by another thread. */
    for (int i = 0; i < NG; i++) {
        gs[i].id = i;
        MPI_Grequest_start(g_query, g_free, g_cancel, &gs[i], &gs[i].req);
    }
    MPI_Request copy[NG];
    for (int i = 0; i < NG; i++)
        copy[i] = gs[i].req;
    int flag = 1;
    MPI_Test(&copy[0], &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0, "MPI_Test says a generalized request nobody completed is complete");
    MPI_Cancel(&copy[NG - 1]); /* not complete yet: cancel_fn(complete = 0) */
    CHECK(atomic_load(&gs[NG - 1].cancelled) == 1, "cancel_fn called %d", atomic_load(&gs[NG - 1].cancelled));
    pthread_create(&th, NULL, completer, NULL);
    MPI_Status st;
    MPI_Wait(&copy[0], &st);
    CHECK(copy[0] == MPI_REQUEST_NULL, "MPI_Wait did not free the generalized request");
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 1 && st.MPI_TAG == 0, "status from query_fn: count %d tag %d", count, st.MPI_TAG);
    CHECK(atomic_load(&gs[0].queried) >= 1 && atomic_load(&gs[0].freed) == 1, "query %d free %d",
           atomic_load(&gs[0].queried), atomic_load(&gs[0].freed));
    MPI_Status sts[NG];
    MPI_Waitall(NG - 1, copy + 1, sts);
    pthread_join(th, NULL);
    for (int i = 1; i < NG; i++) {
        MPI_Get_count(&sts[i - 1], MPI_INT, &count);
        CHECK(count == i + 1 && sts[i - 1].MPI_TAG == i, "request %d: count %d tag %d", i, count, sts[i - 1].MPI_TAG);
        CHECK(atomic_load(&gs[i].freed) == 1, "request %d freed %d times", i, atomic_load(&gs[i].freed));
    }

    /* Freed before it completes: free_fn comes at MPI_Grequest_complete. */
    gstate late = {.id = 9};
    MPI_Request lr;
    MPI_Grequest_start(g_query, g_free, g_cancel, &late, &lr);
    late.req = lr;
    MPI_Request_free(&lr);
    CHECK(atomic_load(&late.freed) == 0, "free_fn ran before the request completed");
    MPI_Grequest_complete(late.req);
    CHECK(atomic_load(&late.freed) == 1, "free_fn ran %d times after completion", atomic_load(&late.freed));

    /* Errors */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* a call with no communicator raises there */
    gstate twice = {.id = 1};
    MPI_Request tr;
    MPI_Grequest_start(NULL, NULL, NULL, &twice, &tr);
    CHECK(MPI_Grequest_complete(tr) == MPI_SUCCESS, "first completion");
    int rc = MPI_Grequest_complete(tr), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "completing twice gives class %d", cls);
    MPI_Wait(&tr, MPI_STATUS_IGNORE);
    MPI_Request pr;
    MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pr);
    rc = MPI_Grequest_complete(pr);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "completing a receive gives class %d", cls);
    MPI_Wait(&pr, MPI_STATUS_IGNORE);
    return tt_finish();
}
