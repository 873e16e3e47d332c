/*
 * A peer's link to one supernode: connect, register (signed with the node
 * key over the channel's session id), heartbeat, and start again with a
 * growing, jittered back-off whenever the supernode goes away or stops
 * answering.  Which links run is directory.c's choice: a link is started
 * and stopped, and reports whether it is up or failing.
 */
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

#define LINK_BACKOFF_MIN_MS 200
#define LINK_BACKOFF_MAX_MS 2000
/* Heartbeats unanswered before the supernode is taken for gone. */
#define LINK_MISSED_MAX 3

enum link_state {
    LINK_IDLE,        /* waiting out the back-off */
    LINK_CONNECTING,  /* connect and handshake under way */
    LINK_REGISTERING, /* registration sent, waiting for the ack */
    LINK_UP,          /* registered: heartbeating */
    LINK_DOWN,        /* not started, or stopped */
};

static const char *link_state_names[] = {
    "idle", "connecting", "registering", "up", "down",
};

struct link {
    struct peerd *pd;
    char *name;
    struct netaddr addr;
    int addr_ok;
    struct channel *ch;
    enum link_state state;
    struct event *timer; /* back-off, or the heartbeat tick */
    int backoff_ms;
    int heartbeat_ms;
    uint64_t last_ack_ms;
    int failures; /* consecutive, to keep the log quiet while one is down */
    struct report *report; /* what we run, as last told this supernode */
    int bad;      /* failed since it was last registered (or started) */
};

static void link_on_ready(struct channel *, void *);
static void link_on_msg(struct channel *, const struct msg *, void *);
static void link_on_close(struct channel *, const char *, int, void *);

static const struct channel_cbs link_cbs = {
    .on_ready = link_on_ready,
    .on_msg = link_on_msg,
    .on_close = link_on_close,
};

static void
link_set_state(struct link *l, enum link_state st)
{
    log_debug("supernode %s: %s -> %s", l->name, link_state_names[l->state],
              link_state_names[st]);
    l->state = st;
}

static void
link_arm(struct link *l, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    evtimer_add(l->timer, &tv);
}

/* Wait, then try again; the wait doubles up to a cap, with jitter so that
 * a whole lab does not reconnect in the same millisecond. */
static void
link_retry(struct link *l)
{
    uint32_t jitter;
    int wait;

    l->ch = NULL;
    link_set_state(l, LINK_IDLE);
    sec_random(&jitter, sizeof jitter);
    wait = l->backoff_ms * 3 / 4 +
           (int)(jitter % (uint32_t)(l->backoff_ms / 2 + 1));
    l->backoff_ms = l->backoff_ms * 2 > LINK_BACKOFF_MAX_MS
                        ? LINK_BACKOFF_MAX_MS
                        : l->backoff_ms * 2;
    link_arm(l, wait);
}

static void
link_failed(struct link *l, const char *why)
{
    l->bad = 1;
    if (l->state == LINK_UP)
        log_warnx("supernode %s lost: %s; reconnecting", l->name, why);
    else if (l->failures++ == 0)
        log_warnx("supernode %s: %s; will keep trying", l->name, why);
    else
        log_debug("supernode %s: %s", l->name, why);
    link_retry(l);
}

static void
link_connect(struct link *l)
{
    struct channel_params cp;
    char err[160];

    if (!l->addr_ok) {
        /* Names may resolve later (DNS, or the network coming up). */
        if (netaddr_parse(l->name, CONF_DEFAULT_SUPERNODE_PORT, &l->addr, err,
                          sizeof err) == -1) {
            link_failed(l, err);
            return;
        }
        l->addr_ok = 1;
    }
    group_params(&l->pd->group, FRAME_MAX_REQUEST, 0, &cp);
    l->ch = channel_connect(l->pd->base, &l->addr, l->pd->source, &cp,
                            &link_cbs, l);
    if (l->ch == NULL) {
        link_failed(l, "cannot create a socket");
        return;
    }
    link_set_state(l, LINK_CONNECTING);
}

/* Tell the supernode what we have now. */
static void
link_send_heartbeat(struct link *l)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_HEARTBEAT;
    resources_probe(&m.u.heartbeat, (uint32_t)l->pd->slots_total,
                    reserve_free(l->pd));
    if (l->pd->owner != NULL && owner_peer_state(l->pd) != PEER_STATE_UNKNOWN)
        m.u.heartbeat.state = (enum peer_state)owner_peer_state(l->pd);
    channel_send(l->ch, &m);
    if (report_due(l->report, l->pd, monotime_ms(), &m))
        channel_send(l->ch, &m);
}

static void
link_heartbeat(struct link *l)
{
    uint64_t now = monotime_ms();

    if (now - l->last_ack_ms >
        (uint64_t)l->heartbeat_ms * (LINK_MISSED_MAX + 1)) {
        channel_close(l->ch);
        link_failed(l, "no heartbeat answered for too long");
        return;
    }
    link_send_heartbeat(l);
    link_arm(l, l->heartbeat_ms);
}

void
link_announce(struct peerd *pd)
{
    int i;

    /* Slots changed: every supernode hears of it now, not at the next
     * beat, so that the next job is placed on what is really free. */
    for (i = 0; i < pd->nlinks; i++)
        if (pd->links[i]->state == LINK_UP)
            link_send_heartbeat(pd->links[i]);
}

void
link_report_now(struct peerd *pd)
{
    struct msg m;
    int i;

    /* A job ends here: its last state (exit statuses) is told before it
     * is forgotten, not lost between two beats. */
    for (i = 0; i < pd->nlinks; i++)
        if (pd->links[i]->state == LINK_UP &&
            report_due(pd->links[i]->report, pd, monotime_ms(), &m))
            channel_send(pd->links[i]->ch, &m);
}

static void
link_timer(evutil_socket_t fd, short what, void *arg)
{
    struct link *l = arg;

    if (l->state == LINK_IDLE)
        link_connect(l);
    else if (l->state == LINK_UP)
        link_heartbeat(l);
}

static void
link_on_ready(struct channel *ch, void *arg)
{
    struct link *l = arg;
    struct peerd *pd = l->pd;
    struct msg m;
    uint8_t signed_buf[16 + SEC_HASH_LEN];

    memset(&m, 0, sizeof m);
    m.type = MSG_REGISTER;
    memcpy(m.u.reg.node_key, pd->node_pk, sizeof m.u.reg.node_key);
    memcpy(signed_buf, "p2p-register\0\0\0\0", 16);
    memcpy(signed_buf + 16, channel_session_id(ch), SEC_HASH_LEN);
    sec_sign(m.u.reg.signature, signed_buf, sizeof signed_buf, pd->node_sk);
    snprintf(m.u.reg.host_label, sizeof m.u.reg.host_label, "%s",
             pd->host_label);
    snprintf(m.u.reg.addr, sizeof m.u.reg.addr, "%s", pd->listen_addr.text);
    snprintf(m.u.reg.version, sizeof m.u.reg.version, "%s", P2P_VERSION);
    resources_probe(&m.u.reg.res, (uint32_t)pd->slots_total, reserve_free(pd));
    if (pd->owner != NULL && owner_peer_state(pd) != PEER_STATE_UNKNOWN)
        m.u.reg.res.state = (enum peer_state)owner_peer_state(pd);
    resources_describe(&m.u.reg);
    channel_send(ch, &m);
    link_set_state(l, LINK_REGISTERING);
}

static void
link_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct link *l = arg;

    switch (m->type) {
    case MSG_REGISTER_ACK:
        if (l->state != LINK_REGISTERING)
            break;
        l->heartbeat_ms = l->pd->heartbeat_ms;
        if (m->u.reg_ack.heartbeat_ms >= 50 &&
            (int)m->u.reg_ack.heartbeat_ms < l->heartbeat_ms)
            l->heartbeat_ms = (int)m->u.reg_ack.heartbeat_ms;
        l->last_ack_ms = monotime_ms();
        l->backoff_ms = LINK_BACKOFF_MIN_MS;
        l->failures = 0;
        report_reset(l->report); /* a new session knows nothing yet */
        l->bad = 0;
        link_set_state(l, LINK_UP);
        log_info("registered with supernode %s (heartbeat %d ms)", l->name,
                 l->heartbeat_ms);
        link_arm(l, l->heartbeat_ms);
        return;
    case MSG_HEARTBEAT_ACK:
        if (l->state != LINK_UP)
            break;
        l->last_ack_ms = monotime_ms();
        return;
    case MSG_PING:
        channel_pong(ch, m);
        return;
    case MSG_ERROR:
        channel_close(ch);
        evtimer_del(l->timer);
        link_failed(l, m->u.error.text);
        return;
    default:
        break;
    }
    log_warnx("supernode %s: unexpected %s in state %s; reconnecting", l->name,
              msg_type_name(m->type), link_state_names[l->state]);
    channel_close(ch);
    evtimer_del(l->timer);
    link_failed(l, "protocol error");
}

static void
link_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct link *l = arg;

    evtimer_del(l->timer);
    link_failed(l, reason);
}

struct link *
link_new(struct peerd *pd, const char *supernode)
{
    struct link *l;

    l = xcalloc(1, sizeof *l);
    l->pd = pd;
    l->name = xstrdup(supernode);
    l->backoff_ms = LINK_BACKOFF_MIN_MS;
    l->heartbeat_ms = pd->heartbeat_ms;
    l->timer = evtimer_new(pd->base, link_timer, l);
    l->report = report_new();
    l->state = LINK_DOWN;
    return l;
}

void
link_start(struct link *l)
{
    if (l->state != LINK_DOWN)
        return;
    l->backoff_ms = LINK_BACKOFF_MIN_MS;
    l->failures = 0;
    l->bad = 0;
    l->state = LINK_IDLE;
    link_connect(l);
}

int
link_running(const struct link *l)
{
    return l->state != LINK_DOWN;
}

int
link_up(const struct link *l)
{
    return l->state == LINK_UP;
}

int
link_bad(const struct link *l)
{
    return l->state != LINK_DOWN && l->state != LINK_UP && l->bad;
}

const char *
link_name(const struct link *l)
{
    return l->name;
}

void
link_shutdown(struct link *l)
{
    struct msg m;

    evtimer_del(l->timer);
    if (l->ch != NULL) {
        memset(&m, 0, sizeof m);
        m.type = MSG_UNREGISTER;
        if (l->state == LINK_UP) {
            log_info("unregistering from supernode %s", l->name);
            channel_close_after(l->ch, &m);
        } else
            channel_close(l->ch);
        l->ch = NULL;
    }
    link_set_state(l, LINK_DOWN);
}

void
link_free(struct link *l)
{
    if (l == NULL)
        return;
    if (l->state != LINK_DOWN)
        link_shutdown(l);
    event_free(l->timer);
    report_free(l->report);
    free(l->name);
    free(l);
}
