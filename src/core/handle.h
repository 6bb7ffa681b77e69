/* handle.h: MPI handles and the objects behind them.
 *
 * A handle is an integer in a pointer's clothing (the standard ABI declares MPI_Comm and its
 * kin as pointers to incomplete structs). Two ranges:
 *   1 .. 4095        predefined handles, fixed by the ABI; a table maps each to its object;
 *   (kind << 24) | i user objects: kind in 1..15 (never 0, so always above 4095), i an index
 *                    into that kind's pool.
 * Turning a handle into its object is one bounds check and one or two loads, never a search,
 * and a garbage handle is detected instead of dereferenced. The same integer is what
 * MPI_<Obj>_toint returns, so toint/fromint are identities with a validity check.
 *
 * Invariants:
 *   - every object starts with a cr_obj header whose `kind` says what it is, and whose `handle`
 *     is the value users hold;
 *   - a pool slot whose `kind` is CR_KIND_FREE is not in use;
 *   - object addresses never move (pools grow by chunks), so layers may keep pointers. */
#ifndef CR_HANDLE_H
#define CR_HANDLE_H

#include "base.h"

#include <stdatomic.h>
#include <string.h>

typedef enum {
    CR_KIND_FREE = 0,
    CR_KIND_COMM = 1,
    CR_KIND_GROUP,
    CR_KIND_DATATYPE,
    CR_KIND_OP,
    CR_KIND_INFO,
    CR_KIND_ERRHANDLER,
    CR_KIND_REQUEST,
    CR_KIND_MESSAGE,
    CR_KIND_WIN,
    CR_KIND_FILE,
    CR_KIND_SESSION,
    CR_KIND_COUNT
} cr_kind;

typedef struct cr_obj {
    uint32_t handle;   /* the value users hold */
    uint8_t kind;      /* cr_kind; CR_KIND_FREE in a pool slot not in use */
    uint8_t predefined;
    uint16_t pad;
    int32_t refs;      /* references: the user's handle and every internal holder */
    uint32_t next_free; /* pool free list, meaningful only while free */
} cr_obj;

#define CR_HANDLE_PREDEF_MAX 4096u
#define CR_HANDLE_KIND_SHIFT 24
#define CR_HANDLE_INDEX_MASK ((1u << CR_HANDLE_KIND_SHIFT) - 1)

/* Predefined objects, indexed by their ABI handle value. */
extern cr_obj *cr_handle_predef[CR_HANDLE_PREDEF_MAX];

/* A kind's objects, in chunks of CR_POOL_CHUNK slots. Lookups (cr_handle_get) may run outside
 * the critical section of MPI_THREAD_MULTIPLE (the quick entry points of sends), while a
 * thread inside it grows the pool: so the chunk directory, made whole at the first growth,
 * never moves, and `capacity` is published with release after the chunk's entry and read with
 * acquire (a valid handle's chunk is ordered before the lookup by the caller's own
 * synchronisation with the handle's maker anyway; a garbage handle in a chunk being added must
 * not find its entry still NULL). Everything else is the section's. (Both plain moves on x86.) */
typedef struct cr_pool {
    size_t objsize;
    uint8_t kind;
    uint32_t nchunks;
    _Atomic uint32_t capacity; /* slots allocated so far */
    uint32_t free_head;  /* index + 1 of the first free slot, 0 when none */
    uint32_t live;       /* objects in use, for leak reports */
    char **chunks;       /* CR_POOL_MAX_CHUNKS entries once the pool has grown */
} cr_pool;

#define CR_POOL_CHUNK_SHIFT 8
#define CR_POOL_CHUNK (1u << CR_POOL_CHUNK_SHIFT)
#define CR_POOL_MAX_CHUNKS ((CR_HANDLE_INDEX_MASK + 1u) >> CR_POOL_CHUNK_SHIFT)

extern cr_pool cr_pools[CR_KIND_COUNT];

/* Registers the object size of a kind; called once per kind at library load. */
void cr_pool_setup(cr_kind kind, size_t objsize);

static inline void *cr_pool_slot(const cr_pool *p, uint32_t index)
{
    return p->chunks[index >> CR_POOL_CHUNK_SHIFT] + (size_t)(index & (CR_POOL_CHUNK - 1)) * p->objsize;
}

/* cr_obj_alloc with an empty free list: grows the pool first. */
void *cr_obj_alloc_grow(cr_kind kind);

/* A pool's slot size for objects of `bytes`: slots are 16-byte aligned and a multiple of 16. */
#define CR_POOL_OBJSIZE(bytes) (((size_t)(bytes) + 15) & ~(size_t)15)

/* Zeroes `bytes` (a multiple of 16, 16-byte aligned) with one 16-byte store each: with `bytes`
 * known at compile time they unroll, cheaper for a few hundred bytes than a call to memset or
 * the `rep stos` the compiler would otherwise emit. */
static inline void cr_zero16(void *p, size_t bytes)
{
    typedef char v16 __attribute__((vector_size(16), aligned(16)));
#pragma GCC unroll 32
    for (size_t i = 0; i < bytes / 16; i++)
        ((v16 *)p)[i] = (v16){0};
}

/* cr_obj_alloc for a kind whose slot size the caller knows (`objsize`, equal to the pool's),
 * so the zeroing unrolls. Inline: a request is taken on every nonblocking receive, in a
 * receiver's hot loop. */
static inline void *cr_obj_alloc_sized(cr_kind kind, size_t objsize)
{
    cr_pool *p = &cr_pools[kind];
    if (CR_UNLIKELY(!p->free_head))
        return cr_obj_alloc_grow(kind);
    uint32_t index = p->free_head - 1;
    cr_obj *o = (cr_obj *)cr_pool_slot(p, index);
    p->free_head = o->next_free;
    if (__builtin_constant_p(objsize))
        cr_zero16(o, objsize);
    else
        memset(o, 0, objsize);
    o->kind = (uint8_t)kind;
    o->refs = 1;
    o->handle = ((uint32_t)kind << CR_HANDLE_KIND_SHIFT) | index;
    p->live++;
    return o;
}

/* Returns the object's slot to its pool. The caller has dropped every reference. Inline, as
 * the allocation is: a request goes back on every completed nonblocking receive. */
static inline void cr_obj_free(void *obj)
{
    cr_obj *o = (cr_obj *)obj;
    if (o->predefined)
        return;
    cr_pool *p = &cr_pools[o->kind];
    uint32_t index = o->handle & CR_HANDLE_INDEX_MASK;
    o->kind = CR_KIND_FREE;
    o->next_free = p->free_head;
    p->free_head = index + 1;
    p->live--;
}

/* Allocates a zeroed object of `kind` with refs = 1 and a fresh handle; NULL when out of memory. */
static inline void *cr_obj_alloc(cr_kind kind)
{
    return cr_obj_alloc_sized(kind, cr_pools[kind].objsize);
}

/* Maps a handle value to its live object of the given kind, or NULL. */
static inline void *cr_handle_get(uintptr_t h, cr_kind kind)
{
    cr_obj *o;
    if (h < CR_HANDLE_PREDEF_MAX) {
        o = cr_handle_predef[h];
    } else {
        uint32_t k = (uint32_t)(h >> CR_HANDLE_KIND_SHIFT);
        uint32_t i = (uint32_t)(h & CR_HANDLE_INDEX_MASK);
        if (CR_UNLIKELY(k != (uint32_t)kind || h > UINT32_MAX))
            return NULL;
        const cr_pool *p = &cr_pools[kind];
        if (CR_UNLIKELY(i >= atomic_load_explicit(&p->capacity, memory_order_acquire)))
            return NULL;
        o = (cr_obj *)cr_pool_slot(p, i);
    }
    return (o && o->kind == kind) ? o : NULL;
}

static inline uintptr_t cr_handle_of(const void *obj)
{
    return ((const cr_obj *)obj)->handle;
}

/* For messages: "MPI_COMM_NULL" for a predefined handle (the table is generated from the ABI
 * facts), else the value in hex. */
const char *cr_handle_predef_name(uintptr_t h);
const char *cr_handle_describe(uintptr_t h, char *buf, size_t cap);

/* Registers a statically allocated predefined object under its ABI handle value. */
void cr_handle_predefine(cr_obj *obj, uintptr_t handle, cr_kind kind);

static inline void cr_obj_ref(void *obj)
{
    ((cr_obj *)obj)->refs++;
}

/* Drops a reference; returns true when it was the last one (the caller then destroys it).
 * Predefined objects are never destroyed. */
static inline bool cr_obj_unref(void *obj)
{
    cr_obj *o = (cr_obj *)obj;
    return --o->refs == 0 && !o->predefined;
}

#endif
