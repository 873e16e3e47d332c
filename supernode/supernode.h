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
/* Changes with every registration, heartbeat and removal. */
uint64_t registry_generation(const struct registry *);
/* A list reply of every peer, ages relative to now_ms; the caller frees
 * out->peers. */
void registry_export(const struct registry *, uint64_t now_ms,
                     struct msg_list_reply *out);
const char *reg_peer_label(const struct reg_peer *);
const char *reg_peer_addr(const struct reg_peer *);
uint32_t reg_peer_rtt(const struct reg_peer *);

/* rank.c: the order of every list, best first */
int rank_compare(const void *, const void *); /* two struct peer_entry */
void rank_sort(struct peer_entry *, size_t);
/* Keep one entry per node key, the freshest; returns the new count (the
 * order is lost). */
size_t rank_dedup(struct peer_entry *, size_t);

/* summary.c: the other supernodes' summaries */
struct summary;

struct summary *summary_new(void);
void summary_free(struct summary *);
/* Take one part of a summary; -1 with a reason if it breaks the rules
 * (out of order, over a bound): the session that sent it is dropped, and
 * everything that sender summarised is forgotten. */
int summary_apply(struct summary *, const struct msg_fed_summary *,
                  uint64_t now_ms, char *err, size_t errlen);
/* Forget every sender not heard from since cutoff_ms; how many went. */
size_t summary_expire(struct summary *, uint64_t cutoff_ms);
/* Append every entry to *v (*n of them, grown with xreallocarray), ages
 * as of now_ms. */
void summary_append(const struct summary *, uint64_t now_ms,
                    struct peer_entry **v, size_t *n);
size_t summary_origins(const struct summary *);
size_t summary_entries(const struct summary *);

/* federation.c: summaries to and from the other supernodes */
struct federation_params {
    const struct p2p_group *group;
    char *const *members; /* ADDR:PORT of the others (self is skipped) */
    int nmembers;
    int summary_max; /* entries in a summary at most */
    int interval_ms; /* between summaries */
    int expire_s;    /* a silent member's summary is dropped after this */
    int list_max;    /* entries in a list reply at most */
    const char *listen_addr; /* ours, named in summaries for logs */
};

struct federation;

struct federation *federation_new(struct event_base *,
                                  const struct federation_params *,
                                  struct registry *);
void federation_free(struct federation *);
/* Links, expiry and summaries due; from the server's cron. */
void federation_cron(struct federation *, uint64_t now_ms);
/* One part of another member's summary: 0 taken, 1 it is our own (the
 * member list names us), -1 refused with a reason. */
int federation_receive(struct federation *, const struct msg_fed_summary *,
                       uint64_t now_ms, char *err, size_t errlen);
/* A list reply: our peers and, unless local_only, the others', one entry
 * per node key, best first, at most list_max; the caller frees
 * out->peers. */
void federation_list(struct federation *, int local_only, uint64_t now_ms,
                     struct msg_list_reply *out);
size_t federation_remote_count(const struct federation *);

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
    struct federation_params fed;
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
