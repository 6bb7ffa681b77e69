/* shared.c: the shared file pointer: records appended by every process with MPI_File_write_shared (each complete and present once, each process's in its order), read back once in total with MPI_File_read_shared after MPI_File_seek_shared, get_position_shared; MPI_File_write_ordered/read_ordered in rank order, starting at the shared pointer and leaving it at the end; the individual pointers untouched. */
#include "iotest.h"

static int rank, size;

#define KR 6   /* records each process writes */
#define RF 6   /* filler ints in a record */

typedef struct {
    int rank, seq;
    int fill[RF];
} record;

static record make(int r, int s)
{
    record x;
    x.rank = r;
    x.seq = s;
    for (int i = 0; i < RF; i++)
        x.fill[i] = r * 7919 + s * 31 + i;
    return x;
}

/* The record is one that make() gives, whole. */
static int complete(const record *x)
{
    if (x->rank < 0 || x->rank >= size || x->seq < 0 || x->seq >= KR)
        return 0;
    record w = make(x->rank, x->seq);
    return memcmp(&w, x, sizeof w) == 0;
}

/* The shared pointer, once every process has got here and before any goes on to move it. */
static MPI_Offset shared_position(MPI_File fh)
{
    MPI_Offset pos = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_File_get_position_shared(fh, &pos), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    return pos;
}

static void records(void)
{
    const int RS = (int)sizeof(record), total = size * KR;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    MPI_Offset pos = -1, sz = -1;
    record *all = calloc((size_t)total + 1, sizeof(record)), *mine = calloc((size_t)total + 1, sizeof(record));
    int *seen = calloc((size_t)total, sizeof(int));
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("records"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    pos = shared_position(fh);
    CHECK(pos == 0, "shared position %lld after open", (long long)pos);
    for (int s = 0; s < KR; s++) {
        record x = make(rank, s);
        CHECK_CLASS(MPI_File_write_shared(fh, &x, RS, MPI_BYTE, &st), MPI_SUCCESS);
        CHECK(io_count(&st, MPI_BYTE) == RS, "write_shared wrote %d bytes", io_count(&st, MPI_BYTE));
    }
    io_sync_barrier(fh, MPI_COMM_WORLD);
    pos = shared_position(fh);
    CHECK(pos == (MPI_Offset)total * RS, "shared position %lld after every record, want %d", (long long)pos,
          total * RS);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == 0, "the individual pointer moved to %lld with the shared one", (long long)pos);
    CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == (MPI_Offset)total * RS, "size %lld, want %d", (long long)sz, total * RS);

    /* the file: every record whole, each (rank, seq) once, each process's in the order it wrote them */
    CHECK_CLASS(MPI_File_read_at(fh, 0, all, (total + 1) * RS, MPI_BYTE, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_BYTE) == total * RS, "read %d bytes of %d", io_count(&st, MPI_BYTE), total * RS);
    int last[64];
    for (int r = 0; r < size && r < 64; r++)
        last[r] = -1;
    for (int i = 0; i < total; i++) {
        if (!complete(&all[i])) {
            CHECK(0, "record %d in the file is not whole (rank %d seq %d)", i, all[i].rank, all[i].seq);
            continue;
        }
        int r = all[i].rank, s = all[i].seq;
        CHECK(seen[r * KR + s]++ == 0, "record (%d, %d) is in the file twice", r, s);
        if (r < 64) {
            CHECK(s > last[r], "record (%d, %d) after (%d, %d): out of the writer's order", r, s, r, last[r]);
            last[r] = s;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* read back through the shared pointer until the end: every record read once over all */
    CHECK_CLASS(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    pos = shared_position(fh);
    CHECK(pos == 0, "shared position %lld after seek_shared to 0", (long long)pos);
    int n = 0;
    for (int guard = 0; guard <= total; guard++) {
        record x;
        memset(&x, 0, sizeof x);
        if (CHECK_CLASS(MPI_File_read_shared(fh, &x, RS, MPI_BYTE, &st), MPI_SUCCESS) != MPI_SUCCESS)
            break;
        int c = io_count(&st, MPI_BYTE);
        if (c == 0)
            break;
        CHECK(c == RS && complete(&x), "read_shared: %d bytes, a %s record", c, complete(&x) ? "whole" : "broken");
        if (c != RS)
            break;
        mine[n++] = x;
    }
    /* each process's last read found nothing; whether such a read still moves the shared pointer by
     * the amount asked for (as ROMIO's does) the standard leaves open ("the next etype after the last
     * one that will be accessed"), so the pointer is somewhere from the end to one record per process past it */
    pos = shared_position(fh);
    CHECK(pos >= (MPI_Offset)total * RS && pos <= (MPI_Offset)(total + size) * RS,
          "shared position %lld after reading everything, want %d (up to %d)", (long long)pos, total * RS,
          (total + size) * RS);

    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    record *union_ = rank == 0 ? calloc((size_t)size * (total + 1), sizeof(record)) : NULL;
    int nb = n * RS, sum = 0;
    MPI_Gather(&nb, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size; r++)
            displs[r] = sum, sum += counts[r];
    MPI_Gatherv(mine, nb, MPI_BYTE, union_, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(sum == total * RS, "%d records read in all, want %d", sum / RS, total);
        memset(seen, 0, sizeof(int) * (size_t)total);
        for (int i = 0; i < sum / RS; i++)
            if (complete(&union_[i]))
                seen[union_[i].rank * KR + union_[i].seq]++;
        for (int i = 0; i < total; i++)
            CHECK(seen[i] == 1, "record (%d, %d) was read %d times", i / KR, i % KR, seen[i]);
        free(union_);
    }
    free(counts);
    free(displs);
    CHECK_CLASS(MPI_File_seek_shared(fh, -RS, MPI_SEEK_END), MPI_SUCCESS);
    pos = shared_position(fh);
    CHECK(pos == (MPI_Offset)(total - 1) * RS, "shared position %lld after seek_shared to the last record",
          (long long)pos);
    CHECK_CLASS(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), MPI_SUCCESS);
    pos = shared_position(fh);
    CHECK(pos == (MPI_Offset)total * RS, "shared position %lld after seek_shared to the end", (long long)pos);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
out:
    free(all);
    free(mine);
    free(seen);
}

/* Ordered: rank r writes r + 1 ints of r, then size - r ints of 100 + r, in ints through an MPI_INT view. */
static void ordered(void)
{
    const int first = size * (size + 1) / 2, total = 2 * first;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    MPI_Offset pos = -1;
    int *buf = malloc(sizeof(int) * (size_t)(size + 1)), *got = malloc(sizeof(int) * (size_t)(total + 4));
    int *want = malloc(sizeof(int) * (size_t)total), w = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++)
            want[w++] = r;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < size - r; i++)
            want[w++] = 100 + r;
    if (CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("ordered"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &fh),
                    MPI_SUCCESS) != MPI_SUCCESS)
        goto out;
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
    for (int i = 0; i <= rank; i++)
        buf[i] = rank;
    CHECK_CLASS(MPI_File_write_ordered(fh, buf, rank + 1, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == rank + 1, "write_ordered wrote %d ints", io_count(&st, MPI_INT));
    pos = shared_position(fh);
    CHECK(pos == first, "shared position %lld after write_ordered, want %d", (long long)pos, first);
    for (int i = 0; i < size - rank; i++)
        buf[i] = 100 + rank;
    CHECK_CLASS(MPI_File_write_ordered(fh, buf, size - rank, MPI_INT, &st), MPI_SUCCESS);
    pos = shared_position(fh);
    CHECK(pos == total, "shared position %lld after two write_ordered, want %d", (long long)pos, total);
    CHECK_CLASS(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == 0, "the individual pointer moved to %lld", (long long)pos);
    io_sync_barrier(fh, MPI_COMM_WORLD);

    for (int i = 0; i < total + 4; i++)
        got[i] = -1;
    CHECK_CLASS(MPI_File_read_at(fh, 0, got, total + 4, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == total, "the file holds %d ints, want %d", io_count(&st, MPI_INT), total);
    CHECK_INTS(got, want, (size_t)total, "the ordered writes in rank order");
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_CLASS(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    for (int i = 0; i < total + 4; i++)
        got[i] = -1;
    CHECK_CLASS(MPI_File_read_ordered(fh, got, rank + 1, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == rank + 1, "read_ordered read %d ints", io_count(&st, MPI_INT));
    for (int i = 0; i <= rank; i++)
        buf[i] = rank;
    CHECK_INTS(got, buf, (size_t)rank + 1, "read_ordered: rank r's r + 1 ints of r");
    CHECK_CLASS(MPI_File_read_ordered(fh, got, size - rank, MPI_INT, &st), MPI_SUCCESS);
    for (int i = 0; i < size - rank; i++)
        buf[i] = 100 + rank;
    CHECK_INTS(got, buf, (size_t)(size - rank), "read_ordered: the second round");
    pos = shared_position(fh);
    CHECK(pos == total, "shared position %lld after read_ordered, want %d", (long long)pos, total);
    /* at the end: nothing more, not an error */
    CHECK_CLASS(MPI_File_read_ordered(fh, got, 2, MPI_INT, &st), MPI_SUCCESS);
    CHECK(io_count(&st, MPI_INT) == 0, "read_ordered at the end read %d ints", io_count(&st, MPI_INT));
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
out:
    free(buf);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup();
    records();
    ordered();
    io_cleanup();
    return mt_finish();
}
