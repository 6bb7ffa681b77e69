/* shm.h: the shared-memory transport between the processes of one node (see shm.c). */
#ifndef CR_SHM_H
#define CR_SHM_H

#include "xport/xport.h"

/* Starts the transport among the node's processes; `local_world_ranks[local_rank]` is this
 * process. With one local process there is nothing to do but the PMI barrier of start-up, when
 * `job_barrier` says the job's other transports need it (it is collective over the job). */
int cr_shm_init(int local_rank, int local_size, const int *local_world_ranks, bool job_barrier, char *why, size_t cap);
void cr_shm_finalize(void);
/* The transport's operations, by local rank (see cr_xport_ops). */
extern const cr_xport_ops cr_shm_ops;
int cr_shm_poll(void);
void cr_shm_sleep(bool (*ready)(void *), void *arg);
/* Rings this process's own doorbell if a thread of it sleeps there (MPI_THREAD_MULTIPLE: a
 * thread that completed something wakes the poller). */
void cr_shm_ring_self(void);
/* Under launchers that do not end a job whose rank died: ends the job, naming the rank, when a
 * watched peer of this node ended before its MPI_Finalize (see shm.c). For waits that spin;
 * sleeps look by themselves. */
void cr_shm_watch(void);

/* For the shared-memory collective component (src/coll/node.c), the one user of shared memory
 * outside the transport: a region of the segment shared by the node's processes, this
 * process's place among them, and waking every process that sleeps. */
void *cr_shm_coll_area(size_t *bytes);
/* Its size for n processes: control lines, then two generations of one slot per process for
 * allreduce (CR_SHM_COLL_SLOT bytes of data after an 8-byte header, a flag and the data's size,
 * in a line of its own), then for small reduces and scans a control line per process and
 * CR_SHM_COLL_RING_DEPTH slots per process, each of them CR_SHM_COLL_SLOT bytes of data after a
 * 16-byte header of the same kind (see src/coll/node.c). */
#define CR_SHM_COLL_SLOT 1024
#define CR_SHM_COLL_ALLREDUCE_STRIDE (CR_SHM_COLL_SLOT + 64)
#define CR_SHM_COLL_RING_DEPTH 64
#define CR_SHM_COLL_RING_STRIDE (CR_SHM_COLL_SLOT + 64)
#define CR_SHM_COLL_BYTES(n)                                                                                           \
    (4 * 64 + (size_t)(n) * (2 * CR_SHM_COLL_ALLREDUCE_STRIDE + 64 + CR_SHM_COLL_RING_DEPTH * CR_SHM_COLL_RING_STRIDE))
/* The staging area for large collectives (src/coll/node_large.c): a line, one control line
 * per process and a 64-bit size per block (the control part, in whole pages), then
 * CR_SHM_COLL_NBLOCKS(n) blocks of CR_SHM_COLL_BLOCK bytes, eight pieces' worth of n + 1 blocks
 * each. The segment is sparse: blocks cost memory once used. Jobs of more than
 * CR_SHM_COLL_LARGE_MAX processes on a node have none (NULL). */
#define CR_SHM_COLL_BLOCK ((size_t)128 << 10)
#define CR_SHM_COLL_LARGE_MAX 256
/* Room for CR_SHM_COLL_NBLOCKS(n) blocks; cr_shm_coll_nblocks(n) says how many are in use. */
#define CR_SHM_COLL_RING_MIN_BYTES ((size_t)16 << 20)
#define CR_SHM_COLL_NBLOCKS_SHALLOW(n) (8 * ((size_t)(n) + 1))
#define CR_SHM_COLL_NBLOCKS(n)                                                                                         \
    CR_MAX(CR_SHM_COLL_NBLOCKS_SHALLOW(n), CR_SHM_COLL_RING_MIN_BYTES / CR_SHM_COLL_BLOCK)
#define CR_SHM_COLL_LARGE_CONTROL(n) (((((size_t)(n) + 1) * 64 + CR_SHM_COLL_NBLOCKS(n) * 8) + 4095) & ~(size_t)4095)
#define CR_SHM_COLL_LARGE_BYTES(n)                                                                                    \
    ((n) > CR_SHM_COLL_LARGE_MAX ? 0 : CR_SHM_COLL_LARGE_CONTROL(n) + CR_SHM_COLL_NBLOCKS(n) * CR_SHM_COLL_BLOCK)
void *cr_shm_coll_large_area(size_t *bytes);
/* The blocks of the staging ring in use for n processes, the same in every process of the node:
 * with a core each, all of the room, so that a process comes back to a block only after the
 * other cores have let its lines go (rewriting a line another core has just read costs an
 * invalidation each: 64 KiB exchanges at 2 processes take half the time with 128 blocks as with
 * 24); sharing cores, 8 (n + 1), so that writers run less far ahead of readers who wait for a
 * core and what they stage is still in the cache when read (deeper rings were slower there).
 * See doc/performance.md. */
uint32_t cr_shm_coll_nblocks(int n);
int cr_shm_local_rank(void);
int cr_shm_local_size(void);
void cr_shm_wake_sleepers(void);
/* Wakes those processes of this node that sleep among the world ranks world_ranks[from .. to - 1]
 * (world_ranks NULL: the world ranks from .. to - 1 themselves). */
void cr_shm_wake_world(const int *world_ranks, int from, int to);
bool cr_shm_sleep_mode(void);
/* The CPUs this node's processes may run on, all together (the same in every process). */
int cr_shm_node_cpus(void);
/* Whether cross-memory attach is allowed (see cr_xport_attach_allowed). */
bool cr_shm_attach_allowed(void);
/* The first value of 32-bit sequence counters (1 unless a test starts them near 2^32 with
 * COURIER_DEBUG_SEQ_START, to run across the wrap-around); the same in every process. */
uint32_t cr_shm_seq_start(void);

#endif
