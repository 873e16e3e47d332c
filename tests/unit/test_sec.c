/*
 * Security primitives as the channel and the tools use them: AEAD with a
 * message counter (tampering, replay, reordering and wrong keys are all
 * refused), Ed25519, hex, and key files with their permission rules.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sec.h"
#include "test.h"

static uint8_t key[SEC_KEY_LEN], key2[SEC_KEY_LEN];
static const uint8_t ad[8] = {'P', '2', 1, 2, 0, 0, 0, 40};
static const char text[] = "a message of some length, sealed";

static void
setup(void)
{
    static int done;

    if (done)
        return;
    if (sec_init() == -1)
        test_fail(__FILE__, __LINE__, "sec_init failed");
    sec_random(key, sizeof key);
    memcpy(key2, key, sizeof key2);
    key2[0] ^= 0x01;
    done = 1;
}

/* Seal text with counter into out (len + tag). */
static size_t
seal_text(uint8_t *out, uint64_t counter)
{
    sec_seal(out, (const uint8_t *)text, sizeof text, ad, sizeof ad, counter,
             key);
    return sizeof text + SEC_TAG_LEN;
}

static void
t_seal_open(void)
{
    uint8_t ct[sizeof text + SEC_TAG_LEN], pt[sizeof text];
    size_t n;

    setup();
    n = seal_text(ct, 0);
    CHECK_EQ_INT(n, sizeof ct);
    /* Not the plaintext in clear. */
    CHECK(memcmp(ct, text, sizeof text) != 0);
    memset(pt, 0, sizeof pt);
    CHECK_EQ_INT(sec_open(pt, ct, n, ad, sizeof ad, 0, key), 0);
    CHECK_MEM(pt, text, sizeof text);
    /* Large counters work (the nonce carries all 64 bits). */
    n = seal_text(ct, UINT64_MAX);
    CHECK_EQ_INT(sec_open(pt, ct, n, ad, sizeof ad, UINT64_MAX, key), 0);
    CHECK_MEM(pt, text, sizeof text);
}

/* Empty plaintext and no associated data are allowed. */
static void
t_seal_empty(void)
{
    uint8_t ct[SEC_TAG_LEN], pt[1];

    setup();
    sec_seal(ct, NULL, 0, NULL, 0, 3, key);
    CHECK_EQ_INT(sec_open(pt, ct, sizeof ct, NULL, 0, 3, key), 0);
    CHECK_EQ_INT(sec_open(pt, ct, sizeof ct, NULL, 0, 4, key), -1);
    /* Shorter than a tag is refused outright. */
    CHECK_EQ_INT(sec_open(pt, ct, SEC_TAG_LEN - 1, NULL, 0, 3, key), -1);
    CHECK_EQ_INT(sec_open(pt, ct, 0, NULL, 0, 3, key), -1);
}

/* Flip each bit position class in ciphertext, tag and associated data. */
static void
t_tamper(void)
{
    uint8_t ct[sizeof text + SEC_TAG_LEN], bad[sizeof ct], pt[sizeof text];
    uint8_t ad2[sizeof ad];
    size_t i, n;
    int bit;

    setup();
    n = seal_text(ct, 5);
    for (i = 0; i < n; i++)
        for (bit = 0; bit < 8; bit += 3) {
            memcpy(bad, ct, n);
            bad[i] ^= (uint8_t)(1 << bit);
            if (sec_open(pt, bad, n, ad, sizeof ad, 5, key) != -1) {
                test_fail(__FILE__, __LINE__,
                          "flip of bit %d in byte %zu (%s) accepted", bit, i,
                          i < sizeof text ? "ciphertext" : "tag");
                return;
            }
        }
    for (i = 0; i < sizeof ad; i++) {
        memcpy(ad2, ad, sizeof ad);
        ad2[i] ^= 0x04;
        CHECK_EQ_INT(sec_open(pt, ct, n, ad2, sizeof ad2, 5, key), -1);
    }
    /* Associated data cut short, or missing. */
    CHECK_EQ_INT(sec_open(pt, ct, n, ad, sizeof ad - 1, 5, key), -1);
    CHECK_EQ_INT(sec_open(pt, ct, n, NULL, 0, 5, key), -1);
    /* Truncated or extended ciphertext. */
    CHECK_EQ_INT(sec_open(pt, ct, n - 1, ad, sizeof ad, 5, key), -1);
    /* Untouched still opens. */
    CHECK_EQ_INT(sec_open(pt, ct, n, ad, sizeof ad, 5, key), 0);
}

/* The counter is the nonce: a replayed or reordered frame is opened with
 * the receiver's expected counter and fails. */
static void
t_counter(void)
{
    uint8_t c0[sizeof text + SEC_TAG_LEN], c1[sizeof c0], pt[sizeof text];
    size_t n;

    setup();
    n = seal_text(c0, 0);
    seal_text(c1, 1);
    /* Same plaintext, different counters: different ciphertext. */
    CHECK(memcmp(c0, c1, n) != 0);
    /* In order. */
    CHECK_EQ_INT(sec_open(pt, c0, n, ad, sizeof ad, 0, key), 0);
    CHECK_EQ_INT(sec_open(pt, c1, n, ad, sizeof ad, 1, key), 0);
    /* Replay of frame 0 where 2 is expected. */
    CHECK_EQ_INT(sec_open(pt, c0, n, ad, sizeof ad, 2, key), -1);
    /* Reordered: frame 1 arriving first. */
    CHECK_EQ_INT(sec_open(pt, c1, n, ad, sizeof ad, 0, key), -1);
    /* Counters differing only above 32 bits. */
    seal_text(c0, (uint64_t)1 << 40);
    CHECK_EQ_INT(sec_open(pt, c0, n, ad, sizeof ad, 0, key), -1);
    CHECK_EQ_INT(sec_open(pt, c0, n, ad, sizeof ad, (uint64_t)1 << 40, key), 0);
}

static void
t_wrong_key(void)
{
    uint8_t ct[sizeof text + SEC_TAG_LEN], pt[sizeof text];
    size_t n;

    setup();
    n = seal_text(ct, 0);
    CHECK_EQ_INT(sec_open(pt, ct, n, ad, sizeof ad, 0, key2), -1);
}

static void
t_sign_verify(void)
{
    uint8_t pk[SEC_SIGN_PK_LEN], sk[SEC_SIGN_SK_LEN];
    uint8_t pk2[SEC_SIGN_PK_LEN], sk2[SEC_SIGN_SK_LEN];
    uint8_t sig[SEC_SIG_LEN], bad[SEC_SIG_LEN];
    static const char msg[] = "p2p-register session-id";

    setup();
    sec_sign_keypair(pk, sk);
    sec_sign_keypair(pk2, sk2);
    CHECK(memcmp(pk, pk2, sizeof pk) != 0);
    sec_sign(sig, msg, sizeof msg, sk);
    CHECK_EQ_INT(sec_verify(sig, msg, sizeof msg, pk), 0);
    /* Another key, another message, a changed signature. */
    CHECK_EQ_INT(sec_verify(sig, msg, sizeof msg, pk2), -1);
    CHECK_EQ_INT(sec_verify(sig, msg, sizeof msg - 1, pk), -1);
    memcpy(bad, sig, sizeof bad);
    bad[10] ^= 0x20;
    CHECK_EQ_INT(sec_verify(bad, msg, sizeof msg, pk), -1);
    memset(bad, 0, sizeof bad);
    CHECK_EQ_INT(sec_verify(bad, msg, sizeof msg, pk), -1);
    /* Empty messages can be signed too. */
    sec_sign(sig, "", 0, sk2);
    CHECK_EQ_INT(sec_verify(sig, "", 0, pk2), 0);
}

static void
t_hex(void)
{
    static const uint8_t bin[] = {0x00, 0x01, 0xab, 0xff, 0x7f, 0x80};
    char hex[2 * sizeof bin + 1];
    uint8_t back[sizeof bin];

    setup();
    CHECK_EQ_STR(sec_hex(hex, bin, sizeof bin), "0001abff7f80");
    CHECK_EQ_INT(sec_unhex(back, sizeof back, hex), 0);
    CHECK_MEM(back, bin, sizeof bin);
    /* Upper case is accepted. */
    CHECK_EQ_INT(sec_unhex(back, sizeof back, "0001ABFF7F80"), 0);
    CHECK_MEM(back, bin, sizeof bin);
    CHECK_EQ_STR(sec_hex(hex, bin, 0), "");
}

static void
t_bad_hex(void)
{
    uint8_t out[4];

    setup();
    CHECK_EQ_INT(sec_unhex(out, 4, ""), -1);
    CHECK_EQ_INT(sec_unhex(out, 4, "0011223"), -1);    /* short */
    CHECK_EQ_INT(sec_unhex(out, 4, "001122334"), -1);  /* long */
    CHECK_EQ_INT(sec_unhex(out, 4, "0011223344"), -1); /* one byte more */
    CHECK_EQ_INT(sec_unhex(out, 4, "001122g3"), -1);   /* not hex */
    CHECK_EQ_INT(sec_unhex(out, 4, "0011 233"), -1);
    CHECK_EQ_INT(sec_unhex(out, 4, "00:11:22"), -1);
    CHECK_EQ_INT(sec_unhex(out, 4, "0x112233"), -1);
    CHECK_EQ_INT(sec_unhex(out, 4, "001122\n3"), -1);
}

/* A private directory for key files, removed afterwards. */
static char tmpdir[64];

static int
mktmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/p2p-test-sec-XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void
rmtmp(void)
{
    DIR *d;
    struct dirent *de;
    char path[sizeof tmpdir + 256];

    if ((d = opendir(tmpdir)) == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", tmpdir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(tmpdir);
}

static void
write_file(const char *path, const char *content, mode_t mode)
{
    FILE *f = fopen(path, "w");

    if (f == NULL) {
        test_fail(__FILE__, __LINE__, "%s: %s", path, strerror(errno));
        return;
    }
    fputs(content, f);
    fclose(f);
    chmod(path, mode);
}

static void
t_keyfile_roundtrip(void)
{
    uint8_t k[SEC_KEY_LEN], back[SEC_KEY_LEN];
    char path[128], err[256] = "", hex[2 * SEC_KEY_LEN + 1], line[128];
    struct stat st;
    mode_t old;
    FILE *f;

    setup();
    if (mktmp() == -1)
        return;
    /* The mode asked for is the mode obtained, whatever the umask. */
    old = umask(077);
    snprintf(path, sizeof path, "%s/group.key", tmpdir);
    sec_random(k, sizeof k);
    CHECK_EQ_INT(sec_keyfile_write(path, k, sizeof k, 0600, err, sizeof err),
                 0);
    if (CHECK_EQ_INT(stat(path, &st), 0))
        CHECK_EQ_INT(st.st_mode & 07777, 0600);
    /* One line of lower-case hex. */
    if ((f = fopen(path, "r")) != NULL) {
        CHECK(fgets(line, sizeof line, f) != NULL);
        fclose(f);
        sec_hex(hex, k, sizeof k);
        CHECK_EQ_INT(strlen(line), 2 * SEC_KEY_LEN + 1);
        CHECK(strncmp(line, hex, 2 * SEC_KEY_LEN) == 0);
        CHECK(line[2 * SEC_KEY_LEN] == '\n');
    }
    memset(back, 0, sizeof back);
    CHECK_EQ_INT(sec_keyfile_read(path, back, sizeof back, 1, err, sizeof err),
                 0);
    CHECK_MEM(back, k, sizeof k);

    /* A public file may be world-readable. */
    snprintf(path, sizeof path, "%s/node.pub", tmpdir);
    CHECK_EQ_INT(sec_keyfile_write(path, k, 16, 0644, err, sizeof err), 0);
    if (CHECK_EQ_INT(stat(path, &st), 0))
        CHECK_EQ_INT(st.st_mode & 07777, 0644);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 16, 0, err, sizeof err), 0);
    CHECK_MEM(back, k, 16);
    /* ... but not read back as a secret. */
    err[0] = '\0';
    CHECK_EQ_INT(sec_keyfile_read(path, back, 16, 1, err, sizeof err), -1);
    CHECK_CONTAINS(err, "chmod 600");
    /* Wrong expected length. */
    CHECK_EQ_INT(sec_keyfile_read(path, back, 15, 0, err, sizeof err), -1);
    CHECK_CONTAINS(err, "hex key");
    umask(old);
    rmtmp();
}

static void
t_keyfile_no_overwrite(void)
{
    uint8_t k[SEC_KEY_LEN], k2[SEC_KEY_LEN], back[SEC_KEY_LEN];
    char path[128], err[256] = "";

    setup();
    if (mktmp() == -1)
        return;
    snprintf(path, sizeof path, "%s/group.key", tmpdir);
    sec_random(k, sizeof k);
    sec_random(k2, sizeof k2);
    CHECK_EQ_INT(sec_keyfile_write(path, k, sizeof k, 0600, err, sizeof err),
                 0);
    CHECK_EQ_INT(sec_keyfile_write(path, k2, sizeof k2, 0600, err, sizeof err),
                 -1);
    CHECK_CONTAINS(err, path);
    /* The first key is still there. */
    CHECK_EQ_INT(sec_keyfile_read(path, back, sizeof back, 1, err, sizeof err),
                 0);
    CHECK_MEM(back, k, sizeof k);
    /* Nor through a directory that does not exist. */
    snprintf(path, sizeof path, "%s/missing/group.key", tmpdir);
    CHECK_EQ_INT(sec_keyfile_write(path, k, sizeof k, 0600, err, sizeof err),
                 -1);
    rmtmp();
}

static void
t_keyfile_read_checks(void)
{
    uint8_t back[4];
    char path[128], err[256] = "";

    setup();
    if (mktmp() == -1)
        return;
    snprintf(path, sizeof path, "%s/k", tmpdir);
    /* A secret readable by the group or others is refused... */
    write_file(path, "00112233\n", 0644);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), -1);
    CHECK_CONTAINS(err, "0644");
    chmod(path, 0640);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), -1);
    chmod(path, 0602);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), -1);
    /* ... 0600 and 0400 are fine. */
    chmod(path, 0600);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), 0);
    CHECK_MEM(back, "\x00\x11\x22\x33", 4);
    chmod(path, 0400);
    if (access(path, R_OK) == 0)
        CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), 0);
    unlink(path);

    /* Trailing CR LF and spaces are tolerated, other junk is not. */
    write_file(path, "00112233 \r\n", 0600);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), 0);
    unlink(path);
    write_file(path, "00112233\nextra\n", 0600);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), -1);
    unlink(path);
    write_file(path, "", 0600);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), -1);
    unlink(path);
    write_file(path, "0011zz33\n", 0600);
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), -1);
    unlink(path);
    /* Missing file: the path is in the message. */
    err[0] = '\0';
    CHECK_EQ_INT(sec_keyfile_read(path, back, 4, 1, err, sizeof err), -1);
    CHECK_CONTAINS(err, path);
    rmtmp();
}

static void
t_misc(void)
{
    uint8_t a[32], b[32], h1[SEC_HASH_LEN], h2[SEC_HASH_LEN];
    uint8_t d1[SEC_KEY_LEN], d2[SEC_KEY_LEN];
    struct sec_hasher h;

    setup();
    sec_random(a, sizeof a);
    sec_random(b, sizeof b);
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK(sec_equal(a, a, sizeof a));
    CHECK(!sec_equal(a, b, sizeof a));
    memcpy(b, a, sizeof b);
    b[31] ^= 1;
    CHECK(!sec_equal(a, b, sizeof a));
    sec_wipe(b, sizeof b);
    memset(a, 0, sizeof a);
    CHECK_MEM(b, a, sizeof b);
    /* Incremental hashing equals one-shot hashing. */
    sec_hash(h1, "hello world", 11);
    sec_hasher_init(&h, NULL);
    sec_hasher_update(&h, "hello ", 6);
    sec_hasher_update(&h, "world", 5);
    sec_hasher_final(&h, h2);
    CHECK_MEM(h1, h2, sizeof h1);
    /* A keyed hash differs from the plain one. */
    sec_hasher_init(&h, key);
    sec_hasher_update(&h, "hello world", 11);
    sec_hasher_final(&h, h2);
    CHECK(memcmp(h1, h2, sizeof h1) != 0);
    /* Subkeys differ by id and by context, and are deterministic. */
    sec_kdf(d1, key, 1, "p2pgroup");
    sec_kdf(d2, key, 2, "p2pgroup");
    CHECK(memcmp(d1, d2, sizeof d1) != 0);
    sec_kdf(d2, key, 1, "p2pother");
    CHECK(memcmp(d1, d2, sizeof d1) != 0);
    sec_kdf(d2, key, 1, "p2pgroup");
    CHECK_MEM(d1, d2, sizeof d1);
}

/* Both ends of a key exchange derive crossed keys. */
static void
t_kx(void)
{
    uint8_t cpk[SEC_KX_PK_LEN], csk[SEC_KX_SK_LEN];
    uint8_t spk[SEC_KX_PK_LEN], ssk[SEC_KX_SK_LEN];
    uint8_t crx[SEC_KEY_LEN], ctx[SEC_KEY_LEN], srx[SEC_KEY_LEN],
        stx[SEC_KEY_LEN], zero[SEC_KX_PK_LEN] = {0};

    setup();
    sec_kx_keypair(cpk, csk);
    sec_kx_keypair(spk, ssk);
    CHECK_EQ_INT(sec_kx_client(crx, ctx, cpk, csk, spk), 0);
    CHECK_EQ_INT(sec_kx_server(srx, stx, spk, ssk, cpk), 0);
    CHECK_MEM(ctx, srx, SEC_KEY_LEN);
    CHECK_MEM(crx, stx, SEC_KEY_LEN);
    /* A low-order peer key is refused. */
    CHECK_EQ_INT(sec_kx_client(crx, ctx, cpk, csk, zero), -1);
    CHECK_EQ_INT(sec_kx_server(srx, stx, spk, ssk, zero), -1);
}

static const struct test_case cases[] = {
    {"seal_open", t_seal_open},
    {"seal_empty", t_seal_empty},
    {"tamper", t_tamper},
    {"counter", t_counter},
    {"wrong_key", t_wrong_key},
    {"sign_verify", t_sign_verify},
    {"hex", t_hex},
    {"bad_hex", t_bad_hex},
    {"keyfile_roundtrip", t_keyfile_roundtrip},
    {"keyfile_no_overwrite", t_keyfile_no_overwrite},
    {"keyfile_read_checks", t_keyfile_read_checks},
    {"misc", t_misc},
    {"kx", t_kx},
};

TEST_MAIN(cases)
