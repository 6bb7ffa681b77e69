/* Unexpected flood: every rank but 0 starts MPI_Isends of 256 MiB in all (argument 1: MiB),
 * a third each in 4 KiB, 64 KiB and 1 MiB messages, then sends one more message on another tag.
 * Rank 0 first waits for those last messages (so everything else arrives before its receive is
 * posted), then receives and checks every other message in order. The standard says this
 * program completes; Courier must also keep rank 0's memory bounded: its peak resident memory
 * may grow by the senders' budgets for early messages (COURIER_UNEXPECTED_BUDGET each) plus a
 * small constant, not by the 256 MiB that is in flight. */
#include "mpitest.h"

#include <stdint.h>

static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':')
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

/* AddressSanitizer keeps freed memory in quarantine: resident sizes then mean nothing. */
static int sanitized(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "libasan") != NULL;
    if (f)
        fclose(f);
    return found;
}

static int64_t budget_bytes(void)
{
    const char *s = getenv("COURIER_UNEXPECTED_BUDGET");
    if (!s)
        return 8 << 20;
    char *end;
    int64_t v = strtoll(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v;
}

static unsigned char pattern(int src, long msg, long i)
{
    return (unsigned char)(src * 29 + msg * 7 + i * 3 + (i >> 9));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long total_mib = argc > 1 ? atol(argv[1]) : 256;
    if (n < 2)
        return mt_finish();
    static const long sizes[3] = {4096, 65536, 1 << 20};
    long per_sender = (total_mib << 20) / (n - 1);
    long count[3], msgs = 0;
    for (int k = 0; k < 3; k++)
        msgs += count[k] = per_sender / 3 / sizes[k];

    if (mt_rank != 0) {
        long bytes = 0;
        for (int k = 0; k < 3; k++)
            bytes += count[k] * sizes[k];
        unsigned char *data = malloc((size_t)bytes);
        MPI_Request *reqs = malloc((size_t)(msgs + 1) * sizeof *reqs);
        long m = 0, off = 0;
        for (int k = 0; k < 3; k++)
            for (long j = 0; j < count[k]; j++, m++) {
                for (long i = 0; i < sizes[k]; i++)
                    data[off + i] = pattern(mt_rank, m, i);
                MPI_Isend(data + off, (int)sizes[k], MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[m]);
                off += sizes[k];
            }
        MPI_Isend(&msgs, 1, MPI_LONG, 0, 2, MPI_COMM_WORLD, &reqs[m]);
        MPI_Waitall((int)msgs + 1, reqs, MPI_STATUSES_IGNORE);
        free(reqs);
        free(data);
    } else {
        unsigned char *buf = malloc(1 << 20);
        memset(buf, 0, 1 << 20);
        long base = status_kib("VmRSS");
        for (int s = 1; s < n; s++) {
            long theirs = 0;
            MPI_Recv(&theirs, 1, MPI_LONG, s, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(theirs == msgs, "rank %d announced %ld messages, expected %ld", s, theirs, msgs);
        }
        long peak_before = status_kib("VmHWM");
        long bad = 0;
        for (int s = 1; s < n; s++) {
            long m = 0;
            for (int k = 0; k < 3; k++)
                for (long j = 0; j < count[k]; j++, m++) {
                    MPI_Status st;
                    int got;
                    MPI_Recv(buf, (int)sizes[k], MPI_BYTE, s, 1, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_BYTE, &got);
                    CHECK(got == sizes[k], "message %ld of rank %d: %d bytes, expected %ld", m, s, got, sizes[k]);
                    for (long i = 0; i < sizes[k] && bad < 5; i++)
                        if (buf[i] != pattern(s, m, i)) {
                            CHECK(0, "message %ld of rank %d differs at byte %ld", m, s, i);
                            bad++;
                            break;
                        }
                }
        }
        long peak = status_kib("VmHWM");
        long grew = peak - base;
        long allowed = (long)((budget_bytes() * (n - 1)) >> 10) + 16 * 1024; /* KiB: budgets + 16 MiB */
        printf("receiver resident memory: %ld KiB at the start, peak %ld KiB after the flood arrived, %ld KiB "
               "in all (+%ld KiB; bound %ld KiB)\n",
               base, peak_before, peak, grew, allowed);
        if (!sanitized())
            CHECK(grew <= allowed, "the receiver grew by %ld KiB for %ld MiB of early messages (bound %ld KiB)", grew,
                  total_mib, allowed);
        free(buf);
    }
    return mt_finish();
}
