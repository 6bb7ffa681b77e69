/* The program the launcher tests run: argv[1] picks what it does. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
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

static void kill_self(int sig)
{
    (void)sig;
    kill(getpid(), SIGKILL);
}

/* In ms milliseconds this process kills itself with SIGKILL, wherever it is then (inside an MPI
 * call, almost always). */
static void arm_self_kill(int ms)
{
    if (ms <= 0)
        return;
    signal(SIGALRM, kill_self);
    struct itimerval it = {.it_value = {ms / 1000, (ms % 1000) * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

/* xfer MIB VICTIM DELAY_MS: rank 0 sends MIB-MiB messages to rank 1 (rendezvous), over and over;
 * the other ranks wait in MPI_Barrier. Ranks 0 and 1 say "xfer ready"; DELAY_MS later the
 * victim kills itself (DELAY_MS 0: the test kills it). */
static void xfer(size_t bytes, int victim, int delay)
{
    if (rank >= 2) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    char *buf = malloc(bytes);
    if (!buf) {
        printf("FAIL: cannot allocate %zu bytes\n", bytes);
        exit(5);
    }
    memset(buf, rank + 1, bytes);
    printf("xfer ready %d pid %d\n", rank, (int)getpid());
    fflush(stdout);
    if (rank == victim)
        arm_self_kill(delay);
    for (;;) {
        if (rank == 0)
            MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* coll allreduce|barrier VICTIM DELAY_MS: every rank loops in the collective (Allreduce of 1
 * and of 64Ki longs, results checked); after 50 rounds the victim says "coll ready", and
 * DELAY_MS later kills itself (DELAY_MS 0: the test kills it). */
static void coll_loop(const char *op, int victim, int delay)
{
    enum { BIG = 65536 };
    long *in = malloc(BIG * sizeof *in), *out = malloc(BIG * sizeof *out);
    for (int i = 0; i < BIG; i++)
        in[i] = rank + i;
    for (long it = 0;; it++) {
        if (!strcmp(op, "barrier")) {
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            int n = it % 2 ? BIG : 1;
            MPI_Allreduce(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            long want = (long)size * (size - 1) / 2 + (long)(n - 1) * size;
            if (out[n - 1] != want) {
                printf("FAIL: rank %d: allreduce gave %ld, not %ld\n", rank, out[n - 1], want);
                exit(5);
            }
        }
        if (it == 50 && rank == victim) {
            printf("coll ready %d pid %d\n", rank, (int)getpid());
            fflush(stdout);
            arm_self_kill(delay);
        }
    }
}

/* allreduce: sums and maxima of vectors of several lengths, every element checked by every rank;
 * each rank prints its own count of wrong elements and the job's total. */
static void allreduce_check(void)
{
    static const int lens[] = {1, 7, 1000, 65536};
    long errors = 0;
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        int n = lens[l];
        long *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
        for (int i = 0; i < n; i++)
            in[i] = (long)rank * (i + 1) + i;
        MPI_Allreduce(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            errors += out[i] != (long)(i + 1) * size * (size - 1) / 2 + (long)i * size;
        MPI_Allreduce(in, out, n, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            errors += out[i] != (long)(size - 1) * (i + 1) + i;
        free(in);
        free(out);
    }
    long total = -1;
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    printf("allreduce rank %d of %d errors %ld total %ld\n", rank, size, errors, total);
}

/* The last rank takes an exclusive lock on rank 0's part of a window and dies holding it
 * (SIGKILL: no handler runs, nothing is released), while every other rank waits for that lock.
 * The job must still end at once, and the window's shared memory must not outlive it. */
static void lock_holder_dies(const char *flavor)
{
    MPI_Win win;
    int *base, local = 0;
    if (!strcmp(flavor, "shared"))
        MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    else if (!strcmp(flavor, "create"))
        MPI_Win_create(&local, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    else
        MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (rank == size - 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        int one = 1;
        MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        MPI_Barrier(MPI_COMM_WORLD); /* the lock is held: let the others queue for it */
        usleep(100000);
        raise(SIGKILL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win); /* never granted */
    MPI_Win_unlock(0, win);
    MPI_Win_free(&win);
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
        char host[MPI_MAX_PROCESSOR_NAME];
        int len;
        MPI_Get_processor_name(host, &len);
        printf("hello rank %d of %d pid %d on %s\n", rank, size, (int)getpid(), host);
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
    } else if (!strcmp(mode, "xfer")) {
        xfer((size_t)atol(argv[2]) << 20, atoi(argv[3]), atoi(argv[4]));
    } else if (!strcmp(mode, "coll")) {
        coll_loop(argv[2], atoi(argv[3]), atoi(argv[4]));
    } else if (!strcmp(mode, "allreduce")) {
        allreduce_check();
    } else if (!strcmp(mode, "session_open")) { /* finalize with a session left open, then exit 0 */
        MPI_Session session;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
        MPI_Finalize();
        printf("rank %d finalized with a session open\n", rank);
        return 0;
    } else if (!strcmp(mode, "lockdie")) {
        lock_holder_dies(argc > 2 ? argv[2] : "allocate");
    } else if (!strcmp(mode, "hang")) { /* say we are ready, then wait to be stopped */
        printf("ready %d pid %d\n", rank, (int)getpid());
        fflush(stdout);
        sleep(120);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
