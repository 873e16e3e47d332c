/*
 * bsend.c: buffered sends.  MPI_Bsend completes locally whatever the
 * size: the data is copied, and the send (eager, or a rendezvous that
 * the progress engine finishes during later calls) goes on in the
 * background as a freed request.  The attached buffer bounds how much
 * may be outstanding (each message counts its packed size plus
 * MPI_BSEND_OVERHEAD); the copy itself is the request's own memory, so
 * the user's buffer is only accounted, never written.
 * MPI_Buffer_detach waits until every buffered message has left.
 */
#include "core.h"

static void *attached;
static int attached_size;
static size_t used; /* bytes of the attached buffer held by messages */

void
bsend_done(size_t bytes)
{
    used = bytes > used ? 0 : used - bytes;
}

int
mpii_bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
           struct mpii_comm *c, struct mpii_sent *tx)
{
    const struct mpii_type *t;
    struct mpii_req *r;
    MPI_Request h;
    size_t need;
    int rc;

    if (count < 0)
        return MPI_ERR_COUNT;
    if ((t = mpii_type_get(dt)) == NULL)
        return MPI_ERR_TYPE;
    if (__builtin_mul_overflow((size_t)count, mpii_type_size(t), &need) ||
        __builtin_add_overflow(need, (size_t)MPI_BSEND_OVERHEAD, &need))
        return MPI_ERR_COUNT;
    if (dest != MPI_PROC_NULL &&
        (attached == NULL || need > (size_t)attached_size - used ||
         used > (size_t)attached_size))
        return MPI_ERR_BUFFER;
    rc = mpii_isend(buf, count, dt, dest, tag, c, c->ctx, MPII_SEND_BUFFERED,
                    &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((r = req_get(h)) == NULL)
        return MPI_SUCCESS;
    if (tx != NULL) {
        *tx = r->tx;
        tx->inner = r->active ? req_id(r) : 0;
    }
    if (!r->active) {
        rc = r->err;
        req_release(r);
        return rc;
    }
    /* In flight: it goes when complete, and gives its bytes back then. */
    r->freed = 1;
    r->bsend = need;
    used += need;
    return MPI_SUCCESS;
}

#pragma weak MPI_Bsend = PMPI_Bsend
int
PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
           MPI_Comm comm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Bsend";
    struct mpii_comm *c;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    rc = mpii_bsend(buf, count, dt, dest, tag, c, NULL);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

/* Ibsend: the copy is made now, so the request is complete at once. */
#pragma weak MPI_Ibsend = PMPI_Ibsend
int
PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
            MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Ibsend";
    struct mpii_comm *c;
    struct mpii_sent tx;
    struct mpii_req *r;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, fn);
    if ((rc = mpii_bsend(buf, count, dt, dest, tag, c, &tx)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((r = req_new(REQ_SEND, req)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    r->tx = tx; /* MPI_Cancel asks for the copy's message */
    req_bind(r, c, NULL);
    req_complete(r, MPI_SUCCESS);
    return MPI_SUCCESS;
}

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int
PMPI_Buffer_attach(void *buffer, int size)
{
    MPII_ENTER;
    if (size < 0 || (buffer == NULL && size > 0))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_attach");
    if (attached != NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach");
    attached = buffer;
    attached_size = size;
    return MPI_SUCCESS;
}

static int
drained(void *arg)
{
    (void)arg;
    return used == 0;
}

#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int
PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPII_ENTER;
    int rc = MPI_SUCCESS;

    if (buffer_addr == NULL || size == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach");
    if (used > 0 && mpii_initialized())
        rc = req_wait_until(drained, NULL);
    *(void **)buffer_addr = attached;
    *size = attached_size;
    attached = NULL;
    attached_size = 0;
    return rc == MPI_SUCCESS
               ? rc
               : mpii_err(MPI_COMM_WORLD, rc, "MPI_Buffer_detach");
}
