/*
 * libsodium behind a narrow interface.  No primitive is invented here:
 * every function is one of libsodium's constructions, named for its use.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "sec.h"

_Static_assert(sizeof(struct sec_hasher) >= sizeof(crypto_generichash_state),
               "sec_hasher too small");
_Static_assert(crypto_kx_PUBLICKEYBYTES == SEC_KX_PK_LEN, "kx pk");
_Static_assert(crypto_kx_SESSIONKEYBYTES == SEC_KEY_LEN, "kx session");
_Static_assert(crypto_aead_chacha20poly1305_ietf_ABYTES == SEC_TAG_LEN, "tag");
_Static_assert(crypto_sign_SECRETKEYBYTES == SEC_SIGN_SK_LEN, "sign sk");
_Static_assert(crypto_sign_BYTES == SEC_SIG_LEN, "sig");
_Static_assert(crypto_kdf_CONTEXTBYTES == 8, "kdf ctx");

int
sec_init(void)
{
    return sodium_init() < 0 ? -1 : 0;
}

void
sec_random(void *buf, size_t len)
{
    randombytes_buf(buf, len);
}

void
sec_wipe(void *buf, size_t len)
{
    sodium_memzero(buf, len);
}

int
sec_equal(const void *a, const void *b, size_t len)
{
    return sodium_memcmp(a, b, len) == 0;
}

void
sec_hash(uint8_t out[SEC_HASH_LEN], const void *in, size_t len)
{
    crypto_generichash(out, SEC_HASH_LEN, in, len, NULL, 0);
}

void
sec_hasher_init(struct sec_hasher *h, const uint8_t *key)
{
    crypto_generichash_init((crypto_generichash_state *)h->state, key,
                            key ? SEC_KEY_LEN : 0, SEC_HASH_LEN);
}

void
sec_hasher_update(struct sec_hasher *h, const void *in, size_t len)
{
    crypto_generichash_update((crypto_generichash_state *)h->state, in, len);
}

void
sec_hasher_final(struct sec_hasher *h, uint8_t out[SEC_HASH_LEN])
{
    crypto_generichash_final((crypto_generichash_state *)h->state, out,
                             SEC_HASH_LEN);
    sodium_memzero(h, sizeof *h);
}

void
sec_kdf(uint8_t out[SEC_KEY_LEN], const uint8_t master[SEC_KEY_LEN],
        uint64_t id, const char ctx[8])
{
    crypto_kdf_derive_from_key(out, SEC_KEY_LEN, id, ctx, master);
}

void
sec_kx_keypair(uint8_t pk[SEC_KX_PK_LEN], uint8_t sk[SEC_KX_SK_LEN])
{
    crypto_kx_keypair(pk, sk);
}

int
sec_kx_client(uint8_t rx[SEC_KEY_LEN], uint8_t tx[SEC_KEY_LEN],
              const uint8_t pk[SEC_KX_PK_LEN], const uint8_t sk[SEC_KX_SK_LEN],
              const uint8_t server_pk[SEC_KX_PK_LEN])
{
    return crypto_kx_client_session_keys(rx, tx, pk, sk, server_pk) == 0 ? 0
                                                                         : -1;
}

int
sec_kx_server(uint8_t rx[SEC_KEY_LEN], uint8_t tx[SEC_KEY_LEN],
              const uint8_t pk[SEC_KX_PK_LEN], const uint8_t sk[SEC_KX_SK_LEN],
              const uint8_t client_pk[SEC_KX_PK_LEN])
{
    return crypto_kx_server_session_keys(rx, tx, pk, sk, client_pk) == 0 ? 0
                                                                         : -1;
}

/* 96-bit IETF nonce: 32 zero bits, then the counter little-endian. */
static void
sec_nonce(uint8_t nonce[12], uint64_t counter)
{
    int i;

    memset(nonce, 0, 4);
    for (i = 0; i < 8; i++)
        nonce[4 + i] = (uint8_t)(counter >> (8 * i));
}

void
sec_seal(uint8_t *out, const uint8_t *in, size_t len, const uint8_t *ad,
         size_t adlen, uint64_t counter, const uint8_t key[SEC_KEY_LEN])
{
    uint8_t nonce[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];

    sec_nonce(nonce, counter);
    crypto_aead_chacha20poly1305_ietf_encrypt(out, NULL, in, len, ad, adlen,
                                              NULL, nonce, key);
}

int
sec_open(uint8_t *out, const uint8_t *in, size_t len, const uint8_t *ad,
         size_t adlen, uint64_t counter, const uint8_t key[SEC_KEY_LEN])
{
    uint8_t nonce[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];

    if (len < SEC_TAG_LEN)
        return -1;
    sec_nonce(nonce, counter);
    return crypto_aead_chacha20poly1305_ietf_decrypt(out, NULL, NULL, in, len,
                                                     ad, adlen, nonce, key) == 0
               ? 0
               : -1;
}

void
sec_sign_keypair(uint8_t pk[SEC_SIGN_PK_LEN], uint8_t sk[SEC_SIGN_SK_LEN])
{
    crypto_sign_keypair(pk, sk);
}

void
sec_sign_sk_to_pk(uint8_t pk[SEC_SIGN_PK_LEN],
                  const uint8_t sk[SEC_SIGN_SK_LEN])
{
    crypto_sign_ed25519_sk_to_pk(pk, sk);
}

void
sec_sign(uint8_t sig[SEC_SIG_LEN], const void *msg, size_t len,
         const uint8_t sk[SEC_SIGN_SK_LEN])
{
    crypto_sign_detached(sig, NULL, msg, len, sk);
}

int
sec_verify(const uint8_t sig[SEC_SIG_LEN], const void *msg, size_t len,
           const uint8_t pk[SEC_SIGN_PK_LEN])
{
    return crypto_sign_verify_detached(sig, msg, len, pk) == 0 ? 0 : -1;
}

char *
sec_hex(char *out, const void *in, size_t len)
{
    return sodium_bin2hex(out, 2 * len + 1, in, len);
}

int
sec_unhex(uint8_t *out, size_t len, const char *hex)
{
    size_t got;
    const char *end;

    if (strlen(hex) != 2 * len)
        return -1;
    if (sodium_hex2bin(out, len, hex, 2 * len, NULL, &got, &end) != 0 ||
        got != len || *end != '\0')
        return -1;
    return 0;
}

int
sec_keyfile_write(const char *path, const void *key, size_t len, int mode,
                  char *err, size_t errlen)
{
    char hex[2 * 128 + 2];
    size_t n;
    int fd;

    if (len > 128) {
        snprintf(err, errlen, "%s: key too long", path);
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    sec_hex(hex, key, len);
    n = strlen(hex);
    hex[n++] = '\n';
    if (fchmod(fd, (mode_t)mode) == -1 || write(fd, hex, n) != (ssize_t)n ||
        fsync(fd) == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        sodium_memzero(hex, sizeof hex);
        return -1;
    }
    sodium_memzero(hex, sizeof hex);
    close(fd);
    return 0;
}

int
sec_keyfile_read(const char *path, uint8_t *key, size_t len, int secret,
                 char *err, size_t errlen)
{
    char buf[2 * 128 + 8];
    struct stat st;
    ssize_t n;
    int fd, rc = -1;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (secret && (st.st_mode & 077) != 0) {
        snprintf(err, errlen,
                 "%s: secret key is accessible by other users (mode %04o); "
                 "run chmod 600 %s",
                 path, (unsigned)(st.st_mode & 07777), path);
        goto out;
    }
    n = read(fd, buf, sizeof buf - 1);
    if (n < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto out;
    }
    buf[n] = '\0';
    while (n > 0 &&
           (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    if (sec_unhex(key, len, buf) == -1) {
        snprintf(err, errlen, "%s: not a %zu-byte hex key", path, len);
        goto out;
    }
    rc = 0;
out:
    sodium_memzero(buf, sizeof buf);
    close(fd);
    return rc;
}

char *
sec_base64(const void *p, size_t len)
{
    size_t n = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
    char *out = malloc(n);

    if (out == NULL)
        return NULL;
    sodium_bin2base64(out, n, p, len, sodium_base64_VARIANT_ORIGINAL);
    return out;
}
