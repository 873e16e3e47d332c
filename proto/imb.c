/*
 * ipsec-mb's AES-256-GCM behind imb.h, loaded at run time.  Only four
 * entry points are looked up (alloc_mb_mgr, init_mb_mgr_auto,
 * imb_get_version, imb_get_errno); the GCM functions themselves are the
 * manager's function pointers, which init_mb_mgr_auto sets for this
 * CPU.  One manager serves the process: the direct GCM calls read it
 * and write nothing in it, so contexts of several connections (or
 * threads) share it.  Every call's state (struct gcm_context_data) is on
 * the caller's stack.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imb.h"

#ifdef P2P_HAVE_IPSEC_MB

#include <dlfcn.h>

#include <intel-ipsec-mb.h>

#define IMB_SONAME "libIPSec_MB.so.1"
#define IMB_NEED (IMB_FEATURE_VAES | IMB_FEATURE_VPCLMULQDQ)

struct imb_gcm {
    struct gcm_key_data kd; /* 64-byte aligned: allocated so */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static IMB_MGR *mgr;
static char status[96] = "not looked for";

/* McGrew and Viega, "The Galois/Counter Mode of Operation", test case
 * 16 (AES-256, 96-bit IV, 20 bytes of associated data): the first 16
 * bytes of ciphertext and the tag. */
static const uint8_t kat_key[32] = {
    0xfe, 0xff, 0xe9, 0x92, 0x86, 0x65, 0x73, 0x1c, 0x6d, 0x6a, 0x8f,
    0x94, 0x67, 0x30, 0x83, 0x08, 0xfe, 0xff, 0xe9, 0x92, 0x86, 0x65,
    0x73, 0x1c, 0x6d, 0x6a, 0x8f, 0x94, 0x67, 0x30, 0x83, 0x08};
static const uint8_t kat_iv[12] = {0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce,
                                   0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88};
static const uint8_t kat_ad[20] = {0xfe, 0xed, 0xfa, 0xce, 0xde, 0xad, 0xbe,
                                   0xef, 0xfe, 0xed, 0xfa, 0xce, 0xde, 0xad,
                                   0xbe, 0xef, 0xab, 0xad, 0xda, 0xd2};
static const uint8_t kat_plain[60] = {
    0xd9, 0x31, 0x32, 0x25, 0xf8, 0x84, 0x06, 0xe5, 0xa5, 0x59, 0x09, 0xc5,
    0xaf, 0xf5, 0x26, 0x9a, 0x86, 0xa7, 0xa9, 0x53, 0x15, 0x34, 0xf7, 0xda,
    0x2e, 0x4c, 0x30, 0x3d, 0x8a, 0x31, 0x8a, 0x72, 0x1c, 0x3c, 0x0c, 0x95,
    0x95, 0x68, 0x09, 0x53, 0x2f, 0xcf, 0x0e, 0x24, 0x49, 0xa6, 0xb5, 0x25,
    0xb1, 0x6a, 0xed, 0xf5, 0xaa, 0x0d, 0xe6, 0x57, 0xba, 0x63, 0x7b, 0x39};
static const uint8_t kat_sealed16[16] = {0x52, 0x2d, 0xc1, 0xf0, 0x99, 0x56,
                                         0x7d, 0x07, 0xf4, 0x7f, 0x37, 0xa3,
                                         0x2a, 0x84, 0x42, 0x7d};
static const uint8_t kat_tag[16] = {0x76, 0xfc, 0x6e, 0xce, 0x0f, 0x4e,
                                    0x17, 0x68, 0xcd, 0xdf, 0x88, 0x53,
                                    0xbb, 0x2d, 0x55, 0x1b};

/* Does the loaded library compute the published vector, both ways? */
static int
imb_selftest(void)
{
    struct imb_gcm *k;
    uint8_t out[sizeof kat_plain], back[sizeof kat_plain], tag[16], tag2[16];
    int ok;

    if ((k = imb_gcm_new(kat_key)) == NULL)
        return 0;
    imb_gcm(k, 1, out, kat_plain, sizeof kat_plain, kat_iv, kat_ad,
            sizeof kat_ad, tag);
    imb_gcm(k, 0, back, out, sizeof out, kat_iv, kat_ad, sizeof kat_ad, tag2);
    ok = memcmp(out, kat_sealed16, sizeof kat_sealed16) == 0 &&
         memcmp(tag, kat_tag, sizeof tag) == 0 &&
         memcmp(tag2, kat_tag, sizeof tag2) == 0 &&
         memcmp(back, kat_plain, sizeof back) == 0;
    imb_gcm_free(k);
    return ok;
}

static void
imb_load(void)
{
    IMB_MGR *(*alloc)(uint64_t);
    void (*init)(IMB_MGR *, IMB_ARCH *);
    unsigned (*version)(void);
    int (*err)(IMB_MGR *);
    unsigned v;
    IMB_ARCH arch;
    void *h;

    if ((h = dlopen(IMB_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
        snprintf(status, sizeof status, "%s not found", IMB_SONAME);
        return;
    }
    *(void **)&alloc = dlsym(h, "alloc_mb_mgr");
    *(void **)&init = dlsym(h, "init_mb_mgr_auto");
    *(void **)&version = dlsym(h, "imb_get_version");
    *(void **)&err = dlsym(h, "imb_get_errno");
    if (alloc == NULL || init == NULL || version == NULL || err == NULL) {
        snprintf(status, sizeof status, "%s lacks its entry points",
                 IMB_SONAME);
        goto fail;
    }
    /* The manager's layout is the header's: the same major version, and
     * no older than the header (later releases only add to it). */
    v = version();
    if (v >> 16 != IMB_VERSION_NUM >> 16 || v < IMB_VERSION_NUM) {
        snprintf(status, sizeof status, "ipsec-mb %u.%u.%u, built for %s",
                 v >> 16, (v >> 8) & 0xff, v & 0xff, IMB_VERSION_STR);
        goto fail;
    }
    if ((mgr = alloc(0)) == NULL) {
        snprintf(status, sizeof status, "ipsec-mb: no manager");
        goto fail;
    }
    init(mgr, &arch);
    if (err(mgr) != 0 || (mgr->features & IMB_NEED) != IMB_NEED) {
        snprintf(status, sizeof status,
                 "ipsec-mb %u.%u.%u: no VAES and VPCLMULQDQ here", v >> 16,
                 (v >> 8) & 0xff, v & 0xff);
        goto fail_mgr;
    }
    if (!imb_selftest()) {
        snprintf(status, sizeof status,
                 "ipsec-mb %u.%u.%u: wrong answer to a test vector", v >> 16,
                 (v >> 8) & 0xff, v & 0xff);
        goto fail_mgr;
    }
    snprintf(status, sizeof status, "ipsec-mb %u.%u.%u", v >> 16,
             (v >> 8) & 0xff, v & 0xff);
    return; /* kept for the process's life */
fail_mgr:
    mgr = NULL; /* leaked with the library: it may not be unloaded */
    return;
fail:
    dlclose(h);
}

int
imb_ready(void)
{
    (void)pthread_once(&once, imb_load);
    return mgr != NULL;
}

const char *
imb_status(void)
{
    (void)imb_ready();
    return status;
}

struct imb_gcm *
imb_gcm_new(const uint8_t key[32])
{
    struct imb_gcm *k;

    if (mgr == NULL ||
        (k = aligned_alloc(64, (sizeof *k + 63) / 64 * 64)) == NULL)
        return NULL;
    IMB_AES256_GCM_PRE(mgr, key, &k->kd);
    return k;
}

void
imb_gcm_free(struct imb_gcm *k)
{
    if (k == NULL)
        return;
    explicit_bzero(k, sizeof *k);
    free(k);
}

void
imb_gcm(const struct imb_gcm *k, int seal, uint8_t *out, const uint8_t *in,
        size_t len, const uint8_t iv[12], const uint8_t *ad, size_t adlen,
        uint8_t tag[16])
{
    struct gcm_context_data ctx;

    if (seal)
        IMB_AES256_GCM_ENC(mgr, &k->kd, &ctx, out, in, len, iv, ad, adlen,
                           tag, 16);
    else
        IMB_AES256_GCM_DEC(mgr, &k->kd, &ctx, out, in, len, iv, ad, adlen,
                           tag, 16);
    explicit_bzero(&ctx, sizeof ctx);
}

#else /* built without ipsec-mb's header: libcrypto alone */

int
imb_ready(void)
{
    return 0;
}

const char *
imb_status(void)
{
    return "built without ipsec-mb";
}

struct imb_gcm *
imb_gcm_new(const uint8_t key[32])
{
    (void)key;
    return NULL;
}

void
imb_gcm_free(struct imb_gcm *k)
{
    (void)k;
}

void
imb_gcm(const struct imb_gcm *k, int seal, uint8_t *out, const uint8_t *in,
        size_t len, const uint8_t iv[12], const uint8_t *ad, size_t adlen,
        uint8_t tag[16])
{
    (void)k, (void)seal, (void)out, (void)in, (void)len, (void)iv, (void)ad;
    (void)adlen, (void)tag;
    abort(); /* imb_gcm_new never gave a key */
}

#endif
