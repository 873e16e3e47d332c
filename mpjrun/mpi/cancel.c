/*
 * Cancelling a send (MPI_Cancel of a send request, MPI 3.1 3.8.4): a
 * send is cancelled when its message is still unexpected at its
 * receiver, neither matched by a receive nor claimed by a matched probe.
 *
 * The sender asks (FR_CANCEL), naming the message by the sequence
 * number of its first frame on the connection it took (the EAGER frame,
 * or the RTS of a rendezvous) and its context; the receiver takes it out
 * of its unexpected queue if it is there, forgets a single copy
 * announced for it, and answers (FR_CANCELLED, WF_CANCEL_DONE when it is
 * gone).  A connection keeps its frames in order both ways, so a receive
 * that matched the message before the question came has had its eager
 * bytes, or sent its clear-to-send, before the answer "no" leaves.
 *
 * The send's request completes with the answer: cancelled, or sent as
 * it would have been.  An eager send is complete as it starts; asking
 * reopens it until the answer comes, so that MPI_Wait after MPI_Cancel
 * returns either way and says which (the standard: either the
 * cancellation succeeds or the communication does, not both).  A
 * rendezvous that is not taken back goes on and completes as usual.
 * A send to ourselves is looked up at once.  A buffered send's request
 * asks for the message of the library's copy, and a cancelled one gives
 * its bytes of the attached buffer back.
 *
 * With replicas nothing is asked: the replicas of a receiver would have
 * to agree on whether one of them matched the message, and the sender's
 * replicas on the answer, which no part of the replication protocol
 * does.  There a send already complete (an eager one) stays sent, which
 * the standard allows, and MPI_Cancel of one still in flight (a
 * rendezvous, a synchronous send) is MPI_ERR_UNSUPPORTED_OPERATION, so
 * that a program learns it at once rather than waiting on a send that
 * no receive takes.
 */
#include <string.h>

#include "conn.h"
#include "rep.h"

void
cancel_note(struct mpii_req *r, struct conn *c, const struct wire_hdr *h)
{
    r->tx.conn = c;
    r->tx.seq = h->seq;
    r->tx.ctx = h->ctx;
    r->tx.rts = h->type == FR_RTS;
    r->tx.known = 1;
}

void
cancel_inherit(struct mpii_req *r, const struct mpii_req *from, MPI_Request h)
{
    if (from != NULL && from->index >= 0)
        r->tx = from->tx;
    else if (!req_done_sent(h, &r->tx))
        memset(&r->tx, 0, sizeof r->tx);
}

/* The answer "gone": r completes cancelled, and the buffered copy
 * whose message it was (its bytes of the attached buffer go back). */
static void
cancelled(struct mpii_req *r)
{
    struct mpii_req *in;

    if (r->tx.inner != 0 && (in = req_by_id(r->tx.inner)) != NULL &&
        in->kind == REQ_SEND) {
        in->status.p2p_cancelled = 1;
        req_complete(in, MPI_SUCCESS);
    }
    r->status.p2p_cancelled = 1;
    if (r->active)
        req_complete(r, MPI_SUCCESS);
}

int
cancel_send(MPI_Request h, struct mpii_req *r)
{
    struct wire_hdr q;
    uint32_t sid;

    /* Replicas: a send complete is sent (the standard allows that
     * answer); one still waiting for its receive cannot be asked back. */
    if (rep_active())
        return r->active ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_SUCCESS;
    /* A send complete as it started: a request of its own from now. */
    if (r->index < 0 && (r = req_done_reopen(h)) == NULL)
        return MPI_SUCCESS; /* forgotten: it stays sent */
    if (!r->tx.known || r->tx.asked != 0 || r->status.p2p_cancelled ||
        (!r->active && r->err != MPI_SUCCESS))
        return MPI_SUCCESS;
    if (r->tx.conn == NULL) {
        /* To ourselves: the unexpected queue is here. */
        r->tx.asked = 2;
        if (match_cancel(NULL, r->tx.ctx, r->tx.seq, &sid))
            cancelled(r);
        return MPI_SUCCESS;
    }
    memset(&q, 0, sizeof q);
    q.type = FR_CANCEL;
    q.ctx = r->tx.ctx;
    q.total = r->tx.seq;
    q.sid = req_id(r);
    if (conn_send(r->tx.conn, &q, NULL, 0, 0, NULL) != MPI_SUCCESS)
        return MPI_SUCCESS; /* the connection is gone: so is the job */
    r->tx.asked = 1;
    if (!r->active) {
        r->active = 1;
        r->tx.reopened = 1;
    }
    return MPI_SUCCESS;
}

void
cancel_asked(struct conn *c, const struct wire_hdr *h)
{
    struct wire_hdr a;
    uint64_t at, len;
    uint32_t sid = 0;
    int gone;

    gone = match_cancel(c, h->ctx, h->total, &sid);
    /* shm: the single copy announced for it will not be read. */
    if (gone && sid != 0 && c->on_shm)
        (void)shm_take(c->shm, sid, &at, &len);
    memset(&a, 0, sizeof a);
    a.type = FR_CANCELLED;
    a.flags = gone ? WF_CANCEL_DONE : 0;
    a.sid = h->sid;
    (void)conn_send(c, &a, NULL, 0, 0, NULL);
}

void
cancel_answered(struct conn *c, const struct wire_hdr *h)
{
    struct mpii_req *r = req_by_id(h->sid);
    int gone = (h->flags & WF_CANCEL_DONE) != 0;

    if (r == NULL || r->tx.asked != 1 || r->tx.conn != c) {
        /* "Not taken back" for a send that completed meanwhile is
         * expected; "gone" always has its request waiting. */
        if (gone)
            conn_protocol_error(c, "cancel answer for no such send");
        return;
    }
    r->tx.asked = 2;
    if (gone) {
        if (r->tx.rts && c->rts_out > 0)
            c->rts_out--; /* its payload will not be asked for */
        cancelled(r);
    } else if (r->tx.reopened)
        req_complete(r, MPI_SUCCESS); /* sent, as it was */
}
