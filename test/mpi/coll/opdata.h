/* opdata.h: what the reduction tests (reduce.c, allreduce.c, ops.c, optable.c) share: every
 * predefined datatype, the operations Courier applies to it (those the standard defines, MPI
 * 4.1 section 6.9.2, and those MPICH or Open MPI also accept: doc/reductions.md), input
 * values chosen per (operation, rank, element) so that every result is exact and the same in
 * any order of combination, and a local computation of the expected result.
 *
 * Values: sums use small or half-integer numbers (exact in every floating type; long double
 * gets a 2^60 term only its 64-bit mantissa can hold), products use factors 1, -1, 2, 1/2
 * and i (complex) with at most a few 2s, so nothing overflows; min/max spread over the whole
 * range (long double values differ beyond double precision); logical operations see all-true,
 * all-false, one-true, one-false and random patterns with nonzero values that are a single bit
 * anywhere in the word (so a byte-sized test fails); MINLOC/MAXLOC values take three values
 * only, so ties are frequent, and the index runs either with the rank or against it. */
#ifndef OPDATA_H
#define OPDATA_H

#include "mpitest.h"

#include <complex.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

/* The C types of the optional Fortran types, where this compiler has them. */
#if defined(__SIZEOF_INT128__)
#define HAVE_I128 1
#endif
#if defined(__FLT16_MAX__)
#define HAVE_F16 1
#endif
#if defined(__SIZEOF_FLOAT128__)
#define HAVE_F128 1
#endif

enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MINLOC, O_MAXLOC, NOPS };
static const char *const op_name[NOPS] = {"MPI_SUM",  "MPI_PROD", "MPI_MIN",  "MPI_MAX",    "MPI_LAND",  "MPI_LOR",
                                          "MPI_LXOR", "MPI_BAND", "MPI_BOR",  "MPI_BXOR",   "MPI_MINLOC", "MPI_MAXLOC"};
static MPI_Op op_handle(int o)
{
    static const MPI_Op h[NOPS] = {MPI_SUM,  MPI_PROD, MPI_MIN, MPI_MAX,  MPI_LAND,   MPI_LOR,
                                   MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    return h[o];
}

/* The C types behind the predefined datatypes (C_CF16, C_CF128: (re, im) pairs). */
enum { C_I8, C_U8, C_I16, C_U16, C_I32, C_U32, C_I64, C_U64, C_F, C_D, C_LD, C_CF, C_CD, C_CLD, C_BOOL, C_LOG,
       C_BYTE, P_FI, P_DI, P_LI, P_II, P_SI, P_LDI, P_FF, P_DD, C_I128, C_F16, C_F128, C_CF16, C_CF128, NCT };

/* Families of datatypes, by the operations that apply to them: the standard's groups, and
 * the types the standard puts in none that MPICH or Open MPI reduce anyway. G_NONE: nothing
 * applies (MPI_PACKED, MPI_WCHAR); G_UNAVAIL: a type whose C type this compiler lacks. */
enum { G_CINT, G_FINT, G_MULTI, G_FLOAT, G_COMPLEX, G_LOGICAL, G_LOGN, G_BYTE, G_CHAR, G_FCHAR, G_PAIR, G_NONE,
       G_UNAVAIL };

typedef struct {
    MPI_Datatype h;
    const char *name;
    int ct, group;
} tentry;

#define TE(h, ct, g) {h, #h, ct, g}
/* (The name is taken here: passed on to TE, the handle would be expanded before TE names it.) */
#ifdef HAVE_I128
#define TE_I128(h, g) {h, #h, C_I128, g}
#else
#define TE_I128(h, g) {h, #h, C_U8, G_UNAVAIL}
#endif
#ifdef HAVE_F16
#define TE_F16(h, ct, g) {h, #h, ct, g}
#else
#define TE_F16(h, ct, g) {h, #h, C_U8, G_UNAVAIL}
#endif
#ifdef HAVE_F128
#define TE_F128(h, ct, g) {h, #h, ct, g}
#else
#define TE_F128(h, ct, g) {h, #h, C_U8, G_UNAVAIL}
#endif
/* Every predefined datatype of the standard ABI (MPI_LONG_LONG_INT and MPI_C_COMPLEX are the
 * same handles as MPI_LONG_LONG and MPI_C_FLOAT_COMPLEX). */
static const tentry types[] = {
    TE(MPI_INT8_T, C_I8, G_CINT),
    TE(MPI_SIGNED_CHAR, C_I8, G_CINT),
    TE(MPI_UINT8_T, C_U8, G_CINT),
    TE(MPI_UNSIGNED_CHAR, C_U8, G_CINT),
    TE(MPI_INT16_T, C_I16, G_CINT),
    TE(MPI_SHORT, C_I16, G_CINT),
    TE(MPI_UINT16_T, C_U16, G_CINT),
    TE(MPI_UNSIGNED_SHORT, C_U16, G_CINT),
    TE(MPI_INT32_T, C_I32, G_CINT),
    TE(MPI_INT, C_I32, G_CINT),
    TE(MPI_UINT32_T, C_U32, G_CINT),
    TE(MPI_UNSIGNED, C_U32, G_CINT),
    TE(MPI_INT64_T, C_I64, G_CINT),
    TE(MPI_LONG, C_I64, G_CINT),
    TE(MPI_LONG_LONG, C_I64, G_CINT),
    TE(MPI_UINT64_T, C_U64, G_CINT),
    TE(MPI_UNSIGNED_LONG, C_U64, G_CINT),
    TE(MPI_UNSIGNED_LONG_LONG, C_U64, G_CINT),
    TE(MPI_INTEGER, C_I32, G_FINT),
    TE(MPI_INTEGER1, C_I8, G_FINT),
    TE(MPI_INTEGER2, C_I16, G_FINT),
    TE(MPI_INTEGER4, C_I32, G_FINT),
    TE(MPI_INTEGER8, C_I64, G_FINT),
    TE_I128(MPI_INTEGER16, G_FINT),
    TE(MPI_AINT, C_I64, G_MULTI),
    TE(MPI_OFFSET, C_I64, G_MULTI),
    TE(MPI_COUNT, C_I64, G_MULTI),
    TE(MPI_FLOAT, C_F, G_FLOAT),
    TE(MPI_DOUBLE, C_D, G_FLOAT),
    TE(MPI_LONG_DOUBLE, C_LD, G_FLOAT),
    TE(MPI_REAL, C_F, G_FLOAT),
    TE(MPI_DOUBLE_PRECISION, C_D, G_FLOAT),
    TE(MPI_REAL4, C_F, G_FLOAT),
    TE(MPI_REAL8, C_D, G_FLOAT),
    TE_F16(MPI_REAL2, C_F16, G_FLOAT),
    TE_F128(MPI_REAL16, C_F128, G_FLOAT), /* Fortran REAL(16): IEEE quad precision */
    TE(MPI_C_FLOAT_COMPLEX, C_CF, G_COMPLEX),
    TE(MPI_C_DOUBLE_COMPLEX, C_CD, G_COMPLEX),
    TE(MPI_C_LONG_DOUBLE_COMPLEX, C_CLD, G_COMPLEX),
    TE(MPI_CXX_FLOAT_COMPLEX, C_CF, G_COMPLEX),
    TE(MPI_CXX_DOUBLE_COMPLEX, C_CD, G_COMPLEX),
    TE(MPI_CXX_LONG_DOUBLE_COMPLEX, C_CLD, G_COMPLEX),
    TE(MPI_COMPLEX, C_CF, G_COMPLEX),
    TE(MPI_DOUBLE_COMPLEX, C_CD, G_COMPLEX),
    TE(MPI_COMPLEX8, C_CF, G_COMPLEX),
    TE(MPI_COMPLEX16, C_CD, G_COMPLEX),
    TE_F16(MPI_COMPLEX4, C_CF16, G_COMPLEX),
    TE_F128(MPI_COMPLEX32, C_CF128, G_COMPLEX),
    TE(MPI_C_BOOL, C_BOOL, G_LOGICAL),
    TE(MPI_CXX_BOOL, C_BOOL, G_LOGICAL),
    TE(MPI_LOGICAL, C_LOG, G_LOGICAL),
    TE(MPI_LOGICAL4, C_LOG, G_LOGICAL),
    TE_I128(MPI_LOGICAL16, G_LOGICAL),
    TE(MPI_LOGICAL1, C_I8, G_LOGN), /* Open MPI reduces these as integers of their size */
    TE(MPI_LOGICAL2, C_I16, G_LOGN),
    TE(MPI_LOGICAL8, C_I64, G_LOGN),
    TE(MPI_BYTE, C_BYTE, G_BYTE),
    TE(MPI_CHAR, CHAR_MIN < 0 ? C_I8 : C_U8, G_CHAR),
    TE(MPI_CHARACTER, C_U8, G_FCHAR),
    TE(MPI_PACKED, C_U8, G_NONE),
    TE(MPI_WCHAR, C_I32, G_NONE),
    TE(MPI_FLOAT_INT, P_FI, G_PAIR),
    TE(MPI_DOUBLE_INT, P_DI, G_PAIR),
    TE(MPI_LONG_INT, P_LI, G_PAIR),
    TE(MPI_2INT, P_II, G_PAIR),
    TE(MPI_SHORT_INT, P_SI, G_PAIR),
    TE(MPI_LONG_DOUBLE_INT, P_LDI, G_PAIR),
    TE(MPI_2REAL, P_FF, G_PAIR),
    TE(MPI_2DOUBLE_PRECISION, P_DD, G_PAIR),
    TE(MPI_2INTEGER, P_II, G_PAIR),
};
#undef TE
#define NTYPES ((int)(sizeof types / sizeof types[0]))

/* Whether the standard defines operation o on datatypes of family g. */
static int op_standard(int o, int g)
{
    switch (g) {
    case G_CINT: return o <= O_BXOR;
    case G_FINT:
    case G_MULTI: return o <= O_MAX || (o >= O_BAND && o <= O_BXOR);
    case G_FLOAT: return o <= O_MAX;
    case G_COMPLEX: return o == O_SUM || o == O_PROD;
    case G_LOGICAL:
    case G_LOGN: return o == O_LAND || o == O_LOR || o == O_LXOR;
    case G_BYTE: return o == O_BAND || o == O_BOR || o == O_BXOR;
    case G_PAIR: return o == O_MINLOC || o == O_MAXLOC;
    }
    return 0;
}

/* Whether Courier applies operation o to datatypes of family g: where the standard defines it,
 * and where MPICH or Open MPI accept it too (doc/reductions.md says which does). */
static int op_accepted(int o, int g)
{
    switch (g) {
    case G_FINT:   /* logical operations on Fortran integers: MPICH */
    case G_MULTI:  /* ... and on MPI_AINT, MPI_OFFSET, MPI_COUNT: MPICH and Open MPI */
    case G_LOGN:   /* Open MPI reduces MPI_LOGICAL1/2/8 as integers of their size */
    case G_BYTE:   /* Open MPI reduces MPI_BYTE as an unsigned char */
    case G_CHAR:   /* both reduce MPI_CHAR as a C integer */
    case G_FCHAR:  /* and MPI_CHARACTER as a one-byte integer */
        return o <= O_BXOR;
    }
    return op_standard(o, g);
}

#define PAIRT(V, I) struct { V v; I i; }
typedef PAIRT(float, int) pfi;
typedef PAIRT(double, int) pdi;
typedef PAIRT(long, int) pli;
typedef PAIRT(int, int) pii;
typedef PAIRT(short, int) psi;
typedef PAIRT(long double, int) pldi;
typedef PAIRT(float, float) pff;
typedef PAIRT(double, double) pdd;
#ifdef HAVE_I128
typedef __int128 i128;
#else
typedef struct { uint64_t lo, hi; } i128;
#endif
#ifdef HAVE_F16
typedef _Float16 f16;
#else
typedef uint16_t f16;
#endif
#ifdef HAVE_F128
typedef __float128 f128;
#else
typedef long double f128;
#endif
typedef struct { f16 re, im; } cf16;
typedef struct { f128 re, im; } cf128;

/* sizeof and MPI size (without padding) of each C type. */
static size_t ct_extent(int ct)
{
    static const size_t s[NCT] = {1, 1, 2, 2, 4, 4, 8, 8, sizeof(float), sizeof(double), sizeof(long double),
                                  sizeof(float _Complex), sizeof(double _Complex), sizeof(long double _Complex), 1, 4,
                                  1, sizeof(pfi), sizeof(pdi), sizeof(pli), sizeof(pii), sizeof(psi), sizeof(pldi),
                                  sizeof(pff), sizeof(pdd), 16, 2, 16, 4, 32};
    return s[ct];
}
static size_t ct_size(int ct)
{
    switch (ct) {
    case P_FI: return sizeof(float) + sizeof(int);
    case P_DI: return sizeof(double) + sizeof(int);
    case P_LI: return sizeof(long) + sizeof(int);
    case P_II: return 2 * sizeof(int);
    case P_SI: return sizeof(short) + sizeof(int);
    case P_LDI: return sizeof(long double) + sizeof(int);
    case P_FF: return 2 * sizeof(float);
    case P_DD: return 2 * sizeof(double);
    }
    return ct_extent(ct);
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static uint64_t hval(int o, int rank, MPI_Count i, int salt)
{
    return mix64(((uint64_t)(o + 16 * salt) << 52) ^ ((uint64_t)rank << 36) ^ (uint64_t)i);
}

/* Logical patterns: whether rank's element i is true. */
static int lpat(int rank, int p, MPI_Count i, uint64_t h)
{
    int who = (int)((i / 5) % p);
    switch (i % 5) {
    case 0: return 1;
    case 1: return 0;
    case 2: return rank == who;
    case 3: return rank != who;
    default: return (int)(h >> 17) & 1;
    }
}

/* Product factors: one designated rank gives 3 * 2^(bits-8) (integers) or 3, a few give 2 or
 * 1/2, some -1 (signed and floating), one 0 now and then. */
static int prod_designated(int rank, int p, MPI_Count i)
{
    return rank == (int)(i % p);
}
static double prod_factor(int rank, MPI_Count i, int sgn, int halves)
{
    if ((rank + i) % 8 == 0)
        return 2;
    if (sgn && (rank * 3 + i) % 5 == 1)
        return -1;
    if (halves && (rank + i) % 7 == 3)
        return 0.5;
    if (i % 53 == 7 && rank == 1)
        return 0;
    return 1;
}

#define GEN_INT(T, BITS, SGN)                                                                      \
    do {                                                                                           \
        T v;                                                                                       \
        switch (o) {                                                                               \
        case O_SUM:                                                                                \
            if (SGN && BITS >= 32) {                                                               \
                int64_t r = (int64_t)(h % (1ull << (BITS - 7)));                                   \
                v = (T)(h >> 63 ? -r : r);                                                         \
            } else {                                                                               \
                v = (T)h;                                                                          \
            }                                                                                      \
            break;                                                                                 \
        case O_PROD:                                                                               \
            v = prod_designated(rank, p, i) ? (T)(3ull << (BITS - 8)) : (T)prod_factor(rank, i, SGN, 0); \
            break;                                                                                 \
        case O_LAND:                                                                               \
        case O_LOR:                                                                                \
        case O_LXOR: v = lpat(rank, p, i, h) ? (T)(1ull << (h % BITS)) : 0; break;                 \
        case O_BAND: v = (T) ~(1ull << (h % BITS)); break;                                         \
        case O_BOR: v = (T)(1ull << (h % BITS)); break;                                            \
        default: v = (T)h; break;                                                                  \
        }                                                                                          \
        memcpy(out, &v, sizeof v);                                                                 \
    } while (0)

/* Floating values; `fine` is a step below the type's precision relative to 1 that the next
 * narrower type cannot hold, big a term only this type's mantissa keeps exact with halves. */
#define GEN_FLOAT(T, fine, big, range)                                                             \
    do {                                                                                           \
        T v;                                                                                       \
        memset(&v, 0, sizeof v); /* long double has padding */                                     \
        switch (o) {                                                                               \
        case O_SUM:                                                                                \
            v = (T)((int64_t)(h % (2 * (range) + 1)) - (range)) * (T)0.5 + (rank == (int)(i % p) ? (T)(big) : 0); \
            break;                                                                                 \
        case O_PROD: v = prod_designated(rank, p, i) ? (T)3 : (T)prod_factor(rank, i, 1, 1); break; \
        default:                                                                                   \
            v = (T)1 + (T)(h % 1000) * (T)(fine);                                                  \
            if (h >> 63)                                                                           \
                v = -v;                                                                            \
            if ((h >> 40) % 3 == 0)                                                                \
                v *= (T)1024;                                                                      \
            break;                                                                                 \
        }                                                                                          \
        memcpy(out, &v, sizeof v);                                                                 \
    } while (0)

#define GEN_COMPLEX(T, R)                                                                          \
    do {                                                                                           \
        T v;                                                                                       \
        memset(&v, 0, sizeof v);                                                                   \
        if (o == O_SUM) {                                                                          \
            v = (R)((int64_t)(h % 2001) - 1000) * (R)0.5 + (R)((int64_t)((h >> 20) % 2001) - 1000) * (R)0.5 * I; \
        } else {                                                                                   \
            static const int unit_re[4] = {1, 0, -1, 0}, unit_im[4] = {0, 1, 0, -1};               \
            int u = (int)((rank * 7 + i) % 4);                                                     \
            R m = prod_designated(rank, p, i) ? (R)3 : (rank + i) % 8 == 0 ? (R)2 : (R)1;          \
            v = m * (R)unit_re[u] + m * (R)unit_im[u] * I;                                         \
        }                                                                                          \
        memcpy(out, &v, sizeof v);                                                                 \
    } while (0)

#define GEN_PAIR(PT, V, scale)                                                                     \
    do {                                                                                           \
        PT v;                                                                                      \
        memset(&v, 0, sizeof v);                                                                   \
        v.v = (V)((int)(h % 3) - 1) * (scale);                                                     \
        v.i = i % 2 == 0 ? rank : p - 1 - rank;                                                    \
        memcpy(out, &v, sizeof v);                                                                 \
    } while (0)

/* Complex numbers as (re, im) pairs: sums of halves, products of units times 1, 2 or 3. */
#define GEN_CPAIR(CT, R, range)                                                                    \
    do {                                                                                           \
        CT v;                                                                                      \
        memset(&v, 0, sizeof v);                                                                   \
        if (o == O_SUM) {                                                                          \
            v.re = (R)((int64_t)(h % (2 * (range) + 1)) - (range)) * (R)0.5;                       \
            v.im = (R)((int64_t)((h >> 20) % (2 * (range) + 1)) - (range)) * (R)0.5;               \
        } else {                                                                                   \
            static const int unit_re[4] = {1, 0, -1, 0}, unit_im[4] = {0, 1, 0, -1};               \
            int u = (int)((rank * 7 + i) % 4);                                                     \
            R m = prod_designated(rank, p, i) ? (R)3 : (rank + i) % 8 == 0 ? (R)2 : (R)1;          \
            v.re = m * (R)unit_re[u];                                                              \
            v.im = m * (R)unit_im[u];                                                              \
        }                                                                                          \
        memcpy(out, &v, sizeof v);                                                                 \
    } while (0)

#ifdef HAVE_I128
/* 128-bit integers: the same shapes as GEN_INT, spread over both halves of the word. */
static void gen_i128(int o, int rank, int p, MPI_Count i, uint64_t h, void *out)
{
    unsigned __int128 bit = (unsigned __int128)1 << (h % 128);
    i128 v;
    switch (o) {
    case O_SUM: v = (i128)(int64_t)h * ((i128)1 << 40); break;
    case O_PROD: v = prod_designated(rank, p, i) ? (i128)3 << 120 : (i128)prod_factor(rank, i, 1, 0); break;
    case O_LAND:
    case O_LOR:
    case O_LXOR: v = lpat(rank, p, i, h) ? (i128)bit : 0; break;
    case O_BAND: v = (i128)~bit; break;
    case O_BOR: v = (i128)bit; break;
    default: v = (i128)(((unsigned __int128)h << 64) | mix64(h)); break;
    }
    memcpy(out, &v, sizeof v);
}
#endif

/* Element i of `rank`'s input to operation o (p processes), as C type ct. */
static void gen(int ct, int o, int rank, int p, MPI_Count i, void *out)
{
    uint64_t h = hval(o, rank, i, ct);
    switch (ct) {
    case C_I8: GEN_INT(int8_t, 8, 1); break;
    case C_U8: GEN_INT(uint8_t, 8, 0); break;
    case C_I16: GEN_INT(int16_t, 16, 1); break;
    case C_U16: GEN_INT(uint16_t, 16, 0); break;
    case C_I32: GEN_INT(int32_t, 32, 1); break;
    case C_U32: GEN_INT(uint32_t, 32, 0); break;
    case C_I64: GEN_INT(int64_t, 64, 1); break;
    case C_U64: GEN_INT(uint64_t, 64, 0); break;
    case C_BYTE: GEN_INT(uint8_t, 8, 0); break;
    case C_F: GEN_FLOAT(float, 0x1p-12, 0, 1000); break;
    case C_D: GEN_FLOAT(double, 0x1p-40, 0x1p40, 1000); break;
    case C_LD: GEN_FLOAT(long double, 0x1p-62L, 0x1p60L, 1000); break;
#ifdef HAVE_F16
    case C_F16: GEN_FLOAT(f16, 0x1p-10, 0, 8); break; /* sums stay below 1024: halves are exact */
    case C_CF16: GEN_CPAIR(cf16, f16, 8); break;
#endif
#ifdef HAVE_F128
    case C_F128: GEN_FLOAT(f128, 0x1p-100, 0x1p100, 1000); break;
    case C_CF128: GEN_CPAIR(cf128, f128, 1000); break;
#endif
#ifdef HAVE_I128
    case C_I128: gen_i128(o, rank, p, i, h, out); break;
#endif
    case C_CF: GEN_COMPLEX(float _Complex, float); break;
    case C_CD: GEN_COMPLEX(double _Complex, double); break;
    case C_CLD: GEN_COMPLEX(long double _Complex, long double); break;
    case C_BOOL: *(_Bool *)out = (_Bool)lpat(rank, p, i, h); break;
    case C_LOG: {
        int32_t v = lpat(rank, p, i, h);
        memcpy(out, &v, 4);
        break;
    }
    case P_FI: GEN_PAIR(pfi, float, 1e30f); break;
    case P_DI: GEN_PAIR(pdi, double, 1e300); break;
    case P_LI: GEN_PAIR(pli, long, 1L << 40); break;
    case P_II: GEN_PAIR(pii, int, 1 << 20); break;
    case P_SI: GEN_PAIR(psi, short, 1000); break;
    case P_LDI: GEN_PAIR(pldi, long double, 1e4000L); break; /* beyond the range of double */
    case P_FF: GEN_PAIR(pff, float, 1e30f); break;
    case P_DD: GEN_PAIR(pdd, double, 1e300); break;
    }
}

#define COMB_INT(T)                                                                                \
    do {                                                                                           \
        T a, b;                                                                                    \
        memcpy(&a, in, sizeof a);                                                                  \
        memcpy(&b, io, sizeof b);                                                                  \
        switch (o) {                                                                               \
        case O_SUM: b = (T)(a + b); break;                                                         \
        case O_PROD: b = (T)(a * b); break;                                                        \
        case O_MIN: b = a < b ? a : b; break;                                                      \
        case O_MAX: b = a > b ? a : b; break;                                                      \
        case O_LAND: b = (T)(a && b); break;                                                       \
        case O_LOR: b = (T)(a || b); break;                                                        \
        case O_LXOR: b = (T)(!a != !b); break;                                                     \
        case O_BAND: b = (T)(a & b); break;                                                        \
        case O_BOR: b = (T)(a | b); break;                                                         \
        case O_BXOR: b = (T)(a ^ b); break;                                                        \
        }                                                                                          \
        memcpy(io, &b, sizeof b);                                                                  \
    } while (0)
#define COMB_FLOAT(T)                                                                              \
    do {                                                                                           \
        T a, b;                                                                                    \
        memcpy(&a, in, sizeof a);                                                                  \
        memcpy(&b, io, sizeof b);                                                                  \
        switch (o) {                                                                               \
        case O_SUM: b = a + b; break;                                                              \
        case O_PROD: b = a * b; break;                                                             \
        case O_MIN: b = a < b ? a : b; break;                                                      \
        case O_MAX: b = a > b ? a : b; break;                                                      \
        }                                                                                          \
        memcpy(io, &b, sizeof b);                                                                  \
    } while (0)
#define COMB_COMPLEX(T)                                                                            \
    do {                                                                                           \
        T a, b;                                                                                    \
        memcpy(&a, in, sizeof a);                                                                  \
        memcpy(&b, io, sizeof b);                                                                  \
        b = o == O_SUM ? a + b : a * b;                                                            \
        memcpy(io, &b, sizeof b);                                                                  \
    } while (0)
#define COMB_PAIR(PT)                                                                              \
    do {                                                                                           \
        PT a, b;                                                                                   \
        memcpy(&a, in, sizeof a);                                                                  \
        memcpy(&b, io, sizeof b);                                                                  \
        int better = o == O_MINLOC ? a.v < b.v : a.v > b.v;                                        \
        if (better || (a.v == b.v && a.i < b.i))                                                   \
            b = a;                                                                                 \
        memcpy(io, &b, sizeof b);                                                                  \
    } while (0)

#define COMB_CPAIR(CT, R)                                                                          \
    do {                                                                                           \
        CT a, b;                                                                                   \
        memcpy(&a, in, sizeof a);                                                                  \
        memcpy(&b, io, sizeof b);                                                                  \
        if (o == O_SUM) {                                                                          \
            b.re = a.re + b.re;                                                                    \
            b.im = a.im + b.im;                                                                    \
        } else {                                                                                   \
            R re = a.re * b.re - a.im * b.im, im = a.re * b.im + a.im * b.re;                      \
            b.re = re;                                                                             \
            b.im = im;                                                                             \
        }                                                                                          \
        memcpy(io, &b, sizeof b);                                                                  \
    } while (0)

/* io = in o io, one element. */
static void comb(int ct, int o, const void *in, void *io)
{
    switch (ct) {
    case C_I8: COMB_INT(int8_t); break;
    case C_U8: case C_BYTE: COMB_INT(uint8_t); break;
    case C_I16: COMB_INT(int16_t); break;
    case C_U16: COMB_INT(uint16_t); break;
    case C_I32: case C_LOG: COMB_INT(int32_t); break;
    case C_U32: COMB_INT(uint32_t); break;
    case C_I64: COMB_INT(int64_t); break;
    case C_U64: COMB_INT(uint64_t); break;
    case C_BOOL: {
        _Bool a = *(const _Bool *)in, b = *(_Bool *)io;
        *(_Bool *)io = o == O_LAND ? a && b : o == O_LOR ? a || b : a != b;
        break;
    }
    case C_F: COMB_FLOAT(float); break;
    case C_D: COMB_FLOAT(double); break;
    case C_LD: COMB_FLOAT(long double); break;
    case C_CF: COMB_COMPLEX(float _Complex); break;
    case C_CD: COMB_COMPLEX(double _Complex); break;
    case C_CLD: COMB_COMPLEX(long double _Complex); break;
#ifdef HAVE_I128
    case C_I128: COMB_INT(i128); break;
#endif
#ifdef HAVE_F16
    case C_F16: COMB_FLOAT(f16); break;
    case C_CF16: COMB_CPAIR(cf16, f16); break;
#endif
#ifdef HAVE_F128
    case C_F128: COMB_FLOAT(f128); break;
    case C_CF128: COMB_CPAIR(cf128, f128); break;
#endif
    case P_FI: COMB_PAIR(pfi); break;
    case P_DI: COMB_PAIR(pdi); break;
    case P_LI: COMB_PAIR(pli); break;
    case P_II: COMB_PAIR(pii); break;
    case P_SI: COMB_PAIR(psi); break;
    case P_LDI: COMB_PAIR(pldi); break;
    case P_FF: COMB_PAIR(pff); break;
    case P_DD: COMB_PAIR(pdd); break;
    }
}

#define EQ_PAIR(PT)                                                                                \
    do {                                                                                           \
        PT x, y;                                                                                   \
        memcpy(&x, a, sizeof x);                                                                   \
        memcpy(&y, b, sizeof y);                                                                   \
        return x.v == y.v && x.i == y.i;                                                           \
    } while (0)
#define EQ_VAL(T)                                                                                  \
    do {                                                                                           \
        T x, y;                                                                                    \
        memcpy(&x, a, sizeof x);                                                                   \
        memcpy(&y, b, sizeof y);                                                                   \
        return x == y;                                                                             \
    } while (0)

#define EQ_PAIR_RI(CT)                                                                             \
    do {                                                                                           \
        CT x, y;                                                                                   \
        memcpy(&x, a, sizeof x);                                                                   \
        memcpy(&y, b, sizeof y);                                                                   \
        return x.re == y.re && x.im == y.im;                                                       \
    } while (0)

/* Whether two elements are equal (pairs: both members; padding is not compared). */
static int elem_eq(int ct, const void *a, const void *b)
{
    switch (ct) {
    case C_F: EQ_VAL(float);
    case C_D: EQ_VAL(double);
    case C_LD: EQ_VAL(long double);
    case C_CF: EQ_VAL(float _Complex);
    case C_CD: EQ_VAL(double _Complex);
    case C_CLD: EQ_VAL(long double _Complex);
#ifdef HAVE_F16
    case C_F16: EQ_VAL(f16);
    case C_CF16: EQ_PAIR_RI(cf16);
#endif
#ifdef HAVE_F128
    case C_F128: EQ_VAL(f128);
    case C_CF128: EQ_PAIR_RI(cf128);
#endif
    case P_FI: EQ_PAIR(pfi);
    case P_DI: EQ_PAIR(pdi);
    case P_LI: EQ_PAIR(pli);
    case P_II: EQ_PAIR(pii);
    case P_SI: EQ_PAIR(psi);
    case P_LDI: EQ_PAIR(pldi);
    case P_FF: EQ_PAIR(pff);
    case P_DD: EQ_PAIR(pdd);
    }
    return memcmp(a, b, ct_size(ct)) == 0; /* integers, bools, bytes: every bit */
}

/* A printable form of an element, for failure messages. */
static const char *elem_str(int ct, const void *a, char *s, size_t cap)
{
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64;
        float f; double d; long double ld; float _Complex cf; double _Complex cd; long double _Complex cld;
        pfi fi; pdi di; pli li; pii ii; psi si; pldi ldi; pff ff; pdd dd;
        i128 q; f16 h; f128 x; cf16 ch; cf128 cx; uint64_t w[4];
    } u;
    memcpy(&u, a, ct_extent(ct));
    switch (ct) {
    case C_I8: snprintf(s, cap, "%d", u.i8); break;
    case C_U8: case C_BYTE: case C_BOOL: snprintf(s, cap, "%u", u.u8); break;
    case C_I16: snprintf(s, cap, "%d", u.i16); break;
    case C_U16: snprintf(s, cap, "%u", u.u16); break;
    case C_I32: case C_LOG: snprintf(s, cap, "%d", u.i32); break;
    case C_U32: snprintf(s, cap, "%u", u.u32); break;
    case C_I64: snprintf(s, cap, "%lld", (long long)u.i64); break;
    case C_U64: snprintf(s, cap, "%llu", (unsigned long long)u.u64); break;
    case C_F: snprintf(s, cap, "%.9g", u.f); break;
    case C_D: snprintf(s, cap, "%.17g", u.d); break;
    case C_LD: snprintf(s, cap, "%.21Lg", u.ld); break;
    case C_CF: snprintf(s, cap, "(%g,%g)", crealf(u.cf), cimagf(u.cf)); break;
    case C_CD: snprintf(s, cap, "(%g,%g)", creal(u.cd), cimag(u.cd)); break;
    case C_CLD: snprintf(s, cap, "(%Lg,%Lg)", creall(u.cld), cimagl(u.cld)); break;
    case P_FI: snprintf(s, cap, "(%g,%d)", u.fi.v, u.fi.i); break;
    case P_DI: snprintf(s, cap, "(%g,%d)", u.di.v, u.di.i); break;
    case P_LI: snprintf(s, cap, "(%ld,%d)", u.li.v, u.li.i); break;
    case P_II: snprintf(s, cap, "(%d,%d)", u.ii.v, u.ii.i); break;
    case P_SI: snprintf(s, cap, "(%d,%d)", u.si.v, u.si.i); break;
    case P_LDI: snprintf(s, cap, "(%Lg,%d)", u.ldi.v, u.ldi.i); break;
    case P_FF: snprintf(s, cap, "(%g,%g)", u.ff.v, u.ff.i); break;
    case P_DD: snprintf(s, cap, "(%g,%g)", u.dd.v, u.dd.i); break;
    case C_I128: snprintf(s, cap, "0x%016llx%016llx", (unsigned long long)u.w[1], (unsigned long long)u.w[0]); break;
#ifdef HAVE_F16
    case C_F16: snprintf(s, cap, "%g", (double)u.h); break;
    case C_CF16: snprintf(s, cap, "(%g,%g)", (double)u.ch.re, (double)u.ch.im); break;
#endif
#ifdef HAVE_F128
    case C_F128: snprintf(s, cap, "%.21Lg", (long double)u.x); break;
    case C_CF128: snprintf(s, cap, "(%Lg,%Lg)", (long double)u.cx.re, (long double)u.cx.im); break;
#endif
    }
    return s;
}

/* Fills `count` elements of rank's input. */
static void fill_input(int ct, int o, int rank, int p, MPI_Count count, void *buf)
{
    size_t ext = ct_extent(ct);
    memset(buf, 0, (size_t)count * ext);
    for (MPI_Count i = 0; i < count; i++)
        gen(ct, o, rank, p, i, (char *)buf + (size_t)i * ext);
}

/* The expected element i of the reduction over ranks 0..p-1, in rank order. */
static void expected_elem(int ct, int o, int p, MPI_Count i, void *acc)
{
    char next[64];
    gen(ct, o, 0, p, i, acc);
    for (int r = 1; r < p; r++) {
        gen(ct, o, r, p, i, next);
        comb(ct, o, acc, next); /* next = acc o next: lower ranks on the left */
        memcpy(acc, next, ct_extent(ct));
    }
}

/* Checks count elements of a result; reports the first few mismatches. Returns mismatches. */
static long check_result(int ct, int o, int p, MPI_Count count, const void *buf, const char *what)
{
    char want[64], s1[128], s2[128];
    long bad = 0;
    size_t ext = ct_extent(ct);
    for (MPI_Count i = 0; i < count; i++) {
        const char *got = (const char *)buf + (size_t)i * ext;
        expected_elem(ct, o, p, i, want);
        if (!elem_eq(ct, got, want)) {
            if (bad < 3)
                CHECK(0, "%s: element %lld is %s, expected %s", what, (long long)i, elem_str(ct, got, s1, sizeof s1),
                      elem_str(ct, want, s2, sizeof s2));
            bad++;
        }
    }
    if (bad > 3)
        CHECK(0, "%s: %ld elements wrong in all", what, bad);
    return bad;
}

/* Guard bytes after a buffer: poisoned before the call, checked after. */
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

/* A non-commutative user operation on MPI_2INT elements: (a, b) stands for the affine map
 * x -> a x + b (mod 2^32), that is the 2x2 matrix [[a, b], [0, 1]], and the operation is
 * composition, inout = in o inout (in comes from the lower ranks). */
typedef struct {
    int a, b;
} affine;
static void aff_compose(const affine *in, affine *io)
{
    uint32_t a1 = (uint32_t)in->a, b1 = (uint32_t)in->b, a2 = (uint32_t)io->a, b2 = (uint32_t)io->b;
    io->a = (int)(a1 * a2);
    io->b = (int)(a1 * b2 + b1);
}
static void aff_gen(int rank, MPI_Count k, affine *f)
{
    uint64_t h = mix64(((uint64_t)rank << 40) ^ (uint64_t)k ^ 0x5a5a);
    f->a = 1 + 2 * (int)(h & 7); /* odd: never collapses to a constant map */
    f->b = (int)((h >> 8) & 0xffff);
}
static void aff_expected(int p, MPI_Count k, affine *acc)
{
    affine next;
    aff_gen(0, k, acc);
    for (int r = 1; r < p; r++) {
        aff_gen(r, k, &next);
        aff_compose(acc, &next);
        *acc = next;
    }
}

/* MPI_Reduce_local of `count` elements of types[t] with operation o: inout holds "rank 1"'s
 * input and in "rank 0"'s, so the result is the reduction over 2 processes in rank order;
 * checked, with the bytes past the buffer untouched. */
static void reduce_local_ok(int t, int o, MPI_Count count)
{
    const tentry *te = &types[t];
    size_t ext = ct_extent(te->ct), bytes = (size_t)count * ext;
    char *in = malloc(bytes + 1), *io = malloc(bytes + GUARD);
    fill_input(te->ct, o, 0, 2, count, in);
    fill_input(te->ct, o, 1, 2, count, io);
    guard_set(io, bytes);
    char what[160];
    snprintf(what, sizeof what, "MPI_Reduce_local %s %s count %lld", op_name[o], te->name, (long long)count);
    int rc = MPI_Reduce_local(in, io, (int)count, te->h, op_handle(o));
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    if (rc == MPI_SUCCESS)
        check_result(te->ct, o, 2, count, io, what);
    guard_check(io, bytes, what);
    free(in);
    free(io);
}

#endif
