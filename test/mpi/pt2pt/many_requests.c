/* Many requests: 10,000 receives outstanding at once completed by MPI_Waitall, and 2,000 by a
 * loop of MPI_Waitsome and by a loop of MPI_Waitany (each call of those looks at the whole
 * array, as in every MPI: a loop of them costs the square of the count), while the partner sends in an order unlike the
 * posting order (tags in reverse); plus a request that stands twice in one array. Checks every
 * index, status and datum. (bench/requests.c measures what completion costs.) */
#include "mpitest.h"

#define NMAX 10000

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int partner = mt_rank ^ 1;
    int *data = malloc(NMAX * sizeof(int)), *seen = calloc(NMAX, sizeof(int)), *idx = malloc(NMAX * sizeof(int));
    MPI_Request *reqs = malloc((NMAX + 1) * sizeof *reqs);
    MPI_Status *sts = malloc((NMAX + 1) * sizeof *sts);
    if (partner < n) {
        for (int mode = 0; mode < 3; mode++) {
            int N = mode == 0 ? 10000 : 2000;
            if (mt_rank % 2 == 1) {
                for (int i = 0; i < N; i++)
                    MPI_Irecv(&data[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &reqs[i]);
                MPI_Send(NULL, 0, MPI_BYTE, partner, NMAX, MPI_COMM_WORLD); /* all posted */
                memset(seen, 0, NMAX * sizeof(int));
                if (mode == 0) {
                    MPI_Waitall(N, reqs, sts);
                    for (int i = 0; i < N; i++)
                        seen[i] = 1;
                } else if (mode == 1) {
                    int left = N;
                    while (left) {
                        int out;
                        MPI_Waitsome(N, reqs, &out, idx, sts);
                        CHECK(out > 0 && out <= left, "Waitsome gave outcount %d with %d left", out, left);
                        for (int k = 0; k < out; k++) {
                            int i = idx[k];
                            CHECK(!seen[i] && reqs[i] == MPI_REQUEST_NULL && sts[k].MPI_TAG == i,
                                  "Waitsome: index %d (tag %d) twice or wrong", i, sts[k].MPI_TAG);
                            seen[i] = 1;
                        }
                        left -= out;
                    }
                } else {
                    for (int k = 0; k < N; k++) {
                        int i;
                        MPI_Waitany(N, reqs, &i, &sts[0]);
                        CHECK(i >= 0 && i < N && !seen[i] && sts[0].MPI_TAG == i, "Waitany: index %d tag %d", i,
                              sts[0].MPI_TAG);
                        if (i >= 0 && i < N)
                            seen[i] = 1;
                    }
                    int i;
                    MPI_Waitany(N, reqs, &i, MPI_STATUS_IGNORE);
                    CHECK(i == MPI_UNDEFINED, "Waitany on completed requests gave index %d", i);
                }
                for (int i = 0; i < N; i++)
                    CHECK(seen[i] && data[i] == i * 3 + mode, "request %d: seen %d, datum %d", i, seen[i], data[i]);
            } else {
                MPI_Recv(NULL, 0, MPI_BYTE, partner, NMAX, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = N - 1; i >= 0; i--) {
                    int v = i * 3 + mode;
                    MPI_Send(&v, 1, MPI_INT, partner, i, MPI_COMM_WORLD);
                }
            }
        }
        /* One request twice in the array: Waitall must still return. */
        int v = 42, got = 0;
        if (mt_rank % 2 == 1) {
            MPI_Irecv(&got, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &reqs[0]);
            MPI_Request twice[2] = {reqs[0], reqs[0]};
            MPI_Send(NULL, 0, MPI_BYTE, partner, 6, MPI_COMM_WORLD);
            MPI_Waitall(1, twice, MPI_STATUSES_IGNORE);
            CHECK(got == 42, "received %d", got);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_INT, partner, 5, MPI_COMM_WORLD);
        }
    }
    free(data);
    free(seen);
    free(idx);
    free(reqs);
    free(sts);
    return mt_finish();
}
