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

/* What a peer told of its machine when it registered (dashboard). */
struct reg_peer_info {
    char version[WIRE_MAX_LABEL + 1];
    char cpu_model[WIRE_MAX_HOSTINFO + 1];
    char os[WIRE_MAX_HOSTINFO + 1];
    char kernel[WIRE_MAX_HOSTINFO + 1];
    uint64_t started;       /* peerd's start, seconds since the epoch */
    uint64_t registered_ms; /* monotonic */
};
typedef void (*registry_walk_fn)(const struct reg_peer *, void *arg);

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
/* Changes with every registration and removal, and with every heartbeat
 * that changes what ranks or fits a peer: its slots, state or size, its
 * free memory by a sixteenth of its total (at least 64 MiB), its load by a
 * quarter of a core, each measured from the last change counted.  Smaller
 * drifts leave it alone (they are seen by the next list or summary). */
#define REGISTRY_MEM_STEP_DIV 16
#define REGISTRY_MEM_STEP_MIN (64ull << 20)
#define REGISTRY_LOAD_STEP 250 /* milli */
uint64_t registry_generation(const struct registry *);
/* A list reply of every peer, ages relative to now_ms; the caller frees
 * out->peers. */
void registry_export(const struct registry *, uint64_t now_ms,
                     struct msg_list_reply *out);
const char *reg_peer_label(const struct reg_peer *);
const char *reg_peer_addr(const struct reg_peer *);
uint32_t reg_peer_rtt(const struct reg_peer *);
const uint8_t *reg_peer_id(const struct reg_peer *);
const struct resources *reg_peer_res(const struct reg_peer *);
const struct reg_peer_info *reg_peer_info(const struct reg_peer *);
uint64_t reg_peer_last_seen(const struct reg_peer *);
/* Call fn for every peer (which it must not remove). */
void registry_walk(const struct registry *, registry_walk_fn, void *arg);

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
/* Call fn for every entry, its age as of now_ms, with the address of the
 * supernode that summarised it (fn must not change the store). */
typedef void (*summary_walk_fn)(const struct peer_entry *, const char *origin,
                                void *arg);
void summary_walk(const struct summary *, uint64_t now_ms, summary_walk_fn,
                  void *arg);
size_t summary_origins(const struct summary *);
/* Entries held, summed over the senders (a key two of them name counts
 * twice: what the store's bounds are about). */
size_t summary_entries(const struct summary *);
/* Node keys named, each counted once however many senders name it. */
size_t summary_distinct(const struct summary *);

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
/* The peers the other members summarised, each node key counted once
 * (summary_distinct()). */
size_t federation_remote_count(const struct federation *);
/* Summaries sent since the start, each counted once however many members
 * it went to (what the gate of federation_cron() let through). */
uint64_t federation_summaries_sent(const struct federation *);
/* Every peer the other members summarised, as summary_walk(). */
void federation_remote_walk(const struct federation *, uint64_t now_ms,
                            summary_walk_fn, void *arg);

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
/* Peers the other members of its federation summarised (listed once). */
size_t server_remote_peer_count(const struct server *);
uint64_t server_summaries_sent(const struct server *);
/* The other members' summarised peers, as summary_walk() (dashboard). */
void server_remote_walk(const struct server *, uint64_t now_ms,
                        summary_walk_fn, void *arg);
/* For the dashboard (http.c, api.c). */
struct registry *server_registry(const struct server *);
struct jobview *server_jobview(const struct server *);
struct history *server_history(const struct server *);
int server_expire_s(const struct server *);

/* jobview.c: the jobs of the network, from the peers' job reports */
struct jobview;
struct jobview *jobview_new(void);
void jobview_free(struct jobview *);
/* A peer's new snapshot of what it runs (host: its label). */
void jobview_report(struct jobview *, const uint8_t peer[SEC_SIGN_PK_LEN],
                    const char *host, const struct msg_job_report *,
                    uint64_t now_ms);
/* The peer left or went silent: what it ran is lost. */
void jobview_peer_gone(struct jobview *, const uint8_t peer[SEC_SIGN_PK_LEN],
                       uint64_t now_ms);
/* A farm's coordinator's figures, for a job the peers report (a note on
 * an unknown job is dropped: notes never add jobs); 0 taken, -1 not. */
int jobview_note(struct jobview *, const struct msg_job_note *);
/* Forget jobs finished long enough ago. */
void jobview_cron(struct jobview *, uint64_t now_ms);
size_t jobview_count(const struct jobview *);
/* Every job, running first then newest, each with its processes sorted
 * by rank and replica and their hosts, at most max_procs processes in
 * all (a reply must fit a frame); free with codec_jobs_free(). */
#define JOBVIEW_EXPORT_MAX_PROCS 65536
void jobview_export(const struct jobview *, size_t max_procs,
                    struct job_info **out, size_t *n);

/* history.c: samples for the dashboard's chart, and departed peers */
#define HISTORY_EVERY_MS 2000
#define HISTORY_SAMPLES 900 /* kept: half an hour */
struct history_sample {
    uint64_t t; /* seconds since the epoch */
    uint32_t peers, slots_total, slots_used, jobs;
};
struct history_gone {
    uint8_t id[SEC_SIGN_PK_LEN];
    char host[WIRE_MAX_LABEL + 1];
    char addr[WIRE_MAX_ADDR + 1];
    char why[32];
    struct resources res;
    struct reg_peer_info info;
    uint64_t gone_ms, gone_unix;
};
struct history;
struct history *history_new(void);
void history_free(struct history *);
/* Is a new sample due? */
int history_due(const struct history *, uint64_t now_ms);
void history_add(struct history *, const struct history_sample *,
                 uint64_t now_ms);
/* The last max samples, oldest first; how many. */
size_t history_samples(const struct history *, struct history_sample *out,
                       size_t max);
/* Remember a peer that leaves (before it is removed). */
void history_peer_gone(struct history *, const struct reg_peer *,
                       const char *why, uint64_t now_ms);
/* Peers gone lately and not back, newest first; how many (out points
 * into the history until its next change). */
size_t history_gone(const struct history *, const struct registry *,
                    uint64_t now_ms, const struct history_gone **out,
                    size_t max);

/* api.c: the dashboard's JSON; each returns a string to free() */
char *api_peers(struct server *, uint64_t now_ms);
char *api_jobs(struct server *, uint64_t now_ms);
/* known[i] came from source[i] ("config" or "federation"). */
char *api_supernodes(struct server *, const char *const *known,
                     const char *const *source, int nknown,
                     const char *self_addr);
char *api_history(struct server *);

/* assets.c (generated from dashboard/): the page's files */
struct asset {
    const char *path; /* "/", "/app.js" */
    const char *type; /* Content-Type */
    const unsigned char *data;
    size_t len;
};
/* The asset served at path, or NULL. */
const struct asset *asset_find(const char *path);

/* httpauth.c: the token in a request's headers (untrusted bytes) */
/* The token of "Bearer TOKEN" (case-insensitive scheme), else NULL;
 * NULL is fine. */
const char *httpauth_bearer(const char *authorization);
/* The value of cookie name in a Cookie header into out (at most
 * outlen - 1 characters); -1 when absent or too long.  NULL is fine. */
int httpauth_cookie(const char *header, const char *name, char *out,
                    size_t outlen);

/* http.c: the dashboard over HTTP (libevent's evhttp) */
struct http_params {
    const char *listen;          /* ADDR:PORT */
    const char *token;           /* NULL: none (loopback only) */
    const char *const *known;    /* other supernodes, from the config */
    int nknown;
    const char *const *federation; /* the members of its federation */
    int nfederation;
    const char *self_addr;       /* where peers reach this supernode */
    int max_conns;
};
struct http;
/* Check the parameters (a non-loopback address needs a token) and bind:
 * the listening socket, its address in bound_addr; -1 with err. */
int http_bind(const struct http_params *, char *bound_addr, size_t bound_len,
              char *err, size_t errlen);
/* Serve on fd (taken) from http_bind(). */
struct http *http_new(struct event_base *, struct server *,
                      const struct http_params *, int fd,
                      const char *bound_addr);
/* The address bound, for the log (the real port when 0 was asked). */
const char *http_addr(const struct http *);
void http_free(struct http *);

#endif
