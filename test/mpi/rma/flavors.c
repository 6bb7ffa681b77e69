/* flavors.c: put/get data through every window flavour (create, allocate, allocate_shared, dynamic) with contiguous and derived datatypes, disp units, MPI_PROC_NULL, zero counts, self, in fence epochs; attributes, group, name, info; windows over split, reversed and self communicators; many windows created and freed. */
#include "mpitest.h"

#include <stdint.h>

#define NW 1024 /* ints of window memory per process */

static const int flavors[4] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_SHARED,
                               MPI_WIN_FLAVOR_DYNAMIC};


/* A window of NW ints per process, and how to reach element i of any process's part. */
typedef struct {
    int flavor;
    MPI_Comm comm;
    int rank, size;
    MPI_Win win;
    int *mem;          /* this process's window memory */
    int *user;         /* memory this test allocated (create, dynamic), else NULL */
    int unit;          /* this process's disp_unit */
    int *unit_of;      /* every process's disp_unit */
    MPI_Aint *addr_of; /* dynamic: every process's address of its memory */
    const char *what;  /* for messages */
} win_t;

/* Displacement of element `elem` (a multiple of 4) of process `t`'s window memory. */
static MPI_Aint disp(const win_t *w, int t, int elem)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return MPI_Aint_add(w->addr_of[t], (MPI_Aint)elem * (MPI_Aint)sizeof(int));
    return (MPI_Aint)elem * (MPI_Aint)sizeof(int) / w->unit_of[t];
}

/* The disp_unit this flavour uses at process r: several differ between processes. */
static int unit_for(int flavor, int r)
{
    static const int create_units[4] = {4, 16, 1, 8}, shared_units[4] = {8, 1, 16, 4};
    switch (flavor) {
    case MPI_WIN_FLAVOR_CREATE: return create_units[r % 4];
    case MPI_WIN_FLAVOR_ALLOCATE: return (int)sizeof(int);
    case MPI_WIN_FLAVOR_SHARED: return shared_units[r % 4];
    }
    return 1;
}

static int init_value(int t, int i)
{
    return -(t + 1) * 100000 - i;
}

static int src_value(int o, int i)
{
    return (o + 1) * 100000 + i;
}

static void check_attrs(const win_t *w, void *want_base, MPI_Aint want_size)
{
    void *base = (void *)1;
    MPI_Aint *size = NULL;
    int *unit = NULL, *flavor = NULL, *model = NULL, f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0;
    CHECK_CLASS(MPI_Win_get_attr(w->win, MPI_WIN_BASE, &base, &f1), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_attr(w->win, MPI_WIN_SIZE, &size, &f2), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_attr(w->win, MPI_WIN_DISP_UNIT, &unit, &f3), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_attr(w->win, MPI_WIN_CREATE_FLAVOR, &flavor, &f4), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &f5), MPI_SUCCESS);
    CHECK(f1 && f2 && f3 && f4 && f5, "%s: predefined attributes missing: %d %d %d %d %d", w->what, f1, f2, f3, f4,
          f5);
    if (!(f1 && f2 && f3 && f4 && f5))
        return;
    CHECK(base == want_base, "%s: MPI_WIN_BASE %p, want %p", w->what, base, want_base);
    CHECK(*size == want_size, "%s: MPI_WIN_SIZE %ld, want %ld", w->what, (long)*size, (long)want_size);
    CHECK(*unit == w->unit, "%s: MPI_WIN_DISP_UNIT %d, want %d", w->what, *unit, w->unit);
    CHECK(*flavor == w->flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, want %d", w->what, *flavor, w->flavor);
    CHECK(*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE, "%s: MPI_WIN_MODEL %d", w->what, *model);
    if (w->flavor == MPI_WIN_FLAVOR_SHARED)
        CHECK(*model == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL %d for shared memory, want MPI_WIN_UNIFIED", w->what,
              *model);
}

static int delete_calls;
static int count_delete(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    delete_calls += *(int *)val;
    return MPI_SUCCESS;
}

/* User attributes, name, group and info of a window. */
static void check_window_object(win_t *w)
{
    /* user keyvals: set, get, overwrite (deletes the old value), delete */
    static int a = 1, b = 10; /* attribute values live until MPI_Win_free */
    int key, flag = 0, *got = NULL;
    CHECK_CLASS(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_attr(w->win, key, &got, &flag), MPI_SUCCESS);
    CHECK(!flag, "%s: unset keyval has a value", w->what);
    delete_calls = 0;
    CHECK_CLASS(MPI_Win_set_attr(w->win, key, &a), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_attr(w->win, key, &got, &flag), MPI_SUCCESS);
    CHECK(flag && got == &a, "%s: attribute get: flag %d, %p want %p", w->what, flag, (void *)got, (void *)&a);
    CHECK_CLASS(MPI_Win_set_attr(w->win, key, &b), MPI_SUCCESS);
    CHECK(delete_calls == 1, "%s: overwriting an attribute called the delete function %d (weighted) times", w->what,
          delete_calls);
    CHECK_CLASS(MPI_Win_get_attr(w->win, key, &got, &flag), MPI_SUCCESS);
    CHECK(flag && got == &b, "%s: attribute after overwrite", w->what);
    CHECK_CLASS(MPI_Win_delete_attr(w->win, key), MPI_SUCCESS);
    CHECK(delete_calls == 11, "%s: delete_attr: delete calls weighted %d, want 11", w->what, delete_calls);
    CHECK_CLASS(MPI_Win_get_attr(w->win, key, &got, &flag), MPI_SUCCESS);
    CHECK(!flag, "%s: deleted attribute still there", w->what);
    CHECK_CLASS(MPI_Win_set_attr(w->win, key, &a), MPI_SUCCESS); /* deleted by MPI_Win_free (checked there) */
    CHECK_CLASS(MPI_Win_free_keyval(&key), MPI_SUCCESS);
    CHECK(key == MPI_KEYVAL_INVALID, "%s: MPI_Win_free_keyval left the keyval", w->what);

    /* name */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_CLASS(MPI_Win_get_name(w->win, name, &len), MPI_SUCCESS);
    CHECK(len == 0 && name[0] == 0, "%s: default name \"%s\" (%d)", w->what, name, len);
    CHECK_CLASS(MPI_Win_get_name(MPI_WIN_NULL, name, &len), MPI_SUCCESS); /* the null handle's name */
    CHECK(!strcmp(name, "MPI_WIN_NULL") && len == 12, "name of MPI_WIN_NULL: \"%s\" (%d)", name, len);
    char want[MPI_MAX_OBJECT_NAME];
    snprintf(want, sizeof want, "window %s of %d", w->what, w->size);
    CHECK_CLASS(MPI_Win_set_name(w->win, want), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_name(w->win, name, &len), MPI_SUCCESS);
    CHECK(!strcmp(name, want) && len == (int)strlen(want), "%s: name \"%s\" (%d), want \"%s\"", w->what, name, len,
          want);
    memset(want, 'x', MPI_MAX_OBJECT_NAME - 1);
    want[MPI_MAX_OBJECT_NAME - 1] = 0;
    CHECK_CLASS(MPI_Win_set_name(w->win, want), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_name(w->win, name, &len), MPI_SUCCESS);
    CHECK(!strcmp(name, want) && len == MPI_MAX_OBJECT_NAME - 1, "%s: longest name has %d characters", w->what, len);

    /* group: the communicator's */
    MPI_Group wg, cg, world;
    int cmp = -1;
    CHECK_CLASS(MPI_Win_get_group(w->win, &wg), MPI_SUCCESS);
    MPI_Comm_group(w->comm, &cg);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_compare(wg, cg, &cmp);
    CHECK(cmp == MPI_IDENT, "%s: window group vs communicator group: %d, want MPI_IDENT", w->what, cmp);
    int gsize = -1, grank = -1;
    MPI_Group_size(wg, &gsize);
    MPI_Group_rank(wg, &grank);
    CHECK(gsize == w->size && grank == w->rank, "%s: window group size %d rank %d", w->what, gsize, grank);
    int *in = malloc((size_t)w->size * sizeof(int)), *out = malloc((size_t)w->size * sizeof(int)),
        *out2 = malloc((size_t)w->size * sizeof(int));
    for (int i = 0; i < w->size; i++)
        in[i] = i;
    MPI_Group_translate_ranks(wg, w->size, in, world, out);
    MPI_Group_translate_ranks(cg, w->size, in, world, out2);
    for (int i = 0; i < w->size; i++)
        CHECK(out[i] == out2[i], "%s: window group rank %d is world %d, communicator's is %d", w->what, i, out[i],
              out2[i]);
    free(in);
    free(out);
    free(out2);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    MPI_Group_free(&world);

    /* info: the hints in use, with the ones given at creation */
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL + 1];
    CHECK_CLASS(MPI_Win_get_info(w->win, &used), MPI_SUCCESS);
    static const char *keys[] = {"no_locks", "accumulate_ordering", "accumulate_ops", "same_size", "same_disp_unit"};
    for (int k = 0; k < 5; k++) {
        len = sizeof v;
        CHECK_CLASS(MPI_Info_get_string(used, keys[k], &len, v, &flag), MPI_SUCCESS);
        CHECK(flag, "%s: MPI_Win_get_info has no %s", w->what, keys[k]);
    }
    len = sizeof v;
    MPI_Info_get_string(used, "accumulate_ordering", &len, v, &flag);
    CHECK(flag && !strcmp(v, "none"), "%s: accumulate_ordering \"%s\", given \"none\"", w->what, flag ? v : "");
    len = sizeof v;
    MPI_Info_get_string(used, "no_locks", &len, v, &flag);
    CHECK(flag && !strcmp(v, "false"), "%s: no_locks \"%s\", want the default \"false\"", w->what, flag ? v : "");
    len = sizeof v;
    MPI_Info_get_string(used, "accumulate_ops", &len, v, &flag);
    CHECK(flag && !strcmp(v, "same_op_no_op"), "%s: accumulate_ops \"%s\", want the default", w->what, flag ? v : "");
    len = sizeof v;
    MPI_Info_get_string(used, "same_disp_unit", &len, v, &flag);
    CHECK(flag && !strcmp(v, "false"), "%s: same_disp_unit \"%s\", want the default", w->what, flag ? v : "");
    len = sizeof v;
    MPI_Info_get_string(used, "alloc_shared_noncontig", &len, v, &flag);
    if (w->flavor == MPI_WIN_FLAVOR_SHARED)
        CHECK(flag && !strcmp(v, "false"), "%s: alloc_shared_noncontig \"%s\"", w->what, flag ? v : "(none)");
    MPI_Info_free(&used);
    /* set_info changes the accumulate hints */
    MPI_Info change;
    MPI_Info_create(&change);
    MPI_Info_set(change, "accumulate_ordering", "rar,waw");
    CHECK_CLASS(MPI_Win_set_info(w->win, change), MPI_SUCCESS);
    MPI_Info_free(&change);
    CHECK_CLASS(MPI_Win_get_info(w->win, &used), MPI_SUCCESS);
    len = sizeof v;
    MPI_Info_get_string(used, "accumulate_ordering", &len, v, &flag);
    CHECK(flag && !strcmp(v, "rar,waw"), "%s: accumulate_ordering after set_info \"%s\"", w->what, flag ? v : "");
    MPI_Info_free(&used);
}

/* Makes a window of `flavor` over comm: NW ints per process, initialised to init_value. */
static void make_window(win_t *w, int flavor, MPI_Comm comm, const char *commname)
{
    static char what[128];
    memset(w, 0, sizeof *w);
    w->flavor = flavor;
    w->comm = comm;
    MPI_Comm_rank(comm, &w->rank);
    MPI_Comm_size(comm, &w->size);
    snprintf(what, sizeof what, "%s over %s", mt_flavor_name(flavor), commname);
    w->what = what;
    w->unit = unit_for(flavor, w->rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Aint bytes = NW * sizeof(int);
    void *base = NULL;
    switch (flavor) {
    case MPI_WIN_FLAVOR_CREATE:
        w->user = malloc(bytes + 64);
        w->mem = w->user + 3; /* not the start of the allocation */
        CHECK_CLASS(MPI_Win_create(w->mem, bytes, w->unit, info, comm, &w->win), MPI_SUCCESS);
        base = w->mem;
        break;
    case MPI_WIN_FLAVOR_ALLOCATE:
        CHECK_CLASS(MPI_Win_allocate(bytes, w->unit, info, comm, &w->mem, &w->win), MPI_SUCCESS);
        base = w->mem;
        CHECK(((uintptr_t)w->mem & 7) == 0, "%s: memory at %p is not aligned", w->what, (void *)w->mem);
        break;
    case MPI_WIN_FLAVOR_SHARED:
        CHECK_CLASS(MPI_Win_allocate_shared(bytes, w->unit, info, comm, &w->mem, &w->win), MPI_SUCCESS);
        base = w->mem;
        break;
    case MPI_WIN_FLAVOR_DYNAMIC:
        CHECK_CLASS(MPI_Win_create_dynamic(info, comm, &w->win), MPI_SUCCESS);
        w->user = malloc(bytes);
        w->mem = w->user;
        CHECK_CLASS(MPI_Win_attach(w->win, w->mem, bytes), MPI_SUCCESS);
        base = MPI_BOTTOM;
        bytes = 0;
        break;
    }
    MPI_Info_free(&info);
    check_attrs(w, base, bytes);
    w->unit_of = malloc((size_t)w->size * sizeof(int));
    w->addr_of = malloc((size_t)w->size * sizeof(MPI_Aint));
    MPI_Aint mine;
    MPI_Get_address(w->mem, &mine);
    MPI_Allgather(&w->unit, 1, MPI_INT, w->unit_of, 1, MPI_INT, comm);
    MPI_Allgather(&mine, 1, MPI_AINT, w->addr_of, 1, MPI_AINT, comm);
    for (int i = 0; i < NW; i++)
        w->mem[i] = init_value(w->rank, i);
}

static void free_window(win_t *w)
{
    delete_calls = 0;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        CHECK_CLASS(MPI_Win_detach(w->win, w->mem), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_free(&w->win), MPI_SUCCESS);
    CHECK(w->win == MPI_WIN_NULL, "%s: MPI_Win_free left the handle", w->what);
    CHECK(delete_calls == 1, "%s: MPI_Win_free deleted the attributes with weight %d, want 1", w->what, delete_calls);
    free(w->user);
    free(w->unit_of);
    free(w->addr_of);
}

/* What process t's memory holds after the put epoch of exercise(). */
static int after_puts(int t, int p, int i)
{
    int l = (t - 1 + p) % p, r = (t + 1) % p;
    if (i < 8)
        return src_value(l, i);
    if (i < 16)
        return src_value(t, i);
    if (i == 20)
        return src_value(l, 100);
    if (i == 23)
        return src_value(l, 102);
    if (i == 24)
        return src_value(l, 104);
    if (i == 27)
        return src_value(l, 106);
    if (i >= 28 && i < 32) {
        static const int sub[4] = {505, 506, 509, 510};
        return src_value(l, sub[i - 28]);
    }
    if (i == 37)
        return src_value(l, 200);
    if (i == 38)
        return src_value(l, 203);
    if (i == 41)
        return src_value(l, 206);
    if (i == 42)
        return src_value(l, 209);
    if (i == 48 || i == 51 || i == 56 || i == 59)
        return src_value(l, 300 + (i == 51) + 2 * (i == 56) + 3 * (i == 59));
    if (i >= 64 && i < 664 && (i - 64) % 2 == 0)
        return src_value(r, 400 + (i - 64) / 2);
    if (i >= NW - 4)
        return src_value(l, 1000 + i - (NW - 4));
    return init_value(t, i);
}

static void check_ints(const win_t *w, const char *what, const int *got, const int *want, int n)
{
    int bad = 0;
    for (int i = 0; i < n && bad < 5; i++)
        if (got[i] != want[i]) {
            CHECK(got[i] == want[i], "%s: %s[%d] = %d, want %d", w->what, what, i, got[i], want[i]);
            bad++;
        }
}

/* Puts and gets through w, in fence epochs: see after_puts for the layout. */
static void exercise(win_t *w)
{
    int t = w->rank, p = w->size, l = (t - 1 + p) % p, r = (t + 1) % p;
    int *src = malloc(NW * sizeof(int)), *want = malloc(NW * sizeof(int));
    for (int i = 0; i < NW; i++)
        src[i] = src_value(t, i);

    MPI_Datatype vec2, indexed, sub, vec3, resized, big, sub_origin;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec2); /* o[0], o[2], o[4], o[6] */
    int bl[3] = {1, 2, 1}, dl[3] = {0, 3, 7};
    MPI_Type_indexed(3, bl, dl, MPI_INT, &indexed); /* t[0], t[3], t[4], t[7] */
    int sizes[2] = {4, 4}, subsizes[2] = {2, 2}, starts[2] = {1, 1};
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub); /* 5, 6, 9, 10 */
    MPI_Type_vector(4, 1, 3, MPI_INT, &vec3);                                        /* 0, 3, 6, 9 */
    MPI_Datatype v23;
    MPI_Type_vector(2, 1, 3, MPI_INT, &v23);
    MPI_Type_create_resized(v23, 0, 8 * sizeof(int), &resized); /* count 2: 0, 3, 8, 11 */
    MPI_Type_free(&v23);
    MPI_Type_vector(300, 1, 2, MPI_INT, &big); /* 300 pieces: more than one batch of iovecs */
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub_origin);
    MPI_Datatype types[] = {vec2, indexed, sub, vec3, resized, big, sub_origin};
    for (int i = 0; i < 7; i++)
        MPI_Type_commit(&types[i]);
    vec2 = types[0], indexed = types[1], sub = types[2], vec3 = types[3], resized = types[4], big = types[5],
    sub_origin = types[6];

    /* Epoch 1: puts. */
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(src, 8, MPI_INT, r, disp(w, r, 0), 8, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(src + 8, 8, MPI_INT, t, disp(w, t, 8), 8, MPI_INT, w->win), MPI_SUCCESS); /* self */
    CHECK_CLASS(MPI_Put(src, 0, MPI_INT, r, disp(w, r, 16), 0, MPI_INT, w->win), MPI_SUCCESS);    /* nothing */
    CHECK_CLASS(MPI_Put(src, 4, MPI_INT, MPI_PROC_NULL, 16, 4, MPI_INT, w->win), MPI_SUCCESS);    /* nothing */
    CHECK_CLASS(MPI_Put(src + 100, 1, vec2, r, disp(w, r, 20), 1, indexed, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(src + 500, 1, sub_origin, r, disp(w, r, 28), 4, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(src + 200, 1, vec3, r, disp(w, r, 32), 1, sub, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(src + 300, 4, MPI_INT, r, disp(w, r, 48), 2, resized, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(src + 400, 300, MPI_INT, l, disp(w, l, 64), 1, big, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(src + 1000, 4, MPI_INT, r, disp(w, r, NW - 4), 4, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(0, w->win), MPI_SUCCESS);
    for (int i = 0; i < NW; i++)
        want[i] = after_puts(t, p, i);
    check_ints(w, "memory after puts", w->mem, want, NW);

    /* allocate_shared: the neighbour's memory, by load */
    if (w->flavor == MPI_WIN_FLAVOR_SHARED) {
        MPI_Aint rsize = -1;
        int runit = -1;
        int *rmem = NULL;
        CHECK_CLASS(MPI_Win_shared_query(w->win, r, &rsize, &runit, &rmem), MPI_SUCCESS);
        CHECK(rsize == NW * (MPI_Aint)sizeof(int) && runit == w->unit_of[r], "%s: shared_query size %ld unit %d",
              w->what, (long)rsize, runit);
        if (rmem) {
            for (int i = 0; i < NW; i++)
                want[i] = after_puts(r, p, i);
            check_ints(w, "right neighbour's memory by load", rmem, want, NW);
        }
    }

    /* Epoch 2: gets, from the right neighbour, self, nowhere. */
    int *whole = malloc(NW * sizeof(int)), strided[8], four[4], three[300], self8[8], none[4] = {-7, -7, -7, -7};
    for (int i = 0; i < 8; i++)
        strided[i] = -7;
    CHECK_CLASS(MPI_Win_fence(0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(whole, NW, MPI_INT, r, disp(w, r, 0), NW, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(strided, 1, vec2, r, disp(w, r, 20), 1, indexed, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(four, 4, MPI_INT, r, disp(w, r, 32), 1, sub, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(three, 300, MPI_INT, r, disp(w, r, 64), 1, big, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(self8, 8, MPI_INT, t, disp(w, t, 0), 8, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(none, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(none, 0, MPI_INT, r, disp(w, r, 0), 0, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(0, w->win), MPI_SUCCESS);
    for (int i = 0; i < NW; i++)
        want[i] = after_puts(r, p, i);
    check_ints(w, "get of the whole window", whole, want, NW);
    int want8[8] = {after_puts(r, p, 20), -7, after_puts(r, p, 23), -7, after_puts(r, p, 24), -7,
                    after_puts(r, p, 27), -7};
    check_ints(w, "get indexed into vector", strided, want8, 8);
    int want4[4] = {after_puts(r, p, 37), after_puts(r, p, 38), after_puts(r, p, 41), after_puts(r, p, 42)};
    check_ints(w, "get of a subarray", four, want4, 4);
    for (int i = 0; i < 300; i++)
        want[i] = after_puts(r, p, 64 + 2 * i);
    check_ints(w, "get of a 300-piece vector", three, want, 300);
    for (int i = 0; i < 8; i++)
        want[i] = after_puts(t, p, i);
    check_ints(w, "get from self", self8, want, 8);
    int minus7[4] = {-7, -7, -7, -7};
    check_ints(w, "get from MPI_PROC_NULL or of nothing", none, minus7, 4);

    /* Epoch 3: a get with a derived origin type (scatter into a subarray) and a put back into
     * the left neighbour's untouched region, whose data it then reads. */
    int grid[16];
    for (int i = 0; i < 16; i++)
        grid[i] = -9;
    CHECK_CLASS(MPI_Win_fence(0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(grid, 1, sub_origin, r, disp(w, r, 28), 4, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_fence(0, w->win), MPI_SUCCESS);
    int wantg[16];
    for (int i = 0; i < 16; i++)
        wantg[i] = -9;
    wantg[5] = after_puts(r, p, 28), wantg[6] = after_puts(r, p, 29), wantg[9] = after_puts(r, p, 30),
    wantg[10] = after_puts(r, p, 31);
    check_ints(w, "get into a subarray", grid, wantg, 16);

    /* Passive target on self, with flush between a put and a get of the same place, and on the
     * right neighbour (a shared lock and a get). */
    CHECK_CLASS(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win), MPI_SUCCESS);
    int v4[4] = {11, 22, 33, 44}, back[4] = {0, 0, 0, 0};
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(v4, 4, MPI_INT, t, disp(w, t, 664), 4, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(t, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(back, 4, MPI_INT, t, disp(w, t, 664), 4, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(t, w->win), MPI_SUCCESS);
    check_ints(w, "get after put and flush on self", back, v4, 4);
    check_ints(w, "memory after put on self", w->mem + 664, v4, 4);
    MPI_Barrier(w->comm); /* everyone's self put is done before the neighbour reads it */
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get(back, 4, MPI_INT, r, disp(w, r, 664), 4, MPI_INT, w->win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(r, w->win), MPI_SUCCESS);
    check_ints(w, "get under a shared lock", back, v4, 4);
    MPI_Barrier(w->comm);

    for (int i = 0; i < 7; i++)
        MPI_Type_free(&types[i]);
    free(src);
    free(want);
    free(whole);
}

/* Per-process disp units that are not powers of two: process t's unit is 4 * (t % 3 + 1), and
 * origin o puts its rank at displacement o + 1 of every process, element (o + 1) * (t % 3 + 1). */
static void disp_units(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int unit = 4 * (rank % 3 + 1), n = 3 * (size + 2), *mem = NULL, *user = NULL;
    MPI_Win win;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        user = mem = malloc((size_t)n * sizeof(int));
        CHECK_CLASS(MPI_Win_create(mem, (MPI_Aint)n * sizeof(int), unit, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                    MPI_SUCCESS);
    } else {
        CHECK_CLASS(MPI_Win_allocate((MPI_Aint)n * sizeof(int), unit, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win),
                    MPI_SUCCESS);
    }
    for (int i = 0; i < n; i++)
        mem[i] = -1;
    MPI_Win_fence(0, win);
    for (int t = 0; t < size; t++)
        CHECK_CLASS(MPI_Put(&rank, 1, MPI_INT, t, rank + 1, 1, MPI_INT, win), MPI_SUCCESS);
    MPI_Win_fence(0, win);
    for (int i = 0; i < n; i++) {
        int step = rank % 3 + 1, want = i % step == 0 && i / step >= 1 && i / step <= size ? i / step - 1 : -1;
        CHECK(mem[i] == want, "%s disp_unit %d: mem[%d] = %d, want %d", mt_flavor_name(flavor), unit, i, mem[i], want);
    }
    /* and back: a get of every process's element at displacement rank + 1 */
    int *got = malloc((size_t)size * sizeof(int));
    for (int t = 0; t < size; t++)
        CHECK_CLASS(MPI_Get(&got[t], 1, MPI_INT, t, rank + 1, 1, MPI_INT, win), MPI_SUCCESS);
    MPI_Win_fence(0, win);
    for (int t = 0; t < size; t++)
        CHECK(got[t] == rank, "%s disp_unit: get from %d = %d, want %d", mt_flavor_name(flavor), t, got[t], rank);
    free(got);
    MPI_Win_free(&win);
    free(user);
}

/* A dynamic window with several regions attached, detached and attached again. */
static void dynamic_regions(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int r = (rank + 1) % size, l = (rank - 1 + size) % size;
    MPI_Win win;
    CHECK_CLASS(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    double *a = malloc(16 * sizeof(double));
    long *b = malloc(8 * sizeof(long));
    for (int i = 0; i < 16; i++)
        a[i] = -1;
    for (int i = 0; i < 8; i++)
        b[i] = -1;
    CHECK_CLASS(MPI_Win_attach(win, a, 16 * sizeof(double)), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_attach(win, b, 8 * sizeof(long)), MPI_SUCCESS);
    MPI_Aint mine[2], *all = malloc((size_t)size * 2 * sizeof(MPI_Aint));
    MPI_Get_address(a, &mine[0]);
    MPI_Get_address(&b[4], &mine[1]); /* the middle of a region */
    MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD);
    double x[3] = {rank + 0.5, rank + 1.5, rank + 2.5};
    long y[2] = {rank * 7L, rank * 7L + 1};
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Put(x, 3, MPI_DOUBLE, r, MPI_Aint_add(all[2 * r], 5 * sizeof(double)), 3, MPI_DOUBLE, win),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(y, 2, MPI_LONG, r, MPI_Aint_add(all[2 * r + 1], -2 * (MPI_Aint)sizeof(long)), 2, MPI_LONG, win),
                MPI_SUCCESS);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 16; i++) {
        double want = i >= 5 && i < 8 ? l + 0.5 + (i - 5) : -1;
        CHECK(a[i] == want, "dynamic region a[%d] = %g, want %g", i, a[i], want);
    }
    for (int i = 0; i < 8; i++) {
        long want = i == 2 ? l * 7L : i == 3 ? l * 7L + 1 : -1;
        CHECK(b[i] == want, "dynamic region b[%d] = %ld, want %ld", i, b[i], want);
    }
    /* detach a, attach a new region c, and use it */
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Win_detach(win, a), MPI_SUCCESS);
    int *c = malloc(4 * sizeof(int));
    for (int i = 0; i < 4; i++)
        c[i] = -1;
    CHECK_CLASS(MPI_Win_attach(win, c, 4 * sizeof(int)), MPI_SUCCESS);
    MPI_Get_address(c, &mine[0]);
    MPI_Allgather(mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Put(&rank, 1, MPI_INT, r, MPI_Aint_add(all[r], 3 * sizeof(int)), 1, MPI_INT, win), MPI_SUCCESS);
    MPI_Win_fence(0, win);
    CHECK(c[3] == l && c[0] == -1 && c[1] == -1 && c[2] == -1, "dynamic region c: %d %d %d %d", c[0], c[1], c[2],
          c[3]);
    /* attributes of a dynamic window */
    void *base = (void *)1;
    MPI_Aint *sz;
    int *unit, flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == MPI_BOTTOM, "dynamic MPI_WIN_BASE %p", base);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
    CHECK(flag && *sz == 0, "dynamic MPI_WIN_SIZE %ld", (long)*sz);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    CHECK(flag && *unit == 1, "dynamic MPI_WIN_DISP_UNIT %d", *unit);
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Win_detach(win, b), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_detach(win, c), MPI_SUCCESS);
    MPI_Win_free(&win);
    free(a);
    free(b);
    free(c);
    free(all);
}

/* Large transfers: 700 KB contiguous to the right neighbour, and a vector of 50000 pieces
 * back from it (many batches of the single copy's iovecs). */
static void large(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int r = (rank + 1) % size, l = (rank - 1 + size) % size;
    const int n = 200000, pieces = 50000; /* ints */
    int *mem = NULL, *user = NULL, *src = malloc((size_t)n * sizeof(int)), *back = malloc(pieces * sizeof(int));
    MPI_Aint bytes = (MPI_Aint)n * sizeof(int), d0 = 0;
    MPI_Win win;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        user = mem = malloc(bytes);
        MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else if (flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        user = mem = malloc(bytes);
        MPI_Win_attach(win, mem, bytes);
    } else {
        MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    }
    MPI_Aint a, *all = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(mem, &a);
    MPI_Allgather(&a, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    int unit = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : sizeof(int);
    for (int i = 0; i < n; i++) {
        src[i] = rank * 1000000 + i;
        mem[i] = -1;
    }
    MPI_Datatype vec;
    MPI_Type_vector(pieces, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Win_fence(0, win);
    d0 = flavor == MPI_WIN_FLAVOR_DYNAMIC ? all[r] : 0;
    CHECK_CLASS(MPI_Put(src, n - 25000, MPI_INT, r, d0 + 25000 * (sizeof(int) / unit), n - 25000, MPI_INT, win),
                MPI_SUCCESS);
    MPI_Win_fence(0, win);
    int bad = 0;
    for (int i = 0; i < n && bad < 3; i++) {
        int want = i < 25000 ? -1 : l * 1000000 + i - 25000;
        if (mem[i] != want) {
            CHECK(mem[i] == want, "%s large put: [%d] = %d, want %d", mt_flavor_name(flavor), i, mem[i], want);
            bad++;
        }
    }
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Get(back, pieces, MPI_INT, r, d0 + 25000 * (sizeof(int) / unit), 1, vec, win), MPI_SUCCESS);
    MPI_Win_fence(0, win);
    for (int i = 0; i < pieces && bad < 6; i++)
        if (back[i] != rank * 1000000 + 3 * i) {
            CHECK(back[i] == rank * 1000000 + 3 * i, "%s large vector get: [%d] = %d, want %d", mt_flavor_name(flavor), i,
                  back[i], rank * 1000000 + 3 * i);
            bad++;
        }
    MPI_Type_free(&vec);
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
        MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    free(user);
    free(src);
    free(back);
    free(all);
}

/* Windows where some processes have no memory: MPI_Win_create with NULL base and size 0,
 * MPI_Win_allocate(_shared) of 0 bytes; puts of 0 elements towards them. */
static void empty_parts(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int has = rank % 2 == 0, *m1 = has ? malloc(4 * sizeof(int)) : NULL, *m2 = NULL, *m3 = NULL;
    MPI_Aint bytes = has ? 4 * sizeof(int) : 0;
    MPI_Win w1, w2, w3;
    CHECK_CLASS(MPI_Win_create(m1, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w1), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &m2, &w2), MPI_SUCCESS);
    if (mt_one_node(MPI_COMM_WORLD))
        CHECK_CLASS(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &m3, &w3), MPI_SUCCESS);
    else /* several nodes share no memory */
        CHECK_CLASS(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &m3, &w3), MPI_SUCCESS);
    MPI_Win wins[3] = {w1, w2, w3};
    int *mems[3] = {m1, m2, m3};
    for (int k = 0; k < 3; k++) {
        MPI_Aint *sz;
        int flag;
        MPI_Win_get_attr(wins[k], MPI_WIN_SIZE, &sz, &flag);
        CHECK(flag && *sz == bytes, "window %d with empty parts: MPI_WIN_SIZE %ld, want %ld", k, (long)*sz,
              (long)bytes);
        if (has)
            for (int i = 0; i < 4; i++)
                mems[k][i] = -1;
        MPI_Win_fence(0, wins[k]);
        /* the right neighbour gets a value when it has memory, every empty part a put of nothing */
        for (int t = 0; t < size; t++) {
            int v = 100 * k + rank;
            if (t % 2 == 0 && t == (rank + 1) % size)
                CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, t, 3, 1, MPI_INT, wins[k]), MPI_SUCCESS);
            else if (t % 2 == 1)
                CHECK_CLASS(MPI_Put(&v, 0, MPI_INT, t, 0, 0, MPI_INT, wins[k]), MPI_SUCCESS);
        }
        MPI_Win_fence(0, wins[k]);
        if (has) {
            int l = (rank - 1 + size) % size;
            int want = 100 * k + l;
            CHECK(mems[k][3] == want && mems[k][0] == -1, "window %d with empty parts: %d %d, want %d", k,
                  mems[k][3], mems[k][0], want);
        }
        MPI_Win_fence(0, wins[k]);
    }
    /* shared query with MPI_PROC_NULL: the first process with memory, rank 0 */
    MPI_Aint qs;
    int qu;
    int *q = NULL;
    CHECK_CLASS(MPI_Win_shared_query(w3, MPI_PROC_NULL, &qs, &qu, &q), MPI_SUCCESS);
    if (mt_one_node(MPI_COMM_WORLD)) /* else rank 0's memory is on another node: not loadable here */
        CHECK(qs == 4 * (MPI_Aint)sizeof(int) && qu == sizeof(int), "shared_query(MPI_PROC_NULL): %ld %d", (long)qs,
              qu);
    for (int k = 0; k < 3; k++)
        MPI_Win_free(&wins[k]);
    free(m1);
}

/* Many windows: created and freed in a loop, and many open at once, freed in another order. */
static void many_windows(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int r = (rank + 1) % size, l = (rank - 1 + size) % size;
    int one_node = mt_one_node(MPI_COMM_WORLD);
    for (int it = 0; it < 40; it++) {
        int f = flavors[it % 4], *mem = NULL, *user = NULL, v = it * 1000 + rank;
        if (f == MPI_WIN_FLAVOR_SHARED && !one_node)
            f = MPI_WIN_FLAVOR_ALLOCATE;
        MPI_Win win;
        MPI_Aint d = 2;
        switch (f) {
        case MPI_WIN_FLAVOR_CREATE:
            user = mem = malloc(4 * sizeof(int));
            MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            break;
        case MPI_WIN_FLAVOR_ALLOCATE:
            MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
            break;
        case MPI_WIN_FLAVOR_SHARED:
            MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
            break;
        default: {
            MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            user = mem = malloc(4 * sizeof(int));
            MPI_Win_attach(win, mem, 4 * sizeof(int));
            MPI_Aint a, *all = malloc((size_t)size * sizeof(MPI_Aint));
            MPI_Get_address(mem + 2, &a);
            MPI_Allgather(&a, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
            d = all[r];
            free(all);
        }
        }
        mem[2] = -1;
        MPI_Win_fence(0, win);
        CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, r, d, 1, MPI_INT, win), MPI_SUCCESS);
        MPI_Win_fence(0, win);
        CHECK(mem[2] == it * 1000 + l, "window %d (%s): %d, want %d", it, mt_flavor_name(f), mem[2], it * 1000 + l);
        if (f == MPI_WIN_FLAVOR_DYNAMIC)
            MPI_Win_detach(win, mem);
        CHECK_CLASS(MPI_Win_free(&win), MPI_SUCCESS);
        free(user);
    }

    enum { K = 16 };
    MPI_Win wins[K];
    int *mems[K], *users[K];
    for (int k = 0; k < K; k++) {
        users[k] = NULL;
        if (k % 3 == 0) {
            users[k] = mems[k] = malloc(2 * sizeof(int));
            MPI_Win_create(mems[k], 2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wins[k]);
        } else if (k % 3 == 1) {
            MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mems[k], &wins[k]);
        } else if (one_node) {
            MPI_Win_allocate_shared(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mems[k], &wins[k]);
        } else {
            MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mems[k], &wins[k]);
        }
        mems[k][0] = mems[k][1] = -1;
        for (int j = 0; j < k; j++)
            CHECK(wins[j] != wins[k], "windows %d and %d have the same handle", j, k);
    }
    for (int k = 0; k < K; k++)
        MPI_Win_fence(0, wins[k]);
    for (int k = 0; k < K; k++) {
        int v = k * 100 + rank;
        CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, l, 1, 1, MPI_INT, wins[k]), MPI_SUCCESS);
    }
    for (int k = 0; k < K; k++)
        MPI_Win_fence(0, wins[k]);
    for (int k = 0; k < K; k++)
        CHECK(mems[k][1] == k * 100 + r && mems[k][0] == -1, "window %d of %d open: %d %d, want %d", k, K, mems[k][0],
              mems[k][1], k * 100 + r);
    /* free the even ones, use the odd ones again, free the rest from the last */
    for (int k = 0; k < K; k += 2)
        CHECK_CLASS(MPI_Win_free(&wins[k]), MPI_SUCCESS);
    for (int k = 1; k < K; k += 2) {
        int v = -k;
        CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, r, 0, 1, MPI_INT, wins[k]), MPI_SUCCESS);
        MPI_Win_fence(0, wins[k]);
        CHECK(mems[k][0] == -k, "window %d after others were freed: %d", k, mems[k][0]);
    }
    for (int k = K - 1; k >= 1; k -= 2)
        CHECK_CLASS(MPI_Win_free(&wins[k]), MPI_SUCCESS);
    for (int k = 0; k < K; k++)
        free(users[k]);
}

static void all_flavors(MPI_Comm comm, const char *commname)
{
    int one_node = mt_one_node(comm);
    for (int f = 0; f < 4; f++) {
        win_t w;
        if (flavors[f] == MPI_WIN_FLAVOR_SHARED && !one_node) {
            /* processes of several nodes share no memory: refused, naming comm */
            MPI_Win win;
            int *mem;
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            CHECK_CLASS(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, comm, &mem, &win), MPI_ERR_COMM);
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
            continue;
        }
        make_window(&w, flavors[f], comm, commname);
        check_window_object(&w);
        exercise(&w);
        free_window(&w);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    all_flavors(MPI_COMM_WORLD, "world");

    /* over the odd and the even processes of world: the window's group is the split's */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    all_flavors(half, rank % 2 ? "odd" : "even");
    {
        MPI_Win win;
        int *mem;
        MPI_Group g, world;
        MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, half, &mem, &win);
        MPI_Win_get_group(win, &g);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int hsize, cmp;
        MPI_Comm_size(half, &hsize);
        MPI_Group_compare(g, world, &cmp);
        CHECK(cmp == (hsize == size ? MPI_IDENT : MPI_UNEQUAL), "split window group vs world: %d", cmp);
        for (int i = 0; i < hsize; i++) {
            int wr;
            MPI_Group_translate_ranks(g, 1, &i, world, &wr);
            CHECK(wr == 2 * i + rank % 2, "split window group rank %d is world %d, want %d", i, wr, 2 * i + rank % 2);
        }
        MPI_Group_free(&g);
        MPI_Group_free(&world);
        MPI_Win_free(&win);
    }
    MPI_Comm_free(&half);

    /* over world in reverse order: window rank r is world rank size - 1 - r */
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    all_flavors(reversed, "reversed world");
    MPI_Comm_free(&reversed);

    all_flavors(MPI_COMM_SELF, "self");

    disp_units(MPI_WIN_FLAVOR_CREATE);
    disp_units(MPI_WIN_FLAVOR_ALLOCATE);
    dynamic_regions();
    for (int f = 0; f < 4; f++)
        if (flavors[f] != MPI_WIN_FLAVOR_SHARED || mt_one_node(MPI_COMM_WORLD))
            large(flavors[f]);
    empty_parts();
    many_windows();
    return mt_finish();
}
