/* Frame dispatch by class: after MPI_Init (a singleton), frames of each class sent to this
 * process reach the handler of their class, in order, with their envelope and payload; frames
 * of point-to-point traffic still reach point-to-point (a message to oneself arrives). */
#include "core/runtime.h"
#include "req/request.h"
#include "unit.h"
#include "xport/xport.h"

#include <mpi.h>
#include <string.h>

static int seen[CR_XCLASS_COUNT], next_seq[CR_XCLASS_COUNT];

static void check(const cr_xframe *f, cr_xclass expect)
{
    EXPECT(f->cls == expect, "class %d delivered to the handler of %d", (int)f->cls, (int)expect);
    EXPECT(f->src == cr_rt.rank, "source %d", f->src);
    EXPECT(f->env->w[0] == (uint64_t)expect && f->env->w[1] == (uint64_t)next_seq[expect], "envelope %llu %llu",
           (unsigned long long)f->env->w[0], (unsigned long long)f->env->w[1]);
    char buf[64] = "";
    EXPECT(f->len < sizeof buf, "length %zu", f->len);
    cr_xframe_copy(f, buf, 0, f->len);
    char want[64];
    snprintf(want, sizeof want, "class %d frame %d", (int)expect, next_seq[expect]);
    EXPECT(f->len == strlen(want) && !memcmp(buf, want, f->len), "payload '%.*s'", (int)f->len, buf);
    next_seq[expect]++;
    seen[expect]++;
}

static void on_coll(const cr_xframe *f) { check(f, CR_XCLASS_COLL); }
static void on_rma(const cr_xframe *f) { check(f, CR_XCLASS_RMA); }
static void on_control(const cr_xframe *f) { check(f, CR_XCLASS_CONTROL); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    cr_xport_set_handler(CR_XCLASS_COLL, on_coll);
    cr_xport_set_handler(CR_XCLASS_RMA, on_rma);
    cr_xport_set_handler(CR_XCLASS_CONTROL, on_control);
    int sent[CR_XCLASS_COUNT] = {0};
    for (int i = 0; i < 30; i++) {
        cr_xclass cls = (cr_xclass)(CR_XCLASS_COLL + i % 3);
        cr_xenv env = {{(uint64_t)cls, (uint64_t)sent[cls], 0, 0}};
        char text[64];
        int n = snprintf(text, sizeof text, "class %d frame %d", (int)cls, sent[cls]);
        EXPECT(cr_xport_send(cr_rt.rank, cls, &env, text, 5, text + 5, (size_t)n - 5), "send %d", i);
        sent[cls]++;
    }
    int value = 42, got = 0;
    MPI_Request r;
    MPI_Irecv(&got, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &r);
    MPI_Send(&value, 1, MPI_INT, 0, 9, MPI_COMM_SELF);
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* makes progress: every frame above is delivered too */
    EXPECT(got == 42, "a point-to-point message to oneself: %d", got);
    for (int c = CR_XCLASS_COLL; c <= CR_XCLASS_CONTROL; c++)
        EXPECT(seen[c] == 10, "class %d: %d frames", c, seen[c]);
    MPI_Finalize();
    return UNIT_DONE();
}
