/* MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size with "external32": the bytes
 * are big-endian with the standard's sizes (a long is 4 bytes, a wchar_t 2, a long double IEEE
 * quadruple precision), a struct of mixed types and a strided vector round-trip, the gaps of the
 * receiving buffer stay untouched, and bad input returns the right error class. */
#include <mpi.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <wchar.h>

static int errs;
#define CHECK(cond, ...) do { if (!(cond)) { errs++; printf(__VA_ARGS__); printf("\n"); } } while (0)

static void expect_bytes(const char *what, const unsigned char *got, const unsigned char *want, int n)
{
    if (memcmp(got, want, n) == 0)
        return;
    errs++;
    printf("%s:", what);
    for (int i = 0; i < n; i++)
        printf(" %02x/%02x", got[i], want[i]);
    printf("\n");
}

/* Packs one value of type t and compares the external32 bytes, then unpacks them back. */
static void one(const char *what, MPI_Datatype t, const void *value, int vsize, const unsigned char *want, int n)
{
    unsigned char buf[64], back[64];
    MPI_Aint pos = 0, size;
    MPI_Pack_external_size("external32", 1, t, &size);
    CHECK(size == n, "%s: external size %ld, want %d", what, (long)size, n);
    MPI_Pack_external("external32", value, 1, t, buf, sizeof buf, &pos);
    CHECK(pos == n, "%s: position %ld, want %d", what, (long)pos, n);
    expect_bytes(what, buf, want, n);
    memset(back, 0, sizeof back);
    pos = 0;
    MPI_Unpack_external("external32", buf, n, &pos, back, 1, t);
    CHECK(pos == n && memcmp(back, value, vsize) == 0, "%s: round trip", what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int i32 = 0x01020304;
    one("int", MPI_INT, &i32, 4, (const unsigned char[]){1, 2, 3, 4}, 4);
    long l = -2;
    one("long", MPI_LONG, &l, sizeof l, (const unsigned char[]){0xff, 0xff, 0xff, 0xfe}, 4);
    unsigned long ul = 0x0a0b0c0dUL;
    one("unsigned long", MPI_UNSIGNED_LONG, &ul, sizeof ul, (const unsigned char[]){0x0a, 0x0b, 0x0c, 0x0d}, 4);
    short s = 0x1234;
    one("short", MPI_SHORT, &s, 2, (const unsigned char[]){0x12, 0x34}, 2);
    double d = 1.0;
    one("double", MPI_DOUBLE, &d, 8, (const unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 8);
    float f = -2.0f;
    one("float", MPI_FLOAT, &f, 4, (const unsigned char[]){0xc0, 0, 0, 0}, 4);
    wchar_t w = L'A';
    one("wchar", MPI_WCHAR, &w, sizeof w, (const unsigned char[]){0, 0x41}, 2);
    long long ll = 0x0102030405060708LL;
    one("long long", MPI_LONG_LONG, &ll, 8, (const unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
    char c = 'z';
    one("char", MPI_CHAR, &c, 1, (const unsigned char[]){'z'}, 1);
    long double ld = 1.0L;
    one("long double", MPI_LONG_DOUBLE, &ld, 10, (const unsigned char[]){0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 16);
    struct { double v; int i; } di = {0.5, 7};
    one("double int", MPI_DOUBLE_INT, &di, 12, (const unsigned char[]){0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, 12);
    float _Complex z = 1.0f + 2.0f * (float _Complex)1.0fi;
    one("complex", MPI_C_FLOAT_COMPLEX, &z, 8, (const unsigned char[]){0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}, 8);

    /* A struct {int; long; char} of two elements, and a vector of it: sizes add up per member,
     * with no padding in the external form. */
    struct rec { int a; long b; char c; } recs[8];
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_LONG, MPI_CHAR}, rt, vt;
    MPI_Type_create_struct(3, bl, disp, types, &rt);
    MPI_Type_vector(2, 1, 3, rt, &vt); /* elements 0 and 3 */
    MPI_Type_commit(&vt);
    for (int k = 0; k < 8; k++)
        recs[k] = (struct rec){100 + k, -1000 - k, (char)('a' + k)};
    MPI_Aint size, pos = 0;
    MPI_Pack_external_size("external32", 2, vt, &size);
    CHECK(size == 2 * 2 * 9, "vector of struct: external size %ld, want 36", (long)size);
    unsigned char buf[64];
    MPI_Pack_external("external32", recs, 2, vt, buf, sizeof buf, &pos);
    CHECK(pos == 36, "vector of struct (records 0, 3, 4, 7): position %ld", (long)pos);
    /* element 3: int 103, long -1003, char 'd' */
    expect_bytes("struct element 3", buf + 9, (const unsigned char[]){0, 0, 0, 103, 0xff, 0xff, 0xfc, 0x15, 'd'}, 9);
    struct rec back[12];
    memset(back, 0x5a, sizeof back);
    pos = 0;
    MPI_Unpack_external("external32", buf, 36, &pos, back, 2, vt);
    /* vt's extent is 4 records: its two elements cover records 0, 3 and 4, 7; the rest are gaps */
    for (int k = 0; k < 12; k++) {
        unsigned char *p = (unsigned char *)&back[k];
        if (k != 0 && k != 3 && k != 4 && k != 7)
            CHECK(p[0] == 0x5a && p[sizeof(struct rec) - 1] == 0x5a, "gap record %d was written", k);
    }
    CHECK(back[0].a == 100 && back[0].b == -1000 && back[0].c == 'a' && back[3].a == 103 && back[3].b == -1003 &&
              back[4].a == 104 && back[7].a == 107 && back[7].c == 'h',
          "struct round trip: %d %ld %d %ld %d %d", back[0].a, back[0].b, back[3].a, back[3].b, back[4].a, back[7].a);

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, rc;
    pos = 0;
    rc = MPI_Pack_external("external32", recs, 2, vt, buf, 20, &pos);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "outsize too small: class %d", cls);
    pos = 0;
    rc = MPI_Pack_external("native", &i32, 1, MPI_INT, buf, sizeof buf, &pos);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "datarep native: class %d", cls);
    pos = 0;
    rc = MPI_Unpack_external("external32", buf, 3, &pos, &i32, 1, MPI_INT);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "insize too small: class %d", cls);
    MPI_Type_free(&vt);
    MPI_Type_free(&rt);
    printf(errs ? "FAILED: %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return errs != 0;
}
