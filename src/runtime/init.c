/* init.c: starting the library (the one place that starts every layer in order and stops them
 * in reverse) for the world model (MPI_Init, MPI_Finalize) and for sessions (session.c),
 * MPI_Abort, and the environment queries of chapter 11 (versions, processor name, timers,
 * memory).
 *
 * The library starts once, at the first MPI_Init or MPI_Session_init, and stops when the last of
 * them is finalized: at MPI_Finalize if no session is open, else at the last
 * MPI_Session_finalize... except that a job that used sessions alone may open a session again
 * after closing its last, so the library then stays up until the process exits. */
#include "coll/coll.h"
#include "comm/comm.h"
#include "core/config.h"
#include "core/info.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "cr_impl.h"
#include "dt/dtype.h"
#include "pmi/pmi.h"
#include "pt2pt/pt2pt.h"
#include "req/request.h"
#include "xport/xport.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#ifndef CR_BUILD_INFO
#define CR_BUILD_INFO "unknown build"
#endif

extern int64_t cr_verbose;

static CR_NORETURN void job_abort(cr_errobj *target, int code, const char *why);

/* Runs when the library is loaded: predefined objects exist before MPI_Init, so calls allowed
 * at any time (MPI_Info_*, error strings, MPI_T) and handle conversions work from the start. */
__attribute__((constructor)) static void library_load(void)
{
    cr_runtime_setup();
}

void cr_runtime_setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    cr_runtime_set_abort(job_abort);
    cr_error_setup();
    cr_info_setup();
    cr_dtype_setup();
    cr_comm_setup();
    cr_request_setup();
    cr_pt2pt_setup();
    cr_op_setup();
}


/* The node layout from PMI_process_mapping, "(vector,(first_node,nodes,ranks_per_node),...)":
 * the format MPICH's Hydra and Courier's mpiexec both publish. Returns -1 when absent or
 * malformed, and the caller falls back to comparing host names. */
static int parse_process_mapping(const char *s, int *node_of, int size)
{
    if (strncmp(s, "(vector,", 8) != 0)
        return -1;
    s += 8;
    int rank = 0, nnodes = 0;
    while (*s == '(' && rank < size) {
        int first, count, ppn, used;
        if (sscanf(s, "(%d,%d,%d)%n", &first, &count, &ppn, &used) != 3 || count <= 0 || ppn <= 0)
            return -1;
        s += used;
        for (int n = 0; n < count; n++)
            for (int p = 0; p < ppn && rank < size; p++)
                node_of[rank++] = first + n;
        nnodes = CR_MAX(nnodes, first + count);
        if (*s == ',')
            s++;
    }
    if (rank != size)
        return -1;
    /* Vectors may repeat (cyclic layouts); wrap ranks beyond one pass the same way. */
    return nnodes;
}

static int discover_nodes(char *why, size_t cap)
{
    int size = cr_rt.size;
    cr_rt.node_of = calloc((size_t)size, sizeof(int));
    if (!cr_rt.node_of)
        return snprintf(why, cap, "out of memory"), -1;
    char map[1024];
    int nnodes = -1;
    if (!cr_rt.singleton && cr_pmi_get("PMI_process_mapping", map, sizeof map) == 0)
        nnodes = parse_process_mapping(map, cr_rt.node_of, size);
    if (nnodes < 0 && !cr_rt.singleton) {
        /* No mapping: everyone publishes its host name, and equal names share a node. */
        char key[32], host[MPI_MAX_PROCESSOR_NAME];
        snprintf(key, sizeof key, "cr-host-%d", cr_rt.rank);
        if (cr_pmi_put(key, cr_rt.hostname) || cr_pmi_barrier())
            return snprintf(why, cap, "the PMI exchange of host names failed"), -1;
        char(*names)[MPI_MAX_PROCESSOR_NAME] = calloc((size_t)size, sizeof *names);
        if (!names)
            return snprintf(why, cap, "out of memory"), -1;
        nnodes = 0;
        for (int r = 0; r < size; r++) {
            snprintf(key, sizeof key, "cr-host-%d", r);
            if (cr_pmi_get(key, host, sizeof host)) {
                free(names);
                return snprintf(why, cap, "the PMI server has no host name for rank %d", r), -1;
            }
            memcpy(names[r], host, sizeof host);
            int n = 0;
            while (n < r && strcmp(names[n], host) != 0)
                n++;
            cr_rt.node_of[r] = n < r ? cr_rt.node_of[n] : nnodes++;
        }
        free(names);
    }
    if (cr_rt.singleton)
        nnodes = 1;
    cr_rt.nnodes = nnodes;
    int mine = cr_rt.node_of[cr_rt.rank];
    cr_rt.local_world_ranks = malloc((size_t)size * sizeof(int));
    if (!cr_rt.local_world_ranks)
        return snprintf(why, cap, "out of memory"), -1;
    cr_rt.local_size = 0;
    for (int r = 0; r < size; r++) {
        if (cr_rt.node_of[r] != mine)
            continue;
        if (r == cr_rt.rank)
            cr_rt.local_rank = cr_rt.local_size;
        cr_rt.local_world_ranks[cr_rt.local_size++] = r;
    }
    return 0;
}

/* Courier's mpiexec starts each rank on its own CPU and passes the CPUs the job may use in
 * COURIER_CPUS: widen the mask again so the kernel may still move this process when other work
 * needs its CPU (see tools/mpiexec/spawn.c). */
static void widen_affinity(void)
{
    const char *list = getenv("COURIER_CPUS");
    if (!list || !*list)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const char *p = list; *p;) {
        char *end;
        long c = strtol(p, &end, 10);
        if (end == p || c < 0 || c >= CPU_SETSIZE)
            return;
        CPU_SET((int)c, &set);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return;
    }
    sched_setaffinity(0, sizeof set, &set);
}

static void stop(void);

/* The process exits with the library up: stop it, so the launcher sees a clean end, when
 * neither model uses it any more (sessions only, all closed), or when the world model was
 * finalized and only sessions were left open (they end with the process, as in MPICH: the
 * program did call MPI_Finalize; mpi4py's session tests leave one open when a call fails). */
static void stop_at_exit(void)
{
    if (cr_rt.state == CR_STATE_RUNNING && cr_rt.world_state != CR_STATE_RUNNING &&
        (cr_rt.sessions == 0 || cr_rt.world_state == CR_STATE_FINALIZED))
        stop();
}

int cr_runtime_start(int *argc, char ***argv, int required, int *provided)
{
    char why[768];
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE)
        return cr_err(MPI_ERR_ARG, "required=%d is not MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED or _MULTIPLE", required);
    /* Every level is granted as asked. MPI_THREAD_MULTIPLE turns the critical section on
     * (core/thread.h) for the rest of the process's life; below it, no lock is taken. A
     * session may ask for it after the world started lower: no other thread is in MPI then
     * (the lower level's promise), so it is safe to turn on at this point too. */
    if (required == MPI_THREAD_MULTIPLE)
        cr_thread_enable();
    /* Once on, every caller gets it (more than asked for is allowed, and true). */
    if (provided)
        *provided = cr_thread_multiple ? MPI_THREAD_MULTIPLE : required;
    if (cr_rt.state == CR_STATE_RUNNING)
        return MPI_SUCCESS;
    if (cr_rt.state == CR_STATE_FINALIZED)
        return cr_err(MPI_ERR_OTHER, "MPI cannot be started again after MPI_Finalize ended it");
    if (cr_config_load(why, sizeof why))
        return cr_err(MPI_ERR_OTHER, "%s", why);
    widen_affinity();
    gethostname(cr_rt.hostname, sizeof cr_rt.hostname - 1);

    cr_pmi_job job;
    if (cr_pmi_init(&job, why, sizeof why))
        return cr_err(MPI_ERR_OTHER, "cannot start: %s", why);
    cr_rt.rank = job.rank;
    cr_rt.size = job.size;
    cr_rt.appnum = job.appnum;
    cr_rt.universe_size = job.universe_size;
    cr_rt.singleton = job.singleton;
    if (job.size < 1 || job.rank < 0 || job.rank >= job.size)
        return cr_err(MPI_ERR_OTHER, "cannot start: the launcher gave rank %d of size %d", job.rank, job.size);
    cr_err_set_rank(job.rank);
    if (discover_nodes(why, sizeof why))
        return cr_err(MPI_ERR_OTHER, "cannot start: %s", why);

    int err = cr_comm_init(job.rank, job.size);
    if (err)
        return err;
    err = cr_xport_init(why, sizeof why);
    if (err)
        return cr_err(MPI_ERR_OTHER, "cannot start the transports: %s", why);
    err = cr_pt2pt_init();
    if (err)
        return err;

    cr_rt.thread_level = cr_thread_multiple ? MPI_THREAD_MULTIPLE : required;
    cr_rt.main_thread = pthread_self();
    cr_info_env_fill(argc ? *argc : 0, argv ? *argv : NULL, cr_rt.size, cr_rt.hostname, cr_rt.thread_level);
    cr_rt.state = CR_STATE_RUNNING;
    atexit(stop_at_exit);
    if (cr_verbose >= 1 && cr_rt.rank == 0)
        fprintf(stderr, "Courier: %d processes on %d node(s)%s\n", cr_rt.size, cr_rt.nnodes,
                cr_rt.singleton ? " (singleton: started without a launcher)" : "");
    return MPI_SUCCESS;
}

static int start(int *argc, char ***argv, int required, int *provided)
{
    if (cr_rt.world_state == CR_STATE_RUNNING)
        return cr_err(MPI_ERR_OTHER, "MPI is already initialized: MPI_Init and MPI_Init_thread may be called only once");
    if (cr_rt.world_state == CR_STATE_FINALIZED)
        return cr_err(MPI_ERR_OTHER, "MPI cannot be initialized again after MPI_Finalize");
    int level = required;
    int err = cr_runtime_start(argc, argv, required, &level);
    if (!err) {
        cr_rt.world_state = CR_STATE_RUNNING;
        cr_rt.thread_level = level; /* MPI_Query_thread: the world's level */
        if (provided)
            *provided = level;
    }
    return err;
}

int cr_mpi_init(int *argc, char ***argv)
{
    return start(argc, argv, MPI_THREAD_SINGLE, NULL);
}

int cr_mpi_init_thread(int *argc, char ***argv, int required, int *provided)
{
    return start(argc, argv, required, provided);
}

static int stop_err;

/* Stops every layer, in reverse; remembers the first error for MPI_Finalize to report. */
static void stop(void)
{
    cr_pt2pt_finalize();
    cr_coll_scratch_clear();
    char why[256];
    if (cr_xport_finalize(why, sizeof why) && !stop_err)
        stop_err = cr_err(MPI_ERR_OTHER, "finalize: %s", why);
    cr_rt.state = CR_STATE_FINALIZED;
    if (!cr_rt.singleton && cr_pmi_finalize() && !stop_err)
        stop_err = cr_err(MPI_ERR_OTHER, "the launcher did not acknowledge MPI_Finalize");
    free(cr_rt.node_of);
    free(cr_rt.local_world_ranks);
    cr_rt.node_of = cr_rt.local_world_ranks = NULL;
}

int cr_runtime_release(void)
{
    if (cr_rt.world_state != CR_STATE_RUNNING && cr_rt.sessions == 0 && cr_rt.world_state == CR_STATE_FINALIZED)
        stop();
    return stop_err;
}

/* MPI_Finalize goes all the way even when a step fails (a user's attribute delete callback,
 * say): there is no way back into MPI afterwards, so it reports the first error at the end.
 * With sessions still open, the library stays up for them. */
int cr_mpi_finalize(void)
{
    int err = cr_comm_finalize();
    cr_rt.world_state = CR_STATE_FINALIZED;
    int err2 = cr_runtime_release();
    return err ? err : err2;
}

int cr_mpi_initialized(int *flag)
{
    *flag = cr_rt.world_state != CR_STATE_NOT_STARTED;
    return MPI_SUCCESS;
}

int cr_mpi_finalized(int *flag)
{
    *flag = cr_rt.world_state == CR_STATE_FINALIZED;
    return MPI_SUCCESS;
}

int cr_mpi_query_thread(int *provided)
{
    *provided = cr_rt.thread_level;
    return MPI_SUCCESS;
}

int cr_mpi_is_thread_main(int *flag)
{
    *flag = pthread_equal(pthread_self(), cr_rt.main_thread) != 0;
    return MPI_SUCCESS;
}

/* Waits (at most `ms`) until the launcher has read what this process wrote to its standard
 * output and error, when they are pipes: a launcher that kills the job on an abort may stop
 * forwarding first, and the line that says why would be lost (seen with Hydra). */
static void output_taken(int ms)
{
    for (int waited = 0; waited < ms; waited++) {
        int left1 = 0, left2 = 0;
        if ((ioctl(1, FIONREAD, &left1) != 0 || left1 == 0) && (ioctl(2, FIONREAD, &left2) != 0 || left2 == 0))
            return;
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
    }
}

/* The job's way to end (registered with core, which errors reach first): through the launcher
 * when there is one, which stops every other process. */
static void job_abort(cr_errobj *target, int code, const char *why)
{
    (void)target; /* every process of the job stops: no launcher can stop a subset yet */
    int status = code & 0xff;
    if (cr_pmi_connected()) {
        if (!cr_pmi_launcher_names_failures()) {
            fflush(stdout);
            fprintf(stderr, "Courier: rank %d (pid %d) on %s: %s; the job ends with status %d\n", cr_rt.rank,
                    (int)getpid(), cr_rt.hostname, why, status);
            output_taken(200);
        }
        cr_pmi_abort(code, why);
    } else if (cr_rt.state == CR_STATE_RUNNING || cr_rt.singleton) {
        fprintf(stderr, "Courier: %s; exiting with status %d\n", why, status);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(status);
}

int cr_mpi_abort(cr_comm *comm, int errorcode)
{
    char why[MPI_MAX_OBJECT_NAME + 64];
    snprintf(why, sizeof why, "called MPI_Abort(%s, %d)", comm->name[0] ? comm->name : "communicator", errorcode);
    fflush(stdout);
    cr_runtime_abort(&comm->eo, errorcode, why);
}

int cr_mpi_get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int cr_mpi_get_library_version(char *version, int *resultlen)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    snprintf(text, sizeof text, "Courier MPI %s (MPI %d.%d, standard ABI %d.%d); %s", CR_VERSION_STRING,
             MPI_VERSION, MPI_SUBVERSION, MPI_ABI_VERSION, MPI_ABI_SUBVERSION, CR_BUILD_INFO);
    *resultlen = cr_strlcpy(version, text, MPI_MAX_LIBRARY_VERSION_STRING);
    return MPI_SUCCESS;
}

int cr_mpi_get_processor_name(char *name, int *resultlen)
{
    *resultlen = cr_strlcpy(name, cr_rt.hostname, MPI_MAX_PROCESSOR_NAME);
    return MPI_SUCCESS;
}

/* MPI_Wtime: CLOCK_MONOTONIC, in seconds. On one node it is one clock for every process, which
 * is why MPI_WTIME_IS_GLOBAL is true when the job spans one node. */
double cr_mpi_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double cr_mpi_wtick(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC, &res) != 0 || (res.tv_sec == 0 && res.tv_nsec == 0))
        return 1e-9;
    return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}

int cr_mpi_alloc_mem(MPI_Aint size, cr_info *info, void *baseptr)
{
    (void)info;
    if (size < 0)
        return cr_err(MPI_ERR_SIZE, "size=%lld must not be negative", (long long)size);
    void *p = NULL;
    /* Cache-line alignment lets the shared-memory paths copy at full speed. */
    if (posix_memalign(&p, CR_CACHELINE, size ? (size_t)size : 1))
        return cr_err(MPI_ERR_NO_MEM, "cannot allocate size=%lld bytes", (long long)size);
    memcpy(baseptr, &p, sizeof p);
    return MPI_SUCCESS;
}

int cr_mpi_free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}

int cr_mpi_pcontrol(const int level)
{
    (void)level; /* profiling is off unless a PMPI tool is interposed; the call is a hint */
    return MPI_SUCCESS;
}

MPI_Aint cr_mpi_aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint cr_mpi_aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
