/*
 * runSuperNode: the network's directory.  Peers register and heartbeat
 * over authenticated channels; the registry keeps what they report plus
 * the round-trip time measured to each; list queries are answered from it.
 * It is never on a job's data path.
 */
#ifndef P2P_SUPERNODE_H
#define P2P_SUPERNODE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "codec.h"
#include "group.h"

/* registry.c */
struct registry;
struct reg_peer;

/* Called for each peer dropped by registry_expire(), before it is freed;
 * it must not remove the peer itself. */
typedef void (*registry_expire_fn)(struct reg_peer *, void *owner, void *arg);

struct registry *registry_new(void);
/* Frees every entry; owners are not told. */
void registry_free(struct registry *);
/* Add a registered peer, or replace the entry with the same node key.
 * owner is the caller's handle for the peer's connection; the previous
 * owner, if the key was already registered, is returned in *old_owner. */
struct reg_peer *registry_upsert(struct registry *, const struct msg_register *,
                                 const char *addr, void *owner, uint64_t now_ms,
                                 void **old_owner);
void registry_heartbeat(struct registry *, struct reg_peer *,
                        const struct resources *, uint64_t now_ms);
/* Fold one round-trip sample into the smoothed RTT. */
void registry_rtt_sample(struct reg_peer *, uint32_t rtt_us);
void registry_remove(struct registry *, struct reg_peer *);
/* Remove every peer last heard before cutoff_ms, oldest first, telling fn.
 * Returns how many went. */
size_t registry_expire(struct registry *, uint64_t cutoff_ms,
                       registry_expire_fn, void *arg);
struct reg_peer *registry_find(const struct registry *,
                               const uint8_t id[SEC_SIGN_PK_LEN]);
size_t registry_count(const struct registry *);
/* A list reply of every peer, ages relative to now_ms; the caller frees
 * out->peers. */
void registry_export(const struct registry *, uint64_t now_ms,
                     struct msg_list_reply *out);
const char *reg_peer_label(const struct reg_peer *);
const char *reg_peer_addr(const struct reg_peer *);
uint32_t reg_peer_rtt(const struct reg_peer *);

/* server.c */
struct server_params {
    struct p2p_group group;
    int expire_s;
    int heartbeat_ms; /* asked of peers: well inside the expiry */
    int rtt_every_ms; /* round-trip measurement period per peer */
    int max_sessions; /* authenticated connections at most */
    int max_preauth;  /* connections still in their handshake at most */
    int preauth_per_host; /* of them from one address at most */
    int check_peers;  /* list a peer only once its address proves its key */
};

struct server;

/* Serve on an already listening socket (taken). */
struct server *server_new(struct event_base *, int listen_fd,
                          const struct server_params *);
/* Periodic work: expiry and round-trip probes.  Called from the cron. */
void server_cron(struct server *, uint64_t now_ms);
/* Close every connection and free; NULL is fine. */
void server_free(struct server *);
size_t server_peer_count(const struct server *);

#endif
