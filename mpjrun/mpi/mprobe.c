/*
 * mprobe.c: matched probes and their receives (Mprobe, Improbe, Mrecv,
 * Imrecv) and MPI_Message handles.
 *
 * A matched probe takes the message it finds out of the unexpected
 * queue (match.c keeps it aside), so that no other receive, nor another
 * thread's probe, can take it; the MPI_Message names it until Mrecv or
 * Imrecv receives it.  With replicas, which message a wildcard matched
 * probe finds is the master's decision, followed by its backups, as for
 * Probe (mpii_probe_agreed and replication/decide.c): the backups take
 * the oldest message from the agreed source with the agreed tag, the
 * one the master took.
 */
#include <stdlib.h>

#include "core.h"

#define MSG_KIND 0x70000000u

struct mpii_message {
    struct umsg *u;
    struct mpii_comm *comm; /* held: Mrecv works after MPI_Comm_free */
    int src, tag;
};

static struct mpii_handles messages = {.kind = MSG_KIND};

static void
message_free(void *arg)
{
    struct mpii_message *m = arg;

    if (m != NULL)
        mpii_comm_release(m->comm);
    free(m);
}

/* Check the arguments of a matched probe; *c set. */
static int
mprobe_check(int source, int tag, MPI_Comm comm, MPI_Message *message,
             struct mpii_comm **c)
{
    if ((*c = mpii_comm_get(comm)) == NULL)
        return MPI_ERR_COMM;
    if (message == NULL)
        return MPI_ERR_ARG;
    return mpii_probe_check(source, tag, *c);
}

static void
status_proc_null(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_PROC_NULL;
    st->MPI_TAG = MPI_ANY_TAG;
    st->p2p_count = 0;
    st->p2p_cancelled = 0;
}

/* Mprobe (wait) and Improbe. */
static int
mprobe(int source, int tag, MPI_Comm comm, int wait, int *flag,
       MPI_Message *message, MPI_Status *st, const char *fn)
{
    struct mpii_message *m;
    struct mpii_comm *c;
    struct umsg *u = NULL;
    MPI_Status mine;
    uint32_t h;
    int rc, found = 1;

    MPII_CHECK_INIT(fn);
    if ((rc = mprobe_check(source, tag, comm, message, &c)) != MPI_SUCCESS)
        return mpii_err(c != NULL ? comm : MPI_COMM_WORLD, rc, fn);
    if (!wait && flag == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if (source == MPI_PROC_NULL) {
        if (flag != NULL)
            *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        status_proc_null(st);
        return MPI_SUCCESS;
    }
    if ((m = calloc(1, sizeof *m)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    rc = mpii_probe_agreed(c, source, tag, wait, wait ? NULL : &found, &mine,
                           &u);
    if (rc != MPI_SUCCESS || !found) {
        free(m);
        if (flag != NULL)
            *flag = 0;
        *message = MPI_MESSAGE_NULL;
        return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
    }
    m->u = u;
    m->comm = c;
    mpii_comm_hold(c);
    m->src = mine.MPI_SOURCE;
    m->tag = mine.MPI_TAG;
    if ((rc = mpii_handle_put(&messages, m, &h)) != MPI_SUCCESS) {
        /* The message stays claimed and is lost to the program: the
         * table is full (tens of thousands of unreceived messages). */
        message_free(m);
        return mpii_err(comm, rc, fn);
    }
    if (flag != NULL)
        *flag = 1;
    *message = (MPI_Message)h;
    mpii_status_one(st, &mine);
    return MPI_SUCCESS;
}

#pragma weak MPI_Mprobe = PMPI_Mprobe
int
PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
            MPI_Status *status)
{
    MPII_ENTER;
    return mprobe(source, tag, comm, 1, NULL, message, status, "MPI_Mprobe");
}

#pragma weak MPI_Improbe = PMPI_Improbe
int
PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
             MPI_Message *message, MPI_Status *status)
{
    MPII_ENTER;
    int rc = mprobe(source, tag, comm, 0, flag, message, status,
                    "MPI_Improbe");

    if (rc == MPI_SUCCESS && flag != NULL && !*flag)
        req_poll_missed();
    return rc;
}

#pragma weak MPI_Imrecv = PMPI_Imrecv
int
PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
            MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Imrecv";
    struct mpii_message *m;
    struct mpii_comm *c;
    int rc;

    MPII_CHECK_INIT(fn);
    if (message == NULL || req == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if (*message == MPI_MESSAGE_NO_PROC) {
        /* A receive from MPI_PROC_NULL: complete at once. */
        if ((c = mpii_comm_get(MPI_COMM_SELF)) == NULL)
            return mpii_err(MPI_COMM_WORLD, MPI_ERR_INTERN, fn);
        rc = mpii_irecv(buf, count, dt, MPI_PROC_NULL, MPI_ANY_TAG, c, c->ctx,
                        req);
        if (rc == MPI_SUCCESS)
            *message = MPI_MESSAGE_NULL;
        return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
    }
    if ((m = mpii_handle_get(&messages, (uint32_t)*message)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn);
    c = m->comm;
    rc = mpii_irecv_claimed(buf, count, dt, c, m->u, m->src, m->tag, req);
    if (rc != MPI_SUCCESS)
        return mpii_err(c->handle, rc, fn); /* the message stays */
    message_free(mpii_handle_take(&messages, (uint32_t)*message));
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Mrecv = PMPI_Mrecv
int
PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
           MPI_Status *status)
{
    MPII_ENTER;
    MPI_Request r;
    int rc;

    if ((rc = PMPI_Imrecv(buf, count, dt, message, &r)) != MPI_SUCCESS)
        return rc;
    rc = mpii_wait(&r, status);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, "MPI_Mrecv");
}

void
mpii_message_fini(void)
{
    /* The messages themselves went with match_fini. */
    mpii_handles_fini(&messages, message_free);
}
