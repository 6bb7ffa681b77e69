/* gapped.h: a derived type with gaps for reduction tests: two doubles, each followed by a gap
 * of one double (every other double of a buffer), committed. Predefined operations combine it
 * as an array of doubles; the gaps must stay untouched. */
#ifndef GAPPED_H
#define GAPPED_H

#include <mpi.h>

static MPI_Datatype gapped_doubles(void)
{
    MPI_Datatype v2, v;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v2);
    MPI_Type_create_resized(v2, 0, 4 * sizeof(double), &v);
    MPI_Type_free(&v2);
    MPI_Type_commit(&v);
    return v;
}

#endif
