/*
 * Agreement on nondeterminism (see decide.h).
 *
 *   master -> backup   FR_DECIDE      total = number, payload n x int32
 *   backup -> master   FR_DECIDE_ACK  total = number
 *   backup -> others   FR_DECIDE_ACK  ctx 2, total = its position
 *   new master -> backup  FR_DECIDE_ACK  ctx 3, total = first number it
 *                                        lacks (a take-over's question)
 *   backup -> new master  FR_DECIDE      ctx 4, a decision it has from there
 *                         FR_DECIDE_ACK  ctx 5, total 1: that was all
 *
 * The master keeps each decision until every live backup acknowledged
 * it; a wildcard receive it matched is held incomplete until then.  A
 * backup keeps every decision it received (a few bytes each), indexed by
 * number, so that it can pass them on if it becomes master while other
 * backups live.
 *
 * Window: a backup keeps a program-order decision only if its number is
 * at most DEC_WINDOW beyond its own position (the numbers it has drawn,
 * dc.next); one beyond is refused with a log line and not acknowledged,
 * so a forged number costs no memory (the table is at most twice
 * position + DEC_WINDOW pointers).  An honest master keeps to that
 * window: each backup reports its position every DEC_REPORT numbers
 * (and when it waits for a decision it refused), and the master sends
 * a backup only the decisions within the highest position it reported
 * + DEC_WINDOW; on each report it sends what the new window admits, and
 * again what that backup has reached but not acknowledged.  A master
 * further ahead than that waits (its wildcard receives stay held) until
 * the backup catches up.
 *
 * Take-over: the old master may have died with a decision that reached
 * some backups and not others (it went to one first, or one's window
 * held it back, or one read the view before the frame).  A backup that
 * becomes master asks every other live backup for the decisions it
 * lacks and adopts them before it decides anything itself: until they
 * all answered it is no master (dec_master), and waits for decisions as
 * a backup does.  A backup answers only once its own view shows the
 * asker as master, and from then on drops program-order decisions from
 * a replica its view has dead, so that nothing of the old master's
 * comes in after its answer.  Without this, with three replicas, the
 * two survivors could follow different sources for one receive (seen
 * once in CI: a third replica's choices disagreed with its second
 * master's after both earlier masters were killed).
 *
 * The state is part of rep.c's instance (dc names the selected one's),
 * and frames, requests and matching go through its struct rep_io.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "decide.h"
#include "rep.h"
#include "rep_io.h"

/* How far ahead of us an out-of-order (passive-target) number may be. */
#define DEC_AHEAD_MAX (1u << 24)
/* How often a backup reports its position (see above). */
#define DEC_REPORT (DEC_WINDOW / 4)
#define DEC_POSITION 2 /* FR_DECIDE_ACK ctx: a position report */
#define DEC_SYNC_ASK 3  /* FR_DECIDE_ACK ctx: a new master's question */
#define DEC_SYNC_GIVE 4 /* FR_DECIDE ctx: a backup's answer, one decision */
#define DEC_SYNC_DONE 5 /* FR_DECIDE_ACK ctx: the end of its answer */

struct decision {
    struct decision *next;
    uint32_t dn;
    int n;
    int32_t *v;
    uint32_t acked;        /* master: replicas that acknowledged */
    uint32_t sentto;       /* master: replicas it was sent to */
    struct mpii_req *held; /* master: a wildcard receive waiting for it */
    int held_err;
};

struct dec_state {
    uint32_t next;
    struct decision *sent; /* master: not yet acknowledged by everyone */
    struct decision **got; /* backup: received from the master, by number */
    uint32_t gotcap;
    struct decision *async; /* backup: out-of-order decisions not taken */
    uint32_t async_taken;   /* the highest taken */
    int leads; /* master from the start, or since its take-over ended */
    uint32_t pos[32];     /* each replica's highest reported position */
    uint32_t refused_max; /* backup: the highest number refused */
    int sync_started;     /* new master: the backups were asked */
    uint32_t syncing;     /* ... those whose answer is still to come */
    uint32_t sync_asked;  /* backup: askers our view does not see lead yet */
    uint32_t sync_floor;  /* ... and the first number each lacks (one) */
};

struct dec_state dec_builtin;
#define dc (*rep_dec_state())

struct dec_state *
dec_state_new(void)
{
    return calloc(1, sizeof(struct dec_state));
}

void
dec_state_free(struct dec_state *d)
{
    if (d != &dec_builtin)
        free(d);
}

int
dec_on(void)
{
    return rep_active();
}

/* We are our rank's lowest live replica (master, or about to be). */
static int
lowest(void)
{
    return rep_lowest_live(rep_rank()) == rep_replica();
}

int
dec_master(void)
{
    return lowest() && dc.leads;
}

/* The other live replicas of our rank, as a mask. */
static uint32_t
others_live(void)
{
    uint32_t m = 0;
    int y, me = rep_replica();

    for (y = 0; y < rep_nrep(); y++)
        if (y != me && !rep_dead(rep_rank() * rep_nrep() + y))
            m |= 1u << y;
    return m;
}

static void send_to_ctx(int replica, uint8_t type, uint32_t ctx, uint32_t dn,
                        const int32_t *v, int n);

/* Tell the other live replicas of our rank where we are. */
static void
report_position(void)
{
    int y, me = rep_replica();

    for (y = 0; y < rep_nrep(); y++)
        if (y != me && !rep_dead(rep_rank() * rep_nrep() + y))
            send_to_ctx(y, FR_DECIDE_ACK, DEC_POSITION, dc.next, NULL, 0);
}

uint32_t
dec_next(void)
{
    if (!rep_active())
        return 0;
    if (++dc.next % DEC_REPORT == 0 && !dec_master())
        report_position();
    return dc.next;
}

static struct decision *
find(struct decision *l, uint32_t dn)
{
    for (; l != NULL; l = l->next)
        if (l->dn == dn)
            return l;
    return NULL;
}

static struct decision *
got(uint32_t dn)
{
    return dn < dc.gotcap ? dc.got[dn] : NULL;
}

static struct decision *
decision_new(uint32_t dn, const int32_t *v, int n)
{
    struct decision *d = calloc(1, sizeof *d);

    if (d == NULL ||
        (n > 0 && (d->v = malloc((size_t)n * sizeof *v)) == NULL)) {
        free(d);
        return NULL;
    }
    d->dn = dn;
    d->n = n;
    if (n > 0)
        memcpy(d->v, v, (size_t)n * sizeof *v);
    return d;
}

/* Keep a decision received from the master (dn not known yet). */
static int
got_add(uint32_t dn, const int32_t *v, int n)
{
    struct decision **ng, *d;
    uint32_t ncap;

    if (dn >= dc.gotcap) {
        for (ncap = dc.gotcap ? dc.gotcap : 64; ncap <= dn; ncap *= 2)
            ;
        if ((ng = realloc(dc.got, ncap * sizeof *ng)) == NULL)
            return -1;
        memset(ng + dc.gotcap, 0, (ncap - dc.gotcap) * sizeof *ng);
        dc.got = ng;
        dc.gotcap = ncap;
    }
    if ((d = decision_new(dn, v, n)) == NULL)
        return -1;
    dc.got[dn] = d;
    return 0;
}

/* May replica y (by its last report) take decision dn? */
static int
in_window(int y, uint32_t dn)
{
    return dn <= (uint64_t)dc.pos[y] + DEC_WINDOW;
}

static void
send_to_ctx(int replica, uint8_t type, uint32_t ctx, uint32_t dn,
            const int32_t *v, int n)
{
    const struct rep_io *io = rep_io();
    struct wire_hdr h;

    memset(&h, 0, sizeof h);
    h.type = type;
    h.ctx = ctx;
    h.total = dn;
    io->send(io->ctx, rep_rank() * rep_nrep() + replica, &h, v,
             (size_t)n * sizeof *v);
}

static void
send_to(int replica, uint8_t type, uint32_t dn, const int32_t *v, int n)
{
    send_to_ctx(replica, type, 0, dn, v, n);
}

void
dec_async_publish(uint32_t seq, const int32_t *v, int n)
{
    int y, me = rep_replica();

    for (y = 0; y < rep_nrep(); y++)
        if (y != me && !rep_dead(rep_rank() * rep_nrep() + y))
            send_to_ctx(y, FR_DECIDE, 1, seq, v, n);
}

int
dec_async_take(uint32_t seq, int32_t *v, int max, int *n)
{
    struct decision **dp, *d;

    for (dp = &dc.async; (d = *dp) != NULL; dp = &d->next)
        if (d->dn == seq) {
            *dp = d->next;
            *n = d->n < max ? d->n : max;
            memcpy(v, d->v, (size_t)*n * sizeof *v);
            free(d->v);
            free(d);
            if (seq > dc.async_taken)
                dc.async_taken = seq;
            return 1;
        }
    return 0;
}

/* Keep an out-of-order decision from the master until it is taken. */
static void
async_incoming(const struct wire_hdr *h, const void *payload, int n)
{
    struct decision *d;
    uint32_t seq = (uint32_t)h->total;

    if (seq <= dc.async_taken ||
        h->total > (uint64_t)dc.async_taken + DEC_AHEAD_MAX) {
        rep_log("p2pmpi: rank %d: out-of-order decision %u out of range: "
                "dropped",
                rep_rank(), seq);
        return;
    }
    for (d = dc.async; d != NULL; d = d->next)
        if (d->dn == seq)
            return; /* a copy resent */
    {
        int32_t v[DEC_MAX_VALUES];

        if (n > 0)
            memcpy(v, payload, (size_t)n * sizeof *v);
        if ((d = decision_new(seq, v, n)) == NULL)
            return;
    }
    d->next = dc.async;
    dc.async = d;
}

/* Every live backup has decision d. */
static int
settled(const struct decision *d)
{
    int y, me = rep_replica();

    for (y = 0; y < rep_nrep(); y++)
        if (y != me && !rep_dead(rep_rank() * rep_nrep() + y) &&
            !(d->acked & (1u << y)))
            return 0;
    return 1;
}

/* Forget what everyone has; release the receives that waited for it. */
static void
settle_all(void)
{
    struct decision **dp = &dc.sent, *d;

    while ((d = *dp) != NULL) {
        if (!settled(d)) {
            dp = &d->next;
            continue;
        }
        *dp = d->next;
        if (d->held != NULL) {
            struct mpii_req *r = d->held;

            r->dn = 0; /* decided and known: complete for real */
            rep_io()->complete(rep_io()->ctx, r, d->held_err);
        }
        free(d->v);
        free(d);
    }
}

static struct decision *
publish(uint32_t dn, const int32_t *v, int n)
{
    struct decision *d;
    int y, me = rep_replica();

    if ((d = decision_new(dn, v, n)) == NULL)
        return NULL;
    d->next = dc.sent;
    dc.sent = d;
    for (y = 0; y < rep_nrep(); y++)
        if (y != me && !rep_dead(rep_rank() * rep_nrep() + y) &&
            in_window(y, dn)) {
            send_to(y, FR_DECIDE, dn, v, n);
            d->sentto |= 1u << y;
        }
    return d;
}

static int
published(void *arg)
{
    return find(dc.sent, *(uint32_t *)arg) == NULL;
}

int
dec_publish(uint32_t dn, const int32_t *v, int n)
{
    if (publish(dn, v, n) == NULL)
        return MPI_ERR_NO_MEM;
    settle_all();
    return rep_io()->wait_until(rep_io()->ctx, published, &dn);
}

struct await_arg {
    uint32_t dn;
};

static int
arrived(void *arg)
{
    return got(((struct await_arg *)arg)->dn) != NULL || dec_master();
}

int
dec_await(uint32_t dn, int32_t *v, int max, int *n)
{
    struct await_arg a = {dn};
    struct decision *d;
    int rc;

    if (!arrived(&a) && dn <= dc.refused_max)
        report_position(); /* we refused it: the master sends it again */
    if ((rc = rep_io()->wait_until(rep_io()->ctx, arrived, &a)) != MPI_SUCCESS)
        return -rc;
    if ((d = got(dn)) == NULL)
        return 0; /* we are master now: decide */
    *n = d->n < max ? d->n : max;
    memcpy(v, d->v, (size_t)*n * sizeof *v);
    return 1;
}

int
dec_lookup(uint32_t dn, int32_t *v)
{
    struct decision *d = got(dn);

    if (d == NULL || d->n < 1)
        return 0;
    *v = d->v[0];
    return 1;
}

void
dec_matched(struct mpii_req *r, int src)
{
    int32_t v = src;

    if (find(dc.sent, r->dn) == NULL)
        (void)publish(r->dn, &v, 1);
}

int
dec_hold(struct mpii_req *r, int err)
{
    struct decision *d;

    if (!rep_active() || !dec_master() || (d = find(dc.sent, r->dn)) == NULL)
        return 0;
    if (settled(d)) {
        r->dn = 0;
        return 0;
    }
    d->held = r;
    d->held_err = err;
    return 1;
}

/* Take decision dn (n values at payload) from process p, unless we
 * have it: 0, or -1 when refused (beyond the window, or no memory; no
 * acknowledgement then: it comes again). */
static int
keep(int p, uint32_t dn, const void *payload, int n)
{
    int32_t v[DEC_MAX_VALUES];

    if (dn > (uint64_t)dc.next + DEC_WINDOW) {
        rep_log("p2pmpi: rank %d: decision %u from process %d beyond the "
                "window (we are at %u): dropped",
                rep_rank(), dn, p, dc.next);
        if (dn > dc.refused_max)
            dc.refused_max = dn;
        return -1;
    }
    if (got(dn) != NULL)
        return 0;
    if (n > 0)
        memcpy(v, payload, (size_t)n * sizeof *v);
    if (got_add(dn, v, n) == -1)
        return -1; /* the master waits, we cannot follow */
    if (n >= 1)
        rep_io()->decided(rep_io()->ctx, dn, v[0]);
    return 0;
}

/* Backup: tell new master y every decision we have from number floor
 * on, then that this was all. */
static void
sync_answer(int y, uint32_t floor)
{
    uint32_t dn;

    for (dn = floor; dn < dc.gotcap; dn++)
        if (dc.got[dn] != NULL)
            send_to_ctx(y, FR_DECIDE, DEC_SYNC_GIVE, dn, dc.got[dn]->v,
                        dc.got[dn]->n);
    send_to_ctx(y, FR_DECIDE_ACK, DEC_SYNC_DONE, 1, NULL, 0);
}

/* New master: the backups all answered; lead.  The backups left may lack
 * what the old master decided (and what they told us); wildcard receives
 * waiting for a decision are ours now. */
static void
take_over(void)
{
    struct decision *d;
    uint32_t i;

    dc.leads = 1;
    for (i = 0; i < dc.gotcap; i++)
        if ((d = dc.got[i]) != NULL && find(dc.sent, d->dn) == NULL)
            (void)publish(d->dn, d->v, d->n);
    rep_io()->rematch(rep_io()->ctx);
}

/* New master: ask the other live backups what they have that we lack. */
static void
sync_start(void)
{
    uint32_t floor = 1;
    int y;

    while (got(floor) != NULL)
        floor++;
    dc.sync_started = 1;
    dc.syncing = others_live();
    for (y = 0; y < rep_nrep(); y++)
        if (dc.syncing & (1u << y))
            send_to_ctx(y, FR_DECIDE_ACK, DEC_SYNC_ASK, floor, NULL, 0);
}

static void
sync_incoming(int y, const struct wire_hdr *h, const void *payload, int n)
{
    uint32_t dn = (uint32_t)h->total;

    switch (h->ctx) {
    case DEC_SYNC_ASK:
        /* Not before our view has y lead: the old master's decisions may
         * still be coming. */
        if (rep_lowest_live(rep_rank()) == y)
            sync_answer(y, dn);
        else {
            dc.sync_asked = 1u << y;
            dc.sync_floor = dn;
        }
        return;
    case DEC_SYNC_GIVE:
        if (!(dc.syncing & (1u << y)))
            break;
        (void)keep(rep_rank() * rep_nrep() + y, dn, payload, n);
        return;
    default: /* DEC_SYNC_DONE */
        if (!(dc.syncing & (1u << y)))
            break;
        dc.syncing &= ~(1u << y);
        if (dc.syncing == 0 && lowest())
            take_over();
        return;
    }
    rep_log("p2pmpi: rank %d: take-over answer from replica %d, not asked: "
            "dropped",
            rep_rank(), y);
}

void
dec_incoming(struct conn *c, const struct wire_hdr *h, const void *payload)
{
    int p = rep_io()->proc_of(rep_io()->ctx, c), y = p % rep_nrep();
    struct decision *d;
    uint32_t dn = (uint32_t)h->total;
    int n = (int)(h->len / sizeof(int32_t));

    /* Two streams only: 0 in program order (bounded ahead), 1 the
     * passive-target order (async_incoming), and position reports;
     * anything else is malformed. */
    if (p / rep_nrep() != rep_rank() || h->total == 0 ||
        (h->ctx > 1 && !(h->type == FR_DECIDE_ACK &&
                         (h->ctx == DEC_POSITION || h->ctx == DEC_SYNC_ASK ||
                          h->ctx == DEC_SYNC_DONE)) &&
         !(h->type == FR_DECIDE && h->ctx == DEC_SYNC_GIVE)) ||
        h->total > UINT32_MAX || h->len % sizeof(int32_t) != 0 ||
        n > DEC_MAX_VALUES) {
        rep_log("p2pmpi: rank %d: malformed decision from process %d: "
                "dropped",
                rep_rank(), p);
        return;
    }
    if (h->ctx == 1 && h->type == FR_DECIDE) {
        async_incoming(h, payload, n);
        return;
    }
    if (h->ctx >= DEC_SYNC_ASK) {
        sync_incoming(y, h, payload, n);
        return;
    }
    if (h->ctx == DEC_POSITION) {
        /* Positions only grow.  Send what the window now admits, and
         * again what that replica has reached without acknowledging (it
         * refused it: a forged report had moved its window). */
        if (dn > dc.pos[y])
            dc.pos[y] = dn;
        for (d = dc.sent; d != NULL; d = d->next)
            if (!(d->acked & (1u << y)) && in_window(y, d->dn) &&
                (!(d->sentto & (1u << y)) || d->dn <= dn)) {
                send_to(y, FR_DECIDE, d->dn, d->v, d->n);
                d->sentto |= 1u << y;
            }
        return;
    }
    if (h->type == FR_DECIDE_ACK) {
        if ((d = find(dc.sent, dn)) != NULL) {
            d->acked |= 1u << y;
            settle_all();
        }
        return;
    }
    if (rep_dead(p)) {
        /* An old master's, read after the view that has it dead: we may
         * have told its successor all we had already. */
        rep_log("p2pmpi: rank %d: decision %u from dead replica %d: dropped",
                rep_rank(), dn, y);
        return;
    }
    if (keep(p, dn, payload, n) == 0)
        send_to(y, FR_DECIDE_ACK, dn, NULL, 0);
}

void
dec_start(void)
{
    dc.leads = lowest();
}

void
dec_view_changed(void)
{
    int lead;

    if (!rep_active())
        return;
    lead = rep_lowest_live(rep_rank());
    if (lowest() && !dc.leads) {
        if (!dc.sync_started)
            sync_start();
        dc.syncing &= others_live(); /* the dead answer nothing */
        if (dc.syncing == 0)
            take_over();
    }
    if (lead >= 0 && (dc.sync_asked & (1u << lead))) {
        dc.sync_asked = 0;
        sync_answer(lead, dc.sync_floor);
    }
    settle_all();
}

void
dec_fini(void)
{
    struct decision *d;
    uint32_t i;

    while ((d = dc.sent) != NULL) {
        dc.sent = d->next;
        free(d->v);
        free(d);
    }
    for (i = 0; i < dc.gotcap; i++)
        if ((d = dc.got[i]) != NULL) {
            free(d->v);
            free(d);
        }
    free(dc.got);
    while ((d = dc.async) != NULL) {
        dc.async = d->next;
        free(d->v);
        free(d);
    }
    memset(&dc, 0, sizeof dc);
}
