/*
 * Handshake state machine, driven directly: both ends agree on keys and a
 * session id when they share the group key and name, and every deviation
 * (other key, other name, wrong sizes, tampering, messages out of order)
 * ends in HS_FAIL with a reason and no keys.
 */
#include <stdint.h>
#include <string.h>

#include "handshake.h"
#include "sec.h"
#include "test.h"

static uint8_t key_a[SEC_KEY_LEN], key_b[SEC_KEY_LEN];

static void
keys_init(void)
{
    static int done;

    if (done)
        return;
    if (sec_init() == -1)
        test_fail(__FILE__, __LINE__, "sec_init failed");
    memset(key_a, 0x41, sizeof key_a);
    memcpy(key_b, key_a, sizeof key_b);
    key_b[SEC_KEY_LEN - 1] ^= 1; /* one bit away */
    done = 1;
}

/* The three messages of one run and both ends' keys. */
struct run {
    struct handshake *c, *s;
    uint8_t hello[HS_MSG_MAX], sproof[HS_MSG_MAX], cproof[HS_MSG_MAX];
    uint8_t last[HS_MSG_MAX]; /* the server's (empty) answer to the proof */
    size_t hello_len, sproof_len, cproof_len, last_len;
    enum hs_status c_st, s_st1, s_st2;
    struct hs_keys ck, sk;
};

/* Run a handshake between a client (ckey, cgroup) and a server (skey,
 * sgroup) as far as it goes; the handshakes stay in r for inspection. */
static void
run_handshake(struct run *r, const uint8_t *ckey, const char *cgroup,
              const uint8_t *skey, const char *sgroup)
{
    memset(r, 0, sizeof *r);
    r->c = handshake_new(HS_CLIENT, ckey, cgroup);
    r->s = handshake_new(HS_SERVER, skey, sgroup);
    r->c_st = r->s_st1 = r->s_st2 = HS_FAIL;
    r->hello_len = handshake_start(r->c, r->hello);
    r->s_st1 = handshake_input(r->s, r->hello, r->hello_len, r->sproof,
                               &r->sproof_len);
    if (r->s_st1 != HS_CONTINUE)
        return;
    r->c_st = handshake_input(r->c, r->sproof, r->sproof_len, r->cproof,
                              &r->cproof_len);
    if (r->c_st != HS_DONE)
        return;
    r->last_len = 99;
    r->s_st2 =
        handshake_input(r->s, r->cproof, r->cproof_len, r->last, &r->last_len);
}

static void
run_free(struct run *r)
{
    handshake_free(r->c);
    handshake_free(r->s);
    r->c = r->s = NULL;
}

static int
all_zero(const uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

static void
t_complete(void)
{
    struct run r;
    uint8_t plain[5] = "hello", sealed[5 + SEC_TAG_LEN], back[5];

    keys_init();
    run_handshake(&r, key_a, "lab", key_a, "lab");
    CHECK_EQ_INT(r.hello_len, SEC_KX_PK_LEN);
    CHECK_EQ_INT(r.s_st1, HS_CONTINUE);
    CHECK_EQ_INT(r.sproof_len, SEC_KX_PK_LEN + SEC_MAC_LEN);
    CHECK_EQ_INT(r.c_st, HS_DONE);
    CHECK_EQ_INT(r.cproof_len, SEC_MAC_LEN);
    CHECK_EQ_INT(r.s_st2, HS_DONE);
    /* The server's last step has nothing to send. */
    CHECK_EQ_INT(r.last_len, 0);
    if (!CHECK_EQ_INT(handshake_keys(r.c, &r.ck), 0) ||
        !CHECK_EQ_INT(handshake_keys(r.s, &r.sk), 0)) {
        run_free(&r);
        return;
    }
    CHECK_MEM(r.ck.tx, r.sk.rx, SEC_KEY_LEN);
    CHECK_MEM(r.ck.rx, r.sk.tx, SEC_KEY_LEN);
    CHECK_MEM(r.ck.session_id, r.sk.session_id, SEC_HASH_LEN);
    /* Two directions, two keys; none of them trivially zero. */
    CHECK(memcmp(r.ck.tx, r.ck.rx, SEC_KEY_LEN) != 0);
    CHECK(!all_zero(r.ck.tx, SEC_KEY_LEN));
    CHECK(!all_zero(r.ck.rx, SEC_KEY_LEN));
    CHECK(!all_zero(r.ck.session_id, SEC_HASH_LEN));
    /* Neither key is the group key itself. */
    CHECK(memcmp(r.ck.tx, key_a, SEC_KEY_LEN) != 0);
    CHECK(memcmp(r.ck.rx, key_a, SEC_KEY_LEN) != 0);
    CHECK_EQ_STR(handshake_error(r.c), "no error");
    CHECK_EQ_STR(handshake_error(r.s), "no error");

    /* The keys work as a channel would use them. */
    sec_seal(sealed, plain, sizeof plain, NULL, 0, 0, r.ck.tx);
    CHECK_EQ_INT(sec_open(back, sealed, sizeof sealed, NULL, 0, 0, r.sk.rx), 0);
    CHECK_MEM(back, plain, sizeof plain);
    sec_seal(sealed, plain, sizeof plain, NULL, 0, 0, r.sk.tx);
    CHECK_EQ_INT(sec_open(back, sealed, sizeof sealed, NULL, 0, 0, r.ck.rx), 0);
    run_free(&r);
}

/* Keys are unavailable until the handshake is done. */
static void
t_keys_before_done(void)
{
    struct handshake *c, *s;
    struct hs_keys k;
    uint8_t hello[HS_MSG_MAX], out[HS_MSG_MAX];
    size_t outlen;

    keys_init();
    c = handshake_new(HS_CLIENT, key_a, "lab");
    s = handshake_new(HS_SERVER, key_a, "lab");
    CHECK_EQ_INT(handshake_keys(c, &k), -1);
    CHECK_EQ_INT(handshake_keys(s, &k), -1);
    handshake_start(c, hello);
    CHECK_EQ_INT(handshake_keys(c, &k), -1);
    CHECK_EQ_INT(handshake_input(s, hello, SEC_KX_PK_LEN, out, &outlen),
                 HS_CONTINUE);
    CHECK_EQ_INT(handshake_keys(s, &k), -1);
    handshake_free(c);
    handshake_free(s);
    handshake_free(NULL);
}

static void
t_wrong_key(void)
{
    struct run r;
    uint8_t junk[SEC_MAC_LEN], out[HS_MSG_MAX];
    size_t outlen = 99;

    keys_init();
    run_handshake(&r, key_a, "lab", key_b, "lab");
    /* The client checks the server's proof first and refuses it. */
    CHECK_EQ_INT(r.s_st1, HS_CONTINUE);
    CHECK_EQ_INT(r.c_st, HS_FAIL);
    CHECK_EQ_INT(r.cproof_len, 0);
    CHECK_CONTAINS(handshake_error(r.c), "authentication");
    CHECK_EQ_INT(handshake_keys(r.c, &r.ck), -1);
    /* The server, given a proof made without its key, refuses too. */
    sec_random(junk, sizeof junk);
    CHECK_EQ_INT(handshake_input(r.s, junk, sizeof junk, out, &outlen),
                 HS_FAIL);
    CHECK_EQ_INT(outlen, 0);
    CHECK_CONTAINS(handshake_error(r.s), "authentication");
    CHECK_EQ_INT(handshake_keys(r.s, &r.sk), -1);
    run_free(&r);
}

/* A client proof taken from another session is useless. */
static void
t_proof_from_other_session(void)
{
    struct run r1, r2;
    uint8_t out[HS_MSG_MAX];
    size_t outlen;
    struct handshake *s3;

    keys_init();
    run_handshake(&r1, key_a, "lab", key_a, "lab");
    CHECK_EQ_INT(r1.s_st2, HS_DONE);
    /* A fresh server sees the recorded hello, then the recorded proof. */
    s3 = handshake_new(HS_SERVER, key_a, "lab");
    CHECK_EQ_INT(handshake_input(s3, r1.hello, r1.hello_len, out, &outlen),
                 HS_CONTINUE);
    CHECK_EQ_INT(handshake_input(s3, r1.cproof, r1.cproof_len, out, &outlen),
                 HS_FAIL);
    CHECK_CONTAINS(handshake_error(s3), "authentication");
    handshake_free(s3);
    /* A client given a recorded server proof for someone else's hello. */
    run_handshake(&r2, key_a, "lab", key_a, "lab");
    {
        struct handshake *c = handshake_new(HS_CLIENT, key_a, "lab");
        uint8_t hello[HS_MSG_MAX];

        handshake_start(c, hello);
        CHECK_EQ_INT(handshake_input(c, r2.sproof, r2.sproof_len, out, &outlen),
                     HS_FAIL);
        CHECK_CONTAINS(handshake_error(c), "authentication");
        handshake_free(c);
    }
    run_free(&r1);
    run_free(&r2);
}

static void
t_wrong_group_name(void)
{
    struct run r;

    keys_init();
    run_handshake(&r, key_a, "lab", key_a, "lab2");
    CHECK_EQ_INT(r.c_st, HS_FAIL);
    CHECK_CONTAINS(handshake_error(r.c), "authentication");
    CHECK_EQ_INT(handshake_keys(r.c, &r.ck), -1);
    run_free(&r);
    /* Names are compared whole, not as prefixes. */
    run_handshake(&r, key_a, "lab", key_a, "la");
    CHECK_EQ_INT(r.c_st, HS_FAIL);
    run_free(&r);
    run_handshake(&r, key_a, "", key_a, "x");
    CHECK_EQ_INT(r.c_st, HS_FAIL);
    run_free(&r);
    /* An empty name is still a name both sides can share. */
    run_handshake(&r, key_a, "", key_a, "");
    CHECK_EQ_INT(r.s_st2, HS_DONE);
    run_free(&r);
}

/* A bit flipped anywhere in a handshake message is detected. */
static void
t_tampered(void)
{
    struct handshake *c, *s;
    uint8_t hello[HS_MSG_MAX], sproof[HS_MSG_MAX], cproof[HS_MSG_MAX];
    size_t hl, sl, cl, i;
    int failed_all = 1;

    keys_init();
    /* Server proof: each of its 64 bytes. */
    for (i = 0; i < SEC_KX_PK_LEN + SEC_MAC_LEN; i += 7) {
        c = handshake_new(HS_CLIENT, key_a, "lab");
        s = handshake_new(HS_SERVER, key_a, "lab");
        hl = handshake_start(c, hello);
        handshake_input(s, hello, hl, sproof, &sl);
        sproof[i] ^= 0x10;
        if (handshake_input(c, sproof, sl, cproof, &cl) != HS_FAIL)
            failed_all = 0;
        handshake_free(c);
        handshake_free(s);
    }
    CHECK(failed_all);
    /* Client proof. */
    failed_all = 1;
    for (i = 0; i < SEC_MAC_LEN; i += 5) {
        c = handshake_new(HS_CLIENT, key_a, "lab");
        s = handshake_new(HS_SERVER, key_a, "lab");
        hl = handshake_start(c, hello);
        handshake_input(s, hello, hl, sproof, &sl);
        handshake_input(c, sproof, sl, cproof, &cl);
        cproof[i] ^= 0x01;
        if (handshake_input(s, cproof, cl, sproof, &sl) != HS_FAIL)
            failed_all = 0;
        handshake_free(c);
        handshake_free(s);
    }
    CHECK(failed_all);
    /* Hello: the server answers, but the client's proof then fails. */
    c = handshake_new(HS_CLIENT, key_a, "lab");
    s = handshake_new(HS_SERVER, key_a, "lab");
    hl = handshake_start(c, hello);
    hello[3] ^= 0x80;
    CHECK_EQ_INT(handshake_input(s, hello, hl, sproof, &sl), HS_CONTINUE);
    CHECK_EQ_INT(handshake_input(c, sproof, sl, cproof, &cl), HS_FAIL);
    handshake_free(c);
    handshake_free(s);
}

/* Wrong sizes at each step. */
static void
t_malformed_lengths(void)
{
    static const size_t hello_bad[] = {0, 1, SEC_KX_PK_LEN - 1,
                                       SEC_KX_PK_LEN + 1,
                                       SEC_KX_PK_LEN + SEC_MAC_LEN};
    static const size_t sproof_bad[] = {0, SEC_KX_PK_LEN,
                                        SEC_KX_PK_LEN + SEC_MAC_LEN - 1,
                                        SEC_KX_PK_LEN + SEC_MAC_LEN + 1};
    static const size_t cproof_bad[] = {0, SEC_MAC_LEN - 1, SEC_MAC_LEN + 1,
                                        SEC_KX_PK_LEN + SEC_MAC_LEN};
    uint8_t in[2 * HS_MSG_MAX], hello[HS_MSG_MAX], sproof[HS_MSG_MAX],
        cproof[HS_MSG_MAX];
    struct handshake *c, *s;
    struct hs_keys keys;
    size_t i, outlen, hl, sl, cl;

    keys_init();
    memset(in, 0x33, sizeof in);
    for (i = 0; i < sizeof hello_bad / sizeof hello_bad[0]; i++) {
        s = handshake_new(HS_SERVER, key_a, "lab");
        outlen = 77;
        CHECK_EQ_INT(handshake_input(s, in, hello_bad[i], sproof, &outlen),
                     HS_FAIL);
        CHECK_EQ_INT(outlen, 0);
        CHECK_CONTAINS(handshake_error(s), "malformed");
        handshake_free(s);
    }
    for (i = 0; i < sizeof sproof_bad / sizeof sproof_bad[0]; i++) {
        c = handshake_new(HS_CLIENT, key_a, "lab");
        s = handshake_new(HS_SERVER, key_a, "lab");
        hl = handshake_start(c, hello);
        handshake_input(s, hello, hl, sproof, &sl);
        /* Real proof bytes, wrong length. */
        memcpy(in, sproof, sl);
        outlen = 77;
        CHECK_EQ_INT(handshake_input(c, in, sproof_bad[i], cproof, &outlen),
                     HS_FAIL);
        CHECK_EQ_INT(outlen, 0);
        CHECK_CONTAINS(handshake_error(c), "malformed");
        handshake_free(c);
        handshake_free(s);
    }
    for (i = 0; i < sizeof cproof_bad / sizeof cproof_bad[0]; i++) {
        c = handshake_new(HS_CLIENT, key_a, "lab");
        s = handshake_new(HS_SERVER, key_a, "lab");
        hl = handshake_start(c, hello);
        handshake_input(s, hello, hl, sproof, &sl);
        handshake_input(c, sproof, sl, cproof, &cl);
        memcpy(in, cproof, cl);
        outlen = 77;
        CHECK_EQ_INT(handshake_input(s, in, cproof_bad[i], sproof, &outlen),
                     HS_FAIL);
        CHECK_EQ_INT(outlen, 0);
        CHECK_CONTAINS(handshake_error(s), "malformed");
        CHECK_EQ_INT(handshake_keys(s, &keys), -1);
        handshake_free(c);
        handshake_free(s);
    }
}

/* Anything after DONE is a failure, and the keys are withdrawn. */
static void
t_input_after_done(void)
{
    struct run r;
    uint8_t out[HS_MSG_MAX];
    size_t outlen = 5;

    keys_init();
    run_handshake(&r, key_a, "lab", key_a, "lab");
    if (!CHECK_EQ_INT(r.s_st2, HS_DONE)) {
        run_free(&r);
        return;
    }
    CHECK_EQ_INT(handshake_input(r.c, r.sproof, r.sproof_len, out, &outlen),
                 HS_FAIL);
    CHECK_EQ_INT(outlen, 0);
    CHECK_CONTAINS(handshake_error(r.c), "after completion");
    CHECK_EQ_INT(handshake_input(r.s, r.cproof, r.cproof_len, out, &outlen),
                 HS_FAIL);
    CHECK_CONTAINS(handshake_error(r.s), "after completion");
    CHECK_EQ_INT(handshake_keys(r.c, &r.ck), -1);
    CHECK_EQ_INT(handshake_keys(r.s, &r.sk), -1);
    run_free(&r);
}

/* Failure is terminal: even a correct message does not revive it. */
static void
t_fail_is_terminal(void)
{
    struct handshake *c, *s;
    uint8_t hello[HS_MSG_MAX], out[HS_MSG_MAX], junk[3] = {1, 2, 3};
    size_t hl, outlen;
    const char *why;

    keys_init();
    c = handshake_new(HS_CLIENT, key_a, "lab");
    s = handshake_new(HS_SERVER, key_a, "lab");
    hl = handshake_start(c, hello);
    CHECK_EQ_INT(handshake_input(s, junk, sizeof junk, out, &outlen), HS_FAIL);
    why = handshake_error(s);
    CHECK_EQ_INT(handshake_input(s, hello, hl, out, &outlen), HS_FAIL);
    CHECK_EQ_INT(outlen, 0);
    /* The first reason is kept. */
    CHECK_EQ_STR(handshake_error(s), why);
    handshake_free(c);
    handshake_free(s);
}

/* Messages to the wrong role or before start. */
static void
t_out_of_order(void)
{
    struct handshake *c, *s;
    uint8_t buf[HS_MSG_MAX], out[HS_MSG_MAX];
    size_t outlen;

    keys_init();
    memset(buf, 7, sizeof buf);
    /* A client that has not started accepts nothing. */
    c = handshake_new(HS_CLIENT, key_a, "lab");
    CHECK_EQ_INT(
        handshake_input(c, buf, SEC_KX_PK_LEN + SEC_MAC_LEN, out, &outlen),
        HS_FAIL);
    handshake_free(c);
    /* A server does not start, a client does not start twice. */
    s = handshake_new(HS_SERVER, key_a, "lab");
    CHECK_EQ_INT(handshake_start(s, out), 0);
    handshake_free(s);
    c = handshake_new(HS_CLIENT, key_a, "lab");
    CHECK_EQ_INT(handshake_start(c, out), SEC_KX_PK_LEN);
    CHECK_EQ_INT(handshake_start(c, out), 0);
    handshake_free(c);
    /* A client given another client's hello (32 bytes) refuses it. */
    c = handshake_new(HS_CLIENT, key_a, "lab");
    handshake_start(c, out);
    CHECK_EQ_INT(handshake_input(c, buf, SEC_KX_PK_LEN, out, &outlen), HS_FAIL);
    handshake_free(c);
}

/* Two runs with the same key give unrelated session ids and keys, and the
 * client's hello (its ephemeral key) is fresh each time. */
static void
t_fresh_sessions(void)
{
    struct run r1, r2;

    keys_init();
    run_handshake(&r1, key_a, "lab", key_a, "lab");
    run_handshake(&r2, key_a, "lab", key_a, "lab");
    if (CHECK_EQ_INT(handshake_keys(r1.c, &r1.ck), 0) &&
        CHECK_EQ_INT(handshake_keys(r2.c, &r2.ck), 0)) {
        CHECK(memcmp(r1.ck.session_id, r2.ck.session_id, SEC_HASH_LEN) != 0);
        CHECK(memcmp(r1.ck.tx, r2.ck.tx, SEC_KEY_LEN) != 0);
        CHECK(memcmp(r1.ck.rx, r2.ck.rx, SEC_KEY_LEN) != 0);
    }
    CHECK(memcmp(r1.hello, r2.hello, SEC_KX_PK_LEN) != 0);
    CHECK(memcmp(r1.sproof, r2.sproof, SEC_KX_PK_LEN) != 0);
    run_free(&r1);
    run_free(&r2);
}

/* A known-weak (all-zero) client key gives no session. */
static void
t_zero_public_key(void)
{
    struct handshake *s;
    uint8_t zero[SEC_KX_PK_LEN] = {0}, out[HS_MSG_MAX], proof[SEC_MAC_LEN];
    size_t outlen;
    struct hs_keys k;

    keys_init();
    s = handshake_new(HS_SERVER, key_a, "lab");
    CHECK_EQ_INT(handshake_input(s, zero, sizeof zero, out, &outlen),
                 HS_CONTINUE);
    memset(proof, 0, sizeof proof);
    CHECK_EQ_INT(handshake_input(s, proof, sizeof proof, out, &outlen),
                 HS_FAIL);
    CHECK_EQ_INT(handshake_keys(s, &k), -1);
    handshake_free(s);
}

static const struct test_case cases[] = {
    {"complete", t_complete},
    {"keys_before_done", t_keys_before_done},
    {"wrong_key", t_wrong_key},
    {"proof_from_other_session", t_proof_from_other_session},
    {"wrong_group_name", t_wrong_group_name},
    {"tampered", t_tampered},
    {"malformed_lengths", t_malformed_lengths},
    {"input_after_done", t_input_after_done},
    {"fail_is_terminal", t_fail_is_terminal},
    {"out_of_order", t_out_of_order},
    {"fresh_sessions", t_fresh_sessions},
    {"zero_public_key", t_zero_public_key},
};

TEST_MAIN(cases)
