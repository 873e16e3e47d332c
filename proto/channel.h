/*
 * An authenticated, encrypted connection on a libevent base: frames bytes,
 * runs the handshake, seals and opens every message, and enforces the
 * limits (frame size per state, handshake deadline, frame completion
 * deadline, idle time, unread output).
 *
 * Ownership: the owner forgets a channel either by calling channel_close()
 * or when on_close is called; no callback runs after either, and the
 * memory is reclaimed by the event loop, never inside a callback.
 */
#ifndef P2P_CHANNEL_H
#define P2P_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "codec.h"
#include "netaddr.h"
#include "sec.h"

struct channel;

struct channel_params {
    const uint8_t *group_key; /* SEC_KEY_LEN bytes, copied */
    const char *group;        /* network name, copied */
    int handshake_ms;         /* connect + handshake must finish in this */
    size_t max_frame;         /* largest sealed body accepted once ready */
    int idle_ms;              /* close after this long without input; 0 off */
    int first_ms; /* accepted: the first frame must be whole in this; 0 off */
};

struct channel_cbs {
    /* The handshake finished: messages may flow. */
    void (*on_ready)(struct channel *, void *arg);
    /* One validated message; the channel frees it after the call. */
    void (*on_msg)(struct channel *, const struct msg *, void *arg);
    /* The channel ended; fault is non-zero for protocol violations,
     * authentication failures and timeouts, zero for an orderly close by
     * the other side.  The channel logs faults of accepted connections
     * (before authentication, throttled: admit.h); for one made with
     * channel_connect() it only logs at debug level: the owner says why,
     * in its own words. */
    void (*on_close)(struct channel *, const char *reason, int fault,
                     void *arg);
    /* Optional: queued output has fallen to CHANNEL_DRAIN_LOW bytes or
     * fewer, so a sender streaming a file may queue more. */
    void (*on_drain)(struct channel *, void *arg);
};

/* Serve an accepted socket (takes fd, even on failure). */
struct channel *channel_accept(struct event_base *, int fd,
                               const struct channel_params *,
                               const struct channel_cbs *, void *arg);
/* Connect to an address, from a local one if from is not NULL.  Returns
 * NULL with errno when the socket cannot even be made. */
struct channel *channel_connect(struct event_base *, const struct netaddr *to,
                                const struct netaddr *from,
                                const struct channel_params *,
                                const struct channel_cbs *, void *arg);
/* Queue a message; -1 if the channel is not ready or already closing. */
int channel_send(struct channel *, const struct msg *);
/* Answer a MSG_PING with the MSG_PONG that carries its stamp back. */
int channel_pong(struct channel *, const struct msg *ping);
/* Close now; pending output is dropped.  No callback follows. */
void channel_close(struct channel *);
/* Send a last message (may be NULL), then close once it is written or
 * after a second, whichever comes first.  No callback follows. */
void channel_close_after(struct channel *, const struct msg *);

/* The other side broke the protocol: log it, tell it why (an Error
 * message), close once that is written.  No callback follows. */
void channel_reject(struct channel *, const char *why);

int channel_is_ready(const struct channel *);
/* "host:port" of the other end. */
const char *channel_name(const struct channel *);
const struct sockaddr *channel_peer_addr(const struct channel *);
/* The local address of the connection (the address the other end
 * reached us at); -1 if unknown. */
int channel_local_addr(const struct channel *, struct netaddr *);
/* Same on both ends of one connection, unique per connection. */
const uint8_t *channel_session_id(const struct channel *);
void channel_set_max_frame(struct channel *, size_t);
void channel_set_idle(struct channel *, int ms);
/* Bytes queued for sending. */
size_t channel_output_len(const struct channel *);
/* Is the other end's machine keeping up at the TCP level: everything
 * written was acknowledged and nothing is being retransmitted?  1 yes,
 * 0 no, -1 unknown.  A peer whose machine acknowledges but whose daemon
 * does not answer is overloaded (or stopped), not gone. */
int channel_peer_acks(const struct channel *);
/* Replace the callback argument (an owner handing the channel over). */
void channel_set_arg(struct channel *, void *);

/* Streaming senders keep at most about this much queued. */
#define CHANNEL_DRAIN_LOW (256 * 1024)
/* How long a started frame may take to arrive in full. */
#define CHANNEL_FRAME_MS 10000
/* Unread output beyond this means the other end has stopped reading. */
#define CHANNEL_MAX_OUTPUT (64 * 1024 * 1024)

#endif
