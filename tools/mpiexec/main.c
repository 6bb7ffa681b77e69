/* main.c: mpiexec (and mpirun): options, the event loop, and the job's fate (see mpiexec.h). */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef COURIER_VERSION
#define COURIER_VERSION "unknown"
#endif

/* How long ranks get between SIGTERM and SIGKILL when the job is stopped. */
#define KILL_GRACE 0.25
/* After the last rank is reaped, how long to wait for its output pipes to close (a child of a
 * rank may still hold them). */
#define DRAIN_GRACE 0.5

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -n N [options] program [arguments]\n"
            "\n"
            "Runs N copies of program as one MPI job on this machine (more ranks than cores is fine),\n"
            "or across the hosts given by -hosts or --hostfile (one proxy per host, started by ssh).\n"
            "\n"
            "options:\n"
            "  -n N, -np N             number of processes (ranks)\n"
            "  --tag-output, -l        prefix every output line with [rank]\n"
            "  -x VAR[=VALUE]          pass VAR to the ranks (with VALUE, set it)\n"
            "  -genv VAR VALUE         set VAR=VALUE for the ranks (also -env)\n"
            "  --timeout SECONDS       stop the job after SECONDS (also MPIEXEC_TIMEOUT); exit status 124\n"
            "  --simulate-nodes K      tell the ranks they run on K nodes (consecutive blocks of ranks,\n"
            "                          as even as they divide; also MPIEXEC_SIMULATE_NODES): they still\n"
            "                          run here, but ranks on different nodes talk over TCP, as on a\n"
            "                          cluster. For testing programs and Courier across nodes\n"
            "  -hosts H1[:N],H2[:N],...  run across these hosts (also -host, --host, -H): N ranks on each\n"
            "                          that says :N, else as even as the ranks divide (or -ppn)\n"
            "  --hostfile FILE         the hosts, one per line as 'host', 'host:N' or 'host slots=N'\n"
            "                          (also -f, -machinefile); # starts a comment\n"
            "  -ppn N                  N ranks on each host, in host order\n"
            "  --launcher-exec CMD     how to start a program on another host: CMD HOST COMMAND...,\n"
            "                          as ssh is called (the default: ssh -x). This host's own ranks\n"
            "                          are started directly\n"
            "  --bind-to core|none     keep rank i on the i-th core, or only start it there and let the\n"
            "                          kernel move it (none, the default: see doc/performance.md)\n"
            "  --oversubscribe, --allow-run-as-root\n"
            "                          accepted for compatibility: both are always allowed\n"
            "  -h, --help              this text\n"
            "  --version               Courier's version\n"
            "\n"
            "The ranks inherit mpiexec's environment. stdout and stderr are forwarded a line at a\n"
            "time, stdin goes to rank 0, and Ctrl-C is forwarded. When a rank fails (exits before\n"
            "MPI_Finalize, is killed by a signal, or calls MPI_Abort) the other ranks are stopped\n"
            "and mpiexec exits with the failing rank's status (128+N for signal N).\n");
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpiexec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nmpiexec: see 'mpiexec --help'\n");
    exit(2);
}

static double parse_seconds(const char *s, const char *opt)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v < 0)
        die_usage("%s needs a number of seconds", opt);
    return v;
}

/* Environment for the ranks: ours, with -x/-genv settings applied. */
static char **env_set(char **env, size_t *n, const char *name, const char *value)
{
    size_t len = strlen(name);
    char *entry;
    if (asprintf(&entry, "%s=%s", name, value) < 0)
        exit(1);
    for (size_t i = 0; i < *n; i++) {
        if (strncmp(env[i], name, len) == 0 && env[i][len] == '=') {
            env[i] = entry;
            return env;
        }
    }
    env = realloc(env, (*n + 2) * sizeof *env);
    env[(*n)++] = entry;
    env[*n] = NULL;
    return env;
}

static const char *find_program(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? prog : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    static char full[PATH_MAX];
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? path : ".", prog);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return full;
        path += n + (path[n] == ':');
    }
    return NULL;
}

static int parse_count(const char *s, const char *opt)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1 || v > 65536)
        die_usage("%s needs a number from 1 to 65536", opt);
    return (int)v;
}

/* A proxy's arguments: the front's addresses, its id, the job's cookie (NULL: not a proxy). */
static const char *proxy_args[3];

static void parse_args(job *j, int argc, char **argv)
{
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **env = malloc((nenv + 1) * sizeof *env);
    memcpy(env, environ, (nenv + 1) * sizeof *env);
    j->np = -1;
    /* Not pinned by default: on the machines measured so far, pinned ranks lost time to kernel
     * work on their core that an unpinned rank simply moves away from (doc/performance.md). */
    j->bind = 0;
    const char *t = getenv("MPIEXEC_TIMEOUT");
    if (t && *t)
        j->timeout = parse_seconds(t, "MPIEXEC_TIMEOUT");
    j->nodes = 1;
    const char *sn = getenv("MPIEXEC_SIMULATE_NODES");
    if (sn && *sn)
        j->nodes = parse_count(sn, "MPIEXEC_SIMULATE_NODES");
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-')
            break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "--n") || !strcmp(a, "-c")) {
            if (!next)
                die_usage("%s needs a number of processes", a);
            char *end;
            long v = strtol(next, &end, 10);
            if (*end || v < 1 || v > 65536)
                die_usage("the number of processes must be 1 to 65536, not '%s'", next);
            j->np = (int)v;
            i++;
        } else if (!strcmp(a, "--tag-output") || !strcmp(a, "-tag-output") || !strcmp(a, "-l") ||
                   !strcmp(a, "-prepend-rank") || !strcmp(a, "--prepend-rank")) {
            j->tag_output = true;
        } else if (!strcmp(a, "-x")) {
            if (!next)
                die_usage("%s needs VAR or VAR=VALUE", a);
            const char *eq = strchr(next, '=');
            if (eq) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)(eq - next), next);
                env = env_set(env, &nenv, name, eq + 1);
            } else if (!getenv(next)) {
                fprintf(stderr, "mpiexec: warning: -x %s: %s is not set here, so it is not passed\n", next, next);
            }
            i++;
        } else if (!strcmp(a, "-genv") || !strcmp(a, "--genv") || !strcmp(a, "-env") || !strcmp(a, "--env")) {
            if (i + 2 >= argc)
                die_usage("%s needs VAR and VALUE", a);
            env = env_set(env, &nenv, argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "-timeout")) {
            if (!next)
                die_usage("%s needs a number of seconds", a);
            j->timeout = parse_seconds(next, a);
            i++;
        } else if (!strcmp(a, "--simulate-nodes") || !strcmp(a, "-simulate-nodes")) {
            if (!next)
                die_usage("%s needs a number of nodes", a);
            j->nodes = parse_count(next, a);
            i++;
        } else if (!strcmp(a, "-hosts") || !strcmp(a, "--hosts") || !strcmp(a, "-host") || !strcmp(a, "--host") ||
                   !strcmp(a, "-H")) {
            if (!next)
                die_usage("%s needs a list of hosts", a);
            j->hosts = next;
            i++;
        } else if (!strcmp(a, "--hostfile") || !strcmp(a, "-hostfile") || !strcmp(a, "-f") ||
                   !strcmp(a, "-machinefile") || !strcmp(a, "--machinefile")) {
            if (!next)
                die_usage("%s needs a file name", a);
            j->hostfile = next;
            i++;
        } else if (!strcmp(a, "-ppn") || !strcmp(a, "--ppn") || !strcmp(a, "--npernode") || !strcmp(a, "-npernode")) {
            if (!next)
                die_usage("%s needs a number of ranks per host", a);
            j->ppn = parse_count(next, a);
            i++;
        } else if (!strcmp(a, "--launcher-exec") || !strcmp(a, "-launcher-exec")) {
            if (!next)
                die_usage("%s needs a command", a);
            j->launcher_exec = next;
            i++;
        } else if (!strcmp(a, "--launcher") || !strcmp(a, "-launcher")) {
            if (!next || (strcmp(next, "ssh") && strcmp(next, "rsh")))
                die_usage("%s: only 'ssh' and 'rsh' are known (or give --launcher-exec CMD)", next ? next : "");
            if (!j->launcher_exec)
                j->launcher_exec = next;
            i++;
        } else if (!strcmp(a, "--proxy")) { /* internal: started by a front mpiexec */
            if (i + 3 >= argc)
                die_usage("%s", "--proxy needs the front's address, an id and a cookie");
            proxy_args[0] = argv[i + 1], proxy_args[1] = argv[i + 2], proxy_args[2] = argv[i + 3];
            i += 3;
        } else if (!strcmp(a, "--bind-to") || !strcmp(a, "-bind-to")) {
            if (!next || (strcmp(next, "core") && strcmp(next, "none")))
                die_usage("%s needs 'core' or 'none'", a);
            j->bind = !strcmp(next, "core") ? 1 : 0;
            i++;
        } else if (!strcmp(a, "--oversubscribe") || !strcmp(a, "-oversubscribe") ||
                   !strcmp(a, "--allow-run-as-root") || !strcmp(a, "-genvall")) {
            /* always the case here */
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--version") || !strcmp(a, "-version") || !strcmp(a, "-V")) {
            printf("mpiexec (Courier MPI) %s\n", COURIER_VERSION);
            exit(0);
        } else {
            die_usage("unknown option '%s'", a);
        }
    }
    if (i >= argc && !proxy_args[0]) /* a proxy: the front sends the job */
        die_usage("%s", "no program to run");
    if (j->np < 0)
        j->np = 1;
    if ((j->hosts || j->hostfile) && j->nodes > 1)
        die_usage("%s", "--simulate-nodes cannot be combined with real hosts");
    if (j->nodes > j->np) {
        fprintf(stderr, "mpiexec: %d simulated nodes need at least as many ranks, not %d\n", j->nodes, j->np);
        exit(2);
    }
    cpu_set_t set;
    j->cpus = calloc(CPU_SETSIZE, sizeof(int));
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                j->cpus[j->ncpus++] = c;
    if (j->ncpus == 0)
        j->bind = 0;
    size_t len = 32 + (size_t)j->ncpus * 8;
    j->cpus_env = malloc(len);
    int at = snprintf(j->cpus_env, len, "COURIER_CPUS=");
    for (int c = 0; c < j->ncpus; c++)
        at += snprintf(j->cpus_env + at, len - (size_t)at, c ? ",%d" : "%d", j->cpus[c]);
    j->envp = env;
    if (proxy_args[0])
        return;
    j->argv = &argv[i];
    j->prog_path = find_program(argv[i]);
    if (!j->prog_path) {
        fprintf(stderr, "mpiexec: cannot run '%s': %s\n", argv[i],
                strchr(argv[i], '/') ? strerror(errno) : "not found in PATH");
        exit(127);
    }
}

void describe_rank(job *j, rank_proc *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "rank %d (pid %d) on host %s", r->rank, (int)r->pid, j->hostname);
}

static int running_ranks(job *j)
{
    int n = 0;
    for (int r = 0; r < j->np; r++)
        n += j->ranks[r].running;
    return n;
}

/* Ranks still running other than one that aborted (it is about to exit by itself). */
static int other_ranks(job *j)
{
    int n = 0;
    for (int r = 0; r < j->np; r++)
        n += j->ranks[r].running && !j->ranks[r].aborted;
    return n;
}

void job_fail(job *j, int status, const char *fmt, ...)
{
    if (j->failing)
        return;
    j->failing = true;
    j->exit_status = status;
    va_list ap;
    va_start(ap, fmt);
    if (j->up_fd >= 0) { /* a proxy: the front names the failure and stops every host */
        char msg[1024];
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        proxy_fail(j, status, msg);
        if (running_ranks(j) > 0) {
            signal_ranks(j, SIGTERM);
            j->kill_deadline = now_seconds() + KILL_GRACE;
        }
        return;
    }
    fprintf(stderr, "mpiexec: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    int others = other_ranks(j);
    if (running_ranks(j) > 0) {
        if (others > 0)
            fprintf(stderr, "mpiexec: stopping the %d remaining rank%s of the job\n", others, others == 1 ? "" : "s");
        signal_ranks(j, SIGTERM);
        j->kill_deadline = now_seconds() + KILL_GRACE;
    }
    fflush(stderr);
}

static void reaped(job *j, rank_proc *r, int st)
{
    r->running = false;
    r->status = st;
    pmi_drain(j, r); /* act on a last command (finalize, abort) sent just before exiting */
    char partial[400];
    pmi_partial(r, partial, sizeof partial);
    char who[300];
    describe_rank(j, r, who, sizeof who);
    if (r->aborted || j->failing) {
        /* already reported */
    } else if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        job_fail(j, 128 + sig, "%s: killed by signal %d (%s)%s", who, sig, strsignal(sig),
                 WCOREDUMP(st) ? ", core dumped" : "");
    } else if (WIFEXITED(st) && partial[0]) {
        int code = WEXITSTATUS(st);
        job_fail(j, code ? code : 1, "%s: broke the PMI-1 protocol: exited (status %d) in the middle of a command; it sent \"%s\"",
                 who, code, partial);
    } else if (WIFEXITED(st)) {
        int code = WEXITSTATUS(st);
        if (r->finalized) {
            if (code != 0 && j->exit_status == 0) {
                fprintf(stderr, "mpiexec: %s: exited with status %d after MPI_Finalize\n", who, code);
                j->exit_status = code;
            }
        } else if (r->pmi_started) {
            if (code)
                job_fail(j, code, "%s: exited with status %d before calling MPI_Finalize", who, code);
            else
                job_fail(j, 1, "%s: exited (status 0) without calling MPI_Finalize", who);
        } else if (code) {
            job_fail(j, code, "%s: exited with status %d%s", who, code,
                     code == 127 ? " (the program could not be started)" : "");
        }
    }
    pmi_release(j, r); /* after the judgement: a failing job lets no one through a barrier */
}

static void reap(job *j)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return;
        for (int r = 0; r < j->np; r++)
            if (j->ranks[r].pid == pid && j->ranks[r].running)
                reaped(j, &j->ranks[r], st);
    }
}

static void on_signal(job *j, int sig)
{
    if (sig == SIGCHLD) {
        reap(j);
        return;
    }
    if (sig == SIGUSR1 || sig == SIGUSR2) {
        signal_ranks(j, sig);
        return;
    }
    /* SIGINT, SIGTERM, SIGHUP, SIGQUIT: pass it on; a second one kills. */
    if (++j->interrupts > 1) {
        signal_ranks(j, SIGKILL);
        return;
    }
    if (!j->failing) {
        j->failing = true;
        j->exit_status = 128 + sig;
        fprintf(stderr, "mpiexec: received signal %d (%s): passing it to the %d running rank%s\n", sig,
                strsignal(sig), running_ranks(j), running_ranks(j) == 1 ? "" : "s");
    }
    signal_ranks(j, sig);
    j->kill_deadline = now_seconds() + 2.0;
}

int sigfd_setup(sigset_t *set)
{
    sigemptyset(set);
    int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(set, sigs[i]);
    sigprocmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Three descriptors per rank (PMI socket, stdout, stderr): raise our soft limit if a large job
 * needs it. The ranks get the original limit back (spawn.c). */
static void raise_fd_limit(job *j)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t want = 3 * (rlim_t)j->np + 64;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return;
    j->nofile_soft = (unsigned long long)rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
        j->nofile_raised = true;
}

int main(int argc, char **argv)
{
    static job j;
    j.up_fd = -1;
    parse_args(&j, argc, argv);
    gethostname(j.hostname, sizeof j.hostname - 1);
    if (j.hosts || j.hostfile)
        return run_front(&j);
    if (proxy_args[0] && proxy_start(&j, proxy_args[0], atoi(proxy_args[1]), proxy_args[2]) != 0)
        return 1;
    raise_fd_limit(&j);
    j.ranks = calloc((size_t)j.np, sizeof *j.ranks);
    if (!j.ranks) {
        fprintf(stderr, "mpiexec: out of memory for %d ranks\n", j.np);
        return 1;
    }
    sigset_t set;
    int sigfd = sigfd_setup(&set);
    if (sigfd < 0) {
        perror("mpiexec: signalfd");
        return 1;
    }
    io_init(&j);
    pmi_server_init(&j);
    double start = now_seconds();
    if (spawn_ranks(&j)) {
        job_fail(&j, 1, "could not start all %d ranks", j.np);
    }

    size_t cap = 4 + 3 * (size_t)j.np;
    struct pollfd *pfd = calloc(cap, sizeof *pfd);
    void **who = calloc(cap, sizeof *who); /* what each pollfd is: a linebuf, a rank (PMI) or NULL */
    char *what = calloc(cap, 1);
    double drain_deadline = 0;
    for (;;) {
        int live = running_ranks(&j);
        int nfds = 0;
        pfd[nfds] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        what[nfds++] = 's';
        if (j.stdin_src >= 0 && !j.stdin_eof && j.stdin_len < sizeof j.stdin_buf && j.stdin_dst >= 0) {
            pfd[nfds] = (struct pollfd){.fd = j.stdin_src, .events = POLLIN};
            what[nfds++] = 'i';
        }
        if (j.stdin_dst >= 0 && (j.stdin_len || j.stdin_eof)) {
            pfd[nfds] = (struct pollfd){.fd = j.stdin_dst, .events = POLLOUT};
            what[nfds++] = 'o';
        }
        if (j.up_fd >= 0) {
            pfd[nfds] = (struct pollfd){.fd = j.up_fd, .events = POLLIN};
            what[nfds++] = 'u';
        }
        bool pipes_open = false;
        for (int r = 0; r < j.np; r++) {
            rank_proc *p = &j.ranks[r];
            if (p->pmi_fd >= 0) {
                pfd[nfds] = (struct pollfd){.fd = p->pmi_fd, .events = (short)(POLLIN | (p->pmi_out_len ? POLLOUT : 0))};
                who[nfds] = p;
                what[nfds++] = 'p';
            }
            linebuf *bufs[2] = {&p->out, &p->err};
            for (int k = 0; k < 2; k++) {
                if (bufs[k]->fd < 0)
                    continue;
                pipes_open = true;
                pfd[nfds] = (struct pollfd){.fd = bufs[k]->fd, .events = POLLIN};
                who[nfds] = bufs[k];
                what[nfds++] = (char)('0' + k);
            }
        }
        if (live == 0 && !pipes_open)
            break;
        double now = now_seconds();
        double closed_due = pmi_check_closed(&j, now); /* may fail the job: before the deadlines below */
        if (live == 0 && drain_deadline == 0)
            drain_deadline = now + DRAIN_GRACE;
        if (drain_deadline && now >= drain_deadline)
            break;
        double wake = 1e300;
        if (j.timeout > 0 && !j.failing)
            wake = start + j.timeout;
        if (j.kill_deadline > 0)
            wake = wake < j.kill_deadline ? wake : j.kill_deadline;
        if (drain_deadline > 0)
            wake = wake < drain_deadline ? wake : drain_deadline;
        if (closed_due > 0)
            wake = wake < closed_due ? wake : closed_due;
        int ms = wake >= 1e299 ? -1 : (int)((wake - now) * 1000) + 1;
        if (ms < -1)
            ms = 0;
        int n = poll(pfd, (nfds_t)nfds, ms);
        if (n < 0 && errno != EINTR) {
            perror("mpiexec: poll");
            break;
        }
        for (int k = 0; n > 0 && k < nfds; k++) {
            if (!pfd[k].revents)
                continue;
            switch (what[k]) {
            case 's': {
                struct signalfd_siginfo si;
                while (read(sigfd, &si, sizeof si) == sizeof si)
                    on_signal(&j, (int)si.ssi_signo);
                break;
            }
            case 'i': io_stdin_read(&j); break;
            case 'u':
                if (proxy_serve(&j) != 0)
                    proxy_lost(&j);
                break;
            case 'o': io_stdin_write(&j); break;
            case 'p': {
                rank_proc *p = who[k];
                if (pfd[k].revents & POLLOUT)
                    pmi_flush(&j, p);
                if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
                    pmi_serve(&j, p);
                break;
            }
            default: {
                linebuf *b = who[k];
                rank_proc *p = (rank_proc *)((char *)b - (what[k] == '0' ? offsetof(rank_proc, out)
                                                                          : offsetof(rank_proc, err)));
                io_forward(&j, p, b);
            }
            }
        }
        /* A child may exit while signals are merely pending in the fd: reap here as well. */
        reap(&j);
        now = now_seconds();
        if (j.timeout > 0 && !j.failing && now >= start + j.timeout)
            job_fail(&j, 124, "the job did not finish within its time limit of %g seconds (--timeout)", j.timeout);
        if (j.kill_deadline > 0 && now >= j.kill_deadline) {
            signal_ranks(&j, SIGKILL);
            j.kill_deadline = 0;
        }
    }
    /* Anything still alive (only possible after poll failed) dies with us, and is reaped. */
    signal_ranks(&j, SIGKILL);
    while (running_ranks(&j) > 0) {
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0)
            break;
        for (int r = 0; r < j.np; r++)
            if (j.ranks[r].pid == pid)
                j.ranks[r].running = false;
    }
    for (int r = 0; r < j.np; r++) {
        io_flush(&j, &j.ranks[r], &j.ranks[r].out);
        io_flush(&j, &j.ranks[r], &j.ranks[r].err);
    }
    free(pfd);
    free(who);
    free(what);
    free(j.ranks);
    free(j.cpus);
    free(j.cpus_env);
    if (j.up_fd >= 0)
        proxy_done(&j);
    pmi_server_free();
    return j.exit_status;
}
