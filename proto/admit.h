/*
 * Admission: what a daemon lets in before the other side has proved the
 * group key.  Connections that have not finished their handshake cost us
 * a descriptor and a little memory, and anyone can open them, so they are
 * kept cheap and fair:
 *
 *   - at most per_source of them from one address: when one more comes,
 *     that address's oldest goes;
 *   - at most max of them in all: when one more comes, the oldest goes
 *     (never the newest: a legitimate client finishes its handshake in a
 *     round trip or two, so it is never the oldest for long, while a
 *     client that holds connections open pushes out only its own); the
 *     oldest that has not yet sent a whole first frame goes first, as a
 *     real client sends its first frame at once;
 *   - the first frame must be whole within first_ms, and the handshake
 *     done within the channel's handshake time (channel.c);
 *   - drops are logged through a droplog: a few lines, then one summary
 *     per interval.
 *
 * The channel tells admission when it leaves the unauthenticated phase
 * (ready, or dead); admission closes a channel it pushes out through
 * channel_evict(), which calls the owner's on_close as any failure does.
 */
#ifndef P2P_ADMIT_H
#define P2P_ADMIT_H

#include <event2/event.h>

#include "channel.h"
#include "droplog.h"

/* The limits come from [network] preauth_max, preauth_per_host and
 * first_frame_ms (defaults in common/config.c, documented in
 * conf/p2p.conf). */
/* Drop logging: lines of detail, then one summary, per interval. */
#define ADMIT_LOG_INTERVAL_MS 10000
#define ADMIT_LOG_BUDGET 10

struct admit_params {
    int max;        /* unauthenticated connections at most */
    int per_source; /* of them from one address at most */
};

struct admit;
struct admit_conn;

struct admit *admit_new(struct event_base *, const struct admit_params *);
/* Forgets every entry (the channels stay with their owners); NULL ok. */
void admit_free(struct admit *);
/* Serve an accepted socket (taken, even on failure) under the rules
 * above: room is made first, by closing the oldest connection of the same
 * address or of all, then the channel is made as channel_accept() does.
 * NULL if it could not be. */
struct channel *admit_accept(struct admit *, int fd,
                             const struct channel_params *,
                             const struct channel_cbs *, void *arg);
/* Connections waiting for their handshake now. */
int admit_count(const struct admit *);
/* Drops seen since the start (for tests and the log). */
unsigned long long admit_dropped(const struct admit *);

/* For channel.c only. */
/* The channel authenticated or died: forget it. */
void admit_leave(struct admit_conn *);
/* The channel failed before authenticating: log (throttled) and count. */
void admit_log_drop(struct admit_conn *, enum drop_why, const char *name,
                    const char *reason);
/* Has the channel received a whole frame yet? */
int channel_got_first(const struct channel *);
/* Attach an accepted channel to its admission entry. */
void channel_admit(struct channel *, struct admit_conn *);
/* Admission pushes this channel out: fail it with why and reason. */
void channel_evict(struct channel *, enum drop_why, const char *reason);

#endif
