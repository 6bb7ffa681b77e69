/* tcp_limit.c: what the kernel's TCP gives between two hosts with no MPI at all, the limit an MPI
 * over sockets can approach: ping-pong one-way latency on one connection used both ways (each
 * side spins on non-blocking reads and writes, as MPI progress does) and streaming bandwidth (writes of
 * `bytes` from a buffer of 64 of them, read by the other side into its own), in the same lines
 * as bench/latency.c and bench/bandwidth.c. bench/across_hosts.py runs it beside the MPIs.
 * usage: tcp_limit serve PORT          (answers one client, then exits)
 *        tcp_limit measure HOST PORT   (prints the figures) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { WINDOW = 64 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* Writes n bytes, spinning on non-blocking writes (in pieces of at most 256 KiB, as an MPI's
 * frames go). */
static void put(int fd, const void *p, size_t n)
{
    for (size_t at = 0; at < n;) {
        size_t piece = n - at < ((size_t)256 << 10) ? n - at : (size_t)256 << 10;
        ssize_t w = send(fd, (const char *)p + at, piece, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            die("send");
        if (w > 0)
            at += (size_t)w;
    }
}

/* Reads exactly n bytes, spinning on non-blocking reads (of at most 256 KiB). */
static void get(int fd, void *p, size_t n)
{
    for (size_t at = 0; at < n;) {
        size_t piece = n - at < ((size_t)256 << 10) ? n - at : (size_t)256 << 10;
        ssize_t r = recv(fd, (char *)p + at, piece, MSG_DONTWAIT);
        if (r == 0)
            die("peer closed");
        if (r > 0)
            at += (size_t)r;
    }
}

/* Where message i of a stream goes: WINDOW buffers in turn, wrapping at 256 MiB. */
static size_t slot(uint64_t i, size_t bytes)
{
    return (size_t)(i % WINDOW) * bytes % ((size_t)256 << 20);
}

/* A command from the measuring side: ping-pong `iters` times with `bytes`, or take `iters`
 * messages of `bytes` and answer with one byte. iters 0 ends. */
typedef struct cmd {
    uint64_t pingpong, bytes, iters;
} cmd;

static void serve(int fd, char *buf)
{
    for (;;) {
        cmd c;
        get(fd, &c, sizeof c);
        if (!c.iters)
            return;
        for (uint64_t i = 0; i < c.iters; i++) {
            get(fd, buf + (c.pingpong ? 0 : slot(i, c.bytes)), c.bytes);
            if (c.pingpong)
                put(fd, buf, c.bytes);
        }
        if (!c.pingpong)
            put(fd, buf, 1);
    }
}

static void measure(int fd, char *buf)
{
    static const size_t lat[] = {8, 1024, 65536}, bw[] = {1 << 20, 16 << 20};
    for (int k = 0; k < 3; k++) {
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            uint64_t iters = lat[k] > 4096 ? 2000 : 20000;
            cmd c = {1, lat[k], iters};
            put(fd, &c, sizeof c);
            double t0 = now();
            for (uint64_t i = 0; i < iters; i++) {
                put(fd, buf, lat[k]);
                get(fd, buf, lat[k]);
            }
            double t = (now() - t0) / (double)iters / 2;
            best = t < best ? t : best;
        }
        printf("latency bytes=%zu value=%.3f unit=us\n", lat[k], best * 1e6);
        fflush(stdout);
    }
    for (int k = 0; k < 2; k++) {
        double best = 1e30;
        uint64_t iters = ((uint64_t)1 << 31) / bw[k];
        for (int rep = 0; rep < 3; rep++) {
            cmd c = {0, bw[k], iters};
            put(fd, &c, sizeof c);
            double t0 = now();
            for (uint64_t i = 0; i < iters; i++)
                put(fd, buf + slot(i, bw[k]), bw[k]);
            get(fd, buf, 1);
            double t = now() - t0;
            best = t < best ? t : best;
        }
        printf("bandwidth bytes=%zu value=%.1f unit=MB/s\n", bw[k], (double)bw[k] * (double)iters / best / 1e6);
        fflush(stdout);
    }
    cmd end = {0, 0, 0};
    put(fd, &end, sizeof end);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "serve") && (strcmp(argv[1], "measure") || argc < 4))) {
        fprintf(stderr, "usage: tcp_limit serve PORT | tcp_limit measure HOST PORT\n");
        return 2;
    }
    /* 64 messages of 16 MiB would be 1 GiB: the buffer wraps at 256 MiB plus one message */
    size_t cap = ((size_t)256 << 20) + ((size_t)16 << 20);
    char *buf = malloc(cap);
    if (!buf)
        die("malloc");
    memset(buf, 1, cap);
    int one = 1, fd;
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (!strcmp(argv[1], "serve")) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        a.sin_port = htons((uint16_t)atoi(argv[2]));
        if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1))
            die("bind");
        if ((fd = accept(l, NULL, NULL)) < 0)
            die("accept");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(fd, buf);
        return 0;
    }
    a.sin_port = htons((uint16_t)atoi(argv[3]));
    if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1)
        die("address");
    for (int tries = 0;; tries++) { /* the server may not listen yet */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            break;
        close(fd);
        if (tries == 500)
            die("connect");
        usleep(10000);
    }
    measure(fd, buf);
    return 0;
}
