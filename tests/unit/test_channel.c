/*
 * The real channel on a libevent base, over loopback TCP.  Two channels
 * talk to each other (same key, wrong key, idle, orderly close), and a
 * hand-written peer built from the handshake_* and sec_* APIs plays the
 * hostile side: replayed, tampered, oversized and garbage frames, a
 * version mismatch, silence.  Every wait has a 5 s guard so that no case
 * can hang.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "channel.h"
#include "codec.h"
#include "frame.h"
#include "handshake.h"
#include "log.h"
#include "netaddr.h"
#include "sec.h"
#include "test.h"
#include "test_loop.h"

#define GROUP "test-group"
#define WELCOME "p2pmpi welcome"

/* What one end saw through its callbacks. */
struct side {
    struct channel *ch;
    int ready, closed, fault, nmsg;
    char reason[300];
    struct msg last;       /* the last message (lists not kept) */
    int reply_pong;        /* answer each PING with a PONG */
    int close_on_msg;      /* channel_close() from inside on_msg */
    int ping_on_ready;     /* send PING 12345 when ready */
    int close_after_ready; /* channel_close_after(ERROR) when ready */
    int extra_callbacks;   /* callbacks after close: must stay 0 */
};

static struct event *accept_ev;
static int lfd = -1;
static struct netaddr laddr;
static uint8_t key_a[SEC_KEY_LEN], key_b[SEC_KEY_LEN];
static struct channel_params sparams, cparams;
static struct side server, client;
static int raw_accept_mode; /* the listener hands fds to the test */
static int raw_server_fd = -1;
static int nwarn;
static char lastwarn[512];

/* --- plumbing (the loop itself: test_loop.h) ------------------------ */

static void
log_sink(int level, const char *line)
{
    if (level == P2P_LOG_WARN) {
        nwarn++;
        snprintf(lastwarn, sizeof lastwarn, "%s", line);
    }
    fprintf(stderr, "    log: %s\n", line);
}

static void
on_ready(struct channel *ch, void *arg)
{
    struct side *s = arg;
    struct msg m;

    if (s->closed) {
        s->extra_callbacks++;
        return;
    }
    s->ready++;
    if (s->ch == NULL)
        s->ch = ch;
    CHECK(s->ch == ch);
    CHECK(channel_is_ready(ch));
    if (s->ping_on_ready) {
        memset(&m, 0, sizeof m);
        m.type = MSG_PING;
        m.u.stamp = 12345;
        CHECK_EQ_INT(channel_send(ch, &m), 0);
    }
    if (s->close_after_ready) {
        memset(&m, 0, sizeof m);
        m.type = MSG_ERROR;
        m.u.error.code = 7;
        snprintf(m.u.error.text, sizeof m.u.error.text, "go away");
        channel_close_after(ch, &m);
        s->ch = NULL;
        s->closed++; /* we forgot it: nothing may follow */
    }
}

static void
on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct side *s = arg;
    struct msg reply;

    if (s->closed) {
        s->extra_callbacks++;
        return;
    }
    CHECK(s->ch == ch);
    s->nmsg++;
    if (m->type != MSG_LIST_REPLY)
        s->last = *m;
    if (s->reply_pong && m->type == MSG_PING) {
        memset(&reply, 0, sizeof reply);
        reply.type = MSG_PONG;
        reply.u.stamp = m->u.stamp;
        CHECK_EQ_INT(channel_send(ch, &reply), 0);
    }
    if (s->close_on_msg) {
        channel_close(ch);
        s->ch = NULL;
        s->closed++;
    }
}

static void
on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct side *s = arg;

    if (s->closed) {
        s->extra_callbacks++;
        return;
    }
    if (s->ch != NULL)
        CHECK(s->ch == ch);
    s->closed++;
    s->fault = fault;
    snprintf(s->reason, sizeof s->reason, "%s", reason ? reason : "(null)");
    s->ch = NULL;
}

static const struct channel_cbs cbs = {
    .on_ready = on_ready,
    .on_msg = on_msg,
    .on_close = on_close,
};

static void
accept_cb(evutil_socket_t fd, short what, void *arg)
{
    int s;

    if ((s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
        return;
    if (raw_accept_mode) {
        if (raw_server_fd != -1)
            close(raw_server_fd);
        raw_server_fd = s;
        return;
    }
    if (server.ch != NULL)
        channel_close(server.ch);
    memset(&server.last, 0, sizeof server.last);
    server.ch = channel_accept(base, s, &sparams, &cbs, &server);
    CHECK(server.ch != NULL);
}

static void
reset_side(struct side *s)
{
    memset(s, 0, sizeof *s);
}

/* A fresh base, a listener on 127.0.0.1, default parameters. */
static int
setup(void)
{
    char err[128];
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;

    signal(SIGPIPE, SIG_IGN);
    if (sec_init() == -1) {
        test_fail(__FILE__, __LINE__, "sec_init");
        return -1;
    }
    log_set_sink(log_sink);
    log_set_verbosity(P2P_LOG_WARN);
    nwarn = 0;
    lastwarn[0] = '\0';
    memset(key_a, 0xa5, sizeof key_a);
    memset(key_b, 0xa5, sizeof key_b);
    key_b[7] ^= 0x40;
    sparams.group_key = key_a;
    sparams.group = GROUP;
    sparams.handshake_ms = 3000;
    sparams.max_frame = FRAME_MAX_REQUEST;
    sparams.idle_ms = 0;
    cparams = sparams;
    cparams.max_frame = FRAME_MAX_REPLY;
    reset_side(&server);
    reset_side(&client);
    raw_accept_mode = 0;
    raw_server_fd = -1;

    base = event_base_new();
    if (base == NULL ||
        netaddr_parse("127.0.0.1:0", 0, &laddr, err, sizeof err) == -1 ||
        (lfd = netaddr_listen(&laddr, 16)) == -1) {
        test_fail(__FILE__, __LINE__, "cannot listen on loopback");
        return -1;
    }
    getsockname(lfd, (struct sockaddr *)&ss, &len);
    netaddr_set_port(&laddr, ntohs(((struct sockaddr_in *)&ss)->sin_port));
    accept_ev = event_new(base, lfd, EV_READ | EV_PERSIST, accept_cb, NULL);
    event_add(accept_ev, NULL);
    return 0;
}

static int
live_events(void)
{
    return event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED |
                                               EVENT_BASE_COUNT_ACTIVE);
}

/* Close what is left and let the loop reclaim every channel. */
static void
teardown(void)
{
    if (client.ch != NULL)
        channel_close(client.ch);
    if (server.ch != NULL)
        channel_close(server.ch);
    client.ch = server.ch = NULL;
    if (raw_server_fd != -1)
        close(raw_server_fd);
    raw_server_fd = -1;
    event_free(accept_ev);
    /* Every channel is reclaimed by the loop; a closing one may still be
     * flushing (at most a second). */
    {
        double t0 = now_ms();

        while (live_events() > 0 && now_ms() - t0 < 2000)
            pump(5);
        if (live_events() > 0)
            test_fail(__FILE__, __LINE__, "%d events left after close",
                      live_events());
    }
    CHECK_EQ_INT(server.extra_callbacks, 0);
    CHECK_EQ_INT(client.extra_callbacks, 0);
    close(lfd);
    lfd = -1;
    event_base_free(base);
    base = NULL;
    log_set_sink(NULL);
}

static struct channel *
connect_client(void)
{
    client.ch = channel_connect(base, &laddr, NULL, &cparams, &cbs, &client);
    CHECK(client.ch != NULL);
    return client.ch;
}

/* --- a hand-written peer ------------------------------------------------- */

struct raw {
    int fd;
    struct hs_keys k;
    uint64_t tx, rx;
};

static int
raw_connect(struct raw *r)
{
    memset(r, 0, sizeof *r);
    r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r->fd == -1 ||
        connect(r->fd, (struct sockaddr *)&laddr.ss, laddr.len) == -1) {
        test_fail(__FILE__, __LINE__, "raw connect: %s", strerror(errno));
        return -1;
    }
    fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

static void
raw_close(struct raw *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

/* Send everything, running the loop while the socket is full. */
static int
raw_send(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    double t0 = now_ms();
    ssize_t n;

    while (len > 0) {
        n = send(fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == -1 && (errno == EAGAIN || errno == EINTR) &&
            now_ms() - t0 < GUARD_MS) {
            pump(5);
            continue;
        }
        return -1;
    }
    return 0;
}

/* Receive exactly len bytes; -1 on EOF, error or after the guard. */
static int
raw_recv(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    double t0 = now_ms();
    ssize_t n;

    while (len > 0) {
        n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == -1 && (errno == EAGAIN || errno == EINTR) &&
            now_ms() - t0 < GUARD_MS) {
            pump(5);
            continue;
        }
        return -1;
    }
    return 0;
}

/* 1 when the other end has closed (EOF or reset) within the guard. */
static int
raw_sees_eof(int fd)
{
    uint8_t buf[256];
    double t0 = now_ms();
    ssize_t n;

    while (now_ms() - t0 < GUARD_MS) {
        n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n == -1 && errno == ECONNRESET))
            return 1;
        if (n == -1 && errno != EAGAIN && errno != EINTR)
            return 0;
        pump(5);
    }
    return 0;
}

static int
raw_frame(int fd, uint8_t kind, const void *body, size_t len)
{
    uint8_t hdr[FRAME_HEADER_LEN];

    frame_header_write(hdr, kind, (uint32_t)len);
    if (raw_send(fd, hdr, sizeof hdr) == -1)
        return -1;
    return len > 0 ? raw_send(fd, body, len) : 0;
}

/* Read one frame of the expected kind into body; returns its length. */
static long
raw_read_frame(int fd, uint8_t kind, uint8_t *hdr, uint8_t *body, size_t max)
{
    struct frame_header h;

    if (raw_recv(fd, hdr, FRAME_HEADER_LEN) == -1)
        return -1;
    if (frame_header_read(hdr, max, &h) != FRAME_OK || h.kind != kind)
        return -1;
    if (raw_recv(fd, body, h.length) == -1)
        return -1;
    return (long)h.length;
}

/* Seal plaintext into a whole frame (header + ciphertext) in out. */
static size_t
raw_seal(struct raw *r, const uint8_t *plain, size_t len, uint8_t *out)
{
    frame_header_write(out, FRAME_SEALED, (uint32_t)(len + SEC_TAG_LEN));
    sec_seal(out + FRAME_HEADER_LEN, plain, len, out, FRAME_HEADER_LEN, r->tx++,
             r->k.tx);
    return FRAME_HEADER_LEN + len + SEC_TAG_LEN;
}

/* Encode and seal m into out; returns the frame size. */
static size_t
raw_seal_msg(struct raw *r, const struct msg *m, uint8_t *out)
{
    uint8_t *buf;
    size_t len, n;

    if (codec_encode(m, &buf, &len) == -1)
        abort();
    n = raw_seal(r, buf, len, out);
    free(buf);
    return n;
}

/* Read and open one sealed frame into m. */
static int
raw_read_msg(struct raw *r, struct msg *m)
{
    uint8_t hdr[FRAME_HEADER_LEN], body[4096], plain[4096];
    char err[160];
    long n;

    n = raw_read_frame(r->fd, FRAME_SEALED, hdr, body, sizeof body);
    if (n < SEC_TAG_LEN)
        return -1;
    if (sec_open(plain, body, (size_t)n, hdr, sizeof hdr, r->rx++, r->k.rx) ==
        -1)
        return -1;
    return codec_decode(plain, (size_t)n - SEC_TAG_LEN, m, err, sizeof err);
}

/* The client side of the handshake against the listener's channel, up to
 * and including the server's welcome. */
static int
raw_handshake(struct raw *r, const uint8_t *key)
{
    struct handshake *hs;
    uint8_t out[HS_MSG_MAX], hdr[FRAME_HEADER_LEN], body[256], plain[256];
    size_t n, outlen;
    long len;
    int rc = -1;

    if (raw_connect(r) == -1)
        return -1;
    hs = handshake_new(HS_CLIENT, key, GROUP);
    n = handshake_start(hs, out);
    if (raw_frame(r->fd, FRAME_HANDSHAKE, out, n) == -1)
        goto out;
    len = raw_read_frame(r->fd, FRAME_HANDSHAKE, hdr, body, sizeof body);
    if (len < 0) {
        test_fail(__FILE__, __LINE__, "no server proof");
        goto out;
    }
    if (handshake_input(hs, body, (size_t)len, out, &outlen) != HS_DONE) {
        test_fail(__FILE__, __LINE__, "handshake: %s", handshake_error(hs));
        goto out;
    }
    if (raw_frame(r->fd, FRAME_HANDSHAKE, out, outlen) == -1)
        goto out;
    handshake_keys(hs, &r->k);
    len = raw_read_frame(r->fd, FRAME_SEALED, hdr, body, sizeof body);
    if (len < SEC_TAG_LEN ||
        sec_open(plain, body, (size_t)len, hdr, sizeof hdr, r->rx++, r->k.rx) ==
            -1 ||
        (size_t)len - SEC_TAG_LEN != strlen(WELCOME) ||
        memcmp(plain, WELCOME, strlen(WELCOME)) != 0) {
        test_fail(__FILE__, __LINE__, "no valid welcome");
        goto out;
    }
    rc = 0;
out:
    handshake_free(hs);
    return rc;
}

/* --- two channels ------------------------------------------------------- */

static void
t_ping_pong(void)
{
    struct channel *c;
    struct msg m = {.type = MSG_PING};

    if (setup() == -1)
        return;
    server.reply_pong = 1;
    client.ping_on_ready = 1;
    c = connect_client();
    /* Nothing may be sent before the handshake. */
    CHECK(!channel_is_ready(c));
    CHECK_EQ_INT(channel_send(c, &m), -1);
    WAIT_FOR(client.nmsg == 1 || client.closed || server.closed);
    CHECK_EQ_INT(client.ready, 1);
    CHECK_EQ_INT(server.ready, 1);
    CHECK_EQ_INT(server.nmsg, 1);
    CHECK_EQ_INT(server.last.type, MSG_PING);
    CHECK(server.last.u.stamp == 12345);
    CHECK_EQ_INT(client.nmsg, 1);
    CHECK_EQ_INT(client.last.type, MSG_PONG);
    CHECK(client.last.u.stamp == 12345);
    CHECK_EQ_INT(client.closed, 0);
    CHECK_EQ_INT(server.closed, 0);
    CHECK_EQ_INT(nwarn, 0);
    if (client.ch != NULL && server.ch != NULL) {
        /* Both ends are bound to the same session. */
        CHECK_MEM(channel_session_id(client.ch), channel_session_id(server.ch),
                  SEC_HASH_LEN);
        CHECK_EQ_STR(channel_name(client.ch), laddr.text);
        CHECK_CONTAINS(channel_name(server.ch), "127.0.0.1:");
        CHECK_EQ_INT(channel_peer_addr(server.ch)->sa_family, AF_INET);
    }
    /* Many messages in a row arrive in order. */
    if (client.ch != NULL) {
        int i;

        for (i = 0; i < 50; i++) {
            m.type = MSG_PING;
            m.u.stamp = (uint64_t)i;
            CHECK_EQ_INT(channel_send(client.ch, &m), 0);
        }
        WAIT_FOR(client.nmsg == 51 || client.closed || server.closed);
        CHECK_EQ_INT(server.nmsg, 51);
        CHECK(client.last.u.stamp == 49);
    }
    /* Orderly close from the client: the server sees no fault, and the
     * client gets no callback for its own close. */
    if (client.ch != NULL) {
        channel_close(client.ch);
        client.ch = NULL;
    }
    WAIT_FOR(server.closed);
    CHECK_EQ_INT(server.fault, 0);
    CHECK_EQ_INT(client.closed, 0);
    teardown();
}

static void
t_wrong_key(void)
{
    if (setup() == -1)
        return;
    cparams.group_key = key_b;
    connect_client();
    WAIT_FOR(client.closed && server.closed);
    CHECK_EQ_INT(client.ready, 0);
    CHECK_EQ_INT(server.ready, 0);
    CHECK_EQ_INT(client.fault, 1);
    CHECK_EQ_INT(server.fault, 1);
    CHECK_CONTAINS(client.reason, "authentication");
    CHECK(nwarn >= 1);
    teardown();
}

static void
t_wrong_group(void)
{
    if (setup() == -1)
        return;
    cparams.group = "other-group";
    connect_client();
    WAIT_FOR(client.closed && server.closed);
    CHECK_EQ_INT(client.ready + server.ready, 0);
    CHECK_EQ_INT(client.fault, 1);
    CHECK_EQ_INT(server.fault, 1);
    teardown();
}

/* The server says why and goes: the client gets the message, then a
 * clean close. */
static void
t_close_after(void)
{
    if (setup() == -1)
        return;
    server.close_after_ready = 1;
    connect_client();
    WAIT_FOR(client.closed);
    CHECK_EQ_INT(client.ready, 1);
    CHECK_EQ_INT(client.nmsg, 1);
    CHECK_EQ_INT(client.last.type, MSG_ERROR);
    CHECK_EQ_STR(client.last.u.error.text, "go away");
    CHECK_EQ_INT(client.fault, 0);
    teardown();
}

/* Closing from inside on_msg is safe (the channel is reaped later). */
static void
t_close_in_callback(void)
{
    if (setup() == -1)
        return;
    server.close_on_msg = 1;
    client.ping_on_ready = 1;
    connect_client();
    WAIT_FOR(client.closed);
    CHECK_EQ_INT(server.nmsg, 1);
    CHECK_EQ_INT(client.fault, 0);
    teardown();
}

static void
t_idle(void)
{
    double t0;

    if (setup() == -1)
        return;
    sparams.idle_ms = 200;
    t0 = now_ms();
    connect_client();
    WAIT_FOR(server.closed && client.closed);
    /* Counted from the server's ready, which is after t0. */
    CHECK(now_ms() - t0 >= 190);
    CHECK_EQ_INT(server.ready, 1);
    CHECK_EQ_INT(client.ready, 1);
    CHECK_EQ_INT(server.fault, 1);
    CHECK_CONTAINS(server.reason, "idle");
    CHECK_EQ_INT(client.fault, 0);
    teardown();
}

static void
t_connect_refused(void)
{
    struct netaddr dead;
    char err[64];
    int fd;
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;

    if (setup() == -1)
        return;
    /* A port that was just free. */
    netaddr_parse("127.0.0.1:0", 0, &dead, err, sizeof err);
    fd = netaddr_listen(&dead, 1);
    getsockname(fd, (struct sockaddr *)&ss, &len);
    netaddr_set_port(&dead, ntohs(((struct sockaddr_in *)&ss)->sin_port));
    close(fd);
    client.ch = channel_connect(base, &dead, NULL, &cparams, &cbs, &client);
    if (CHECK(client.ch != NULL)) {
        WAIT_FOR(client.closed);
        CHECK_EQ_INT(client.ready, 0);
        CHECK_EQ_INT(client.fault, 1);
        CHECK_CONTAINS(client.reason, "refused");
    }
    teardown();
}

/* --- a hand-written client against channel_accept ----------------------- */

/* A valid sealed PING is delivered and answered; the same bytes again are
 * a replay and end the channel. */
static void
t_raw_ping_and_replay(void)
{
    struct raw r;
    struct msg m = {.type = MSG_PING}, got;
    uint8_t frame[256];
    size_t n;

    if (setup() == -1)
        return;
    server.reply_pong = 1;
    if (raw_handshake(&r, key_a) == -1) {
        raw_close(&r);
        teardown();
        return;
    }
    WAIT_FOR(server.ready);
    m.u.stamp = 777;
    n = raw_seal_msg(&r, &m, frame);
    CHECK_EQ_INT(raw_send(r.fd, frame, n), 0);
    WAIT_FOR(server.nmsg == 1 || server.closed);
    CHECK_EQ_INT(server.last.type, MSG_PING);
    CHECK(server.last.u.stamp == 777);
    /* The answer is sealed with the server's next counter (1). */
    if (CHECK_EQ_INT(raw_read_msg(&r, &got), 0)) {
        CHECK_EQ_INT(got.type, MSG_PONG);
        CHECK(got.u.stamp == 777);
    }
    /* Replay. */
    CHECK_EQ_INT(raw_send(r.fd, frame, n), 0);
    WAIT_FOR(server.closed);
    CHECK_EQ_INT(server.nmsg, 1);
    CHECK_EQ_INT(server.fault, 1);
    CHECK_CONTAINS(server.reason, "authentication");
    CHECK_CONTAINS(lastwarn, "dropped");
    CHECK(raw_sees_eof(r.fd));
    raw_close(&r);
    teardown();
}

/* Frames sent out of order (counter 1 before 0) are refused. */
static void
t_raw_reorder(void)
{
    struct raw r;
    struct msg m = {.type = MSG_PING};
    uint8_t f0[256], f1[256];
    size_t n0, n1;

    if (setup() == -1)
        return;
    if (raw_handshake(&r, key_a) == 0) {
        n0 = raw_seal_msg(&r, &m, f0);
        n1 = raw_seal_msg(&r, &m, f1);
        (void)n0;
        CHECK_EQ_INT(raw_send(r.fd, f1, n1), 0);
        WAIT_FOR(server.closed);
        CHECK_EQ_INT(server.nmsg, 0);
        CHECK_EQ_INT(server.fault, 1);
    }
    raw_close(&r);
    teardown();
}

/* One flipped bit in the ciphertext or in the tag: nothing is delivered
 * and the channel ends. */
static void
t_raw_tampered(void)
{
    static const int where[] = {FRAME_HEADER_LEN + 1, -1 /* tag */};
    struct raw r;
    struct msg m = {.type = MSG_PING};
    uint8_t frame[256];
    size_t n, i;

    for (i = 0; i < sizeof where / sizeof where[0]; i++) {
        if (setup() == -1)
            return;
        if (raw_handshake(&r, key_a) == 0) {
            m.u.stamp = 99;
            n = raw_seal_msg(&r, &m, frame);
            frame[where[i] >= 0 ? (size_t)where[i] : n - 3] ^= 0x08;
            CHECK_EQ_INT(raw_send(r.fd, frame, n), 0);
            WAIT_FOR(server.closed);
            CHECK_EQ_INT(server.nmsg, 0);
            CHECK_EQ_INT(server.fault, 1);
            CHECK_CONTAINS(server.reason, "authentication");
            CHECK(raw_sees_eof(r.fd));
        }
        raw_close(&r);
        teardown();
    }
}

/* Authentic but undecodable content is still refused. */
static void
t_raw_bad_content(void)
{
    struct raw r;
    uint8_t frame[256];
    static const uint8_t junk[] = {0xff, 0xff, 0xff};
    size_t n;

    if (setup() == -1)
        return;
    if (raw_handshake(&r, key_a) == 0) {
        n = raw_seal(&r, junk, sizeof junk, frame);
        CHECK_EQ_INT(raw_send(r.fd, frame, n), 0);
        WAIT_FOR(server.closed);
        CHECK_EQ_INT(server.nmsg, 0);
        CHECK_EQ_INT(server.fault, 1);
    }
    raw_close(&r);
    teardown();
}

/* The size limit once ready: a frame of exactly max_frame is delivered, a
 * header announcing one byte more ends the channel before any body. */
static void
t_raw_frame_limit(void)
{
    struct raw r;
    struct msg m = {.type = MSG_PING};
    uint8_t frame[256], hdr[FRAME_HEADER_LEN], *buf;
    size_t n, len;

    if (setup() == -1)
        return;
    m.u.stamp = 1;
    if (codec_encode(&m, &buf, &len) == -1)
        abort();
    free(buf);
    sparams.max_frame = len + SEC_TAG_LEN;
    if (raw_handshake(&r, key_a) == 0) {
        n = raw_seal_msg(&r, &m, frame);
        CHECK_EQ_INT(n, FRAME_HEADER_LEN + sparams.max_frame);
        CHECK_EQ_INT(raw_send(r.fd, frame, n), 0);
        WAIT_FOR(server.nmsg == 1 || server.closed);
        CHECK_EQ_INT(server.nmsg, 1);
        CHECK_EQ_INT(server.closed, 0);
        frame_header_write(hdr, FRAME_SEALED, (uint32_t)sparams.max_frame + 1);
        CHECK_EQ_INT(raw_send(r.fd, hdr, sizeof hdr), 0);
        WAIT_FOR(server.closed);
        CHECK_EQ_INT(server.fault, 1);
        CHECK_CONTAINS(server.reason, "limit");
        CHECK(raw_sees_eof(r.fd));
    }
    raw_close(&r);
    teardown();
}

/* Before authentication the limit is FRAME_MAX_PREAUTH. */
static void
t_raw_preauth_limit(void)
{
    struct raw r;
    uint8_t hdr[FRAME_HEADER_LEN];

    if (setup() == -1)
        return;
    if (raw_connect(&r) == 0) {
        frame_header_write(hdr, FRAME_HANDSHAKE, FRAME_MAX_PREAUTH + 1);
        CHECK_EQ_INT(raw_send(r.fd, hdr, sizeof hdr), 0);
        WAIT_FOR(server.closed);
        CHECK_EQ_INT(server.fault, 1);
        CHECK_CONTAINS(server.reason, "limit");
        CHECK(raw_sees_eof(r.fd));
    }
    raw_close(&r);
    teardown();
}

static void
t_raw_garbage(void)
{
    static const struct {
        const char *bytes;
        size_t len;
    } junk[] = {
        {"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27},
        {"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11}, /* TLS */
        {"SSH-2.0-OpenSSH_9.2\r\n", 21},
    };
    struct raw r;
    size_t i;

    for (i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        if (setup() == -1)
            return;
        if (raw_connect(&r) == 0) {
            CHECK_EQ_INT(raw_send(r.fd, junk[i].bytes, junk[i].len), 0);
            WAIT_FOR(server.closed);
            CHECK_EQ_INT(server.ready, 0);
            CHECK_EQ_INT(server.fault, 1);
            CHECK_CONTAINS(server.reason, "magic");
            CHECK(raw_sees_eof(r.fd));
        }
        raw_close(&r);
        teardown();
    }
}

/* Messages out of place before the handshake is done. */
static void
t_raw_out_of_place(void)
{
    static const uint8_t kinds[] = {FRAME_SEALED, FRAME_REJECT};
    uint8_t body[48];
    struct raw r;
    size_t i;

    memset(body, 0x42, sizeof body);
    for (i = 0; i < sizeof kinds; i++) {
        if (setup() == -1)
            return;
        if (raw_connect(&r) == 0) {
            CHECK_EQ_INT(raw_frame(r.fd, kinds[i], body, sizeof body), 0);
            WAIT_FOR(server.closed);
            CHECK_EQ_INT(server.ready, 0);
            CHECK_EQ_INT(server.fault, 1);
        }
        raw_close(&r);
        teardown();
    }
    /* A handshake frame once the channel is up. */
    if (setup() == -1)
        return;
    if (raw_handshake(&r, key_a) == 0) {
        WAIT_FOR(server.ready);
        CHECK_EQ_INT(raw_frame(r.fd, FRAME_HANDSHAKE, body, 32), 0);
        WAIT_FOR(server.closed);
        CHECK_EQ_INT(server.fault, 1);
    }
    raw_close(&r);
    teardown();
}

/* Another protocol version gets an explicit clear-text refusal. */
static void
t_raw_version_mismatch(void)
{
    struct raw r;
    uint8_t hdr[FRAME_HEADER_LEN], body[FRAME_MAX_PREAUTH + 1];
    char text[FRAME_MAX_PREAUTH + 1];
    struct frame_header h;

    if (setup() == -1)
        return;
    if (raw_connect(&r) == 0) {
        frame_header_write(hdr, FRAME_HANDSHAKE, 32);
        hdr[2] = P2P_WIRE_VERSION + 1;
        memset(body, 1, 32);
        CHECK_EQ_INT(raw_send(r.fd, hdr, sizeof hdr), 0);
        CHECK_EQ_INT(raw_send(r.fd, body, 32), 0);
        WAIT_FOR(server.closed);
        CHECK_EQ_INT(server.fault, 1);
        if (CHECK_EQ_INT(raw_recv(r.fd, hdr, sizeof hdr), 0) &&
            CHECK_EQ_INT(frame_header_read(hdr, FRAME_MAX_PREAUTH, &h),
                         FRAME_OK) &&
            CHECK_EQ_INT(h.kind, FRAME_REJECT) &&
            CHECK_EQ_INT(raw_recv(r.fd, body, h.length), 0)) {
            memcpy(text, body, h.length);
            text[h.length] = '\0';
            CHECK_CONTAINS(text, "version");
        }
        CHECK(raw_sees_eof(r.fd));
    }
    raw_close(&r);
    teardown();
}

/* A peer that connects and says nothing is dropped at the deadline. */
static void
t_handshake_timeout(void)
{
    struct raw r;
    double t0;
    uint8_t half[3] = {'P', '2', P2P_WIRE_VERSION};
    int i;

    for (i = 0; i < 2; i++) {
        if (setup() == -1)
            return;
        sparams.handshake_ms = 200;
        t0 = now_ms();
        if (raw_connect(&r) == 0) {
            /* Second round: half a header, then silence. */
            if (i == 1)
                CHECK_EQ_INT(raw_send(r.fd, half, sizeof half), 0);
            WAIT_FOR(server.closed);
            CHECK(now_ms() - t0 >= 190);
            CHECK_EQ_INT(server.fault, 1);
            CHECK_CONTAINS(server.reason, "handshake");
            CHECK(raw_sees_eof(r.fd));
        }
        raw_close(&r);
        teardown();
    }
}

/* --- a hand-written server against channel_connect ---------------------- */

/* The server refuses in clear text: the client reports the reason. */
static void
t_client_reject(void)
{
    static const char why[] = "protocol version 9 not supported\x01";
    uint8_t hello[FRAME_HEADER_LEN + SEC_KX_PK_LEN];

    if (setup() == -1)
        return;
    raw_accept_mode = 1;
    connect_client();
    WAIT_FOR(raw_server_fd != -1);
    /* Once the client's hello is here, the client is in its handshake. */
    if (raw_server_fd != -1 &&
        CHECK_EQ_INT(raw_recv(raw_server_fd, hello, sizeof hello), 0)) {
        CHECK_EQ_INT(
            raw_frame(raw_server_fd, FRAME_REJECT, why, sizeof why - 1), 0);
        WAIT_FOR(client.closed);
        CHECK_EQ_INT(client.fault, 1);
        CHECK_CONTAINS(client.reason, "refused by server");
        CHECK_CONTAINS(client.reason, "version 9 not supported");
        /* Control characters are not passed through. */
        CHECK(strchr(client.reason, '\x01') == NULL);
    }
    teardown();
}

/* A server that never answers: the client gives up at its deadline. */
static void
t_client_handshake_timeout(void)
{
    if (setup() == -1)
        return;
    raw_accept_mode = 1;
    cparams.handshake_ms = 200;
    connect_client();
    WAIT_FOR(client.closed);
    CHECK_EQ_INT(client.fault, 1);
    CHECK_CONTAINS(client.reason, "handshake");
    teardown();
}

/* A server with the key that does not send the right welcome. */
static void
t_client_bad_welcome(void)
{
    struct handshake *hs;
    uint8_t hdr[FRAME_HEADER_LEN], body[256], out[HS_MSG_MAX];
    uint8_t frame[128];
    struct hs_keys k;
    size_t outlen;
    long len;
    static const char bad[] = "p2pmpi welcomE";

    if (setup() == -1)
        return;
    raw_accept_mode = 1;
    connect_client();
    WAIT_FOR(raw_server_fd != -1);
    hs = handshake_new(HS_SERVER, key_a, GROUP);
    len =
        raw_read_frame(raw_server_fd, FRAME_HANDSHAKE, hdr, body, sizeof body);
    if (CHECK(len > 0) &&
        CHECK_EQ_INT(handshake_input(hs, body, (size_t)len, out, &outlen),
                     HS_CONTINUE) &&
        CHECK_EQ_INT(raw_frame(raw_server_fd, FRAME_HANDSHAKE, out, outlen),
                     0)) {
        len = raw_read_frame(raw_server_fd, FRAME_HANDSHAKE, hdr, body,
                             sizeof body);
        if (CHECK(len > 0) &&
            CHECK_EQ_INT(handshake_input(hs, body, (size_t)len, out, &outlen),
                         HS_DONE)) {
            handshake_keys(hs, &k);
            frame_header_write(frame, FRAME_SEALED,
                               (uint32_t)(sizeof bad - 1 + SEC_TAG_LEN));
            sec_seal(frame + FRAME_HEADER_LEN, (const uint8_t *)bad,
                     sizeof bad - 1, frame, FRAME_HEADER_LEN, 0, k.tx);
            CHECK_EQ_INT(
                raw_send(raw_server_fd, frame,
                         FRAME_HEADER_LEN + sizeof bad - 1 + SEC_TAG_LEN),
                0);
            WAIT_FOR(client.closed);
            CHECK_EQ_INT(client.ready, 0);
            CHECK_EQ_INT(client.fault, 1);
            CHECK_CONTAINS(client.reason, "welcome");
        }
    }
    handshake_free(hs);
    teardown();
}

static const struct test_case cases[] = {
    {"ping_pong", t_ping_pong},
    {"wrong_key", t_wrong_key},
    {"wrong_group", t_wrong_group},
    {"close_after", t_close_after},
    {"close_in_callback", t_close_in_callback},
    {"idle", t_idle},
    {"connect_refused", t_connect_refused},
    {"raw_ping_and_replay", t_raw_ping_and_replay},
    {"raw_reorder", t_raw_reorder},
    {"raw_tampered", t_raw_tampered},
    {"raw_bad_content", t_raw_bad_content},
    {"raw_frame_limit", t_raw_frame_limit},
    {"raw_preauth_limit", t_raw_preauth_limit},
    {"raw_garbage", t_raw_garbage},
    {"raw_out_of_place", t_raw_out_of_place},
    {"raw_version_mismatch", t_raw_version_mismatch},
    {"handshake_timeout", t_handshake_timeout},
    {"client_reject", t_client_reject},
    {"client_handshake_timeout", t_client_handshake_timeout},
    {"client_bad_welcome", t_client_bad_welcome},
};

TEST_MAIN(cases)
