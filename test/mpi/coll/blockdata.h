/* blockdata.h: what the data-movement tests (bcast, gather, scatter, allgather, mixed) share:
 * a few datatypes, contiguous and not (the pair types have padding, so they travel packed),
 * blocks of elements whose values derive from a seed and the element's index, and checks of
 * every element that arrived (the bytes of its value: padding is not compared) and of guard
 * bytes after a buffer. */
#ifndef BLOCKDATA_H
#define BLOCKDATA_H

#include "mpitest.h"

#include <stddef.h>
#include <stdint.h>

enum { B_INT, B_DOUBLE, B_DOUBLE_INT, B_SHORT_INT, B_LONG_DOUBLE_INT, B_2INT, NB };
typedef struct { double v; int i; } b_di;
typedef struct { short v; int i; } b_si;
typedef struct { long double v; int i; } b_ldi;
typedef struct { int v, i; } b_ii;

static MPI_Datatype bd_type(int k)
{
    const MPI_Datatype t[NB] = {MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_2INT};
    return t[k];
}
static const char *bd_name(int k)
{
    static const char *const n[NB] = {"MPI_INT", "MPI_DOUBLE", "MPI_DOUBLE_INT", "MPI_SHORT_INT",
                                      "MPI_LONG_DOUBLE_INT", "MPI_2INT"};
    return n[k];
}
static size_t bd_extent(int k)
{
    const size_t e[NB] = {sizeof(int), sizeof(double), sizeof(b_di), sizeof(b_si), sizeof(b_ldi), sizeof(b_ii)};
    return e[k];
}

static uint64_t bd_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
/* A seed from a few small numbers (rank, root, count, round...). */
static uint64_t bd_seed(int a, int b, long long c, int d)
{
    return bd_mix(((uint64_t)a << 48) ^ ((uint64_t)b << 32) ^ ((uint64_t)c << 8) ^ (uint64_t)d);
}

/* The value bytes of element i for `seed`, written into `e` (one element of kind k). */
static void bd_elem(int k, uint64_t seed, MPI_Count i, void *e)
{
    uint64_t h = bd_mix(seed ^ ((uint64_t)i * 0xd1b54a32d192ed03ull));
    switch (k) {
    case B_INT: *(int *)e = (int)h; break;
    case B_DOUBLE: *(double *)e = (double)(int64_t)(h >> 11) * 0x1p-20; break;
    case B_DOUBLE_INT: ((b_di *)e)->v = (double)(int64_t)(h >> 11) * 0x1p-30, ((b_di *)e)->i = (int)(h >> 7); break;
    case B_SHORT_INT: ((b_si *)e)->v = (short)h, ((b_si *)e)->i = (int)(h >> 29); break;
    case B_LONG_DOUBLE_INT:
        ((b_ldi *)e)->v = 1.0L + (long double)(h % 100000) * 0x1p-62L; /* beyond double precision */
        ((b_ldi *)e)->i = (int)(h >> 32);
        break;
    case B_2INT: ((b_ii *)e)->v = (int)h, ((b_ii *)e)->i = (int)(h >> 32); break;
    }
}

/* Where the value bytes of an element are. */
static int bd_spans(int k, size_t off[2], size_t len[2])
{
    switch (k) {
    case B_DOUBLE_INT: off[0] = 0, len[0] = 8, off[1] = offsetof(b_di, i), len[1] = 4; return 2;
    case B_SHORT_INT: off[0] = 0, len[0] = 2, off[1] = offsetof(b_si, i), len[1] = 4; return 2;
    case B_LONG_DOUBLE_INT: off[0] = 0, len[0] = 10, off[1] = offsetof(b_ldi, i), len[1] = 4; return 2;
    }
    off[0] = 0, len[0] = bd_extent(k);
    return 1;
}

static void bd_fill(int k, void *buf, MPI_Count n, uint64_t seed)
{
    size_t ext = bd_extent(k);
    for (MPI_Count i = 0; i < n; i++)
        bd_elem(k, seed, i, (char *)buf + (size_t)i * ext);
}

/* Checks n elements of buf against `seed`; returns the number wrong (the first few reported). */
static long bd_check(int k, const void *buf, MPI_Count n, uint64_t seed, const char *what)
{
    size_t ext = bd_extent(k), off[2], len[2];
    int ns = bd_spans(k, off, len);
    _Alignas(16) unsigned char want[64];
    long bad = 0;
    for (MPI_Count i = 0; i < n; i++) {
        const unsigned char *got = (const unsigned char *)buf + (size_t)i * ext;
        memset(want, 0, sizeof want);
        bd_elem(k, seed, i, want);
        int ok = 1;
        for (int s = 0; s < ns; s++)
            ok &= memcmp(got + off[s], want + off[s], len[s]) == 0;
        if (!ok && bad++ < 3) {
            unsigned long long g = 0, w = 0;
            memcpy(&g, got, len[0] < 8 ? len[0] : 8);
            memcpy(&w, want, len[0] < 8 ? len[0] : 8);
            CHECK(0, "%s: element %lld has value bits %#llx, expected %#llx", what, (long long)i, g, w);
        }
    }
    if (bad > 3)
        CHECK(0, "%s: %ld elements wrong in all", what, bad);
    return bad;
}

#define GUARD 64
static void guard_set(void *buf, size_t bytes)
{
    memset((char *)buf + bytes, 0xA7, GUARD);
}
static void guard_check(const void *buf, size_t bytes, const char *what)
{
    const unsigned char *g = (const unsigned char *)buf + bytes;
    for (int i = 0; i < GUARD; i++)
        if (g[i] != 0xA7) {
            CHECK(0, "%s: the call wrote %d bytes past the end of the buffer", what, i + 1);
            return;
        }
}

/* A buffer of n elements plus the guard, poisoned. */
static void *bd_alloc(int k, MPI_Count n)
{
    size_t bytes = (size_t)n * bd_extent(k);
    char *b = malloc(bytes + GUARD);
    memset(b, 0xEE, bytes);
    guard_set(b, bytes);
    return b;
}

#endif
