/* pt2pt.c: matching and the message protocols (see pt2pt.h).
 *
 * Matching (the queues of posted receives and unexpected messages) is in match.c.
 *
 * Sending: a frame goes straight to the transport when nothing waits before it for the same
 * destination and the transport has room; otherwise it joins that destination's FIFO of
 * pending frames, which the progress hook drains in order.
 *
 * At MPI_THREAD_MULTIPLE, small contiguous sends (MPI_Send, MPI_Isend and their ready forms)
 * run outside the critical section (cr_pt2pt_send_quick), so threads sending to different
 * processes run in parallel. What such a send touches, the destination's send queue, its credit
 * and the transport's way there, is the destination's send lock's (send_locks); code inside
 * the section takes that lock too whenever it touches them. Everything else stays the section's. */
#include "pt2pt.h"

#include "match.h"

#include "core/config.h"
#include "core/error.h"
#include "core/pvar.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "xport/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t eager_max, long_max, unexp_budget;
CR_TUNABLE_EX(unexp_budget, COURIER_UNEXPECTED_BUDGET, CR_TUNE_SIZE, "8M", NULL, 0, (int64_t)1 << 40,
              "bytes one process may send eagerly to another before that one's receives take them (with 64 "
              "bytes counted per message): past it, sends to that process use rendezvous until receives catch up, "
              "so a receiver's memory for early messages stays below this much per sender");
CR_TUNABLE_EX(long_max, COURIER_LONG_EAGER_MAX, CR_TUNE_SIZE, "256K", NULL, 0, 1 << 30,
              "largest message sent as several frames without a handshake (long eager); larger ones, and "
              "synchronous sends above COURIER_EAGER_MAX, use rendezvous");
CR_TUNABLE_EX(eager_max, COURIER_EAGER_MAX, CR_TUNE_SIZE, "16K", NULL, 0, 1 << 30,
              "largest message sent eagerly in one frame (copied through the transport); larger ones go as "
              "long eager or by rendezvous (limited by the transport's frame size)");

_Static_assert(sizeof(cr_penv) == sizeof(cr_xenv), "the pt2pt envelope fills a transport envelope");

/* ----------------------------------------------------------------- per-destination send locks */

/* Per world rank, at MPI_THREAD_MULTIPLE only: OQ.head/tail[dst], CR.used[dst] and the
 * transport's sends to dst (see the top of the file). Never held across send_done (a
 * completion may send again) or while taking another. */
static cr_spin *send_locks;

static CR_ALWAYS_INLINE void dst_lock(int dst)
{
    if (CR_UNLIKELY(cr_thread_multiple))
        cr_spin_lock(&send_locks[dst]);
}

static CR_ALWAYS_INLINE void dst_unlock(int dst)
{
    if (CR_UNLIKELY(cr_thread_multiple))
        cr_spin_unlock(&send_locks[dst]);
}

/* ----------------------------------------------------------------- credits */

/* What an eager or long-eager message of `bytes` counts against the budget: its data and a
 * small charge for the record that holds it (so empty messages are bounded too). */
#define CREDIT_PER_MESSAGE 64
static inline uint64_t charge_of(uint64_t bytes)
{
    return bytes + CREDIT_PER_MESSAGE;
}

static struct {
    uint64_t *used;      /* per world rank: bytes sent eagerly there and not given back */
    uint64_t *taken;     /* per world rank: bytes of its messages our receives took, to give back */
    int returns_waiting; /* ranks whose CREDIT frame found no room */
} CR;

/* Counts an eager send of `bytes` to `dst` against its budget; false when over it (the caller
 * uses rendezvous). */
static inline bool credit_take(int dst, uint64_t bytes)
{
    uint64_t c = charge_of(bytes);
    if (CR_UNLIKELY(CR.used[dst] + c > (uint64_t)unexp_budget))
        return false;
    CR.used[dst] += c;
    return true;
}

static inline void credit_refund(int dst, uint64_t bytes)
{
    CR.used[dst] -= charge_of(bytes);
}

static bool credit_send(int src)
{
    cr_penv env = {.type = P_CREDIT, .a = CR.taken[src]};
    dst_lock(src);
    bool sent = cr_xport_send(src, CR_XCLASS_PT2PT, (cr_xenv *)&env, NULL, 0, NULL, 0);
    dst_unlock(src);
    if (!sent)
        return false;
    CR.taken[src] = 0;
    return true;
}

/* A receive here took (or a drop discarded) an eagerly sent message of `bytes` from world rank
 * `src`: its memory is free again. Given back in batches of a quarter of the budget, and by a
 * frame of its own straight to the transport (out of turn, which does not matter for credits;
 * a full ring leaves it for the progress hook), so credits never wait in a send queue. */
static CR_ALWAYS_INLINE void credit_give(int src, uint64_t bytes) /* (on every eager message received) */
{
    uint64_t before = CR.taken[src];
    CR.taken[src] += charge_of(bytes);
    if (CR.taken[src] >= (uint64_t)unexp_budget / 4 && before < (uint64_t)unexp_budget / 4 && !credit_send(src))
        CR.returns_waiting++;
}

static int credit_progress(void)
{
    int sent = 0;
    for (int r = 0; r < cr_rt.size && CR.returns_waiting; r++)
        if (CR.taken[r] >= (uint64_t)unexp_budget / 4 && credit_send(r))
            CR.returns_waiting--, sent++;
    return sent;
}

/* ----------------------------------------------------------------- sending frames */

/* The payload of a control frame: RTS carries the sender's data address (one word), SPLIT the
 * receiver's buffer, and the offset and length of the part the sender writes (three). */
typedef struct ctl_words {
    uint64_t w[3];
} ctl_words;

/* A frame waiting for room towards its destination. `req`, when set, is a send whose protocol
 * step this is: its data is read when the frame finally goes. */
typedef struct outq_item {
    struct outq_item *next;
    cr_penv env;
    cr_request *req;
    ctl_words words; /* RTS, SPLIT payload */
} outq_item;

static struct {
    outq_item **head, **tail; /* per world rank */
    int busy;                 /* destinations with a non-empty queue */
} OQ;

static inline bool oq_empty(int dst)
{
    return OQ.head[dst] == NULL;
}

static void oq_push(int dst, const cr_penv *env, cr_request *req, const ctl_words *words)
{
    outq_item *it = malloc(sizeof *it);
    if (!it) {
        fprintf(stderr, "Courier: out of memory queueing a message\n");
        abort();
    }
    *it = (outq_item){NULL, *env, req, words ? *words : (ctl_words){{0}}};
    if (OQ.head[dst])
        OQ.tail[dst]->next = it;
    else {
        OQ.head[dst] = it;
        OQ.busy++;
    }
    OQ.tail[dst] = it;
}

/* Whether a message of `bytes` goes eagerly in one frame: within the eager limit, and the
 * transport would rather not cut it in pieces (cr_xport_stream_frame: rings copy the pieces of
 * a message of a few KiB at both ends at once, so it goes long eager). A message that cannot
 * go long eager stays eager up to the largest frame: a synchronous send (it needs an answer,
 * and long eager has none), one above the long-eager limit (COURIER_LONG_EAGER_MAX, 0 when
 * turned off), so that turning long eager off never sends by rendezvous what was eager. */
static bool eager_fits(int dst, uint64_t bytes, bool sync)
{
    if (bytes > (uint64_t)eager_max)
        return false;
    bool pieces = !sync && bytes <= (uint64_t)long_max;
    return bytes <= (pieces ? cr_xport_stream_frame(dst, bytes) : cr_xport_max_frame(dst));
}

/* A piece of a non-contiguous send buffer, packed by the transport straight into the frame. */
typedef struct dt_gather {
    cr_xgather g;
    const cr_request *r;
    uint64_t off; /* packed bytes of the message before the next piece */
} dt_gather;

CR_PVAR_DEFINE(rndv_streamed, "pt2pt.rndv_streamed",
               "rendezvous messages whose receiver asked the sender to stream them through frames");
CR_PVAR_DEFINE(rndv_chosen, "pt2pt.rndv_chosen",
               "rendezvous messages whose way (streamed or shared) the receiver chose by its timings, the transport "
               "offering both");
CR_PVAR_DEFINE(rndv_shared, "pt2pt.rndv_shared",
               "rendezvous messages copied by both processes, the receiver reading the front and the sender writing "
               "the back (cross-memory attach)");

/* How a rendezvous whose transport leaves the choice to us (CR_XSPLIT_EITHER) moves: streamed
 * through frames or shared between the two processes. Neither is always faster: on this VM the
 * stream is faster while cache lines move cheaply between the cores and three times slower while
 * they do not, for seconds or minutes at a time (doc/performance.md, 2026-11-29). So the
 * receiver times its rendezvous receives (one at a time: from the choice to the completion),
 * takes the way whose cost per byte was lower, and every WAY_EXPLORE choices takes the other
 * WAY_RUN times in a row so that its figure follows the machine.
 *
 * A way's first messages after the other way ran cost more than it does in use (the stream's
 * ring lines were last written a long time ago, the receive buffer's lines are in the other
 * core's cache after the sender wrote part of it), for up to a lap of the ring: so the first
 * WAY_WARM choices of every run are not timed, and a way's figure is the least of its last
 * WAY_SAMPLES timed messages (the least: what disturbs a transfer on a shared machine only ever
 * slows it, so one slow sample should not turn the choice), those of an exploring run
 * replacing the explored way's older ones. */
enum { WAY_STREAM, WAY_SHARE, WAY_EXPLORE = 512, WAY_RUN = 12, WAY_WARM = 8, WAY_SAMPLES = 4 };
static struct {
    uint64_t sample[2][WAY_SAMPLES]; /* ns per KiB of a way's last timed messages, 0: none */
    uint32_t next[2];                /* where its next sample goes */
    bool fresh[2];                   /* its samples are of an earlier run: the next one clears them */
    int explored;                    /* the way the current exploring run takes */
    uint32_t turns;                  /* choices made (wrapping at 2^32 keeps the period: 512 divides it) */
    cr_request *timed;               /* the receive being timed (one at a time), or NULL */
    uint64_t t0, bytes;              /* when its choice was made, and its size */
    int way;                         /* the way it takes */
} WAYS = {.fresh = {true, true}};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A way's figure: the least of its samples, 0 when it has none. */
static uint64_t way_cost(int w)
{
    uint64_t least = 0;
    for (int i = 0; i < WAY_SAMPLES; i++)
        if (WAYS.sample[w][i] && (!least || WAYS.sample[w][i] < least))
            least = WAYS.sample[w][i];
    return least;
}

/* The way for the next rendezvous receive r of n bytes. The first exploring run starts at the
 * WAY_EXPLORE / 8-th choice, so that both ways have a figure early. */
static int way_choose(cr_request *r, uint64_t n)
{
    uint32_t t = WAYS.turns++, into = (t + WAY_EXPLORE - WAY_EXPLORE / 8) % WAY_EXPLORE;
    __atomic_fetch_add(&rndv_chosen, 1, __ATOMIC_RELAXED);
    uint64_t stream = way_cost(WAY_STREAM), share = way_cost(WAY_SHARE);
    int best = share && share < stream ? WAY_SHARE : WAY_STREAM;
    bool exploring = t >= WAY_EXPLORE / 8 && into < WAY_RUN;
    if (exploring && into == 0) {
        WAYS.explored = !best;
        WAYS.fresh[!best] = true;
    }
    int way = exploring ? WAYS.explored : best;
    /* how far into its run this way is (the best way's run starts when an exploring one ends) */
    uint32_t in_run = exploring ? into : t < WAY_EXPLORE / 8 ? t : into - WAY_RUN;
    if (in_run >= WAY_WARM && !WAYS.timed) {
        WAYS.timed = r;
        WAYS.t0 = now_ns();
        WAYS.bytes = n;
        WAYS.way = way;
    }
    return way;
}

/* The timed receive r completed: its cost makes its way's figure. */
static void way_measured(cr_request *r)
{
    (void)r;
    WAYS.timed = NULL;
    int w = WAYS.way;
    if (WAYS.fresh[w]) {
        memset(WAYS.sample[w], 0, sizeof WAYS.sample[w]);
        WAYS.fresh[w] = false;
    }
    uint64_t cost = (now_ns() - WAYS.t0) * 1024 / (WAYS.bytes ? WAYS.bytes : 1) + 1;
    WAYS.sample[w][WAYS.next[w]++ % WAY_SAMPLES] = cost;
}

CR_PVAR_DEFINE(packed_bytes, "pt2pt.packed_bytes",
               "bytes of point-to-point messages packed from a non-contiguous send buffer into frames, or unpacked "
               "from frames or a scratch buffer into a non-contiguous receive buffer (types that are one run, "
               "CR_DT_ONE_RUN, move as contiguous bytes and count nothing)");

CR_PVAR_DEFINE(long_eager_sends, "pt2pt.long_eager",
               "messages sent long eager: in several frames, without waiting for the receiver (above the eager "
               "limit, or above the size a transport would rather cut in pieces: COURIER_SHM_PIECES_FROM)");

/* (atomic: threads packing for different communicators may not share a lock) */
static inline void count_packed(uint64_t n)
{
    __atomic_fetch_add(&packed_bytes, n, __ATOMIC_RELAXED);
}

static void dt_gather_fill(cr_xgather *g, char *to, size_t n)
{
    dt_gather *d = (dt_gather *)g;
    count_packed(n);
    cr_dt_pack(d->r->buf, d->r->count, d->r->dt, d->off, to, n);
    d->off += n;
}

/* Sends packed bytes [off, off + n) of r's message in one frame. */
static bool send_piece(int dst, const cr_penv *env, const cr_request *r, uint64_t off, uint64_t n)
{
    if (CR_LIKELY(cr_dtype_is_contig_n(r->dt, r->count) || n == 0))
        return cr_xport_send(dst, CR_XCLASS_PT2PT, (const cr_xenv *)env, (const char *)r->buf + r->dt->true_lb + off,
                             n, NULL, 0);
    dt_gather d = {{dt_gather_fill}, r, off};
    return cr_xport_send_gather(dst, CR_XCLASS_PT2PT, (const cr_xenv *)env, n, &d.g);
}

/* A send whose last frame the transport still reads from its buffer (r->proto): it completes
 * in lent_done, when the transport is done with it. */
enum { PROTO_LENT = 0x80 };
static int lent_out; /* sends waiting for lent_done */
static void send_done(cr_request *r);

static void lent_done(void *arg)
{
    lent_out--;
    send_done(arg);
}

/* Tries to put one frame on the wire. DATA frames send the next chunk of their request. */
static bool try_send(int dst, cr_penv *env, cr_request *req, const ctl_words *words)
{
    switch (env->type) {
    case P_EAGER:
        return send_piece(dst, env, req, 0, req->bytes);
    case P_RTS:
        return cr_xport_send(dst, CR_XCLASS_PT2PT, (cr_xenv *)env, words->w, sizeof words->w[0], NULL, 0);
    case P_SPLIT:
        return cr_xport_send(dst, CR_XCLASS_PT2PT, (cr_xenv *)env, words->w, sizeof words->w, NULL, 0);
    case P_DATA:
    case P_LONG: {
        cr_request *r = req;
        /* streams (long eager, DATA) go in the transport's stream frames (cr_xport_stream_frame) */
        uint64_t chunk = CR_MIN(r->bytes - r->offset, (uint64_t)cr_xport_stream_frame(dst, r->bytes));
        cr_penv e = *env;
        if (e.type == P_DATA)
            e.a = r->offset;
        else if (r->offset) /* the pieces after the first name their message by its request */
            e = (cr_penv){.type = P_LONG_DATA, .a = (uintptr_t)r, .b = r->offset};
        if (chunk && cr_dtype_is_contig_n(r->dt, r->count)) {
            /* lent: a transport that would copy it to a queue (a full socket) reads it from
             * the buffer later; the send completes when the last frame has left (lent_done) */
            bool last = r->offset + chunk == r->bytes;
            cr_xsend_result sent = cr_xport_send_lent(dst, CR_XCLASS_PT2PT, (const cr_xenv *)&e,
                                                      (const char *)r->buf + r->dt->true_lb + r->offset, chunk,
                                                      last ? lent_done : NULL, r);
            if (sent == CR_XSEND_FULL)
                return false;
            if (sent == CR_XSEND_LENT && last) {
                r->proto = PROTO_LENT;
                lent_out++;
            }
        } else if (!send_piece(dst, &e, r, r->offset, chunk)) {
            return false;
        }
        r->offset += chunk;
        return true;
    }
    default:
        return cr_xport_send(dst, CR_XCLASS_PT2PT, (cr_xenv *)env, NULL, 0, NULL, 0);
    }
}

/* Streams (DATA, LONG) send their request's data a frame at a time. */
static inline bool is_stream(const cr_penv *env)
{
    return env->type == P_DATA || env->type == P_LONG;
}

/* Whether the send is complete once this frame has gone. */
static inline bool completes_send(const cr_penv *env, const cr_request *req)
{
    return is_stream(env) ? req->offset == req->bytes && req->proto != PROTO_LENT
                          : env->type == P_EAGER && !(env->flags & PF_SYNC);
}

/* Sends a frame now if its turn has come and there is room, else queues it. */
static void send_frame(int dst, cr_penv *env, cr_request *req, const ctl_words *words)
{
    bool done = false;
    dst_lock(dst);
    if (oq_empty(dst) && try_send(dst, env, req, words)) {
        if (is_stream(env) && req->offset < req->bytes)
            oq_push(dst, env, req, NULL); /* the rest of the stream */
        else
            done = completes_send(env, req);
    } else {
        oq_push(dst, env, req, words);
    }
    dst_unlock(dst);
    if (done)
        send_done(req);
}

/* Progress hook: drains the pending frames of every destination, in order. */
static int oq_progress(void)
{
    int sent = CR_UNLIKELY(CR.returns_waiting) ? credit_progress() : 0;
    if (!OQ.busy)
        return sent;
    for (int dst = 0; dst < cr_rt.size; dst++) {
        if (!OQ.head[dst]) /* (only code in the section changes a queue: no lock to look) */
            continue;
        outq_item *it;
        dst_lock(dst);
        while ((it = OQ.head[dst]) != NULL) {
            if (!try_send(dst, &it->env, it->req, &it->words))
                break;
            sent++;
            if (is_stream(&it->env) && it->req->offset < it->req->bytes)
                continue; /* more chunks of this stream */
            OQ.head[dst] = it->next;
            if (!OQ.head[dst])
                OQ.busy--;
            if (completes_send(&it->env, it->req)) {
                dst_unlock(dst);
                send_done(it->req);
                dst_lock(dst);
            }
            free(it);
        }
        dst_unlock(dst);
    }
    return sent;
}

/* ----------------------------------------------------------------- completion */

/* Cancellation states of a send (r->cancel). */
enum { CANCEL_NONE, CANCEL_ASKED, CANCEL_ANSWERED, CANCEL_FINISHED_EARLY };

static void send_done(cr_request *r)
{
    /* While the receiver has not answered a cancel request, the request must stay alive: the
     * answer refers to it. Completion waits for the answer. */
    if (CR_UNLIKELY(r->cancel == CANCEL_ASKED)) {
        r->cancel = CANCEL_FINISHED_EARLY;
        return;
    }
    cr_request_complete(r);
}

static void way_measured(cr_request *r);

static void recv_done(cr_request *r, int src, int tag, uint64_t bytes, uint64_t capacity)
{
    if (CR_UNLIKELY(r == WAYS.timed))
        way_measured(r);
    cr_status_set(&r->status, src, tag, CR_MIN(bytes, capacity));
    if (CR_UNLIKELY(bytes > capacity))
        r->status.MPI_ERROR = cr_err(MPI_ERR_TRUNCATE,
                                     "a message of %llu bytes from rank %d (tag %d) does not fit the receive buffer "
                                     "of %llu bytes (count=%lld)",
                                     (unsigned long long)bytes, src, tag, (unsigned long long)capacity,
                                     (long long)r->count);
    cr_request_complete(r);
}

static inline uint64_t capacity_of(const cr_request *r)
{
    return (uint64_t)r->count * (uint64_t)r->dt->size;
}

static void control(int dst, uint8_t type, uint64_t a, uint64_t b)
{
    cr_penv env = {.type = type, .a = a, .b = b};
    send_frame(dst, &env, NULL, NULL);
}

/* ----------------------------------------------------------------- receiving */

/* A non-contiguous receive pulls straight into its buffer's blocks (iovecs, a batch per read)
 * when they average at least DIRECT_BLOCK bytes; smaller blocks would make the kernel's
 * per-block cost dominate, so those go through a bounded scratch reused by every pull (pulls
 * run to completion one at a time): read, then unpacked while still in cache. Either way a
 * message of any size needs no buffer of its size. */
enum { PULL_CHUNK = 256 << 10, DIRECT_BLOCK = 2048, PULL_IOVS = 64 };
static char *pull_scratch;

/* Copies the first n bytes of a contiguous message at the sender's `addr` into r's buffer.
 * 0, or -1 when the transport cannot read (nothing was unpacked that matters: the stream that
 * follows overwrites it). */
static int pull(cr_request *r, int world_src, uint64_t addr, uint64_t n)
{
    struct iovec iov[PULL_IOVS];
    int k;
    uint64_t off = 0;
    while (off < n) { /* straight into the buffer, while its blocks are large */
        uint64_t got = cr_dt_iov(r->buf, r->count, r->dt, off, n - off, iov, PULL_IOVS, &k);
        if (got < (uint64_t)k * DIRECT_BLOCK && got < n - off)
            break;
        struct iovec rem = {(void *)(uintptr_t)(addr + off), got};
        if (cr_xport_read(world_src, iov, k, &rem, 1) != 0)
            return -1;
        off += got;
    }
    if (off < n && !pull_scratch && !(pull_scratch = malloc(PULL_CHUNK)))
        return -1;
    for (; off < n; off += PULL_CHUNK) { /* small blocks: through the scratch */
        uint64_t c = CR_MIN((uint64_t)PULL_CHUNK, n - off);
        struct iovec l = {pull_scratch, c}, rem = {(void *)(uintptr_t)(addr + off), c};
        if (cr_xport_read(world_src, &l, 1, &rem, 1) != 0)
            return -1;
        cr_dt_unpack(r->buf, r->count, r->dt, off, pull_scratch, c);
        count_packed(c);
    }
    return 0;
}

/* Asks the sender of the matched rendezvous r (bytes, remote, status source and tag set) to
 * stream the whole message in DATA frames. */
static void stream_ask(cr_request *r)
{
    r->proto = P_CTS;
    r->offset = 0;
    control(r->world_peer, P_CTS, (uintptr_t)r, r->remote);
}

/* Below this, a shared copy saves less than the extra messages cost (SPLIT and SPLIT_DONE):
 * the receiver's part alone would take under about 3 us. */
enum { SPLIT_MIN = 64 << 10 };

/* The shared copy of a rendezvous of n bytes into r's contiguous buffer: SPLIT asks the sender
 * to write the back part, while the receiver reads the front part. Once its read is done, the
 * receiver sends FIN at once (the sender, which handles SPLIT before FIN, has then written its
 * part too, so nobody touches the send buffer any more): the send completes without waiting for
 * the receiver's next MPI call. The receive completes on SPLIT_DONE (on_split_done). The
 * boundary is a page boundary of the receive buffer, so the two processes never pin the same
 * page. */
static void split_receive(cr_request *r, int world_src, uint64_t addr, uint64_t n)
{
    char *rbuf = (char *)r->buf + r->dt->true_lb;
    uint64_t from = (((uintptr_t)rbuf + n / 2) & ~(uintptr_t)4095) - (uintptr_t)rbuf; /* > 0: n >= SPLIT_MIN */
    r->proto = P_SPLIT;
    ctl_words w = {{(uintptr_t)rbuf, from, n - from}};
    cr_penv env = {.type = P_SPLIT, .a = (uintptr_t)r, .b = r->remote};
    send_frame(world_src, &env, NULL, &w);
    struct iovec l = {rbuf, from}, rem = {(void *)(uintptr_t)addr, from};
    r->offset = cr_xport_read(world_src, &l, 1, &rem, 1) != 0; /* 1: our part failed */
    if (!r->offset)
        control(world_src, P_FIN, 0, r->remote);
}

/* A send whose part of a shared copy failed: the FIN that the receiver sent after its own part
 * does not complete it; the receiver's CTS follows, and the whole message is streamed. */
#define SPLIT_WRITE_FAILED UINT64_MAX

/* The sender's part of a shared copy (SPLIT from the receiver). */
static void on_split(const cr_xframe *f, const cr_penv *env)
{
    cr_request *s = (cr_request *)(uintptr_t)env->b;
    ctl_words w;
    cr_xframe_copy(f, w.w, 0, sizeof w.w);
    struct iovec l = {(char *)s->buf + s->dt->true_lb + w.w[1], w.w[2]},
                 rem = {(void *)(uintptr_t)(w.w[0] + w.w[1]), w.w[2]};
    bool failed = cr_xport_write(f->src, &l, 1, &rem, 1) != 0;
    if (CR_UNLIKELY(failed))
        s->offset = SPLIT_WRITE_FAILED; /* (CTS sets it back to 0) */
    control(f->src, P_SPLIT_DONE, env->a, failed);
}

/* The sender's part of a shared copy is done: the receive completes (FIN went when our part
 * was done); if either part failed (the kernel refused cross-memory attach), the whole message
 * is streamed instead (the sender is still waiting, for CTS: a FIN sent before its part failed
 * does not complete it). */
static void on_split_done(const cr_penv *env)
{
    cr_request *r = (cr_request *)(uintptr_t)env->a;
    if (CR_UNLIKELY(env->b || r->offset)) {
        if (r == WAYS.timed) /* (streamed after all: the figure would be neither way's) */
            WAYS.timed = NULL;
        stream_ask(r);
        return;
    }
    recv_done(r, r->status.MPI_SOURCE, r->status.MPI_TAG, r->bytes, capacity_of(r));
}

/* The rendezvous receive: pull the data with one copy, share the copy with the sender, or ask
 * for it to be streamed. */
static void rndv_receive(cr_request *r, int world_src, int src, int tag, uint64_t bytes, uint64_t sreq, uint64_t addr)
{
    uint64_t cap = capacity_of(r), n = CR_MIN(bytes, cap);
    r->world_peer = world_src;
    /* addr 0: the sender's buffer is not contiguous, its data comes streamed; but a send to
     * ourselves is copied from the sending request's buffer straight into ours */
    if (addr == 0 && world_src == cr_rt.rank && n) {
        const cr_request *s = (const cr_request *)(uintptr_t)sreq;
        cr_dt_copy(s->buf, s->count, s->dt, r->buf, r->count, r->dt);
        control(world_src, P_FIN, 0, sreq);
        recv_done(r, src, tag, bytes, cap);
        return;
    }
    if (n == 0 || (addr && cr_xport_pull_preferred(world_src))) {
        if (n == 0 || pull(r, world_src, addr, n) == 0) {
            control(world_src, P_FIN, 0, sreq);
            recv_done(r, src, tag, bytes, cap);
            return;
        }
    }
    r->bytes = bytes;
    r->remote = sreq;
    r->status.MPI_SOURCE = src;
    r->status.MPI_TAG = tag;
    cr_xsplit split = addr && n >= SPLIT_MIN && world_src != cr_rt.rank && cr_dtype_is_contig_n(r->dt, r->count)
                          ? cr_xport_split_preferred(world_src, n)
                          : CR_XSPLIT_NO;
    if (split == CR_XSPLIT_YES || (split == CR_XSPLIT_EITHER && way_choose(r, n) == WAY_SHARE)) {
        __atomic_fetch_add(&rndv_shared, 1, __ATOMIC_RELAXED);
        split_receive(r, world_src, addr, n);
        return;
    }
    /* Streamed instead: DATA frames will bring `bytes` bytes (those beyond `cap` are dropped). */
    __atomic_fetch_add(&rndv_streamed, 1, __ATOMIC_RELAXED);
    stream_ask(r);
}

/* Stores the first n bytes of frame f's data as bytes [off, off + n) of r's message: copied
 * into a contiguous buffer, unpacked straight from the frame (both of its parts, when it wraps
 * around the ring) into a non-contiguous one. */
static void frame_to_buffer(cr_request *r, const cr_xframe *f, uint64_t off, uint64_t n)
{
    if (cr_dtype_is_contig_n(r->dt, r->count)) {
        cr_xframe_copy(f, (char *)r->buf + r->dt->true_lb + off, 0, n);
        return;
    }
    count_packed(n);
    if (f->n1 >= n) {
        cr_dt_unpack(r->buf, r->count, r->dt, off, f->p1, n);
    } else {
        cr_dt_unpack(r->buf, r->count, r->dt, off, f->p1, f->n1);
        cr_dt_unpack(r->buf, r->count, r->dt, off + f->n1, f->p2, n - f->n1);
    }
}

static void eager_receive(cr_request *r, const cr_xframe *f, int src, int tag, uint64_t bytes, int flags, uint64_t sreq)
{
    uint64_t cap = capacity_of(r), n = CR_MIN(bytes, cap);
    if (n)
        frame_to_buffer(r, f, 0, n);
    if (flags & PF_SYNC)
        control(f->src, P_ACK, 0, sreq);
    recv_done(r, src, tag, bytes, cap);
}

/* eager_receive's common case, inlined where a frame matches a posted receive: a contiguous
 * buffer with room for the message, no synchronous send to answer. The calls of the general
 * path (eager_receive, frame_to_buffer, recv_done), each saving registers, were a sixth of the
 * receiver's instructions per message in bench/msgrate.c. False: take the general path. */
static CR_ALWAYS_INLINE bool eager_receive_quick(cr_request *r, const cr_xframe *f, const cr_penv *env)
{
    uint64_t bytes = env->a;
    if (CR_UNLIKELY(env->flags != 0 || r == WAYS.timed || !cr_dtype_is_contig_n(r->dt, r->count) ||
                    bytes > capacity_of(r)))
        return false;
    if (CR_LIKELY(bytes <= f->n1)) { /* (not wrapped around the ring's end) */
        if (bytes) /* (a zero-byte receive may have a NULL buffer: no address formed from it) */
            cr_copy((char *)r->buf + r->dt->true_lb, f->p1, bytes);
    } else {
        cr_xframe_copy(f, (char *)r->buf + r->dt->true_lb, 0, bytes);
    }
    cr_status_set(&r->status, env->src, env->tag, bytes);
    cr_request_complete(r);
    return true;
}

/* Stores bytes [off, off + f->len) of a streamed message (DATA, LONG) in r's buffer, dropping
 * those past its capacity (truncation), and completes r when all r->bytes have come. */
static void stream_receive(cr_request *r, const cr_xframe *f, uint64_t off)
{
    uint64_t cap = capacity_of(r), end = off + f->len;
    if (off < cap && !f->placed) {
        uint64_t n = CR_MIN(end, cap) - off;
        frame_to_buffer(r, f, off, n);
    }
    r->offset = end;
    if (end == r->bytes)
        recv_done(r, r->status.MPI_SOURCE, r->status.MPI_TAG, r->bytes, cap);
}

/* Long eager messages whose first frame has come and whose other frames are still coming, per
 * world source: each is named by its sender's request, and its frames go to the receive that
 * took it, into the unexpected message collecting them, or nowhere (a dropped message). Usually
 * none or one per source; any number may be in flight. */
typedef struct long_in {
    struct long_in *next;
    uint64_t sreq;
    cr_request *req;  /* the receive taking it, */
    cr_unexp *unexp;  /* or the unexpected message holding it; neither: dropped */
    uint64_t bytes, arrived;
} long_in;
static long_in **longs;

static void long_track(int world_src, uint64_t sreq, uint64_t bytes, uint64_t arrived, cr_request *r, cr_unexp *u)
{
    long_in *l = malloc(sizeof *l);
    if (!l) {
        fprintf(stderr, "Courier: out of memory receiving a message\n");
        abort();
    }
    *l = (long_in){longs[world_src], sreq, r, u, bytes, arrived};
    longs[world_src] = l;
}

static long_in *long_find(int world_src, uint64_t sreq)
{
    for (long_in *l = longs[world_src]; l; l = l->next)
        if (l->sreq == sreq)
            return l;
    return NULL;
}

static void long_untrack(int world_src, long_in *gone)
{
    for (long_in **l = &longs[world_src]; *l; l = &(*l)->next) {
        if (*l == gone) {
            *l = gone->next;
            free(gone);
            return;
        }
    }
}

/* A receive takes a long message whose first `f->len` bytes are in `f`. */
static void long_receive(cr_request *r, const cr_xframe *f, int src, int tag, uint64_t bytes)
{
    r->proto = P_LONG;
    r->world_peer = f->src;
    r->bytes = bytes;
    r->status.MPI_SOURCE = src;
    r->status.MPI_TAG = tag;
    stream_receive(r, f, 0);
}

/* A frame of a long message after its first. */
static void on_long_rest(const cr_xframe *f, uint64_t sreq, uint64_t off)
{
    long_in *l = long_find(f->src, sreq);
    if (CR_UNLIKELY(!l)) {
        fprintf(stderr, "Courier: world rank %d sent a piece of a message that is not arriving here\n", f->src);
        abort();
    }
    l->arrived += f->len;
    if (l->req)
        stream_receive(l->req, f, off);
    else if (l->unexp) {
        cr_xframe_copy(f, l->unexp->data + off, 0, f->len);
        l->unexp->arrived = l->arrived;
    }
    if (l->arrived == l->bytes)
        long_untrack(f->src, l);
}

/* The long message held by `u` is no longer collected there: its frames still to come go to
 * `r` (or nowhere, when NULL). */
static void long_redirect(const cr_unexp *u, cr_request *r)
{
    long_in *l = u->arrived < u->bytes ? long_find(u->world_src, u->sreq) : NULL;
    if (l) {
        l->unexp = NULL;
        l->req = r;
    }
}

/* A receive took an unexpected message. */
static void receive_unexp(cr_request *r, cr_unexp *u)
{
    if (u->type == P_LONG) {
        /* The rest of it, if still arriving, now goes straight to the receive. */
        cr_xframe f = {.src = u->world_src, .len = u->arrived, .p1 = u->data, .n1 = u->arrived};
        long_redirect(u, r);
        credit_give(u->world_src, u->bytes);
        long_receive(r, &f, u->src, u->tag, u->bytes);
    } else if (u->type == P_EAGER) {
        cr_xframe f = {.src = u->world_src, .len = u->bytes, .p1 = u->data, .n1 = u->bytes};
        credit_give(u->world_src, u->bytes);
        eager_receive(r, &f, u->src, u->tag, u->bytes, u->flags, u->sreq);
    } else {
        rndv_receive(r, u->world_src, u->src, u->tag, u->bytes, u->sreq, u->addr);
    }
    cr_pt2pt_unexp_free(u);
}

/* Discards a message of a closed context, answering where its sender waits for an answer
 * (a synchronous send for its ACK, a rendezvous for its FIN), so that a program that freed a
 * communicator with messages unreceived loses them but nothing else. */
static void drop_message(int world_src, uint8_t type, uint8_t flags, uint64_t bytes, uint64_t sreq)
{
    if (cr_match_carries_data(type))
        credit_give(world_src, bytes);
    if (type == P_EAGER && (flags & PF_SYNC))
        control(world_src, P_ACK, 0, sreq);
    else if (type == P_RTS)
        control(world_src, P_FIN, 0, sreq);
}

static void on_match_frame(const cr_xframe *f, const cr_penv *env)
{
    cr_match_ctx *m = cr_match_ctx_get(env->ctx);
    if (CR_UNLIKELY(!m)) {
        fprintf(stderr, "Courier: out of memory matching a message\n");
        abort();
    }
    if (CR_UNLIKELY(cr_match_ctx_stale(m, env->ctx))) {
        if (env->type == P_LONG && f->len < env->a)
            long_track(f->src, env->b, env->a, f->len, NULL, NULL);
        drop_message(f->src, env->type, env->flags, env->a, env->b);
        return;
    }
    cr_request *r = cr_match_take_posted(m, env->ctx, env->src, env->tag);
    if (r) {
        if (env->type == P_EAGER) {
            credit_give(f->src, env->a);
            if (!eager_receive_quick(r, f, env))
                eager_receive(r, f, env->src, env->tag, env->a, env->flags, env->b);
        } else if (env->type == P_LONG) {
            if (f->len < env->a)
                long_track(f->src, env->b, env->a, f->len, r, NULL);
            credit_give(f->src, env->a);
            long_receive(r, f, env->src, env->tag, env->a);
        } else {
            uint64_t addr;
            cr_xframe_copy(f, &addr, 0, sizeof addr);
            rndv_receive(r, f->src, env->src, env->tag, env->a, env->b, addr);
        }
        return;
    }
    /* Unexpected: an eager message is kept whole, a long one gets room for all its frames. */
    size_t keep = env->type == P_EAGER ? f->len : env->type == P_LONG ? env->a : 0;
    cr_unexp *u = cr_match_unexp_alloc(keep);
    if (!u) {
        fprintf(stderr, "Courier: out of memory storing an unexpected message of %zu bytes\n", keep);
        abort();
    }
    *u = (cr_unexp){.ctx = env->ctx, .src = env->src, .tag = env->tag, .world_src = f->src, .type = env->type,
                    .flags = env->flags, .bytes = env->a, .sreq = env->b};
    if (cr_match_carries_data(env->type))
        cr_xframe_copy(f, u->data, 0, f->len);
    if (env->type == P_LONG) {
        u->arrived = f->len;
        if (f->len < env->a)
            long_track(f->src, env->b, env->a, f->len, NULL, u);
    }
    if (env->type == P_RTS)
        cr_xframe_copy(f, &u->addr, 0, sizeof u->addr);
    cr_match_unexp_append(m, u);
}

/* Takes an unexpected message out of its queue and drops it (see drop_message). */
static void unexp_drop(cr_match_ctx *m, cr_unexp *u)
{
    cr_match_unexp_remove(m, u);
    if (u->type == P_LONG)
        long_redirect(u, NULL);
    drop_message(u->world_src, u->type, u->flags, u->bytes, u->sreq);
    cr_pt2pt_unexp_free(u);
}

void cr_pt2pt_ctx_close(uint32_t ctx)
{
    for (uint32_t c = ctx; c <= ctx + 1; c++) {
        cr_match_ctx *m = cr_match_ctx_get(c);
        if (!m)
            continue;
        m->has_closed = true;
        m->closed_epoch = CR_CTX_EPOCH(c);
        for (cr_unexp *u = cr_match_unexp_first(m), *next; u; u = next) {
            next = u->next;
            if (cr_match_ctx_stale(m, u->ctx))
                unexp_drop(m, u);
        }
    }
}

static void on_cancel(const cr_xframe *f, const cr_penv *env)
{
    cr_match_ctx *m = cr_match_ctx_get(env->ctx);
    uint64_t done = 0;
    for (cr_unexp *u = cr_match_unexp_first(m); u; u = u->next) {
        /* Only a rendezvous or synchronous message can be cancelled on the wire (a long eager
         * message names its request too, which a finished one may share with this one). */
        bool cancellable = u->type == P_RTS || (u->type == P_EAGER && (u->flags & PF_SYNC));
        if (cancellable && u->world_src == f->src && u->sreq == env->b && u->ctx == env->ctx) {
            cr_match_unexp_remove(m, u);
            if (cr_match_carries_data(u->type))
                credit_give(u->world_src, u->bytes);
            cr_pt2pt_unexp_free(u);
            done = 1;
            break;
        }
    }
    control(f->src, P_CANCEL_RESP, done, env->b);
}

/* The transport asks where a frame's payload goes before it has arrived (a byte stream: TCP):
 * the DATA of a rendezvous goes straight into the receive's buffer, when it is contiguous
 * (stream_receive then finds it there). The receive stays valid until its last frame: it is
 * matched, so it can no longer be cancelled. */
static void *place_frame(int src, const cr_xenv *xenv, size_t len)
{
    const cr_penv *env = (const cr_penv *)xenv;
    (void)src;
    if (env->type != P_DATA)
        return NULL;
    cr_request *r = (cr_request *)(uintptr_t)env->b;
    if (!cr_dtype_is_contig_n(r->dt, r->count) || env->a + len > capacity_of(r))
        return NULL;
    return (char *)r->buf + r->dt->true_lb + env->a;
}

static void on_frame(const cr_xframe *f)
{
    const cr_penv *env = (const cr_penv *)f->env;
    switch (env->type) {
    case P_EAGER:
    case P_RTS:
    case P_LONG:
        on_match_frame(f, env);
        break;
    case P_LONG_DATA:
        on_long_rest(f, env->a, env->b);
        break;
    case P_CREDIT:
        dst_lock(f->src);
        CR.used[f->src] -= env->a;
        dst_unlock(f->src);
        break;
    case P_FIN:
        if (CR_UNLIKELY(((cr_request *)(uintptr_t)env->b)->offset == SPLIT_WRITE_FAILED))
            break; /* (a shared copy whose part here failed: CTS comes next) */
        send_done((cr_request *)(uintptr_t)env->b);
        break;
    case P_ACK:
        send_done((cr_request *)(uintptr_t)env->b);
        break;
    case P_CTS: {
        cr_request *r = (cr_request *)(uintptr_t)env->b;
        cr_penv d = {.type = P_DATA, .b = env->a};
        r->offset = 0;
        send_frame(f->src, &d, r, NULL);
        break;
    }
    case P_DATA:
        stream_receive((cr_request *)(uintptr_t)env->b, f, env->a);
        break;
    case P_SPLIT:
        on_split(f, env);
        break;
    case P_SPLIT_DONE:
        on_split_done(env);
        break;
    case P_CANCEL:
        on_cancel(f, env);
        break;
    case P_CANCEL_RESP: {
        cr_request *r = (cr_request *)(uintptr_t)env->b;
        bool finished = r->cancel == CANCEL_FINISHED_EARLY;
        r->cancel = CANCEL_ANSWERED;
        if (env->a) /* the receiver dropped the message: the send is cancelled */
            r->status.MPI_internal[2] = 1;
        if (env->a || finished)
            send_done(r);
        /* else: it matched and its data is still moving; normal completion follows */
        break;
    }
    }
}

/* ----------------------------------------------------------------- starting operations */

void cr_pt2pt_prepare(cr_request *r, int kind, const void *buf, MPI_Count count, cr_dtype *dt, int peer, int tag,
                      cr_comm *comm, uint32_t ctx, int mode)
{
    r->kind = (uint8_t)kind;
    r->buf = (void *)buf;
    r->count = count;
    r->dt = dt;
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
    r->err_target = comm ? &comm->eo : NULL;
    r->ctx = ctx;
    r->mode = (uint8_t)mode;
}

/* ----------------------------------------------------------------- request operations */

static int request_start(cr_request *r)
{
    if (r->kind == CR_REQ_SEND)
        return r->mode == CR_MODE_BUFFERED ? cr_bsend_start(r) : cr_pt2pt_send_start(r);
    if (r->kind == CR_REQ_RECV)
        return cr_pt2pt_recv_post(r);
    return MPI_SUCCESS;
}

static int request_cancel(cr_request *r)
{
    return r->kind == CR_REQ_SEND || r->kind == CR_REQ_RECV ? cr_pt2pt_cancel(r) : MPI_SUCCESS;
}

static int request_release(cr_request *r)
{
    if (r->holds_comm)
        cr_comm_release(r->comm);
    if (r->holds_dt)
        cr_dtype_release(r->dt);
    return MPI_SUCCESS;
}

const cr_request_ops cr_pt2pt_request_ops = {request_start, request_cancel, request_release};

void cr_pt2pt_hold_comm(cr_request *r)
{
    cr_comm_hold(r->comm);
    r->holds_comm = 1;
    if (r->dt && r->dt->d) { /* a derived type the user may free while the request runs */
        cr_obj_ref(r->dt);
        r->holds_dt = 1;
    }
}

int cr_pt2pt_send_start(cr_request *r)
{
    r->done = 0;
    r->proto = 0;
    r->cancel = 0;
    r->tmp = NULL;
    r->next = r->prev = NULL;
    cr_status_empty(&r->status);
    if (r->peer == MPI_PROC_NULL) {
        cr_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        cr_request_complete(r);
        return MPI_SUCCESS;
    }
    cr_comm *c = r->comm;
    int dst = cr_comm_peer_world(c, r->peer);
    r->world_peer = dst;
    r->bytes = (uint64_t)r->count * (uint64_t)r->dt->size;
    bool contig = cr_dtype_is_contig_n(r->dt, r->count);
    /* The request's address goes on the wire only when it stays valid until the peer answers
     * (synchronous eager, rendezvous): a cancel request names a message by it. */
    cr_penv env = {.ctx = r->ctx, .src = c->rank, .tag = r->tag, .a = r->bytes, .b = (uintptr_t)r};
    bool eager = eager_fits(dst, r->bytes, r->mode == CR_MODE_SYNC), long_eager = !eager && r->bytes <= (uint64_t)long_max && r->mode != CR_MODE_SYNC;
    if (eager || long_eager) {
        dst_lock(dst);
        bool credited = credit_take(dst, r->bytes);
        dst_unlock(dst);
        if (!credited)
            eager = long_eager = false; /* the receiver holds enough of our early messages: rendezvous */
    }
    if (eager) {
        env.type = P_EAGER;
        env.flags = r->mode == CR_MODE_SYNC ? PF_SYNC : 0;
        if (r->mode != CR_MODE_SYNC)
            env.b = 0;
        r->proto = P_EAGER;
        send_frame(dst, &env, r, NULL);
        return MPI_SUCCESS;
    }
    if (long_eager) {
        /* Long eager: the frames go one after the other, from the user's buffer (packed into
         * each frame when it is not contiguous); the send completes when the last one is on its way. The first names
         * the message by the request (b), like the others (a). */
        env.type = P_LONG;
        r->proto = P_LONG;
        __atomic_fetch_add(&long_eager_sends, 1, __ATOMIC_RELAXED);
        r->offset = 0;
        send_frame(dst, &env, r, NULL);
        return MPI_SUCCESS;
    }
    /* Rendezvous: the data must stay where the receiver can read it until FIN. */
    env.type = P_RTS;
    r->proto = P_RTS;
    /* A non-contiguous buffer offers no address: the receiver asks for the data to be streamed,
     * and each frame is packed straight from the buffer (no copy of the whole message). */
    ctl_words addr = {{contig ? (uintptr_t)((char *)r->buf + r->dt->true_lb) : 0}};
    send_frame(dst, &env, r, &addr);
    return MPI_SUCCESS;
}

int cr_pt2pt_recv_post(cr_request *r)
{
    r->done = 0;
    r->proto = 0;
    r->cancel = 0;
    r->tmp = NULL;
    r->next = r->prev = NULL;
    if (r->peer == MPI_PROC_NULL) {
        cr_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        cr_request_complete(r);
        return MPI_SUCCESS;
    }
    cr_match_ctx *m = cr_match_ctx_get(r->ctx);
    if (!m)
        return cr_err(MPI_ERR_NO_MEM, "out of memory posting a receive");
    cr_unexp *u = m->unexp_head ? cr_match_find_unexp(m, r->ctx, r->peer, r->tag, true) : NULL;
    if (u) {
        receive_unexp(r, u);
        return MPI_SUCCESS;
    }
    cr_match_post(m, r);
    return MPI_SUCCESS;
}

void cr_pt2pt_recv_message(cr_request *r, cr_unexp *u)
{
    r->done = 0;
    r->tmp = NULL;
    r->cancel = 0;
    receive_unexp(r, u);
}

cr_unexp *cr_pt2pt_probe(cr_comm *comm, uint32_t ctx, int source, int tag, bool take)
{
    (void)comm;
    return cr_match_find_unexp(cr_match_ctx_find(ctx), ctx, source, tag, take);
}

void cr_pt2pt_unexp_status(const cr_unexp *u, MPI_Status *status)
{
    cr_status_out_set(status, u->src, u->tag, u->bytes);
}

int cr_pt2pt_cancel(cr_request *r)
{
    if (r->done)
        return MPI_SUCCESS;
    if (r->kind == CR_REQ_RECV) {
        if (cr_match_unpost(cr_match_ctx_find(r->ctx), r)) {
            cr_status_empty(&r->status);
            r->status.MPI_internal[2] = 1;
            cr_request_complete(r);
        }
        return MPI_SUCCESS;
    }
    /* A send not yet on the wire is simply withdrawn. */
    int dst = r->world_peer;
    dst_lock(dst);
    for (outq_item **it = &OQ.head[dst]; *it; it = &(*it)->next) {
        uint8_t t = (*it)->env.type;
        if ((*it)->req == r && (t == P_EAGER || t == P_RTS || (t == P_LONG && r->offset == 0))) {
            outq_item *gone = *it;
            *it = gone->next;
            if (OQ.tail[dst] == gone) {
                OQ.tail[dst] = OQ.head[dst];
                while (OQ.tail[dst] && OQ.tail[dst]->next)
                    OQ.tail[dst] = OQ.tail[dst]->next;
            }
            if (!OQ.head[dst])
                OQ.busy--;
            if (t != P_RTS)
                credit_refund(dst, r->bytes);
            dst_unlock(dst);
            free(gone);
            r->status.MPI_internal[2] = 1;
            send_done(r);
            return MPI_SUCCESS;
        }
    }
    dst_unlock(dst);
    /* On the wire, not yet matched (a rendezvous or a synchronous eager send): ask the
     * receiver to drop it. The answer completes the request, cancelled or not. */
    if ((r->proto == P_RTS || (r->proto == P_EAGER && r->mode == CR_MODE_SYNC)) && r->cancel == CANCEL_NONE) {
        r->cancel = CANCEL_ASKED;
        cr_penv env = {.ctx = r->ctx, .type = P_CANCEL, .b = (uintptr_t)r};
        send_frame(dst, &env, NULL, NULL);
        /* To this process itself, the answer is a round of progress away: take it now, so the
         * first test after MPI_Cancel reports the cancelled send (mpi4py's tests, and users,
         * poll once and then receive the message if it is not cancelled). */
        for (int round = 0; dst == cr_rt.rank && r->cancel == CANCEL_ASKED && round < 4; round++)
            cr_progress();
    }
    return MPI_SUCCESS;
}

/* ----------------------------------------------------------------- blocking helpers */

/* A small contiguous message, nothing queued before it, room to send: sent, and true.
 * `outside`: called outside the critical section (cr_pt2pt_send_quick), where at
 * MPI_THREAD_MULTIPLE only what the transport can send there goes. */
static CR_ALWAYS_INLINE bool send_now(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm,
                                      uint32_t ctx, bool outside)
{
    int dst = cr_comm_peer_world(comm, dest);
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    if (CR_UNLIKELY(!cr_dtype_is_contig_n(dt, count)))
        return false;
    if (outside && CR_UNLIKELY(cr_thread_multiple) && bytes >= cr_xport_parallel_below(dst))
        return false;
    bool sent = false;
    dst_lock(dst);
    if (CR_LIKELY(oq_empty(dst) && eager_fits(dst, bytes, false) && credit_take(dst, bytes))) {
        cr_penv env = {.ctx = ctx, .src = comm->rank, .tag = tag, .type = P_EAGER, .a = bytes};
        sent = cr_xport_send(dst, CR_XCLASS_PT2PT, (cr_xenv *)&env, (const char *)buf + dt->true_lb, bytes, NULL, 0);
        if (!sent)
            credit_refund(dst, bytes); /* the request path counts it again */
    }
    dst_unlock(dst);
    return sent;
}

bool cr_pt2pt_send_now(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, uint32_t ctx)
{
    return send_now(buf, count, dt, dest, tag, comm, ctx, false);
}

bool cr_pt2pt_send_quick(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm)
{
    /* what the full entry point would reject goes there, to be raised with its message */
    if (CR_UNLIKELY(count < 0 || tag < 0 || (unsigned)dest >= (unsigned)comm->remote_size ||
                    (!buf && count && cr_dtype_starts_at_buffer(dt))))
        return false;
    return send_now(buf, count, dt, dest, tag, comm, comm->ctx, true);
}

int cr_pt2pt_send(const void *buf, MPI_Count count, cr_dtype *dt, int dest, int tag, cr_comm *comm, uint32_t ctx,
                  int mode)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (CR_LIKELY(mode != CR_MODE_SYNC && cr_pt2pt_send_now(buf, count, dt, dest, tag, comm, ctx)))
        return MPI_SUCCESS;
    cr_request r = {0};
    cr_pt2pt_prepare(&r, CR_REQ_SEND, buf, count, dt, dest, tag, comm, ctx, mode);
    int err = cr_pt2pt_send_start(&r);
    if (err)
        return err;
    cr_progress_wait(&r.done);
    return r.status.MPI_ERROR;
}

int cr_pt2pt_recv(void *buf, MPI_Count count, cr_dtype *dt, int source, int tag, cr_comm *comm, uint32_t ctx,
                  MPI_Status *status)
{
    cr_request r = {0};
    cr_pt2pt_prepare(&r, CR_REQ_RECV, buf, count, dt, source, tag, comm, ctx, CR_MODE_STANDARD);
    int err = cr_pt2pt_recv_post(&r);
    if (err)
        return err;
    cr_progress_wait(&r.done);
    if (status)
        cr_status_out(status, &r.status);
    return r.status.MPI_ERROR;
}

/* ----------------------------------------------------------------- life cycle */

void cr_pt2pt_calls_setup(void);

void cr_pt2pt_setup(void)
{
    cr_pt2pt_calls_setup();
}

int cr_pt2pt_init(void)
{
    OQ.head = calloc((size_t)cr_rt.size, sizeof *OQ.head);
    OQ.tail = calloc((size_t)cr_rt.size, sizeof *OQ.tail);
    longs = calloc((size_t)cr_rt.size, sizeof *longs);
    CR.used = calloc((size_t)cr_rt.size, sizeof *CR.used);
    CR.taken = calloc((size_t)cr_rt.size, sizeof *CR.taken);
    send_locks = aligned_alloc(_Alignof(cr_spin), (size_t)cr_rt.size * sizeof *send_locks);
    if (send_locks)
        memset(send_locks, 0, (size_t)cr_rt.size * sizeof *send_locks);
    if (!OQ.head || !OQ.tail || !longs || !CR.used || !CR.taken || !send_locks)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for %d send queues", cr_rt.size);
    cr_xport_set_handler(CR_XCLASS_PT2PT, on_frame);
    cr_xport_set_placer(CR_XCLASS_PT2PT, place_frame);
    if (cr_progress_add_hook(oq_progress))
        return cr_err(MPI_ERR_NO_MEM, "out of memory registering the send queues' progress");
    return MPI_SUCCESS;
}

/* Before the transports close: everything this process sent must have left (a frame still
 * queued here would be lost). */
static bool queues_empty(void *arg)
{
    (void)arg;
    return OQ.busy == 0 && lent_out == 0;
}

void cr_pt2pt_finalize(void)
{
    cr_progress_wait_until(queues_empty, NULL);
    cr_match_finalize();
    free(OQ.head);
    free(OQ.tail);
    OQ.head = OQ.tail = NULL;
    for (int r = 0; r < cr_rt.size; r++)
        while (longs[r])
            long_untrack(r, longs[r]);
    free(longs);
    longs = NULL;
    free(CR.used);
    free(CR.taken);
    CR.used = CR.taken = NULL;
    free(send_locks);
    send_locks = NULL;
    CR.returns_waiting = 0;
}
