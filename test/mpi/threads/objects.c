/* objects.c: every chapter's objects made, used and freed by several threads at once, each on
 * its own: derived datatypes (built, committed, used to send a strided vector to oneself,
 * freed), info objects, attributes on a communicator of the thread's own (keyvals with copy
 * and delete callbacks, which run inside MPI), error handlers (a user handler called from a
 * failing call of that thread), groups, Cartesian topologies, and one-sided communication (a
 * window per thread: puts, accumulates and gets under fence and under lock_all). Checks the
 * data and that every callback ran as often as it should. */
#include "mtthreads.h"

enum { ITERS = 8, WIN_INTS = 64 };
static MPI_Comm parent[64];
static atomic_int deletes, handler_calls;

static int copy_attr(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)key, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm c, int key, void *val, void *extra)
{
    (void)c, (void)key, (void)val, (void)extra;
    atomic_fetch_add(&deletes, 1);
    return MPI_SUCCESS;
}

static void on_error(MPI_Comm *c, int *code, ...)
{
    (void)c, (void)code;
    atomic_fetch_add(&handler_calls, 1);
}

static void datatypes(int t)
{
    int src[40], dst[40];
    for (int i = 0; i < 40; i++)
        src[i] = t * 1000 + i, dst[i] = -1;
    MPI_Datatype vec;
    MPI_Type_vector(10, 1, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Sendrecv(src, 1, vec, 0, 50 + t, dst, 10, MPI_INT, 0, 50 + t, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    for (int i = 0; i < 10; i++)
        CHECK(dst[i] == t * 1000 + 4 * i, "thread %d vector element %d = %d", t, i, dst[i]);
    MPI_Type_free(&vec);
}

static void infos(int t)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char key[32], val[32], got[32];
    snprintf(key, sizeof key, "key%d", t);
    snprintf(val, sizeof val, "value%d", t);
    MPI_Info_set(info, key, val);
    int flag = 0, len = sizeof got;
    MPI_Info_get_string(info, key, &len, got, &flag);
    CHECK(flag && strcmp(got, val) == 0, "thread %d info %s = %s", t, key, flag ? got : "(none)");
    MPI_Info_free(&info);
}

static void attributes_and_handlers(int t, MPI_Comm mine)
{
    int key;
    static int values[64];
    MPI_Comm_create_keyval(copy_attr, delete_attr, &key, NULL);
    values[t] = t;
    MPI_Comm_set_attr(mine, key, &values[t]);
    MPI_Comm dup;
    MPI_Comm_dup(mine, &dup); /* copy callback */
    int *v = NULL, flag = 0;
    MPI_Comm_get_attr(dup, key, &v, &flag);
    CHECK(flag && v == &values[t], "thread %d attribute on the duplicate", t);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    int before = atomic_load(&handler_calls);
    MPI_Send(NULL, -1, MPI_INT, 0, 0, dup); /* a negative count: the handler runs */
    CHECK(atomic_load(&handler_calls) > before, "thread %d: the user error handler did not run", t);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);         /* delete callback */
    MPI_Comm_delete_attr(mine, key); /* and again */
    MPI_Comm_free_keyval(&key);
}

static void groups_and_topologies(int t, MPI_Comm mine)
{
    MPI_Group g, first;
    MPI_Comm_group(mine, &g);
    int zero = 0, r = -5;
    MPI_Group_incl(g, 1, &zero, &first);
    MPI_Group_translate_ranks(first, 1, &zero, g, &r);
    CHECK(r == 0, "thread %d group translate %d", t, r);
    MPI_Group_free(&first);
    MPI_Group_free(&g);
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(tt_size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(mine, 2, dims, periods, 0, &cart);
    int left, right;
    MPI_Cart_shift(cart, 1, 1, &left, &right);
    int out = tt_rank * 10 + t, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, cart, MPI_STATUS_IGNORE);
    int lw;
    MPI_Group cg, wg;
    MPI_Comm_group(cart, &cg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(cg, 1, &left, wg, &lw);
    CHECK(in == lw * 10 + t, "thread %d halo from %d: %d", t, lw, in);
    MPI_Group_free(&cg);
    MPI_Group_free(&wg);
    MPI_Comm_free(&cart);
}

static void one_sided(int t, MPI_Comm mine)
{
    int *base;
    MPI_Win win;
    MPI_Win_allocate(WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, mine, &base, &win);
    for (int i = 0; i < WIN_INTS; i++)
        base[i] = 0;
    int target = (tt_rank + 1) % tt_size, from = (tt_rank + tt_size - 1) % tt_size;
    int vals[8];
    for (int i = 0; i < 8; i++)
        vals[i] = tt_rank * 100 + t * 10 + i;
    MPI_Win_fence(0, win);
    MPI_Put(vals, 8, MPI_INT, target, 0, 8, MPI_INT, win);
    int one = 1;
    MPI_Accumulate(&one, 1, MPI_INT, 0, WIN_INTS - 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 8; i++)
        CHECK(base[i] == from * 100 + t * 10 + i, "thread %d put element %d = %d", t, i, base[i]);
    if (tt_rank == 0)
        CHECK(base[WIN_INTS - 1] == tt_size, "thread %d accumulate = %d", t, base[WIN_INTS - 1]);
    int got[8];
    MPI_Win_lock_all(0, win);
    MPI_Get(got, 8, MPI_INT, target, 0, 8, MPI_INT, win);
    MPI_Win_flush(target, win);
    MPI_Win_unlock_all(win);
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == tt_rank * 100 + t * 10 + i, "thread %d get element %d = %d", t, i, got[i]);
    MPI_Win_free(&win);
}

static void *work(void *arg)
{
    int t = (int)(long)arg;
    for (int it = 0; it < ITERS; it++) {
        datatypes(t);
        infos(t);
        attributes_and_handlers(t, parent[t]);
        groups_and_topologies(t, parent[t]);
        one_sided(t, parent[t]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int n = tt_threads(argc, argv, 4);
    for (int t = 0; t < n; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]);
    tt_run(n, work);
    CHECK(atomic_load(&deletes) == 2 * n * ITERS, "delete callbacks ran %d times, not %d", atomic_load(&deletes),
          2 * n * ITERS);
    for (int t = 0; t < n; t++)
        MPI_Comm_free(&parent[t]);
    return tt_finish();
}
