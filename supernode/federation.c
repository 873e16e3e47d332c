/*
 * A federation of supernodes: each pushes a compact summary of its own
 * peers (the best [supernode] federation_summary of them, best first) to
 * every other member it is configured with, over a channel it opens and
 * keeps, authenticated with the group key like every other.  What the
 * others push comes in as ordinary sessions (server.c) and lands in the
 * summary store (summary.c).  A list request is answered from both: the
 * supernode's own registry and the others' summaries, one entry per node
 * key, best first, bounded.
 *
 * Summaries are full, numbered, and sent every federation_interval_ms
 * while the registry changes in a way that matters for ranking (a
 * registration, a departure, free slots or state, memory or load by a
 * step: registry_generation()), and otherwise at least every
 * FED_REFRESH_INTERVALS intervals or every third of the expiry, whichever
 * comes first: that refresh carries the small drifts of memory, load and
 * round trip that did not count as changes, and doubles as the keepalive.
 * A receiver forgets a member's summary, and with it that member's peers,
 * when nothing came from it for the expiry (summary_expire()); its
 * session closes after twice the expiry and a second of silence (the
 * channel's idle limit, server.c).  Nothing is forwarded: the members
 * form a full mesh, each configured with the others (a member that finds
 * itself in the list skips that entry).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "log.h"
#include "monotime.h"
#include "netaddr.h"
#include "supernode.h"
#include "xmalloc.h"

#define FEDLINK_BACKOFF_MIN_MS 200
#define FEDLINK_BACKOFF_MAX_MS 5000
/* With nothing that counts changed, a summary still goes out after this
 * many intervals (10 s by default), so that nothing it carries is older. */
#define FED_REFRESH_INTERVALS 10

enum fedlink_state {
    FEDLINK_IDLE,       /* waiting out the back-off */
    FEDLINK_CONNECTING, /* connect and handshake under way */
    FEDLINK_UP,         /* summaries flow */
    FEDLINK_SELF,       /* the member is this very supernode: unused */
};

static const char *fedlink_state_names[] = {
    "idle",
    "connecting",
    "up",
    "self",
};

struct fedlink {
    struct federation *fed;
    char *name;
    struct channel *ch;
    enum fedlink_state state;
    uint64_t retry_ms; /* FEDLINK_IDLE: when to connect again */
    int backoff_ms;
    int failures; /* consecutive, to keep the log quiet */
};

struct federation {
    struct event_base *base;
    struct federation_params p;
    struct registry *reg;
    struct summary *store;
    uint8_t instance[WIRE_FED_INSTANCE_LEN];
    struct fedlink *links;
    int nlinks;
    uint64_t seq;          /* of the last summary sent */
    uint64_t sent_gen;     /* registry generation it summarised */
    uint64_t next_push_ms; /* earliest next summary */
    uint64_t last_push_ms;
    uint64_t sent; /* summaries that went to at least one member */
};

static void fedlink_on_ready(struct channel *, void *);
static void fedlink_on_msg(struct channel *, const struct msg *, void *);
static void fedlink_on_close(struct channel *, const char *, int, void *);

static const struct channel_cbs fedlink_cbs = {
    .on_ready = fedlink_on_ready,
    .on_msg = fedlink_on_msg,
    .on_close = fedlink_on_close,
};

static void
fedlink_set_state(struct fedlink *l, enum fedlink_state st)
{
    log_debug("federation %s: %s -> %s", l->name,
              fedlink_state_names[l->state], fedlink_state_names[st]);
    l->state = st;
}

/* The link is down: try again after a growing, jittered wait. */
static void
fedlink_failed(struct fedlink *l, const char *why, uint64_t now_ms)
{
    uint32_t jitter;

    if (l->state == FEDLINK_UP)
        log_warnx("federation: %s lost: %s; reconnecting", l->name, why);
    else if (l->failures++ == 0)
        log_warnx("federation: %s: %s; will keep trying", l->name, why);
    else
        log_debug("federation: %s: %s", l->name, why);
    l->ch = NULL;
    fedlink_set_state(l, FEDLINK_IDLE);
    sec_random(&jitter, sizeof jitter);
    l->retry_ms = now_ms + (uint64_t)(l->backoff_ms * 3 / 4) +
                  jitter % (uint32_t)(l->backoff_ms / 2 + 1);
    l->backoff_ms = l->backoff_ms * 2 > FEDLINK_BACKOFF_MAX_MS
                        ? FEDLINK_BACKOFF_MAX_MS
                        : l->backoff_ms * 2;
}

static void
fedlink_connect(struct fedlink *l, uint64_t now_ms)
{
    struct channel_params cp;
    struct netaddr na;
    char err[160];

    if (netaddr_parse(l->name, CONF_DEFAULT_SUPERNODE_PORT, &na, err,
                      sizeof err) == -1) {
        fedlink_failed(l, err, now_ms);
        return;
    }
    group_params(l->fed->p.group, FRAME_MAX_REQUEST, 0, &cp);
    if ((l->ch = channel_connect(l->fed->base, &na, NULL, &cp, &fedlink_cbs,
                                 l)) == NULL) {
        fedlink_failed(l, "cannot create a socket", now_ms);
        return;
    }
    fedlink_set_state(l, FEDLINK_CONNECTING);
}

static void
fedlink_on_ready(struct channel *ch, void *arg)
{
    struct fedlink *l = arg;

    fedlink_set_state(l, FEDLINK_UP);
    l->backoff_ms = FEDLINK_BACKOFF_MIN_MS;
    log_info("federation: linked to %s", l->name);
    l->failures = 0;
    /* The newcomer gets a whole summary at the next cron tick. */
    l->fed->next_push_ms = 0;
    l->fed->sent_gen = UINT64_MAX;
}

static void
fedlink_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct fedlink *l = arg;
    char why[WIRE_MAX_TEXT + 32];

    switch (m->type) {
    case MSG_PING:
        channel_pong(ch, m);
        return;
    case MSG_ERROR:
        channel_close(ch);
        if (m->u.error.code == WIRE_ERR_FED_SELF) {
            log_info("federation: %s is this supernode itself; skipped",
                     l->name);
            l->ch = NULL;
            fedlink_set_state(l, FEDLINK_SELF);
            return;
        }
        snprintf(why, sizeof why, "refused: %s", m->u.error.text);
        fedlink_failed(l, why, monotime_ms());
        return;
    default:
        snprintf(why, sizeof why, "unexpected %s", msg_type_name(m->type));
        channel_close(ch);
        fedlink_failed(l, why, monotime_ms());
        return;
    }
}

static void
fedlink_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    fedlink_failed(arg, reason, monotime_ms());
}

struct federation *
federation_new(struct event_base *base, const struct federation_params *p,
               struct registry *reg)
{
    struct federation *fed;
    int i;

    fed = xcalloc(1, sizeof *fed);
    fed->base = base;
    fed->p = *p;
    fed->reg = reg;
    fed->store = summary_new();
    sec_random(fed->instance, sizeof fed->instance);
    fed->nlinks = p->nmembers;
    fed->links = p->nmembers ? xcalloc((size_t)p->nmembers, sizeof *fed->links)
                             : NULL;
    for (i = 0; i < fed->nlinks; i++) {
        fed->links[i].fed = fed;
        fed->links[i].name = xstrdup(p->members[i]);
        fed->links[i].backoff_ms = FEDLINK_BACKOFF_MIN_MS;
        fed->links[i].state = FEDLINK_IDLE;
    }
    if (fed->nlinks > 0)
        log_info("federation: %d members configured, summaries of up to %d "
                 "peers every %d ms",
                 fed->nlinks, p->summary_max, p->interval_ms);
    return fed;
}

void
federation_free(struct federation *fed)
{
    int i;

    if (fed == NULL)
        return;
    for (i = 0; i < fed->nlinks; i++) {
        if (fed->links[i].ch != NULL)
            channel_close(fed->links[i].ch);
        free(fed->links[i].name);
    }
    free(fed->links);
    summary_free(fed->store);
    free(fed);
}

/* Our own peers, best first: every one of them (the caller frees). */
static void
federation_local(struct federation *fed, uint64_t now_ms,
                 struct msg_list_reply *out)
{
    registry_export(fed->reg, now_ms, out);
    rank_sort(out->peers, out->npeers);
}

/* Send the best of our own peers to every linked member, in parts. */
static void
federation_push(struct federation *fed, uint64_t now_ms)
{
    struct msg_list_reply own;
    struct msg m;
    uint64_t slots = 0;
    size_t n, i, nparts;
    uint32_t part;
    int k, reached = 0;

    federation_local(fed, now_ms, &own);
    for (i = 0; i < own.npeers; i++)
        slots += own.peers[i].res.slots_free;
    n = own.npeers < (size_t)fed->p.summary_max ? own.npeers
                                                 : (size_t)fed->p.summary_max;
    nparts = n == 0 ? 1 : (n + WIRE_FED_PART_ENTRIES - 1) / WIRE_FED_PART_ENTRIES;
    fed->seq++;
    memset(&m, 0, sizeof m);
    m.type = MSG_FED_SUMMARY;
    memcpy(m.u.fed.instance, fed->instance, sizeof m.u.fed.instance);
    m.u.fed.seq = fed->seq;
    m.u.fed.nparts = (uint32_t)nparts;
    m.u.fed.total_peers = (uint32_t)own.npeers;
    m.u.fed.total_slots_free = slots;
    snprintf(m.u.fed.addr, sizeof m.u.fed.addr, "%s", fed->p.listen_addr);
    for (k = 0; k < fed->nlinks; k++) {
        struct fedlink *l = &fed->links[k];

        /* A member that does not read does not get more queued. */
        if (l->state != FEDLINK_UP ||
            channel_output_len(l->ch) > CHANNEL_DRAIN_LOW)
            continue;
        for (part = 0; part < nparts; part++) {
            m.u.fed.part = part;
            /* No peers: one empty part (and no offset on a NULL array). */
            m.u.fed.peers = n == 0 ? NULL
                                   : own.peers + (size_t)part *
                                                     WIRE_FED_PART_ENTRIES;
            m.u.fed.npeers = n - (size_t)part * WIRE_FED_PART_ENTRIES;
            if (m.u.fed.npeers > WIRE_FED_PART_ENTRIES)
                m.u.fed.npeers = WIRE_FED_PART_ENTRIES;
            channel_send(l->ch, &m);
        }
        reached = 1;
    }
    fed->sent += (uint64_t)reached;
    free(own.peers);
}

void
federation_cron(struct federation *fed, uint64_t now_ms)
{
    uint64_t gen, refresh;
    int i;

    for (i = 0; i < fed->nlinks; i++)
        if (fed->links[i].state == FEDLINK_IDLE &&
            now_ms >= fed->links[i].retry_ms)
            fedlink_connect(&fed->links[i], now_ms);

    summary_expire(fed->store,
                   now_ms > (uint64_t)fed->p.expire_s * 1000u
                       ? now_ms - (uint64_t)fed->p.expire_s * 1000u
                       : 0);

    if (fed->nlinks == 0 || now_ms < fed->next_push_ms)
        return;
    gen = registry_generation(fed->reg);
    refresh = (uint64_t)fed->p.expire_s * 1000u / 3;
    if (refresh > (uint64_t)fed->p.interval_ms * FED_REFRESH_INTERVALS)
        refresh = (uint64_t)fed->p.interval_ms * FED_REFRESH_INTERVALS;
    if (gen == fed->sent_gen && now_ms - fed->last_push_ms < refresh)
        return;
    federation_push(fed, now_ms);
    fed->sent_gen = gen;
    fed->last_push_ms = now_ms;
    fed->next_push_ms = now_ms + (uint64_t)fed->p.interval_ms;
}

int
federation_receive(struct federation *fed, const struct msg_fed_summary *m,
                   uint64_t now_ms, char *err, size_t errlen)
{
    if (memcmp(m->instance, fed->instance, sizeof fed->instance) == 0)
        return 1;
    return summary_apply(fed->store, m, now_ms, err, errlen);
}

void
federation_list(struct federation *fed, int local_only, uint64_t now_ms,
                struct msg_list_reply *out)
{
    size_t own;

    registry_export(fed->reg, now_ms, out);
    own = out->npeers;
    if (!local_only) {
        summary_append(fed->store, now_ms, &out->peers, &out->npeers);
        /* A peer registered with two supernodes, or one that moved, is
         * listed once, as last heard (the registry alone holds each
         * once: no summary, nothing to sort out). */
        if (out->npeers > own)
            out->npeers = rank_dedup(out->peers, out->npeers);
    }
    rank_sort(out->peers, out->npeers);
    if (out->npeers > (size_t)fed->p.list_max)
        out->npeers = (size_t)fed->p.list_max;
}

size_t
federation_remote_count(const struct federation *fed)
{
    return summary_distinct(fed->store);
}

uint64_t
federation_summaries_sent(const struct federation *fed)
{
    return fed->sent;
}

void
federation_remote_walk(const struct federation *fed, uint64_t now_ms,
                       summary_walk_fn fn, void *arg)
{
    summary_walk(fed->store, now_ms, fn, arg);
}
