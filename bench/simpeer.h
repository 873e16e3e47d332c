/*
 * simpeer: what the tools that pose as peers or members against a real
 * supernode share (bench/sn_load, sn_fedload, sn_fedquery and the
 * test-only p2p_ghost and p2p_fedforge): the group's channel parameters
 * from a configuration file, a supernode's address, a simulated peer's
 * signed registration and advertised resources, and the callback that
 * ends the event loop.  Not part of the product: only bench/ and
 * tests/integration link it.
 */
#ifndef P2P_BENCH_SIMPEER_H
#define P2P_BENCH_SIMPEER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "channel.h"
#include "config.h"
#include "group.h"
#include "netaddr.h"

/* The configuration and group key a simulated peer needs, and the
 * channel parameters they give. */
struct simpeer_group {
    struct p2p_config cfg;
    struct p2p_group g;
    struct channel_params cp;
};

/* Initialise libsodium, load CONF and its group key, and set sg->cp for
 * frames of up to frame_max bytes; exits with the error if any fails. */
void simpeer_group_load(struct simpeer_group *sg, const char *conf,
                        size_t frame_max);
void simpeer_group_free(struct simpeer_group *sg);

/* A supernode's ADDR[:PORT] (port 9700 by default); exits if malformed. */
void simpeer_supernode_addr(const char *name, struct netaddr *to);

/* Resources of an available peer, as registration and heartbeat carry. */
void simpeer_resources(struct resources *r, uint32_t cores,
                       uint64_t mem_total, uint64_t mem_free,
                       uint32_t slots_total, uint32_t slots_free);

/* Register the peer with node key pk (secret key sk) over ch, just
 * authenticated: label, announced address, version (NULL for none) and
 * resources res. */
void simpeer_register(struct channel *ch, const uint8_t *pk,
                      const uint8_t *sk, const char *label, const char *addr,
                      const char *version, const struct resources *res);

/* Heartbeats of n simulated peers, one per peer per period, spread
 * evenly over 100 ticks of the period (exactly n per period by the
 * clock, whatever the rounding and however late the ticks):
 * beat(i, arg) for each peer i in turn. */
struct simpeer_pace {
    struct event *ev;
    uint64_t start_us, period_us, sent;
    int n, next;
    void (*beat)(int i, void *arg);
    void *arg;
};

void simpeer_pace_start(struct simpeer_pace *p, struct event_base *base,
                        int period_ms, int n, void (*beat)(int, void *),
                        void *arg);
void simpeer_pace_stop(struct simpeer_pace *p);

/* Answer m if it is the supernode's ping, as every peer must; 1 if it
 * was one. */
int simpeer_pong(struct channel *ch, const struct msg *m);

/* A timer on base, added at once: after us microseconds, and again every
 * us if persist; exits if libevent fails. */
struct event *simpeer_timer(struct event_base *base, int persist, uint64_t us,
                            event_callback_fn cb, void *arg);

/* The end of a simulated peer's run, its channels closed: let the loop
 * send what they still hold, free base, wipe the group key. */
void simpeer_finish(struct event_base *base, struct simpeer_group *sg);

/* An event callback that ends the loop of the event_base in arg (a
 * timer's or a signal's). */
void simpeer_loopbreak(evutil_socket_t fd, short what, void *arg);

#endif
