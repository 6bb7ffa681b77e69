/* Datatype attributes and the calls that name types by size or precision:
 *   - a keyval's copy callback runs on MPI_Type_dup (and may decline to copy), its delete
 *     callback on MPI_Type_delete_attr, on replacement and on MPI_Type_free; MPI_TYPE_DUP_FN
 *     copies the value; attributes on predefined types; a freed keyval keeps its attributes;
 *   - MPI_Type_create_f90_* return the same handle for the same arguments, with the F90
 *     combiner and its arguments as contents, the size of the matching Fortran kind, and cannot
 *     be freed; MPI_Type_match_size, MPI_Type_get_value_index, the _x queries;
 *   - predefined types can be renamed; synonyms answer with the names MPICH gives them. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int errs, copies, deletes;
#define CHECK(cond, ...) do { if (!(cond)) { errs++; printf(__VA_ARGS__); printf("\n"); } } while (0)

static int copy_fn(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)k;
    copies++;
    *flag = *(int *)extra; /* extra says whether to copy */
    *(void **)out = (char *)in + 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int k, void *value, void *extra)
{
    (void)t, (void)k, (void)value, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Datatype t, int k, void *value, void *extra)
{
    (void)t, (void)k, (void)value, (void)extra;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int yes = 1, no = 0, kcopy, knocopy, kdup, flag, cls, rc;
    static char payload[8];
    void *v, *v_attr;
    MPI_Type_create_keyval(copy_fn, delete_fn, &kcopy, &yes);
    MPI_Type_create_keyval(copy_fn, delete_fn, &knocopy, &no);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kdup, NULL);

    MPI_Datatype t, d;
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_get_attr(t, kcopy, &v, &flag);
    CHECK(!flag, "attribute before set");
    MPI_Type_set_attr(t, kcopy, payload);
    MPI_Type_set_attr(t, knocopy, payload);
    MPI_Type_set_attr(t, kdup, payload + 4);
    MPI_Type_get_attr(t, kcopy, &v, &flag);
    CHECK(flag && v == payload, "get after set");
    MPI_Type_dup(t, &d);
    CHECK(copies == 2, "copy callbacks on dup: %d, want 2", copies);
    MPI_Type_get_attr(d, kcopy, &v, &flag);
    CHECK(flag && v == payload + 1, "copied value: flag %d", flag);
    MPI_Type_get_attr(d, knocopy, &v, &flag);
    CHECK(!flag, "a declined copy is absent");
    MPI_Type_get_attr(d, kdup, &v, &flag);
    CHECK(flag && v == payload + 4, "MPI_TYPE_DUP_FN copies the value");
    MPI_Type_set_attr(t, kcopy, payload + 2); /* replacing deletes the old value */
    CHECK(deletes == 1, "replace: %d deletes, want 1", deletes);
    MPI_Type_delete_attr(t, knocopy);
    CHECK(deletes == 2, "delete_attr: %d deletes", deletes);
    rc = MPI_Type_delete_attr(t, knocopy);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "delete of an absent attribute: class %d", cls);
    MPI_Type_free(&t); /* deletes kcopy's attribute (kdup has no delete callback) */
    CHECK(deletes == 3, "free: %d deletes, want 3", deletes);
    MPI_Type_free_keyval(&kcopy);
    CHECK(kcopy == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    MPI_Type_free(&d); /* d's copied attribute still runs its delete callback */
    CHECK(deletes == 4, "free after free_keyval: %d deletes, want 4", deletes);

    /* a handle from MPI_Type_get_contents is the user's own: freeing it leaves the type's
     * attributes (and the type) to the other handle */
    {
        int kk, ni2, na2, nt2, comb2, ints2[1];
        MPI_Datatype v, c, got;
        deletes = 0;
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &kk, NULL);
        MPI_Type_vector(2, 1, 3, MPI_INT, &v);
        MPI_Type_set_attr(v, kk, payload);
        MPI_Type_contiguous(2, v, &c);
        MPI_Type_get_envelope(c, &ni2, &na2, &nt2, &comb2);
        MPI_Type_get_contents(c, 1, 0, 1, ints2, NULL, &got);
        MPI_Type_free(&got);
        MPI_Type_get_attr(v, kk, &v_attr, &flag);
        CHECK(flag && deletes == 0, "freeing a handle from get_contents deleted the attribute (flag %d, deletes %d)",
              flag, deletes);
        MPI_Type_free(&v);
        CHECK(deletes == 1, "the last handle's free runs the delete callback: %d", deletes);
        MPI_Type_free(&c);
        MPI_Type_free_keyval(&kk);
    }

    /* on a predefined type */
    MPI_Type_set_attr(MPI_DOUBLE, kdup, payload);
    MPI_Type_get_attr(MPI_DOUBLE, kdup, &v, &flag);
    CHECK(flag && v == payload, "attribute on MPI_DOUBLE");
    MPI_Type_delete_attr(MPI_DOUBLE, kdup);
    /* a failing delete callback makes MPI_Type_free fail */
    int kfail;
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, failing_delete, &kfail, NULL);
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_set_attr(t, kfail, payload);
    rc = MPI_Type_free(&t);
    CHECK(rc != MPI_SUCCESS, "a failing delete callback: MPI_Type_free returned success");
    rc = MPI_Type_get_attr(MPI_INT, 12345, &v, &flag);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "unknown keyval: class %d", cls);
    MPI_Type_free_keyval(&knocopy);
    MPI_Type_free_keyval(&kdup);

    /* f90 types */
    MPI_Datatype r1, r2, r3, c1, i1;
    MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r1);
    MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r2);
    MPI_Type_create_f90_real(15, 300, &r3);
    MPI_Type_create_f90_complex(MPI_UNDEFINED, 300, &c1);
    MPI_Type_create_f90_integer(9, &i1);
    CHECK(r1 == r2, "the same (p, r) gives the same handle");
    int sz;
    MPI_Type_size(r1, &sz);
    CHECK(sz == 4, "f90 real p=6: size %d", sz);
    MPI_Type_size(r3, &sz);
    CHECK(sz == 8, "f90 real p=15: size %d", sz);
    MPI_Type_size(c1, &sz);
    CHECK(sz == 16, "f90 complex r=300: size %d", sz);
    MPI_Type_size(i1, &sz);
    CHECK(sz == 4, "f90 integer r=9: size %d", sz);
    int ni, na, nt, comb, ints[2];
    MPI_Type_get_envelope(r3, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nt == 0, "f90 real envelope");
    MPI_Type_get_contents(r3, 2, 0, 0, ints, NULL, NULL);
    CHECK(ints[0] == 15 && ints[1] == 300, "f90 real contents %d %d", ints[0], ints[1]);
    MPI_Type_get_envelope(i1, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_F90_INTEGER && ni == 1, "f90 integer envelope");
    double x[2] = {1.5, 2.5}, y[2];
    MPI_Sendrecv(x, 2, r3, 0, 0, y, 2, r3, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK(y[0] == 1.5 && y[1] == 2.5, "f90 real sendrecv");
    double sum[2];
    MPI_Allreduce(x, sum, 2, r3, MPI_SUM, MPI_COMM_SELF);
    CHECK(sum[1] == 2.5, "f90 real reduction");
    rc = MPI_Type_free(&r1);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "freeing an f90 type: class %d", cls);
    rc = MPI_Type_create_f90_real(200, MPI_UNDEFINED, &r1);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "f90 real p=200: class %d", cls);

    /* match_size, value_index, _x */
    MPI_Datatype m;
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m);
    CHECK(m == MPI_REAL8, "match_size real 8");
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &m);
    CHECK(m == MPI_INTEGER2, "match_size integer 2");
    MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m);
    CHECK(m == MPI_COMPLEX16, "match_size complex 16");
    rc = MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "match_size real 3: class %d", cls);
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &m);
    CHECK(m == MPI_DOUBLE_INT, "value_index double int");
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &m);
    CHECK(m == MPI_DATATYPE_NULL, "value_index double long: no pair type");
    MPI_Count xs, xlb, xext;
    MPI_Type_vector(3, 1, 4, MPI_INT, &t);
    MPI_Type_size_x(t, &xs);
    MPI_Type_get_extent_x(t, &xlb, &xext);
    CHECK(xs == 12 && xlb == 0 && xext == 36, "_x queries %lld %lld %lld", (long long)xs, (long long)xlb,
          (long long)xext);
    MPI_Type_get_true_extent_x(t, &xlb, &xext);
    CHECK(xext == 36, "true extent _x");
    MPI_Type_free(&t);

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(MPI_LONG_LONG_INT, name, &len);
    CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0, "name of MPI_LONG_LONG_INT: %s", name);
    MPI_Type_set_name(MPI_FLOAT, "single");
    MPI_Type_get_name(MPI_FLOAT, name, &len);
    CHECK(strcmp(name, "single") == 0 && len == 6, "renamed MPI_FLOAT: %s", name);
    MPI_Type_set_name(MPI_FLOAT, "MPI_FLOAT");
    /* the null handles have names (MPICH and Open MPI answer; mpi4py asks) */
    rc = MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len);
    CHECK(rc == MPI_SUCCESS && !strcmp(name, "MPI_DATATYPE_NULL"), "name of MPI_DATATYPE_NULL: \"%s\" (rc %d)", name, rc);
    rc = MPI_Comm_get_name(MPI_COMM_NULL, name, &len);
    CHECK(rc == MPI_SUCCESS && !strcmp(name, "MPI_COMM_NULL") && len == 13, "name of MPI_COMM_NULL: \"%s\" (rc %d)",
          name, rc);

    printf(errs ? "FAILED: %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return errs != 0;
}
