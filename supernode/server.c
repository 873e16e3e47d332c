/*
 * The supernode's connections.  Each accepted connection is a session
 * with an explicit state; a message is handled only in the states that
 * allow it, anything else is a protocol violation that drops the session
 * with one log line.  The registry holds no connection, only the session
 * pointer as an opaque owner.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "channel.h"
#include "listener.h"
#include "log.h"
#include "monotime.h"
#include "netaddr.h"
#include "nodeproof.h"
#include "supernode.h"
#include "xmalloc.h"

#define SESSION_CLIENT_IDLE_MS 30000
/* Registrations whose address is being checked at once, at most. */
#define SERVER_MAX_CHECKS 256

enum session_state {
    SESS_HANDSHAKE, /* channel not yet authenticated */
    SESS_OPEN,      /* authenticated, no request yet */
    SESS_PEER,      /* a registered peer: heartbeats, pongs */
    SESS_CLIENT,    /* a tool asking for lists (mpihost, p2prun) */
    SESS_CHECKING,  /* registration held until its address proves the key */
    SESS_FEDERATION, /* another supernode pushing its summaries */
};

static const char *session_state_names[] = {
    "handshake", "open", "peer", "client", "checking", "federation",
};

struct session {
    struct server *srv;
    struct channel *ch;
    enum session_state state;
    struct reg_peer *peer; /* SESS_PEER */
    uint64_t ping_stamp;   /* outstanding probe, 0 when none */
    uint64_t next_ping_ms;
    /* SESS_CHECKING: the registration, and our connection to its address */
    struct msg_register *reg;
    char reg_addr[WIRE_MAX_ADDR + 1];
    struct channel *check;
    struct event *check_timer;
    TAILQ_ENTRY(session) entry;
};

struct server {
    struct event_base *base;
    struct listener *listener;
    struct admit *admit; /* connections still in their handshake */
    struct server_params p;
    struct registry *reg;
    struct jobview *jobs;       /* the dashboard's: what peers report */
    struct history *history;    /* the dashboard's: the recent past */
    struct federation *fed;
    TAILQ_HEAD(, session) sessions;
    int nsessions; /* authenticated */
    int nchecks;   /* sessions in SESS_CHECKING */
    uint64_t refused; /* connections turned away at the limits */
};

static void session_on_ready(struct channel *, void *);
static void session_on_msg(struct channel *, const struct msg *, void *);
static void session_on_close(struct channel *, const char *, int, void *);

static const struct channel_cbs session_cbs = {
    .on_ready = session_on_ready,
    .on_msg = session_on_msg,
    .on_close = session_on_close,
};

static void
session_set_state(struct session *s, enum session_state st)
{
    log_debug("%s: session %s -> %s", channel_name(s->ch),
              session_state_names[s->state], session_state_names[st]);
    if (s->state == SESS_HANDSHAKE)
        s->srv->nsessions++;
    s->state = st;
}

/* Stop checking a registration's address (no callback follows). */
static void
session_check_end(struct session *s)
{
    if (s->check != NULL)
        channel_close(s->check);
    s->check = NULL;
    if (s->check_timer != NULL)
        event_free(s->check_timer);
    s->check_timer = NULL;
    if (s->reg != NULL)
        s->srv->nchecks--;
    free(s->reg);
    s->reg = NULL;
}

/* A registered peer is about to leave the registry: the dashboard
 * remembers it, and what it ran is lost. */
static void
server_peer_gone(struct server *srv, struct reg_peer *p, const char *why)
{
    uint64_t now = monotime_ms();

    history_peer_gone(srv->history, p, why, now);
    jobview_peer_gone(srv->jobs, reg_peer_id(p), now);
}

/* Forget a session whose channel is already closed or closing. */
static void
session_free(struct session *s)
{
    struct server *srv = s->srv;

    if (s->state != SESS_HANDSHAKE)
        srv->nsessions--;
    session_check_end(s);
    if (s->peer != NULL) {
        log_info("peer %s (%s) left", reg_peer_label(s->peer),
                 reg_peer_addr(s->peer));
        server_peer_gone(srv, s->peer, "left");
        registry_remove(srv->reg, s->peer);
    }
    TAILQ_REMOVE(&srv->sessions, s, entry);
    free(s);
}

/* Drop a misbehaving session: an error for the other side, then close. */
static void
session_violation(struct session *s, const char *why)
{
    channel_reject(s->ch, why);
    session_free(s);
}

/* The address other peers should use: as reported, unless it is a
 * wildcard, in which case the host the connection came from. */
static void
session_peer_addr(struct session *s, const char *reported, char *out,
                  size_t len)
{
    struct netaddr na;
    char err[128], host[NETADDR_STRLEN];
    int port;

    snprintf(out, len, "%s", reported);
    if (netaddr_parse_numeric(reported, 0, &na, err, sizeof err) == -1 ||
        !netaddr_is_any(&na))
        return;
    port = netaddr_port(&na);
    netaddr_format(channel_peer_addr(s->ch), host, sizeof host);
    memset(&na, 0, sizeof na);
    if (netaddr_parse_numeric(host, 0, &na, err, sizeof err) == 0) {
        netaddr_set_port(&na, port);
        snprintf(out, len, "%s", na.text);
    }
}

/* Send a round-trip probe; the peer echoes it at once. */
static void
session_probe(struct session *s, uint64_t now_ms)
{
    struct msg ping;

    memset(&ping, 0, sizeof ping);
    ping.type = MSG_PING;
    s->ping_stamp = ping.u.stamp = monotime_us();
    s->next_ping_ms = now_ms + (uint64_t)s->srv->p.rtt_every_ms;
    channel_send(s->ch, &ping);
}

/* The registration is good (signed, and its address proved the key):
 * list the peer. */
static void
session_accept_peer(struct session *s, const struct msg_register *reg,
                    const char *addr)
{
    struct server *srv = s->srv;
    struct msg ack;
    char idhex[17];
    void *old;

    s->peer = registry_upsert(srv->reg, reg, addr, s, monotime_ms(), &old);
    if (old != NULL) {
        /* The same node registered again (restart, or a new connection
         * before the old one was seen to die): the newer one wins. */
        struct session *prev = old;

        log_info("peer %s re-registered from %s; closing its old session",
                 reg->host_label, channel_name(s->ch));
        prev->peer = NULL;
        channel_close(prev->ch);
        session_free(prev);
    }
    session_set_state(s, SESS_PEER);
    sec_hex(idhex, reg->node_key, 8);
    log_info("peer %s registered: id %s, %s, %u/%u slots, %s", reg->host_label,
             idhex, addr, reg->res.slots_free, reg->res.slots_total,
             channel_name(s->ch));

    memset(&ack, 0, sizeof ack);
    ack.type = MSG_REGISTER_ACK;
    ack.u.reg_ack.heartbeat_ms = (uint32_t)srv->p.heartbeat_ms;
    ack.u.reg_ack.expire_ms = (uint32_t)srv->p.expire_s * 1000u;
    channel_send(s->ch, &ack);
    /* A registered peer is quiet between heartbeats; the registry's expiry
     * decides when silence is too long, the channel only backs it up. */
    channel_set_idle(s->ch, srv->p.expire_s * 2000 + 1000);
    session_probe(s, monotime_ms()); /* measure the round trip at once */
}

/* The registration cannot be listed: tell the peer why, and close. */
static void
session_check_failed(struct session *s, const char *why)
{
    struct msg m;
    char idhex[17];

    sec_hex(idhex, s->reg->node_key, 8);
    log_warnx("%s: registration of %s (id %s) refused: %s does not answer "
              "for its node key: %s",
              channel_name(s->ch), s->reg->host_label, idhex, s->reg_addr,
              why);
    memset(&m, 0, sizeof m);
    m.type = MSG_ERROR;
    m.u.error.code = 2;
    snprintf(m.u.error.text, sizeof m.u.error.text,
             "registration refused: %.64s does not answer for this node "
             "key (%.120s)",
             s->reg_addr, why);
    session_check_end(s);
    channel_close_after(s->ch, &m);
    session_free(s);
}

static void
check_on_ready(struct channel *ch, void *arg)
{
    struct session *s = arg;
    struct msg m;

    nodeproof_challenge(s->reg->node_key, &m);
    channel_send(ch, &m);
}

static void
check_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct session *s = arg;
    struct msg_register *reg;
    char why[160], addr[WIRE_MAX_ADDR + 1];

    if (m->type == MSG_PING) {
        channel_pong(ch, m);
        return;
    }
    if (m->type != MSG_NODE_PROOF) {
        snprintf(why, sizeof why, "answered %.100s instead of a node proof",
                 m->type == MSG_ERROR ? m->u.error.text
                                      : msg_type_name(m->type));
        session_check_failed(s, why);
        return;
    }
    if (nodeproof_check(ch, &m->u.node, s->reg->node_key, why, sizeof why) ==
        -1) {
        session_check_failed(s, why);
        return;
    }
    /* Proved: take the registration over before the check goes. */
    reg = s->reg;
    s->reg = NULL;
    s->srv->nchecks--;
    snprintf(addr, sizeof addr, "%s", s->reg_addr);
    session_check_end(s);
    session_accept_peer(s, reg, addr);
    free(reg);
}

static void
check_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct session *s = arg;

    s->check = NULL;
    session_check_failed(s, reason);
}

static void
check_timeout(evutil_socket_t fd, short what, void *arg)
{
    session_check_failed(arg, "no node proof in time");
}

static const struct channel_cbs check_cbs = {
    .on_ready = check_on_ready,
    .on_msg = check_on_msg,
    .on_close = check_on_close,
};

static void
session_register(struct session *s, const struct msg_register *reg)
{
    struct server *srv = s->srv;
    struct channel_params cp;
    struct netaddr na;
    struct msg m;
    uint8_t signed_buf[16 + SEC_HASH_LEN];
    char addr[WIRE_MAX_ADDR + 1], err[160];
    int ms = srv->p.group.handshake_ms;
    struct timeval tv;

    /* The signature binds the node key to this very connection. */
    memcpy(signed_buf, "p2p-register\0\0\0\0", 16);
    memcpy(signed_buf + 16, channel_session_id(s->ch), SEC_HASH_LEN);
    if (sec_verify(reg->signature, signed_buf, sizeof signed_buf,
                   reg->node_key) == -1) {
        session_violation(s, "registration signature does not verify");
        return;
    }
    session_peer_addr(s, reg->addr, addr, sizeof addr);
    if (!srv->p.check_peers) {
        session_accept_peer(s, reg, addr);
        return;
    }
    /* Whoever holds the group key could register any address: list it
     * only once the node answers there and proves the key it registered
     * (docs/protocol.md, "Registration"). */
    if (srv->nchecks >= SERVER_MAX_CHECKS) {
        memset(&m, 0, sizeof m);
        m.type = MSG_ERROR;
        m.u.error.code = 3;
        snprintf(m.u.error.text, sizeof m.u.error.text,
                 "supernode busy checking registrations; try again");
        channel_close_after(s->ch, &m);
        session_free(s);
        return;
    }
    s->reg = xmalloc(sizeof *s->reg);
    *s->reg = *reg;
    srv->nchecks++;
    snprintf(s->reg_addr, sizeof s->reg_addr, "%s", addr);
    session_set_state(s, SESS_CHECKING);
    /* Numeric only (peerd announces it so): a name to look up would
     * block the supernode on a resolver a key holder may choose. */
    if (netaddr_parse_numeric(addr, 0, &na, err, sizeof err) == -1) {
        session_check_failed(s, err);
        return;
    }
    group_params(&srv->p.group, FRAME_MAX_REQUEST, 0, &cp);
    if ((s->check = channel_connect(srv->base, &na, NULL, &cp, &check_cbs,
                                    s)) == NULL) {
        session_check_failed(s, "cannot create a socket");
        return;
    }
    /* The channel bounds connect and handshake; this, the whole check. */
    s->check_timer = evtimer_new(srv->base, check_timeout, s);
    ms += 1000;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    evtimer_add(s->check_timer, &tv);
}

static void
session_list(struct session *s, int list_jobs, int local_only)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_LIST_REPLY;
    federation_list(s->srv->fed, local_only, monotime_ms(), &m.u.list);
    if (list_jobs)
        jobview_export(s->srv->jobs, JOBVIEW_EXPORT_MAX_PROCS, &m.u.list.jobs,
                       &m.u.list.njobs);
    channel_send(s->ch, &m);
    free(m.u.list.peers);
    codec_jobs_free(m.u.list.jobs, m.u.list.njobs);
}

static void
session_pong(struct session *s, uint64_t stamp)
{
    uint64_t now = monotime_us();

    /* Only the probe we sent counts: a forged or stale stamp is ignored. */
    if (s->ping_stamp == 0 || stamp != s->ping_stamp || now < stamp)
        return;
    s->ping_stamp = 0;
    registry_rtt_sample(
        s->peer,
        (uint32_t)(now - stamp > UINT32_MAX ? UINT32_MAX : now - stamp));
}

static void
session_on_ready(struct channel *ch, void *arg)
{
    struct session *s = arg;

    if (s->srv->nsessions >= s->srv->p.max_sessions) {
        /* Authenticated, but we are full: say so rather than hang. */
        if (s->srv->refused++ % 1000 == 0)
            log_warnx("session limit reached (%d open); refusing "
                      "(%llu so far)",
                      s->srv->nsessions, (unsigned long long)s->srv->refused);
        channel_reject(ch, "supernode full: too many sessions");
        session_free(s);
        return;
    }
    session_set_state(s, SESS_OPEN);
    channel_set_idle(ch, SESSION_CLIENT_IDLE_MS);
}

/* A part of another supernode's summary. */
static void
session_fed_summary(struct session *s, const struct msg_fed_summary *f)
{
    char why[200], err[160];
    struct msg m;
    int rc;

    rc = federation_receive(s->srv->fed, f, monotime_ms(), err, sizeof err);
    if (rc == 1) {
        /* Our own summary came back: the member list names us. */
        memset(&m, 0, sizeof m);
        m.type = MSG_ERROR;
        m.u.error.code = WIRE_ERR_FED_SELF;
        snprintf(m.u.error.text, sizeof m.u.error.text,
                 "federation: this is the sender itself");
        channel_close_after(s->ch, &m);
        session_free(s);
        return;
    }
    if (rc == -1) {
        snprintf(why, sizeof why, "federation summary refused: %s", err);
        session_violation(s, why); /* logs it */
        return;
    }
    if (s->state == SESS_OPEN) {
        session_set_state(s, SESS_FEDERATION);
        /* A summary comes at least every third of the expiry; its
         * contents are forgotten after the expiry (summary_expire), the
         * session itself is closed after twice the expiry and a second
         * of silence, as a peer's: the summary lapses first. */
        channel_set_idle(s->ch, s->srv->p.expire_s * 2000 + 1000);
    }
}

static void
session_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct session *s = arg;
    struct msg reply;
    char why[96];

    memset(&reply, 0, sizeof reply);
    switch (m->type) {
    case MSG_PING: /* anyone may measure us */
        channel_pong(ch, m);
        return;
    case MSG_LIST_REQUEST:
        if (s->state == SESS_OPEN)
            session_set_state(s, SESS_CLIENT);
        session_list(s, m->u.list_req.jobs, m->u.list_req.local);
        return;
    case MSG_FED_SUMMARY:
        if (s->state != SESS_OPEN && s->state != SESS_FEDERATION)
            break;
        session_fed_summary(s, &m->u.fed);
        return;
    case MSG_REGISTER:
        if (s->state != SESS_OPEN)
            break;
        session_register(s, &m->u.reg);
        return;
    case MSG_HEARTBEAT:
        if (s->state != SESS_PEER)
            break;
        registry_heartbeat(s->srv->reg, s->peer, &m->u.heartbeat,
                           monotime_ms());
        reply.type = MSG_HEARTBEAT_ACK;
        channel_send(ch, &reply);
        return;
    case MSG_PONG:
        if (s->state != SESS_PEER)
            break;
        session_pong(s, m->u.stamp);
        return;
    case MSG_JOB_NOTE:
        if (s->state == SESS_OPEN)
            session_set_state(s, SESS_CLIENT);
        if (s->state != SESS_CLIENT)
            break;
        (void)jobview_note(s->srv->jobs, &m->u.jnote);
        return;
    case MSG_JOB_REPORT:
        if (s->state != SESS_PEER)
            break;
        jobview_report(s->srv->jobs, reg_peer_id(s->peer),
                       reg_peer_label(s->peer), &m->u.report, monotime_ms());
        return;
    case MSG_UNREGISTER:
        if (s->state != SESS_PEER)
            break;
        log_info("peer %s unregistered", reg_peer_label(s->peer));
        server_peer_gone(s->srv, s->peer, "unregistered");
        registry_remove(s->srv->reg, s->peer);
        s->peer = NULL;
        channel_close(ch);
        session_free(s);
        return;
    default:
        break;
    }
    snprintf(why, sizeof why, "%s not allowed in state %s",
             msg_type_name(m->type), session_state_names[s->state]);
    session_violation(s, why);
}

static void
session_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct session *s = arg;

    if (s->peer != NULL && !fault)
        log_info("peer %s: connection closed", reg_peer_label(s->peer));
    session_free(s);
}

static void
server_accept(int fd, void *arg)
{
    struct server *srv = arg;
    struct channel_params cp;
    struct session *s;

    /* Unauthenticated connections are admitted by their own rules (a
     * share per address, the oldest pushed out when full: admit.h), so
     * that a flood can neither crowd out the registered peers nor keep
     * new ones from registering.  The session is listed before the
     * channel exists: making room may close older sessions. */
    s = xcalloc(1, sizeof *s);
    s->srv = srv;
    s->state = SESS_HANDSHAKE;
    TAILQ_INSERT_TAIL(&srv->sessions, s, entry);
    group_params(&srv->p.group, FRAME_MAX_REQUEST, 0, &cp);
    s->ch = admit_accept(srv->admit, fd, &cp, &session_cbs, s);
    if (s->ch == NULL) {
        TAILQ_REMOVE(&srv->sessions, s, entry);
        free(s);
    }
}

struct server *
server_new(struct event_base *base, int fd, const struct server_params *p)
{
    struct admit_params ap;
    struct server *srv;

    srv = xcalloc(1, sizeof *srv);
    srv->base = base;
    srv->p = *p;
    srv->reg = registry_new();
    srv->jobs = jobview_new();
    srv->history = history_new();
    srv->fed = federation_new(base, &p->fed, srv->reg);
    TAILQ_INIT(&srv->sessions);
    ap.max = p->max_preauth;
    ap.per_source = p->preauth_per_host;
    srv->admit = admit_new(base, &ap);
    srv->listener = listener_new(base, fd, server_accept, srv);
    return srv;
}

static void
server_expired(struct reg_peer *p, void *owner, void *arg)
{
    struct session *s = owner;
    struct server *srv = arg;

    log_info("peer %s (%s) expired: silent for more than %d s",
             reg_peer_label(p), reg_peer_addr(p), srv->p.expire_s);
    server_peer_gone(srv, p, "expired");
    s->peer = NULL; /* the registry removes the entry itself */
    channel_close(s->ch);
    session_free(s);
}

static void
server_sample_peer(const struct reg_peer *p, void *arg)
{
    struct history_sample *hs = arg;
    const struct resources *res = reg_peer_res(p);

    hs->slots_total += res->slots_total;
    hs->slots_used += res->slots_total - res->slots_free;
}

/* One point of the dashboard's chart. */
static void
server_sample(struct server *srv, uint64_t now_ms)
{
    struct history_sample hs;

    memset(&hs, 0, sizeof hs);
    hs.t = (uint64_t)time(NULL);
    hs.peers = (uint32_t)registry_count(srv->reg);
    hs.jobs = (uint32_t)jobview_count(srv->jobs);
    registry_walk(srv->reg, server_sample_peer, &hs);
    history_add(srv->history, &hs, now_ms);
}

void
server_cron(struct server *srv, uint64_t now_ms)
{
    struct session *s;
    uint64_t cutoff;

    cutoff = now_ms > (uint64_t)srv->p.expire_s * 1000u
                 ? now_ms - (uint64_t)srv->p.expire_s * 1000u
                 : 0;
    registry_expire(srv->reg, cutoff, server_expired, srv);
    jobview_cron(srv->jobs, now_ms);
    if (history_due(srv->history, now_ms))
        server_sample(srv, now_ms);
    federation_cron(srv->fed, now_ms);

    TAILQ_FOREACH(s, &srv->sessions, entry)
    if (s->state == SESS_PEER && now_ms >= s->next_ping_ms)
        session_probe(s, now_ms);
}

size_t
server_peer_count(const struct server *srv)
{
    return registry_count(srv->reg);
}

size_t
server_remote_peer_count(const struct server *srv)
{
    return federation_remote_count(srv->fed);
}

uint64_t
server_summaries_sent(const struct server *srv)
{
    return federation_summaries_sent(srv->fed);
}

void
server_remote_walk(const struct server *srv, uint64_t now_ms,
                   summary_walk_fn fn, void *arg)
{
    federation_remote_walk(srv->fed, now_ms, fn, arg);
}

struct registry *
server_registry(const struct server *srv)
{
    return srv->reg;
}

struct jobview *
server_jobview(const struct server *srv)
{
    return srv->jobs;
}

struct history *
server_history(const struct server *srv)
{
    return srv->history;
}

int
server_expire_s(const struct server *srv)
{
    return srv->p.expire_s;
}

void
server_free(struct server *srv)
{
    struct session *s;

    if (srv == NULL)
        return;
    listener_free(srv->listener);
    while ((s = TAILQ_FIRST(&srv->sessions)) != NULL) {
        s->peer = NULL;
        channel_close(s->ch);
        session_free(s);
    }
    admit_free(srv->admit);
    federation_free(srv->fed);
    registry_free(srv->reg);
    jobview_free(srv->jobs);
    history_free(srv->history);
    free(srv);
}
