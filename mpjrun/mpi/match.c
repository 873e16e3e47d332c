/*
 * Matching: every decision about which receive takes which message is
 * made here, in one order: a new message goes to the oldest posted
 * receive that matches it; a new receive takes the oldest unexpected
 * message that matches it.  Messages from one sender arrive in order on
 * one connection, so MPI's non-overtaking rule holds.  (The replication
 * layer will have a master take these decisions and its backups follow.)
 *
 * With replicas, a rendezvous whose sender died before the payload came
 * waits (orphaned) until the sender's next replica announces it again;
 * the matching decision taken stands.  A wildcard (MPI_ANY_SOURCE)
 * receive is matched by the rank's master, which tells its backups the
 * source (replication/decide.c); in a backup it stays undecided until
 * then, and every message it could take is held back from the receives
 * posted after it.
 *
 * An unexpected eager message keeps its payload (at most the eager
 * limit); an unexpected rendezvous keeps only its announcement, so large
 * messages are never buffered.
 *
 * A receive and a message of different contexts never match, so each
 * context has its queues of its own (struct ctxq, in a hash by context):
 * a receive looks only at its context's messages and a message only at
 * its context's receives.  Thousands of one-sided replies posted on a
 * window no longer lengthen the search of every request header, nor the
 * messages of every other communicator.  Queues left empty are dropped
 * now and then (ctxq_sweep).
 *
 * A long eager message may be matched by its header alone, its payload
 * still on the way (transport.c reads it straight into place:
 * match_eager_begin).  Kept unexpected, it is "filling" until
 * match_filled; a receive that takes it meanwhile completes then.
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "core.h"
#include "decide.h"

struct umsg {
    uint32_t ctx;
    int src, tag;
    int rendezvous;
    int orphan;     /* its sender died: wait for the replay */
    int wsrc;       /* sender's world rank */
    uint64_t lseq;  /* replicas: its sequence number */
    size_t total;
    uint8_t *data; /* eager payload */
    int filling;   /* its payload still being read into data */
    int lost;      /* its sender went before all of it came */
    struct mpii_req *taker; /* taken while filling: completes at the end */
    uint32_t sid;
    struct conn *conn;
    uint64_t seq; /* its first frame's on conn (match_cancel) */
    struct umsg *next;
};

/* One context's receives and messages, each in the order they came. */
struct ctxq {
    uint32_t ctx;
    struct mpii_req *posted, **posted_tail;
    struct umsg *unexpected, **unexpected_tail;
    UT_hash_handle hh;
};

static struct ctxq *queues;    /* by ctx */
static struct ctxq *last;      /* the one found last (most traffic is) */
static unsigned sweep_at = 64; /* drop the empty ones past this many */
static int walking; /* in a walk over every queue: none may be dropped */
/* Messages a matched probe took out of the unexpected queue, waiting
 * for their MPI_Mrecv (mprobe.c). */
static struct umsg *claimed;
static int fins; /* FIN frames received (finalize) */

int
match_fins(void)
{
    return fins;
}

static struct ctxq *
ctxq_find(uint32_t ctx)
{
    struct ctxq *q;

    if (last != NULL && last->ctx == ctx)
        return last;
    HASH_FIND(hh, queues, &ctx, sizeof ctx, q);
    if (q != NULL)
        last = q;
    return q;
}

/* ctx's queues, made if need be; NULL when out of memory. */
static struct ctxq *
ctxq_get(uint32_t ctx)
{
    struct ctxq *q = ctxq_find(ctx);

    if (q != NULL)
        return q;
    if ((q = calloc(1, sizeof *q)) == NULL)
        return NULL;
    q->ctx = ctx;
    q->posted_tail = &q->posted;
    q->unexpected_tail = &q->unexpected;
    HASH_ADD(hh, queues, ctx, sizeof q->ctx, q);
    return q;
}

/* Drop the queues of contexts with nothing waiting (communicators and
 * windows come and go), once there are twice as many as were kept last
 * time.  Only where no caller holds a queue: the start of match_post,
 * outside a walk over them all. */
static void
ctxq_sweep(void)
{
    struct ctxq *q, *tmp;
    unsigned kept = 0;

    if (walking || HASH_COUNT(queues) < sweep_at)
        return;
    last = NULL;
    HASH_ITER(hh, queues, q, tmp)
    {
        if (q->posted == NULL && q->unexpected == NULL) {
            HASH_DEL(queues, q);
            free(q);
        } else
            kept++;
    }
    sweep_at = kept * 2 > 64 ? kept * 2 : 64;
}

static int
matches(uint32_t ctx, int src, int tag, uint32_t want_ctx, int want_src,
        int want_tag)
{
    return ctx == want_ctx && (want_src == MPI_ANY_SOURCE || want_src == src) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* A backup's wildcard receive still waiting for its master's decision. */
static int
undecided(const struct mpii_req *r)
{
    return r->dn != 0 && r->peer == MPI_ANY_SOURCE && !dec_master();
}

/* The master matched a wildcard receive: its backups must follow. */
static void
decided_here(struct mpii_req *r, int src)
{
    if (r->dn != 0 && r->peer == MPI_ANY_SOURCE)
        dec_matched(r, src);
}

/* May a message go to a receive posted after every current one?  Not
 * if an undecided wildcard receive before it could take it. */
static int
held_back(const struct ctxq *q, const struct umsg *u)
{
    const struct mpii_req *w;

    for (w = q->posted; w != NULL; w = w->next)
        if (undecided(w) &&
            matches(u->ctx, u->src, u->tag, w->ctx, w->peer, w->tag))
            return 1;
    return 0;
}

/* Where a receive's bytes land: in place when the layout allows. */
static int
recv_target(struct mpii_req *r)
{
    size_t size = mpii_type_size(r->type) * (size_t)r->count;

    r->cap = size;
    if (mpii_type_contiguous(r->type)) {
        r->rbuf = mpii_type_start(r->buf, r->type);
        return MPI_SUCCESS;
    }
    if ((r->owned = malloc(size > 0 ? size : 1)) == NULL)
        return MPI_ERR_NO_MEM;
    r->rbuf = r->owned;
    return MPI_SUCCESS;
}

static void
deliver_eager(struct mpii_req *r, int src, int tag, const void *data,
              size_t len)
{
    size_t n;

    r->status.MPI_SOURCE = src;
    r->status.MPI_TAG = tag;
    r->total = len;
    /* Contiguous: its place and size were found when it was posted. */
    if (r->rbuf != NULL && r->owned == NULL) {
        n = len < r->cap ? len : r->cap;
        if (n > 0)
            memcpy(r->rbuf, data, n);
        req_complete(r, MPI_SUCCESS);
        return;
    }
    if (mpii_type_contiguous(r->type)) {
        r->cap = mpii_type_size(r->type) * (size_t)r->count;
        n = len < r->cap ? len : r->cap;
        if (n > 0)
            memcpy(mpii_type_start(r->buf, r->type), data, n);
        req_complete(r, MPI_SUCCESS);
        return;
    }
    r->cap = mpii_type_size(r->type) * (size_t)r->count;
    mpii_unpack(data, len < r->cap ? len : r->cap, r->buf, r->count, r->type);
    req_complete(r, MPI_SUCCESS);
}

/* Clear to send: the sender may write the payload into r. */
static void
send_cts(struct mpii_req *r, struct conn *c, uint32_t sid)
{
    struct wire_hdr h;
    int rc;

    r->conn = c;
    r->got = 0;
    memset(&h, 0, sizeof h);
    h.type = FR_CTS;
    h.sid = sid;
    h.rid = req_id(r);
    if ((rc = conn_send(c, &h, NULL, 0, 0, NULL)) != MPI_SUCCESS &&
        r->lseq == 0)
        req_complete(r, rc); /* with replicas, the view decides */
}

void
match_start_rendezvous(struct mpii_req *r, struct conn *c, uint32_t sid,
                       size_t total)
{
    int rc;

    r->conn = c;
    r->total = total;
    r->got = 0;
    if ((rc = recv_target(r)) != MPI_SUCCESS) {
        req_complete(r, rc);
        return;
    }
    if (c == NULL) {
        /* A synchronous send to ourselves: copy, and both complete. */
        struct mpii_req *s = req_by_id(sid);

        if (s != NULL && s->kind == REQ_SEND) {
            if (total > 0 && r->cap > 0)
                memcpy(r->rbuf, s->data, total < r->cap ? total : r->cap);
            req_complete(s, MPI_SUCCESS);
        }
        r->got = total;
        req_complete(r, s != NULL ? MPI_SUCCESS : MPI_ERR_INTERN);
        return;
    }
    send_cts(r, c, sid);
}

/* A rendezvous matched while its sender is dead: ready to receive, the
 * clear-to-send goes out when the replay comes (match_resume). */
static void
match_orphan_rendezvous(struct mpii_req *r, size_t total)
{
    int rc;

    r->conn = NULL;
    r->total = total;
    r->got = 0;
    if ((rc = recv_target(r)) != MPI_SUCCESS)
        req_complete(r, rc);
}

/* The link to the oldest posted receive a message (ctx, src, tag)
 * matches, or NULL; *qp is ctx's queues (NULL when it has none). */
static struct mpii_req **
posted_find(uint32_t ctx, int src, int tag, struct ctxq **qp)
{
    struct ctxq *q = *qp = ctxq_find(ctx);
    struct mpii_req **rp;

    if (q == NULL)
        return NULL;
    for (rp = &q->posted; *rp != NULL; rp = &(*rp)->next)
        if (matches(ctx, src, tag, (*rp)->ctx, (*rp)->peer, (*rp)->tag))
            return rp;
    return NULL;
}

/* Take the receive *rp off q. */
static struct mpii_req *
posted_unlink(struct ctxq *q, struct mpii_req **rp)
{
    struct mpii_req *r = *rp;

    *rp = r->next;
    if (q->posted_tail == &r->next)
        q->posted_tail = rp;
    r->next = NULL;
    mpii_counts.posted--;
    return r;
}

/* Take the message *up off q. */
static struct umsg *
unexpected_unlink(struct ctxq *q, struct umsg **up)
{
    struct umsg *u = *up;

    *up = u->next;
    if (q->unexpected_tail == &u->next)
        q->unexpected_tail = up;
    u->next = NULL;
    mpii_counts.unexpected--;
    return u;
}

/* Keep the message h starts for a receive to come, with room for an
 * eager payload (not yet copied).  NULL when out of memory: the message
 * is lost, and the job will hang. */
static struct umsg *
keep_unexpected(struct conn *c, const struct wire_hdr *h)
{
    struct ctxq *q = ctxq_get(h->ctx);
    struct umsg *u;

    if (q == NULL || (u = calloc(1, sizeof *u)) == NULL)
        return NULL;
    u->ctx = h->ctx;
    u->src = h->src;
    u->tag = h->tag;
    u->total = h->type == FR_EAGER ? h->len : h->total;
    u->rendezvous = h->type == FR_RTS;
    u->sid = h->sid;
    u->conn = c;
    u->seq = h->seq;
    u->wsrc = c != NULL ? conn_rank(c) : mpii_world_rank();
    u->lseq = h->lseq;
    if (!u->rendezvous && h->len > 0 && (u->data = malloc(h->len)) == NULL) {
        free(u);
        return NULL;
    }
    *q->unexpected_tail = u;
    q->unexpected_tail = &u->next;
    if (++mpii_counts.unexpected > mpii_counts.unexpected_peak)
        mpii_counts.unexpected_peak = mpii_counts.unexpected;
    return u;
}

/* A message for matching (MPI_T's p2p_msgs_arrived, p2p_bytes_arrived). */
static void
arrived(const struct wire_hdr *h)
{
    mpii_counts.arrived++;
    mpii_counts.arrived_bytes += h->type == FR_EAGER ? h->len : h->total;
}

void
match_incoming(struct conn *c, const struct wire_hdr *h, const void *payload)
{
    struct mpii_req **rp, *r;
    struct ctxq *q;
    struct umsg *u;

    if (h->type == FR_FIN) {
        fins++;
        return;
    }
    arrived(h);
    /* An undecided receive may be this one's: keep it until we know. */
    if ((rp = posted_find(h->ctx, h->src, h->tag, &q)) != NULL &&
        !undecided(*rp)) {
        r = posted_unlink(q, rp);
        decided_here(r, h->src);
        if (h->type == FR_EAGER)
            deliver_eager(r, h->src, h->tag, payload, h->len);
        else {
            r->status.MPI_SOURCE = h->src;
            r->status.MPI_TAG = h->tag;
            r->wsrc = c != NULL ? conn_rank(c) : mpii_world_rank();
            r->lseq = h->lseq;
            match_start_rendezvous(r, c, h->sid, h->total);
        }
        return;
    }
    /* Nobody waits for it yet. */
    if ((u = keep_unexpected(c, h)) != NULL && u->data != NULL)
        memcpy(u->data, payload, h->len);
}

/* An eager message whose payload is still on the way, h->len bytes
 * (transport.c: read straight into place).  Returns where its payload
 * goes: the receive buffer of the posted receive that takes it (*r; at
 * most (*r)->cap bytes fit there, it completes when all are read), or
 * the payload room of the unexpected message kept for it (*u, filling
 * until match_filled).  NULL: neither (the receive it matches unpacks
 * or must wait for a decision, or no memory): it is matched whole, by
 * match_incoming, once its payload is here. */
uint8_t *
match_eager_begin(struct conn *c, const struct wire_hdr *h, struct mpii_req **r,
                  struct umsg **u)
{
    struct mpii_req **rp;
    struct ctxq *q;

    *r = NULL;
    *u = NULL;
    if ((rp = posted_find(h->ctx, h->src, h->tag, &q)) != NULL) {
        /* In place only where the receive's bytes lie as they come
         * (deliver_eager's first case). */
        if (undecided(*rp) || (*rp)->rbuf == NULL || (*rp)->owned != NULL)
            return NULL;
        *r = posted_unlink(q, rp);
        decided_here(*r, h->src);
        (*r)->status.MPI_SOURCE = h->src;
        (*r)->status.MPI_TAG = h->tag;
        (*r)->total = h->len;
        (*r)->got = 0;
        arrived(h);
        return (*r)->rbuf;
    }
    if ((*u = keep_unexpected(c, h)) == NULL)
        return NULL;
    (*u)->filling = 1;
    arrived(h);
    return (*u)->data;
}

int
match_cancel(struct conn *c, uint32_t ctx, uint64_t seq, uint32_t *sid)
{
    struct ctxq *q = ctxq_find(ctx);
    struct umsg **up, *u;

    for (up = q != NULL ? &q->unexpected : NULL; up != NULL && *up != NULL;
         up = &(*up)->next) {
        u = *up;
        if (u->conn != c || u->seq != seq)
            continue;
        /* Still being read in (its receive could come meanwhile): it
         * stays, the send is not cancelled. */
        if (u->filling)
            return 0;
        *sid = u->rendezvous ? u->sid : 0;
        unexpected_unlink(q, up);
        free(u->data);
        free(u);
        return 1;
    }
    return 0;
}

/* Unexpected message u (already unlinked) goes to receive r, or will
 * when its payload is all here. */
static void
settle(struct mpii_req *r, struct umsg *u)
{
    if (u->filling) {
        u->taker = r; /* match_filled completes it */
        return;
    }
    if (u->lost) {
        r->status.MPI_SOURCE = u->src;
        r->status.MPI_TAG = u->tag;
        req_complete(r, MPI_ERR_OTHER);
    } else if (u->rendezvous) {
        r->status.MPI_SOURCE = u->src;
        r->status.MPI_TAG = u->tag;
        r->wsrc = u->wsrc;
        r->lseq = u->lseq;
        if (u->orphan)
            match_orphan_rendezvous(r, u->total);
        else
            match_start_rendezvous(r, u->conn, u->sid, u->total);
    } else
        deliver_eager(r, u->src, u->tag, u->data, u->total);
    free(u->data);
    free(u);
}

static void
take(struct mpii_req *r, struct umsg *u)
{
    decided_here(r, u->src);
    settle(r, u);
}

void
match_filled(struct umsg *u, int rc)
{
    u->filling = 0;
    if (rc != MPI_SUCCESS)
        u->lost = 1;
    if (u->taker != NULL)
        settle(u->taker, u);
}

void
match_post(struct mpii_req *r)
{
    struct umsg **up, *u = NULL;
    struct ctxq *q;

    ctxq_sweep();
    if ((q = ctxq_get(r->ctx)) == NULL) {
        req_complete(r, MPI_ERR_NO_MEM);
        return;
    }
    if (!undecided(r))
        for (up = &q->unexpected; (u = *up) != NULL; up = &u->next)
            if (matches(u->ctx, u->src, u->tag, r->ctx, r->peer, r->tag) &&
                !held_back(q, u))
                break;
    if (u == NULL) {
        r->next = NULL;
        *q->posted_tail = r;
        q->posted_tail = &r->next;
        mpii_counts.posted++;
        return;
    }
    take(r, unexpected_unlink(q, up));
}

void
match_rematch(void)
{
    struct ctxq *q, *tmp, *same;
    struct umsg **up, *u;
    struct mpii_req **rp, *r;

    walking++; /* take() may post receives: no queue is dropped */
    HASH_ITER(hh, queues, q, tmp)
    {
        for (up = &q->unexpected; (u = *up) != NULL;) {
            if ((rp = posted_find(u->ctx, u->src, u->tag, &same)) == NULL ||
                undecided(*rp)) {
                up = &u->next;
                continue;
            }
            r = posted_unlink(q, rp);
            take(r, unexpected_unlink(q, up));
        }
    }
    walking--;
}

void
match_decided(uint32_t dn, int src)
{
    struct ctxq *q, *tmp;
    struct mpii_req *r;

    HASH_ITER(hh, queues, q, tmp)
    {
        for (r = q->posted; r != NULL; r = r->next)
            if (r->dn == dn && r->peer == MPI_ANY_SOURCE) {
                if (src < 0 || r->comm == NULL || src >= r->comm->size) {
                    mpii_log("p2pmpi: decision %u names source %d, outside "
                             "the communicator: ignored",
                             dn, src);
                    return;
                }
                r->peer = src;
                match_rematch();
                return;
            }
    }
}

int
match_unpost(struct mpii_req *r)
{
    struct ctxq *q = ctxq_find(r->ctx);
    struct mpii_req **rp;

    for (rp = q != NULL ? &q->posted : NULL; rp != NULL && *rp != NULL;
         rp = &(*rp)->next)
        if (*rp == r) {
            posted_unlink(q, rp);
            return 1;
        }
    return 0;
}

int
match_probe(uint32_t ctx, int source, int tag, MPI_Status *st)
{
    struct ctxq *q = ctxq_find(ctx);
    struct umsg *u;

    for (u = q != NULL ? q->unexpected : NULL; u != NULL; u = u->next)
        if (matches(u->ctx, u->src, u->tag, ctx, source, tag)) {
            if (st != MPI_STATUS_IGNORE) {
                st->MPI_SOURCE = u->src;
                st->MPI_TAG = u->tag;
                st->p2p_count = (long long)u->total;
                st->p2p_cancelled = 0;
            }
            return 1;
        }
    return 0;
}

struct umsg *
match_claim(uint32_t ctx, int source, int tag)
{
    struct ctxq *q = ctxq_find(ctx);
    struct umsg **up, *u;

    for (up = q != NULL ? &q->unexpected : NULL;
         up != NULL && (u = *up) != NULL; up = &u->next)
        if (matches(u->ctx, u->src, u->tag, ctx, source, tag)) {
            unexpected_unlink(q, up);
            u->next = claimed;
            claimed = u;
            return u;
        }
    return NULL;
}

void
match_take_claimed(struct mpii_req *r, struct umsg *u)
{
    struct umsg **up;

    for (up = &claimed; *up != NULL; up = &(*up)->next)
        if (*up == u) {
            *up = u->next;
            u->next = NULL;
            take(r, u);
            return;
        }
    req_complete(r, MPI_ERR_INTERN); /* not a claimed message: a bug */
}

/* Call fn on every message kept (each context's unexpected ones, then
 * those claimed by a matched probe) until it returns nonzero. */
static int
each_kept(int (*fn)(struct umsg *, void *), void *arg)
{
    struct ctxq *q, *tmp;
    struct umsg *u;

    HASH_ITER(hh, queues, q, tmp)
    {
        for (u = q->unexpected; u != NULL; u = u->next)
            if (fn(u, arg))
                return 1;
    }
    for (u = claimed; u != NULL; u = u->next)
        if (fn(u, arg))
            return 1;
    return 0;
}

struct resumed {
    int wsrc;
    uint64_t lseq;
    struct conn *c;
    uint32_t sid;
};

static int
resume_one(struct umsg *u, void *arg)
{
    const struct resumed *a = arg;

    if (!u->rendezvous || u->wsrc != a->wsrc || u->lseq != a->lseq)
        return 0;
    u->conn = a->c;
    u->sid = a->sid;
    u->orphan = 0;
    return 1;
}

int
match_resume(int wsrc, uint64_t lseq, struct conn *c, uint32_t sid)
{
    struct mpii_req *r = req_find_rendezvous(wsrc, lseq);
    struct resumed a = {wsrc, lseq, c, sid};

    if (r != NULL) {
        if (r->conn == NULL)
            send_cts(r, c, sid);
        return 1;
    }
    return each_kept(resume_one, &a);
}

struct orphaned {
    int wsrc;
    uint64_t low;
};

static int
orphan_one(struct umsg *u, void *arg)
{
    struct orphaned *a = arg;

    if (u->rendezvous && u->wsrc == a->wsrc && u->lseq != 0 &&
        !conn_ready(u->conn)) {
        u->orphan = 1;
        u->conn = NULL;
        if (a->low == 0 || u->lseq < a->low)
            a->low = u->lseq;
    }
    return 0;
}

uint64_t
match_orphan(int wsrc)
{
    struct orphaned a = {wsrc, req_orphan(wsrc)};

    (void)each_kept(orphan_one, &a);
    return a.low;
}

static void
umsg_free_all(struct umsg *u)
{
    struct umsg *next;

    for (; u != NULL; u = next) {
        next = u->next;
        free(u->data);
        free(u);
    }
}

void
match_fini(void)
{
    struct ctxq *q, *tmp;

    HASH_ITER(hh, queues, q, tmp)
    {
        HASH_DEL(queues, q);
        umsg_free_all(q->unexpected);
        free(q);
    }
    umsg_free_all(claimed);
    claimed = NULL;
    mpii_counts.unexpected = mpii_counts.posted = 0; /* all gone */
    last = NULL;
    sweep_at = 64;
    fins = 0;
}
