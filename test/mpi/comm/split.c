/* MPI_Comm_split and MPI_Comm_split_type: who ends up in which communicator, at which rank.
 *   - colors (rank % 3), with MPI_UNDEFINED giving MPI_COMM_NULL;
 *   - keys: reversed order (key = -rank), ties broken by the old rank (key = rank / 2, a
 *     constant key, key = rank % 2);
 *   - nested splits (a split of a split);
 *   - the members and their order are checked from the communicator itself (an allgather of
 *     world ranks over it, MPI_Group_translate_ranks) and it works (allreduce, point-to-point);
 *   - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): everyone (one node here), ordered by key;
 *     MPI_UNDEFINED split type gives MPI_COMM_NULL;
 *   - MPI_Comm_compare: MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL;
 *   - a negative color other than MPI_UNDEFINED is an error. */
#include "mpitest.h"

static int rank, size;

/* What the split of MPI_COMM_WORLD by (color_of, key_of) must give this process: members in
 * order (world ranks) and its rank; returns the member count, 0 for MPI_UNDEFINED. */
static int expected_members(int (*color_of)(int), int (*key_of)(int), int *members, int *myrank)
{
    int c = color_of(rank), n = 0;
    if (c == MPI_UNDEFINED)
        return 0;
    for (int r = 0; r < size; r++)
        if (color_of(r) == c)
            members[n++] = r;
    /* Stable order by key, then by old rank (members is already in old-rank order). */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && key_of(members[j - 1]) > key_of(members[j]); j--) {
            int t = members[j];
            members[j] = members[j - 1];
            members[j - 1] = t;
        }
    for (int i = 0; i < n; i++)
        if (members[i] == rank)
            *myrank = i;
    return n;
}

/* Checks comm against the expected members (world ranks in rank order). */
static void check_comm(MPI_Comm comm, const int *members, int n, int myrank, const char *what)
{
    if (n == 0) {
        CHECK(comm == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
        return;
    }
    CHECK(comm != MPI_COMM_NULL, "%s: got MPI_COMM_NULL, expected %d members", what, n);
    if (comm == MPI_COMM_NULL)
        return;
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    CHECK(r == myrank && p == n, "%s: rank %d of %d, expected %d of %d", what, r, p, myrank, n);
    if (p != n)
        return;
    /* Who is at each rank, as the communicator itself says. */
    int *got = malloc((size_t)n * sizeof *got);
    MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, comm);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == members[i], "%s: rank %d is world rank %d, expected %d", what, i, got[i], members[i]);
    /* The same through groups. */
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = malloc((size_t)n * sizeof *idx), *tr = malloc((size_t)n * sizeof *tr);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, wg, tr);
    for (int i = 0; i < n; i++)
        CHECK(tr[i] == members[i], "%s: group rank %d translates to world rank %d, expected %d", what, i, tr[i],
              members[i]);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    /* It works: a sum over the members, and a ring of messages. */
    long sum = 0, want = 0, mine = rank;
    for (int i = 0; i < n; i++)
        want += members[i];
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
    CHECK(sum == want, "%s: allreduce of world ranks gave %ld, expected %ld", what, sum, want);
    int from = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (r + 1) % n, 3, &from, 1, MPI_INT, (r + n - 1) % n, 3, comm, MPI_STATUS_IGNORE);
    CHECK(from == members[(r + n - 1) % n], "%s: ring message from world rank %d, expected %d", what, from,
          members[(r + n - 1) % n]);
    free(got);
    free(idx);
    free(tr);
}

static int c_mod3(int r) { return r % 3; }
static int c_undef(int r) { return r % 4 == 3 ? MPI_UNDEFINED : r % 2; }
static int c_zero(int r) { (void)r; return 0; }
static int c_half(int r) { return r < size / 2; }
static int k_neg(int r) { return -r; }
static int k_pairs(int r) { return r / 2; }
static int k_pairs_rev(int r) { return -(r / 2); }
static int k_const(int r) { (void)r; return 5; }
static int k_parity(int r) { return r % 2; }

static void one_split(int (*color_of)(int), int (*key_of)(int), const char *what, MPI_Comm *keep)
{
    int *members = malloc((size_t)size * sizeof *members), myrank = -1;
    int n = expected_members(color_of, key_of, members, &myrank);
    MPI_Comm c;
    CHECK_CLASS(MPI_Comm_split(MPI_COMM_WORLD, color_of(rank), key_of(rank), &c), MPI_SUCCESS);
    check_comm(c, members, n, myrank, what);
    if (keep)
        *keep = c;
    else if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    free(members);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    one_split(c_mod3, k_neg, "color rank%3, key -rank", NULL);
    one_split(c_mod3, k_pairs, "color rank%3, key rank/2", NULL);
    one_split(c_zero, k_pairs_rev, "one color, key -(rank/2) (ties by old rank)", NULL);
    one_split(c_zero, k_const, "one color, constant key", NULL);
    one_split(c_zero, k_parity, "one color, key rank%2", NULL);
    one_split(c_undef, k_neg, "MPI_UNDEFINED for rank%4==3, key -rank", NULL);
    one_split(c_half, k_neg, "two halves, key -rank", NULL);

    /* Nested: split the reversed world by parity of the new rank, ranks reversed again. */
    MPI_Comm rev, nested;
    one_split(c_zero, k_neg, "one color, key -rank", &rev);
    int rr;
    MPI_Comm_rank(rev, &rr);
    CHECK_CLASS(MPI_Comm_split(rev, rr % 2, -rr, &nested), MPI_SUCCESS);
    {
        /* rev rank q is world rank size-1-q; nested: rev ranks of my parity, descending. */
        int *members = malloc((size_t)size * sizeof *members), n = 0, myrank = -1;
        for (int q = size - 1; q >= 0; q--)
            if (q % 2 == rr % 2) {
                if (q == rr)
                    myrank = n;
                members[n++] = size - 1 - q;
            }
        check_comm(nested, members, n, myrank, "a split of a split");
        free(members);
    }
    /* And a split of that, everyone apart. */
    MPI_Comm alone;
    int nr;
    MPI_Comm_rank(nested, &nr);
    MPI_Comm_split(nested, nr, 0, &alone);
    check_comm(alone, &rank, 1, 0, "a split of a split of a split, one process each");
    MPI_Comm_free(&alone);

    /* Split by type: everyone shares this node. */
    MPI_Comm shared, shared_rev, none;
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared), MPI_SUCCESS);
    {
        int *members = malloc((size_t)size * sizeof *members);
        for (int i = 0; i < size; i++)
            members[i] = i;
        check_comm(shared, members, size, rank, "MPI_COMM_TYPE_SHARED, key 0");
        for (int i = 0; i < size; i++)
            members[i] = size - 1 - i;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &shared_rev);
        check_comm(shared_rev, members, size, size - 1 - rank, "MPI_COMM_TYPE_SHARED, key -rank");
        free(members);
    }
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none), MPI_SUCCESS);
    CHECK(none == MPI_COMM_NULL, "MPI_Comm_split_type(MPI_UNDEFINED) did not give MPI_COMM_NULL");
    /* Some processes asking for no communicator while the others split by node. */
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                    &none),
                MPI_SUCCESS);
    {
        int *members = malloc((size_t)size * sizeof *members), n = 0;
        for (int i = 0; i < size; i += 2)
            members[n++] = i;
        check_comm(none, members, rank % 2 ? 0 : n, rank / 2, "MPI_COMM_TYPE_SHARED for even ranks only");
        if (none != MPI_COMM_NULL)
            MPI_Comm_free(&none);
        free(members);
    }

    /* Comparisons. */
    int result = -1;
    MPI_Comm_compare(shared, shared, &result);
    CHECK(result == MPI_IDENT, "a communicator vs itself: %d", result);
    MPI_Comm_compare(MPI_COMM_WORLD, shared, &result);
    CHECK(result == MPI_CONGRUENT, "MPI_COMM_WORLD vs the same processes in the same order: %d", result);
    MPI_Comm_compare(MPI_COMM_WORLD, shared_rev, &result);
    CHECK(result == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "MPI_COMM_WORLD vs the same processes reversed: %d",
          result);
    MPI_Comm_compare(rev, shared_rev, &result);
    CHECK(result == MPI_CONGRUENT, "two reversed splits of the world: %d", result);
    MPI_Comm_compare(MPI_COMM_WORLD, nested, &result);
    CHECK(result == (size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "MPI_COMM_WORLD vs a part of it: %d", result);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &result);
    CHECK(result == (size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "MPI_COMM_WORLD vs MPI_COMM_SELF: %d", result);
    /* The nested split holds the processes of my world-rank parity in world-rank order. */
    MPI_Comm halves, halves_rev;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &halves_rev);
    int hs;
    MPI_Comm_size(halves, &hs);
    MPI_Comm_compare(halves, nested, &result);
    CHECK(result == MPI_CONGRUENT, "a split by parity vs a nested split with the same members: %d", result);
    MPI_Comm_compare(halves, halves_rev, &result);
    CHECK(result == (hs > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "a split by parity vs the same reversed: %d", result);
    MPI_Comm_free(&halves_rev);

    /* A negative color that is not MPI_UNDEFINED is an error (at every process alike). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm badc = MPI_COMM_NULL;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &badc);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_split with color -5 succeeded");
    if (rc == MPI_SUCCESS && badc != MPI_COMM_NULL)
        MPI_Comm_free(&badc);
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 123456, 0, MPI_INFO_NULL, &badc), MPI_ERR_ARG);
    /* And the world still agrees afterwards. */
    int one = 1, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == size, "allreduce after failed splits gave %d", total);

    MPI_Comm_free(&halves);
    MPI_Comm_free(&shared);
    MPI_Comm_free(&shared_rev);
    MPI_Comm_free(&nested);
    MPI_Comm_free(&rev);
    return mt_finish();
}
