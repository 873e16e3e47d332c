/*
 * The replication protocol (see rep.h and docs/replication.md).
 *
 * State, for a process (rank, replica) of a job of size ranks x nrep:
 *   dst[b]  what we sent to rank b: the last number, the log of what some
 *           live replica of b may still lack, what each replica of b
 *           acknowledged, and which replicas of b we feed;
 *   src[a]  what we received from rank a: the last number accepted, the
 *           rendezvous messages accepted but not yet complete, the last
 *           acknowledgement sent, and which replica of a feeds us;
 *   dead[]  the coordinator's view: processes declared dead.
 *
 * Acknowledgements are cumulative ("every message up to n is complete
 * here"), sent every REP_ACK_EVERY messages and at once for a completed
 * rendezvous or a FIN; a completed rendezvous is also named on its own,
 * so that its sender's request completes even while an older rendezvous
 * of the same pair is still waiting for its receive.
 *
 * Nothing here touches a socket, a connection or a request queue: that
 * goes through rp.io (rep_io.h).  The state is one struct rep per
 * process; rp names the selected one (rep_instance_select: the tests run
 * several processes in one program, the library only the built-in one).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "ctl.h"
#include "decide.h"
#include "rep.h"
#include "rep_io.h"

#define REP_ACK_EVERY 16
/* Progress reports to peerd: a new counter at most this often, the same
 * one again (alive, waiting) at most every REP_BEAT_MS. */
#define REP_PROGRESS_MS 100
#define REP_BEAT_MS 250
/* MPI_Finalize waiting this long says what for (fin_say). */
#define REP_FIN_SAY_MS 10000

struct logent {
    struct wire_hdr h; /* as first sent: type, ctx, ranks, tag, lseq */
    uint8_t *data;     /* eager payload (our copy) */
    size_t len;
    struct mpii_req *req; /* rendezvous: open until every replica has it */
    int done;             /* rendezvous complete everywhere: never replay */
    uint32_t have;        /* replicas that named it complete */
};

struct dest {
    uint64_t tx;
    /* The log: what some live replica of b may still lack, a ring of the
     * messages numbered tx - len + 1 .. tx in order (sent in order,
     * forgotten from the front), so message n is
     * log[(start + n - first) % cap] (log_at). */
    struct logent **log;
    size_t cap, start, len;
    size_t nopen;     /* entries of the log with a request open */
    uint64_t *acked;  /* [nrep] cumulative acknowledgement per replica */
    uint8_t *feeding; /* [nrep] we feed that replica */
    /* Rendezvous named complete by a replica of b before we sent them
     * (another replica of ours, ahead of us, fed it). */
    struct early {
        uint64_t lseq;
        int y;
    } * early;
    size_t nearly, capearly;
    int fin_sent;
};

struct source {
    uint64_t rx;       /* last number accepted, in order */
    uint64_t ack_sent; /* last cumulative acknowledgement sent */
    uint64_t *pend;    /* accepted rendezvous not yet complete */
    size_t npend, cap;
    int feeder; /* the replica of that rank feeding us */
    int fin;
};

struct rep {
    int on, started, debug;
    int rank, replica, size, nrep;
    struct rep_io io;
    struct dec_state *dec; /* decide.c's part */
    uint32_t view;
    uint8_t *dead, *suspected; /* [size * nrep] */
    struct dest *dst;          /* [size] */
    struct source *src;        /* [size] */
    uint8_t *ctlbuf;           /* the largest view that can come */
    size_t ctlcap;
    uint64_t fin_since;          /* MPI_Finalize waiting since (ms) */
    int fin_said;                /* and said what for */
    int progress;                /* peerd relays progress reports */
    uint64_t progress_sent;      /* last counter reported */
    uint64_t progress_ms;        /* when */
};

static struct rep rep_builtin = {.dec = &dec_builtin};
static struct rep *rep_cur = &rep_builtin;
#define rp (*rep_cur)

struct rep *
rep_instance_new(void)
{
    struct rep *r = calloc(1, sizeof *r);

    if (r != NULL && (r->dec = dec_state_new()) == NULL) {
        free(r);
        return NULL;
    }
    return r;
}

void
rep_instance_free(struct rep *r)
{
    if (r == NULL || r == &rep_builtin || r == rep_cur)
        return;
    dec_state_free(r->dec);
    free(r);
}

struct rep *
rep_instance_select(struct rep *r)
{
    struct rep *old = rep_cur;

    rep_cur = r != NULL ? r : &rep_builtin;
    return old;
}

const struct rep_io *
rep_io(void)
{
    return &rp.io;
}

struct dec_state *
rep_dec_state(void)
{
    return rp.dec;
}

void
rep_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (rp.io.log == NULL)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    rp.io.log(rp.io.ctx, line);
}

void
rep_set_progress(int on)
{
    rp.progress = on;
}

/* Tell peerd how far we got: messages sent and accepted, the same
 * sequence in every replica of this rank (the coordinator's progress
 * rule compares them).  Rate-limited; never blocks. */
static void
rep_report_progress(void)
{
    struct ctl_progress m;
    uint64_t count = 0, now;
    int b;

    if (!rp.progress || rp.io.ctl_send == NULL)
        return;
    for (b = 0; b < rp.size; b++)
        count += rp.dst[b].tx + rp.src[b].rx;
    now = rp.io.now_ms(rp.io.ctx);
    if (now - rp.progress_ms <
        (count != rp.progress_sent ? REP_PROGRESS_MS : REP_BEAT_MS))
        return;
    memset(&m, 0, sizeof m);
    m.type = CTL_PROGRESS;
    m.version = CTL_VERSION;
    m.count = count;
    if (rp.io.ctl_send(rp.io.ctx, &m, sizeof m) == 0) {
        rp.progress_sent = count;
        rp.progress_ms = now;
    }
}

int
rep_active(void)
{
    return rp.on;
}

int
rep_dead(int proc)
{
    return rp.on && proc >= 0 && proc < rp.size * rp.nrep && rp.dead[proc];
}

static int
lowest_live(int rank)
{
    int y;

    for (y = 0; y < rp.nrep; y++)
        if (!rp.dead[rank * rp.nrep + y])
            return y;
    return -1;
}

int
rep_rank(void)
{
    return rp.rank;
}

int
rep_replica(void)
{
    return rp.replica;
}

int
rep_nrep(void)
{
    return rp.nrep;
}

int
rep_lowest_live(int rank)
{
    return rp.on ? lowest_live(rank) : -1;
}

int
rep_init(int rank, int replica, int size, int nrep, const uint8_t *dead,
         const struct rep_io *io)
{
    int b, n = size * nrep;

    if (nrep < 2 || nrep > 32)
        return MPI_ERR_OTHER;
    rp.rank = rank;
    rp.replica = replica;
    rp.size = size;
    rp.nrep = nrep;
    rp.io = *io;
    if ((rp.dead = calloc((size_t)n, 1)) == NULL ||
        (rp.suspected = calloc((size_t)n, 1)) == NULL ||
        (rp.dst = calloc((size_t)size, sizeof *rp.dst)) == NULL ||
        (rp.src = calloc((size_t)size, sizeof *rp.src)) == NULL)
        return MPI_ERR_NO_MEM;
    rp.ctlcap = sizeof(struct ctl_view_head) + (size_t)n * sizeof(uint32_t);
    if ((rp.ctlbuf = malloc(rp.ctlcap)) == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(rp.dead, dead, (size_t)n);
    for (b = 0; b < size; b++) {
        if ((rp.dst[b].acked = calloc((size_t)nrep, sizeof(uint64_t))) ==
                NULL ||
            (rp.dst[b].feeding = calloc((size_t)nrep, 1)) == NULL)
            return MPI_ERR_NO_MEM;
        /* Replica k feeds replica k; a takeover adds more. */
        rp.dst[b].feeding[replica] = 1;
        rp.src[b].feeder = replica;
    }
    rp.debug =
        getenv("P2P_MPI_DEBUG") != NULL || getenv("P2P_REP_DEBUG") != NULL;
    rp.on = 1;
    return MPI_SUCCESS;
}

/* --- sending ---------------------------------------------------------- */

static void
feed(int b, const struct logent *e, int y)
{
    struct wire_hdr h = e->h;

    rp.io.send(rp.io.ctx, b * rp.nrep + y, &h, e->data, e->len);
}

static void settle(int b);
static void forget(int b);
static int everyone_has(int b, const struct logent *e);

/* The lowest acknowledgement among the live replicas of b. */
static uint64_t
min_acked(int b)
{
    uint64_t low = UINT64_MAX;
    int y;

    for (y = 0; y < rp.nrep; y++)
        if (!rp.dead[b * rp.nrep + y] && rp.dst[b].acked[y] < low)
            low = rp.dst[b].acked[y];
    return low;
}

/* Room in d's log for one more message; -1 when out of memory. */
static int
log_reserve(struct dest *d)
{
    struct logent **nl;
    size_t ncap, k;

    if (d->len < d->cap)
        return 0;
    ncap = d->cap ? d->cap * 2 : 64;
    if ((nl = malloc(ncap * sizeof *nl)) == NULL)
        return -1;
    for (k = 0; k < d->len; k++)
        nl[k] = d->log[(d->start + k) % d->cap];
    free(d->log);
    d->log = nl;
    d->cap = ncap;
    d->start = 0;
    return 0;
}

/* The number of the oldest message in d's log (tx + 1 when empty). */
static uint64_t
log_first(const struct dest *d)
{
    return d->tx - d->len + 1;
}

/* Message lseq of d's log, or NULL. */
static struct logent *
log_at(const struct dest *d, uint64_t lseq)
{
    if (lseq < log_first(d) || lseq > d->tx)
        return NULL;
    return d->log[(d->start + (size_t)(lseq - log_first(d))) % d->cap];
}

/* Complete e's request if every live replica of b has e. */
static void
settle_one(int b, struct logent *e)
{
    struct mpii_req *r = e->req;

    if (r == NULL || !everyone_has(b, e))
        return;
    e->req = NULL;
    e->done = 1;
    rp.dst[b].nopen--;
    rp.io.complete(rp.io.ctx, r, MPI_SUCCESS);
}

int
rep_send(int b, struct wire_hdr *h, const void *data, size_t len,
         struct mpii_req *r)
{
    struct dest *d = &rp.dst[b];
    struct logent *e = NULL;
    int y;

    if (log_reserve(d) == -1 || (e = calloc(1, sizeof *e)) == NULL ||
        (len > 0 && (e->data = malloc(len)) == NULL)) {
        free(e);
        return MPI_ERR_NO_MEM;
    }
    h->lseq = ++d->tx;
    h->len = len;
    e->h = *h;
    if (len > 0)
        memcpy(e->data, data, len);
    e->len = len;
    e->req = r;
    if (r != NULL) {
        size_t i;

        d->nopen++;
        r->lseq = h->lseq;
        for (i = 0; i < d->nearly;)
            if (d->early[i].lseq == h->lseq) {
                e->have |= 1u << d->early[i].y;
                d->early[i] = d->early[--d->nearly];
            } else
                i++;
    }
    d->log[(d->start + d->len++) % d->cap] = e;
    for (y = 0; y < rp.nrep; y++)
        if (d->feeding[y] && !rp.dead[b * rp.nrep + y])
            feed(b, e, y);
    /* Replicas of b fed by a replica of ours that is ahead may have
     * acknowledged this one already. */
    if (r != NULL || e->h.lseq <= min_acked(b)) {
        settle_one(b, e);
        forget(b);
    }
    return MPI_SUCCESS;
}

/* Does every live replica of b have message e? */
static int
everyone_has(int b, const struct logent *e)
{
    const struct dest *d = &rp.dst[b];
    int y;

    for (y = 0; y < rp.nrep; y++)
        if (!rp.dead[b * rp.nrep + y] && d->acked[y] < e->h.lseq &&
            !(e->have & (1u << y)))
            return 0;
    return 1;
}

/* Forget the front of b's log that every live replica of b
 * acknowledged in order (and whose requests are complete). */
static void
forget(int b)
{
    struct dest *d = &rp.dst[b];
    struct logent *e;
    uint64_t low = min_acked(b);

    if (low == UINT64_MAX)
        low = d->tx; /* nobody left to feed: the job is failing */
    while ((e = log_at(d, log_first(d))) != NULL && e->h.lseq <= low &&
           e->req == NULL) {
        d->start = (d->start + 1) % d->cap;
        d->len--;
        free(e->data);
        free(e);
    }
}

/* Complete what every live replica of b has among the messages numbered
 * lo + 1 .. hi, then forget what they all acknowledged.  The log holds
 * everything the slowest replica of b lacks (thousands of messages when
 * replicas of b run apart): an acknowledgement looks only at what it
 * newly covers (on_ack), where before every one walked the whole log. */
static void
settle_range(int b, uint64_t lo, uint64_t hi)
{
    struct dest *d = &rp.dst[b];
    struct logent *e;
    uint64_t n;

    if (lo < log_first(d) - 1)
        lo = log_first(d) - 1;
    if (hi > d->tx)
        hi = d->tx;
    for (n = lo + 1; n <= hi && d->nopen > 0; n++)
        if ((e = log_at(d, n)) != NULL)
            settle_one(b, e);
    forget(b);
}

/* All of b's log: after a replica of b died or took over. */
static void
settle(int b)
{
    settle_range(b, 0, UINT64_MAX);
}

/* --- acknowledging ---------------------------------------------------- */

static uint64_t
complete_upto(const struct source *s)
{
    uint64_t low = s->rx;
    size_t i;

    for (i = 0; i < s->npend; i++)
        if (s->pend[i] - 1 < low)
            low = s->pend[i] - 1;
    return low;
}

/* Tell every live replica of rank a what we have from it; one is the
 * rendezvous just completed (0: none). */
static void
ack(int a, uint64_t one, int force)
{
    struct source *s = &rp.src[a];
    struct wire_hdr h;
    uint64_t upto = complete_upto(s);
    int y;

    if (!force && upto < s->ack_sent + REP_ACK_EVERY)
        return;
    if (upto > s->ack_sent)
        s->ack_sent = upto;
    for (y = 0; y < rp.nrep; y++) {
        if (rp.dead[a * rp.nrep + y])
            continue;
        memset(&h, 0, sizeof h);
        h.type = FR_ACK;
        h.total = s->ack_sent;
        h.lseq = one;
        rp.io.send(rp.io.ctx, a * rp.nrep + y, &h, NULL, 0);
    }
}

void
rep_recv_done(int a, uint64_t lseq)
{
    struct source *s;
    size_t i;

    if (!rp.on || a < 0 || a >= rp.size || a == rp.rank)
        return;
    s = &rp.src[a];
    for (i = 0; i < s->npend; i++)
        if (s->pend[i] == lseq) {
            s->pend[i] = s->pend[--s->npend];
            break;
        }
    ack(a, lseq, 1);
}

/* --- receiving -------------------------------------------------------- */

static int
pend_add(struct source *s, uint64_t lseq)
{
    if (s->npend == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 8;
        uint64_t *np = realloc(s->pend, ncap * sizeof *np);

        if (np == NULL)
            return -1;
        s->pend = np;
        s->cap = ncap;
    }
    s->pend[s->npend++] = lseq;
    return 0;
}

/* May replica y's early acknowledgement of one (beyond what we sent)
 * be kept?  Entries that y's cumulative acknowledgement now covers go
 * first, a copy is not kept twice, and at most REP_EARLY_MAX are kept
 * per replica: y names a rendezvous on its own only while an older one
 * is still waiting for its receive there, so a longer list than that
 * would need that many rendezvous out of order at once.  One refused is
 * not lost: it completes when y's cumulative acknowledgement reaches
 * it. */
static int
early_keep(struct dest *d, int y, uint64_t one)
{
    size_t i, mine = 0;

    for (i = 0; i < d->nearly;)
        if (d->early[i].lseq <= d->acked[d->early[i].y])
            d->early[i] = d->early[--d->nearly];
        else if (d->early[i].y == y && d->early[i].lseq == one)
            return 0;
        else
            mine += d->early[i++].y == y;
    if (mine < REP_EARLY_MAX)
        return 1;
    rep_log("p2pmpi: rank %d: acknowledgement of rendezvous %llu not "
            "sent yet (sent %llu) from replica %d, %d such kept: dropped",
            rp.rank, (unsigned long long)one, (unsigned long long)d->tx, y,
            (int)mine);
    return 0;
}

static int
early_add(struct dest *d, int y, uint64_t one)
{
    if (d->nearly == d->capearly) {
        size_t ncap = d->capearly ? d->capearly * 2 : 8;
        struct early *ne = realloc(d->early, ncap * sizeof *ne);

        if (ne == NULL)
            return -1;
        d->early = ne;
        d->capearly = ncap;
    }
    d->early[d->nearly].lseq = one;
    d->early[d->nearly++].y = y;
    return 0;
}

/* Replica y of rank b acknowledged (cumulative upto, and one). */
static void
on_ack(int b, int y, uint64_t upto, uint64_t one)
{
    struct dest *d = &rp.dst[b];
    struct logent *e;
    uint64_t before = d->acked[y];

    /* Replicas run at their own pace: the replica of b that another
     * replica of ours feeds may acknowledge what we have not sent yet. */
    if (upto > d->acked[y])
        d->acked[y] = upto;
    if (one > d->tx && one > d->acked[y]) {
        if (early_keep(d, y, one) && early_add(d, y, one) == -1)
            return;
    } else if (one != 0 && (e = log_at(d, one)) != NULL) {
        e->have |= 1u << y;
        settle_one(b, e);
    }
    /* What y's acknowledgement newly covers is all that may be complete
     * now (and the rest waits for another replica's). */
    settle_range(b, before, d->acked[y]);
}

/* Replica y of rank b asks us to feed it from number from on. */
static void
on_takeover(int b, int y, uint64_t from)
{
    struct dest *d = &rp.dst[b];
    struct logent *e;
    uint64_t n;

    /* from may lie beyond what we sent: that replica of b is ahead of
     * us; what we send below from, it drops as duplicates. */
    if (from == 0) {
        rep_log("p2pmpi: rank %d: takeover from 0 asked by rank %d "
                "replica %d: ignored",
                rp.rank, b, y);
        return;
    }
    if (from - 1 > d->acked[y])
        d->acked[y] = from - 1;
    d->feeding[y] = 1;
    if (rp.debug)
        rep_log("p2pmpi: rank %d replica %d: feeding rank %d replica %d "
                "from message %llu (sent %llu)",
                rp.rank, rp.replica, b, y, (unsigned long long)from,
                (unsigned long long)d->tx);
    for (n = from > log_first(d) ? from : log_first(d); n <= d->tx; n++)
        if (!(e = log_at(d, n))->done)
            feed(b, e, y);
    settle(b);
}

void
rep_incoming(struct conn *c, const struct wire_hdr *h, const void *payload)
{
    int p = rp.io.proc_of(rp.io.ctx, c), a = p / rp.nrep, y = p % rp.nrep;
    struct source *s = &rp.src[a];

    if (a == rp.rank)
        return; /* another replica of ours never sends to us */
    if (h->type == FR_ACK) {
        on_ack(a, y, h->total, h->lseq);
        return;
    }
    if (h->type == FR_TAKEOVER) {
        on_takeover(a, y, h->total);
        return;
    }
    if (h->lseq == 0) {
        rep_log("p2pmpi: rank %d: unnumbered message from rank %d: dropped",
                rp.rank, a);
        return;
    }
    if (h->lseq <= s->rx) {
        /* A replay: only a rendezvous still waiting for its bytes
         * needs it. */
        if (h->type == FR_RTS)
            (void)rp.io.resume(rp.io.ctx, a, h->lseq, c, h->sid);
        return;
    }
    if (s->fin) {
        /* FIN is the last message a rank sends us: nothing is numbered
         * after it. */
        rep_log("p2pmpi: rank %d: message %llu from rank %d replica %d "
                "after its finalize: dropped",
                rp.rank, (unsigned long long)h->lseq, a, y);
        return;
    }
    if (h->lseq != s->rx + 1) {
        rep_log("p2pmpi: rank %d: message %llu from rank %d replica %d "
                "skips %llu: dropped",
                rp.rank, (unsigned long long)h->lseq, a, y,
                (unsigned long long)(s->rx + 1));
        return;
    }
    s->rx = h->lseq;
    switch (h->type) {
    case FR_FIN:
        s->fin = 1;
        ack(a, 0, 1);
        break;
    case FR_RTS:
        if (pend_add(s, h->lseq) == -1)
            return;
        rp.io.deliver(rp.io.ctx, c, h, NULL);
        break;
    default: /* FR_EAGER */
        rp.io.deliver(rp.io.ctx, c, h, payload);
        ack(a, 0, 0);
        break;
    }
}

/* --- membership ------------------------------------------------------- */

/* Our feeder from rank a is dead: ask its lowest live replica to feed
 * us from the first message we lack. */
static void
takeover(int a)
{
    struct source *s = &rp.src[a];
    struct wire_hdr h;
    uint64_t low, from;
    int f = !rp.dead[a * rp.nrep + rp.replica] ? rp.replica : lowest_live(a);

    if (f < 0)
        return; /* every replica of a is gone: the job is failing */
    s->feeder = f;
    low = rp.io.orphan(rp.io.ctx, a);
    /* f takes from - 1 as our cumulative acknowledgement: a rendezvous
     * accepted but not complete here (its payload still to come, maybe
     * from f itself) must not be counted, or f completes its send and
     * refuses our clear-to-send.  f replays it; we drop the duplicate. */
    from = complete_upto(s) + 1;
    if (low != 0 && low < from)
        from = low;
    if (rp.debug)
        rep_log("p2pmpi: rank %d replica %d: rank %d replica %d feeds us "
                "from message %llu",
                rp.rank, rp.replica, a, f, (unsigned long long)from);
    /* Nothing heard from a, nothing cut short: f feeds us from the start
     * by itself (adopt), without a connection from every rank to it. */
    if (s->rx == 0 && low == 0)
        return;
    /* Should f be gone as well, the next view brings the next one. */
    memset(&h, 0, sizeof h);
    h.type = FR_TAKEOVER;
    h.total = from;
    rp.io.send(rp.io.ctx, a * rp.nrep + f, &h, NULL, 0);
}

/* Replicas of our rank that are dead: if we are now the lowest live
 * one, we feed their partners (replica k of every rank), replaying what
 * they may lack.  Receivers that heard from our rank ask as well
 * (takeover); the others need no connection to us until we send. */
static void
adopt(void)
{
    int k, b;

    if (lowest_live(rp.rank) != rp.replica)
        return;
    for (k = 0; k < rp.nrep; k++) {
        if (k == rp.replica || !rp.dead[rp.rank * rp.nrep + k])
            continue;
        for (b = 0; b < rp.size; b++)
            if (b != rp.rank && !rp.dst[b].feeding[k] &&
                !rp.dead[b * rp.nrep + k])
                on_takeover(b, k, rp.dst[b].acked[k] + 1);
    }
}

void
rep_start(void)
{
    int a;

    rp.started = 1;
    dec_start();
    adopt();
    for (a = 0; a < rp.size; a++)
        if (a != rp.rank && rp.dead[a * rp.nrep + rp.replica])
            takeover(a);
}

static void
apply_view(const uint32_t *dead, uint32_t n)
{
    uint32_t i;
    int p, b, touched = 0;

    for (i = 0; i < n; i++) {
        p = (int)dead[i];
        if (p < 0 || p >= rp.size * rp.nrep || rp.dead[p])
            continue;
        rp.dead[p] = 1;
        touched = 1;
        rp.io.drop(rp.io.ctx, p);
        rp.dst[p / rp.nrep].feeding[p % rp.nrep] = 0;
    }
    if (!touched)
        return;
    if (rp.started)
        adopt();
    for (b = 0; b < rp.size; b++) {
        if (b == rp.rank)
            continue;
        settle(b);
        if (rp.started && rp.dead[b * rp.nrep + rp.src[b].feeder])
            takeover(b);
    }
    dec_view_changed();
}

void
rep_poll_ctl(void)
{
    struct ctl_view_head vh;
    long n;

    if (!rp.on || rp.io.ctl_recv == NULL)
        return;
    rep_report_progress();
    while ((n = rp.io.ctl_recv(rp.io.ctx, rp.ctlbuf, rp.ctlcap)) > 0) {
        if ((size_t)n < sizeof vh)
            continue;
        memcpy(&vh, rp.ctlbuf, sizeof vh);
        if (vh.type != CTL_VIEW || vh.version != CTL_VERSION ||
            (size_t)n != sizeof vh + (size_t)vh.n * sizeof(uint32_t)) {
            rep_log("p2pmpi: rank %d: malformed control message: ignored",
                    rp.rank);
            continue;
        }
        if (vh.number <= rp.view)
            continue;
        rp.view = vh.number;
        if (rp.debug)
            rep_log("p2pmpi: rank %d replica %d: view %u, %u dead", rp.rank,
                    rp.replica, vh.number, vh.n);
        apply_view((const uint32_t *)(void *)(rp.ctlbuf + sizeof vh), vh.n);
    }
}

void
rep_suspect(int p)
{
    struct ctl_suspect m;

    /* A replica of a rank that finished talking to us (we have its
     * FIN) closes its connections when it leaves: nothing to report. */
    if (!rp.on || p < 0 || p >= rp.size * rp.nrep || rp.dead[p] ||
        rp.suspected[p] || rp.io.ctl_send == NULL || rp.src[p / rp.nrep].fin)
        return;
    rp.suspected[p] = 1;
    memset(&m, 0, sizeof m);
    m.type = CTL_SUSPECT;
    m.version = CTL_VERSION;
    m.proc = (uint32_t)p;
    (void)rp.io.ctl_send(rp.io.ctx, &m, sizeof m);
}

/* --- finalize --------------------------------------------------------- */

/* Has rank b exchanged a message with us?  Only those get our FIN and owe
 * us theirs (MPI_Finalize makes no new connection). */
static int
talked(int b)
{
    return rp.dst[b].tx > 0 || rp.src[b].rx > 0;
}

/* MPI_Finalize has waited REP_FIN_SAY_MS: say once, on stderr, what for
 * (a FIN not come, a replica of a rank that has not acknowledged what we
 * sent), so that a job that does not end tells why. */
static void
fin_say(void)
{
    int b, y;

    for (b = 0; b < rp.size; b++) {
        if (b == rp.rank || !talked(b))
            continue;
        if (!rp.src[b].fin)
            rep_log("p2pmpi: rank %d replica %d: MPI_Finalize waits for rank "
                    "%d's finalize (fed by its replica %d, took %llu)",
                    rp.rank, rp.replica, b, rp.src[b].feeder,
                    (unsigned long long)rp.src[b].rx);
        for (y = 0; y < rp.nrep && rp.dst[b].len > 0; y++)
            if (!rp.dead[b * rp.nrep + y] &&
                rp.dst[b].acked[y] < rp.dst[b].tx)
                rep_log("p2pmpi: rank %d replica %d: MPI_Finalize waits for "
                        "rank %d replica %d to acknowledge messages %llu.."
                        "%llu (it has %llu%s)",
                        rp.rank, rp.replica, b, y,
                        (unsigned long long)log_first(&rp.dst[b]),
                        (unsigned long long)rp.dst[b].tx,
                        (unsigned long long)rp.dst[b].acked[y],
                        rp.dst[b].feeding[y] ? ", we feed it" : "");
    }
}

static int
fin_waiting(int done)
{
    uint64_t now = rp.io.now_ms(rp.io.ctx);

    if (done || rp.fin_said)
        return done;
    if (rp.fin_since == 0)
        rp.fin_since = now;
    else if (now - rp.fin_since >= REP_FIN_SAY_MS) {
        rp.fin_said = 1;
        fin_say();
    }
    return 0;
}

int
rep_fin_step(void)
{
    struct wire_hdr h;
    int b;

    for (b = 0; b < rp.size; b++) {
        if (b == rp.rank || !talked(b) || rp.dst[b].fin_sent)
            continue;
        memset(&h, 0, sizeof h);
        h.type = FR_FIN;
        h.ctx = MPII_CTX_INTERNAL;
        if (rep_send(b, &h, NULL, 0, NULL) == MPI_SUCCESS)
            rp.dst[b].fin_sent = 1;
    }
    for (b = 0; b < rp.size; b++)
        if (b != rp.rank && talked(b) && (!rp.dst[b].fin_sent || !rp.src[b].fin))
            return fin_waiting(0);
    return fin_waiting(rep_quiet());
}

int
rep_fins(void)
{
    int a, n = 0;

    for (a = 0; a < rp.size; a++)
        n += a != rp.rank && rp.src[a].fin;
    return n;
}

int
rep_quiet(void)
{
    static unsigned calls;
    int b, y;

    for (b = 0; b < rp.size; b++)
        if (b != rp.rank && rp.dst[b].len > 0) {
            if (rp.debug && (++calls & 0xff) == 0)
                for (y = 0; y < rp.nrep; y++)
                    rep_log("p2pmpi: rank %d replica %d: waiting for rank %d "
                            "replica %d%s: first unacknowledged %llu, it "
                            "acknowledged %llu, fins %d",
                            rp.rank, rp.replica, b, y,
                            rp.dead[b * rp.nrep + y] ? " (dead)" : "",
                            (unsigned long long)log_first(&rp.dst[b]),
                            (unsigned long long)rp.dst[b].acked[y], rep_fins());
            return 0;
        }
    return 1;
}

void
rep_fini(void)
{
    struct logent *e;
    struct dec_state *dec = rp.dec;
    uint64_t n;
    int b;

    for (b = 0; rp.dst != NULL && b < rp.size; b++) {
        for (n = log_first(&rp.dst[b]); n <= rp.dst[b].tx; n++) {
            e = log_at(&rp.dst[b], n);
            free(e->data);
            free(e);
        }
        free(rp.dst[b].log);
        free(rp.dst[b].acked);
        free(rp.dst[b].early);
        free(rp.dst[b].feeding);
        free(rp.src[b].pend);
    }
    free(rp.dst);
    free(rp.src);
    free(rp.dead);
    free(rp.suspected);
    free(rp.ctlbuf);
    memset(&rp, 0, sizeof rp);
    rp.dec = dec;
}
