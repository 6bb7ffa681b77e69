/* xport.h: the transports that move bytes between processes (self, shared memory; TCP later),
 * behind one narrow interface. A transport knows processes by world rank and carries opaque
 * envelopes: it never knows about communicators, tags or datatypes. */
#ifndef CR_XPORT_H
#define CR_XPORT_H

#include <stddef.h>

/* MPI_Init: brings up every transport this job needs (after the node layout is known). */
int cr_xport_init(char *why, size_t cap);
/* MPI_Finalize: drains and closes them. */
int cr_xport_finalize(char *why, size_t cap);

#endif
