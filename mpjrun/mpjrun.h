/*
 * The user's side: p2prun, mpihost, p2p-keygen, and what they share.
 */
#ifndef P2P_MPJRUN_H
#define P2P_MPJRUN_H

#include <stddef.h>

#include "codec.h"
#include "config.h"
#include "group.h"

/* snquery.c */
/* Ask the configured supernodes, in order, for the peer list; the first
 * that answers wins.  timeout_ms bounds each attempt.  On failure -1 with
 * one line in err saying what was tried and why it failed.  The caller
 * frees out->peers. */
int snquery_list(const struct p2p_config *, const struct group *,
                 int timeout_ms, struct msg_list_reply *out, char *err,
                 size_t errlen);

#endif
