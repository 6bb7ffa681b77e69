/* util.c: what the collective algorithms share: messages on the collective context, temporary
 * buffers laid out like user buffers, and local typed copies. */
#include "coll.h"

#include "core/error.h"
#include "pt2pt/pt2pt.h"

#include <stdlib.h>

int cr_coll_send(const cr_coll *k, const void *buf, MPI_Count count, cr_dtype *dt, int dst)
{
    return cr_pt2pt_send(buf, count, dt, dst, k->tag, k->comm, k->ctx, CR_MODE_STANDARD);
}

int cr_coll_recv(const cr_coll *k, void *buf, MPI_Count count, cr_dtype *dt, int src)
{
    return cr_pt2pt_recv(buf, count, dt, src, k->tag, k->comm, k->ctx, NULL);
}

int cr_coll_isend(const cr_coll *k, const void *buf, MPI_Count count, cr_dtype *dt, int dst, cr_request *r)
{
    memset(r, 0, sizeof *r);
    cr_pt2pt_prepare(r, CR_REQ_SEND, buf, count, dt, dst, k->tag, k->comm, k->ctx, CR_MODE_STANDARD);
    return cr_pt2pt_send_start(r);
}

int cr_coll_irecv(const cr_coll *k, void *buf, MPI_Count count, cr_dtype *dt, int src, cr_request *r)
{
    memset(r, 0, sizeof *r);
    cr_pt2pt_prepare(r, CR_REQ_RECV, buf, count, dt, src, k->tag, k->comm, k->ctx, CR_MODE_STANDARD);
    return cr_pt2pt_recv_post(r);
}

typedef struct {
    cr_request *r;
    int n;
} reqs;

static bool all_done(void *arg)
{
    reqs *q = arg;
    for (int i = 0; i < q->n; i++)
        if (!q->r[i].done)
            return false;
    return true;
}

int cr_coll_waitall(cr_request *r, int n)
{
    reqs q = {r, n};
    cr_progress_wait_until(all_done, &q);
    for (int i = 0; i < n; i++)
        if (r[i].status.MPI_ERROR)
            return r[i].status.MPI_ERROR;
    return MPI_SUCCESS;
}

int cr_coll_sendrecv(const cr_coll *k, const void *sbuf, MPI_Count scount, cr_dtype *sdt, int dst, void *rbuf,
                     MPI_Count rcount, cr_dtype *rdt, int src)
{
    cr_request r;
    int err = cr_coll_irecv(k, rbuf, rcount, rdt, src, &r);
    if (err)
        return err;
    err = cr_coll_send(k, sbuf, scount, sdt, dst);
    int err2 = cr_coll_waitall(&r, 1);
    return err ? err : err2;
}

/* Scratch buffers. Collectives need temporary buffers on every call; allocating them afresh
 * costs an mmap, page faults and an munmap each time for large ones (glibc hands allocations
 * above 128 KiB straight to the kernel). A few buffers are kept and reused: collectives are
 * not re-entered, so a small set suffices; huge ones are not kept. */
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

void *cr_coll_tmp(MPI_Count count, const cr_dtype *dt, void **alloc)
{
    /* Room for `count` extents, shifted so data at offsets true_lb.. lands in the allocation. */
    size_t bytes = (size_t)(count > 0 ? (count - 1) * dt->extent + dt->true_extent : 0);
    *alloc = cr_coll_scratch(bytes);
    return *alloc ? (char *)*alloc - dt->true_lb : NULL;
}

void cr_coll_copy(const void *src, MPI_Count scount, const cr_dtype *sdt, void *dst, MPI_Count dcount,
                  const cr_dtype *ddt)
{
    uint64_t sbytes = (uint64_t)scount * (uint64_t)sdt->size, dbytes = (uint64_t)dcount * (uint64_t)ddt->size;
    uint64_t n = CR_MIN(sbytes, dbytes);
    if (n == 0 || src == dst)
        return;
    if (cr_dtype_is_contig(sdt) && cr_dtype_is_contig(ddt)) {
        memmove((char *)dst + ddt->true_lb, (const char *)src + sdt->true_lb, n);
        return;
    }
    if (cr_dtype_is_contig(sdt)) {
        cr_dt_unpack(dst, dcount, ddt, 0, (const char *)src + sdt->true_lb, n);
        return;
    }
    char *tmp = cr_coll_scratch(n);
    if (!tmp)
        abort();
    cr_dt_pack(src, scount, sdt, 0, tmp, n);
    cr_dt_unpack(dst, dcount, ddt, 0, tmp, n);
    cr_coll_scratch_release(tmp);
}

int cr_coll_fold(const cr_coll *k, void *buf, void *tmp, MPI_Count count, cr_dtype *dt, cr_op *op, int rem)
{
    if (k->rank >= 2 * rem)
        return MPI_SUCCESS;
    if (k->rank % 2 == 0)
        return cr_coll_send(k, buf, count, dt, k->rank + 1);
    int err = cr_coll_recv(k, tmp, count, dt, k->rank - 1);
    if (!err)
        cr_op_apply(op, tmp, buf, count, dt); /* buf = left op buf */
    return err;
}

int cr_coll_unfold(const cr_coll *k, void *buf, MPI_Count count, cr_dtype *dt, int rem)
{
    if (k->rank >= 2 * rem)
        return MPI_SUCCESS;
    if (k->rank % 2)
        return cr_coll_send(k, buf, count, dt, k->rank - 1);
    return cr_coll_recv(k, buf, count, dt, k->rank + 1);
}
