/* edges.c: one-sided cases found in review: displacements whose byte offset overflows, target
 * types with negative extents, zero counts anywhere, MPI_Get_accumulate into MPI_BOTTOM,
 * MPI_Compare_and_swap's type rules, a start with MPI_MODE_NOCHECK followed by one without
 * (each must use its own post), MPI_Win_lock_all beside a process that holds one exclusive lock
 * and waits for another (no deadlock), windows too large to map, and epochs misused (an
 * operation outside any, complete without start, wait without post, a lock on a no_locks
 * window, freeing a window with a lock held). */
#include "mpitest.h"

#include <stdint.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long long *buf;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < 4; i++)
        buf[i] = 100 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    long long v = 7;

    /* Out of range however it is computed; nothing outside the window changes. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG_LONG, rank, ((MPI_Aint)1 << 61) + 1, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_RANGE);
    MPI_Datatype back;
    MPI_Type_create_resized(MPI_LONG_LONG, 0, -(MPI_Aint)sizeof(long long), &back);
    MPI_Type_commit(&back);
    long long three[3] = {1, 2, 3};
    CHECK_CLASS(MPI_Put(three, 3, MPI_LONG_LONG, rank, 0, 3, back, win), MPI_ERR_RMA_RANGE);
    /* the same type ending at the window's last element stays inside: elements 3, 2, 1 */
    CHECK_CLASS(MPI_Put(three, 3, MPI_LONG_LONG, rank, 3, 3, back, win), MPI_SUCCESS);
    CHECK(buf[3] == 1 && buf[2] == 2 && buf[1] == 3 && buf[0] == 100, "backwards put: %lld %lld %lld %lld", buf[0],
          buf[1], buf[2], buf[3]);
    CHECK_CLASS(MPI_Put(&v, 0, MPI_LONG_LONG, rank, 1000000, 0, MPI_LONG_LONG, win), MPI_SUCCESS);
    MPI_Type_free(&back);

    /* Get_accumulate with an absolute-address result type at MPI_BOTTOM. */
    long long result = -1, add = 5;
    MPI_Aint at;
    MPI_Get_address(&result, &at);
    MPI_Datatype absolute;
    int one = 1;
    MPI_Type_create_hindexed(1, &one, &at, MPI_LONG_LONG, &absolute);
    MPI_Type_commit(&absolute);
    buf[0] = 10;
    CHECK_CLASS(MPI_Get_accumulate(&add, 1, MPI_LONG_LONG, MPI_BOTTOM, 1, absolute, rank, 0, 1, MPI_LONG_LONG, MPI_SUM,
                                   win),
                MPI_SUCCESS);
    CHECK(result == 10 && buf[0] == 15, "get_accumulate into MPI_BOTTOM: result %lld, target %lld", result, buf[0]);
    MPI_Type_free(&absolute);

    /* Compare-and-swap: integers yes, floating point and pairs no, NULL buffers no. */
    double d = 0, dc = 0, dr;
    int pair[2] = {0, 0}, pc[2] = {0, 0}, pr[2];
    CHECK_CLASS(MPI_Compare_and_swap(&d, &dc, &dr, MPI_DOUBLE, rank, 0, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Compare_and_swap(pair, pc, pr, MPI_2INT, rank, 0, win), MPI_ERR_TYPE);
    long long cmp = 15, swapped = 0;
    CHECK_CLASS(MPI_Compare_and_swap(&v, NULL, &swapped, MPI_LONG_LONG, rank, 0, win), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Compare_and_swap(&v, &cmp, &swapped, MPI_LONG_LONG, rank, 0, win), MPI_SUCCESS);
    CHECK(swapped == 15 && buf[0] == 7, "compare_and_swap: old %lld, now %lld", swapped, buf[0]);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    if (size >= 2 && rank < 2) {
        /* A start with MPI_MODE_NOCHECK uses the target's post too: the next start waits for
         * the next post, and the put lands after the target's store. */
        MPI_Group world, peer;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int other = 1 - rank;
        MPI_Group_incl(world, 1, &other, &peer);
        MPI_Comm pair2;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &pair2);
        if (rank == 1) {
            MPI_Win_post(peer, MPI_MODE_NOCHECK, win);
            MPI_Barrier(pair2);
            MPI_Win_wait(win);
            usleep(100000);
            buf[1] = 42; /* before the window is exposed again */
            MPI_Win_post(peer, 0, win);
            MPI_Win_wait(win);
            CHECK(buf[1] == 7, "the put landed before the post: %lld", buf[1]);
        } else {
            MPI_Barrier(pair2);
            MPI_Win_start(peer, MPI_MODE_NOCHECK, win);
            MPI_Win_complete(win);
            MPI_Win_start(peer, 0, win);
            MPI_Put(&v, 1, MPI_LONG_LONG, 1, 1, 1, MPI_LONG_LONG, win);
            MPI_Win_complete(win);
        }
        MPI_Comm_free(&pair2);
        MPI_Group_free(&peer);
        MPI_Group_free(&world);
    } else if (size >= 2) {
        MPI_Comm pair2;
        MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, &pair2);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (size >= 3) {
        /* Rank 1 holds its own lock exclusively and then wants rank 0's; rank 2 takes lock_all
         * meanwhile. Holding rank 0's shared lock while waiting for rank 1's would be a cycle. */
        if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            usleep(200000);
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Put(&v, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, win);
            MPI_Win_unlock(0, win);
            MPI_Win_unlock(1, win);
        } else if (rank == 2) {
            usleep(50000);
            long long got;
            MPI_Win_lock_all(0, win);
            MPI_Get(&got, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, win);
            MPI_Win_unlock_all(win);
        }
    }
    /* Epochs misused: the right class, and the window still works afterwards. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    int flag;
    CHECK_CLASS(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush(rank, win), MPI_ERR_RMA_SYNC); /* flushes need a passive-target epoch */
    CHECK_CLASS(MPI_Win_flush_local(rank, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush(MPI_PROC_NULL, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush(rank, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_flush_all(win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    CHECK(win != MPI_WIN_NULL, "a refused MPI_Win_free cleared the handle");
    CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG_LONG, rank, 3, 1, MPI_LONG_LONG, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(rank, win), MPI_SUCCESS);
    CHECK(buf[3] == 7, "the put after the errors: %lld", buf[3]);
    MPI_Win_free(&win);
    MPI_Info nolocks;
    MPI_Info_create(&nolocks);
    MPI_Info_set(nolocks, "no_locks", "true");
    MPI_Win_allocate(sizeof(long long), sizeof(long long), nolocks, MPI_COMM_WORLD, &buf, &win);
    MPI_Info_free(&nolocks);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    MPI_Win_free(&win);

    /* Locks inside active-target epochs: refused inside a fence epoch that operations used and
     * inside MPI_Win_start's; a fence epoch nobody used ends when a lock takes over (an operation
     * after the unlock then has no epoch), as MPICH's errors/rma tests expect. */
    MPI_Win_allocate(sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    MPI_Win_fence(0, win); /* an epoch nobody uses */
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_unlock(rank, win), MPI_SUCCESS);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC);
    MPI_Group everyone;
    MPI_Comm_group(MPI_COMM_WORLD, &everyone);
    MPI_Win_post(everyone, 0, win);
    MPI_Win_start(everyone, 0, win);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, MPI_MODE_NOCHECK, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_Group_free(&everyone);
    MPI_Win_free(&win);

    /* More memory than can be mapped: refused everywhere, not a window with nothing behind it. */
    void *huge;
    MPI_Win big;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate((MPI_Aint)1 << 62, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &huge, &big);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NO_MEM, "a 2^62-byte window per process: class %d", cls);
    return mt_finish();
}
