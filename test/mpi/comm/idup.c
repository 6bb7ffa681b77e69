/* idup.c: MPI_Comm_idup in flight together with other agreements on the same processes, in
 * orders that differ between processes: two idups started in opposite orders, idups over a
 * ring of overlapping pairs, an idup beside a blocking MPI_Comm_dup of another communicator
 * called in the other order, and idups of an intercommunicator; each new communicator works
 * and keeps its traffic apart from the others. */
#include "mpitest.h"

#include <stdbool.h>

/* The new communicator carries its own traffic: a message on it never matches one on `other`. */
static void check_apart(MPI_Comm c, MPI_Comm other)
{
    int size, rank, a = -1, b = -1;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, x = 100 + rank, y = 200 + rank;
    MPI_Request rq[4];
    MPI_Irecv(&b, 1, MPI_INT, from, 7, other, &rq[0]);
    MPI_Irecv(&a, 1, MPI_INT, from, 7, c, &rq[1]);
    MPI_Isend(&x, 1, MPI_INT, to, 7, c, &rq[2]);
    MPI_Isend(&y, 1, MPI_INT, to, 7, other, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    CHECK(a == 100 + from && b == 200 + from, "got %d on the new communicator, %d on the other", a, b);
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == size, "allreduce gave %d", sum);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);

    /* Opposite orders on even and odd processes, many times over. */
    for (int it = 0; it < 50; it++) {
        MPI_Comm na, nb;
        MPI_Request rq[2];
        if (rank % 2 == 0) {
            MPI_Comm_idup(a, &na, &rq[0]);
            MPI_Comm_idup(b, &nb, &rq[1]);
        } else {
            MPI_Comm_idup(b, &nb, &rq[1]);
            MPI_Comm_idup(a, &na, &rq[0]);
        }
        if (it % 2)
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        else {
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        }
        if (it % 10 == 0) {
            check_apart(na, nb);
            check_apart(nb, a);
        }
        MPI_Comm_free(&na);
        MPI_Comm_free(&nb);
    }

    /* A ring of overlapping pairs {i, i+1}: each process duplicates its two pairs, its left
     * one first, so the agreements wait on each other around the ring. */
    if (size > 2) {
        MPI_Comm left, right, nl, nr;
        MPI_Group world, g;
        /* pair i = {i, i+1 mod size}, made by MPI_Comm_create_group with tag i */
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int mine_left = (rank - 1 + size) % size, mine_right = rank;
        int pl[2] = {mine_left, (mine_left + 1) % size}, pr[2] = {mine_right, (mine_right + 1) % size};
        /* blocking creation goes in increasing pair order (the other way would deadlock) */
        for (int k = 0; k < 2; k++) {
            bool do_left = (k == 0) == (mine_left < mine_right);
            MPI_Group_incl(world, 2, do_left ? pl : pr, &g);
            MPI_Comm_create_group(MPI_COMM_WORLD, g, do_left ? mine_left : mine_right, do_left ? &left : &right);
            MPI_Group_free(&g);
        }
        MPI_Group_free(&world);
        MPI_Request rq[2];
        MPI_Comm_idup(left, &nl, &rq[0]);
        MPI_Comm_idup(right, &nr, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        if (mine_left < mine_right) { /* blocking checks, in increasing pair order too */
            check_apart(nl, left);
            check_apart(nr, right);
        } else {
            check_apart(nr, right);
            check_apart(nl, left);
        }
        MPI_Comm_free(&nl);
        MPI_Comm_free(&nr);
        MPI_Comm_free(&left);
        MPI_Comm_free(&right);
    }

    /* An idup, and a blocking dup of another communicator, in opposite orders. */
    for (int it = 0; it < 10; it++) {
        MPI_Comm na, nb;
        MPI_Request rq;
        if (rank % 2 == 0) {
            MPI_Comm_idup(a, &na, &rq);
            MPI_Comm_dup(b, &nb);
        } else {
            MPI_Comm_dup(b, &nb);
            MPI_Comm_idup(a, &na, &rq);
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        check_apart(na, nb);
        MPI_Comm_free(&na);
        MPI_Comm_free(&nb);
    }

    /* Idups of an intercommunicator (and of its duplicate, the other way round). */
    if (size > 1) {
        MPI_Comm half, ic, ic2, n1, n2;
        int low = rank < size / 2 + size % 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 + size % 2 : 0, 33, &ic);
        MPI_Comm_dup(ic, &ic2);
        MPI_Request rq[2];
        if (low) {
            MPI_Comm_idup(ic, &n1, &rq[0]);
            MPI_Comm_idup(ic2, &n2, &rq[1]);
        } else {
            MPI_Comm_idup(ic2, &n2, &rq[1]);
            MPI_Comm_idup(ic, &n1, &rq[0]);
        }
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        int flag = 0, rsize, want;
        MPI_Comm_test_inter(n1, &flag);
        MPI_Comm_remote_size(n1, &rsize);
        MPI_Comm_remote_size(ic, &want);
        CHECK(flag && rsize == want, "idup of an intercommunicator: inter %d, remote size %d of %d", flag, rsize, want);
        int one = 1, theirs = 0;
        MPI_Allreduce(&one, &theirs, 1, MPI_INT, MPI_SUM, n1);
        CHECK(theirs == want, "the other group's sum %d, want %d", theirs, want);
        MPI_Allreduce(&one, &theirs, 1, MPI_INT, MPI_SUM, n2);
        CHECK(theirs == want, "the other group's sum on the second %d, want %d", theirs, want);
        MPI_Comm_free(&n1);
        MPI_Comm_free(&n2);
        MPI_Comm_free(&ic2);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&half);
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    return mt_finish();
}
