/*
 * The one INI configuration shared by every program.  Looked up in
 * --conf FILE, else $P2P_CONF, else ~/.config/p2p/p2p.conf, else
 * /etc/p2p/p2p.conf; command-line flags override it afterwards.
 * conf/p2p.conf documents every key.
 */
#ifndef P2P_CONFIG_H
#define P2P_CONFIG_H

#include <stddef.h>

#define CONF_MAX_SUPERNODES 16
#define CONF_DEFAULT_SUPERNODE_PORT 9700
#define CONF_DEFAULT_PEER_PORT 9897

/* [peer] sharing */
#define SHARE_NEVER 0
#define SHARE_ALWAYS 1
#define SHARE_IDLE 2

/* A comma-separated list of words. */
struct conf_list {
    char **v;
    int n;
};

/* [users]: a login name for a user's public signing key. */
struct conf_user {
    char *name;
    char *key_hex; /* 64 hex digits */
};

struct p2p_config {
    char *path; /* the file read, NULL when none was found */

    /* [network] */
    char *group;    /* network name, mixed into every handshake */
    char *key_file; /* group secret, made by p2p-keygen --group */
    char *supernodes[CONF_MAX_SUPERNODES];
    int nsupernodes;
    int handshake_timeout_ms; /* a handshake must finish within this */
    int first_frame_ms;       /* accepted: the first frame, whole, in this */
    int preauth_max;          /* daemons: connections still in handshake */
    int preauth_per_host;     /* daemons: of them from one address */

    /* [supernode] */
    char *sn_listen;
    int sn_expire; /* seconds of silence before a peer is dropped */
    int sn_heartbeat_ms; /* period asked of peers (capped by the expiry) */
    char *sn_pid_file;
    int sn_check_peers; /* list a peer once its address proves its key */
    char *sn_http;       /* dashboard ADDR:PORT, or "none" */
#define CONF_DEFAULT_SN_HTTP "127.0.0.1:8780"
    char *sn_http_token; /* required beyond loopback */
    char *sn_http_token_file;
    struct conf_list sn_federation; /* the other supernodes (ADDR:PORT) */
    int sn_fed_summary;     /* best peers in a summary to the others */
    int sn_fed_interval_ms; /* how often summaries go out */
    int sn_list_max;        /* entries in a list reply at most */

    /* [peer] */
    char *peer_listen;
    char *state_dir;
    int slots;        /* 0: one per core */
    char *host_label; /* NULL: the machine id */
    int heartbeat_ms;
    int supernodes_per_peer; /* register with this many of supernodes */
    char *peer_pid_file;
    int sharing;                  /* SHARE_*: never (0), always, idle */
    int idle_after;               /* s without input before "away" */
    int owner_load_milli;         /* load not ours per core, x 1000 */
    char *hours;                  /* "19:00-08:00", NULL: any time */
    struct conf_list days;        /* mon ... sun, or ranges "mon-fri" */
    int suspend_s;                /* owner back: suspend this long */
    struct conf_list idle_files;  /* input sources (tests); empty: the
                                   * machine's */
    struct conf_list allow_users; /* names from [users] or hex keys */
    struct conf_list deny_users;
    struct conf_list allow_hosts; /* addresses or CIDR prefixes */
    struct conf_list deny_hosts;
    char *run_as;   /* account for jobs without job_uids */
    int cache_mb;   /* bound of the staged-file cache */
    char *job_uids; /* "FIRST-LAST": a uid per job (root), or "none" */
    int cgroups;    /* a cgroup per job where writable (default yes) */
    int private_tmp; /* a private /tmp and /dev/shm per job (root) */
    int job_mem_mb; /* memory per process; 0: job_mem_percent of the
                     * machine's memory per slot */
    int job_mem_percent;
    int job_tmp_mb; /* size of a job's /tmp; 0: its memory limit */
    int job_nofile; /* open-file limit per process; 0: inherited */
    int job_nproc;  /* processes per job process (its cgroup); 0: none */
    int job_cpu_weight; /* guest work against the owner's 100 */
    char *job_path; /* where bare command names are looked up */
    int max_lease_ms;
    int fairshare_halflife_s; /* usage of a peer halves in this time */

    /* [users] */
    struct conf_user *users;
    int nusers;

    /* [run] */
    char *user_key; /* the user's signing key; made on first use */
    char *strategy; /* spread or concentrate */
    int lease_ms;   /* how long peers wait for a silent p2prun */
    int encrypt;    /* MPI traffic between ranks sealed (default yes) */
    int shm;        /* ranks on one host share memory (default yes) */
    int replica_lag_ms;  /* progress rule; 0: lease_ms */
    int output_spool_mb; /* a backup's output kept ahead, per stream */
};

/* Defaults that the documentation states too (tests/test_docs_defaults.py
 * compares them with conf/p2p.conf and docs/). */
#define CONF_DEFAULT_LEASE_MS 5000
#define CONF_DEFAULT_OUTPUT_SPOOL_MB 64

/* Load defaults, then the file found as described above (explicit may be
 * NULL).  A missing explicit file, a syntax error or an unknown key is an
 * error: -1 with a message naming file and line in err.  Either way the
 * caller owns the result and frees it with config_free(). */
int config_load(struct p2p_config *, const char *explicit_path, char *err,
                size_t errlen);
/* Replace the supernode list with a comma-separated one; -1 if too many. */
int config_set_supernodes(struct p2p_config *, const char *list);
/* --supernode given n times (n > 0) replaces the configured list; n == 0
 * leaves it. */
void config_override_supernodes(struct p2p_config *, char *const *list,
                                int n);
/* Append one supernode ("--supernode" is repeatable); -1 if too many. */
int config_add_supernode(struct p2p_config *, const char *);
/* Does list contain word? */
int config_list_has(const struct conf_list *, const char *word);
/* Replace a string field (flags overriding the file). */
void config_set_str(char **field, const char *value);
void config_free(struct p2p_config *);

#endif
