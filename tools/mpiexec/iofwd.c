/* iofwd.c: the ranks' stdout and stderr, forwarded a whole line at a time (never torn, never
 * interleaved mid-line), optionally prefixed with the rank; and our stdin, forwarded to rank 0. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

void io_init(job *j)
{
    j->stdin_dst = -1;
    j->stdin_src = -1;
    /* Forward stdin unless it is a terminal we do not own (a job in the background would be
     * stopped by SIGTTIN the moment it read). */
    if (isatty(0) && tcgetpgrp(0) != getpgrp())
        return;
    if (fcntl(0, F_GETFD) < 0)
        return;
    j->stdin_src = 0;
}

static void write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return; /* our own stdout is gone: drop the output, keep running the job */
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
}

/* One line out, prefix and all, in one writev: mpiexec is the only writer of its stdout and
 * stderr, so lines from different ranks cannot mix. */
static void emit(job *j, rank_proc *r, linebuf *b, const char *line, size_t len, bool add_newline)
{
    char prefix[32];
    struct iovec iov[3];
    int n = 0;
    if (j->tag_output) {
        int plen = snprintf(prefix, sizeof prefix, "[%d] ", r->rank);
        iov[n++] = (struct iovec){prefix, (size_t)plen};
    }
    iov[n++] = (struct iovec){(void *)line, len};
    if (add_newline)
        iov[n++] = (struct iovec){(void *)"\n", 1};
    write_all(b->out, iov, n);
}

int io_forward(job *j, rank_proc *r, linebuf *b)
{
    ssize_t got = read(b->fd, b->data + b->len, sizeof b->data - b->len);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (got <= 0) {
        io_flush(j, r, b);
        close(b->fd);
        b->fd = -1;
        return -1;
    }
    b->len += (size_t)got;
    char *start = b->data, *end = b->data + b->len, *nl;
    while ((nl = memchr(start, '\n', (size_t)(end - start))) != NULL) {
        emit(j, r, b, start, (size_t)(nl - start) + 1, false);
        start = nl + 1;
    }
    b->len = (size_t)(end - start);
    memmove(b->data, start, b->len);
    if (b->len == sizeof b->data) { /* a line longer than the buffer: it has to be split */
        emit(j, r, b, b->data, b->len, false);
        b->len = 0;
    }
    return 0;
}

void io_flush(job *j, rank_proc *r, linebuf *b)
{
    if (b->len) {
        emit(j, r, b, b->data, b->len, true);
        b->len = 0;
    }
}

void io_stdin_read(job *j)
{
    if (j->stdin_src < 0 || j->stdin_eof || j->stdin_len == sizeof j->stdin_buf)
        return;
    ssize_t n = read(j->stdin_src, j->stdin_buf + j->stdin_len, sizeof j->stdin_buf - j->stdin_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        j->stdin_eof = true;
        if (j->stdin_len == 0 && j->stdin_dst >= 0) {
            close(j->stdin_dst);
            j->stdin_dst = -1;
        }
        return;
    }
    j->stdin_len += (size_t)n;
}

void io_stdin_write(job *j)
{
    if (j->stdin_dst < 0)
        return;
    if (j->stdin_len) {
        ssize_t n = write(j->stdin_dst, j->stdin_buf, j->stdin_len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return;
        if (n < 0) { /* rank 0 closed its stdin or exited: stop forwarding */
            close(j->stdin_dst);
            j->stdin_dst = -1;
            j->stdin_src = -1;
            return;
        }
        j->stdin_len -= (size_t)n;
        memmove(j->stdin_buf, j->stdin_buf + n, j->stdin_len);
    }
    if (j->stdin_len == 0 && j->stdin_eof) {
        close(j->stdin_dst);
        j->stdin_dst = -1;
    }
}
