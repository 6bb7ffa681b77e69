/* The standard ABI's own calls: version, sizes, Fortran properties, and handle <-> int
 * conversions for predefined and user handles. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int major = -1, minor = -1;
    MPI_Abi_get_version(&major, &minor); /* allowed before MPI_Init */
    CHECK(major == 1 && minor == 0, "ABI version %d.%d", major, minor);
    mt_init(&argc, &argv);

    MPI_Info info;
    CHECK_CLASS(MPI_Abi_get_info(&info), MPI_SUCCESS);
    const char *keys[] = {"mpi_aint_size", "mpi_count_size", "mpi_offset_size"};
    size_t sizes[] = {sizeof(MPI_Aint), sizeof(MPI_Count), sizeof(MPI_Offset)};
    for (int i = 0; i < 3; i++) {
        char v[MPI_MAX_INFO_VAL];
        int buflen = sizeof v, flag;
        MPI_Info_get_string(info, keys[i], &buflen, v, &flag);
        CHECK(flag && (size_t)atoi(v) == sizes[i], "%s = %s", keys[i], flag ? v : "(missing)");
    }
    MPI_Info_free(&info);

    MPI_Info finfo;
    MPI_Abi_get_fortran_info(&finfo);
    CHECK(finfo == MPI_INFO_NULL, "no Fortran layer yet, but Fortran info is set");
    int t = 1, f = 0, tt, ff, is_set;
    MPI_Abi_get_fortran_booleans(4, &tt, &ff, &is_set);
    CHECK(is_set == 0, "Fortran booleans set before anyone set them");
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(4, &t, &f), MPI_SUCCESS);
    MPI_Abi_get_fortran_booleans(4, &tt, &ff, &is_set);
    CHECK(is_set == 1 && tt == 1 && ff == 0, "booleans read back as set=%d %d/%d", is_set, tt, ff);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(4, &t, &f), MPI_ERR_ABI);

    /* Predefined handles convert to their ABI values and back. */
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 257, "COMM_WORLD -> %d", MPI_Comm_toint(MPI_COMM_WORLD));
    CHECK(MPI_Comm_toint(MPI_COMM_NULL) == 256, "COMM_NULL -> %d", MPI_Comm_toint(MPI_COMM_NULL));
    CHECK(MPI_Type_toint(MPI_INT) == 521, "MPI_INT -> %d", MPI_Type_toint(MPI_INT));
    CHECK(MPI_Op_toint(MPI_SUM) == 33, "MPI_SUM -> %d", MPI_Op_toint(MPI_SUM));
    CHECK(MPI_Errhandler_toint(MPI_ERRORS_RETURN) == 323, "ERRORS_RETURN -> %d",
          MPI_Errhandler_toint(MPI_ERRORS_RETURN));
    CHECK(MPI_Info_toint(MPI_INFO_ENV) == 305, "INFO_ENV -> %d", MPI_Info_toint(MPI_INFO_ENV));
    CHECK(MPI_Request_toint(MPI_REQUEST_NULL) == 384, "REQUEST_NULL");
    CHECK(MPI_Comm_fromint(258) == MPI_COMM_SELF, "258 -> COMM_SELF");
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE, "MPI_DOUBLE round trip");
    CHECK(MPI_Win_fromint(MPI_Win_toint(MPI_WIN_NULL)) == MPI_WIN_NULL, "MPI_WIN_NULL round trip");
    CHECK(MPI_File_fromint(MPI_File_toint(MPI_FILE_NULL)) == MPI_FILE_NULL, "MPI_FILE_NULL round trip");
    CHECK(MPI_Session_fromint(MPI_Session_toint(MPI_SESSION_NULL)) == MPI_SESSION_NULL, "SESSION_NULL");
    CHECK(MPI_Message_fromint(MPI_Message_toint(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC, "MESSAGE_NO_PROC");
    CHECK(MPI_Group_fromint(MPI_Group_toint(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "GROUP_EMPTY");

    /* User handles: a stable int outside the predefined range, and back to a working handle. */
    MPI_Info mine;
    MPI_Info_create(&mine);
    MPI_Info_set(mine, "color", "blue");
    int i = MPI_Info_toint(mine);
    CHECK(i < 1 || i > 4095, "user info handle converts to %d, inside the predefined range", i);
    CHECK(MPI_Info_toint(mine) == i, "toint is not stable");
    MPI_Info back = MPI_Info_fromint(i);
    char v[16];
    int flag;
    MPI_Info_get_string(back, "color", &(int){sizeof v}, v, &flag);
    CHECK(back == mine && flag && !strcmp(v, "blue"), "user info did not survive toint/fromint");
    MPI_Info_free(&back);

    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(MPI_Errhandler_fromint(MPI_Errhandler_toint(eh)) == eh, "errhandler round trip");
    MPI_Errhandler_free(&eh);
    return mt_finish();
}
