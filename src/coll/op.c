/* op.c: the predefined reduction operations on every predefined type that the standard, MPICH
 * or Open MPI reduces with them (one table, `accept`, says which), user-defined operations,
 * and MPI_Op_create/free/commutative and MPI_Reduce_local. doc/reductions.md has the table
 * for users, and why each extension is there. */
#include "op.h"

#include "core/error.h"
#include "cr_impl.h"

#include <complex.h>
#include <limits.h>
#include <stdio.h>

enum { O_SUM, O_MIN, O_MAX, O_PROD, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR, O_MINLOC, O_MAXLOC, O_REPLACE,
       O_NO_OP, O_COUNT };

/* `in` and `inout` never overlap (MPI forbids aliased buffers; in-place calls combine into a
 * copy): restrict lets the compiler vectorise the loops (op.c is built with -ftree-vectorize),
 * and on x86-64 each loop is also built for AVX2 and AVX-512, the best one chosen when the
 * library loads (an ifunc): twice or four times the elements an instruction of the baseline
 * (SSE2) takes. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) /* ifunc resolvers run before a sanitizer can */
#define CR_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CR_VECTOR_CLONES
#endif
#define LOOP(T, EXPR)                                                                              \
    {                                                                                              \
        const T *restrict a = in_;                                                                 \
        T *restrict b = io_;                                                                       \
        for (MPI_Count i = 0; i < n; i++)                                                          \
            b[i] = (EXPR);                                                                         \
    }

#define ARITH(T, tag)                                                                              \
    CR_VECTOR_CLONES static void sum_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, a[i] + b[i])             \
    CR_VECTOR_CLONES static void prod_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, a[i] * b[i])            \
    CR_VECTOR_CLONES static void min_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, a[i] < b[i] ? a[i] : b[i]) \
    CR_VECTOR_CLONES static void max_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, a[i] > b[i] ? a[i] : b[i])
#define LOGIC(T, tag)                                                                              \
    CR_VECTOR_CLONES static void land_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, (T)(a[i] && b[i]))     \
    CR_VECTOR_CLONES static void lor_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, (T)(a[i] || b[i]))      \
    CR_VECTOR_CLONES static void lxor_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, (T)(!a[i] != !b[i]))
#define BITS(T, tag)                                                                               \
    CR_VECTOR_CLONES static void band_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, a[i] & b[i])           \
    CR_VECTOR_CLONES static void bor_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, a[i] | b[i])            \
    CR_VECTOR_CLONES static void bxor_##tag(const void *in_, void *io_, MPI_Count n) LOOP(T, a[i] ^ b[i])
#define INTEGER(T, tag) ARITH(T, tag) LOGIC(T, tag) BITS(T, tag)

INTEGER(int8_t, i8)
INTEGER(uint8_t, u8)
INTEGER(int16_t, i16)
INTEGER(uint16_t, u16)
INTEGER(int32_t, i32)
INTEGER(uint32_t, u32)
INTEGER(int64_t, i64)
INTEGER(uint64_t, u64)
ARITH(float, f)
ARITH(double, d)
ARITH(long double, ld)
LOGIC(_Bool, bool)
static void sum_cf(const void *in_, void *io_, MPI_Count n) LOOP(float _Complex, a[i] + b[i])
static void prod_cf(const void *in_, void *io_, MPI_Count n) LOOP(float _Complex, a[i] * b[i])
static void sum_cd(const void *in_, void *io_, MPI_Count n) LOOP(double _Complex, a[i] + b[i])
static void prod_cd(const void *in_, void *io_, MPI_Count n) LOOP(double _Complex, a[i] * b[i])
static void sum_cld(const void *in_, void *io_, MPI_Count n) LOOP(long double _Complex, a[i] + b[i])
static void prod_cld(const void *in_, void *io_, MPI_Count n) LOOP(long double _Complex, a[i] * b[i])

/* The optional Fortran types, where the compiler has their C types. C has no complex type of
 * _Float16 or __float128, so their complex numbers are (re, im) pairs. */
#define COMPLEX_PAIR(R, tag)                                                                       \
    typedef struct {                                                                               \
        R re, im;                                                                                  \
    } cpx_##tag;                                                                                   \
    static void sum_##tag(const void *in_, void *io_, MPI_Count n)                                 \
    {                                                                                              \
        const cpx_##tag *a = in_;                                                                  \
        cpx_##tag *b = io_;                                                                        \
        for (MPI_Count i = 0; i < n; i++) {                                                        \
            b[i].re = a[i].re + b[i].re;                                                           \
            b[i].im = a[i].im + b[i].im;                                                           \
        }                                                                                          \
    }                                                                                              \
    static void prod_##tag(const void *in_, void *io_, MPI_Count n)                                \
    {                                                                                              \
        const cpx_##tag *a = in_;                                                                  \
        cpx_##tag *b = io_;                                                                        \
        for (MPI_Count i = 0; i < n; i++) {                                                        \
            R re = a[i].re * b[i].re - a[i].im * b[i].im;                                          \
            R im = a[i].re * b[i].im + a[i].im * b[i].re;                                          \
            b[i].re = re;                                                                          \
            b[i].im = im;                                                                          \
        }                                                                                          \
    }
#ifdef CR_HAVE_INT128
INTEGER(__int128, i128)
#define ROW_I128 INT_ROW(i128)
#else
#define ROW_I128 {0}
#endif
#ifdef CR_HAVE_FLOAT16
ARITH(_Float16, f16)
COMPLEX_PAIR(_Float16, cf16)
#define ROW_F16 FLOAT_ROW(f16)
#define ROW_CF16 COMPLEX_ROW(cf16)
#else
#define ROW_F16 {0}
#define ROW_CF16 {0}
#endif
#ifdef CR_HAVE_FLOAT128
ARITH(__float128, f128)
COMPLEX_PAIR(__float128, cf128)
#define ROW_F128 FLOAT_ROW(f128)
#define ROW_CF128 COMPLEX_ROW(cf128)
#else
#define ROW_F128 {0}
#define ROW_CF128 {0}
#endif

/* MINLOC/MAXLOC on (value, index) pairs: the extreme value, and the lowest index among equals. */
#define LOC(V, I, tag)                                                                             \
    typedef struct {                                                                               \
        V v;                                                                                       \
        I i;                                                                                       \
    } pair_##tag;                                                                                  \
    static void minloc_##tag(const void *in_, void *io_, MPI_Count n)                              \
    {                                                                                              \
        const pair_##tag *a = in_;                                                                 \
        pair_##tag *b = io_;                                                                       \
        for (MPI_Count k = 0; k < n; k++)                                                          \
            if (a[k].v < b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i))                          \
                b[k] = a[k];                                                                       \
    }                                                                                              \
    static void maxloc_##tag(const void *in_, void *io_, MPI_Count n)                              \
    {                                                                                              \
        const pair_##tag *a = in_;                                                                 \
        pair_##tag *b = io_;                                                                       \
        for (MPI_Count k = 0; k < n; k++)                                                          \
            if (a[k].v > b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i))                          \
                b[k] = a[k];                                                                       \
    }

LOC(float, int, fi)
LOC(double, int, di)
LOC(long, int, li)
LOC(int, int, ii)
LOC(short, int, si)
LOC(long double, int, ldi)
LOC(float, float, ff)
LOC(double, double, dd)

#define INT_ROW(tag) {[O_SUM] = sum_##tag, [O_MIN] = min_##tag, [O_MAX] = max_##tag, [O_PROD] = prod_##tag,        \
                      [O_BAND] = band_##tag, [O_BOR] = bor_##tag, [O_BXOR] = bxor_##tag, [O_LAND] = land_##tag, \
                      [O_LOR] = lor_##tag, [O_LXOR] = lxor_##tag}
#define FLOAT_ROW(tag) {[O_SUM] = sum_##tag, [O_MIN] = min_##tag, [O_MAX] = max_##tag, [O_PROD] = prod_##tag}
#define COMPLEX_ROW(tag) {[O_SUM] = sum_##tag, [O_PROD] = prod_##tag}
#define LOGIC_ROW(tag) {[O_LAND] = land_##tag, [O_LOR] = lor_##tag, [O_LXOR] = lxor_##tag}
#define LOC_ROW(tag) {[O_MINLOC] = minloc_##tag, [O_MAXLOC] = maxloc_##tag}

/* fns[basic][op]: the loop for the operation on data of that C representation. Which types
 * may use it is the business of `accept` below, not of this table. */
static cr_op_fn *const fns[CR_BASIC_COUNT][O_COUNT] = {
    [CR_BASIC_INT8] = INT_ROW(i8),
    [CR_BASIC_UINT8] = INT_ROW(u8),
    [CR_BASIC_INT16] = INT_ROW(i16),
    [CR_BASIC_UINT16] = INT_ROW(u16),
    [CR_BASIC_INT32] = INT_ROW(i32),
    [CR_BASIC_UINT32] = INT_ROW(u32),
    [CR_BASIC_INT64] = INT_ROW(i64),
    [CR_BASIC_UINT64] = INT_ROW(u64),
    [CR_BASIC_INT128] = ROW_I128,
    [CR_BASIC_FLOAT16] = ROW_F16,
    [CR_BASIC_FLOAT] = FLOAT_ROW(f),
    [CR_BASIC_DOUBLE] = FLOAT_ROW(d),
    [CR_BASIC_LONG_DOUBLE] = FLOAT_ROW(ld),
    [CR_BASIC_FLOAT128] = ROW_F128,
    [CR_BASIC_COMPLEX_FLOAT16] = ROW_CF16,
    [CR_BASIC_COMPLEX_FLOAT] = COMPLEX_ROW(cf),
    [CR_BASIC_COMPLEX_DOUBLE] = COMPLEX_ROW(cd),
    [CR_BASIC_COMPLEX_LONG_DOUBLE] = COMPLEX_ROW(cld),
    [CR_BASIC_COMPLEX_FLOAT128] = ROW_CF128,
    [CR_BASIC_BOOL] = LOGIC_ROW(bool),
    [CR_BASIC_FLOAT_INT] = LOC_ROW(fi),
    [CR_BASIC_DOUBLE_INT] = LOC_ROW(di),
    [CR_BASIC_LONG_INT] = LOC_ROW(li),
    [CR_BASIC_2INT] = LOC_ROW(ii),
    [CR_BASIC_SHORT_INT] = LOC_ROW(si),
    [CR_BASIC_LONG_DOUBLE_INT] = LOC_ROW(ldi),
    [CR_BASIC_2FLOAT] = LOC_ROW(ff),
    [CR_BASIC_2DOUBLE] = LOC_ROW(dd),
};

/* THE table: which predefined operation applies to which family of predefined types, and on
 * whose authority. S: the standard (MPI-4.1 section 6.9.2, the fixed-size LOGICALs of MPI 5.0
 * with the logical types); M: an extension because MPICH accepts it; O: because Open MPI does;
 * B: both do. An empty cell is MPI_ERR_OP. MPI_REPLACE and MPI_NO_OP are for one-sided
 * accumulates only and have no cell. */
enum { NO = 0, S, M, O, B };
static const uint8_t accept[CR_CAT_COUNT][O_COUNT] = {
    /*                      SUM  MIN  MAX  PROD BAND BOR  BXOR LAND LOR  LXOR MINLOC MAXLOC */
    [CR_CAT_C_INT] =        {S,  S,   S,   S,   S,   S,   S,   S,   S,   S},
    [CR_CAT_F_INT] =        {S,  S,   S,   S,   S,   S,   S,   M,   M,   M},
    [CR_CAT_MULTI] =        {S,  S,   S,   S,   S,   S,   S,   B,   B,   B},
    [CR_CAT_FLOAT] =        {S,  S,   S,   S},
    [CR_CAT_COMPLEX] =      {S,  NO,  NO,  S},
    [CR_CAT_LOGICAL] =      {NO, NO,  NO,  NO,  NO,  NO,  NO,  S,   S,   S},
    [CR_CAT_LOGICAL_SIZED] = {O, O,   O,   O,   O,   O,   O,   S,   S,   S},
    [CR_CAT_BYTE] =         {O,  O,   O,   O,   S,   S,   S,   O,   O,   O},
    [CR_CAT_CHAR] =         {B,  B,   B,   B,   B,   B,   B,   B,   B,   B},
    [CR_CAT_F_CHAR] =       {B,  B,   B,   B,   B,   B,   B,   B,   B,   B},
    [CR_CAT_PAIR] =         {[O_MINLOC] = S, [O_MAXLOC] = S},
};

/* How an error message describes a family. */
static const char *const family_words[CR_CAT_COUNT] = {
    [CR_CAT_NONE] = "a type no predefined operation applies to",
    [CR_CAT_C_INT] = "a C integer type",
    [CR_CAT_F_INT] = "a Fortran integer type",
    [CR_CAT_MULTI] = "a multi-language integer type",
    [CR_CAT_FLOAT] = "a floating-point type",
    [CR_CAT_COMPLEX] = "a complex type",
    [CR_CAT_LOGICAL] = "a logical type",
    [CR_CAT_LOGICAL_SIZED] = "a logical type",
    [CR_CAT_BYTE] = "uninterpreted bytes",
    [CR_CAT_CHAR] = "a character type",
    [CR_CAT_F_CHAR] = "a character type",
    [CR_CAT_PAIR] = "a value-index pair type",
};

static struct predef_op {
    MPI_Op handle;
    int index;
    const char *name;
    cr_op op;
} predefs[] = {
    {MPI_SUM, O_SUM, "MPI_SUM", {{0}}},          {MPI_MIN, O_MIN, "MPI_MIN", {{0}}},
    {MPI_MAX, O_MAX, "MPI_MAX", {{0}}},          {MPI_PROD, O_PROD, "MPI_PROD", {{0}}},
    {MPI_BAND, O_BAND, "MPI_BAND", {{0}}},       {MPI_BOR, O_BOR, "MPI_BOR", {{0}}},
    {MPI_BXOR, O_BXOR, "MPI_BXOR", {{0}}},       {MPI_LAND, O_LAND, "MPI_LAND", {{0}}},
    {MPI_LOR, O_LOR, "MPI_LOR", {{0}}},          {MPI_LXOR, O_LXOR, "MPI_LXOR", {{0}}},
    {MPI_MINLOC, O_MINLOC, "MPI_MINLOC", {{0}}}, {MPI_MAXLOC, O_MAXLOC, "MPI_MAXLOC", {{0}}},
    {MPI_REPLACE, O_REPLACE, "MPI_REPLACE", {{0}}}, {MPI_NO_OP, O_NO_OP, "MPI_NO_OP", {{0}}},
};

static const char *predef_name(int index)
{
    for (size_t i = 0; i < CR_ARRAY_LEN(predefs); i++)
        if (predefs[i].index == index)
            return predefs[i].name;
    return "?";
}

void cr_op_setup(void)
{
    cr_pool_setup(CR_KIND_OP, sizeof(cr_op));
    for (size_t i = 0; i < CR_ARRAY_LEN(predefs); i++) {
        cr_op *op = &predefs[i].op;
        op->commutative = true;
        op->index = (int8_t)predefs[i].index;
        op->name = predefs[i].name;
        cr_handle_predefine(&op->obj, (uintptr_t)predefs[i].handle, CR_KIND_OP);
    }
}

/* Why op does not apply to dt (the caller knows it does not): the message names what does. */
static __attribute__((noinline, cold)) int op_check_failure(const cr_op *op, const cr_dtype *dt)
{
    const char *dname = dt->name ? dt->name : "a derived datatype";
    if (op->index == O_REPLACE || op->index == O_NO_OP)
        return cr_err(MPI_ERR_OP, "%s is for one-sided accumulate operations (MPI_Accumulate and its family) only: "
                      "no reduction applies it, to %s or any other datatype", op->name, dname);
    if (!(dt->flags & CR_DT_PREDEFINED))
        return cr_err(MPI_ERR_OP, "%s is not defined for this derived datatype: it mixes several predefined types, "
                      "and predefined operations reduce derived types only when all their elements are one "
                      "predefined type (a user-defined operation from MPI_Op_create can reduce any datatype)",
                      op->name);
    unsigned fam = dt->category < CR_CAT_COUNT ? dt->category : CR_CAT_NONE;
    if (accept[fam][op->index] != NO)
        return cr_err(MPI_ERR_OP, "%s on %s is not available in this build of Courier: the C compiler it was built "
                      "with has no type for the data of %s", op->name, dname, dname);
    /* Name the operations that do apply, so the message says what to do instead. */
    char ok[256] = "";
    size_t len = 0;
    for (int o = 0; o < O_REPLACE; o++)
        if (accept[fam][o] != NO && dt->basic != CR_BASIC_NONE && fns[dt->basic][o])
            len += (size_t)snprintf(ok + len, len < sizeof ok ? sizeof ok - len : 0, "%s%s", len ? ", " : "",
                                    predef_name(o));
    if (!len)
        return cr_err(MPI_ERR_OP, "%s is not defined for datatype %s: no predefined operation applies to %s (a "
                      "user-defined operation from MPI_Op_create can reduce it)", op->name, dname, dname);
    return cr_err(MPI_ERR_OP, "%s is not defined for datatype %s (%s); the predefined operations on %s are %s",
                  op->name, dname, family_words[fam], dname, ok);
}

int cr_op_check(const cr_op *op, const cr_dtype *dt)
{
    if (op->index < 0)
        return MPI_SUCCESS; /* user operations take any type */
    if (op->index == O_REPLACE || op->index == O_NO_OP)
        return op_check_failure(op, dt);
    if (!(dt->flags & CR_DT_PREDEFINED)) {
        /* A derived type made of one predefined type reduces as an array of it. */
        if (dt->leaf)
            return cr_op_check(op, dt->leaf);
        return op_check_failure(op, dt);
    }
    unsigned fam = dt->category < CR_CAT_COUNT ? dt->category : CR_CAT_NONE;
    if (accept[fam][op->index] != NO && dt->basic != CR_BASIC_NONE && fns[dt->basic][op->index])
        return MPI_SUCCESS;
    return op_check_failure(op, dt);
}

/* A predefined operation on a derived type whose elements are all one predefined type (its
 * leaf): the elements are gathered into arrays of the leaf a chunk at a time, reduced, and the
 * result scattered back, so any layout (gaps, strides, pair types with padding) works with
 * buffers on the stack. A contiguous type is an array of its leaf already. */
static void apply_derived(cr_op_fn *fn, const void *in, void *inout, MPI_Count count, const cr_dtype *dt)
{
    const cr_dtype *leaf = dt->leaf;
    if (!leaf->size)
        return;
    uint64_t n = (uint64_t)count * ((uint64_t)dt->size / (uint64_t)leaf->size);
    bool leaf_contig = leaf->flags & CR_DT_CONTIG;
    if (dt->flags & CR_DT_CONTIG && leaf_contig) {
        fn(in, inout, (MPI_Count)n);
        return;
    }
    enum { CHUNK = 256, MAX_EXTENT = 32 };
    _Alignas(16) unsigned char a[CHUNK * MAX_EXTENT], b[CHUNK * MAX_EXTENT], stream[CHUNK * MAX_EXTENT];
    for (uint64_t done = 0; done < n;) {
        uint64_t k = CR_MIN((uint64_t)CHUNK, n - done), off = done * (uint64_t)leaf->size, bytes = k * (uint64_t)leaf->size;
        /* the leaf elements of `in` and of `inout` as arrays of the leaf */
        cr_dt_pack(in, count, dt, off, leaf_contig ? a : stream, bytes);
        if (!leaf_contig)
            cr_dt_unpack(a, (MPI_Count)k, leaf, 0, stream, bytes);
        cr_dt_pack(inout, count, dt, off, leaf_contig ? b : stream, bytes);
        if (!leaf_contig)
            cr_dt_unpack(b, (MPI_Count)k, leaf, 0, stream, bytes);
        fn(a, b, (MPI_Count)k);
        if (!leaf_contig)
            cr_dt_pack(b, (MPI_Count)k, leaf, 0, stream, bytes);
        cr_dt_unpack(inout, count, dt, off, leaf_contig ? b : stream, bytes);
        done += k;
    }
}

void cr_op_apply(const cr_op *op, const void *in, void *inout, MPI_Count count, cr_dtype *dt)
{
    if (op->index >= 0) {
        if (CR_LIKELY(dt->flags & CR_DT_PREDEFINED))
            fns[dt->basic][op->index](in, inout, count);
        else
            apply_derived(fns[dt->leaf->basic][op->index], in, inout, count, dt);
        return;
    }
    MPI_Datatype h = (MPI_Datatype)(uintptr_t)dt->obj.handle;
    if (op->large) {
        ((MPI_User_function_c *)(void (*)(void))op->user_fn)((void *)in, inout, &count, &h);
        return;
    }
    /* An int-count user function gets the elements in pieces that fit an int. */
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        ((MPI_User_function *)(void (*)(void))op->user_fn)((void *)in, inout, &len, &h);
        in = (const char *)in + (MPI_Aint)len * dt->extent;
        inout = (char *)inout + (MPI_Aint)len * dt->extent;
        count -= len;
    }
}

static int create(void (*fn)(void), int commute, bool large, MPI_Op *out)
{
    if (!fn)
        return cr_err(MPI_ERR_ARG, "user_fn is NULL");
    cr_op *op = cr_obj_alloc(CR_KIND_OP);
    if (!op)
        return cr_err(MPI_ERR_NO_MEM, "out of memory creating an operation");
    op->commutative = commute != 0;
    op->index = -1;
    op->large = large;
    op->user_fn = fn;
    op->name = "a user-defined operation";
    *out = (MPI_Op)(uintptr_t)op->obj.handle;
    return MPI_SUCCESS;
}

int cr_mpi_op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return create((void (*)(void))user_fn, commute, false, op);
}

int cr_mpi_op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return create((void (*)(void))user_fn, commute, true, op);
}

int cr_mpi_op_free(MPI_Op *h)
{
    cr_op *op = cr_op_get(*h);
    if (!op || op->obj.predefined)
        return cr_err(MPI_ERR_OP, "op is not a user-defined operation that can be freed");
    if (cr_obj_unref(op))
        cr_obj_free(op);
    *h = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int cr_mpi_op_commutative(cr_op *op, int *commute)
{
    *commute = op->commutative;
    return MPI_SUCCESS;
}

int cr_mpi_reduce_local(const void *inbuf, void *inoutbuf, MPI_Count count, cr_dtype *dt, cr_op *op)
{
    int err = cr_op_check(op, dt);
    if (err)
        return err;
    if (count > 0 && (!inbuf || !inoutbuf))
        return cr_err(MPI_ERR_BUFFER, "inbuf or inoutbuf is NULL with count=%lld", (long long)count);
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE) /* the standard allows it nowhere here */
        return cr_err(MPI_ERR_BUFFER, "%s is MPI_IN_PLACE, which MPI_Reduce_local does not accept",
                      inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
    cr_op_apply(op, inbuf, inoutbuf, count, dt);
    return MPI_SUCCESS;
}
