/* Error handlers and error codes: MPI_ERRORS_RETURN, user handlers, MPI_Comm_call_errhandler,
 * the classes and messages of bad arguments, unsupported procedures, and user-added error
 * classes, codes and strings. */
#include "mpitest.h"

static int calls, last_code;
static MPI_Comm last_comm;
static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}
static void win_handler(MPI_Win *win, int *code, ...)
{
    (void)win;
    (void)code;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rc, cls, len, rank;
    char s[MPI_MAX_ERROR_STRING];

    /* The default is MPI_ERRORS_ARE_FATAL on both predefined communicators. */
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_WORLD");
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* Bad handles: errors about no valid object go to MPI_COMM_SELF. */
    rc = CHECK_CLASS(MPI_Comm_rank(MPI_COMM_NULL, &rank), MPI_ERR_COMM);
    CHECK(mt_string_has(rc, "MPI_Comm_rank") && mt_string_has(rc, "comm=MPI_COMM_NULL"), "message");
    rc = CHECK_CLASS(MPI_Comm_size((MPI_Comm)(uintptr_t)0x7ffff123, &rank), MPI_ERR_COMM);
    CHECK(mt_string_has(rc, "0x7ffff123"), "message does not show the bad handle");
    rc = CHECK_CLASS(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK(mt_string_has(rc, "size"), "message does not name the argument");
    CHECK_CLASS(MPI_Comm_size((MPI_Comm)MPI_INT, &rank), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ERRHANDLER);

    /* Unsupported procedures say so and name themselves. */
    rc = CHECK_CLASS(MPI_Comm_spawn("courier-no-such-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF,
                                    &(MPI_Comm){MPI_COMM_NULL}, MPI_ERRCODES_IGNORE), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(mt_string_has(rc, "MPI_Comm_spawn"), "unsupported message does not name the call");
    /* Calls about no open file raise on MPI_FILE_NULL's handler (MPI_ERRORS_RETURN). */
    rc = CHECK_CLASS(MPI_File_delete("courier-no-such-file", MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    CHECK(mt_string_has(rc, "MPI_File_delete") && mt_string_has(rc, "courier-no-such-file"), "message");
    rc = CHECK_CLASS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK(mt_string_has(rc, "MPI_Win_fence") && mt_string_has(rc, "MPI_WIN_NULL"), "message");

    /* A user handler gets the communicator and the code; the call still returns the code. */
    MPI_Errhandler mine;
    MPI_Comm_create_errhandler(handler, &mine);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine);
    MPI_Errhandler_free(&mine); /* the communicator keeps its own reference */
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, 98765, &(void *){0}, &(int){0});
    CHECK(calls == 1 && last_comm == MPI_COMM_WORLD && last_code == rc, "handler calls %d", calls);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "class %d", cls);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    CHECK(calls == 2 && last_code == MPI_ERR_OTHER, "MPI_Comm_call_errhandler did not call it");
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL, "get returned a predefined handler");
    MPI_Errhandler_free(&eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* A window's handler cannot be set on a communicator. */
    MPI_Errhandler wh;
    MPI_Win_create_errhandler(win_handler, &wh);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, wh), MPI_ERR_ARG);
    MPI_Errhandler_free(&wh);

    /* MPI_FILE_NULL holds the default for files: MPI_ERRORS_RETURN. */
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "the default file handler is not MPI_ERRORS_RETURN");

    /* Error strings and classes. */
    for (int c = MPI_SUCCESS; c <= MPI_ERR_ERRHANDLER; c++) {
        CHECK_CLASS(MPI_Error_string(c, s, &len), MPI_SUCCESS);
        CHECK(len > 0 && len == (int)strlen(s), "class %d string \"%s\"", c, s);
        MPI_Error_class(c, &cls);
        CHECK(cls == c, "class of class %d is %d", c, cls);
    }
    CHECK_CLASS(MPI_Error_class(-5, &cls), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Error_string(99999, s, &len), MPI_ERR_ARG);

    /* User classes, codes and strings. */
    int myclass, mycode, *last, flag;
    MPI_Add_error_class(&myclass);
    MPI_Add_error_code(myclass, &mycode);
    CHECK(myclass > MPI_ERR_LASTCODE && mycode > myclass, "class %d code %d", myclass, mycode);
    MPI_Add_error_string(mycode, "the flux capacitor is empty");
    MPI_Error_string(mycode, s, &len);
    CHECK(!strcmp(s, "the flux capacitor is empty"), "user string \"%s\"", s);
    MPI_Error_class(mycode, &cls);
    CHECK(cls == myclass, "class of user code %d", cls);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    CHECK(flag && *last == mycode, "MPI_LASTUSEDCODE %d, expected %d", flag ? *last : -1, mycode);
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_RANK, "mine"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_code(424242, &mycode), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Remove_error_class(myclass), MPI_ERR_ARG); /* it still has a code */
    int code2 = mycode - 0;
    MPI_Add_error_code(myclass, &code2);
    CHECK_CLASS(MPI_Remove_error_code(code2), MPI_SUCCESS);
    return mt_finish();
}
