/* segment.h: node-shared memory: memory files that the node's processes map (created by one,
 * reached by the others through /proc/<pid>/fd/<fd>), and the layout that carves one into
 * regions. The transport's segment is one such file (its regions: the processes' lines, the
 * collective component's area, ring control lines, join bitmaps, rings); shared-memory windows
 * will be others, made the same way. */
#ifndef CR_SHM_SEGMENT_H
#define CR_SHM_SEGMENT_H

#include <stddef.h>

/* The regions of the transport's segment, in the order they are laid out. */
typedef enum {
    CR_SEG_HEADER,
    CR_SEG_PROCS, /* one shm_proc per process */
    CR_SEG_COLL,  /* the collective component's area (src/coll/node.c) */
    CR_SEG_CTRL,  /* one control line per ring */
    CR_SEG_JOINS, /* one "joined" bitmap per receiver */
    CR_SEG_RINGS, /* one ring per ordered pair */
    CR_SEG_COLL_LARGE, /* the collective component's staging blocks for large messages (src/coll/node_large.c) */
    CR_SEG_NREGIONS
} cr_seg_region;

/* Every process computes the same layout from the same sizes, so none needs to read another's. */
typedef struct cr_seg_layout {
    size_t off[CR_SEG_NREGIONS], bytes[CR_SEG_NREGIONS];
    size_t total;
} cr_seg_layout;

/* Places `region` after those placed before it, at a multiple of `align` (a power of two). */
void cr_seg_place(cr_seg_layout *l, cr_seg_region region, size_t bytes, size_t align);

/* A new memory file of `bytes` (sparse: pages cost only when touched), mapped; it has no name
 * in /dev/shm, so nothing can be left behind. 0, or -1 with errno set. */
int cr_seg_create(const char *name, size_t bytes, int *fd, void **base);
/* Maps the memory file that process `pid` holds as descriptor `fd`. 0, or -1 with errno set. */
int cr_seg_attach(int pid, int fd, size_t bytes, void **base);

#endif
