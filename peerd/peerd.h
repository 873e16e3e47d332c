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
#include <time.h>

#include <event2/event.h>

#include "codec.h"
#include "config.h"
#include "group.h"
#include "netaddr.h"

/* Output queued for a coordinator beyond which a job's pipes stop being
 * read, and its processes' hints (suspicions, progress) are dropped. */
#define SVC_BACKLOG_MAX (4 * 1024 * 1024)

/* Event priorities (libevent runs every ready event of a higher priority
 * before any of a lower one): the cron (heartbeats, leases, expiry)
 * first, then conversations with coordinators, supernodes and the local
 * control socket (the default), then the bulk of a big job's processes:
 * their control sockets and their output.  A peer busy wiring up or
 * forwarding output for hundreds of processes still answers its
 * coordinator's pings in time. */
#define PEERD_PRIO_CRON 0
#define PEERD_PRIO_DEFAULT 1
#define PEERD_PRIO_BULK 2
#define PEERD_NPRIO 3

struct link;
struct svc_conn;
struct job;
struct cgroups;
struct cgroup;
struct uids;
struct ctlrelay;
struct owner;
struct control;
struct farms;
struct workers;
struct worker;
struct box;

/* A hold on slots for one job: a lease until its launch confirms it. */
struct hold {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t slots;
    uint64_t expires_ms; /* 0 once confirmed by a launch */
    uint32_t lease_ms;   /* as granted: what a renewal adds */
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
    struct link **links; /* one per configured supernode */
    int nlinks;
    struct directory *directory;
    struct service *service;
    int stopping;
    struct cache *cache;
    struct hold *holds;
    struct job *jobs;
    struct job *dying;      /* ended, waiting for their cgroup to empty */
    uid_t job_uid;          /* who jobs run as without a uid pool */
    gid_t job_gid;
    struct uids *uids;      /* a uid per job (root), or NULL */
    struct cgroups *cgroups; /* a cgroup per job, or NULL */
    int private_tmp;        /* a mount namespace per job */
    uint64_t tmp_bytes;     /* size of its /tmp, /var/tmp, /dev/shm */
    struct owner *owner;    /* the owner's policy and presence */
    struct control *control; /* p2pshare's socket */
    struct farms *farms;    /* tasks queued here, fair share */
    struct workers *workers; /* farms' persistent workers */
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
/* What the dashboard shows of the machine: CPU model (hwloc), OS
 * (os-release), kernel (uname), and when this peerd started. */
void resources_describe(struct msg_register *);
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

/* report.c: what this peer runs, for the supernodes' dashboards */
struct report;
struct report *report_new(void);
void report_free(struct report *);
/* A job report is due on this link when what we run changed since the
 * last one sent on it, or REPORT_REFRESH_MS passed: fills m (valid until
 * the next call) and returns 1; else 0.  Call reset when the link
 * (re)registers. */
int report_due(struct report *, const struct peerd *, uint64_t now_ms,
               struct msg *m);
void report_reset(struct report *);

/* link.c: one per configured supernode */
/* A link, not yet started. */
struct link *link_new(struct peerd *, const char *supernode);
/* Connect and register (and keep at it); nothing if running. */
void link_start(struct link *);
int link_running(const struct link *);
int link_up(const struct link *);
/* Running, not registered, and failed since it started or was last up. */
int link_bad(const struct link *);
const char *link_name(const struct link *);
/* Free slots changed: send a heartbeat to every supernode now. */
void link_announce(struct peerd *);
/* What we run changed for good (a job ends): every supernode hears of it
 * now, if it differs from what it last heard. */
void link_report_now(struct peerd *);
/* Unregister (if registered) and close; the loop finishes the job.  The
 * link may be started again. */
void link_shutdown(struct link *);
void link_free(struct link *);

/* directory.c: which supernodes this peer registers with */
struct directory;
/* Rank the configured supernodes for our node key and start the first
 * per_peer of them (pd->links holds one link per supernode). */
struct directory *directory_new(struct peerd *, char *const *supernodes,
                                int n, int per_peer);
/* Fall over from a failing supernode, come back to a preferred one. */
void directory_cron(struct peerd *, uint64_t now_ms);
void directory_free(struct directory *);

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
/* The connection is still at work towards its launch (it stages files):
 * its unconfirmed holds run for at least their lease from now. */
void reserve_renew(struct peerd *, struct svc_conn *, uint64_t now_ms);
/* Leases that ran out go back. */
void reserve_cron(struct peerd *, uint64_t now_ms);
uint32_t reserve_free(const struct peerd *);

/* spawn.c: starting and reaping processes */
struct spawn_req {
    const char *dir; /* working directory */
    char *const *argv;
    char *const *envp;
    const char *path; /* where a bare command name is looked up */
    const char *host; /* this peer's label, for "command not found" */
    uid_t uid; /* switch to it when running as root */
    gid_t gid;
    char *const *cgroup_procs; /* cgroup.procs files to join, or NULL */
    int mntns;   /* mount namespace to enter, -1: none */
    long mem_mb; /* RLIMIT_AS, 0: unchanged */
    long nofile; /* RLIMIT_NOFILE, 0: unchanged */
    long nproc;  /* RLIMIT_NPROC, 0: unchanged */
    int ctl_fd;  /* becomes the process's CTL_FD; -1: none */
    int *in;     /* NULL: stdin from /dev/null; else a pipe's write end */
    pid_t parent; /* set by spawn_process */
};
/* Start a process in its own session (and cgroups and mount namespace,
 * when given) with stdin from /dev/null (or a non-blocking pipe whose
 * write end goes to *r->in) and stdout/stderr to non-blocking
 * pipes (*out, *err).  Returns the pid, or -1 with why ("command not
 * found: NAME on HOST" when a bare name is nowhere on the path). */
pid_t spawn_process(const struct spawn_req *, int *out, int *err, char *why,
                    size_t whylen);
/* The same in two steps, so that several children exec at once: start
 * forks and returns the pid (or -1 with why), finish waits for the exec
 * and returns 0 with *out and *err, or -1 with why (the child reaped). */
struct spawn_started {
    pid_t pid;
    int out, err, report;
    int in, *in_dest; /* the stdin pipe's end and where it goes (req.in) */
};
pid_t spawn_start(const struct spawn_req *, struct spawn_started *, char *why,
                  size_t whylen);
int spawn_finish(struct spawn_started *, int *out, int *err, char *why,
                 size_t whylen);

/* cgroup.c (jobs, processes), cgroup_setup.c (the instance): the only
 * files, with cgroup_fs.c, that know control groups */
enum cg_limit { CG_LIMIT_NONE, CG_LIMIT_MEMORY, CG_LIMIT_PIDS };
/* Find what this machine offers (v2, v1, or both) and make our subtree,
 * name, under peerd's own cgroup of each hierarchy, guest work weighing
 * cpu_weight against the owner's 100.  fsroot: NULL on a real system, a
 * fake tree's root in tests.  NULL with why when nothing is writable;
 * otherwise why may hold a warning. */
struct cgroups *cgroup_open(const char *fsroot, const char *name,
                            int cpu_weight, char *why, size_t whylen);
void cgroup_close(struct cgroups *);
/* What is used, in words, for the log. */
const char *cgroup_describe(const struct cgroups *);
int cgroup_has_limit(const struct cgroups *, enum cg_limit);
/* A job's cgroup (controllers enabled below it); NULL with why. */
struct cgroup *cgroup_job_new(struct cgroups *, const char *name, char *why,
                              size_t whylen);
/* A process's leaf in its job's cgroup, with its limits (0: none). */
struct cgroup *cgroup_proc_new(struct cgroup *job, const char *name,
                               uint64_t mem_bytes, uint32_t max_pids,
                               char *why, size_t whylen);
/* A handle on an existing job cgroup (recovery, tests). */
struct cgroup *cgroup_adopt(struct cgroups *, const char *name);
/* The cgroup.procs files a process writes "0" to, to join (NULL-ended;
 * valid while the cgroup is). */
char *const *cgroup_procs_files(const struct cgroup *);
/* SIGKILL everything in it and below, at once (cgroup.kill; else freeze,
 * kill, thaw; else signals until empty). */
int cgroup_kill(struct cgroup *);
/* Kill, then wait up to wait_ms for it to be empty; -1 if it is not. */
int cgroup_kill_wait(struct cgroup *, int wait_ms);
int cgroup_empty(const struct cgroup *);
int cgroup_freeze(struct cgroup *, int frozen);
/* rmdir it and what is below it, in every hierarchy; -1 if some stay. */
int cgroup_remove(struct cgroup *);
void cgroup_free(struct cgroup *);
/* CPU time used by every job so far, in microseconds; UINT64_MAX when
 * not known. */
uint64_t cgroup_cpu_usage_us(const struct cgroups *);
/* Peak memory in bytes (0: unknown), and the limit it ran into. */
uint64_t cgroup_mem_peak(const struct cgroup *);
enum cg_limit cgroup_limit_hit(const struct cgroup *);
/* Kill and remove every job cgroup an earlier life left; how many. */
int cgroup_recover(struct cgroups *);

/* uids.c: a uid of its own for each running job */
/* Parse "FIRST-LAST" (or one uid); -1 with err. */
int uids_parse(const char *, uid_t *first, uid_t *last, char *err,
               size_t errlen);
/* The pool; locks in lockdir, shared by every peerd of the machine. */
struct uids *uids_open(const char *range, const char *lockdir, char *err,
                       size_t errlen);
void uids_close(struct uids *);
/* A uid nothing uses (no process, no file in the shared temporary
 * directories, no account, no other peerd's lock); -1 when none. */
int uids_take(struct uids *, uid_t *);
void uids_give(struct uids *, uid_t);
/* Kill processes of the range whose uid no live peerd holds. */
int uids_recover(struct uids *);

/* box.c: a job's uid and private /tmp, shared by a farm's tasks */
/* A new box (a uid from the pool, a private /tmp); NULL with why. */
struct box *box_new(struct peerd *, char *why, size_t whylen);
struct box *box_ref(struct box *);
/* Let go; the last one gives the uid back and drops the namespace. */
void box_unref(struct peerd *, struct box *);
uid_t box_uid(const struct box *);
gid_t box_gid(const struct box *);
int box_mntns(const struct box *);

/* mntns.c: a private /tmp, /var/tmp and /dev/shm for a job */
/* The namespace's descriptor, or -1 with why.  Needs root. */
int mntns_new(const char *jobdir, uint64_t tmp_bytes, char *why,
              size_t whylen);

/* rmtree.c */
/* Remove path and everything below it, whatever modes were left, never
 * following a link; 0 (also when it did not exist), or -1 with errno. */
int rmtree(const char *path);

/* ctlrelay.c: a job process's control socket */
/* Relay what the process says on fd (ours now) to the job's coordinator. */
struct ctlrelay *ctlrelay_new(struct event_base *, struct job *,
                              uint32_t rank, uint32_t replica, int fd);
void ctlrelay_free(struct ctlrelay *);
/* A part of the address table; once *in holds it all, the table goes to
 * every open relay of the array (NULLs skipped), written as each process
 * reads.  -1 (logged) when the part does not fit the job or the parts
 * before it.  *in is made on the first part; free it with the job. */
struct ctltable_in;
int ctlrelay_table(struct ctltable_in **in, const struct job *,
                   struct ctlrelay *const *, size_t n,
                   const struct msg_table *);
void ctltable_in_free(struct ctltable_in *);
/* Has the whole table arrived (and gone to the relays)? */
int ctltable_in_complete(const struct ctltable_in *);
/* Is this view acceptable for the job (size, indices)?  Logs if not. */
int ctlrelay_view_ok(const struct job *, const struct msg_view *);
void ctlrelay_view(struct ctlrelay *const *, size_t n,
                   const struct msg_view *);
/* Pass on a progress counter that is due (NULL is fine). */
void ctlrelay_cron(struct ctlrelay *, uint64_t now_ms);

/* job.c, job_launch.c, job_output.c: jobs running here */
/* Can the job account pass through every directory above state_dir?
 * -1 with an explanation and the fix. */
int job_reachable(const char *state_dir, uid_t uid, char *err, size_t errlen);
/* For ctlrelay.c */
struct svc_conn *job_owner(const struct job *);
const char *job_hex(const struct job *);
const uint8_t *job_id(const struct job *);
const char *job_bind_host(const struct job *);
uint32_t job_nprocs_total(const struct job *);
/* Kill and remove what an earlier run left; call before serving. */
void job_recover(struct peerd *);
/* Memory of one job process: [peer] job_mem_mb, else job_mem_percent
 * of the machine's memory divided by the slots; bytes. */
uint64_t job_mem_limit(const struct peerd *);
/* Processes running (not suspended) here. */
size_t job_running_procs(const struct peerd *);
/* Freeze (or thaw) every running job. */
void job_suspend_all(struct peerd *, int suspend);
/* Kill every job now; their exits are reported as evictions, why. */
void job_evict_all(struct peerd *, const char *why);
/* The dashboard's view of the jobs here, farm tasks left out: at most
 * max jobs and, in all, maxprocs processes taken from procs (out[i].procs
 * point into it); each job that did not fit adds one to *more.  Returns
 * how many were filled. */
size_t job_report(const struct peerd *, struct job_info *out, size_t max,
                  struct job_proc *procs, size_t maxprocs, uint32_t *more);
/* One line per job (owner, program, ranks) into buf; its length. */
size_t job_describe(const struct peerd *, char *buf, size_t len);

/* Start a confirmed job: directory, staged files, processes.  -1 with why
 * for the coordinator. */
int job_launch(struct peerd *, struct svc_conn *, const struct msg_launch *,
               struct box *, char *why, size_t whylen);
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
/* A farm's worker as a one-process job: its stdin pipe's write end goes
 * to *in; its stdout, stderr and end go to w (worker.c).  NULL with why. */
struct job *job_launch_worker(struct peerd *, struct svc_conn *,
                              const struct msg_launch *, struct box *,
                              struct worker *w, int *in, char *why,
                              size_t whylen);
/* The worker is gone: its job reports nothing more to it. */
void job_forget_worker(struct job *);
/* The peak memory of a job's first process so far (its cgroup), 0 when
 * not known. */
uint64_t job_mem_peak(const struct job *);
/* Read what a worker's stderr pipe holds now (before its answer). */
void job_drain_stderr(struct job *);
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

/* owner.c: the owner comes first */
struct owner *owner_new(const struct p2p_config *, char *err, size_t errlen);
void owner_free(struct owner *);
/* Judge the owner's presence, suspend, resume or evict guests. */
void owner_cron(struct peerd *, uint64_t now_ms);
/* Are guests welcome?  If not, why ("owner active ... on ws3"). */
int owner_welcome(const struct peerd *, char *why, size_t whylen);
/* The peer state to announce while guests are not welcome, else
 * PEER_STATE_UNKNOWN (the slots say). */
int owner_peer_state(const struct peerd *);
/* p2pshare: SHARE_* until the next restart, or -1 for the configured. */
void owner_set_mode(struct peerd *, int mode);
void owner_evict_now(struct peerd *);
size_t owner_status(const struct peerd *, char *buf, size_t len);
/* Parsing and the time window, for the tests. */
int owner_parse_hours(const char *, int *from_min, int *to_min);
int owner_parse_days(const struct conf_list *, uint8_t *mask);
int owner_window_open(int from_min, int to_min, uint8_t days,
                      const struct tm *);

/* farm.c: farms of tasks and fair share between their users */
void farm_init(struct peerd *);
void farm_fini(struct peerd *);
/* A farm opens for a connection (its user's verified key in hex). */
int farm_open(struct peerd *, struct svc_conn *, const struct msg_farm *,
              const char *user_hex, char *why, size_t whylen);
int farm_owned_by(const struct peerd *, const struct svc_conn *);
/* Queue a task (a launch with task != 0); -1 with why if refused. */
int farm_task(struct peerd *, struct svc_conn *, const struct msg_launch *,
              char *why, size_t whylen);
/* Take a queued task out; 1 if it was there. */
int farm_cancel(struct peerd *, struct svc_conn *, const uint8_t job[16]);
/* Guests are not welcome any more: every queued task goes back to its
 * coordinator (a "not now" refusal), to run elsewhere. */
void farm_refuse_all(struct peerd *, const char *why);
/* The connection is gone: its farms and queued tasks go. */
void farm_drop_owner(struct peerd *, struct svc_conn *);
/* Start queued tasks while slots are free, fairest user first. */
void farm_kick(struct peerd *);
void farm_cron(struct peerd *, uint64_t now_ms);
size_t farm_describe(const struct peerd *, char *buf, size_t len);
/* The farms here for the dashboard (task counts, no entries): at most
 * max, the rest counted in *more; how many were filled. */
size_t farm_report(const struct peerd *, struct job_info *out, size_t max,
                   uint32_t *more);

/* worker.c: farms' persistent workers (p2prun --each --worker) */
void worker_init(struct peerd *);
void worker_fini(struct peerd *);
/* Can an idle worker of this farm take a task now? */
int worker_can_take(struct peerd *, const struct svc_conn *,
                    const uint8_t farm[WIRE_JOB_ID_LEN]);
/* Give a worker task to an idle worker of its farm, or to a new one in a
 * free slot (box: the farm's); -1 with why if it cannot start.  input_fd:
 * its input spooled to a file (l->input_len bytes, l->input unused),
 * which the worker takes on success, or -1. */
int worker_give(struct peerd *, struct svc_conn *, struct box *,
                const struct msg_launch *, int input_fd, char *why,
                size_t whylen);
/* Is this attempt in a worker's hands? */
int worker_has_task(struct peerd *, const uint8_t id[WIRE_JOB_ID_LEN]);
/* The coordinator cancels an attempt; 1 if a worker had it. */
int worker_cancel(struct peerd *, const struct svc_conn *,
                  const uint8_t id[WIRE_JOB_ID_LEN]);
/* The connection is gone: forget its workers (their jobs are killed). */
void worker_drop_owner(struct peerd *, const struct svc_conn *);
/* Stop an idle worker of another farm to free a slot for farm; 1 if one
 * is stopping (its slot comes back when it has exited). */
int worker_reclaim(struct peerd *, const uint8_t farm[WIRE_JOB_ID_LEN]);
/* Stop workers that have been idle too long (from the cron). */
void worker_cron(struct peerd *, uint64_t now_ms);
/* From job_output.c: bytes from a worker's stdout and stderr; from
 * job.c its end. */
void worker_stdout(struct worker *, const uint8_t *, size_t);
void worker_stderr(struct worker *, const uint8_t *, size_t);
void worker_exited(struct worker *, int status, uint64_t mem_peak);

/* control.c: the local socket p2pshare talks to (root or our own user) */
struct control *control_new(struct peerd *, char *err, size_t errlen);
void control_free(struct control *);
#endif
