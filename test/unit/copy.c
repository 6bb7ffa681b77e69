/* Copies of message data (core/copy.c): the size from which they stream follows the last-level
 * cache that sysfs gives (the C library's sysconf reported 320 MiB for the test VM's 32 MiB L3,
 * so 16 MiB copies never streamed), and copies of every size class (memcpy, the vector loop,
 * streaming) are exact at every alignment of the destination, with the bytes around them
 * untouched. */
#include "core/config.h"
#include "core/copy.h"
#include "core/hwtopo.h"
#include "unit.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the first "flags" line of /proc/cpuinfo names `flag`: 1 or 0, or -1 when there is no
 * such line to read (a restricted /proc). */
static int cpu_flag(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int found = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        size_t n = strlen(flag);
        found = 0;
        for (char *p = strstr(line, flag); p && !found; p = strstr(p + 1, flag))
            found = (p[-1] == ' ' || p[-1] == ':' || p[-1] == '\t') && (p[n] == ' ' || p[n] == '\n' || p[n] == 0);
        break;
    }
    if (f)
        fclose(f);
    return found;
}

/* The size of cpu0's level-3 cache from sysfs, or 0. */
static unsigned long long sysfs_l3(void)
{
    for (int i = 0; i < 16; i++) {
        char path[128];
        int level = 0;
        unsigned long long kib = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        if (fscanf(f, "%d", &level) != 1)
            level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (level == 3 && (f = fopen(path, "r"))) {
            if (fscanf(f, "%lluK", &kib) != 1)
                kib = 0;
            fclose(f);
            return kib << 10;
        }
    }
    return 0;
}

int main(void)
{
    size_t min = cr_copy_stream_min();
    unsigned long long l3 = sysfs_l3(), llc = cr_hw_llc_bytes();
    EXPECT(min >= ((size_t)1 << 20), "streaming from %zu bytes, below 1 MiB", min);
    if (l3) {
        EXPECT(llc >= l3, "the last-level cache read as %llu bytes, sysfs says L3 is %llu", llc, l3);
        EXPECT(l3 < (4u << 20) || min <= l3 / 4, "streaming from %zu bytes, more than a quarter of the %llu-byte L3",
               min, l3);
    }
    /* Every path of cr_copy (moves inline up to 16 bytes, memcpy below CR_COPY_LONG, the
     * vector loop, streaming from the threshold) at every destination alignment within a line
     * and a few source ones, ragged heads and tails: exact, and the bytes around untouched. */
    size_t most = min + 77;
    unsigned char *src = malloc(most + 128), *dst = malloc(most + 128);
    EXPECT(src && dst, "out of memory");
    if (!src || !dst)
        return 1;
    for (size_t i = 0; i < most + 128; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 9));
    const size_t sizes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 63, 64, CR_COPY_LONG - 1, CR_COPY_LONG, CR_COPY_LONG + 1, 4096 + 13, 65536 + 77,
                            min - 1, min + 77};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t len = sizes[z];
        bool big = len >= min - 1; /* (fewer alignments: each copy is megabytes) */
        for (int shift = 0; shift < (big ? 17 : 65); shift++) {
            for (int from = 0; from < (big ? 1 : 4); from++) {
                memset(dst, 0xCD, len + 128);
                cr_copy(dst + shift, src + 3 + from * 5, len);
                size_t bad = SIZE_MAX;
                for (size_t i = 0; i < len + 128 && bad == SIZE_MAX; i++) {
                    unsigned char want = i < (size_t)shift || i >= shift + len ? 0xCD : src[3 + from * 5 + i - shift];
                    if (dst[i] != want)
                        bad = i;
                }
                EXPECT(bad == SIZE_MAX, "copy of %zu bytes from offset %d to offset %d: byte %zu differs", len,
                       3 + from * 5, shift, bad);
            }
        }
    }
    /* cr_copy_shared, cached (adapting off), adapting (timed copies, and streamed ones after
     * two slow ones), and forced to stream (COURIER_COPY_SHARED=stream): exact, nothing around it
     * touched, around CR_COPY_SHARED_SMALL and CR_COPY_SHARED_MIN and at the sizes of staging
     * blocks (the copies between the two sampled: one in CR_COPY_SHARED_SAMPLE timed). */
    const size_t shared_sizes[] = {CR_COPY_SHARED_SMALL - 1, CR_COPY_SHARED_SMALL, CR_COPY_SHARED_MIN - 1,
                                   CR_COPY_SHARED_MIN,        CR_COPY_SHARED_MIN + 33, 65536 + 5,
                                   131072};
    char why[256];
    for (int mode = 0; mode < 3; mode++) {
        if (mode == 2) {
            setenv("COURIER_COPY_SHARED", "stream", 1);
            EXPECT(cr_config_load(why, sizeof why) == 0, "COURIER_COPY_SHARED=stream refused: %s", why);
        }
        cr_copy_shared_adapt(mode == 1);
        if (mode == 1) { /* one copy timed by the clock; the others by the counter, its rate learnt after 1 ms */
            cr_copy_shared(dst, src, CR_COPY_SHARED_MIN);
            /* The rate is learnt over at least 10 ms; a window that outlived 1 s on a loaded
             * machine, or a pair of readings a preemption split, starts again: try a few. A run
             * of streamed copies (two slow ones) would time nothing: let it end first. */
            for (int i = 0; i < 8 && (i == 0 || !cr_copy_shared_counter_timed()); i++) {
                usleep(12000);
                while (cr_copy_shared_streaming())
                    cr_copy_shared(dst, src, CR_COPY_SHARED_MIN);
                cr_copy_shared(dst, src, CR_COPY_SHARED_MIN);
            }
            /* only where the counter is invariant, as the kernel reads it too (nonstop_tsc) */
            int invariant = cpu_flag("nonstop_tsc");
            EXPECT(invariant < 0 || cr_copy_shared_counter_timed() == (invariant == 1),
                   "copies timed by the counter: %d, the processor's invariant counter: %d",
                   cr_copy_shared_counter_timed(), invariant);
        }
        for (size_t z = 0; z < sizeof shared_sizes / sizeof *shared_sizes; z++) {
            size_t len = shared_sizes[z];
            for (int shift = 0; shift < 65; shift += 3) {
                memset(dst, 0xCD, len + 128);
                cr_copy_shared(dst + shift, src + 7, len);
                size_t bad = SIZE_MAX;
                for (size_t i = 0; i < len + 128 && bad == SIZE_MAX; i++) {
                    unsigned char want = i < (size_t)shift || i >= shift + len ? 0xCD : src[7 + i - shift];
                    if (dst[i] != want)
                        bad = i;
                }
                EXPECT(bad == SIZE_MAX, "shared copy (mode %d) of %zu bytes to offset %d: byte %zu differs", mode, len,
                       shift, bad);
            }
        }
    }
#if defined(__x86_64__) && defined(__SSE2__)
    /* The decision: with every copy counting as slow (a threshold of 10^6 GB/s), two timed
     * copies in a row start a run of CR_COPY_SHARED_RUN streamed ones, which then count down;
     * copies of 4-16 KiB are timed one in CR_COPY_SHARED_SAMPLE, so 2 * SAMPLE of them start a
     * run too; with nothing slow (1 GB/s: 64 KiB in over 65 us), none starts. */
    setenv("COURIER_COPY_SHARED", "auto", 1);
    setenv("COURIER_COPY_SHARED_SLOW_GBS", "1", 1);
    EXPECT(cr_config_load(why, sizeof why) == 0, "COURIER_COPY_SHARED_SLOW_GBS=1 refused: %s", why);
    cr_copy_shared_adapt(true);
    while (cr_copy_shared_streaming()) /* (a run the modes above may have left) */
        cr_copy_shared(dst, src, 65536);
    cr_copy_shared(dst, src, 65536); /* a fast one: no slow copy counted before what follows */
    setenv("COURIER_COPY_SHARED_SLOW_GBS", "1000000", 1);
    EXPECT(cr_config_load(why, sizeof why) == 0, "COURIER_COPY_SHARED_SLOW_GBS=1000000 refused: %s", why);
    cr_copy_shared(dst, src, 65536);
    EXPECT(cr_copy_shared_streaming() == 0, "one slow copy started a run of %u", cr_copy_shared_streaming());
    cr_copy_shared(dst, src, 65536);
    EXPECT(cr_copy_shared_streaming() == CR_COPY_SHARED_RUN, "two slow copies left %u copies to stream, not %d",
           cr_copy_shared_streaming(), CR_COPY_SHARED_RUN);
    for (int i = 0; i < 10; i++)
        cr_copy_shared(dst, src, 65536);
    EXPECT(cr_copy_shared_streaming() == CR_COPY_SHARED_RUN - 10, "the run did not count down: %u left",
           cr_copy_shared_streaming());
    while (cr_copy_shared_streaming())
        cr_copy_shared(dst, src, 65536);
    for (int i = 0; i < 2 * CR_COPY_SHARED_SAMPLE; i++)
        cr_copy_shared(dst, src, 8192);
    EXPECT(cr_copy_shared_streaming() > 0, "%d slow 8 KiB copies started no run", 2 * CR_COPY_SHARED_SAMPLE);
    while (cr_copy_shared_streaming())
        cr_copy_shared(dst, src, 65536);
    setenv("COURIER_COPY_SHARED_SLOW_GBS", "1", 1);
    EXPECT(cr_config_load(why, sizeof why) == 0, "COURIER_COPY_SHARED_SLOW_GBS=1 refused: %s", why);
    for (int i = 0; i < 4; i++)
        cr_copy_shared(dst, src, 65536);
    EXPECT(cr_copy_shared_streaming() == 0, "copies faster than 1 GB/s started a run of %u", cr_copy_shared_streaming());
    cr_copy_shared_adapt(false);
#endif
    free(src);
    free(dst);
    return UNIT_DONE();
}
