/*
 * The bulk AEAD of the MPI data path, from OpenSSL's libcrypto (EVP):
 * libsodium 1.0.18 seals about 1.5 GB/s per core, libcrypto's AES-GCM
 * and ChaCha20-Poly1305 several times that (docs/mpi.md, "Speed").  Where
 * the CPU has VAES and VPCLMULQDQ and Intel's ipsec-mb library is
 * installed, AES-256-GCM comes from that instead (imb.h: 2.6 times
 * libcrypto 3.0's speed here, the same bytes).  This is the only file
 * set that includes OpenSSL headers; keys, signatures, the handshake and
 * every other channel stay with libsodium (sec.h).
 *
 * An aead is one direction of one connection: a key set up once (the
 * key schedule is computed once, not per frame) and then used for every
 * frame with a fresh 96-bit nonce.  Nonces are the caller's duty: never
 * the same nonce twice under one key (aead_nonce makes them from a
 * counter that only goes up).
 */
#ifndef P2P_AEAD_H
#define P2P_AEAD_H

#include <stddef.h>
#include <stdint.h>

#define AEAD_KEY_LEN 32
#define AEAD_NONCE_LEN 12
#define AEAD_TAG_LEN 16

enum aead_cipher {
    AEAD_AES256GCM,        /* AES-256-GCM (NIST SP 800-38D) */
    AEAD_CHACHA20POLY1305, /* ChaCha20-Poly1305 (RFC 8439) */
};

/* Which library computes a context's cipher. */
enum aead_lib {
    AEAD_LIB_AUTO,      /* ipsec-mb for AES-256-GCM where imb_ready(),
                           unless P2P_AEAD_LIB=libcrypto; else libcrypto */
    AEAD_LIB_LIBCRYPTO, /* OpenSSL's */
    AEAD_LIB_IPSECMB,   /* Intel's (AES-256-GCM only; NULL if not ready) */
};

struct aead;

/* A context for cipher under key, or NULL (no memory, or the library
 * refused).  The key is copied into the library's schedule; the caller
 * wipes its own copy.  aead_free accepts NULL and wipes the context.
 * aead_new is aead_new_from with AEAD_LIB_AUTO. */
struct aead *aead_new(enum aead_cipher, const uint8_t key[AEAD_KEY_LEN]);
struct aead *aead_new_from(enum aead_cipher, const uint8_t key[AEAD_KEY_LEN],
                           enum aead_lib);
void aead_free(struct aead *);
/* "libcrypto" or "ipsec-mb": which library a context uses. */
const char *aead_lib_name(const struct aead *);
/* The cipher's name, for logs and benchmarks. */
const char *aead_name(enum aead_cipher);

/* The nonce of message number counter: 32 zero bits, then the counter
 * little-endian (the layout libsodium's IETF construction used here). */
void aead_nonce(uint8_t nonce[AEAD_NONCE_LEN], uint64_t counter);

/* Seal len bytes of in (which may be out, or NULL when len is 0) with
 * ad as associated data: out gets len ciphertext bytes, then the
 * AEAD_TAG_LEN-byte tag.  0, or -1 if libcrypto failed (out is then
 * unusable). */
int aead_seal(struct aead *, uint8_t *out, const uint8_t *in, size_t len,
              const uint8_t *ad, size_t adlen,
              const uint8_t nonce[AEAD_NONCE_LEN]);
/* Open len bytes of in (ciphertext then tag, so len >= AEAD_TAG_LEN)
 * into out (len - AEAD_TAG_LEN bytes; may be in).  -1 when the tag does
 * not verify (tampered, replayed, reordered, another key): out is then
 * zeroed, so no unverified plaintext is left behind. */
int aead_open(struct aead *, uint8_t *out, const uint8_t *in, size_t len,
              const uint8_t *ad, size_t adlen,
              const uint8_t nonce[AEAD_NONCE_LEN]);

#endif
