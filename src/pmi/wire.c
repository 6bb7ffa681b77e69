/* wire.c: the socket to a PMI server that the PMI-1 and PMI-2 clients share: found from PMI_FD
 * (inherited) or PMI_PORT (host:port), written whole, and read through one buffer, in lines
 * (PMI-1, and PMI-2's first exchange) or in counted bytes (PMI-2's framed messages).
 *
 * A process has one such connection. Reads may carry a time limit: the start-up exchange is
 * answered at once by every server, so a server that stays silent there is broken, while a
 * barrier may rightly wait for as long as the slowest process takes to start. */
#include "backends.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int wire_fd = -1;
static char where[300]; /* "PMI_FD=6" or "PMI_PORT=host:port", for messages */
static char rbuf[8192];
static size_t rlen;

static int open_socket(char *why, size_t whycap);

static int connect_port(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return errno = EINVAL, -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &res))
        return errno = EHOSTUNREACH, -1;
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

int cr_pmi_wire_open(char *why, size_t whycap)
{
    int rc = open_socket(why, whycap);
    /* the start-up exchange is answered at once, or never */
    cr_pmi_wire_timeout(CR_PMI_STARTUP_SECONDS);
    return rc;
}

static int open_socket(char *why, size_t whycap)
{
    const char *fdstr = getenv("PMI_FD"), *port = getenv("PMI_PORT");
    rlen = 0;
    if (fdstr && *fdstr) {
        snprintf(where, sizeof where, "PMI_FD=%s", fdstr);
        char *end;
        long fd = strtol(fdstr, &end, 10);
        /* The socket is the library's: a program this rank runs (system(), a shell) must not
         * inherit it, or it could speak PMI as this rank, or hold the launcher's socket open
         * after this rank died. */
        if (*end || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0)
            return snprintf(why, whycap, "PMI_FD=%s is not an open file descriptor", fdstr), -1;
        wire_fd = (int)fd;
        return 0;
    }
    snprintf(where, sizeof where, "PMI_PORT=%s", port ? port : "");
    wire_fd = port && *port ? connect_port(port) : -1;
    if (wire_fd < 0)
        return snprintf(why, whycap, "cannot connect to the PMI server at PMI_PORT=%s: %s", port ? port : "",
                        strerror(errno)),
               -1;
    return 0;
}

const char *cr_pmi_wire_where(void)
{
    return where;
}

bool cr_pmi_wire_up(void)
{
    return wire_fd >= 0;
}

void cr_pmi_wire_close(void)
{
    if (wire_fd >= 0)
        close(wire_fd);
    wire_fd = -1;
    rlen = 0;
}

void cr_pmi_wire_timeout(int seconds)
{
    struct timeval tv = {.tv_sec = seconds};
    if (wire_fd >= 0)
        setsockopt(wire_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

int cr_pmi_wire_write(const char *s, size_t n)
{
    if (wire_fd < 0)
        return -1;
    while (n) {
        /* a launcher that is gone must not kill this process with SIGPIPE */
        ssize_t w = send(wire_fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == ENOTSOCK)
            w = write(wire_fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads more into the buffer; -1 when the server closed, failed, or stayed silent too long. */
static int fill(void)
{
    if (wire_fd < 0 || rlen == sizeof rbuf)
        return -1;
    for (;;) {
        ssize_t r = read(wire_fd, rbuf + rlen, sizeof rbuf - rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        rlen += (size_t)r;
        return 0;
    }
}

static void consume(size_t n)
{
    memmove(rbuf, rbuf + n, rlen - n);
    rlen -= n;
}

int cr_pmi_wire_line(char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf);
            bool fits = n < cap;
            if (fits) {
                memcpy(line, rbuf, n);
                line[n] = '\0';
            }
            consume(n + 1);
            return fits ? 0 : -1; /* a line cut short would be read as another */
        }
        if (fill())
            return -1;
    }
}

int cr_pmi_wire_bytes(char *out, size_t n)
{
    if (n > sizeof rbuf)
        return -1;
    while (rlen < n)
        if (fill())
            return -1;
    memcpy(out, rbuf, n);
    consume(n);
    return 0;
}

int cr_pmi_field(const char *msg, char sep, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = msg;
    while (*p) {
        const char *eq = strchr(p, '=');
        if (!eq)
            return -1;
        /* the value ends at the next separator that is not doubled (PMI-2 escapes ';' as ";;") */
        const char *v = eq + 1, *e = v;
        size_t n = 0;
        bool match = (size_t)(eq - p) == klen && !memcmp(p, key, klen), cut = false;
        while (*e && !(*e == sep && !(sep == ';' && e[1] == ';'))) {
            if (match && n + 1 < cap)
                out[n++] = *e;
            else if (match)
                cut = true;
            e += *e == ';' && sep == ';' ? 2 : 1;
        }
        if (match) {
            if (cap)
                out[n] = '\0';
            return cut || !cap ? -1 : 0; /* a value cut short would pass for another */
        }
        p = *e ? e + 1 : e;
        while (*p == sep && sep == ' ')
            p++;
    }
    return -1;
}

int cr_pmi_field_int(const char *msg, char sep, const char *key, int *out)
{
    char v[32], *end;
    if (cr_pmi_field(msg, sep, key, v, sizeof v))
        return -1;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < INT_MIN || x > INT_MAX)
        return -1;
    *out = (int)x;
    return 0;
}

int cr_pmi_reply_ok(const char *reply, char sep, const char *expect)
{
    char c[64];
    int rc = 0;
    if (cr_pmi_field(reply, sep, "cmd", c, sizeof c) || strcmp(c, expect) ||
        (cr_pmi_field_int(reply, sep, "rc", &rc) == 0 && rc != 0))
        return -1;
    return 0;
}

int cr_pmi_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}
