/* wire.c: the messages between the front mpiexec and its proxies (see mpiexec.h): a 4-byte
 * length (of type and payload), a type byte, then NUL-terminated fields. */
#include "mpiexec.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void wire_tune(int fd)
{
    int one = 1, idle = KEEPALIVE_S, count = 3, timeout_ms = KEEPALIVE_S * 3000;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout_ms, sizeof timeout_ms);
}

int wire_send(int fd, int type, int nf, const char *const *fields)
{
    size_t len = 1;
    for (int i = 0; i < nf; i++)
        len += strlen(fields[i]) + 1;
    if (len > WIRE_MAX)
        return -1;
    char *m = malloc(4 + len);
    if (!m)
        return -1;
    uint32_t l = (uint32_t)len;
    memcpy(m, &l, 4);
    m[4] = (char)type;
    size_t at = 5;
    for (int i = 0; i < nf; i++) {
        size_t n = strlen(fields[i]) + 1;
        memcpy(m + at, fields[i], n);
        at += n;
    }
    int rc = 0;
    for (size_t done = 0; done < at;) {
        ssize_t w = send(fd, m + done, at - done, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            usleep(1000); /* a non-blocking socket that is full: the peer reads soon */
            continue;
        }
        if (w <= 0) {
            rc = -1;
            break;
        }
        done += (size_t)w;
    }
    free(m);
    return rc;
}

int wire_read(int fd, wire_in *w)
{
    if (w->used) {
        memmove(w->buf, w->buf + w->used, w->len - w->used);
        w->len -= w->used;
        w->used = 0;
    }
    if (w->cap - w->len < 65536) {
        size_t cap = w->cap ? 2 * w->cap : 131072;
        char *b = realloc(w->buf, cap);
        if (!b)
            return -1;
        w->buf = b, w->cap = cap;
    }
    ssize_t n = read(fd, w->buf + w->len, w->cap - w->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n <= 0)
        return -1;
    w->len += (size_t)n;
    return 0;
}

int wire_next(wire_in *w, char **fields, int maxf, int *nf)
{
    if (w->used) {
        memmove(w->buf, w->buf + w->used, w->len - w->used);
        w->len -= w->used;
        w->used = 0;
    }
    if (w->len < 5)
        return 0;
    uint32_t l;
    memcpy(&l, w->buf, 4);
    if (l < 1 || l > WIRE_MAX)
        return -1;
    if (w->len < 4 + (size_t)l) {
        if (w->cap < 4 + (size_t)l) {
            char *b = realloc(w->buf, 4 + (size_t)l + 65536);
            if (!b)
                return -1;
            w->buf = b, w->cap = 4 + (size_t)l + 65536;
        }
        return 0;
    }
    int type = (unsigned char)w->buf[4];
    char *p = w->buf + 5, *end = w->buf + 4 + l;
    if (l > 1 && end[-1] != '\0')
        return -1;
    *nf = 0;
    while (p < end && *nf < maxf) {
        fields[(*nf)++] = p;
        p += strlen(p) + 1;
    }
    if (p < end)
        return -1; /* more fields than the message type has */
    w->used = 4 + (size_t)l;
    return type;
}

void wire_free(wire_in *w)
{
    free(w->buf);
    *w = (wire_in){0};
}
