/*
 * peerd: one per workstation.  It shares the machine with the network:
 * reports its resources to every configured supernode (links), serves
 * authenticated requests from other programs (service), and keeps its
 * identity and working files in a state directory.
 */
#ifndef P2P_PEERD_H
#define P2P_PEERD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "codec.h"
#include "config.h"
#include "group.h"
#include "netaddr.h"

struct link;
struct svc_conn;
struct job;

/* A hold on slots for one job: a lease until its launch confirms it. */
struct hold {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t slots;
    uint64_t expires_ms; /* 0 once confirmed by a launch */
    struct svc_conn *owner;
    struct hold *next;
};

struct peerd {
    struct event_base *base;
    struct p2p_config *cfg;
    struct p2p_group group;
    char *state_dir;
    char host_label[WIRE_MAX_LABEL + 1];
    struct netaddr listen_addr;   /* as bound (the real port) */
    const struct netaddr *source; /* local address for outgoing links */
    uint8_t node_pk[SEC_SIGN_PK_LEN];
    uint8_t node_sk[SEC_SIGN_SK_LEN];
    int slots_total;
    int heartbeat_ms;
    struct link **links;
    int nlinks;
    struct service *service;
    int stopping;
    struct cache *cache;
    struct hold *holds;
    struct job *jobs;
    uid_t job_uid; /* who jobs run as */
    gid_t job_gid;
    struct event *cron;
};

/* identity.c */
/* Create the state directory (0700) and lock it for this daemon; -1 with
 * err if it cannot be made or another peerd holds it. */
int identity_state_dir(const char *dir, char *err, size_t errlen);
/* Load STATE_DIR/node.key, creating it the first time. */
int identity_node_key(const char *dir, uint8_t pk[SEC_SIGN_PK_LEN],
                      uint8_t sk[SEC_SIGN_SK_LEN], char *err, size_t errlen);
/* The default host label: this machine's id (or its host name). */
void identity_machine_label(char *out, size_t len);
/* The default state directory for this user; caller frees. */
char *identity_default_state_dir(void);

/* resources.c */
/* Discover the hardware once (hwloc); -1 with err on failure. */
int resources_init(char *err, size_t errlen);
void resources_fini(void);
unsigned resources_cores(void);
/* Current figures: hardware, free memory and load from /proc, slots. */
void resources_probe(struct resources *, uint32_t slots_total,
                     uint32_t slots_free);

/* cache.c: staged files by content hash (STATE_DIR/cache), bounded by
 * size, least recently used first out */
struct cache;
struct cache_in;

/* Open (creating it 0700) the cache in dir; stale partial files from an
 * earlier run are removed.  max_bytes bounds the total size. */
struct cache *cache_open(const char *dir, uint64_t max_bytes, char *err,
                         size_t errlen);
/* Free; NULL is fine.  Files stay on disk. */
void cache_close(struct cache *);
/* Non-zero when content with this hash and size is present; marks it as
 * just used. */
int cache_has(struct cache *, const uint8_t hash[SEC_HASH_LEN], uint64_t size);
/* Start receiving content announced as hash and size, into a temporary
 * file: nothing is held in memory.  NULL with err on failure. */
struct cache_in *cache_in_begin(struct cache *,
                                const uint8_t hash[SEC_HASH_LEN], uint64_t size,
                                char *err, size_t errlen);
/* Append bytes; -1 with err when more arrive than announced, or on I/O
 * errors (the caller then aborts). */
int cache_in_write(struct cache_in *, const void *, size_t, char *err,
                   size_t errlen);
/* Bytes received so far. */
uint64_t cache_in_received(const struct cache_in *);
/* All bytes are in: check size and hash, move into place, evict least
 * recently used files beyond the bound (never one used in the last
 * minute).  Frees the cache_in either way; -1 with err on a mismatch. */
int cache_in_finish(struct cache_in *, char *err, size_t errlen);
/* Give up: the temporary file goes.  NULL is fine. */
void cache_in_abort(struct cache_in *);
/* Copy cached content to a new file at path with mode (kernel-side copy,
 * never the whole file in memory); marks it as just used. */
int cache_copy_out(struct cache *, const uint8_t hash[SEC_HASH_LEN],
                   const char *path, int mode, char *err, size_t errlen);
/* Total size of the cached files. */
uint64_t cache_bytes(const struct cache *);

/* link.c: one per configured supernode */
struct link *link_new(struct peerd *, const char *supernode);
/* Free slots changed: send a heartbeat to every supernode now. */
void link_announce(struct peerd *);
/* Unregister (if registered) and close; the loop finishes the job. */
void link_shutdown(struct link *);
void link_free(struct link *);

/* service.c: requests to this peer, one connection at a time */
struct service;
struct service *service_new(struct peerd *, int listen_fd);
void service_free(struct service *);
/* The address the coordinator reached us at, for jobs to listen on. */
int svc_conn_local(const struct svc_conn *, struct netaddr *);
/* Send a message on a connection (job output, process exits). */
int svc_conn_send(struct svc_conn *, const struct msg *);
/* Queued output on the connection, for back-pressure. */
size_t svc_conn_backlog(const struct svc_conn *);
const char *svc_conn_name(const struct svc_conn *);

/* access.c: the owner's sharing policy, applied to verified identities */
/* May this user (verified key) use this peer?  name gets the user's name
 * from [users] (or a short key prefix); why gets the refusal. */
int access_user(const struct p2p_config *, const uint8_t key[SEC_SIGN_PK_LEN],
                char *name, size_t namelen, char *why, size_t whylen);
/* May a request come from this address? */
int access_host(const struct p2p_config *, const struct sockaddr *, char *why,
                size_t whylen);

/* reserve.c: slots and the holds on them */
/* Hold n more slots for job, owned by a connection; lease_ms until a
 * launch must confirm.  -1 with why (and the free count in *free_now). */
int reserve_take(struct peerd *, const uint8_t job[WIRE_JOB_ID_LEN], uint32_t n,
                 uint32_t lease_ms, struct svc_conn *, uint32_t *free_now,
                 char *why, size_t whylen);
struct hold *reserve_find(struct peerd *, const uint8_t job[WIRE_JOB_ID_LEN]);
/* A launch uses n of the held slots: the rest go back, the lease ends. */
void reserve_confirm(struct peerd *, struct hold *, uint32_t n);
/* One process of the job has ended: its slot goes back. */
void reserve_return_one(struct peerd *, const uint8_t job[WIRE_JOB_ID_LEN]);
void reserve_release(struct peerd *, const uint8_t job[WIRE_JOB_ID_LEN]);
/* Release every unconfirmed hold of a connection that went away. */
void reserve_drop_owner(struct peerd *, struct svc_conn *);
/* Leases that ran out go back. */
void reserve_cron(struct peerd *, uint64_t now_ms);
uint32_t reserve_free(const struct peerd *);

/* spawn.c: starting and reaping processes */
struct spawn_req {
    const char *dir; /* working directory */
    char *const *argv;
    char *const *envp;
    uid_t uid; /* switch to it when running as root */
    gid_t gid;
    long mem_mb; /* RLIMIT_AS, 0: unchanged */
    long nofile; /* RLIMIT_NOFILE, 0: unchanged */
    long nproc;  /* RLIMIT_NPROC, 0: unchanged */
    int ctl_fd;  /* becomes the process's CTL_FD; -1: none */
    pid_t parent; /* set by spawn_process */
};
/* Start a process in its own session with stdin from /dev/null and
 * stdout/stderr to non-blocking pipes (*out, *err).  Returns the pid, or
 * -1 with why. */
pid_t spawn_process(const struct spawn_req *, int *out, int *err, char *why,
                    size_t whylen);

/* main.c */
/* Can the job account pass through every directory above state_dir?
 * -1 with an explanation and the fix. */
int job_reachable(const char *state_dir, uid_t uid, char *err, size_t errlen);

/* job.c: jobs running here */
/* Start a confirmed job: directory, staged files, processes.  -1 with why
 * for the coordinator. */
int job_launch(struct peerd *, struct svc_conn *, const struct msg_launch *,
               char *why, size_t whylen);
struct job *job_find(struct peerd *, const uint8_t id[WIRE_JOB_ID_LEN]);
/* Only a job's own coordinator may steer it. */
int job_owner_is(const struct job *, const struct svc_conn *);
/* The coordinator sent every process's address: hand it to ours. */
void job_table(struct job *, const struct msg_table *);
/* The coordinator sent a new view of the job's membership: hand it to
 * every process of the job here that still has its control socket.  A
 * view too large for the socket, or naming a process outside the job, is
 * logged and dropped. */
void job_view(struct job *, const struct msg_view *);
/* Stop every process of the job (SIGTERM, SIGKILL a second later). */
void job_kill(struct job *, const char *why);
/* The coordinator's connection went away: kill its jobs. */
void job_orphan_owner(struct peerd *, struct svc_conn *);
/* Anything heard from the coordinator keeps its jobs alive. */
void job_heard(struct peerd *, struct svc_conn *);
/* The connection can take more output again. */
void job_resume_output(struct peerd *, struct svc_conn *);
/* SIGCHLD: reap every finished child. */
void job_reap(struct peerd *);
/* Leases of silent coordinators, kill escalation. */
void job_cron(struct peerd *, uint64_t now_ms);
/* Kill everything at shutdown and wait for it (bounded). */
void job_shutdown(struct peerd *);
int job_count(const struct peerd *);
/* The coordinator asks to stop (hold) or resume reading the output of
 * process (rank, replica) of the job; UINT32_MAX for both: every one. */
void job_output_hold(struct job *, uint32_t rank, uint32_t replica,
                     int hold);
/* Pass on the progress counters due (from job_cron). */
void job_progress_cron(struct peerd *, uint64_t now_ms);

#endif
