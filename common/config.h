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
    char *sn_pid_file;
    int sn_check_peers; /* list a peer once its address proves its key */

    /* [peer] */
    char *peer_listen;
    char *state_dir;
    int slots;        /* 0: one per core */
    char *host_label; /* NULL: the machine id */
    int heartbeat_ms;
    char *peer_pid_file;
    int sharing;                  /* 0: refuse new work */
    struct conf_list allow_users; /* names from [users] or hex keys */
    struct conf_list deny_users;
    struct conf_list allow_hosts; /* addresses or CIDR prefixes */
    struct conf_list deny_hosts;
    char *run_as;   /* account for jobs when peerd runs as root */
    int cache_mb;   /* bound of the staged-file cache */
    int job_mem_mb; /* address-space limit per process; 0: none */
    int job_nofile; /* open-file limit per process; 0: inherited */
    int job_nproc;  /* processes of the job account; 0: inherited */
    int max_lease_ms;

    /* [users] */
    struct conf_user *users;
    int nusers;

    /* [run] */
    char *user_key; /* the user's signing key; made on first use */
    char *strategy; /* spread or concentrate */
    int lease_ms;   /* how long peers wait for a silent p2prun */
    int encrypt;    /* MPI traffic between ranks sealed (default yes) */
};

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
