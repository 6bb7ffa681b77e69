/* util.c: what the collective algorithms share: scratch buffers kept between calls, temporary
 * buffers laid out like user buffers, local typed copies, and the power-of-two fold. */
#include "coll.h"

#include "core/error.h"

#include <stdlib.h>

/* Scratch buffers. Collectives need temporary buffers on every call; allocating them afresh
 * costs an mmap, page faults and an munmap each time for large ones (glibc hands allocations
 * above 128 KiB straight to the kernel). A few buffers are kept and reused: blocking
 * collectives run one at a time, so a small set suffices; nonblocking and persistent ones may
 * hold slots while they live, and past the slots allocations are plain ones. Huge buffers are
 * not kept. */
#define SCRATCH_SLOTS 8
#define SCRATCH_KEEP ((size_t)64 << 20)
static struct {
    char *p;
    size_t cap;
    bool busy;
} scratch[SCRATCH_SLOTS];

void *cr_coll_scratch(size_t bytes)
{
    int best = -1;
    for (int i = 0; i < SCRATCH_SLOTS; i++) /* the smallest free buffer that is big enough */
        if (!scratch[i].busy && scratch[i].p && scratch[i].cap >= bytes && (best < 0 || scratch[i].cap < scratch[best].cap))
            best = i;
    if (best < 0) { /* else grow a free one (an empty slot first) */
        for (int i = 0; i < SCRATCH_SLOTS && best < 0; i++)
            if (!scratch[i].busy && !scratch[i].p)
                best = i;
        for (int i = 0; i < SCRATCH_SLOTS && best < 0; i++)
            if (!scratch[i].busy)
                best = i;
        if (best < 0)
            return malloc(bytes ? bytes : 1); /* all in use: not kept */
        free(scratch[best].p);
        size_t cap = bytes < 4096 ? 4096 : bytes;
        scratch[best].p = malloc(cap);
        scratch[best].cap = scratch[best].p ? cap : 0;
        if (!scratch[best].p)
            return NULL;
    }
    scratch[best].busy = true;
    return scratch[best].p;
}

void cr_coll_scratch_release(void *p)
{
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        if (scratch[i].p == p && scratch[i].busy) {
            scratch[i].busy = false;
            if (scratch[i].cap > SCRATCH_KEEP) {
                free(scratch[i].p);
                scratch[i].p = NULL;
                scratch[i].cap = 0;
            }
            return;
        }
    }
    free(p);
}

void cr_coll_scratch_clear(void)
{
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        free(scratch[i].p);
        scratch[i].p = NULL;
        scratch[i].cap = 0;
        scratch[i].busy = false;
    }
}

size_t cr_coll_tmp_bytes(MPI_Count count, const cr_dtype *dt)
{
    if (count <= 0)
        return 0;
    return (size_t)((count - 1) * dt->extent + CR_MAX(dt->true_extent, dt->extent));
}

void *cr_coll_tmp(MPI_Count count, const cr_dtype *dt, void **alloc)
{
    /* Room for `count` extents, shifted so data at offsets true_lb.. lands in the allocation. */
    *alloc = cr_coll_scratch(cr_coll_tmp_bytes(count, dt));
    return *alloc ? (char *)*alloc - dt->true_lb : NULL;
}

void cr_coll_fold(cr_sched *s, void *buf, void *tmp, MPI_Count count, cr_dtype *dt, cr_op *op, int rem)
{
    if (s->rank >= 2 * rem)
        return;
    if (s->rank % 2 == 0) {
        cr_sched_send(s, buf, count, dt, s->rank + 1);
        return;
    }
    cr_sched_recv(s, tmp, count, dt, s->rank - 1);
    cr_sched_fence(s);
    cr_sched_reduce(s, tmp, buf, count, dt, op); /* buf = left op buf */
}

void cr_coll_unfold(cr_sched *s, void *buf, MPI_Count count, cr_dtype *dt, int rem)
{
    if (s->rank >= 2 * rem)
        return;
    cr_sched_fence(s); /* the even side's fold send of buf is done before buf is received into */
    if (s->rank % 2)
        cr_sched_send(s, buf, count, dt, s->rank - 1);
    else
        cr_sched_recv(s, buf, count, dt, s->rank + 1);
}
