/* runtime.h: the process's MPI life cycle (not started, running, finalized), who it is in the
 * job, and how it ends (abort). The data lives here, at the bottom, where every layer can read
 * it; src/runtime/init.c, at the top, is the one place that knows every layer: it starts them in
 * order at MPI_Init, stops them in reverse at MPI_Finalize, and registers how a job aborts. */
#ifndef CR_RUNTIME_H
#define CR_RUNTIME_H

#include "error.h"

#include <pthread.h>

enum { CR_STATE_NOT_STARTED = 0, CR_STATE_RUNNING = 1, CR_STATE_FINALIZED = 2 };

typedef struct cr_runtime {
    int state;           /* of the library: running from the first MPI_Init or MPI_Session_init */
    int world_state;     /* of the world model: MPI_Init ... MPI_Finalize */
    int sessions;        /* sessions open (MPI_Session_init ... MPI_Session_finalize) */
    int thread_level;
    pthread_t main_thread;
    int rank, size;      /* in MPI_COMM_WORLD */
    int appnum;
    int universe_size;
    bool singleton;
    int nnodes;          /* nodes the job spans */
    int local_rank;      /* rank among the processes on this node */
    int local_size;
    int *local_world_ranks; /* world ranks of the processes on this node, by local rank */
    int *node_of;        /* node index of every world rank */
    char hostname[MPI_MAX_PROCESSOR_NAME];
} cr_runtime;

extern cr_runtime cr_rt;

static inline bool cr_mpi_running(void)
{
    return CR_LIKELY(cr_rt.state == CR_STATE_RUNNING);
}

/* The error for a call made before MPI_Init or after MPI_Finalize. */
int cr_err_not_running(void);

/* Ends the job: tells the launcher (which stops every other process) and exits with `code`.
 * `target` is the object whose processes must stop (the whole job, for now). It runs what the
 * top layer registered (src/runtime/init.c), or, before that, prints `why` and exits. */
CR_NORETURN void cr_runtime_abort(cr_errobj *target, int code, const char *why);
typedef void cr_abort_fn(cr_errobj *target, int code, const char *why);
void cr_runtime_set_abort(cr_abort_fn *fn);

/* Library load: sets up predefined objects; safe to call more than once. */
void cr_runtime_setup(void);
/* Starts the library if it is not running (MPI_Init, MPI_Session_init); *provided gets the
 * thread level granted for `required`. */
int cr_runtime_start(int *argc, char ***argv, int required, int *provided);
/* Stops the library once neither model uses it any longer (MPI_Finalize, the last
 * MPI_Session_finalize); returns the first error of stopping. */
int cr_runtime_release(void);

#endif
