/*
 * shm: single copies between two processes on one host (shm.h has the
 * copy itself and the reasons it is allowed).  The sender's RTS says
 * where the message lies (conn_cma_announce); the receiver, once it has
 * matched it, reads it straight into the receive buffer instead of
 * sending a clear-to-send, a whole one in one call with the others
 * matched in the same pass (conn_cma_flush), a large one split so that
 * the sender writes the second half while the receiver reads the first
 * (conn_cma_push, conn_cma_written).  A refusal by the kernel sends the
 * bytes through the rings instead; a failure is the other end gone.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "conn.h"

size_t
conn_eager_max(const struct conn *c)
{
    size_t e, m;

    /* shm: a pair that copies once has a threshold of its own (no
     * rendezvous below the single copy's own minimum: those would go
     * through the rings). */
    if (!c->on_shm || !shm_cma_peer_reads(c->shm))
        return mpii_eager_cap;
    e = shm_eager_max(MPII_EAGER_MAX);
    m = shm_cma_min();
    if (m > 0 && m - 1 > e)
        e = m - 1 < MPII_EAGER_MAX ? m - 1 : MPII_EAGER_MAX;
    return e < mpii_eager_cap ? e : mpii_eager_cap;
}

/* shm: may the rendezvous h announces go by a single copy?  Then *at is
 * where its bytes lie here (they stay until the receiver says it is
 * done: the send completes only then). */
int
conn_cma_announce(struct conn *c, struct wire_hdr *h, uint64_t *at)
{
    struct mpii_req *r;

    if ((h->flags & WF_RTS_CMA) != 0 || h->total < shm_cma_min() ||
        !shm_cma_peer_reads(c->shm) || (r = req_by_id(h->sid)) == NULL ||
        r->kind != REQ_SEND || !r->active || r->data == NULL ||
        r->len != h->total) {
        tp.nring_rndv++;
        return 0;
    }
    *at = (uint64_t)(uintptr_t)r->data;
    h->flags |= WF_RTS_CMA;
    tp.ncma_sent++;
    return 1;
}

/* shm: the reads queued by conn_cma_copy, in one call; then each
 * receive completes and its sender is told.  A refusal sends plain
 * clear-to-sends instead (the bytes come through the ring).  -1: the
 * sender is gone (connection killed, the receives failed). */
int
conn_cma_flush(struct conn *c)
{
    struct wire_hdr h;
    struct mpii_req *r;
    int i, n = c->ncmaq, rc;

    if (n == 0)
        return 0;
    rc = shm_cma_flush(c->shm);
    c->ncmaq = 0;
    if (rc == -1 && errno != EPERM && errno != EACCES && errno != ENOSYS) {
        mpii_log("rank %d: single copy from process %d failed (%s): taken "
                 "as gone",
                 tp.world, c->world, strerror(errno));
        for (i = 0; i < n; i++)
            req_complete(c->cmaq[i].r, MPI_ERR_OTHER);
        conn_kill(c);
        return -1;
    }
    if (rc == -1) {
        mpii_log("rank %d: single copy from process %d refused (%s): "
                 "its messages go through the rings",
                 tp.world, c->world, strerror(errno));
        shm_cma_refused(c->shm);
        tp.nring_rndv += (unsigned)n;
    }
    for (i = 0; i < n; i++) {
        r = c->cmaq[i].r;
        memset(&h, 0, sizeof h);
        h.type = FR_CTS;
        h.sid = c->cmaq[i].sid;
        h.rid = req_id(r);
        if (rc == 0) {
            tp.ncma_read++;
            h.flags = WF_CTS_DONE;
            r->got = r->total;
            req_complete(r, MPI_SUCCESS); /* its bytes are in */
        }
        if (c->state == CS_READY)
            (void)conn_send(c, &h, NULL, 0, 0, NULL);
        else if (rc != 0)
            req_complete(r, MPI_ERR_OTHER);
    }
    return 0;
}

/* shm: ask the sender of the rendezvous h names to write count bytes of
 * it, from offset off, at addr in our memory (0: send them through the
 * ring as rendezvous data).  -1: connection dead. */
static int
conn_cma_ask(struct conn *c, const struct wire_hdr *h, uint64_t off,
             uint64_t count, uint64_t addr)
{
    struct wire_hdr sh = *h;
    uint64_t split[3] = {off, count, addr};

    sh.flags |= WF_CTS_SPLIT;
    return conn_send(c, &sh, split, sizeof split, 1, NULL) == MPI_SUCCESS
               ? 0
               : -1;
}

/* shm: the clear-to-send h is about to go for a rendezvous; if it was
 * announced for a single copy, copy it now, straight from the sender
 * into the receive.  A large one (R = 1) is split: a clear-to-send first
 * asks the sender to write the second half into the receive buffer
 * itself while we read the first, and the receive completes when its
 * notice comes (conn_cma_written).  0: send h (a plain clear-to-send:
 * not announced, or refused; or, R = 1, h now says our copy is done); 1:
 * done, nothing to send (replicas: the acknowledgement tells the
 * sender); -1: the sender is gone (connection killed). */
int
conn_cma_copy(struct conn *c, struct wire_hdr *h)
{
    struct mpii_req *r;
    uint64_t at, len;
    size_t n, k;
    int refuse;

    if (!shm_take(c->shm, h->sid, &at, &len))
        return 0;
    r = req_by_id(h->rid);
    if (r == NULL || r->kind != REQ_RECV || !r->active || len != r->total) {
        conn_protocol_error(c, "single-copy announcement unlike its "
                               "receive");
        return -1;
    }
    n = len < r->cap ? (size_t)len : r->cap; /* the rest is dropped */
    k = n;
    if (tp.nrep == 1 && shm_split_min() > 0 && n >= shm_split_min() &&
        shm_cma_peer_reads(c->shm)) {
        k = n / 2;
        /* Counted in: what is dropped; ours once read; the sender's
         * half when its notice comes. */
        r->got = (size_t)(len - n);
        if (conn_cma_ask(c, h, k, n - k, (uint64_t)(uintptr_t)(r->rbuf + k)) ==
            -1)
            return -1;
    }
    mpii_test_point("cma");
    if (mpii_test_hit("cmasender"))
        shm_test_kill_peer(c->shm);
    if ((refuse = mpii_test_hit("cmarefuse")) != 0)
        errno = EPERM; /* tests: as if the kernel refused */
    /* Whole, without replicas: with the others matched in this pass,
     * in one call (conn_cma_flush, which sends the done). */
    if (k == n && n > 0 && tp.nrep == 1 && !refuse) {
        if (c->ncmaq == SHM_CMA_BATCH && conn_cma_flush(c) == -1)
            return -1;
        if (shm_cma_queue(c->shm, r->rbuf, at, n) == 0) {
            c->cmaq[c->ncmaq].r = r;
            c->cmaq[c->ncmaq++].sid = h->sid;
            return 1;
        }
    }
    if (k > 0 && (refuse || shm_cma_read(c->shm, r->rbuf, at, k) == -1)) {
        if (errno == EPERM || errno == EACCES || errno == ENOSYS) {
            mpii_log("rank %d: single copy from process %d refused (%s): "
                     "its messages go through the rings",
                     tp.world, c->world, strerror(errno));
            shm_cma_refused(c->shm);
            tp.nring_rndv++;
            if (k == n)
                return 0;
            /* Split: our half through the ring, then the sender may
             * complete (it copies both halves before it reads on). */
            if (conn_cma_ask(c, h, 0, k, 0) == -1)
                return -1;
            h->flags |= WF_CTS_DONE;
            return 0;
        }
        mpii_log("rank %d: single copy from process %d failed (%s): taken "
                 "as gone",
                 tp.world, c->world, strerror(errno));
        conn_kill(c);
        return -1;
    }
    tp.ncma_read++;
    if (k < n) {
        r->got += k;
        if (r->got >= r->total) /* the sender's half came first */
            req_complete(r, MPI_SUCCESS);
        h->flags |= WF_CTS_DONE;
        return 0;
    }
    r->got = r->total;
    req_complete(r, MPI_SUCCESS);
    if (tp.nrep > 1)
        return 1;
    h->flags |= WF_CTS_DONE;
    return 0;
}

/* shm: the receiver asks us (split clear-to-send, payload: offset,
 * count, address) to write part of send r into it ourselves, or (address
 * 0, or our write refused) to send it through the ring; copies are made
 * before we return, so the receiver's done, which comes after in the
 * ring, completes r. */
void
conn_cma_push(struct conn *c, const struct wire_hdr *h, const uint8_t *payload,
              struct mpii_req *r)
{
    uint64_t split[3];
    struct wire_hdr d;

    memcpy(split, payload, sizeof split);
    if (split[0] > r->len || split[1] > r->len - split[0]) {
        conn_protocol_error(c, "split clear-to-send beyond its send");
        return;
    }
    memset(&d, 0, sizeof d);
    d.type = FR_DATA;
    d.rid = h->rid;
    if (split[2] != 0 && split[1] > 0) {
        if (mpii_test_hit("cmawrefuse"))
            errno = EPERM; /* tests: as if the kernel refused */
        else if (shm_cma_write(c->shm, split[2], r->data + split[0],
                               (size_t)split[1]) == 0) {
            d.flags = WF_DATA_WRITTEN;
            d.total = split[1];
            (void)conn_send(c, &d, NULL, 0, 0, NULL);
            return;
        }
        if (errno != EPERM && errno != EACCES && errno != ENOSYS) {
            mpii_log("rank %d: single copy into process %d failed (%s): "
                     "taken as gone",
                     tp.world, c->world, strerror(errno));
            conn_kill(c);
            return;
        }
        mpii_log("rank %d: single copy into process %d refused (%s): "
                 "through the ring",
                 tp.world, c->world, strerror(errno));
    }
    /* Copied (copy 1): the send may complete before it is written. */
    d.total = split[0];
    (void)conn_send(c, &d, r->data + split[0], (size_t)split[1], 1, NULL);
}

/* shm: the sender wrote its half of a split single copy (DATA flagged
 * written, total bytes) into receive rid. */
void
conn_cma_written(struct conn *c, const struct wire_hdr *h)
{
    struct mpii_req *r = req_by_id(h->rid);

    if (!c->on_shm || tp.nrep > 1 || r == NULL || r->kind != REQ_RECV ||
        !r->active || r->conn != c || h->total > r->total - r->got) {
        conn_protocol_error(c, "written data for no such receive");
        return;
    }
    r->got += (size_t)h->total;
    if (r->got >= r->total)
        req_complete(r, MPI_SUCCESS);
}

/* shm: keep an announcement for a single copy (RTS, WF_RTS_CMA) until the
 * receive that takes it sends its clear-to-send.  One we cannot (no
 * longer) read from, or cannot keep, is not kept: that clear-to-send is
 * then a plain one and the sender writes the bytes into the ring. */
int
conn_cma_note(struct conn *c, const struct wire_hdr *h, const uint8_t *payload)
{
    uint64_t at;

    if (!c->on_shm) {
        conn_protocol_error(c, "single-copy announcement off shared memory");
        return -1;
    }
    memcpy(&at, payload, sizeof at);
    if (shm_cma_reads(c->shm))
        (void)shm_note(c->shm, h->sid, at, h->total);
    return 0;
}
