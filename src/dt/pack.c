/* pack.c: moving data between typed buffers and byte streams: contiguous types are one
 * memcpy, every other type walks its compiled layout (loop.c) from the window's start. */
#include "dtype.h"
#include "loop.h"

#include "core/copy.h"
#include "core/error.h"
#include "cr_impl.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>

void cr_dt_pack(const void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, void *out, uint64_t len)
{
    (void)count;
    if (CR_LIKELY(dt->flags & CR_DT_CONTIG)) {
        cr_copy(out, (const char *)buf + dt->true_lb + offset, len);
        return;
    }
    cr_dt_loop_move(dt->loop, (char *)buf, dt->extent, offset, out, len, false);
}

void cr_dt_pack_shared(const void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, void *out, uint64_t len)
{
    if (CR_LIKELY(dt->flags & CR_DT_CONTIG)) {
        cr_copy_shared(out, (const char *)buf + dt->true_lb + offset, len);
        return;
    }
    cr_dt_pack(buf, count, dt, offset, out, len);
}

void cr_dt_unpack(void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, const void *in, uint64_t len)
{
    (void)count;
    if (CR_LIKELY(dt->flags & CR_DT_CONTIG)) {
        cr_copy((char *)buf + dt->true_lb + offset, in, len);
        return;
    }
    cr_dt_loop_move(dt->loop, buf, dt->extent, offset, (char *)in, len, true);
}

/* The bytes `count` elements of dt at buf may touch: [*lo, *hi). */
static void span_of(const void *buf, MPI_Count count, const cr_dtype *dt, uintptr_t *lo, uintptr_t *hi)
{
    intptr_t first = (intptr_t)buf + dt->true_lb, last = first + (intptr_t)(count - 1) * dt->extent;
    *lo = (uintptr_t)CR_MIN(first, last);
    *hi = (uintptr_t)CR_MAX(first, last) + (uintptr_t)dt->true_extent;
}

static bool spans_overlap(const void *src, MPI_Count scount, const cr_dtype *sdt, const void *dst, MPI_Count dcount,
                          const cr_dtype *ddt)
{
    uintptr_t slo, shi, dlo, dhi;
    span_of(src, scount, sdt, &slo, &shi);
    span_of(dst, dcount, ddt, &dlo, &dhi);
    return slo < dhi && dlo < shi;
}

void cr_dt_copy(const void *src, MPI_Count scount, const cr_dtype *sdt, void *dst, MPI_Count dcount,
                const cr_dtype *ddt)
{
    uint64_t sbytes = (uint64_t)scount * (uint64_t)sdt->size, dbytes = (uint64_t)dcount * (uint64_t)ddt->size;
    uint64_t n = CR_MIN(sbytes, dbytes);
    /* One buffer read and written through the same layout is a copy onto itself. (The same
     * address with different types is not: MPI_BOTTOM with absolute addresses in each.) */
    if (n == 0 || (src == dst && sdt == ddt))
        return;
    if (cr_dtype_is_contig(sdt) && cr_dtype_is_contig(ddt)) {
        char *to = (char *)dst + ddt->true_lb;
        const char *from = (const char *)src + sdt->true_lb;
        if (to + n <= from || from + n <= to)
            cr_copy(to, from, n);
        else
            memmove(to, from, n); /* (overlapping: MPI_IN_PLACE paths may shift data within a buffer) */
        return;
    }
    if (spans_overlap(src, scount, sdt, dst, dcount, ddt)) {
        /* The layouts move bytes at different places: a copy in order could overwrite source
         * data it has yet to read. Set the whole source aside first. */
        void *aside = malloc((size_t)n);
        if (aside) {
            cr_dt_pack(src, scount, sdt, 0, aside, n);
            cr_dt_unpack(dst, dcount, ddt, 0, aside, n);
            free(aside);
            return;
        }
    }
    if (cr_dtype_is_contig(sdt)) {
        cr_dt_unpack(dst, dcount, ddt, 0, (const char *)src + sdt->true_lb, n);
        return;
    }
    if (cr_dtype_is_contig(ddt)) {
        cr_dt_pack(src, scount, sdt, 0, (char *)dst + ddt->true_lb, n);
        return;
    }
    /* Both non-contiguous: through a stack chunk that stays in cache, never a buffer of n. */
    char chunk[16384];
    for (uint64_t off = 0; off < n; off += sizeof chunk) {
        uint64_t k = CR_MIN((uint64_t)sizeof chunk, n - off);
        cr_dt_pack(src, scount, sdt, off, chunk, k);
        cr_dt_unpack(dst, dcount, ddt, off, chunk, k);
    }
}

uint64_t cr_dt_iov(void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, uint64_t len, struct iovec *iov,
                   int maxiov, int *niov)
{
    (void)count;
    if (CR_LIKELY(dt->flags & CR_DT_CONTIG) || len == 0) {
        *niov = len ? 1 : 0;
        if (len)
            iov[0] = (struct iovec){(char *)buf + dt->true_lb + offset, len};
        return len;
    }
    return cr_dt_loop_iov(dt->loop, buf, dt->extent, offset, len, iov, maxiov, niov);
}

MPI_Count cr_dt_elements(const cr_dtype *dt, uint64_t bytes)
{
    return cr_dt_loop_elements(dt->loop, bytes);
}

/* ----------------------------------------------------------------- MPI_Pack and MPI_Unpack */

/* The packed form is the bytes the data paths move: the type's data in layout order. */

int cr_mpi_pack(const void *inbuf, MPI_Count incount, cr_dtype *dt, void *outbuf, MPI_Count outsize,
                MPI_Count *position, struct cr_comm *comm)
{
    (void)comm;
    uint64_t bytes = (uint64_t)incount * (uint64_t)dt->size;
    if (*position < 0 || *position > outsize || bytes > (uint64_t)(outsize - *position))
        return cr_err(MPI_ERR_TRUNCATE, "%llu bytes to pack at position %lld do not fit in outsize=%lld",
                      (unsigned long long)bytes, (long long)*position, (long long)outsize);
    cr_dt_pack(inbuf, incount, dt, 0, (char *)outbuf + *position, bytes);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

int cr_mpi_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  cr_dtype *dt, struct cr_comm *comm)
{
    (void)comm;
    uint64_t bytes = (uint64_t)outcount * (uint64_t)dt->size;
    if (*position < 0 || *position > insize || bytes > (uint64_t)(insize - *position))
        return cr_err(MPI_ERR_TRUNCATE, "%llu bytes to unpack at position %lld, but insize=%lld",
                      (unsigned long long)bytes, (long long)*position, (long long)insize);
    cr_dt_unpack(outbuf, outcount, dt, 0, (const char *)inbuf + *position, bytes);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

int cr_mpi_pack_size(MPI_Count incount, cr_dtype *dt, struct cr_comm *comm, MPI_Count *size)
{
    (void)comm;
    *size = incount * dt->size;
    return MPI_SUCCESS;
}
