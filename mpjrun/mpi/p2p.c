/*
 * Point-to-point: sends pick eager (small messages, copied or written at
 * once) or rendezvous (an announcement, the payload only once the receive
 * is matched, written straight from the user's buffer); receives post
 * into the matching engine.  Wait, test and probe drive the progress
 * engine.  Every argument is checked; errors go to the communicator's
 * error handler.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "decide.h"
#include "rep.h"

/* --- starting requests ------------------------------------------------ */

static int
check_buf(const void *buf, int count, MPI_Datatype dt,
          const struct mpii_type **t)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if ((*t = mpii_type_get(dt)) == NULL)
        return MPI_ERR_TYPE;
    /* A null buffer is MPI_BOTTOM: derived types may hold addresses. */
    if (buf == NULL && count > 0 && mpii_type_size(*t) > 0 &&
        mpii_type_is_builtin(*t))
        return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

/* Sends to ourselves, numbered as a connection numbers its frames (the
 * message's name for MPI_Cancel). */
static uint64_t self_seq;

/* A send's frame header, its kind and lengths still to set. */
static void
send_header(struct wire_hdr *h, const struct mpii_comm *comm, int dest,
            int tag, uint32_t ctx)
{
    memset(h, 0, sizeof *h);
    h->ctx = ctx;
    h->src = comm->rank;
    h->dst = dest;
    h->tag = tag;
}

int
mpii_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
           struct mpii_comm *comm, uint32_t ctx, enum mpii_send_mode mode,
           MPI_Request *handle)
{
    const struct mpii_type *t;
    struct mpii_req *r;
    struct wire_hdr h;
    struct conn *c;
    size_t len;
    int rc, world, copy;

    if ((rc = check_buf(buf, count, dt, &t)) != MPI_SUCCESS)
        return rc;
    /* Buffered: the data is copied now, the send is a standard one. */
    if ((copy = mode == MPII_SEND_BUFFERED))
        mode = MPII_SEND_STANDARD;
    mpii_test_point(ctx == comm->ctx ? "send" : "coll");
    if (dest == MPI_PROC_NULL) {
        if ((r = req_new(REQ_SEND, handle)) == NULL)
            return MPI_ERR_NO_MEM;
        req_complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if (dest < 0 || dest >= comm->size)
        return MPI_ERR_RANK;
    if (tag < 0 || tag > MPI_TAG_UB_VALUE)
        return MPI_ERR_TAG;
    len = mpii_type_size(t) * (size_t)count;
    mpii_counts.sent++;
    mpii_counts.sent_bytes += len;
    world = comm->world[dest];
    /* An eager standard send of a contiguous buffer to another process
     * completes as it starts (written, or copied when the channel is
     * full): it takes no request slot (req_done_handle). */
    if (mode == MPII_SEND_STANDARD && !copy && world != mpii_world_rank() &&
        !rep_active() && mpii_type_contiguous(t) &&
        (c = conn_to(world)) != NULL) {
        if (len <= conn_eager_max(c)) {
            send_header(&h, comm, dest, tag, ctx);
            h.type = FR_EAGER;
            h.total = len;
            rc = conn_send_eager(c, &h, mpii_type_start(buf, t), len);
            if (rc == MPI_SUCCESS) {
                struct mpii_sent tx = {
                    .conn = c, .seq = h.seq, .ctx = ctx, .known = 1};

                *handle = req_done_handle(&tx);
                return MPI_SUCCESS;
            }
            if ((r = req_new(REQ_SEND, handle)) != NULL)
                req_complete(r, rc);
            return rc;
        }
    }
    if ((r = req_new(REQ_SEND, handle)) == NULL)
        return MPI_ERR_NO_MEM;
    r->buf = (void *)buf;
    r->count = count;
    req_bind(r, comm, t); /* Type_free, Comm_free may come first */
    r->ctx = ctx;
    r->peer = dest;
    r->tag = tag;
    r->mode = mode;
    r->len = len;
    if (mpii_type_contiguous(t) && !copy)
        r->data = mpii_type_start(buf, t);
    else {
        if ((r->owned = malloc(r->len > 0 ? r->len : 1)) == NULL) {
            req_complete(r, MPI_ERR_NO_MEM);
            return MPI_ERR_NO_MEM;
        }
        mpii_pack(buf, count, t, r->owned);
        r->data = r->owned;
    }
    send_header(&h, comm, dest, tag, ctx);
    if (world == mpii_world_rank()) {
        /* To ourselves: straight into the matching engine.  A standard
         * send is copied and complete; a synchronous one waits, like a
         * rendezvous, until a receive takes it. */
        h.seq = ++self_seq; /* names it for MPI_Cancel */
        if (mode == MPII_SEND_SYNC) {
            h.type = FR_RTS;
            h.total = r->len;
            h.sid = req_id(r);
            cancel_note(r, NULL, &h);
            transport_self(&h, NULL);
            return MPI_SUCCESS;
        }
        h.type = FR_EAGER;
        h.len = h.total = r->len;
        cancel_note(r, NULL, &h);
        transport_self(&h, r->data);
        req_complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if (rep_active()) {
        /* Replicas: numbered, logged, sent to the replicas we feed. */
        if (r->len <= mpii_eager_cap && mode == MPII_SEND_STANDARD) {
            h.type = FR_EAGER;
            h.total = r->len;
            rc = rep_send(world, &h, r->data, r->len, NULL);
            req_complete(r, rc);
            return rc;
        }
        h.type = FR_RTS;
        h.total = r->len;
        h.sid = req_id(r);
        if ((rc = rep_send(world, &h, NULL, 0, r)) != MPI_SUCCESS)
            req_complete(r, rc);
        return rc;
    }
    if ((c = conn_to(world)) == NULL) {
        req_complete(r, MPI_ERR_OTHER);
        return MPI_ERR_OTHER;
    }
    r->conn = c;
    if (r->len <= conn_eager_max(c) && mode == MPII_SEND_STANDARD) {
        h.type = FR_EAGER;
        h.total = r->len;
        /* Complete at once: what is not written now is copied. */
        rc = conn_send(c, &h, r->data, r->len, 1, NULL);
        if (rc == MPI_SUCCESS)
            cancel_note(r, c, &h);
        req_complete(r, rc);
        return rc;
    }
    h.type = FR_RTS;
    h.total = r->len;
    h.sid = req_id(r);
    if ((rc = conn_send(c, &h, NULL, 0, 0, NULL)) != MPI_SUCCESS)
        req_complete(r, rc);
    else
        cancel_note(r, c, &h);
    return rc;
}

/* A receive request of count elements of dt from source with tag on
 * comm's context ctx, not yet posted.  An MPI error. */
static int
recv_new(void *buf, int count, MPI_Datatype dt, int source, int tag,
         struct mpii_comm *comm, uint32_t ctx, MPI_Request *handle,
         struct mpii_req **out)
{
    const struct mpii_type *t;
    struct mpii_req *r;
    int rc;

    if ((rc = check_buf(buf, count, dt, &t)) != MPI_SUCCESS)
        return rc;
    if ((r = req_new(REQ_RECV, handle)) == NULL)
        return MPI_ERR_NO_MEM;
    r->buf = buf;
    r->count = count;
    req_bind(r, comm, t); /* Type_free, Comm_free may come first */
    r->ctx = ctx;
    r->peer = source;
    r->tag = tag;
    r->cap = mpii_type_size(t) * (size_t)count;
    /* Where an eager message lands (match.c deliver_eager). */
    if (mpii_type_contiguous(t))
        r->rbuf = mpii_type_start(buf, t);
    *out = r;
    return MPI_SUCCESS;
}

int
mpii_irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
           struct mpii_comm *comm, uint32_t ctx, MPI_Request *handle)
{
    struct mpii_req *r;
    int rc;

    if ((rc = mpii_probe_check(source, tag, comm)) != MPI_SUCCESS ||
        (rc = recv_new(buf, count, dt, source, tag, comm, ctx, handle, &r)) !=
            MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        req_complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if (source == MPI_ANY_SOURCE && dec_on()) {
        /* Replicas: which source it takes is the master's decision; a
         * backup that already has it receives from that source. */
        int32_t v;

        r->dn = dec_next();
        if (!dec_master() && dec_lookup(r->dn, &v)) {
            if (v >= 0 && v < comm->size)
                r->peer = v;
            else
                mpii_log("p2pmpi: decision %u names source %d, outside the "
                         "communicator: ignored",
                         r->dn, (int)v);
        }
    }
    match_post(r);
    return MPI_SUCCESS;
}

int
mpii_irecv_claimed(void *buf, int count, MPI_Datatype dt,
                   struct mpii_comm *comm, struct umsg *u, int src, int tag,
                   MPI_Request *handle)
{
    struct mpii_req *r;
    int rc;

    rc = recv_new(buf, count, dt, src, tag, comm, comm->ctx, handle, &r);
    if (rc == MPI_SUCCESS)
        match_take_claimed(r, u);
    return rc;
}

/* --- completing ------------------------------------------------------- */

void
mpii_status_one(MPI_Status *st, const MPI_Status *from)
{
    if (st != MPI_STATUS_IGNORE) {
        int keep = st->MPI_ERROR;

        *st = *from;
        st->MPI_ERROR = keep;
    }
}

/* A request's status to the program; the calls that return several
 * statuses write MPI_ERROR themselves (req_finish_many). */
static void
status_out(const struct mpii_req *r, MPI_Status *st)
{
    mpii_status_one(st, &r->status);
}

static void
status_empty(MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE) {
        memset(st, 0, sizeof *st);
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
    }
}

/* Hand a finished request to the user and free it.  A persistent
 * request stays (inactive, its handle valid); an inactive one gives an
 * empty status; a generalized one asks the user's query function. */
static int
req_finish(MPI_Request *handle, struct mpii_req *r, MPI_Status *st)
{
    int err = r->err;

    if (r->kind == REQ_PERSIST) {
        if (!r->started) {
            status_empty(st);
            return MPI_SUCCESS;
        }
        r->started = 0;
        status_out(r, st);
        return err;
    }
    if (r->kind == REQ_GREQ)
        err = greq_finish(r, st);
    else
        status_out(r, st);
    req_release(r);
    *handle = MPI_REQUEST_NULL;
    return err;
}

/* req_finish for the calls that return several statuses (Waitall,
 * Testall, Waitsome, Testsome): each status says how its request
 * ended. */
static int
req_finish_many(MPI_Request *handle, struct mpii_req *r, MPI_Status *st)
{
    int err = req_finish(handle, r, st);

    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = err;
    return err;
}

static int
req_done(void *arg)
{
    return !((struct mpii_req *)arg)->active;
}

int
mpii_wait(MPI_Request *handle, MPI_Status *st)
{
    struct mpii_req *r;
    int rc;

    if (handle == NULL)
        return MPI_ERR_REQUEST;
    if (*handle == MPI_REQUEST_NULL) {
        status_empty(st);
        return MPI_SUCCESS;
    }
    if ((r = req_get(*handle)) == NULL)
        return MPI_ERR_REQUEST;
    if ((rc = req_wait_until(req_done, r)) != MPI_SUCCESS && r->active)
        req_complete(r, rc);
    return req_finish(handle, r, st);
}

struct all_arg {
    int n;
    struct mpii_req **rs; /* the requests looked up, NULL for null ones */
    int first;            /* those before it are known complete */
    int looked;
    unsigned long seen; /* req_completions when last looked */
};

/* A request does not become active again while we wait, so each pass
 * looks only from the first one found still active (a window of
 * receives completes mostly in order). */
static int
all_done(void *arg)
{
    struct all_arg *a = arg;
    int i;

    /* Nothing completed since the last look: still not done. */
    if (a->looked && a->seen == req_completions)
        return 0;
    a->looked = 1;
    a->seen = req_completions;
    for (i = a->first; i < a->n; i++)
        if (a->rs[i] != NULL && a->rs[i]->active) {
            a->first = i;
            return 0;
        }
    a->first = a->n;
    return 1;
}

/* Requests Waitall looks up once, on its stack up to this many. */
#define WAITALL_STACK 64

int
mpii_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    struct mpii_req *stack[WAITALL_STACK], **rs = stack, *r;
    struct all_arg a = {n, NULL, 0, 0, 0};
    int i, rc, any = 0;

    if (n < 0 || (n > 0 && reqs == NULL))
        return MPI_ERR_ARG;
    if (n > WAITALL_STACK && (rs = malloc((size_t)n * sizeof *rs)) == NULL)
        return MPI_ERR_NO_MEM;
    for (i = 0; i < n; i++) {
        rs[i] = NULL;
        if (reqs[i] != MPI_REQUEST_NULL && (rs[i] = req_get(reqs[i])) == NULL) {
            if (rs != stack)
                free(rs);
            return MPI_ERR_REQUEST;
        }
    }
    a.rs = rs;
    rc = req_wait_until(all_done, &a);
    for (i = 0; i < n; i++) {
        MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                    : &sts[i];

        if ((r = rs[i]) == NULL) {
            status_empty(st);
            continue;
        }
        /* The same handle twice: given back with its first copy. */
        if (r->kind == REQ_FREE) {
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = MPI_ERR_REQUEST;
            any = 1;
            continue;
        }
        if (r->active)
            req_complete(r, rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN);
        if (req_finish_many(&reqs[i], r, st) != MPI_SUCCESS)
            any = 1;
    }
    if (rs != stack)
        free(rs);
    return any ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int
mpii_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
          struct mpii_comm *comm, uint32_t ctx)
{
    MPI_Request r;
    int rc;

    if ((rc = mpii_isend(buf, count, dt, dest, tag, comm, ctx,
                         MPII_SEND_STANDARD, &r)) != MPI_SUCCESS)
        return rc;
    return mpii_wait(&r, MPI_STATUS_IGNORE);
}

int
mpii_recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
          struct mpii_comm *comm, uint32_t ctx, MPI_Status *st)
{
    MPI_Request r;
    int rc;

    if ((rc = mpii_irecv(buf, count, dt, source, tag, comm, ctx, &r)) !=
        MPI_SUCCESS)
        return rc;
    return mpii_wait(&r, st);
}

/* --- the MPI calls ------------------------------------------------------ */

#define COMM_OR_ERR(c, h, fn)                                                 \
    do {                                                                      \
        MPII_CHECK_INIT(fn);                                                  \
        if (((c) = mpii_comm_get(h)) == NULL)                                 \
            return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);                \
    } while (0)

static int
send_mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
          MPI_Comm comm, enum mpii_send_mode mode, const char *fn)
{
    struct mpii_comm *c;
    MPI_Request r;
    int rc;

    COMM_OR_ERR(c, comm, fn);
    rc = mpii_isend(buf, count, dt, dest, tag, c, c->ctx, mode, &r);
    if (rc == MPI_SUCCESS)
        rc = mpii_wait(&r, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

#pragma weak MPI_Send = PMPI_Send
int
PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
          MPI_Comm comm)
{
    MPII_ENTER;
    return send_mode(buf, count, dt, dest, tag, comm, MPII_SEND_STANDARD,
                     "MPI_Send");
}

#pragma weak MPI_Ssend = PMPI_Ssend
int
PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
           MPI_Comm comm)
{
    MPII_ENTER;
    return send_mode(buf, count, dt, dest, tag, comm, MPII_SEND_SYNC,
                     "MPI_Ssend");
}

#pragma weak MPI_Rsend = PMPI_Rsend
int
PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
           MPI_Comm comm)
{
    MPII_ENTER;
    return send_mode(buf, count, dt, dest, tag, comm, MPII_SEND_STANDARD,
                     "MPI_Rsend");
}

static int
isend_mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
           MPI_Comm comm, enum mpii_send_mode mode, MPI_Request *req,
           const char *fn)
{
    struct mpii_comm *c;
    int rc;

    COMM_OR_ERR(c, comm, fn);
    if (req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, fn);
    rc = mpii_isend(buf, count, dt, dest, tag, c, c->ctx, mode, req);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

#pragma weak MPI_Isend = PMPI_Isend
int
PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
           MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return isend_mode(buf, count, dt, dest, tag, comm, MPII_SEND_STANDARD,
                      req, "MPI_Isend");
}

#pragma weak MPI_Issend = PMPI_Issend
int
PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
            MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return isend_mode(buf, count, dt, dest, tag, comm, MPII_SEND_SYNC, req,
                      "MPI_Issend");
}

#pragma weak MPI_Irsend = PMPI_Irsend
int
PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
            MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return isend_mode(buf, count, dt, dest, tag, comm, MPII_SEND_STANDARD,
                      req, "MPI_Irsend");
}

#pragma weak MPI_Recv = PMPI_Recv
int
PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
          MPI_Comm comm, MPI_Status *st)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int rc;

    COMM_OR_ERR(c, comm, "MPI_Recv");
    rc = mpii_recv(buf, count, dt, source, tag, c, c->ctx, st);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Recv");
}

#pragma weak MPI_Irecv = PMPI_Irecv
int
PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
           MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int rc;

    COMM_OR_ERR(c, comm, "MPI_Irecv");
    if (req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, "MPI_Irecv");
    rc = mpii_irecv(buf, count, dt, source, tag, c, c->ctx, req);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Irecv");
}

#pragma weak MPI_Sendrecv = PMPI_Sendrecv
int
PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
              int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source,
              int rtag, MPI_Comm comm, MPI_Status *st)
{
    MPII_ENTER;
    struct mpii_comm *c;
    MPI_Request r[2];
    MPI_Status sts[2];
    int rc;

    COMM_OR_ERR(c, comm, "MPI_Sendrecv");
    if ((rc = mpii_irecv(rbuf, rcount, rtype, source, rtag, c, c->ctx,
                         &r[0])) != MPI_SUCCESS)
        return mpii_err(comm, rc, "MPI_Sendrecv");
    if ((rc = mpii_isend(sbuf, scount, stype, dest, stag, c, c->ctx,
                         MPII_SEND_STANDARD, &r[1])) != MPI_SUCCESS) {
        (void)mpii_wait(&r[0], MPI_STATUS_IGNORE);
        return mpii_err(comm, rc, "MPI_Sendrecv");
    }
    rc = mpii_waitall(2, r, sts);
    mpii_status_one(st, &sts[0]);
    if (rc == MPI_ERR_IN_STATUS)
        rc = sts[0].MPI_ERROR != MPI_SUCCESS ? sts[0].MPI_ERROR
                                             : sts[1].MPI_ERROR;
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Sendrecv");
}

#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
int
PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag,
                      int source, int rtag, MPI_Comm comm, MPI_Status *st)
{
    MPII_ENTER;
    const struct mpii_type *t;
    size_t len;
    void *tmp;
    int rc;

    MPII_CHECK_INIT("MPI_Sendrecv_replace");
    if ((t = mpii_type_get(dt)) == NULL || count < 0)
        return mpii_err(comm, t == NULL ? MPI_ERR_TYPE : MPI_ERR_COUNT,
                        "MPI_Sendrecv_replace");
    len = mpii_type_size(t) * (size_t)count;
    if ((tmp = malloc(len > 0 ? len : 1)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
    mpii_pack(buf, count, t, tmp);
    rc = PMPI_Sendrecv(tmp, (int)len, MPI_BYTE, dest, stag, buf, count, dt,
                       source, rtag, comm, st);
    free(tmp);
    return rc;
}

#pragma weak MPI_Wait = PMPI_Wait
int
PMPI_Wait(MPI_Request *req, MPI_Status *st)
{
    MPII_ENTER;
    struct mpii_req *r;
    MPI_Comm comm = MPI_COMM_WORLD;
    int rc;

    MPII_CHECK_INIT("MPI_Wait");
    if (req != NULL && (r = req_get(*req)) != NULL && r->comm != NULL)
        comm = r->comm->handle;
    rc = mpii_wait(req, st);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Wait");
}

#pragma weak MPI_Waitall = PMPI_Waitall
int
PMPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    MPII_ENTER;
    int rc;

    MPII_CHECK_INIT("MPI_Waitall");
    rc = mpii_waitall(n, reqs, sts);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, "MPI_Waitall");
}

struct any_arg {
    int n;
    MPI_Request *reqs;
    int index;
};

/* The first complete request in array order: one deterministic choice,
 * so that replicas given the same completions choose alike. */
static int
any_done(void *arg)
{
    struct any_arg *a = arg;
    struct mpii_req *r;
    int i, live = 0;

    for (i = 0; i < a->n; i++) {
        if (a->reqs[i] == MPI_REQUEST_NULL ||
            (r = req_get(a->reqs[i])) == NULL || req_inactive(r))
            continue;
        live = 1;
        if (!r->active) {
            a->index = i;
            return 1;
        }
    }
    if (!live)
        a->index = MPI_UNDEFINED;
    return !live;
}

static int
check_reqs(int n, MPI_Request reqs[])
{
    int i;

    if (n < 0 || (n > 0 && reqs == NULL))
        return MPI_ERR_ARG;
    for (i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL && req_get(reqs[i]) == NULL)
            return MPI_ERR_REQUEST;
    return MPI_SUCCESS;
}

/* Replicas: a backup takes its master's outcome of decision dn (1, in
 * v), or learns it is master now (0: decide); a negative MPI error. */
static int
follow(uint32_t dn, int32_t *v, int max, int *nv)
{
    if (dn == 0 || dec_master())
        return 0;
    return dec_await(dn, v, max, nv);
}

/* A request the master chose: wait for it here too.  Index i must name
 * a request of ours; MPI_ERR_INTERN if the replicas diverged. */
static int
follow_wait(int n, MPI_Request reqs[], int i, MPI_Status *st)
{
    if (i < 0 || i >= n || reqs[i] == MPI_REQUEST_NULL ||
        req_get(reqs[i]) == NULL)
        return MPI_ERR_INTERN;
    return mpii_wait(&reqs[i], st);
}

#pragma weak MPI_Waitany = PMPI_Waitany
int
PMPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    MPII_ENTER;
    struct any_arg a = {n, reqs, MPI_UNDEFINED};
    uint32_t dn;
    int32_t v;
    int rc, nv;

    MPII_CHECK_INIT("MPI_Waitany");
    if ((rc = check_reqs(n, reqs)) != MPI_SUCCESS || index == NULL)
        return mpii_err(MPI_COMM_WORLD, rc ? rc : MPI_ERR_ARG, "MPI_Waitany");
    dn = dec_next();
    if ((rc = follow(dn, &v, 1, &nv)) < 0)
        return mpii_err(MPI_COMM_WORLD, -rc, "MPI_Waitany");
    if (rc == 1) {
        *index = v;
        if (v == MPI_UNDEFINED) {
            status_empty(st);
            return MPI_SUCCESS;
        }
        rc = follow_wait(n, reqs, v, st);
        return rc == MPI_SUCCESS ? rc
                                 : mpii_err(MPI_COMM_WORLD, rc, "MPI_Waitany");
    }
    if ((rc = req_wait_until(any_done, &a)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, "MPI_Waitany");
    v = a.index;
    if (dn != 0 && (rc = dec_publish(dn, &v, 1)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, "MPI_Waitany");
    *index = a.index;
    if (a.index == MPI_UNDEFINED) {
        status_empty(st);
        return MPI_SUCCESS;
    }
    rc = req_finish(&reqs[a.index], req_get(reqs[a.index]), st);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, "MPI_Waitany");
}

static int
some_done(void *arg)
{
    struct any_arg *a = arg;

    return any_done(a);
}

static int some(int n, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status sts[], int wait, const char *fn);

#pragma weak MPI_Waitsome = PMPI_Waitsome
int
PMPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
              MPI_Status sts[])
{
    MPII_ENTER;
    int rc;

    MPII_CHECK_INIT("MPI_Waitsome");
    if ((rc = check_reqs(n, reqs)) != MPI_SUCCESS || outcount == NULL)
        return mpii_err(MPI_COMM_WORLD, rc ? rc : MPI_ERR_ARG,
                        "MPI_Waitsome");
    return some(n, reqs, outcount, indices, sts, 1, "MPI_Waitsome");
}

/* Waitsome and Testsome (wait 0: return at once if none is done).  With
 * replicas the master's list of indices is everyone's. */
static int
some(int n, MPI_Request reqs[], int *outcount, int indices[],
     MPI_Status sts[], int wait, const char *fn)
{
    struct any_arg a = {n, reqs, MPI_UNDEFINED};
    struct mpii_req *r;
    int32_t *v = NULL;
    uint32_t dn = dec_next();
    int i, k = 0, rc, err = 0, nv = 0;

    if (dn != 0 &&
        (v = malloc(DEC_MAX_VALUES * sizeof *v)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
    if ((rc = follow(dn, v, DEC_MAX_VALUES, &nv)) < 0) {
        free(v);
        return mpii_err(MPI_COMM_WORLD, -rc, fn);
    }
    if (rc == 1) {
        /* v: count (MPI_UNDEFINED or 0 possible), then the indices;
         * never more than we have requests, or than came. */
        *outcount = nv > 0 ? v[0] : 0;
        if (*outcount != MPI_UNDEFINED &&
            (*outcount < 0 || *outcount > n || *outcount > nv - 1)) {
            free(v);
            return mpii_err(MPI_COMM_WORLD, MPI_ERR_INTERN, fn);
        }
        for (i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++) {
            indices[i] = v[i + 1];
            rc = follow_wait(n, reqs, v[i + 1],
                             sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                        : &sts[i]);
            if (rc != MPI_SUCCESS)
                err = 1;
        }
        free(v);
        return err ? mpii_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fn)
                   : MPI_SUCCESS;
    }
    if (wait) {
        if ((rc = req_wait_until(some_done, &a)) != MPI_SUCCESS) {
            free(v);
            return mpii_err(MPI_COMM_WORLD, rc, fn);
        }
    } else {
        (void)mpii_progress(0);
        if (!any_done(&a)) {
            *outcount = 0;
            if (dn != 0) {
                v[0] = 0;
                rc = dec_publish(dn, v, 1);
            }
            free(v);
            return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
        }
    }
    if (a.index == MPI_UNDEFINED) {
        *outcount = MPI_UNDEFINED;
        if (dn != 0) {
            v[0] = MPI_UNDEFINED;
            rc = dec_publish(dn, v, 1);
        }
        free(v);
        return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
    }
    if (dn != 0) {
        /* Publish the list first: it takes effect once backups have it. */
        for (i = 0, k = 0; i < n && k + 1 < DEC_MAX_VALUES; i++)
            if (reqs[i] != MPI_REQUEST_NULL &&
                (r = req_get(reqs[i])) != NULL && !r->active &&
                !req_inactive(r))
                v[++k] = i;
        v[0] = k;
        if ((rc = dec_publish(dn, v, k + 1)) != MPI_SUCCESS) {
            free(v);
            return mpii_err(MPI_COMM_WORLD, rc, fn);
        }
        for (i = 0; i < k; i++) {
            r = req_get(reqs[v[i + 1]]);
            indices[i] = v[i + 1];
            if (r->err != MPI_SUCCESS)
                err = 1;
            req_finish_many(&reqs[v[i + 1]], r,
                            sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                       : &sts[i]);
        }
        free(v);
        *outcount = k;
        return err ? mpii_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fn)
                   : MPI_SUCCESS;
    }
    for (i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL && (r = req_get(reqs[i])) != NULL &&
            !r->active && !req_inactive(r)) {
            indices[k] = i;
            if (r->err != MPI_SUCCESS)
                err = 1;
            req_finish_many(&reqs[i], r,
                            sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                       : &sts[k]);
            k++;
        }
    *outcount = k;
    return err ? mpii_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fn)
               : MPI_SUCCESS;
}

#pragma weak MPI_Test = PMPI_Test
int
PMPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    MPII_ENTER;
    struct mpii_req *r;
    int rc;

    MPII_CHECK_INIT("MPI_Test");
    if (req == NULL || flag == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test");
    if (*req == MPI_REQUEST_NULL) {
        *flag = 1;
        status_empty(st);
        return MPI_SUCCESS;
    }
    if ((r = req_get(*req)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Test");
    if (r->active && (rc = mpii_progress(0)) != MPI_SUCCESS)
        req_complete(r, rc);
    *flag = !r->active;
    if (!*flag) {
        req_poll_missed();
        return MPI_SUCCESS;
    }
    rc = req_finish(req, r, st);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, "MPI_Test");
}

int
mpii_test_quiet(MPI_Request *req, int *flag)
{
    struct mpii_req *r;

    *flag = 1;
    if (*req == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    if ((r = req_get(*req)) == NULL)
        return MPI_ERR_REQUEST;
    if ((*flag = !r->active) == 0)
        return MPI_SUCCESS;
    return req_finish(req, r, MPI_STATUS_IGNORE);
}

/* Test without freeing: the status of a complete request, which stays. */
#pragma weak MPI_Request_get_status = PMPI_Request_get_status
int
PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Request_get_status";
    struct mpii_req *r;

    MPII_CHECK_INIT(fn);
    if (flag == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if (req == MPI_REQUEST_NULL) {
        *flag = 1;
        status_empty(st);
        return MPI_SUCCESS;
    }
    if ((r = req_get(req)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn);
    if (r->active)
        (void)mpii_progress(0);
    *flag = !r->active;
    if (!*flag) {
        req_poll_missed();
        return MPI_SUCCESS;
    }
    if (req_inactive(r))
        status_empty(st);
    else if (r->kind == REQ_GREQ) {
        int rc = greq_query(r, st);

        return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
    } else
        status_out(r, st);
    return MPI_SUCCESS;
}

#pragma weak MPI_Testall = PMPI_Testall
int
PMPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    MPII_ENTER;
    struct mpii_req *r;
    int i, rc;

    MPII_CHECK_INIT("MPI_Testall");
    if ((rc = check_reqs(n, reqs)) != MPI_SUCCESS || flag == NULL)
        return mpii_err(MPI_COMM_WORLD, rc ? rc : MPI_ERR_ARG, "MPI_Testall");
    (void)mpii_progress(0);
    *flag = 1;
    for (i = 0; i < n && *flag; i++)
        if (reqs[i] != MPI_REQUEST_NULL && (r = req_get(reqs[i])) != NULL &&
            r->active)
            *flag = 0;
    if (!*flag) {
        req_poll_missed();
        return MPI_SUCCESS;
    }
    return PMPI_Waitall(n, reqs, sts);
}

#pragma weak MPI_Testany = PMPI_Testany
int
PMPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    MPII_ENTER;
    struct any_arg a = {n, reqs, MPI_UNDEFINED};
    uint32_t dn;
    int32_t v[2];
    int rc, nv;

    MPII_CHECK_INIT("MPI_Testany");
    if ((rc = check_reqs(n, reqs)) != MPI_SUCCESS || index == NULL ||
        flag == NULL)
        return mpii_err(MPI_COMM_WORLD, rc ? rc : MPI_ERR_ARG, "MPI_Testany");
    dn = dec_next();
    if ((rc = follow(dn, v, 2, &nv)) < 0)
        return mpii_err(MPI_COMM_WORLD, -rc, "MPI_Testany");
    if (rc == 1) {
        /* The master's outcome: flag, index. */
        *flag = nv == 2 && v[0];
        *index = *flag ? v[1] : MPI_UNDEFINED;
        if (!*flag || v[1] == MPI_UNDEFINED) {
            if (!*flag)
                req_poll_missed();
            status_empty(st);
            return MPI_SUCCESS;
        }
        rc = follow_wait(n, reqs, v[1], st);
        return rc == MPI_SUCCESS ? rc
                                 : mpii_err(MPI_COMM_WORLD, rc, "MPI_Testany");
    }
    (void)mpii_progress(0);
    *flag = any_done(&a);
    *index = a.index;
    v[0] = *flag;
    v[1] = *flag ? a.index : MPI_UNDEFINED;
    if (dn != 0 && (rc = dec_publish(dn, v, 2)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, "MPI_Testany");
    if (!*flag) {
        *index = MPI_UNDEFINED;
        req_poll_missed();
        return MPI_SUCCESS;
    }
    if (a.index == MPI_UNDEFINED) {
        status_empty(st);
        return MPI_SUCCESS;
    }
    rc = req_finish(&reqs[a.index], req_get(reqs[a.index]), st);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, "MPI_Testany");
}

#pragma weak MPI_Testsome = PMPI_Testsome
int
PMPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
              MPI_Status sts[])
{
    MPII_ENTER;
    int rc;

    MPII_CHECK_INIT("MPI_Testsome");
    if ((rc = check_reqs(n, reqs)) != MPI_SUCCESS || outcount == NULL)
        return mpii_err(MPI_COMM_WORLD, rc ? rc : MPI_ERR_ARG,
                        "MPI_Testsome");
    rc = some(n, reqs, outcount, indices, sts, 0, "MPI_Testsome");
    if (rc == MPI_SUCCESS && *outcount == 0)
        req_poll_missed();
    return rc;
}

struct probe_arg {
    uint32_t ctx;
    int source, tag;
    MPI_Status *st;
};

static int
probe_found(void *arg)
{
    struct probe_arg *p = arg;

    return match_probe(p->ctx, p->source, p->tag, p->st);
}

/* Probe (wait) or Iprobe.  With replicas the master's outcome (flag,
 * source, tag) is everyone's: a backup then waits for that message.
 * A matched probe (claim not NULL) also takes the message out of the
 * queue, before the decision is published (publishing makes progress,
 * and a receive could take it meanwhile): the oldest message from that
 * source with that tag, the same one in every replica. */
int
mpii_probe_agreed(const struct mpii_comm *c, int source, int tag, int wait,
                  int *flag, MPI_Status *st, struct umsg **claim)
{
    struct probe_arg p;
    MPI_Status mine;
    uint32_t dn = dec_next();
    int32_t v[3];
    int rc, nv, found;

    p.ctx = c->ctx;
    p.source = source;
    p.tag = tag;
    p.st = &mine;
    if ((rc = follow(dn, v, 3, &nv)) < 0)
        return -rc;
    if (rc == 1) {
        if (nv != 3)
            return MPI_ERR_INTERN;
        if (flag != NULL)
            *flag = v[0];
        if (!v[0])
            return MPI_SUCCESS;
        p.source = v[1];
        p.tag = v[2];
        if ((rc = req_wait_until(probe_found, &p)) != MPI_SUCCESS)
            return rc;
        if (claim != NULL &&
            (*claim = match_claim(c->ctx, p.source, p.tag)) == NULL)
            return MPI_ERR_INTERN;
    } else {
        if (wait)
            rc = req_wait_until(probe_found, &p);
        else
            rc = mpii_progress(0);
        if (rc != MPI_SUCCESS)
            return rc;
        found = wait ? 1 : match_probe(c->ctx, source, tag, &mine);
        if (flag != NULL)
            *flag = found;
        v[0] = found;
        v[1] = found ? mine.MPI_SOURCE : 0;
        v[2] = found ? mine.MPI_TAG : 0;
        if (found && claim != NULL &&
            (*claim = match_claim(c->ctx, v[1], v[2])) == NULL)
            return MPI_ERR_INTERN;
        if (dn != 0 && (rc = dec_publish(dn, v, 3)) != MPI_SUCCESS)
            return rc;
        if (!found)
            return MPI_SUCCESS;
    }
    mpii_status_one(st, &mine);
    return MPI_SUCCESS;
}

int
mpii_probe_check(int source, int tag, const struct mpii_comm *c)
{
    if (source != MPI_ANY_SOURCE && source != MPI_PROC_NULL &&
        (source < 0 || source >= c->size))
        return MPI_ERR_RANK;
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > MPI_TAG_UB_VALUE))
        return MPI_ERR_TAG;
    return MPI_SUCCESS;
}

#pragma weak MPI_Probe = PMPI_Probe
int
PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *st)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int rc;

    COMM_OR_ERR(c, comm, "MPI_Probe");
    if ((rc = mpii_probe_check(source, tag, c)) != MPI_SUCCESS)
        return mpii_err(comm, rc, "MPI_Probe");
    if (source == MPI_PROC_NULL) {
        status_empty(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_SOURCE = MPI_PROC_NULL;
        return MPI_SUCCESS;
    }
    rc = mpii_probe_agreed(c, source, tag, 1, NULL, st, NULL);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Probe");
}

#pragma weak MPI_Iprobe = PMPI_Iprobe
int
PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int rc;

    COMM_OR_ERR(c, comm, "MPI_Iprobe");
    if ((rc = mpii_probe_check(source, tag, c)) != MPI_SUCCESS || flag == NULL)
        return mpii_err(comm, rc ? rc : MPI_ERR_ARG, "MPI_Iprobe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        status_empty(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_SOURCE = MPI_PROC_NULL;
        return MPI_SUCCESS;
    }
    rc = mpii_probe_agreed(c, source, tag, 0, flag, st, NULL);
    if (rc == MPI_SUCCESS && !*flag)
        req_poll_missed();
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Iprobe");
}

#pragma weak MPI_Cancel = PMPI_Cancel
int
PMPI_Cancel(MPI_Request *req)
{
    MPII_ENTER;
    struct mpii_req *r;
    int rc = MPI_SUCCESS;

    MPII_CHECK_INIT("MPI_Cancel");
    if (req == NULL || (r = req_get(*req)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel");
    if (r->kind == REQ_PERSIST || r->kind == REQ_GREQ)
        rc = persist_cancel(r);
    else if (r->kind == REQ_SEND)
        rc = cancel_send(*req, r);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, "MPI_Cancel");
    /* Receives not yet matched can be cancelled. */
    if (r->kind == REQ_RECV && r->active && match_unpost(r)) {
        r->status.p2p_cancelled = 1;
        r->status.MPI_SOURCE = MPI_ANY_SOURCE;
        r->status.MPI_TAG = MPI_ANY_TAG;
        req_complete(r, MPI_SUCCESS);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
int
PMPI_Test_cancelled(const MPI_Status *st, int *flag)
{
    MPII_ENTER;
    if (st == NULL || flag == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled");
    *flag = st->p2p_cancelled;
    return MPI_SUCCESS;
}

#pragma weak MPI_Request_free = PMPI_Request_free
int
PMPI_Request_free(MPI_Request *req)
{
    MPII_ENTER;
    struct mpii_req *r;

    MPII_CHECK_INIT("MPI_Request_free");
    if (req == NULL || (r = req_get(*req)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free");
    if (r->active)
        r->freed = 1; /* goes when it completes */
    else
        req_release(r);
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_count = PMPI_Get_count
int
PMPI_Get_count(const MPI_Status *st, MPI_Datatype dt, int *count)
{
    MPII_ENTER;
    const struct mpii_type *t;
    size_t size;

    if (st == NULL || count == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_count");
    if ((t = mpii_type_get(dt)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Get_count");
    size = mpii_type_size(t);
    if (size == 0)
        *count = st->p2p_count == 0 ? 0 : MPI_UNDEFINED;
    else if ((size_t)st->p2p_count % size != 0 ||
             (size_t)st->p2p_count / size > 0x7fffffff)
        *count = MPI_UNDEFINED;
    else
        *count = (int)((size_t)st->p2p_count / size);
    return MPI_SUCCESS;
}
