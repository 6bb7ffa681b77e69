/* copy.h: copying message data. One routine for every copy of user data that may be long, since
 * the C library's memcpy can be slow at exactly the sizes messages have: from 2112 bytes up it
 * uses `rep movsb`, which on the AMD EPYC of the test VM (glibc 2.36) runs at 1.6-3 GB/s instead
 * of 40-90 whenever the destination is not aligned with the source to 32 bytes, as when a
 * malloc'ed buffer (16-byte aligned) meets a 64-byte-aligned shared-memory slot. Above the
 * caches, stores that bypass them (non-temporal), which neither read the destination lines
 * first nor evict what the program keeps in cache. */
#ifndef CR_CORE_COPY_H
#define CR_CORE_COPY_H

#include "core/base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Below this many bytes, memcpy (its vector moves; no `rep movsb` below 2112 bytes). */
#define CR_COPY_LONG 2048

void cr_copy_long(void *dst, const void *src, size_t n);

/* Copies n bytes between buffers that do not overlap: memcpy for short copies, a vector loop
 * with aligned stores up to the size where streaming stores win (cr_copy_stream_min), and
 * streaming stores above. Always inlined: the compiler, left to itself, kept one copy out of line
 * in the receive path, a call per 8-byte message. */
static CR_ALWAYS_INLINE void cr_copy(void *dst, const void *src, size_t n)
{
    if (n <= 16) { /* inline: a message of a few bytes costs no call (two overlapping moves) */
        char *d = (char *)dst;
        const char *s = (const char *)src;
        if (n >= 8) {
            uint64_t a, b;
            memcpy(&a, s, 8);
            memcpy(&b, s + n - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + n - 8, &b, 8);
        } else if (n >= 4) {
            uint32_t a, b;
            memcpy(&a, s, 4);
            memcpy(&b, s + n - 4, 4);
            memcpy(d, &a, 4);
            memcpy(d + n - 4, &b, 4);
        } else if (n) {
            char a = s[0], b = s[n / 2], c = s[n - 1];
            d[0] = a;
            d[n / 2] = b;
            d[n - 1] = c;
        }
    } else if (n < CR_COPY_LONG)
        memcpy(dst, src, n);
    else
        cr_copy_long(dst, src, n);
}

/* The size from which cr_copy streams: a quarter of the last-level cache, at least 1 MiB. */
size_t cr_copy_stream_min(void);

/* Copies n bytes into shared memory that another process will read (a collective's staging
 * block, a ring's frame), choosing its stores by what they cost right now. Cached stores to lines another core
 * has read must take each line back (an invalidation each), and on the test VM that costs
 * little in some minutes and makes a 64 KiB copy 5-10 times slower in others (the vCPUs' host
 * placement changes under us: the "slow phase"); stores that bypass the caches take no line
 * back, at the price of a reader that then reads from memory. So with adapting on, a copy of
 * CR_COPY_SHARED_MIN bytes or more is timed; after two in a row slower than
 * COURIER_COPY_SHARED_SLOW_GBS (6 GB/s), the next CR_COPY_SHARED_RUN copies stream, and the
 * copies after them are timed again. The threshold sits between the two phases: 64 KiB copies into lines the
 * other core has just read took 1.7-3.7 us in fast minutes (6.5-9.8 when it read them last),
 * 11-33 us in slow ones, where streamed they took 1.3-2.2 (a plain exchange, cycle counts). Before
 * returning, streamed stores are ordered before what follows (a release store publishes them).
 * Adapting is off (cached stores, as cr_copy) until cr_copy_shared_adapt(true), which the
 * transport calls. A process that shares its core can be preempted in the middle of a timed
 * copy, which then looks slow; it takes two in a row to start a run, and at 4 processes on 2
 * cores adapting measured even with cached stores in fast minutes and 2.5x faster in slow ones
 * (allreduce 1 MiB 346 against 869 us). COURIER_COPY_SHARED forces either kind.
 * Only x86 has both kinds (elsewhere every copy is cr_copy). */
#define CR_COPY_SHARED_MIN ((size_t)16 << 10)
/* Copies from CR_COPY_SHARED_SMALL to CR_COPY_SHARED_MIN bytes stream in a run as the others
 * do, but outside runs only one in CR_COPY_SHARED_SAMPLE is timed (the timing would cost a few
 * percent of a 4 KiB copy); smaller ones always take cached stores. */
#define CR_COPY_SHARED_SMALL ((size_t)4 << 10)
#define CR_COPY_SHARED_SAMPLE 8
#define CR_COPY_SHARED_RUN 128
void cr_copy_shared(void *dst, const void *src, size_t n);
void cr_copy_shared_adapt(bool on);
/* The copies left to stream in the current run (0: cached stores, timed); for tests. */
unsigned cr_copy_shared_streaming(void);
/* Whether timed copies use the time-stamp counter, its rate learnt (only where the processor
 * says the counter is invariant; the clock times them otherwise); for tests. */
bool cr_copy_shared_counter_timed(void);

#endif
