/* select.c: the collective calls: argument rules that depend on the root or MPI_IN_PLACE, and
 * the choice of algorithm by communicator size and message size, overridable per collective
 * with COURIER_COLL_<NAME> (and its threshold with COURIER_COLL_<NAME>_LARGE). */
#include "coll.h"

#include "core/config.h"
#include "core/error.h"
#include "cr_impl.h"

static int64_t barrier_alg, bcast_alg, bcast_large, reduce_alg, reduce_large, allreduce_alg, allreduce_large, allgather_alg,
    allgather_large;
CR_TUNABLE_EX(barrier_alg, COURIER_COLL_BARRIER, CR_TUNE_CHOICE, "auto", "auto|dissemination|node", 0, 2,
              "MPI_Barrier algorithm (node: flags in shared memory, for MPI_COMM_WORLD on one node)");
CR_TUNABLE_EX(bcast_alg, COURIER_COLL_BCAST, CR_TUNE_CHOICE, "auto", "auto|binomial|scatter_allgather", 0, 2,
              "MPI_Bcast algorithm");
CR_TUNABLE_EX(bcast_large, COURIER_COLL_BCAST_LARGE, CR_TUNE_SIZE, "256K", NULL, 0, INT64_MAX,
              "bytes from which MPI_Bcast uses scatter + allgather instead of a binomial tree (with 4 or more processes)");
CR_TUNABLE_EX(reduce_alg, COURIER_COLL_REDUCE, CR_TUNE_CHOICE, "auto", "auto|binomial|rabenseifner|node", 0, 3,
              "MPI_Reduce algorithm (rabenseifner needs a commutative operation; node, for MPI_COMM_WORLD on one node "
              "and up to 1 KiB, combines buffers in shared memory)");
CR_TUNABLE_EX(reduce_large, COURIER_COLL_REDUCE_LARGE, CR_TUNE_SIZE, "64K", NULL, 0, INT64_MAX,
              "bytes from which MPI_Reduce uses reduce-scatter + gather instead of a binomial tree");
CR_TUNABLE_EX(allreduce_alg, COURIER_COLL_ALLREDUCE, CR_TUNE_CHOICE, "auto",
              "auto|recursive_doubling|rabenseifner|node", 0, 3,
              "MPI_Allreduce algorithm (rabenseifner needs a commutative operation; node as for MPI_Reduce)");
CR_TUNABLE_EX(allreduce_large, COURIER_COLL_ALLREDUCE_LARGE, CR_TUNE_SIZE, "32K", NULL, 0, INT64_MAX,
              "bytes from which MPI_Allreduce uses reduce-scatter + allgather instead of recursive doubling");
CR_TUNABLE_EX(allgather_alg, COURIER_COLL_ALLGATHER, CR_TUNE_CHOICE, "auto", "auto|recursive_doubling|bruck|ring", 0,
              3, "MPI_Allgather algorithm (recursive_doubling needs a power-of-two process count)");
CR_TUNABLE_EX(allgather_large, COURIER_COLL_ALLGATHER_LARGE, CR_TUNE_SIZE, "64K", NULL, 0, INT64_MAX,
              "total bytes gathered from which MPI_Allgather uses a ring");

static inline bool is_pof2(int p)
{
    return (p & (p - 1)) == 0;
}

static int check_root_buffer(const void *buf, MPI_Count count, const cr_dtype *dt, const char *arg)
{
    if (!buf && count > 0 && cr_dtype_starts_at_buffer(dt))
        return cr_err(MPI_ERR_BUFFER, "%s is NULL but %lld elements are to be accessed", arg, (long long)count);
    return MPI_SUCCESS;
}

static int check_count(MPI_Count count, const char *arg)
{
    return count < 0 ? cr_err(MPI_ERR_COUNT, "invalid count %s=%lld: must not be negative", arg, (long long)count)
                     : MPI_SUCCESS;
}

int cr_mpi_barrier(cr_comm *comm)
{
    if (comm->size == 1)
        return MPI_SUCCESS;
    if (barrier_alg != 1 && cr_coll_node_usable(comm, 0))
        return cr_coll_node_barrier(comm);
    return cr_coll_barrier_dissemination(comm);
}

int cr_mpi_bcast(void *buf, MPI_Count count, cr_dtype *dt, int root, cr_comm *comm)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    if (comm->size == 1 || bytes == 0)
        return MPI_SUCCESS;
    int alg = (int)bcast_alg;
    if (alg == 0)
        alg = bytes >= (uint64_t)bcast_large && comm->size >= 4 ? 2 : 1;
    return alg == 2 ? cr_coll_bcast_scatter_allgather(buf, count, dt, root, comm)
                    : cr_coll_bcast_binomial(buf, count, dt, root, comm);
}

/* In place: the caller has this process's contribution in rbuf. Shared with the communicator
 * layer (context ids are agreed by an allreduce). */
int cr_coll_allreduce_auto(void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm)
{
    if (comm->size == 1 || count == 0)
        return MPI_SUCCESS;
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    bool rab_ok = op->commutative && count >= cr_coll_pof2(comm->size);
    int alg = (int)allreduce_alg;
    if ((alg == 0 || alg == 3) && cr_coll_node_usable(comm, bytes))
        return cr_coll_node_allreduce(rbuf, count, dt, op, comm);
    if (alg == 0 || alg == 3)
        alg = rab_ok && bytes >= (uint64_t)allreduce_large ? 2 : 1;
    if (alg == 2 && rab_ok)
        return cr_coll_allreduce_rabenseifner(rbuf, count, dt, op, comm);
    return cr_coll_allreduce_recursive_doubling(rbuf, count, dt, op, comm);
}

int cr_mpi_allreduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, cr_comm *comm)
{
    int err = cr_op_check(op, dt);
    if (err)
        return err;
    if (sbuf != MPI_IN_PLACE) {
        if ((err = check_root_buffer(sbuf, count, dt, "sendbuf")))
            return err;
        cr_coll_copy(sbuf, count, dt, rbuf, count, dt);
    }
    return cr_coll_allreduce_auto(rbuf, count, dt, op, comm);
}

int cr_mpi_reduce(const void *sbuf, void *rbuf, MPI_Count count, cr_dtype *dt, cr_op *op, int root, cr_comm *comm)
{
    int err = cr_op_check(op, dt);
    if (err)
        return err;
    bool at_root = comm->rank == root;
    if (sbuf == MPI_IN_PLACE && !at_root)
        return cr_err(MPI_ERR_BUFFER, "sendbuf=MPI_IN_PLACE is allowed only at the root (rank %d), not at rank %d",
                      root, comm->rank);
    if (sbuf != MPI_IN_PLACE && (err = check_root_buffer(sbuf, count, dt, "sendbuf")))
        return err;
    if (at_root && (err = check_root_buffer(rbuf, count, dt, "recvbuf")))
        return err;
    if (comm->size == 1) {
        if (sbuf != MPI_IN_PLACE)
            cr_coll_copy(sbuf, count, dt, rbuf, count, dt);
        return MPI_SUCCESS;
    }
    if (count == 0)
        return MPI_SUCCESS;
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    bool rab_ok = op->commutative && count >= cr_coll_pof2(comm->size);
    int alg = (int)reduce_alg;
    if ((alg == 0 || alg == 3) && cr_coll_node_usable(comm, bytes))
        return cr_coll_node_reduce(sbuf, rbuf, count, dt, op, root, comm);
    if (alg == 0 || alg == 3)
        alg = rab_ok && bytes >= (uint64_t)reduce_large ? 2 : 1;
    if (alg == 2 && rab_ok)
        return cr_coll_reduce_rabenseifner(sbuf, rbuf, count, dt, op, root, comm);
    return cr_coll_reduce_binomial(sbuf, rbuf, count, dt, op, root, comm);
}

/* The datatype arguments that matter at this process, resolved. */
static int resolve(MPI_Datatype h, const char *arg, cr_dtype **dt)
{
    return cr_dtype_check(h, arg, true, dt);
}

int cr_mpi_gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, int root, cr_comm *comm)
{
    cr_dtype *sdt = NULL, *rdt = NULL;
    bool at_root = comm->rank == root;
    int err = MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE && !at_root)
        return cr_err(MPI_ERR_BUFFER, "sendbuf=MPI_IN_PLACE is allowed only at the root (rank %d)", root);
    if (sbuf != MPI_IN_PLACE && ((err = check_count(scount, "sendcount")) || (err = resolve(stype, "sendtype", &sdt)) ||
                                 (err = check_root_buffer(sbuf, scount, sdt, "sendbuf"))))
        return err;
    if (at_root && ((err = check_count(rcount, "recvcount")) || (err = resolve(rtype, "recvtype", &rdt)) ||
                    (err = check_root_buffer(rbuf, rcount, rdt, "recvbuf"))))
        return err;
    if (at_root && sdt && (uint64_t)scount * (uint64_t)sdt->size != (uint64_t)rcount * (uint64_t)rdt->size)
        return cr_err(MPI_ERR_TRUNCATE, "the root sends %lld bytes to itself but receives %lld per process",
                      (long long)(scount * sdt->size), (long long)(rcount * rdt->size));
    if (comm->size == 1) {
        if (sbuf != MPI_IN_PLACE)
            cr_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
        return MPI_SUCCESS;
    }
    return cr_coll_gather_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
}

int cr_mpi_scatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root, cr_comm *comm)
{
    cr_dtype *sdt = NULL, *rdt = NULL;
    bool at_root = comm->rank == root;
    int err = MPI_SUCCESS;
    if (rbuf == MPI_IN_PLACE && !at_root)
        return cr_err(MPI_ERR_BUFFER, "recvbuf=MPI_IN_PLACE is allowed only at the root (rank %d)", root);
    if (at_root && ((err = check_count(scount, "sendcount")) || (err = resolve(stype, "sendtype", &sdt)) ||
                    (err = check_root_buffer(sbuf, scount, sdt, "sendbuf"))))
        return err;
    if (rbuf != MPI_IN_PLACE && ((err = check_count(rcount, "recvcount")) || (err = resolve(rtype, "recvtype", &rdt)) ||
                                 (err = check_root_buffer(rbuf, rcount, rdt, "recvbuf"))))
        return err;
    if (comm->size == 1) {
        if (rbuf != MPI_IN_PLACE)
            cr_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
        return MPI_SUCCESS;
    }
    return cr_coll_scatter_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
}

/* In place: this process's block is at its place in rbuf. */
int cr_coll_allgather_auto(void *rbuf, MPI_Count rcount, cr_dtype *rdt, cr_comm *comm)
{
    int p = comm->size;
    if (p == 1)
        return MPI_SUCCESS;
    uint64_t total = (uint64_t)rcount * (uint64_t)rdt->size * (uint64_t)p;
    int alg = (int)allgather_alg;
    if (alg == 1 && !is_pof2(p))
        alg = 2;
    if (alg == 0)
        alg = total >= (uint64_t)allgather_large ? 3 : is_pof2(p) ? 1 : 2;
    switch (alg) {
    case 1: return cr_coll_allgather_recursive_doubling(rbuf, rcount, rdt, comm);
    case 2: return cr_coll_allgather_bruck(rbuf, rcount, rdt, comm);
    default: return cr_coll_allgather_ring(rbuf, rcount, rdt, comm);
    }
}

int cr_mpi_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     cr_dtype *rdt, cr_comm *comm)
{
    int err = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE) {
        cr_dtype *sdt;
        if ((err = check_count(scount, "sendcount")) || (err = resolve(stype, "sendtype", &sdt)) ||
            (err = check_root_buffer(sbuf, scount, sdt, "sendbuf")))
            return err;
        if ((uint64_t)scount * (uint64_t)sdt->size != (uint64_t)rcount * (uint64_t)rdt->size)
            return cr_err(MPI_ERR_TRUNCATE, "sendcount/sendtype give %lld bytes, recvcount/recvtype %lld per process",
                          (long long)(scount * sdt->size), (long long)(rcount * rdt->size));
        cr_coll_copy(sbuf, scount, sdt, cr_coll_at(rbuf, (MPI_Count)comm->rank * rcount, rdt), rcount, rdt);
    }
    if (rcount == 0)
        return MPI_SUCCESS;
    return cr_coll_allgather_auto(rbuf, rcount, rdt, comm);
}
