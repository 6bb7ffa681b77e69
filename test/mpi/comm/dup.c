/* MPI_Comm_dup and MPI_Comm_dup_with_info:
 *   - the duplicate has the same size and ranks, is MPI_CONGRUENT to the original (MPI_IDENT to
 *     itself), and works (an allreduce on it);
 *   - it has a separate matching context: with the same source and tag, a message sent on the
 *     duplicate is received on the duplicate and one sent on the original on the original,
 *     whatever the order of the sends and receives;
 *   - attributes are copied as their copy callbacks say: MPI_COMM_DUP_FN (same value),
 *     MPI_COMM_NULL_COPY_FN (not copied), a custom callback (gets the old communicator, the
 *     keyval, its extra state and the old value; its new value is stored) and a custom one that
 *     declines (flag 0); delete callbacks run for the copies when the duplicate is freed;
 *     a copy callback that fails makes MPI_Comm_dup fail;
 *   - the error handler is inherited (and kept after the original's changes or is freed);
 *   - the same for MPI_Comm_dup_with_info (with an info object and with MPI_INFO_NULL), and
 *     duplicates of duplicates and of split communicators. */
#include "mpitest.h"

static int rank, size;
static int copy_calls, delete_calls, copy_bad_args;
static MPI_Comm expect_old;
static int extra_token = 1234;

static int custom_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval;
    copy_calls++;
    if (oldcomm != expect_old || extra != &extra_token)
        copy_bad_args++;
    int *v = malloc(sizeof *v);
    *v = *(int *)in + 100;
    *(void **)out = v;
    *flag = 1;
    return MPI_SUCCESS;
}
static int declining_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
    copy_calls++;
    *flag = 0;
    return MPI_SUCCESS;
}
static int failing_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}
static int counting_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    delete_calls++;
    return MPI_SUCCESS;
}
static int freeing_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    delete_calls++;
    free(value);
    return MPI_SUCCESS;
}

static int handler_calls;
static MPI_Comm handler_comm;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    handler_calls++;
    handler_comm = *comm;
}

/* Size, rank, comparison, a working allreduce. */
static void same_members(MPI_Comm orig, MPI_Comm dup, const char *what)
{
    int r1, r2, s1, s2, result = -1;
    MPI_Comm_rank(orig, &r1);
    MPI_Comm_rank(dup, &r2);
    MPI_Comm_size(orig, &s1);
    MPI_Comm_size(dup, &s2);
    CHECK(r1 == r2 && s1 == s2, "%s: rank %d size %d, original rank %d size %d", what, r2, s2, r1, s1);
    MPI_Comm_compare(orig, dup, &result);
    CHECK(result == MPI_CONGRUENT, "%s: MPI_Comm_compare with the original gave %d, not MPI_CONGRUENT", what, result);
    MPI_Comm_compare(dup, dup, &result);
    CHECK(result == MPI_IDENT, "%s: MPI_Comm_compare with itself gave %d, not MPI_IDENT", what, result);
    int x = r2 + 1, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup);
    CHECK(sum == s2 * (s2 + 1) / 2, "%s: allreduce gave %d", what, sum);
}

/* Messages with the same source and tag on both communicators go to their own communicator,
 * whichever is sent or received first. */
static void separate_contexts(MPI_Comm a, MPI_Comm b, const char *what)
{
    int r, p;
    MPI_Comm_rank(a, &r);
    MPI_Comm_size(a, &p);
    int right = (r + 1) % p, left = (r + p - 1) % p;
    for (int order = 0; order < 2; order++) {
        int sa = 1000 + r, sb = 2000 + r, ga = -1, gb = -1;
        MPI_Request q[2];
        /* Send on b first, then a; receive on a first (posted after the sends or before). */
        if (order == 0) {
            MPI_Isend(&sb, 1, MPI_INT, right, 7, b, &q[0]);
            MPI_Isend(&sa, 1, MPI_INT, right, 7, a, &q[1]);
            MPI_Recv(&ga, 1, MPI_INT, left, 7, a, MPI_STATUS_IGNORE);
            MPI_Recv(&gb, 1, MPI_INT, left, 7, b, MPI_STATUS_IGNORE);
        } else {
            MPI_Request rq[2];
            MPI_Irecv(&ga, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, a, &rq[0]);
            MPI_Irecv(&gb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, b, &rq[1]);
            MPI_Barrier(a);
            MPI_Isend(&sb, 1, MPI_INT, right, 7, b, &q[0]);
            MPI_Isend(&sa, 1, MPI_INT, right, 7, a, &q[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        }
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        CHECK(ga == 1000 + left && gb == 2000 + left,
              "%s (order %d): got %d on the original and %d on the duplicate, expected %d and %d", what, order, ga,
              gb, 1000 + left, 2000 + left);
    }
    /* Nothing left over anywhere. */
    int flag = 1;
    MPI_Barrier(a);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, a, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "%s: a message is left on the original", what);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, b, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "%s: a message is left on the duplicate", what);
    MPI_Barrier(a);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Membership, comparison, contexts. */
    MPI_Comm dup, dupdup;
    CHECK_CLASS(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    CHECK(dup != MPI_COMM_WORLD && dup != MPI_COMM_NULL, "MPI_Comm_dup returned a predefined handle");
    same_members(MPI_COMM_WORLD, dup, "MPI_Comm_dup(MPI_COMM_WORLD)");
    separate_contexts(MPI_COMM_WORLD, dup, "MPI_COMM_WORLD and its duplicate");
    MPI_Comm_dup(dup, &dupdup);
    same_members(dup, dupdup, "a duplicate of a duplicate");
    separate_contexts(dup, dupdup, "a duplicate and its duplicate");
    int result;
    MPI_Comm_compare(MPI_COMM_WORLD, dupdup, &result);
    CHECK(result == MPI_CONGRUENT, "MPI_COMM_WORLD vs a duplicate of a duplicate: %d", result);
    MPI_Comm selfdup;
    MPI_Comm_dup(MPI_COMM_SELF, &selfdup);
    same_members(MPI_COMM_SELF, selfdup, "MPI_Comm_dup(MPI_COMM_SELF)");
    separate_contexts(MPI_COMM_SELF, selfdup, "MPI_COMM_SELF and its duplicate");

    /* A duplicate of a split communicator (ranks reversed). */
    MPI_Comm split, splitdup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split);
    MPI_Comm_dup(split, &splitdup);
    same_members(split, splitdup, "a duplicate of a split communicator");
    separate_contexts(split, splitdup, "a split communicator and its duplicate");

    /* Attributes and their copy callbacks. */
    int k_dup, k_null, k_custom, k_decline;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, counting_delete, &k_dup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, counting_delete, &k_null, NULL);
    MPI_Comm_create_keyval(custom_copy, freeing_delete, &k_custom, &extra_token);
    MPI_Comm_create_keyval(declining_copy, counting_delete, &k_decline, NULL);
    static int v_dup = 11, v_null = 22, v_decline = 44;
    int *v_custom = malloc(sizeof *v_custom);
    *v_custom = 33;
    MPI_Comm_set_attr(split, k_dup, &v_dup);
    MPI_Comm_set_attr(split, k_null, &v_null);
    MPI_Comm_set_attr(split, k_custom, v_custom);
    MPI_Comm_set_attr(split, k_decline, &v_decline);
    for (int with_info = 0; with_info < 3; with_info++) {
        MPI_Comm c;
        MPI_Info info = MPI_INFO_NULL;
        const char *what = with_info == 0 ? "MPI_Comm_dup" : with_info == 1 ? "MPI_Comm_dup_with_info" :
                                                                               "MPI_Comm_dup_with_info(MPI_INFO_NULL)";
        copy_calls = delete_calls = copy_bad_args = 0;
        expect_old = split;
        if (with_info == 1) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        }
        if (with_info == 0)
            CHECK_CLASS(MPI_Comm_dup(split, &c), MPI_SUCCESS);
        else
            CHECK_CLASS(MPI_Comm_dup_with_info(split, info, &c), MPI_SUCCESS);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        CHECK(copy_calls == 2 && copy_bad_args == 0, "%s: %d calls to the custom copy callbacks (expected 2), %d "
              "with wrong arguments", what, copy_calls, copy_bad_args);
        int *got, flag;
        MPI_Comm_get_attr(c, k_dup, &got, &flag);
        CHECK(flag && got == &v_dup, "%s: MPI_COMM_DUP_FN attribute flag %d value %p, expected %p", what, flag,
              (void *)(flag ? got : NULL), (void *)&v_dup);
        MPI_Comm_get_attr(c, k_null, &got, &flag);
        CHECK(!flag, "%s: an MPI_COMM_NULL_COPY_FN attribute was copied", what);
        MPI_Comm_get_attr(c, k_custom, &got, &flag);
        CHECK(flag && got != v_custom && *got == 133, "%s: custom copy gave flag %d value %d", what, flag,
              flag ? *got : -1);
        MPI_Comm_get_attr(c, k_decline, &got, &flag);
        CHECK(!flag, "%s: an attribute whose copy callback declined was copied", what);
        /* The original still has all four, unchanged. */
        MPI_Comm_get_attr(split, k_custom, &got, &flag);
        CHECK(flag && got == v_custom && *got == 33, "%s changed the original's attribute", what);
        MPI_Comm_get_attr(split, k_null, &got, &flag);
        CHECK(flag && got == &v_null, "%s removed the original's attribute", what);
        same_members(split, c, what);
        separate_contexts(split, c, what);
        MPI_Comm_free(&c);
        CHECK(c == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
        CHECK(delete_calls == 2, "%s: freeing the duplicate ran %d delete callbacks, expected 2 (the copies)", what,
              delete_calls);
    }

    /* A failing copy callback makes MPI_Comm_dup fail (at every process alike). */
    MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN);
    int k_fail;
    MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &k_fail, NULL);
    MPI_Comm_set_attr(split, k_fail, NULL);
    MPI_Comm bad = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(split, &bad);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_dup succeeded although a copy callback failed");
    if (rc == MPI_SUCCESS && bad != MPI_COMM_NULL)
        MPI_Comm_free(&bad);
    MPI_Comm_delete_attr(split, k_fail);
    MPI_Comm_free_keyval(&k_fail);
    CHECK_CLASS(MPI_Comm_dup(split, &bad), MPI_SUCCESS); /* and works again without it */
    same_members(split, bad, "MPI_Comm_dup after a failed one");
    MPI_Comm_free(&bad);

    /* Error handlers are inherited from the parent (MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL). */
    MPI_Errhandler eh, got;
    int ssize, x = 0;
    MPI_Comm_size(splitdup, &ssize);
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(splitdup, eh);
    MPI_Comm withh;
    MPI_Comm_dup(splitdup, &withh);
    MPI_Comm_set_errhandler(splitdup, MPI_ERRORS_RETURN); /* the duplicate keeps its own */
    MPI_Errhandler_free(&eh);                             /* the duplicate holds a reference */
    MPI_Comm_get_errhandler(withh, &got);
    CHECK(got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL && got != MPI_ERRHANDLER_NULL,
          "the duplicate's error handler is not the user handler of the original");
    MPI_Errhandler_free(&got);
    handler_calls = 0;
    rc = MPI_Send(&x, 1, MPI_INT, ssize, 0, withh); /* no such rank */
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_comm == withh,
          "an error on the duplicate: rc %d, %d handler calls, comm %s", rc, handler_calls,
          handler_comm == withh ? "right" : "wrong");
    MPI_Comm returning;
    MPI_Comm_dup(splitdup, &returning);
    MPI_Comm_get_errhandler(returning, &got);
    CHECK(got == MPI_ERRORS_RETURN, "a duplicate of a communicator with MPI_ERRORS_RETURN has another handler");
    MPI_Errhandler_free(&got);
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, ssize, 0, returning), MPI_ERR_RANK);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD's handler changed");
    MPI_Errhandler_free(&got);

    MPI_Comm_free(&returning);
    MPI_Comm_free(&withh);
    MPI_Comm_free_keyval(&k_dup);
    MPI_Comm_free_keyval(&k_null);
    MPI_Comm_free_keyval(&k_custom);
    MPI_Comm_free_keyval(&k_decline);
    MPI_Comm_free(&splitdup);
    delete_calls = 0;
    MPI_Comm_free(&split); /* runs the delete callbacks of its four attributes */
    CHECK(delete_calls == 4, "freeing the split ran %d delete callbacks, expected 4", delete_calls);
    MPI_Comm_free(&selfdup);
    MPI_Comm_free(&dupdup);
    MPI_Comm_free(&dup);
    return mt_finish();
}
