/* iotest.h: helpers for the MPI I/O tests: a fresh directory per run (made by rank 0 with mkdtemp,
 * removed with whatever is left in it at the end), file names in it, and byte comparisons that
 * report the first difference and how many there are. Include it first (it asks for mkdtemp). */
#ifndef IOTEST_H
#define IOTEST_H

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* mkdtemp under -std=c11 */
#endif
#include "mpitest.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char io_dir[256];

/* Errors return (on the communicators and as the default file error handler), and rank 0 makes
 * the run's directory, whose name every process gets. */
static void io_setup(void)
{
    (void)mt_string_has; /* (mpitest.h's, unused here: no -Wunused-function warning) */
    mt_errors_return();
    CHECK_CLASS(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), MPI_SUCCESS);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        snprintf(io_dir, sizeof io_dir, "/tmp/cr-io-XXXXXX");
        if (!mkdtemp(io_dir)) {
            perror("mkdtemp");
            io_dir[0] = 0;
        }
    }
    MPI_Bcast(io_dir, sizeof io_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!io_dir[0]) {
        CHECK(0, "no temporary directory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The path of `name` in the run's directory (eight results live at a time). */
static const char *io_path(const char *name)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", io_dir, name);
    return b;
}

static inline int io_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* After a barrier, rank 0 removes every file left in the directory and the directory. */
static void io_cleanup(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        DIR *d = opendir(io_dir);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                char p[768];
                snprintf(p, sizeof p, "%s/%s", io_dir, e->d_name);
                unlink(p);
            }
            closedir(d);
        }
        CHECK(rmdir(io_dir) == 0, "could not remove %s", io_dir);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Whether rc is of class a or class b (for calls where the standard allows either). */
static inline int io_class_either(int rc, int a, int b, const char *call, const char *file, int line)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (cls != a && cls != b) {
        mt_fail(file, line, call, "returned class %d, expected %d or %d", cls, a, b);
        return 0;
    }
    return 1;
}
#define CHECK_CLASS2(call, a, b) io_class_either((call), (a), (b), #call, __FILE__, __LINE__)

/* Compares n bytes; one failure per call, naming the first differing byte and the count. */
static inline int io_check_bytes(const void *got, const void *want, size_t n, const char *what, const char *file, int line)
{
    const unsigned char *g = got, *w = want;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i] && bad++ == 0)
            first = i;
    if (bad)
        mt_fail(file, line, what, "%zu of %zu bytes differ, the first at byte %zu: %#x, want %#x", bad, n, first,
                g[first], w[first]);
    return bad == 0;
}
#define CHECK_BYTES(got, want, n, what) io_check_bytes((got), (want), (n), (what), __FILE__, __LINE__)

/* Compares n ints; one failure per call, naming the first differing index and the count. */
static inline int io_check_ints(const int *got, const int *want, size_t n, const char *what, const char *file, int line)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    if (bad)
        mt_fail(file, line, what, "%zu of %zu ints differ, the first at index %zu: %d, want %d", bad, n, first,
                got[first], want[first]);
    return bad == 0;
}
#define CHECK_INTS(got, want, n, what) io_check_ints((got), (want), (n), (what), __FILE__, __LINE__)

/* The count of `type` in a status (-2 when MPI_Get_count fails). */
static inline int io_count(const MPI_Status *st, MPI_Datatype type)
{
    int c = -2;
    if (MPI_Get_count(st, type, &c) != MPI_SUCCESS)
        return -2;
    return c;
}

/* The sync-barrier-sync that makes one process's writes visible to the others' reads when
 * atomicity is off (MPI-4.1 14.6.1). */
static inline void io_sync_barrier(MPI_File fh, MPI_Comm comm)
{
    CHECK_CLASS(MPI_File_sync(fh), MPI_SUCCESS);
    MPI_Barrier(comm);
    CHECK_CLASS(MPI_File_sync(fh), MPI_SUCCESS);
}

#endif
