/* pmi.c: which launcher protocol this process speaks, decided once at cr_pmi_init: PMI-1 when
 * PMI_FD or PMI_PORT is set (Courier's mpiexec, MPICH's Hydra, Slurm's pmi2 plugin, which also
 * takes PMI-1 lines), PMIx when PMIX_NAMESPACE and PMIX_RANK are (Open MPI's mpirun and PRRTE,
 * srun --mpi=pmix), and otherwise PMI-1's singleton start (which refuses when another
 * launcher's variables say this is one of several processes). */
#include "backends.h"

#include <stdlib.h>

static bool use_pmix;

int cr_pmi_init(cr_pmi_job *job, char *why, size_t whycap)
{
    const char *fd = getenv("PMI_FD"), *port = getenv("PMI_PORT");
    use_pmix = !(fd && *fd) && !(port && *port) && cr_pmix_wanted();
    return use_pmix ? cr_pmix_init(job, why, whycap) : cr_pmi1_init(job, why, whycap);
}

bool cr_pmi_connected(void)
{
    return use_pmix ? cr_pmix_connected() : cr_pmi1_connected();
}

int cr_pmi_put(const char *key, const char *value)
{
    return use_pmix ? cr_pmix_put(key, value) : cr_pmi1_put(key, value);
}

int cr_pmi_get(const char *key, char *value, size_t cap)
{
    return use_pmix ? cr_pmix_get(key, value, cap) : cr_pmi1_get(key, value, cap);
}

int cr_pmi_barrier(void)
{
    return use_pmix ? cr_pmix_barrier() : cr_pmi1_barrier();
}

int cr_pmi_finalize(void)
{
    return use_pmix ? cr_pmix_finalize() : cr_pmi1_finalize();
}

void cr_pmi_abort(int exitcode, const char *message)
{
    if (use_pmix)
        cr_pmix_abort(exitcode, message);
    else
        cr_pmi1_abort(exitcode, message);
}
