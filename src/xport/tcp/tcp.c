/* tcp.c: the TCP transport, which carries frames between processes on different nodes.
 *
 * Connections. Each process listens on one socket and publishes its addresses and port in the
 * PMI key-value space (`cr-tcp-<world rank>`, "a.b.c.d,e.f.g.h:port"). Connections are made
 * lazily, on the first frame to a peer, and carry frames both ways: a process that must send to
 * a peer that already connected to it sends on that connection (the replies of a ping-pong
 * then carry the TCP acknowledgements of what arrived, instead of packets of their own: 8-byte
 * one-way latency 5.8 against 8.0 us between two network namespaces, raw sockets). The
 * connector sends a hello (magic, its world rank) first. Invariants:
 *  - each process sends to a peer on one connection at a time (`out`), so the frames of an
 *    ordered pair travel in order on one stream;
 *  - it reads every connection, whoever opened it;
 *  - two processes that open connections to each other at once keep the one the lower rank
 *    opened: the higher rank moves to it once, marking the end of its own (on_hello).
 * At MPI_Finalize a process closes a connection only once the peer's kernel has acknowledged
 * every byte sent on it (SIOCOUTQ): a connection closed with unread bytes (a frame the peer
 * sent late) is reset, and a reset drops what is still unacknowledged, while what the peer's
 * kernel already holds stays readable.
 *
 * Frames on the wire: a 40-byte header (`tag` = magic | class, payload length, the 32-byte
 * envelope) and the payload. A sender writes straight from the caller's buffers when nothing
 * is queued before it; what the socket does not take is copied to the peer's queue and written
 * as the socket drains (EPOLLOUT), so a send never blocks. Past QUEUE_MAX queued bytes, send
 * returns false and the layer above keeps its frames (flow control, as a full ring does).
 *
 * The receiver reads each socket into a buffer that grows to the largest frame, delivers
 * every complete frame from it in place, and keeps the partial rest for the next read.
 *
 * Peers that are gone. A connection that fails (refused, reset, closed) is dropped with what is
 * queued on it, silently (a failed write leaves it open for reading to its end: the peer's
 * last frames are in our kernel): a process that exited without MPI_Finalize ends the job through its
 * launcher, and one that finalized cannot need the frame (a receive that takes a message sends
 * the sender credits, possibly after the sender left). */
#include "tcp.h"

#include "core/copy.h"
#include "core/base.h"
#include "core/runtime.h"
#include "pmi/pmi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#define MAGIC 0xC0E10000u    /* high half of a frame's tag word */
#define HELLO_MAGIC 0xC0E1AB1Eu
#define MAX_FRAME ((size_t)256 << 10)
#define QUEUE_MAX ((size_t)8 << 20) /* bytes queued towards one peer before send says "full" */
#define PLACE_MIN ((size_t)16 << 10) /* smaller payloads are read through the buffer (cr_xport_place) */
#define MAX_ADDRS 16
/* The transport's own frames (classes above every cr_xclass), never delivered upwards. */
#define TAG_SWITCH (MAGIC | 0xfff0u) /* the last frame on a connection that retires */
#define TAG_RESUME (MAGIC | 0xfff1u) /* the first frame on the one that replaces it */
#define TAG_BYE (MAGIC | 0xfff2u)    /* the last frame of a process in MPI_Finalize */

typedef struct wire_hdr {
    uint32_t tag; /* MAGIC | class */
    uint32_t len;
    cr_xenv env;
} wire_hdr;
_Static_assert(sizeof(wire_hdr) == 40, "the wire header is 40 bytes");

typedef struct wire_hello {
    uint32_t magic, rank;
} wire_hello;

enum { CONN_LISTEN, CONN_PEER, CONN_DEAD };

/* A connection to one peer, opened by either side: a queue of bytes to send (used when this
 * process sends on it: T.out) and a receive buffer. Epoll's data.ptr points here. */
typedef struct conn {
    int kind;
    int fd;
    int peer;         /* world rank; an accepted connection learns it from the hello (-1 before) */
    bool connecting;  /* opened here: connect() has not completed */
    bool want_out;    /* registered for EPOLLOUT (something queued, or connecting) */
    bool opened_here; /* this process connected (and sent the hello) */
    bool retired;     /* we sent TAG_SWITCH on it: shut it down once its queue is out */
    bool shut;        /* told the peer it sends no more (shutdown) */
    bool failed;      /* a write failed: nothing is sent on it any more (out_fail) */
    bool end_known;   /* its end is expected: the peer said TAG_BYE or TAG_SWITCH, or we retired it */
    bool peer_done;   /* finalize: the peer ended its side (it finalized, or retired the
                         connection): what we still send on it is needed by no one */
    bool held;        /* read TAG_RESUME: deliver nothing more from it before TAG_SWITCH arrives on
                         the peer's retiring connection (its earlier frames) */
    char *buf;        /* send queue: bytes [head, tail) */
    size_t head, tail, cap;
    /* A frame written straight from the sender's memory (tcp_send_lent), before anything of the
     * queue: `done` bytes of its header and payload are written. */
    struct {
        bool on;
        wire_hdr h;
        const char *p;
        size_t len, done;
        void (*fin)(void *); /* called (from cr_tcp_poll) once it is written */
        void *arg;
    } lent;
    char *rbuf;       /* receive buffer: rtail bytes of frames not complete yet */
    size_t rtail, rcap;
    /* A frame whose payload is being read straight to where its class placed it
     * (cr_xport_place): `have` of its h.len bytes are there. */
    struct {
        bool on;
        bool asked;   /* the frame at the front of rbuf was offered and not placed */
        wire_hdr h;
        char *to;
        size_t have;
    } place;
    struct conn *next_dead; /* in T.dead */
} conn;

static struct {
    bool up;
    int ep;                 /* epoll set of every socket of the transport */
    conn listener;
    conn **out;             /* by world rank: the connection frames to it go on; NULL before the
                               first frame to it or from it; &gone when dropped */
    conn **conns;           /* every connection, opened or accepted (grows) */
    int nconn, conncap;
    bool *switched;         /* by world rank: read its TAG_SWITCH before its TAG_RESUME */
    bool polling;           /* a handler that polls again must not re-enter the read loop */
    int nwant_out;          /* connections waiting for EPOLLOUT (something queued, or connecting) */
    unsigned polls;         /* cr_tcp_poll calls, for the direct-read fast path */
    conn *dead;             /* dropped connections, freed after the poll that may still see them */
    struct lent_fin {
        void (*fin)(void *);
        void *arg;
    } *fins;                /* lent frames written (or dropped) whose senders are still to be told */
    int nfin, fincap, nlent; /* nlent: lent frames not yet written; fincap >= nfin + nlent */
    uint32_t my_addrs[MAX_ADDRS], my_masks[MAX_ADDRS]; /* IPv4, network order */
    int naddrs;
} T = {.ep = -1, .listener = {.fd = -1}};

static conn gone; /* the connection of a peer we cannot reach any longer: frames are dropped */

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int ep_set(conn *c, int op, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    return epoll_ctl(T.ep, op, c->fd, &ev);
}

/* What epoll watches on a connection: reading, unless it is held (level-triggered, a held
 * connection with bytes waiting would wake every poll and every sleep), and writing while
 * something is queued or the connect is in progress. */
static void ep_arm(conn *c)
{
    ep_set(c, EPOLL_CTL_MOD, (c->held ? 0 : EPOLLIN) | (c->want_out ? EPOLLOUT : 0));
}

/* ----------------------------------------------------------------- addresses */

/* Whether interface `name` may carry the job's traffic: COURIER_TCP_IF lists the allowed ones
 * (comma separated; `lo` for loopback); unset, every interface that is up. */
static bool interface_allowed(const char *name)
{
    const char *list = getenv("COURIER_TCP_IF");
    if (!list || !*list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        p += len + (end != NULL);
    }
    return false;
}

/* This host's IPv4 addresses that peers may use: every allowed interface that is up, loopback
 * last (and only when it is allowed or nothing else is there). */
static int collect_addresses(char *why, size_t cap)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return snprintf(why, cap, "cannot list the network interfaces: %s", strerror(errno)), -1;
    uint32_t lo_addr = 0, lo_mask = 0;
    bool lo_allowed = false;
    T.naddrs = 0;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) || !i->ifa_netmask)
            continue;
        uint32_t a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        uint32_t m = ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr;
        if (i->ifa_flags & IFF_LOOPBACK) {
            lo_addr = a, lo_mask = m;
            lo_allowed = interface_allowed(i->ifa_name) && getenv("COURIER_TCP_IF") != NULL;
            continue;
        }
        if (interface_allowed(i->ifa_name) && T.naddrs < MAX_ADDRS)
            T.my_addrs[T.naddrs] = a, T.my_masks[T.naddrs++] = m;
    }
    freeifaddrs(ifs);
    if ((lo_allowed || T.naddrs == 0) && lo_addr && T.naddrs < MAX_ADDRS)
        T.my_addrs[T.naddrs] = lo_addr, T.my_masks[T.naddrs++] = lo_mask;
    if (T.naddrs == 0)
        return snprintf(why, cap, "no IPv4 interface is up%s%s", getenv("COURIER_TCP_IF") ? " among COURIER_TCP_IF=" : "",
                        getenv("COURIER_TCP_IF") ? getenv("COURIER_TCP_IF") : ""), -1;
    return 0;
}

/* Of a peer's addresses, the first on a network one of ours is on; else its first. */
static uint32_t pick_address(const uint32_t *addrs, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < T.naddrs; k++)
            if ((addrs[i] & T.my_masks[k]) == (T.my_addrs[k] & T.my_masks[k]))
                return addrs[i];
    return addrs[0];
}

static void card_key(char *key, size_t cap, int rank)
{
    snprintf(key, cap, "cr-tcp-%d", rank);
}

/* ----------------------------------------------------------------- start and stop */

int cr_tcp_init(char *why, size_t cap)
{
    if (collect_addresses(why, cap))
        return -1;
    T.ep = epoll_create1(EPOLL_CLOEXEC);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof sa;
    if (T.ep < 0 || fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        snprintf(why, cap, "cannot open a listening TCP socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    T.listener = (conn){.kind = CONN_LISTEN, .fd = fd, .peer = -1};
    T.out = calloc((size_t)cr_rt.size, sizeof *T.out);
    T.switched = calloc((size_t)cr_rt.size, sizeof *T.switched);
    if (!T.out || !T.switched || ep_set(&T.listener, EPOLL_CTL_ADD, EPOLLIN) != 0)
        return snprintf(why, cap, "cannot set up the TCP transport: %s", T.out ? strerror(errno) : "out of memory"), -1;
    char card[MAX_ADDRS * 16 + 16], key[32];
    size_t at = 0;
    for (int i = 0; i < T.naddrs; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &T.my_addrs[i], ip, sizeof ip);
        at += (size_t)snprintf(card + at, sizeof card - at, "%s%s", i ? "," : "", ip);
    }
    snprintf(card + at, sizeof card - at, ":%u", (unsigned)ntohs(sa.sin_port));
    card_key(key, sizeof key, cr_rt.rank);
    if (cr_pmi_put(key, card))
        return snprintf(why, cap, "cannot publish this process's TCP address through PMI"), -1;
    T.up = true;
    return 0;
}

int cr_tcp_wait_fd(void)
{
    return T.up ? T.ep : -1;
}

/* Adds a connection to the list every poll reads; false when out of memory. */
static bool conns_add(conn *c)
{
    if (T.nconn == T.conncap) {
        int cap = T.conncap ? 2 * T.conncap : 16;
        conn **all = realloc(T.conns, (size_t)cap * sizeof *all);
        if (!all)
            return false;
        T.conns = all, T.conncap = cap;
    }
    T.conns[T.nconn++] = c;
    return true;
}

/* A connection that broke, or closed: drop it with what it held (see the file comment); frames
 * to its peer are dropped from now on when this process sent on it. A delivery may drop another
 * connection (on_hello) while cr_tcp_poll still holds an event for it: it is closed now and
 * freed when no poll runs (`dead` keeps it until then; its events are skipped). */
static void lent_finish(conn *c);

static void conn_drop(conn *c)
{
    lent_finish(c);
    if (c->peer >= 0 && T.out[c->peer] == c)
        T.out[c->peer] = &gone;
    T.nwant_out -= c->want_out;
    for (int k = 0; k < T.nconn; k++)
        if (T.conns[k] == c) {
            T.conns[k] = T.conns[--T.nconn];
            break;
        }
    epoll_ctl(T.ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->buf);
    free(c->rbuf);
    *c = (conn){.kind = CONN_DEAD, .fd = -1, .peer = -1, .next_dead = T.dead};
    T.dead = c;
}

/* Sending on `c` failed (the peer reset it: it finalized, or died): frames to the peer are
 * dropped from now on, with what was queued. The connection stays open for reading: what the
 * peer sent before it closed is still in our kernel and must be delivered (the peer's last
 * frames), until the read side ends too. */
static void out_fail(conn *c)
{
    if (c->peer >= 0 && T.out[c->peer] == c)
        T.out[c->peer] = &gone;
    free(c->buf);
    c->buf = NULL;
    c->head = c->tail = c->cap = 0;
    lent_finish(c);
    c->connecting = false;
    c->failed = true;
    if (c->want_out) {
        c->want_out = false;
        T.nwant_out--;
        ep_arm(c);
    }
}

static void free_dead(void)
{
    while (T.dead) {
        conn *c = T.dead;
        T.dead = c->next_dead;
        free(c);
    }
}

/* ----------------------------------------------------------------- sending */

/* `c`'s lent frame is written, or dropped with the connection: its sender is told at the end
 * of the poll (lent frames are a sender's memory, free again then). */
static void lent_finish(conn *c)
{
    if (!c->lent.on)
        return;
    c->lent.on = false;
    T.nlent--;
    if (c->lent.fin)
        T.fins[T.nfin++] = (struct lent_fin){c->lent.fin, c->lent.arg};
}

/* Tells the senders of lent frames that are written that their memory is free (from
 * cr_tcp_poll, never inside a send); returns how many. A sender told may send again. */
static int lent_tell(void)
{
    int n = 0;
    while (T.nfin) {
        struct lent_fin f = T.fins[--T.nfin];
        f.fin(f.arg);
        n++;
    }
    return n;
}

/* Writes the lent frame, then what the queue holds, as far as the socket takes them; false
 * when the connection broke (then nothing is sent on it any more: out_fail). */
static bool out_flush(conn *c)
{
    while ((c->lent.on || c->head < c->tail) && !c->connecting) {
        struct iovec iov[3];
        int k = 0;
        size_t lent_left = 0;
        if (c->lent.on) {
            size_t d = c->lent.done, hl = sizeof c->lent.h, pd = d > hl ? d - hl : 0;
            if (d < hl)
                iov[k++] = (struct iovec){(char *)&c->lent.h + d, hl - d};
            if (pd < c->lent.len)
                iov[k++] = (struct iovec){(void *)(uintptr_t)(c->lent.p + pd), c->lent.len - pd};
            lent_left = hl + c->lent.len - d;
        }
        if (c->head < c->tail)
            iov[k++] = (struct iovec){c->buf + c->head, c->tail - c->head};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            out_fail(c);
            return false;
        }
        size_t n = (size_t)w, of_lent = CR_MIN(n, lent_left);
        if (c->lent.on) {
            c->lent.done += of_lent;
            if (of_lent == lent_left)
                lent_finish(c);
        }
        c->head += n - of_lent;
    }
    if (c->head == c->tail) {
        c->head = c->tail = 0;
        if (c->retired && !c->connecting && !c->shut && !c->lent.on) {
            shutdown(c->fd, SHUT_WR); /* after TAG_SWITCH: the peer reads the end, then closes */
            c->shut = true;
        }
    }
    bool want = c->connecting || c->head < c->tail || c->lent.on;
    if (want != c->want_out) {
        c->want_out = want;
        T.nwant_out += want ? 1 : -1;
        ep_arm(c);
    }
    return true;
}

/* Room for `n` more bytes at the queue's tail; NULL when out of memory. */
static char *out_reserve(conn *c, size_t n)
{
    if (c->tail + n > c->cap && c->head > 0) {
        memmove(c->buf, c->buf + c->head, c->tail - c->head);
        c->tail -= c->head;
        c->head = 0;
    }
    if (c->tail + n > c->cap) {
        size_t cap = c->cap ? c->cap : 64 << 10;
        while (cap < c->tail + n)
            cap *= 2;
        char *b = realloc(c->buf, cap);
        if (!b)
            return NULL;
        c->buf = b, c->cap = cap;
    }
    char *p = c->buf + c->tail;
    c->tail += n;
    return p;
}

/* The connection frames to `peer` go on: at the first frame, the one the peer opened to us if
 * there is one, else a new one from the card it published. */
static conn *out_of(int peer)
{
    conn *c = T.out[peer];
    if (CR_LIKELY(c != NULL))
        return c;
    for (int k = 0; k < T.nconn; k++)
        if (T.conns[k]->peer == peer)
            return T.out[peer] = T.conns[k];
    char key[32], card[MAX_ADDRS * 16 + 16];
    card_key(key, sizeof key, peer);
    uint32_t addrs[MAX_ADDRS];
    int n = 0;
    unsigned port = 0;
    char *colon;
    if (cr_pmi_get(key, card, sizeof card) == 0 && (colon = strrchr(card, ':')) && sscanf(colon + 1, "%u", &port) == 1) {
        *colon = 0;
        for (char *tok = strtok(card, ","); tok && n < MAX_ADDRS; tok = strtok(NULL, ","))
            if (inet_pton(AF_INET, tok, &addrs[n]) == 1)
                n++;
    }
    if (n == 0 || port == 0 || port > 65535) {
        fprintf(stderr, "Courier: world rank %d: world rank %d published no usable TCP address ('%s' under %s)\n",
                cr_rt.rank, peer, n ? card : "", key);
        return T.out[peer] = &gone;
    }
    c = calloc(1, sizeof *c);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (!c || fd < 0) {
        free(c);
        if (fd >= 0)
            close(fd);
        return T.out[peer] = &gone;
    }
    *c = (conn){.kind = CONN_PEER, .fd = fd, .peer = peer, .opened_here = true};
    set_nodelay(fd);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = pick_address(addrs, n)};
    int rc;
    while ((rc = connect(fd, (struct sockaddr *)&sa, sizeof sa)) != 0 && errno == EINTR)
        ;
    c->connecting = rc != 0;
    wire_hello hello = {HELLO_MAGIC, (uint32_t)cr_rt.rank};
    if ((rc != 0 && errno != EINPROGRESS) || ep_set(c, EPOLL_CTL_ADD, EPOLLIN) != 0 || !out_reserve(c, sizeof hello) ||
        !conns_add(c)) {
        epoll_ctl(T.ep, EPOLL_CTL_DEL, fd, NULL);
        close(fd);
        free(c->buf);
        free(c);
        return T.out[peer] = &gone;
    }
    memcpy(c->buf, &hello, sizeof hello);
    T.out[peer] = c;
    return out_flush(c) ? c : &gone;
}

/* Writes one frame on `c` (what the socket does not take is queued); false when out of memory. */
static bool conn_write(conn *c, uint32_t tag, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2)
{
    wire_hdr h = {tag, (uint32_t)(n1 + n2), *env};
    size_t total = sizeof h + n1 + n2, done = 0;
    if (c->head == c->tail && !c->connecting && !c->lent.on) {
        struct iovec iov[3] = {{&h, sizeof h}, {(void *)p1, n1}, {(void *)p2, n2}};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = 3};
        ssize_t w;
        while ((w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR)
            ;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            out_fail(c);
            return true;
        }
        done = w > 0 ? (size_t)w : 0;
        if (done == total)
            return true;
    }
    char *q = out_reserve(c, total - done);
    if (!q)
        return false;
    /* the bytes of header, p1, p2 from `done` on */
    const struct { const void *p; size_t n; } parts[3] = {{&h, sizeof h}, {p1, n1}, {p2, n2}};
    for (int i = 0; i < 3; i++) {
        size_t skip = CR_MIN(done, parts[i].n), n = parts[i].n - skip;
        done -= skip;
        if (n)
            cr_copy(q, (const char *)parts[i].p + skip, n);
        q += n;
    }
    out_flush(c);
    return true;
}

static bool tcp_send(int peer, cr_xclass cls, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2)
{
    conn *c = out_of(peer);
    if (c == &gone)
        return true;
    if (c->tail - c->head > QUEUE_MAX) {
        if (!out_flush(c))
            return true; /* dropped */
        if (c->tail - c->head > QUEUE_MAX)
            return false;
    }
    return conn_write(c, MAGIC | (uint32_t)cls, env, p1, n1, p2, n2);
}

/* A frame written straight from the caller's memory, now or as the socket drains: a long
 * message streaming into a full socket would otherwise be copied to the queue first, a copy of
 * every byte by the sending core, which is the bottleneck of a stream (the kernel's copy into
 * the socket is the other). One lent frame per connection at a time, behind nothing queued. */
static cr_xsend_result tcp_send_lent(int peer, cr_xclass cls, const cr_xenv *env, const void *p, size_t n,
                                     void (*done)(void *), void *arg)
{
    conn *c = out_of(peer);
    if (c == &gone)
        return CR_XSEND_DONE;
    /* Something is still to be written before it: the connection waits for EPOLLOUT, and the
     * poll that reports it writes on (trying here as well would be a failing system call at
     * every round of a sender's progress loop). */
    if (c->connecting || c->lent.on || c->head < c->tail)
        return c->failed ? CR_XSEND_DONE : CR_XSEND_FULL;
    /* A connection to the same peer that was switched away from (on_hello_switch) may still
     * write an earlier lent frame of this stream: only its last frame tells the sender, so the
     * next frame waits until that one has left (else the send could complete, and its buffer be
     * reused, while the retired connection still reads from it). */
    for (int k = 0; k < T.nconn; k++)
        if (T.conns[k] != c && T.conns[k]->peer == peer && T.conns[k]->lent.on)
            return CR_XSEND_FULL;
    if (T.fincap < T.nfin + T.nlent + 1) {
        int cap = 2 * T.fincap + 8;
        struct lent_fin *f = realloc(T.fins, (size_t)cap * sizeof *f);
        if (!f)
            return tcp_send(peer, cls, env, p, n, NULL, 0) ? CR_XSEND_DONE : CR_XSEND_FULL;
        T.fins = f, T.fincap = cap;
    }
    c->lent.on = true;
    c->lent.h = (wire_hdr){MAGIC | (uint32_t)cls, (uint32_t)n, *env};
    c->lent.p = p;
    c->lent.len = n;
    c->lent.done = 0;
    c->lent.fin = NULL; /* written at once (or dropped): nobody is to be told */
    T.nlent++;
    out_flush(c);
    if (!c->lent.on)
        return CR_XSEND_DONE;
    c->lent.fin = done, c->lent.arg = arg;
    return CR_XSEND_LENT;
}

static bool tcp_send_gather(int peer, cr_xclass cls, const cr_xenv *env, size_t len, cr_xgather *g)
{
    conn *c = out_of(peer);
    if (c == &gone) {
        /* the layer above counts on its fill being called: let it pack into nowhere */
        char sink[4096];
        for (size_t n; len; len -= n)
            g->fill(g, sink, n = CR_MIN(len, sizeof sink));
        return true;
    }
    if (c->tail - c->head > QUEUE_MAX) {
        if (!out_flush(c))
            return tcp_send_gather(peer, cls, env, len, g); /* dropped: packs into nowhere */
        if (c->tail - c->head > QUEUE_MAX)
            return false;
    }
    wire_hdr h = {MAGIC | (uint32_t)cls, (uint32_t)len, *env};
    char *q = out_reserve(c, sizeof h + len);
    if (!q)
        return false;
    memcpy(q, &h, sizeof h);
    if (len)
        g->fill(g, q + sizeof h, len);
    out_flush(c);
    return true;
}

static size_t tcp_max_frame(int peer)
{
    (void)peer;
    return MAX_FRAME;
}

/* Streams use whole frames: each costs a system call, and the kernel's socket buffers already
 * let the sender's copy overlap the receiver's (1 MiB one-way 1.02 ms in 16 KiB frames, 0.19 ms
 * in 256 KiB ones, over loopback). */
static size_t tcp_stream_frame(int peer, uint64_t bytes)
{
    (void)bytes;
    return tcp_max_frame(peer);
}

/* No single copy between nodes: large messages stream as frames. */
static int tcp_no_copy(int peer, const struct iovec *l, int nl, const struct iovec *r, int nr)
{
    (void)peer, (void)l, (void)nl, (void)r, (void)nr;
    return -1;
}

static bool tcp_no(int peer)
{
    (void)peer;
    return false;
}

static cr_xsplit tcp_no_split(int peer, uint64_t bytes)
{
    (void)peer, (void)bytes;
    return CR_XSPLIT_NO;
}

const cr_xport_ops cr_tcp_ops = {"tcp",       tcp_send,    tcp_send_gather, tcp_max_frame, tcp_stream_frame,
                                 tcp_no_copy, tcp_no_copy, tcp_no,          tcp_no,       tcp_no_split,
                                 tcp_send_lent};

/* ----------------------------------------------------------------- receiving */

static void accept_all(void)
{
    for (;;) {
        int fd = accept4(T.listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or a connection that died before we took it */
        conn *c = calloc(1, sizeof *c);
        if (c)
            *c = (conn){.kind = CONN_PEER, .fd = fd, .peer = -1};
        if (!c || !conns_add(c)) {
            free(c);
            close(fd);
            return;
        }
        set_nodelay(fd); /* it may carry our frames too */
        if (ep_set(c, EPOLL_CTL_ADD, EPOLLIN) != 0) {
            conn_drop(c);
            return;
        }
    }
}

CR_NORETURN static void stream_corrupt(const conn *c, const char *what)
{
    char why[160];
    snprintf(why, sizeof why, "the TCP stream from world rank %d is corrupt (%s)", c->peer, what);
    cr_runtime_abort(NULL, 1, why);
}

static int in_deliver(conn *c);
static void on_hello_switch(conn *c, conn *mine, int peer);

/* The hello of an accepted connection names its peer. Our frames to the peer go on it unless
 * we opened our own first: then both processes connected at once, and the connection the lower
 * rank opened wins (so the replies of a ping-pong carry the acknowledgements). The higher rank
 * ends its own with TAG_SWITCH and starts on the winner with TAG_RESUME; the lower rank, which
 * may read them in either order, holds what follows TAG_RESUME until TAG_SWITCH. */
static void on_hello(conn *c, int peer)
{
    c->peer = peer;
    conn *mine = T.out[peer];
    if (!mine) {
        T.out[peer] = c;
    } else if (mine != &gone && mine->opened_here && cr_rt.rank > peer && mine->connecting &&
               mine->tail - mine->head >= sizeof(wire_hello)) {
        /* Nothing has left on our own connection yet (no byte is sent before the connect
         * completes): its frames move to the peer's connection, behind no switch, and it is
         * dropped (the peer, if it accepted it, sees it end before any hello, and drops it). */
        size_t n = mine->tail - mine->head - sizeof(wire_hello);
        char *q = n ? out_reserve(c, n) : c->buf;
        if (n && !q)
            return on_hello_switch(c, mine, peer);
        if (n)
            memcpy(q, mine->buf + mine->head + sizeof(wire_hello), n);
        conn_drop(mine);
        T.out[peer] = c;
        out_flush(c);
    } else if (mine != &gone && mine->opened_here && cr_rt.rank > peer) {
        on_hello_switch(c, mine, peer);
    }
}

/* on_hello's switch: our own connection `mine` to `peer` ends with TAG_SWITCH, and our frames
 * go on `c` from TAG_RESUME on. */
static void on_hello_switch(conn *c, conn *mine, int peer)
{
    static const cr_xenv none;
    conn_write(mine, TAG_SWITCH, &none, NULL, 0, NULL, 0);
    mine->retired = mine->end_known = true;
    out_flush(mine);
    T.out[peer] = c;
    conn_write(c, TAG_RESUME, &none, NULL, 0, NULL, 0);
}

/* TAG_SWITCH, TAG_RESUME or TAG_BYE from `c`'s peer (TAG_RESUME before TAG_SWITCH holds `c`);
 * returns the frames a held connection delivered when its hold ended. */
static int on_switch(conn *c, uint32_t tag)
{
    if (tag != TAG_RESUME)
        c->end_known = true; /* the peer sends nothing more on it */
    if (tag == TAG_BYE)
        return 0;
    if (tag == TAG_RESUME) {
        c->held = !T.switched[c->peer];
        T.switched[c->peer] = false;
        if (c->held)
            ep_arm(c);
        return 0;
    }
    for (int k = 0; k < T.nconn; k++) {
        conn *x = T.conns[k];
        if (x->held && x->peer == c->peer && x != c) {
            x->held = false;
            ep_arm(x);
            return in_deliver(x); /* its frames come after every frame of `c` */
        }
    }
    T.switched[c->peer] = true;
    return 0;
}

/* Delivers the complete frames at the front of `c`'s buffer; keeps the partial rest. */
static int in_deliver(conn *c)
{
    int got = 0;
    size_t at = 0;
    if (c->peer < 0 && c->rtail >= sizeof(wire_hello)) {
        wire_hello hello;
        memcpy(&hello, c->rbuf, sizeof hello);
        if (hello.magic != HELLO_MAGIC || hello.rank >= (uint32_t)cr_rt.size || hello.rank == (uint32_t)cr_rt.rank)
            stream_corrupt(c, "no hello");
        on_hello(c, (int)hello.rank);
        at = sizeof hello;
    }
    while (c->peer >= 0 && !c->held && c->rtail - at >= sizeof(wire_hdr)) {
        wire_hdr h; /* copied out: the envelope must be aligned */
        memcpy(&h, c->rbuf + at, sizeof h);
        bool own = h.tag == TAG_SWITCH || h.tag == TAG_RESUME || h.tag == TAG_BYE;
        if ((h.tag & 0xffff0000u) != MAGIC || ((h.tag & 0xffff) >= CR_XCLASS_COUNT && !own) || h.len > MAX_FRAME ||
            (own && h.len))
            stream_corrupt(c, "bad frame header");
        if (c->rtail - at < sizeof h + h.len) {
            /* the payload is still coming: read it straight to its place, if it has one */
            if (h.len >= PLACE_MIN && !own && !c->place.asked) {
                char *to = cr_xport_place(c->peer, (cr_xclass)(h.tag & 0xffff), &h.env, h.len);
                c->place.asked = !to;
                if (to) {
                    size_t have = c->rtail - at - sizeof h;
                    cr_copy(to, c->rbuf + at + sizeof h, have);
                    c->place = (typeof(c->place)){.on = true, .h = h, .to = to, .have = have};
                    at = c->rtail;
                }
            }
            break;
        }
        at += sizeof h + h.len;
        c->place.asked = false;
        if (own) {
            got += on_switch(c, h.tag);
            continue;
        }
        const char *payload = c->rbuf + at - h.len;
        cr_xframe f = {.src = c->peer, .cls = (cr_xclass)(h.tag & 0xffff), .env = &h.env, .len = h.len,
                       .p1 = payload, .n1 = h.len, .p2 = NULL};
        cr_xport_deliver(&f);
        got++;
    }
    memmove(c->rbuf, c->rbuf + at, c->rtail - at);
    c->rtail -= at;
    return got;
}

/* A read of `c` while a frame's payload goes straight to its place: the rest of the payload,
 * and what follows into the buffer, in one system call; delivers the frame once it is whole. */
static ssize_t in_read_placed(conn *c, int *got)
{
    size_t need = c->place.h.len - c->place.have;
    struct iovec iov[2] = {{c->place.to + c->place.have, need}, {c->rbuf + c->rtail, c->rcap - c->rtail}};
    ssize_t r = readv(c->fd, iov, 2);
    if (r <= 0)
        return r;
    if ((size_t)r < need) {
        c->place.have += (size_t)r;
        return r;
    }
    c->rtail += (size_t)r - need;
    wire_hdr h = c->place.h; /* the envelope must outlive the delivery */
    cr_xframe f = {.src = c->peer, .cls = (cr_xclass)(h.tag & 0xffff), .env = &h.env, .len = h.len,
                   .p1 = c->place.to, .n1 = h.len, .placed = true};
    c->place.on = false;
    cr_xport_deliver(&f);
    ++*got;
    if (c->kind != CONN_DEAD)
        *got += in_deliver(c);
    return r;
}

/* One read from a connection, then delivery; false when it closed or broke (the caller drops
 * it, unless a handler already did: then the connection is CONN_DEAD). */
static bool in_read(conn *c, int *got)
{
    if (c->rcap - c->rtail < 4096) {
        size_t cap = c->rcap ? 2 * c->rcap : 64 << 10;
        cap = CR_MIN(cap, MAX_FRAME + sizeof(wire_hdr) + sizeof(wire_hello));
        if (cap > c->rcap) {
            char *b = realloc(c->rbuf, cap);
            if (!b)
                return true; /* try again later */
            c->rbuf = b, c->rcap = cap;
        }
    }
    if (c->held)
        return true; /* read on when the peer's retiring connection has ended (on_switch) */
    bool placing = c->place.on;
    ssize_t r = placing ? in_read_placed(c, got) : recv(c->fd, c->rbuf + c->rtail, c->rcap - c->rtail, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        return false;
    if (r > 0 && !placing) {
        c->rtail += (size_t)r;
        *got += in_deliver(c);
    }
    return true;
}

/* A connection ended without the peer's TAG_BYE: the peer died (its kernel closed its sockets).
 * Courier's mpiexec names dead ranks itself (and ends the job); under another launcher, which
 * may leave the others waiting (srun without -K), this process ends the job. */
static void peer_died(const conn *c)
{
    if (c->end_known || c->peer < 0 || cr_pmi_launcher_names_failures())
        return;
    char why[200];
    snprintf(why, sizeof why, "world rank %d ended without MPI_Finalize (its TCP connection to this process closed)",
             c->peer);
    cr_runtime_abort(NULL, 1, why);
}

/* Reads `c` (an epoll event or a direct read) and drops it when it closed. */
static void conn_read(conn *c, int *got)
{
    if (!in_read(c, got) && c->kind != CONN_DEAD) {
        peer_died(c);
        conn_drop(c);
    }
}

/* With few connections and nothing queued to send, a read on each socket is cheaper than asking
 * epoll first (one system call per arriving message instead of two); epoll still runs every
 * DIRECT_EVERY polls for new connections and closed ones. */
enum { DIRECT_MAX = 2, DIRECT_EVERY = 64 };

/* Handles what epoll reported for `c`. */
static void conn_event(conn *c, uint32_t events, int *got)
{
    if (c->kind == CONN_DEAD)
        return;
    if (c->kind == CONN_LISTEN) {
        accept_all();
        return;
    }
    if (c->connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            conn_drop(c);
            return;
        }
        c->connecting = false;
    }
    if (events & EPOLLOUT)
        out_flush(c); /* a failure leaves the connection to be read to its end */
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        conn_read(c, got);
}

int cr_tcp_poll(void)
{
    if (!T.up || T.polling)
        return 0;
    int got = T.nfin ? lent_tell() : 0; /* lent frames a send finished */
    if (T.nconn > 0 && T.nconn <= DIRECT_MAX && T.nwant_out == 0 && ++T.polls % DIRECT_EVERY != 0) {
        T.polling = true;
        conn *now[DIRECT_MAX]; /* a handler may drop connections, which reorders T.conns */
        int n = T.nconn;
        memcpy(now, T.conns, (size_t)n * sizeof *now);
        for (int k = 0; k < n; k++)
            if (now[k]->kind != CONN_DEAD)
                conn_read(now[k], &got);
    } else {
        struct epoll_event ev[32];
        int n = epoll_wait(T.ep, ev, 32, 0);
        T.polling = true;
        for (int i = 0; i < n; i++)
            conn_event(ev[i].data.ptr, ev[i].events, &got);
    }
    T.polling = false;
    free_dead();
    return got + (T.nfin ? lent_tell() : 0);
}

/* Finalize: whether `c` still holds bytes for its peer (queued here, or sent and not yet
 * acknowledged by the peer's kernel). Once the queue is empty it says it is done sending
 * (shutdown: the peer reads the end of the stream after our last frame, and stops sending on
 * it). */
static bool conn_unsent(conn *c)
{
    if (c->peer_done)
        return false;
    if (c->connecting || c->head < c->tail || c->lent.on)
        return true;
    if (!c->shut) {
        shutdown(c->fd, SHUT_WR);
        c->shut = true;
    }
    int unacked = 0;
    return ioctl(c->fd, SIOCOUTQ, &unacked) == 0 && unacked > 0;
}

/* Finalize: TAG_BYE on connections [from, nconn) (the retired one already said TAG_SWITCH). */
static void say_bye(int from)
{
    static const cr_xenv none;
    for (int k = from; k < T.nconn; k++) {
        conn *c = T.conns[k];
        if (!c->failed && !c->retired)
            conn_write(c, TAG_BYE, &none, NULL, 0, NULL, 0);
    }
}

void cr_tcp_finalize(void)
{
    if (!T.up)
        return;
    /* Every byte sent must be in the peer's kernel before its connection closes (see the file
     * comment: a close that resets drops what is unacknowledged, not what the peer holds).
     * Wait for that, at most 10 s for a peer that stopped reading, while reading and dropping
     * what still arrives, so two processes that flush to each other cannot block each other. */
    say_bye(0); /* the peers then know the end of the streams is no death */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    T.polling = true;
    for (;;) {
        bool pending = false;
        for (int k = 0; k < T.nconn; k++)
            pending |= conn_unsent(T.conns[k]);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (!pending || t.tv_sec - t0.tv_sec > 10)
            break;
        struct epoll_event ev[32];
        int n = epoll_wait(T.ep, ev, 32, 1);
        for (int i = 0; i < n; i++) {
            conn *c = ev[i].data.ptr;
            if (c->kind == CONN_LISTEN) {
                int before = T.nconn;
                accept_all();
                say_bye(before);
                continue;
            }
            if (c->kind == CONN_DEAD)
                continue;
            if (c->connecting && (ev[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
                int err = 0;
                socklen_t len = sizeof err;
                if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len), err) {
                    conn_drop(c);
                    continue;
                }
                c->connecting = false;
            }
            if (ev[i].events & EPOLLOUT)
                out_flush(c);
            if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
                char sink[16384];
                ssize_t r;
                while ((r = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT)) > 0)
                    ;
                /* The peer is done: stop reading it. Once ours is shut down too, epoll would
                 * report the hang-up at every wait whatever it is asked, so the connection
                 * leaves the set (its acknowledgements are counted without it). */
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                    c->peer_done = true;
                    if (c->shut)
                        epoll_ctl(T.ep, EPOLL_CTL_DEL, c->fd, NULL);
                    else
                        ep_set(c, EPOLL_CTL_MOD, c->want_out ? EPOLLOUT : 0);
                }
            }
        }
        free_dead();
    }
    T.polling = false;
    while (T.nconn)
        conn_drop(T.conns[0]);
    free_dead();
    free(T.out);
    free(T.switched);
    free(T.conns);
    free(T.fins); /* none to tell: point-to-point waited for its lent frames before (pt2pt.c) */
    T.fins = NULL, T.nfin = T.fincap = T.nlent = 0;
    T.out = NULL, T.conns = NULL, T.conncap = 0;
    close(T.listener.fd);
    close(T.ep);
    T.listener.fd = T.ep = -1;
    T.up = false;
}
