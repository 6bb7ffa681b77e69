/* Communicator info hints: the standard's assertions set with MPI_Comm_set_info come back from
 * MPI_Comm_get_info (keys Courier does not use are left out), a later set overrides, a value
 * other than true/false is MPI_ERR_INFO_VALUE, MPI_Comm_dup keeps the hints and
 * MPI_Comm_dup_with_info replaces them (with MPI_INFO_NULL: none). */
#include "mpitest.h"

static int has(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    return want ? flag && strcmp(v, want) == 0 : !flag;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm comm, dup, dupi;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Info in, out;
    MPI_Info_create(&in);
    MPI_Info_set(in, "mpi_assert_no_any_tag", "true");
    MPI_Info_set(in, "mpi_assert_exact_length", "false");
    MPI_Info_set(in, "courier_no_such_hint", "true");
    MPI_Comm_set_info(comm, in);
    MPI_Comm_get_info(comm, &out);
    CHECK(has(out, "mpi_assert_no_any_tag", "true") && has(out, "mpi_assert_exact_length", "false") &&
              has(out, "courier_no_such_hint", NULL) && has(out, "mpi_assert_no_any_source", NULL),
          "hints read back");
    MPI_Info_free(&out);

    MPI_Comm_dup(comm, &dup);
    MPI_Comm_get_info(dup, &out);
    CHECK(has(out, "mpi_assert_no_any_tag", "true"), "MPI_Comm_dup keeps the hints");
    MPI_Info_free(&out);

    MPI_Info_set(in, "mpi_assert_no_any_tag", "false");
    MPI_Info_set(in, "mpi_assert_allow_overtaking", "true");
    MPI_Comm_dup_with_info(comm, in, &dupi);
    MPI_Comm_get_info(dupi, &out);
    CHECK(has(out, "mpi_assert_no_any_tag", "false") && has(out, "mpi_assert_allow_overtaking", "true"),
          "MPI_Comm_dup_with_info takes the new hints");
    MPI_Info_free(&out);
    MPI_Comm_free(&dupi);
    MPI_Comm_dup_with_info(comm, MPI_INFO_NULL, &dupi);
    MPI_Comm_get_info(dupi, &out);
    int nkeys;
    MPI_Info_get_nkeys(out, &nkeys);
    CHECK(nkeys == 0, "MPI_Comm_dup_with_info(MPI_INFO_NULL): %d hints", nkeys);
    MPI_Info_free(&out);

    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Info_set(in, "mpi_assert_no_any_source", "maybe");
    CHECK_CLASS(MPI_Comm_set_info(comm, in), MPI_ERR_INFO_VALUE);

    MPI_Info_free(&in);
    MPI_Comm_free(&dupi);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&comm);
    return mt_finish();
}
