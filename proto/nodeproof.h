/*
 * The node-key proof: a peer shows that it holds the node key it
 * registered with by signing the session id of the connection it was
 * reached on.  The session id is unique per connection and equal on both
 * ends, so a proof cannot be replayed on another connection, relayed from
 * another peer, or made by anyone without the node's secret key.
 *
 *   signed bytes = "p2p-node-proof" 00 00 (16) || session id (32)
 *
 * p2prun asks every peer before reserving on it; the supernode asks the
 * address a peer registered before listing it (docs/protocol.md).
 */
#ifndef P2P_NODEPROOF_H
#define P2P_NODEPROOF_H

#include <stddef.h>

#include "channel.h"

/* The challenge for a ready channel (want may be NULL: any key). */
void nodeproof_challenge(const uint8_t *want, struct msg *out);
/* The proof of this node's key for a ready channel. */
void nodeproof_make(const struct channel *, const uint8_t pk[SEC_SIGN_PK_LEN],
                    const uint8_t sk[SEC_SIGN_SK_LEN], struct msg *out);
/* 0 if the proof is for key want and its signature over this channel's
 * session id verifies; -1 with a reason a user can act on. */
int nodeproof_check(const struct channel *, const struct msg_node *,
                    const uint8_t want[SEC_SIGN_PK_LEN], char *why,
                    size_t whylen);

#endif
