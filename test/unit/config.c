/* Tunables: every declared tunable parses its own default; sizes, booleans and choices parse
 * as documented; bad values are refused with a message naming the variable. */
#include "core/config.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static const cr_tunable *find(const char *name)
{
    int n;
    const cr_tunable *t = cr_config_table(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

int main(void)
{
    char why[512];
    int n;
    const cr_tunable *tab = cr_config_table(&n);
    EXPECT(n >= 10, "only %d tunables registered", n);
    EXPECT(cr_config_load(why, sizeof why) == 0, "defaults do not load: %s", why);
    for (int i = 0; i < n; i++) {
        EXPECT(!strncmp(tab[i].name, "COURIER_", 8), "%s is not a COURIER_ variable", tab[i].name);
        EXPECT(strlen(tab[i].help) > 10, "%s has no help", tab[i].name);
    }
    const cr_tunable *eager = find("COURIER_EAGER_MAX"), *wait = find("COURIER_WAIT"), *cma = find("COURIER_SHM_CMA");
    EXPECT(eager && wait && cma, "expected tunables missing");

    setenv("COURIER_EAGER_MAX", "32K", 1);
    setenv("COURIER_WAIT", "Sleep", 1);
    setenv("COURIER_SHM_CMA", "off", 1);
    EXPECT(cr_config_load(why, sizeof why) == 0, "valid values refused: %s", why);
    EXPECT(*eager->var == 32768, "32K parsed as %lld", (long long)*eager->var);
    char text[64];
    cr_config_format(wait, text, sizeof text);
    EXPECT(*wait->var == 2 && !strcmp(text, "sleep"), "COURIER_WAIT=Sleep gave %lld (%s)", (long long)*wait->var, text);
    cr_config_format(cma, text, sizeof text);
    EXPECT(!strcmp(text, "off"), "COURIER_SHM_CMA=off reads back as %s", text);

    const char *bad[][2] = {{"COURIER_EAGER_MAX", "lots"}, {"COURIER_EAGER_MAX", "-1"}, {"COURIER_WAIT", "nap"},
                            {"COURIER_SHM_CMA", "maybe"}, {"COURIER_VERBOSE", "7"}, {"COURIER_EAGER_MAX", "12Q"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        EXPECT(cr_config_load(why, sizeof why) != 0, "%s=%s accepted", bad[i][0], bad[i][1]);
        EXPECT(strstr(why, bad[i][0]) && strstr(why, bad[i][1]), "message does not name it: %s", why);
        unsetenv(bad[i][0]);
    }
    return UNIT_DONE();
}
