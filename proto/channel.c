/*
 * The channel: a bufferevent, a handshake, and two AEAD keys with their
 * counters.  Bytes are parsed as: fixed header, check against the limit in
 * force, wait for the whole body, open (or run the handshake), decode.
 * Every failure closes the channel; the owner of a connection it made
 * reports why, an accepted one logs it here (throttled by admission).
 */
#include <sys/socket.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "admit.h"
#include "channel.h"
#include "frame.h"
#include "handshake.h"
#include "log.h"
#include "monotime.h"
#include "xmalloc.h"

/* The server's first sealed frame; lets the client tell "wrong key" from
 * "server went away". */
#define WELCOME "p2pmpi welcome"

enum channel_state {
    CH_CONNECTING, /* client: TCP connect in progress */
    CH_HANDSHAKE,  /* handshake messages flowing */
    CH_WELCOME,    /* client: keys ready, waiting for the sealed welcome */
    CH_READY,      /* sealed messages flowing */
    CH_CLOSING,    /* flushing a last message */
    CH_DEAD,       /* waiting for the loop to free it */
};

struct channel {
    enum channel_state state;
    int server;
    struct event_base *base;
    struct bufferevent *bev;
    struct event *deadline; /* handshake, then frame completion, closing */
    struct handshake *hs;
    struct hs_keys keys;
    uint64_t tx_seq, rx_seq;
    uint8_t group_key[SEC_KEY_LEN];
    char *group;
    size_t max_frame;
    int handshake_ms, idle_ms;
    int first_ms;       /* server: deadline of the first frame, 0 none */
    int got_first;      /* server: a whole frame has arrived */
    uint64_t start_ms;  /* when the connection was made */
    struct admit_conn *adm; /* server: still under admission control */
    int frame_pending; /* a started frame is being waited for */
    int connect_errno; /* connect() failed before the loop ran */
    int stalled;       /* the other end stopped reading */
    uint8_t *scratch;  /* plaintext / ciphertext buffer */
    size_t scratch_len;
    struct sockaddr_storage peer;
    char name[NETADDR_STRLEN];
    struct channel_cbs cbs;
    void *arg;
};

static const char *ch_state_names[] = {
    "connecting", "handshake", "welcome", "ready", "closing", "dead",
};

static void ch_read_cb(struct bufferevent *, void *);
static void ch_write_cb(struct bufferevent *, void *);
static void ch_event_cb(struct bufferevent *, short, void *);
static void ch_deadline_cb(evutil_socket_t, short, void *);

static void
ch_set_state(struct channel *ch, enum channel_state s)
{
    log_debug("channel %s: %s -> %s", ch->name, ch_state_names[ch->state],
              ch_state_names[s]);
    ch->state = s;
}

static void
ch_arm(struct channel *ch, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    evtimer_add(ch->deadline, &tv);
}

static uint8_t *
ch_scratch(struct channel *ch, size_t len)
{
    if (len > ch->scratch_len) {
        free(ch->scratch);
        ch->scratch = xmalloc(len);
        ch->scratch_len = len;
    }
    return ch->scratch;
}

static void
ch_reap(evutil_socket_t fd, short what, void *arg)
{
    struct channel *ch = arg;

    if (ch->bev != NULL)
        bufferevent_free(ch->bev);
    event_free(ch->deadline);
    handshake_free(ch->hs);
    sec_wipe(&ch->keys, sizeof ch->keys);
    sec_wipe(ch->group_key, sizeof ch->group_key);
    free(ch->group);
    free(ch->scratch);
    free(ch);
}

/* Stop all I/O and let the loop free the channel. */
static void
ch_kill(struct channel *ch)
{
    static const struct timeval now = {0, 0};

    if (ch->state == CH_DEAD)
        return;
    ch_set_state(ch, CH_DEAD);
    if (ch->adm != NULL) {
        admit_leave(ch->adm);
        ch->adm = NULL;
    }
    bufferevent_setcb(ch->bev, NULL, NULL, NULL, NULL);
    bufferevent_disable(ch->bev, EV_READ | EV_WRITE);
    evtimer_del(ch->deadline);
    event_base_once(ch->base, -1, EV_TIMEOUT, ch_reap, ch, &now);
}

/* End the channel on our side of the owner: log, tell the owner, free.
 * Before authentication an accepted channel's drops are logged through
 * admission (throttled), classified by why.  A connection we made is the
 * owner's to report (it knows what the peer was for: p2prun skipping an
 * unusable peer among hundreds should not print a line for each). */
static void
ch_fail_why(struct channel *ch, int fault, enum drop_why why,
            const char *reason)
{
    if (ch->state == CH_DEAD)
        return;
    if (ch->adm != NULL)
        admit_log_drop(ch->adm, why, ch->name, reason);
    else if (fault && ch->server)
        log_warnx("%s: dropped: %s", ch->name, reason);
    else if (fault)
        /* Ours: the owner reports it in its words; the detail is for
         * whoever asks for it (p2prun -v). */
        log_info("%s: closed: %s", ch->name, reason);
    else
        log_debug("%s: closed: %s", ch->name, reason);
    ch_kill(ch);
    if (ch->cbs.on_close != NULL)
        ch->cbs.on_close(ch, reason, fault, ch->arg);
}

static void
ch_fail(struct channel *ch, int fault, const char *reason)
{
    ch_fail_why(ch, fault, DROP_BAD, reason);
}

void
channel_admit(struct channel *ch, struct admit_conn *ac)
{
    ch->adm = ac;
}

int
channel_got_first(const struct channel *ch)
{
    return ch->got_first;
}

void
channel_evict(struct channel *ch, enum drop_why why, const char *reason)
{
    ch_fail_why(ch, 1, why, reason);
}

static void
ch_write_frame(struct channel *ch, uint8_t kind, const uint8_t *body,
               size_t len)
{
    uint8_t hdr[FRAME_HEADER_LEN];

    frame_header_write(hdr, kind, (uint32_t)len);
    bufferevent_write(ch->bev, hdr, sizeof hdr);
    bufferevent_write(ch->bev, body, len);
}

/* Seal plaintext into one frame. */
static void
ch_write_sealed(struct channel *ch, const uint8_t *plain, size_t len)
{
    uint8_t hdr[FRAME_HEADER_LEN];
    uint8_t *out;

    frame_header_write(hdr, FRAME_SEALED, (uint32_t)(len + SEC_TAG_LEN));
    out = ch_scratch(ch, len + SEC_TAG_LEN);
    sec_seal(out, plain, len, hdr, sizeof hdr, ch->tx_seq++, ch->keys.tx);
    bufferevent_write(ch->bev, hdr, sizeof hdr);
    bufferevent_write(ch->bev, out, len + SEC_TAG_LEN);
}

static void
ch_ready(struct channel *ch)
{
    evtimer_del(ch->deadline);
    ch->frame_pending = 0;
    handshake_free(ch->hs);
    ch->hs = NULL;
    if (ch->adm != NULL) {
        admit_leave(ch->adm);
        ch->adm = NULL;
    }
    ch_set_state(ch, CH_READY);
    if (ch->cbs.on_drain != NULL)
        bufferevent_setwatermark(ch->bev, EV_WRITE, CHANNEL_DRAIN_LOW, 0);
    if (ch->idle_ms > 0)
        channel_set_idle(ch, ch->idle_ms);
    if (ch->cbs.on_ready != NULL)
        ch->cbs.on_ready(ch, ch->arg);
}

static void
ch_handshake_frame(struct channel *ch, const uint8_t *body, size_t len)
{
    uint8_t out[HS_MSG_MAX];
    size_t outlen;
    enum hs_status st;

    /* A server makes its key pair only for a client that sent a whole
     * first frame: connections that send nothing cost no cryptography. */
    if (ch->hs == NULL)
        ch->hs = handshake_new(HS_SERVER, ch->group_key, ch->group);
    st = handshake_input(ch->hs, body, len, out, &outlen);
    if (outlen > 0)
        ch_write_frame(ch, FRAME_HANDSHAKE, out, outlen);
    if (st == HS_FAIL) {
        ch_fail(ch, 1, handshake_error(ch->hs));
        return;
    }
    if (st == HS_CONTINUE)
        return;
    handshake_keys(ch->hs, &ch->keys);
    if (ch->server) {
        ch_write_sealed(ch, (const uint8_t *)WELCOME, sizeof WELCOME - 1);
        ch_ready(ch);
    } else
        ch_set_state(ch, CH_WELCOME);
}

static void
ch_sealed_frame(struct channel *ch, const uint8_t *hdr, const uint8_t *body,
                size_t len)
{
    struct msg m;
    char err[160];
    uint8_t *plain;
    size_t plen = len - SEC_TAG_LEN;

    plain = ch_scratch(ch, len);
    if (sec_open(plain, body, len, hdr, FRAME_HEADER_LEN, ch->rx_seq,
                 ch->keys.rx) == -1) {
        ch_fail(ch, 1,
                "frame failed authentication "
                "(tampered, replayed or reordered)");
        return;
    }
    ch->rx_seq++;
    if (ch->state == CH_WELCOME) {
        if (plen != sizeof WELCOME - 1 || memcmp(plain, WELCOME, plen) != 0) {
            ch_fail(ch, 1, "bad welcome");
            return;
        }
        ch_ready(ch);
        return;
    }
    if (codec_decode(plain, plen, &m, err, sizeof err) == -1) {
        ch_fail(ch, 1, err);
        return;
    }
    if (ch->cbs.on_msg != NULL)
        ch->cbs.on_msg(ch, &m, ch->arg);
    codec_msg_free(&m);
}

/* A clear-text refusal from the server, e.g. a version mismatch. */
static void
ch_reject_frame(struct channel *ch, const uint8_t *body, size_t len)
{
    char text[FRAME_MAX_PREAUTH + 40];
    size_t i;

    memcpy(text, "refused by server: ", 19);
    for (i = 0; i < len && i < FRAME_MAX_PREAUTH; i++)
        text[19 + i] = body[i] >= ' ' && body[i] <= '~' ? (char)body[i] : '?';
    text[19 + i] = '\0';
    ch_fail(ch, 1, text);
}

/* A frame arrived whole: its completion deadline no longer applies.  (In
 * the handshake states the deadline is the handshake's and stays.) */
static void
ch_frame_done(struct channel *ch)
{
    uint64_t spent;

    if (ch->frame_pending && ch->state == CH_READY)
        evtimer_del(ch->deadline);
    ch->frame_pending = 0;
    if (ch->server && !ch->got_first) {
        /* The first-frame deadline is over: the handshake's own applies
         * for the rest of it. */
        ch->got_first = 1;
        if (ch->first_ms > 0 && ch->first_ms < ch->handshake_ms &&
            ch->state == CH_HANDSHAKE) {
            spent = monotime_ms() - ch->start_ms;
            evtimer_del(ch->deadline);
            ch_arm(ch, spent >= (uint64_t)ch->handshake_ms
                           ? 0
                           : ch->handshake_ms - (int)spent);
        }
    }
}

/* Parse as many whole frames as the input holds. */
static void
ch_read_cb(struct bufferevent *bev, void *arg)
{
    struct channel *ch = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    struct frame_header h;
    enum frame_status fs;
    uint8_t hdr[FRAME_HEADER_LEN], *frame;
    size_t avail, limit;
    char why[96];

    while (ch->state != CH_DEAD && ch->state != CH_CLOSING) {
        avail = evbuffer_get_length(in);
        if (avail == 0)
            return;
        if (avail < FRAME_HEADER_LEN)
            goto partial;
        evbuffer_copyout(in, hdr, sizeof hdr);
        limit = ch->state == CH_READY ? ch->max_frame : FRAME_MAX_PREAUTH;
        if ((fs = frame_header_read(hdr, limit, &h)) != FRAME_OK) {
            if (fs == FRAME_BAD_VERSION && ch->server &&
                ch->state == CH_HANDSHAKE) {
                snprintf(why, sizeof why,
                         "protocol version %u not supported, this side "
                         "speaks %u",
                         h.version, P2P_WIRE_VERSION);
                ch_write_frame(ch, FRAME_REJECT, (const uint8_t *)why,
                               strlen(why));
                if (ch->adm != NULL)
                    admit_log_drop(ch->adm, DROP_BAD, ch->name, why);
                else
                    log_warnx("%s: dropped: %s", ch->name, why);
                channel_close_after(ch, NULL);
                if (ch->cbs.on_close != NULL)
                    ch->cbs.on_close(ch, why, 1, ch->arg);
                return;
            }
            if (fs == FRAME_TOO_LONG)
                snprintf(why, sizeof why, "frame of %u bytes, limit %zu",
                         h.length, limit);
            else
                snprintf(why, sizeof why, "%s", frame_status_str(fs));
            ch_fail(ch, 1, why);
            return;
        }
        if (avail < FRAME_HEADER_LEN + (size_t)h.length)
            goto partial;
        frame = evbuffer_pullup(in, FRAME_HEADER_LEN + (ssize_t)h.length);
        switch (h.kind) {
        case FRAME_HANDSHAKE:
            if (ch->state != CH_HANDSHAKE) {
                ch_fail(ch, 1, "handshake frame out of place");
                return;
            }
            ch_handshake_frame(ch, frame + FRAME_HEADER_LEN, h.length);
            break;
        case FRAME_SEALED:
            if (ch->state != CH_READY && ch->state != CH_WELCOME) {
                ch_fail(ch, 1, "sealed frame before the handshake finished");
                return;
            }
            if (h.length < SEC_TAG_LEN) {
                ch_fail(ch, 1, "sealed frame shorter than its tag");
                return;
            }
            ch_sealed_frame(ch, frame, frame + FRAME_HEADER_LEN, h.length);
            break;
        case FRAME_REJECT:
            if (ch->server || ch->state != CH_HANDSHAKE) {
                ch_fail(ch, 1, "reject frame out of place");
                return;
            }
            ch_reject_frame(ch, frame + FRAME_HEADER_LEN, h.length);
            return;
        }
        /* The callback may have closed the channel (and the bufferevent
         * is then disabled but not yet freed). */
        evbuffer_drain(in, FRAME_HEADER_LEN + (size_t)h.length);
        ch_frame_done(ch);
    }
    return;

partial:
    /* A frame has started: it must be complete within a deadline, so that
     * a trickle of bytes cannot hold the connection forever. */
    if (!ch->frame_pending && ch->state == CH_READY)
        ch_arm(ch, CHANNEL_FRAME_MS);
    ch->frame_pending = 1;
}

static void
ch_write_cb(struct bufferevent *bev, void *arg)
{
    struct channel *ch = arg;

    if (ch->state == CH_CLOSING &&
        evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        ch_kill(ch);
    else if (ch->state == CH_READY && ch->cbs.on_drain != NULL)
        ch->cbs.on_drain(ch, ch->arg);
}

static void
ch_start_client(struct channel *ch)
{
    uint8_t out[HS_MSG_MAX];
    size_t n;
    int one = 1;
    evutil_socket_t fd = bufferevent_getfd(ch->bev);
    socklen_t len = sizeof ch->peer;

    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)getpeername(fd, (struct sockaddr *)&ch->peer, &len);
    ch_set_state(ch, CH_HANDSHAKE);
    n = handshake_start(ch->hs, out);
    ch_write_frame(ch, FRAME_HANDSHAKE, out, n);
}

static void
ch_event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct channel *ch = arg;
    char why[160];

    if (what & BEV_EVENT_CONNECTED) {
        ch_start_client(ch);
        return;
    }
    if (ch->state == CH_CLOSING) {
        ch_kill(ch);
        return;
    }
    if (what & BEV_EVENT_TIMEOUT) {
        ch_fail(ch, 1, "idle for too long");
        return;
    }
    if (what & BEV_EVENT_EOF) {
        if (ch->state == CH_READY)
            ch_fail(ch, 0, "connection closed by peer");
        else if (ch->state == CH_HANDSHAKE || ch->state == CH_WELCOME)
            ch_fail_why(ch, 1, DROP_CLOSED,
                        ch->server ? "connection closed during handshake"
                                   : "connection closed during handshake "
                                     "(wrong group key or group name?)");
        else
            ch_fail(ch, 1, "connection closed");
        return;
    }
    snprintf(why, sizeof why, "%s",
             evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    ch_fail(ch, ch->state == CH_READY ? 0 : 1, why);
}

static void
ch_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    struct channel *ch = arg;
    char why[96];

    switch (ch->state) {
    case CH_CONNECTING:
        if (ch->connect_errno != 0)
            snprintf(why, sizeof why, "connect: %s",
                     strerror(ch->connect_errno));
        else
            snprintf(why, sizeof why, "connect timed out after %d ms",
                     ch->handshake_ms);
        ch_fail(ch, 1, why);
        break;
    case CH_HANDSHAKE:
    case CH_WELCOME:
        if (ch->server && !ch->got_first && ch->first_ms > 0 &&
            ch->first_ms < ch->handshake_ms)
            snprintf(why, sizeof why, "no whole first frame within %d ms",
                     ch->first_ms);
        else
            snprintf(why, sizeof why, "handshake not finished within %d ms",
                     ch->handshake_ms);
        ch_fail_why(ch, 1, DROP_DEADLINE, why);
        break;
    case CH_READY:
        if (ch->stalled)
            snprintf(why, sizeof why, "peer is not reading its input");
        else
            snprintf(why, sizeof why, "frame not completed within %d ms",
                     CHANNEL_FRAME_MS);
        ch_fail(ch, 1, why);
        break;
    case CH_CLOSING:
        ch_kill(ch);
        break;
    case CH_DEAD:
        break;
    }
}

static struct channel *
ch_new(struct event_base *base, struct bufferevent *bev, int server,
       const struct channel_params *p, const struct channel_cbs *cbs, void *arg)
{
    struct channel *ch;

    ch = xcalloc(1, sizeof *ch);
    ch->base = base;
    ch->bev = bev;
    ch->server = server;
    ch->state = server ? CH_HANDSHAKE : CH_CONNECTING;
    memcpy(ch->group_key, p->group_key, SEC_KEY_LEN);
    ch->group = xstrdup(p->group);
    ch->max_frame = p->max_frame;
    ch->handshake_ms = p->handshake_ms;
    ch->idle_ms = p->idle_ms;
    ch->first_ms = server ? p->first_ms : 0;
    ch->start_ms = monotime_ms();
    /* A server's handshake is made when the first frame arrives. */
    ch->hs = server ? NULL : handshake_new(HS_CLIENT, p->group_key, p->group);
    ch->cbs = *cbs;
    ch->arg = arg;
    snprintf(ch->name, sizeof ch->name, "?");
    ch->deadline = evtimer_new(base, ch_deadline_cb, ch);
    bufferevent_setcb(bev, ch_read_cb, ch_write_cb, ch_event_cb, ch);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    ch_arm(ch, ch->first_ms > 0 && ch->first_ms < p->handshake_ms
                   ? ch->first_ms
                   : p->handshake_ms);
    return ch;
}

struct channel *
channel_accept(struct event_base *base, int fd, const struct channel_params *p,
               const struct channel_cbs *cbs, void *arg)
{
    struct bufferevent *bev;
    struct channel *ch;
    socklen_t len;
    int one = 1;

    evutil_make_socket_nonblocking(fd);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) {
        close(fd);
        return NULL;
    }
    ch = ch_new(base, bev, 1, p, cbs, arg);
    len = sizeof ch->peer;
    if (getpeername(fd, (struct sockaddr *)&ch->peer, &len) == 0)
        netaddr_format((struct sockaddr *)&ch->peer, ch->name, sizeof ch->name);
    return ch;
}

struct channel *
channel_connect(struct event_base *base, const struct netaddr *to,
                const struct netaddr *from, const struct channel_params *p,
                const struct channel_cbs *cbs, void *arg)
{
    struct bufferevent *bev;
    struct channel *ch;
    int fd, rc, saved;

    fd =
        socket(to->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1)
        return NULL;
    if (from != NULL) {
        struct netaddr src = *from;

        netaddr_set_port(&src, 0);
        if (bind(fd, (const struct sockaddr *)&src.ss, src.len) == -1) {
            saved = errno;
            close(fd);
            errno = saved;
            return NULL;
        }
    }
    bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) {
        close(fd);
        return NULL;
    }
    /* Connect before the callbacks are set: libevent may report an
     * immediate failure synchronously, before the owner holds the channel.
     * Such a failure is reported from the loop through the deadline. */
    rc = bufferevent_socket_connect(bev, (const struct sockaddr *)&to->ss,
                                    (int)to->len);
    saved = errno;
    ch = ch_new(base, bev, 0, p, cbs, arg);
    snprintf(ch->name, sizeof ch->name, "%s", to->text);
    memcpy(&ch->peer, &to->ss, to->len);
    if (rc == -1) {
        ch->connect_errno = saved != 0 ? saved : ECONNREFUSED;
        ch_arm(ch, 0);
    }
    return ch;
}

int
channel_send(struct channel *ch, const struct msg *m)
{
    uint8_t *buf;
    size_t len;

    if (ch->state != CH_READY)
        return -1;
    if (ch->stalled)
        return -1;
    if (evbuffer_get_length(bufferevent_get_output(ch->bev)) >
        CHANNEL_MAX_OUTPUT) {
        /* Fail from the loop, not from inside the caller's code. */
        ch->stalled = 1;
        bufferevent_disable(ch->bev, EV_READ | EV_WRITE);
        ch_arm(ch, 0);
        return -1;
    }
    if (codec_encode(m, &buf, &len) == -1)
        fatalx("channel_send: cannot encode %s", msg_type_name(m->type));
    ch_write_sealed(ch, buf, len);
    free(buf);
    return 0;
}

int
channel_pong(struct channel *ch, const struct msg *ping)
{
    struct msg r;

    memset(&r, 0, sizeof r);
    r.type = MSG_PONG;
    r.u.stamp = ping->u.stamp;
    return channel_send(ch, &r);
}

void
channel_close(struct channel *ch)
{
    ch_kill(ch);
}

void
channel_close_after(struct channel *ch, const struct msg *last)
{
    if (ch->state == CH_DEAD || ch->state == CH_CLOSING)
        return;
    if (last != NULL)
        channel_send(ch, last);
    ch_set_state(ch, CH_CLOSING);
    bufferevent_setwatermark(ch->bev, EV_WRITE, 0, 0);
    bufferevent_disable(ch->bev, EV_READ);
    bufferevent_set_timeouts(ch->bev, NULL, NULL);
    evtimer_del(ch->deadline);
    ch_arm(ch, 1000);
    if (evbuffer_get_length(bufferevent_get_output(ch->bev)) == 0)
        ch_kill(ch);
}

void
channel_reject(struct channel *ch, const char *why)
{
    struct msg m;

    log_warnx("%s: dropped: protocol violation: %s", ch->name, why);
    memset(&m, 0, sizeof m);
    m.type = MSG_ERROR;
    m.u.error.code = 1;
    snprintf(m.u.error.text, sizeof m.u.error.text, "%s", why);
    channel_close_after(ch, &m);
}

int
channel_is_ready(const struct channel *ch)
{
    return ch->state == CH_READY;
}

const char *
channel_name(const struct channel *ch)
{
    return ch->name;
}

const struct sockaddr *
channel_peer_addr(const struct channel *ch)
{
    return (const struct sockaddr *)&ch->peer;
}

int
channel_local_addr(const struct channel *ch, struct netaddr *na)
{
    memset(na, 0, sizeof *na);
    na->len = sizeof na->ss;
    if (getsockname(bufferevent_getfd(ch->bev), (struct sockaddr *)&na->ss,
                    &na->len) == -1)
        return -1;
    netaddr_format((struct sockaddr *)&na->ss, na->text, sizeof na->text);
    return 0;
}

const uint8_t *
channel_session_id(const struct channel *ch)
{
    return ch->keys.session_id;
}

void
channel_set_max_frame(struct channel *ch, size_t max)
{
    ch->max_frame = max;
}

void
channel_set_idle(struct channel *ch, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    ch->idle_ms = ms;
    if (ch->state == CH_READY)
        bufferevent_set_timeouts(ch->bev, ms > 0 ? &tv : NULL, NULL);
}

size_t
channel_output_len(const struct channel *ch)
{
    return evbuffer_get_length(bufferevent_get_output(ch->bev));
}

int
channel_peer_acks(const struct channel *ch)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    evutil_socket_t fd;

    if (ch->bev == NULL || (fd = bufferevent_getfd(ch->bev)) == -1 ||
        getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1 ||
        len < 32) /* tcpi_unacked is within the oldest layout's start */
        return -1;
    return ti.tcpi_state == TCP_ESTABLISHED && ti.tcpi_unacked == 0 &&
           ti.tcpi_retransmits == 0;
}

void
channel_set_arg(struct channel *ch, void *arg)
{
    ch->arg = arg;
}
