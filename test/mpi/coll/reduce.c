/* MPI_Reduce: the data that arrives at the root, for
 *   - every predefined operation on every predefined datatype it applies to (opdata.h),
 *     roots taking turns, with recvbuf NULL at the other processes (it is not significant);
 *   - every root, with and without MPI_IN_PLACE at the root;
 *   - counts from 0 to well past COURIER_COLL_REDUCE_LARGE, around the largest power of two
 *     <= p (below it Rabenseifner falls back), and non-contiguous pair types on the large path;
 *   - a non-commutative user operation (composition of affine maps), whose result must be the
 *     rank-ordered composition at every root, and a commutative one on the large path.
 * Listed once per algorithm (COURIER_COLL_REDUCE) and with automatic selection. */
#include "opdata.h"

static int rank, size;

/* One reduction of `count` elements of types[t] with operation o to `root`; in_place at the
 * root if asked. Checks the root's result and that no byte past it was written. */
static void one(int t, int o, MPI_Count count, int root, int in_place)
{
    const tentry *te = &types[t];
    size_t ext = ct_extent(te->ct), bytes = (size_t)count * ext;
    char *sbuf = malloc(bytes + 1), *rbuf = NULL;
    fill_input(te->ct, o, rank, size, count, sbuf);
    if (rank == root) {
        rbuf = malloc(bytes + GUARD);
        if (in_place)
            memcpy(rbuf, sbuf, bytes);
        else
            memset(rbuf, 0x5c, bytes);
        guard_set(rbuf, bytes);
    }
    int rc = MPI_Reduce(rank == root && in_place ? MPI_IN_PLACE : sbuf, rbuf, (int)count, te->h, op_handle(o), root,
                        MPI_COMM_WORLD);
    char what[160];
    snprintf(what, sizeof what, "MPI_Reduce %s %s count %lld root %d%s", op_name[o], te->name, (long long)count, root,
             in_place ? " in place" : "");
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    if (rank == root) {
        check_result(te->ct, o, size, count, rbuf, what);
        guard_check(rbuf, bytes, what);
    }
    /* The send buffer is input only. */
    char *again = malloc(bytes + 1);
    fill_input(te->ct, o, rank, size, count, again);
    if (!(rank == root && in_place))
        for (MPI_Count i = 0; i < count; i++)
            if (!elem_eq(te->ct, again + i * ext, sbuf + i * ext)) {
                CHECK(0, "%s changed element %lld of the send buffer", what, (long long)i);
                break;
            }
    free(again);
    free(sbuf);
    free(rbuf);
}

static int find_type(MPI_Datatype h)
{
    for (int t = 0; t < NTYPES; t++)
        if (types[t].h == h)
            return t;
    abort();
}

static MPI_Datatype user_dt_seen;
static void aff_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_dt_seen = *dt;
    for (int k = 0; k < *len; k++)
        aff_compose((affine *)in + k, (affine *)inout + k);
}

static void sum64_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_dt_seen = *dt;
    int64_t *a = in, *b = inout;
    for (int k = 0; k < *len; k++)
        b[k] += a[k];
}

/* Non-commutative user operation (affine maps composed, on MPI_2INT), at every root. */
static void user_noncommutative(MPI_Count count)
{
    MPI_Op op;
    MPI_Op_create(aff_op, 0, &op);
    affine *in = malloc((size_t)count * sizeof *in + 1), *out = malloc((size_t)count * sizeof *out + 1);
    for (MPI_Count k = 0; k < count; k++)
        aff_gen(rank, k, in + k);
    for (int root = 0; root < size; root++) {
        if (count > 1000 && root != 0 && root != size - 1 && root != size / 2)
            continue;
        int in_place = root % 2 == 1;
        if (in_place && rank == root)
            memcpy(out, in, (size_t)count * sizeof *in);
        user_dt_seen = MPI_DATATYPE_NULL;
        MPI_Reduce(in_place && rank == root ? MPI_IN_PLACE : in, rank == root ? out : NULL, (int)count, MPI_2INT, op,
                   root, MPI_COMM_WORLD);
        CHECK(user_dt_seen == MPI_DATATYPE_NULL || user_dt_seen == MPI_2INT,
              "the user function got another datatype than MPI_2INT");
        if (rank == root) {
            long bad = 0;
            for (MPI_Count k = 0; k < count; k++) {
                affine want;
                aff_expected(size, k, &want);
                if ((want.a != out[k].a || want.b != out[k].b) && bad++ < 3)
                    CHECK(0, "non-commutative MPI_Reduce count %lld root %d%s: element %lld is (%d,%d), "
                             "expected the rank-ordered composition (%d,%d)",
                          (long long)count, root, in_place ? " in place" : "", (long long)k, out[k].a, out[k].b,
                          want.a, want.b);
            }
            CHECK(bad == 0, "non-commutative MPI_Reduce count %lld root %d: %ld elements wrong", (long long)count, root,
                  bad);
        }
    }
    free(in);
    free(out);
    MPI_Op_free(&op);
}

/* A commutative user operation, large enough for the Rabenseifner path. */
static void user_commutative(MPI_Count count, int root)
{
    MPI_Op op;
    MPI_Op_create(sum64_op, 1, &op);
    int64_t *in = malloc((size_t)count * 8 + 1), *out = malloc((size_t)count * 8 + 1);
    for (MPI_Count k = 0; k < count; k++)
        in[k] = (int64_t)k * (rank + 1) - rank;
    MPI_Reduce(in, rank == root ? out : NULL, (int)count, MPI_INT64_T, op, root, MPI_COMM_WORLD);
    if (rank == root) {
        long bad = 0;
        int64_t s = (int64_t)size * (size + 1) / 2, r = (int64_t)size * (size - 1) / 2;
        for (MPI_Count k = 0; k < count; k++)
            if (out[k] != (int64_t)k * s - r && bad++ < 3)
                CHECK(0, "user sum count %lld root %d: element %lld is %lld, expected %lld", (long long)count, root,
                      (long long)k, (long long)out[k], (long long)((int64_t)k * s - r));
    }
    free(in);
    free(out);
    MPI_Op_free(&op);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;

    /* Every (operation, datatype) pair Courier accepts, roots taking turns. */
    int pair = 0;
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < NOPS; o++)
            if (op_accepted(o, types[t].group)) {
                one(t, o, 1, pair % size, 0);
                one(t, o, 37, (pair + 1) % size, pair % 3 == 0);
                pair++;
            }

    /* Every root. */
    int t_int = find_type(MPI_INT), t_di = find_type(MPI_DOUBLE_INT), t_d = find_type(MPI_DOUBLE);
    for (int root = 0; root < size; root++) {
        one(t_int, O_SUM, 1000, root, root % 2);
        one(t_di, O_MINLOC, 7, root, root % 2 == 0);
        one(t_int, O_MAX, 0, root, root % 2);
    }

    /* Counts around the power-of-two fold and the large-message threshold (64 KiB = 16384
     * ints), and well past it; non-contiguous pairs and wide types on the large path. */
    MPI_Count counts[] = {pof2 - 1, pof2, pof2 + 1, 16383, 16384, 16385, 100000};
    int roots[3] = {0, size - 1, size / 2};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (int k = 0; k < 3; k++)
            if (k == 0 || roots[k] != roots[k - 1])
                one(t_int, O_SUM, counts[c], roots[k], k == 2);
    one(t_d, O_SUM, 100003, size - 1, 0);
    one(t_d, O_PROD, 20000, 0, 1);
    one(t_di, O_MAXLOC, 50001, size / 2, 0);
    one(t_di, O_MINLOC, 50001, 0, 1);
    one(find_type(MPI_LONG_DOUBLE_INT), O_MINLOC, 10000, size - 1, 0);
    one(find_type(MPI_LONG_DOUBLE), O_MAX, 20000, 0, 0);
    one(find_type(MPI_C_DOUBLE_COMPLEX), O_PROD, 20000, size - 1, 1);
    one(find_type(MPI_UINT8_T), O_BXOR, 70001, 0, 0);
    one(find_type(MPI_BYTE), O_BAND, 70001, size / 2, 1);
    one(find_type(MPI_C_BOOL), O_LXOR, 70001, size - 1, 0);
    one(find_type(MPI_INT64_T), O_BOR, 20000, 0, 1);
    one(find_type(MPI_SHORT_INT), O_MAXLOC, 30000, size - 1, 1);

    /* User operations. */
    user_noncommutative(5);
    user_noncommutative(20000);
    user_commutative(7, 0);
    user_commutative(30000, size - 1);
    return mt_finish();
}
