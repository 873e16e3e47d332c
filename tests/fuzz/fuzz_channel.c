/*
 * The channel as a whole, fed arbitrary bytes by its peer over a
 * socketpair on a libevent base.  The first byte picks a mode:
 *   even  the input is written raw from the first byte (pre-auth parsing,
 *         handshake frames, limits);
 *   odd   the harness first completes an honest handshake, then sends
 *         chunks [f][l][bytes]...: length (f >> 1) * 256 + l; when f is
 *         even the bytes are sealed as one message with the right counter
 *         (reaching the decoder and on_msg), when odd they are sent raw.
 * The loop runs without blocking until the channel has read everything or
 * closed; it must do either without crashing or leaking, and a closed
 * channel must have been reported exactly once.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "channel.h"
#include "frame.h"
#include "handshake.h"
#include "log.h"
#include "sec.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define WELCOME_LEN 14 /* "p2pmpi welcome" */

static const uint8_t group_key[SEC_KEY_LEN] = {
    0x63, 0x68, 0x61, 0x6e, 0x6e, 0x65, 0x6c, 0x20, 0x66, 0x75, 0x7a,
    0x7a, 0x20, 0x6b, 0x65, 0x79, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
    0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
};

struct fz {
    struct event_base *base;
    struct channel *ch;
    int peer; /* our end of the socketpair */
    int ready, closed;
    struct hs_keys k;
    uint64_t tx;
};

static void
quiet(int level, const char *line)
{
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (sec_init() == -1)
        abort();
    signal(SIGPIPE, SIG_IGN);
    log_set_sink(quiet);
    return 0;
}

static void
on_ready(struct channel *ch, void *arg)
{
    struct fz *f = arg;

    if (f->closed)
        abort();
    f->ready++;
}

static void
on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct fz *f = arg;
    struct msg reply;

    if (f->closed || !f->ready)
        abort();
    if (m->type == MSG_PING) {
        memset(&reply, 0, sizeof reply);
        reply.type = MSG_PONG;
        reply.u.stamp = m->u.stamp;
        channel_send(ch, &reply);
    }
}

static void
on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct fz *f = arg;

    if (f->closed || reason == NULL)
        abort();
    f->closed = 1;
    f->ch = NULL;
}

static const struct channel_cbs cbs = {
    .on_ready = on_ready,
    .on_msg = on_msg,
    .on_close = on_close,
};

/* One non-blocking turn of the loop, then drain what the channel wrote. */
static void
turn(struct fz *f)
{
    uint8_t sink[4096];

    event_base_loop(f->base, EVLOOP_NONBLOCK);
    while (recv(f->peer, sink, sizeof sink, MSG_DONTWAIT) > 0)
        ;
}

/* Write all of buf, turning the loop while the socket is full. */
static void
put(struct fz *f, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    ssize_t n;
    int spins = 0;

    while (len > 0 && !f->closed && spins < 1000) {
        n = send(f->peer, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
            event_base_loop(f->base, EVLOOP_NONBLOCK);
            spins++;
        } else
            return;
    }
}

/* Read exactly len bytes of the channel's output. */
static int
get(struct fz *f, uint8_t *buf, size_t len)
{
    ssize_t n;
    int spins = 0;

    while (len > 0 && spins < 1000) {
        n = recv(f->peer, buf, len, MSG_DONTWAIT);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
            event_base_loop(f->base, EVLOOP_NONBLOCK);
            spins++;
        } else
            return -1;
    }
    return len == 0 ? 0 : -1;
}

static void
put_frame(struct fz *f, uint8_t kind, const uint8_t *body, size_t len)
{
    uint8_t hdr[FRAME_HEADER_LEN];

    frame_header_write(hdr, kind, (uint32_t)len);
    put(f, hdr, sizeof hdr);
    put(f, body, len);
}

/* An honest client handshake, up to and including the welcome. */
static void
handshake(struct fz *f)
{
    struct handshake *hs;
    uint8_t out[HS_MSG_MAX], hdr[FRAME_HEADER_LEN], body[128];
    uint8_t plain[128];
    struct frame_header h;
    size_t n;

    hs = handshake_new(HS_CLIENT, group_key, "fuzz");
    n = handshake_start(hs, out);
    put_frame(f, FRAME_HANDSHAKE, out, n);
    if (get(f, hdr, sizeof hdr) == -1 ||
        frame_header_read(hdr, sizeof body, &h) != FRAME_OK ||
        h.kind != FRAME_HANDSHAKE || get(f, body, h.length) == -1 ||
        handshake_input(hs, body, h.length, out, &n) != HS_DONE)
        abort();
    put_frame(f, FRAME_HANDSHAKE, out, n);
    handshake_keys(hs, &f->k);
    handshake_free(hs);
    if (get(f, hdr, sizeof hdr) == -1 ||
        frame_header_read(hdr, sizeof body, &h) != FRAME_OK ||
        h.kind != FRAME_SEALED || h.length != WELCOME_LEN + SEC_TAG_LEN ||
        get(f, body, h.length) == -1 ||
        sec_open(plain, body, h.length, hdr, sizeof hdr, 0, f->k.rx) == -1)
        abort();
    if (!f->ready || f->closed)
        abort();
}

static void
sealed_chunks(struct fz *f, const uint8_t *p, size_t n)
{
    uint8_t *frame;
    size_t len;
    int raw;

    while (n >= 2 && !f->closed) {
        raw = p[0] & 1;
        len = (size_t)(p[0] >> 1) << 8 | p[1];
        p += 2;
        n -= 2;
        if (len > n)
            len = n;
        if (raw) {
            put(f, p, len);
        } else {
            frame = malloc(FRAME_HEADER_LEN + len + SEC_TAG_LEN);
            if (frame == NULL)
                abort();
            frame_header_write(frame, FRAME_SEALED,
                               (uint32_t)(len + SEC_TAG_LEN));
            sec_seal(frame + FRAME_HEADER_LEN, p, len, frame, FRAME_HEADER_LEN,
                     f->tx++, f->k.tx);
            put(f, frame, FRAME_HEADER_LEN + len + SEC_TAG_LEN);
            free(frame);
        }
        turn(f);
        p += len;
        n -= len;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct channel_params params;
    struct fz f;
    int sv[2], pending, i;

    if (size < 1)
        return 0;
    memset(&f, 0, sizeof f);
    if ((f.base = event_base_new()) == NULL)
        abort();
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
        abort();
    f.peer = sv[1];
    memset(&params, 0, sizeof params);
    params.group_key = group_key;
    params.group = "fuzz";
    params.handshake_ms = 600000; /* no timer fires during a run */
    params.max_frame = 1024;
    f.ch = channel_accept(f.base, sv[0], &params, &cbs, &f);
    if (f.ch == NULL)
        abort();

    if (data[0] & 1) {
        handshake(&f);
        sealed_chunks(&f, data + 1, size - 1);
    } else
        put(&f, data + 1, size - 1);

    /* Until the channel has taken every byte, or has closed. */
    for (i = 0; i < 1000 && !f.closed; i++) {
        turn(&f);
        if (ioctl(sv[0], FIONREAD, &pending) == -1 || pending == 0)
            break;
    }
    turn(&f);

    if (!f.closed && f.ch != NULL)
        channel_close(f.ch);
    /* Let the loop reclaim the channel (a closing one may still flush). */
    for (i = 0; i < 10 && event_base_get_num_events(
                              f.base, EVENT_BASE_COUNT_ADDED |
                                          EVENT_BASE_COUNT_ACTIVE) > 0;
         i++)
        turn(&f);
    if (event_base_get_num_events(f.base, EVENT_BASE_COUNT_ADDED |
                                              EVENT_BASE_COUNT_ACTIVE) > 0)
        event_base_dispatch(f.base);
    /* The channel is gone, and took its socket with it. */
    if (fcntl(sv[0], F_GETFD) != -1)
        abort();
    close(sv[1]);
    event_base_free(f.base);
    return 0;
}
