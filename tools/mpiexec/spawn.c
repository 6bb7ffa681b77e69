/* spawn.c: starting the ranks (fork, PMI socket, pipes, death signal) and signalling them. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* PMI variables that an enclosing job (a launcher that started mpiexec itself, or a rank that
 * runs mpiexec) may have left in our environment: the ranks must see only ours. getenv returns
 * the first of two entries, so an inherited PMI_RANK or PMI_FD would win over the one we add. */
static bool inherited_pmi_var(const char *entry)
{
    static const char *const names[] = {"PMI_FD=", "PMI_RANK=", "PMI_SIZE=", "PMI_PORT=", "PMI_ID="};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(entry, names[i], strlen(names[i])))
            return true;
    return false;
}

/* The environment of one rank (`rank`: its index on this host): the job's, plus its PMI variables (whose text lives in
 * `vars`, owned by the caller). Free the array, not its strings. */
static char **rank_env(job *j, int rank, int pmi_fd, char vars[3][32])
{
    size_t total = 0;
    while (j->envp[total])
        total++;
    char **env = calloc(total + 5, sizeof *env);
    if (!env)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < total; i++)
        if (!inherited_pmi_var(j->envp[i]))
            env[n++] = j->envp[i];
    snprintf(vars[0], 32, "PMI_FD=%d", pmi_fd);
    snprintf(vars[1], 32, "PMI_RANK=%d", j->first_rank + rank);
    snprintf(vars[2], 32, "PMI_SIZE=%d", j->world_size);
    for (int i = 0; i < 3; i++)
        env[n + (size_t)i] = vars[i];
    if (!j->bind && j->cpus_env)
        env[n + 3] = j->cpus_env;
    return env;
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child(job *j, int rank, char **env, int pmi_fd, int out_w, int err_w, int in_r, pid_t parent)
{
    setpgid(0, 0); /* its own process group: signals reach it (and its children) from us only */
    if (j->ncpus > 1) {
        /* Start rank i on the i-th CPU. Left to itself the kernel sometimes starts two ranks on one
         * CPU while another idles, and busy ranks are slow to be moved apart. Without --bind-to
         * core the library widens the mask again in MPI_Init (COURIER_CPUS), so ranks may still
         * move away from a CPU that other work needs. */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(j->cpus[rank % j->ncpus], &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    if (j->nofile_raised) { /* the limit mpiexec raised for itself: the program gets the usual one */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
            rl.rlim_cur = (rlim_t)j->nofile_soft;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* mpiexec died before the death signal was armed */
        _exit(127);
    if (dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0 || dup2(in_r, 0) < 0)
        _exit(127);
    int flags = fcntl(pmi_fd, F_GETFD);
    fcntl(pmi_fd, F_SETFD, flags & ~FD_CLOEXEC);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    execve(j->prog_path, j->argv, env);
    static const char msg[] = "mpiexec: cannot execute the program: ";
    const char *e = strerror(errno);
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, e, strlen(e));
    (void)!write(2, "\n", 1);
    _exit(127);
}

int spawn_ranks(job *j)
{
    pid_t parent = getpid();
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* Ranks that do not get started (a fork that fails part way) have no descriptors: the event
     * loop must not mistake a zero from calloc for fd 0. */
    for (int r = 0; r < j->np; r++) {
        j->ranks[r].rank = j->first_rank + r;
        j->ranks[r].pmi_fd = j->ranks[r].out.fd = j->ranks[r].err.fd = -1;
    }
    for (int r = 0; r < j->np; r++) {
        rank_proc *p = &j->ranks[r];
        int sv[2], out[2], err[2], in[2] = {devnull, -1};
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(out, O_CLOEXEC) ||
            pipe2(err, O_CLOEXEC)) {
            fprintf(stderr, "mpiexec: cannot create pipes for rank %d: %s%s\n", j->first_rank + r, strerror(errno),
                    errno == EMFILE ? " (raise the limit: ulimit -n)" : "");
            return -1;
        }
        if (r == 0 && j->first_rank == 0 && j->stdin_src >= 0 && pipe2(in, O_CLOEXEC)) {
            perror("mpiexec: cannot create the stdin pipe");
            return -1;
        }
        char vars[3][32];
        char **env = rank_env(j, r, sv[1], vars);
        if (!env) {
            fprintf(stderr, "mpiexec: out of memory\n");
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "mpiexec: cannot start rank %d: fork: %s\n", j->first_rank + r, strerror(errno));
            return -1;
        }
        if (pid == 0)
            child(j, r, env, sv[1], out[1], err[1], in[0], parent);
        /* The parent also sets the group, so signals sent right away reach the child. */
        setpgid(pid, pid);
        free(env);
        close(sv[1]);
        close(out[1]);
        close(err[1]);
        if (r == 0 && in[1] >= 0) {
            close(in[0]);
            fcntl(in[1], F_SETFL, O_NONBLOCK);
            j->stdin_dst = in[1];
        }
        p->pid = pid;
        p->pmi_fd = sv[0];
        fcntl(sv[0], F_SETFL, O_NONBLOCK);
        p->out.fd = out[0];
        p->out.out = 1;
        p->err.fd = err[0];
        p->err.out = 2;
        p->running = true;
        j->pmi_live++;
    }
    if (devnull >= 0)
        close(devnull);
    return 0;
}

void signal_ranks(job *j, int sig)
{
    for (int r = 0; r < j->np; r++)
        if (j->ranks[r].running && kill(-j->ranks[r].pid, sig) != 0)
            kill(j->ranks[r].pid, sig); /* not in its own group yet: signal the process */
}
