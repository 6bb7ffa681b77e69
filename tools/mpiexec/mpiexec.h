/* mpiexec.h: Courier's launcher: shared state of the job it runs.
 *
 * mpiexec forks the ranks, serves them the PMI-1 wire protocol on an inherited socket, forwards
 * their output a whole line at a time and stdin to rank 0, and owns the job's fate: the first
 * failure (an exit before MPI_Finalize, a signal, MPI_Abort, a timeout) stops every other rank
 * and decides the exit status. Nothing outlives it: ranks die with it (PR_SET_PDEATHSIG), and
 * it reaps every one of them before it exits. */
#ifndef CR_MPIEXEC_H
#define CR_MPIEXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

#define LINEBUF_MAX 65536
/* PMI-1 limits. A command line is at most PMI_LINE_MAX bytes with its newline; get_maxes
 * announces PMI_KEY_MAX and PMI_VAL_MAX (string sizes with their NUL). Anything longer breaks
 * the protocol and ends the job, as does every other malformed or out-of-order command. */
#define PMI_LINE_MAX 4096
#define PMI_KEY_MAX 512
#define PMI_VAL_MAX 1024
#define PMI_REPLY_MAX 4096

typedef struct linebuf {
    int fd;            /* read end of the rank's pipe, -1 once closed */
    int out;           /* 1 or 2: where its lines go */
    size_t len;
    char data[LINEBUF_MAX];
} linebuf;

typedef struct rank_proc {
    int rank;
    pid_t pid;
    int pmi_fd;         /* our end of the PMI socket, -1 once closed */
    char pmi_in[PMI_LINE_MAX]; /* received, not yet served: at most one partial command line */
    size_t pmi_len;
    char pmi_out[PMI_REPLY_MAX]; /* a reply the socket did not take at once */
    size_t pmi_out_len;
    bool pmi_early;     /* what is buffered arrived before the reply to an earlier request */
    int mcmd_lines;     /* inside a multi-line mcmd=spawn ... endcmd: its lines so far */
    bool pmi_left;      /* finalized, disconnected cleanly, thrown out or reaped: not counted in barriers */
    double pmi_closed_at; /* its socket closed mid-command, or after init without finalize, while
                           * it still ran: the job fails unless it exits within a grace period */
    linebuf out, err;
    bool running;       /* not reaped yet */
    bool pmi_started;   /* sent cmd=init: it is an MPI process */
    bool finalized;     /* sent cmd=finalize */
    bool in_barrier;
    bool aborted;
    bool awaiting_get;  /* a get went to the front mpiexec; its reply comes later (proxy) */
    int abort_code;
    char abort_msg[512];
    int status;         /* from waitpid, once reaped */
} rank_proc;

typedef struct job {
    int np;
    char **argv;        /* program and its arguments */
    char **envp;        /* environment of every rank, minus the per-rank PMI variables */
    bool tag_output;
    int bind;           /* 1: pin rank i to the i-th CPU we may use; 0: start it there, then let it move */
    int ncpus;
    int *cpus;          /* the CPUs mpiexec may run on */
    char *cpus_env;     /* "COURIER_CPUS=0,1,...": the mask the ranks widen theirs to again */
    double timeout;     /* seconds; 0 means none */
    int nodes;          /* nodes the ranks are told they span (--simulate-nodes; 1 otherwise) */
    /* Across hosts (hosts.c: the front mpiexec; proxy.c: one proxy per host, which starts that
     * host's ranks). A proxy's np counts its own ranks; world_size all of them. */
    int world_size;     /* ranks in the whole job (np when there is one host) */
    int first_rank;     /* world rank of ranks[0] */
    int up_fd;          /* a proxy's connection to the front mpiexec; -1 otherwise */
    bool up_barrier;    /* a proxy: every local rank is in the barrier, and the front was told */
    bool up_left;       /* a proxy: no local rank takes part in barriers any more (told) */
    char *mapping;      /* PMI_process_mapping from the front (NULL: computed by pmi_server) */
    const char *hosts, *hostfile, *launcher_exec; /* -hosts, --hostfile, --launcher-exec */
    int ppn;            /* -ppn: ranks per host (0: spread evenly, or as the host list says) */
    bool nofile_raised; /* we raised RLIMIT_NOFILE's soft limit for a large job... */
    unsigned long long nofile_soft; /* ...from this one, which the ranks get back */
    const char *prog_path;
    rank_proc *ranks;
    int barrier_count;  /* ranks in the PMI barrier */
    int pmi_live;       /* ranks a barrier waits for: started, neither finalized nor disconnected */
    size_t kvs_bytes, kvs_budget; /* the key-value space's size, and its bound */
    char kvsname[64];
    char hostname[256];
    /* stdin forwarding to rank 0 */
    int stdin_src;      /* our fd 0, or -1 when not forwarding */
    int stdin_dst;      /* write end of rank 0's stdin pipe, or -1 */
    char stdin_buf[65536];
    size_t stdin_len;
    bool stdin_eof;
    /* the job's fate */
    bool failing;       /* the other ranks are being stopped */
    int exit_status;
    double kill_deadline; /* when to SIGKILL what is still alive; 0 when not pending */
    int interrupts;
} job;

/* spawn.c */
int spawn_ranks(job *j);
void signal_ranks(job *j, int sig);
double now_seconds(void);

/* pmi_server.c */
void pmi_server_init(job *j);
void pmi_server_free(void);
/* Reads (once) and serves what rank r sent: 1 when it read something, 0 when there was nothing
 * to read, -1 when the socket is closed (end of file, or closed by us after a protocol error). */
int pmi_serve(job *j, rank_proc *r);
/* Writes a pending reply (the socket is writable). */
void pmi_flush(job *j, rank_proc *r);
/* The rank was reaped: serves what it sent before exiting (a bounded amount) and closes. */
void pmi_drain(job *j, rank_proc *r);
/* The reaped rank (judged by now) no longer counts in barriers: one may be released. */
void pmi_release(job *j, rank_proc *r);
/* Fails the job for a rank whose PMI socket closed when it should not have and that kept
 * running past the grace period; returns the next such deadline (0 when none). */
double pmi_check_closed(job *j, double now);
/* Describes a command left incomplete by a rank (for its exit message); empty when none. */
void pmi_partial(rank_proc *r, char *buf, size_t cap);
/* Releases a barrier that every live rank has entered (after a rank finished or died). */
void pmi_check_barrier(job *j);

/* Replies to a get that went to the front mpiexec (proxy.c). */
void pmi_get_reply(job *j, rank_proc *r, const char *key, const char *value);
/* The front mpiexec let every host through the barrier (proxy.c). */
void pmi_barrier_release(job *j);
/* The front's key-value space (hosts.c): 0, -1 over budget, -2 out of memory. */
int pmi_kvs_put(job *j, const char *key, const char *value);
const char *pmi_kvs_get(const char *key);

/* hosts.c: the front mpiexec of a job across hosts (-hosts, --hostfile): it starts one proxy per
 * host (directly on this host, with the launcher elsewhere), serves them the job and the
 * key-value space, forwards their output and signals, and decides the job's fate. */
int run_front(job *j);

/* proxy.c: the proxy side. proxy_start connects to the front and receives the job (fills j). */
int proxy_start(job *j, const char *front, int id, const char *cookie);
void proxy_put(job *j, const char *key, const char *value);
void proxy_get(job *j, rank_proc *r, const char *key);
void proxy_barrier(job *j);
void proxy_left(job *j);
void proxy_fail(job *j, int status, const char *message);
void proxy_done(job *j);
/* Serves what the front sent; -1 when the connection closed (the proxy then ends its ranks). */
int proxy_serve(job *j);
/* The front is gone (killed, or its host or the network failed): the ranks here are killed,
 * nothing of the job may outlive it. */
void proxy_lost(job *j);

/* wire.c: messages between the front and its proxies: a 4-byte length, a type byte, a payload
 * of NUL-terminated fields. */
enum { W_HELLO = 1, W_JOB, W_PUT, W_GET, W_GETR, W_BIN, W_BLEFT, W_BOUT, W_FAIL, W_DONE, W_STOP, W_SIG };
#define WIRE_MAX (1u << 24)
typedef struct wire_in {
    char *buf;
    size_t len, cap, used; /* used: bytes of the message last returned by wire_next */
} wire_in;
/* A front-proxy connection: no Nagle delay, and a link that goes silent (cut, host down: no
 * reset ever comes) counts as broken after about 4 KEEPALIVE_S seconds: keep-alive probes when
 * idle, TCP_USER_TIMEOUT when data waits for its acknowledgement. */
#define KEEPALIVE_S 1
void wire_tune(int fd);
/* Sends one message made of `nf` fields (blocking; the peer always reads). -1 on error. */
int wire_send(int fd, int type, int nf, const char *const *fields);
/* Reads what is there: 0, or -1 at end of file or on error. */
int wire_read(int fd, wire_in *w);
/* The next complete message, or 0; its fields stay valid until the next call. -1: malformed. */
int wire_next(wire_in *w, char **fields, int maxf, int *nf);
void wire_free(wire_in *w);

/* iofwd.c */
void io_init(job *j);
/* Reads from a rank's pipe and writes out every complete line; returns -1 at end of file. */
int io_forward(job *j, rank_proc *r, linebuf *b);
/* Writes out what is left in a buffer (a last line without its newline). */
void io_flush(job *j, rank_proc *r, linebuf *b);
void io_stdin_read(job *j);
void io_stdin_write(job *j);

/* main.c */
/* Starts stopping the job: the first caller decides the exit status and prints the cause. */
void job_fail(job *j, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void describe_rank(job *j, rank_proc *r, char *buf, size_t cap);
/* Blocks the signals mpiexec handles and returns a signalfd for them (SIGPIPE is ignored). */
int sigfd_setup(sigset_t *set);

#endif
