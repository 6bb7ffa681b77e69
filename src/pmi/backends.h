/* backends.h: the clients behind pmi.h: PMI-1 and PMI-2 over a socket to the launcher (pmi1.c,
 * pmi2.c, sharing wire.c) and PMIx through the launcher's libpmix (pmix.c). pmi.c picks one at
 * cr_pmi_init from the environment (or starts a singleton); each implements the calls of pmi.h
 * with its prefix. */
#ifndef CR_PMI_BACKENDS_H
#define CR_PMI_BACKENDS_H

#include "pmi.h"

/* How long a server may stay silent during the start-up exchange (every server answers it at
 * once; later waits, such as barriers, have no limit: other processes may be slow to start). */
#define CR_PMI_STARTUP_SECONDS 30

typedef struct cr_pmi_backend {
    const char *name;
    int (*init)(cr_pmi_job *job, char *why, size_t whycap);
    bool (*connected)(void);
    int (*put)(const char *key, const char *value);
    int (*get)(const char *key, char *value, size_t cap);
    int (*barrier)(void);
    int (*finalize)(void);
    void (*abort)(int exitcode, const char *message);
} cr_pmi_backend;

int cr_pmi1_init(cr_pmi_job *job, char *why, size_t whycap);
bool cr_pmi1_connected(void);
bool cr_pmi1_courier_launcher(void); /* the server is Courier's mpiexec */
int cr_pmi1_put(const char *key, const char *value);
int cr_pmi1_get(const char *key, char *value, size_t cap);
int cr_pmi1_barrier(void);
int cr_pmi1_finalize(void);
void cr_pmi1_abort(int exitcode, const char *message);

int cr_pmi2_init(cr_pmi_job *job, char *why, size_t whycap);
bool cr_pmi2_connected(void);
int cr_pmi2_put(const char *key, const char *value);
int cr_pmi2_get(const char *key, char *value, size_t cap);
int cr_pmi2_barrier(void);
int cr_pmi2_finalize(void);
void cr_pmi2_abort(int exitcode, const char *message);

/* True when the environment says a PMIx server started this process. */
bool cr_pmix_wanted(void);
int cr_pmix_init(cr_pmi_job *job, char *why, size_t whycap);
bool cr_pmix_connected(void);
int cr_pmix_put(const char *key, const char *value);
int cr_pmix_get(const char *key, char *value, size_t cap);
int cr_pmix_barrier(void);
int cr_pmix_finalize(void);
void cr_pmix_abort(int exitcode, const char *message);

/* wire.c: the one socket to a PMI-1 or PMI-2 server. */
/* From PMI_FD, else PMI_PORT; reads are limited to CR_PMI_STARTUP_SECONDS until the caller
 * lifts the limit with cr_pmi_wire_timeout(0). */
int cr_pmi_wire_open(char *why, size_t whycap);
const char *cr_pmi_wire_where(void);            /* "PMI_FD=6", for messages */
bool cr_pmi_wire_up(void);
void cr_pmi_wire_close(void);
void cr_pmi_wire_timeout(int seconds); /* limit on each read from now on; 0: none */
int cr_pmi_wire_write(const char *s, size_t n);
int cr_pmi_wire_line(char *line, size_t cap); /* one '\n'-ended line, without it; -1 if too long */
int cr_pmi_wire_bytes(char *out, size_t n);   /* exactly n bytes */
/* The value of `key` in "k=v<sep>k=v..." (PMI-1: sep ' '; PMI-2: sep ';', where ";;" stands for
 * a ';' in a value). 0, or -1 when absent or longer than cap - 1. */
int cr_pmi_field(const char *msg, char sep, const char *key, char *out, size_t cap);
int cr_pmi_field_int(const char *msg, char sep, const char *key, int *out);
/* 0 when `reply` is command `expect` with no rc or rc=0. */
int cr_pmi_reply_ok(const char *reply, char sep, const char *expect);
int cr_pmi_env_int(const char *name, int dflt);

#endif
