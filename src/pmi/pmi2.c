/* pmi2.c: the PMI-2 wire protocol client, Slurm's own (srun --mpi=pmi2) and spoken by Hydra too.
 * After one PMI-1-style line ("cmd=init pmi_version=2 ..."), every message is framed: six ASCII
 * digits of length (Slurm pads them on the right, Hydra on the left), then "key=value;" pairs in
 * any order. The specification doubles a ';' inside a value, but neither Slurm nor Hydra undoes
 * that (Slurm cuts the value there, Hydra refuses the command): so a put refuses ';' and empty
 * values (Courier's own never have them), and an abort message has its ';' replaced.
 *
 * Mapping onto pmi.h: put is kvs-put, barrier is kvs-fence (which also makes puts visible),
 * get is kvs-get; "PMI_process_mapping" is a job attribute (info-getjobattr), as in PMI-1 it is
 * a key. */
#include "backends.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG_MAX = 4096 };

static char jobid[256];

/* Appends `v` at `at`; returns the new length, which is cap when `v` did not fit. */
static size_t append(char *buf, size_t at, size_t cap, const char *v)
{
    size_t n = strlen(v);
    if (at + n + 1 >= cap)
        return cap;
    memcpy(buf + at, v, n);
    return at + n;
}

static int send_msg(const char *payload, size_t n)
{
    char framed[6 + MSG_MAX + 1];
    if (n > MSG_MAX)
        return -1;
    snprintf(framed, sizeof framed, "%-6zu", n);
    memcpy(framed + 6, payload, n);
    return cr_pmi_wire_write(framed, 6 + n); /* one write: one packet for the server */
}

/* Reads one framed message into `msg` (NUL-terminated). */
static int recv_msg(char *msg, size_t cap)
{
    char head[7] = {0}, *end;
    if (cr_pmi_wire_bytes(head, 6))
        return -1;
    const char *d = head;
    while (*d == ' ')
        d++;
    long n = strtol(d, &end, 10);
    while (*end == ' ')
        end++;
    if (end == d || *end || n < 0 || (size_t)n >= cap || cr_pmi_wire_bytes(msg, (size_t)n)) {
        cr_pmi_wire_close(); /* the stream is lost: its next bytes are no message's start */
        return -1;
    }
    msg[n] = '\0';
    return 0;
}

static int field(const char *msg, const char *key, char *out, size_t cap)
{
    return cr_pmi_field(msg, ';', key, out, cap);
}

/* Sends "cmd=<cmd>;" plus the printf-formatted rest, and reads the reply "<cmd>-response" with
 * rc=0. */
static int rpc(char *reply, size_t cap, const char *cmd, const char *fmt, ...)
{
    char msg[MSG_MAX];
    int n = snprintf(msg, sizeof msg, "cmd=%s;", cmd);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof msg || send_msg(msg, (size_t)n) || recv_msg(reply, cap))
        return -1;
    char expect[64];
    snprintf(expect, sizeof expect, "%s-response", cmd);
    return cr_pmi_reply_ok(reply, ';', expect);
}

int cr_pmi2_init(cr_pmi_job *job, char *why, size_t whycap)
{
    memset(job, 0, sizeof *job);
    if (cr_pmi_wire_open(why, whycap))
        return -1;
    char msg[MSG_MAX], v[64];
    const char *fail = "did not answer the PMI-2 start-up exchange";
    const char *init = "cmd=init pmi_version=2 pmi_subversion=0\n";
    int version = 0, rc = 0;
    if (cr_pmi_wire_write(init, strlen(init)) || cr_pmi_wire_line(msg, sizeof msg) ||
        cr_pmi_field(msg, ' ', "cmd", v, sizeof v) || strcmp(v, "response_to_init"))
        goto lost;
    if (cr_pmi_field_int(msg, ' ', "pmi_version", &version) || version != 2 ||
        (cr_pmi_field_int(msg, ' ', "rc", &rc) == 0 && rc)) {
        fail = "does not speak PMI-2 (set COURIER_PMI=pmi1 to speak PMI-1 to it)";
        goto lost;
    }
    /* Who we are: PMI_ID where the server gave one (port mode), else PMI_RANK; both servers
     * read it as pmirank (Hydra's PMI_ID is the rank). */
    char who[320];
    const char *jid = getenv("PMI_JOBID");
    snprintf(who, sizeof who, "pmirank=%d;", cr_pmi_env_int(getenv("PMI_ID") ? "PMI_ID" : "PMI_RANK", 0));
    if (jid && *jid)
        snprintf(who + strlen(who), sizeof who - strlen(who), "pmijobid=%.200s;", jid);
    if (rpc(msg, sizeof msg, "fullinit", "%sthreaded=FALSE;", who) ||
        cr_pmi_field_int(msg, ';', "rank", &job->rank) || cr_pmi_field_int(msg, ';', "size", &job->size) ||
        job->size < 1 || job->rank < 0 || job->rank >= job->size)
        goto lost;
    if (cr_pmi_field_int(msg, ';', "appnum", &job->appnum) || job->appnum < 0)
        job->appnum = 0;
    if (rpc(msg, sizeof msg, "job-getid", "") || field(msg, "jobid", jobid, sizeof jobid))
        goto lost;
    job->universe_size = job->size;
    int u;
    if (rpc(msg, sizeof msg, "info-getjobattr", "key=universeSize;") == 0 && field(msg, "found", v, sizeof v) == 0 &&
        !strcmp(v, "TRUE") && field(msg, "value", v, sizeof v) == 0 && sscanf(v, "%d", &u) == 1 && u >= job->size)
        job->universe_size = u;
    cr_pmi_wire_timeout(0);
    return 0;
lost:
    snprintf(why, whycap, "the PMI server on %s %s", cr_pmi_wire_where(), fail);
    cr_pmi_wire_close();
    return -1;
}

bool cr_pmi2_connected(void)
{
    return cr_pmi_wire_up();
}

int cr_pmi2_put(const char *key, const char *value)
{
    char msg[MSG_MAX], reply[256];
    if (!*value || strchr(key, ';') || strchr(value, ';'))
        return -1;
    size_t at = append(msg, 0, sizeof msg, "cmd=kvs-put;key=");
    at = append(msg, at, sizeof msg, key);
    at = append(msg, at, sizeof msg, ";value=");
    at = append(msg, at, sizeof msg, value);
    at = append(msg, at, sizeof msg, ";");
    if (at >= sizeof msg || send_msg(msg, at) || recv_msg(reply, sizeof reply))
        return -1;
    return cr_pmi_reply_ok(reply, ';', "kvs-put-response");
}

int cr_pmi2_get(const char *key, char *value, size_t cap)
{
    char msg[MSG_MAX], found[8];
    if (strchr(key, ';'))
        return -1;
    int r = !strcmp(key, "PMI_process_mapping")
                ? rpc(msg, sizeof msg, "info-getjobattr", "key=%s;", key)
                : rpc(msg, sizeof msg, "kvs-get", "jobid=%s;srcid=-1;key=%s;", jobid, key);
    if (r || field(msg, "found", found, sizeof found) || strcmp(found, "TRUE"))
        return -1;
    return field(msg, "value", value, cap);
}

int cr_pmi2_barrier(void)
{
    char msg[256];
    return rpc(msg, sizeof msg, "kvs-fence", "");
}

int cr_pmi2_finalize(void)
{
    char msg[256];
    if (!cr_pmi_wire_up())
        return 0;
    int rc = rpc(msg, sizeof msg, "finalize", "");
    cr_pmi_wire_close();
    return rc;
}

void cr_pmi2_abort(int exitcode, const char *message)
{
    if (!cr_pmi_wire_up())
        return;
    /* pmi-2.0.txt names the fields isworld and msg (Slurm reads them); Hydra reads exitcode and
     * message instead, and takes its job's exit status from exitcode: both are sent. */
    char text[400], msg[1000];
    snprintf(text, sizeof text, "%s", message ? message : "");
    for (char *c = text; (c = strchr(c, ';')) != NULL;)
        *c = ',';
    int n = snprintf(msg, sizeof msg, "cmd=abort;isworld=TRUE;msg=%s;exitcode=%d;message=%s;", text, exitcode, text);
    send_msg(msg, (size_t)n);
    /* as in PMI-1: give the launcher a moment to end the job and name this process */
    cr_pmi_wire_timeout(2);
    (void)recv_msg(msg, sizeof msg);
}
