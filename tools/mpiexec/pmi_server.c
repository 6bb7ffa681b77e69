/* pmi_server.c: the PMI-1 wire protocol, server side: one key-value space for the job,
 * barriers, finalize and abort. Commands are lines of "cmd=NAME key=value ..." pairs. */
#include "mpiexec.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The key-value space: an open-addressing hash table of strdup'ed keys and values. */
typedef struct kv {
    char *key;
    char *value;
} kv;
static kv *table;
static size_t table_cap, table_used;

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211u;
    return h;
}

static kv *slot(const char *key)
{
    size_t i = hash(key) & (table_cap - 1);
    while (table[i].key && strcmp(table[i].key, key) != 0)
        i = (i + 1) & (table_cap - 1);
    return &table[i];
}

static void kvs_put(const char *key, const char *value)
{
    if (2 * (table_used + 1) > table_cap) {
        kv *old = table;
        size_t old_cap = table_cap;
        table_cap = table_cap ? table_cap * 2 : 256;
        table = calloc(table_cap, sizeof *table);
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].key)
                *slot(old[i].key) = old[i];
        free(old);
    }
    kv *s = slot(key);
    if (s->key) {
        free(s->value);
    } else {
        s->key = strdup(key);
        table_used++;
    }
    s->value = strdup(value);
}

static const char *kvs_get(const char *key)
{
    if (!table_cap)
        return NULL;
    kv *s = slot(key);
    return s->key ? s->value : NULL;
}

static char process_mapping[128];

void pmi_server_init(job *j)
{
    snprintf(j->kvsname, sizeof j->kvsname, "courier_%d", (int)getpid());
    /* Every rank on this host: node 0, one node, np ranks per node (MPICH's format). */
    snprintf(process_mapping, sizeof process_mapping, "(vector,(0,1,%d))", j->np);
}

void pmi_server_free(void)
{
    for (size_t i = 0; i < table_cap; i++) {
        free(table[i].key);
        free(table[i].value);
    }
    free(table);
    table = NULL;
    table_cap = table_used = 0;
}

static void reply(rank_proc *r, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || r->pmi_fd < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(r->pmi_fd, p, (size_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) { /* the rank is slow to read: wait for room */
            struct pollfd pfd = {.fd = r->pmi_fd, .events = POLLOUT};
            if (poll(&pfd, 1, 1000) > 0)
                continue;
            return;
        }
        if (w <= 0)
            return; /* the rank is gone: its exit is handled when it is reaped */
        p += w;
        n -= (int)w;
    }
}

/* Copies the value of `key=` in a command line (values end at a space). */
static bool field(const char *line, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p++) {
        if ((p == line || p[-1] == ' ') && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn(v, " ");
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

/* %XX escapes, as Courier's PMI client writes the abort message. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '%' && s[1] && s[2]) {
            char hex[3] = {s[1], s[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

static int live_ranks(job *j)
{
    int n = 0;
    for (int i = 0; i < j->np; i++)
        if (j->ranks[i].running && !j->ranks[i].finalized)
            n++;
    return n;
}

void pmi_check_barrier(job *j)
{
    if (j->barrier_count == 0 || j->barrier_count < live_ranks(j))
        return;
    j->barrier_count = 0;
    for (int i = 0; i < j->np; i++) {
        if (j->ranks[i].in_barrier) {
            j->ranks[i].in_barrier = false;
            reply(&j->ranks[i], "cmd=barrier_out\n");
        }
    }
}

static void serve_line(job *j, rank_proc *r, char *line)
{
    char cmd[64], key[512], value[1024];
    if (!field(line, "cmd", cmd, sizeof cmd)) {
        if (field(line, "mcmd", cmd, sizeof cmd))
            reply(r, "cmd=spawn_result rc=-1 errmsg=spawn_is_not_supported_by_this_mpiexec\n");
        return;
    }
    if (!strcmp(cmd, "init")) {
        r->pmi_started = true;
        reply(r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    } else if (!strcmp(cmd, "get_maxes")) {
        reply(r, "cmd=maxes rc=0 kvsname_max=%zu keylen_max=%zu vallen_max=%zu\n", sizeof j->kvsname,
              sizeof key, sizeof value);
    } else if (!strcmp(cmd, "get_appnum")) {
        reply(r, "cmd=appnum rc=0 appnum=0\n");
    } else if (!strcmp(cmd, "get_my_kvsname")) {
        reply(r, "cmd=my_kvsname rc=0 kvsname=%s\n", j->kvsname);
    } else if (!strcmp(cmd, "get_universe_size")) {
        reply(r, "cmd=universe_size rc=0 size=%d\n", j->np);
    } else if (!strcmp(cmd, "put")) {
        if (!field(line, "key", key, sizeof key) || !field(line, "value", value, sizeof value)) {
            reply(r, "cmd=put_result rc=-1 msg=missing_key_or_value\n");
            return;
        }
        kvs_put(key, value);
        reply(r, "cmd=put_result rc=0 msg=success\n");
    } else if (!strcmp(cmd, "get")) {
        const char *v = NULL;
        if (field(line, "key", key, sizeof key))
            v = !strcmp(key, "PMI_process_mapping") ? process_mapping : kvs_get(key);
        if (v)
            reply(r, "cmd=get_result rc=0 msg=success value=%s\n", v);
        else
            reply(r, "cmd=get_result rc=-1 msg=key_%s_not_found\n", key);
    } else if (!strcmp(cmd, "barrier_in")) {
        if (!r->in_barrier) {
            r->in_barrier = true;
            j->barrier_count++;
        }
        pmi_check_barrier(j);
    } else if (!strcmp(cmd, "finalize")) {
        r->finalized = true;
        reply(r, "cmd=finalize_ack rc=0\n");
        pmi_check_barrier(j);
    } else if (!strcmp(cmd, "abort")) {
        char code[32] = "1";
        field(line, "exitcode", code, sizeof code);
        r->aborted = true;
        r->abort_code = atoi(code);
        if (field(line, "message", r->abort_msg, sizeof r->abort_msg))
            unescape(r->abort_msg);
        reply(r, "cmd=abort_ack rc=0\n");
        char who[256];
        describe_rank(j, r, who, sizeof who);
        if (r->abort_msg[0])
            job_fail(j, r->abort_code & 0xff, "%s: %s", who, r->abort_msg);
        else
            job_fail(j, r->abort_code & 0xff, "%s: called MPI_Abort with error code %d", who, r->abort_code);
    } else {
        reply(r, "cmd=%s rc=-1 msg=unknown_command\n", cmd);
    }
}

int pmi_serve(job *j, rank_proc *r)
{
    for (;;) {
        ssize_t n = read(r->pmi_fd, r->pmi_in + r->pmi_len, sizeof r->pmi_in - 1 - r->pmi_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0) {
            close(r->pmi_fd);
            r->pmi_fd = -1;
            return -1;
        }
        r->pmi_len += (size_t)n;
        r->pmi_in[r->pmi_len] = '\0';
        char *start = r->pmi_in, *nl;
        while ((nl = strchr(start, '\n')) != NULL) {
            *nl = '\0';
            serve_line(j, r, start);
            start = nl + 1;
        }
        r->pmi_len -= (size_t)(start - r->pmi_in);
        memmove(r->pmi_in, start, r->pmi_len);
        if (r->pmi_len == sizeof r->pmi_in - 1) /* a line longer than any command: drop it */
            r->pmi_len = 0;
    }
}
