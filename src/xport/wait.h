/* wait.h: the one place a process sleeps while it waits for communication. An epoll set holds
 * this process's doorbell (an eventfd that the node's processes write to, see shm.c) and will
 * hold the sockets of network transports, so any transport's traffic wakes the same sleep. */
#ifndef CR_XPORT_WAIT_H
#define CR_XPORT_WAIT_H

#include <stdbool.h>

/* Creates the doorbell and the epoll set; false when the kernel refuses (callers then keep a
 * futex in shared memory as the doorbell). */
bool cr_wait_init(void);
void cr_wait_finalize(void);
/* This process's doorbell, as a descriptor number of this process (-1 without one). */
int cr_wait_bell_fd(void);
/* Adds a descriptor whose readability must wake the sleeper (a socket); -1 on failure. */
int cr_wait_add(int fd);
/* Sleeps until the doorbell rings, an added descriptor is readable, or `timeout_ms` passes;
 * empties the doorbell before returning. */
void cr_wait_sleep(int timeout_ms);
/* Whether the last cr_wait_sleep returned for `fd` (an added descriptor) among others. */
bool cr_wait_fired(int fd);
/* Rings the doorbell `fd` (a descriptor of this process that refers to a peer's doorbell). */
void cr_wait_ring(int fd);

#endif
