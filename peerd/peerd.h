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

#include <event2/event.h>

#include "codec.h"
#include "config.h"
#include "group.h"
#include "netaddr.h"

struct link;

struct peerd {
    struct event_base *base;
    struct p2p_config *cfg;
    struct group group;
    char *state_dir;
    char host_label[WIRE_MAX_LABEL + 1];
    struct netaddr listen_addr;   /* as bound (the real port) */
    const struct netaddr *source; /* local address for outgoing links */
    uint8_t node_pk[SEC_SIGN_PK_LEN];
    uint8_t node_sk[SEC_SIGN_SK_LEN];
    int slots_total;
    int heartbeat_ms;
    struct link **links;
    int nlinks;
    struct service *service;
    int stopping;
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
/* Current figures: hardware, free memory and load from /proc, slots. */
void resources_probe(struct resources *, uint32_t slots_total,
                     uint32_t slots_free);

/* link.c: one per configured supernode */
struct link *link_new(struct peerd *, const char *supernode);
/* Unregister (if registered) and close; the loop finishes the job. */
void link_shutdown(struct link *);
void link_free(struct link *);

/* service.c: requests to this peer */
struct service;
struct service *service_new(struct peerd *, int listen_fd);
void service_free(struct service *);

#endif
