/*
 * Security primitives, all from libsodium's high-level constructions.
 * This is the only file set that includes sodium.h: key exchange (X25519
 * via crypto_kx), MACs and hashing (BLAKE2b), key derivation, AEAD
 * (ChaCha20-Poly1305 IETF), signatures (Ed25519), randomness, and the
 * hex key files that p2p-keygen writes.
 */
#ifndef P2P_SEC_H
#define P2P_SEC_H

#include <stddef.h>
#include <stdint.h>

#define SEC_KEY_LEN 32   /* group key, session keys, MAC keys */
#define SEC_KX_PK_LEN 32 /* ephemeral public key */
#define SEC_KX_SK_LEN 32
#define SEC_MAC_LEN 32
#define SEC_HASH_LEN 32
#define SEC_TAG_LEN 16 /* AEAD overhead */
#define SEC_SIGN_PK_LEN 32
#define SEC_SIGN_SK_LEN 64
#define SEC_SIG_LEN 64

/* Must succeed once before anything else; -1 if the library cannot start. */
int sec_init(void);
void sec_random(void *, size_t);
/* Overwrite secrets before their memory is reused. */
void sec_wipe(void *, size_t);
/* Constant-time comparison: 1 when equal. */
int sec_equal(const void *, const void *, size_t);

/* BLAKE2b-256 of a buffer. */
void sec_hash(uint8_t out[SEC_HASH_LEN], const void *, size_t);
/* Incremental keyed BLAKE2b-256 (key may be NULL for a plain hash). */
struct sec_hasher {
    uint8_t state[384] __attribute__((aligned(64)));
};
void sec_hasher_init(struct sec_hasher *, const uint8_t *key);
void sec_hasher_update(struct sec_hasher *, const void *, size_t);
void sec_hasher_final(struct sec_hasher *, uint8_t out[SEC_HASH_LEN]);
/* Subkey number id of a master key, in the 8-character context ctx. */
void sec_kdf(uint8_t out[SEC_KEY_LEN], const uint8_t master[SEC_KEY_LEN],
             uint64_t id, const char ctx[8]);

/* Ephemeral key exchange: a fresh key pair, and the two directional keys
 * (rx, tx) each side derives; the client's tx is the server's rx. */
void sec_kx_keypair(uint8_t pk[SEC_KX_PK_LEN], uint8_t sk[SEC_KX_SK_LEN]);
int sec_kx_client(uint8_t rx[SEC_KEY_LEN], uint8_t tx[SEC_KEY_LEN],
                  const uint8_t pk[SEC_KX_PK_LEN],
                  const uint8_t sk[SEC_KX_SK_LEN],
                  const uint8_t server_pk[SEC_KX_PK_LEN]);
int sec_kx_server(uint8_t rx[SEC_KEY_LEN], uint8_t tx[SEC_KEY_LEN],
                  const uint8_t pk[SEC_KX_PK_LEN],
                  const uint8_t sk[SEC_KX_SK_LEN],
                  const uint8_t client_pk[SEC_KX_PK_LEN]);

/* AEAD with a 64-bit message counter as nonce: out gets len+SEC_TAG_LEN
 * bytes.  open returns -1 when the tag does not verify (tampered, replayed,
 * reordered or wrong key). */
void sec_seal(uint8_t *out, const uint8_t *in, size_t len, const uint8_t *ad,
              size_t adlen, uint64_t counter, const uint8_t key[SEC_KEY_LEN]);
int sec_open(uint8_t *out, const uint8_t *in, size_t len, const uint8_t *ad,
             size_t adlen, uint64_t counter, const uint8_t key[SEC_KEY_LEN]);

/* Ed25519. */
void sec_sign_keypair(uint8_t pk[SEC_SIGN_PK_LEN], uint8_t sk[SEC_SIGN_SK_LEN]);
/* The public half of a secret signing key. */
void sec_sign_sk_to_pk(uint8_t pk[SEC_SIGN_PK_LEN],
                       const uint8_t sk[SEC_SIGN_SK_LEN]);
void sec_sign(uint8_t sig[SEC_SIG_LEN], const void *, size_t,
              const uint8_t sk[SEC_SIGN_SK_LEN]);
int sec_verify(const uint8_t sig[SEC_SIG_LEN], const void *, size_t,
               const uint8_t pk[SEC_SIGN_PK_LEN]);

/* Lower-case hex; out must hold 2*len+1 bytes. */
char *sec_hex(char *out, const void *, size_t len);
/* Standard base64 of len bytes, in a new string the caller frees. */
char *sec_base64(const void *, size_t len);
/* Exactly len bytes from hex text; -1 otherwise. */
int sec_unhex(uint8_t *out, size_t len, const char *hex);

/* Key files: one line of hex.  write creates the file with the given mode
 * and refuses to overwrite; read_secret refuses files that other users may
 * read or write.  -1 with a message in err. */
int sec_keyfile_write(const char *path, const void *, size_t, int mode,
                      char *err, size_t errlen);
int sec_keyfile_read(const char *path, uint8_t *, size_t len, int secret,
                     char *err, size_t errlen);

#endif
