/* shared_window.c: heat flowing along a rod, computed by the processes of one node in one
 * shared-memory window, the MPI-3 way. The node's processes (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED) allocate the rod together (MPI_Win_allocate_shared): each owns a
 * stretch of cells with a ghost cell at either end. At every step a process stores its edge
 * cells straight into its neighbours' ghost cells, through pointers from MPI_Win_shared_query,
 * with no message at all; MPI_Win_sync and MPI_Barrier order those stores before the
 * neighbours read them. The result is compared with a serial run of the same arithmetic: it
 * must be identical to the last bit.
 *
 * usage: mpiexec -n 4 shared_window [CELLS [STEPS [direct|put]]]
 *   direct (default): plain stores into the neighbours' memory, lock_all + sync + barrier
 *   put:              MPI_Put into the neighbours' ghost cells between MPI_Win_fence calls */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double HOT = 100.0, COLD = 0.0, RATE = 0.25;

/* One explicit step of the heat equation on cells u[1..n], ghosts u[0] and u[n+1]. */
static void step(const double *u, double *next, long n)
{
    for (long i = 1; i <= n; i++)
        next[i] = u[i] + RATE * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
}

/* The whole rod in one process: the reference the shared run must match exactly. */
static double *serial(long cells, long steps)
{
    double *u = calloc((size_t)cells + 2, sizeof *u), *next = calloc((size_t)cells + 2, sizeof *next);
    u[0] = next[0] = HOT;
    u[cells + 1] = next[cells + 1] = COLD;
    for (long s = 0; s < steps; s++) {
        step(u, next, cells);
        double *t = u;
        u = next;
        next = t;
    }
    free(next);
    return u;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long cells = argc > 1 ? atol(argv[1]) : 1000;
    long steps = argc > 2 ? atol(argv[2]) : 2000;
    int use_put = argc > 3 && !strcmp(argv[3], "put");

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, size;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    if (cells < size) {
        if (rank == 0)
            fprintf(stderr, "shared_window: %ld cells cannot be shared by %d processes\n", cells, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* My stretch of the rod: n cells, the remainder spread over the first ranks. */
    long n = cells / size + (rank < cells % size);

    /* My part of the window: two copies of [ghost, n cells, ghost], the current and the next
     * step. Parts are whole doubles, so the displacement unit is one double. */
    double *mine;
    MPI_Win win;
    MPI_Win_allocate_shared(2 * (n + 2) * (MPI_Aint)sizeof(double), sizeof(double), MPI_INFO_NULL, node, &mine, &win);

    /* Where my neighbours' parts are in my address space (not where they are in theirs), and
     * how many cells they own (a part holds two copies of the cells and their ghosts). */
    int left = rank - 1, right = rank + 1;
    double *left_part = NULL, *right_part = NULL;
    long left_n = 0, right_n = 0;
    MPI_Aint bytes;
    int unit;
    if (left >= 0) {
        MPI_Win_shared_query(win, left, &bytes, &unit, &left_part);
        left_n = (long)(bytes / unit) / 2 - 2;
    }
    if (right < size) {
        MPI_Win_shared_query(win, right, &bytes, &unit, &right_part);
        right_n = (long)(bytes / unit) / 2 - 2;
    }

    for (long i = 0; i < 2 * (n + 2); i++)
        mine[i] = 0.0;
    if (left < 0)
        mine[0] = mine[n + 2] = HOT; /* the rod's ends are held at fixed temperatures */
    if (right >= size)
        mine[n + 1] = mine[2 * n + 3] = COLD;

    /* Two copies make one synchronisation per step enough: at step s everyone reads copy s % 2
     * and writes copy (s + 1) % 2, including the ghost cells its neighbours fill for step s + 1.
     * A neighbour cannot be two steps ahead of me, so it never fills a ghost I still read. */
    double t0 = MPI_Wtime();
    if (use_put)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    else
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (long s = 0; s < steps; s++) {
        long copy = s % 2;
        double *u = mine + copy * (n + 2), *next = mine + (1 - copy) * (n + 2);
        MPI_Aint left_ghost = copy * (left_n + 2) + left_n + 1, right_ghost = copy * (right_n + 2);
        if (use_put) {
            /* The same exchange through the one-sided calls: puts, completed by the fence. */
            if (left >= 0)
                MPI_Put(&u[1], 1, MPI_DOUBLE, left, left_ghost, 1, MPI_DOUBLE, win);
            if (right < size)
                MPI_Put(&u[n], 1, MPI_DOUBLE, right, right_ghost, 1, MPI_DOUBLE, win);
            MPI_Win_fence(0, win);
        } else {
            /* My edge cells go straight into my neighbours' ghost cells: plain stores. */
            if (left >= 0)
                left_part[left_ghost] = u[1];
            if (right < size)
                right_part[right_ghost] = u[n];
            MPI_Win_sync(win); /* my stores are visible ... */
            MPI_Barrier(node); /* ... before my neighbours go on ... */
            MPI_Win_sync(win); /* ... and theirs are visible to me */
        }
        step(u, next, n);
    }
    /* Everyone's last step is done and visible before rank 0 reads it. */
    if (use_put) {
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    } else {
        MPI_Win_sync(win);
        MPI_Barrier(node);
        MPI_Win_sync(win);
    }
    double elapsed = MPI_Wtime() - t0;

    /* Rank 0 reads every process's stretch directly and compares it with the serial run. */
    if (rank == 0) {
        double *ref = serial(cells, steps), worst = 0.0, heat = 0.0;
        for (int r = 0; r < size; r++) {
            double *part;
            MPI_Win_shared_query(win, r, &bytes, &unit, &part);
            long rn = cells / size + (r < cells % size);
            long rfirst = r * (cells / size) + (r < cells % size ? r : cells % size);
            double *ru = part + (steps % 2 ? rn + 2 : 0);
            for (long i = 0; i < rn; i++) {
                worst = fmax(worst, fabs(ru[1 + i] - ref[1 + rfirst + i]));
                heat += ru[1 + i];
            }
        }
        printf("rod of %ld cells, %ld steps on %d processes sharing one window (%s): heat %.6f, "
               "max difference from the serial run %g, %.3f s\n",
               cells, steps, size, use_put ? "put + fence" : "direct stores + sync", heat, worst, elapsed);
        free(ref);
    }
    if (!use_put)
        MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
