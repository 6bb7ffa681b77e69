/* Datatype engine: packing and unpacking any window of a typed buffer, for contiguous and
 * padded (pair) predefined types, against a byte-by-byte reference. */
#include "dt/dtype.h"
#include "unit.h"

#include <stdbool.h>
#include <string.h>

/* Reference: the i-th data byte of (buf, count, dt). */
static const char *data_byte(const char *buf, const cr_dtype *dt, uint64_t i)
{
    uint64_t e = i / (uint64_t)dt->size, k = i % (uint64_t)dt->size;
    for (int b = 0; b < dt->nblocks; b++) {
        if (k < (uint64_t)dt->blocks[b].length)
            return buf + (MPI_Aint)e * dt->extent + dt->blocks[b].offset + k;
        k -= (uint64_t)dt->blocks[b].length;
    }
    return NULL;
}

/* cr_dt_copy between layouts that overlap in one buffer (a put to oneself, say): a padded pair
 * type and bytes, each way, the destination after and before the source. Every byte is checked
 * against a copy made from an untouched image of the buffer. */
static void overlapping_copies(void)
{
    cr_dtype *pair = cr_dtype_get(MPI_DOUBLE_INT), *bytes = cr_dtype_get(MPI_BYTE);
    enum { COUNT = 700, ROOM = 16 * COUNT + 256 };
    char *buf = malloc(ROOM), *image = malloc(ROOM), *want = malloc(ROOM);
    for (int way = 0; way < 4; way++) {
        bool pair_src = way & 1;
        int shift = way & 2 ? 40 : -40; /* the destination after or before the source */
        for (int i = 0; i < ROOM; i++)
            buf[i] = image[i] = (char)(i * 13 + 5);
        char *src = buf + 100, *dst = buf + 100 + shift;
        MPI_Count n = COUNT * (MPI_Count)pair->size;
        /* the reference: from the image into `want`, which starts as the image too */
        memcpy(want, image, ROOM);
        if (pair_src)
            cr_dt_copy(image + 100, COUNT, pair, want + 100 + shift, n, bytes);
        else
            cr_dt_copy(image + 100, n, bytes, want + 100 + shift, COUNT, pair);
        if (pair_src)
            cr_dt_copy(src, COUNT, pair, dst, n, bytes);
        else
            cr_dt_copy(src, n, bytes, dst, COUNT, pair);
        int bad = -1;
        for (int i = 0; i < ROOM && bad < 0; i++)
            if (buf[i] != want[i])
                bad = i;
        EXPECT(bad < 0, "overlapping copy (%s to %s, destination %+d bytes): byte %d differs", pair_src ? "pairs" : "bytes",
               pair_src ? "bytes" : "pairs", shift, bad);
    }
    free(buf);
    free(image);
    free(want);
}

int main(void)
{
    overlapping_copies();
    MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_2INT, MPI_BYTE};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        cr_dtype *dt = cr_dtype_get(types[t]);
        EXPECT(dt != NULL, "type %zu not registered", t);
        const int count = 13;
        size_t span = (size_t)(count * dt->extent), bytes = (size_t)(count * dt->size);
        char *buf = malloc(span), *out = malloc(bytes), *back = calloc(1, span);
        for (size_t i = 0; i < span; i++)
            buf[i] = (char)(i * 31 + 7);
        for (uint64_t off = 0; off < bytes; off += 5) {
            for (uint64_t len = 0; off + len <= bytes; len += 7) {
                cr_dt_pack(buf, count, dt, off, out, len);
                for (uint64_t i = 0; i < len; i++)
                    if (out[i] != *data_byte(buf, dt, off + i)) {
                        EXPECT(0, "%s pack window [%llu,+%llu) byte %llu", dt->name, (unsigned long long)off,
                               (unsigned long long)len, (unsigned long long)i);
                        break;
                    }
            }
        }
        /* Unpacking every byte through windows of odd sizes rebuilds the data bytes exactly,
         * and never writes the padding. */
        cr_dt_pack(buf, count, dt, 0, out, bytes);
        memset(back, 0x5a, span);
        for (uint64_t off = 0; off < bytes; off += 11)
            cr_dt_unpack(back, count, dt, off, out + off, off + 11 <= bytes ? 11 : bytes - off);
        for (uint64_t i = 0; i < bytes; i++)
            EXPECT(*data_byte(back, dt, i) == *data_byte(buf, dt, i), "%s unpack byte %llu", dt->name,
                   (unsigned long long)i);
        for (MPI_Aint off = 0; off < dt->extent; off++) { /* padding bytes of the first element */
            bool data = false;
            for (int b = 0; b < dt->nblocks; b++)
                data |= off >= dt->blocks[b].offset && off < dt->blocks[b].offset + dt->blocks[b].length;
            if (!data)
                EXPECT(back[off] == 0x5a, "%s: unpack wrote padding byte %ld", dt->name, (long)off);
        }
        free(buf);
        free(out);
        free(back);
    }
    cr_dtype *di = cr_dtype_get(MPI_DOUBLE_INT);
    EXPECT(cr_dt_elements(di, (uint64_t)di->size * 3) == 6, "3 MPI_DOUBLE_INT are 6 elements");
    EXPECT(cr_dt_elements(di, (uint64_t)di->size * 3 + 8) == 7, "and a double more is 7");
    EXPECT(cr_dt_elements(di, (uint64_t)di->size * 3 + 4) == -1, "half a double is not whole");
    return UNIT_DONE();
}
