/* handle.c: object pools and the predefined-handle table (see handle.h for the encoding). */
#include "handle.h"

#include <stdio.h>
#include <stdlib.h>

cr_obj *cr_handle_predef[CR_HANDLE_PREDEF_MAX];
cr_pool cr_pools[CR_KIND_COUNT];

void cr_pool_setup(cr_kind kind, size_t objsize)
{
    cr_pool *p = &cr_pools[kind];
    p->kind = (uint8_t)kind;
    p->objsize = CR_POOL_OBJSIZE(objsize);
}

void cr_handle_predefine(cr_obj *obj, uintptr_t handle, cr_kind kind)
{
    obj->handle = (uint32_t)handle;
    obj->kind = (uint8_t)kind;
    obj->predefined = 1;
    obj->refs = 1;
    cr_handle_predef[handle] = obj;
}

static int pool_grow(cr_pool *p)
{
    uint32_t capacity = atomic_load_explicit(&p->capacity, memory_order_relaxed);
    if (capacity + CR_POOL_CHUNK > CR_HANDLE_INDEX_MASK)
        return -1;
    /* The whole directory at once (512 KiB of address space, of which the kernel backs only
     * the pages used: a page per 512 chunks), so that it never moves under a lookup made
     * outside the critical section (handle.h, cr_pool). */
    if (!p->chunks && !(p->chunks = calloc(CR_POOL_MAX_CHUNKS, sizeof *p->chunks)))
        return -1;
    char *c = calloc(CR_POOL_CHUNK, p->objsize);
    if (!c)
        return -1;
    p->chunks[p->nchunks++] = c;
    /* Thread the new slots onto the free list in index order, so handles are handed out low
     * first (easier to read in a debugger). */
    uint32_t base = capacity;
    for (uint32_t i = CR_POOL_CHUNK; i-- > 0;) {
        cr_obj *o = (cr_obj *)(c + (size_t)i * p->objsize);
        o->next_free = p->free_head;
        p->free_head = base + i + 1;
    }
    atomic_store_explicit(&p->capacity, capacity + CR_POOL_CHUNK, memory_order_release);
    return 0;
}

void *cr_obj_alloc_grow(cr_kind kind)
{
    return pool_grow(&cr_pools[kind]) == 0 ? cr_obj_alloc(kind) : NULL;
}

const char *cr_handle_describe(uintptr_t h, char *buf, size_t cap)
{
    const char *name = cr_handle_predef_name(h);
    if (name)
        return name;
    if (h == 0)
        return "NULL (0)";
    snprintf(buf, cap, "%#lx", (unsigned long)h);
    return buf;
}
