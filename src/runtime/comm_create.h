/* comm_create.h: making communicators, for the other constructors of this layer (topologies,
 * intercommunicators). */
#ifndef CR_COMM_CREATE_H
#define CR_COMM_CREATE_H

#include "comm/comm.h"
#include "coll/op.h"
#include "dt/dtype.h"

/* A communicator with the same members as `comm` and a new context, inheriting only its error
 * handler: no attributes (no copy callbacks run), info hints or topology. Collective. */
int cr_comm_dup_bare(cr_comm *comm, MPI_Comm *newcomm, cr_comm **obj);

/* Copies what MPI_Comm_dup copies besides the members: attributes (copy callbacks run), info
 * hints and topology, from comm to c (handle *newcomm, freed on error). */
int cr_comm_dup_extras(cr_comm *comm, MPI_Comm *newcomm, cr_comm *c);

/* The context of a communicator that has none yet (MPI_Comm_idup) or never got one. */
#define CR_CTX_NONE UINT32_MAX
/* An allreduce, in place, over every process a new context must be free in. */
typedef int cr_comm_allreduce_fn(void *buf, int count, cr_dtype *dt, cr_op *op, void *arg);
/* Agrees on a context id free in all the processes `allreduce` spans, and takes it here. */
int cr_comm_slot_agree(cr_comm_allreduce_fn *allreduce, void *arg, uint32_t *ctx);
void cr_comm_slot_release(uint32_t ctx);
/* A new communicator of the given members (world ranks, in rank order; taken over, and freed
 * with the context on error), with this process at `rank`, inheriting `parent`'s error
 * handler. */
int cr_comm_new(cr_comm *parent, uint32_t ctx, int *world_ranks, int size, int rank, MPI_Comm *out, cr_comm **obj);
/* A copy of the world ranks of comm's (local) group, or NULL when out of memory. */
int *cr_comm_world_ranks_of(const cr_comm *c);

/* The processes of `color` among p (color, key) pairs (process r's at pairs[2r]), ordered by
 * key then rank: their world ranks (world[r], or r when world is NULL) into out (room for p).
 * Returns how many, or -1 when out of memory. */
int cr_comm_color_members(const int *pairs, int p, int color, const int *world, int *out);
/* MPI_ERR_GROUP unless every member of the group is in comm's (local) group. */
int cr_comm_check_subgroup(const cr_comm *comm, const cr_group *group);

/* Agrees on a context among the members of `group` alone (this process is one), over comm,
 * which spans them, with `tag` on comm's collective context. */
int cr_comm_subset_agree(cr_comm *comm, const cr_group *group, int tag, uint32_t *ctx);
/* Every process, on a context that no communicator uses across processes: where the calls
 * that make communicators from groups alone agree. */
cr_comm *cr_comm_everyone(void);
/* A negative tag for cr_comm_everyone() from a string tag (and a salt, for the steps of one
 * call), apart from the wildcards. */
int cr_comm_string_tag(const char *stringtag, int salt);

/* The intercommunicator forms of dup, split and create (intercomm.c). */
int cr_comm_inter_dup(cr_comm *ic, MPI_Comm *newcomm, cr_comm **obj);
int cr_comm_inter_split(cr_comm *ic, int color, int key, MPI_Comm *newcomm);
int cr_comm_inter_create(cr_comm *ic, cr_group *group, MPI_Comm *newcomm);

#endif
