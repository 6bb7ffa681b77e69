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

#endif
