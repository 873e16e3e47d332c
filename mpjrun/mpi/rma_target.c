/*
 * rma_target.c: the target side of one-sided communication.  A window
 * keeps one header receive posted per origin (rma.h); a request is
 * served by reading its layout and data from that origin, applying it to
 * the window memory and sending the reply it calls for.
 *
 * When requests are served decides what replicas see, so it is never
 * left to arrival order across origins:
 *  - in a fence epoch the closing fence serves, origin by origin in rank
 *    order, as many requests as each origin says it sent (rma.c);
 *  - in a PSCW exposure epoch Win_wait serves each origin of the group,
 *    in rank order, up to its COMPLETE;
 *  - passive-target requests (locks, and everything inside lock/unlock)
 *    come while the target does something else: the progress engine
 *    serves them (mpii_rma_poll) as they arrive.  Without replicas that is
 *    all; with replicas the rank's master picks the order and sends each
 *    choice (window, origin) to its backups as an out-of-order decision
 *    (replication/decide.h), and the backups serve in that order.
 * Requests from one origin are always served in the order it sent them.
 *
 * Bad requests (a region outside the window, sizes that do not add up)
 * come from a sibling process of our own job, so they are a bug there;
 * they are logged and dropped, with an empty reply where one is awaited,
 * never applied.
 */
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "rma.h"

#define RMA_BLOCKS_MAX (1 << 20) /* runs in one target layout */

struct rma_waiter {
    int origin, type;
    struct rma_waiter *next;
};

struct rma_reply {
    MPI_Request req;
    void *buf;
    size_t len;
    struct rma_reply *next;
};

/* Replies are copies (the window may change once they are made), sent
 * in the background.  A target that serves many Gets at once (a fence
 * closing 100,000 of 128 KiB, as MPICH's rma/manyget does) waits for
 * them to go past these, rather than hold 12 GiB of copies. */
#define RMA_REPLY_BYTES_MAX (64u << 20)
#define RMA_REPLIES_MAX 4096

static struct {
    int busy;        /* inside mpii_rma_poll */
    uint32_t seq;    /* replicas: out-of-order decisions taken or made */
    int next_origin; /* master: where the next look for requests starts */
    int have;        /* backup: decision seq taken, not yet served */
    int32_t next[2]; /* and what it says: window id, origin */
} tg;

/* --- replies -------------------------------------------------------- */

static void reap_replies(struct mpii_win *w, int wait);

/* Send n bytes of buf (ours: freed when sent) to origin s. */
static int
reply(struct mpii_win *w, int s, void *buf, size_t n)
{
    struct rma_reply *r = calloc(1, sizeof *r);
    int rc;

    if (r == NULL) {
        free(buf);
        return MPI_ERR_NO_MEM;
    }
    rc = mpii_isend(buf, (int)n, MPI_BYTE, s, RMA_TAG_REPLY, w->c,
                    RMA_REPLY_CTX(w), MPII_SEND_STANDARD, &r->req);
    if (rc != MPI_SUCCESS) {
        free(buf);
        free(r);
        return rc;
    }
    r->buf = buf;
    r->len = n;
    r->next = w->replies;
    w->replies = r;
    w->reply_bytes += n;
    w->nreplies++;
    if (w->reply_bytes > RMA_REPLY_BYTES_MAX || w->nreplies > RMA_REPLIES_MAX)
        reap_replies(w, 1);
    return MPI_SUCCESS;
}

static int
reply_ack(struct mpii_win *w, int s)
{
    int *one = malloc(sizeof *one);

    if (one == NULL)
        return MPI_ERR_NO_MEM;
    *one = 1;
    return reply(w, s, one, sizeof *one);
}

/* Free the replies that have gone (all of them, waiting, if wait). */
static void
reap_replies(struct mpii_win *w, int wait)
{
    struct rma_reply **rp = &w->replies, *r;
    int flag;

    while ((r = *rp) != NULL) {
        flag = 0;
        if (wait)
            (void)mpii_wait(&r->req, MPI_STATUS_IGNORE), flag = 1;
        else if (mpii_test_quiet(&r->req, &flag) != MPI_SUCCESS)
            flag = 1;
        if (!flag) {
            rp = &r->next;
            continue;
        }
        *rp = r->next;
        w->reply_bytes -= r->len;
        w->nreplies--;
        free(r->buf);
        free(r);
    }
}

/* --- locks ---------------------------------------------------------- */

static int
grantable(const struct mpii_win *w, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        return w->exclusive == -1 && w->shared == 0;
    return w->exclusive == -1;
}

static int
grant(struct mpii_win *w, int s, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        w->exclusive = s;
    else
        w->shared++;
    return reply_ack(w, s);
}

/* Grant waiting requests in the order they came, while they fit. */
static int
grant_waiters(struct mpii_win *w)
{
    struct rma_waiter *q;
    int rc = MPI_SUCCESS;

    while ((q = w->waiters) != NULL && grantable(w, q->type)) {
        w->waiters = q->next;
        if (rc == MPI_SUCCESS)
            rc = grant(w, q->origin, q->type);
        free(q);
    }
    return rc;
}

static int
lock_request(struct mpii_win *w, int s, int type)
{
    struct rma_waiter *q, **qp;

    if (type != MPI_LOCK_EXCLUSIVE && type != MPI_LOCK_SHARED)
        return MPI_ERR_LOCKTYPE;
    if (w->waiters == NULL && grantable(w, type))
        return grant(w, s, type);
    if ((q = calloc(1, sizeof *q)) == NULL)
        return MPI_ERR_NO_MEM;
    q->origin = s;
    q->type = type;
    for (qp = &w->waiters; *qp != NULL; qp = &(*qp)->next)
        ;
    *qp = q;
    return MPI_SUCCESS;
}

static int
unlock_request(struct mpii_win *w, int s)
{
    int rc;

    if (w->exclusive == s)
        w->exclusive = -1;
    else if (w->shared > 0)
        w->shared--;
    rc = reply_ack(w, s);
    return rc == MPI_SUCCESS ? grant_waiters(w) : rc;
}

/* --- data requests -------------------------------------------------- */

/* The runs of the target region in packed order: fn(mem, packed, len)
 * for each (fn NULL: only check that every run is window memory). */
typedef void(run_fn)(struct mpii_win *, const struct rma_hdr *, char *mem,
                     char *packed, size_t len);

static int
for_runs(struct mpii_win *w, const struct rma_hdr *h,
         const struct rma_run *runs, char *packed, run_fn *fn)
{
    int64_t e, k;
    char *mem;

    if (h->nblocks == 0) {
        mem = rma_win_at(w, h->disp, h->lb, h->count * h->esize);
        if (mem == NULL)
            return MPI_ERR_RMA_RANGE;
        if (fn != NULL)
            fn(w, h, mem, packed, (size_t)(h->count * h->esize));
        return MPI_SUCCESS;
    }
    for (e = 0; e < h->count; e++)
        for (k = 0; k < h->nblocks; k++) {
            mem = rma_win_at(w, h->disp, e * h->extent + runs[k].off,
                             runs[k].len);
            if (mem == NULL)
                return MPI_ERR_RMA_RANGE;
            if (fn != NULL) {
                fn(w, h, mem, packed, (size_t)runs[k].len);
                packed += runs[k].len;
            }
        }
    return MPI_SUCCESS;
}

static void
run_put(struct mpii_win *w, const struct rma_hdr *h, char *mem, char *packed,
        size_t len)
{
    (void)w, (void)h;
    if (len > 0) /* a Put of nothing has no payload */
        memmove(mem, packed, len);
}

static void
run_get(struct mpii_win *w, const struct rma_hdr *h, char *mem, char *packed,
        size_t len)
{
    (void)w, (void)h;
    if (len > 0)
        memcpy(packed, mem, len);
}

static void
run_acc(struct mpii_win *w, const struct rma_hdr *h, char *mem, char *packed,
        size_t len)
{
    int bsize = 0;

    (void)w;
    if (PMPI_Type_size(h->basic, &bsize) != MPI_SUCCESS || bsize <= 0)
        return;
    (void)mpii_op_apply(h->mop, packed, mem, (int)(len / (size_t)bsize),
                        h->basic);
}

/* Is the header self-consistent?  Sizes fit an int (they travel as
 * counts of bytes) and the data is what the operation needs. */
static int
hdr_valid(const struct rma_hdr *h, int64_t *total)
{
    int64_t per = 0, k;

    (void)k;
    if (h->count < 0 || h->esize < 0 || h->nblocks < 0 ||
        h->nblocks > RMA_BLOCKS_MAX || h->nbytes < 0 || h->nbytes > 0x7fffffff)
        return 0;
    per = h->esize;
    if (per != 0 && h->count > 0x7fffffff / per)
        return 0;
    *total = per * h->count;
    switch (h->op) {
    case RMA_PUT:
    case RMA_ACC:
        return h->nbytes == *total;
    case RMA_GET:
        return h->nbytes == 0;
    case RMA_GACC:
        return h->nbytes == *total || h->nbytes == 0;
    case RMA_CAS:
        return h->count == 1 && h->nbytes == 2 * h->esize;
    default:
        return 0;
    }
}

static int
recv_from(struct mpii_win *w, void *buf, int64_t n, int s, int tag)
{
    return mpii_recv(buf, (int)n, MPI_BYTE, s, tag, w->c, w->c->ctx,
                     MPI_STATUS_IGNORE);
}

/* Accumulate ops need a builtin op and a target type made of one builtin
 * type, the elements the op works on. */
static int
acc_valid(const struct rma_hdr *h)
{
    int bsize = 0;

    if (h->op != RMA_ACC && h->op != RMA_GACC)
        return 1;
    if (h->mop != MPI_REPLACE && h->mop != MPI_NO_OP &&
        mpii_op_commutative(h->mop) == -1)
        return 0;
    if (PMPI_Type_size(h->basic, &bsize) != MPI_SUCCESS || bsize <= 0)
        return h->nbytes == 0 && h->count == 0;
    return h->esize % bsize == 0;
}

static int
serve_data(struct mpii_win *w, int s, const struct rma_hdr *h)
{
    struct rma_run *runs = NULL;
    char *data = NULL, *old = NULL;
    int64_t total = 0;
    int rc = MPI_SUCCESS, valid = hdr_valid(h, &total) && acc_valid(h);

    if (!valid) {
        /* Cannot even know what else it sent: a broken sibling. */
        mpii_log("p2pmpi: window %u: malformed request %d from rank %d: "
                 "dropped",
                 w->id, (int)h->op, s);
        return MPI_ERR_INTERN;
    }
    if (h->nblocks > 0) {
        if ((runs = malloc((size_t)h->nblocks * sizeof *runs)) == NULL)
            return MPI_ERR_NO_MEM;
        rc = recv_from(w, runs, h->nblocks * (int64_t)sizeof *runs, s,
                       RMA_TAG_LAYOUT);
    }
    if (rc == MPI_SUCCESS && h->nbytes > 0) {
        if ((data = malloc((size_t)h->nbytes)) == NULL)
            rc = MPI_ERR_NO_MEM;
        else
            rc = recv_from(w, data, h->nbytes, s, RMA_TAG_DATA);
    }
    if (rc == MPI_SUCCESS && for_runs(w, h, runs, NULL, NULL) != MPI_SUCCESS) {
        mpii_log("p2pmpi: window %u: request %d from rank %d reaches "
                 "outside the window: not applied",
                 w->id, (int)h->op, s);
        rc = MPI_ERR_RMA_RANGE;
    }
    if (h->op == RMA_GET || h->op == RMA_GACC || h->op == RMA_CAS) {
        /* The origin waits for a reply: the old contents, or nothing. */
        int64_t n = rc == MPI_SUCCESS ? total : 0;

        if ((old = malloc(n > 0 ? (size_t)n : 1)) == NULL) {
            free(runs);
            free(data);
            return MPI_ERR_NO_MEM;
        }
        if (n > 0)
            (void)for_runs(w, h, runs, old, run_get);
        if (rc == MPI_SUCCESS && h->op == RMA_CAS &&
            memcmp(old, data + h->esize, (size_t)h->esize) == 0)
            (void)for_runs(w, h, runs, data, run_put);
        if ((rc = reply(w, s, old, (size_t)n)) != MPI_SUCCESS) {
            free(runs);
            free(data);
            return rc;
        }
    }
    if (rc == MPI_SUCCESS && h->op == RMA_PUT)
        (void)for_runs(w, h, runs, data, run_put);
    if (rc == MPI_SUCCESS && h->nbytes > 0 &&
        (h->op == RMA_ACC || h->op == RMA_GACC))
        (void)for_runs(w, h, runs, data, run_acc);
    free(runs);
    free(data);
    return rc == MPI_ERR_RMA_RANGE ? MPI_SUCCESS : rc;
}

/* Serve header h, which came from origin s. */
static int
serve_req(struct mpii_win *w, int s, const struct rma_hdr *h)
{
    /* A passive-target request after fences that opened an epoch nobody
     * used (no MPI_MODE_NOSUCCEED): the program has moved on. */
    if (w->exposure == RMA_FENCE && (h->lock & RMA_IN_PASSIVE))
        w->exposure = RMA_PASSIVE;
    switch (h->op) {
    case RMA_LOCK:
        return lock_request(w, s, RMA_LOCK_TYPE(h->lock));
    case RMA_UNLOCK:
        return unlock_request(w, s);
    case RMA_FLUSH:
        return reply_ack(w, s);
    case RMA_COMPLETE:
        return MPI_SUCCESS;
    default:
        return serve_data(w, s, h);
    }
}

/* --- header receives ------------------------------------------------ */

static int
post_hdr(struct mpii_win *w, int s)
{
    return mpii_irecv(&w->hdr[s], (int)sizeof w->hdr[s], MPI_BYTE, s,
                      RMA_TAG_HDR, w->c, w->c->ctx, &w->hreq[s]);
}

int
rma_target_start(struct mpii_win *w)
{
    int s, rc = MPI_SUCCESS;

    w->exclusive = -1;
    w->hdr = calloc((size_t)w->size, sizeof *w->hdr);
    w->hreq = malloc((size_t)w->size * sizeof *w->hreq);
    if (w->hdr == NULL || w->hreq == NULL)
        return MPI_ERR_NO_MEM;
    for (s = 0; s < w->size; s++)
        w->hreq[s] = MPI_REQUEST_NULL;
    for (s = 0; s < w->size && rc == MPI_SUCCESS; s++)
        rc = post_hdr(w, s);
    return rc;
}

void
rma_target_stop(struct mpii_win *w)
{
    struct rma_waiter *q;
    int s;

    w->serving++;
    for (s = 0; w->hreq != NULL && s < w->size; s++)
        if (w->hreq[s] != MPI_REQUEST_NULL) {
            (void)PMPI_Cancel(&w->hreq[s]);
            (void)mpii_wait(&w->hreq[s], MPI_STATUS_IGNORE);
        }
    reap_replies(w, 1);
    while ((q = w->waiters) != NULL) {
        w->waiters = q->next;
        free(q);
    }
    free(w->hdr);
    free(w->hreq);
    w->hdr = NULL;
    w->hreq = NULL;
    w->serving--;
}

/* Has origin s's next header come?  The progress engine's poll asks
 * without a progress pass of its own: a program with many windows paid
 * one (and a yield) per window and origin in every MPI call (1000
 * Barriers beside 300 idle windows on 4 ranks: 16.5 s). */
static int
hdr_in(struct mpii_win *w, int s, int *rc)
{
    int flag = 0;

    *rc = mpii_test_quiet(&w->hreq[s], &flag);
    return *rc == MPI_SUCCESS && flag;
}

/* Has origin s's next header come?  Waits for it if block. */
static int
have_hdr(struct mpii_win *w, int s, int block, int *rc)
{
    int flag = 0;

    *rc = MPI_SUCCESS;
    if (w->hreq[s] == MPI_REQUEST_NULL)
        return 1;
    if (block)
        return (*rc = mpii_wait(&w->hreq[s], MPI_STATUS_IGNORE)) == MPI_SUCCESS;
    *rc = PMPI_Test(&w->hreq[s], &flag, MPI_STATUS_IGNORE);
    return *rc == MPI_SUCCESS && flag;
}

int
rma_serve(struct mpii_win *w, int s, int *op)
{
    struct rma_hdr h;
    int rc;

    /* The poll leaves the window alone meanwhile (it would test the
     * requests we wait for). */
    w->serving++;
    if (have_hdr(w, s, 1, &rc)) {
        h = w->hdr[s];
        *op = h.op;
        /* The next one may come while this one is served. */
        if ((rc = post_hdr(w, s)) == MPI_SUCCESS)
            rc = serve_req(w, s, &h);
    }
    w->serving--;
    return rc;
}

int
rma_serve_ready(struct mpii_win *w, int block)
{
    int s, op, rc, ready = 1;

    w->serving++;
    while (w->nwaited < w->nexposed) {
        s = w->exposed[w->nwaited];
        if (!have_hdr(w, s, block, &rc)) {
            ready = rc != MPI_SUCCESS ? -rc : 0;
            break;
        }
        if ((rc = rma_serve(w, s, &op)) != MPI_SUCCESS) {
            ready = -rc;
            break;
        }
        if (op == RMA_COMPLETE)
            w->nwaited++;
    }
    w->serving--;
    return ready;
}

/* --- passive target: served from the progress engine --------------- */

/* May the poll serve this request now? */
static int
passive_ok(const struct mpii_win *w, int s)
{
    return w->exposure == RMA_PASSIVE ||
           (w->exposure == RMA_FENCE && (w->hdr[s].lock & RMA_IN_PASSIVE));
}

static void
serve_logged(struct mpii_win *w, int s)
{
    int op, rc = rma_serve(w, s, &op);

    if (rc != MPI_SUCCESS)
        mpii_log("p2pmpi: window %u: serving rank %d's request %d failed "
                 "(error %d)",
                 w->id, s, op, rc);
}

/* Master (or no replicas): serve what has come, origins in turn. */
static void
poll_lead(void)
{
    struct mpii_win *w;
    int i, k, s, rc, served;
    int32_t v[2];

    do {
        served = 0;
        for (i = 0; i < rma_win_count(); i++) {
            if ((w = rma_win_nth(i)) == NULL || w->serving)
                continue;
            reap_replies(w, 0);
            for (k = 0; k < w->size; k++) {
                s = (tg.next_origin + k) % w->size;
                if (!hdr_in(w, s, &rc) || !passive_ok(w, s))
                    continue;
                if (dec_on()) {
                    v[0] = (int32_t)w->id;
                    v[1] = s;
                    dec_async_publish(++tg.seq, v, 2);
                }
                tg.next_origin = s + 1;
                serve_logged(w, s);
                served = 1;
            }
        }
    } while (served);
}

/* Backup: serve in the order the master did.  A decision may name a
 * window this replica has not created yet (the master runs ahead): it
 * waits, and the ones after it too. */
static void
poll_follow(void)
{
    struct mpii_win *w = NULL;
    int i, n, rc;

    while (tg.have || dec_async_take(tg.seq + 1, tg.next, 2, &n)) {
        if (!tg.have) {
            tg.have = 1;
            tg.seq++;
            if (n != 2)
                tg.next[0] = -1;
        }
        for (i = 0; i < rma_win_count(); i++)
            if ((w = rma_win_nth(i)) != NULL && w->id == (uint32_t)tg.next[0])
                break;
        if (i == rma_win_count()) {
            if (tg.next[0] >= 0 && (uint32_t)tg.next[0] > rma_last_id())
                return; /* not created yet */
            mpii_log("p2pmpi: decision %u names no window: ignored", tg.seq);
            tg.have = 0;
            continue;
        }
        if (tg.next[1] < 0 || tg.next[1] >= w->size) {
            mpii_log("p2pmpi: decision %u names no origin: ignored", tg.seq);
            tg.have = 0;
            continue;
        }
        /* Not before the request is here: it may be this very process's,
         * not sent yet (the master runs ahead); and not while the next
         * one from that origin belongs to a fence or PSCW epoch this
         * replica has still to serve (the master was past it). */
        if (w->serving || !hdr_in(w, tg.next[1], &rc) ||
            !passive_ok(w, tg.next[1]))
            return;
        tg.have = 0;
        serve_logged(w, tg.next[1]);
    }
    for (i = 0; i < rma_win_count(); i++)
        if ((w = rma_win_nth(i)) != NULL && !w->serving)
            reap_replies(w, 0);
}

void
mpii_rma_poll(void)
{
    if (tg.busy || rma_win_count() == 0)
        return;
    tg.busy = 1;
    /* A backup that became master first serves what its master
     * decided before it died. */
    if (dec_on())
        poll_follow();
    /* Not while a decision of the old master waits for its request:
     * what it names comes first. */
    if (!dec_on() || (dec_master() && !tg.have))
        poll_lead();
    tg.busy = 0;
}
