/* copy.c: bulk copies with non-temporal stores (copy.h). */
#include "core/copy.h"

#include "core/hwtopo.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Bytes from which streaming stores beat memcpy: measured on the 2-core test VM (32 MiB L3):
 * memcpy 48 GB/s while the data fits in the cache, 18-21 GB/s at 16 MiB, where streaming stores
 * give 26. Set once, a quarter of the last-level cache as sysfs gives it (the C library's
 * sysconf said 320 MiB there, which kept 16 MiB copies from ever streaming), else as sysconf
 * gives it, else 8 MiB; at least 1 MiB. */
static size_t threshold;

size_t cr_copy_stream_min(void)
{
    if (!threshold) {
        unsigned long long llc = cr_hw_llc_bytes();
#ifdef _SC_LEVEL3_CACHE_SIZE
        if (!llc) {
            long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
            llc = l3 > 0 ? (unsigned long long)l3 : 0;
        }
#endif
        size_t t = llc ? (size_t)(llc / 4) : (size_t)8 << 20;
        threshold = t < ((size_t)1 << 20) ? (size_t)1 << 20 : t;
    }
    return threshold;
}

void cr_copy_big(void *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
    if (n >= cr_copy_stream_min()) {
        char *d = dst;
        const char *s = src;
        size_t head = (16 - ((uintptr_t)d & 15)) & 15; /* streaming stores need 16-byte alignment */
        memcpy(d, s, head);
        d += head;
        s += head;
        n -= head;
        size_t body = n & ~(size_t)63;
        for (size_t i = 0; i < body; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
            _mm_stream_si128((__m128i *)(d + i), a);
            _mm_stream_si128((__m128i *)(d + i + 16), b);
            _mm_stream_si128((__m128i *)(d + i + 32), c);
            _mm_stream_si128((__m128i *)(d + i + 48), e);
        }
        _mm_sfence(); /* streaming stores are weakly ordered: order them before what follows */
        memcpy(d + body, s + body, n - body);
        return;
    }
#endif
    memcpy(dst, src, n);
}
