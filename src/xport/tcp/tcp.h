/* tcp.h: the TCP transport between processes on different nodes (see tcp.c). */
#ifndef CR_TCP_H
#define CR_TCP_H

#include "xport/xport.h"

/* Opens this process's listening socket and publishes its address (the "business card") in
 * the PMI key-value space. Peers read it only after a PMI barrier that follows every process's
 * publication (cr_xport_init arranges one). Returns 0, or -1 with the reason in `why`. */
int cr_tcp_init(char *why, size_t cap);
/* Sends what is still queued (bounded wait), then closes every socket. */
void cr_tcp_finalize(void);
/* The transport's operations, by world rank (see cr_xport_ops). */
extern const cr_xport_ops cr_tcp_ops;
/* Accepts connections, reads and delivers complete frames, writes queued bytes; returns the
 * frames delivered. Costs one epoll_wait with no timeout when nothing is ready. */
int cr_tcp_poll(void);
/* The descriptor that is readable when a socket of this transport has something to do (an
 * epoll set): the process's sleep (xport/wait.c) adds it, so TCP traffic wakes a sleeper. */
int cr_tcp_wait_fd(void);

#endif
