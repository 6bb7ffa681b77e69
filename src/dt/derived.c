/* derived.c: derived datatypes: the constructors, commit and free, and what a type says about
 * itself (size, bounds, envelope and contents, name).
 *
 * Each constructor computes the type's bounds as the standard defines them (the lowest lower
 * bound and the highest upper bound of its non-empty blocks, each block being n copies of the
 * old type) and compiles its layout (loop.h) from its children's layouts, which it shares: a
 * type holds a reference on every type it was built from, so MPI_Type_free of a child leaves
 * the parent whole. The layout is complete when the constructor returns; MPI_Type_commit only
 * marks the type usable for communication. */
#include "dtype.h"
#include "loop.h"

#include "core/attr.h"
#include "core/error.h"
#include "cr_impl.h"

#include <stdio.h>
#include <stdlib.h>

/* What a derived type keeps beyond cr_dtype: how it was made (MPI_Type_get_contents), the
 * layout nodes it owns, and its name. */
typedef struct cr_dt_derived {
    int combiner;
    int ni, na, nt;
    int *ints;
    MPI_Count *large; /* the counts in full when one does not fit an int (else NULL): the type
                         then reports them as large counts (MPI-4.1 section 5.1.13) */
    MPI_Aint *aints;
    cr_dtype **types; /* held references */
    void **owned;     /* layout nodes and arrays this type allocated */
    cr_dtype *inner;  /* a type built from the constructor's arguments whose layout this one
                         shares (darray), held; not part of the contents */
    int nowned;
    char name[MPI_MAX_OBJECT_NAME];
} cr_dt_derived;

/* ----------------------------------------------------------------- building blocks */

typedef struct builder {
    cr_dtype *dt;
    cr_dt_derived *d;
    bool nomem;
    bool any;                  /* a non-empty block was seen: bounds are set */
    bool explicit_bounds;      /* a child's bounds were set explicitly (or this type's are) */
    uint8_t align;             /* the largest alignment among the children */
    MPI_Aint lb, ub, tlb, tub; /* bounds so far */
} builder;

static void *own(builder *b, size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    void **grown = p ? realloc(b->d->owned, (size_t)(b->d->nowned + 1) * sizeof *grown) : NULL;
    if (!p || !grown) {
        free(p);
        b->nomem = true;
        return NULL;
    }
    b->d->owned = grown;
    b->d->owned[b->d->nowned++] = p;
    return p;
}

/* Widens the bounds by a block of n >= 1 copies of t at byte displacement disp. */
static void bound_block(builder *b, MPI_Aint disp, MPI_Count n, const cr_dtype *t)
{
    if (n <= 0)
        return;
    b->align = CR_MAX(b->align, t->align);
    if (t->flags & CR_DT_EXPLICIT_BOUNDS)
        b->explicit_bounds = true;
    MPI_Aint span = (MPI_Aint)(n - 1) * t->extent;
    MPI_Aint lo = CR_MIN((MPI_Aint)0, span), hi = CR_MAX((MPI_Aint)0, span);
    MPI_Aint lb = disp + t->lb + lo, ub = disp + t->lb + t->extent + hi;
    MPI_Aint tlb = disp + t->true_lb + lo, tub = disp + t->true_lb + t->true_extent + hi;
    if (!b->any) {
        b->lb = lb, b->ub = ub, b->tlb = tlb, b->tub = tub;
        b->any = true;
        return;
    }
    b->lb = CR_MIN(b->lb, lb), b->ub = CR_MAX(b->ub, ub);
    b->tlb = CR_MIN(b->tlb, tlb), b->tub = CR_MAX(b->tub, tub);
}

static bool is_run(const cr_dtype *t)
{
    return t->loop->kind == CR_LOOP_RUN && t->extent == (MPI_Aint)t->size;
}

/* The entry for n copies of t at disp (n > 0, t not empty). */
static cr_dt_entry entry_of(MPI_Aint disp, MPI_Count n, const cr_dtype *t)
{
    cr_dt_entry e = {.disp = disp, .count = (uint64_t)n, .stride = t->extent};
    if (is_run(t) || (n == 1 && t->loop->kind == CR_LOOP_RUN)) {
        e.run = (uint64_t)n * (uint64_t)t->size;
        e.elem = t->loop->elem;
        e.count = 1;
    } else {
        e.child = t->loop;
    }
    return e;
}

static uint64_t entry_bytes(const cr_dt_entry *e)
{
    return e->child ? e->count * e->child->size : e->run;
}

/* A node for one entry standing alone at displacement 0: a run, or copies of a child. */
static const cr_dt_loop *node_of_entry(builder *b, const cr_dt_entry *e)
{
    if (!e->child || e->count > 1) {
        cr_dt_loop *l = own(b, sizeof *l);
        if (!l)
            return NULL;
        if (!e->child) {
            *l = (cr_dt_loop){.kind = CR_LOOP_RUN, .elem = e->elem, .size = e->run};
        } else {
            *l = (cr_dt_loop){.kind = CR_LOOP_REPEAT, .elem = e->child->elem, .size = entry_bytes(e),
                              .count = e->count, .stride = e->stride, .child = e->child};
        }
        return l;
    }
    return e->child;
}

/* The layout of a list of entries (indexed and struct types): empty ones are dropped, runs
 * that touch are merged, and one entry at displacement 0 is that entry's node. */
static const cr_dt_loop *layout_of_entries(builder *b, cr_dt_entry *en, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (entry_bytes(&en[i]) == 0)
            continue;
        if (k > 0 && !en[k - 1].child && !en[i].child && en[k - 1].elem == en[i].elem &&
            en[k - 1].disp + (MPI_Aint)en[k - 1].run == en[i].disp) {
            en[k - 1].run += en[i].run;
            continue;
        }
        en[k++] = en[i];
    }
    if (k == 0) {
        cr_dt_loop *l = own(b, sizeof *l);
        if (l)
            *l = (cr_dt_loop){.kind = CR_LOOP_RUN, .elem = 1, .size = 0};
        return l;
    }
    if (k == 1 && en[0].disp == 0)
        return node_of_entry(b, &en[0]);
    cr_dt_loop *l = own(b, sizeof *l);
    uint64_t *prefix = own(b, (size_t)(k + 1) * sizeof *prefix);
    cr_dt_entry *kept = own(b, (size_t)k * sizeof *kept);
    if (!l || !prefix || !kept)
        return NULL;
    memcpy(kept, en, (size_t)k * sizeof *kept);
    uint32_t elem = 0;
    for (int64_t i = 0; i < k; i++) {
        prefix[i + 1] = prefix[i] + entry_bytes(&kept[i]);
        uint32_t e = kept[i].child ? kept[i].child->elem : kept[i].elem;
        elem = i == 0 ? e : elem == e ? elem : 0;
    }
    *l = (cr_dt_loop){.kind = CR_LOOP_BLOCKS, .elem = elem, .size = prefix[k], .nentries = k, .entries = kept,
                      .prefix = prefix};
    return l;
}

/* ----------------------------------------------------------------- making a type */

static cr_dtype *new_type(builder *b, int combiner)
{
    memset(b, 0, sizeof *b);
    cr_dtype *dt = cr_obj_alloc(CR_KIND_DATATYPE);
    cr_dt_derived *d = calloc(1, sizeof *d);
    if (!dt || !d) {
        free(d);
        if (dt)
            cr_obj_free(dt);
        return NULL;
    }
    d->combiner = combiner;
    dt->d = d;
    b->dt = dt;
    b->d = d;
    return dt;
}

static void destroy(cr_dtype *dt)
{
    cr_dt_derived *d = dt->d;
    for (int i = 0; i < d->nowned; i++)
        free(d->owned[i]);
    free(d->owned);
    for (int i = 0; i < d->nt; i++)
        cr_dtype_release(d->types[i]);
    free(d->types);
    if (d->inner)
        cr_dtype_release(d->inner);
    free(d->ints);
    free(d->large);
    free(d->aints);
    free(d);
    cr_obj_free(dt);
}

void cr_dtype_release(cr_dtype *dt)
{
    if (cr_obj_unref(dt))
        destroy(dt);
}

/* Records the constructor's arguments (MPI_Type_get_contents) and takes references on the
 * types. Counts that do not fit an int are kept in full too, so nothing is lost. */
static bool record(builder *b, int ni, const MPI_Count *ints, int na, const MPI_Aint *aints, int nt,
                   cr_dtype *const *types)
{
    cr_dt_derived *d = b->d;
    d->ints = malloc((size_t)(ni ? ni : 1) * sizeof *d->ints);
    d->aints = malloc((size_t)(na ? na : 1) * sizeof *d->aints);
    d->types = malloc((size_t)(nt ? nt : 1) * sizeof *d->types);
    if (!d->ints || !d->aints || !d->types)
        return b->nomem = true, false;
    bool large = false;
    for (int i = 0; i < ni; i++) {
        d->ints[i] = (int)ints[i];
        large |= ints[i] != (MPI_Count)d->ints[i];
    }
    if (large) {
        if (!(d->large = malloc((size_t)ni * sizeof *d->large)))
            return b->nomem = true, false;
        memcpy(d->large, ints, (size_t)ni * sizeof *ints);
    }
    if (na)
        memcpy(d->aints, aints, (size_t)na * sizeof *aints);
    for (int i = 0; i < nt; i++) {
        cr_obj_ref(types[i]);
        d->types[i] = types[i];
    }
    d->ni = ni, d->na = na, d->nt = nt;
    return true;
}

/* Whether a layout is one run that starts `at` bytes from its base: a run, or a single entry
 * or single copy of one, at any depth (a row of a subarray inside a larger array is an entry at
 * the row's offset, holding one copy of the row). Then the data paths move it as contiguous
 * bytes from true_lb (CR_DT_ONE_RUN) instead of packing it. Not from the bounds alone: blocks
 * that overlap, or come in another order than in memory, can span exactly `size` bytes too. */
static bool one_run_at(const cr_dt_loop *l, MPI_Aint at)
{
    MPI_Aint disp = 0;
    for (;;) {
        if (l->kind == CR_LOOP_RUN)
            return disp == at;
        if (l->kind == CR_LOOP_REPEAT && l->count == 1) {
            if (!l->child)
                return disp == at;
            l = l->child;
        } else if (l->kind == CR_LOOP_BLOCKS && l->nentries == 1) {
            const cr_dt_entry *e = &l->entries[0];
            disp += e->disp;
            if (!e->child)
                return disp == at;
            if (e->count != 1)
                return false;
            l = e->child;
        } else {
            return false;
        }
    }
}

/* Sets the size and bounds, flags, and hands out the handle. */
static int finish(builder *b, const cr_dt_loop *loop, uint64_t size, MPI_Datatype *out)
{
    cr_dtype *dt = b->dt;
    if (b->nomem || !loop) {
        destroy(dt);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
    }
    dt->loop = loop;
    dt->size = (MPI_Count)size;
    dt->lb = b->any ? b->lb : 0;
    dt->extent = b->any ? b->ub - b->lb : 0;
    dt->true_lb = b->any ? b->tlb : 0;
    dt->true_extent = b->any ? b->tub - b->tlb : 0;
    dt->flags = b->explicit_bounds ? CR_DT_EXPLICIT_BOUNDS : 0;
    dt->align = b->align ? b->align : 1;
    /* A struct's extent is padded to its largest alignment, as a C compiler pads a struct, so
     * an array of C structs is described by count > 1 (the standard's epsilon) — unless bounds
     * were set explicitly, which then rule. */
    if (b->d->combiner == MPI_COMBINER_STRUCT && !b->explicit_bounds && dt->extent % dt->align)
        dt->extent += dt->align - dt->extent % dt->align;
    /* Contiguous: one run, starting where the true lower bound is, and elements that follow
     * each other without a gap: data paths then copy count * size bytes in one go. */
    if (loop->kind == CR_LOOP_RUN && dt->extent == (MPI_Aint)size && dt->true_lb == 0)
        dt->flags |= CR_DT_CONTIG;
    if (size > 0 && one_run_at(loop, dt->true_lb))
        dt->flags |= CR_DT_ONE_RUN;
    dt->basic = CR_BASIC_NONE;
    dt->category = CR_CAT_NONE;
    dt->name = NULL;
    dt->handles = 1;
    dt->leaf = b->d->nt ? b->d->types[0]->leaf : NULL;
    for (int i = 1; i < b->d->nt; i++)
        if (b->d->types[i]->leaf != dt->leaf)
            dt->leaf = NULL;
    *out = (MPI_Datatype)cr_handle_of(dt);
    return MPI_SUCCESS;
}

static int check_count(MPI_Count n, const char *arg)
{
    return n < 0 ? cr_err(MPI_ERR_COUNT, "invalid %s=%lld: must not be negative", arg, (long long)n) : MPI_SUCCESS;
}

/* ----------------------------------------------------------------- vector family */

/* count blocks of blocklen copies of t, `stride` bytes apart. */
static int vector(int combiner, MPI_Count count, MPI_Count blocklen, MPI_Aint stride, cr_dtype *t,
                  const MPI_Count *ints, int ni, const MPI_Aint *aints, int na, MPI_Datatype *out)
{
    int err;
    if ((err = check_count(count, "count")) || (err = check_count(blocklen, "blocklength")))
        return err;
    builder b;
    if (!new_type(&b, combiner))
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
    record(&b, ni, ints, na, aints, 1, &t);
    uint64_t size = (uint64_t)count * (uint64_t)blocklen * (uint64_t)t->size;
    const cr_dt_loop *loop = NULL;
    if (count > 0 && blocklen > 0) {
        bound_block(&b, 0, blocklen, t);
        bound_block(&b, (MPI_Aint)(count - 1) * stride, blocklen, t);
    }
    if (size == 0) {
        cr_dt_entry none = {0};
        loop = layout_of_entries(&b, &none, 0);
    } else {
        cr_dt_entry block = entry_of(0, blocklen, t);
        if (count == 1) {
            loop = node_of_entry(&b, &block);
        } else if (!block.child && (MPI_Aint)block.run == stride) { /* blocks that touch: one run */
            block.run *= (uint64_t)count;
            loop = node_of_entry(&b, &block);
        } else {
            const cr_dt_loop *inner = block.child ? node_of_entry(&b, &block) : NULL;
            cr_dt_loop *l = own(&b, sizeof *l);
            if (l)
                *l = (cr_dt_loop){.kind = CR_LOOP_REPEAT, .elem = inner ? inner->elem : block.elem, .size = size,
                                  .count = (uint64_t)count, .stride = stride, .run = inner ? 0 : block.run,
                                  .child = inner};
            loop = l;
        }
    }
    return finish(&b, loop, size, out);
}

int cr_mpi_type_contiguous(MPI_Count count, cr_dtype *oldtype, MPI_Datatype *newtype)
{
    MPI_Count ints[1] = {count};
    return vector(MPI_COMBINER_CONTIGUOUS, count, 1, oldtype->extent, oldtype, ints, 1, NULL, 0, newtype);
}

int cr_mpi_type_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, cr_dtype *oldtype,
                       MPI_Datatype *newtype)
{
    MPI_Count ints[3] = {count, blocklength, stride};
    return vector(MPI_COMBINER_VECTOR, count, blocklength, (MPI_Aint)stride * oldtype->extent, oldtype, ints, 3,
                  NULL, 0, newtype);
}

int cr_mpi_type_create_hvector(MPI_Count count, MPI_Count blocklength, MPI_Aint stride, cr_dtype *oldtype,
                               MPI_Datatype *newtype)
{
    MPI_Count ints[2] = {count, blocklength};
    MPI_Aint aints[1] = {stride};
    return vector(MPI_COMBINER_HVECTOR, count, blocklength, stride, oldtype, ints, 2, aints, 1, newtype);
}

/* ----------------------------------------------------------------- indexed family and struct */

/* Blocks i < count: blocklen(i) copies of type(i) at byte displacement disp(i). */
typedef struct blocks_args {
    MPI_Count count;
    cr_cvec lens;        /* or one length for all, when lens.p is NULL */
    MPI_Count one_len;
    cr_cvec disps;       /* in elements of the type (scale = extent) or bytes (scale = 1) */
    bool bytes;
    cr_dtype *type;      /* one type for all, or */
    cr_dtype **types;    /* a type per block */
} blocks_args;

static int blocks(int combiner, const blocks_args *a, MPI_Datatype *out)
{
    int err = check_count(a->count, "count");
    if (err)
        return err;
    if (a->count > INT32_MAX)
        return cr_err(MPI_ERR_COUNT, "count=%lld blocks is more than this implementation takes (2^31 - 1)",
                      (long long)a->count);
    int n = (int)a->count;
    for (int i = 0; i < n && a->lens.p; i++)
        if (cr_cvec_at(a->lens, (size_t)i) < 0)
            return cr_err(MPI_ERR_COUNT, "invalid array_of_blocklengths[%d]=%lld: must not be negative", i,
                          (long long)cr_cvec_at(a->lens, (size_t)i));
    if (!a->lens.p && (err = check_count(a->one_len, "blocklength")))
        return err;
    builder b;
    if (!new_type(&b, combiner))
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
    /* contents: count, blocklengths (or the one), displacements (ints or addresses), types */
    bool one = !a->lens.p;
    int ni = 1 + (one ? 1 : n) + (a->bytes ? 0 : n), na = a->bytes ? n : 0, nt = a->types ? n : 1;
    MPI_Count *ints = malloc((size_t)ni * sizeof *ints);
    MPI_Aint *aints = malloc((size_t)(na ? na : 1) * sizeof *aints);
    cr_dt_entry *en = malloc((size_t)(n ? n : 1) * sizeof *en);
    uint64_t size = 0;
    if (!ints || !aints || !en) {
        b.nomem = true;
    } else {
        ints[0] = n;
        if (one)
            ints[1] = a->one_len;
        for (int i = 0; i < n; i++) {
            MPI_Count len = one ? a->one_len : cr_cvec_at(a->lens, (size_t)i);
            MPI_Aint d = (MPI_Aint)cr_cvec_at(a->disps, (size_t)i);
            cr_dtype *t = a->types ? a->types[i] : a->type;
            if (!one)
                ints[1 + i] = len;
            if (a->bytes)
                aints[i] = d;
            else
                ints[1 + (one ? 1 : n) + i] = d;
            MPI_Aint disp = a->bytes ? d : d * t->extent;
            /* In struct types, the bounds come from every block, even of an empty type. */
            if (len > 0 && (t->size > 0 || a->types))
                bound_block(&b, disp, len, t);
            en[i] = len > 0 && t->size > 0 ? entry_of(disp, len, t) : (cr_dt_entry){0};
            size += (uint64_t)len * (uint64_t)t->size;
        }
        record(&b, ni, ints, na, aints, nt, a->types ? a->types : &a->type);
    }
    const cr_dt_loop *loop = b.nomem ? NULL : layout_of_entries(&b, en, n);
    free(ints);
    free(aints);
    free(en);
    return finish(&b, loop, size, out);
}

int cr_mpi_type_indexed(MPI_Count count, cr_cvec lens, cr_cvec disps, cr_dtype *oldtype, MPI_Datatype *newtype)
{
    blocks_args a = {.count = count, .lens = lens, .disps = disps, .type = oldtype};
    return blocks(MPI_COMBINER_INDEXED, &a, newtype);
}

int cr_mpi_type_create_hindexed(MPI_Count count, cr_cvec lens, cr_cvec disps, cr_dtype *oldtype,
                                MPI_Datatype *newtype)
{
    blocks_args a = {.count = count, .lens = lens, .disps = disps, .bytes = true, .type = oldtype};
    return blocks(MPI_COMBINER_HINDEXED, &a, newtype);
}

int cr_mpi_type_create_indexed_block(MPI_Count count, MPI_Count blocklength, cr_cvec disps, cr_dtype *oldtype,
                                     MPI_Datatype *newtype)
{
    blocks_args a = {.count = count, .one_len = blocklength, .disps = disps, .type = oldtype};
    return blocks(MPI_COMBINER_INDEXED_BLOCK, &a, newtype);
}

int cr_mpi_type_create_hindexed_block(MPI_Count count, MPI_Count blocklength, cr_cvec disps, cr_dtype *oldtype,
                                      MPI_Datatype *newtype)
{
    blocks_args a = {.count = count, .one_len = blocklength, .disps = disps, .bytes = true, .type = oldtype};
    return blocks(MPI_COMBINER_HINDEXED_BLOCK, &a, newtype);
}

int cr_mpi_type_create_struct(MPI_Count count, cr_cvec lens, cr_cvec disps, const MPI_Datatype types[],
                              MPI_Datatype *newtype)
{
    if (count < 0)
        return check_count(count, "count");
    cr_dtype **resolved = malloc((size_t)(count ? count : 1) * sizeof *resolved);
    if (!resolved)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %lld datatypes", (long long)count);
    int err = cr_dtype_check_array(types, count, "array_of_types", false, resolved);
    if (!err) {
        blocks_args a = {.count = count, .lens = lens, .disps = disps, .bytes = true, .types = resolved};
        err = blocks(MPI_COMBINER_STRUCT, &a, newtype);
    }
    free(resolved);
    return err;
}

/* ----------------------------------------------------------------- resized, dup, subarray */

/* A type with the data of `shape` (its layout, size and true bounds) and the bounds lb and
 * lb + extent: resized, dup and the composed constructors. Contents: ints, aints, oldtype. */
typedef struct reshape {
    int combiner;
    const MPI_Count *ints;
    int ni;
    const MPI_Aint *aints;
    int na;
    cr_dtype *oldtype, *shape;
    bool explicit_bounds;
    MPI_Aint lb, extent;
} reshape;

static int reshaped(const reshape *r, builder *b, MPI_Datatype *newtype)
{
    if (!new_type(b, r->combiner))
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
    record(b, r->ni, r->ints, r->na, r->aints, 1, (cr_dtype *const *)&r->oldtype);
    b->any = true;
    b->explicit_bounds = r->explicit_bounds;
    b->align = r->oldtype->align;
    b->lb = r->lb, b->ub = r->lb + r->extent;
    b->tlb = r->shape->true_lb, b->tub = r->shape->true_lb + r->shape->true_extent;
    return finish(b, r->shape->loop, (uint64_t)r->shape->size, newtype);
}

int cr_dt_wrap(int combiner, const MPI_Count *ints, int ni, cr_dtype *oldtype, cr_dtype *inner, MPI_Aint lb,
               MPI_Aint extent, MPI_Datatype *newtype)
{
    builder b;
    reshape r = {combiner, ints, ni, NULL, 0, oldtype, inner, true, lb, extent};
    int err = reshaped(&r, &b, newtype);
    if (!err) {
        cr_obj_ref(inner);
        b.d->inner = inner;
    }
    return err;
}

int cr_mpi_type_create_resized(cr_dtype *oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    builder b;
    MPI_Aint aints[2] = {lb, extent};
    reshape r = {MPI_COMBINER_RESIZED, NULL, 0, aints, 2, oldtype, oldtype, true, lb, extent};
    return reshaped(&r, &b, newtype);
}

/* A duplicate without the original's attributes. */
static int dup_bare(cr_dtype *oldtype, MPI_Datatype *newtype, cr_dtype **out)
{
    builder b;
    reshape r = {MPI_COMBINER_DUP, NULL, 0, NULL, 0, oldtype, oldtype, oldtype->flags & CR_DT_EXPLICIT_BOUNDS,
                 oldtype->lb, oldtype->extent};
    int err = reshaped(&r, &b, newtype);
    if (err)
        return err;
    /* a duplicate is committed if the original is, and keeps its basic type for reductions */
    b.dt->flags = oldtype->flags & (CR_DT_CONTIG | CR_DT_ONE_RUN | CR_DT_COMMITTED | CR_DT_EXPLICIT_BOUNDS);
    b.dt->basic = oldtype->basic;
    b.dt->category = oldtype->category;
    *out = b.dt;
    return MPI_SUCCESS;
}

int cr_mpi_type_dup(cr_dtype *oldtype, MPI_Datatype *newtype)
{
    cr_dtype *dt;
    int err = dup_bare(oldtype, newtype, &dt);
    if (!err && (err = cr_dtype_attrs_copy(oldtype, dt))) { /* a copy callback failed: no new type */
        cr_dtype_release(dt);
        *newtype = MPI_DATATYPE_NULL;
    }
    return err;
}

int cr_mpi_type_create_subarray(int ndims, cr_cvec sizes, cr_cvec subsizes, cr_cvec starts, int order,
                                cr_dtype *oldtype, MPI_Datatype *newtype)
{
    if (ndims <= 0)
        return cr_err(MPI_ERR_ARG, "invalid ndims=%d: must be positive", ndims);
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return cr_err(MPI_ERR_ARG, "invalid order=%d: must be MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
    for (int i = 0; i < ndims; i++) {
        MPI_Count n = cr_cvec_at(sizes, (size_t)i), sub = cr_cvec_at(subsizes, (size_t)i),
                  st = cr_cvec_at(starts, (size_t)i);
        if (n <= 0 || sub <= 0 || sub > n || st < 0 || st > n - sub)
            return cr_err(MPI_ERR_ARG,
                          "dimension %d: array_of_sizes=%lld, array_of_subsizes=%lld, array_of_starts=%lld: need "
                          "1 <= subsize <= size and 0 <= start <= size - subsize",
                          i, (long long)n, (long long)sub, (long long)st);
    }
    builder b;
    if (!new_type(&b, MPI_COMBINER_SUBARRAY))
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
    MPI_Count *ints = malloc((size_t)(3 * ndims + 2) * sizeof *ints);
    if (!ints) {
        destroy(b.dt);
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
    }
    ints[0] = ndims;
    for (int i = 0; i < ndims; i++) {
        ints[1 + i] = cr_cvec_at(sizes, (size_t)i);
        ints[1 + ndims + i] = cr_cvec_at(subsizes, (size_t)i);
        ints[1 + 2 * ndims + i] = cr_cvec_at(starts, (size_t)i);
    }
    ints[1 + 3 * ndims] = order;
    record(&b, 3 * ndims + 2, ints, 0, NULL, 1, &oldtype);
    free(ints);
    /* From the fastest-varying dimension out: a block of subsize copies, then each outer
     * dimension repeats the inner layout with its stride; the start adds to the offset. */
    MPI_Aint stride = oldtype->extent, offset = 0;
    uint64_t size = (uint64_t)oldtype->size;
    const cr_dt_loop *inner = NULL;
    cr_dt_entry e = {0};
    for (int k = 0; k < ndims; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Count n = cr_cvec_at(sizes, (size_t)i), sub = cr_cvec_at(subsizes, (size_t)i),
                  st = cr_cvec_at(starts, (size_t)i);
        offset += (MPI_Aint)st * stride;
        if (k == 0) {
            e = size ? entry_of(0, sub, oldtype) : (cr_dt_entry){0};
        } else if (size) {
            /* sub copies of the inner layout, `stride` bytes apart */
            if (!e.child && (MPI_Aint)e.run == stride) {
                e.run *= (uint64_t)sub; /* the inner dimension is whole: still one run */
            } else {
                inner = node_of_entry(&b, &e);
                e = (cr_dt_entry){.count = (uint64_t)sub, .stride = stride, .child = inner};
            }
        }
        size *= (uint64_t)sub;
        stride *= (MPI_Aint)n;
    }
    e.disp = offset;
    const cr_dt_loop *loop = layout_of_entries(&b, &e, size ? 1 : 0);
    /* a subarray's bounds are the whole array's */
    b.any = true;
    b.align = oldtype->align;
    b.explicit_bounds = true; /* set by the constructor, as resizing would */
    b.lb = 0, b.ub = stride;
    b.tlb = offset + oldtype->true_lb;
    b.tub = b.tlb; /* widened below from the first and last element of the subarray */
    if (size) {
        MPI_Aint last = 0, st2 = oldtype->extent;
        for (int k = 0; k < ndims; k++) {
            int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
            last += (MPI_Aint)(cr_cvec_at(starts, (size_t)i) + cr_cvec_at(subsizes, (size_t)i) - 1) * st2;
            st2 *= (MPI_Aint)cr_cvec_at(sizes, (size_t)i);
        }
        b.tub = last + oldtype->true_lb + oldtype->true_extent;
    }
    return finish(&b, loop, size, newtype);
}

/* ----------------------------------------------------------------- commit, free, queries */

int cr_mpi_type_commit(MPI_Datatype *h)
{
    cr_dtype *dt;
    int err = cr_dtype_check(*h, "datatype", false, &dt);
    if (err)
        return err;
    dt->flags |= CR_DT_COMMITTED;
    return MPI_SUCCESS;
}

int cr_mpi_type_free(MPI_Datatype *h)
{
    cr_dtype *dt;
    int err = cr_dtype_check(*h, "datatype", false, &dt);
    if (err)
        return err;
    if (dt->obj.predefined)
        return cr_err(MPI_ERR_TYPE, "datatype is a predefined datatype (or one returned by "
                                    "MPI_Type_create_f90_*), which cannot be freed");
    /* Attributes go with the last user handle, with their delete callbacks, even if operations
     * or other types still hold the type. */
    if (dt->handles == 1 && (err = cr_dtype_attrs_clear(dt)))
        return err;
    dt->handles--;
    *h = MPI_DATATYPE_NULL;
    cr_dtype_release(dt); /* types built from it and operations using it keep their references */
    return MPI_SUCCESS;
}

int cr_mpi_type_size(cr_dtype *dt, MPI_Count *size)
{
    *size = dt->size;
    return MPI_SUCCESS;
}

int cr_mpi_type_get_extent(cr_dtype *dt, MPI_Aint *lb, MPI_Aint *extent)
{
    *lb = dt->lb;
    *extent = dt->extent;
    return MPI_SUCCESS;
}

int cr_mpi_type_get_true_extent(cr_dtype *dt, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    *true_lb = dt->true_lb;
    *true_extent = dt->true_extent;
    return MPI_SUCCESS;
}

/* The MPI-3 _x forms (deprecated since MPI-4.0, still in the ABI). */
int cr_mpi_type_size_x(cr_dtype *dt, MPI_Count *size)
{
    return cr_mpi_type_size(dt, size);
}

int cr_mpi_type_get_extent_x(cr_dtype *dt, MPI_Count *lb, MPI_Count *extent)
{
    *lb = dt->lb;
    *extent = dt->extent;
    return MPI_SUCCESS;
}

int cr_mpi_type_get_true_extent_x(cr_dtype *dt, MPI_Count *true_lb, MPI_Count *true_extent)
{
    *true_lb = dt->true_lb;
    *true_extent = dt->true_extent;
    return MPI_SUCCESS;
}

int cr_mpi_get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* How a type with large counts reports its arguments (the _c constructors' layout): integers
 * stay integers only where the constructor takes an int (subarray: ndims and order; darray:
 * all but the global sizes); every count, blocklength and displacement is a large count. */
static void large_layout(const cr_dt_derived *d, int *ni, int *nl, int *na)
{
    if (d->combiner == MPI_COMBINER_SUBARRAY)
        *ni = 2, *nl = d->ni - 2, *na = d->na;
    else if (d->combiner == MPI_COMBINER_DARRAY)
        *ni = d->ni - d->ints[2], *nl = d->ints[2], *na = d->na;
    else
        *ni = 0, *nl = d->ni + d->na, *na = 0;
}

int cr_mpi_type_get_envelope_c(cr_dtype *dt, MPI_Count *num_integers, MPI_Count *num_addresses,
                               MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    if (!dt->d) {
        *num_integers = *num_addresses = *num_large_counts = *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    int ni = dt->d->ni, nl = 0, na = dt->d->na;
    if (dt->d->large)
        large_layout(dt->d, &ni, &nl, &na);
    *num_integers = ni;
    *num_addresses = na;
    *num_large_counts = nl;
    *num_datatypes = dt->d->nt;
    *combiner = dt->d->combiner;
    return MPI_SUCCESS;
}

int cr_mpi_type_get_contents_c(cr_dtype *dt, MPI_Count max_integers, MPI_Count max_addresses,
                               MPI_Count max_large_counts, MPI_Count max_datatypes, int integers[],
                               MPI_Aint addresses[], MPI_Count large_counts[], MPI_Datatype datatypes[])
{
    cr_dt_derived *d = dt->d;
    if (!d)
        return cr_err(MPI_ERR_TYPE, "datatype is a named predefined datatype: it has no contents "
                                    "(MPI_Type_get_envelope says MPI_COMBINER_NAMED)");
    int ni = d->ni, nl = 0, na = d->na;
    if (d->large)
        large_layout(d, &ni, &nl, &na);
    if (max_integers < ni || max_addresses < na || max_large_counts < nl || max_datatypes < d->nt)
        return cr_err(MPI_ERR_ARG,
                      "the arrays are too small: the type has %d integers, %d addresses, %d large counts and %d "
                      "datatypes, the arrays hold %lld, %lld, %lld and %lld",
                      ni, na, nl, d->nt, (long long)max_integers, (long long)max_addresses,
                      (long long)max_large_counts, (long long)max_datatypes);
    /* (the arrays may be NULL where nothing goes in them) */
    if (!d->large) {
        if (ni)
            memcpy(integers, d->ints, (size_t)ni * sizeof *integers);
        if (na)
            memcpy(addresses, d->aints, (size_t)na * sizeof *addresses);
    } else if (d->combiner == MPI_COMBINER_SUBARRAY) { /* ndims, order | sizes, subsizes, starts */
        integers[0] = d->ints[0];
        integers[1] = d->ints[d->ni - 1];
        memcpy(large_counts, d->large + 1, (size_t)nl * sizeof *large_counts);
    } else if (d->combiner == MPI_COMBINER_DARRAY) { /* size, rank, ndims, distribs, dargs, psizes, order | gsizes */
        int nd = d->ints[2];
        integers[0] = d->ints[0], integers[1] = d->ints[1], integers[2] = nd;
        memcpy(integers + 3, d->ints + 3 + nd, (size_t)(3 * nd + 1) * sizeof *integers);
        memcpy(large_counts, d->large + 3, (size_t)nd * sizeof *large_counts);
    } else { /* the integers, then the addresses, all as large counts */
        memcpy(large_counts, d->large, (size_t)d->ni * sizeof *large_counts);
        for (int i = 0; i < d->na; i++)
            large_counts[d->ni + i] = d->aints[i];
    }
    /* Derived types come back as new references the caller frees; predefined ones as they are. */
    for (int i = 0; i < d->nt; i++) {
        cr_obj_ref(d->types[i]);
        d->types[i]->handles++;
        datatypes[i] = (MPI_Datatype)cr_handle_of(d->types[i]);
    }
    return MPI_SUCCESS;
}

/* The int forms: a type made with counts an int cannot hold has no answer in them. */
static int no_large(const cr_dtype *dt)
{
    return dt->d && dt->d->large
               ? cr_err(MPI_ERR_TYPE, "datatype was made with counts that do not fit an int: "
                                      "MPI_Type_get_envelope_c and MPI_Type_get_contents_c return them")
               : MPI_SUCCESS;
}

int cr_mpi_type_get_envelope(cr_dtype *dt, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner)
{
    int err = no_large(dt);
    if (err)
        return err;
    MPI_Count ni, na, nl, nt;
    cr_mpi_type_get_envelope_c(dt, &ni, &na, &nl, &nt, combiner);
    *num_integers = (int)ni, *num_addresses = (int)na, *num_datatypes = (int)nt;
    return MPI_SUCCESS;
}

int cr_mpi_type_get_contents(cr_dtype *dt, int max_integers, int max_addresses, int max_datatypes, int integers[],
                             MPI_Aint addresses[], MPI_Datatype datatypes[])
{
    int err = no_large(dt);
    return err ? err
               : cr_mpi_type_get_contents_c(dt, max_integers, max_addresses, 0, max_datatypes, integers, addresses,
                                            NULL, datatypes);
}

int cr_mpi_type_set_name(cr_dtype *dt, const char *name)
{
    if (!dt->d) { /* predefined types may be renamed too */
        size_t len = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
        char *copy = malloc(len + 1);
        if (!copy)
            return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype name");
        memcpy(copy, name, len);
        copy[len] = 0;
        if (dt->name_owned)
            free((char *)dt->name);
        dt->name = copy;
        dt->name_owned = 1;
        return MPI_SUCCESS;
    }
    snprintf(dt->d->name, sizeof dt->d->name, "%s", name);
    return MPI_SUCCESS;
}

int cr_mpi_type_get_name(cr_dtype *dt, char *name, int *resultlen)
{
    if (!dt) {
        *resultlen = cr_strlcpy(name, "MPI_DATATYPE_NULL", MPI_MAX_OBJECT_NAME);
        return MPI_SUCCESS;
    }
    const char *n = dt->d ? dt->d->name : dt->name ? dt->name : "";
    /* Synonyms share one handle in the ABI: MPI_Type_get_name answers with the standard's main
     * name, as MPICH does (error messages keep the other spelling, which users write as often). */
    if (!dt->name_owned && dt->obj.handle == (uintptr_t)MPI_LONG_LONG_INT)
        n = "MPI_LONG_LONG_INT";
    else if (!dt->name_owned && dt->obj.handle == (uintptr_t)MPI_C_COMPLEX)
        n = "MPI_C_COMPLEX";
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", n);
    if (*resultlen >= MPI_MAX_OBJECT_NAME)
        *resultlen = MPI_MAX_OBJECT_NAME - 1;
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- predefined layouts */

cr_dt_loop *cr_dt_leaf_layout(const cr_dtype *dt)
{
    cr_dt_loop *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    if (dt->flags & CR_DT_CONTIG || dt->nblocks <= 1) {
        *l = (cr_dt_loop){.kind = CR_LOOP_RUN, .elem = (uint32_t)(dt->size ? dt->size : 1), .size = (uint64_t)dt->size};
        return l;
    }
    /* a pair type: its members, with the padding between them */
    cr_dt_entry *en = calloc((size_t)dt->nblocks, sizeof *en);
    uint64_t *prefix = calloc((size_t)dt->nblocks + 1, sizeof *prefix);
    if (!en || !prefix) {
        free(en), free(prefix), free(l);
        return NULL;
    }
    for (int i = 0; i < dt->nblocks; i++) {
        en[i] = (cr_dt_entry){.disp = dt->blocks[i].offset, .count = 1, .run = (uint64_t)dt->blocks[i].length,
                              .elem = (uint32_t)dt->blocks[i].length};
        prefix[i + 1] = prefix[i] + (uint64_t)dt->blocks[i].length;
    }
    *l = (cr_dt_loop){.kind = CR_LOOP_BLOCKS, .elem = 0, .size = (uint64_t)dt->size, .nentries = dt->nblocks,
                      .entries = en, .prefix = prefix};
    return l;
}

int cr_dt_children(const cr_dtype *dt, const int **lens, cr_dtype *const **types)
{
    const cr_dt_derived *d = dt->d;
    if (!d || d->nt == 0)
        return 0;
    *types = d->types;
    if (d->combiner == MPI_COMBINER_STRUCT) {
        *lens = d->ints + 1; /* contents: count, blocklengths[count], ... */
        return d->nt;
    }
    *lens = NULL;
    return 1;
}

/* ----------------------------------------------------------------- types by size and precision */

int cr_mpi_type_get_value_index(cr_dtype *value_type, cr_dtype *index_type, MPI_Datatype *pair_type)
{
    static const struct { MPI_Datatype value, index, pair; } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},       {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},         {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},       {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},           {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    uintptr_t v = cr_handle_of(value_type), i = cr_handle_of(index_type);
    *pair_type = MPI_DATATYPE_NULL; /* no predefined pair: the standard's answer, not an error */
    for (size_t k = 0; k < CR_ARRAY_LEN(pairs); k++)
        if ((uintptr_t)pairs[k].value == v && (uintptr_t)pairs[k].index == i)
            *pair_type = pairs[k].pair;
    return MPI_SUCCESS;
}

/* The Fortran types of each class, by size (MPI_Type_match_size and the f90 constructors). */
static MPI_Datatype by_size(int typeclass, MPI_Count size)
{
    static const struct { int cls; MPI_Count size; MPI_Datatype type; } table[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},  {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},  {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16},
        {MPI_TYPECLASS_REAL, 2, MPI_REAL2},        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},
        {MPI_TYPECLASS_REAL, 8, MPI_REAL8},        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},
        {MPI_TYPECLASS_COMPLEX, 4, MPI_COMPLEX4},  {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
        {MPIX_TYPECLASS_LOGICAL, 1, MPI_LOGICAL1}, {MPIX_TYPECLASS_LOGICAL, 2, MPI_LOGICAL2},
        {MPIX_TYPECLASS_LOGICAL, 4, MPI_LOGICAL4}, {MPIX_TYPECLASS_LOGICAL, 8, MPI_LOGICAL8},
        {MPIX_TYPECLASS_LOGICAL, 16, MPI_LOGICAL16},
    };
    for (size_t k = 0; k < CR_ARRAY_LEN(table); k++) {
        cr_dtype *t = cr_dtype_get(table[k].type);
        /* a type this compiler has no representation for has size 0 or no basic type */
        if (table[k].cls == typeclass && table[k].size == size && t && t->size == size && t->basic != CR_BASIC_NONE)
            return table[k].type;
    }
    return MPI_DATATYPE_NULL;
}

int cr_mpi_type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_COMPLEX &&
        typeclass != MPIX_TYPECLASS_LOGICAL)
        return cr_err(MPI_ERR_ARG, "invalid typeclass=%d: must be MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_REAL or "
                                   "MPI_TYPECLASS_COMPLEX", typeclass);
    *datatype = by_size(typeclass, size);
    if (*datatype == MPI_DATATYPE_NULL)
        return cr_err(MPI_ERR_ARG, "invalid size=%d: no %s type of %d bytes", size,
                      typeclass == MPI_TYPECLASS_INTEGER ? "integer" : typeclass == MPI_TYPECLASS_REAL ? "real"
                      : typeclass == MPI_TYPECLASS_COMPLEX ? "complex" : "logical", size);
    return MPI_SUCCESS;
}

/* The types MPI_Type_create_f90_* return: one per (class, precision, range) asked for, kept for
 * the life of the process and returned again for the same arguments (the standard forbids
 * freeing them). Each has the layout and reductions of the sized type it stands for, and the
 * combiner MPI_COMBINER_F90_* with its arguments as contents. */
typedef struct f90_type {
    struct f90_type *next;
    int combiner, p, r;
    MPI_Datatype handle;
} f90_type;
static f90_type *f90_types;

/* The byte size Fortran's selected_real_kind / selected_int_kind give for p digits and range r
 * (MPI_UNDEFINED: not constrained), on IEEE hardware as gfortran lays it out. */
static MPI_Count f90_size(int combiner, int p, int r)
{
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        static const struct { int r; MPI_Count size; } ints[] = {{2, 1}, {4, 2}, {9, 4}, {18, 8}, {38, 16}};
        for (size_t k = 0; k < CR_ARRAY_LEN(ints); k++)
            if (r <= ints[k].r)
                return ints[k].size;
        return 0;
    }
    static const struct { int p, r; MPI_Count size; } reals[] = {{6, 37, 4}, {15, 307, 8}, {33, 4931, 16}};
    for (size_t k = 0; k < CR_ARRAY_LEN(reals); k++)
        if ((p == MPI_UNDEFINED || p <= reals[k].p) && (r == MPI_UNDEFINED || r <= reals[k].r))
            return reals[k].size * (combiner == MPI_COMBINER_F90_COMPLEX ? 2 : 1);
    return 0;
}

static int f90_create(int combiner, int p, int r, MPI_Datatype *newtype)
{
    const char *what = combiner == MPI_COMBINER_F90_INTEGER ? "MPI_Type_create_f90_integer"
                       : combiner == MPI_COMBINER_F90_REAL  ? "MPI_Type_create_f90_real"
                                                            : "MPI_Type_create_f90_complex";
    if (combiner != MPI_COMBINER_F90_INTEGER && p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return cr_err(MPI_ERR_ARG, "%s: p and r are both MPI_UNDEFINED: at least one must be given", what);
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED))
        return cr_err(MPI_ERR_ARG, "%s: invalid p=%d or r=%d: must not be negative", what, p, r);
    for (f90_type *f = f90_types; f; f = f->next)
        if (f->combiner == combiner && f->p == p && f->r == r) {
            *newtype = f->handle;
            return MPI_SUCCESS;
        }
    int cls = combiner == MPI_COMBINER_F90_INTEGER ? MPI_TYPECLASS_INTEGER
              : combiner == MPI_COMBINER_F90_REAL  ? MPI_TYPECLASS_REAL
                                                   : MPI_TYPECLASS_COMPLEX;
    MPI_Count size = f90_size(combiner, p, r);
    MPI_Datatype sized = size ? by_size(cls, size) : MPI_DATATYPE_NULL;
    if (sized == MPI_DATATYPE_NULL)
        return cr_err(MPI_ERR_ARG, "%s: no Fortran kind has p=%d digits and range r=%d on this platform", what, p, r);
    cr_dtype *base = cr_dtype_get(sized);
    f90_type *f = calloc(1, sizeof *f);
    MPI_Datatype h;
    cr_dtype *dt = NULL;
    int err = f ? dup_bare(base, &h, &dt) : cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
    if (err) {
        free(f);
        return err;
    }
    cr_dt_derived *d = dt->d;
    /* contents: (p, r) for reals and complexes, (r) for integers; no datatypes */
    for (int i = 0; i < d->nt; i++)
        cr_dtype_release(d->types[i]);
    d->combiner = combiner;
    d->nt = d->na = 0;
    d->ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    d->ints[0] = combiner == MPI_COMBINER_F90_INTEGER ? r : p;
    if (d->ni == 2) {
        int *two = realloc(d->ints, 2 * sizeof *two);
        if (!two) {
            cr_dtype_release(dt);
            free(f);
            return cr_err(MPI_ERR_NO_MEM, "out of memory for a datatype");
        }
        d->ints = two;
        d->ints[1] = r;
    }
    dt->obj.predefined = 1; /* lives for the process; MPI_Type_free refuses it */
    *f = (f90_type){.next = f90_types, .combiner = combiner, .p = p, .r = r, .handle = h};
    f90_types = f;
    *newtype = h;
    return MPI_SUCCESS;
}

int cr_mpi_type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return f90_create(MPI_COMBINER_F90_REAL, p, r, newtype);
}

int cr_mpi_type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return f90_create(MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}

int cr_mpi_type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    return f90_create(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, newtype);
}
