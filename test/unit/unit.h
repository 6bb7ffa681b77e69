/* unit.h: a minimal harness for tests of Courier's internals (linked with the library's
 * objects, run without a launcher). */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failures;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            unit_failures++;                                                                       \
        }                                                                                          \
    } while (0)
#define UNIT_DONE() (printf("%s\n", unit_failures ? "FAILED" : "No Errors"), unit_failures != 0)

#endif
