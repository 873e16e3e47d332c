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

struct p2p_config {
    char *path; /* the file read, NULL when none was found */

    /* [network] */
    char *group;    /* network name, mixed into every handshake */
    char *key_file; /* group secret, made by p2p-keygen --group */
    char *supernodes[CONF_MAX_SUPERNODES];
    int nsupernodes;
    int handshake_timeout_ms; /* a handshake must finish within this */

    /* [supernode] */
    char *sn_listen;
    int sn_expire; /* seconds of silence before a peer is dropped */
    char *sn_pid_file;

    /* [peer] */
    char *peer_listen;
    char *state_dir;
    int slots;        /* 0: one per core */
    char *host_label; /* NULL: the machine id */
    int heartbeat_ms;
    char *peer_pid_file;
};

/* Load defaults, then the file found as described above (explicit may be
 * NULL).  A missing explicit file, a syntax error or an unknown key is an
 * error: -1 with a message naming file and line in err.  Either way the
 * caller owns the result and frees it with config_free(). */
int config_load(struct p2p_config *, const char *explicit_path, char *err,
                size_t errlen);
/* Replace the supernode list with a comma-separated one; -1 if too many. */
int config_set_supernodes(struct p2p_config *, const char *list);
/* Append one supernode ("--supernode" is repeatable); -1 if too many. */
int config_add_supernode(struct p2p_config *, const char *);
/* Replace a string field (flags overriding the file). */
void config_set_str(char **field, const char *value);
void config_free(struct p2p_config *);

#endif
