/* predefined.c: the predefined datatypes of the standard ABI, their sizes on this platform,
 * and the layouts of the padded pair types. */
#include "dtype.h"

#include "core/error.h"

#include <complex.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <wchar.h>

#define PAIR(a, b) struct { a v; b i; }

/* The pair types have padding between or after their two members, so their layout has two
 * blocks and their extent exceeds their size. */
#define PAIR_BLOCKS(name, a, b)                                                              \
    static const cr_dt_block name[2] = {{0, sizeof(a)}, {offsetof(PAIR(a, b), i), sizeof(b)}}

PAIR_BLOCKS(blocks_float_int, float, int);
PAIR_BLOCKS(blocks_double_int, double, int);
PAIR_BLOCKS(blocks_long_int, long, int);
PAIR_BLOCKS(blocks_2int, int, int);
PAIR_BLOCKS(blocks_short_int, short, int);
PAIR_BLOCKS(blocks_long_double_int, long double, int);
PAIR_BLOCKS(blocks_2float, float, float);
PAIR_BLOCKS(blocks_2double, double, double);

/* The representations that depend on the platform: char's signedness, and the C types of the
 * optional Fortran types (REAL(16) is IEEE quad precision, as gfortran has it). */
#if CHAR_MIN < 0
#define BASIC_CHAR CR_BASIC_INT8
#else
#define BASIC_CHAR CR_BASIC_UINT8
#endif
#ifdef CR_HAVE_INT128
#define BASIC_INT128 CR_BASIC_INT128
#else
#define BASIC_INT128 CR_BASIC_NONE
#endif
#ifdef CR_HAVE_FLOAT16
#define BASIC_FLOAT16 CR_BASIC_FLOAT16
#define BASIC_COMPLEX_FLOAT16 CR_BASIC_COMPLEX_FLOAT16
#else
#define BASIC_FLOAT16 CR_BASIC_NONE
#define BASIC_COMPLEX_FLOAT16 CR_BASIC_NONE
#endif
#ifdef CR_HAVE_FLOAT128
#define BASIC_FLOAT128 CR_BASIC_FLOAT128
#define BASIC_COMPLEX_FLOAT128 CR_BASIC_COMPLEX_FLOAT128
#else
#define BASIC_FLOAT128 CR_BASIC_NONE
#define BASIC_COMPLEX_FLOAT128 CR_BASIC_NONE
#endif

static struct predef {
    MPI_Datatype handle;
    const char *name;
    size_t size;
    cr_basic basic;
    cr_dt_category category;
    const cr_dt_block *pair;  /* two blocks for pair types */
    size_t extent;            /* pair types: sizeof the struct */
    cr_dt_block block;        /* the single block of a contiguous type */
    cr_dtype dt;
} predefs[] = {
#define T(h, ty, basic, cat) {h, #h, sizeof(ty), basic, cat, NULL, 0, {0, 0}, {{0}}}
#define P(h, a, b, basic, blocks, cat) {h, #h, sizeof(a) + sizeof(b), basic, cat, blocks, sizeof(PAIR(a, b)), {0, 0}, {{0}}}
    T(MPI_AINT, MPI_Aint, CR_BASIC_INT64, CR_CAT_MULTI),
    T(MPI_COUNT, MPI_Count, CR_BASIC_INT64, CR_CAT_MULTI),
    T(MPI_OFFSET, MPI_Offset, CR_BASIC_INT64, CR_CAT_MULTI),
    T(MPI_PACKED, char, CR_BASIC_NONE, CR_CAT_NONE),
    T(MPI_SHORT, short, CR_BASIC_INT16, CR_CAT_C_INT),
    T(MPI_INT, int, CR_BASIC_INT32, CR_CAT_C_INT),
    T(MPI_LONG, long, CR_BASIC_INT64, CR_CAT_C_INT),
    T(MPI_LONG_LONG, long long, CR_BASIC_INT64, CR_CAT_C_INT),
    T(MPI_UNSIGNED_SHORT, unsigned short, CR_BASIC_UINT16, CR_CAT_C_INT),
    T(MPI_UNSIGNED, unsigned, CR_BASIC_UINT32, CR_CAT_C_INT),
    T(MPI_UNSIGNED_LONG, unsigned long, CR_BASIC_UINT64, CR_CAT_C_INT),
    T(MPI_UNSIGNED_LONG_LONG, unsigned long long, CR_BASIC_UINT64, CR_CAT_C_INT),
    T(MPI_FLOAT, float, CR_BASIC_FLOAT, CR_CAT_FLOAT),
    T(MPI_C_FLOAT_COMPLEX, float _Complex, CR_BASIC_COMPLEX_FLOAT, CR_CAT_COMPLEX),
    T(MPI_CXX_FLOAT_COMPLEX, float _Complex, CR_BASIC_COMPLEX_FLOAT, CR_CAT_COMPLEX),
    T(MPI_DOUBLE, double, CR_BASIC_DOUBLE, CR_CAT_FLOAT),
    T(MPI_C_DOUBLE_COMPLEX, double _Complex, CR_BASIC_COMPLEX_DOUBLE, CR_CAT_COMPLEX),
    T(MPI_CXX_DOUBLE_COMPLEX, double _Complex, CR_BASIC_COMPLEX_DOUBLE, CR_CAT_COMPLEX),
    T(MPI_LOGICAL, int32_t, CR_BASIC_INT32, CR_CAT_LOGICAL),
    T(MPI_INTEGER, int32_t, CR_BASIC_INT32, CR_CAT_F_INT),
    T(MPI_REAL, float, CR_BASIC_FLOAT, CR_CAT_FLOAT),
    T(MPI_COMPLEX, float _Complex, CR_BASIC_COMPLEX_FLOAT, CR_CAT_COMPLEX),
    T(MPI_DOUBLE_PRECISION, double, CR_BASIC_DOUBLE, CR_CAT_FLOAT),
    T(MPI_DOUBLE_COMPLEX, double _Complex, CR_BASIC_COMPLEX_DOUBLE, CR_CAT_COMPLEX),
    T(MPI_LONG_DOUBLE, long double, CR_BASIC_LONG_DOUBLE, CR_CAT_FLOAT),
    T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, CR_BASIC_COMPLEX_LONG_DOUBLE, CR_CAT_COMPLEX),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, CR_BASIC_COMPLEX_LONG_DOUBLE, CR_CAT_COMPLEX),
    P(MPI_FLOAT_INT, float, int, CR_BASIC_FLOAT_INT, blocks_float_int, CR_CAT_PAIR),
    P(MPI_DOUBLE_INT, double, int, CR_BASIC_DOUBLE_INT, blocks_double_int, CR_CAT_PAIR),
    P(MPI_LONG_INT, long, int, CR_BASIC_LONG_INT, blocks_long_int, CR_CAT_PAIR),
    P(MPI_2INT, int, int, CR_BASIC_2INT, blocks_2int, CR_CAT_PAIR),
    P(MPI_SHORT_INT, short, int, CR_BASIC_SHORT_INT, blocks_short_int, CR_CAT_PAIR),
    P(MPI_LONG_DOUBLE_INT, long double, int, CR_BASIC_LONG_DOUBLE_INT, blocks_long_double_int, CR_CAT_PAIR),
    P(MPI_2REAL, float, float, CR_BASIC_2FLOAT, blocks_2float, CR_CAT_PAIR),
    P(MPI_2DOUBLE_PRECISION, double, double, CR_BASIC_2DOUBLE, blocks_2double, CR_CAT_PAIR),
    P(MPI_2INTEGER, int, int, CR_BASIC_2INT, blocks_2int, CR_CAT_PAIR),
    T(MPI_C_BOOL, _Bool, CR_BASIC_BOOL, CR_CAT_LOGICAL),
    T(MPI_CXX_BOOL, _Bool, CR_BASIC_BOOL, CR_CAT_LOGICAL),
    T(MPI_WCHAR, wchar_t, CR_BASIC_NONE, CR_CAT_NONE),
    T(MPI_INT8_T, int8_t, CR_BASIC_INT8, CR_CAT_C_INT),
    T(MPI_UINT8_T, uint8_t, CR_BASIC_UINT8, CR_CAT_C_INT),
    T(MPI_CHAR, char, BASIC_CHAR, CR_CAT_CHAR),
    T(MPI_SIGNED_CHAR, signed char, CR_BASIC_INT8, CR_CAT_C_INT),
    T(MPI_UNSIGNED_CHAR, unsigned char, CR_BASIC_UINT8, CR_CAT_C_INT),
    T(MPI_BYTE, unsigned char, CR_BASIC_UINT8, CR_CAT_BYTE),
    T(MPI_INT16_T, int16_t, CR_BASIC_INT16, CR_CAT_C_INT),
    T(MPI_UINT16_T, uint16_t, CR_BASIC_UINT16, CR_CAT_C_INT),
    T(MPI_INT32_T, int32_t, CR_BASIC_INT32, CR_CAT_C_INT),
    T(MPI_UINT32_T, uint32_t, CR_BASIC_UINT32, CR_CAT_C_INT),
    T(MPI_INT64_T, int64_t, CR_BASIC_INT64, CR_CAT_C_INT),
    T(MPI_UINT64_T, uint64_t, CR_BASIC_UINT64, CR_CAT_C_INT),
    /* Fortran types with the sizes gfortran gives them on x86-64. */
    T(MPI_LOGICAL1, int8_t, CR_BASIC_INT8, CR_CAT_LOGICAL_SIZED),
    T(MPI_INTEGER1, int8_t, CR_BASIC_INT8, CR_CAT_F_INT),
    T(MPI_CHARACTER, char, CR_BASIC_UINT8, CR_CAT_F_CHAR),
    T(MPI_LOGICAL2, int16_t, CR_BASIC_INT16, CR_CAT_LOGICAL_SIZED),
    T(MPI_INTEGER2, int16_t, CR_BASIC_INT16, CR_CAT_F_INT),
    T(MPI_REAL2, int16_t, BASIC_FLOAT16, CR_CAT_FLOAT),
    T(MPI_LOGICAL4, int32_t, CR_BASIC_INT32, CR_CAT_LOGICAL),
    T(MPI_INTEGER4, int32_t, CR_BASIC_INT32, CR_CAT_F_INT),
    T(MPI_REAL4, float, CR_BASIC_FLOAT, CR_CAT_FLOAT),
    T(MPI_COMPLEX4, int32_t, BASIC_COMPLEX_FLOAT16, CR_CAT_COMPLEX),
    T(MPI_LOGICAL8, int64_t, CR_BASIC_INT64, CR_CAT_LOGICAL_SIZED),
    T(MPI_INTEGER8, int64_t, CR_BASIC_INT64, CR_CAT_F_INT),
    T(MPI_REAL8, double, CR_BASIC_DOUBLE, CR_CAT_FLOAT),
    T(MPI_COMPLEX8, float _Complex, CR_BASIC_COMPLEX_FLOAT, CR_CAT_COMPLEX),
    T(MPI_LOGICAL16, __int128, BASIC_INT128, CR_CAT_LOGICAL),
    T(MPI_INTEGER16, __int128, BASIC_INT128, CR_CAT_F_INT),
    T(MPI_REAL16, long double, BASIC_FLOAT128, CR_CAT_FLOAT),
    T(MPI_COMPLEX16, double _Complex, CR_BASIC_COMPLEX_DOUBLE, CR_CAT_COMPLEX),
    T(MPI_COMPLEX32, long double _Complex, BASIC_COMPLEX_FLOAT128, CR_CAT_COMPLEX),
#undef T
#undef P
};

/* The alignment of a predefined type's C representation (complex numbers and pairs align as
 * their members do). */
static uint8_t align_of(const cr_dtype *dt)
{
    switch (dt->basic) {
    case CR_BASIC_COMPLEX_FLOAT16: return 2;
    case CR_BASIC_COMPLEX_FLOAT: case CR_BASIC_FLOAT_INT: case CR_BASIC_2INT: case CR_BASIC_SHORT_INT:
    case CR_BASIC_2FLOAT: return 4;
    case CR_BASIC_COMPLEX_DOUBLE: case CR_BASIC_DOUBLE_INT: case CR_BASIC_2DOUBLE: return 8;
    case CR_BASIC_LONG_INT: return _Alignof(long);
    case CR_BASIC_COMPLEX_LONG_DOUBLE: case CR_BASIC_LONG_DOUBLE_INT: return _Alignof(long double);
    default: break;
    }
    uint8_t a = 1; /* the largest power of two dividing the size, up to 16 */
    while (a < 16 && dt->size && dt->size % (a * 2) == 0)
        a *= 2;
    return a;
}

void cr_dtype_setup(void)
{
    for (size_t i = 0; i < CR_ARRAY_LEN(predefs); i++) {
        struct predef *p = &predefs[i];
        cr_dtype *dt = &p->dt;
        dt->size = (MPI_Count)p->size;
        dt->basic = (uint8_t)p->basic;
        dt->category = (uint8_t)p->category;
        dt->name = p->name;
        dt->flags = CR_DT_COMMITTED | CR_DT_PREDEFINED;
        dt->lb = dt->true_lb = 0;
        if (p->pair) {
            dt->extent = (MPI_Aint)p->extent;
            dt->true_extent = p->pair[1].offset + p->pair[1].length; /* without the tail padding */
            dt->nblocks = 2;
            dt->blocks = p->pair;
        } else {
            dt->extent = dt->true_extent = (MPI_Aint)p->size;
            p->block = (cr_dt_block){0, (MPI_Aint)p->size};
            dt->nblocks = 1;
            dt->blocks = &p->block;
            dt->flags |= CR_DT_CONTIG | CR_DT_ONE_RUN;
        }
        dt->align = align_of(dt);
        dt->leaf = dt;
        dt->loop = cr_dt_leaf_layout(dt); /* what derived types built on it walk */
        cr_handle_predefine(&dt->obj, (uintptr_t)p->handle, CR_KIND_DATATYPE);
    }
    cr_pool_setup(CR_KIND_DATATYPE, sizeof(cr_dtype));
}

int cr_dtype_check(MPI_Datatype h, const char *arg, bool committed, cr_dtype **out)
{
    cr_dtype *dt = cr_dtype_get(h);
    if (CR_UNLIKELY(!dt))
        return cr_err_bad_handle(MPI_ERR_TYPE, "datatype", (uintptr_t)h, arg);
    if (CR_UNLIKELY(committed && !(dt->flags & CR_DT_COMMITTED)))
        return cr_err(MPI_ERR_TYPE, "%s is a datatype that was not committed (call MPI_Type_commit first)", arg);
    *out = dt;
    return MPI_SUCCESS;
}

int cr_dtype_check_array(const MPI_Datatype *types, MPI_Count n, const char *arg, bool committed, cr_dtype **out)
{
    for (MPI_Count i = 0; i < n; i++) {
        cr_dtype *dt = cr_dtype_get(types[i]);
        if (CR_LIKELY(dt && (!committed || (dt->flags & CR_DT_COMMITTED)))) {
            out[i] = dt;
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%s[%lld]", arg, (long long)i);
        return cr_dtype_check(types[i], name, committed, &out[i]);
    }
    return MPI_SUCCESS;
}
