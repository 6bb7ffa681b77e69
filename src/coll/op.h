/* op.h: reduction operations: the predefined ones on every type the standard allows them on
 * and every type MPICH or Open MPI also reduces with them (doc/reductions.md), and
 * user-defined ones (MPI_Op_create). An operation is applied as MPI defines it:
 * inout[i] = in[i] op inout[i], elementwise, for `count` elements of a datatype. */
#ifndef CR_OP_H
#define CR_OP_H

#include "dt/dtype.h"

typedef void cr_op_fn(const void *in, void *inout, MPI_Count count);

typedef struct cr_op {
    cr_obj obj;
    bool commutative;
    int8_t index;       /* predefined: position in the table of op.c; -1 for user ops */
    bool large;         /* user op created with MPI_Op_create_c */
    void (*user_fn)(void);
    const char *name;
} cr_op;

static inline cr_op *cr_op_get(MPI_Op h)
{
    return (cr_op *)cr_handle_get((uintptr_t)h, CR_KIND_OP);
}

void cr_op_setup(void);
/* Checks that `op` applies to `dt`; returns an MPI_ERR_OP code naming both, and the operations
 * that do apply to `dt`, when it does not. */
int cr_op_check(const cr_op *op, const cr_dtype *dt);
/* inout = in op inout, for `count` elements of `dt` laid out with dt's extent. */
void cr_op_apply(const cr_op *op, const void *in, void *inout, MPI_Count count, cr_dtype *dt);

#endif
