/* pmi_fuzz.c: a rank that speaks the PMI-1 wire protocol to mpiexec itself, over the socket
 * mpiexec passes in PMI_FD (not through the library), and breaks it on purpose. For
 * launcher_test.py's pmi_fuzz_* cases.
 *
 * usage: pmi_fuzz CASE OTHERS [SEED]
 *
 * The victim (rank 2, or the last rank of a smaller job, or FUZZ_VICTIM) sends what CASE names, then sleeps
 * (unless the case is to exit), so that mpiexec must end the job itself. The other ranks are
 * either MPI programs (OTHERS=mpi: MPI_Init, MPI_Barrier, MPI_Finalize; they wait inside
 * MPI_Init, in its PMI barrier, for the victim) or plain PMI clients (OTHERS=pmi: init, put,
 * barrier_in, get, finalize; they wait in the barrier). The cases "valid" and "spawn_refused"
 * follow the protocol: with OTHERS=pmi their job succeeds. */
#include <mpi.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fd = -1, rank, size;
static char kvsname[256] = "unknown";

static void die(const char *what)
{
    fprintf(stderr, "pmi_fuzz: rank %d: %s\n", rank, what);
    exit(99);
}

/* Writes everything; errors are ignored (mpiexec may close the socket at any moment). */
static void send_bytes(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

static void send_str(const char *s)
{
    send_bytes(s, strlen(s));
}

/* Reads one reply line; 0, or -1 on end of file, error, or nothing within ms milliseconds. */
static int read_line(char *line, size_t cap, int ms)
{
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ms) <= 0)
            return -1;
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (c == '\n') {
            line[n] = '\0';
            return 0;
        }
        if (n + 1 < cap)
            line[n++] = c;
    }
}

/* A request that must succeed: the setup before the garbage. */
static void rpc(const char *cmd, const char *expect, char *reply, size_t cap)
{
    send_str(cmd);
    if (read_line(reply, cap, 30000) || !strstr(reply, expect) || strstr(reply, "rc=-1"))
        die(cmd);
}

static void pmi_init(void)
{
    char line[1024];
    rpc("cmd=init pmi_version=1 pmi_subversion=1\n", "cmd=response_to_init", line, sizeof line);
    rpc("cmd=get_my_kvsname\n", "cmd=my_kvsname", line, sizeof line);
    char *k = strstr(line, "kvsname=");
    if (!k)
        die("no kvsname");
    snprintf(kvsname, sizeof kvsname, "%s", k + 8);
}

/* The victim's last act: wait to be stopped by mpiexec. */
static void linger(void)
{
    sleep(60);
    fprintf(stderr, "pmi_fuzz: rank %d was not stopped by mpiexec\n", rank);
    exit(98);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static char *filled(size_t n, char c)
{
    char *b = malloc(n + 1);
    if (!b)
        die("out of memory");
    memset(b, c, n);
    b[n] = '\0';
    return b;
}

/* A valid command, then mutated: bytes flipped, inserted, deleted, NULs, newlines, cuts. */
static void mutate(unsigned seed)
{
    static const char *const valid[] = {
        "cmd=get_maxes", "cmd=get_appnum", "cmd=get_universe_size", "cmd=get_my_kvsname",
        "cmd=put kvsname=K key=fuzzkey value=fuzzvalue", "cmd=get kvsname=K key=PMI_process_mapping",
        "cmd=barrier_in", "cmd=abort exitcode=5 message=mutated%20abort", "cmd=finalize",
        "cmd=init pmi_version=1 pmi_subversion=1", "mcmd=spawn",
    };
    rng = 0x9e3779b97f4a7c15ull * (seed + 1);
    char buf[8192];
    const char *base = valid[next_rand() % (sizeof valid / sizeof valid[0])];
    size_t n = strlen(base);
    memcpy(buf, base, n);
    int edits = 1 + (int)(next_rand() % 6);
    for (int e = 0; e < edits; e++) {
        size_t at = n ? next_rand() % n : 0;
        switch (next_rand() % 8) {
        case 0: buf[at] ^= (char)(1u << (next_rand() % 8)); break;
        case 1: buf[at] = (char)(next_rand() & 0xff); break;
        case 2: /* insert a byte */
            if (n < sizeof buf - 1) {
                memmove(buf + at + 1, buf + at, n - at);
                buf[at] = (char)(next_rand() & 0xff);
                n++;
            }
            break;
        case 3: /* delete a byte */
            if (n) {
                memmove(buf + at, buf + at + 1, n - at - 1);
                n--;
            }
            break;
        case 4: buf[at] = '\0'; break;
        case 5: buf[at] = '\n'; break;
        case 6: n = at; break; /* cut */
        case 7: /* repeat a stretch, sometimes far past any limit */
            for (size_t k = 0, len = 1 + next_rand() % 5000, from = n; at < from && k < len && n < sizeof buf - 1; k++)
                buf[n++] = buf[at + k % (from - at)];
            break;
        }
    }
    if (next_rand() % 4)
        buf[n++] = '\n';
    send_bytes(buf, n);
    char line[4096];
    read_line(line, sizeof line, 300);
    _exit(3); /* whatever the command did: an exit before finalize fails the job by itself */
}

static void victim(const char *c, unsigned seed)
{
    char line[4096], cmd[8192];
    if (!strcmp(c, "valid")) {
        pmi_init();
        rpc("cmd=get_maxes\n", "cmd=maxes", line, sizeof line);
        rpc("cmd=get_appnum\n", "appnum=0", line, sizeof line);
        rpc("cmd=get_universe_size\n", "cmd=universe_size", line, sizeof line);
        snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=fuzz-%d value=v%d=with=equals\n", kvsname, rank, rank);
        rpc(cmd, "cmd=put_result", line, sizeof line);
        rpc("cmd=barrier_in\n", "cmd=barrier_out", line, sizeof line);
        snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=fuzz-0\n", kvsname);
        rpc(cmd, "value=v0=with=equals", line, sizeof line);
        send_str("cmd=get key=no-such-key\n"); /* a missing key is an answer, not an error */
        if (read_line(line, sizeof line, 30000) || !strstr(line, "rc=-1"))
            die("get of a missing key");
        rpc("cmd=finalize\n", "cmd=finalize_ack", line, sizeof line);
        exit(0);
    }
    if (!strcmp(c, "spawn_refused")) { /* a multi-line spawn and the name service: refused, not fatal */
        pmi_init();
        send_str("mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=1\nspawnssofar=1\nargcnt=1\n"
                 "arg1=an argument with spaces\npreput_num=0\ninfo_num=0\nendcmd\n");
        if (read_line(line, sizeof line, 30000) || !strstr(line, "cmd=spawn_result rc=-1"))
            die("spawn was not refused");
        send_str("cmd=publish_name service=s port=p\n");
        if (read_line(line, sizeof line, 30000) || !strstr(line, "cmd=publish_result rc=-1"))
            die("publish_name was not refused");
        rpc("cmd=barrier_in\n", "cmd=barrier_out", line, sizeof line);
        rpc("cmd=finalize\n", "cmd=finalize_ack", line, sizeof line);
        exit(0);
    }
    if (!strcmp(c, "mutate")) {
        pmi_init();
        mutate(seed);
    }
    /* Garbage before init. */
    if (!strcmp(c, "long_line")) {
        char *b = filled(1 << 20, 'a');
        send_bytes(b, 1 << 20);
        send_str("\n");
        linger();
    }
    if (!strcmp(c, "long_line_smuggle")) { /* the tail of an over-long line must not be served */
        char *b = filled(1 << 20, 'a');
        send_bytes(b, 1 << 20);
        send_str(" cmd=abort exitcode=0 message=smuggled\n");
        linger();
    }
    if (!strcmp(c, "binary")) {
        static unsigned char b[65536];
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)next_rand();
        send_bytes(b, sizeof b);
        linger();
    }
    if (!strcmp(c, "nul_bytes")) {
        send_bytes("cmd=init\0pmi_version=1\n", 23);
        linger();
    }
    if (!strcmp(c, "nul_first")) {
        send_bytes("\0cmd=init pmi_version=1 pmi_subversion=1\n", 41);
        linger();
    }
    if (!strcmp(c, "control_chars")) {
        send_str("cmd=\x1b[2J\x1b[31minit\r\n");
        linger();
    }
    if (!strcmp(c, "get_before_init")) {
        send_str("cmd=get kvsname=x key=PMI_process_mapping\n");
        linger();
    }
    if (!strcmp(c, "barrier_before_init")) {
        send_str("cmd=barrier_in\n");
        linger();
    }
    if (!strcmp(c, "finalize_before_init")) {
        send_str("cmd=finalize\n");
        linger();
    }
    if (!strcmp(c, "wrong_version")) {
        send_str("cmd=init pmi_version=2 pmi_subversion=0\n");
        linger();
    }
    if (!strcmp(c, "duplicate_field")) {
        send_str("cmd=init cmd=abort\n");
        linger();
    }
    if (!strcmp(c, "partial_before_init_close")) {
        send_str("cmd=in");
        close(fd);
        linger();
    }
    if (!strcmp(c, "abort_garbage")) { /* exit code out of range, broken escapes */
        send_str("cmd=abort exitcode=99999999999999999999999 message=%zz%4%\n");
        linger();
    }
    /* Garbage after a proper start. */
    pmi_init();
    if (!strcmp(c, "long_put")) {
        char *b = filled(1 << 20, 'v');
        snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=k value=", kvsname);
        send_str(cmd);
        send_bytes(b, 1 << 20);
        send_str("\n");
    } else if (!strcmp(c, "binary_after_init")) {
        static unsigned char b[65536];
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)next_rand();
        send_bytes(b, sizeof b);
    } else if (!strcmp(c, "no_newline_close")) {
        send_str("cmd=get_appnum");
        close(fd);
    } else if (!strcmp(c, "no_newline_exit")) {
        snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=y", kvsname);
        send_str(cmd);
        _exit(0);
    } else if (!strcmp(c, "close_mid_command")) {
        snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=a val", kvsname);
        send_str(cmd);
        shutdown(fd, SHUT_RDWR);
        close(fd);
    } else if (!strcmp(c, "close_after_init")) {
        close(fd);
    } else if (!strcmp(c, "barrier_twice")) {
        send_str("cmd=barrier_in\ncmd=barrier_in\n");
    } else if (!strcmp(c, "init_twice")) {
        send_str("cmd=init pmi_version=1 pmi_subversion=1\n");
    } else if (!strcmp(c, "after_finalize")) {
        rpc("cmd=finalize\n", "cmd=finalize_ack", line, sizeof line);
        send_str("cmd=get_appnum\n");
    } else if (!strcmp(c, "put_huge_key")) {
        char *k = filled(2000, 'k');
        snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=%s value=v\n", kvsname, k);
        send_str(cmd);
    } else if (!strcmp(c, "put_huge_value")) {
        char *v = filled(3000, 'v');
        snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=k value=%s\n", kvsname, v);
        send_str(cmd);
    } else if (!strcmp(c, "put_flood")) { /* valid puts, each answered, until the space is full */
        char *v = filled(1000, 'v');
        for (int i = 0; i < 1000000; i++) {
            snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=flood-%d value=%s\n", kvsname, i, v);
            send_str(cmd);
            if (read_line(line, sizeof line, 30000))
                break; /* mpiexec hung up */
            if (!strstr(line, "rc=0"))
                die("a put was refused before the space was full");
        }
    } else if (!strcmp(c, "pipeline_flood")) { /* commands without reading the replies */
        size_t n = (size_t)1 << 20;
        char *b = malloc(n);
        if (!b)
            die("out of memory");
        for (size_t i = 0; i + 15 <= n; i += 15)
            memcpy(b + i, "cmd=get_appnum\n", 15);
        send_bytes(b, n / 15 * 15);
    } else if (!strcmp(c, "unknown_command")) {
        send_str("cmd=frobnicate a=b\n");
    } else if (!strcmp(c, "no_cmd")) {
        send_str("key=value other=thing\n");
    } else if (!strcmp(c, "not_key_value")) {
        send_str("hello world\n");
    } else if (!strcmp(c, "empty_line")) {
        send_str("\n");
    } else if (!strcmp(c, "put_without_value")) {
        snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=onlykey\n", kvsname);
        send_str(cmd);
    } else if (!strcmp(c, "get_without_key")) {
        snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s\n", kvsname);
        send_str(cmd);
    } else if (!strcmp(c, "too_many_fields")) {
        int n = snprintf(cmd, sizeof cmd, "cmd=get_appnum");
        for (int i = 0; i < 40; i++)
            n += snprintf(cmd + n, sizeof cmd - (size_t)n, " f%d=x", i);
        snprintf(cmd + n, sizeof cmd - (size_t)n, "\n");
        send_str(cmd);
    } else if (!strcmp(c, "mcmd_unterminated")) {
        send_str("mcmd=spawn\n");
        for (int i = 0; i < 2000; i++)
            send_str("arg=x\n");
    } else if (!strcmp(c, "die_after_init")) { /* not garbage: a death mpiexec must report as such */
        raise(SIGKILL);
    } else if (!strcmp(c, "abort_code_zero")) {
        send_str("cmd=abort exitcode=0 message=fuzz%20abort%20with%20code%200\n");
    } else {
        die("unknown case");
    }
    linger();
}

/* The well-behaved ranks. */
static void pmi_other(void)
{
    char line[4096], cmd[512];
    pmi_init();
    snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=fuzz-%d value=v%d=with=equals\n", kvsname, rank, rank);
    rpc(cmd, "cmd=put_result", line, sizeof line);
    rpc("cmd=barrier_in\n", "cmd=barrier_out", line, sizeof line);
    snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=fuzz-%d\n", kvsname, rank);
    rpc(cmd, "cmd=get_result rc=0", line, sizeof line);
    rpc("cmd=finalize\n", "cmd=finalize_ack", line, sizeof line);
    exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        die("usage: pmi_fuzz CASE mpi|pmi [SEED]");
    const char *fdstr = getenv("PMI_FD"), *r = getenv("PMI_RANK"), *s = getenv("PMI_SIZE");
    if (!fdstr || !r || !s)
        die("not started by a PMI-1 launcher (PMI_FD, PMI_RANK, PMI_SIZE)");
    fd = atoi(fdstr);
    rank = atoi(r);
    size = atoi(s);
    signal(SIGPIPE, SIG_IGN); /* mpiexec hangs up on garbage: writes then fail, quietly */
    int vict = getenv("FUZZ_VICTIM") ? atoi(getenv("FUZZ_VICTIM")) : size > 2 ? 2 : size - 1;
    if (rank == vict) {
        victim(argv[1], argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 0);
        return 0;
    }
    if (!strcmp(argv[2], "pmi"))
        pmi_other();
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
