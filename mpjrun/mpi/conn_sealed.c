/*
 * The sealed path of a connection (jobs with encryption on, the
 * default): frames sealed with the direction's AEAD (wireframe.c's
 * layout, aead.c's cipher), a borrowed payload sealed late into the
 * connection's ring of slots (sealring.c) when the socket reaches it or
 * while the socket is full, and frames opened as they are read, a
 * rendezvous payload straight into the receiver's memory.
 */
#include <stdlib.h>
#include <string.h>

#include "aead.h"
#include "conn.h"

static void
conn_seal_failed(struct conn *c)
{
    mpii_log("rank %d: %s failed sealing a frame for process %d", tp.world,
             aead_name(WF_CIPHER), c->world);
    conn_kill(c);
}

/* Seal a late item into a slot of the connection's ring: the payload is
 * read once from the caller's buffer and the sealed bytes the socket copy
 * reads next are still in cache.  1 when every slot is taken; -1 when
 * sealing failed (the connection is killed). */
int
conn_seal_late(struct conn *c, struct txitem *t)
{
    uint8_t *slot;

    if (sr_full(&c->ring))
        return 1;
    if ((slot = sr_take(&c->ring)) == NULL) {
        mpii_log("rank %d: out of memory sealing for process %d", tp.world,
                 c->world);
        conn_kill(c);
        return -1;
    }
    t->hlen = wf_seal(slot, &t->lh, t->src, t->lctr, c->atx);
    t->head = slot;
    if (t->hlen == 0) {
        conn_seal_failed(c);
        return -1;
    }
    if (mpii_test_corrupt(t->lh.type == FR_DATA))
        t->head[t->hlen - 1] ^= 0x01; /* the tag's last bit */
    return 0;
}

/* The socket is full: seal the next late frames into the free slots of
 * the ring meanwhile, so that when it drains they only need copying. */
void
conn_seal_ahead(struct conn *c)
{
    struct txitem *t;

    for (t = c->txh; t != NULL && c->state == CS_READY; t = t->next)
        if (t->lazy && t->head == NULL && conn_seal_late(c, t) != 0)
            return;
}

/* One sealed frame: the header in clear as associated data, the payload
 * sealed straight from the caller's buffer into the frame.  A borrowed
 * payload (copy 0: the caller keeps it until done) is sealed late, by
 * conn_flush, into the connection's ring; its counter is taken now so frames
 * keep their queue order. */
static int
seal_frame(struct conn *c, const struct wire_hdr *h, const void *data,
           size_t len, int copy, struct mpii_req *done)
{
    struct txitem *t;

    if (!copy && data != NULL && len > 0) {
        if ((t = calloc(1, sizeof *t)) == NULL)
            return MPI_ERR_NO_MEM;
        t->lazy = 1;
        t->src = data;
        t->lh = *h;
        t->lctr = c->ctr_tx++;
        t->done = done;
        return conn_queue(c, t);
    }
    if ((t = calloc(1, sizeof *t)) == NULL ||
        (t->head = malloc(WF_SEALED_LEN(len))) == NULL) {
        free(t);
        return MPI_ERR_NO_MEM;
    }
    t->hlen = wf_seal(t->head, h, data, c->ctr_tx++, c->atx);
    if (t->hlen == 0) {
        free(t->head);
        free(t);
        conn_seal_failed(c);
        return MPI_ERR_OTHER;
    }
    if (mpii_test_corrupt(h->type == FR_DATA))
        t->head[t->hlen - 1] ^= 0x01; /* the tag's last bit */
    t->done = done;
    return conn_queue(c, t);
}

/* A frame on a sealed connection: a big payload goes in several frames,
 * each at its offset, each of at most WF_SEAL_SEND bytes; done completes
 * with the last. */
int
conn_send_sealed(struct conn *c, struct wire_hdr *h, const void *data,
                 size_t len, int copy, struct mpii_req *done)
{
    size_t off = 0, chunk;
    int rc;

    do {
        chunk = len - off > WF_SEAL_SEND ? WF_SEAL_SEND : len - off;
        h->seq = c->seq_tx++;
        h->len = chunk;
        if (h->type == FR_DATA)
            h->total = off;
        /* RTS, CTS and FIN frames have no payload (data NULL). */
        rc = seal_frame(c, h,
                        data != NULL ? (const uint8_t *)data + off : NULL,
                        chunk, copy, off + chunk == len ? done : NULL);
        if (rc != MPI_SUCCESS)
            return rc;
        off += chunk;
    } while (off < len);
    return MPI_SUCCESS;
}

/* A sealed rendezvous payload: opened straight into the receiver's
 * memory when it fits (a payload that does not verify is zeroed there
 * and the connection ends). */
static void
conn_sealed_data(struct conn *c, const struct wire_hdr *h,
                 const uint8_t *frame)
{
    struct mpii_req *r = req_by_id(h->rid);
    size_t off = (size_t)h->total;
    const char *why;
    int rc;

    if ((why = wf_frame_check(h, c->seq_rx++, tp.nrep)) != NULL) {
        conn_protocol_error(c, why);
        return;
    }
    if (r == NULL || r->kind != REQ_RECV || r->conn != c || off > r->total ||
        h->len > r->total - off) {
        conn_protocol_error(c, "data for no such receive, or beyond it");
        return;
    }
    mpii_test_point("open");
    if (off <= r->cap && h->len <= r->cap - off)
        rc = wf_open(r->rbuf + off, frame, h->len, c->ctr_rx++, c->arx);
    else {
        /* Truncated receive: what fits is kept, the rest dropped. */
        rc = wf_open(c->plain, frame, h->len, c->ctr_rx++, c->arx);
        if (rc == 0 && off < r->cap)
            memcpy(r->rbuf + off, c->plain, r->cap - off);
    }
    if (rc == -1) {
        conn_protocol_error(c, "sealed payload does not verify");
        return;
    }
    r->got += h->len;
    if (r->got >= r->total)
        req_complete(r, MPI_SUCCESS);
}

/* Parse whole sealed frames. */
void
conn_parse_sealed(struct conn *c)
{
    struct wire_hdr h;
    const uint8_t *frame;
    const char *why = NULL;
    size_t used;
    enum wf_next next;

    while (c->state == CS_READY) {
        next = wf_sealed_next(c->rbuf + c->rpos, c->rlen - c->rpos, &h, &used,
                              &why);
        if (next == WF_BAD)
            conn_protocol_error(c, why);
        if (next != WF_FRAME)
            return;
        frame = c->rbuf + c->rpos + 4;
        c->rpos += used;
        if (h.type == FR_DATA) {
            conn_sealed_data(c, &h, frame);
            continue;
        }
        if (wf_open(c->plain, frame, h.len, c->ctr_rx++, c->arx) == -1) {
            conn_protocol_error(c, "sealed payload does not verify");
            return;
        }
        conn_frame(c, &h, c->plain, h.len);
    }
}
