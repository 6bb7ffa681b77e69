/* comm_create.h: making communicators, for the other constructors of this layer (topologies). */
#ifndef CR_COMM_CREATE_H
#define CR_COMM_CREATE_H

#include "comm/comm.h"

/* A communicator with the same members as `comm` and a new context, inheriting only its error
 * handler: no attributes (no copy callbacks run), info hints or topology. Collective. */
int cr_comm_dup_bare(cr_comm *comm, MPI_Comm *newcomm, cr_comm **obj);

#endif
