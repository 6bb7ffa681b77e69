/* copy.c: copies of message data: a vector loop, and non-temporal stores above the caches
 * (copy.h says why not memcpy). */
#include "core/copy.h"

#include "core/config.h"
#include "core/hwtopo.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <cpuid.h>
#include <immintrin.h>
#define CR_COPY_X86 1
#endif

/* Bytes from which streaming stores beat memcpy: measured on the 2-core test VM (32 MiB L3):
 * memcpy 48 GB/s while the data fits in the cache, 18-21 GB/s at 16 MiB, where streaming stores
 * give 26. Set once, a quarter of the last-level cache as sysfs gives it (the C library's
 * sysconf said 320 MiB there, which kept 16 MiB copies from ever streaming), else as sysconf
 * gives it, else 8 MiB; at least 1 MiB. (Threads may race to set it: they set the same value.) */
static _Atomic size_t threshold;

size_t cr_copy_stream_min(void)
{
    size_t t = atomic_load_explicit(&threshold, memory_order_relaxed);
    if (!t) {
        unsigned long long llc = cr_hw_llc_bytes();
#ifdef _SC_LEVEL3_CACHE_SIZE
        if (!llc) {
            long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
            llc = l3 > 0 ? (unsigned long long)l3 : 0;
        }
#endif
        t = llc ? (size_t)(llc / 4) : (size_t)8 << 20;
        t = t < ((size_t)1 << 20) ? (size_t)1 << 20 : t;
        atomic_store_explicit(&threshold, t, memory_order_relaxed);
    }
    return t;
}

#ifdef CR_COPY_X86
/* The vector loops: the head up to the destination's next 64-byte line by memcpy, then whole
 * lines with unaligned loads and aligned stores, then the tail by memcpy (both under 128 bytes,
 * which memcpy moves with vector registers). On the test VM, 4 KiB to 256 KiB with the
 * destination 16 bytes off the source: 40-88 GB/s (AVX2), 27-51 (SSE2), against memcpy's
 * 1.6-3; aligned alike, as fast as memcpy. */
__attribute__((target("avx2"))) static void copy_avx2(char *d, const char *s, size_t n)
{
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    size_t body = n & ~(size_t)127;
    for (size_t i = 0; i < body; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
        _mm256_store_si256((__m256i *)(d + i), a);
        _mm256_store_si256((__m256i *)(d + i + 32), b);
        _mm256_store_si256((__m256i *)(d + i + 64), c);
        _mm256_store_si256((__m256i *)(d + i + 96), e);
    }
    memcpy(d + body, s + body, n - body);
}

/* With `stream`, stores that bypass the caches (they need 16-byte alignment: the head gives 64). */
static void copy_sse2(char *d, const char *s, size_t n, bool stream)
{
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        if (stream) {
            _mm_stream_si128((__m128i *)(d + i), a);
            _mm_stream_si128((__m128i *)(d + i + 16), b);
            _mm_stream_si128((__m128i *)(d + i + 32), c);
            _mm_stream_si128((__m128i *)(d + i + 48), e);
        } else {
            _mm_store_si128((__m128i *)(d + i), a);
            _mm_store_si128((__m128i *)(d + i + 16), b);
            _mm_store_si128((__m128i *)(d + i + 32), c);
            _mm_store_si128((__m128i *)(d + i + 48), e);
        }
    }
    if (stream)
        _mm_sfence(); /* streaming stores are weakly ordered: order them before what follows */
    memcpy(d + body, s + body, n - body);
}

static _Atomic int has_avx2 = -1; /* (-1: not asked yet; threads may race to ask: same answer) */
#endif

void cr_copy_long(void *dst, const void *src, size_t n)
{
#ifdef CR_COPY_X86
    if (n >= cr_copy_stream_min()) {
        copy_sse2(dst, src, n, true);
        return;
    }
    int avx2 = atomic_load_explicit(&has_avx2, memory_order_relaxed);
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") != 0;
        atomic_store_explicit(&has_avx2, avx2, memory_order_relaxed);
    }
    if (avx2)
        copy_avx2(dst, src, n);
    else
        copy_sse2(dst, src, n, false);
#else
    memcpy(dst, src, n);
#endif
}

static int64_t tune_shared, slow_gbs = 6; /* (set before the tunables are read: unit tests do not read them) */
CR_TUNABLE_EX(tune_shared, COURIER_COPY_SHARED, CR_TUNE_CHOICE, "auto", "auto|cached|stream", 0, 2,
              "the stores that copy data into shared memory for other processes to read (collectives' staging "
              "blocks, the shared-memory rings' frames of 4 KiB and more): cached, streaming (non-temporal, "
              "bypassing the caches), or auto (cached, and streaming for a while after two timed cached copies in a "
              "row ran slower than COURIER_COPY_SHARED_SLOW_GBS)");
CR_TUNABLE_EX(slow_gbs, COURIER_COPY_SHARED_SLOW_GBS, CR_TUNE_INT, "6", NULL, 1, 1000000,
              "GB/s: a timed copy into shared memory slower than this counts as slow (COURIER_COPY_SHARED=auto)");

static _Atomic bool shared_adapt;
/* Copies left to stream before cached stores are timed again (threads may race on it: any
 * value it takes is a valid state). */
static _Atomic unsigned shared_stream_left;
static _Atomic unsigned shared_slow_seen;   /* timed copies in a row that were slow */
static _Atomic unsigned shared_small_count; /* copies under CR_COPY_SHARED_MIN, for sampling */

unsigned cr_copy_shared_streaming(void)
{
    return atomic_load_explicit(&shared_stream_left, memory_order_relaxed);
}

#ifdef CR_COPY_X86
/* Timing. clock_gettime costs 20-25 ns a call here, 6% of a 64 KiB one-way latency made of four
 * timed 16 KiB frames, so copies are timed by the time-stamp counter, whose rate is learnt from
 * the clock over a window of 10 ms to 1 s after adapting is turned on (until then the clock
 * times them; a window longer than 1 s starts again, so the arithmetic stays far from
 * overflowing), when the processor says its counter is invariant. */
static _Atomic uint64_t cal_ns0, cal_ticks0; /* the clock and the counter when the window opened */
static _Atomic uint64_t ticks_per_gb;        /* counter ticks per byte at 1 GB/s (ticks per ns), x 2^16; 0: not learnt */
static _Atomic bool tsc_steady;              /* the counter ticks at one rate whatever the core's clock and power state */

/* CPUID leaf 0x80000007, EDX bit 8: the invariant time-stamp counter (Linux's nonstop_tsc).
 * Without it the counter's rate follows frequency changes, so a learnt rate would misjudge
 * copies: they are timed by the clock alone. */
static bool invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The clock and the counter read together: the counter read on both sides of the clock (its
 * middle taken), and whether the two were close (a preemption between them would pair a clock
 * and a counter far apart, and one such pair would skew the rate for the whole run). */
#define CAL_PAIR_MAX_TICKS 100000u            /* about 25-50 us: a clock read takes 25 ns */
#define CAL_WINDOW_MIN_NS 10000000u           /* learn over at least 10 ms */
#define CAL_RATE_MIN ((uint64_t)65536 / 10)   /* 0.1 ticks per ns: 100 MHz, x 2^16 */
#define CAL_RATE_MAX ((uint64_t)65536 * 20)   /* 20 GHz */
static bool clock_and_counter(uint64_t *ns, uint64_t *tk)
{
    uint64_t a = __rdtsc();
    *ns = now_ns();
    uint64_t b = __rdtsc();
    *tk = a + (b - a) / 2;
    return b >= a && b - a < CAL_PAIR_MAX_TICKS;
}

static void open_window(uint64_t ns, uint64_t tk)
{
    atomic_store_explicit(&cal_ns0, ns, memory_order_relaxed);
    atomic_store_explicit(&cal_ticks0, tk, memory_order_relaxed);
}

/* A cached copy, timed: whether it ran slower than slow_gbs. */
static bool timed_copy_slow(void *dst, const void *src, size_t n)
{
    uint64_t rate = atomic_load_explicit(&ticks_per_gb, memory_order_relaxed);
    if (rate) { /* n bytes at slow_gbs GB/s take n * rate / slow_gbs ticks */
        uint64_t t0 = __rdtsc();
        cr_copy(dst, src, n);
        uint64_t d = __rdtsc() - t0;
        return d < ((uint64_t)1 << 40) && d * (uint64_t)slow_gbs > (((uint64_t)n * rate) >> 16); /* (a counter that went back: not slow) */
    }
    uint64_t t0 = now_ns();
    cr_copy(dst, src, n);
    uint64_t t1, tk;
    bool tight = clock_and_counter(&t1, &tk);
    uint64_t ns0 = atomic_load_explicit(&cal_ns0, memory_order_relaxed),
             tk0 = atomic_load_explicit(&cal_ticks0, memory_order_relaxed);
    if (!atomic_load_explicit(&tsc_steady, memory_order_relaxed) || !tight)
        ; /* the clock times this copy (and the pair of readings is not trusted to learn from) */
    else if (t1 - ns0 > 1000000000u || tk <= tk0)
        open_window(t1, tk);
    else if (t1 - ns0 >= CAL_WINDOW_MIN_NS) {
        uint64_t learnt = ((tk - tk0) << 16) / (t1 - ns0);
        if (learnt >= CAL_RATE_MIN && learnt <= CAL_RATE_MAX)
            atomic_store_explicit(&ticks_per_gb, learnt, memory_order_relaxed);
        else /* (readings a preemption or another thread split: start again) */
            open_window(t1, tk);
    }
    return (t1 - t0) * (uint64_t)slow_gbs > n;
}
#endif

bool cr_copy_shared_counter_timed(void)
{
#ifdef CR_COPY_X86
    return atomic_load_explicit(&ticks_per_gb, memory_order_relaxed) != 0;
#else
    return false;
#endif
}

void cr_copy_shared_adapt(bool on)
{
#ifdef CR_COPY_X86
    if (on) {
        atomic_store_explicit(&tsc_steady, invariant_tsc(), memory_order_relaxed);
        uint64_t ns, tk;
        bool tight = clock_and_counter(&ns, &tk);
        open_window(tight ? ns : 0, tk); /* (a loose pair: the first timed copy opens it again) */
    }
    atomic_store_explicit(&shared_adapt, on, memory_order_relaxed);
#else
    (void)on; /* streaming stores are memcpy here: nothing to choose */
#endif
}

void cr_copy_shared(void *dst, const void *src, size_t n)
{
    if (n < CR_COPY_SHARED_SMALL || tune_shared == 1) {
        cr_copy(dst, src, n);
        return;
    }
#ifdef CR_COPY_X86
    if (tune_shared == 2) {
        copy_sse2(dst, src, n, true);
        return;
    }
    if (!atomic_load_explicit(&shared_adapt, memory_order_relaxed)) {
        cr_copy(dst, src, n);
        return;
    }
    unsigned left = atomic_load_explicit(&shared_stream_left, memory_order_relaxed);
    if (left) {
        atomic_store_explicit(&shared_stream_left, left - 1, memory_order_relaxed);
        copy_sse2(dst, src, n, true);
        return;
    }
    if (n < CR_COPY_SHARED_MIN) { /* timed one in CR_COPY_SHARED_SAMPLE */
        unsigned k = atomic_load_explicit(&shared_small_count, memory_order_relaxed);
        atomic_store_explicit(&shared_small_count, k + 1, memory_order_relaxed);
        if (k % CR_COPY_SHARED_SAMPLE) {
            cr_copy(dst, src, n);
            return;
        }
    }
    /* One slow copy alone may have met an interrupt or a fresh page: it takes two in a row.
     * (The first lap of a fresh ring meets fresh pages at every copy, so it may stream.) */
    bool slow = timed_copy_slow(dst, src, n);
    unsigned seen = atomic_load_explicit(&shared_slow_seen, memory_order_relaxed);
    atomic_store_explicit(&shared_slow_seen, slow ? seen + 1 : 0, memory_order_relaxed);
    if (slow && seen + 1 >= 2) {
        atomic_store_explicit(&shared_slow_seen, 0, memory_order_relaxed);
        atomic_store_explicit(&shared_stream_left, CR_COPY_SHARED_RUN, memory_order_relaxed);
    }
#else
    cr_copy(dst, src, n);
#endif
}
