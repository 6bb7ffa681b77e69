/* MPI_Allreduce: the data that arrives at every process, for
 *   - every predefined operation on every predefined datatype it applies to (opdata.h),
 *     with and without MPI_IN_PLACE;
 *   - counts from 0 to 100000 and more, around the largest power of two <= p (Rabenseifner
 *     needs count >= it and falls back below) and around COURIER_COLL_ALLREDUCE_LARGE (32 KiB),
 *     with non-contiguous pair types and wide types on the large path;
 *   - non-commutative user operations (composition of affine maps, i.e. products of 2x2
 *     matrices, and "keep the left operand"), checked against the rank-ordered result also at
 *     large counts (where Rabenseifner must not be used), created with MPI_Op_create and
 *     MPI_Op_create_c (MPI_Allreduce_c too);
 *   - a commutative user operation at large counts (the Rabenseifner path with a user op);
 *   - the same on a communicator whose ranks are not the world's (split with reversed keys).
 * Listed once per algorithm (COURIER_COLL_ALLREDUCE) and with automatic selection. */
#include "opdata.h"

#include <stddef.h>

static int rank, size;

/* The bytes of an element that hold its value (long double has 6 bytes of padding, pairs
 * may have padding between and after their members). */
static int value_spans(int ct, size_t off[2], size_t len[2])
{
    switch (ct) {
    case C_LD: off[0] = 0, len[0] = 10; return 1;
    case C_CLD: off[0] = 0, len[0] = 10, off[1] = sizeof(long double), len[1] = 10; return 2;
    case P_FI: off[0] = 0, len[0] = 4, off[1] = offsetof(pfi, i), len[1] = 4; return 2;
    case P_DI: off[0] = 0, len[0] = 8, off[1] = offsetof(pdi, i), len[1] = 4; return 2;
    case P_LI: off[0] = 0, len[0] = 8, off[1] = offsetof(pli, i), len[1] = 4; return 2;
    case P_SI: off[0] = 0, len[0] = 2, off[1] = offsetof(psi, i), len[1] = 4; return 2;
    case P_LDI: off[0] = 0, len[0] = 10, off[1] = offsetof(pldi, i), len[1] = 4; return 2;
    }
    off[0] = 0, len[0] = ct_size(ct);
    return 1;
}

static uint64_t result_hash(int ct, MPI_Count count, const char *buf)
{
    size_t off[2], len[2], ext = ct_extent(ct);
    int n = value_spans(ct, off, len);
    uint64_t h = 0x12345;
    for (MPI_Count i = 0; i < count; i++)
        for (int s = 0; s < n; s++)
            for (size_t b = 0; b < len[s]; b++)
                h = (h ^ (unsigned char)buf[(size_t)i * ext + off[s] + b]) * 0x100000001b3ull;
    return mix64(h);
}

/* Every process's result, every element: small results are computed and compared in full
 * everywhere; for large ones each process computes and compares its 1/p share of the
 * elements and the processes compare hashes of their whole results (over point-to-point), so
 * every element of every process is checked at 1/p of the cost. */
static void check_all(MPI_Comm comm, int ct, int o, MPI_Count count, const char *buf, const char *what)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    if (count * p <= 100000) {
        check_result(ct, o, p, count, buf, what);
        return;
    }
    char want[64], s1[128], s2[128];
    size_t ext = ct_extent(ct);
    long bad = 0;
    for (MPI_Count i = r; i < count; i += p) {
        expected_elem(ct, o, p, i, want);
        if (!elem_eq(ct, buf + (size_t)i * ext, want) && bad++ < 3)
            CHECK(0, "%s: element %lld is %s, expected %s", what, (long long)i,
                  elem_str(ct, buf + (size_t)i * ext, s1, sizeof s1), elem_str(ct, want, s2, sizeof s2));
    }
    CHECK(bad == 0, "%s: %ld of the elements checked here are wrong", what, bad);
    uint64_t mine = result_hash(ct, count, buf), theirs;
    if (r == 0) {
        for (int k = 1; k < p; k++) {
            MPI_Recv(&theirs, 1, MPI_UINT64_T, k, 4242, comm, MPI_STATUS_IGNORE);
            CHECK(theirs == mine, "%s: rank %d's result differs from rank 0's", what, k);
        }
    } else {
        MPI_Send(&mine, 1, MPI_UINT64_T, 0, 4242, comm);
    }
}

static void one_on(MPI_Comm comm, int t, int o, MPI_Count count, int in_place)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    const tentry *te = &types[t];
    size_t ext = ct_extent(te->ct), bytes = (size_t)count * ext;
    char *sbuf = malloc(bytes + 1), *rbuf = malloc(bytes + GUARD);
    fill_input(te->ct, o, r, p, count, sbuf);
    if (in_place)
        memcpy(rbuf, sbuf, bytes);
    else
        memset(rbuf, 0x5c, bytes);
    guard_set(rbuf, bytes);
    int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, (int)count, te->h, op_handle(o), comm);
    char what[160];
    snprintf(what, sizeof what, "MPI_Allreduce %s %s count %lld%s%s", op_name[o], te->name, (long long)count,
             in_place ? " in place" : "", comm == MPI_COMM_WORLD ? "" : " on a split communicator");
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    check_all(comm, te->ct, o, count, rbuf, what);
    guard_check(rbuf, bytes, what);
    free(sbuf);
    free(rbuf);
}

static void one(int t, int o, MPI_Count count, int in_place)
{
    one_on(MPI_COMM_WORLD, t, o, count, in_place);
}

static int find_type(MPI_Datatype h)
{
    for (int t = 0; t < NTYPES; t++)
        if (types[t].h == h)
            return t;
    abort();
}

static int calls_with_other_type;
static void aff_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    calls_with_other_type += *dt != MPI_2INT;
    for (int k = 0; k < *len; k++)
        aff_compose((affine *)in + k, (affine *)inout + k);
}
static void aff_op_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    calls_with_other_type += *dt != MPI_2INT;
    for (MPI_Count k = 0; k < *len; k++)
        aff_compose((affine *)in + k, (affine *)inout + k);
}
/* "Keep the left operand": associative, not commutative; the result is rank 0's data. */
static void left_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}
static void sum64_op_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    calls_with_other_type += *dt != MPI_INT64_T;
    int64_t *a = in, *b = inout;
    for (MPI_Count k = 0; k < *len; k++)
        b[k] += a[k];
}

static void user_affine(MPI_Count count, int large_api, int in_place)
{
    MPI_Op op;
    int commute = -1;
    if (large_api)
        MPI_Op_create_c(aff_op_c, 0, &op);
    else
        MPI_Op_create(aff_op, 0, &op);
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 0, "MPI_Op_commutative of a non-commutative operation gave %d", commute);
    affine *in = malloc((size_t)count * sizeof *in + 1), *out = malloc((size_t)count * sizeof *out + 1);
    for (MPI_Count k = 0; k < count; k++)
        aff_gen(rank, k, in + k);
    if (in_place)
        memcpy(out, in, (size_t)count * sizeof *in);
    calls_with_other_type = 0;
    if (large_api)
        MPI_Allreduce_c(in_place ? MPI_IN_PLACE : in, out, count, MPI_2INT, op, MPI_COMM_WORLD);
    else
        MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int)count, MPI_2INT, op, MPI_COMM_WORLD);
    CHECK(calls_with_other_type == 0, "the user function got another datatype than MPI_2INT");
    long bad = 0;
    for (MPI_Count k = 0; k < count; k++) {
        affine want;
        aff_expected(size, k, &want);
        if ((want.a != out[k].a || want.b != out[k].b) && bad++ < 3)
            CHECK(0, "non-commutative MPI_Allreduce%s count %lld%s: element %lld is (%d,%d), expected the "
                     "rank-ordered composition (%d,%d)",
                  large_api ? "_c" : "", (long long)count, in_place ? " in place" : "", (long long)k, out[k].a,
                  out[k].b, want.a, want.b);
    }
    CHECK(bad == 0, "non-commutative MPI_Allreduce count %lld: %ld elements wrong", (long long)count, bad);
    free(in);
    free(out);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not set the handle to MPI_OP_NULL");
}

static void user_left(MPI_Count count)
{
    MPI_Op op;
    MPI_Op_create(left_op, 0, &op);
    int *in = malloc((size_t)count * sizeof(int) + 1), *out = malloc((size_t)count * sizeof(int) + 1);
    for (MPI_Count k = 0; k < count; k++)
        in[k] = (int)(k * 131 + rank);
    MPI_Allreduce(in, out, (int)count, MPI_INT, op, MPI_COMM_WORLD);
    long bad = 0;
    for (MPI_Count k = 0; k < count; k++)
        if (out[k] != (int)(k * 131) && bad++ < 3)
            CHECK(0, "\"keep left\" MPI_Allreduce count %lld: element %lld is %d, expected rank 0's %d",
                  (long long)count, (long long)k, out[k], (int)(k * 131));
    free(in);
    free(out);
    MPI_Op_free(&op);
}

static void user_sum_c(MPI_Count count)
{
    MPI_Op op;
    int commute = -1;
    MPI_Op_create_c(sum64_op_c, 1, &op);
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 1, "MPI_Op_commutative of a commutative operation gave %d", commute);
    int64_t *buf = malloc((size_t)count * 8 + 1);
    for (MPI_Count k = 0; k < count; k++)
        buf[k] = (int64_t)k * (rank + 1) - rank;
    calls_with_other_type = 0;
    MPI_Allreduce_c(MPI_IN_PLACE, buf, count, MPI_INT64_T, op, MPI_COMM_WORLD);
    CHECK(calls_with_other_type == 0, "the user function got another datatype than MPI_INT64_T");
    int64_t s = (int64_t)size * (size + 1) / 2, r = (int64_t)size * (size - 1) / 2;
    long bad = 0;
    for (MPI_Count k = 0; k < count; k++)
        if (buf[k] != (int64_t)k * s - r && bad++ < 3)
            CHECK(0, "user sum count %lld: element %lld is %lld, expected %lld", (long long)count, (long long)k,
                  (long long)buf[k], (long long)((int64_t)k * s - r));
    free(buf);
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

    /* Every (operation, datatype) pair Courier accepts (the standard's and the extensions). */
    int pair = 0;
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < NOPS; o++)
            if (op_accepted(o, types[t].group)) {
                one(t, o, 1, pair % 2);
                one(t, o, 37, pair % 2 == 0);
                pair++;
            }

    /* Counts around the fold (pof2), the large threshold (32 KiB = 8192 ints) and beyond. */
    int t_int = find_type(MPI_INT), t_d = find_type(MPI_DOUBLE), t_di = find_type(MPI_DOUBLE_INT);
    MPI_Count counts[] = {0, 2, pof2 - 1, pof2, pof2 + 1, 255, 256, 257, 8191, 8192, 8193, 100000, 100003};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        one(t_int, O_SUM, counts[c], c % 2);
        one(t_di, O_MINLOC, counts[c] / 2, c % 2 == 0);
    }
    one(t_d, O_SUM, 100001, 1);
    one(t_d, O_MAX, 60000, 0);
    one(t_di, O_MAXLOC, 100000, 0);
    one(find_type(MPI_FLOAT), O_PROD, 30000, 0);
    one(find_type(MPI_LONG_DOUBLE), O_SUM, 20000, 1);
    one(find_type(MPI_LONG_DOUBLE_INT), O_MAXLOC, 10001, 1);
    one(find_type(MPI_FLOAT_INT), O_MINLOC, 30000, 0);
    one(find_type(MPI_C_DOUBLE_COMPLEX), O_SUM, 20000, 0);
    one(find_type(MPI_C_FLOAT_COMPLEX), O_PROD, 20000, 1);
    one(find_type(MPI_UINT64_T), O_BXOR, 20000, 1);
    one(find_type(MPI_INT16_T), O_LAND, 40000, 0);
    one(find_type(MPI_C_BOOL), O_LOR, 70000, 1);
    one(find_type(MPI_BYTE), O_BOR, 70000, 0);

    /* Where the node component serves MPI_COMM_WORLD (its barrier ran through it), 1 KiB a
     * process, the most its slots take, goes through them too: their flags take no room from
     * the data (a first version of them did, and sent 1 KiB by messages). */
    unsigned long long barriers = mt_pvar_value("coll.barrier.node");
    MPI_Barrier(MPI_COMM_WORLD);
    if (size > 1 && mt_pvar_value("coll.barrier.node") > barriers && !getenv("COURIER_COLL_ALLREDUCE")) {
        unsigned long long before = mt_pvar_value("coll.allreduce.node");
        one(t_int, O_SUM, 256, 0);
        CHECK(mt_pvar_value("coll.allreduce.node") == before + 1, "MPI_Allreduce of 1 KiB did not run through shared memory");
    }

    /* User operations, small and large. */
    user_affine(1, 0, 0);
    user_affine(33, 1, 1);
    user_affine(100000, 0, 1);
    user_affine(100000, 1, 0);
    user_left(5);
    user_left(100000);
    user_sum_c(7);
    user_sum_c(100000);

    /* A communicator that renumbers the processes: two halves, ranks reversed. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    one_on(half, t_int, O_SUM, 1000, 0);
    one_on(half, t_di, O_MINLOC, 100000, 1);
    one_on(half, find_type(MPI_UINT8_T), O_PROD, 5, 1);
    MPI_Comm_free(&half);
    return mt_finish();
}
