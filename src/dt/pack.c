/* pack.c: moving data between typed buffers and byte streams by walking a datatype's block
 * layout (see dtype.h). Contiguous types are one memcpy; others visit (element, block) pairs
 * from the window's start without recursion. */
#include "dtype.h"

/* Calls copy(typed_address, stream_offset, n) for every piece of the window. */
#define WALK(buf, dt, offset, len, COPY)                                                           \
    do {                                                                                           \
        uint64_t pos_ = 0, end_ = (offset) + (len);                                                \
        uint64_t elem_ = (offset) / (uint64_t)(dt)->size;                                          \
        pos_ = elem_ * (uint64_t)(dt)->size;                                                       \
        for (; pos_ < end_; elem_++) {                                                             \
            char *base_ = (char *)(buf) + (MPI_Aint)elem_ * (dt)->extent;                          \
            for (int b_ = 0; b_ < (dt)->nblocks && pos_ < end_; b_++) {                            \
                uint64_t blen_ = (uint64_t)(dt)->blocks[b_].length;                                \
                uint64_t lo_ = pos_ < (offset) ? (offset) - pos_ : 0;                              \
                if (lo_ < blen_) {                                                                 \
                    uint64_t n_ = CR_MIN(blen_ - lo_, end_ - (pos_ + lo_));                       \
                    char *addr_ = base_ + (dt)->blocks[b_].offset + lo_;                           \
                    uint64_t at_ = pos_ + lo_ - (offset);                                          \
                    COPY(addr_, at_, n_);                                                          \
                }                                                                                  \
                pos_ += blen_;                                                                     \
            }                                                                                      \
        }                                                                                          \
    } while (0)

void cr_dt_pack(const void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, void *out, uint64_t len)
{
    (void)count;
    if (CR_LIKELY(dt->flags & CR_DT_CONTIG)) {
        memcpy(out, (const char *)buf + dt->true_lb + offset, len);
        return;
    }
#define PACK_COPY(addr, at, n) memcpy((char *)out + (at), (addr), (n))
    WALK(buf, dt, offset, len, PACK_COPY);
#undef PACK_COPY
}

void cr_dt_unpack(void *buf, MPI_Count count, const cr_dtype *dt, uint64_t offset, const void *in, uint64_t len)
{
    (void)count;
    if (CR_LIKELY(dt->flags & CR_DT_CONTIG)) {
        memcpy((char *)buf + dt->true_lb + offset, in, len);
        return;
    }
#define UNPACK_COPY(addr, at, n) memcpy((addr), (const char *)in + (at), (n))
    WALK(buf, dt, offset, len, UNPACK_COPY);
#undef UNPACK_COPY
}

MPI_Count cr_dt_elements(const cr_dtype *dt, uint64_t bytes)
{
    if (dt->size == 0)
        return 0;
    uint64_t whole = bytes / (uint64_t)dt->size, rest = bytes % (uint64_t)dt->size;
    MPI_Count n = (MPI_Count)whole * dt->nblocks;
    /* A partial element counts the blocks it holds entirely; a block cut in the middle makes
     * the count undefined. */
    for (int b = 0; b < dt->nblocks && rest; b++) {
        uint64_t blen = (uint64_t)dt->blocks[b].length;
        if (rest < blen)
            return -1;
        rest -= blen;
        n++;
    }
    return n;
}
