/* Error codes: events carry their class and message, the ring forgets old messages but never
 * the class, user classes and codes map back to their classes. */
#include "core/error.h"
#include "unit.h"

#include <string.h>

int main(void)
{
    char s[MPI_MAX_ERROR_STRING];
    int first = cr_err(MPI_ERR_RANK, "invalid rank dest=%d", 9);
    EXPECT(cr_err_class(first) == MPI_ERR_RANK, "class of an event");
    cr_errobj quiet = {.errh = &cr_errh_return}; /* an object whose handler returns */
    EXPECT(cr_err_raise(&quiet, "MPI_Send", first) == first, "MPI_ERRORS_RETURN returns the code");
    cr_err_string(first, s, sizeof s);
    EXPECT(strstr(s, "MPI_Send: invalid rank dest=9") && strstr(s, "MPI_ERR_RANK"), "message: %s", s);
    for (int i = 0; i < CR_ERR_RING + 5; i++)
        cr_err(MPI_ERR_TAG, "filler %d", i);
    cr_err_string(first, s, sizeof s);
    EXPECT(!strstr(s, "dest=9") && strstr(s, "invalid rank"), "an old event keeps its class text: %s", s);
    EXPECT(cr_err_class(first) == MPI_ERR_RANK, "an old event keeps its class");
    EXPECT(cr_err_class(12345) == -1 && cr_err_class(-1) == -1, "invalid codes");
    int cls, code;
    EXPECT(cr_err_add_class(&cls) == MPI_SUCCESS && cls > MPI_ERR_LASTCODE, "user class %d", cls);
    EXPECT(cr_err_add_code(cls, &code) == MPI_SUCCESS && cr_err_class(code) == cls, "user code");
    EXPECT(cr_err_add_string(code, "custom text") == MPI_SUCCESS, "user string");
    cr_err_string(code, s, sizeof s);
    EXPECT(!strcmp(s, "custom text"), "user string %s", s);
    EXPECT(cr_err_last_used() == code, "last used code");
    return UNIT_DONE();
}
