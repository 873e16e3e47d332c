/*
 * The MPI data path's AEAD (proto/aead.c, libcrypto, and ipsec-mb for
 * AES-256-GCM where imb.h can use it): published known-answer vectors for
 * both ciphers (RFC 8439 section 2.8.2 for ChaCha20-Poly1305; McGrew and
 * Viega's GCM test case 16 for AES-256-GCM), through each library,
 * refusal of any change to ciphertext, tag, associated data, nonce or key
 * (with nothing unverified left in the output), sealing in place, one
 * context reused for many messages as the transport does, and frames
 * sealed by one library opened by the other (peers with and without
 * ipsec-mb talk to each other).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aead.h"
#include "imb.h"
#include "test.h"

struct kat {
    enum aead_cipher cipher;
    const char *key, *nonce, *ad, *plain, *sealed; /* hex; sealed has the tag */
};

static const struct kat kats[] = {
    /* RFC 8439, 2.8.2: the "sunscreen" message. */
    {AEAD_CHACHA20POLY1305,
     "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
     "070000004041424344454647", "50515253c0c1c2c3c4c5c6c7",
     "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
     "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
     "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
     "637265656e20776f756c642062652069742e",
     "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
     "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
     "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
     "3ff4def08e4b7a9de576d26586cec64b6116"
     "1ae10b594f09e26a7e902ecbd0600691"},
    /* McGrew & Viega, "The Galois/Counter Mode of Operation", test
     * case 16 (AES-256, 96-bit IV, associated data). */
    {AEAD_AES256GCM,
     "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
     "76fc6ece0f4e1768cddf8853bb2d551b"},
};

/* Hex to bytes; returns the length. */
static size_t
unhex(uint8_t *out, size_t cap, const char *hex)
{
    size_t n = strlen(hex) / 2, i;
    unsigned v;

    if (n > cap)
        test_fail(__FILE__, __LINE__, "vector too long");
    for (i = 0; i < n; i++) {
        char b[3] = {hex[2 * i], hex[2 * i + 1], 0};

        v = (unsigned)strtoul(b, NULL, 16);
        out[i] = (uint8_t)v;
    }
    return n;
}

struct vec {
    uint8_t key[AEAD_KEY_LEN], nonce[AEAD_NONCE_LEN], ad[64], plain[256],
        sealed[256 + AEAD_TAG_LEN];
    size_t adlen, plen, slen;
};

static void
vec_load(const struct kat *k, struct vec *v)
{
    CHECK_EQ_INT((long long)unhex(v->key, sizeof v->key, k->key),
                 AEAD_KEY_LEN);
    CHECK_EQ_INT((long long)unhex(v->nonce, sizeof v->nonce, k->nonce),
                 AEAD_NONCE_LEN);
    v->adlen = unhex(v->ad, sizeof v->ad, k->ad);
    v->plen = unhex(v->plain, sizeof v->plain, k->plain);
    v->slen = unhex(v->sealed, sizeof v->sealed, k->sealed);
    CHECK_EQ_INT((long long)v->slen, (long long)(v->plen + AEAD_TAG_LEN));
}

/* Seal and open the vector with lib, then refuse every kind of change. */
static void
kat_run(const struct kat *k, enum aead_lib lib)
{
    static struct vec v;
    uint8_t out[256 + AEAD_TAG_LEN], buf[256 + AEAD_TAG_LEN];
    uint8_t key2[AEAD_KEY_LEN], nonce2[AEAD_NONCE_LEN];
    struct aead *a, *b;
    size_t i;

    vec_load(k, &v);
    CHECK((a = aead_new_from(k->cipher, v.key, lib)) != NULL);
    if (a == NULL)
        return;
    CHECK_EQ_INT(aead_seal(a, out, v.plain, v.plen, v.ad, v.adlen, v.nonce),
                 0);
    CHECK_MEM(out, v.sealed, v.slen);
    memset(buf, 0xee, sizeof buf);
    CHECK_EQ_INT(aead_open(a, buf, v.sealed, v.slen, v.ad, v.adlen, v.nonce),
                 0);
    CHECK_MEM(buf, v.plain, v.plen);

    /* Every byte of ciphertext and tag, flipped: refused, out zeroed. */
    memcpy(out, v.sealed, v.slen);
    for (i = 0; i < v.slen; i++) {
        out[i] ^= 0x40;
        memset(buf, 0xee, sizeof buf);
        CHECK_EQ_INT(aead_open(a, buf, out, v.slen, v.ad, v.adlen, v.nonce),
                     -1);
        CHECK(buf[0] == 0 && buf[v.plen - 1] == 0);
        out[i] ^= 0x40;
    }
    /* Associated data changed, shortened, or missing. */
    for (i = 0; i < v.adlen; i++) {
        v.ad[i] ^= 0x01;
        CHECK_EQ_INT(aead_open(a, buf, out, v.slen, v.ad, v.adlen, v.nonce),
                     -1);
        v.ad[i] ^= 0x01;
    }
    CHECK_EQ_INT(aead_open(a, buf, out, v.slen, v.ad, v.adlen - 1, v.nonce),
                 -1);
    CHECK_EQ_INT(aead_open(a, buf, out, v.slen, NULL, 0, v.nonce), -1);
    /* Truncated (a tag cut short, or no room for one). */
    CHECK_EQ_INT(aead_open(a, buf, out, v.slen - 1, v.ad, v.adlen, v.nonce),
                 -1);
    CHECK_EQ_INT(aead_open(a, buf, out, AEAD_TAG_LEN - 1, v.ad, v.adlen,
                           v.nonce),
                 -1);
    /* Another nonce (a replayed or reordered frame), another key. */
    memcpy(nonce2, v.nonce, sizeof nonce2);
    nonce2[11] ^= 1;
    CHECK_EQ_INT(aead_open(a, buf, out, v.slen, v.ad, v.adlen, nonce2), -1);
    memcpy(key2, v.key, sizeof key2);
    key2[31] ^= 1;
    CHECK((b = aead_new_from(k->cipher, key2, lib)) != NULL);
    if (b != NULL)
        CHECK_EQ_INT(aead_open(b, buf, out, v.slen, v.ad, v.adlen, v.nonce),
                     -1);
    /* The context still works after refusals. */
    CHECK_EQ_INT(aead_open(a, buf, out, v.slen, v.ad, v.adlen, v.nonce), 0);
    CHECK_MEM(buf, v.plain, v.plen);
    /* In place, both ways. */
    memcpy(buf, v.plain, v.plen);
    CHECK_EQ_INT(aead_seal(a, buf, buf, v.plen, v.ad, v.adlen, v.nonce), 0);
    CHECK_MEM(buf, v.sealed, v.slen);
    CHECK_EQ_INT(aead_open(a, buf, buf, v.slen, v.ad, v.adlen, v.nonce), 0);
    CHECK_MEM(buf, v.plain, v.plen);
    aead_free(a);
    aead_free(b);
}

static void
t_kat_chacha20poly1305(void)
{
    kat_run(&kats[0], AEAD_LIB_LIBCRYPTO);
}

static void
t_kat_aes256gcm(void)
{
    kat_run(&kats[1], AEAD_LIB_LIBCRYPTO);
}

/* Is ipsec-mb usable here?  If not, say why (a test that needs it is
 * skipped, not failed: it is amd64 only and needs VAES). */
static int
imb_here(const char *test)
{
    if (imb_ready())
        return 1;
    fprintf(stderr, "%s: skipped: %s\n", test, imb_status());
    return 0;
}

static void
t_kat_aes256gcm_ipsecmb(void)
{
    if (imb_here("kat_aes256gcm_ipsecmb"))
        kat_run(&kats[1], AEAD_LIB_IPSECMB);
}

/* AES-256-GCM sealed by one library opens with the other, byte for byte
 * the same, at every size a frame may have; a frame tampered with is
 * refused by either.  AUTO picks ipsec-mb here unless told libcrypto. */
static void
t_libs_agree(void)
{
    static const size_t sizes[] = {0, 1, 15, 16, 17, 63, 64, 65, 255, 256,
                                   1000, 4096, 65535, 98304, 262144};
    uint8_t key[AEAD_KEY_LEN], nonce[AEAD_NONCE_LEN], ad[72];
    uint8_t *in = malloc(262144), *s1 = malloc(262144 + AEAD_TAG_LEN),
            *s2 = malloc(262144 + AEAD_TAG_LEN), *out = malloc(262144);
    struct aead *ossl, *imb, *a;
    size_t i, n;

    if (!imb_here("libs_agree"))
        goto out;
    CHECK(in != NULL && s1 != NULL && s2 != NULL && out != NULL);
    if (in == NULL || s1 == NULL || s2 == NULL || out == NULL)
        goto out;
    for (i = 0; i < 262144; i++)
        in[i] = (uint8_t)(i * 29 + 3);
    memset(key, 0x5a, sizeof key);
    memset(ad, 0x33, sizeof ad);
    ossl = aead_new_from(AEAD_AES256GCM, key, AEAD_LIB_LIBCRYPTO);
    imb = aead_new_from(AEAD_AES256GCM, key, AEAD_LIB_IPSECMB);
    CHECK(ossl != NULL && imb != NULL);
    if (ossl == NULL || imb == NULL)
        goto done;
    CHECK_EQ_STR(aead_lib_name(ossl), "libcrypto");
    CHECK_EQ_STR(aead_lib_name(imb), "ipsec-mb");
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        n = sizes[i];
        aead_nonce(nonce, 1000 + i);
        CHECK_EQ_INT(aead_seal(ossl, s1, n ? in : NULL, n, ad, sizeof ad,
                               nonce), 0);
        CHECK_EQ_INT(aead_seal(imb, s2, n ? in : NULL, n, ad, sizeof ad,
                               nonce), 0);
        CHECK_MEM(s1, s2, n + AEAD_TAG_LEN);
        memset(out, 0xee, 262144);
        CHECK_EQ_INT(aead_open(imb, out, s1, n + AEAD_TAG_LEN, ad, sizeof ad,
                               nonce), 0);
        if (n > 0)
            CHECK_MEM(out, in, n);
        CHECK_EQ_INT(aead_open(ossl, out, s2, n + AEAD_TAG_LEN, ad,
                               sizeof ad, nonce), 0);
        if (n > 0)
            CHECK_MEM(out, in, n);
        /* Its last ciphertext byte (or the tag's first) changed. */
        s2[n > 0 ? n - 1 : 0] ^= 0x80;
        memset(out, 0xee, 262144);
        CHECK_EQ_INT(aead_open(imb, out, s2, n + AEAD_TAG_LEN, ad, sizeof ad,
                               nonce), -1);
        if (n > 0)
            CHECK(out[0] == 0 && out[n - 1] == 0);
        CHECK_EQ_INT(aead_open(ossl, out, s2, n + AEAD_TAG_LEN, ad,
                               sizeof ad, nonce), -1);
    }
    /* The environment's choice: libcrypto when asked, else ipsec-mb. */
    setenv("P2P_AEAD_LIB", "libcrypto", 1);
    a = aead_new(AEAD_AES256GCM, key);
    CHECK(a != NULL && strcmp(aead_lib_name(a), "libcrypto") == 0);
    aead_free(a);
    unsetenv("P2P_AEAD_LIB");
    a = aead_new(AEAD_AES256GCM, key);
    CHECK(a != NULL && strcmp(aead_lib_name(a), "ipsec-mb") == 0);
    aead_free(a);
    /* ChaCha20-Poly1305 is libcrypto's only. */
    CHECK(aead_new_from(AEAD_CHACHA20POLY1305, key, AEAD_LIB_IPSECMB) ==
          NULL);
    a = aead_new(AEAD_CHACHA20POLY1305, key);
    CHECK(a != NULL && strcmp(aead_lib_name(a), "libcrypto") == 0);
    aead_free(a);
done:
    aead_free(ossl);
    aead_free(imb);
out:
    free(in);
    free(s1);
    free(s2);
    free(out);
}

/* The counter's nonce: 4 zero bytes, then the counter little-endian. */
static void
t_nonce(void)
{
    static const uint8_t want[AEAD_NONCE_LEN] = {0,    0,    0,    0,
                                                 0x08, 0x07, 0x06, 0x05,
                                                 0x04, 0x03, 0x02, 0x01};
    uint8_t n[AEAD_NONCE_LEN], m[AEAD_NONCE_LEN];

    aead_nonce(n, 0x0102030405060708ull);
    CHECK_MEM(n, want, sizeof want);
    aead_nonce(m, 0x0102030405060709ull);
    CHECK(memcmp(n, m, sizeof n) != 0);
}

/* One context per direction, reused for many messages of many sizes
 * (empty, odd, a frame's 256 KiB): each opens with its own nonce only,
 * and a message sealed by a fresh context is the same. */
static void
t_reuse(void)
{
    static const size_t sizes[] = {0, 1, 15, 16, 17, 1000, 65536, 262144};
    enum aead_cipher ciphers[] = {AEAD_AES256GCM, AEAD_CHACHA20POLY1305};
    uint8_t key[AEAD_KEY_LEN], nonce[AEAD_NONCE_LEN], ad[72];
    uint8_t *in = malloc(262144), *s1 = malloc(262144 + AEAD_TAG_LEN),
            *s2 = malloc(262144 + AEAD_TAG_LEN), *out = malloc(262144);
    struct aead *tx, *rx, *fresh;
    size_t c, i, k;

    CHECK(in != NULL && s1 != NULL && s2 != NULL && out != NULL);
    if (in == NULL || s1 == NULL || s2 == NULL || out == NULL)
        goto out;
    for (i = 0; i < 262144; i++)
        in[i] = (uint8_t)(i * 13 + 1);
    memset(key, 0x42, sizeof key);
    memset(ad, 0x17, sizeof ad);
    for (c = 0; c < 2; c++) {
        tx = aead_new(ciphers[c], key);
        rx = aead_new(ciphers[c], key);
        CHECK(tx != NULL && rx != NULL);
        for (k = 0; tx != NULL && rx != NULL && k < 3; k++)
            for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
                uint64_t ctr = k * 100 + i;

                aead_nonce(nonce, ctr);
                CHECK_EQ_INT(aead_seal(tx, s1, sizes[i] ? in : NULL,
                                       sizes[i], ad, sizeof ad, nonce),
                             0);
                fresh = aead_new(ciphers[c], key);
                CHECK(fresh != NULL);
                if (fresh != NULL) {
                    CHECK_EQ_INT(aead_seal(fresh, s2, in, sizes[i], ad,
                                           sizeof ad, nonce),
                                 0);
                    CHECK_MEM(s1, s2, sizes[i] + AEAD_TAG_LEN);
                }
                aead_free(fresh);
                CHECK_EQ_INT(aead_open(rx, out, s1, sizes[i] + AEAD_TAG_LEN,
                                       ad, sizeof ad, nonce),
                             0);
                if (sizes[i] > 0)
                    CHECK_MEM(out, in, sizes[i]);
                /* The next counter does not open it. */
                aead_nonce(nonce, ctr + 1);
                CHECK_EQ_INT(aead_open(rx, out, s1, sizes[i] + AEAD_TAG_LEN,
                                       ad, sizeof ad, nonce),
                             -1);
            }
        aead_free(tx);
        aead_free(rx);
    }
out:
    aead_free(NULL);
    free(in);
    free(s1);
    free(s2);
    free(out);
}

static const struct test_case cases[] = {
    {"kat_chacha20poly1305", t_kat_chacha20poly1305},
    {"kat_aes256gcm", t_kat_aes256gcm},
    {"kat_aes256gcm_ipsecmb", t_kat_aes256gcm_ipsecmb},
    {"libs_agree", t_libs_agree},
    {"nonce", t_nonce},
    {"reuse", t_reuse},
};

TEST_MAIN(cases)
