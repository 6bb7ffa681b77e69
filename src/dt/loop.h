/* loop.h: the compiled layout of a derived datatype, which every data path walks (pack,
 * unpack, the transport's pieces of a message, collectives' copies).
 *
 * A layout is a small tree of three kinds of node, each describing one instance of a type
 * whose data starts at a base address:
 *   - RUN: `size` contiguous bytes at the base;
 *   - REPEAT: `count` copies, `stride` bytes apart, of a run of `run` bytes (child NULL) or of
 *     the child layout: a vector stays a loop, never a list of its blocks;
 *   - BLOCKS: entries at their own displacements, each `count` copies of a run or of a child
 *     `stride` bytes apart (indexed, struct), with the packed bytes before each entry kept so
 *     a walk starting mid-message finds its entry by binary search.
 * Nested types share their children's layouts (a parent holds a reference on each child
 * type), so memory grows with the number of constructor calls, never with the data they
 * describe: a subarray of a 1024^3 grid is three REPEAT nodes. */
#ifndef CR_DT_LOOP_H
#define CR_DT_LOOP_H

#include "core/base.h"
#include "core/types.h"

enum { CR_LOOP_RUN = 1, CR_LOOP_REPEAT, CR_LOOP_BLOCKS };

struct cr_dt_loop;

typedef struct cr_dt_entry {
    MPI_Aint disp;
    uint64_t count;                 /* copies of the run or the child */
    MPI_Aint stride;                /* between copies of the child */
    uint64_t run;                   /* bytes of a run, when child is NULL */
    uint32_t elem;                  /* a run's basic element size */
    const struct cr_dt_loop *child;
} cr_dt_entry;

typedef struct cr_dt_loop {
    uint8_t kind;
    uint32_t elem;   /* bytes of every basic element in it (0: they differ), for MPI_Get_elements */
    uint64_t size;   /* packed bytes of one instance */
    /* REPEAT */
    uint64_t count;
    MPI_Aint stride;
    uint64_t run;
    const struct cr_dt_loop *child;
    /* BLOCKS */
    int64_t nentries;
    cr_dt_entry *entries;
    uint64_t *prefix; /* prefix[i]: packed bytes of the entries before i; prefix[n] = size */
} cr_dt_loop;

/* Moves bytes [offset, offset + len) of the packed form of instances of `l` laid out `extent`
 * bytes apart from `base`, to or from the contiguous `stream`. */
void cr_dt_loop_move(const cr_dt_loop *l, char *base, MPI_Aint extent, uint64_t offset, char *stream, uint64_t len,
                     bool unpack);
/* Describes bytes [offset, offset + len) of the same as at most `maxiov` iovecs (pieces that
 * touch merged), in packed order, stopping early when they run out; returns the bytes described
 * (a prefix of the window) and sets *niov. */
struct iovec;
uint64_t cr_dt_loop_iov(const cr_dt_loop *l, char *base, MPI_Aint extent, uint64_t offset, uint64_t len,
                        struct iovec *iov, int maxiov, int *niov);
/* Basic elements in the first `bytes` packed bytes of instances of `l`; -1 when a basic
 * element is cut. */
MPI_Count cr_dt_loop_elements(const cr_dt_loop *l, uint64_t bytes);
/* The packed bytes that hold the first n basic elements of instances of `l` (the inverse, for
 * MPI_Status_set_elements). */
uint64_t cr_dt_loop_bytes_of_elements(const cr_dt_loop *l, MPI_Count n);

#endif
