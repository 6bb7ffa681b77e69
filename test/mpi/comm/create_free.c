/* Creating and freeing communicators:
 *   - 5000 MPI_Comm_dup + MPI_Comm_free in a row (more than the 4094 context ids Courier has),
 *     and 3 rounds of holding 1000 at once: context ids are recycled, every communicator works;
 *   - context ids agreed when processes have used different ones (each half of the world holds
 *     its own set of communicators, then the world makes new ones): traffic with the same tags
 *     on all of them at once is delivered to the right communicator;
 *   - MPI_Comm_create from a group (even ranks; reversed order; MPI_GROUP_EMPTY; a group with
 *     the calling process only at some): members get the right rank, non-members MPI_COMM_NULL;
 *   - a group that is not a subset of the communicator is refused (at every process alike);
 *   - freeing in any order (a parent before its children);
 *   - MPI_Comm_free of MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL or a freed handle gives
 *     MPI_ERR_COMM; the freed handle is reset to MPI_COMM_NULL;
 *   - MPI_Comm_disconnect frees a communicator once every member calls it (a message sent
 *     before is received before), and refuses the predefined and null ones with MPI_ERR_COMM. */
#include "mpitest.h"

static int rank, size;

static void works(MPI_Comm c, const char *what, int i)
{
    int r, p, x, sum = 0;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    x = r + i;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == p * (p - 1) / 2 + p * i, "%s %d: allreduce gave %d", what, i, sum);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Dup and free, many times. */
    for (int i = 0; i < 5000; i++) {
        MPI_Comm c;
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (rc != MPI_SUCCESS) {
            CHECK(0, "MPI_Comm_dup number %d failed", i);
            break;
        }
        if (i % 500 == 0 || i == 4999)
            works(c, "duplicate", i);
        MPI_Comm_free(&c);
        CHECK(c == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
    }
    /* Many at once. */
    enum { HOLD = 1000 };
    MPI_Comm *held = malloc(HOLD * sizeof *held);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < HOLD; i++)
            MPI_Comm_dup(i % 2 ? MPI_COMM_WORLD : MPI_COMM_SELF, &held[i]);
        works(held[HOLD - 1], "held duplicate", round);
        works(held[HOLD / 2], "held duplicate", round);
        for (int i = 0; i < HOLD; i++) /* in another order than created */
            MPI_Comm_free(&held[(i * 7 + round) % HOLD]);
    }
    free(held);

    /* Halves with their own communicators, then the world makes new ones. */
    MPI_Comm half, hdup[5], wdup[3];
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &half);
    for (int i = 0; i < 5; i++)
        if (rank % 2 == 0 || i < 2)
            MPI_Comm_dup(half, &hdup[i]);
    MPI_Comm_free(&hdup[0]); /* a hole in one half's context ids */
    for (int i = 0; i < 3; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &wdup[i]);
    int nh = rank % 2 == 0 ? 5 : 2, hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    {
        /* Same tag on everything at once: each receive gets its own communicator's message. */
        MPI_Comm all[9];
        int n = 0, id[9], want[9], got[9], sendv[9]; /* id: the same at every member */
        for (int i = 0; i < 3; i++)
            id[n] = i, all[n++] = wdup[i];
        for (int i = 1; i < nh; i++)
            id[n] = 10 + i, all[n++] = hdup[i];
        id[n] = 20, all[n++] = half;
        id[n] = 30, all[n++] = MPI_COMM_WORLD;
        MPI_Request q[18];
        for (int i = 0; i < n; i++) {
            int r, p;
            MPI_Comm_rank(all[i], &r);
            MPI_Comm_size(all[i], &p);
            int left = (r + p - 1) % p, right = (r + 1) % p;
            MPI_Group g, wg;
            int lw;
            MPI_Comm_group(all[i], &g);
            MPI_Comm_group(MPI_COMM_WORLD, &wg);
            MPI_Group_translate_ranks(g, 1, &left, wg, &lw);
            MPI_Group_free(&g);
            MPI_Group_free(&wg);
            want[i] = lw * 100 + id[i];
            sendv[i] = rank * 100 + id[i];
            got[i] = -1;
            MPI_Irecv(&got[i], 1, MPI_INT, left, 42, all[i], &q[2 * i]);
            MPI_Isend(&sendv[i], 1, MPI_INT, right, 42, all[i], &q[2 * i + 1]);
        }
        MPI_Waitall(2 * n, q, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++)
            CHECK(got[i] == want[i], "communicator %d: got %d, expected %d", id[i], got[i], want[i]);
        (void)hr, (void)hs;
    }
    for (int i = 0; i < 3; i++)
        works(wdup[i], "world duplicate after halves made their own", i);
    for (int i = 1; i < nh; i++)
        MPI_Comm_free(&hdup[i]);
    for (int i = 0; i < 3; i++)
        MPI_Comm_free(&wdup[i]);

    /* MPI_Comm_create from groups. */
    MPI_Group world_group, evens, reversed, mine_only;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int ne = (size + 1) / 2, *list = malloc((size_t)size * sizeof *list);
    for (int i = 0; i < ne; i++)
        list[i] = 2 * i;
    MPI_Group_incl(world_group, ne, list, &evens);
    for (int i = 0; i < size; i++)
        list[i] = size - 1 - i;
    MPI_Group_incl(world_group, size, list, &reversed);
    MPI_Comm c;
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, evens, &c), MPI_SUCCESS);
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "MPI_Comm_create: odd rank %d got a communicator of the even ranks", rank);
    } else {
        int r = -1, p = -1;
        CHECK(c != MPI_COMM_NULL, "MPI_Comm_create: even rank %d got MPI_COMM_NULL", rank);
        if (c != MPI_COMM_NULL) {
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &p);
            CHECK(r == rank / 2 && p == ne, "MPI_Comm_create of the even ranks: rank %d of %d, expected %d of %d", r,
                  p, rank / 2, ne);
            works(c, "communicator of the even ranks", 0);
            /* Created from a communicator that is not the world: the evens again, from half. */
            MPI_Group hg, first;
            MPI_Comm c2;
            MPI_Comm_group(c, &hg);
            int zero = 0;
            MPI_Group_incl(hg, 1, &zero, &first);
            MPI_Comm_create(c, first, &c2);
            CHECK((r == 0) == (c2 != MPI_COMM_NULL), "MPI_Comm_create of rank 0 only from the evens");
            if (c2 != MPI_COMM_NULL) {
                works(c2, "communicator of one process", 0);
                MPI_Comm_free(&c2);
            }
            MPI_Group_free(&hg);
            MPI_Group_free(&first);
        }
    }
    MPI_Comm parent = c, child = MPI_COMM_NULL;
    if (parent != MPI_COMM_NULL)
        MPI_Comm_dup(parent, &child);
    if (parent != MPI_COMM_NULL)
        MPI_Comm_free(&parent); /* the parent goes first */
    if (child != MPI_COMM_NULL) {
        works(child, "duplicate whose parent was freed", 1);
        MPI_Comm_free(&child);
    }

    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, reversed, &c), MPI_SUCCESS);
    {
        int r = -1, p = -1;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &p);
        CHECK(r == size - 1 - rank && p == size, "MPI_Comm_create of the reversed world: rank %d of %d", r, p);
        int result;
        MPI_Comm_compare(MPI_COMM_WORLD, c, &result);
        CHECK(result == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "reversed world vs world: %d", result);
        works(c, "reversed world", 2);
        MPI_Comm_free(&c);
    }
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c), MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL, "MPI_Comm_create of MPI_GROUP_EMPTY gave a communicator");
    /* Every process passes a group holding itself only (the MPI-2.2 rule for MPI_Comm_create:
     * disjoint groups, one communicator each). */
    MPI_Group_incl(world_group, 1, &rank, &mine_only);
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, mine_only, &c), MPI_SUCCESS);
    CHECK(c != MPI_COMM_NULL, "MPI_Comm_create with disjoint groups gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        int p;
        MPI_Comm_size(c, &p);
        CHECK(p == 1, "a communicator of one process has size %d", p);
        works(c, "communicator of myself", 3);
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&mine_only);
    MPI_Group_free(&evens);
    MPI_Group_free(&reversed);
    free(list);
    /* A group that is not part of the communicator (the world's group on a half). */
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_create(half, world_group, &c);
    if (size > 1)
        CHECK(rc != MPI_SUCCESS, "MPI_Comm_create with a group larger than the communicator succeeded");
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    MPI_Group_free(&world_group);
    works(half, "a half after a refused MPI_Comm_create", 5);
    MPI_Comm_free(&half);

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF, n = MPI_COMM_NULL, old;
    CHECK_CLASS(MPI_Comm_free(&w), MPI_ERR_COMM);
    CHECK(w == MPI_COMM_WORLD, "a refused MPI_Comm_free changed the handle");
    CHECK_CLASS(MPI_Comm_free(&s), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_free(&n), MPI_ERR_COMM);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    old = c;
    MPI_Comm_free(&c);
    CHECK_CLASS(MPI_Comm_free(&old), MPI_ERR_COMM);
    int x;
    CHECK_CLASS(MPI_Comm_size(old, &x), MPI_ERR_COMM);
    works(MPI_COMM_WORLD, "MPI_COMM_WORLD after the errors", 4);

    /* MPI_Comm_disconnect */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int rank, size, got = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Request r;
    MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 9, c, &r);
    MPI_Send(&rank, 1, MPI_INT, (rank + 1) % size, 9, c);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_CLASS(MPI_Comm_disconnect(&c), MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL && got == (rank + size - 1) % size, "MPI_Comm_disconnect: handle %s, message %d",
          c == MPI_COMM_NULL ? "reset" : "kept", got);
    w = MPI_COMM_WORLD;
    n = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_disconnect(&w), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_disconnect(&n), MPI_ERR_COMM);
    return mt_finish();
}
