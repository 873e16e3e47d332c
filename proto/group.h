/*
 * The network a program belongs to: its name and secret key, as the
 * configuration names them, and the channel parameters built from them.
 */
#ifndef P2P_GROUP_H
#define P2P_GROUP_H

#include <stddef.h>

#include "channel.h"
#include "config.h"
#include "sec.h"

struct p2p_group {
    uint8_t key[SEC_KEY_LEN];
    char name[WIRE_MAX_LABEL + 1];
    int handshake_ms;
    int first_ms; /* an accepted connection's first frame, whole */
};

/* Read [network] group and key_file; -1 with a message a user can act on. */
int group_load(const struct p2p_config *, struct p2p_group *, char *err,
               size_t errlen);
/* Channel parameters for this group with the given limits. */
void group_params(const struct p2p_group *, size_t max_frame, int idle_ms,
                  struct channel_params *);
void group_wipe(struct p2p_group *);

#endif
