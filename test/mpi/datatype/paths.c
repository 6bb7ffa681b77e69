/* Non-contiguous data on every protocol path: for message sizes from eager through long eager
 * and rendezvous to several pulls' worth (the receiver of a contiguous message pulls it through
 * a 256 KiB scratch when its own buffer is not contiguous), each pairing of a contiguous buffer,
 * a stride-2 vector, an irregular indexed type and blocks of 4 KiB (which the receiver of a
 * contiguous rendezvous reads straight into, 64 blocks a read) on the sending and the receiving side moves a
 * message from rank 0 to rank 1 (or to itself with one process), and the receiver checks every
 * element and every gap. Run with COURIER_SHM_CMA=0 (streamed rendezvous) and
 * COURIER_EAGER_MAX=0 too. */
#include "mpitest.h"

enum { CONTIG, VECTOR, INDEXED, BLOCKS, NKINDS };
static const char *kind_name[] = {"contiguous", "vector", "indexed", "4 KiB blocks"};

/* BLOCKS: blocks of 512 doubles (large enough to be read straight into), 600 apart */
enum { BIG = 512, BIG_STRIDE = 600 };

/* A type holding n doubles in a buffer of *span doubles, with gaps, of the given kind. */
static MPI_Datatype make(int kind, int n, long *span)
{
    MPI_Datatype t;
    if (kind == CONTIG) {
        MPI_Type_contiguous(n, MPI_DOUBLE, &t);
        *span = n;
    } else if (kind == VECTOR) {
        MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &t);
        *span = 2L * n;
    } else if (kind == BLOCKS) {
        int nb = (n + BIG - 1) / BIG;
        int *bl = malloc(nb * sizeof *bl), *disp = malloc(nb * sizeof *disp);
        for (int b = 0; b < nb; b++) {
            bl[b] = b < nb - 1 ? BIG : n - BIG * (nb - 1);
            disp[b] = b * BIG_STRIDE;
        }
        MPI_Type_indexed(nb, bl, disp, MPI_DOUBLE, &t);
        *span = (long)(nb - 1) * BIG_STRIDE + bl[nb - 1];
        free(bl);
        free(disp);
    } else {
        /* blocks of 1, 3, 7, 2, 5 doubles, each followed by a gap of 1, 2 or 4 */
        static const int lens[5] = {1, 3, 7, 2, 5}, gaps[3] = {1, 2, 4};
        int nb = 0, left = n;
        int *bl = malloc((n + 1) * sizeof *bl), *disp = malloc((n + 1) * sizeof *disp);
        long at = 0;
        while (left > 0) {
            int len = lens[nb % 5] < left ? lens[nb % 5] : left;
            bl[nb] = len;
            disp[nb] = (int)at;
            at += len + gaps[nb % 3];
            left -= len;
            nb++;
        }
        MPI_Type_indexed(nb, bl, disp, MPI_DOUBLE, &t);
        free(bl);
        free(disp);
        *span = at;
    }
    MPI_Type_commit(&t);
    return t;
}

/* Which positions of a buffer of `span` doubles the type of `kind` covers, in order. */
static void positions(int kind, int n, long *pos)
{
    static const int lens[5] = {1, 3, 7, 2, 5}, gaps[3] = {1, 2, 4};
    if (kind == CONTIG)
        for (int i = 0; i < n; i++)
            pos[i] = i;
    else if (kind == VECTOR)
        for (int i = 0; i < n; i++)
            pos[i] = 2L * i;
    else if (kind == BLOCKS)
        for (int i = 0; i < n; i++)
            pos[i] = (long)(i / BIG) * BIG_STRIDE + i % BIG;
    else {
        long at = 0;
        int k = 0;
        for (int b = 0; k < n; b++) {
            for (int j = 0; j < lens[b % 5] && k < n; j++)
                pos[k++] = at + j;
            at += lens[b % 5] + gaps[b % 3];
        }
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = size > 1 ? 1 : 0;
    const int sizes[] = {100, 12000, 70000, 400000}; /* doubles: eager, long eager, rendezvous, > 1 pull chunk */
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int n = sizes[si];
        long *spos = malloc(n * sizeof *spos), *rpos = malloc(n * sizeof *rpos);
        for (int sk = 0; sk < NKINDS; sk++)
            for (int rk = 0; rk < NKINDS; rk++) {
                long sspan, rspan;
                MPI_Datatype st = make(sk, n, &sspan), rt = make(rk, n, &rspan);
                if (rank == 0) {
                    double *sb = malloc(sspan * sizeof *sb);
                    positions(sk, n, spos);
                    for (long i = 0; i < sspan; i++)
                        sb[i] = -1.0;
                    for (int i = 0; i < n; i++)
                        sb[spos[i]] = i + 0.5;
                    MPI_Request req;
                    MPI_Isend(sb, 1, st, peer, (int)si, MPI_COMM_WORLD, &req);
                    if (peer == 0) {
                        double *rb = malloc(rspan * sizeof *rb);
                        for (long i = 0; i < rspan; i++)
                            rb[i] = -7.0;
                        MPI_Recv(rb, 1, rt, 0, (int)si, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        positions(rk, n, rpos);
                        long bad = 0, k = 0;
                        for (long i = 0; i < rspan; i++) {
                            double want = (k < n && rpos[k] == i) ? (double)(k++) + 0.5 : -7.0;
                            bad += rb[i] != want;
                        }
                        CHECK(bad == 0, "%d doubles %s to %s (self): %ld wrong", n, kind_name[sk], kind_name[rk], bad);
                        free(rb);
                    }
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    free(sb);
                } else if (rank == 1) {
                    double *rb = malloc(rspan * sizeof *rb);
                    for (long i = 0; i < rspan; i++)
                        rb[i] = -7.0;
                    MPI_Status st2;
                    MPI_Recv(rb, 1, rt, 0, (int)si, MPI_COMM_WORLD, &st2);
                    int count;
                    MPI_Get_count(&st2, MPI_DOUBLE, &count);
                    CHECK(count == n, "count %d, want %d", count, n);
                    positions(rk, n, rpos);
                    long bad = 0, k = 0, first = -1;
                    for (long i = 0; i < rspan; i++) {
                        double want = (k < n && rpos[k] == i) ? (double)(k++) + 0.5 : -7.0;
                        if (rb[i] != want && first < 0)
                            first = i;
                        bad += rb[i] != want;
                    }
                    CHECK(bad == 0, "%d doubles %s to %s: %ld wrong, the first at %ld", n, kind_name[sk],
                          kind_name[rk], bad, first);
                    free(rb);
                }
                MPI_Type_free(&st);
                MPI_Type_free(&rt);
            }
        free(spos);
        free(rpos);
    }
    return mt_finish();
}
