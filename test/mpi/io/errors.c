/* errors.c: the error classes of erroneous MPI_File calls under MPI_ERRORS_RETURN (missing and existing files, bad amodes, access modes, negative offsets and seeks, invalid handles, bad views and data representations, MPI_MODE_SEQUENTIAL), error strings naming the procedure, and file error handlers: user handlers on a file and on MPI_FILE_NULL (the default for opens and deletes), get_errhandler, call_errhandler. */
#include "iotest.h"

#include <ctype.h>

static int rank, size;

/* What the user handler saw. */
static int eh_calls, eh_code;
static MPI_File eh_file;

static void handler(MPI_File *fh, int *code, ...)
{
    eh_calls++;
    eh_file = *fh;
    eh_code = *code;
}

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* MPICH deviates from the standard in two places that the checks below skip when built with it:
 * after a user file error handler returns, the failing call returns MPI_SUCCESS (the standard: the
 * handler's code "is the error code to be returned by the MPI routine that raised the error"), and
 * a collective open with CREATE|EXCL of an existing file gives MPI_ERR_FILE_EXISTS on rank 0 only
 * (the others get an MPI_ERR_OTHER for an error code they cannot decode). */
#ifdef MPICH_VERSION
#define HANDLER_RETURNS_CODE 0
#define EXCL_ON_EVERY_RANK 0
#else
#define HANDLER_RETURNS_CODE 1
#define EXCL_ON_EVERY_RANK 1
#endif

/* The error string of rc names an MPI_File_ procedure, in any case (MPICH's are in capitals). */
static void names_procedure(int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING] = "", *c;
    int len = 0, found = 0;
    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_string(rc, s, &len);
    for (c = s; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    found = strstr(s, "mpi_file_") != NULL;
    CHECK(found, "%s: the error string does not name the procedure: \"%s\"", what, s);
}

/* Opening: missing files, existing files with EXCL, and the amodes the standard forbids. */
static void opening(void)
{
    const char *missing = io_path("missing"), *p = io_path("exists");
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(class_of(rc) == MPI_ERR_NO_SUCH_FILE, "open of a missing file: class %d, want MPI_ERR_NO_SUCH_FILE",
          class_of(rc));
    names_procedure(rc, "open of a missing file");
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    CHECK(!io_exists(missing), "a failed open created %s", missing);

    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) == MPI_SUCCESS)
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK(class_of(rc) == MPI_ERR_FILE_EXISTS || (!EXCL_ON_EVERY_RANK && rank > 0 && rc != MPI_SUCCESS),
          "CREATE|EXCL open of an existing file: class %d, want MPI_ERR_FILE_EXISTS", class_of(rc));
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_FILE_EXISTS);

    /* exactly one of RDONLY, WRONLY, RDWR; no CREATE or EXCL with RDONLY; no SEQUENTIAL with RDWR */
    const int bad[] = {MPI_MODE_RDONLY | MPI_MODE_RDWR,   MPI_MODE_RDONLY | MPI_MODE_WRONLY,
                       MPI_MODE_WRONLY | MPI_MODE_RDWR,   MPI_MODE_RDONLY | MPI_MODE_CREATE,
                       MPI_MODE_RDONLY | MPI_MODE_EXCL,   MPI_MODE_CREATE,
                       0,                                 MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = MPI_File_open(MPI_COMM_WORLD, p, bad[i], MPI_INFO_NULL, &fh);
        CHECK(class_of(rc) == MPI_ERR_AMODE, "amode %#x: class %d, want MPI_ERR_AMODE", bad[i], class_of(rc));
        if (rc == MPI_SUCCESS)
            MPI_File_close(&fh);
    }

    /* deleting a missing file; the existing one is deleted once */
    char name[64];
    snprintf(name, sizeof name, "missing-%d", rank);
    rc = MPI_File_delete(io_path(name), MPI_INFO_NULL);
    CHECK(class_of(rc) == MPI_ERR_NO_SUCH_FILE, "delete of a missing file: class %d, want MPI_ERR_NO_SUCH_FILE",
          class_of(rc));
    names_procedure(rc, "delete of a missing file");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_CLASS(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
        CHECK_CLASS(MPI_File_delete(p, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Calls on open files that the access mode, the offset or the handle forbid. */
static void on_open_files(void)
{
    const char *p = io_path("access");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    int buf[4] = {1, 2, 3, 4};
    MPI_Offset sz;
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        return;
    CHECK_CLASS(MPI_File_write_at(fh, rank * 16, buf, 4, MPI_INT, &st), MPI_SUCCESS);
    int rc = MPI_File_read_at(fh, 0, buf, 4, MPI_INT, &st);
    CHECK(class_of(rc) == MPI_ERR_ACCESS, "read of a write-only file: class %d, want MPI_ERR_ACCESS", class_of(rc));
    names_procedure(rc, "read of a write-only file");
    CHECK_CLASS(MPI_File_read(fh, buf, 4, MPI_INT, &st), MPI_ERR_ACCESS);
    /* negative offsets */
    rc = MPI_File_write_at(fh, -1, buf, 4, MPI_INT, &st);
    CHECK(class_of(rc) == MPI_ERR_ARG, "write_at offset -1: class %d, want MPI_ERR_ARG", class_of(rc));
    names_procedure(rc, "write_at offset -1");
    /* a seek to before the start is an error, whatever its class */
    CHECK(MPI_File_seek(fh, -8, MPI_SEEK_SET) != MPI_SUCCESS, "seek to -8 succeeded");
    CHECK_CLASS(MPI_File_seek(fh, 8, MPI_SEEK_SET), MPI_SUCCESS);
    CHECK(MPI_File_seek(fh, -9, MPI_SEEK_CUR) != MPI_SUCCESS, "seek from 8 by -9 succeeded");
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);

    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS) != MPI_SUCCESS)
        return;
    rc = MPI_File_write_at(fh, 0, buf, 4, MPI_INT, &st);
    CHECK_CLASS2(rc, MPI_ERR_READ_ONLY, MPI_ERR_ACCESS);
    names_procedure(rc, "write of a read-only file");
    CHECK_CLASS2(MPI_File_write(fh, buf, 4, MPI_INT, &st), MPI_ERR_READ_ONLY, MPI_ERR_ACCESS);
    CHECK_CLASS(MPI_File_read_at(fh, -4, buf, 4, MPI_INT, &st), MPI_ERR_ARG);
    /* nothing was written by the refused calls: the file is what the processes wrote */
    int got[4] = {0};
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == (MPI_Offset)size * 16, "size %lld, want %d", (long long)sz, size * 16);
    CHECK_CLASS(MPI_File_read_at(fh, rank * 16, got, 4, MPI_INT, &st), MPI_SUCCESS);
    CHECK(got[0] == 1 && got[1] == 2 && got[2] == 3 && got[3] == 4, "read back %d %d %d %d", got[0], got[1], got[2],
          got[3]);

    /* views: the filetype must be made of etypes; data representations are the three predefined */
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_BYTE, &three);
    MPI_Type_commit(&three);
    CHECK_CLASS2(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL), MPI_ERR_ARG, MPI_ERR_TYPE);
    rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-representation", MPI_INFO_NULL);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "datarep \"no-such-representation\": class %d, want %d",
          class_of(rc), MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Type_free(&three);
    /* the file still works with its default view */
    got[0] = 0;
    CHECK_CLASS(MPI_File_read_at(fh, rank * 16 + 12, got, 1, MPI_INT, &st), MPI_SUCCESS);
    CHECK(got[0] == 4, "read after the refused views: %d, want 4", got[0]);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);

    /* an invalid handle (raised on MPI_FILE_NULL's handler, MPI_ERRORS_RETURN) */
    MPI_File null = MPI_FILE_NULL;
    rc = MPI_File_get_size(MPI_FILE_NULL, &sz);
    CHECK(class_of(rc) == MPI_ERR_FILE, "get_size(MPI_FILE_NULL): class %d, want MPI_ERR_FILE", class_of(rc));
    CHECK_CLASS(MPI_File_read_at(MPI_FILE_NULL, 0, buf, 4, MPI_INT, &st), MPI_ERR_FILE);
    CHECK_CLASS(MPI_File_write(MPI_FILE_NULL, buf, 4, MPI_INT, &st), MPI_ERR_FILE);
    CHECK_CLASS(MPI_File_close(&null), MPI_ERR_FILE);
}

/* MPI_MODE_SEQUENTIAL: explicit offsets and individual pointers are refused. */
static void sequential(void)
{
    const char *p = io_path("seq");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    int buf[4] = {5, 6, 7, 8};
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                                  MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        return;
    CHECK_CLASS(MPI_File_write_shared(fh, buf, 4, MPI_INT, &st), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, 4, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        return;
    int rc = MPI_File_read_at(fh, 0, buf, 4, MPI_INT, &st);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "read_at with MPI_MODE_SEQUENTIAL: class %d, want %d",
          class_of(rc), MPI_ERR_UNSUPPORTED_OPERATION);
    names_procedure(rc, "read_at with MPI_MODE_SEQUENTIAL");
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    int got[4] = {0};
    CHECK_CLASS(MPI_File_read_shared(fh, got, 4, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == 4 && got[0] == 5 && got[3] == 8, "read_shared: %d ints, %d..%d",
          io_count(&st, MPI_INT), got[0], got[3]);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
}

/* User error handlers: on an open file, and as the default (MPI_FILE_NULL's) for open and delete. */
static void handlers(void)
{
    const char *p = io_path("eh");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    MPI_Status st;
    int buf[2] = {0};
    CHECK_CLASS(MPI_File_create_errhandler(handler, &eh), MPI_SUCCESS);

    /* the default handler is what was set on MPI_FILE_NULL: MPI_ERRORS_RETURN */
    CHECK_CLASS(MPI_File_get_errhandler(MPI_FILE_NULL, &got), MPI_SUCCESS);
    CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    if (got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_RETURN)
        MPI_Errhandler_free(&got);

    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    CHECK_CLASS(MPI_File_set_errhandler(fh, eh), MPI_SUCCESS);
    got = MPI_ERRHANDLER_NULL;
    CHECK_CLASS(MPI_File_get_errhandler(fh, &got), MPI_SUCCESS);
    CHECK(got == eh, "get_errhandler does not give the handler set");
    if (got != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&got);

    /* a failing call calls it with the file and the code it then returns */
    eh_calls = 0;
    int rc = MPI_File_read_at(fh, 0, buf, 2, MPI_INT, &st); /* write-only: MPI_ERR_ACCESS */
    CHECK(eh_calls == 1, "the handler ran %d times for one failing call", eh_calls);
    CHECK(eh_file == fh, "the handler was given another file handle");
    CHECK(class_of(eh_code) == MPI_ERR_ACCESS && (class_of(rc) == MPI_ERR_ACCESS || !HANDLER_RETURNS_CODE),
          "handler code class %d, returned class %d, want MPI_ERR_ACCESS", class_of(eh_code), class_of(rc));
    eh_calls = 0;
    CHECK_CLASS(MPI_File_write_at(fh, rank * 8, buf, 2, MPI_INT, &st), MPI_SUCCESS);
    CHECK(eh_calls == 0, "the handler ran for a call that succeeded");

    /* call_errhandler calls it with the code given and returns MPI_SUCCESS */
    eh_calls = 0;
    CHECK_CLASS(MPI_File_call_errhandler(fh, MPI_ERR_OTHER), MPI_SUCCESS);
    CHECK(eh_calls == 1 && eh_file == fh && eh_code == MPI_ERR_OTHER,
          "call_errhandler: %d calls, code %d, want 1 call with MPI_ERR_OTHER (%d)", eh_calls, eh_code, MPI_ERR_OTHER);
    CHECK_CLASS(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN), MPI_SUCCESS);
    eh_calls = 0;
    CHECK_CLASS(MPI_File_read_at(fh, 0, buf, 2, MPI_INT, &st), MPI_ERR_ACCESS);
    CHECK(eh_calls == 0, "the replaced handler still ran");
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);

    /* as the default: open and delete of missing files call it with MPI_FILE_NULL, and a file opened
     * after it was set starts with it */
    CHECK_CLASS(MPI_File_set_errhandler(MPI_FILE_NULL, eh), MPI_SUCCESS);
    eh_calls = 0;
    eh_file = fh = MPI_FILE_NULL;
    rc = MPI_File_open(MPI_COMM_WORLD, io_path("missing"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(eh_calls == 1 && eh_file == MPI_FILE_NULL && class_of(eh_code) == MPI_ERR_NO_SUCH_FILE,
          "default handler on open: %d calls, code class %d", eh_calls, class_of(eh_code));
    CHECK(class_of(rc) == MPI_ERR_NO_SUCH_FILE || !HANDLER_RETURNS_CODE, "open returned class %d", class_of(rc));
    eh_calls = 0;
    char name[64];
    snprintf(name, sizeof name, "missing-%d", rank);
    rc = MPI_File_delete(io_path(name), MPI_INFO_NULL);
    CHECK(eh_calls == 1 && class_of(eh_code) == MPI_ERR_NO_SUCH_FILE &&
              (class_of(rc) == MPI_ERR_NO_SUCH_FILE || !HANDLER_RETURNS_CODE),
          "default handler on delete: %d calls, code class %d, returned class %d", eh_calls, class_of(eh_code),
          class_of(rc));
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS) ==
        MPI_SUCCESS) {
        got = MPI_ERRHANDLER_NULL;
        CHECK_CLASS(MPI_File_get_errhandler(fh, &got), MPI_SUCCESS);
        CHECK(got == eh, "a new file does not start with the default handler");
        if (got != MPI_ERRHANDLER_NULL)
            MPI_Errhandler_free(&got);
        eh_calls = 0;
        rc = MPI_File_read_at(fh, -1, buf, 2, MPI_INT, &st);
        CHECK(class_of(rc) == MPI_ERR_ARG || !HANDLER_RETURNS_CODE, "read_at -1: class %d", class_of(rc));
        CHECK(eh_calls == 1 && eh_file == fh && class_of(eh_code) == MPI_ERR_ARG,
              "inherited handler: %d calls, code class %d", eh_calls, class_of(eh_code));
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    }
    CHECK_CLASS(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), MPI_SUCCESS);
out:
    CHECK_CLASS(MPI_Errhandler_free(&eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set the handle to MPI_ERRHANDLER_NULL");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup();
    opening();
    on_open_files();
    sequential();
    handlers();
    io_cleanup();
    return mt_finish();
}
