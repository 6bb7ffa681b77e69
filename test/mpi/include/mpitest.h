/* mpitest.h: helpers for Courier's MPI test programs.
 *
 * A test checks the data that arrived with CHECK(); a failed check prints where and why and
 * counts an error. mt_finish() ends the test: it exits non-zero when this process saw an error
 * (so mpiexec stops the job and reports it), and rank 0 prints "No Errors" otherwise. */
#ifndef MPITEST_H
#define MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int mt_errors; /* atomic: the multithreaded tests check from every thread */
static int mt_rank = -1;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            mt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                       \
        }                                                                                          \
    } while (0)

/* Checks that an MPI call returned `expected_class` (MPI_SUCCESS for success). */
#define CHECK_CLASS(call, expected_class) mt_check_class((call), (expected_class), #call, __FILE__, __LINE__)

static void mt_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL rank %d %s:%d: %s: %s\n", mt_rank, file, line, cond, msg);
    fflush(stderr);
    mt_errors++;
}

static int mt_check_class(int rc, int expected, const char *call, const char *file, int line)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (cls != expected) {
        char s[MPI_MAX_ERROR_STRING] = "";
        int len;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, s, &len);
        mt_fail(file, line, call, "returned class %d, expected %d (%s)", cls, expected, s);
    }
    return rc;
}

static void mt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
}

static int mt_finish(void)
{
    if (mt_errors) {
        fprintf(stderr, "rank %d: %d error%s\n", mt_rank, mt_errors, mt_errors == 1 ? "" : "s");
        fflush(stderr);
        exit(1);
    }
    MPI_Finalize();
    if (mt_rank == 0)
        printf("No Errors\n");
    return 0;
}

/* The error string of `code` contains `text`. */
static int mt_string_has(int code, const char *text)
{
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, s, &len);
    return strstr(s, text) != NULL;
}

/* The name of a window flavour (MPI_WIN_FLAVOR_*), for messages. */
static inline const char *mt_flavor_name(int f)
{
    switch (f) {
    case MPI_WIN_FLAVOR_CREATE: return "create";
    case MPI_WIN_FLAVOR_ALLOCATE: return "allocate";
    case MPI_WIN_FLAVOR_SHARED: return "allocate_shared";
    case MPI_WIN_FLAVOR_DYNAMIC: return "dynamic";
    }
    return "?";
}

#endif
