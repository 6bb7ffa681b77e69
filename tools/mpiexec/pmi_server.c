/* pmi_server.c: the PMI-1 wire protocol, server side: one key-value space for the job,
 * barriers, finalize and abort. Commands are lines of "cmd=NAME key=value ..." words.
 *
 * Nothing a rank sends is trusted. Every buffer is bounded (a command line, a reply, the
 * key-value space), one read per wake-up serves at most one buffer's worth of lines, and a rank
 * has at most one request outstanding: PMI-1 is strictly request and reply, so a command that
 * arrives before the previous one was answered (a second barrier_in, a pipelined flood) is an
 * error; only abort may come at any time. A rank breaks the protocol with a line that is too
 * long, holds a NUL or control byte, is not "key=value" words, lacks a field, exceeds a limit
 * announced by get_maxes, names an unknown command, or comes out of order (anything but init
 * first, a second init, anything after finalize): mpiexec then names the rank and shows what it
 * sent, closes its socket and ends the job. A socket that closes in the middle of a command, or
 * after init without finalize, ends the job too, unless the rank exits within a grace period
 * (a rank that died is then reported by how it died, which says more). */
#include "mpiexec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a rank whose PMI socket closed early may still run before that alone fails the job. */
#define PMI_CLOSE_GRACE 1.0
/* Lines of one mcmd=spawn ... endcmd block (spawn is refused, but its lines are read). */
#define MCMD_MAX_LINES 1024
/* Words in one command line (PMI-1 commands have at most 4). */
#define MAX_WORDS 32
/* What one key-value pair costs the key-value space besides its bytes (table slot, allocations). */
#define KVS_ENTRY_COST 64

/* ------------------------------------------------------------------ the key-value space */

/* An open-addressing hash table of strdup'ed keys and values; its total size (bytes of keys and
 * values plus KVS_ENTRY_COST per pair) is bounded by j->kvs_budget. */
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

/* 0, -1 when the pair would take the space past its budget, -2 when memory ran out. */
static int kvs_put(job *j, const char *key, const char *value)
{
    size_t klen = strlen(key), vlen = strlen(value);
    kv *s = table_cap ? slot(key) : NULL;
    bool exists = s && s->key;
    size_t old = exists ? strlen(s->value) : 0;
    size_t add = exists ? vlen : klen + vlen + KVS_ENTRY_COST;
    if (j->kvs_bytes - old + add > j->kvs_budget)
        return -1;
    if (!exists && 2 * (table_used + 1) > table_cap) {
        size_t cap = table_cap ? table_cap * 2 : 256;
        kv *grown = calloc(cap, sizeof *grown);
        if (!grown)
            return -2;
        kv *old_table = table;
        size_t old_cap = table_cap;
        table = grown;
        table_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old_table[i].key)
                *slot(old_table[i].key) = old_table[i];
        free(old_table);
        s = slot(key);
    }
    char *v = strdup(value);
    if (!v)
        return -2;
    if (exists) {
        free(s->value);
    } else {
        s->key = strdup(key);
        if (!s->key) {
            free(v);
            return -2;
        }
        table_used++;
    }
    s->value = v;
    j->kvs_bytes = j->kvs_bytes - old + add;
    return 0;
}

static const char *kvs_get(const char *key)
{
    if (!table_cap)
        return NULL;
    kv *s = slot(key);
    return s->key ? s->value : NULL;
}

int pmi_kvs_put(job *j, const char *key, const char *value)
{
    return kvs_put(j, key, value);
}

const char *pmi_kvs_get(const char *key)
{
    return kvs_get(key);
}

static char process_mapping[1024];

void pmi_server_init(job *j)
{
    if (j->world_size == 0)
        j->world_size = j->np;
    /* Far more than any MPI library puts (Courier: one short pair per node, or per rank without
     * a process mapping), small enough that a rank cannot exhaust mpiexec's memory. */
    j->kvs_budget = ((size_t)16 << 20) + (size_t)j->world_size * 4096;
    if (j->mapping) { /* a proxy: the front's layout and name */
        snprintf(process_mapping, sizeof process_mapping, "%s", j->mapping);
        return;
    }
    snprintf(j->kvsname, sizeof j->kvsname, "courier_%d", (int)getpid());
    /* Every rank on this host: node 0, one node, np ranks per node (MPICH's format). With
     * simulated nodes, blocks of consecutive ranks: the first np % K nodes one rank more. */
    int k = j->nodes, q = j->np / k, extra = j->np % k;
    if (k == 1)
        snprintf(process_mapping, sizeof process_mapping, "(vector,(0,1,%d))", j->np);
    else if (extra == 0)
        snprintf(process_mapping, sizeof process_mapping, "(vector,(0,%d,%d))", k, q);
    else
        snprintf(process_mapping, sizeof process_mapping, "(vector,(0,%d,%d),(%d,%d,%d))", extra, q + 1, extra,
                 k - extra, q);
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

/* ------------------------------------------------------------------ connection state */

/* A printable, bounded rendering of bytes a rank sent, for messages: bytes that are not
 * printable ASCII become \xNN, and a long line is cut (its length is then given). */
static void excerpt(const char *p, size_t n, char *out, size_t cap)
{
    size_t o = 0, i = 0;
    out[0] = '\0';
    for (; i < n && i < 80 && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        out[o] = '\0';
    }
    if (i < n)
        snprintf(out + o, cap - o, "... (%zu bytes)", n);
}

/* The rank no longer takes part in barriers (it finalized, or its socket closed). */
static void leave(job *j, rank_proc *r)
{
    if (r->pmi_left)
        return;
    r->pmi_left = true;
    j->pmi_live--;
    if (r->in_barrier) {
        r->in_barrier = false;
        j->barrier_count--;
    }
    pmi_check_barrier(j);
    if (j->up_fd >= 0 && j->pmi_live == 0)
        proxy_left(j); /* this host no longer holds barriers back */
}

static void disconnect(job *j, rank_proc *r)
{
    if (r->pmi_fd >= 0)
        close(r->pmi_fd);
    r->pmi_fd = -1;
    r->pmi_out_len = 0;
    leave(j, r);
}

/* The rank broke the protocol: name it and what it sent, stop listening to it, end the job. */
__attribute__((format(printf, 5, 6))) static void violation(job *j, rank_proc *r, const char *sent, size_t len,
                                                             const char *fmt, ...)
{
    char why[256], who[300], ex[400] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (sent)
        excerpt(sent, len, ex, sizeof ex);
    describe_rank(j, r, who, sizeof who);
    if (sent)
        job_fail(j, 1, "%s: broke the PMI-1 protocol: %s; it sent \"%s\"", who, why, ex);
    else
        job_fail(j, 1, "%s: broke the PMI-1 protocol: %s", who, why);
    disconnect(j, r); /* after job_fail: its leaving must not release a barrier */
    r->pmi_len = 0;
    r->mcmd_lines = 0;
    r->pmi_closed_at = 0;
}

void pmi_flush(job *j, rank_proc *r)
{
    (void)j;
    while (r->pmi_out_len && r->pmi_fd >= 0) {
        ssize_t w = send(r->pmi_fd, r->pmi_out, r->pmi_out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return; /* the event loop waits until the socket takes more */
        if (w <= 0) {
            r->pmi_out_len = 0; /* the rank is gone: that is handled when it is reaped */
            return;
        }
        r->pmi_out_len -= (size_t)w;
        memmove(r->pmi_out, r->pmi_out + w, r->pmi_out_len);
    }
}

/* Queues a reply and writes what the socket takes now; never blocks. A rank has at most one
 * request and one abort outstanding, so the queue cannot overflow; if it somehow did, the rank
 * is not reading its replies and loses them. */
__attribute__((format(printf, 3, 4))) static void reply(job *j, rank_proc *r, const char *fmt, ...)
{
    if (r->pmi_fd < 0)
        return;
    char buf[PMI_REPLY_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf || (size_t)n > sizeof r->pmi_out - r->pmi_out_len)
        return;
    memcpy(r->pmi_out + r->pmi_out_len, buf, (size_t)n);
    r->pmi_out_len += (size_t)n;
    pmi_flush(j, r);
}

void pmi_check_barrier(job *j)
{
    /* A failing job's ranks are being stopped: none is let through a barrier any more. */
    if (j->failing || j->barrier_count == 0 || j->barrier_count < j->pmi_live)
        return;
    if (j->up_fd >= 0) { /* a proxy: every host must be in; the front says when (W_BOUT) */
        if (!j->up_barrier)
            proxy_barrier(j);
        return;
    }
    pmi_barrier_release(j);
}

void pmi_barrier_release(job *j)
{
    if (j->failing)
        return;
    j->barrier_count = 0;
    for (int i = 0; i < j->np; i++) {
        if (j->ranks[i].in_barrier) {
            j->ranks[i].in_barrier = false;
            reply(j, &j->ranks[i], "cmd=barrier_out\n");
        }
    }
}

/* ------------------------------------------------------------------ parsing */

typedef struct word {
    const char *key, *val;
    size_t klen, vlen;
} word;

typedef struct cmdline {
    word w[MAX_WORDS];
    int n;
} cmdline;

/* Only printable bytes (UTF-8 included) may appear in a line. Returns NULL or what is wrong. */
static const char *check_bytes(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c == 0)
            return "a NUL byte in a command line";
        if (c < 0x20 || c == 0x7f)
            return "a control character in a command line";
    }
    return NULL;
}

/* Splits a line into key=value words (separated by spaces; a value may hold '='). Returns NULL,
 * or what is wrong with the line. */
static const char *parse(const char *line, size_t len, cmdline *c)
{
    const char *bad = check_bytes(line, len);
    if (bad)
        return bad;
    c->n = 0;
    size_t i = 0;
    for (;;) {
        while (i < len && line[i] == ' ')
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && line[i] != ' ')
            i++;
        const char *eq = memchr(line + start, '=', i - start);
        if (!eq)
            return "a word that is not key=value";
        if (eq == line + start)
            return "a field with an empty name";
        if (c->n == MAX_WORDS)
            return "more than 32 fields in one command";
        word *w = &c->w[c->n++];
        *w = (word){line + start, eq + 1, (size_t)(eq - (line + start)), (size_t)(line + i - (eq + 1))};
        for (int k = 0; k < c->n - 1; k++)
            if (c->w[k].klen == w->klen && !memcmp(c->w[k].key, w->key, w->klen))
                return "a field given twice in one command";
    }
    return c->n ? NULL : "an empty line";
}

static const word *find(const cmdline *c, const char *key)
{
    size_t klen = strlen(key);
    for (int k = 0; k < c->n; k++)
        if (c->w[k].klen == klen && !memcmp(c->w[k].key, key, klen))
            return &c->w[k];
    return NULL;
}

/* Copies a word's value; false when it does not fit in cap (with its NUL). */
static bool value_of(const word *w, char *out, size_t cap)
{
    if (w->vlen >= cap)
        return false;
    memcpy(out, w->val, w->vlen);
    out[w->vlen] = '\0';
    return true;
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Decodes %XX escapes (as Courier's PMI client writes the abort message), then turns control
 * characters into spaces: the message goes to a terminal. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '%' && is_hex(s[1]) && is_hex(s[2])) {
            char hex[3] = {s[1], s[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

static void sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

/* ------------------------------------------------------------------ commands */

static void serve_abort(job *j, rank_proc *r, const cmdline *c)
{
    if (r->aborted) /* a second abort adds nothing: the job is already ending */
        return;
    long code = 1;
    const word *w = find(c, "exitcode");
    char num[32];
    if (w && value_of(w, num, sizeof num) && num[0]) {
        char *end;
        errno = 0;
        long v = strtol(num, &end, 10);
        if (!*end && !errno && v >= -2147483647L - 1 && v <= 2147483647L)
            code = v;
    }
    r->aborted = true;
    r->abort_code = (int)code;
    r->abort_msg[0] = '\0';
    w = find(c, "message");
    if (w) {
        size_t n = w->vlen < sizeof r->abort_msg ? w->vlen : sizeof r->abort_msg - 1;
        memcpy(r->abort_msg, w->val, n);
        r->abort_msg[n] = '\0';
        unescape(r->abort_msg);
        sanitize(r->abort_msg);
    }
    reply(j, r, "cmd=abort_ack rc=0\n");
    /* A job that aborted never ends with status 0, whatever the code (MPI_Abort(comm, 0), 256). */
    int status = (int)((unsigned)code & 0xff);
    if (status == 0)
        status = 1;
    char who[300];
    describe_rank(j, r, who, sizeof who);
    if (r->abort_msg[0])
        job_fail(j, status, "%s: %s", who, r->abort_msg);
    else
        job_fail(j, status, "%s: called MPI_Abort with error code %d", who, r->abort_code);
}

/* Reads `kvsname=` (optional, but ours when given) and `key=`; false after a violation or a
 * refused reply. */
static bool key_args(job *j, rank_proc *r, const char *line, size_t len, const cmdline *c, const char *cmd,
                     char *key)
{
    const word *kw = find(c, "key");
    if (!kw || kw->vlen == 0) {
        violation(j, r, line, len, "'%s' without a key", cmd);
        return false;
    }
    if (kw->vlen >= PMI_KEY_MAX) {
        violation(j, r, line, len, "'%s' with a key of %zu bytes (get_maxes says at most %d)", cmd, kw->vlen,
                  PMI_KEY_MAX - 1);
        return false;
    }
    value_of(kw, key, PMI_KEY_MAX);
    const word *kvs = find(c, "kvsname");
    if (kvs && (kvs->vlen != strlen(j->kvsname) || memcmp(kvs->val, j->kvsname, kvs->vlen))) {
        reply(j, r, "cmd=%s_result rc=-1 msg=unknown_kvsname\n", cmd);
        return false;
    }
    return true;
}

/* Serves one complete line (NUL-terminated where its newline was). `pending` says a request of
 * this rank is still unanswered, or this line arrived before the previous one was answered. */
static void serve_line(job *j, rank_proc *r, char *line, size_t len, bool *pending)
{
    if (r->mcmd_lines) { /* inside mcmd=spawn ... endcmd: read to its end, then refuse it */
        const char *bad = check_bytes(line, len);
        if (bad) {
            violation(j, r, line, len, "%s", bad);
        } else if (len == 6 && !memcmp(line, "endcmd", 6)) {
            r->mcmd_lines = 0;
            *pending = true;
            reply(j, r, "cmd=spawn_result rc=-1 errmsg=spawn_is_not_supported_by_this_mpiexec\n");
        } else if (++r->mcmd_lines > MCMD_MAX_LINES) {
            violation(j, r, line, len, "an mcmd=spawn block of more than %d lines", MCMD_MAX_LINES);
        }
        return;
    }
    cmdline c;
    const char *bad = parse(line, len, &c);
    if (bad) {
        violation(j, r, line, len, "%s", bad);
        return;
    }
    const word *cw = find(&c, "cmd");
    if (!cw) {
        const word *m = find(&c, "mcmd");
        if (m && m->vlen == 5 && !memcmp(m->val, "spawn", 5) && r->pmi_started && !r->finalized && !*pending) {
            r->mcmd_lines = 1;
            return;
        }
        if (m)
            violation(j, r, line, len, "mcmd=%.*s out of place", (int)m->vlen, m->val);
        else
            violation(j, r, line, len, "a line without a cmd= field");
        return;
    }
    char cmd[32];
    if (!value_of(cw, cmd, sizeof cmd) || !cmd[0]) {
        violation(j, r, line, len, "an unknown command");
        return;
    }
    if (!strcmp(cmd, "abort")) { /* allowed at any time: it is how a failing rank says why */
        *pending = true;
        serve_abort(j, r, &c);
        return;
    }
    if (*pending) {
        violation(j, r, line, len, "'%s' before the reply to its previous command (PMI-1 takes one at a time)", cmd);
        return;
    }
    if (r->finalized) {
        violation(j, r, line, len, "'%s' after finalize", cmd);
        return;
    }
    if (!r->pmi_started && strcmp(cmd, "init")) {
        violation(j, r, line, len, "'%s' before init", cmd);
        return;
    }
    *pending = true;
    char key[PMI_KEY_MAX], value[PMI_VAL_MAX];
    if (!strcmp(cmd, "init")) {
        const word *v = find(&c, "pmi_version");
        if (r->pmi_started) {
            violation(j, r, line, len, "a second init");
        } else if (v && !(v->vlen == 1 && v->val[0] == '1')) {
            violation(j, r, line, len, "init for PMI version %.*s (this mpiexec serves PMI-1)", (int)v->vlen, v->val);
        } else {
            r->pmi_started = true;
            reply(j, r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
        }
    } else if (!strcmp(cmd, "get_maxes")) {
        reply(j, r, "cmd=maxes rc=0 kvsname_max=%zu keylen_max=%d vallen_max=%d\n", sizeof j->kvsname, PMI_KEY_MAX,
              PMI_VAL_MAX);
    } else if (!strcmp(cmd, "get_appnum")) {
        reply(j, r, "cmd=appnum rc=0 appnum=0\n");
    } else if (!strcmp(cmd, "get_my_kvsname")) {
        reply(j, r, "cmd=my_kvsname rc=0 kvsname=%s\n", j->kvsname);
    } else if (!strcmp(cmd, "get_universe_size")) {
        reply(j, r, "cmd=universe_size rc=0 size=%d\n", j->world_size);
    } else if (!strcmp(cmd, "put")) {
        const word *vw = find(&c, "value");
        if (!vw) {
            violation(j, r, line, len, "'put' without a value");
            return;
        }
        if (vw->vlen >= PMI_VAL_MAX) {
            violation(j, r, line, len, "'put' with a value of %zu bytes (get_maxes says at most %d)", vw->vlen,
                      PMI_VAL_MAX - 1);
            return;
        }
        if (!key_args(j, r, line, len, &c, cmd, key))
            return;
        value_of(vw, value, sizeof value);
        int rc = kvs_put(j, key, value);
        if (rc == 0 && j->up_fd >= 0)
            proxy_put(j, key, value);
        if (rc == -1) {
            violation(j, r, line, len, "more than %zu bytes put into the key-value space", j->kvs_budget);
            return;
        }
        if (rc == -2) {
            char who[300];
            describe_rank(j, r, who, sizeof who);
            job_fail(j, 1, "out of memory for the PMI key-value space (put by %s)", who);
            disconnect(j, r);
            return;
        }
        reply(j, r, "cmd=put_result rc=0 msg=success\n");
    } else if (!strcmp(cmd, "get")) {
        if (!key_args(j, r, line, len, &c, cmd, key))
            return;
        const char *v = !strcmp(key, "PMI_process_mapping") ? process_mapping : kvs_get(key);
        if (!v && j->up_fd >= 0)
            proxy_get(j, r, key); /* another host may have put it: the front answers */
        else
            pmi_get_reply(j, r, key, v);
    } else if (!strcmp(cmd, "barrier_in")) {
        r->in_barrier = true;
        j->barrier_count++;
        pmi_check_barrier(j);
    } else if (!strcmp(cmd, "finalize")) {
        r->finalized = true;
        reply(j, r, "cmd=finalize_ack rc=0\n");
        leave(j, r);
    } else if (!strcmp(cmd, "publish_name") || !strcmp(cmd, "unpublish_name") || !strcmp(cmd, "lookup_name")) {
        /* PMI-1 commands this launcher does not offer: a refusal, not a protocol error. */
        reply(j, r, "cmd=%.*s_result rc=-1 msg=not_supported_by_this_mpiexec\n", (int)(strchr(cmd, '_') - cmd), cmd);
    } else if (!strcmp(cmd, "getbyidx")) {
        reply(j, r, "cmd=getbyidx_results rc=-2 reason=not_supported_by_this_mpiexec\n");
    } else {
        violation(j, r, line, len, "an unknown command '%s'", cmd);
    }
}

/* ------------------------------------------------------------------ the socket */

/* End of file (or an error) on the rank's socket. Closing before init (a program that is not an
 * MPI process) or after finalize is fine. Otherwise the rank is most likely dying: it stays
 * counted in barriers until it is reaped (or judged after the grace period), so that no other
 * rank is let through a barrier early and trips over what the dead one never published. */
static void closed(job *j, rank_proc *r)
{
    bool partial = r->pmi_len > 0 || r->mcmd_lines > 0;
    bool suspect = r->running && !j->failing && !r->aborted && (partial || (r->pmi_started && !r->finalized));
    if (suspect || !r->running) { /* not reaped yet, or being reaped: pmi_release does the rest */
        close(r->pmi_fd);
        r->pmi_fd = -1;
        r->pmi_out_len = 0;
        if (suspect)
            r->pmi_closed_at = now_seconds();
        return;
    }
    disconnect(j, r);
}

void pmi_get_reply(job *j, rank_proc *r, const char *key, const char *value)
{
    if (value)
        reply(j, r, "cmd=get_result rc=0 msg=success value=%s\n", value);
    else
        reply(j, r, "cmd=get_result rc=-1 msg=key_%s_not_found\n", key);
}

int pmi_serve(job *j, rank_proc *r)
{
    if (r->pmi_fd < 0)
        return -1;
    ssize_t n = read(r->pmi_fd, r->pmi_in + r->pmi_len, sizeof r->pmi_in - r->pmi_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) {
        closed(j, r);
        return -1;
    }
    r->pmi_len += (size_t)n;
    /* Bytes that came before the reply to an earlier request were sent too early. */
    bool pending = r->in_barrier || r->pmi_out_len > 0 || r->pmi_early || r->awaiting_get;
    size_t off = 0;
    char *nl;
    while ((nl = memchr(r->pmi_in + off, '\n', r->pmi_len - off)) != NULL) {
        size_t len = (size_t)(nl - (r->pmi_in + off));
        *nl = '\0';
        serve_line(j, r, r->pmi_in + off, len, &pending);
        if (r->pmi_fd < 0) /* a protocol error closed it */
            return -1;
        off += len + 1;
    }
    r->pmi_len -= off;
    memmove(r->pmi_in, r->pmi_in + off, r->pmi_len);
    r->pmi_early = pending && r->pmi_len > 0 && !r->mcmd_lines;
    if (r->pmi_len == sizeof r->pmi_in) {
        violation(j, r, r->pmi_in, r->pmi_len, "a line longer than %d bytes", PMI_LINE_MAX - 1);
        return -1;
    }
    return 1;
}

void pmi_drain(job *j, rank_proc *r)
{
    /* Bounded: a child of the rank may hold the socket open and keep writing. */
    for (int k = 0; k < 16 && r->pmi_fd >= 0; k++)
        if (pmi_serve(j, r) <= 0)
            break;
    if (r->pmi_fd >= 0)
        close(r->pmi_fd);
    r->pmi_fd = -1;
    r->pmi_out_len = 0;
    r->pmi_closed_at = 0;
}

void pmi_release(job *j, rank_proc *r)
{
    leave(j, r);
    pmi_check_barrier(j);
}

void pmi_partial(rank_proc *r, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (r->mcmd_lines)
        snprintf(buf, cap, "an mcmd=spawn block without its endcmd");
    else if (r->pmi_len)
        excerpt(r->pmi_in, r->pmi_len, buf, cap);
}

double pmi_check_closed(job *j, double now)
{
    double next = 0;
    for (int i = 0; i < j->np; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->pmi_closed_at <= 0)
            continue;
        if (!r->running || j->failing) { /* reaped (and judged) already, or the job is ending anyway */
            r->pmi_closed_at = 0;
            leave(j, r);
            continue;
        }
        double due = r->pmi_closed_at + PMI_CLOSE_GRACE;
        if (now < due) {
            next = next == 0 || due < next ? due : next;
            continue;
        }
        r->pmi_closed_at = 0;
        char who[300], part[400];
        describe_rank(j, r, who, sizeof who);
        pmi_partial(r, part, sizeof part);
        if (part[0])
            job_fail(j, 1, "%s: broke the PMI-1 protocol: closed its PMI connection in the middle of a command "
                           "and kept running; it sent \"%s\"", who, part);
        else
            job_fail(j, 1, "%s: closed its PMI connection without calling MPI_Finalize, and kept running", who);
        leave(j, r);
    }
    return next;
}
