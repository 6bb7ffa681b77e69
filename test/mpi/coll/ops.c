/* Reduction operations on their own: MPI_Reduce_local for every (operation, datatype) pair
 * Courier accepts (the standard's, and MPICH's and Open MPI's extensions: opdata.h;
 * inoutbuf = inbuf op inoutbuf, element by element, checked against a local computation), and
 * MPI_ERR_OP, with MPI_ERRORS_RETURN, for the others (MPI_SUM on MPI_C_BOOL, MPI_BAND on
 * MPI_DOUBLE, MPI_MAXLOC on MPI_INT, ...) with the buffer left alone;
 * MPI_REPLACE and MPI_NO_OP in MPI_Reduce_local, MPI_Reduce and MPI_Allreduce (accumulate-only
 * operations); collectives still agree afterwards. Also user operations with MPI_Reduce_local
 * (argument order for a non-commutative one, MPI_Op_create_c), MPI_Op_commutative,
 * MPI_Op_free (handle reset, predefined operations and MPI_OP_NULL refused). */
#include "opdata.h"

static int invoked;
static void aff_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    invoked++;
    for (int k = 0; k < *len; k++)
        aff_compose((affine *)in + k, (affine *)inout + k);
}
static void aff_op_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    invoked++;
    for (MPI_Count k = 0; k < *len; k++)
        aff_compose((affine *)in + k, (affine *)inout + k);
}


static void local_refused(MPI_Datatype dt, const char *dname, MPI_Op op, const char *oname)
{
    unsigned char in[64], io[64], before[64];
    memset(in, 0x11, sizeof in);
    memset(io, 0x22, sizeof io);
    memcpy(before, io, sizeof io);
    int rc = MPI_Reduce_local(in, io, 1, dt, op), cls = rc;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_Reduce_local %s %s returned class %d, expected MPI_ERR_OP", oname, dname, cls);
    CHECK(memcmp(io, before, sizeof io) == 0, "MPI_Reduce_local %s %s failed but changed inoutbuf", oname, dname);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* MPI_Reduce_local has no communicator: its errors go to MPI_COMM_SELF's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Every accepted pair works; every other one is refused. */
    int defined = 0, refused = 0;
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < NOPS; o++) {
            if (op_accepted(o, types[t].group)) {
                reduce_local_ok(t, o, 1);
                reduce_local_ok(t, o, 1000);
                defined++;
            } else {
                local_refused(types[t].h, types[t].name, op_handle(o), op_name[o]);
                refused++;
            }
        }
    CHECK(defined > 250 && refused > 250, "only %d defined and %d undefined pairs tried", defined, refused);
    /* Accumulate-only operations, and no operation. */
    local_refused(MPI_INT, "MPI_INT", MPI_REPLACE, "MPI_REPLACE");
    local_refused(MPI_DOUBLE, "MPI_DOUBLE", MPI_NO_OP, "MPI_NO_OP");
    local_refused(MPI_INT, "MPI_INT", MPI_OP_NULL, "MPI_OP_NULL");
    /* Count 0 does nothing, even with NULL buffers. */
    CHECK_CLASS(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM), MPI_SUCCESS);

    /* The same errors from collectives, at every process; the collectives agree afterwards. */
    int x = rank + 1, y = -1;
    _Bool b = 1, bb = 0;
    double d = 1.5, dd = 0;
    CHECK_CLASS(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_REPLACE, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(&b, &bb, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce(&d, &dd, 1, MPI_DOUBLE, MPI_BAND, size - 1, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK(y == -1 && !bb && dd == 0, "a refused reduction wrote its receive buffer");
    CHECK_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(y == size * (size + 1) / 2, "MPI_Allreduce after refused ones gave %d", y);

    /* User operations with MPI_Reduce_local: inout = in op inout, for a non-commutative op. */
    MPI_Op op, op_c;
    CHECK_CLASS(MPI_Op_create(aff_op, 0, &op), MPI_SUCCESS);
    CHECK_CLASS(MPI_Op_create_c(aff_op_c, 0, &op_c), MPI_SUCCESS);
    affine f[3], g[3], want;
    for (int k = 0; k < 3; k++) {
        aff_gen(0, k, &f[k]);
        aff_gen(1, k, &g[k]);
    }
    invoked = 0;
    CHECK_CLASS(MPI_Reduce_local(f, g, 3, MPI_2INT, op), MPI_SUCCESS);
    for (int k = 0; k < 3; k++) {
        aff_expected(2, k, &want);
        CHECK(g[k].a == want.a && g[k].b == want.b, "user MPI_Reduce_local element %d is (%d,%d), expected in o "
              "inout = (%d,%d)", k, g[k].a, g[k].b, want.a, want.b);
        aff_gen(1, k, &g[k]);
    }
    CHECK(invoked == 1, "the user function was called %d times for one MPI_Reduce_local", invoked);
    CHECK_CLASS(MPI_Reduce_local_c(f, g, 3, MPI_2INT, op_c), MPI_SUCCESS);
    for (int k = 0; k < 3; k++) {
        aff_expected(2, k, &want);
        CHECK(g[k].a == want.a && g[k].b == want.b, "MPI_Op_create_c op: element %d is (%d,%d), expected (%d,%d)", k,
              g[k].a, g[k].b, want.a, want.b);
    }

    /* MPI_Op_commutative. */
    int commute = -1;
    for (int o = 0; o < NOPS; o++) {
        commute = -1;
        MPI_Op_commutative(op_handle(o), &commute);
        CHECK(commute == 1, "MPI_Op_commutative(%s) gave %d", op_name[o], commute);
    }
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 0, "MPI_Op_commutative of a non-commutative user op gave %d", commute);
    MPI_Op comm_op;
    MPI_Op_create(aff_op, 1, &comm_op);
    MPI_Op_commutative(comm_op, &commute);
    CHECK(commute == 1, "MPI_Op_commutative of an op created commutative gave %d", commute);

    /* MPI_Op_free. */
    MPI_Op old = op;
    CHECK_CLASS(MPI_Op_free(&op), MPI_SUCCESS);
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
    CHECK_CLASS(MPI_Reduce_local(f, g, 3, MPI_2INT, old), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_free(&op), MPI_ERR_OP);
    MPI_Op predefined = MPI_SUM;
    CHECK_CLASS(MPI_Op_free(&predefined), MPI_ERR_OP);
    CHECK(predefined == MPI_SUM, "a refused MPI_Op_free changed the handle");
    CHECK_CLASS(MPI_Op_free(&op_c), MPI_SUCCESS);
    CHECK_CLASS(MPI_Op_free(&comm_op), MPI_SUCCESS);

    /* Many user operations created and freed: handles are recycled, and stay usable. */
    for (int i = 0; i < 2000; i++) {
        MPI_Op t;
        MPI_Op_create(aff_op, i % 2, &t);
        if (i % 500 == 0) {
            aff_gen(1, 0, &g[0]);
            MPI_Reduce_local(f, g, 1, MPI_2INT, t);
            aff_expected(2, 0, &want);
            CHECK(g[0].a == want.a && g[0].b == want.b, "op %d computed (%d,%d)", i, g[0].a, g[0].b);
        }
        MPI_Op_free(&t);
    }
    return mt_finish();
}
