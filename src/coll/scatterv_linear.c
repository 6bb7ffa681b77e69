/* scatterv_linear.c: scatter of blocks of different sizes, straight from the root (the mirror
 * of gatherv_linear.c): the root starts every send at once, the others receive their block. */
#include "coll.h"

void cr_coll_scatterv_linear(cr_sched *s, const void *sbuf, cr_cvec scounts, cr_cvec displs, cr_dtype *sdt,
                             void *rbuf, MPI_Count rcount, cr_dtype *rdt, int root)
{
    if (s->rank != root) {
        cr_sched_recv(s, rbuf, rcount, rdt, root);
        return;
    }
    for (int i = 0; i < s->size; i++) {
        const char *at = cr_coll_at(sbuf, cr_cvec_at(displs, (size_t)i), sdt);
        MPI_Count n = cr_cvec_at(scounts, (size_t)i);
        if (i != root)
            cr_sched_send(s, at, n, sdt, i);
        else if (rbuf != MPI_IN_PLACE)
            cr_sched_copy(s, at, n, sdt, rbuf, rcount, rdt);
    }
}
