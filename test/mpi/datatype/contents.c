/* MPI_Type_get_envelope and MPI_Type_get_contents: a struct of a vector, its contents read back,
 * the inner type rebuilt from its contents with the same extent, a named type reported as such. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Datatype v, s, t2;
    MPI_Type_vector(3, 2, 5, MPI_INT, &v);
    int bl[2] = {1, 2}; MPI_Aint d[2] = {0, 16}; MPI_Datatype ts[2] = {MPI_DOUBLE, v};
    MPI_Type_create_struct(2, bl, d, ts, &s);
    int ni, na, nt, comb;
    MPI_Type_get_envelope(s, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_STRUCT || ni != 3 || na != 2 || nt != 2) { printf("env %d %d %d %d\n", comb, ni, na, nt); errs++; }
    int ints[3]; MPI_Aint ad[2]; MPI_Datatype dts[2];
    MPI_Type_get_contents(s, 3, 2, 2, ints, ad, dts);
    if (ints[0] != 2 || ints[2] != 2 || ad[1] != 16 || dts[0] != MPI_DOUBLE) { printf("contents\n"); errs++; }
    MPI_Type_get_envelope(dts[1], &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_VECTOR || ni != 3) { printf("inner\n"); errs++; }
    int vi[3]; MPI_Datatype vt; MPI_Type_get_contents(dts[1], 3, 0, 1, vi, NULL, &vt);
    MPI_Type_vector(vi[0], vi[1], vi[2], vt, &t2);
    MPI_Aint lb1, e1, lb2, e2; MPI_Type_get_extent(t2, &lb2, &e2); MPI_Type_get_extent(v, &lb1, &e1);
    if (e1 != e2) { printf("rebuild\n"); errs++; }
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_NAMED) errs++;
    MPI_Type_free(&dts[1]); MPI_Type_free(&t2); MPI_Type_free(&v); MPI_Type_free(&s);
    printf(errs ? "FAILED\n" : " No Errors\n");
    MPI_Finalize();
    return errs;
}
