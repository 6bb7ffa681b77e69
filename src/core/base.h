/* base.h: what every Courier source file includes: the public header, common macros and the
 * few helpers (branch hints, arithmetic, strings) that every layer uses. */
#ifndef CR_BASE_H
#define CR_BASE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CR_LIKELY(x) __builtin_expect(!!(x), 1)
#define CR_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For the few steps of a hot path the compiler would otherwise leave out of line (a call costs
 * about what a one-sided put of 8 bytes does). */
#define CR_ALWAYS_INLINE inline __attribute__((always_inline))
#define CR_UNUSED __attribute__((unused))
#define CR_NORETURN __attribute__((noreturn))
#define CR_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define CR_CACHELINE 64
#define CR_ALIGNED(n) __attribute__((aligned(n)))
/* A thread-local variable reached without a call: a shared library's thread-locals otherwise
 * cost a call to __tls_get_addr on every access (6% of a one-thread ping-pong at
 * MPI_THREAD_MULTIPLE, where the critical section reads them on every call). Initial-exec takes
 * its few bytes from the static TLS block that glibc keeps spare for libraries loaded later
 * (dlopen, as mpi4py does), so the library must keep them few. */
#define CR_THREAD_LOCAL _Thread_local __attribute__((tls_model("initial-exec")))

#define CR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CR_MAX(a, b) ((a) > (b) ? (a) : (b))
#define CR_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define CR_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Courier's own version; the MPI and ABI versions come from mpi.h. */
#define CR_VERSION_STRING "0.1.0"

/* Copies a C string into a fixed MPI output buffer of `cap` bytes (cap includes the NUL) and
 * returns the length written, as the MPI string-returning calls require. */
static inline int cr_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return (int)n;
}

#endif
