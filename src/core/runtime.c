/* runtime.c: the process's place in the job (cr_rt) and the way it aborts, as the top layer
 * registered it (see runtime.h). */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

cr_runtime cr_rt;

static cr_abort_fn *abort_fn;

void cr_runtime_set_abort(cr_abort_fn *fn)
{
    abort_fn = fn;
}

void cr_runtime_abort(cr_errobj *target, int code, const char *why)
{
    if (abort_fn)
        abort_fn(target, code, why); /* does not return */
    fprintf(stderr, "Courier: %s; exiting with status %d\n", why, code & 0xff);
    fflush(stdout);
    fflush(stderr);
    _exit(code & 0xff);
}

int cr_err_not_running(void)
{
    if (cr_rt.state == CR_STATE_FINALIZED)
        return cr_err(MPI_ERR_OTHER, "called after MPI_Finalize");
    return cr_err(MPI_ERR_OTHER, "called before MPI_Init (or MPI_Init_thread)");
}
