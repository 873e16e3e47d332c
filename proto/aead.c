/*
 * libcrypto's EVP AEAD interface behind aead.h, and for AES-256-GCM
 * ipsec-mb's where it is faster (imb.h).  No primitive is invented:
 * AES-256-GCM and ChaCha20-Poly1305 as the libraries provide them, a
 * 96-bit nonce and a 16-byte tag, the associated data first.  One
 * EVP_CIPHER_CTX (or one expanded ipsec-mb key) per context holds the
 * key schedule; each message only re-initialises the nonce.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "aead.h"
#include "imb.h"

struct aead {
    EVP_CIPHER_CTX *ctx; /* libcrypto's, or */
    struct imb_gcm *imb; /* ipsec-mb's (AES-256-GCM only) */
};

/* EVP's lengths are ints: longer buffers go through in pieces. */
#define AEAD_PIECE (1 << 30)

static const EVP_CIPHER *
aead_evp(enum aead_cipher c)
{
    switch (c) {
    case AEAD_AES256GCM:
        return EVP_aes_256_gcm();
    case AEAD_CHACHA20POLY1305:
        return EVP_chacha20_poly1305();
    }
    return NULL;
}

const char *
aead_name(enum aead_cipher c)
{
    switch (c) {
    case AEAD_AES256GCM:
        return "AES-256-GCM";
    case AEAD_CHACHA20POLY1305:
        return "ChaCha20-Poly1305";
    }
    return "?";
}

/* AEAD_LIB_AUTO: ipsec-mb where imb.h says it can be used, unless the
 * environment's P2P_AEAD_LIB says libcrypto. */
static enum aead_lib
aead_lib_auto(void)
{
    const char *e = getenv("P2P_AEAD_LIB");

    if (e != NULL && strcmp(e, "libcrypto") == 0)
        return AEAD_LIB_LIBCRYPTO;
    return imb_ready() ? AEAD_LIB_IPSECMB : AEAD_LIB_LIBCRYPTO;
}

struct aead *
aead_new(enum aead_cipher c, const uint8_t key[AEAD_KEY_LEN])
{
    return aead_new_from(c, key, AEAD_LIB_AUTO);
}

struct aead *
aead_new_from(enum aead_cipher c, const uint8_t key[AEAD_KEY_LEN],
              enum aead_lib lib)
{
    const EVP_CIPHER *evp = aead_evp(c);
    struct aead *a;

    if (lib == AEAD_LIB_AUTO)
        lib = c == AEAD_AES256GCM ? aead_lib_auto() : AEAD_LIB_LIBCRYPTO;
    if (lib == AEAD_LIB_IPSECMB) {
        if (c != AEAD_AES256GCM || !imb_ready() ||
            (a = calloc(1, sizeof *a)) == NULL)
            return NULL;
        if ((a->imb = imb_gcm_new(key)) == NULL) {
            free(a);
            return NULL;
        }
        return a;
    }
    if (evp == NULL || (a = calloc(1, sizeof *a)) == NULL)
        return NULL;
    if ((a->ctx = EVP_CIPHER_CTX_new()) == NULL ||
        EVP_CipherInit_ex(a->ctx, evp, NULL, NULL, NULL, 1) != 1 ||
        EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_IVLEN, AEAD_NONCE_LEN,
                            NULL) != 1 ||
        EVP_CIPHER_CTX_key_length(a->ctx) != AEAD_KEY_LEN ||
        EVP_CipherInit_ex(a->ctx, NULL, NULL, key, NULL, 1) != 1) {
        aead_free(a);
        return NULL;
    }
    return a;
}

void
aead_free(struct aead *a)
{
    if (a == NULL)
        return;
    EVP_CIPHER_CTX_free(a->ctx); /* cleanses the key schedule */
    imb_gcm_free(a->imb);        /* so does this */
    free(a);
}

const char *
aead_lib_name(const struct aead *a)
{
    return a->imb != NULL ? "ipsec-mb" : "libcrypto";
}

void
aead_nonce(uint8_t nonce[AEAD_NONCE_LEN], uint64_t counter)
{
    int i;

    memset(nonce, 0, 4);
    for (i = 0; i < 8; i++)
        nonce[4 + i] = (uint8_t)(counter >> (8 * i));
}

/* Run len bytes of in through the cipher into out (out NULL: the bytes
 * are associated data). */
static int
aead_update(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    int n, outl;

    while (len > 0) {
        n = len > AEAD_PIECE ? AEAD_PIECE : (int)len;
        if (EVP_CipherUpdate(ctx, out, &outl, in, n) != 1 ||
            (out != NULL && outl != n))
            return -1;
        in += n;
        if (out != NULL)
            out += n;
        len -= (size_t)n;
    }
    return 0;
}

int
aead_seal(struct aead *a, uint8_t *out, const uint8_t *in, size_t len,
          const uint8_t *ad, size_t adlen, const uint8_t nonce[AEAD_NONCE_LEN])
{
    int outl;

    if (a->imb != NULL) {
        imb_gcm(a->imb, 1, out, in, len, nonce, ad, adlen, out + len);
        return 0;
    }
    if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 1) != 1 ||
        aead_update(a->ctx, NULL, ad, adlen) == -1 ||
        aead_update(a->ctx, out, in, len) == -1 ||
        EVP_CipherFinal_ex(a->ctx, out + len, &outl) != 1 || outl != 0 ||
        EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_GET_TAG, AEAD_TAG_LEN,
                            out + len) != 1)
        return -1;
    return 0;
}

int
aead_open(struct aead *a, uint8_t *out, const uint8_t *in, size_t len,
          const uint8_t *ad, size_t adlen, const uint8_t nonce[AEAD_NONCE_LEN])
{
    uint8_t tag[AEAD_TAG_LEN];
    size_t plen;
    int outl;

    if (len < AEAD_TAG_LEN)
        return -1;
    plen = len - AEAD_TAG_LEN;
    memcpy(tag, in + plen, AEAD_TAG_LEN); /* before out may overwrite it */
    if (a->imb != NULL) {
        uint8_t got[AEAD_TAG_LEN];

        imb_gcm(a->imb, 0, out, in, plen, nonce, ad, adlen, got);
        if (CRYPTO_memcmp(got, tag, AEAD_TAG_LEN) == 0)
            return 0;
        /* Decrypted before verified, as with libcrypto: wiped. */
        if (plen > 0)
            memset(out, 0, plen);
        return -1;
    }
    if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 0) != 1 ||
        aead_update(a->ctx, NULL, ad, adlen) == -1 ||
        aead_update(a->ctx, out, in, plen) == -1 ||
        EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_TAG, AEAD_TAG_LEN,
                            tag) != 1 ||
        EVP_CipherFinal_ex(a->ctx, out + plen, &outl) != 1) {
        /* libcrypto decrypts before it verifies: leave nothing behind. */
        if (plen > 0)
            memset(out, 0, plen);
        return -1;
    }
    return 0;
}
