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

enum conf_type { CONF_STR, CONF_INT, CONF_PATH, CONF_LIST };

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
    {"supernode", "listen", CONF_STR, F(sn_listen), 0, 0},
    {"supernode", "expire", CONF_INT, F(sn_expire), 1, 3600},
    {"supernode", "pid_file", CONF_PATH, F(sn_pid_file), 0, 0},
    {"peer", "listen", CONF_STR, F(peer_listen), 0, 0},
    {"peer", "state_dir", CONF_PATH, F(state_dir), 0, 0},
    {"peer", "slots", CONF_INT, F(slots), 0, 4096},
    {"peer", "host_label", CONF_STR, F(host_label), 0, 0},
    {"peer", "heartbeat_ms", CONF_INT, F(heartbeat_ms), 50, 60000},
    {"peer", "pid_file", CONF_PATH, F(peer_pid_file), 0, 0},
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

int
config_add_supernode(struct p2p_config *cfg, const char *s)
{
    if (cfg->nsupernodes == CONF_MAX_SUPERNODES)
        return -1;
    cfg->supernodes[cfg->nsupernodes++] = xstrdup(s);
    return 0;
}

int
config_set_supernodes(struct p2p_config *cfg, const char *list)
{
    char *copy, *tok, *save, *p, *end;

    while (cfg->nsupernodes > 0)
        free(cfg->supernodes[--cfg->nsupernodes]);
    copy = xstrdup(list);
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        for (p = tok; *p == ' ' || *p == '\t'; p++)
            ;
        end = p + strlen(p);
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (*p == '\0')
            continue;
        if (config_add_supernode(cfg, p) == -1) {
            free(copy);
            return -1;
        }
    }
    free(copy);
    return 0;
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
    cfg->sn_listen = xstrdup("0.0.0.0:9700");
    cfg->sn_expire = 10;
    cfg->peer_listen = xstrdup("0.0.0.0:9897");
    cfg->heartbeat_ms = 1000;
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
    memset(cfg, 0, sizeof *cfg);
}
