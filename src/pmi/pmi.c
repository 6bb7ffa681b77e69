/* pmi.c: which launcher protocol this process speaks, decided once at cr_pmi_init from the
 * environment:
 *   - the tunable COURIER_PMI=pmi1|pmi2|pmix, when the user says;
 *   - PMI-2 when PMI_FD or PMI_PORT is set and SLURM_MPI_TYPE says srun's pmi2 plugin (its own
 *     protocol; it takes PMI-1 lines too);
 *   - PMI-1 when PMI_FD or PMI_PORT is set otherwise (Courier's mpiexec, MPICH's Hydra);
 *   - PMIx when PMIX_NAMESPACE and PMIX_RANK are (Open MPI's mpirun and PRRTE, srun --mpi=pmix);
 *   - otherwise a singleton world of one, unless another launcher's variables say this is one
 *     of several processes: then starting would run unrelated copies of the program. */
#include "backends.h"

#include "core/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cr_pmi_backend pmi1 = {"pmi1", cr_pmi1_init, cr_pmi1_connected, cr_pmi1_put, cr_pmi1_get,
                                    cr_pmi1_barrier, cr_pmi1_finalize, cr_pmi1_abort};
static const cr_pmi_backend pmi2 = {"pmi2", cr_pmi2_init, cr_pmi2_connected, cr_pmi2_put, cr_pmi2_get,
                                    cr_pmi2_barrier, cr_pmi2_finalize, cr_pmi2_abort};
static const cr_pmi_backend pmix = {"pmix", cr_pmix_init, cr_pmix_connected, cr_pmix_put, cr_pmix_get,
                                    cr_pmix_barrier, cr_pmix_finalize, cr_pmix_abort};

static int64_t tune_pmi;
CR_TUNABLE_EX(tune_pmi, COURIER_PMI, CR_TUNE_CHOICE, "auto", "auto|pmi1|pmi2|pmix", 0, 3,
              "the protocol spoken to the launcher (auto: PMI-2 under srun --mpi=pmi2, PMI-1 where PMI_FD or "
              "PMI_PORT is set otherwise, PMIx where PMIX_NAMESPACE is, else a singleton; see doc/running.md)");

/* NULL in a singleton: nothing to talk to. */
static const cr_pmi_backend *B;

static bool set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* Environment variables that mean "you are one of several processes" to other launchers. */
static int explain_orphan(char *why, size_t cap)
{
    static const struct {
        const char *var, *launcher, *advice;
    } hints[] = {
        {"SLURM_STEP_NUM_TASKS", "Slurm's srun without an MPI plugin",
         "Run it with srun --mpi=pmi2 or srun --mpi=pmix (or set MpiDefault=pmi2 in slurm.conf)."},
        {"PMI_SIZE", "a PMI launcher", "Its PMI_FD or PMI_PORT did not reach this process."},
        {"OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun", "Its PMIx variables did not reach this process."},
        {"PMIX_RANK", "a PMIx launcher", "PMIX_NAMESPACE is not set."},
        {"MPI_LOCALNRANKS", "MPICH's Hydra", "Its PMI_FD did not reach this process."},
    };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        const char *v = getenv(hints[i].var);
        if (!v || !*v)
            continue;
        if (strcmp(hints[i].var, "PMIX_RANK") != 0 && atoi(v) <= 1)
            continue;
        snprintf(why, cap,
                 "this process was started by %s (%s=%s), but no PMI server can be reached "
                 "(neither PMI_FD, PMI_PORT nor PMIX_NAMESPACE is set). Courier will not start a "
                 "one-process world here: that would run several unrelated copies of the program. %s",
                 hints[i].launcher, hints[i].var, v, hints[i].advice);
        return -1;
    }
    return 0;
}

int cr_pmi_init(cr_pmi_job *job, char *why, size_t whycap)
{
    const cr_pmi_backend *asked[] = {NULL, &pmi1, &pmi2, &pmix};
    B = asked[tune_pmi];
    if (B) {
        /* as the user says */
    } else if (set("PMI_FD") || set("PMI_PORT")) {
        const char *slurm = getenv("SLURM_MPI_TYPE");
        B = slurm && !strncmp(slurm, "pmi2", 4) ? &pmi2 : &pmi1;
    } else if (cr_pmix_wanted()) {
        B = &pmix;
    }
    if (B)
        return B->init(job, why, whycap);
    if (explain_orphan(why, whycap))
        return -1;
    *job = (cr_pmi_job){.rank = 0, .size = 1, .universe_size = 1, .singleton = true};
    return 0;
}

bool cr_pmi_connected(void)
{
    return B && B->connected();
}

bool cr_pmi_launcher_names_failures(void)
{
    return B == &pmi1 && cr_pmi1_courier_launcher();
}

int cr_pmi_put(const char *key, const char *value)
{
    return B ? B->put(key, value) : -1;
}

int cr_pmi_get(const char *key, char *value, size_t cap)
{
    return B ? B->get(key, value, cap) : -1;
}

int cr_pmi_barrier(void)
{
    return B ? B->barrier() : -1;
}

int cr_pmi_finalize(void)
{
    return B ? B->finalize() : 0;
}

void cr_pmi_abort(int exitcode, const char *message)
{
    if (B)
        B->abort(exitcode, message);
}
