/* Combined send-receive around a ring (to the right, from the left, and the other way), with
 * sizes from 0 to 1.2 MB (eager, the eager limit, rendezvous, many frames):
 *   MPI_Sendrecv (also sending MPI_INT and receiving the same signature as MPI_2INT from
 *   MPI_ANY_SOURCE), MPI_Sendrecv_replace (MPI_INT, and the padded MPI_DOUBLE_INT received with
 *   MPI_ANY_TAG), MPI_Isendrecv, MPI_Isendrecv_replace (MPI_INT and MPI_DOUBLE_INT); data and
 *   status checked.
 * Then messages to oneself: MPI_Isend/MPI_Irecv in both posting orders, MPI_Sendrecv and
 * MPI_Sendrecv_replace with oneself, eager and rendezvous. */
#include "mpitest.h"

typedef struct {
    double d;
    int i;
} double_int;

static int rank, size;

static int val(int src, int k, int i)
{
    return src * 1000003 + k * 7919 + i;
}

static void fill(int *b, int n, int src, int k)
{
    for (int i = 0; i < n; i++)
        b[i] = val(src, k, i);
}

static int first_bad(const int *b, int n, int src, int k)
{
    for (int i = 0; i < n; i++)
        if (b[i] != val(src, k, i))
            return i;
    return -1;
}

static void check_st(const MPI_Status *st, MPI_Datatype dt, int src, int tag, int n, const char *what, int k)
{
    int count = -1;
    MPI_Get_count(st, dt, &count);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == n,
          "%s (size %d): status (%d, %d, count %d), expected (%d, %d, %d)", what, k, st->MPI_SOURCE, st->MPI_TAG,
          count, src, tag, n);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int counts[] = {0, 1, 100, 4096, 4097, 25000, 300000}; /* ints */
    const int nc = sizeof counts / sizeof counts[0], maxn = 300000;
    int *sb = malloc((maxn + 2) * sizeof(int)), *rb = malloc((maxn + 2) * sizeof(int));
    double_int *db = malloc((maxn / 2 + 1) * sizeof *db);
    MPI_Status st;
    MPI_Request r;
    int bad;

    for (int k = 0; k < nc; k++) {
        int n = counts[k];

        /* right, from the left */
        fill(sb, n, rank, k);
        memset(rb, 0, (n + 2) * sizeof(int));
        CHECK_CLASS(MPI_Sendrecv(sb, n, MPI_INT, right, k, rb, n + 2, MPI_INT, left, k, MPI_COMM_WORLD, &st),
                    MPI_SUCCESS);
        bad = first_bad(rb, n, left, k);
        check_st(&st, MPI_INT, left, k, n, "MPI_Sendrecv", n);
        CHECK(bad < 0 && rb[n] == 0, "MPI_Sendrecv of %d ints: element %d wrong", n, bad);

        /* left, from the right, the receive from MPI_ANY_SOURCE and as MPI_2INT (a wildcard tag
         * here could take the left neighbour's next message) */
        fill(sb, 2 * (n / 2), rank, k + 100);
        memset(rb, 0, (n + 2) * sizeof(int));
        CHECK_CLASS(MPI_Sendrecv(sb, 2 * (n / 2), MPI_INT, left, 1000 + k, rb, n / 2 + 1, MPI_2INT, MPI_ANY_SOURCE,
                                 1000 + k, MPI_COMM_WORLD, &st),
                    MPI_SUCCESS);
        check_st(&st, MPI_2INT, right, 1000 + k, n / 2, "MPI_Sendrecv to MPI_2INT with wildcards", n);
        bad = first_bad(rb, 2 * (n / 2), right, k + 100);
        CHECK(bad < 0, "MPI_Sendrecv to MPI_2INT: element %d wrong", bad);

        /* replace, MPI_INT */
        fill(rb, n, rank, k + 200);
        rb[n] = -1;
        CHECK_CLASS(MPI_Sendrecv_replace(rb, n, MPI_INT, right, 2000 + k, left, 2000 + k, MPI_COMM_WORLD, &st),
                    MPI_SUCCESS);
        check_st(&st, MPI_INT, left, 2000 + k, n, "MPI_Sendrecv_replace", n);
        bad = first_bad(rb, n, left, k + 200);
        CHECK(bad < 0 && rb[n] == -1, "MPI_Sendrecv_replace of %d ints: element %d wrong", n, bad);

        /* replace, MPI_DOUBLE_INT (packed on the way out and back) */
        int m = n / 2;
        for (int i = 0; i < m; i++)
            db[i] = (double_int){val(rank, k, i) * 0.5, val(rank, k, i) ^ 0x55};
        CHECK_CLASS(
            MPI_Sendrecv_replace(db, m, MPI_DOUBLE_INT, left, 3000 + k, right, MPI_ANY_TAG, MPI_COMM_WORLD, &st),
            MPI_SUCCESS);
        check_st(&st, MPI_DOUBLE_INT, right, 3000 + k, m, "MPI_Sendrecv_replace of MPI_DOUBLE_INT", n);
        bad = -1;
        for (int i = 0; i < m && bad < 0; i++)
            if (db[i].d != val(right, k, i) * 0.5 || db[i].i != (val(right, k, i) ^ 0x55))
                bad = i;
        CHECK(bad < 0, "MPI_Sendrecv_replace of %d MPI_DOUBLE_INT: element %d wrong", m, bad);

        /* Isendrecv_replace of MPI_DOUBLE_INT, and Isendrecv between MPI_DOUBLE_INT buffers */
        for (int i = 0; i < m; i++)
            db[i] = (double_int){val(rank, k, i) * 0.25, val(rank, k, i) ^ 0x66};
        CHECK_CLASS(MPI_Isendrecv_replace(db, m, MPI_DOUBLE_INT, right, 3500 + k, left, 3500 + k, MPI_COMM_WORLD, &r),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
        check_st(&st, MPI_DOUBLE_INT, left, 3500 + k, m, "MPI_Isendrecv_replace of MPI_DOUBLE_INT", n);
        bad = -1;
        for (int i = 0; i < m && bad < 0; i++)
            if (db[i].d != val(left, k, i) * 0.25 || db[i].i != (val(left, k, i) ^ 0x66))
                bad = i;
        CHECK(bad < 0, "MPI_Isendrecv_replace of %d MPI_DOUBLE_INT: element %d wrong", m, bad);
        double_int *dsend = (double_int *)sb; /* sb holds maxn + 2 ints: room for maxn / 2 pairs */
        for (int i = 0; i < m / 2; i++)
            dsend[i] = (double_int){val(rank, k, i) * 2.0, val(rank, k, i) + 1};
        memset(db, 0, (size_t)(m / 2 + 1) * sizeof *db);
        CHECK_CLASS(MPI_Isendrecv(dsend, m / 2, MPI_DOUBLE_INT, left, 3600 + k, db, m / 2 + 1, MPI_DOUBLE_INT, right,
                                  3600 + k, MPI_COMM_WORLD, &r),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
        check_st(&st, MPI_DOUBLE_INT, right, 3600 + k, m / 2, "MPI_Isendrecv of MPI_DOUBLE_INT", n);
        bad = -1;
        for (int i = 0; i < m / 2 && bad < 0; i++)
            if (db[i].d != val(right, k, i) * 2.0 || db[i].i != val(right, k, i) + 1)
                bad = i;
        CHECK(bad < 0 && db[m / 2].d == 0 && db[m / 2].i == 0, "MPI_Isendrecv of %d MPI_DOUBLE_INT: element %d wrong",
              m / 2, bad);

        /* Isendrecv */
        fill(sb, n, rank, k + 300);
        memset(rb, 0, (n + 2) * sizeof(int));
        CHECK_CLASS(MPI_Isendrecv(sb, n, MPI_INT, right, 4000 + k, rb, n, MPI_INT, left, 4000 + k, MPI_COMM_WORLD, &r),
                    MPI_SUCCESS);
        int flag = 0;
        for (int t = 0; k % 2 && !flag && t < 200; t++)
            CHECK_CLASS(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
        if (!flag)
            CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
        CHECK(r == MPI_REQUEST_NULL, "MPI_Isendrecv request not freed");
        check_st(&st, MPI_INT, left, 4000 + k, n, "MPI_Isendrecv", n);
        bad = first_bad(rb, n, left, k + 300);
        CHECK(bad < 0, "MPI_Isendrecv of %d ints: element %d wrong", n, bad);

        /* Isendrecv_replace */
        fill(rb, n, rank, k + 400);
        CHECK_CLASS(MPI_Isendrecv_replace(rb, n, MPI_INT, left, 5000 + k, right, 5000 + k, MPI_COMM_WORLD, &r),
                    MPI_SUCCESS);
        CHECK_CLASS(MPI_Wait(&r, &st), MPI_SUCCESS);
        check_st(&st, MPI_INT, right, 5000 + k, n, "MPI_Isendrecv_replace", n);
        bad = first_bad(rb, n, right, k + 400);
        CHECK(bad < 0, "MPI_Isendrecv_replace of %d ints: element %d wrong", n, bad);
        if (mt_errors > 10)
            mt_finish(); /* exits */
    }

    /* To oneself. */
    for (int k = 0; k < nc; k++) {
        int n = counts[k];
        MPI_Request rr, sr;
        for (int order = 0; order < 2; order++) {
            fill(sb, n, rank, 600 + k);
            memset(rb, 0, (n + 1) * sizeof(int));
            if (order == 0) {
                MPI_Irecv(rb, n + 1, MPI_INT, rank, 6000 + k, MPI_COMM_WORLD, &rr);
                MPI_Isend(sb, n, MPI_INT, rank, 6000 + k, MPI_COMM_WORLD, &sr);
            } else {
                MPI_Isend(sb, n, MPI_INT, rank, 6000 + k, MPI_COMM_WORLD, &sr);
                MPI_Irecv(rb, n + 1, MPI_INT, rank, 6000 + k, MPI_COMM_WORLD, &rr);
            }
            CHECK_CLASS(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK_CLASS(MPI_Wait(&rr, &st), MPI_SUCCESS);
            check_st(&st, MPI_INT, rank, 6000 + k, n,
                     order ? "Isend then Irecv to oneself" : "Irecv then Isend to oneself", n);
            bad = first_bad(rb, n, rank, 600 + k);
            CHECK(bad < 0 && rb[n] == 0, "to oneself, %d ints, order %d: element %d wrong", n, order, bad);
        }
        fill(sb, n, rank, 700 + k);
        memset(rb, 0, (n + 1) * sizeof(int));
        CHECK_CLASS(MPI_Sendrecv(sb, n, MPI_INT, rank, 7, rb, n, MPI_INT, rank, 7, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        check_st(&st, MPI_INT, rank, 7, n, "MPI_Sendrecv with oneself", n);
        CHECK(first_bad(rb, n, rank, 700 + k) < 0, "MPI_Sendrecv with oneself, %d ints: wrong data", n);
        fill(rb, n, rank, 800 + k);
        CHECK_CLASS(MPI_Sendrecv_replace(rb, n, MPI_INT, rank, 8, rank, 8, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        check_st(&st, MPI_INT, rank, 8, n, "MPI_Sendrecv_replace with oneself", n);
        CHECK(first_bad(rb, n, rank, 800 + k) < 0, "MPI_Sendrecv_replace with oneself, %d ints: wrong data", n);
    }
    free(sb);
    free(rb);
    free(db);
    return mt_finish();
}
