/* shm.h: the shared-memory transport between the processes of one node (see shm.c). */
#ifndef CR_SHM_H
#define CR_SHM_H

#include "xport/xport.h"

/* Starts the transport among the node's processes; `local_world_ranks[local_rank]` is this
 * process. With one local process there is nothing to do. */
int cr_shm_init(int local_rank, int local_size, const int *local_world_ranks, char *why, size_t cap);
void cr_shm_finalize(void);
bool cr_shm_send(int local, const cr_xenv *env, const void *p1, size_t n1, const void *p2, size_t n2);
size_t cr_shm_max_frame(void);
int cr_shm_poll(cr_xport_handler *h);
int cr_shm_read(int local, const struct iovec *liov, int nl, const struct iovec *riov, int nr);
bool cr_shm_can_read(void);
void cr_shm_sleep(void);
bool cr_shm_sleep_mode(void);

#endif
