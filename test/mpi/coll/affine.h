/* affine.h: an operation that does not commute, for checking that reductions combine in rank
 * order: elements are affine maps x -> a x + b (mod P), as pairs of ints (MPI_2INT). */
#ifndef AFFINE_H
#define AFFINE_H

#include <mpi.h>

#define P 46337 /* (P-1)^2 fits in an int */

typedef struct {
    int a, b;
} affine;

/* MPI combines left to right in rank order, result = v0 op v1 op ...; (f op g) is "g after f":
 * (a, b) op (c, d) = (c a, c b + d). As a user function: inout = in op inout. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    affine *f = in, *g = inout;
    for (int i = 0; i < *len; i++) {
        affine r = {(g[i].a * f[i].a) % P, (g[i].a * f[i].b + g[i].b) % P};
        g[i] = r;
    }
}

/* Process `rank`'s element i in round k. */
static affine map_of(int rank, int k, int i)
{
    affine m = {(rank * 7 + k * 3 + i) % (P - 2) + 2, (rank * 11 + k + 5 * i) % P};
    return m;
}

/* The reduction of element i over `size` processes in round k. */
static affine expected(int size, int k, int i)
{
    affine acc = {1, 0}; /* identity */
    for (int r = 0; r < size; r++) {
        affine m = map_of(r, k, i);
        acc = (affine){(m.a * acc.a) % P, (m.a * acc.b + m.b) % P};
    }
    return acc;
}

#endif
