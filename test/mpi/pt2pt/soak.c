/* Soak: 100,000 messages in total (argument 1 changes the number) between all ranks, of random
 * size (24 B to 64 KiB: many small ones, uniform up to 64 KiB otherwise, and the protocols'
 * boundary sizes), random tag and random destination (oneself included), sent with
 * MPI_Isend/MPI_Issend from a bounded window while receiving. Each message carries (source,
 * destination, per-destination sequence number, size, checksum of the rest); the rest is a
 * pattern. Receivers alternate between
 *   A: a window of MPI_ANY_SOURCE/MPI_ANY_TAG receives,
 *   B: one receive per source, by tag or MPI_ANY_TAG, for a message MPI_Iprobe saw (sometimes a
 *      later tag than the next message, so messages are taken out of order across tags),
 *   C: one MPI_ANY_SOURCE receive by tag (MPI_Irecv, or MPI_Improbe + MPI_Imrecv).
 * Every rank knows every sender's schedule (the same seeded generator), so it checks that every
 * message arrives exactly once, intact, with the status and probe results it must have, and
 * that the matching obeys non-overtaking: a receive always gets the earliest message of its
 * source that it matches and that no earlier receive took.
 * Deadlock-free by construction: the restricted receives (B, C) are only posted for messages
 * that already arrived, and the wildcard windows never exceed the messages still to come. */
#include "mpitest.h"

#include <stdint.h>

#define MAXB 65536
#define HDR 24
#define SW 16 /* send window */
#define RW 16 /* receive window */

typedef struct {
    int32_t src, dst, seq, bytes;
    uint64_t sum;
} header;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int msg_size(uint64_t *rng)
{
    uint64_t r = splitmix(rng);
    int k = (int)(r % 1000);
    if (k < 10) {
        static const int edge[] = {HDR, 16383, 16384, 16385, 65535, MAXB};
        return edge[k % 6];
    }
    uint64_t v = r >> 16;
    if (k < 400)
        return HDR + (int)(v % (1024 - HDR + 1));
    return HDR + (int)(v % (MAXB - HDR + 1)); /* a quarter of all messages are rendezvous */
}

/* The pattern after the header, and its checksum. */
static uint64_t fill(unsigned char *p, int bytes, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int n = bytes - HDR, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = (seed + (uint64_t)i) * 0x9E3779B97F4A7C15ull;
        w ^= w >> 29;
        memcpy(p + HDR + i, &w, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++) {
        p[HDR + i] = (unsigned char)(seed + (uint64_t)i);
        h = (h ^ p[HDR + i]) * 0x100000001b3ull;
    }
    return h;
}

static uint64_t checksum(const unsigned char *p, int bytes)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int n = bytes - HDR, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + HDR + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++)
        h = (h ^ p[HDR + i]) * 0x100000001b3ull;
    return h;
}

typedef struct {
    int dst, tag, bytes, seq;
} out_msg;

typedef struct {
    int tag, bytes;
} in_msg;

static int rank, size;
static in_msg **in;      /* in[s][k]: the k-th message from s to me */
static int *nin;         /* messages from each source */
static char **got;       /* got[s][k]: received */
static int *lo;          /* lowest k not yet received, per source */
static long received, expected_total;

/* The earliest message from s not received yet that a receive for `tag` matches, or -1. */
static int earliest(int s, int tag)
{
    for (int k = lo[s]; k < nin[s]; k++)
        if (!got[s][k] && (tag == MPI_ANY_TAG || in[s][k].tag == tag))
            return k;
    return -1;
}

typedef struct {
    int src, tag; /* what the receive asked for */
    int done;
    MPI_Status st;
    unsigned char *buf;
} rslot;

static void check_message(rslot *r)
{
    int s = r->st.MPI_SOURCE, count = -1;
    MPI_Get_count(&r->st, MPI_BYTE, &count);
    if (s < 0 || s >= size) {
        CHECK(0, "a receive completed with source %d", s);
        return;
    }
    header h;
    memcpy(&h, r->buf, HDR);
    CHECK(r->src == MPI_ANY_SOURCE || r->src == s, "a receive for source %d got a message from %d", r->src, s);
    CHECK(r->tag == MPI_ANY_TAG || r->tag == r->st.MPI_TAG, "a receive for tag %d got tag %d", r->tag,
          r->st.MPI_TAG);
    int e = earliest(s, r->tag);
    CHECK(h.src == s && h.dst == rank, "message from %d (status) says source %d, destination %d", s, h.src, h.dst);
    if (h.src != s || h.seq < 0 || h.seq >= nin[s]) {
        CHECK(0, "from %d: sequence number %d out of range", s, h.seq);
        return;
    }
    CHECK(!got[s][h.seq], "from %d: message %d arrived twice", s, h.seq);
    CHECK(h.seq == e, "from %d: message %d arrived where message %d had to match (receive for source %d, tag %d)",
          s, h.seq, e, r->src, r->tag);
    CHECK(count == in[s][h.seq].bytes && h.bytes == count && r->st.MPI_TAG == in[s][h.seq].tag,
          "from %d, message %d: %d bytes (header %d), tag %d; sent %d bytes with tag %d", s, h.seq, count, h.bytes,
          r->st.MPI_TAG, in[s][h.seq].bytes, in[s][h.seq].tag);
    if (count == h.bytes && count >= HDR)
        CHECK(checksum(r->buf, count) == h.sum, "from %d, message %d (%d bytes): the checksum does not match", s,
              h.seq, count);
    got[s][h.seq] = 1;
    received++;
    while (lo[s] < nin[s] && got[s][lo[s]])
        lo[s]++;
    if (mt_errors > 10)
        mt_finish(); /* exits: the job stops */
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long total = argc > 1 ? atol(argv[1]) : 100000;

    /* Every sender's schedule. */
    out_msg *mine = NULL;
    int nmine = 0;
    nin = calloc((size_t)size, sizeof *nin);
    in = calloc((size_t)size, sizeof *in);
    got = calloc((size_t)size, sizeof *got);
    lo = calloc((size_t)size, sizeof *lo);
    int *cap = calloc((size_t)size, sizeof *cap), *seq_to = calloc((size_t)size, sizeof *seq_to);
    for (int s = 0; s < size; s++) {
        int n = (int)(total / size + (s < total % size));
        uint64_t rng = 0x1234567ull * (uint64_t)(s + 1);
        if (s == rank)
            mine = malloc((size_t)(n ? n : 1) * sizeof *mine);
        memset(seq_to, 0, (size_t)size * sizeof *seq_to);
        for (int i = 0; i < n; i++) {
            int dst = (int)(splitmix(&rng) % (uint64_t)size);
            int tag = (int)(splitmix(&rng) % 50);
            int bytes = msg_size(&rng);
            int seq = seq_to[dst]++;
            if (s == rank)
                mine[nmine++] = (out_msg){dst, tag, bytes, seq};
            if (dst == rank) {
                if (nin[s] == cap[s]) {
                    cap[s] = cap[s] ? 2 * cap[s] : 64;
                    in[s] = realloc(in[s], (size_t)cap[s] * sizeof **in);
                }
                in[s][nin[s]++] = (in_msg){tag, bytes};
            }
        }
    }
    for (int s = 0; s < size; s++) {
        got[s] = calloc((size_t)nin[s] + 1, 1);
        expected_total += nin[s];
    }

    unsigned char *sbuf = malloc((size_t)SW * MAXB), *rbuf = malloc((size_t)RW * MAXB);
    MPI_Request reqs[SW + RW];
    int sfree[SW], nsfree = SW;
    for (int i = 0; i < SW; i++) {
        sfree[i] = SW - 1 - i;
        reqs[i] = MPI_REQUEST_NULL;
    }
    rslot rs[RW];
    int fhead = 0, fcount = 0; /* receive slots in posting order */
    for (int i = 0; i < RW; i++) {
        rs[i].buf = rbuf + (size_t)i * MAXB;
        reqs[SW + i] = MPI_REQUEST_NULL;
    }
    int next = 0, sends_done = 0, idx[SW + RW];
    MPI_Status sts[SW + RW];
    uint64_t rng = 0xabcdefull + (uint64_t)rank;
    long modes[3] = {0, 0, 0};

    while (sends_done < nmine || received < expected_total) {
        /* Start sends while the window has room. */
        while (nsfree > 0 && next < nmine) {
            int slot = sfree[--nsfree];
            out_msg *m = &mine[next];
            unsigned char *b = sbuf + (size_t)slot * MAXB;
            header h = {rank, m->dst, m->seq, m->bytes, 0};
            h.sum = fill(b, m->bytes, ((uint64_t)rank << 40) ^ ((uint64_t)m->dst << 32) ^ (uint64_t)m->seq);
            memcpy(b, &h, HDR);
            if (next % 10 == 7)
                MPI_Issend(b, m->bytes, MPI_BYTE, m->dst, m->tag, MPI_COMM_WORLD, &reqs[slot]);
            else
                MPI_Isend(b, m->bytes, MPI_BYTE, m->dst, m->tag, MPI_COMM_WORLD, &reqs[slot]);
            next++;
        }
        /* Post receives when the previous batch is all processed. */
        if (fcount == 0 && received < expected_total) {
            int mode = (int)(splitmix(&rng) % 10);
            mode = mode < 5 ? 0 : mode < 9 ? 1 : 2;
            int posted = 0;
            if (mode == 1) { /* B: one receive per source, for a message that arrived */
                int start = (int)(splitmix(&rng) % (uint64_t)size);
                for (int j = 0; j < size && posted < RW; j++) {
                    int s = (start + j) % size;
                    if (lo[s] >= nin[s])
                        continue;
                    /* by the tag of one of the next few messages, or any tag */
                    int k = lo[s] + (int)(splitmix(&rng) % 6), flag = 0;
                    int tag = k < nin[s] && !got[s][k] && splitmix(&rng) % 3 ? in[s][k].tag : MPI_ANY_TAG;
                    MPI_Status pst;
                    MPI_Iprobe(s, tag, MPI_COMM_WORLD, &flag, &pst);
                    if (!flag)
                        continue;
                    int e = earliest(s, tag), count = -1;
                    MPI_Get_count(&pst, MPI_BYTE, &count);
                    CHECK(e >= 0 && pst.MPI_SOURCE == s && pst.MPI_TAG == in[s][e].tag && count == in[s][e].bytes,
                          "MPI_Iprobe(%d, %d): source %d, tag %d, %d bytes; the next such message has tag %d, %d bytes",
                          s, tag, pst.MPI_SOURCE, pst.MPI_TAG, count, e >= 0 ? in[s][e].tag : -1,
                          e >= 0 ? in[s][e].bytes : -1);
                    int slot = (fhead + fcount) % RW;
                    rs[slot] = (rslot){s, tag == MPI_ANY_TAG && splitmix(&rng) % 2 ? pst.MPI_TAG : tag, 0, {0},
                                       rs[slot].buf};
                    MPI_Irecv(rs[slot].buf, MAXB, MPI_BYTE, s, rs[slot].tag, MPI_COMM_WORLD, &reqs[SW + slot]);
                    fcount++;
                    posted++;
                }
            } else if (mode == 2) { /* C: one receive from any source, by tag */
                int s = (int)(splitmix(&rng) % (uint64_t)size);
                for (int j = 0; j < size && lo[s] >= nin[s]; j++)
                    s = (s + 1) % size;
                if (lo[s] < nin[s]) {
                    int k = lo[s] + (int)(splitmix(&rng) % 4);
                    int tag = k < nin[s] ? in[s][k].tag : in[s][lo[s]].tag, flag = 0, slot = fhead;
                    MPI_Status pst;
                    MPI_Message msg = MPI_MESSAGE_NULL;
                    int matched = splitmix(&rng) % 2;
                    if (matched)
                        MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg, &pst);
                    else
                        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &pst);
                    if (flag) {
                        int ps = pst.MPI_SOURCE, e = ps >= 0 && ps < size ? earliest(ps, tag) : -1, count = -1;
                        MPI_Get_count(&pst, MPI_BYTE, &count);
                        CHECK(e >= 0 && pst.MPI_TAG == tag && count == in[ps][e].bytes,
                              "probe(MPI_ANY_SOURCE, %d): source %d, tag %d, %d bytes", tag, ps, pst.MPI_TAG, count);
                        rs[slot] = (rslot){matched ? ps : MPI_ANY_SOURCE, tag, 0, {0}, rs[slot].buf};
                        if (matched)
                            MPI_Imrecv(rs[slot].buf, MAXB, MPI_BYTE, &msg, &reqs[SW + slot]);
                        else
                            MPI_Irecv(rs[slot].buf, MAXB, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD,
                                      &reqs[SW + slot]);
                        fcount++;
                        posted++;
                    }
                }
            }
            if (posted == 0) { /* A: wildcards, never more than the messages still to come */
                mode = 0;
                long left = expected_total - received;
                for (int i = 0; i < RW && i < left; i++) {
                    int slot = (fhead + fcount) % RW;
                    rs[slot] = (rslot){MPI_ANY_SOURCE, MPI_ANY_TAG, 0, {0}, rs[slot].buf};
                    MPI_Irecv(rs[slot].buf, MAXB, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                              &reqs[SW + slot]);
                    fcount++;
                }
            }
            modes[mode]++;
        }
        int outcount;
        CHECK_CLASS(MPI_Waitsome(SW + RW, reqs, &outcount, idx, sts), MPI_SUCCESS);
        if (outcount == MPI_UNDEFINED) {
            CHECK(0, "nothing to wait for with %d/%d sends done and %ld/%ld messages received", sends_done, nmine,
                  received, expected_total);
            break;
        }
        for (int k = 0; k < outcount; k++) {
            int i = idx[k];
            if (i < SW) {
                sfree[nsfree++] = i;
                sends_done++;
            } else {
                rs[i - SW].done = 1;
                rs[i - SW].st = sts[k];
            }
        }
        /* Check the completed receives in posting order. */
        while (fcount > 0 && rs[fhead].done) {
            check_message(&rs[fhead]);
            fhead = (fhead + 1) % RW;
            fcount--;
        }
    }

    for (int s = 0; s < size; s++)
        CHECK(lo[s] == nin[s], "from %d: %d of %d messages received", s, lo[s], nin[s]);
    long sums[2] = {nmine, received}, all[2];
    MPI_Allreduce(sums, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all[0] == total && all[1] == total, "%ld messages sent and %ld received in all, expected %ld", all[0],
          all[1], total);
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a message is left over");
    if (getenv("SOAK_VERBOSE"))
        printf("rank %d: sent %d, received %ld; receive batches A %ld, B %ld, C %ld\n", rank, nmine, received,
               modes[0], modes[1], modes[2]);
    for (int s = 0; s < size; s++) {
        free(in[s]);
        free(got[s]);
    }
    free(in);
    free(got);
    free(nin);
    free(lo);
    free(cap);
    free(seq_to);
    free(mine);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
