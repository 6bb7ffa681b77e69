/* external32.c: MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size: the
 * "external32" data representation (MPI-4.1 section 11.7.5: big-endian, IEEE floating point,
 * fixed sizes: a C long is 4 bytes, a wchar_t 2, a long double IEEE quadruple precision).
 *
 * Data moves in two steps: the type's layout packs it into the native byte stream (as MPI_Pack
 * does), and the stream is converted element by element in signature order, the order in which
 * the type lists its basic elements. A type whose elements are all one predefined type (its
 * `leaf`) converts as an array of that type; a struct walks its blocks. */
#include "dtype.h"

#include "core/error.h"
#include "cr_impl.h"

#include <stdlib.h>
#include <string.h>

/* The conversions below read a host value's low-order byte first. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "external32.c assumes a little-endian host");

typedef enum { CONV_SWAP, CONV_SINT, CONV_UINT, CONV_LDOUBLE } conv_kind;

/* One basic value inside a predefined type's element: its native and external32 sizes. */
typedef struct component {
    uint8_t kind, native, ext;
} component;

/* The components of a predefined type in its packed element (at most two: complex numbers and
 * value-index pairs); returns how many. */
static int components_of(const cr_dtype *t, component c[2])
{
    uintptr_t h = cr_handle_of(t);
    component ld = {CONV_LDOUBLE, (uint8_t)sizeof(long double), 16};
    component i32 = {CONV_SWAP, 4, 4};
    switch (t->basic) {
    case CR_BASIC_LONG_DOUBLE: c[0] = ld; return 1;
    case CR_BASIC_COMPLEX_LONG_DOUBLE: c[0] = c[1] = ld; return 2;
    case CR_BASIC_COMPLEX_FLOAT16: case CR_BASIC_COMPLEX_FLOAT: case CR_BASIC_COMPLEX_DOUBLE:
    case CR_BASIC_COMPLEX_FLOAT128:
        c[0] = c[1] = (component){CONV_SWAP, (uint8_t)(t->size / 2), (uint8_t)(t->size / 2)};
        return 2;
    case CR_BASIC_FLOAT_INT: c[0] = (component){CONV_SWAP, 4, 4}, c[1] = i32; return 2;
    case CR_BASIC_DOUBLE_INT: c[0] = (component){CONV_SWAP, 8, 8}, c[1] = i32; return 2;
    case CR_BASIC_LONG_INT: c[0] = (component){CONV_SINT, (uint8_t)sizeof(long), 4}, c[1] = i32; return 2;
    case CR_BASIC_2INT: c[0] = c[1] = i32; return 2;
    case CR_BASIC_SHORT_INT: c[0] = (component){CONV_SWAP, 2, 2}, c[1] = i32; return 2;
    case CR_BASIC_LONG_DOUBLE_INT: c[0] = ld, c[1] = i32; return 2;
    case CR_BASIC_2FLOAT: c[0] = c[1] = (component){CONV_SWAP, 4, 4}; return 2;
    case CR_BASIC_2DOUBLE: c[0] = c[1] = (component){CONV_SWAP, 8, 8}; return 2;
    default: break;
    }
    if (h == (uintptr_t)MPI_LONG)
        c[0] = (component){CONV_SINT, (uint8_t)sizeof(long), 4};
    else if (h == (uintptr_t)MPI_UNSIGNED_LONG)
        c[0] = (component){CONV_UINT, (uint8_t)sizeof(unsigned long), 4};
    else if (h == (uintptr_t)MPI_WCHAR)
        c[0] = (component){CONV_UINT, (uint8_t)sizeof(wchar_t), 2};
    else
        c[0] = (component){CONV_SWAP, (uint8_t)t->size, (uint8_t)t->size}; /* 1-byte types: a copy */
    return t->size ? 1 : 0;
}

static uint64_t predefined_ext_size(const cr_dtype *t)
{
    component c[2];
    int n = components_of(t, c);
    return n == 0 ? 0 : n == 1 ? c[0].ext : (uint64_t)c[0].ext + c[1].ext;
}

/* Bytes of external32 data in n elements of t. */
static uint64_t ext_size(const cr_dtype *t, uint64_t n)
{
    if (t->leaf)
        return t->leaf->size ? n * ((uint64_t)t->size / (uint64_t)t->leaf->size) * predefined_ext_size(t->leaf) : 0;
    const int *lens;
    cr_dtype *const *types;
    int nc = cr_dt_children(t, &lens, &types);
    uint64_t one = 0;
    if (nc == 1 && !lens)
        one = types[0]->size ? ext_size(types[0], (uint64_t)t->size / (uint64_t)types[0]->size) : 0;
    else
        for (int i = 0; i < nc; i++)
            one += ext_size(types[i], (uint64_t)lens[i]);
    return n * one;
}

/* Converts one value: native (host order, `c.native` bytes) <-> external (big-endian, `c.ext`). */
static void convert(const component *c, const uint8_t *in, uint8_t *out, bool to_ext)
{
    uint8_t tmp[16];
    switch (c->kind) {
    case CONV_SWAP:
        for (int i = 0; i < c->native; i++)
            out[i] = in[c->native - 1 - i];
        return;
    case CONV_SINT:
    case CONV_UINT: {
        /* integers of different widths: the low bytes travel, the high ones are sign- or
         * zero-extended on the way in */
        if (to_ext) {
            for (int i = 0; i < c->ext; i++)
                out[i] = in[c->ext - 1 - i];
        } else {
            bool negative = c->kind == CONV_SINT && (in[0] & 0x80);
            memset(out, negative ? 0xff : 0, c->native);
            for (int i = 0; i < c->ext; i++)
                out[i] = in[c->ext - 1 - i];
        }
        return;
    }
    case CONV_LDOUBLE:
#if defined(CR_HAVE_FLOAT128) && defined(__x86_64__)
        if (to_ext) {
            long double v;
            memcpy(&v, in, sizeof v);
            __float128 q = (__float128)v;
            memcpy(tmp, &q, 16);
            for (int i = 0; i < 16; i++)
                out[i] = tmp[15 - i];
        } else {
            for (int i = 0; i < 16; i++)
                tmp[i] = in[15 - i];
            __float128 q;
            memcpy(&q, tmp, 16);
            long double v = (long double)q;
            memset(out, 0, c->native);
            memcpy(out, &v, sizeof v < c->native ? sizeof v : c->native);
        }
#else
        (void)tmp;
        for (int i = 0; i < 16; i++)
            out[i] = in[15 - i];
#endif
        return;
    }
}

/* Converts n elements of t between the native stream *nat and the external stream *ext,
 * advancing both. */
static void convert_elements(const cr_dtype *t, uint64_t n, const uint8_t **from, uint8_t **to, bool to_ext)
{
    if (t->leaf) {
        const cr_dtype *leaf = t->leaf;
        if (!leaf->size)
            return;
        component c[2];
        int nc = components_of(leaf, c);
        uint64_t m = n * ((uint64_t)t->size / (uint64_t)leaf->size);
        for (uint64_t k = 0; k < m; k++)
            for (int j = 0; j < nc; j++) {
                convert(&c[j], *from, *to, to_ext);
                *from += to_ext ? c[j].native : c[j].ext;
                *to += to_ext ? c[j].ext : c[j].native;
            }
        return;
    }
    const int *lens;
    cr_dtype *const *types;
    int nc = cr_dt_children(t, &lens, &types);
    for (uint64_t k = 0; k < n; k++) {
        if (nc == 1 && !lens) {
            if (types[0]->size)
                convert_elements(types[0], (uint64_t)t->size / (uint64_t)types[0]->size, from, to, to_ext);
            continue;
        }
        for (int i = 0; i < nc; i++)
            convert_elements(types[i], (uint64_t)lens[i], from, to, to_ext);
    }
}

static int check_datarep(const char *datarep)
{
    if (strcmp(datarep, "external32") != 0)
        return cr_err(MPI_ERR_ARG, "invalid datarep=\"%s\": the only external representation is \"external32\"",
                      datarep);
    return MPI_SUCCESS;
}

int cr_mpi_pack_external_size(const char datarep[], MPI_Count incount, cr_dtype *dt, MPI_Count *size)
{
    int err = check_datarep(datarep);
    if (err)
        return err;
    if (incount < 0)
        return cr_err(MPI_ERR_COUNT, "invalid incount=%lld: must not be negative", (long long)incount);
    *size = (MPI_Count)ext_size(dt, (uint64_t)incount);
    return MPI_SUCCESS;
}

/* Packs (typed -> packed) or unpacks (packed -> typed) `count` elements at *position of a packed
 * buffer of `limit` bytes, through a native stream in between. */
static int move_external(const char *datarep, void *typed, MPI_Count count, cr_dtype *dt, uint8_t *packed,
                         MPI_Count limit, MPI_Count *position, bool pack)
{
    int err = check_datarep(datarep);
    if (err)
        return err;
    if (count < 0)
        return cr_err(MPI_ERR_COUNT, "invalid %s=%lld: must not be negative", pack ? "incount" : "outcount",
                      (long long)count);
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size, ext = ext_size(dt, (uint64_t)count);
    if (*position < 0 || *position > limit || ext > (uint64_t)(limit - *position))
        return cr_err(MPI_ERR_TRUNCATE, "%llu bytes of external32 data at position %lld: %s=%lld is too small",
                      (unsigned long long)ext, (long long)*position, pack ? "outsize" : "insize", (long long)limit);
    uint8_t *native = malloc(bytes ? bytes : 1);
    if (!native)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %llu bytes of packed data", (unsigned long long)bytes);
    if (pack) {
        cr_dt_pack(typed, count, dt, 0, native, bytes);
        const uint8_t *from = native;
        uint8_t *to = packed + *position;
        convert_elements(dt, (uint64_t)count, &from, &to, true);
    } else {
        const uint8_t *from = packed + *position;
        uint8_t *to = native;
        convert_elements(dt, (uint64_t)count, &from, &to, false);
        cr_dt_unpack(typed, count, dt, 0, native, bytes);
    }
    free(native);
    *position += (MPI_Count)ext;
    return MPI_SUCCESS;
}

int cr_mpi_pack_external(const char datarep[], const void *inbuf, MPI_Count incount, cr_dtype *dt, void *outbuf,
                         MPI_Count outsize, MPI_Count *position)
{
    return move_external(datarep, (void *)inbuf, incount, dt, outbuf, outsize, position, true);
}

int cr_mpi_unpack_external(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                           void *outbuf, MPI_Count outcount, cr_dtype *dt)
{
    return move_external(datarep, outbuf, outcount, dt, (uint8_t *)inbuf, insize, position, false);
}
