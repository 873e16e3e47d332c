/*
 * persist.c: persistent requests (Send_init, Bsend_init, Ssend_init,
 * Rsend_init, Recv_init, Start, Startall), generalized requests
 * (Grequest_start, Grequest_complete) and the status setters
 * (Status_set_elements(_x), Status_set_cancelled).
 *
 * A persistent request is a request of kind REQ_PERSIST that keeps the
 * call's arguments.  Start makes an ordinary send or receive (the inner
 * request) whose completion completes the persistent one, status and
 * all; a wait then leaves it inactive, its handle valid, ready for the
 * next Start.  An inactive persistent request counts as MPI_REQUEST_NULL
 * in the wait and test families.  A persistent wildcard receive is an
 * ordinary wildcard receive at each Start, so with replicas its source is
 * agreed like any other (replication/decide.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "datatype.h"

struct mpii_persist {
    int recv;
    enum mpii_send_mode mode;
    int buffered; /* Bsend_init */
    void *buf;
    int count;
    MPI_Datatype dt; /* a handle of our own: MPI_Type_free may come */
    int peer, tag;
    struct mpii_req *inner; /* while started and not complete */
};

struct mpii_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    int freed; /* free_fn has run */
};

static int
persist_new(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
            MPI_Comm comm, int recv, enum mpii_send_mode mode, int buffered,
            MPI_Request *req, const char *fn)
{
    const struct mpii_type *t;
    struct mpii_persist *p;
    struct mpii_comm *c;
    struct mpii_req *r;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, fn);
    /* The arguments are checked now, as the immediate call would. */
    if (count < 0)
        return mpii_err(comm, MPI_ERR_COUNT, fn);
    if ((t = mpii_type_get(dt)) == NULL)
        return mpii_err(comm, MPI_ERR_TYPE, fn);
    if (peer != MPI_PROC_NULL && !(recv && peer == MPI_ANY_SOURCE) &&
        (peer < 0 || peer >= c->size))
        return mpii_err(comm, MPI_ERR_RANK, fn);
    if (!(recv && tag == MPI_ANY_TAG) && (tag < 0 || tag > MPI_TAG_UB_VALUE))
        return mpii_err(comm, MPI_ERR_TAG, fn);
    if ((p = calloc(1, sizeof *p)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    /* Our own handle of the type, so that every Start finds it after
     * the user's MPI_Type_free (as the communicator, held below). */
    if (mpii_type_handle_dup(dt, &p->dt) != MPI_SUCCESS) {
        free(p);
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    }
    if ((r = req_new(REQ_PERSIST, req)) == NULL) {
        mpii_type_handle_drop(p->dt);
        free(p);
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    }
    p->recv = recv;
    p->mode = mode;
    p->buffered = buffered;
    p->buf = (void *)buf;
    p->count = count;
    p->peer = peer;
    p->tag = tag;
    r->persist = p;
    req_bind(r, c, NULL); /* Start works after MPI_Comm_free */
    r->active = 0; /* inactive until started */
    return MPI_SUCCESS;
}

#pragma weak MPI_Send_init = PMPI_Send_init
int
PMPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest,
               int tag, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return persist_new(buf, count, dt, dest, tag, comm, 0, MPII_SEND_STANDARD,
                       0, req, "MPI_Send_init");
}

#pragma weak MPI_Ssend_init = PMPI_Ssend_init
int
PMPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest,
                int tag, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return persist_new(buf, count, dt, dest, tag, comm, 0, MPII_SEND_SYNC, 0,
                       req, "MPI_Ssend_init");
}

#pragma weak MPI_Rsend_init = PMPI_Rsend_init
int
PMPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest,
                int tag, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return persist_new(buf, count, dt, dest, tag, comm, 0, MPII_SEND_STANDARD,
                       0, req, "MPI_Rsend_init");
}

#pragma weak MPI_Bsend_init = PMPI_Bsend_init
int
PMPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest,
                int tag, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return persist_new(buf, count, dt, dest, tag, comm, 0, MPII_SEND_STANDARD,
                       1, req, "MPI_Bsend_init");
}

#pragma weak MPI_Recv_init = PMPI_Recv_init
int
PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return persist_new(buf, count, dt, source, tag, comm, 1,
                       MPII_SEND_STANDARD, 0, req, "MPI_Recv_init");
}

/* Start one persistent request; an MPI error (not yet reported). */
static int
start(MPI_Request h)
{
    struct mpii_req *r = req_get(h), *in;
    struct mpii_persist *p;
    struct mpii_comm *c;
    MPI_Request ih;
    int rc;

    if (r == NULL || r->kind != REQ_PERSIST || r->started)
        return MPI_ERR_REQUEST;
    p = r->persist;
    c = r->comm;
    memset(&r->status, 0, sizeof r->status);
    memset(&r->tx, 0, sizeof r->tx);
    r->err = MPI_SUCCESS;
    if (p->buffered) {
        rc = mpii_bsend(p->buf, p->count, p->dt, p->peer, p->tag, c, &r->tx);
        if (rc != MPI_SUCCESS)
            return rc;
        r->started = r->active = 1;
        req_complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if (p->recv)
        rc = mpii_irecv(p->buf, p->count, p->dt, p->peer, p->tag, c, c->ctx,
                        &ih);
    else
        rc = mpii_isend(p->buf, p->count, p->dt, p->peer, p->tag, c, c->ctx,
                        p->mode, &ih);
    if (rc != MPI_SUCCESS)
        return rc;
    r->started = r->active = 1;
    if ((in = req_get(ih)) == NULL)
        return MPI_ERR_INTERN;
    if (!in->active) {
        r->status = in->status;
        rc = in->err;
        cancel_inherit(r, in, ih);
        req_release(in);
        req_complete(r, rc);
        return MPI_SUCCESS;
    }
    in->parent = r;
    in->freed = 1;
    p->inner = in;
    return MPI_SUCCESS;
}

#pragma weak MPI_Start = PMPI_Start
int
PMPI_Start(MPI_Request *req)
{
    MPII_ENTER;
    struct mpii_req *r;
    MPI_Comm comm = MPI_COMM_WORLD;
    int rc;

    MPII_CHECK_INIT("MPI_Start");
    if (req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, "MPI_Start");
    if ((r = req_get(*req)) != NULL && r->comm != NULL)
        comm = r->comm->handle;
    rc = start(*req);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Start");
}

#pragma weak MPI_Startall = PMPI_Startall
int
PMPI_Startall(int n, MPI_Request reqs[])
{
    MPII_ENTER;
    int i, rc;

    MPII_CHECK_INIT("MPI_Startall");
    if (n < 0 || (n > 0 && reqs == NULL))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Startall");
    for (i = 0; i < n; i++)
        if ((rc = start(reqs[i])) != MPI_SUCCESS)
            return mpii_err(MPI_COMM_WORLD, rc, "MPI_Startall");
    return MPI_SUCCESS;
}

void
persist_free(struct mpii_req *r)
{
    if (r->persist != NULL) {
        /* Freed while started: the inner request goes on alone. */
        if (r->persist->inner != NULL && r->persist->inner->parent == r)
            r->persist->inner->parent = NULL;
        mpii_type_handle_drop(r->persist->dt);
        free(r->persist);
        r->persist = NULL;
    }
    if (r->greq != NULL) {
        if (!r->greq->freed && r->greq->free_fn != NULL)
            (void)r->greq->free_fn(r->greq->extra);
        free(r->greq);
        r->greq = NULL;
    }
}

int
persist_cancel(struct mpii_req *r)
{
    struct mpii_req *in;

    if (r->kind == REQ_GREQ) {
        if (r->greq->cancel == NULL)
            return MPI_SUCCESS;
        return r->greq->cancel(r->greq->extra, !r->active);
    }
    in = r->persist->inner;
    if (!r->started)
        return MPI_SUCCESS;
    /* A send: its inner request while in flight, else the persistent
     * request took over where its message went. */
    if (!r->persist->recv)
        return cancel_send(MPI_REQUEST_NULL,
                           in != NULL && in->parent == r ? in : r);
    if (!r->active || in == NULL || in->parent != r)
        return MPI_SUCCESS;
    if (in->kind == REQ_RECV && in->active && match_unpost(in)) {
        in->status.p2p_cancelled = 1;
        in->status.MPI_SOURCE = MPI_ANY_SOURCE;
        in->status.MPI_TAG = MPI_ANY_TAG;
        req_complete(in, MPI_SUCCESS);
    }
    return MPI_SUCCESS;
}

/* --- generalized requests ------------------------------------------- */

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
int
PMPI_Grequest_start(MPI_Grequest_query_function *query,
                    MPI_Grequest_free_function *free_fn,
                    MPI_Grequest_cancel_function *cancel, void *extra,
                    MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Grequest_start";
    struct mpii_greq *g;
    struct mpii_req *r;

    MPII_CHECK_INIT(fn);
    if (req == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((g = calloc(1, sizeof *g)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
    if ((r = req_new(REQ_GREQ, req)) == NULL) {
        free(g);
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
    }
    g->query = query;
    g->free_fn = free_fn;
    g->cancel = cancel;
    g->extra = extra;
    r->greq = g;
    return MPI_SUCCESS;
}

#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete
int
PMPI_Grequest_complete(MPI_Request req)
{
    MPII_ENTER;
    struct mpii_req *r = req_get(req);

    if (r == NULL || r->kind != REQ_GREQ)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                        "MPI_Grequest_complete");
    req_complete(r, MPI_SUCCESS);
    return MPI_SUCCESS;
}

int
greq_query(struct mpii_req *r, MPI_Status *st)
{
    struct mpii_greq *g = r->greq;
    MPI_Status mine;
    int rc = MPI_SUCCESS;

    memset(&mine, 0, sizeof mine);
    mine.MPI_SOURCE = MPI_ANY_SOURCE;
    mine.MPI_TAG = MPI_ANY_TAG;
    if (g->query != NULL)
        rc = g->query(g->extra, &mine);
    if (st != MPI_STATUS_IGNORE)
        *st = mine;
    return rc;
}

int
greq_finish(struct mpii_req *r, MPI_Status *st)
{
    struct mpii_greq *g = r->greq;
    int rc = greq_query(r, st), rc2 = MPI_SUCCESS;

    if (g->free_fn != NULL)
        rc2 = g->free_fn(g->extra);
    g->freed = 1;
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* --- status setters (for generalized requests' query functions) ----- */

#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
int
PMPI_Status_set_elements_x(MPI_Status *st, MPI_Datatype dt, MPI_Count count)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Status_set_elements_x";
    const struct mpii_type *t;
    size_t per, size;
    MPI_Datatype basic;

    if (st == NULL || count < 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(dt)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    /* count basic elements: bytes of that many of the basic type. */
    basic = mpii_type_basic(t, &per);
    size = basic != MPI_DATATYPE_NULL
               ? mpii_type_size(mpii_type_get(basic))
               : mpii_type_size(t);
    st->p2p_count = (long long)count * (long long)size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
int
PMPI_Status_set_elements(MPI_Status *st, MPI_Datatype dt, int count)
{
    MPII_ENTER;
    return PMPI_Status_set_elements_x(st, dt, count);
}

#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
int
PMPI_Status_set_cancelled(MPI_Status *st, int flag)
{
    MPII_ENTER;
    if (st == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG,
                        "MPI_Status_set_cancelled");
    st->p2p_cancelled = flag != 0;
    return MPI_SUCCESS;
}
