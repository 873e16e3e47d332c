/*
 * The channel handshake as a pure state machine (no I/O), so that unit
 * tests and the fuzzer drive it directly.  A pre-shared group key
 * authenticates both ends of a fresh X25519 exchange:
 *
 *   C -> S   HELLO    client ephemeral key (32)
 *   S -> C   PROOF    server ephemeral key (32) | MAC_a("server" | T) (32)
 *   C -> S   PROOF    MAC_a("client" | T) (32)
 *
 * T hashes a label, the group name and both ephemeral keys; a = KDF(group
 * key, 1).  Session keys are the crypto_kx keys, each further keyed with
 * KDF(group key, 2) and T, so that nobody without the group key can read
 * traffic even if a MAC check were skipped.  See docs/protocol.md.
 */
#ifndef P2P_HANDSHAKE_H
#define P2P_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#include "sec.h"

#define HS_MSG_MAX 64 /* largest handshake message */

enum hs_role { HS_CLIENT, HS_SERVER };
enum hs_status { HS_CONTINUE, HS_DONE, HS_FAIL };

struct hs_keys {
    uint8_t tx[SEC_KEY_LEN];
    uint8_t rx[SEC_KEY_LEN];
    uint8_t session_id[SEC_HASH_LEN]; /* same on both ends: channel binding */
};

struct handshake;

/* A handshake for one connection; group is the network name. */
struct handshake *handshake_new(enum hs_role, const uint8_t key[SEC_KEY_LEN],
                                const char *group);
/* Wipes and frees; NULL is fine. */
void handshake_free(struct handshake *);
/* Client only: the first message, into out[HS_MSG_MAX]; returns its size. */
size_t handshake_start(struct handshake *, uint8_t *out);
/* One received handshake message.  A reply, if any, goes to
 * out[HS_MSG_MAX] with its size in *outlen (0 for none).  After HS_FAIL
 * handshake_error() says why; after HS_DONE the keys are ready. */
enum hs_status handshake_input(struct handshake *, const uint8_t *in,
                               size_t len, uint8_t *out, size_t *outlen);
const char *handshake_error(const struct handshake *);
/* The session keys, once HS_DONE; -1 before. */
int handshake_keys(const struct handshake *, struct hs_keys *);

#endif
