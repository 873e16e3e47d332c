/*
 * Control messages as plain C structs, and their encoding.  codec.c is the
 * only user of the generated protobuf-c code: decoding validates every
 * field (lengths, character sets, ranges, required parts) so that the
 * rest of the program only sees well-formed messages.
 */
#ifndef P2P_CODEC_H
#define P2P_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "sec.h"
#include "wire.h"

enum msg_type {
    MSG_NONE = 0,
    MSG_REGISTER,
    MSG_REGISTER_ACK,
    MSG_HEARTBEAT,
    MSG_HEARTBEAT_ACK,
    MSG_UNREGISTER,
    MSG_PING,
    MSG_PONG,
    MSG_LIST_REQUEST,
    MSG_LIST_REPLY,
    MSG_ERROR,
    MSG_USER_AUTH,
    MSG_RESERVE,
    MSG_RESERVE_REPLY,
    MSG_RELEASE,
    MSG_KILL,
    MSG_FILE_OFFER,
    MSG_FILE_NEED,
    MSG_FILE_CHUNK,
    MSG_FILE_DONE,
    MSG_LAUNCH,
    MSG_LAUNCH_REPLY,
    MSG_OUTPUT,
    MSG_PROC_EXIT,
    MSG_PROC_ADDR,
    MSG_TABLE,
    MSG_JOB_ABORT,
    MSG_VIEW,    /* u.view: coordinator -> peer, membership change */
    MSG_SUSPECT, /* u.suspect: peer -> coordinator, a lost connection */
    MSG_FARM_OPEN,      /* u.farm: p2prun -> peer, a farm of tasks */
    MSG_TASK_STARTED,   /* u.job: peer -> p2prun, a queued task started */
    MSG_OUTPUT_HOLD,    /* u.note: coordinator -> peer, value 1 hold, 0 read */
    MSG_PROGRESS,       /* u.note: peer -> coordinator, value the counter */
    MSG_NODE_CHALLENGE, /* u.node: prove your node key (key may be zero) */
    MSG_NODE_PROOF,     /* u.node: node key and signature */
    MSG_JOB_REPORT,     /* u.report: peer -> supernode, what it runs */
    MSG_JOB_NOTE,       /* u.jnote: coordinator -> supernode, progress */
    MSG_FED_SUMMARY,    /* u.fed: supernode -> supernode, its best peers */
    MSG__COUNT          /* keep last */
};

enum peer_state {
    PEER_STATE_UNKNOWN = 0,
    PEER_STATE_AVAILABLE,
    PEER_STATE_BUSY,
    PEER_STATE_FULL,
    PEER_STATE_NOT_SHARING,
    PEER_STATE_OWNER_BUSY,
};

struct resources {
    uint32_t cores;
    uint64_t mem_total, mem_free;     /* bytes, free <= total */
    uint32_t load_milli;              /* load average x 1000 */
    uint32_t slots_total, slots_free; /* free <= total */
    enum peer_state state;
};

struct msg_register {
    uint8_t node_key[SEC_SIGN_PK_LEN];
    uint8_t signature[SEC_SIG_LEN];
    char host_label[WIRE_MAX_LABEL + 1];
    char addr[WIRE_MAX_ADDR + 1];
    char version[WIRE_MAX_LABEL + 1];
    struct resources res;
    /* Shown by the dashboard; strings may be empty, started 0: unknown. */
    char cpu_model[WIRE_MAX_HOSTINFO + 1];
    char os[WIRE_MAX_HOSTINFO + 1];
    char kernel[WIRE_MAX_HOSTINFO + 1];
    uint64_t started; /* seconds since the epoch */
};

struct msg_register_ack {
    uint32_t heartbeat_ms, expire_ms;
};

struct peer_entry {
    uint8_t id[SEC_SIGN_PK_LEN];
    char host_label[WIRE_MAX_LABEL + 1];
    char addr[WIRE_MAX_ADDR + 1];
    struct resources res;
    uint32_t rtt_us;
    uint64_t age_ms;
};

/* How one process of a job is doing (enum ProcRun of p2p.proto). */
enum proc_run {
    PROC_RUN_UNKNOWN = 0,
    PROC_RUN_RUNNING,
    PROC_RUN_SUSPENDED,
    PROC_RUN_EXITED, /* code: exit status */
    PROC_RUN_KILLED, /* code: signal */
    PROC_RUN_EVICTED,
    PROC_RUN_LOST, /* its peer went silent or left (supernode only) */
};

struct job_proc {
    uint32_t rank, replica;
    enum proc_run state;
    uint32_t code;
    char host[WIRE_MAX_LABEL + 1]; /* supernode's view: the peer's label */
};

/* A job or farm, as one peer reports it or as the supernode aggregates
 * it.  Decoding guarantees procs within size x nreplicas (both within
 * the wire limits) and printable user and command. */
struct job_info {
    uint8_t job[WIRE_JOB_ID_LEN];
    char user[WIRE_MAX_LABEL + 1];
    char command[WIRE_MAX_LABEL + 1];
    uint32_t size, nreplicas;
    uint64_t started; /* seconds since the epoch */
    int farm;
    uint32_t tasks_running, tasks_queued, tasks_done;
    int finished;  /* supernode only */
    int32_t exit;  /* supernode only, once finished; -1 unknown */
    uint32_t hosts; /* supernode only: peers reporting it */
    /* supernode only: a farm's coordinator's figures (JobNote), 0 none */
    uint64_t coord_total, coord_done, coord_failed;
    size_t nprocs;
    struct job_proc *procs; /* owned when decoded, borrowed to encode */
};

/* A peer's snapshot of its jobs: at most WIRE_MAX_REPORT_JOBS jobs and
 * WIRE_MAX_REPORT_PROCS processes in all; more counts what was left out. */
struct msg_job_report {
    size_t njobs;
    struct job_info *jobs; /* owned when decoded, borrowed to encode */
    uint32_t more;
};

/* What a farm's coordinator tells the supernode of its progress. */
struct msg_job_note {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint64_t tasks_total, tasks_done, tasks_failed;
};

struct msg_list_reply {
    size_t npeers;
    struct peer_entry *peers; /* owned by the message */
    size_t njobs;             /* at most WIRE_MAX_LIST_JOBS */
    struct job_info *jobs;    /* likewise, with their procs */
};

/* A list request: local set, only the supernode's own peers; jobs set,
 * the supernode's job view too. */
struct msg_list_request {
    int local;
    int jobs;
};

/* One part of a supernode's summary.  Decoding guarantees part < nparts
 * <= WIRE_FED_MAX_PARTS and npeers <= WIRE_FED_PART_ENTRIES. */
struct msg_fed_summary {
    uint8_t instance[WIRE_FED_INSTANCE_LEN];
    uint64_t seq;
    uint32_t part, nparts;
    uint32_t total_peers;
    uint64_t total_slots_free;
    char addr[WIRE_MAX_ADDR + 1]; /* may be empty */
    size_t npeers;
    struct peer_entry *peers; /* owned when decoded, borrowed to encode */
};

struct msg_error {
    uint32_t code;
    char text[WIRE_MAX_TEXT + 1];
};

struct msg_user_auth {
    uint8_t user_key[SEC_SIGN_PK_LEN];
    uint8_t signature[SEC_SIG_LEN];
    char user[WIRE_MAX_LABEL + 1];
};

struct msg_reserve {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t slots;
    uint32_t lease_ms;
};

/* Reserve and launch replies, and file verification. */
struct msg_reply {
    uint8_t job[WIRE_JOB_ID_LEN];
    int ok;
    uint32_t granted; /* reserve only */
    char reason[WIRE_MAX_TEXT + 1];
};

struct msg_file {
    uint8_t hash[SEC_HASH_LEN];
    uint64_t size; /* offer */
    int flag;      /* need: the peer wants it; done: verified */
    char reason[WIRE_MAX_TEXT + 1]; /* done */
};

/* A chunk of a file or of a process's output; data is owned by a decoded
 * message, borrowed by one being encoded. */
struct msg_data {
    uint8_t job[WIRE_JOB_ID_LEN];   /* output */
    uint8_t hash[SEC_HASH_LEN];     /* file chunk */
    uint32_t rank, replica, stream; /* output: stream 1 stdout, 2 stderr */
    uint8_t *data;
    size_t len;
};

struct proc_spec {
    uint32_t rank, replica;
};

struct job_file {
    char name[WIRE_MAX_NAME + 1];
    uint8_t hash[SEC_HASH_LEN];
    int executable;
};

/* Arrays are owned by a decoded message, borrowed by one being encoded.
 * Decoding guarantees: 1 <= size <= WIRE_MAX_RANKS, 1 <= nreplicas <=
 * WIRE_MAX_REPLICAS, every proc within them, 1..WIRE_MAX_ARGS arguments,
 * env entries NAME=VALUE with a valid name, file names that are plain
 * base names. */
struct msg_launch {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t size, nreplicas, lease_ms;
    size_t nprocs, nargv, nenv, nfiles;
    struct proc_spec *procs;
    char **argv;
    char **env;
    struct job_file *files;
    uint64_t task;     /* a farm's task (from 1), 0: a job */
    uint64_t mem_need; /* bytes, tasks only */
    uint8_t farm[WIRE_JOB_ID_LEN];
    int worker;     /* a task for a persistent worker */
    uint8_t *input; /* its input (owned; NULL when empty) */
    size_t input_len;
    int input_more; /* a piece: more of the input follows */
};

/* A farm of tasks opens on a peer. */
struct msg_farm {
    uint8_t farm[WIRE_JOB_ID_LEN];
    uint32_t lease_ms;
};

/* Where one process of a job listens; an abort request reuses it with
 * status. */
struct proc_addr {
    uint32_t rank, replica;
    char addr[WIRE_MAX_ADDR + 1];
};

struct msg_proc_addr {
    uint8_t job[WIRE_JOB_ID_LEN];
    struct proc_addr p;
    int32_t status; /* job abort */
};

/* Decoding guarantees every entry is within WIRE_MAX_RANKS x
 * WIRE_MAX_REPLICAS and has a valid address token. */
struct msg_table {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint8_t key[SEC_KEY_LEN];
    size_t nprocs;
    struct proc_addr *procs; /* owned when decoded, borrowed to encode */
    /* A part: procs are entries [first, first + nprocs) of a table of
     * total entries (decoding checks first + nprocs <= total). */
    uint32_t first, total;
};

/* Entries of one Table message: 512 addresses of at most 64 characters
 * stay well within FRAME_MAX_REQUEST. */
#define WIRE_TABLE_PART 512

/* A limit of the peer's box that a process reached. */
enum exit_limit {
    EXIT_LIMIT_NONE = 0,
    EXIT_LIMIT_MEMORY = 1, /* killed by the memory limit */
    EXIT_LIMIT_PROCS = 2   /* a fork was refused by the process limit */
};

struct msg_proc_exit {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t rank, replica;
    int signaled;
    uint32_t code;
    uint64_t mem_peak;       /* bytes, 0: unknown */
    enum exit_limit limit;   /* decoding maps unknown values to NONE */
    uint64_t limit_value;    /* bytes or processes */
    int evicted;             /* the owner took the machine back */
    char evict_reason[WIRE_MAX_TEXT + 1];
    int worker_lost; /* a worker's task left unanswered */
    char error[WIRE_MAX_TEXT + 1];
    uint8_t *out;    /* a worker's answer: owned when decoded */
    size_t out_len;
};

/* The job's membership, numbered: the processes declared dead so far
 * (cumulative), as indices rank * R + replica.  Decoding guarantees
 * ndead <= WIRE_MAX_RANKS * WIRE_MAX_REPLICAS and every index below that. */
struct msg_view {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t number;
    size_t ndead;
    uint32_t *dead; /* owned when decoded, borrowed to encode */
};

/* A node proof, or a challenge (key all zero: any key; no signature). */
struct msg_node {
    uint8_t node_key[SEC_SIGN_PK_LEN];
    uint8_t signature[SEC_SIG_LEN]; /* proof */
};

/* Process (rank, replica) lost its connection to process index proc. */
struct msg_suspect {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t rank, replica;
    uint32_t proc;
};

/* One process of a job and a value: an output hold (1 hold, 0 read
 * again) or a progress counter.  Decoding guarantees rank and replica
 * within WIRE_MAX_RANKS and WIRE_MAX_REPLICAS, a hold of 0 or 1. */
struct msg_note {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint32_t rank, replica;
    uint64_t value;
};

struct msg {
    enum msg_type type;
    union {
        struct msg_register reg;
        struct msg_register_ack reg_ack;
        struct resources heartbeat;
        uint64_t stamp; /* ping, pong */
        struct msg_list_reply list;
        struct msg_list_request list_req;
        struct msg_job_report report;
        struct msg_job_note jnote;
        struct msg_fed_summary fed;
        struct msg_error error;
        struct msg_user_auth auth;
        struct msg_reserve reserve;
        struct msg_reply reply;       /* reserve reply, launch reply */
        uint8_t job[WIRE_JOB_ID_LEN]; /* release, kill */
        struct msg_file file;         /* offer, need, done */
        struct msg_data data;         /* file chunk, output */
        struct msg_launch launch;
        struct msg_proc_exit exit;
        struct msg_proc_addr addr; /* proc addr, job abort */
        struct msg_table table;
        struct msg_view view;
        struct msg_suspect suspect;
        struct msg_farm farm;
        struct msg_note note; /* output hold, progress */
        struct msg_node node; /* node challenge, node proof */
    } u;
};

/* Encode into a new buffer (*out, *len; the caller frees *out).  Returns -1
 * if the message itself is invalid (a bug in the caller). */
int codec_encode(const struct msg *, uint8_t **out, size_t *len);
/* Decode and validate; on success the caller owns *m (codec_msg_free).
 * On failure -1 with a reason in err, and nothing to free. */
int codec_decode(const uint8_t *, size_t, struct msg *, char *err,
                 size_t errlen);
/* Free what a decoded message owns; NULL is fine. */
void codec_msg_free(struct msg *);
/* Free the procs of n decoded job_infos, then the array. */
void codec_jobs_free(struct job_info *, size_t n);
const char *proc_run_name(enum proc_run);

const char *msg_type_name(enum msg_type);
const char *peer_state_name(enum peer_state);
/* A label or address: 1..max printable characters without spaces. */
int codec_valid_token(const char *, size_t max);
/* A file name that is safe inside a directory: 1..WIRE_MAX_NAME bytes, no
 * '/', no control characters, not "." or "..". */
int codec_valid_basename(const char *);

#endif
