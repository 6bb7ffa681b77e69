/* types.h: the internal types the generated implementation prototypes (cr_impl.h) name (in core,
 * since every layer that implements MPI calls includes cr_impl.h). Each
 * layer defines its structs in its own header; this file only declares them. */
#ifndef CR_BINDING_TYPES_H
#define CR_BINDING_TYPES_H

#include "core/base.h"

typedef struct cr_comm cr_comm;
typedef struct cr_group cr_group;
typedef struct cr_dtype cr_dtype;
typedef struct cr_op cr_op;
typedef struct cr_info cr_info;
typedef struct cr_errhandler cr_errhandler;
typedef struct cr_session cr_session;
typedef struct cr_win cr_win;
typedef struct cr_file cr_file;

/* A vector of counts or displacements as the user passed it: int[] from the int form of a
 * call, MPI_Count[]/MPI_Aint[] (8 bytes) from its _c form. Read without copying. */
typedef struct {
    const void *p;
    int wide;
} cr_cvec;
typedef struct {
    void *p;
    int wide;
} cr_cvec_mut;

static inline cr_cvec cr_cvec_of(const void *p, int wide)
{
    return (cr_cvec){p, wide};
}
static inline cr_cvec_mut cr_cvec_mut_of(void *p, int wide)
{
    return (cr_cvec_mut){p, wide};
}
static inline int64_t cr_cvec_at(cr_cvec v, size_t i)
{
    return v.wide ? ((const int64_t *)v.p)[i] : ((const int *)v.p)[i];
}
static inline void cr_cvec_set(cr_cvec_mut v, size_t i, int64_t x)
{
    if (v.wide)
        ((int64_t *)v.p)[i] = x;
    else
        ((int *)v.p)[i] = (int)x;
}

#endif
