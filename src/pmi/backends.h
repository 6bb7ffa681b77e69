/* backends.h: the clients behind pmi.h: PMI-1 over a socket (pmi1.c; also the singleton start
 * when no launcher is there) and PMIx through the launcher's libpmix (pmix.c). pmi.c picks one
 * at cr_pmi_init from the environment; each implements the calls of pmi.h with its prefix. */
#ifndef CR_PMI_BACKENDS_H
#define CR_PMI_BACKENDS_H

#include "pmi.h"

int cr_pmi1_init(cr_pmi_job *job, char *why, size_t whycap);
bool cr_pmi1_connected(void);
int cr_pmi1_put(const char *key, const char *value);
int cr_pmi1_get(const char *key, char *value, size_t cap);
int cr_pmi1_barrier(void);
int cr_pmi1_finalize(void);
void cr_pmi1_abort(int exitcode, const char *message);

/* True when the environment says a PMIx server started this process. */
bool cr_pmix_wanted(void);
int cr_pmix_init(cr_pmi_job *job, char *why, size_t whycap);
bool cr_pmix_connected(void);
int cr_pmix_put(const char *key, const char *value);
int cr_pmix_get(const char *key, char *value, size_t cap);
int cr_pmix_barrier(void);
int cr_pmix_finalize(void);
void cr_pmix_abort(int exitcode, const char *message);

#endif
