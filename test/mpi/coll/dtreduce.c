/* Predefined reductions on derived datatypes whose elements are one predefined type: a
 * contiguous type, a strided vector (the gaps of the result must stay untouched), a resized
 * struct of one double with padding, a vector of MPI_2INT pairs with MPI_MINLOC/MPI_MAXLOC, and an
 * indexed type with irregular blocks, through MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block,
 * MPI_Scan, MPI_Iallreduce and MPI_Reduce_local, with sizes that cross the internal chunk of 256
 * elements; a struct mixing int and double is refused with MPI_ERR_OP naming the operation. */
#include "mpitest.h"

enum { N = 700 }; /* vector elements per rank, above the 256-element chunk */

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long tri = (long)size * (size - 1) / 2; /* sum of ranks */

    /* contiguous of 3 ints, count 5: sums */
    {
        MPI_Datatype c3;
        MPI_Type_contiguous(3, MPI_INT, &c3);
        MPI_Type_commit(&c3);
        int in[15], out[15];
        for (int i = 0; i < 15; i++)
            in[i] = rank + i;
        MPI_Allreduce(in, out, 5, c3, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < 15; i++)
            CHECK(out[i] == tri + (long)size * i, "contiguous allreduce [%d] = %d", i, out[i]);
        /* and reduced to the last rank: 5 elements, enough for reduce-scatter + gather (forced
         * by a testlist line) up to 4 processes */
        for (int i = 0; i < 15; i++)
            out[i] = -1;
        MPI_Reduce(in, out, 5, c3, MPI_SUM, size - 1, MPI_COMM_WORLD);
        for (int i = 0; rank == size - 1 && i < 15; i++)
            CHECK(out[i] == tri + (long)size * i, "contiguous reduce [%d] = %d", i, out[i]);
        MPI_Type_free(&c3);
    }
    /* vector of doubles, stride 3: max, and the gaps untouched */
    {
        MPI_Datatype v;
        MPI_Type_vector(N, 1, 3, MPI_DOUBLE, &v);
        MPI_Type_commit(&v);
        double *in = malloc(3 * N * sizeof *in), *out = malloc(3 * N * sizeof *out);
        for (int i = 0; i < 3 * N; i++) {
            in[i] = (i % 3 == 0) ? (double)(rank * 1000 + i) : -1.0;
            out[i] = -7.0;
        }
        MPI_Reduce(in, out, 1, v, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < 3 * N; i++)
                CHECK(out[i] == (i % 3 == 0 ? (double)((size - 1) * 1000 + i) : -7.0), "vector reduce [%d] = %g", i,
                      out[i]);
        for (int i = 0; i < 3 * N; i++)
            out[i] = -7.0;
        MPI_Request req;
        MPI_Iallreduce(in, out, 1, v, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3 * N; i++)
            CHECK(out[i] == (i % 3 == 0 ? (double)(tri * 1000 + (long)size * i) : -7.0), "vector iallreduce [%d] = %g",
                  i, out[i]);
        /* scan: prefix sums */
        for (int i = 0; i < 3 * N; i++)
            out[i] = -7.0;
        MPI_Scan(in, out, 1, v, MPI_SUM, MPI_COMM_WORLD);
        long pre = (long)rank * (rank + 1) / 2;
        for (int i = 0; i < 3 * N; i += 3)
            CHECK(out[i] == (double)(pre * 1000 + (long)(rank + 1) * i), "vector scan [%d] = %g", i, out[i]);
        free(in);
        free(out);
        MPI_Type_free(&v);
    }
    /* a double resized to 16 bytes (padding after each): min, per rank a block */
    {
        MPI_Datatype r;
        MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &r);
        MPI_Type_commit(&r);
        double *in = malloc(2 * size * 4 * sizeof *in), *out = malloc(2 * 4 * sizeof *out);
        for (int i = 0; i < 2 * size * 4; i++)
            in[i] = (i % 2 == 0) ? (double)(100 - rank + i) : 55.0;
        for (int i = 0; i < 8; i++)
            out[i] = -7.0;
        MPI_Reduce_scatter_block(in, out, 4, r, MPI_MIN, MPI_COMM_WORLD);
        for (int k = 0; k < 4; k++) {
            int i = 2 * (rank * 4 + k);
            CHECK(out[2 * k] == (double)(100 - (size - 1) + i), "resized reduce_scatter [%d] = %g", k, out[2 * k]);
            CHECK(out[2 * k + 1] == -7.0, "resized reduce_scatter wrote the padding of element %d", k);
        }
        free(in);
        free(out);
        MPI_Type_free(&r);
    }
    /* vector of MPI_2INT pairs, stride 2: minloc and maxloc */
    {
        MPI_Datatype v;
        MPI_Type_vector(N, 1, 2, MPI_2INT, &v);
        MPI_Type_commit(&v);
        int *in = malloc(4 * N * sizeof *in), *lo = malloc(4 * N * sizeof *lo), *hi = malloc(4 * N * sizeof *hi);
        for (int i = 0; i < 2 * N; i++) {
            in[2 * i] = (i * 7 + rank * 13) % 11; /* value */
            in[2 * i + 1] = rank;                   /* index */
            lo[2 * i] = hi[2 * i] = lo[2 * i + 1] = hi[2 * i + 1] = -7;
        }
        MPI_Allreduce(in, lo, 1, v, MPI_MINLOC, MPI_COMM_WORLD);
        MPI_Allreduce(in, hi, 1, v, MPI_MAXLOC, MPI_COMM_WORLD);
        for (int i = 0; i < 2 * N; i++) {
            if (i % 2) {
                CHECK(lo[2 * i] == -7 && hi[2 * i + 1] == -7, "pair gap %d written", i);
                continue;
            }
            int minv = 1 << 30, mini = -1, maxv = -1, maxi = -1;
            for (int r = 0; r < size; r++) {
                int val = (i * 7 + r * 13) % 11;
                if (val < minv)
                    minv = val, mini = r;
                if (val > maxv)
                    maxv = val, maxi = r;
            }
            CHECK(lo[2 * i] == minv && lo[2 * i + 1] == mini, "minloc [%d] = (%d, %d), want (%d, %d)", i, lo[2 * i],
                  lo[2 * i + 1], minv, mini);
            CHECK(hi[2 * i] == maxv && hi[2 * i + 1] == maxi, "maxloc [%d] = (%d, %d), want (%d, %d)", i, hi[2 * i],
                  hi[2 * i + 1], maxv, maxi);
        }
        free(in);
        free(lo);
        free(hi);
        MPI_Type_free(&v);
    }
    /* indexed longs with irregular blocks, reduce_local with MPI_PROD and MPI_BXOR */
    {
        int bl[3] = {2, 1, 3}, disp[3] = {5, 0, 9};
        MPI_Datatype ix;
        MPI_Type_indexed(3, bl, disp, MPI_LONG, &ix);
        MPI_Type_commit(&ix);
        long a[24], b[24];
        for (int i = 0; i < 24; i++)
            a[i] = i + 2, b[i] = 3;
        MPI_Reduce_local(a, b, 2, ix, MPI_PROD); /* extent 12 longs: elements at 0, 5, 6, 9, 10, 11 and +12 */
        for (int i = 0; i < 24; i++) {
            int j = i % 12, used = j == 0 || j == 5 || j == 6 || j == 9 || j == 10 || j == 11;
            CHECK(b[i] == (used ? 3 * (i + 2) : 3), "indexed reduce_local [%d] = %ld", i, b[i]);
        }
        MPI_Type_free(&ix);
    }
    /* a struct mixing types: MPI_ERR_OP */
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE}, s;
        MPI_Type_create_struct(2, bl, d, ts, &s);
        MPI_Type_commit(&s);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        char in[16] = {0}, out[16];
        int rc = CHECK_CLASS(MPI_Allreduce(in, out, 1, s, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        CHECK(mt_string_has(rc, "MPI_SUM"), "the message names the operation");
        MPI_Type_free(&s);
    }
    return mt_finish();
}
