/* dtype.h: datatypes: their size and extent, and the compiled layout every data path walks.
 *
 * A datatype's layout is compiled once (loop.h: runs, strided repeats and indexed blocks,
 * sharing the layouts of the types it is built from) and describes one element, repeated every
 * `extent` bytes. Contiguous types (most predefined types, and derived ones that reduce to one
 * run without gaps) are flagged so data paths copy `count * size` bytes in one go. Predefined
 * types are static.
 *
 * `basic` names the C representation of a predefined type's data (for reductions: Fortran
 * LOGICALs are integers of their size, MPI_BYTE an unsigned byte); derived types, and types no
 * reduction applies to, get CR_BASIC_NONE. */
#ifndef CR_DTYPE_H
#define CR_DTYPE_H

#include "core/handle.h"

/* The C types behind the optional Fortran types, where the compiler has them. */
#if defined(__SIZEOF_INT128__)
#define CR_HAVE_INT128 1
#endif
#if defined(__FLT16_MAX__)
#define CR_HAVE_FLOAT16 1
#endif
#if defined(__SIZEOF_FLOAT128__)
#define CR_HAVE_FLOAT128 1
#endif

typedef enum {
    CR_BASIC_NONE = 0,
    CR_BASIC_INT8, CR_BASIC_UINT8, CR_BASIC_INT16, CR_BASIC_UINT16,
    CR_BASIC_INT32, CR_BASIC_UINT32, CR_BASIC_INT64, CR_BASIC_UINT64,
    CR_BASIC_INT128,       /* MPI_INTEGER16, MPI_LOGICAL16 (compilers with __int128) */
    CR_BASIC_FLOAT16,      /* MPI_REAL2: IEEE half precision (compilers with _Float16) */
    CR_BASIC_FLOAT, CR_BASIC_DOUBLE, CR_BASIC_LONG_DOUBLE,
    CR_BASIC_FLOAT128,     /* MPI_REAL16: IEEE quad precision, Fortran REAL(16) (__float128) */
    CR_BASIC_COMPLEX_FLOAT16, CR_BASIC_COMPLEX_FLOAT, CR_BASIC_COMPLEX_DOUBLE, CR_BASIC_COMPLEX_LONG_DOUBLE,
    CR_BASIC_COMPLEX_FLOAT128,
    CR_BASIC_BOOL,         /* C _Bool and C++ bool: one byte */
    CR_BASIC_FLOAT_INT, CR_BASIC_DOUBLE_INT, CR_BASIC_LONG_INT, CR_BASIC_2INT,
    CR_BASIC_SHORT_INT, CR_BASIC_LONG_DOUBLE_INT, CR_BASIC_2FLOAT, CR_BASIC_2DOUBLE,
    CR_BASIC_COUNT
} cr_basic;

/* The families of predefined types that decide which predefined reduction operations apply
 * (src/coll/op.c has the table, doc/reductions.md explains it). The first ones are the
 * standard's groups (MPI-4.1 section 6.9.2); the others are types the standard puts in no
 * group but MPICH or Open MPI reduce anyway, each with its own row in the table. */
typedef enum {
    CR_CAT_NONE = 0,  /* no reduction applies (MPI_PACKED, MPI_WCHAR, derived types) */
    CR_CAT_C_INT,     /* C integer */
    CR_CAT_F_INT,     /* Fortran integer */
    CR_CAT_FLOAT,     /* floating point */
    CR_CAT_LOGICAL,   /* logical */
    CR_CAT_COMPLEX,   /* complex */
    CR_CAT_BYTE,      /* MPI_BYTE */
    CR_CAT_MULTI,     /* multi-language types: MPI_AINT, MPI_OFFSET, MPI_COUNT */
    CR_CAT_PAIR,      /* the value-index pairs of MPI_MINLOC/MPI_MAXLOC */
    CR_CAT_CHAR,      /* MPI_CHAR: no standard group; reduced as a C integer by both peers */
    CR_CAT_F_CHAR,    /* MPI_CHARACTER: no standard group; reduced as a byte integer by both peers */
    CR_CAT_LOGICAL_SIZED, /* MPI_LOGICAL1/2/8: logical, and plain integers to Open MPI */
    CR_CAT_COUNT
} cr_dt_category;

typedef struct cr_dt_block {
    MPI_Aint offset;
    MPI_Aint length;
} cr_dt_block;

enum {
    CR_DT_CONTIG = 1,     /* one block of `size` bytes at offset 0, and extent == size */
    CR_DT_COMMITTED = 2,
    CR_DT_PREDEFINED = 4,
    CR_DT_EXPLICIT_BOUNDS = 8, /* its bounds were set by MPI_Type_create_resized (or it holds such a type) */
    CR_DT_ONE_RUN = 32,        /* an element's data is one run of `size` bytes at true_lb (a row of a
                                * subarray, say), whatever its extent */
};

typedef struct cr_dtype {
    cr_obj obj;
    uint32_t flags;
    uint8_t basic;        /* cr_basic */
    uint8_t category;     /* cr_dt_category */
    uint8_t align;        /* the largest alignment of its basic types: a struct's extent is padded to it */
    /* predefined: `name` was set by MPI_Type_set_name and is malloc'd. Not a bit of `flags`:
     * a predefined type may be renamed while other threads send it outside the critical
     * section, reading `flags` (doc/design/threads.md, "Sends outside the section") */
    uint8_t name_owned;
    MPI_Count size;       /* bytes of data in one element */
    MPI_Aint lb, extent;
    MPI_Aint true_lb, true_extent;
    int nblocks;          /* predefined: the blocks of one element */
    const cr_dt_block *blocks;
    const char *name;     /* predefined: its MPI name */
    const struct cr_dt_loop *loop;  /* the compiled layout every data path walks (loop.h) */
    struct cr_dt_derived *d;        /* derived types: contents, owned layout, name (derived.c) */
    struct cr_attr *attrs;          /* cached attributes (core/attr.h), predefined types too */
    int32_t handles;                /* derived: user handles to it (its constructor's, and each one
                                       MPI_Type_get_contents returned); the last MPI_Type_free
                                       deletes the attributes */
    /* The one predefined type every basic element of this type is (itself, for a predefined
     * type), or NULL when it mixes several: reductions on derived types and the external32
     * conversion treat a type with a leaf as an array of that leaf. */
    const struct cr_dtype *leaf;
} cr_dtype;

static inline cr_dtype *cr_dtype_get(MPI_Datatype h)
{
    return (cr_dtype *)cr_handle_get((uintptr_t)h, CR_KIND_DATATYPE);
}

static inline bool cr_dtype_is_contig(const cr_dtype *dt)
{
    return dt->flags & CR_DT_CONTIG;
}

/* Whether `count` elements of dt are one run of count * size bytes at buf + true_lb: a
 * contiguous type, or one element (or elements without gaps) of a type whose data is one run.
 * Data paths then move them as bytes, and a rendezvous can offer their address. */
static inline bool cr_dtype_is_contig_n(const cr_dtype *dt, MPI_Count count)
{
    return (dt->flags & CR_DT_CONTIG) ||
           ((dt->flags & CR_DT_ONE_RUN) && (count <= 1 || dt->extent == (MPI_Aint)dt->size));
}

/* True when an element's data begins at the buffer address itself (so a NULL buffer with a
 * positive count is an error); false for types holding absolute addresses (MPI_BOTTOM). */
static inline bool cr_dtype_starts_at_buffer(const cr_dtype *dt)
{
    return dt->true_lb == 0 && dt->size > 0;
}

/* Resolves a datatype handle (committed when `committed`), or returns an error naming `arg`. */
int cr_dtype_check(MPI_Datatype h, const char *arg, bool committed, cr_dtype **out);
/* The same for n handles (a struct's types, alltoallw's per-process types) into out[0..n): an
 * error names the element, `arg[i]`. The name is made only for an element that fails, not for
 * every element of every call. */
int cr_dtype_check_array(const MPI_Datatype *types, MPI_Count n, const char *arg, bool committed, cr_dtype **out);

/* A type of `combiner` whose contents are (ints, oldtype) and whose layout is `inner`'s (which it
 * holds), with the bounds lb and lb + extent: for constructors defined by composing others
 * (darray). */
int cr_dt_wrap(int combiner, const MPI_Count *ints, int ni, cr_dtype *oldtype, cr_dtype *inner, MPI_Aint lb,
               MPI_Aint extent, MPI_Datatype *newtype);

/* A derived type's children in signature order (the order its basic elements are packed): a
 * struct's blocks are lens[i] copies of types[i]; any other derived type is one child repeated
 * size / child size times (*lens = NULL). Returns the number of children, 0 for predefined types. */
int cr_dt_children(const cr_dtype *dt, const int **lens, cr_dtype *const **types);

/* Attributes across a type's life: MPI_Type_dup copies them (the keyvals' copy callbacks),
 * MPI_Type_free deletes them (their delete callbacks). */
int cr_dtype_attrs_copy(const cr_dtype *from, cr_dtype *to);
int cr_dtype_attrs_clear(cr_dtype *dt);

/* Library load: registers the predefined datatypes under their ABI handles. */
void cr_dtype_setup(void);
/* Drops a reference to a datatype (its handle, a type built from it, an operation using it);
 * a derived type goes with its last. */
void cr_dtype_release(cr_dtype *dt);
/* The layout of a predefined type, for the types built on it. */
struct cr_dt_loop *cr_dt_leaf_layout(const cr_dtype *dt);

/* Moving data between a typed buffer (buf, count, dt) and a contiguous byte stream.
 * `offset` and `len` select a window of the stream, so data can move in pieces (pipelines);
 * the window must lie within count * dt->size. */
void cr_dt_pack(const void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, void *out, uint64_t len);
/* cr_dt_pack into shared memory that other processes will read (core/copy.h: cr_copy_shared
 * chooses the stores of contiguous data; other types are packed with cached stores). */
void cr_dt_pack_shared(const void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, void *out, uint64_t len);
void cr_dt_unpack(void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, const void *in, uint64_t len);
/* Copies min(scount * sdt->size, dcount * ddt->size) bytes of typed data from one buffer to
 * another (in signature order), with no buffer of the message's size in between. */
void cr_dt_copy(const void *src, MPI_Count scount, const cr_dtype *sdt, void *dst, MPI_Count dcount,
                const cr_dtype *ddt);
/* The same window as at most `maxiov` iovecs into the typed buffer, in packed order; returns the
 * bytes described (a prefix of the window, when the iovecs run out) and sets *niov. For moving
 * data straight between typed buffers (cross-memory attach) without a stream in between. */
struct iovec;
uint64_t cr_dt_iov(void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, uint64_t len, struct iovec *iov,
                   int maxiov, int *niov);
/* Basic elements in `bytes` bytes of dt data (MPI_Get_elements); -1 when not a whole number. */
MPI_Count cr_dt_elements(const cr_dtype *dt, uint64_t bytes);

#endif
