/*
 * INI configuration, parsed with inih (this is the only file that uses
 * it).  Keys are described by one table; unknown keys are errors so that a
 * typo does not silently keep a default.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "config.h"
#include "xmalloc.h"

enum conf_type {
    CONF_STR,
    CONF_INT,
    CONF_PATH,
    CONF_LIST,
    CONF_WORDS,
    CONF_BOOL,
    CONF_SHARING, /* always|yes, idle, never|no */
    CONF_MILLI    /* a decimal number, stored x 1000 */
};

struct conf_key {
    const char *section;
    const char *name;
    enum conf_type type;
    size_t offset;
    long min, max; /* CONF_INT */
};

#define F(x) offsetof(struct p2p_config, x)
static const struct conf_key conf_keys[] = {
    {"network", "group", CONF_STR, F(group), 0, 0},
    {"network", "key_file", CONF_PATH, F(key_file), 0, 0},
    {"network", "supernodes", CONF_LIST, 0, 0, 0},
    {"network", "handshake_timeout_ms", CONF_INT, F(handshake_timeout_ms), 100,
     60000},
    {"network", "first_frame_ms", CONF_INT, F(first_frame_ms), 100, 60000},
    {"network", "preauth_max", CONF_INT, F(preauth_max), 1, 65536},
    {"network", "preauth_per_host", CONF_INT, F(preauth_per_host), 1, 65536},
    {"supernode", "listen", CONF_STR, F(sn_listen), 0, 0},
    {"supernode", "expire", CONF_INT, F(sn_expire), 1, 3600},
    {"supernode", "heartbeat_ms", CONF_INT, F(sn_heartbeat_ms), 50, 600000},
    {"supernode", "pid_file", CONF_PATH, F(sn_pid_file), 0, 0},
    {"supernode", "check_peers", CONF_BOOL, F(sn_check_peers), 0, 0},
    {"supernode", "http", CONF_STR, F(sn_http), 0, 0},
    {"supernode", "http_token", CONF_STR, F(sn_http_token), 0, 0},
    {"supernode", "http_token_file", CONF_PATH, F(sn_http_token_file), 0, 0},
    {"supernode", "federation", CONF_WORDS, F(sn_federation), 0, 0},
    {"supernode", "federation_summary", CONF_INT, F(sn_fed_summary), 1,
     16000},
    {"supernode", "federation_interval_ms", CONF_INT, F(sn_fed_interval_ms),
     100, 60000},
    {"supernode", "list_max", CONF_INT, F(sn_list_max), 1, 100000},
    {"peer", "listen", CONF_STR, F(peer_listen), 0, 0},
    {"peer", "state_dir", CONF_PATH, F(state_dir), 0, 0},
    {"peer", "slots", CONF_INT, F(slots), 0, 4096},
    {"peer", "host_label", CONF_STR, F(host_label), 0, 0},
    {"peer", "heartbeat_ms", CONF_INT, F(heartbeat_ms), 50, 60000},
    {"peer", "supernodes_per_peer", CONF_INT, F(supernodes_per_peer), 1,
     CONF_MAX_SUPERNODES},
    {"peer", "pid_file", CONF_PATH, F(peer_pid_file), 0, 0},
    {"peer", "sharing", CONF_SHARING, F(sharing), 0, 0},
    {"peer", "idle_after", CONF_INT, F(idle_after), 0, 7 * 86400},
    {"peer", "owner_load", CONF_MILLI, F(owner_load_milli), 0, 1000000},
    {"peer", "hours", CONF_STR, F(hours), 0, 0},
    {"peer", "days", CONF_WORDS, F(days), 0, 0},
    {"peer", "suspend_s", CONF_INT, F(suspend_s), 0, 86400},
    {"peer", "idle_files", CONF_WORDS, F(idle_files), 0, 0},
    {"peer", "allow_users", CONF_WORDS, F(allow_users), 0, 0},
    {"peer", "deny_users", CONF_WORDS, F(deny_users), 0, 0},
    {"peer", "allow_hosts", CONF_WORDS, F(allow_hosts), 0, 0},
    {"peer", "deny_hosts", CONF_WORDS, F(deny_hosts), 0, 0},
    {"peer", "run_as", CONF_STR, F(run_as), 0, 0},
    {"peer", "cache_mb", CONF_INT, F(cache_mb), 1, 1 << 24},
    {"peer", "job_uids", CONF_STR, F(job_uids), 0, 0},
    {"peer", "cgroups", CONF_BOOL, F(cgroups), 0, 0},
    {"peer", "private_tmp", CONF_BOOL, F(private_tmp), 0, 0},
    {"peer", "job_mem_mb", CONF_INT, F(job_mem_mb), 0, 1 << 24},
    {"peer", "job_mem_percent", CONF_INT, F(job_mem_percent), 1, 100},
    {"peer", "job_tmp_mb", CONF_INT, F(job_tmp_mb), 0, 1 << 24},
    {"peer", "job_nofile", CONF_INT, F(job_nofile), 0, 1 << 20},
    {"peer", "job_nproc", CONF_INT, F(job_nproc), 0, 1 << 22},
    {"peer", "job_cpu_weight", CONF_INT, F(job_cpu_weight), 1, 10000},
    {"peer", "job_path", CONF_STR, F(job_path), 0, 0},
    {"peer", "max_lease_ms", CONF_INT, F(max_lease_ms), 500, 3600000},
    {"peer", "fairshare_halflife_s", CONF_INT, F(fairshare_halflife_s), 1,
     365 * 86400},
    {"run", "user_key", CONF_PATH, F(user_key), 0, 0},
    {"run", "strategy", CONF_STR, F(strategy), 0, 0},
    {"run", "lease_ms", CONF_INT, F(lease_ms), 500, 3600000},
    {"run", "encrypt", CONF_BOOL, F(encrypt), 0, 0},
    {"run", "shm", CONF_BOOL, F(shm), 0, 0},
    {"run", "replica_lag_ms", CONF_INT, F(replica_lag_ms), 0, 3600000},
    {"run", "output_spool_mb", CONF_INT, F(output_spool_mb), 1, 1 << 20},
};
#undef F

struct conf_parse {
    struct p2p_config *cfg;
    const char *dir; /* relative paths in the file are relative to it */
    char err[256];
};

void
config_set_str(char **field, const char *value)
{
    free(*field);
    *field = value != NULL ? xstrdup(value) : NULL;
}

static void
conf_list_free(struct conf_list *l)
{
    while (l->n > 0)
        free(l->v[--l->n]);
    free(l->v);
    l->v = NULL;
}

/* Split a comma-separated value into words, trimming blanks. */
static void
conf_list_set(struct conf_list *l, const char *value)
{
    char *copy, *tok, *save, *p, *end;

    conf_list_free(l);
    copy = xstrdup(value);
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        for (p = tok; *p == ' ' || *p == '\t'; p++)
            ;
        end = p + strlen(p);
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (*p == '\0')
            continue;
        l->v = xreallocarray(l->v, (size_t)l->n + 1, sizeof *l->v);
        l->v[l->n++] = xstrdup(p);
    }
    free(copy);
}

int
config_list_has(const struct conf_list *l, const char *word)
{
    int i;

    for (i = 0; i < l->n; i++)
        if (strcmp(l->v[i], word) == 0)
            return 1;
    return 0;
}

/* [users] NAME = HEXKEY */
static int
conf_user(struct conf_parse *cp, const char *name, const char *value)
{
    struct p2p_config *cfg = cp->cfg;
    size_t i;

    for (i = 0; name[i] != '\0'; i++)
        if (name[i] <= ' ' || name[i] > '~' || name[i] == ',' || i >= 64)
            goto bad;
    if (strlen(value) != 64 || strspn(value, "0123456789abcdefABCDEF") != 64)
        goto bad;
    cfg->users =
        xreallocarray(cfg->users, (size_t)cfg->nusers + 1, sizeof *cfg->users);
    cfg->users[cfg->nusers].name = xstrdup(name);
    cfg->users[cfg->nusers].key_hex = xstrdup(value);
    cfg->nusers++;
    return 1;
bad:
    snprintf(cp->err, sizeof cp->err,
             "[users] %s: expected NAME = 64 hex digits (a user's .pub key)",
             name);
    return 0;
}

int
config_add_supernode(struct p2p_config *cfg, const char *s)
{
    if (cfg->nsupernodes == CONF_MAX_SUPERNODES)
        return -1;
    cfg->supernodes[cfg->nsupernodes++] = xstrdup(s);
    return 0;
}

void
config_override_supernodes(struct p2p_config *cfg, char *const *list, int n)
{
    int i;

    if (n == 0)
        return;
    config_set_supernodes(cfg, "");
    for (i = 0; i < n && i < CONF_MAX_SUPERNODES; i++)
        config_add_supernode(cfg, list[i]);
}

int
config_set_supernodes(struct p2p_config *cfg, const char *list)
{
    struct conf_list words = {0};
    int i, rc = 0;

    while (cfg->nsupernodes > 0)
        free(cfg->supernodes[--cfg->nsupernodes]);
    conf_list_set(&words, list);
    for (i = 0; i < words.n && rc == 0; i++)
        rc = config_add_supernode(cfg, words.v[i]);
    conf_list_free(&words);
    return rc;
}

static int
conf_handler(void *user, const char *section, const char *name,
             const char *value)
{
    struct conf_parse *cp = user;
    const struct conf_key *k;
    size_t i;
    long v;
    char *ep;

    /* inih goes on after an error and reports the first one's line: keep
     * the first one's text too. */
    if (cp->err[0] != '\0')
        return 0;
    if (strcmp(section, "users") == 0)
        return conf_user(cp, name, value);
    for (i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++) {
        k = &conf_keys[i];
        if (strcmp(k->section, section) != 0 || strcmp(k->name, name) != 0)
            continue;
        switch (k->type) {
        case CONF_STR:
            config_set_str((char **)((char *)cp->cfg + k->offset), value);
            return 1;
        case CONF_PATH:
            if (value[0] != '/' && value[0] != '\0' && cp->dir != NULL) {
                char *full;
                xasprintf(&full, "%s/%s", cp->dir, value);
                config_set_str((char **)((char *)cp->cfg + k->offset), full);
                free(full);
            } else
                config_set_str((char **)((char *)cp->cfg + k->offset), value);
            return 1;
        case CONF_INT:
            errno = 0;
            v = strtol(value, &ep, 10);
            if (*value == '\0' || *ep != '\0' || errno != 0 || v < k->min ||
                v > k->max) {
                snprintf(cp->err, sizeof cp->err,
                         "[%s] %s: '%s' is not a number from %ld to %ld",
                         section, name, value, k->min, k->max);
                return 0;
            }
            *(int *)((char *)cp->cfg + k->offset) = (int)v;
            return 1;
        case CONF_WORDS:
            conf_list_set((struct conf_list *)((char *)cp->cfg + k->offset),
                          value);
            return 1;
        case CONF_BOOL:
            if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0 ||
                strcmp(value, "1") == 0)
                *(int *)((char *)cp->cfg + k->offset) = 1;
            else if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0 ||
                     strcmp(value, "0") == 0)
                *(int *)((char *)cp->cfg + k->offset) = 0;
            else {
                snprintf(cp->err, sizeof cp->err,
                         "[%s] %s: '%s' is not yes or no", section, name,
                         value);
                return 0;
            }
            return 1;
        case CONF_SHARING:
            if (strcmp(value, "always") == 0 || strcmp(value, "yes") == 0)
                *(int *)((char *)cp->cfg + k->offset) = SHARE_ALWAYS;
            else if (strcmp(value, "idle") == 0)
                *(int *)((char *)cp->cfg + k->offset) = SHARE_IDLE;
            else if (strcmp(value, "never") == 0 || strcmp(value, "no") == 0)
                *(int *)((char *)cp->cfg + k->offset) = SHARE_NEVER;
            else {
                snprintf(cp->err, sizeof cp->err,
                         "[%s] %s: '%s' is not always, idle or never",
                         section, name, value);
                return 0;
            }
            return 1;
        case CONF_MILLI: {
            double d;

            errno = 0;
            d = strtod(value, &ep);
            if (*value == '\0' || *ep != '\0' || errno != 0 ||
                d * 1000 < (double)k->min || d * 1000 > (double)k->max) {
                snprintf(cp->err, sizeof cp->err,
                         "[%s] %s: '%s' is not a number from %g to %g",
                         section, name, value, (double)k->min / 1000,
                         (double)k->max / 1000);
                return 0;
            }
            *(int *)((char *)cp->cfg + k->offset) = (int)(d * 1000 + 0.5);
            return 1;
        }
        case CONF_LIST:
            if (config_set_supernodes(cp->cfg, value) == -1) {
                snprintf(cp->err, sizeof cp->err,
                         "[%s] %s: more than %d entries", section, name,
                         CONF_MAX_SUPERNODES);
                return 0;
            }
            return 1;
        }
    }
    snprintf(cp->err, sizeof cp->err, "unknown key [%s] %s", section, name);
    return 0;
}

static void
config_defaults(struct p2p_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->group = xstrdup("p2pmpi");
    cfg->handshake_timeout_ms = 5000;
    cfg->first_frame_ms = 1000;
    cfg->preauth_max = 256;
    cfg->preauth_per_host = 16;
    cfg->sn_listen = xstrdup("0.0.0.0:9700");
    cfg->sn_expire = 10;
    cfg->sn_heartbeat_ms = 1000;
    cfg->sn_check_peers = 1;
    cfg->sn_http = xstrdup(CONF_DEFAULT_SN_HTTP);
    cfg->sn_fed_summary = 1000;
    cfg->sn_fed_interval_ms = 1000;
    cfg->sn_list_max = 10000;
    cfg->supernodes_per_peer = 2;
    cfg->peer_listen = xstrdup("0.0.0.0:9897");
    cfg->heartbeat_ms = 1000;
    cfg->sharing = SHARE_ALWAYS;
    cfg->idle_after = 900;
    cfg->owner_load_milli = 300;
    cfg->suspend_s = 60;
    cfg->cache_mb = 1024;
    cfg->job_uids = xstrdup("61000-61063");
    cfg->cgroups = 1;
    cfg->private_tmp = 1;
    cfg->job_mem_percent = 80;
    cfg->job_nproc = 512;
    cfg->job_cpu_weight = 20;
    cfg->job_path = xstrdup("/usr/local/bin:/usr/bin:/bin");
    cfg->max_lease_ms = 60000;
    cfg->fairshare_halflife_s = 3600;
    cfg->strategy = xstrdup("spread");
    cfg->lease_ms = CONF_DEFAULT_LEASE_MS;
    cfg->encrypt = 1;
    cfg->shm = 1;
    cfg->replica_lag_ms = 0; /* the lease */
    cfg->output_spool_mb = CONF_DEFAULT_OUTPUT_SPOOL_MB;
}

/* The file to read: explicit, $P2P_CONF, the user's, the system's. */
static char *
config_find(const char *explicit_path)
{
    const char *env, *home;
    char *p;

    if (explicit_path != NULL)
        return xstrdup(explicit_path);
    if ((env = getenv("P2P_CONF")) != NULL && *env != '\0')
        return xstrdup(env);
    if ((home = getenv("HOME")) != NULL) {
        xasprintf(&p, "%s/.config/p2p/p2p.conf", home);
        if (access(p, F_OK) == 0)
            return p;
        free(p);
    }
    if (access("/etc/p2p/p2p.conf", F_OK) == 0)
        return xstrdup("/etc/p2p/p2p.conf");
    return NULL;
}

int
config_load(struct p2p_config *cfg, const char *explicit_path, char *err,
            size_t errlen)
{
    struct conf_parse cp;
    struct stat st;
    char *path, *dir, *slash;
    FILE *f;
    int line;

    config_defaults(cfg);
    if ((path = config_find(explicit_path)) == NULL)
        return 0;
    if ((f = fopen(path, "r")) == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(path);
        return -1;
    }
    if (fstat(fileno(f), &st) == -1 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        fclose(f);
        free(path);
        return -1;
    }
    dir = xstrdup(path);
    if ((slash = strrchr(dir, '/')) != NULL)
        *slash = '\0';
    else {
        free(dir);
        dir = xstrdup(".");
    }
    memset(&cp, 0, sizeof cp);
    cp.cfg = cfg;
    cp.dir = dir;
    line = ini_parse_file(f, conf_handler, &cp);
    fclose(f);
    free(dir);
    if (line != 0) {
        snprintf(err, errlen, "%s:%d: %s", path, line,
                 cp.err[0] ? cp.err : "syntax error");
        free(path);
        return -1;
    }
    cfg->path = path;
    return 0;
}

void
config_free(struct p2p_config *cfg)
{
    size_t i;

    free(cfg->path);
    for (i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++)
        if (conf_keys[i].type == CONF_STR || conf_keys[i].type == CONF_PATH)
            free(*(char **)((char *)cfg + conf_keys[i].offset));
    while (cfg->nsupernodes > 0)
        free(cfg->supernodes[--cfg->nsupernodes]);
    for (i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++)
        if (conf_keys[i].type == CONF_WORDS)
            conf_list_free(
                (struct conf_list *)((char *)cfg + conf_keys[i].offset));
    while (cfg->nusers > 0) {
        cfg->nusers--;
        free(cfg->users[cfg->nusers].name);
        free(cfg->users[cfg->nusers].key_hex);
    }
    free(cfg->users);
    memset(cfg, 0, sizeof *cfg);
}
