/* The program the launcher tests run: argv[1] picks what it does. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* A deterministic line of `len` characters for (rank, i): the test recomputes it. */
static void make_line(char *buf, int r, int i, int len)
{
    uint32_t x = (uint32_t)(r * 7919 + i * 104729 + 1);
    int n = snprintf(buf, 64, "%d:%d:%d:", r, i, len);
    for (int k = n; k < len; k++) {
        x = x * 1103515245u + 12345u;
        buf[k] = (char)('a' + (x >> 16) % 26);
    }
    buf[len] = '\n';
}

static int spam(int lines)
{
    static char buf[8192];
    for (int i = 0; i < lines; i++) {
        int len = 20 + (int)(((unsigned)(rank * 31 + i * 17) * 2654435761u) % 4000u);
        make_line(buf, rank, i, len);
        /* Write each line in up to three pieces, so the launcher has to reassemble it. */
        int cut1 = len / 3, cut2 = (2 * len) / 3;
        if (i % 3 == 0) {
            (void)!write(1, buf, (size_t)len + 1);
        } else {
            (void)!write(1, buf, (size_t)cut1);
            (void)!write(1, buf + cut1, (size_t)(cut2 - cut1));
            (void)!write(1, buf + cut2, (size_t)(len + 1 - cut2));
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hello";
    if (!strcmp(mode, "nompi")) { /* a program that never calls MPI_Init */
        printf("plain program\n");
        return argc > 2 ? atoi(argv[2]) : 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int victim = size - 1;
    if (!strcmp(mode, "hello")) {
        printf("hello rank %d of %d pid %d\n", rank, size, (int)getpid());
    } else if (!strcmp(mode, "env")) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);
            printf("rank %d %s=%s\n", rank, argv[i], v ? v : "(unset)");
        }
    } else if (!strcmp(mode, "stdin")) {
        /* Every rank reads its stdin to the end: rank 0 gets mpiexec's, the others nothing. */
        unsigned long long sum = 0, n = 0;
        unsigned char buf[65536];
        ssize_t got;
        while ((got = read(0, buf, sizeof buf)) > 0)
            for (ssize_t k = 0; k < got; k++, n++)
                sum = sum * 31 + buf[k];
        printf("rank %d read %llu bytes checksum %llu\n", rank, n, sum);
    } else if (!strcmp(mode, "spam")) {
        spam(argc > 2 ? atoi(argv[2]) : 1000);
    } else if (!strcmp(mode, "exit")) { /* exit CODE [after]: the last rank exits with CODE */
        int code = atoi(argv[2]);
        int after = argc > 3 && !strcmp(argv[3], "after");
        if (after) {
            MPI_Finalize();
            return rank == victim ? code : 0;
        }
        if (rank == victim)
            exit(code);
        sleep(60);
    } else if (!strcmp(mode, "segv")) {
        if (rank == victim)
            raise(SIGSEGV);
        sleep(60);
    } else if (!strcmp(mode, "abort")) {
        if (rank == victim)
            MPI_Abort(MPI_COMM_WORLD, 7);
        sleep(60);
    } else if (!strcmp(mode, "hang")) { /* say we are ready, then wait to be stopped */
        printf("ready %d pid %d\n", rank, (int)getpid());
        fflush(stdout);
        sleep(120);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
