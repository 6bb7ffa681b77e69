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

void *cr_coll_tmp(MPI_Count count, const cr_dtype *dt, void **alloc)
{
    /* Room for `count` extents, shifted so data at offsets true_lb.. lands in the allocation. */
    size_t bytes = (size_t)(count > 0 ? (count - 1) * dt->extent + dt->true_extent : 0);
    *alloc = malloc(bytes ? bytes : 1);
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
    char *tmp = malloc(n);
    if (!tmp)
        abort();
    cr_dt_pack(src, scount, sdt, 0, tmp, n);
    cr_dt_unpack(dst, dcount, ddt, 0, tmp, n);
    free(tmp);
}
