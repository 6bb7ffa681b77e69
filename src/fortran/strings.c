/* strings.c: MPI_INFO_GET_STRING in Fortran, whose buflen means something else than in C.
 *
 * In C, buflen counts the terminating null on the way in and out. Fortran has no terminating null:
 * buflen in is how many characters of value may be written (0: none, value untouched), and out
 * is the length of the value; the value is blank-padded to the length of the CHARACTER variable. */
#include "fortran.h"

#include <string.h>

void pmpi_info_get_string_(cr_fint *info, const char *key, cr_fint *buflen, char *value, cr_fint *flag,
                           cr_fint *ierror, size_t key_len, size_t value_len)
{
    char *key_c = cr_f_string_in(key, key_len, 1);
    int room = *buflen > 0 ? *buflen : 0;
    char *value_c = calloc((size_t)room + 1, 1);
    if (!key_c || !value_c) {
        free(key_c);
        free(value_c);
        cr_f_nomem(ierror);
        return;
    }
    int c_buflen = room > 0 ? room + 1 : 0;
    *ierror = MPI_Info_get_string(MPI_Info_fromint(*info), key_c, &c_buflen, value_c, flag);
    if (*ierror == MPI_SUCCESS && *flag) {
        if (room > 0)
            cr_f_string_out(value, value_len, value_c);
        *buflen = c_buflen > 0 ? c_buflen - 1 : 0;
    }
    free(key_c);
    free(value_c);
}
extern __typeof__(pmpi_info_get_string_) mpi_info_get_string_ __attribute__((weak, alias("pmpi_info_get_string_")));
