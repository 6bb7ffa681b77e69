/* Statuses: MPI_Get_count, MPI_Get_elements, MPI_Get_elements_x and their _c forms on messages
 * that really arrived, with pair types (MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
 * MPI_FLOAT_INT, MPI_LONG_INT, MPI_2INT) received whole and partially (a message holding only
 * the first part of a pair: the count is MPI_UNDEFINED, the elements are counted);
 * MPI_Status_set_elements(_x) followed by the getters (including counts beyond int);
 * MPI_Status_set_cancelled/MPI_Test_cancelled; the MPI-4.1 accessors
 * MPI_Status_get/set_source/tag/error. The messages go to oneself. */
#include "mpitest.h"

#include <limits.h>

static int rank;

static void counts(const MPI_Status *st, MPI_Datatype dt, int count, int elements, const char *what)
{
    int n = -2, e = -2;
    MPI_Count nc = -2, ec = -2, ex = -2;
    MPI_Get_count(st, dt, &n);
    MPI_Get_elements(st, dt, &e);
    MPI_Get_count_c(st, dt, &nc);
    MPI_Get_elements_c(st, dt, &ec);
    MPI_Get_elements_x(st, dt, &ex);
    CHECK(n == count && nc == count, "%s: MPI_Get_count %d, _c %lld, expected %d", what, n, (long long)nc, count);
    CHECK(e == elements && ec == elements && ex == elements,
          "%s: MPI_Get_elements %d, _c %lld, _x %lld, expected %d", what, e, (long long)ec, (long long)ex, elements);
}

/* Sends `n` items of `sdt` to oneself and receives them as up to `cap` items of `rdt`. */
static void roundtrip(const void *out, int n, MPI_Datatype sdt, void *in, int cap, MPI_Datatype rdt, MPI_Status *st)
{
    MPI_Request r;
    MPI_Irecv(in, cap, rdt, rank, 1, MPI_COMM_WORLD, &r);
    MPI_Send(out, n, sdt, rank, 1, MPI_COMM_WORLD);
    MPI_Wait(&r, st);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Status st;
    char out[4096], in[4096];
    for (int i = 0; i < 4096; i++)
        out[i] = (char)i;

    /* Whole items. */
    struct { double d; int i; } di[5] = {{1, 2}, {3, 4}, {5, 6}}, dr[5];
    roundtrip(di, 3, MPI_DOUBLE_INT, dr, 5, MPI_DOUBLE_INT, &st);
    counts(&st, MPI_DOUBLE_INT, 3, 6, "3 MPI_DOUBLE_INT");
    CHECK(dr[2].d == 5 && dr[2].i == 6, "MPI_DOUBLE_INT data");
    roundtrip(out, 7, MPI_INT, in, 100, MPI_INT, &st);
    counts(&st, MPI_INT, 7, 7, "7 MPI_INT");
    counts(&st, MPI_BYTE, 28, 28, "7 MPI_INT counted in bytes");
    roundtrip(out, 0, MPI_INT, in, 100, MPI_DOUBLE_INT, &st);
    counts(&st, MPI_DOUBLE_INT, 0, 0, "an empty message");
    MPI_Status copy = st;

    /* Partial pairs: only the first part of the last pair arrived. */
    double d[3] = {1.5, 2.5, 3.5};
    roundtrip(d, 1, MPI_DOUBLE, dr, 5, MPI_DOUBLE_INT, &st);
    counts(&st, MPI_DOUBLE_INT, MPI_UNDEFINED, 1, "1 MPI_DOUBLE into MPI_DOUBLE_INT");
    CHECK(dr[0].d == 1.5, "partial MPI_DOUBLE_INT data");
    short sh = 7;
    struct { short s; int i; } si[3];
    roundtrip(&sh, 1, MPI_SHORT, si, 3, MPI_SHORT_INT, &st);
    counts(&st, MPI_SHORT_INT, MPI_UNDEFINED, 1, "1 MPI_SHORT into MPI_SHORT_INT");
    CHECK(si[0].s == 7, "partial MPI_SHORT_INT data");
    long double ld = 2.25L;
    struct { long double l; int i; } li[3];
    roundtrip(&ld, 1, MPI_LONG_DOUBLE, li, 3, MPI_LONG_DOUBLE_INT, &st);
    counts(&st, MPI_LONG_DOUBLE_INT, MPI_UNDEFINED, 1, "1 MPI_LONG_DOUBLE into MPI_LONG_DOUBLE_INT");
    CHECK(li[0].l == 2.25L, "partial MPI_LONG_DOUBLE_INT data");
    float f = 0.5f;
    struct { float f; int i; } fi[3];
    roundtrip(&f, 1, MPI_FLOAT, fi, 3, MPI_FLOAT_INT, &st);
    counts(&st, MPI_FLOAT_INT, MPI_UNDEFINED, 1, "1 MPI_FLOAT into MPI_FLOAT_INT");
    long l = 99;
    struct { long l; int i; } lo[3];
    roundtrip(&l, 1, MPI_LONG, lo, 3, MPI_LONG_INT, &st);
    counts(&st, MPI_LONG_INT, MPI_UNDEFINED, 1, "1 MPI_LONG into MPI_LONG_INT");
    int ints[5] = {1, 2, 3, 4, 5}, two[6];
    roundtrip(ints, 5, MPI_INT, two, 3, MPI_2INT, &st);
    counts(&st, MPI_2INT, MPI_UNDEFINED, 5, "5 MPI_INT into MPI_2INT");
    CHECK(two[4] == 5, "partial MPI_2INT data");

    /* MPI_Status_set_elements(_x): the getters give back what was set. */
    const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_DOUBLE_INT, MPI_SHORT_INT,
                                  MPI_LONG_DOUBLE_INT, MPI_FLOAT_INT, MPI_LONG_INT, MPI_2INT};
    const char *names[] = {"MPI_INT", "MPI_DOUBLE", "MPI_CHAR", "MPI_DOUBLE_INT", "MPI_SHORT_INT",
                           "MPI_LONG_DOUBLE_INT", "MPI_FLOAT_INT", "MPI_LONG_INT", "MPI_2INT"};
    for (int t = 0; t < 9; t++) {
        int pair = t >= 3;
        int before = mt_errors;
        for (int e = 0; e <= 9 && mt_errors == before; e++) { /* the first failure per type is enough */
            char what[96];
            snprintf(what, sizeof what, "MPI_Status_set_elements(%s, %d)", names[t], e);
            CHECK_CLASS(MPI_Status_set_elements(&st, types[t], e), MPI_SUCCESS);
            int count = !pair ? e : e % 2 ? MPI_UNDEFINED : e / 2;
            counts(&st, types[t], count, e, what);
            snprintf(what, sizeof what, "MPI_Status_set_elements_x(%s, %d)", names[t], e);
            CHECK_CLASS(MPI_Status_set_elements_x(&st, types[t], e), MPI_SUCCESS);
            counts(&st, types[t], count, e, what);
        }
    }
    MPI_Count big = (MPI_Count)INT_MAX * 3 + 1, got = 0;
    int n = 0;
    CHECK_CLASS(MPI_Status_set_elements_x(&st, MPI_INT, big), MPI_SUCCESS);
    MPI_Get_elements_x(&st, MPI_INT, &got);
    CHECK(got == big, "set_elements_x(%lld) read back as %lld", (long long)big, (long long)got);
    MPI_Get_count_c(&st, MPI_INT, &got);
    CHECK(got == big, "set_elements_x(%lld): MPI_Get_count_c %lld", (long long)big, (long long)got);
    MPI_Get_elements(&st, MPI_INT, &n);
    CHECK(n == MPI_UNDEFINED, "MPI_Get_elements of %lld elements: %d, expected MPI_UNDEFINED", (long long)big, n);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == MPI_UNDEFINED, "MPI_Get_count of %lld elements: %d, expected MPI_UNDEFINED", (long long)big, n);
    CHECK_CLASS(MPI_Status_set_elements_c(&st, MPI_DOUBLE_INT, big * 2), MPI_SUCCESS);
    MPI_Get_count_c(&st, MPI_DOUBLE_INT, &got);
    CHECK(got == big, "set_elements_c(MPI_DOUBLE_INT, %lld): MPI_Get_count_c %lld", (long long)big * 2,
          (long long)got);
    CHECK_CLASS(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT);

    /* Cancelled flag. */
    int flag = -1;
    st = copy;
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 0, "a received message's status says cancelled");
    CHECK_CLASS(MPI_Status_set_cancelled(&st, 1), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1, "MPI_Status_set_cancelled(1) read back as %d", flag);
    MPI_Status_set_cancelled(&st, 0);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 0, "MPI_Status_set_cancelled(0) read back as %d", flag);

    /* The MPI-4.1 accessors. */
    int v = -1;
    roundtrip(out, 3, MPI_CHAR, in, 10, MPI_CHAR, &st);
    MPI_Status_get_source(&st, &v);
    CHECK(v == rank && st.MPI_SOURCE == rank, "MPI_Status_get_source %d", v);
    MPI_Status_get_tag(&st, &v);
    CHECK(v == 1, "MPI_Status_get_tag %d", v);
    MPI_Status_get_error(&st, &v);
    CHECK(v == st.MPI_ERROR, "MPI_Status_get_error %d, field %d", v, st.MPI_ERROR);
    /* the values a status of a receive from MPI_PROC_NULL holds (mpi4py sets them so) */
    CHECK_CLASS(MPI_Status_set_tag(&st, MPI_ANY_TAG), MPI_SUCCESS);
    CHECK_CLASS(MPI_Status_set_source(&st, MPI_ANY_SOURCE), MPI_SUCCESS);
    CHECK(st.MPI_TAG == MPI_ANY_TAG && st.MPI_SOURCE == MPI_ANY_SOURCE, "wildcards not set");
    CHECK_CLASS(MPI_Status_set_source(&st, 12345), MPI_SUCCESS);
    CHECK_CLASS(MPI_Status_set_tag(&st, 678), MPI_SUCCESS);
    CHECK_CLASS(MPI_Status_set_error(&st, MPI_ERR_TRUNCATE), MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == 12345 && st.MPI_TAG == 678 && st.MPI_ERROR == MPI_ERR_TRUNCATE,
          "the setters did not set the public fields (%d, %d, %d)", st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR);
    MPI_Status_get_source(&st, &v);
    CHECK(v == 12345, "MPI_Status_get_source after set: %d", v);
    MPI_Status_get_tag(&st, &v);
    CHECK(v == 678, "MPI_Status_get_tag after set: %d", v);
    MPI_Status_get_error(&st, &v);
    CHECK(v == MPI_ERR_TRUNCATE, "MPI_Status_get_error after set: %d", v);
    counts(&st, MPI_CHAR, 3, 3, "count after the setters");
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 4;
    st.MPI_ERROR = MPI_SUCCESS;
    MPI_Status_get_source(&st, &v);
    CHECK(v == 3, "MPI_Status_get_source does not read the field: %d", v);
    MPI_Status_get_tag(&st, &v);
    CHECK(v == 4, "MPI_Status_get_tag does not read the field: %d", v);
    return mt_finish();
}
