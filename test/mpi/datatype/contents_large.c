/* contents_large.c: types made with counts that do not fit an int report them in full, as large
 * counts (MPI_Type_get_envelope_c / MPI_Type_get_contents_c, in the _c constructors' order),
 * and the int forms refuse them with MPI_ERR_TYPE instead of truncating (mpi4py's
 * testContiguousBigMPI saw the count wrapped to a negative int). Types with small counts keep
 * reporting integers. No buffer of that size is ever allocated: only the types are made. */
#include "mpitest.h"

#include <limits.h>

static const MPI_Count BIG = (MPI_Count)INT_MAX + 12345;

/* Reads the envelope_c and contents_c of t; checks the counts of each kind and the large counts. */
static void expect(MPI_Datatype t, const char *what, int combiner, MPI_Count ni, MPI_Count na, MPI_Count nl,
                   const MPI_Count *want_large, const int *want_ints)
{
    MPI_Count gi, ga, gl, gd;
    int comb;
    CHECK_CLASS(MPI_Type_get_envelope_c(t, &gi, &ga, &gl, &gd, &comb), MPI_SUCCESS);
    CHECK(comb == combiner && gi == ni && ga == na && gl == nl, "%s: envelope_c combiner %d, %lld integers, %lld "
          "addresses, %lld large counts; want %d, %lld, %lld, %lld", what, comb, (long long)gi, (long long)ga,
          (long long)gl, combiner, (long long)ni, (long long)na, (long long)nl);
    int ints[16] = {0};
    MPI_Aint addrs[16];
    MPI_Count large[16] = {0};
    MPI_Datatype types[4];
    CHECK_CLASS(MPI_Type_get_contents_c(t, 16, 16, 16, 4, ints, addrs, large, types), MPI_SUCCESS);
    for (MPI_Count i = 0; i < nl && i < gl; i++)
        CHECK(large[i] == want_large[i], "%s: large count %lld is %lld, not %lld", what, (long long)i,
              (long long)large[i], (long long)want_large[i]);
    for (MPI_Count i = 0; i < ni && i < gi; i++)
        CHECK(ints[i] == want_ints[i], "%s: integer %lld is %d, not %d", what, (long long)i, ints[i], want_ints[i]);
    for (MPI_Count i = 0; i < gd; i++)
        if (types[i] != MPI_BYTE)
            MPI_Type_free(&types[i]);
    int a, b, c, d;
    if (nl > 0) {
        CHECK_CLASS(MPI_Type_get_envelope(t, &a, &b, &c, &d), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_get_contents(t, 16, 16, 4, ints, addrs, types), MPI_ERR_TYPE);
    } else {
        CHECK_CLASS(MPI_Type_get_envelope(t, &a, &b, &c, &d), MPI_SUCCESS);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Datatype t;

    CHECK_CLASS(MPI_Type_contiguous_c(BIG, MPI_BYTE, &t), MPI_SUCCESS);
    expect(t, "contiguous_c", MPI_COMBINER_CONTIGUOUS, 0, 0, 1, (MPI_Count[]){BIG}, NULL);
    MPI_Count size = 0;
    MPI_Type_size_c(t, &size);
    CHECK(size == BIG, "contiguous_c size %lld", (long long)size);
    MPI_Type_free(&t);

    CHECK_CLASS(MPI_Type_vector_c(2, BIG, BIG + 10, MPI_BYTE, &t), MPI_SUCCESS);
    expect(t, "vector_c", MPI_COMBINER_VECTOR, 0, 0, 3, (MPI_Count[]){2, BIG, BIG + 10}, NULL);
    MPI_Type_free(&t);

    CHECK_CLASS(MPI_Type_create_hindexed_c(2, (MPI_Count[]){BIG, 3}, (MPI_Count[]){0, 3 * BIG}, MPI_BYTE, &t),
                MPI_SUCCESS);
    expect(t, "hindexed_c", MPI_COMBINER_HINDEXED, 0, 0, 5, (MPI_Count[]){2, BIG, 3, 0, 3 * BIG}, NULL);
    MPI_Type_free(&t);

    CHECK_CLASS(MPI_Type_create_subarray_c(2, (MPI_Count[]){BIG, 4}, (MPI_Count[]){BIG - 1, 2}, (MPI_Count[]){1, 2},
                                           MPI_ORDER_C, MPI_BYTE, &t),
                MPI_SUCCESS);
    expect(t, "subarray_c", MPI_COMBINER_SUBARRAY, 2, 0, 6, (MPI_Count[]){BIG, 4, BIG - 1, 2, 1, 2},
           (int[]){2, MPI_ORDER_C});
    MPI_Type_free(&t);

    /* small counts through the _c constructors: integers, as before */
    CHECK_CLASS(MPI_Type_vector_c(2, 3, 4, MPI_BYTE, &t), MPI_SUCCESS);
    expect(t, "vector_c with small counts", MPI_COMBINER_VECTOR, 3, 0, 0, NULL, (int[]){2, 3, 4});
    MPI_Type_free(&t);
    return mt_finish();
}
