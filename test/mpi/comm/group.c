/* Groups: MPI_Comm_group, MPI_Group_size/rank, MPI_Group_translate_ranks (with MPI_PROC_NULL and
 * ranks absent from the other group), MPI_Group_compare (IDENT, SIMILAR, UNEQUAL), incl, excl,
 * range_incl, range_excl, union, intersection, difference (members and their order, as the
 * standard orders them: group1's order first, then group2's new members), MPI_GROUP_EMPTY,
 * MPI_Group_free; and with MPI_ERRORS_RETURN: bad ranks give MPI_ERR_RANK, bad arguments
 * MPI_ERR_ARG, bad handles MPI_ERR_GROUP. */
#include "mpitest.h"

static int rank, size;
static MPI_Group world;

/* Checks that g holds exactly the world ranks `want[0..n)` in that order, and this process's
 * rank in it. */
static void check_group(MPI_Group g, const int *want, int n, const char *what)
{
    int gs = -1, gr = -2, myrank = MPI_UNDEFINED;
    MPI_Group_size(g, &gs);
    MPI_Group_rank(g, &gr);
    CHECK(gs == n, "%s: size %d, expected %d", what, gs, n);
    for (int i = 0; i < n; i++)
        if (want[i] == rank)
            myrank = i;
    CHECK(gr == myrank, "%s: MPI_Group_rank gave %d, expected %d", what, gr, myrank);
    if (gs != n || n == 0)
        return;
    int *idx = malloc((size_t)n * sizeof *idx), *tr = malloc((size_t)n * sizeof *tr);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, world, tr);
    for (int i = 0; i < n; i++)
        CHECK(tr[i] == want[i], "%s: member %d is world rank %d, expected %d", what, i, tr[i], want[i]);
    free(idx);
    free(tr);
}

static void check_compare(MPI_Group a, MPI_Group b, int want, const char *what)
{
    int result = -1;
    MPI_Group_compare(a, b, &result);
    CHECK(result == want, "%s: MPI_Group_compare gave %d, expected %d", what, result, want);
}

static int class_of(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *l = malloc((size_t)(2 * size + 2) * sizeof *l), *w = malloc((size_t)(2 * size + 2) * sizeof *w);

    /* The world's group, twice; MPI_COMM_SELF's. */
    MPI_Group world2, self;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Comm_group(MPI_COMM_WORLD, &world2);
    for (int i = 0; i < size; i++)
        w[i] = i;
    check_group(world, w, size, "the group of MPI_COMM_WORLD");
    check_compare(world, world2, MPI_IDENT, "two groups of MPI_COMM_WORLD");
    MPI_Comm_group(MPI_COMM_SELF, &self);
    check_group(self, &rank, 1, "the group of MPI_COMM_SELF");
    check_compare(world, self, size > 1 ? MPI_UNEQUAL : MPI_IDENT, "world vs self");

    /* incl: the even ranks, and everyone reversed. */
    MPI_Group evens, odds, rev;
    int ne = (size + 1) / 2, no = size / 2;
    for (int i = 0; i < ne; i++)
        l[i] = 2 * i;
    MPI_Group_incl(world, ne, l, &evens);
    check_group(evens, l, ne, "MPI_Group_incl of the even ranks");
    for (int i = 0; i < size; i++)
        l[i] = size - 1 - i;
    MPI_Group_incl(world, size, l, &rev);
    check_group(rev, l, size, "MPI_Group_incl in reversed order");
    check_compare(world, rev, size > 1 ? MPI_SIMILAR : MPI_IDENT, "world vs reversed");
    check_compare(world, evens, size > 1 ? MPI_UNEQUAL : MPI_IDENT, "world vs evens");

    /* excl: without the even ranks. */
    for (int i = 0; i < ne; i++)
        l[i] = 2 * i;
    MPI_Group_excl(world, ne, l, &odds);
    for (int i = 0; i < no; i++)
        w[i] = 2 * i + 1;
    check_group(odds, w, no, "MPI_Group_excl of the even ranks");
    /* excl from a reordered group keeps its order. */
    MPI_Group rev_no_first;
    int zero = 0;
    MPI_Group_excl(rev, 1, &zero, &rev_no_first);
    for (int i = 0; i < size - 1; i++)
        w[i] = size - 2 - i;
    check_group(rev_no_first, w, size - 1, "MPI_Group_excl of rank 0 of the reversed group");

    /* translate_ranks: to the reversed group, with MPI_PROC_NULL and absent ranks. */
    {
        int n = 0, out[64];
        for (int i = 0; i < size && n < 60; i++)
            l[n++] = i;
        l[n++] = MPI_PROC_NULL;
        MPI_Group_translate_ranks(world, n, l, rev, out);
        for (int i = 0; i < n - 1; i++)
            CHECK(out[i] == size - 1 - i, "world rank %d in the reversed group: %d", i, out[i]);
        CHECK(out[n - 1] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[n - 1]);
        int e[3] = {0, MPI_PROC_NULL, ne - 1};
        MPI_Group_translate_ranks(evens, 3, e, odds, out);
        CHECK(out[0] == MPI_UNDEFINED && out[1] == MPI_PROC_NULL && out[2] == MPI_UNDEFINED,
              "evens to odds: %d %d %d, expected MPI_UNDEFINED, MPI_PROC_NULL, MPI_UNDEFINED", out[0], out[1], out[2]);
        MPI_Group_translate_ranks(evens, 1, e, world, out);
        CHECK(out[0] == 0, "evens rank 0 in the world: %d", out[0]);
        CHECK_CLASS(MPI_Group_translate_ranks(world, 0, NULL, rev, NULL), MPI_SUCCESS);
    }

    /* range_incl / range_excl. */
    {
        MPI_Group g;
        int r1[1][3] = {{0, size - 1, 2}};
        MPI_Group_range_incl(world, 1, r1, &g);
        for (int i = 0; i < ne; i++)
            w[i] = 2 * i;
        check_group(g, w, ne, "MPI_Group_range_incl (0, p-1, 2)");
        check_compare(g, evens, MPI_IDENT, "range evens vs incl evens");
        MPI_Group_free(&g);
        int r2[1][3] = {{size - 1, 0, -1}};
        MPI_Group_range_incl(world, 1, r2, &g);
        check_compare(g, rev, MPI_IDENT, "range (p-1, 0, -1) vs the reversed group");
        MPI_Group_free(&g);
        /* Two triplets, the second descending with a stride that skips past its end. */
        int r3[2][3] = {{0, 0, 1}, {size - 1, 1, -3}};
        int n = 0;
        w[n++] = 0;
        for (int x = size - 1; x >= 1; x -= 3)
            w[n++] = x;
        MPI_Group_range_incl(world, size > 1 ? 2 : 1, r3, &g);
        check_group(g, w, size > 1 ? n : 1, "MPI_Group_range_incl {(0,0,1), (p-1,1,-3)}");
        MPI_Group_free(&g);
        MPI_Group_range_excl(world, 1, r1, &g);
        check_compare(g, odds, MPI_IDENT, "range_excl of the evens vs the odds");
        MPI_Group_free(&g);
        int r4[1][3] = {{0, size - 1, 1}};
        MPI_Group_range_excl(world, 1, r4, &g);
        check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "range_excl of everyone vs MPI_GROUP_EMPTY");
        CHECK_CLASS(MPI_Group_free(&g), MPI_SUCCESS);
        CHECK(g == MPI_GROUP_NULL, "MPI_Group_free did not reset the handle");
    }

    /* Set operations and their order. */
    {
        MPI_Group g;
        int n = 0;
        /* union: evens in order, then rev's other members (the odds, descending). */
        MPI_Group_union(evens, rev, &g);
        for (int i = 0; i < ne; i++)
            w[n++] = 2 * i;
        for (int x = size - 1; x >= 0; x--)
            if (x % 2)
                w[n++] = x;
        check_group(g, w, n, "union(evens, reversed)");
        MPI_Group_free(&g);
        /* intersection: in rev's order. */
        MPI_Group_intersection(rev, evens, &g);
        n = 0;
        for (int x = size - 1; x >= 0; x--)
            if (x % 2 == 0)
                w[n++] = x;
        check_group(g, w, n, "intersection(reversed, evens)");
        MPI_Group_free(&g);
        /* difference: rev without the evens. */
        MPI_Group_difference(rev, evens, &g);
        n = 0;
        for (int x = size - 1; x >= 0; x--)
            if (x % 2)
                w[n++] = x;
        check_group(g, w, n, "difference(reversed, evens)");
        MPI_Group_free(&g);
        MPI_Group_union(odds, evens, &g);
        n = 0;
        for (int x = 1; x < size; x += 2)
            w[n++] = x;
        for (int x = 0; x < size; x += 2)
            w[n++] = x;
        check_group(g, w, n, "union(odds, evens)");
        check_compare(g, world, size > 2 ? MPI_SIMILAR : size == 2 ? MPI_SIMILAR : MPI_IDENT, "odds+evens vs world");
        MPI_Group_free(&g);
        /* Empty results and MPI_GROUP_EMPTY as an operand. */
        MPI_Group_intersection(evens, odds, &g);
        check_group(g, w, 0, "intersection(evens, odds)");
        check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "an empty intersection vs MPI_GROUP_EMPTY");
        CHECK_CLASS(MPI_Group_free(&g), MPI_SUCCESS);
        MPI_Group_difference(world, world2, &g);
        check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "difference(world, world)");
        MPI_Group_free(&g);
        MPI_Group_union(MPI_GROUP_EMPTY, rev, &g);
        check_compare(g, rev, MPI_IDENT, "union(empty, reversed) vs reversed");
        MPI_Group_free(&g);
        MPI_Group_union(rev, rev, &g);
        check_compare(g, rev, MPI_IDENT, "union(reversed, reversed) vs reversed");
        MPI_Group_free(&g);
        MPI_Group_intersection(world, MPI_GROUP_EMPTY, &g);
        check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "intersection(world, empty)");
        MPI_Group_free(&g);
        MPI_Group_difference(evens, MPI_GROUP_EMPTY, &g);
        check_compare(g, evens, MPI_IDENT, "difference(evens, empty) vs evens");
        MPI_Group_free(&g);
        int gs = -1, gr = -1;
        MPI_Group_size(MPI_GROUP_EMPTY, &gs);
        MPI_Group_rank(MPI_GROUP_EMPTY, &gr);
        CHECK(gs == 0 && gr == MPI_UNDEFINED, "MPI_GROUP_EMPTY: size %d rank %d", gs, gr);
        MPI_Group_incl(world, 0, l, &g);
        check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "MPI_Group_incl of no ranks");
        MPI_Group_free(&g);
        MPI_Group_excl(world, 0, l, &g);
        check_compare(g, world, MPI_IDENT, "MPI_Group_excl of no ranks");
        MPI_Group_free(&g);
    }

    /* A group outlives its communicator, and a communicator its group. */
    {
        MPI_Comm c;
        MPI_Group g;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c);
        MPI_Comm_group(c, &g);
        MPI_Comm_free(&c);
        int n = 0;
        for (int x = size - 1; x >= 0; x--)
            if (x % 2 == rank % 2)
                w[n++] = x;
        check_group(g, w, n, "the group of a freed split communicator");
        MPI_Group_free(&g);
    }

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    {
        MPI_Group g = MPI_GROUP_NULL;
        int bad[2] = {size, 0}, neg = -1, dup2[2] = {0, 0}, out[2];
        CHECK_CLASS(MPI_Group_incl(world, 1, bad, &g), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_incl(world, 1, &neg, &g), MPI_ERR_RANK);
        if (size > 1)
            CHECK_CLASS(MPI_Group_incl(world, 2, dup2, &g), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_excl(world, 1, bad, &g), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_incl(world, size + 1, l, &g), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Group_incl(world, -1, l, &g), MPI_ERR_ARG);
        CHECK(g == MPI_GROUP_NULL, "a refused call wrote newgroup");
        CHECK_CLASS(MPI_Group_translate_ranks(world, 1, bad, rev, out), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_translate_ranks(world, 1, &neg, rev, out), MPI_ERR_RANK);
        int r0[1][3] = {{0, size - 1, 0}}, r1[1][3] = {{size, 0, -1}}, r2[2][3] = {{0, size - 1, 1}, {0, 0, 1}};
        CHECK_CLASS(MPI_Group_range_incl(world, 1, r0, &g), MPI_ERR_ARG);
        int c1 = class_of(MPI_Group_range_incl(world, 1, r1, &g));
        CHECK(c1 == MPI_ERR_RANK || c1 == MPI_ERR_ARG, "range_incl starting at rank %d: class %d", size, c1);
        int c2 = class_of(MPI_Group_range_incl(world, 2, r2, &g));
        CHECK(c2 == MPI_ERR_RANK || c2 == MPI_ERR_ARG, "range_incl naming rank 0 twice: class %d", c2);
        c2 = class_of(MPI_Group_range_excl(world, 2, r2, &g));
        CHECK(c2 == MPI_ERR_RANK || c2 == MPI_ERR_ARG, "range_excl naming rank 0 twice: class %d", c2);
        int x;
        CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &x), MPI_ERR_GROUP);
        CHECK_CLASS(MPI_Group_rank(MPI_GROUP_NULL, &x), MPI_ERR_GROUP);
        CHECK_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
        CHECK_CLASS(MPI_Group_compare(MPI_GROUP_NULL, world, &x), MPI_ERR_GROUP);
        MPI_Group null = MPI_GROUP_NULL, freed;
        CHECK_CLASS(MPI_Group_free(&null), MPI_ERR_GROUP);
        MPI_Group_incl(world, 1, &zero, &freed);
        g = freed;
        MPI_Group_free(&g);
        CHECK_CLASS(MPI_Group_size(freed, &x), MPI_ERR_GROUP);
        CHECK(g == MPI_GROUP_NULL, "MPI_Group_free did not reset the handle");
    }

    MPI_Group_free(&rev_no_first);
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    MPI_Group_free(&rev);
    MPI_Group_free(&self);
    MPI_Group_free(&world2);
    MPI_Group_free(&world);
    free(l);
    free(w);
    return mt_finish();
}
