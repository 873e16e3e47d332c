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
#include <unistd.h>

#include "channel.h"
#include "listener.h"
#include "log.h"
#include "monotime.h"
#include "netaddr.h"
#include "supernode.h"
#include "xmalloc.h"

#define SESSION_CLIENT_IDLE_MS 30000

enum session_state {
    SESS_HANDSHAKE, /* channel not yet authenticated */
    SESS_OPEN,      /* authenticated, no request yet */
    SESS_PEER,      /* a registered peer: heartbeats, pongs */
    SESS_CLIENT,    /* a tool asking for lists (mpihost, p2prun) */
};

static const char *session_state_names[] = {
    "handshake",
    "open",
    "peer",
    "client",
};

struct session {
    struct server *srv;
    struct channel *ch;
    enum session_state state;
    struct reg_peer *peer; /* SESS_PEER */
    uint64_t ping_stamp;   /* outstanding probe, 0 when none */
    uint64_t next_ping_ms;
    TAILQ_ENTRY(session) entry;
};

struct server {
    struct event_base *base;
    struct listener *listener;
    struct server_params p;
    struct registry *reg;
    TAILQ_HEAD(, session) sessions;
    int nsessions, npreauth;
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
        s->srv->npreauth--;
    s->state = st;
}

/* Forget a session whose channel is already closed or closing. */
static void
session_free(struct session *s)
{
    struct server *srv = s->srv;

    if (s->state == SESS_HANDSHAKE)
        srv->npreauth--;
    if (s->peer != NULL) {
        log_info("peer %s (%s) left", reg_peer_label(s->peer),
                 reg_peer_addr(s->peer));
        registry_remove(srv->reg, s->peer);
    }
    TAILQ_REMOVE(&srv->sessions, s, entry);
    srv->nsessions--;
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
    if (netaddr_parse(reported, 0, &na, err, sizeof err) == -1 ||
        !netaddr_is_any(&na))
        return;
    port = netaddr_port(&na);
    netaddr_format(channel_peer_addr(s->ch), host, sizeof host);
    memset(&na, 0, sizeof na);
    if (netaddr_parse(host, 0, &na, err, sizeof err) == 0) {
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

static void
session_register(struct session *s, const struct msg_register *reg)
{
    struct server *srv = s->srv;
    struct msg ack;
    uint8_t signed_buf[16 + SEC_HASH_LEN];
    char addr[WIRE_MAX_ADDR + 1], idhex[17];
    void *old;

    /* The signature binds the node key to this very connection. */
    memcpy(signed_buf, "p2p-register\0\0\0\0", 16);
    memcpy(signed_buf + 16, channel_session_id(s->ch), SEC_HASH_LEN);
    if (sec_verify(reg->signature, signed_buf, sizeof signed_buf,
                   reg->node_key) == -1) {
        session_violation(s, "registration signature does not verify");
        return;
    }
    session_peer_addr(s, reg->addr, addr, sizeof addr);
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

static void
session_list(struct session *s)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_LIST_REPLY;
    registry_export(s->srv->reg, monotime_ms(), &m.u.list);
    channel_send(s->ch, &m);
    free(m.u.list.peers);
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

    session_set_state(s, SESS_OPEN);
    channel_set_idle(ch, SESSION_CLIENT_IDLE_MS);
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
        session_list(s);
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
    case MSG_UNREGISTER:
        if (s->state != SESS_PEER)
            break;
        log_info("peer %s unregistered", reg_peer_label(s->peer));
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

    /* Limits first: a flood of unauthenticated connections must not
     * crowd out the peers that are already registered. */
    if (srv->nsessions >= srv->p.max_sessions ||
        srv->npreauth >= srv->p.max_preauth) {
        if (srv->refused++ % 1000 == 0)
            log_warnx("connection limit reached (%d open, %d in handshake); "
                      "refusing (%llu so far)",
                      srv->nsessions, srv->npreauth,
                      (unsigned long long)srv->refused);
        close(fd);
        return;
    }
    s = xcalloc(1, sizeof *s);
    s->srv = srv;
    s->state = SESS_HANDSHAKE;
    group_params(&srv->p.group, FRAME_MAX_REQUEST, 0, &cp);
    s->ch = channel_accept(srv->base, fd, &cp, &session_cbs, s);
    if (s->ch == NULL) {
        free(s);
        return;
    }
    TAILQ_INSERT_TAIL(&srv->sessions, s, entry);
    srv->nsessions++;
    srv->npreauth++;
}

struct server *
server_new(struct event_base *base, int fd, const struct server_params *p)
{
    struct server *srv;

    srv = xcalloc(1, sizeof *srv);
    srv->base = base;
    srv->p = *p;
    srv->reg = registry_new();
    TAILQ_INIT(&srv->sessions);
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
    s->peer = NULL; /* the registry removes the entry itself */
    channel_close(s->ch);
    session_free(s);
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

    TAILQ_FOREACH(s, &srv->sessions, entry)
    if (s->state == SESS_PEER && now_ms >= s->next_ping_ms)
        session_probe(s, now_ms);
}

size_t
server_peer_count(const struct server *srv)
{
    return registry_count(srv->reg);
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
    registry_free(srv->reg);
    free(srv);
}
