/* Long eager messages are reassembled per message, not per source: frames of two long messages
 * from one sender, interleaved (as a second path to the same peer could deliver them), each
 * reach their own receive; both when the receives were posted first and when the messages
 * arrive first (unexpected) and are received later. The frames are injected through the self
 * transport after MPI_Init (a singleton), as the point-to-point layer would send them. */
#include "comm/comm.h"
#include "core/runtime.h"
#include "pt2pt/pt2pt.h"
#include "unit.h"
#include "xport/xport.h"

#include <mpi.h>
#include <string.h>

#define BYTES 3000
#define PIECE 1000

static unsigned char pattern(int msg, int i)
{
    return (unsigned char)(msg * 101 + i * 7 + (i >> 8));
}

/* Sends piece k (0, 1, 2) of message `msg` (tag msg, request id 0x1000 + msg). */
static void piece(int msg, int k, const unsigned char *data)
{
    uint64_t sreq = 0x1000 + (uint64_t)msg;
    cr_penv e;
    if (k == 0)
        e = (cr_penv){.ctx = cr_comm_self.ctx, .src = 0, .tag = msg, .type = P_LONG, .a = BYTES, .b = sreq};
    else
        e = (cr_penv){.type = P_LONG_DATA, .a = sreq, .b = (uint64_t)k * PIECE};
    EXPECT(cr_xport_send(cr_rt.rank, CR_XCLASS_PT2PT, (cr_xenv *)&e, data + k * PIECE, PIECE, NULL, 0), "send");
}

static void run(int posted_first)
{
    unsigned char data[2][BYTES], got[2][BYTES];
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < BYTES; i++)
            data[m][i] = pattern(m + 1, i);
    memset(got, 0, sizeof got);
    MPI_Request r[2];
    if (posted_first)
        for (int m = 0; m < 2; m++)
            MPI_Irecv(got[m], BYTES, MPI_BYTE, 0, m + 1, MPI_COMM_SELF, &r[m]);
    /* m1 first piece, m2 first piece, m2 second, m1 second, m1 third, m2 third */
    piece(1, 0, data[0]);
    piece(2, 0, data[1]);
    piece(2, 1, data[1]);
    if (!posted_first) { /* let the first pieces arrive before any receive exists */
        int flag;
        MPI_Iprobe(0, 2, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
        EXPECT(flag, "the second message is there");
    }
    piece(1, 1, data[0]);
    piece(1, 2, data[0]);
    if (!posted_first) {
        MPI_Irecv(got[1], BYTES, MPI_BYTE, 0, 2, MPI_COMM_SELF, &r[1]);
        MPI_Irecv(got[0], BYTES, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[0]);
    }
    piece(2, 2, data[1]);
    MPI_Status st[2];
    MPI_Waitall(2, r, st);
    for (int m = 0; m < 2; m++) {
        int count;
        MPI_Get_count(&st[m], MPI_BYTE, &count);
        EXPECT(count == BYTES && st[m].MPI_TAG == m + 1, "message %d: %d bytes, tag %d", m + 1, count, st[m].MPI_TAG);
        EXPECT(!memcmp(got[m], data[m], BYTES), "message %d (%s) arrived intact", m + 1,
               posted_first ? "posted first" : "unexpected");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    run(1);
    run(0);
    MPI_Finalize();
    return UNIT_DONE();
}
