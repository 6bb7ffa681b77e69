/* gatherv_linear.c: gather of blocks of different sizes, straight to the root.
 *
 * The root posts every receive at once, each into its place in the receive buffer, and the
 * others send their block: the messages arrive in whatever order the senders get to them, not
 * one process after another. Cost: alpha + n_total beta at the root; with blocks of different
 * sizes a tree would forward the large ones several times. */
#include "coll.h"

void cr_coll_gatherv_linear(cr_sched *s, const void *sbuf, MPI_Count scount, cr_dtype *sdt, void *rbuf,
                            cr_cvec rcounts, cr_cvec displs, cr_dtype *rdt, int root)
{
    if (s->rank != root) {
        cr_sched_send(s, sbuf, scount, sdt, root);
        return;
    }
    for (int i = 0; i < s->size; i++) {
        char *at = cr_coll_at(rbuf, cr_cvec_at(displs, (size_t)i), rdt);
        MPI_Count n = cr_cvec_at(rcounts, (size_t)i);
        if (i != root)
            cr_sched_recv(s, at, n, rdt, i);
        else if (sbuf != MPI_IN_PLACE)
            cr_sched_copy(s, sbuf, scount, sdt, at, n, rdt);
    }
}
