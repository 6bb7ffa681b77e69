/* pmi.h: how a Courier process learns who it is and meets its peers: the PMI-1 wire protocol
 * client (spoken to Courier's mpiexec, MPICH's Hydra, or any PMI-1 server), or a singleton
 * world of one when nothing launched us.
 *
 * The client is the library's only link to its launcher: rank, size, the key-value space used
 * to exchange addresses, barriers during start-up, and abort. */
#ifndef CR_PMI_H
#define CR_PMI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cr_pmi_job {
    int rank;
    int size;
    int appnum;
    int universe_size;
    bool singleton;
} cr_pmi_job;

/* Connects to the launcher named by the environment, or starts a singleton when there is none.
 * Returns 0, or -1 with a user-facing explanation in `why` (for example when the environment
 * says this is one of N processes but no PMI server can be reached). */
int cr_pmi_init(cr_pmi_job *job, char *why, size_t whycap);
int cr_pmi_put(const char *key, const char *value);
/* Reads `key`; returns 0, or -1 when it is absent or the launcher is gone. */
int cr_pmi_get(const char *key, char *value, size_t cap);
/* Makes every put visible and waits for all processes of the job. */
int cr_pmi_barrier(void);
int cr_pmi_finalize(void);
/* Tells the launcher this job must end with `exitcode`; returns so the caller can exit. */
void cr_pmi_abort(int exitcode, const char *message);
bool cr_pmi_connected(void);
/* True when the launcher is Courier's mpiexec, which says itself which rank failed and why;
 * other launchers (srun, Hydra, mpirun) only learn that a process aborted, so the process
 * says it. */
bool cr_pmi_launcher_names_failures(void);

#endif
