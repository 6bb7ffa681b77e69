/* pmi1.c: the PMI-1 wire protocol client ("cmd=... key=value ...\n" lines over the socket of
 * wire.c), spoken to Courier's mpiexec, MPICH's Hydra, and Slurm's pmi2 plugin (which takes
 * PMI-1 lines too). Rank and size come from PMI_RANK/PMI_SIZE, or from the server's "cmd=set"
 * lines after an "initack" when PMI_ID is given (PMI_PORT mode). */
#include "backends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char kvsname[256];

static int field(const char *line, const char *key, char *out, size_t cap)
{
    return cr_pmi_field(line, ' ', key, out, cap);
}

static int field_int(const char *line, const char *key, int *out)
{
    return cr_pmi_field_int(line, ' ', key, out);
}

/* Sends one command and reads the reply whose cmd is `expect`. */
static int rpc(const char *cmd, const char *expect, char *reply, size_t cap)
{
    if (cr_pmi_wire_write(cmd, strlen(cmd)) || cr_pmi_wire_line(reply, cap))
        return -1;
    return cr_pmi_reply_ok(reply, ' ', expect);
}

int cr_pmi1_init(cr_pmi_job *job, char *why, size_t whycap)
{
    memset(job, 0, sizeof *job);
    if (cr_pmi_wire_open(why, whycap))
        return -1;
    char line[1024];
    job->rank = cr_pmi_env_int("PMI_RANK", 0);
    job->size = cr_pmi_env_int("PMI_SIZE", 1);
    const char *id = getenv("PMI_ID");
    if (id && *id) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "cmd=initack pmiid=%s\n", id);
        if (rpc(cmd, "initack", line, sizeof line))
            goto lost;
        for (int i = 0; i < 3; i++) { /* cmd=set size=, rank=, debug= */
            int v;
            if (cr_pmi_wire_line(line, sizeof line))
                goto lost;
            if (field_int(line, "size", &v) == 0)
                job->size = v;
            if (field_int(line, "rank", &v) == 0)
                job->rank = v;
        }
    }
    if (rpc("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", line, sizeof line))
        goto lost;
    if (rpc("cmd=get_appnum\n", "appnum", line, sizeof line) || field_int(line, "appnum", &job->appnum))
        goto lost;
    if (rpc("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof line) ||
        field(line, "kvsname", kvsname, sizeof kvsname))
        goto lost;
    job->universe_size = job->size;
    if (rpc("cmd=get_universe_size\n", "universe_size", line, sizeof line) == 0)
        field_int(line, "size", &job->universe_size);
    cr_pmi_wire_timeout(0);
    return 0;
lost:
    snprintf(why, whycap, "the PMI server on %s did not answer the PMI-1 start-up exchange",
             cr_pmi_wire_where());
    cr_pmi_wire_close();
    return -1;
}

bool cr_pmi1_courier_launcher(void)
{
    return cr_pmi_wire_up() && !strncmp(kvsname, "courier_", 8); /* as Courier's mpiexec names it */
}

bool cr_pmi1_connected(void)
{
    return cr_pmi_wire_up();
}

int cr_pmi1_put(const char *key, const char *value)
{
    char cmd[1536], line[256];
    snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, value);
    return rpc(cmd, "put_result", line, sizeof line);
}

int cr_pmi1_get(const char *key, char *value, size_t cap)
{
    char cmd[512], line[1536];
    snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=%s\n", kvsname, key);
    if (rpc(cmd, "get_result", line, sizeof line))
        return -1;
    return field(line, "value", value, cap);
}

int cr_pmi1_barrier(void)
{
    char line[256];
    return rpc("cmd=barrier_in\n", "barrier_out", line, sizeof line);
}

int cr_pmi1_finalize(void)
{
    char line[256];
    if (!cr_pmi_wire_up())
        return 0;
    int rc = rpc("cmd=finalize\n", "finalize_ack", line, sizeof line);
    cr_pmi_wire_close();
    return rc;
}

void cr_pmi1_abort(int exitcode, const char *message)
{
    if (!cr_pmi_wire_up())
        return;
    /* The message travels as one token: bytes that would end it are %XX-escaped. */
    char cmd[700];
    int n = snprintf(cmd, sizeof cmd, "cmd=abort exitcode=%d message=", exitcode);
    for (const char *m = message ? message : ""; *m && n < (int)sizeof cmd - 5; m++) {
        if (*m == ' ' || *m == '\n' || *m == '=' || *m == '%' || (unsigned char)*m < 32)
            n += snprintf(cmd + n, sizeof cmd - (size_t)n, "%%%02X", (unsigned char)*m);
        else
            cmd[n++] = *m;
    }
    cmd[n++] = '\n';
    cr_pmi_wire_write(cmd, (size_t)n);
    /* Wait briefly for the launcher to act on it: it stops the other processes and reports
     * this one as the cause, rather than reporting an early exit. */
    char line[64];
    cr_pmi_wire_timeout(2);
    (void)cr_pmi_wire_line(line, sizeof line);
}
