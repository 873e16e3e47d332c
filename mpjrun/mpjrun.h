/*
 * The user's side: p2prun, mpihost, p2p-keygen, and what they share.
 */
#ifndef P2P_MPJRUN_H
#define P2P_MPJRUN_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "config.h"
#include "channel.h"
#include "group.h"

/* snquery.c */
/* Ask the configured supernodes, in order, for the peer list; the first
 * that answers wins.  timeout_ms bounds each attempt.  On failure -1 with
 * one line in err saying what was tried and why it failed.  The caller
 * frees out->peers. */
int snquery_list(const struct p2p_config *, const struct p2p_group *,
                 int timeout_ms, struct msg_list_reply *out, char *err,
                 size_t errlen);
/* The same, with the supernode's job view too when want_jobs (the caller
 * frees out->jobs with codec_jobs_free()), and only the peers registered
 * with the supernode that answers, not what its federation knows, when
 * local. */
int snquery_ask(const struct p2p_config *, const struct p2p_group *,
                int timeout_ms, int want_jobs, int local,
                struct msg_list_reply *out, char *err, size_t errlen);

/* snnote.c: a coordinator's progress for the supernode's dashboard */
struct snnote;
/* Notes go to the first configured supernode, on base; g must outlive
 * the snnote. */
struct snnote *snnote_new(struct event_base *, const struct p2p_config *,
                          const struct p2p_group *);
/* A farm's figures: sent if the channel is up, else (at most every few
 * seconds) it is opened for the next one.  With last, they are the final
 * ones and the channel closes once they are written.  NULL is fine. */
void snnote_farm(struct snnote *, const uint8_t farm[WIRE_JOB_ID_LEN],
                 uint64_t inputs, uint64_t reported, uint64_t failed,
                 int last);
void snnote_free(struct snnote *);

/* alloc.c: where the ranks go (pure: no I/O) */

/* A peer that may hold slots of the job. */
struct alloc_cand {
    char host[WIRE_MAX_LABEL + 1]; /* replicas of a rank need distinct hosts */
    uint32_t slots_free;
    uint32_t rtt_us;   /* 0: unknown, ordered after every known one */
    uint64_t mem_free; /* bytes; more free memory is the better fit */
};

enum alloc_strategy {
    ALLOC_SPREAD,      /* as many distinct hosts as possible */
    ALLOC_CONCENTRATE, /* fill each host before using the next */
};

/* Where each process of the job goes: slots[rank * r + replica] is the
 * index of its candidate in the array given to alloc_plan(). */
struct alloc_plan {
    int n, r;
    int *slots;
};

/* Place n ranks of r replicas each on the candidates so that the r
 * replicas of every rank are on r distinct hosts, never giving a candidate
 * more than its free slots.  Candidates are preferred by round-trip time,
 * then by free memory; the strategy decides how processes spread over
 * hosts.  Returns 0 and fills plan (free with alloc_plan_free), or -1
 * with one line in err such as
 * "need 7 slots on 1+ hosts, found 6 slots on 3 hosts". */
int alloc_plan(const struct alloc_cand *, size_t ncand, int n, int r,
               enum alloc_strategy, struct alloc_plan *, char *err,
               size_t errlen);
/* How many processes the plan puts on each candidate: counts[ncand]. */
void alloc_plan_counts(const struct alloc_plan *, size_t ncand,
                       uint32_t *counts);
void alloc_plan_free(struct alloc_plan *);

/* userkey.c: the user's identity towards peers */
/* Load the user's signing key from path (default
 * ~/.config/p2p/user.key), creating it on first use; *created says so.
 * -1 with err. */
int userkey_load(const char *path, uint8_t pk[SEC_SIGN_PK_LEN],
                 uint8_t sk[SEC_SIGN_SK_LEN], int *created, char *err,
                 size_t errlen);
/* The message that proves the user to a peer: a signature over the
 * channel's session id. */
void userkey_auth(struct msg *, struct channel *,
                  const uint8_t pk[SEC_SIGN_PK_LEN],
                  const uint8_t sk[SEC_SIGN_SK_LEN]);

/* local.c: the embedded local cluster for users without a network */
struct local_cluster;
/* Start a supernode and npeers peerd on loopback (127.0.0.2, ...), each
 * with the given slots and its own host label, under a fresh group key;
 * point cfg at them.  NULL with err. */
struct local_cluster *local_start(struct p2p_config *, int npeers, int slots,
                                  char *err, size_t errlen);
/* Stop the daemons and remove every file; NULL is fine. */
void local_stop(struct local_cluster *);

/* progress.c: the progress rule of replicated jobs (pure) */
struct progress;
/* For n ranks of r replicas; a replica behind a current partner for
 * more than lag_ms is a laggard.  NULL for a bad size. */
struct progress *progress_new(int n, int r, uint64_t lag_ms);
void progress_free(struct progress *);
/* Process i (rank * r + replica) was launched. */
void progress_start(struct progress *, int i, uint64_t now_ms);
/* n bytes of its stream (1 stdout, 2 stderr) arrived; its lines count. */
void progress_output(struct progress *, int i, int stream, const void *,
                     size_t n, uint64_t now_ms);
/* Its library reported this counter (it never goes down). */
void progress_count(struct progress *, int i, uint64_t count,
                    uint64_t now_ms);
/* It ended: normally (ok) or not (including declared dead). */
void progress_end(struct progress *, int i, int ok, uint64_t now_ms);
/* Measure every lag afresh from now (a view changed the job, or we did
 * not run for a while ourselves). */
void progress_restart(struct progress *, uint64_t now_ms);
/* The laggard to declare dead now, or -1; *partner gets the replica
 * that is ahead of it and *lag_ms how long it has been behind. */
int progress_laggard(struct progress *, uint64_t now_ms, int *partner,
                     uint64_t *lag_ms);

/* What p2prun was asked to run. */
struct job_spec {
    int n, r;
    enum alloc_strategy strategy;
    char **argv; /* the program and its arguments, as typed */
    int argc;
    char **files; /* -l FILE */
    int nfiles;
    char **env; /* NAME=VALUE from -x */
    int nenv;
    int tag_output;
    int timeout_s; /* 0: none */
    int lease_ms;
    /* --each: a bag of tasks instead of a job */
    const char *each;    /* INPUTS, "-" for stdin; NULL: a job */
    int unordered;       /* results as they finish */
    const char *results; /* JSON lines, one per task */
    int retries;         /* re-runs of a failing task */
    int task_timeout_s;  /* 0: none */
    uint64_t mem_need;   /* bytes per task, 0: learn it */
    int worker;          /* --worker: PROGRAM serves many tasks (protocol) */
    int caller;          /* --workers W: PROGRAM calls tasks (p2p_task.h) */
    int workers_max;     /* W: tasks in hand at once, 0: every slot */
    int lag_ms;           /* progress rule: a replica this far behind goes */
    uint64_t spool_bytes; /* a backup's output kept ahead, per stream */
};

/* stage.c: the files a job takes along */
struct stage_file {
    char *path;
    char name[WIRE_MAX_NAME + 1]; /* base name in the job directory */
    uint8_t hash[SEC_HASH_LEN];
    uint64_t size;
    int executable;
};
/* Check and hash the program (when given as a path) and the -l files:
 * files[0..*n).  Sets *prog to the staged program's index or -1. */
int stage_prepare(const struct job_spec *, struct stage_file **files, int *n,
                  int *prog, char *err, size_t errlen);
void stage_free(struct stage_file *, int n);
/* One peer's copy of every file: offers them all on ch at once, then
 * streams what the peer says it lacks, as the connection drains. */
struct stage_peer;
struct stage_peer *stage_peer_new(const struct stage_file *, int nfiles,
                                  struct channel *);
void stage_peer_free(struct stage_peer *);
/* A FileNeed or FileDone from the peer (adds to *needed the bytes it
 * asks for); -1 with err when the peer could not take a file. */
int stage_peer_reply(struct stage_peer *, const struct msg *,
                     uint64_t *needed, char *err, size_t errlen);
/* Stream more (adding to *sent); 1 once every file is on the peer, 0 not
 * yet, -1 with err. */
int stage_peer_pump(struct stage_peer *, struct channel *, uint64_t *sent,
                    char *err, size_t errlen);

/* coord.c: the job's coordinator */
/* Run the job on the network the configuration names: allocate, stage,
 * launch, forward output, wait.  Returns p2prun's exit status. */
int coord_run(const struct p2p_config *, const struct p2p_group *,
              const uint8_t user_pk[SEC_SIGN_PK_LEN],
              const uint8_t user_sk[SEC_SIGN_SK_LEN], const struct job_spec *);

/* taskprog.c: is this a program that defines tasks (P2P_TASK)? */
/* 1 if the ELF file at path has a non-empty p2p_tasks section, which
 * P2P_TASK puts in every program that defines a task; 0 for any other
 * file, unreadable, truncated or not ELF. */
int taskprog_is_task_program(const char *path);
/* Where prog is, as execvp would find it: a name with a slash as is,
 * else the first executable on PATH, in path.  0, or -1 if none. */
int taskprog_find(const char *prog, char *path, size_t pathlen);

/* each.c: p2prun --each, a bag of tasks */
/* Run one task per line of js->each on the network; p2prun's status. */
int each_run(const struct p2p_config *, const struct p2p_group *,
             const uint8_t user_pk[SEC_SIGN_PK_LEN],
             const uint8_t user_sk[SEC_SIGN_SK_LEN], const struct job_spec *);
/* "2G", "512M", "1.5GiB", bytes; -1 if not a size. */
int each_parse_mem(const char *, uint64_t *);
/* Largest input of a worker task (a --workers program's call: name, NUL
 * and input, P2P_TASK_INPUT_MAX: 1 GiB), sent in launch pieces of at most
 * EACH_INPUT_PIECE bytes (each beside the program's arguments). */
#define EACH_CALL_MAX WIRE_MAX_TASK_INPUT
#define EACH_INPUT_PIECE (WIRE_MAX_CHUNK - 8192)

/* farmlink.c: p2prun --workers, the link to the program calling tasks */
struct farmlink;
struct farmlink_cbs {
    /* Call number task (from 1, in order): its payload (name, NUL,
     * input), now the callee's: in memory, or, when fd > 0 (a long
     * call), len bytes in that unlinked file and payload NULL. */
    void (*on_call)(void *arg, uint64_t task, uint8_t *payload, size_t len,
                    int fd);
    /* The program closed the farm: no more calls. */
    void (*on_end)(void *arg);
    /* The link is unusable (a malformed call, results not read). */
    void (*on_gone)(void *arg, const char *why);
};
/* Start argv with its end of a link in P2P_FARM_FD.  NULL with err. */
struct farmlink *farmlink_start(struct event_base *, char **argv,
                                const struct farmlink_cbs *, void *arg,
                                char *err, size_t errlen);
/* Stop (or resume) taking calls: the coordinator holds enough. */
void farmlink_pause(struct farmlink *, int pause);
/* Send an outcome: status (128+N and signaled for signal N) and the
 * result, or the message of a failure, in data (malloc'd or NULL, taken:
 * written from where it is, not copied, then freed). */
/* A successful result of len bytes kept in the unlinked file fd (from
 * its start): sent from the file, which the link then closes. */
void farmlink_result_file(struct farmlink *, uint64_t task, int fd,
                          uint64_t len);
void farmlink_result(struct farmlink *, uint64_t task, int status,
                     int signaled, void *data, size_t len);
/* Pass a signal on to the program. */
void farmlink_signal(struct farmlink *, int sig);
/* The farm is over: write what is left, close, wait for the program to
 * exit; its status (128+N for signal N). */
int farmlink_finish(struct farmlink *);
/* Free the link (a program still running is terminated). */
void farmlink_free(struct farmlink *);
/* spool.c: a replica's output kept on disk */
struct spool;
/* A new spool of nstreams queues (at most 2) of cap bytes each, in an
 * unlinked temporary file in dir (NULL: $TMPDIR, else /tmp).  NULL with
 * err. */
struct spool *spool_open(const char *dir, int nstreams, uint64_t cap,
                         char *err, size_t errlen);
/* Append n bytes to a queue; -1 with errno (ENOSPC: beyond cap). */
int spool_put(struct spool *, int stream, const void *, size_t n);
/* Copy up to max bytes from the head of a queue, without dropping them;
 * how many (0 on a read error, errno set). */
size_t spool_get(struct spool *, int stream, void *, size_t max);
/* Drop n bytes from the head (all of them if fewer); NULL is fine. */
void spool_drop(struct spool *, int stream, uint64_t n);
/* Bytes in a queue; 0 for NULL. */
uint64_t spool_len(const struct spool *, int stream);
/* Close; the file goes with it.  NULL is fine. */
void spool_close(struct spool *);
/* An unlinked temporary file in dir (NULL: $TMPDIR, else /tmp), open for
 * reading and writing; -1 with err. */
int spool_tmpfile(const char *dir, char *err, size_t errlen);

/* output.c: the job's stdout and stderr, once per rank (pure but for the
 * writes to the two descriptors and the spool files) */

struct output;
/* What a backup may keep ahead of the display, per stream, unless
 * output_set_spool says otherwise ([run] output_spool_mb). */
#define OUTPUT_SPOOL_DEFAULT ((uint64_t)CONF_DEFAULT_OUTPUT_SPOOL_MB * 1024 * 1024)
/* Ask the peer of (rank, replica) to stop (on) or resume reading its
 * output pipes. */
typedef void (*output_hold_fn)(void *arg, int rank, int replica, int on);

/* Forward to fd_out and fd_err; tag non-zero prefixes every line with
 * "[rank] ". */
struct output *output_new(int nranks, int nreplicas, int tag, int fd_out,
                          int fd_err);
/* Bytes from one replica's stream (1 stdout, 2 stderr).  Only the rank's
 * master (its lowest live replica) is shown, whole lines at a time; the
 * others are kept from the byte the master has reached, so that a new
 * master continues exactly where the old one stopped. */
void output_data(struct output *, int rank, int replica, int stream,
                 const void *, size_t);
/* A replica is gone: if it was the master, the next live replica takes
 * over and whatever it has beyond the old master's last byte is shown. */
void output_replica_dead(struct output *, int rank, int replica);
/* Spool backups' output in dir (NULL: $TMPDIR or /tmp) up to quota bytes
 * per stream (0: the default) before asking, through hold, for their
 * pipes to be held. */
void output_set_spool(struct output *, uint64_t quota, const char *dir,
                      output_hold_fn hold, void *arg);
/* How many ranks lost output (said on stderr when it happened). */
int output_lost(const struct output *);
/* The rank has finished: show any unterminated last line of its master. */
void output_rank_done(struct output *, int rank);
/* Free; NULL is fine.  Does not flush. */
void output_free(struct output *);

#endif
