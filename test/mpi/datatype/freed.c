/* A derived datatype freed right after the nonblocking operations that use it start (MPI_Ibcast,
 * MPI_Irecv): they complete on the data the type describes (the requests hold the type). */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, p, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &p);
    static double a[20000], b[20000];
    for (int i = 0; i < 20000; i++) a[i] = rank == 0 ? i : -1, b[i] = -1;
    MPI_Datatype v; MPI_Request r[2];
    MPI_Type_vector(10000, 1, 2, MPI_DOUBLE, &v); MPI_Type_commit(&v);
    MPI_Ibcast(a, 1, v, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(b, 1, v, (rank + p - 1) % p, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Type_free(&v);
    MPI_Datatype c; MPI_Type_contiguous(10000, MPI_DOUBLE, &c); MPI_Type_commit(&c);
    double s[10000]; for (int i = 0; i < 10000; i++) s[i] = rank * 100000 + i;
    MPI_Send(s, 1, c, (rank + 1) % p, 3, MPI_COMM_WORLD);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 20000; i++) if (a[i] != (i % 2 ? (rank == 0 ? i : -1) : i)) { errs++; break; }
    int from = (rank + p - 1) % p;
    for (int i = 0; i < 20000; i++) if (b[i] != (i % 2 ? -1 : from * 100000 + i / 2)) { errs++; printf("b[%d]=%g\n", i, b[i]); break; }
    MPI_Type_free(&c);
    if (rank == 0) printf(errs ? "FAILED\n" : " No Errors\n");
    MPI_Finalize();
    return errs;
}
