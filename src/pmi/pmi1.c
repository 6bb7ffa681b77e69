/* pmi1.c: the PMI-1 wire protocol client ("cmd=... key=value ...\n" lines over a socket).
 *
 * The socket is inherited (PMI_FD, as Courier's mpiexec and Hydra provide it) or reached over
 * TCP (PMI_PORT=host:port). Rank and size come from PMI_RANK/PMI_SIZE, or from the server's
 * "cmd=set" lines after an "initack" when PMI_ID is given. */
#include "backends.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int pmi_fd = -1;
static char kvsname[256];

/* Buffered line reader over pmi_fd: the server's replies are whole lines. */
static char rbuf[4096];
static size_t rlen;

static int write_all(const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(pmi_fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_line(char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf);
            if (n >= cap)
                n = cap - 1;
            memcpy(line, rbuf, n);
            line[n] = '\0';
            size_t used = (size_t)(nl - rbuf) + 1;
            memmove(rbuf, rbuf + used, rlen - used);
            rlen -= used;
            return 0;
        }
        if (rlen == sizeof rbuf)
            return -1;
        ssize_t r = read(pmi_fd, rbuf + rlen, sizeof rbuf - rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        rlen += (size_t)r;
    }
}

/* Finds `key=` in a reply line and copies its value (up to the next space). */
static int field(const char *line, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p++) {
        if ((p == line || p[-1] == ' ') && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn(v, " ");
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return 0;
        }
    }
    return -1;
}

static int field_int(const char *line, const char *key, int *out)
{
    char v[32];
    if (field(line, key, v, sizeof v))
        return -1;
    *out = atoi(v);
    return 0;
}

/* Sends one command and reads the reply whose cmd is `expect`. */
static int rpc(const char *cmd, const char *expect, char *reply, size_t cap)
{
    if (pmi_fd < 0 || write_all(cmd, strlen(cmd)))
        return -1;
    char c[64];
    if (read_line(reply, cap) || field(reply, "cmd", c, sizeof c) || strcmp(c, expect))
        return -1;
    int rc = 0;
    if (field_int(reply, "rc", &rc) == 0 && rc != 0)
        return -1;
    return 0;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static int connect_port(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &res))
        return -1;
    int fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* Environment variables that mean "you are one of several processes" to other launchers. When
 * one is set but no PMI server is reachable, starting as a singleton would silently run N
 * copies of a one-process job, so we refuse instead. */
static int explain_orphan(char *why, size_t cap)
{
    static const struct {
        const char *var, *launcher;
    } hints[] = {
        {"PMI_SIZE", "a PMI-1 launcher"},
        {"OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun"},
        {"PMIX_RANK", "a PMIx launcher"},
        {"SLURM_STEP_NUM_TASKS", "Slurm's srun"},
        {"MPI_LOCALNRANKS", "MPICH's Hydra"},
    };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        const char *v = getenv(hints[i].var);
        if (!v || !*v)
            continue;
        if (strcmp(hints[i].var, "PMIX_RANK") != 0 && atoi(v) <= 1)
            continue;
        snprintf(why, cap,
                 "this process was started by %s (%s=%s), but no PMI server can be reached "
                 "(neither PMI_FD nor PMI_PORT is set). Courier will not start a one-process world "
                 "here: that would run several unrelated copies of the program. Start it with "
                 "Courier's mpiexec, MPICH's Hydra mpiexec, or another PMI-1 or PMIx launcher.",
                 hints[i].launcher, hints[i].var, v);
        return -1;
    }
    return 0;
}

int cr_pmi1_init(cr_pmi_job *job, char *why, size_t whycap)
{
    const char *fdstr = getenv("PMI_FD");
    const char *port = getenv("PMI_PORT");
    memset(job, 0, sizeof *job);
    if (fdstr && *fdstr) {
        char *end;
        long fd = strtol(fdstr, &end, 10);
        /* The socket is the library's: a program this rank runs (system(), a shell) must not
         * inherit it, or it could speak PMI as this rank, or hold the launcher's socket open
         * after this rank died. */
        if (*end || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0) {
            snprintf(why, whycap, "PMI_FD=%s is not an open file descriptor", fdstr);
            return -1;
        }
        pmi_fd = (int)fd;
    } else if (port && *port) {
        pmi_fd = connect_port(port);
        if (pmi_fd < 0) {
            snprintf(why, whycap, "cannot connect to the PMI server at PMI_PORT=%s: %s", port, strerror(errno));
            return -1;
        }
    } else {
        if (explain_orphan(why, whycap))
            return -1;
        job->rank = 0;
        job->size = 1;
        job->universe_size = 1;
        job->singleton = true;
        return 0;
    }
    char line[1024];
    job->rank = env_int("PMI_RANK", 0);
    job->size = env_int("PMI_SIZE", 1);
    const char *id = getenv("PMI_ID");
    if (id && *id) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "cmd=initack pmiid=%s\n", id);
        if (rpc(cmd, "initack", line, sizeof line))
            goto lost;
        for (int i = 0; i < 3; i++) { /* cmd=set size=, rank=, debug= */
            int v;
            if (read_line(line, sizeof line))
                goto lost;
            if (field_int(line, "size", &v) == 0)
                job->size = v;
            if (field_int(line, "rank", &v) == 0)
                job->rank = v;
        }
    }
    if (rpc("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", line, sizeof line))
        goto lost;
    if (rpc("cmd=get_appnum\n", "appnum", line, sizeof line) || field_int(line, "appnum", &job->appnum))
        goto lost;
    if (rpc("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof line) ||
        field(line, "kvsname", kvsname, sizeof kvsname))
        goto lost;
    job->universe_size = job->size;
    if (rpc("cmd=get_universe_size\n", "universe_size", line, sizeof line) == 0)
        field_int(line, "size", &job->universe_size);
    return 0;
lost:
    snprintf(why, whycap, "the PMI server on %s=%s did not answer the PMI-1 start-up exchange",
             fdstr && *fdstr ? "PMI_FD" : "PMI_PORT", fdstr && *fdstr ? fdstr : port);
    close(pmi_fd);
    pmi_fd = -1;
    return -1;
}

bool cr_pmi1_connected(void)
{
    return pmi_fd >= 0;
}

int cr_pmi1_put(const char *key, const char *value)
{
    char cmd[1536], line[256];
    snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, value);
    return rpc(cmd, "put_result", line, sizeof line);
}

int cr_pmi1_get(const char *key, char *value, size_t cap)
{
    char cmd[512], line[1536];
    snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=%s\n", kvsname, key);
    if (rpc(cmd, "get_result", line, sizeof line))
        return -1;
    return field(line, "value", value, cap);
}

int cr_pmi1_barrier(void)
{
    char line[256];
    return rpc("cmd=barrier_in\n", "barrier_out", line, sizeof line);
}

int cr_pmi1_finalize(void)
{
    char line[256];
    if (pmi_fd < 0)
        return 0;
    int rc = rpc("cmd=finalize\n", "finalize_ack", line, sizeof line);
    close(pmi_fd);
    pmi_fd = -1;
    return rc;
}

void cr_pmi1_abort(int exitcode, const char *message)
{
    if (pmi_fd < 0)
        return;
    /* The message travels as one token: bytes that would end it are %XX-escaped. */
    char cmd[700];
    int n = snprintf(cmd, sizeof cmd, "cmd=abort exitcode=%d message=", exitcode);
    for (const char *m = message ? message : ""; *m && n < (int)sizeof cmd - 5; m++) {
        if (*m == ' ' || *m == '\n' || *m == '=' || *m == '%' || (unsigned char)*m < 32)
            n += snprintf(cmd + n, sizeof cmd - (size_t)n, "%%%02X", (unsigned char)*m);
        else
            cmd[n++] = *m;
    }
    cmd[n++] = '\n';
    write_all(cmd, (size_t)n);
    /* Wait briefly for the launcher to act on it: it stops the other processes and reports
     * this one as the cause, rather than reporting an early exit. */
    char line[64];
    struct timeval tv = {.tv_sec = 2};
    setsockopt(pmi_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)read_line(line, sizeof line);
}
