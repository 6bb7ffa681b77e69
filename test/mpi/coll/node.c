/* The shared-memory collective component (barrier, small allreduce, small reduce on
 * MPI_COMM_WORLD): long runs of back-to-back calls, so contributors run ahead of the roots by
 * more than the component's depth of slots; rotating roots; MPI_IN_PLACE at the root; an
 * operation that does not commute (results must follow rank order); interleaving with
 * barriers, allreduce and point-to-point traffic; then reduces, scans, scatters and gathers
 * back to back, which share one ring of slots; long runs of scans and exscans along their chain.
 * Every result is checked. */
#include "mpitest.h"

#include "affine.h"

#include <strings.h>

/* The maps of a vector of 2 pairs at stride 3 (extent 4 pairs): a user function receives the
 * caller's type and combines its elements itself. */
static void compose_strided(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    for (int j = 0; j < *len; j++)
        for (int e = 0; e < 2; e++)
            compose((affine *)in + 4 * j + 3 * e, (affine *)inout + 4 * j + 3 * e, &(int){1}, dt);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op op;
    MPI_Op_create(compose, 0, &op);
    const int rounds = 600, n = 4;
    /* Allreduces of 40 maps (320 bytes a process): with processes sharing cores (sleep mode),
     * from 256 bytes the last process to arrive combines for everyone (node.c,
     * allreduce_last), whichever process that is in each call. */
    enum { WIDE = 40 };
    int wide_calls = 0;
    unsigned long long last_before = mt_pvar_value("coll.allreduce.node_last");
    for (int k = 0; k < rounds; k++) {
        int root = k % size;
        affine mine[4], out[4];
        for (int i = 0; i < n; i++)
            mine[i] = map_of(rank, k, i);
        if (rank == root && k % 3 == 0) { /* the root's contribution already in place */
            memcpy(out, mine, sizeof out);
            MPI_Reduce(MPI_IN_PLACE, out, n, MPI_2INT, op, root, MPI_COMM_WORLD);
        } else {
            MPI_Reduce(mine, out, n, MPI_2INT, op, root, MPI_COMM_WORLD);
        }
        if (rank == root)
            for (int i = 0; i < n; i++) {
                affine w = expected(size, k, i);
                CHECK(out[i].a == w.a && out[i].b == w.b, "round %d root %d element %d: (%d,%d), want (%d,%d)", k,
                      root, i, out[i].a, out[i].b, w.a, w.b);
            }
        long long s = rank + k, sum = -1;
        MPI_Reduce(&s, &sum, 1, MPI_LONG_LONG, MPI_SUM, (root + 1) % size, MPI_COMM_WORLD);
        if (rank == (root + 1) % size)
            CHECK(sum == (long long)size * (size - 1) / 2 + (long long)size * k, "round %d: sum %lld", k, sum);
        if (k % 7 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        if (k % 11 == 0) {
            affine all[4];
            memcpy(all, mine, sizeof all);
            MPI_Allreduce(MPI_IN_PLACE, all, n, MPI_2INT, op, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++) {
                affine w = expected(size, k, i);
                CHECK(all[i].a == w.a && all[i].b == w.b, "round %d allreduce element %d", k, i);
            }
        }
        if (k % 5 == 2) {
            affine in[WIDE], all[WIDE];
            for (int i = 0; i < WIDE; i++)
                in[i] = map_of(rank, k, i);
            if (k % 2) {
                memcpy(all, in, sizeof all);
                MPI_Allreduce(MPI_IN_PLACE, all, WIDE, MPI_2INT, op, MPI_COMM_WORLD);
            } else {
                MPI_Allreduce(in, all, WIDE, MPI_2INT, op, MPI_COMM_WORLD);
            }
            for (int i = 0; i < WIDE; i++) {
                affine w = expected(size, k, i);
                CHECK(all[i].a == w.a && all[i].b == w.b, "round %d: allreduce of %d maps, element %d (%d,%d), want (%d,%d)",
                      k, WIDE, i, all[i].a, all[i].b, w.a, w.b);
            }
            wide_calls++;
        }
        if (k % 13 == 0 && size > 1) { /* point-to-point in between */
            int v = rank * 1000 + k, from = -1;
            MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 5, &from, 1, MPI_INT, (rank + size - 1) % size, 5,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(from == ((rank + size - 1) % size) * 1000 + k, "round %d: sendrecv got %d", k, from);
        }
    }
    /* Small allgathers, alltoalls and reduce_scatter_blocks go through the same slots: with
     * flags when every process has a core, through the barrier in sleep mode (unless
     * COURIER_COLL_NODE_SLOTS_SLEEP=0 sends them through the staging blocks). */
    unsigned long long slots_before = mt_pvar_value("coll.node.slots_barrier"),
                       node_allgathers_before = mt_pvar_value("coll.allgather.node");
    for (int k = 0; k < 30 && size <= 16; k++) {
        int one = rank * 100 + k, all[16 * 2], blocks[16], got = -1;
        MPI_Allgather(&one, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            CHECK(all[r] == r * 100 + k, "round %d: allgather got %d from rank %d", k, all[r], r);
        for (int r = 0; r < size; r++)
            blocks[r] = rank * 1000 + r * 10 + k;
        MPI_Alltoall(blocks, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            CHECK(all[r] == r * 1000 + rank * 10 + k, "round %d: alltoall got %d from rank %d", k, all[r], r);
        MPI_Reduce_scatter_block(blocks, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(got == 1000 * size * (size - 1) / 2 + size * (rank * 10 + k), "round %d: reduce_scatter_block got %d", k,
              got);
    }
    const char *wait = getenv("COURIER_WAIT"), *slots_sleep = getenv("COURIER_COLL_NODE_SLOTS_SLEEP");
    if (size > 1 && size <= 16 && wait && !getenv("COURIER_COLL_ALLGATHER") && !getenv("COURIER_COLL_ALLTOALL")) {
        unsigned long long through = mt_pvar_value("coll.node.slots_barrier") - slots_before,
                           node_allgathers = mt_pvar_value("coll.allgather.node") - node_allgathers_before;
        bool staged = false; /* the tunable's false spellings */
        for (const char *const *no = (const char *const[]){"0", "no", "off", "false", NULL}; *no && slots_sleep; no++)
            staged |= strcasecmp(slots_sleep, *no) == 0;
        bool expect = strcmp(wait, "sleep") == 0 && !staged;
        CHECK(through == (expect ? 90ull : 0ull), "COURIER_WAIT=%s: %llu of 90 small allgathers, alltoalls and "
              "reduce_scatter_blocks went through the slots and the barrier", wait, through);
        CHECK(node_allgathers == 30, "COURIER_WAIT=%s: %llu of 30 small allgathers went through shared memory "
              "(the slots or the staging blocks)", wait, node_allgathers);
    }
    if (size > 1 && wait && !getenv("COURIER_COLL_ALLREDUCE")) {
        unsigned long long last = mt_pvar_value("coll.allreduce.node_last") - last_before;
        bool sleeping = strcmp(wait, "sleep") == 0;
        CHECK(last == (sleeping ? (unsigned long long)wide_calls : 0),
              "%d allreduces of %d bytes with COURIER_WAIT=%s: %llu took the result the last process combined", wide_calls,
              (int)sizeof(affine) * WIDE, wait, last);
    }
    /* Reduces, scans and exscans share the ring of slots (node.c): long runs of them with no
     * other collective between, rotating roots, so processes run ahead of each other by more
     * than the ring's 64 calls; some of the maps do not commute. */
    for (int k = 0; k < 500; k++) {
        int root = (k * 7) % size, kind = k % 4;
        long long v = (long long)rank * 131 + k, got = -1;
        if (kind == 0 || kind == 3) {
            MPI_Reduce(&v, &got, 1, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD);
            if (rank == root)
                CHECK(got == (long long)size * (size - 1) / 2 * 131 + (long long)size * k, "ring round %d: reduce %lld",
                      k, got);
        } else if (kind == 1) {
            MPI_Scan(&v, &got, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            CHECK(got == (long long)rank * (rank + 1) / 2 * 131 + (long long)(rank + 1) * k, "ring round %d: scan %lld",
                  k, got);
        } else {
            affine mine = map_of(rank, k, 0), out = {-1, -1};
            MPI_Reduce(&mine, &out, 1, MPI_2INT, op, root, MPI_COMM_WORLD);
            if (rank == root) {
                affine w = expected(size, k, 0);
                CHECK(out.a == w.a && out.b == w.b, "ring round %d: reduce of maps at root %d", k, root);
            }
        }
    }
    /* One root for a long run: the others leave each reduce at once and get far ahead. */
    for (int k = 0; k < 400; k++) {
        long long v = (long long)rank * 17 + k * 3, got = -1;
        MPI_Reduce(&v, &got, 1, MPI_LONG_LONG, MPI_SUM, size - 1, MPI_COMM_WORLD);
        if (rank == size - 1)
            CHECK(got == (long long)size * (size - 1) / 2 * 17 + (long long)size * k * 3, "fixed root, round %d: %lld",
                  k, got);
    }
    /* Scatters and gathers of up to 1 KiB share the ring too: long runs from one root, so the
     * root (scatter) or the others (gather) get far ahead; bcasts (messages) between them. */
    int *all = malloc((size_t)size * 256 * sizeof(int)), block[256];
    for (int k = 0; k < 300; k++) {
        int root = k < 150 ? 0 : size - 1, n = 1 + k % 256;
        for (int i = 0; i < n; i++)
            block[i] = rank == root ? k * 1000 + i : -1;
        MPI_Bcast(block, n, MPI_INT, root, MPI_COMM_WORLD);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += block[i] != k * 1000 + i;
        CHECK(bad == 0, "bcast round %d from %d: %d of %d wrong", k, root, bad, n);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    all[r * n + i] = r * 100000 + k * 300 + i;
        MPI_Scatter(all, n, MPI_INT, block, n, MPI_INT, root, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += block[i] != rank * 100000 + k * 300 + i;
        CHECK(bad == 0, "scatter round %d from %d: %d of %d wrong", k, root, bad, n);
        for (int i = 0; i < n; i++)
            block[i] = rank * 7777 + k + i;
        MPI_Gather(block, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root) {
            bad = 0;
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    bad += all[r * n + i] != r * 7777 + k + i;
            CHECK(bad == 0, "gather round %d to %d: %d wrong", k, root, bad);
        }
    }
    free(all);
    /* Scans and exscans run as a chain (node.c: process r reads r - 1's prefix), and a process
     * waits only for the reader of its slot: long runs let process 0 get up to 63 calls per
     * process ahead of the last. Maps that do not commute (prefixes must follow rank order),
     * in place and not, a strided type (combined through a typed copy, not in the slots), and
     * between the runs scatters and gathers from rotating roots, which change who reads each
     * slot 64 calls later. */
    MPI_Datatype strided; /* element i of 2 at stride 3: pairs at 0 and 3 */
    MPI_Type_vector(2, 1, 3, MPI_2INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Op op_strided;
    MPI_Op_create(compose_strided, 0, &op_strided);
    for (int k = 0; k < 900; k++) {
        int phase = (k / 150) % 3, exclusive = k % 2, in_place = k % 3 == 1;
        if (phase == 2 && k % 5 == 0) { /* a scatter, then a gather, from rotating roots */
            int root = (k / 5) % size, v = -1, *each = malloc((size_t)size * sizeof(int));
            for (int r = 0; r < size; r++)
                each[r] = r * 1000 + k;
            MPI_Scatter(each, 1, MPI_INT, &v, 1, MPI_INT, root, MPI_COMM_WORLD);
            CHECK(v == rank * 1000 + k, "chain round %d: scatter from %d gave %d", k, root, v);
            v = rank * 3 + k;
            MPI_Gather(&v, 1, MPI_INT, each, 1, MPI_INT, (root + 1) % size, MPI_COMM_WORLD);
            if (rank == (root + 1) % size)
                for (int r = 0; r < size; r++)
                    CHECK(each[r] == r * 3 + k, "chain round %d: gather to %d, from %d: %d", k, root + 1, r, each[r]);
            free(each);
        }
        int upto = exclusive ? rank : rank + 1; /* processes in this one's prefix */
        if (phase == 1) { /* the strided type: 2 maps, with 4 pairs of gap left alone */
            affine in[6], out[6];
            for (int i = 0; i < 6; i++) {
                in[i] = map_of(rank, k, i);
                out[i] = (affine){-7, -7};
            }
            if (in_place) {
                memcpy(out, in, sizeof out);
                exclusive ? MPI_Exscan(MPI_IN_PLACE, out, 1, strided, op_strided, MPI_COMM_WORLD)
                          : MPI_Scan(MPI_IN_PLACE, out, 1, strided, op_strided, MPI_COMM_WORLD);
            } else {
                exclusive ? MPI_Exscan(in, out, 1, strided, op_strided, MPI_COMM_WORLD)
                          : MPI_Scan(in, out, 1, strided, op_strided, MPI_COMM_WORLD);
            }
            for (int i = 0; i < 6 && upto > 0; i++) {
                affine w = i % 3 == 0 ? expected(upto, k, i) : in_place ? in[i] : (affine){-7, -7};
                CHECK(out[i].a == w.a && out[i].b == w.b, "chain round %d (%s, strided): element %d (%d,%d), want (%d,%d)",
                      k, exclusive ? "exscan" : "scan", i, out[i].a, out[i].b, w.a, w.b);
            }
        } else {
            affine in[3], out[3];
            for (int i = 0; i < 3; i++) {
                in[i] = map_of(rank, k, i);
                out[i] = in_place ? in[i] : (affine){-7, -7};
            }
            const void *src = in_place ? MPI_IN_PLACE : (const void *)in;
            exclusive ? MPI_Exscan(src, out, 3, MPI_2INT, op, MPI_COMM_WORLD)
                      : MPI_Scan(src, out, 3, MPI_2INT, op, MPI_COMM_WORLD);
            for (int i = 0; i < 3 && upto > 0; i++) {
                affine w = expected(upto, k, i);
                CHECK(out[i].a == w.a && out[i].b == w.b, "chain round %d (%s): element %d (%d,%d), want (%d,%d)", k,
                      exclusive ? "exscan" : "scan", i, out[i].a, out[i].b, w.a, w.b);
            }
            long long v = (long long)rank * 1000003 + k, sum = in_place ? v : -1; /* a contiguous type: in the slots */
            exclusive ? MPI_Exscan(in_place ? MPI_IN_PLACE : &v, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD)
                      : MPI_Scan(in_place ? MPI_IN_PLACE : &v, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            if (upto > 0)
                CHECK(sum == (long long)upto * (upto - 1) / 2 * 1000003 + (long long)upto * k,
                      "chain round %d (%s of long long): %lld", k, exclusive ? "exscan" : "scan", sum);
        }
    }
    MPI_Type_free(&strided);
    MPI_Op_free(&op_strided);
    MPI_Op_free(&op);
    return mt_finish();
}
