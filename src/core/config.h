/* config.h: tunables. Every tunable is a COURIER_* environment variable declared once, next to
 * the code that reads it:
 *
 *     static int64_t eager_max;
 *     CR_TUNABLE(eager_max, COURIER_SHM_EAGER_MAX, CR_TUNE_SIZE, "16K",
 *                "largest message sent eagerly through shared memory, in bytes");
 *
 * The declaration lands in the `cr_tunables` linker section; cr_config_load() walks the section
 * at MPI_Init, parses each variable from the environment (or its default) and stores it. The
 * MPI_T control-variable interface (and so courier-info) lists the same table. */
#ifndef CR_CONFIG_H
#define CR_CONFIG_H

#include "base.h"

typedef enum {
    CR_TUNE_INT,    /* integer */
    CR_TUNE_SIZE,   /* byte count, accepts K, M, G suffixes (powers of 1024) */
    CR_TUNE_BOOL,   /* 0/1, yes/no, on/off, true/false */
    CR_TUNE_CHOICE, /* one word out of the list in `choices`, stored as its index */
} cr_tune_type;

typedef struct cr_tunable {
    const char *name;
    cr_tune_type type;
    const char *dflt;    /* the default, written as a user would write it */
    const char *help;
    const char *choices; /* CR_TUNE_CHOICE: words separated by '|' */
    int64_t min, max;    /* accepted range for numbers */
    int64_t *var;
    const char *file;    /* where it is declared: its layer is its MPI_T category (mpit.c) */
} cr_tunable;

#define CR_TUNABLE_EX(var_, NAME, type_, dflt_, choices_, min_, max_, help_)                       \
    static const cr_tunable cr_tunable_##var_ __attribute__((used, section("cr_tunables"),       \
                                                             aligned(8))) = {                      \
        .name = #NAME, .type = type_, .dflt = dflt_, .help = help_, .choices = choices_,          \
        .min = min_, .max = max_, .var = &var_, .file = __FILE__}

#define CR_TUNABLE(var_, NAME, type_, dflt_, help_)                                                \
    CR_TUNABLE_EX(var_, NAME, type_, dflt_, NULL, INT64_MIN, INT64_MAX, help_)

/* Parses every tunable from the environment. On a bad value returns -1 and explains in `why`. */
int cr_config_load(char *why, size_t cap);

/* The table, for MPI_T and courier-info. */
const cr_tunable *cr_config_table(int *count);
/* Writes the current value of tunable `t` as text (the choice word for CR_TUNE_CHOICE). */
void cr_config_format(const cr_tunable *t, char *buf, size_t cap);

#endif
