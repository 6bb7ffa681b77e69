/* config.c: parsing the COURIER_* tunables declared across the library (see config.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

extern const cr_tunable __start_cr_tunables[];
extern const cr_tunable __stop_cr_tunables[];

/* Tunables of the core itself. */
int64_t cr_verbose;
CR_TUNABLE_EX(cr_verbose, COURIER_VERBOSE, CR_TUNE_INT, "0", NULL, 0, 3,
              "print what the library decides at start-up (transports, thresholds) to stderr: 0 silent, 1..3 more detail");

const cr_tunable *cr_config_table(int *count)
{
    *count = (int)(__stop_cr_tunables - __start_cr_tunables);
    return __start_cr_tunables;
}

static int parse_choice(const cr_tunable *t, const char *s, int64_t *out)
{
    const char *c = t->choices;
    for (int64_t i = 0; c && *c; i++) {
        size_t n = strcspn(c, "|");
        if (strlen(s) == n && strncasecmp(c, s, n) == 0) {
            *out = i;
            return 0;
        }
        c += n + (c[n] == '|');
    }
    return -1;
}

static int parse(const cr_tunable *t, const char *s, int64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    switch (t->type) {
    case CR_TUNE_BOOL:
        if (!strcasecmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") || !strcasecmp(s, "true"))
            return *out = 1, 0;
        if (!strcasecmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !strcasecmp(s, "false"))
            return *out = 0, 0;
        return -1;
    case CR_TUNE_CHOICE:
        return parse_choice(t, s, out);
    case CR_TUNE_INT:
    case CR_TUNE_SIZE: {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 0);
        if (end == s || errno)
            return -1;
        if (t->type == CR_TUNE_SIZE && *end) {
            int shift = 0;
            switch (toupper((unsigned char)*end)) {
            case 'K': shift = 10; break;
            case 'M': shift = 20; break;
            case 'G': shift = 30; break;
            default: return -1;
            }
            end++;
            if (toupper((unsigned char)*end) == 'B' || *end == 'i')
                end++;
            if (v > (INT64_MAX >> shift) || v < 0)
                return -1;
            v <<= shift;
        }
        while (isspace((unsigned char)*end))
            end++;
        if (*end || v < t->min || v > t->max)
            return -1;
        *out = v;
        return 0;
    }
    }
    return -1;
}

static const char *describe(const cr_tunable *t, char *buf, size_t cap)
{
    switch (t->type) {
    case CR_TUNE_BOOL: return "0 or 1";
    case CR_TUNE_CHOICE: snprintf(buf, cap, "one of %s", t->choices); return buf;
    case CR_TUNE_SIZE: snprintf(buf, cap, "a byte count such as 4096, 64K or 2M, from %lld to %lld",
                                (long long)t->min, (long long)t->max); return buf;
    case CR_TUNE_INT: snprintf(buf, cap, "an integer from %lld to %lld", (long long)t->min, (long long)t->max); return buf;
    }
    return "?";
}

int cr_config_load(char *why, size_t cap)
{
    int n;
    const cr_tunable *tab = cr_config_table(&n);
    for (int i = 0; i < n; i++) {
        const cr_tunable *t = &tab[i];
        int64_t v;
        if (parse(t, t->dflt, &v)) {
            snprintf(why, cap, "internal: the default of %s (%s) does not parse", t->name, t->dflt);
            return -1;
        }
        const char *env = getenv(t->name);
        if (env && parse(t, env, &v)) {
            char d[160];
            snprintf(why, cap, "%s=\"%s\" is not valid: expected %s (%s)", t->name, env, describe(t, d, sizeof d), t->help);
            return -1;
        }
        *t->var = v;
    }
    return 0;
}

void cr_config_format(const cr_tunable *t, char *buf, size_t cap)
{
    int64_t v = *t->var;
    if (t->type == CR_TUNE_CHOICE) {
        const char *c = t->choices;
        for (int64_t i = 0; i < v && c; i++) {
            c = strchr(c, '|');
            c = c ? c + 1 : NULL;
        }
        size_t len = c ? strcspn(c, "|") : 0;
        snprintf(buf, cap, "%.*s", (int)len, c ? c : "");
    } else {
        snprintf(buf, cap, "%lld", (long long)v);
    }
}
