/* pvar.h: performance variables (MPI_T pvars). A layer declares a counter next to the code that
 * counts:
 *
 *     static uint64_t ran_binomial;
 *     CR_PVAR_COUNTER(ran_binomial, "coll.bcast.binomial", "MPI_Bcast calls run by a binomial tree");
 *     ...
 *     ran_binomial++;
 *
 * The declaration lands in the `cr_pvars` linker section, which mpit.c lists as the MPI_T
 * performance variables (class MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, bound to no
 * object, continuous: they count from MPI_Init on, whether a tool reads them or not). A counter
 * is a plain increment: at MPI_THREAD_MULTIPLE the critical section covers it like the state it
 * counts. */
#ifndef CR_PVAR_H
#define CR_PVAR_H

#include "base.h"

typedef struct cr_pvar {
    const char *name;
    const char *help;
    uint64_t *value;
    const char *file; /* where it is declared: its layer is its MPI_T category (mpit.c) */
} cr_pvar;

#define CR_PVAR_COUNTER(var_, name_, help_)                                                        \
    static const cr_pvar cr_pvar_##var_ __attribute__((used, section("cr_pvars"), aligned(8))) = { \
        .name = name_, .help = help_, .value = &var_, .file = __FILE__}

/* The counter and its declaration at once (file scope). */
#define CR_PVAR_DEFINE(var_, name_, help_)                                                         \
    static uint64_t var_;                                                                          \
    CR_PVAR_COUNTER(var_, name_, help_)

/* The table, for MPI_T. */
const cr_pvar *cr_pvar_table(int *count);

#endif
