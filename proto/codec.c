/*
 * Conversion between our message structs and protobuf-c, with validation
 * of everything that arrives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "p2p.pb-c.h"
#include "xmalloc.h"

const char *
msg_type_name(enum msg_type t)
{
    static const char *names[] = {
        "none",          "register",   "register-ack", "heartbeat",
        "heartbeat-ack", "unregister", "ping",         "pong",
        "list-request",  "list-reply", "error",
    };

    if ((size_t)t >= sizeof names / sizeof names[0])
        return "?";
    return names[t];
}

const char *
peer_state_name(enum peer_state s)
{
    switch (s) {
    case PEER_STATE_AVAILABLE:
        return "available";
    case PEER_STATE_BUSY:
        return "busy";
    case PEER_STATE_FULL:
        return "full";
    case PEER_STATE_NOT_SHARING:
        return "not-sharing";
    case PEER_STATE_UNKNOWN:
        break;
    }
    return "unknown";
}

int
codec_valid_token(const char *s, size_t max)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++)
        if (n >= max || s[n] <= ' ' || s[n] > '~')
            return 0;
    return n > 0;
}

/* Printable text, spaces allowed, possibly empty. */
static int
codec_valid_text(const char *s, size_t max)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++)
        if (n >= max || s[n] < ' ' || s[n] > '~')
            return 0;
    return 1;
}

/* --- encoding ---------------------------------------------------------- */

static void
res_to_pb(const struct resources *r, P2p__Resources *pb)
{
    p2p__resources__init(pb);
    pb->cores = r->cores;
    pb->mem_total = r->mem_total;
    pb->mem_free = r->mem_free;
    pb->load_milli = r->load_milli;
    pb->slots_total = r->slots_total;
    pb->slots_free = r->slots_free;
    pb->state = (P2p__PeerState)r->state;
}

int
codec_encode(const struct msg *m, uint8_t **out, size_t *len)
{
    P2p__Message pb = P2P__MESSAGE__INIT;
    P2p__Register reg = P2P__REGISTER__INIT;
    P2p__RegisterAck ack = P2P__REGISTER_ACK__INIT;
    P2p__Heartbeat hb = P2P__HEARTBEAT__INIT;
    P2p__HeartbeatAck hback = P2P__HEARTBEAT_ACK__INIT;
    P2p__Unregister unreg = P2P__UNREGISTER__INIT;
    P2p__Ping ping = P2P__PING__INIT;
    P2p__Pong pong = P2P__PONG__INIT;
    P2p__ListRequest lreq = P2P__LIST_REQUEST__INIT;
    P2p__ListReply lrep = P2P__LIST_REPLY__INIT;
    P2p__Error error = P2P__ERROR__INIT;
    P2p__Resources res;
    P2p__PeerEntry *entries = NULL, **entryp = NULL;
    P2p__Resources *eres = NULL;
    size_t i, n;

    switch (m->type) {
    case MSG_REGISTER:
        reg.node_key.data = (uint8_t *)m->u.reg.node_key;
        reg.node_key.len = sizeof m->u.reg.node_key;
        reg.signature.data = (uint8_t *)m->u.reg.signature;
        reg.signature.len = sizeof m->u.reg.signature;
        reg.host_label = (char *)m->u.reg.host_label;
        reg.addr = (char *)m->u.reg.addr;
        reg.version = (char *)m->u.reg.version;
        res_to_pb(&m->u.reg.res, &res);
        reg.res = &res;
        pb.body_case = P2P__MESSAGE__BODY_REG;
        pb.reg = &reg;
        break;
    case MSG_REGISTER_ACK:
        ack.heartbeat_ms = m->u.reg_ack.heartbeat_ms;
        ack.expire_ms = m->u.reg_ack.expire_ms;
        pb.body_case = P2P__MESSAGE__BODY_REG_ACK;
        pb.reg_ack = &ack;
        break;
    case MSG_HEARTBEAT:
        res_to_pb(&m->u.heartbeat, &res);
        hb.res = &res;
        pb.body_case = P2P__MESSAGE__BODY_HEARTBEAT;
        pb.heartbeat = &hb;
        break;
    case MSG_HEARTBEAT_ACK:
        pb.body_case = P2P__MESSAGE__BODY_HEARTBEAT_ACK;
        pb.heartbeat_ack = &hback;
        break;
    case MSG_UNREGISTER:
        pb.body_case = P2P__MESSAGE__BODY_UNREG;
        pb.unreg = &unreg;
        break;
    case MSG_PING:
        ping.stamp = m->u.stamp;
        pb.body_case = P2P__MESSAGE__BODY_PING;
        pb.ping = &ping;
        break;
    case MSG_PONG:
        pong.stamp = m->u.stamp;
        pb.body_case = P2P__MESSAGE__BODY_PONG;
        pb.pong = &pong;
        break;
    case MSG_LIST_REQUEST:
        pb.body_case = P2P__MESSAGE__BODY_LIST_REQ;
        pb.list_req = &lreq;
        break;
    case MSG_LIST_REPLY:
        n = m->u.list.npeers;
        if (n > 0) {
            entries = xcalloc(n, sizeof *entries);
            entryp = xcalloc(n, sizeof *entryp);
            eres = xcalloc(n, sizeof *eres);
        }
        for (i = 0; i < n; i++) {
            const struct peer_entry *pe = &m->u.list.peers[i];

            p2p__peer_entry__init(&entries[i]);
            entries[i].id.data = (uint8_t *)pe->id;
            entries[i].id.len = sizeof pe->id;
            entries[i].host_label = (char *)pe->host_label;
            entries[i].addr = (char *)pe->addr;
            res_to_pb(&pe->res, &eres[i]);
            entries[i].res = &eres[i];
            entries[i].rtt_us = pe->rtt_us;
            entries[i].age_ms = pe->age_ms;
            entryp[i] = &entries[i];
        }
        lrep.n_peers = n;
        lrep.peers = entryp;
        pb.body_case = P2P__MESSAGE__BODY_LIST_REPLY;
        pb.list_reply = &lrep;
        break;
    case MSG_ERROR:
        error.code = m->u.error.code;
        error.text = (char *)m->u.error.text;
        pb.body_case = P2P__MESSAGE__BODY_ERROR;
        pb.error = &error;
        break;
    default:
        return -1;
    }
    *len = p2p__message__get_packed_size(&pb);
    /* A message with every field at its default packs to a few bytes; keep
     * at least one so that the buffer is never a zero-size allocation. */
    *out = xmalloc(*len > 0 ? *len : 1);
    p2p__message__pack(&pb, *out);
    free(entries);
    free(entryp);
    free(eres);
    return 0;
}

/* --- decoding ---------------------------------------------------------- */

static int
res_from_pb(const P2p__Resources *pb, struct resources *r, char *err,
            size_t errlen)
{
    if (pb == NULL) {
        snprintf(err, errlen, "resources missing");
        return -1;
    }
    if (pb->mem_free > pb->mem_total || pb->slots_free > pb->slots_total) {
        snprintf(err, errlen, "resources: free exceeds total");
        return -1;
    }
    if ((int)pb->state < PEER_STATE_UNKNOWN ||
        (int)pb->state > PEER_STATE_NOT_SHARING) {
        snprintf(err, errlen, "resources: unknown state %d", (int)pb->state);
        return -1;
    }
    r->cores = pb->cores;
    r->mem_total = pb->mem_total;
    r->mem_free = pb->mem_free;
    r->load_milli = pb->load_milli;
    r->slots_total = pb->slots_total;
    r->slots_free = pb->slots_free;
    r->state = (enum peer_state)pb->state;
    return 0;
}

/* Copy a validated token into dst[max+1]. */
static int
token_from_pb(const char *src, char *dst, size_t max, int may_be_empty,
              const char *what, char *err, size_t errlen)
{
    if (src == NULL || (src[0] == '\0' && may_be_empty)) {
        dst[0] = '\0';
        return 0;
    }
    if (!codec_valid_token(src, max)) {
        snprintf(err, errlen, "%s: empty, too long or not printable", what);
        return -1;
    }
    snprintf(dst, max + 1, "%s", src);
    return 0;
}

static int
bytes_from_pb(const ProtobufCBinaryData *b, uint8_t *dst, size_t len,
              const char *what, char *err, size_t errlen)
{
    if (b->len != len) {
        snprintf(err, errlen, "%s: %zu bytes, expected %zu", what, b->len, len);
        return -1;
    }
    memcpy(dst, b->data, len);
    return 0;
}

static int
entry_from_pb(const P2p__PeerEntry *e, struct peer_entry *pe, char *err,
              size_t errlen)
{
    if (bytes_from_pb(&e->id, pe->id, sizeof pe->id, "peer id", err,
                      errlen) == -1 ||
        token_from_pb(e->host_label, pe->host_label, WIRE_MAX_LABEL, 0,
                      "host label", err, errlen) == -1 ||
        token_from_pb(e->addr, pe->addr, WIRE_MAX_ADDR, 0, "address", err,
                      errlen) == -1 ||
        res_from_pb(e->res, &pe->res, err, errlen) == -1)
        return -1;
    pe->rtt_us = e->rtt_us;
    pe->age_ms = e->age_ms;
    return 0;
}

static int
decode_body(const P2p__Message *pb, struct msg *m, char *err, size_t errlen)
{
    const P2p__Register *reg;
    struct peer_entry tmp;
    size_t i;

    switch (pb->body_case) {
    case P2P__MESSAGE__BODY_REG:
        reg = pb->reg;
        m->type = MSG_REGISTER;
        if (bytes_from_pb(&reg->node_key, m->u.reg.node_key,
                          sizeof m->u.reg.node_key, "node key", err,
                          errlen) == -1 ||
            bytes_from_pb(&reg->signature, m->u.reg.signature,
                          sizeof m->u.reg.signature, "signature", err,
                          errlen) == -1 ||
            token_from_pb(reg->host_label, m->u.reg.host_label, WIRE_MAX_LABEL,
                          0, "host label", err, errlen) == -1 ||
            token_from_pb(reg->addr, m->u.reg.addr, WIRE_MAX_ADDR, 0, "address",
                          err, errlen) == -1 ||
            token_from_pb(reg->version, m->u.reg.version, WIRE_MAX_LABEL, 1,
                          "version", err, errlen) == -1)
            return -1;
        return res_from_pb(reg->res, &m->u.reg.res, err, errlen);
    case P2P__MESSAGE__BODY_REG_ACK:
        m->type = MSG_REGISTER_ACK;
        m->u.reg_ack.heartbeat_ms = pb->reg_ack->heartbeat_ms;
        m->u.reg_ack.expire_ms = pb->reg_ack->expire_ms;
        return 0;
    case P2P__MESSAGE__BODY_HEARTBEAT:
        m->type = MSG_HEARTBEAT;
        return res_from_pb(pb->heartbeat->res, &m->u.heartbeat, err, errlen);
    case P2P__MESSAGE__BODY_HEARTBEAT_ACK:
        m->type = MSG_HEARTBEAT_ACK;
        return 0;
    case P2P__MESSAGE__BODY_UNREG:
        m->type = MSG_UNREGISTER;
        return 0;
    case P2P__MESSAGE__BODY_PING:
        m->type = MSG_PING;
        m->u.stamp = pb->ping->stamp;
        return 0;
    case P2P__MESSAGE__BODY_PONG:
        m->type = MSG_PONG;
        m->u.stamp = pb->pong->stamp;
        return 0;
    case P2P__MESSAGE__BODY_LIST_REQ:
        m->type = MSG_LIST_REQUEST;
        return 0;
    case P2P__MESSAGE__BODY_LIST_REPLY:
        m->type = MSG_LIST_REPLY;
        m->u.list.npeers = 0;
        m->u.list.peers = NULL;
        /* Validate every entry first: nothing is allocated for a list
         * that will be refused, whatever count it claims. */
        for (i = 0; i < pb->list_reply->n_peers; i++)
            if (entry_from_pb(pb->list_reply->peers[i], &tmp, err, errlen) ==
                -1)
                return -1;
        if (pb->list_reply->n_peers == 0)
            return 0;
        m->u.list.peers =
            xcalloc(pb->list_reply->n_peers, sizeof *m->u.list.peers);
        m->u.list.npeers = pb->list_reply->n_peers;
        for (i = 0; i < pb->list_reply->n_peers; i++)
            entry_from_pb(pb->list_reply->peers[i], &m->u.list.peers[i], err,
                          errlen);
        return 0;
    case P2P__MESSAGE__BODY_ERROR:
        m->type = MSG_ERROR;
        m->u.error.code = pb->error->code;
        if (pb->error->text == NULL ||
            !codec_valid_text(pb->error->text, WIRE_MAX_TEXT)) {
            snprintf(err, errlen, "error text too long or not printable");
            return -1;
        }
        snprintf(m->u.error.text, sizeof m->u.error.text, "%s",
                 pb->error->text);
        return 0;
    case P2P__MESSAGE__BODY__NOT_SET:
    default:
        snprintf(err, errlen, "message without a known body");
        return -1;
    }
}

int
codec_decode(const uint8_t *buf, size_t len, struct msg *m, char *err,
             size_t errlen)
{
    P2p__Message *pb;
    int rc;

    memset(m, 0, sizeof *m);
    if ((pb = p2p__message__unpack(NULL, len, buf)) == NULL) {
        snprintf(err, errlen, "undecodable message");
        return -1;
    }
    rc = decode_body(pb, m, err, errlen);
    p2p__message__free_unpacked(pb, NULL);
    if (rc == -1) {
        codec_msg_free(m);
        memset(m, 0, sizeof *m);
    }
    return rc;
}

void
codec_msg_free(struct msg *m)
{
    if (m == NULL)
        return;
    if (m->type == MSG_LIST_REPLY) {
        free(m->u.list.peers);
        m->u.list.peers = NULL;
        m->u.list.npeers = 0;
    }
}
