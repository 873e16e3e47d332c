/*
 * Errors: classes and their strings, and error handlers.  The default
 * handler, MPI_ERRORS_ARE_FATAL, ends the whole job through its
 * coordinator with a line naming the call and the error; MPI_ERRORS_RETURN
 * hands the code back; user handlers are called with the communicator and
 * the code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpii.h"

#define ERRH_BASE 0x54000000
#define ERRH_MAX 64

static MPI_Comm_errhandler_function *user_handlers[ERRH_MAX];
/* Made by Win_create_errhandler: called with the window, not its
 * communicator, and set on windows only. */
static unsigned char user_win[ERRH_MAX];
/* Handles the program holds (create and every get count one, free
 * gives one back): a slot is reused once none is held and no
 * communicator has the handler. */
static int user_refs[ERRH_MAX];

static const char *
err_text(int code)
{
    switch (code) {
    case MPI_SUCCESS: return "no error";
    case MPI_ERR_BUFFER: return "invalid buffer pointer";
    case MPI_ERR_COUNT: return "invalid count argument";
    case MPI_ERR_TYPE: return "invalid datatype";
    case MPI_ERR_TAG: return "invalid tag";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_RANK: return "invalid rank";
    case MPI_ERR_REQUEST: return "invalid request";
    case MPI_ERR_ROOT: return "invalid root";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_OP: return "invalid reduction operation";
    case MPI_ERR_TOPOLOGY: return "invalid topology";
    case MPI_ERR_DIMS: return "invalid dimensions";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_UNKNOWN: return "unknown error";
    case MPI_ERR_TRUNCATE: return "message truncated";
    case MPI_ERR_OTHER: return "other error (a peer process may be gone)";
    case MPI_ERR_INTERN: return "internal error";
    case MPI_ERR_IN_STATUS: return "error code is in status";
    case MPI_ERR_PENDING: return "pending request";
    case MPI_ERR_INFO: return "invalid info object";
    case MPI_ERR_INFO_KEY: return "invalid info key";
    case MPI_ERR_INFO_VALUE: return "invalid info value";
    case MPI_ERR_INFO_NOKEY: return "no such key in the info object";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_KEYVAL: return "invalid keyval";
    case MPI_ERR_WIN: return "invalid window";
    /* one-sided communication */
    case MPI_ERR_ASSERT: return "invalid assert argument";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_DISP: return "invalid displacement";
    case MPI_ERR_LOCKTYPE: return "invalid lock type";
    case MPI_ERR_RMA_CONFLICT: return "conflicting accesses to a window";
    case MPI_ERR_RMA_SYNC: return "wrong synchronization of RMA calls";
    case MPI_ERR_SIZE: return "invalid size";
    case MPI_ERR_RMA_RANGE: return "target memory is outside the window";
    case MPI_ERR_RMA_ATTACH: return "memory cannot be attached";
    case MPI_ERR_RMA_FLAVOR: return "wrong window flavor";
    case MPI_ERR_RMA_SHARED: return "memory cannot be shared";
    case MPI_ERR_UNSUPPORTED_OPERATION:
        return "operation not supported by p2pmpi";
    case MPI_ERR_SPAWN:
        return "cannot start processes: a p2pmpi job keeps the processes "
               "p2prun started";
    /* the tool information interface (tool.c) */
    case MPI_T_ERR_MEMORY: return "MPI_T: out of memory";
    case MPI_T_ERR_NOT_INITIALIZED: return "MPI_T: not initialized";
    case MPI_T_ERR_CANNOT_INIT: return "MPI_T: cannot initialize";
    case MPI_T_ERR_INVALID_INDEX: return "MPI_T: invalid index";
    case MPI_T_ERR_INVALID_ITEM: return "MPI_T: invalid enumeration item";
    case MPI_T_ERR_INVALID_HANDLE: return "MPI_T: invalid handle";
    case MPI_T_ERR_OUT_OF_HANDLES: return "MPI_T: out of handles";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "MPI_T: out of sessions";
    case MPI_T_ERR_INVALID_SESSION: return "MPI_T: invalid session";
    case MPI_T_ERR_CVAR_SET_NOT_NOW:
        return "MPI_T: control variable cannot be set now";
    case MPI_T_ERR_CVAR_SET_NEVER:
        return "MPI_T: control variable can never be set";
    case MPI_T_ERR_PVAR_NO_STARTSTOP:
        return "MPI_T: performance variable is continuous (no start, stop)";
    case MPI_T_ERR_PVAR_NO_WRITE:
        return "MPI_T: performance variable cannot be written or reset";
    case MPI_T_ERR_PVAR_NO_ATOMIC:
        return "MPI_T: performance variable cannot be read and reset atomically";
    case MPI_T_ERR_INVALID_NAME: return "MPI_T: no variable or category of that name";
    case MPI_T_ERR_INVALID: return "MPI_T: invalid use";
    default: return NULL;
    }
}

#pragma weak MPI_Error_string = PMPI_Error_string
int
PMPI_Error_string(int code, char *string, int *len)
{
    MPII_ENTER;
    const char *t = err_text(code);
    int n;

    if (t == NULL)
        t = mpii_errclass_text(code); /* added by the program */
    if (string == NULL || len == NULL)
        return MPI_ERR_ARG;
    n = snprintf(string, MPI_MAX_ERROR_STRING, "%s",
                 t != NULL ? t : "invalid error code");
    *len = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return t != NULL ? MPI_SUCCESS : MPI_ERR_ARG;
}

#pragma weak MPI_Error_class = PMPI_Error_class
int
PMPI_Error_class(int code, int *cls)
{
    MPII_ENTER;
    if (cls == NULL)
        return MPI_ERR_ARG;
    if (err_text(code) != NULL)
        *cls = code;
    else if ((*cls = mpii_errclass_of(code)) < 0)
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

void
mpii_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* The job's stderr reaches p2prun's terminal. */
    (void)!write(STDERR_FILENO, line, (size_t)n);
}

static int
errh_valid(MPI_Errhandler e)
{
    int i = e - ERRH_BASE;

    return i == 0 || i == 1 ||
           (i >= 2 && i < ERRH_MAX && user_handlers[i] != NULL);
}

int
mpii_err(MPI_Comm comm, int err, const char *fn)
{
    struct mpii_comm *c = mpii_comm_get(comm);
    MPI_Errhandler e = c != NULL ? c->errh : MPI_ERRORS_ARE_FATAL;
    char text[MPI_MAX_ERROR_STRING];
    int n;

    if (err == MPI_SUCCESS)
        return err;
    if (!mpii_initialized() && c == NULL)
        e = MPI_ERRORS_ARE_FATAL;
    if (e == MPI_ERRORS_RETURN)
        return err;
    if (e != MPI_ERRORS_ARE_FATAL && errh_valid(e)) {
        if (user_win[e - ERRH_BASE]) {
            MPI_Win win = mpii_win_of(comm);

            ((MPI_Win_errhandler_function *)(void (*)(void))
                 user_handlers[e - ERRH_BASE])(&win, &err);
        } else {
            user_handlers[e - ERRH_BASE](&comm, &err);
        }
        return err;
    }
    PMPI_Error_string(err, text, &n);
    /* MPII_CHECK_INIT's error: say what it is, not MPI_ERR_OTHER's
     * usual cause. */
    if (!mpii_initialized() && err == MPI_ERR_OTHER)
        snprintf(text, sizeof text, "called before MPI_Init or after "
                                    "MPI_Finalize");
    mpii_log("p2pmpi: %s: %s (error %d): aborting the job", fn, text, err);
    mpii_abort(err);
    return err;
}

#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
int
PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler e)
{
    MPII_ENTER;
    MPII_CHECK_INIT("MPI_Comm_set_errhandler");
    return mpii_errh_set(comm, e, 0, "MPI_Comm_set_errhandler");
}

int
mpii_errh_set(MPI_Comm comm, MPI_Errhandler e, int win, const char *fn)
{
    struct mpii_comm *c = mpii_comm_get(comm);

    if (c == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    /* A handler made for the other kind of object is erroneous. */
    if (!errh_valid(e) ||
        (e - ERRH_BASE >= 2 && user_win[e - ERRH_BASE] != (win != 0)))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    c->errh = e;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
int
PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *e)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_get_errhandler");
    if ((c = mpii_comm_get(comm)) == NULL || e == NULL)
        return mpii_err(MPI_COMM_WORLD, c == NULL ? MPI_ERR_COMM : MPI_ERR_ARG,
                        "MPI_Comm_get_errhandler");
    *e = c->errh;
    if (*e - ERRH_BASE >= 2)
        user_refs[*e - ERRH_BASE]++;
    return MPI_SUCCESS;
}

/* A user handler of either kind, in a free slot. */
static int
errh_create(MPI_Comm_errhandler_function *fn, int win, MPI_Errhandler *e,
            const char *name)
{
    int i;

    if (fn == NULL || e == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, name);
    for (i = 2; i < ERRH_MAX; i++)
        if (user_handlers[i] == NULL ||
            (user_refs[i] == 0 && !mpii_comm_uses_errh(ERRH_BASE + i))) {
            user_handlers[i] = fn;
            user_win[i] = (unsigned char)(win != 0);
            user_refs[i] = 1;
            *e = ERRH_BASE + i;
            return MPI_SUCCESS;
        }
    return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, name);
}

#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
int
PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *e)
{
    MPII_ENTER;
    return errh_create(fn, 0, e, "MPI_Comm_create_errhandler");
}

/* Kept as a communicator handler's pointer, called as what it is. */
#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
int
PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *e)
{
    MPII_ENTER;
    return errh_create(
        (MPI_Comm_errhandler_function *)(void (*)(void))fn, 1, e,
        "MPI_Win_create_errhandler");
}

#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
int
PMPI_Errhandler_free(MPI_Errhandler *e)
{
    MPII_ENTER;
    if (e == NULL || !errh_valid(*e) ||
        (*e - ERRH_BASE >= 2 && user_refs[*e - ERRH_BASE] == 0))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free");
    /* The function stays while a communicator has it (the standard:
     * freeing marks it for deallocation). */
    if (*e - ERRH_BASE >= 2)
        user_refs[*e - ERRH_BASE]--;
    *e = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
