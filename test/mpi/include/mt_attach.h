/* mt_attach.h: whether the processes of MPI_COMM_WORLD may read each other's memory by
 * cross-memory attach, as tests that expect Courier to use it must know (include it with
 * _GNU_SOURCE defined first, for process_vm_readv). */
#ifndef MT_ATTACH_H
#define MT_ATTACH_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <unistd.h>

/* A byte each process shows the others: reading it tells whether the kernel lets this process
 * read theirs (Yama's ptrace scope or a seccomp filter may refuse). */
static const volatile char mt_probe_byte = 1;

/* Whether every process can read every other's memory: all on one node (spans false), attach
 * allowed by the kernel, and not turned off in Courier (COURIER_SHM_CMA=off). The same answer
 * everywhere. */
static inline int mt_attach_everywhere(int spans)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *cma = getenv("COURIER_SHM_CMA");
    int ok = !spans && !(cma && (!strcasecmp(cma, "off") || !strcmp(cma, "0"))), all = 0;
    long long me[2] = {(long long)getpid(), (long long)(uintptr_t)&mt_probe_byte};
    long long *them = malloc(sizeof me * (size_t)size);
    MPI_Allgather(me, 2, MPI_LONG_LONG, them, 2, MPI_LONG_LONG, MPI_COMM_WORLD);
    for (int r = 0; r < size && ok; r++) {
        char got = 0;
        struct iovec local = {&got, 1}, remote = {(void *)(uintptr_t)them[2 * r + 1], 1};
        ok = r == rank || (process_vm_readv((pid_t)them[2 * r], &local, 1, &remote, 1, 0) == 1 && got == 1);
    }
    free(them);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

#endif
