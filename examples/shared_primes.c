/* shared_primes.c: MPI-3 shared memory on a node. The node's processes share one window
 * (MPI_Win_allocate_shared): a counter that hands out blocks of numbers (MPI_Fetch_and_op,
 * so faster processes take more blocks) and one slot per block for its count of primes. Each
 * process reads everyone's slots directly (MPI_Win_shared_query) to add them up, and checks the
 * total against a serial count.
 *
 * usage: mpiexec -n 4 shared_primes [N]     (counts the primes below N, default 2000000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BLOCK = 10000 };

static int is_prime(long n)
{
    if (n < 2)
        return 0;
    for (long d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

static long count_block(long first, long end)
{
    long c = 0;
    for (long n = first; n < end; n++)
        c += is_prime(n);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long limit = argc > 1 ? atol(argv[1]) : 2000000;
    long blocks = (limit + BLOCK - 1) / BLOCK;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, size;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);

    /* Rank 0 holds the counter and the slots; the others hold nothing. */
    MPI_Aint bytes = rank == 0 ? (MPI_Aint)(1 + blocks) * (MPI_Aint)sizeof(long) : 0;
    long *mine, *shared;
    MPI_Win win;
    MPI_Win_allocate_shared(bytes, sizeof(long), MPI_INFO_NULL, node, &mine, &win);
    MPI_Aint got;
    int unit;
    MPI_Win_shared_query(win, 0, &got, &unit, &shared);
    if (rank == 0)
        for (long i = 0; i <= blocks; i++)
            shared[i] = 0;
    MPI_Win_fence(0, win);

    /* Take blocks until none is left: the counter is element 0 of rank 0's part. */
    long one = 1, block, taken = 0;
    MPI_Win_lock_all(0, win);
    for (;;) {
        MPI_Fetch_and_op(&one, &block, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        if (block >= blocks)
            break;
        long first = block * BLOCK, end = first + BLOCK < limit ? first + BLOCK : limit;
        shared[1 + block] = count_block(first, end); /* a store into shared memory */
        taken++;
    }
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    long total = 0;
    for (long b = 0; b < blocks; b++)
        total += shared[1 + b];
    MPI_Win_unlock_all(win);

    long all_taken = 0;
    MPI_Reduce(&taken, &all_taken, 1, MPI_LONG, MPI_SUM, 0, node);
    if (rank == 0) {
        long serial = count_block(0, limit);
        printf("primes below %ld: %ld (serial count %ld), %ld blocks taken by %d processes\n", limit, total, serial,
               all_taken, size);
    }
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
