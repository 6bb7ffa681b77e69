/* Nonblocking collectives through the node component (src/coll/node.c, node_large.c), which
 * runs them one at a time per communicator and process in start order ("turns", node.h):
 *   - 40 rounds, each starting 2 to 8 collectives at once, of random kinds (MPI_Ibarrier,
 *     Ibcast, Ireduce, Iallreduce, Igather, Iscatter, Iallgather, Ialltoall, Iscan, Iexscan,
 *     Ireduce_scatter_block, Ialltoallv with blocks of 0, n / 2 or n by pair: it agrees its
 *     pieces in its first, so it takes its blocks at its turn like the others), counts (0, 1, a few, ~1000, ~40000, ~300000 elements; spread
 *     over the blocks for the collectives with a block per process), MPI_INT or MPI_DOUBLE,
 *     MPI_SUM or MPI_MAX, random roots and MPI_IN_PLACE where the standard allows it (scans:
 *     chosen per process), on MPI_COMM_WORLD, on a duplicate (with areas of its own after three
 *     blocking barriers) and on even/odd halves (which get their areas only at their third
 *     blocking collective, made during the rounds while nonblocking ones are outstanding),
 *     interleaved, and every 8th round on a temporary communicator (a duplicate, or a split in
 *     reverse rank order) set up by three barriers and freed right after the collectives on it
 *     have started; the choices come from a generator seeded by the round, the same everywhere;
 *   - completion chosen per process (seeded by round and rank): MPI_Wait in reverse or random
 *     order, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Testany / MPI_Testsome / MPI_Test
 *     polling loops, and now and then an MPI_Test among the starts; some processes leave the
 *     last one or two requests of a round outstanding and complete them in the next round,
 *     behind that round's collectives;
 *   - a blocking MPI_Barrier or MPI_Allreduce (small, or staged through the blocks) on one of
 *     the communicators, called among the nonblocking starts (it waits for its turn behind
 *     them), and an MPI_Sendrecv with the neighbours before the waits;
 *   - one process (changing with the round) sleeping 1 or 2 ms before or among its starts, so
 *     that the others wait for it and for their turns;
 *   - then 800 small barriers, allreduces and reduces (every root) on MPI_COMM_WORLD, eight at a
 *     time: the small path's counters move by hundreds, across 2^32 from
 *     COURIER_DEBUG_SEQ_START=4294967000.
 * Every element that arrived is checked against values computed from the source rank, the
 * collective's number and the element's index; send buffers must be unchanged, and the guard
 * elements after every buffer untouched; requests are MPI_REQUEST_NULL after completion.
 * An optional argument (a number, 0 by default) draws another sequence of rounds; failures
 * name it with the round and the collective. */
#include "mpitest.h"

#include <stdint.h>
#include <unistd.h>

#define ROUNDS 40
#define TAIL 100 /* batches of eight small collectives after the rounds */
#define GUARD 4
#define SENTINEL (-1)
#define GUARD_VALUE (-77)
#define BUDGET 400000 /* elements of the largest buffers of one round's collectives, at most */

enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_SCATTER, K_ALLGATHER, K_ALLTOALL, K_SCAN, K_EXSCAN,
       K_RSB, K_ALLTOALLV, NK };
static const char *const kname[NK] = {"MPI_Ibarrier",   "MPI_Ibcast",   "MPI_Ireduce",  "MPI_Iallreduce",
                                      "MPI_Igather",    "MPI_Iscatter", "MPI_Iallgather", "MPI_Ialltoall",
                                      "MPI_Iscan",      "MPI_Iexscan",  "MPI_Ireduce_scatter_block",
                                      "MPI_Ialltoallv"};
/* C_TEMP exists during some rounds only: made and set up at the round's start, freed once the
 * round's collectives have started (a duplicate, or a split in reverse rank order). */
enum { C_WORLD, C_DUP, C_SPLIT, C_TEMP, NCOMM };
static const char *const cname[NCOMM] = {"MPI_COMM_WORLD", "the duplicate", "the even/odd half",
                                         "a temporary communicator"};
static MPI_Comm comms[NCOMM];
static int ncomms = C_TEMP; /* C_TEMP + 1 while it exists */
static int wrank, wsize;
static int seed; /* argv[1], 0 by default: another sequence of rounds */

/* ----------------------------------------------------------------- generator */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
typedef struct {
    uint64_t s;
} rng;
static uint64_t draw(rng *g)
{
    g->s += 0x9e3779b97f4a7c15ull;
    return mix(g->s);
}
static int below(rng *g, int n)
{
    return (int)(draw(g) % (uint64_t)n);
}

/* The value of element i that process `src` (its rank in the communicator) contributes to
 * collective number `seq`: below 2^20, so sums over 16 processes are exact in an int. */
static int val(int src, int seq, MPI_Count i)
{
    return (int)(mix(((uint64_t)(uint32_t)seq << 24) ^ ((uint64_t)src << 56) ^ ((uint64_t)i * 0xd1b54a32d192ed03ull)) &
                 0xfffff);
}

/* ----------------------------------------------------------------- one collective */

typedef struct {
    int kind, cid, dbl, max, root, in_place, null_recv;
    int round, seq, me, p; /* me, p: rank and size in the communicator */
    MPI_Count n;           /* count (per process for the collectives with blocks) */
    void *sbuf, *rbuf;     /* NULL when not passed */
    MPI_Count sn, rn;      /* their elements (before the guard) */
    int *vcounts, *vdispls; /* alltoallv: this process's counts and displacements (the same both ways) */
    MPI_Count *vfrom;       /* alltoallv: where in process j's send buffer its block for this one starts */
    MPI_Request req;
} op_t;

static double item(const op_t *o, int src, MPI_Count i)
{
    int v = val(src, o->seq, i);
    return o->dbl ? v + 0.25 : v; /* multiples of 1/4 below 2^25: every sum is exact */
}
static double get(const op_t *o, const void *b, MPI_Count i)
{
    return o->dbl ? ((const double *)b)[i] : ((const int *)b)[i];
}
static void put(const op_t *o, void *b, MPI_Count i, double v)
{
    if (o->dbl)
        ((double *)b)[i] = v;
    else
        ((int *)b)[i] = (int)v;
}
/* Processes lo..hi-1 combined, element i, in rank order. */
static double combined(const op_t *o, int lo, int hi, MPI_Count i)
{
    double acc = item(o, lo, i);
    for (int r = lo + 1; r < hi; r++) {
        double x = item(o, r, i);
        acc = o->max ? (x > acc ? x : acc) : acc + x;
    }
    return acc;
}

/* Alltoallv's count between processes a and b, the same both ways (so MPI_IN_PLACE works):
 * 0, n / 2 or n, by pair and collective; and where process x's block for j starts, sending and
 * receiving alike. */
static MPI_Count vcount(const op_t *o, int a, int b)
{
    return o->n * ((a + b + o->seq) % 3) / 2;
}
static MPI_Count voff(const op_t *o, int x, int j)
{
    MPI_Count at = 0;
    for (int k = 0; k < j; k++)
        at += vcount(o, x, k);
    return at;
}

/* n elements and the guard; own: process me's values from element 0, else SENTINEL. */
static void *buffer(const op_t *o, MPI_Count n, int own)
{
    char *b = malloc((size_t)(n + GUARD) * (o->dbl ? sizeof(double) : sizeof(int)));
    for (MPI_Count i = 0; i < n; i++)
        put(o, b, i, own ? item(o, o->me, i) : SENTINEL);
    for (MPI_Count i = n; i < n + GUARD; i++)
        put(o, b, i, GUARD_VALUE);
    return b;
}

static void describe(const op_t *o, char *d, size_t len)
{
    int reduces = o->kind == K_REDUCE || o->kind == K_ALLREDUCE || o->kind == K_SCAN || o->kind == K_EXSCAN ||
                  o->kind == K_RSB,
        rooted = o->kind == K_BCAST || o->kind == K_REDUCE || o->kind == K_GATHER || o->kind == K_SCATTER;
    char root[32] = "";
    if (rooted)
        snprintf(root, sizeof root, ", root %d", o->root);
    snprintf(d, len, "seed %d, round %d, collective #%d: %s on %s (rank %d of %d there), %lld %s%s%s%s", seed,
             o->round, o->seq, kname[o->kind], cname[o->cid], o->me, o->p, (long long)o->n,
             o->dbl ? "MPI_DOUBLE" : "MPI_INT", reduces ? (o->max ? " MPI_MAX" : " MPI_SUM") : "", root,
             o->in_place ? ", MPI_IN_PLACE here" : "");
}

/* Draws the next collective of a round (every process draws the same numbers). */
static op_t plan(rng *g, int round, int seq, MPI_Count *budget)
{
    op_t o = {0};
    o.round = round;
    o.seq = seq;
    o.kind = below(g, NK);
    o.cid = below(g, ncomms);
    o.dbl = below(g, 2);
    o.max = below(g, 4) == 0;
    uint64_t root = draw(g), scan_in_place = draw(g), jitter = draw(g);
    int in_place = below(g, 3) == 0;
    o.null_recv = below(g, 2);
    int cls = below(g, 15);
    MPI_Count n = cls < 2   ? 0
                  : cls < 4 ? 1
                  : cls < 7 ? 2 + (MPI_Count)(jitter % 6)
                  : cls < 9 ? 40 + (MPI_Count)(jitter % 80) /* up to 1 KiB, where sleep mode's last process combines */
                  : cls < 12 ? 900 + (MPI_Count)(jitter % 200)
                  : cls < 14 ? 38000 + (MPI_Count)(jitter % 4000)
                             : 290000 + (MPI_Count)(jitter % 20000);
    int blocks = o.kind == K_GATHER || o.kind == K_SCATTER || o.kind == K_ALLGATHER || o.kind == K_ALLTOALL ||
                 o.kind == K_RSB || o.kind == K_ALLTOALLV;
    if (blocks && n > 1100)
        n /= wsize; /* the size drawn is the whole buffer's */
    MPI_Count footprint = blocks ? n * wsize : n;
    if (*budget + footprint > BUDGET) {
        n = 900 + (MPI_Count)(jitter % 200);
        footprint = blocks ? n * wsize : n;
    }
    *budget += footprint;
    o.n = o.kind == K_BARRIER ? 0 : n;
    MPI_Comm_rank(comms[o.cid], &o.me);
    MPI_Comm_size(comms[o.cid], &o.p);
    o.root = (int)(root % (uint64_t)o.p);
    switch (o.kind) {
    case K_REDUCE:
    case K_GATHER:
    case K_SCATTER: o.in_place = o.me == o.root && in_place; break;
    case K_ALLREDUCE:
    case K_ALLGATHER:
    case K_ALLTOALL:
    case K_ALLTOALLV:
    case K_RSB: o.in_place = in_place; break; /* at every process, as the standard asks */
    case K_SCAN:
    case K_EXSCAN: o.in_place = (int)((scan_in_place >> (wrank % 61)) & 1); break; /* per process */
    }
    return o;
}

static void start(op_t *o)
{
    MPI_Comm c = comms[o->cid];
    MPI_Datatype t = o->dbl ? MPI_DOUBLE : MPI_INT;
    MPI_Op op = o->max ? MPI_MAX : MPI_SUM;
    int n = (int)o->n, me = o->me, p = o->p, root = o->root, ip = o->in_place;
    MPI_Count all = o->n * p;
    switch (o->kind) {
    case K_BARRIER: MPI_Ibarrier(c, &o->req); break;
    case K_BCAST:
        o->rbuf = buffer(o, o->rn = o->n, me == root);
        MPI_Ibcast(o->rbuf, n, t, root, c, &o->req);
        break;
    case K_REDUCE:
        if (me == root || !o->null_recv)
            o->rbuf = buffer(o, o->rn = o->n, ip);
        if (!ip)
            o->sbuf = buffer(o, o->sn = o->n, 1);
        MPI_Ireduce(ip ? MPI_IN_PLACE : o->sbuf, o->rbuf, n, t, op, root, c, &o->req);
        break;
    case K_ALLREDUCE:
        o->rbuf = buffer(o, o->rn = o->n, ip);
        if (!ip)
            o->sbuf = buffer(o, o->sn = o->n, 1);
        MPI_Iallreduce(ip ? MPI_IN_PLACE : o->sbuf, o->rbuf, n, t, op, c, &o->req);
        break;
    case K_GATHER:
        if (!ip)
            o->sbuf = buffer(o, o->sn = o->n, 1);
        if (me == root) {
            o->rbuf = buffer(o, o->rn = all, 0);
            for (MPI_Count i = 0; ip && i < o->n; i++)
                put(o, o->rbuf, me * o->n + i, item(o, me, i));
        }
        MPI_Igather(ip ? MPI_IN_PLACE : o->sbuf, n, t, o->rbuf, n, t, root, c, &o->req);
        break;
    case K_SCATTER:
        if (me == root)
            o->sbuf = buffer(o, o->sn = all, 1);
        if (!ip)
            o->rbuf = buffer(o, o->rn = o->n, 0);
        MPI_Iscatter(o->sbuf, n, t, ip ? MPI_IN_PLACE : o->rbuf, n, t, root, c, &o->req);
        break;
    case K_ALLGATHER:
        if (!ip)
            o->sbuf = buffer(o, o->sn = o->n, 1);
        o->rbuf = buffer(o, o->rn = all, 0);
        for (MPI_Count i = 0; ip && i < o->n; i++)
            put(o, o->rbuf, me * o->n + i, item(o, me, i));
        MPI_Iallgather(ip ? MPI_IN_PLACE : o->sbuf, n, t, o->rbuf, n, t, c, &o->req);
        break;
    case K_ALLTOALL:
        if (!ip)
            o->sbuf = buffer(o, o->sn = all, 1);
        o->rbuf = buffer(o, o->rn = all, ip);
        MPI_Ialltoall(ip ? MPI_IN_PLACE : o->sbuf, n, t, o->rbuf, n, t, c, &o->req);
        break;
    case K_ALLTOALLV: {
        MPI_Count total = 0;
        o->vcounts = malloc(sizeof(int) * (size_t)p);
        o->vdispls = malloc(sizeof(int) * (size_t)p);
        o->vfrom = malloc(sizeof(MPI_Count) * (size_t)p);
        for (int j = 0; j < p; j++) {
            o->vcounts[j] = (int)vcount(o, me, j);
            o->vdispls[j] = (int)total;
            o->vfrom[j] = voff(o, j, me);
            total += o->vcounts[j];
        }
        if (!ip)
            o->sbuf = buffer(o, o->sn = total, 1);
        o->rbuf = buffer(o, o->rn = total, ip);
        MPI_Ialltoallv(ip ? MPI_IN_PLACE : o->sbuf, o->vcounts, o->vdispls, t, o->rbuf, o->vcounts, o->vdispls, t, c,
                       &o->req);
        break;
    }
    case K_SCAN:
    case K_EXSCAN:
        if (!ip)
            o->sbuf = buffer(o, o->sn = o->n, 1);
        o->rbuf = buffer(o, o->rn = o->n, ip);
        if (o->kind == K_SCAN)
            MPI_Iscan(ip ? MPI_IN_PLACE : o->sbuf, o->rbuf, n, t, op, c, &o->req);
        else
            MPI_Iexscan(ip ? MPI_IN_PLACE : o->sbuf, o->rbuf, n, t, op, c, &o->req);
        break;
    case K_RSB:
        if (!ip)
            o->sbuf = buffer(o, o->sn = all, 1);
        o->rbuf = buffer(o, o->rn = ip ? all : o->n, ip);
        MPI_Ireduce_scatter_block(ip ? MPI_IN_PLACE : o->sbuf, o->rbuf, n, t, op, c, &o->req);
        break;
    }
}

/* Counts the elements of b[from, to) that differ from want(i), noting the first. */
typedef double want_fn(const op_t *o, MPI_Count i);
static void check_range(const op_t *o, const void *b, MPI_Count from, MPI_Count to, want_fn *want, const char *what)
{
    MPI_Count bad = 0, first = 0;
    double got1 = 0, want1 = 0;
    for (MPI_Count i = from; i < to; i++) {
        double w = want(o, i), g = get(o, b, i);
        if (g != w && !bad++)
            first = i, got1 = g, want1 = w;
    }
    if (bad) {
        char d[256];
        describe(o, d, sizeof d);
        CHECK(0, "%s: %s: %lld elements wrong, the first element %lld is %.2f, expected %.2f", d, what,
              (long long)bad, (long long)first, got1, want1);
    }
}

static double want_own(const op_t *o, MPI_Count i)
{
    return item(o, o->me, i);
}
static double want_guard(const op_t *o, MPI_Count i)
{
    (void)o, (void)i;
    return GUARD_VALUE;
}
static double want_root(const op_t *o, MPI_Count i)
{
    return item(o, o->root, i);
}
static double want_all(const op_t *o, MPI_Count i)
{
    return combined(o, 0, o->p, i);
}
static double want_blocks(const op_t *o, MPI_Count i) /* block of process i / n, element i % n */
{
    return item(o, (int)(i / o->n), i % o->n);
}
static double want_scattered(const op_t *o, MPI_Count i)
{
    return item(o, o->root, o->me * o->n + i);
}
static double want_transposed(const op_t *o, MPI_Count i)
{
    return item(o, (int)(i / o->n), o->me * o->n + i % o->n);
}
static double want_v(const op_t *o, MPI_Count i) /* from the last process whose block starts at or before i */
{
    int src = 0;
    while (src + 1 < o->p && o->vdispls[src + 1] <= i)
        src++;
    return item(o, src, o->vfrom[src] + i - o->vdispls[src]);
}
static double want_scan(const op_t *o, MPI_Count i)
{
    return combined(o, 0, o->me + 1, i);
}
static double want_exscan(const op_t *o, MPI_Count i)
{
    return combined(o, 0, o->me, i);
}
static double want_rsb(const op_t *o, MPI_Count i)
{
    double acc = item(o, 0, o->me * o->n + i);
    for (int r = 1; r < o->p; r++) {
        double x = item(o, r, o->me * o->n + i);
        acc = o->max ? (x > acc ? x : acc) : acc + x;
    }
    return acc;
}

static void verify(op_t *o)
{
    char d[256];
    if (o->req != MPI_REQUEST_NULL) {
        describe(o, d, sizeof d);
        CHECK(o->req == MPI_REQUEST_NULL, "%s: the request is not MPI_REQUEST_NULL after completion", d);
    }
    if (o->sbuf) {
        check_range(o, o->sbuf, 0, o->sn, want_own, "the send buffer changed");
        check_range(o, o->sbuf, o->sn, o->sn + GUARD, want_guard, "written past the send buffer");
    }
    int mine = o->me == o->root;
    want_fn *want = NULL;
    MPI_Count upto = o->rn;
    switch (o->kind) {
    case K_BCAST: want = want_root; break;
    case K_REDUCE: want = mine ? want_all : NULL; break; /* recvbuf is not significant elsewhere */
    case K_ALLREDUCE: want = want_all; break;
    case K_GATHER: want = mine ? want_blocks : NULL; break;
    case K_SCATTER: want = want_scattered; break;
    case K_ALLGATHER: want = want_blocks; break;
    case K_ALLTOALL: want = want_transposed; break;
    case K_ALLTOALLV: want = want_v; break;
    case K_SCAN: want = want_scan; break;
    case K_EXSCAN: want = o->me > 0 ? want_exscan : NULL; break; /* undefined at rank 0 */
    case K_RSB: want = want_rsb, upto = o->n; break;             /* in place: the rest is undefined */
    }
    if (o->rbuf && want)
        check_range(o, o->rbuf, 0, upto, want, "the data that arrived");
    if (o->rbuf && (want || o->kind == K_EXSCAN))
        check_range(o, o->rbuf, o->rn, o->rn + GUARD, want_guard, "written past the receive buffer");
    free(o->sbuf);
    free(o->rbuf);
    free(o->vcounts);
    free(o->vdispls);
    free(o->vfrom);
    o->sbuf = o->rbuf = NULL;
    o->vcounts = o->vdispls = NULL;
    o->vfrom = NULL;
}

/* ----------------------------------------------------------------- around the collectives */

/* A blocking collective on communicator cid while nonblocking ones are outstanding there:
 * kind 0 a barrier, 1 an allreduce of 3 ints (the small node path), 2 of 5000 (staged). */
static void blocking(int cid, int kind, int round)
{
    MPI_Comm c = comms[cid];
    if (kind == 0) {
        MPI_Barrier(c);
        return;
    }
    int me, p, n = kind == 1 ? 3 : 5000;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &p);
    int *s = malloc((size_t)n * sizeof *s), *r = malloc((size_t)n * sizeof *r);
    for (int i = 0; i < n; i++)
        s[i] = me * 7 + i + round, r[i] = SENTINEL;
    MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, c);
    int bad = 0, first = 0;
    for (int i = 0; i < n; i++)
        if (r[i] != 7 * p * (p - 1) / 2 + p * (i + round) && !bad++)
            first = i;
    CHECK(bad == 0, "round %d: blocking MPI_Allreduce of %d ints on %s among nonblocking ones: %d wrong, first at %d",
          round, n, cname[cid], bad, first);
    free(s);
    free(r);
}

static void sendrecv(int round)
{
    int sb[4], rb[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
    int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
    for (int i = 0; i < 4; i++)
        sb[i] = wrank * 100 + i + round;
    MPI_Sendrecv(sb, 4, MPI_INT, right, 1000 + round, rb, 4, MPI_INT, left, 1000 + round, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        CHECK(rb[i] == left * 100 + i + round, "round %d: MPI_Sendrecv from %d: element %d is %d, expected %d", round,
              left, i, rb[i], left * 100 + i + round);
}

enum { W_REVERSE, W_ALL, W_TESTANY, W_TESTSOME, W_WAITSOME, W_WAITANY, W_SHUFFLED, W_TEST, NW };
static const char *const wname[NW] = {"MPI_Wait in reverse order", "MPI_Waitall", "MPI_Testany", "MPI_Testsome",
                                      "MPI_Waitsome",              "MPI_Waitany", "MPI_Wait in random order",
                                      "MPI_Test"};

/* Completes the m requests of ops[] by `method`. */
static void complete(op_t *ops, int m, int method, rng *mine, int round)
{
    MPI_Request *reqs = malloc((size_t)(m + 1) * sizeof *reqs);
    int *idx = malloc((size_t)(m + 1) * sizeof *idx), *seen = calloc((size_t)m + 1, sizeof *seen);
    int left = 0, flag, k, out;
    for (int i = 0; i < m; i++) {
        reqs[i] = ops[i].req;
        left += reqs[i] != MPI_REQUEST_NULL; /* some may have completed in a test among the starts */
        seen[i] = reqs[i] == MPI_REQUEST_NULL;
    }
    switch (method) {
    case W_REVERSE:
        for (int i = m - 1; i >= 0; i--)
            MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        break;
    case W_ALL: MPI_Waitall(m, reqs, MPI_STATUSES_IGNORE); break;
    case W_SHUFFLED:
        for (int i = 0; i < m; i++)
            idx[i] = i;
        for (int i = m - 1; i > 0; i--) {
            int j = below(mine, i + 1), x = idx[i];
            idx[i] = idx[j], idx[j] = x;
        }
        for (int i = 0; i < m; i++)
            MPI_Wait(&reqs[idx[i]], MPI_STATUS_IGNORE);
        break;
    case W_TEST:
        while (left)
            for (int i = 0; i < m; i++)
                if (reqs[i] != MPI_REQUEST_NULL) {
                    MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
                    left -= flag;
                }
        break;
    case W_TESTANY:
    case W_WAITANY:
        while (left > 0) {
            if (method == W_TESTANY)
                MPI_Testany(m, reqs, &k, &flag, MPI_STATUS_IGNORE);
            else
                MPI_Waitany(m, reqs, &k, MPI_STATUS_IGNORE), flag = 1;
            if (!flag)
                continue;
            CHECK(k != MPI_UNDEFINED && k >= 0 && k < m && !seen[k],
                  "round %d: %s returned index %d with %d requests left", round, wname[method], k, left);
            if (k == MPI_UNDEFINED || k < 0 || k >= m || seen[k])
                break;
            seen[k] = 1;
            left--;
        }
        break;
    case W_TESTSOME:
    case W_WAITSOME:
        while (left > 0) {
            if (method == W_TESTSOME)
                MPI_Testsome(m, reqs, &out, idx, MPI_STATUSES_IGNORE);
            else
                MPI_Waitsome(m, reqs, &out, idx, MPI_STATUSES_IGNORE);
            CHECK(out != MPI_UNDEFINED && (out > 0 || method == W_TESTSOME) && out <= left,
                  "round %d: %s returned %d with %d requests left", round, wname[method], out, left);
            if (out == MPI_UNDEFINED || out > left)
                break;
            for (int i = 0; i < out; i++) {
                CHECK(idx[i] >= 0 && idx[i] < m && !seen[idx[i]],
                      "round %d: %s returned index %d twice or out of range", round, wname[method], idx[i]);
                if (idx[i] >= 0 && idx[i] < m)
                    seen[idx[i]] = 1;
            }
            left -= out;
        }
        break;
    }
    for (int i = 0; i < m; i++)
        ops[i].req = reqs[i];
    free(reqs);
    free(idx);
    free(seen);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    seed = argc > 1 ? atoi(argv[1]) : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    comms[C_WORLD] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[C_DUP]);
    for (int i = 0; i < 3; i++) /* the third sets up the duplicate's own node areas */
        MPI_Barrier(comms[C_DUP]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[C_SPLIT]);

    op_t *live = malloc(16 * sizeof *live); /* the requests carried over, then this round's */
    int nlive = 0, seq = 0;
    for (int round = 0; round < ROUNDS; round++) {
        rng g = {mix(0x6e6f6465ull + (uint64_t)round + ((uint64_t)seed << 40))}; /* the same everywhere */
        rng mine = {mix(((uint64_t)round << 32) ^ (uint64_t)wrank ^ ((uint64_t)seed << 48) ^ 0x7475000000000000ull)};
        if (round % 8 == 7) { /* a temporary communicator, with node areas from its third barrier */
            if (round % 16 == 7)
                MPI_Comm_dup(MPI_COMM_WORLD, &comms[C_TEMP]);
            else
                MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[C_TEMP]);
            for (int i = 0; i < 3; i++)
                MPI_Barrier(comms[C_TEMP]);
            ncomms = C_TEMP + 1;
        }
        int k = 2 + below(&g, 7);
        /* The halves' blocking collectives at rounds 2, 5 and 8 set up their node areas. */
        int forced = round == 2 || round == 5 || round == 8;
        int bpos = -1, bcid = 0, bkind = 0;
        if (below(&g, 3) == 0 || forced) {
            bpos = below(&g, k + 1);
            bcid = forced ? C_SPLIT : below(&g, ncomms);
            bkind = below(&g, 3);
        } else {
            draw(&g), draw(&g), draw(&g);
        }
        int exchange = below(&g, 3) == 0;
        int sleeper = round % 3 ? (round * 5 + 1) % wsize : -1;
        int sleep_at = below(&g, 2) ? 0 : below(&g, k);
        MPI_Count budget = 0;
        for (int j = 0; j < k; j++) {
            op_t o = plan(&g, round, seq++, &budget);
            if (wrank == sleeper && j == sleep_at)
                usleep(round % 2 ? 2000 : 1000);
            if (j == bpos)
                blocking(bcid, bkind, round);
            live[nlive] = o;
            start(&live[nlive++]);
            if (below(&mine, 4) == 0) { /* progress among the starts; may complete one early */
                int flag;
                MPI_Test(&live[below(&mine, nlive)].req, &flag, MPI_STATUS_IGNORE);
            }
        }
        if (bpos == k)
            blocking(bcid, bkind, round);
        if (ncomms > C_TEMP) { /* freed with its collectives still running */
            MPI_Comm_free(&comms[C_TEMP]);
            ncomms = C_TEMP;
        }
        if (exchange)
            sendrecv(round);
        /* Complete all but the last `carry` started here (completed next round). */
        int carry = round < ROUNDS - 1 && below(&mine, 4) == 0 ? 1 + below(&mine, 2) : 0;
        int m = nlive - carry, method = below(&mine, NW);
        complete(live, m, method, &mine, round);
        for (int i = 0; i < m; i++)
            verify(&live[i]);
        memmove(live, live + m, (size_t)carry * sizeof *live);
        nlive = carry;
    }
    free(live);
    /* Then a long run of small ones on MPI_COMM_WORLD, eight at a time, so that the small
     * path's generation and reduction numbers move by hundreds (across 2^32 when started near
     * it by COURIER_DEBUG_SEQ_START). */
    for (int b = 0; b < TAIL; b++) {
        op_t batch[8];
        rng mine = {mix(((uint64_t)(ROUNDS + b) << 32) ^ (uint64_t)wrank ^ ((uint64_t)seed << 48))};
        for (int j = 0; j < 8; j++) {
            op_t *o = &batch[j];
            *o = (op_t){.kind = j % 4 == 0 ? K_BARRIER : j % 4 == 1 ? K_ALLREDUCE : K_REDUCE, .round = ROUNDS + b,
                        .seq = seq++, .dbl = (b + j) % 3 == 0, .max = (b + j) % 5 == 0, .null_recv = 1};
            MPI_Comm_rank(MPI_COMM_WORLD, &o->me);
            MPI_Comm_size(MPI_COMM_WORLD, &o->p);
            o->n = o->kind == K_BARRIER ? 0 : 1 + (b + j) % 7;
            o->root = (b + j) % wsize;
            o->in_place = o->kind == K_ALLREDUCE && b % 4 == 1;
            start(o);
        }
        complete(batch, 8, below(&mine, NW), &mine, ROUNDS + b);
        for (int j = 0; j < 8; j++)
            verify(&batch[j]);
    }
    MPI_Comm_free(&comms[C_DUP]);
    MPI_Comm_free(&comms[C_SPLIT]);
    return mt_finish();
}
