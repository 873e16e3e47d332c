/*
 * AES-256-GCM from Intel's Multi-Buffer Crypto for IPsec library
 * (ipsec-mb, Debian's libipsec-mb), for aead.c only.  Where the CPU has
 * VAES and VPCLMULQDQ, ipsec-mb seals and opens a frame about 2.6 times
 * as fast as libcrypto 3.0 (16.9 against 6.5 GB/s per core here,
 * docs/mpi.md), and the bytes are the same: AES-256-GCM is one algorithm
 * whoever computes it, so peers using either interoperate.
 *
 * The library is loaded at run time (dlopen of libIPSec_MB.so.1), not
 * linked: a program built with p2pcc is copied to peers that may not
 * have it, and there it runs on libcrypto alone.  It is used only when
 * it loads, has the major version built against and at least its
 * release, reports the two CPU features, and reproduces a published
 * test vector; otherwise imb_ready() says no and aead.c stays with
 * libcrypto.
 */
#ifndef P2P_IMB_H
#define P2P_IMB_H

#include <stddef.h>
#include <stdint.h>

struct imb_gcm;

/* Whether ipsec-mb's AES-256-GCM can be used here (loaded and checked
 * once; the first call decides). */
int imb_ready(void);
/* Its version ("1.3.0"), or why it is not used. */
const char *imb_status(void);

/* An expanded key, or NULL (not ready, no memory).  imb_gcm_free wipes
 * it and accepts NULL. */
struct imb_gcm *imb_gcm_new(const uint8_t key[32]);
void imb_gcm_free(struct imb_gcm *);

/* AES-256-GCM with a 12-byte iv, sealing (seal 1) or opening (0): len
 * bytes of in to out (in may be out), and the 16-byte tag of ad and the
 * ciphertext into tag.  Opening computes the tag of what it decrypted;
 * comparing it is the caller's. */
void imb_gcm(const struct imb_gcm *, int seal, uint8_t *out,
             const uint8_t *in, size_t len, const uint8_t iv[12],
             const uint8_t *ad, size_t adlen, uint8_t tag[16]);

#endif
