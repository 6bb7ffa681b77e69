/* proxy.c: an mpiexec started on one host of a job across hosts (`--proxy`). It starts that
 * host's ranks and serves them PMI-1 as a single-host mpiexec does, but the job belongs to the
 * front mpiexec: puts go up to it, gets it cannot answer from what this host put go up too,
 * a barrier completes when every host's ranks are in, failures are reported up (the front
 * names them and stops the job), and when the connection to the front closes, for whatever
 * reason, the proxy kills its ranks and exits: nothing outlives the job on any host. */
#include "mpiexec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static wire_in up_in;

void proxy_lost(job *j)
{
    if (j->up_fd >= 0)
        close(j->up_fd);
    j->up_fd = -2;
    j->failing = true;
    j->exit_status = 1;
    signal_ranks(j, SIGKILL);
}

static void send_up(job *j, int type, int nf, const char *const *f)
{
    if (j->up_fd >= 0 && wire_send(j->up_fd, type, nf, f) != 0)
        proxy_lost(j);
}

/* Connects to one of the front's addresses ("a,b,c:port"), trying each for at most 2 s. */
static int connect_front(const char *front)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", front);
    char *colon = strrchr(buf, ':');
    if (!colon)
        return -1;
    *colon = 0;
    int port = atoi(colon + 1);
    for (char *save = NULL, *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (inet_pton(AF_INET, a, &sa.sin_addr) != 1)
            continue;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int err = -1;
            socklen_t len = sizeof err;
            if (poll(&p, 1, 2000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
                rc = 0;
        }
        if (rc == 0) {
            wire_tune(fd);
            return fd;
        }
        close(fd);
    }
    return -1;
}

int proxy_start(job *j, const char *front, int id, const char *cookie)
{
    j->up_fd = connect_front(front);
    if (j->up_fd < 0) {
        fprintf(stderr, "mpiexec: proxy %d on host %s: cannot reach the front mpiexec at %s\n", id, j->hostname, front);
        return -1;
    }
    char ids[16];
    snprintf(ids, sizeof ids, "%d", id);
    const char *hello[] = {ids, cookie, j->hostname};
    if (wire_send(j->up_fd, W_HELLO, 3, hello) != 0)
        return -1;
    /* The job: world size, first rank, local ranks, kvsname, mapping, tag, bind, directory,
     * program path, argc, argv..., envc, env... */
    enum { MAXF = 1 << 16 };
    char **f = malloc(MAXF * sizeof *f);
    int nf = 0, type = 0;
    while (f && (type = wire_next(&up_in, f, MAXF, &nf)) == 0)
        if (wire_read(j->up_fd, &up_in) != 0)
            break;
    if (type != W_JOB || nf < 11) {
        if (type != 0) /* (no job at all: the front stopped the job before this host joined) */
            fprintf(stderr, "mpiexec: proxy %d on host %s: the front mpiexec sent no job\n", id, j->hostname);
        free(f);
        return -1;
    }
    j->world_size = atoi(f[0]);
    j->first_rank = atoi(f[1]);
    j->np = atoi(f[2]);
    snprintf(j->kvsname, sizeof j->kvsname, "%s", f[3]);
    j->mapping = strdup(f[4]);
    j->tag_output = atoi(f[5]) != 0;
    j->bind = atoi(f[6]);
    if (chdir(f[7]) != 0)
        fprintf(stderr, "mpiexec: proxy on host %s: cannot change to directory %s: %s\n", j->hostname, f[7],
                strerror(errno));
    j->prog_path = strdup(f[8]);
    int argc = atoi(f[9]), at = 10;
    if (argc < 1 || at + argc >= nf) {
        free(f);
        return -1;
    }
    j->argv = calloc((size_t)argc + 1, sizeof *j->argv);
    for (int i = 0; i < argc; i++)
        j->argv[i] = strdup(f[at + i]);
    at += argc;
    int envc = atoi(f[at++]);
    if (envc < 0 || at + envc > nf) {
        free(f);
        return -1;
    }
    free(j->envp); /* (the array parse_args made of our own environment: the job's replaces it) */
    j->envp = calloc((size_t)envc + 1, sizeof *j->envp);
    for (int i = 0; i < envc; i++)
        j->envp[i] = strdup(f[at + i]);
    free(f);
    fcntl(j->up_fd, F_SETFL, O_NONBLOCK);
    return 0;
}

void proxy_put(job *j, const char *key, const char *value)
{
    const char *f[] = {key, value};
    send_up(j, W_PUT, 2, f);
}

void proxy_get(job *j, rank_proc *r, const char *key)
{
    char idx[16];
    snprintf(idx, sizeof idx, "%d", (int)(r - j->ranks));
    const char *f[] = {idx, key};
    r->awaiting_get = true;
    send_up(j, W_GET, 2, f);
}

void proxy_barrier(job *j)
{
    j->up_barrier = true;
    send_up(j, W_BIN, 0, NULL);
}

void proxy_left(job *j)
{
    if (j->up_left)
        return;
    j->up_left = true;
    send_up(j, W_BLEFT, 0, NULL);
}

void proxy_fail(job *j, int status, const char *message)
{
    char st[16];
    snprintf(st, sizeof st, "%d", status);
    const char *f[] = {st, message};
    send_up(j, W_FAIL, 2, f);
}

void proxy_done(job *j)
{
    char st[16];
    snprintf(st, sizeof st, "%d", j->exit_status);
    const char *f[] = {st};
    send_up(j, W_DONE, 1, f);
}

int proxy_serve(job *j)
{
    if (j->up_fd < 0 || wire_read(j->up_fd, &up_in) != 0)
        return -1;
    char *f[4];
    int nf, type;
    while ((type = wire_next(&up_in, f, 4, &nf)) > 0) {
        if (type == W_GETR && nf == 3) {
            int i = atoi(f[0]);
            if (i >= 0 && i < j->np && j->ranks[i].awaiting_get) {
                j->ranks[i].awaiting_get = false;
                pmi_get_reply(j, &j->ranks[i], f[1], f[2][0] == '1' ? f[2] + 1 : NULL);
            }
        } else if (type == W_BOUT) {
            j->up_barrier = false;
            pmi_barrier_release(j);
        } else if (type == W_STOP) {
            if (!j->failing) {
                j->failing = true;
                signal_ranks(j, SIGTERM);
                j->kill_deadline = now_seconds() + 0.25;
            }
        } else if (type == W_SIG && nf == 1) {
            signal_ranks(j, atoi(f[0]));
        }
    }
    return type < 0 ? -1 : 0;
}
