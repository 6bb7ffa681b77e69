/* mtthreads.h: what the multithreaded tests share: MPI_Init_thread at MPI_THREAD_MULTIPLE
 * (a test fails at once if it is not granted) and running a function in T threads; CHECK
 * (mpitest.h) counts failures from any thread. */
#ifndef MTTHREADS_H
#define MTTHREADS_H

#include "mpitest.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tt_rank, tt_size;

static void tt_init(int *argc, char ***argv)
{
    int provided = -1;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &tt_rank);
    mt_rank = tt_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &tt_size);
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "FAIL rank %d: MPI_Init_thread gave level %d, not MPI_THREAD_MULTIPLE\n", tt_rank, provided);
        exit(1);
    }
}

/* Runs fn(0..n-1) in n threads and joins them. */
static void tt_run(int n, void *(*fn)(void *))
{
    pthread_t th[64];
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, fn, (void *)i)) {
            fprintf(stderr, "FAIL rank %d: cannot create thread %ld\n", tt_rank, i);
            exit(1);
        }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

/* The number of threads: argv[1] if given, else `dflt`. */
static int tt_threads(int argc, char **argv, int dflt)
{
    int n = argc > 1 ? atoi(argv[1]) : dflt;
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

static int tt_finish(void)
{
    int mine = atomic_load(&mt_errors), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (tt_rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return mine ? 1 : 0;
}

#endif
