/* session.c: the sessions model of MPI-4 (chapter 11.3): MPI_Session_init and _finalize, the
 * process sets a session can see ("mpi://WORLD" and "mpi://SELF"), groups from them, a session's
 * info and error handler. Communicators come from those groups with MPI_Comm_create_from_group
 * (comm_create.c), which needs no MPI_COMM_WORLD. A session starts the library if nothing has
 * yet (init.c), and the library stays up while a session or the world model uses it. */
#include "comm/comm.h"
#include "core/info.h"
#include "core/runtime.h"
#include "cr_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
enum { NPSETS = 2 };

static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                          "MPI_THREAD_MULTIPLE"};
static const int level_values[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                   MPI_THREAD_MULTIPLE};

static void session_setup(void)
{
    static bool done;
    if (!done) {
        cr_pool_setup(CR_KIND_SESSION, sizeof(cr_session));
        done = true;
    }
}

int cr_mpi_session_init(cr_info *info, cr_errhandler *errhandler, MPI_Session *session)
{
    session_setup();
    if (errhandler->type == CR_EH_USER && errhandler->objkind != CR_KIND_SESSION)
        return cr_err(MPI_ERR_ARG, "errhandler was not created by MPI_Session_create_errhandler");
    /* The thread level the session asks for: the "thread_level" key, by name (MPI-4.1 11.3.1). */
    int required = MPI_THREAD_SINGLE;
    const char *want = info ? cr_info_find(info, "thread_level") : NULL;
    if (want) {
        int i = 0;
        while (i < 4 && strcasecmp(want, level_names[i]))
            i++;
        if (i == 4)
            return cr_err(MPI_ERR_INFO_VALUE, "thread_level=\"%s\" is not MPI_THREAD_SINGLE, _FUNNELED, "
                                              "_SERIALIZED or _MULTIPLE", want);
        required = level_values[i];
    }
    int provided, err = cr_runtime_start(NULL, NULL, required, &provided);
    if (err)
        return err;
    cr_session *s = cr_obj_alloc(CR_KIND_SESSION);
    if (!s)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a session");
    s->thread_level = provided;
    s->eo.errh = errhandler;
    cr_obj_ref(errhandler);
    cr_rt.sessions++;
    *session = (MPI_Session)(uintptr_t)s->eo.obj.handle;
    return MPI_SUCCESS;
}

int cr_mpi_session_finalize(MPI_Session *session)
{
    cr_session *s = cr_handle_get((uintptr_t)*session, CR_KIND_SESSION);
    if (!s || s->finalized) /* (finalized: what groups or communicators derived from it still hold) */
        return cr_err_bad_handle(MPI_ERR_SESSION, "session", (uintptr_t)*session, "session");
    if (s->bsend) { /* its messages leave first, as MPI_Session_detach_buffer would wait */
        void *addr;
        MPI_Count size;
        cr_mpi_session_detach_buffer(s, &addr, &size);
    }
    if (cr_obj_unref(s->eo.errh))
        cr_obj_free(s->eo.errh);
    s->eo.errh = NULL;
    s->finalized = true;
    cr_session_release(s); /* (groups and communicators not freed yet hold it until they are) */
    *session = MPI_SESSION_NULL;
    cr_rt.sessions--;
    return cr_runtime_release();
}

int cr_mpi_session_get_num_psets(cr_session *session, cr_info *info, int *npset_names)
{
    (void)session, (void)info;
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

int cr_mpi_session_get_nth_pset(cr_session *session, cr_info *info, int n, int *pset_len, char *pset_name)
{
    (void)session, (void)info;
    if (n < 0 || n >= NPSETS)
        return cr_err(MPI_ERR_ARG, "invalid n=%d: the session has process sets 0..%d", n, NPSETS - 1);
    int len = (int)strlen(psets[n]) + 1;
    if (*pset_len <= 0) { /* a query of the length, terminating null included */
        *pset_len = len;
        return MPI_SUCCESS;
    }
    if (!pset_name)
        return cr_err(MPI_ERR_ARG, "pset_name is NULL but pset_len=%d", *pset_len);
    snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    *pset_len = len;
    return MPI_SUCCESS;
}

/* Which process set `name` is (names compare without regard to case), or -1. */
static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (!strcasecmp(name, psets[i]))
            return i;
    return -1;
}

static int unknown_pset(const char *name)
{
    return cr_err(MPI_ERR_ARG, "pset_name=\"%s\" is not a process set of the session (mpi://WORLD, mpi://SELF)",
                  name ? name : "(null)");
}

int cr_mpi_session_get_pset_info(cr_session *session, const char *pset_name, MPI_Info *info)
{
    (void)session;
    int i = pset_index(pset_name);
    if (i < 0)
        return unknown_pset(pset_name);
    cr_info *obj;
    int err = cr_info_new(info, &obj);
    if (err)
        return err;
    char size[16];
    snprintf(size, sizeof size, "%d", i == 0 ? cr_rt.size : 1);
    if ((err = cr_info_put(obj, "mpi_size", size)))
        cr_mpi_info_free(info);
    return err;
}

int cr_mpi_session_get_info(cr_session *session, MPI_Info *info_used)
{
    cr_info *obj;
    int err = cr_info_new(info_used, &obj);
    if (!err && (err = cr_info_put(obj, "thread_level", level_names[session->thread_level == MPI_THREAD_SINGLE     ? 0
                                                                     : session->thread_level == MPI_THREAD_FUNNELED ? 1
                                                                     : session->thread_level == MPI_THREAD_SERIALIZED
                                                                         ? 2
                                                                         : 3])))
        cr_mpi_info_free(info_used);
    return err;
}

int cr_group_new(int *world_ranks, int n, cr_session *session, MPI_Group *out);

int cr_mpi_group_from_session_pset(cr_session *session, const char *pset_name, MPI_Group *newgroup)
{
    int i = pset_index(pset_name);
    if (i < 0)
        return unknown_pset(pset_name);
    int n = i == 0 ? cr_rt.size : 1, *w = malloc((size_t)n * sizeof *w);
    if (!w)
        return cr_err(MPI_ERR_NO_MEM, "out of memory for a group of %d processes", n);
    for (int r = 0; r < n; r++)
        w[r] = i == 0 ? r : cr_rt.rank;
    return cr_group_new(w, n, session, newgroup);
}

int cr_mpi_session_set_errhandler(cr_session *session, cr_errhandler *errhandler)
{
    return cr_errhandler_attach(&session->eo.errh, errhandler, CR_KIND_SESSION);
}

int cr_mpi_session_get_errhandler(cr_session *session, MPI_Errhandler *errhandler)
{
    return cr_errhandler_get(session->eo.errh, errhandler);
}

int cr_mpi_session_call_errhandler(cr_session *session, int errorcode)
{
    cr_err_raise(&session->eo, "MPI_Session_call_errhandler", errorcode);
    return MPI_SUCCESS;
}
