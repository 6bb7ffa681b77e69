/* hosts.c: the front mpiexec of a job across hosts (-hosts, --hostfile). It places the ranks in
 * blocks, one block per host (consecutive world ranks share a host, which the process mapping
 * tells the ranks), starts one proxy per host — `mpiexec --proxy FRONT ID COOKIE`, directly
 * on this host and through the launcher (`ssh -x HOST ...`, or --launcher-exec) elsewhere —
 * and then only talks to the proxies: it sends each its part of the job, keeps the job's
 * key-value space, releases barriers when every host is in, forwards each proxy's output a
 * whole line at a time, passes signals on, and decides the job's fate. The first failure a
 * proxy reports (already worded, naming the rank and its host) is printed and every host is
 * told to stop; a proxy that disappears, or a launcher that cannot start one, fails the job. */
#include "mpiexec.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a proxy may take to call back after its launcher started (an ssh that asks for a
 * password, a host that is down). */
#define CONNECT_LIMIT 30.0
/* After the job is stopped, how long proxies get to end their ranks before the front cuts
 * them off (closing their connection makes each kill what is left on its host). */
#define STOP_GRACE 3.0

typedef struct host {
    char name[256];
    int slots;      /* :N, slots=N (0: not given) */
    int count;      /* ranks placed here */
    int first;      /* world rank of the first */
    bool local;     /* this host: the proxy is started directly */
    pid_t pid;      /* the launcher (or the local proxy) */
    bool running;
    int status;
    int fd;         /* the proxy's connection, -1 before its hello and after it closed */
    wire_in in;
    bool hello, done, in_barrier, left;
    int done_status;
    rank_proc io;   /* its stdout and stderr, forwarded a line at a time (io.out, io.err) */
} host;

static host *H;
static int nh;

/* "mpiexec: <message>" on stderr, as one write. */
static void say(const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "mpiexec: %s\n", msg);
}

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    exit(2);
}

static bool valid_host_name(const char *s)
{
    if (!*s || strlen(s) > 253)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '.' && *s != '-' && *s != '_')
            return false;
    return true;
}

/* Adds "name", "name:N" or "name slots=N" (where says where it came from, for errors). */
static void add_host(const char *spec, const char *where)
{
    char name[256];
    int slots = 0;
    const char *colon = strchr(spec, ':'), *sl = strstr(spec, " slots=");
    size_t n = colon ? (size_t)(colon - spec) : sl ? (size_t)(sl - spec) : strlen(spec);
    const char *num = colon ? colon + 1 : sl ? sl + 7 : NULL;
    if (n >= sizeof name)
        die("%s: the host name '%.40s...' is too long", where, spec);
    memcpy(name, spec, n);
    name[n] = 0;
    if (!valid_host_name(name))
        die("%s: '%s' is not a host name", where, spec);
    if (num) {
        char *end;
        long v = strtol(num, &end, 10);
        while (*end == ' ' || *end == '\t')
            end++;
        if (end == num || *end || v < 1 || v > 65536)
            die("%s: '%s': the number of slots must be 1 to 65536", where, spec);
        slots = (int)v;
    }
    for (int i = 0; i < nh; i++)
        if (!strcmp(H[i].name, name)) { /* the same host twice: one proxy, the slots added */
            H[i].slots += slots;
            return;
        }
    H = realloc(H, (size_t)(nh + 1) * sizeof *H);
    if (!H)
        die("out of memory");
    H[nh] = (host){.slots = slots, .fd = -1};
    snprintf(H[nh].name, sizeof H[nh].name, "%s", name);
    nh++;
}

static void read_hosts(job *j)
{
    if (j->hosts) {
        char *list = strdup(j->hosts);
        for (char *save = NULL, *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save))
            add_host(h, "-hosts");
        free(list);
    }
    if (j->hostfile) {
        FILE *f = fopen(j->hostfile, "r");
        if (!f)
            die("cannot read the hostfile %s: %s", j->hostfile, strerror(errno));
        char line[1024], where[1200];
        for (int ln = 1; fgets(line, sizeof line, f); ln++) {
            char *hash = strchr(line, '#');
            if (hash)
                *hash = 0;
            char *s = line, *e = line + strlen(line);
            while (*s == ' ' || *s == '\t')
                s++;
            while (e > s && isspace((unsigned char)e[-1]))
                *--e = 0;
            if (!*s)
                continue;
            snprintf(where, sizeof where, "%s:%d", j->hostfile, ln);
            add_host(s, where);
        }
        fclose(f);
    }
    if (nh == 0)
        die("no hosts given (-hosts or --hostfile)");
}

/* Blocks of consecutive ranks: -ppn N per host; or the hosts' slots (a host without a number
 * counts one); or as even as the ranks divide. */
static void place(job *j)
{
    int np = j->np, left = np;
    bool slots = false;
    for (int i = 0; i < nh; i++)
        slots |= H[i].slots > 0;
    long cap = 0;
    for (int i = 0; i < nh; i++)
        cap += j->ppn ? j->ppn : slots ? (H[i].slots ? H[i].slots : 1) : np;
    if (cap < np)
        die("%d ranks do not fit the %ld slots of the %d host%s given%s", np, cap, nh, nh == 1 ? "" : "s",
            j->ppn ? " (-ppn)" : "");
    for (int i = 0, first = 0; i < nh; i++) {
        int c = j->ppn ? j->ppn : slots ? (H[i].slots ? H[i].slots : 1) : np / nh + (i < np % nh);
        c = c < left ? c : left;
        H[i].count = c;
        H[i].first = first;
        first += c;
        left -= c;
    }
    while (nh > 0 && H[nh - 1].count == 0) /* hosts left without ranks get no proxy */
        nh--;
}

/* "(vector,(first_node,nodes,ranks_per_node),...)": runs of hosts with equal counts. */
static char *mapping(void)
{
    size_t cap = 32 + (size_t)nh * 40, at = 0;
    char *m = malloc(cap);
    at += (size_t)snprintf(m, cap, "(vector");
    for (int i = 0; i < nh;) {
        int k = i;
        while (k < nh && H[k].count == H[i].count)
            k++;
        at += (size_t)snprintf(m + at, cap - at, ",(%d,%d,%d)", i, k - i, H[i].count);
        i = k;
    }
    snprintf(m + at, cap - at, ")");
    return m;
}

static bool is_this_host(const char *name, const char *me)
{
    size_t n = strcspn(me, ".");
    return !strcmp(name, "localhost") || !strcmp(name, "127.0.0.1") || !strcmp(name, me) ||
           (strlen(name) == n && !strncmp(name, me, n));
}

/* This host's IPv4 addresses for proxies to call back on: loopback first for a proxy on this
 * host, never for one elsewhere (it would reach its own host). */
static void front_addresses(char *local, char *remote, size_t cap, int port)
{
    struct ifaddrs *ifs = NULL;
    size_t lat = 0, rat = 0;
    lat += (size_t)snprintf(local, cap, "127.0.0.1");
    remote[0] = 0;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                (i->ifa_flags & IFF_LOOPBACK))
                continue;
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof ip);
            if (rat + strlen(ip) + 2 < cap - 16)
                rat += (size_t)snprintf(remote + rat, cap - rat, "%s%s", rat ? "," : "", ip);
            if (lat + strlen(ip) + 2 < cap - 16)
                lat += (size_t)snprintf(local + lat, cap - lat, ",%s", ip);
        }
        freeifaddrs(ifs);
    }
    snprintf(local + lat, cap - lat, ":%d", port);
    snprintf(remote + rat, cap - rat, ":%d", port);
}

/* ---------------------------------------------------------------- the job's fate */

static job *J;
static bool tag_lines; /* --tag-output: the proxies prefix their ranks' lines */
static double kill_at; /* when to cut off proxies that still run after a stop */

static void send_all(int type, int nf, const char *const *f)
{
    for (int i = 0; i < nh; i++)
        if (H[i].fd >= 0 && wire_send(H[i].fd, type, nf, f) != 0) {
            close(H[i].fd);
            H[i].fd = -1;
        }
}

__attribute__((format(printf, 2, 3))) static void front_fail(int status, const char *fmt, ...)
{
    if (J->failing)
        return;
    J->failing = true;
    J->exit_status = status;
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    int live = 0;
    for (int i = 0; i < nh; i++)
        live += H[i].running && !H[i].done;
    if (live)
        fprintf(stderr, "mpiexec: stopping the job on %s\n", live == nh ? "every host" : "the other hosts");
    fflush(stderr);
    send_all(W_STOP, 0, NULL);
    kill_at = now_seconds() + STOP_GRACE;
}

static void cut_off(void)
{
    for (int i = 0; i < nh; i++) {
        if (H[i].fd >= 0)
            close(H[i].fd); /* each proxy kills its ranks when its connection closes */
        H[i].fd = -1;
        if (H[i].running)
            kill(H[i].pid, SIGKILL);
    }
}

static void check_barrier(void)
{
    int in = 0, left = 0;
    for (int i = 0; i < nh; i++)
        in += H[i].in_barrier, left += H[i].left && !H[i].in_barrier;
    if (J->failing || in == 0 || in + left < nh)
        return;
    for (int i = 0; i < nh; i++)
        if (H[i].in_barrier) {
            H[i].in_barrier = false;
            if (H[i].fd >= 0 && wire_send(H[i].fd, W_BOUT, 0, NULL) != 0) {
                close(H[i].fd);
                H[i].fd = -1;
            }
        }
}

/* ---------------------------------------------------------------- proxies */

static void send_job(job *j, host *h)
{
    char ws[16], first[16], count[16], tag[4], bind[4], argc_s[16], envc_s[16], cwd[4096];
    snprintf(ws, sizeof ws, "%d", j->np);
    snprintf(first, sizeof first, "%d", h->first);
    snprintf(count, sizeof count, "%d", h->count);
    snprintf(tag, sizeof tag, "%d", tag_lines ? 1 : 0);
    snprintf(bind, sizeof bind, "%d", j->bind);
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    int argc = 0, envc = 0;
    while (j->argv[argc])
        argc++;
    while (j->envp[envc])
        envc++;
    snprintf(argc_s, sizeof argc_s, "%d", argc);
    snprintf(envc_s, sizeof envc_s, "%d", envc);
    const char **f = malloc((size_t)(12 + argc + envc) * sizeof *f);
    int n = 0;
    f[n++] = ws, f[n++] = first, f[n++] = count, f[n++] = j->kvsname, f[n++] = j->mapping, f[n++] = tag;
    f[n++] = bind, f[n++] = cwd, f[n++] = j->prog_path, f[n++] = argc_s;
    for (int i = 0; i < argc; i++)
        f[n++] = j->argv[i];
    f[n++] = envc_s;
    for (int i = 0; i < envc; i++)
        f[n++] = j->envp[i];
    if (wire_send(h->fd, W_JOB, n, f) != 0)
        front_fail(1, "cannot send the job to the proxy on host %s", h->name);
    free(f);
}

static void serve_proxy(host *h)
{
    char *f[4];
    int nf, type;
    if (wire_read(h->fd, &h->in) != 0) {
        close(h->fd);
        h->fd = -1;
        if (!h->done)
            front_fail(1, "host %s: its proxy ended before its ranks did (the host, the launcher or the connection to "
                          "it failed)", h->name);
        return;
    }
    while ((type = wire_next(&h->in, f, 4, &nf)) > 0) {
        if (type == W_PUT && nf == 2) {
            int rc = pmi_kvs_put(J, f[0], f[1]);
            if (rc)
                front_fail(1, "the PMI key-value space is %s (a put from host %s)",
                           rc == -1 ? "over its budget" : "out of memory", h->name);
        } else if (type == W_GET && nf == 2) {
            const char *v = pmi_kvs_get(f[1]);
            char *val = malloc(v ? strlen(v) + 2 : 2);
            sprintf(val, "%s%s", v ? "1" : "0", v ? v : "");
            const char *r[] = {f[0], f[1], val};
            if (wire_send(h->fd, W_GETR, 3, r) != 0) {
                close(h->fd);
                h->fd = -1;
            }
            free(val);
        } else if (type == W_BIN) {
            h->in_barrier = true;
            check_barrier();
        } else if (type == W_BLEFT) {
            h->left = true;
            check_barrier();
        } else if (type == W_FAIL && nf == 2) {
            front_fail(atoi(f[0]), "%s", f[1]);
        } else if (type == W_DONE && nf == 1) {
            h->done = true;
            h->done_status = atoi(f[0]);
            h->left = true;
            check_barrier();
        } else {
            front_fail(1, "host %s: its proxy sent a message this mpiexec does not know (type %d)", h->name, type);
            return;
        }
        if (h->fd < 0)
            return;
    }
    if (type < 0)
        front_fail(1, "host %s: its proxy sent a malformed message", h->name);
}

/* A new connection: it must say hello with the job's cookie and a proxy id not seen yet. */
static void serve_hello(job *j, int fd, wire_in *in, const char *cookie, bool *closed)
{
    char *f[4];
    int nf, type;
    if (wire_read(fd, in) != 0) {
        *closed = true;
        return;
    }
    type = wire_next(in, f, 4, &nf);
    if (type == 0)
        return;
    int id = type == W_HELLO && nf == 3 ? atoi(f[0]) : -1;
    if (id < 0 || id >= nh || strcmp(f[1], cookie) != 0 || H[id].hello) {
        *closed = true; /* a stranger, or a stale proxy of another job */
        return;
    }
    host *h = &H[id];
    h->hello = true;
    if (J->failing) { /* too late: the job is being stopped (the proxy ends without a job) */
        *closed = true;
        return;
    }
    h->fd = fd;
    h->in = *in;
    *in = (wire_in){0};
    *closed = true; /* the slot is free again; the descriptor now belongs to the host */
    send_job(j, h);
}

static void start_proxy(job *j, host *h, int id, const char *front_local, const char *front_remote,
                        const char *cookie, const char *self)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        die("cannot create pipes for host %s: %s", h->name, strerror(errno));
    /* argv: [launcher words..., host,] self --proxy FRONT ID COOKIE */
    char *argv[64];
    int n = 0;
    char *words = strdup(j->launcher_exec ? j->launcher_exec : "ssh -x");
    char ids[16];
    snprintf(ids, sizeof ids, "%d", id);
    if (!h->local) {
        for (char *save = NULL, *w = strtok_r(words, " \t", &save); w && n < 50; w = strtok_r(NULL, " \t", &save))
            argv[n++] = w;
        argv[n++] = h->name;
    }
    argv[n++] = (char *)self;
    argv[n++] = "--proxy";
    argv[n++] = (char *)(h->local ? front_local : front_remote);
    argv[n++] = ids;
    argv[n++] = (char *)cookie;
    argv[n] = NULL;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        die("cannot start the proxy for host %s: fork: %s", h->name, strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, h->local ? SIGKILL : SIGTERM);
        if (getppid() != parent)
            _exit(127);
        /* Only rank 0's host reads our stdin (its proxy gives it to rank 0). */
        if (id != 0 || J->stdin_src < 0) {
            int dn = open("/dev/null", O_RDONLY);
            if (dn >= 0)
                dup2(dn, 0);
        }
        if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "mpiexec: cannot run the launcher '%s' for host %s: %s\n", argv[0], h->name, strerror(errno));
        _exit(127);
    }
    free(words);
    close(out[1]);
    close(err[1]);
    h->pid = pid;
    h->running = true;
    h->io = (rank_proc){.rank = -1, .pmi_fd = -1};
    h->io.out.fd = out[0];
    h->io.out.out = 1;
    h->io.err.fd = err[0];
    h->io.err.out = 2;
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
}

static void reap_launchers(void)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return;
        for (int i = 0; i < nh; i++) {
            if (H[i].pid != pid || !H[i].running)
                continue;
            H[i].running = false;
            H[i].status = st;
            if (!H[i].hello && !J->failing) {
                if (WIFEXITED(st))
                    front_fail(WEXITSTATUS(st) ? WEXITSTATUS(st) : 1,
                               "cannot start the proxy on host %s: %s exited with status %d before it called back",
                               H[i].name, H[i].local ? "it" : "the launcher", WEXITSTATUS(st));
                else
                    front_fail(1, "cannot start the proxy on host %s: %s was killed by signal %d", H[i].name,
                               H[i].local ? "it" : "the launcher", WTERMSIG(st));
            }
        }
    }
}

int run_front(job *j)
{
    J = j;
    read_hosts(j);
    place(j);
    j->world_size = j->np;
    j->mapping = mapping();
    snprintf(j->kvsname, sizeof j->kvsname, "courier_%d_%.32s", (int)getpid(), j->hostname);
    pmi_server_init(j);
    io_init(j);
    tag_lines = j->tag_output;
    j->tag_output = false; /* the proxies tag their lines; we forward them as they are */

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t slen = sizeof sa;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, SOMAXCONN) ||
        getsockname(lfd, (struct sockaddr *)&sa, &slen))
        die("cannot open a socket for the proxies to call back: %s", strerror(errno));
    char front_local[2048], front_remote[2048];
    front_addresses(front_local, front_remote, sizeof front_local, ntohs(sa.sin_port));
    unsigned char rnd[8];
    char cookie[17];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        for (size_t i = 0; i < sizeof rnd; i++)
            rnd[i] = (unsigned char)(rand() ^ getpid());
    for (int i = 0; i < 8; i++)
        snprintf(cookie + 2 * i, 3, "%02x", rnd[i]);
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        die("cannot find this program's own path: %s", strerror(errno));
    self[sl] = 0;

    sigset_t set;
    int sigfd = sigfd_setup(&set);
    if (sigfd < 0)
        die("signalfd: %s", strerror(errno));

    for (int i = 0; i < nh; i++) {
        H[i].local = is_this_host(H[i].name, j->hostname);
        start_proxy(j, &H[i], i, front_local, front_remote, cookie, self);
    }

    enum { MAXPEND = 64 };
    int pend[MAXPEND];
    wire_in pend_in[MAXPEND];
    int npend = 0;
    double start = now_seconds();
    size_t cap = 2 + MAXPEND + 3 * (size_t)nh;
    struct pollfd *pfd = calloc(cap, sizeof *pfd);
    int *idx = calloc(cap, sizeof *idx);
    char *what = calloc(cap, 1);
    int interrupts = 0;
    for (;;) {
        bool live = false, pipes = false, hellos = true;
        for (int i = 0; i < nh; i++) {
            live |= H[i].running || H[i].fd >= 0;
            pipes |= H[i].io.out.fd >= 0 || H[i].io.err.fd >= 0;
            hellos &= H[i].hello;
        }
        if (!live && !pipes)
            break;
        int n = 0;
        pfd[n] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        what[n++] = 's';
        if (!hellos) {
            pfd[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
            what[n++] = 'l';
        }
        for (int k = 0; k < npend; k++) {
            pfd[n] = (struct pollfd){.fd = pend[k], .events = POLLIN};
            idx[n] = k;
            what[n++] = 'h';
        }
        for (int i = 0; i < nh; i++) {
            if (H[i].fd >= 0) {
                pfd[n] = (struct pollfd){.fd = H[i].fd, .events = POLLIN};
                idx[n] = i;
                what[n++] = 'c';
            }
            if (H[i].io.out.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = H[i].io.out.fd, .events = POLLIN};
                idx[n] = i;
                what[n++] = '1';
            }
            if (H[i].io.err.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = H[i].io.err.fd, .events = POLLIN};
                idx[n] = i;
                what[n++] = '2';
            }
        }
        double now = now_seconds(), wake = now + 1.0;
        int got = poll(pfd, (nfds_t)n, (int)((wake - now) * 1000) + 1);
        if (got < 0 && errno != EINTR)
            break;
        for (int k = 0; got > 0 && k < n; k++) {
            if (!pfd[k].revents)
                continue;
            switch (what[k]) {
            case 's': {
                struct signalfd_siginfo si;
                while (read(sigfd, &si, sizeof si) == sizeof si) {
                    int sig = (int)si.ssi_signo;
                    if (sig == SIGCHLD) {
                        reap_launchers();
                        continue;
                    }
                    char s[8];
                    snprintf(s, sizeof s, "%d", sig == SIGUSR1 || sig == SIGUSR2 || ++interrupts == 1 ? sig : SIGKILL);
                    const char *f[] = {s};
                    if (sig != SIGUSR1 && sig != SIGUSR2 && !j->failing) {
                        j->failing = true;
                        j->exit_status = 128 + sig;
                        fprintf(stderr, "mpiexec: received signal %d (%s): passing it to the ranks on every host\n",
                                sig, strsignal(sig));
                        kill_at = now_seconds() + STOP_GRACE;
                    }
                    send_all(W_SIG, 1, f);
                    if (interrupts > 1)
                        cut_off();
                }
                break;
            }
            case 'l': {
                int fd;
                while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
                    if (npend == MAXPEND) {
                        close(fd);
                        continue;
                    }
                    wire_tune(fd);
                    pend[npend] = fd;
                    pend_in[npend] = (wire_in){0};
                    npend++;
                }
                break;
            }
            case 'h': {
                int p = idx[k];
                bool closed = false;
                int fd = pend[p];
                serve_hello(j, fd, &pend_in[p], cookie, &closed);
                if (closed) {
                    bool taken = false;
                    for (int i = 0; i < nh; i++)
                        taken |= H[i].fd == fd;
                    if (!taken) {
                        close(fd);
                        wire_free(&pend_in[p]);
                    }
                    /* later entries of this round's pollfd refer to pend[] by index: stop here */
                    pend[p] = pend[--npend];
                    pend_in[p] = pend_in[npend];
                    got = 0;
                }
                break;
            }
            case 'c':
                if (H[idx[k]].fd >= 0)
                    serve_proxy(&H[idx[k]]);
                break;
            default: {
                host *h = &H[idx[k]];
                io_forward(j, &h->io, what[k] == '1' ? &h->io.out : &h->io.err);
            }
            }
        }
        reap_launchers();
        now = now_seconds();
        for (int i = 0; i < nh; i++)
            if (!H[i].hello && H[i].running && now - start > CONNECT_LIMIT)
                front_fail(1, "host %s: no proxy called back within %g s (can '%s %s' start programs there?)",
                           H[i].name, CONNECT_LIMIT, j->launcher_exec ? j->launcher_exec : "ssh", H[i].name);
        if (j->timeout > 0 && !j->failing && now >= start + j->timeout)
            front_fail(124, "the job did not finish within its time limit of %g seconds (--timeout)", j->timeout);
        if (kill_at > 0 && now >= kill_at) {
            cut_off();
            kill_at = 0;
        }
    }
    for (int i = 0; i < nh; i++) {
        io_flush(j, &H[i].io, &H[i].io.out);
        io_flush(j, &H[i].io, &H[i].io.err);
        if (!j->failing && H[i].done_status && !j->exit_status)
            j->exit_status = H[i].done_status;
        wire_free(&H[i].in);
    }
    for (int k = 0; k < npend; k++)
        close(pend[k]);
    free(pfd);
    free(idx);
    free(what);
    free(H);
    close(lfd);
    pmi_server_free();
    return j->exit_status;
}
