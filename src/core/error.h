/* error.h: error codes, their messages, error handlers, and raising an error on an object.
 *
 * Error codes users see:
 *   0 .. MPI_ERR_LASTCODE    the predefined classes (0..61) and MPI_T's (1001..1018);
 *   CR_ERR_USER_BASE + n     classes and codes added by MPI_Add_error_class/_code;
 *   CR_ERR_INSTANCE | ...    one reported event: its class in the low 16 bits and a serial
 *                            number that finds its message ("MPI_Send: invalid rank dest=5 ...")
 *                            in a ring of recent events. MPI_Error_string gives that message
 *                            while it is among the last CR_ERR_RING events, the class text after.
 * Every error raised in a call passes through cr_err_raise, which calls the error handler of
 * the object the call is about (MPI_COMM_SELF's when it is about none). */
#ifndef CR_ERROR_H
#define CR_ERROR_H

#include "handle.h"

#define CR_ERR_USER_BASE 16384
#define CR_ERR_USER_MAX 4096
#define CR_ERR_INSTANCE 0x40000000
#define CR_ERR_RING 256

typedef enum { CR_EH_FATAL, CR_EH_RETURN, CR_EH_ABORT, CR_EH_USER } cr_eh_type;

typedef struct cr_errhandler {
    cr_obj obj;
    uint8_t type;    /* cr_eh_type */
    uint8_t objkind; /* for user handlers: the kind of object its function takes */
    void (*fn)(void);
} cr_errhandler;

/* The head shared by every object that carries an error handler (comm, win, file, session). */
typedef struct cr_errobj {
    cr_obj obj;
    cr_errhandler *errh;
} cr_errobj;

extern cr_errhandler cr_errh_fatal, cr_errh_return, cr_errh_abort;

/* Creates an error of class `cls` whose message is the printf-formatted text; returns its code. */
int cr_err(int cls, const char *fmt, ...) CR_PRINTF(2, 3);
/* The error for a handle that is not a valid `what` (a null handle, another kind, garbage). */
int cr_err_bad_handle(int cls, const char *what, uintptr_t h, const char *arg);

/* The class of a valid code, or -1. */
int cr_err_class(int code);
/* The class name, e.g. "MPI_ERR_RANK" ("user class 16385" for added ones). */
const char *cr_err_class_name(int cls, char *buf, size_t cap);
/* Writes the text for `code` (instance message, added string or class description). */
int cr_err_string(int code, char *buf, size_t cap);

/* Raises `code` from call `fname` on `target` (a comm, win, file or session; NULL for none):
 * runs the target's error handler and returns the code the call must return. `fname` is kept
 * with the event so MPI_Error_string names the call. */
int cr_err_raise(cr_errobj *target, const char *fname, int code);

/* An implementation whose error belongs to an object the binding cannot see (the communicator
 * of a request, in MPI_Wait) names it here before returning the error; the binding raises the
 * error there instead of on `dflt`. */
extern CR_THREAD_LOCAL cr_errobj *cr_err_target_hint;
static inline cr_errobj *cr_err_target(cr_errobj *dflt)
{
    cr_errobj *t = cr_err_target_hint;
    cr_err_target_hint = NULL;
    return t ? t : dflt;
}

/* The communicator errors about no object are raised on (MPI_COMM_SELF, per MPI-4). */
extern cr_errobj *cr_err_default_target;

/* Set once MPI is initialized: lets fatal messages name the rank. */
void cr_err_set_rank(int rank);

int cr_err_add_class(int *cls);
int cr_err_add_code(int cls, int *code);
int cr_err_add_string(int code, const char *s);
int cr_err_remove(int code, int what); /* what: 0 class, 1 code, 2 string */
int cr_err_last_used(void);

void cr_error_setup(void);

#endif
