/* status_error.c: calls that return one status leave its MPI_ERROR field alone when they
 * succeed (MPI 4.1, 3.2.5; MPICH's threads/pt2pt probe tests check it): a receive, a wait, a
 * test, the probes and matched receives, a send-receive, MPI_PROC_NULL, MPI_Waitany. */
#include "mpitest.h"

#define SENTINEL MPI_ERR_DIMS

static void expect_kept(const MPI_Status *st, const char *call)
{
    CHECK(st->MPI_ERROR == SENTINEL, "%s changed MPI_ERROR to %d", call, st->MPI_ERROR);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (mt_rank + 1) % size, prev = (mt_rank + size - 1) % size;
    int big = 20000; /* ints: a rendezvous message too */
    int *out = calloc((size_t)big, sizeof *out), *in = calloc((size_t)big, sizeof *in);
    MPI_Status st;
    MPI_Request rq;
    int flag;
    for (int round = 0; round < 2; round++) {
        int n = round ? big : 4;
        for (int i = 0; i < n; i++)
            out[i] = mt_rank * 7 + i;

        st.MPI_ERROR = SENTINEL;
        MPI_Sendrecv(out, n, MPI_INT, next, 1, in, n, MPI_INT, prev, 1, MPI_COMM_WORLD, &st);
        expect_kept(&st, "MPI_Sendrecv");
        CHECK(in[n - 1] == prev * 7 + n - 1, "MPI_Sendrecv data %d", in[n - 1]);

        MPI_Isend(out, n, MPI_INT, next, 2, MPI_COMM_WORLD, &rq);
        st.MPI_ERROR = SENTINEL;
        MPI_Recv(in, n, MPI_INT, prev, 2, MPI_COMM_WORLD, &st);
        expect_kept(&st, "MPI_Recv");
        st.MPI_ERROR = SENTINEL;
        MPI_Wait(&rq, &st);
        expect_kept(&st, "MPI_Wait on a send");

        MPI_Isend(out, n, MPI_INT, next, 3, MPI_COMM_WORLD, &rq);
        st.MPI_ERROR = SENTINEL;
        MPI_Probe(prev, 3, MPI_COMM_WORLD, &st);
        expect_kept(&st, "MPI_Probe");
        st.MPI_ERROR = SENTINEL;
        flag = 0;
        while (!flag)
            MPI_Iprobe(prev, 3, MPI_COMM_WORLD, &flag, &st);
        expect_kept(&st, "MPI_Iprobe");
        MPI_Message m;
        st.MPI_ERROR = SENTINEL;
        MPI_Mprobe(prev, 3, MPI_COMM_WORLD, &m, &st);
        expect_kept(&st, "MPI_Mprobe");
        st.MPI_ERROR = SENTINEL;
        MPI_Mrecv(in, n, MPI_INT, &m, &st);
        expect_kept(&st, "MPI_Mrecv");
        CHECK(in[n - 1] == prev * 7 + n - 1, "MPI_Mrecv data %d", in[n - 1]);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);

        MPI_Request two[2];
        MPI_Irecv(in, n, MPI_INT, prev, 4, MPI_COMM_WORLD, &two[0]);
        MPI_Isend(out, n, MPI_INT, next, 4, MPI_COMM_WORLD, &two[1]);
        for (int k = 0; k < 2; k++) {
            int idx;
            st.MPI_ERROR = SENTINEL;
            MPI_Waitany(2, two, &idx, &st);
            expect_kept(&st, "MPI_Waitany");
        }

        MPI_Irecv(in, n, MPI_INT, prev, 5, MPI_COMM_WORLD, &rq);
        MPI_Send(out, n, MPI_INT, next, 5, MPI_COMM_WORLD);
        flag = 0;
        while (!flag) {
            st.MPI_ERROR = SENTINEL;
            MPI_Test(&rq, &flag, &st);
        }
        expect_kept(&st, "MPI_Test");
    }
    st.MPI_ERROR = SENTINEL;
    MPI_Recv(in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    expect_kept(&st, "MPI_Recv from MPI_PROC_NULL");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "MPI_PROC_NULL status %d %d", st.MPI_SOURCE,
          st.MPI_TAG);
    st.MPI_ERROR = SENTINEL;
    MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    expect_kept(&st, "MPI_Probe of MPI_PROC_NULL");
    free(out), free(in);
    return mt_finish();
}
