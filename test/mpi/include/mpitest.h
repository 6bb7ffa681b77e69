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
#include <stdbool.h>
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

/* Errors return to the test: on MPI_COMM_WORLD, and on MPI_COMM_SELF, where those of calls
 * without a communicator go. */
static inline void mt_errors_return(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

/* The value of this process's MPI_T performance counter `want` (0 when there is none). */
static inline unsigned long long mt_pvar_value(const char *want)
{
    int provided, n = 0;
    unsigned long long v = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char name[160];
        int name_len = sizeof name, verbosity, cls, bind, ro, cont, atomic, count;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_handle h;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &dt, &en, NULL, NULL, &bind, &ro, &cont,
                                &atomic) == MPI_SUCCESS &&
            strcmp(name, want) == 0 && MPI_T_pvar_handle_alloc(session, i, NULL, &h, &count) == MPI_SUCCESS) {
            MPI_T_pvar_read(session, h, &v);
            MPI_T_pvar_handle_free(session, &h);
        }
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    return v;
}

/* Every collective algorithm that a test's environment forces (COURIER_COLL_<NAME>=<alg>) must
 * have run in this process, if the collective ran here at all: the MPI_T performance variable
 * coll.<name>.<alg> counts the calls that picked it (src/coll/select.c), the others of
 * coll.<name>.* the calls that picked another. Exempt: allgather's recursive doubling, which
 * gives way to Bruck's algorithm when the process count is not a power of two. */
static void mt_check_forced_algorithms(void)
{
    extern char **environ;
    int provided, n = 0, size = 1;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_pvar_session session;
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_get_num(&n);
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "COURIER_COLL_", 13) != 0 || !eq || eq - *e - 13 >= 64 || strlen(eq + 1) >= 64)
            continue;
        char coll[64], alg[64], want[160], prefix[96];
        size_t len = (size_t)(eq - *e - 13);
        for (size_t i = 0; i < len; i++)
            coll[i] = (char)((*e)[13 + i] | 0x20); /* lower case (letters and '_') */
        coll[len] = 0;
        snprintf(alg, sizeof alg, "%s", eq + 1);
        if (strcmp(alg, "auto") == 0 ||
            (strcmp(coll, "allgather") == 0 && strcmp(alg, "recursive_doubling") == 0 && (size & (size - 1))))
            continue;
        snprintf(want, sizeof want, "coll.%s.%s", coll, alg);
        snprintf(prefix, sizeof prefix, "coll.%s.", coll);
        unsigned long long total = 0, forced = 0;
        int found = 0;
        for (int i = 0; i < n; i++) {
            char name[160];
            int name_len = sizeof name, verbosity, cls, bind, ro, cont, atomic;
            MPI_Datatype dt;
            MPI_T_enum en;
            if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &dt, &en, NULL, NULL, &bind, &ro, &cont,
                                    &atomic) != MPI_SUCCESS ||
                strncmp(name, prefix, strlen(prefix)) != 0)
                continue;
            MPI_T_pvar_handle h;
            int count;
            unsigned long long v = 0;
            if (MPI_T_pvar_handle_alloc(session, i, NULL, &h, &count) != MPI_SUCCESS)
                continue;
            MPI_T_pvar_read(session, h, &v);
            MPI_T_pvar_handle_free(session, &h);
            total += v;
            if (strcmp(name, want) == 0)
                forced = v, found = 1;
        }
        if (found && total > 0 && forced == 0)
            mt_fail(__FILE__, __LINE__, want, "%s is forced, but none of this process's %llu %s calls ran it",
                    *e, total, coll);
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
}

static int mt_finish(void)
{
    mt_check_forced_algorithms();
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

/* Whether comm's processes share one node (MPI_Win_allocate_shared needs them to). */
static inline int mt_one_node(MPI_Comm comm)
{
    MPI_Comm node;
    int size, node_size, all;
    MPI_Comm_size(comm, &size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    MPI_Allreduce(&node_size, &all, 1, MPI_INT, MPI_MIN, comm);
    return all == size;
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
