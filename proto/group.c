/*
 * Loading the group key named by the configuration.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "group.h"

int
group_load(const struct p2p_config *cfg, struct p2p_group *g, char *err,
           size_t errlen)
{
    char why[256];

    memset(g, 0, sizeof *g);
    if (!codec_valid_token(cfg->group, WIRE_MAX_LABEL)) {
        snprintf(err, errlen,
                 "[network] group '%s': use 1 to %d printable characters "
                 "without spaces",
                 cfg->group, WIRE_MAX_LABEL);
        return -1;
    }
    snprintf(g->name, sizeof g->name, "%s", cfg->group);
    g->handshake_ms = cfg->handshake_timeout_ms;
    g->first_ms = cfg->first_frame_ms;
    if (cfg->key_file == NULL || cfg->key_file[0] == '\0') {
        snprintf(err, errlen,
                 "no group key: set [network] key_file in %s "
                 "(make one with: p2p-keygen --group FILE)",
                 cfg->path ? cfg->path : "the configuration");
        return -1;
    }
    if (sec_keyfile_read(cfg->key_file, g->key, sizeof g->key, 1, why,
                         sizeof why) == -1) {
        if (access(cfg->key_file, F_OK) == -1 && errno == ENOENT)
            /* The first run after an install: say what to do. */
            snprintf(err, errlen,
                     "no group key at %s: make the network's key once "
                     "(p2p-keygen --group %s) or copy it here from a "
                     "machine of the network, mode 0600; see p2p.conf(5)",
                     cfg->key_file, cfg->key_file);
        else
            snprintf(err, errlen, "group key: %s", why);
        return -1;
    }
    return 0;
}

void
group_params(const struct p2p_group *g, size_t max_frame, int idle_ms,
             struct channel_params *p)
{
    memset(p, 0, sizeof *p);
    p->group_key = g->key;
    p->group = g->name;
    p->handshake_ms = g->handshake_ms;
    p->first_ms = g->first_ms;
    p->max_frame = max_frame;
    p->idle_ms = idle_ms;
}

void
group_wipe(struct p2p_group *g)
{
    sec_wipe(g, sizeof *g);
}
