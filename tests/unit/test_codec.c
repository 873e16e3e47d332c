/*
 * Codec: every message type survives encode/decode unchanged, and decoding
 * refuses what the rest of the program must never see (wrong key sizes,
 * bad labels, impossible resource figures, unknown states, no body,
 * garbage).  A refused message leaves nothing to free; the sanitizer build
 * checks that no allocation escapes.
 *
 * Messages that codec_encode cannot produce (a 31-byte key, a 65-character
 * label) are written here with a few lines of protobuf wire format, field
 * numbers as in proto/p2p.proto.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "test.h"

/* --- a minimal protobuf writer ----------------------------------------- */

struct pbuf {
    uint8_t b[8192];
    size_t n;
};

static void
pb_raw(struct pbuf *p, const void *data, size_t len)
{
    if (p->n + len > sizeof p->b)
        abort();
    memcpy(p->b + p->n, data, len);
    p->n += len;
}

static void
pb_varint(struct pbuf *p, uint64_t v)
{
    uint8_t c;

    do {
        c = v & 0x7f;
        v >>= 7;
        if (v != 0)
            c |= 0x80;
        pb_raw(p, &c, 1);
    } while (v != 0);
}

/* Field with wire type 0 (varint). */
static void
pb_uint(struct pbuf *p, unsigned field, uint64_t v)
{
    pb_varint(p, (uint64_t)field << 3 | 0);
    pb_varint(p, v);
}

/* Field with wire type 2 (bytes, string, embedded message). */
static void
pb_bytes(struct pbuf *p, unsigned field, const void *data, size_t len)
{
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, len);
    pb_raw(p, data, len);
}

static void
pb_str(struct pbuf *p, unsigned field, const char *s)
{
    pb_bytes(p, field, s, strlen(s));
}

static void
pb_sub(struct pbuf *p, unsigned field, const struct pbuf *sub)
{
    pb_bytes(p, field, sub->b, sub->n);
}

/* Resources (p2p.Resources). */
static void
pb_res(struct pbuf *p, uint64_t mem_total, uint64_t mem_free,
       uint32_t slots_total, uint32_t slots_free, uint64_t state)
{
    pb_uint(p, 1, 4);
    pb_uint(p, 2, mem_total);
    pb_uint(p, 3, mem_free);
    pb_uint(p, 4, 1500);
    pb_uint(p, 5, slots_total);
    pb_uint(p, 6, slots_free);
    pb_uint(p, 7, state);
}

/* The parts of a Register message that the rejection cases vary. */
struct reg_spec {
    size_t key_len, sig_len;
    const char *label, *addr, *version;
    int no_res;
};

static const struct reg_spec reg_good = {
    SEC_SIGN_PK_LEN, SEC_SIG_LEN, "node-1", "10.0.0.1:9897", "0.1.0", 0,
};

/* A whole p2p.Message carrying a Register built from spec. */
static void
pb_register(struct pbuf *out, const struct reg_spec *spec)
{
    uint8_t key[256], sig[256];
    struct pbuf reg = {.n = 0}, res = {.n = 0};

    memset(key, 0xab, sizeof key);
    memset(sig, 0xcd, sizeof sig);
    out->n = 0;
    pb_bytes(&reg, 1, key, spec->key_len);
    pb_bytes(&reg, 2, sig, spec->sig_len);
    if (spec->label != NULL)
        pb_str(&reg, 3, spec->label);
    if (spec->addr != NULL)
        pb_str(&reg, 4, spec->addr);
    if (!spec->no_res) {
        pb_res(&res, 1000, 500, 4, 2, 2);
        pb_sub(&reg, 5, &res);
    }
    if (spec->version != NULL)
        pb_str(&reg, 6, spec->version);
    pb_sub(out, 1, &reg);
}

/* --- helpers -------------------------------------------------------------- */

static void
fill_res(struct resources *r, uint32_t seed)
{
    r->cores = 8 + seed;
    r->mem_total = (uint64_t)64 << 30 | seed;
    r->mem_free = (uint64_t)12 << 30;
    r->load_milli = 2500 + seed;
    r->slots_total = 8 + seed;
    r->slots_free = 3;
    r->state = PEER_STATE_BUSY;
}

static int
res_equal(const struct resources *a, const struct resources *b)
{
    return a->cores == b->cores && a->mem_total == b->mem_total &&
           a->mem_free == b->mem_free && a->load_milli == b->load_milli &&
           a->slots_total == b->slots_total && a->slots_free == b->slots_free &&
           a->state == b->state;
}

/* Encode m and decode it into out; 0 on success. */
static int
roundtrip(const struct msg *m, struct msg *out)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    char err[160] = "";
    int rc;

    if (!CHECK_EQ_INT(codec_encode(m, &buf, &len), 0))
        return -1;
    rc = codec_decode(buf, len, out, err, sizeof err);
    free(buf);
    if (!CHECK_EQ_INT(rc, 0)) {
        fprintf(stderr, "  decode error: %s\n", err);
        return -1;
    }
    CHECK_EQ_INT(out->type, m->type);
    return 0;
}

/* Decode must fail with a reason and leave an empty message. */
static void
expect_reject_at(const char *file, int line, const uint8_t *buf, size_t len,
                 const char *why)
{
    struct msg m;
    char err[160] = "";
    static const struct msg zero;

    memset(&m, 0x5a, sizeof m);
    if (codec_decode(buf, len, &m, err, sizeof err) != -1) {
        test_fail(file, line, "decode accepted %s (type %s)", why,
                  msg_type_name(m.type));
        codec_msg_free(&m);
        return;
    }
    if (err[0] == '\0')
        test_fail(file, line, "%s: no reason given", why);
    if (memcmp(&m, &zero, sizeof m) != 0)
        test_fail(file, line, "%s: refused message not cleared", why);
    /* Must be harmless to free anyway. */
    codec_msg_free(&m);
}
#define expect_reject(buf, len, why)                                           \
    expect_reject_at(__FILE__, __LINE__, (buf), (len), (why))

/* Encode m (codec_encode does not validate) and expect decode to refuse. */
static void
expect_encoded_reject_at(const char *file, int line, const struct msg *m,
                         const char *why)
{
    uint8_t *buf = NULL;
    size_t len = 0;

    if (codec_encode(m, &buf, &len) != 0) {
        test_fail(file, line, "%s: codec_encode refused", why);
        return;
    }
    expect_reject_at(file, line, buf, len, why);
    free(buf);
}
#define expect_encoded_reject(m, why)                                          \
    expect_encoded_reject_at(__FILE__, __LINE__, (m), (why))

static void
make_register(struct msg *m)
{
    memset(m, 0, sizeof *m);
    m->type = MSG_REGISTER;
    memset(m->u.reg.node_key, 0x11, sizeof m->u.reg.node_key);
    m->u.reg.node_key[0] = 0;
    memset(m->u.reg.signature, 0x22, sizeof m->u.reg.signature);
    m->u.reg.signature[SEC_SIG_LEN - 1] = 0xff;
    snprintf(m->u.reg.host_label, sizeof m->u.reg.host_label, "node-17.lab");
    snprintf(m->u.reg.addr, sizeof m->u.reg.addr, "[fe80::1]:9897");
    snprintf(m->u.reg.version, sizeof m->u.reg.version, "0.1.0+git");
    fill_res(&m->u.reg.res, 1);
}

static void
make_list(struct msg *m, struct peer_entry *pe, size_t n)
{
    size_t i;

    memset(m, 0, sizeof *m);
    m->type = MSG_LIST_REPLY;
    m->u.list.npeers = n;
    m->u.list.peers = pe;
    for (i = 0; i < n; i++) {
        memset(&pe[i], 0, sizeof pe[i]);
        memset(pe[i].id, (int)(0x30 + i), sizeof pe[i].id);
        snprintf(pe[i].host_label, sizeof pe[i].host_label, "host%zu", i);
        snprintf(pe[i].addr, sizeof pe[i].addr, "10.0.0.%zu:9897", i + 1);
        fill_res(&pe[i].res, (uint32_t)i);
        pe[i].res.state = (enum peer_state)(i % 5);
        pe[i].rtt_us = (uint32_t)(100 * i + 7);
        pe[i].age_ms = (uint64_t)1 << (20 + i % 40);
    }
}

/* --- round trips -------------------------------------------------------- */

static void
t_register(void)
{
    struct msg m, d;

    make_register(&m);
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_MEM(d.u.reg.node_key, m.u.reg.node_key, SEC_SIGN_PK_LEN);
    CHECK_MEM(d.u.reg.signature, m.u.reg.signature, SEC_SIG_LEN);
    CHECK_EQ_STR(d.u.reg.host_label, "node-17.lab");
    CHECK_EQ_STR(d.u.reg.addr, "[fe80::1]:9897");
    CHECK_EQ_STR(d.u.reg.version, "0.1.0+git");
    CHECK(res_equal(&d.u.reg.res, &m.u.reg.res));
    codec_msg_free(&d);

    /* The version is informational and may be empty. */
    m.u.reg.version[0] = '\0';
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_STR(d.u.reg.version, "");
    codec_msg_free(&d);
}

/* Labels and addresses of exactly the maximum length pass. */
static void
t_register_max_lengths(void)
{
    struct msg m, d;

    make_register(&m);
    memset(m.u.reg.host_label, 'h', WIRE_MAX_LABEL);
    m.u.reg.host_label[WIRE_MAX_LABEL] = '\0';
    memset(m.u.reg.addr, 'a', WIRE_MAX_ADDR);
    m.u.reg.addr[WIRE_MAX_ADDR] = '\0';
    memset(m.u.reg.version, 'v', WIRE_MAX_LABEL);
    m.u.reg.version[WIRE_MAX_LABEL] = '\0';
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_STR(d.u.reg.host_label, m.u.reg.host_label);
    CHECK_EQ_STR(d.u.reg.addr, m.u.reg.addr);
    CHECK_EQ_STR(d.u.reg.version, m.u.reg.version);
    codec_msg_free(&d);
}

static void
t_register_ack(void)
{
    struct msg m = {.type = MSG_REGISTER_ACK}, d;

    m.u.reg_ack.heartbeat_ms = 1000;
    m.u.reg_ack.expire_ms = 0xffffffff;
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.reg_ack.heartbeat_ms, 1000);
    CHECK_EQ_INT(d.u.reg_ack.expire_ms, 0xffffffffu);
    codec_msg_free(&d);
}

static void
t_heartbeat(void)
{
    struct msg m = {.type = MSG_HEARTBEAT}, d;
    int s;

    for (s = PEER_STATE_UNKNOWN; s <= PEER_STATE_NOT_SHARING; s++) {
        fill_res(&m.u.heartbeat, (uint32_t)s);
        m.u.heartbeat.state = (enum peer_state)s;
        if (roundtrip(&m, &d) != 0)
            return;
        CHECK(res_equal(&d.u.heartbeat, &m.u.heartbeat));
        codec_msg_free(&d);
    }
    /* Extremes: free == total, everything zero, 64-bit memory sizes. */
    memset(&m.u.heartbeat, 0, sizeof m.u.heartbeat);
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK(res_equal(&d.u.heartbeat, &m.u.heartbeat));
    codec_msg_free(&d);
    m.u.heartbeat.mem_total = m.u.heartbeat.mem_free = UINT64_MAX;
    m.u.heartbeat.slots_total = m.u.heartbeat.slots_free = UINT32_MAX;
    m.u.heartbeat.cores = UINT32_MAX;
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK(res_equal(&d.u.heartbeat, &m.u.heartbeat));
    codec_msg_free(&d);
}

/* Messages without fields. */
static void
t_empty_bodies(void)
{
    static const enum msg_type types[] = {MSG_HEARTBEAT_ACK, MSG_UNREGISTER,
                                          MSG_LIST_REQUEST};
    struct msg m, d;
    size_t i;

    for (i = 0; i < sizeof types / sizeof types[0]; i++) {
        memset(&m, 0, sizeof m);
        m.type = types[i];
        if (roundtrip(&m, &d) != 0)
            return;
        codec_msg_free(&d);
    }
}

static void
t_ping_pong(void)
{
    static const uint64_t stamps[] = {0, 1, 1234567890123ull, UINT64_MAX};
    struct msg m, d;
    size_t i;

    for (i = 0; i < sizeof stamps / sizeof stamps[0]; i++) {
        memset(&m, 0, sizeof m);
        m.type = i % 2 ? MSG_PING : MSG_PONG;
        m.u.stamp = stamps[i];
        if (roundtrip(&m, &d) != 0)
            return;
        CHECK(d.u.stamp == stamps[i]);
        m.type = i % 2 ? MSG_PONG : MSG_PING;
        if (roundtrip(&m, &d) != 0)
            return;
        CHECK(d.u.stamp == stamps[i]);
    }
}

static void
t_list_reply(void)
{
    struct peer_entry pe[5];
    struct msg m, d;
    size_t i;

    make_list(&m, pe, 5);
    if (roundtrip(&m, &d) != 0)
        return;
    if (!CHECK_EQ_INT(d.u.list.npeers, 5) || !CHECK(d.u.list.peers != NULL)) {
        codec_msg_free(&d);
        return;
    }
    /* A decoded list owns its own array. */
    CHECK(d.u.list.peers != pe);
    for (i = 0; i < 5; i++) {
        const struct peer_entry *a = &pe[i], *b = &d.u.list.peers[i];

        CHECK_MEM(b->id, a->id, sizeof a->id);
        CHECK_EQ_STR(b->host_label, a->host_label);
        CHECK_EQ_STR(b->addr, a->addr);
        CHECK(res_equal(&b->res, &a->res));
        CHECK_EQ_INT(b->rtt_us, a->rtt_us);
        CHECK(b->age_ms == a->age_ms);
    }
    codec_msg_free(&d);
    CHECK(d.u.list.peers == NULL);
    CHECK_EQ_INT(d.u.list.npeers, 0);
}

static void
t_list_reply_empty(void)
{
    struct msg m, d;

    make_list(&m, NULL, 0);
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.list.npeers, 0);
    CHECK(d.u.list.peers == NULL);
    codec_msg_free(&d);
}

/* A list that fills most of a request-sized frame. */
static void
t_list_reply_many(void)
{
    enum { N = 300 };
    struct peer_entry *pe = calloc(N, sizeof *pe);
    struct msg m, d;
    size_t i;

    if (!CHECK(pe != NULL))
        return;
    make_list(&m, pe, N);
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.u.list.npeers, N);
        for (i = 0; i < N && i < d.u.list.npeers; i++)
            if (!CHECK_EQ_STR(d.u.list.peers[i].host_label, pe[i].host_label))
                break;
        codec_msg_free(&d);
    }
    free(pe);
}

static void
t_error(void)
{
    struct msg m = {.type = MSG_ERROR}, d;

    m.u.error.code = 403;
    snprintf(m.u.error.text, sizeof m.u.error.text,
             "not allowed: peer ~ busy (try later)");
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.error.code, 403);
    CHECK_EQ_STR(d.u.error.text, m.u.error.text);

    /* Empty text, and text of exactly the maximum length. */
    m.u.error.text[0] = '\0';
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_STR(d.u.error.text, "");
    memset(m.u.error.text, 'e', WIRE_MAX_TEXT);
    m.u.error.text[WIRE_MAX_TEXT] = '\0';
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_STR(d.u.error.text, m.u.error.text);
}

/* codec_encode refuses what it cannot express. */
static void
t_encode_invalid_type(void)
{
    struct msg m;
    uint8_t *buf = NULL;
    size_t len = 0;

    memset(&m, 0, sizeof m);
    m.type = MSG_NONE;
    CHECK_EQ_INT(codec_encode(&m, &buf, &len), -1);
    m.type = (enum msg_type)(MSG__COUNT);
    CHECK_EQ_INT(codec_encode(&m, &buf, &len), -1);
    CHECK(buf == NULL);
}

/* --- rejections ----------------------------------------------------------- */

/* The hand-written Register is itself accepted, so the cases below fail
 * only for the field they change. */
static void
t_handmade_register_ok(void)
{
    struct pbuf p;
    struct msg m;
    char err[160];

    pb_register(&p, &reg_good);
    if (!CHECK_EQ_INT(codec_decode(p.b, p.n, &m, err, sizeof err), 0)) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK_EQ_INT(m.type, MSG_REGISTER);
    CHECK_EQ_STR(m.u.reg.host_label, "node-1");
    CHECK_EQ_STR(m.u.reg.addr, "10.0.0.1:9897");
    CHECK_EQ_INT(m.u.reg.res.slots_free, 2);
    CHECK_EQ_INT(m.u.reg.res.state, PEER_STATE_BUSY);
    codec_msg_free(&m);
}

static void
t_reject_key_lengths(void)
{
    static const size_t bad[] = {
        0, 1, SEC_SIGN_PK_LEN - 1, SEC_SIGN_PK_LEN + 1, SEC_SIG_LEN, 200};
    struct reg_spec s;
    struct pbuf p;
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = reg_good;
        s.key_len = bad[i];
        pb_register(&p, &s);
        expect_reject(p.b, p.n, "node key of wrong length");
    }
}

static void
t_reject_signature_lengths(void)
{
    static const size_t bad[] = {
        0, 1, SEC_SIG_LEN - 1, SEC_SIG_LEN + 1, SEC_SIGN_PK_LEN, 200};
    struct reg_spec s;
    struct pbuf p;
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = reg_good;
        s.sig_len = bad[i];
        pb_register(&p, &s);
        expect_reject(p.b, p.n, "signature of wrong length");
    }
}

static void
t_reject_labels(void)
{
    char longest[WIRE_MAX_LABEL + 2], longaddr[WIRE_MAX_ADDR + 2];
    static const char *bad[] = {
        "",        "has space",         "tab\there", "ctl\x01",
        "del\x7f", "\xc3\xa9t\xc3\xa9", "nl\n",      " lead",
    };
    struct reg_spec s;
    struct pbuf p;
    size_t i;

    memset(longest, 'x', WIRE_MAX_LABEL + 1);
    longest[WIRE_MAX_LABEL + 1] = '\0';
    memset(longaddr, '1', WIRE_MAX_ADDR + 1);
    longaddr[WIRE_MAX_ADDR + 1] = '\0';

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = reg_good;
        s.label = bad[i];
        pb_register(&p, &s);
        expect_reject(p.b, p.n, "bad host label");
        s = reg_good;
        s.addr = bad[i];
        pb_register(&p, &s);
        expect_reject(p.b, p.n, "bad address");
    }
    /* Missing altogether. */
    s = reg_good;
    s.label = NULL;
    pb_register(&p, &s);
    expect_reject(p.b, p.n, "missing host label");
    s = reg_good;
    s.addr = NULL;
    pb_register(&p, &s);
    expect_reject(p.b, p.n, "missing address");
    /* One character too long. */
    s = reg_good;
    s.label = longest;
    pb_register(&p, &s);
    expect_reject(p.b, p.n, "overlong host label");
    s = reg_good;
    s.addr = longaddr;
    pb_register(&p, &s);
    expect_reject(p.b, p.n, "overlong address");
    s = reg_good;
    s.version = longest;
    pb_register(&p, &s);
    expect_reject(p.b, p.n, "overlong version");
    s = reg_good;
    s.version = "bad version";
    pb_register(&p, &s);
    expect_reject(p.b, p.n, "version with a space");
    /* A label with an embedded NUL must not pass as its prefix... or if the
     * decoder keeps the prefix, the prefix must itself be valid. */
    {
        struct pbuf reg = {.n = 0}, res = {.n = 0};
        uint8_t key[SEC_SIGN_PK_LEN] = {0}, sig[SEC_SIG_LEN] = {0};
        struct msg m;
        char err[160];

        pb_bytes(&reg, 1, key, sizeof key);
        pb_bytes(&reg, 2, sig, sizeof sig);
        pb_bytes(&reg, 3, "ok\0 evil", 8);
        pb_str(&reg, 4, "1.2.3.4:5");
        pb_res(&res, 10, 5, 2, 1, 1);
        pb_sub(&reg, 5, &res);
        p.n = 0;
        pb_sub(&p, 1, &reg);
        if (codec_decode(p.b, p.n, &m, err, sizeof err) == 0) {
            CHECK(codec_valid_token(m.u.reg.host_label, WIRE_MAX_LABEL));
            codec_msg_free(&m);
        }
    }
}

/* Labels refused by the decoder when produced by codec_encode. */
static void
t_reject_encoded_labels(void)
{
    struct msg m;

    make_register(&m);
    m.u.reg.host_label[0] = '\0';
    expect_encoded_reject(&m, "empty host label");
    make_register(&m);
    m.u.reg.addr[0] = '\0';
    expect_encoded_reject(&m, "empty address");
    make_register(&m);
    m.u.reg.host_label[3] = '\x1b';
    expect_encoded_reject(&m, "escape in host label");
    make_register(&m);
    m.u.reg.addr[2] = ' ';
    expect_encoded_reject(&m, "space in address");
}

static void
t_reject_resources(void)
{
    struct msg m;

    make_register(&m);
    m.u.reg.res.mem_free = m.u.reg.res.mem_total + 1;
    expect_encoded_reject(&m, "register mem_free > mem_total");
    make_register(&m);
    m.u.reg.res.slots_free = m.u.reg.res.slots_total + 1;
    expect_encoded_reject(&m, "register slots_free > slots_total");
    make_register(&m);
    m.u.reg.res.state = (enum peer_state)(PEER_STATE_OWNER_BUSY + 1);
    expect_encoded_reject(&m, "register unknown state");

    memset(&m, 0, sizeof m);
    m.type = MSG_HEARTBEAT;
    fill_res(&m.u.heartbeat, 0);
    m.u.heartbeat.mem_free = m.u.heartbeat.mem_total + 1;
    expect_encoded_reject(&m, "heartbeat mem_free > mem_total");
    fill_res(&m.u.heartbeat, 0);
    m.u.heartbeat.slots_total = 0;
    m.u.heartbeat.slots_free = 1;
    expect_encoded_reject(&m, "heartbeat slots_free > slots_total");
    fill_res(&m.u.heartbeat, 0);
    m.u.heartbeat.state = (enum peer_state)99;
    expect_encoded_reject(&m, "heartbeat unknown state");
    fill_res(&m.u.heartbeat, 0);
    m.u.heartbeat.state = (enum peer_state) - 1;
    expect_encoded_reject(&m, "heartbeat negative state");
}

/* Register and heartbeat need their resources. */
static void
t_reject_missing_resources(void)
{
    struct reg_spec s = reg_good;
    struct pbuf p, hb = {.n = 0};

    s.no_res = 1;
    pb_register(&p, &s);
    expect_reject(p.b, p.n, "register without resources");
    p.n = 0;
    pb_sub(&p, 3, &hb);
    expect_reject(p.b, p.n, "heartbeat without resources");
}

/* A bad entry anywhere in a list refuses the whole list, and the entries
 * decoded before it are freed (ASan). */
static void
t_reject_list_entries(void)
{
    struct peer_entry pe[4];
    struct msg m;

    make_list(&m, pe, 4);
    pe[2].res.slots_free = pe[2].res.slots_total + 1;
    expect_encoded_reject(&m, "list entry slots_free > slots_total");
    make_list(&m, pe, 4);
    pe[3].addr[0] = '\0';
    expect_encoded_reject(&m, "list entry with empty address");
    make_list(&m, pe, 4);
    pe[0].host_label[1] = '\x7f';
    expect_encoded_reject(&m, "first list entry bad label");
    make_list(&m, pe, 4);
    pe[1].res.state = (enum peer_state)7;
    expect_encoded_reject(&m, "list entry unknown state");

    /* Entries written by hand: an id of the wrong length, no resources. */
    {
        uint8_t id[SEC_SIGN_PK_LEN + 1] = {0};
        struct pbuf p = {.n = 0}, list = {.n = 0}, e = {.n = 0}, res = {.n = 0};

        pb_res(&res, 10, 5, 2, 1, 1);
        pb_bytes(&e, 1, id, SEC_SIGN_PK_LEN);
        pb_str(&e, 2, "h");
        pb_str(&e, 3, "a:1");
        pb_sub(&e, 4, &res);
        pb_sub(&list, 1, &e); /* one good entry */
        e.n = 0;
        pb_bytes(&e, 1, id, sizeof id);
        pb_str(&e, 2, "h");
        pb_str(&e, 3, "a:1");
        pb_sub(&e, 4, &res);
        pb_sub(&list, 1, &e);
        pb_sub(&p, 9, &list);
        expect_reject(p.b, p.n, "list entry id of 33 bytes");

        p.n = list.n = e.n = 0;
        pb_bytes(&e, 1, id, SEC_SIGN_PK_LEN);
        pb_str(&e, 2, "h");
        pb_str(&e, 3, "a:1");
        pb_sub(&list, 1, &e);
        pb_sub(&p, 9, &list);
        expect_reject(p.b, p.n, "list entry without resources");

        /* An entry with nothing in it at all. */
        p.n = list.n = 0;
        pb_bytes(&list, 1, "", 0);
        pb_sub(&p, 9, &list);
        expect_reject(p.b, p.n, "empty list entry");
    }
}

static void
t_reject_error_text(void)
{
    struct pbuf p = {.n = 0}, e = {.n = 0};
    char longtext[WIRE_MAX_TEXT + 2];
    struct msg m = {.type = MSG_ERROR};

    m.u.error.code = 1;
    snprintf(m.u.error.text, sizeof m.u.error.text, "bell\a");
    expect_encoded_reject(&m, "error text with a control character");
    snprintf(m.u.error.text, sizeof m.u.error.text, "line\nbreak");
    expect_encoded_reject(&m, "error text with a newline");

    memset(longtext, 't', WIRE_MAX_TEXT + 1);
    longtext[WIRE_MAX_TEXT + 1] = '\0';
    pb_uint(&e, 1, 5);
    pb_str(&e, 2, longtext);
    pb_sub(&p, 10, &e);
    expect_reject(p.b, p.n, "overlong error text");
}

static void
t_reject_no_body(void)
{
    static const uint8_t unknown_field[] = {0x58, 0x01}; /* field 11 = 1 */
    static const uint8_t unknown_body[] = {0x62, 0x00};  /* field 12, empty */
    uint8_t empty[1] = {0};

    expect_reject(empty, 0, "zero-length message");
    expect_reject(unknown_field, sizeof unknown_field, "unknown field only");
    expect_reject(unknown_body, sizeof unknown_body, "unknown body type");
}

static void
t_reject_garbage(void)
{
    static const struct {
        const char *bytes;
        size_t len;
    } bad[] = {
        {"\xff", 1},
        {"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11}, /* bad varint */
        {"\x0a", 1},         /* reg, length missing */
        {"\x0a\x05\x01", 3}, /* reg, length beyond the buffer */
        {"\x32\x02\x08", 3}, /* ping, body truncated */
        {"\x0f", 1},         /* wire type 7 */
        {"\x00\x01", 2},     /* field number 0 */
        {"GET / HTTP/1.1\r\n", 16},
        {"\x0a\x80\x80\x80\x80\x10", 6}, /* length 2^32 */
    };
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_reject((const uint8_t *)bad[i].bytes, bad[i].len, "garbage");
}

/* Every prefix of a valid message is either refused or decodes to a valid
 * message; none crashes or leaks. */
static void
t_truncations(void)
{
    struct peer_entry pe[2];
    struct msg m, d;
    uint8_t *buf;
    size_t len, i;
    char err[160];

    make_list(&m, pe, 2);
    if (!CHECK_EQ_INT(codec_encode(&m, &buf, &len), 0))
        return;
    for (i = 0; i < len; i++) {
        if (codec_decode(buf, i, &d, err, sizeof err) == 0) {
            /* Only a whole list can stand for itself. */
            CHECK(d.type == MSG_LIST_REPLY && d.u.list.npeers < 2);
            codec_msg_free(&d);
        }
    }
    CHECK_EQ_INT(codec_decode(buf, len, &d, err, sizeof err), 0);
    codec_msg_free(&d);
    free(buf);
}

/* Protobuf merges repeated bodies: the last one wins, and whatever the
 * first one allocated is not leaked (ASan). */
static void
t_two_bodies(void)
{
    struct peer_entry pe[2];
    struct msg a, b, d;
    uint8_t *ba, *bb, cat[4096];
    size_t la, lb;
    char err[160];

    make_list(&a, pe, 2);
    memset(&b, 0, sizeof b);
    b.type = MSG_PING;
    b.u.stamp = 42;
    if (!CHECK_EQ_INT(codec_encode(&a, &ba, &la), 0))
        return;
    if (!CHECK_EQ_INT(codec_encode(&b, &bb, &lb), 0)) {
        free(ba);
        return;
    }
    if (CHECK(la + lb <= sizeof cat)) {
        memcpy(cat, ba, la);
        memcpy(cat + la, bb, lb);
        if (CHECK_EQ_INT(codec_decode(cat, la + lb, &d, err, sizeof err), 0)) {
            CHECK_EQ_INT(d.type, MSG_PING);
            CHECK(d.u.stamp == 42);
            codec_msg_free(&d);
        }
        memcpy(cat, bb, lb);
        memcpy(cat + lb, ba, la);
        if (CHECK_EQ_INT(codec_decode(cat, la + lb, &d, err, sizeof err), 0)) {
            CHECK_EQ_INT(d.type, MSG_LIST_REPLY);
            CHECK_EQ_INT(d.u.list.npeers, 2);
            codec_msg_free(&d);
        }
    }
    free(ba);
    free(bb);
}

static void
t_valid_token(void)
{
    char s[WIRE_MAX_LABEL + 2];

    CHECK(codec_valid_token("a", 1));
    CHECK(codec_valid_token("node-1.lab:9897", WIRE_MAX_LABEL));
    CHECK(codec_valid_token("[::1]:9700", WIRE_MAX_ADDR));
    CHECK(codec_valid_token("~!", 2));
    CHECK(!codec_valid_token("", WIRE_MAX_LABEL));
    CHECK(!codec_valid_token("ab", 1));
    CHECK(!codec_valid_token("a b", 10));
    CHECK(!codec_valid_token("a\tb", 10));
    CHECK(!codec_valid_token("a\x7f", 10));
    CHECK(!codec_valid_token("\x80", 10));
    CHECK(!codec_valid_token("\xff", 10));
    memset(s, 'x', WIRE_MAX_LABEL);
    s[WIRE_MAX_LABEL] = '\0';
    CHECK(codec_valid_token(s, WIRE_MAX_LABEL));
    s[WIRE_MAX_LABEL] = 'x';
    s[WIRE_MAX_LABEL + 1] = '\0';
    CHECK(!codec_valid_token(s, WIRE_MAX_LABEL));
}

static void
t_names(void)
{
    enum msg_type t;

    CHECK_EQ_STR(msg_type_name(MSG_PING), "ping");
    CHECK_EQ_STR(msg_type_name(MSG_LIST_REPLY), "list-reply");
    CHECK_EQ_STR(msg_type_name(MSG_ERROR), "error");
    CHECK_EQ_STR(msg_type_name(MSG_PROC_EXIT), "proc-exit");
    CHECK_EQ_STR(msg_type_name(MSG_JOB_ABORT), "job-abort");
    CHECK_EQ_STR(msg_type_name(MSG_VIEW), "view");
    CHECK_EQ_STR(msg_type_name(MSG_SUSPECT), "suspect");
    CHECK_EQ_STR(msg_type_name(MSG_NODE_CHALLENGE), "node-challenge");
    CHECK_EQ_STR(msg_type_name(MSG_NODE_PROOF), "node-proof");
    CHECK_EQ_STR(msg_type_name((enum msg_type)(MSG__COUNT)), "?");
    CHECK_EQ_STR(msg_type_name((enum msg_type) - 1), "?");
    for (t = MSG_REGISTER; t <= MSG_ERROR; t++)
        CHECK(strcmp(msg_type_name(t), "?") != 0);
    CHECK_EQ_STR(peer_state_name(PEER_STATE_AVAILABLE), "available");
    CHECK_EQ_STR(peer_state_name(PEER_STATE_NOT_SHARING), "not-sharing");
    CHECK_EQ_STR(peer_state_name((enum peer_state)42), "unknown");
}

static void
t_free_null(void)
{
    struct msg m;

    codec_msg_free(NULL);
    memset(&m, 0, sizeof m);
    codec_msg_free(&m);
    CHECK_EQ_INT(m.type, MSG_NONE);
}

/* Empty arguments are valid (p2prun sh -c '...' sh "" x): protobuf-c
 * decodes an empty bytes field as {0, NULL}, which must not reach
 * memchr/memcpy (UBSan in the sanitizer build). */
static void
t_launch_empty_argument(void)
{
    struct msg m, out;
    struct proc_spec ps = {0, 0};
    char *argv[] = {"sh", "", "y", ""};
    char *env[] = {"EMPTY="};
    uint8_t *buf;
    size_t len;
    char err[128];

    memset(&m, 0, sizeof m);
    m.type = MSG_LAUNCH;
    m.u.launch.size = 1;
    m.u.launch.nreplicas = 1;
    m.u.launch.procs = &ps;
    m.u.launch.nprocs = 1;
    m.u.launch.argv = argv;
    m.u.launch.nargv = 4;
    m.u.launch.env = env;
    m.u.launch.nenv = 1;
    if (!CHECK_EQ_INT(codec_encode(&m, &buf, &len), 0))
        return;
    if (CHECK_EQ_INT(codec_decode(buf, len, &out, err, sizeof err), 0)) {
        CHECK_EQ_INT(out.u.launch.nargv, 4);
        CHECK_EQ_STR(out.u.launch.argv[1], "");
        CHECK_EQ_STR(out.u.launch.argv[2], "y");
        CHECK_EQ_STR(out.u.launch.argv[3], "");
        CHECK_EQ_STR(out.u.launch.env[0], "EMPTY=");
        codec_msg_free(&out);
    }
    free(buf);
}

/* A worker task: its input (a piece, input_more) travels, only inside a
 * farm, within the chunk limit; its answer comes back in the exit. */
static void
t_worker_task(void)
{
    struct msg m, d;
    struct proc_spec ps = {0, 0};
    char *argv[] = {"python3", "worker.py"};
    static uint8_t input[WIRE_MAX_CHUNK + 1];

    memset(&m, 0, sizeof m);
    m.type = MSG_LAUNCH;
    m.u.launch.size = m.u.launch.nreplicas = 1;
    m.u.launch.procs = &ps;
    m.u.launch.nprocs = 1;
    m.u.launch.argv = argv;
    m.u.launch.nargv = 2;
    m.u.launch.task = 5;
    memset(m.u.launch.farm, 0x42, WIRE_JOB_ID_LEN);
    m.u.launch.worker = 1;
    m.u.launch.input = (uint8_t *)"line\0with a NUL";
    m.u.launch.input_len = 15;
    m.u.launch.input_more = 1;
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.u.launch.worker, 1);
        CHECK_EQ_INT(d.u.launch.input_more, 1);
        CHECK_EQ_INT(d.u.launch.input_len, 15);
        CHECK_MEM(d.u.launch.input, "line\0with a NUL", 15);
        codec_msg_free(&d);
    }
    /* An input longer than a chunk is refused. */
    m.u.launch.input = input;
    m.u.launch.input_len = sizeof input;
    expect_encoded_reject(&m, "worker input over a chunk");
    /* Pieces without a worker, or input outside a farm: refused. */
    m.u.launch.input_len = 1;
    m.u.launch.worker = 0;
    expect_encoded_reject(&m, "input pieces without a worker");
    m.u.launch.worker = 1;
    m.u.launch.task = 0;
    expect_encoded_reject(&m, "worker input outside a farm");

    memset(&m, 0, sizeof m);
    m.type = MSG_PROC_EXIT;
    m.u.exit.code = 3;
    m.u.exit.out = (uint8_t *)"the answer";
    m.u.exit.out_len = 10;
    m.u.exit.worker_lost = 1;
    snprintf(m.u.exit.error, sizeof m.u.exit.error,
             "worker 2 on ws1 broke the protocol during task 5");
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.u.exit.code, 3);
        CHECK_EQ_INT(d.u.exit.out_len, 10);
        CHECK_MEM(d.u.exit.out, "the answer", 10);
        CHECK_EQ_INT(d.u.exit.worker_lost, 1);
        CHECK_EQ_STR(d.u.exit.error, m.u.exit.error);
        codec_msg_free(&d);
    }
    m.u.exit.out = input;
    m.u.exit.out_len = sizeof input;
    expect_encoded_reject(&m, "an answer over a chunk");
}

/* --- membership ---------------------------------------------------------- */

static void
t_view(void)
{
    static const uint32_t dead[] = {
        0, 1, 17, (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS - 1};
    struct msg m = {.type = MSG_VIEW}, d;
    uint32_t *many;
    size_t i;

    memset(m.u.view.job, 0x4e, WIRE_JOB_ID_LEN);
    m.u.view.number = 7;
    m.u.view.dead = (uint32_t *)dead;
    m.u.view.ndead = sizeof dead / sizeof dead[0];
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_MEM(d.u.view.job, m.u.view.job, WIRE_JOB_ID_LEN);
    CHECK_EQ_INT(d.u.view.number, 7);
    if (CHECK_EQ_INT(d.u.view.ndead, 4) && CHECK(d.u.view.dead != NULL))
        CHECK_MEM(d.u.view.dead, dead, sizeof dead);
    codec_msg_free(&d);
    CHECK(d.u.view.dead == NULL);

    /* The first view of a job: nobody dead yet. */
    m.u.view.number = 0xffffffff;
    m.u.view.dead = NULL;
    m.u.view.ndead = 0;
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.view.number, 0xffffffffu);
    CHECK_EQ_INT(d.u.view.ndead, 0);
    codec_msg_free(&d);

    /* A view of a large job, a few thousand entries, decodes whole. */
    many = calloc(5000, sizeof *many);
    if (!CHECK(many != NULL))
        return;
    for (i = 0; i < 5000; i++)
        many[i] = (uint32_t)(i * 197);
    m.u.view.dead = many;
    m.u.view.ndead = 5000;
    if (roundtrip(&m, &d) == 0) {
        if (CHECK_EQ_INT(d.u.view.ndead, 5000))
            CHECK_MEM(d.u.view.dead, many, 5000 * sizeof *many);
        codec_msg_free(&d);
    }
    free(many);
}

static void
t_suspect(void)
{
    struct msg m = {.type = MSG_SUSPECT}, d;

    memset(m.u.suspect.job, 0x5c, WIRE_JOB_ID_LEN);
    m.u.suspect.rank = WIRE_MAX_RANKS - 1;
    m.u.suspect.replica = WIRE_MAX_REPLICAS - 1;
    m.u.suspect.proc = (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS - 1;
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_MEM(d.u.suspect.job, m.u.suspect.job, WIRE_JOB_ID_LEN);
    CHECK_EQ_INT(d.u.suspect.rank, WIRE_MAX_RANKS - 1);
    CHECK_EQ_INT(d.u.suspect.replica, WIRE_MAX_REPLICAS - 1);
    CHECK_EQ_INT(d.u.suspect.proc,
                 (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS - 1);
    codec_msg_free(&d);

    memset(&m.u.suspect, 0, sizeof m.u.suspect);
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.suspect.rank, 0);
    CHECK_EQ_INT(d.u.suspect.proc, 0);
    codec_msg_free(&d);
}

static void
t_proc_exit(void)
{
    struct msg m = {.type = MSG_PROC_EXIT}, d;

    memset(m.u.exit.job, 0x3e, WIRE_JOB_ID_LEN);
    m.u.exit.rank = 7;
    m.u.exit.replica = 2;
    m.u.exit.signaled = 1;
    m.u.exit.code = 9;
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_MEM(d.u.exit.job, m.u.exit.job, WIRE_JOB_ID_LEN);
    CHECK_EQ_INT(d.u.exit.rank, 7);
    CHECK_EQ_INT(d.u.exit.replica, 2);
    CHECK_EQ_INT(d.u.exit.signaled, 1);
    CHECK_EQ_INT(d.u.exit.code, 9);
    CHECK_EQ_INT(d.u.exit.evicted, 0);
    CHECK_EQ_INT(d.u.exit.limit, EXIT_LIMIT_NONE);
    codec_msg_free(&d);

    /* The box's figures and an eviction travel too. */
    m.u.exit.mem_peak = 314572800;
    m.u.exit.limit = EXIT_LIMIT_MEMORY;
    m.u.exit.limit_value = 104857600;
    m.u.exit.evicted = 1;
    snprintf(m.u.exit.evict_reason, sizeof m.u.exit.evict_reason,
             "owner active (input 2 s ago)");
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.exit.mem_peak, 314572800);
    CHECK_EQ_INT(d.u.exit.limit, EXIT_LIMIT_MEMORY);
    CHECK_EQ_INT(d.u.exit.limit_value, 104857600);
    CHECK_EQ_INT(d.u.exit.evicted, 1);
    CHECK_EQ_STR(d.u.exit.evict_reason, "owner active (input 2 s ago)");
    codec_msg_free(&d);
    /* An unknown limit from a newer peer is no limit. */
    m.u.exit.limit = (enum exit_limit)7;
    m.u.exit.evict_reason[0] = '\0';
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.exit.limit, EXIT_LIMIT_NONE);
    codec_msg_free(&d);
}

/* Numbers retired from p2p.proto, as an older program still sends them:
 * KillReplica (Message field 27) is a message without a known body, and
 * ProcExit's old `stopped` (field 6) is skipped like any unknown field. */
static void
t_retired_fields(void)
{
    uint8_t job[WIRE_JOB_ID_LEN];
    struct pbuf p = {.n = 0}, b = {.n = 0};
    struct msg d;
    char err[160] = "";

    memset(job, 0x77, sizeof job);
    pb_bytes(&b, 1, job, sizeof job);
    pb_uint(&b, 2, 1);
    pb_sub(&p, 27, &b);
    expect_reject(p.b, p.n, "kill-replica (field 27)");
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(codec_decode(p.b, p.n, &d, err, sizeof err), -1);
    CHECK_CONTAINS(err, "without a known body");

    p.n = b.n = 0;
    pb_sub(&p, 27, &b);
    expect_reject(p.b, p.n, "empty kill-replica (field 27)");

    p.n = b.n = 0;
    pb_bytes(&b, 1, job, sizeof job);
    pb_uint(&b, 2, 4);
    pb_uint(&b, 3, 1);
    pb_uint(&b, 4, 1);
    pb_uint(&b, 5, 9);
    pb_uint(&b, 6, 1); /* stopped */
    pb_sub(&p, 23, &b);
    memset(&d, 0, sizeof d);
    if (!CHECK_EQ_INT(codec_decode(p.b, p.n, &d, err, sizeof err), 0))
        return;
    CHECK_EQ_INT(d.type, MSG_PROC_EXIT);
    CHECK_MEM(d.u.exit.job, job, WIRE_JOB_ID_LEN);
    CHECK_EQ_INT(d.u.exit.rank, 4);
    CHECK_EQ_INT(d.u.exit.replica, 1);
    CHECK_EQ_INT(d.u.exit.signaled, 1);
    CHECK_EQ_INT(d.u.exit.code, 9);
    codec_msg_free(&d);
}

/* A View (field 28) written by hand: job id of job_len bytes, then the
 * dead indices, packed or one field each. */
static void
pb_view(struct pbuf *out, size_t job_len, const uint32_t *dead, size_t n,
        int packed)
{
    uint8_t job[WIRE_JOB_ID_LEN + 1];
    struct pbuf v = {.n = 0}, list = {.n = 0};
    size_t i;

    memset(job, 0x4e, sizeof job);
    out->n = 0;
    pb_bytes(&v, 1, job, job_len);
    pb_uint(&v, 2, 3);
    if (packed) {
        for (i = 0; i < n; i++)
            pb_varint(&list, dead[i]);
        if (n > 0)
            pb_sub(&v, 3, &list);
    } else
        for (i = 0; i < n; i++)
            pb_uint(&v, 3, dead[i]);
    pb_sub(out, 28, &v);
}

static void
t_reject_view(void)
{
    const uint32_t max = (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS;
    uint32_t dead[3] = {1, 2, 3};
    struct pbuf p;
    struct msg m = {.type = MSG_VIEW}, d;
    char err[160];

    /* The hand-written form is accepted when it is right, both ways. */
    pb_view(&p, WIRE_JOB_ID_LEN, dead, 3, 1);
    if (CHECK_EQ_INT(codec_decode(p.b, p.n, &d, err, sizeof err), 0)) {
        CHECK_EQ_INT(d.type, MSG_VIEW);
        CHECK_EQ_INT(d.u.view.ndead, 3);
        codec_msg_free(&d);
    }
    pb_view(&p, WIRE_JOB_ID_LEN, dead, 3, 0);
    if (CHECK_EQ_INT(codec_decode(p.b, p.n, &d, err, sizeof err), 0)) {
        CHECK_EQ_INT(d.u.view.ndead, 3);
        codec_msg_free(&d);
    }

    pb_view(&p, WIRE_JOB_ID_LEN - 1, dead, 3, 1);
    expect_reject(p.b, p.n, "view with a 15-byte job id");
    pb_view(&p, WIRE_JOB_ID_LEN + 1, dead, 3, 1);
    expect_reject(p.b, p.n, "view with a 17-byte job id");
    pb_view(&p, 0, dead, 0, 1);
    expect_reject(p.b, p.n, "view without a job id");

    /* An index out of range anywhere refuses the view (ASan: nothing
     * decoded before it leaks). */
    dead[2] = max;
    pb_view(&p, WIRE_JOB_ID_LEN, dead, 3, 1);
    expect_reject(p.b, p.n, "view with the last index out of range");
    dead[0] = 0xffffffff;
    dead[2] = 3;
    pb_view(&p, WIRE_JOB_ID_LEN, dead, 3, 0);
    expect_reject(p.b, p.n, "view with the first index out of range");

    memset(m.u.view.job, 1, WIRE_JOB_ID_LEN);
    dead[0] = 0;
    dead[1] = max;
    m.u.view.dead = dead;
    m.u.view.ndead = 2;
    expect_encoded_reject(&m, "encoded view with an index out of range");
}

/* More entries than a job can have processes: refused on the count alone. */
static void
t_reject_view_count(void)
{
    const size_t max = (size_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS;
    struct msg m = {.type = MSG_VIEW};
    uint32_t *dead;

    dead = calloc(max + 1, sizeof *dead);
    if (!CHECK(dead != NULL))
        return;
    memset(m.u.view.job, 2, WIRE_JOB_ID_LEN);
    m.u.view.dead = dead;
    m.u.view.ndead = max + 1;
    expect_encoded_reject(&m, "view of more processes than a job has");
    free(dead);
}

/* A Suspect (field 29) written by hand. */
static void
pb_suspect(struct pbuf *out, size_t job_len, uint32_t rank, uint32_t replica,
           uint32_t proc)
{
    uint8_t job[WIRE_JOB_ID_LEN + 1];
    struct pbuf s = {.n = 0};

    memset(job, 0x5c, sizeof job);
    out->n = 0;
    pb_bytes(&s, 1, job, job_len);
    pb_uint(&s, 2, rank);
    pb_uint(&s, 3, replica);
    pb_uint(&s, 4, proc);
    pb_sub(out, 29, &s);
}

/* An OutputHold (30) or a Progress (31) written by hand. */
static void
pb_note(struct pbuf *out, int field, size_t job_len, uint32_t rank,
        uint32_t replica, uint64_t value)
{
    uint8_t job[WIRE_JOB_ID_LEN + 1];
    struct pbuf s = {.n = 0};

    memset(job, 0x6d, sizeof job);
    out->n = 0;
    pb_bytes(&s, 1, job, job_len);
    pb_uint(&s, 2, rank);
    pb_uint(&s, 3, replica);
    pb_uint(&s, 4, value);
    pb_sub(out, field, &s);
}

static void
t_output_hold_and_progress(void)
{
    struct msg m = {.type = MSG_OUTPUT_HOLD}, d;
    struct pbuf p;
    char err[160];
    int field;

    memset(m.u.note.job, 0x6d, WIRE_JOB_ID_LEN);
    m.u.note.rank = WIRE_MAX_RANKS - 1;
    m.u.note.replica = WIRE_MAX_REPLICAS - 1;
    m.u.note.value = 1;
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.type, MSG_OUTPUT_HOLD);
        CHECK_MEM(d.u.note.job, m.u.note.job, WIRE_JOB_ID_LEN);
        CHECK_EQ_INT(d.u.note.rank, WIRE_MAX_RANKS - 1);
        CHECK_EQ_INT(d.u.note.replica, WIRE_MAX_REPLICAS - 1);
        CHECK_EQ_INT(d.u.note.value, 1);
        codec_msg_free(&d);
    }
    m.type = MSG_PROGRESS;
    m.u.note.value = UINT64_MAX - 3;
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.type, MSG_PROGRESS);
        CHECK(d.u.note.value == UINT64_MAX - 3);
        codec_msg_free(&d);
    }
    CHECK_EQ_STR(msg_type_name(MSG_OUTPUT_HOLD), "output-hold");
    CHECK_EQ_STR(msg_type_name(MSG_PROGRESS), "progress");
    /* A hold of any non-zero value is a hold. */
    pb_note(&p, 30, WIRE_JOB_ID_LEN, 2, 1, 7);
    if (CHECK_EQ_INT(codec_decode(p.b, p.n, &d, err, sizeof err), 0)) {
        CHECK_EQ_INT(d.type, MSG_OUTPUT_HOLD);
        CHECK_EQ_INT(d.u.note.value, 1);
        codec_msg_free(&d);
    }
    for (field = 30; field <= 31; field++) {
        pb_note(&p, field, WIRE_JOB_ID_LEN - 1, 2, 1, 0);
        expect_reject(p.b, p.n, "note with a 15-byte job id");
        pb_note(&p, field, WIRE_JOB_ID_LEN, WIRE_MAX_RANKS, 1, 0);
        expect_reject(p.b, p.n, "note from a rank out of range");
        pb_note(&p, field, WIRE_JOB_ID_LEN, 2, WIRE_MAX_REPLICAS, 0);
        expect_reject(p.b, p.n, "note from a replica out of range");
    }
}

static void
t_reject_suspect(void)
{
    const uint32_t max = (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS;
    struct pbuf p;
    struct msg d;
    char err[160];

    pb_suspect(&p, WIRE_JOB_ID_LEN, 3, 1, 9);
    if (CHECK_EQ_INT(codec_decode(p.b, p.n, &d, err, sizeof err), 0)) {
        CHECK_EQ_INT(d.type, MSG_SUSPECT);
        CHECK_EQ_INT(d.u.suspect.rank, 3);
        CHECK_EQ_INT(d.u.suspect.replica, 1);
        CHECK_EQ_INT(d.u.suspect.proc, 9);
        codec_msg_free(&d);
    }
    pb_suspect(&p, WIRE_JOB_ID_LEN - 1, 3, 1, 9);
    expect_reject(p.b, p.n, "suspect with a 15-byte job id");
    pb_suspect(&p, WIRE_JOB_ID_LEN + 1, 3, 1, 9);
    expect_reject(p.b, p.n, "suspect with a 17-byte job id");
    pb_suspect(&p, WIRE_JOB_ID_LEN, WIRE_MAX_RANKS, 1, 9);
    expect_reject(p.b, p.n, "suspect from a rank out of range");
    pb_suspect(&p, WIRE_JOB_ID_LEN, 3, WIRE_MAX_REPLICAS, 9);
    expect_reject(p.b, p.n, "suspect from a replica out of range");
    pb_suspect(&p, WIRE_JOB_ID_LEN, 3, 1, max);
    expect_reject(p.b, p.n, "suspect of a process out of range");
    pb_suspect(&p, WIRE_JOB_ID_LEN, 3, 1, 0xffffffff);
    expect_reject(p.b, p.n, "suspect of process 2^32-1");
}

/* Node challenges (key or none) and proofs survive; wrong key or
 * signature sizes are refused. */
static void
t_node_proof(void)
{
    struct msg m, d;
    struct pbuf p, sub;
    char err[160];
    static const size_t bad_keys[] = {1, SEC_SIGN_PK_LEN - 1,
                                      SEC_SIGN_PK_LEN + 1, 200};
    uint8_t big[256];
    size_t i;

    memset(&m, 0, sizeof m);
    m.type = MSG_NODE_CHALLENGE; /* no key: any */
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.type, MSG_NODE_CHALLENGE);
        memset(big, 0, SEC_SIGN_PK_LEN);
        CHECK_MEM(d.u.node.node_key, big, SEC_SIGN_PK_LEN);
        codec_msg_free(&d);
    }
    memset(m.u.node.node_key, 0x42, SEC_SIGN_PK_LEN);
    if (roundtrip(&m, &d) == 0) {
        CHECK_MEM(d.u.node.node_key, m.u.node.node_key, SEC_SIGN_PK_LEN);
        codec_msg_free(&d);
    }
    m.type = MSG_NODE_PROOF;
    memset(m.u.node.signature, 0x17, SEC_SIG_LEN);
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.type, MSG_NODE_PROOF);
        CHECK_MEM(d.u.node.node_key, m.u.node.node_key, SEC_SIGN_PK_LEN);
        CHECK_MEM(d.u.node.signature, m.u.node.signature, SEC_SIG_LEN);
        codec_msg_free(&d);
    }
    memset(big, 0x33, sizeof big);
    for (i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        memset(&sub, 0, sizeof sub);
        memset(&p, 0, sizeof p);
        pb_bytes(&sub, 1, big, bad_keys[i]);
        pb_sub(&p, 50, &sub);
        expect_reject(p.b, p.n, "challenge with a key of the wrong size");
        memset(&sub, 0, sizeof sub);
        memset(&p, 0, sizeof p);
        pb_bytes(&sub, 1, big, bad_keys[i]);
        pb_bytes(&sub, 2, big, SEC_SIG_LEN);
        pb_sub(&p, 51, &sub);
        expect_reject(p.b, p.n, "proof with a key of the wrong size");
    }
    /* A proof without a signature, or with a short one. */
    memset(&sub, 0, sizeof sub);
    memset(&p, 0, sizeof p);
    pb_bytes(&sub, 1, big, SEC_SIGN_PK_LEN);
    pb_sub(&p, 51, &sub);
    expect_reject(p.b, p.n, "proof without a signature");
    memset(&sub, 0, sizeof sub);
    memset(&p, 0, sizeof p);
    pb_bytes(&sub, 1, big, SEC_SIGN_PK_LEN);
    pb_bytes(&sub, 2, big, SEC_SIG_LEN - 1);
    pb_sub(&p, 51, &sub);
    expect_reject(p.b, p.n, "proof with a 63-byte signature");
    (void)err;
}

/* --- the dashboard: host details, job reports, the job view ------------ */

/* A job of 2 ranks x 2 replicas, both replicas of rank 1 here. */
static void
make_job(struct job_info *j, struct job_proc procs[2], uint8_t seed)
{
    memset(j, 0, sizeof *j);
    memset(j->job, seed, sizeof j->job);
    snprintf(j->user, sizeof j->user, "alice");
    snprintf(j->command, sizeof j->command, "ring");
    j->size = 2;
    j->nreplicas = 2;
    j->started = 1700000000u + seed;
    j->exit = -1;
    memset(procs, 0, 2 * sizeof *procs);
    procs[0].rank = 1;
    procs[0].replica = 0;
    procs[0].state = PROC_RUN_RUNNING;
    procs[1].rank = 1;
    procs[1].replica = 1;
    procs[1].state = PROC_RUN_EXITED;
    procs[1].code = 3;
    j->procs = procs;
    j->nprocs = 2;
}

static void
t_register_host_details(void)
{
    struct msg m, d;

    make_register(&m);
    snprintf(m.u.reg.cpu_model, sizeof m.u.reg.cpu_model,
             "Intel(R) Xeon(R) CPU @ 2.20GHz");
    snprintf(m.u.reg.os, sizeof m.u.reg.os, "Debian GNU/Linux 13 (trixie)");
    snprintf(m.u.reg.kernel, sizeof m.u.reg.kernel, "Linux 6.12.0 x86_64");
    m.u.reg.started = 1764000000u;
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_STR(d.u.reg.cpu_model, m.u.reg.cpu_model);
        CHECK_EQ_STR(d.u.reg.os, m.u.reg.os);
        CHECK_EQ_STR(d.u.reg.kernel, m.u.reg.kernel);
        CHECK(d.u.reg.started == m.u.reg.started);
    }
    /* A control character in a description refuses the registration. */
    m.u.reg.os[3] = '\n';
    expect_encoded_reject(&m, "register with a newline in the os");
}

static void
t_job_report(void)
{
    struct job_info jobs[2];
    struct job_proc procs[2];
    struct msg m = {.type = MSG_JOB_REPORT}, d;

    make_job(&jobs[0], procs, 7);
    memset(&jobs[1], 0, sizeof jobs[1]);
    memset(jobs[1].job, 9, sizeof jobs[1].job);
    jobs[1].farm = 1;
    jobs[1].tasks_running = 2;
    jobs[1].tasks_queued = 10000;
    jobs[1].tasks_done = 41;
    snprintf(jobs[1].user, sizeof jobs[1].user, "bob");
    m.u.report.jobs = jobs;
    m.u.report.njobs = 2;
    m.u.report.more = 5;
    if (roundtrip(&m, &d) != 0)
        return;
    if (CHECK_EQ_INT(d.u.report.njobs, 2)) {
        const struct job_info *a = &d.u.report.jobs[0], *b =
                                                          &d.u.report.jobs[1];

        CHECK(memcmp(a->job, jobs[0].job, WIRE_JOB_ID_LEN) == 0);
        CHECK_EQ_STR(a->user, "alice");
        CHECK_EQ_STR(a->command, "ring");
        CHECK_EQ_INT(a->size, 2);
        CHECK_EQ_INT(a->nreplicas, 2);
        CHECK(a->started == jobs[0].started);
        if (CHECK_EQ_INT(a->nprocs, 2)) {
            CHECK_EQ_INT(a->procs[1].rank, 1);
            CHECK_EQ_INT(a->procs[1].replica, 1);
            CHECK_EQ_INT(a->procs[1].state, PROC_RUN_EXITED);
            CHECK_EQ_INT(a->procs[1].code, 3);
        }
        CHECK(b->farm);
        CHECK_EQ_INT(b->tasks_queued, 10000);
        CHECK_EQ_INT(b->tasks_done, 41);
        CHECK_EQ_INT(b->nprocs, 0);
    }
    CHECK_EQ_INT(d.u.report.more, 5);
    codec_msg_free(&d);
}

static void
t_reject_job_report(void)
{
    struct job_info jobs[WIRE_MAX_REPORT_JOBS + 1], one;
    struct job_proc procs[2], *many;
    struct msg m = {.type = MSG_JOB_REPORT};
    size_t i;

    make_job(&one, procs, 1);
    m.u.report.jobs = &one;
    m.u.report.njobs = 1;
    procs[1].replica = 2;
    expect_encoded_reject(&m, "report with a replica outside the job");
    make_job(&one, procs, 1);
    procs[0].rank = 2;
    expect_encoded_reject(&m, "report with a rank outside the job");
    make_job(&one, procs, 1);
    procs[0].state = (enum proc_run)42;
    expect_encoded_reject(&m, "report with an unknown process state");
    make_job(&one, procs, 1);
    snprintf(one.user, sizeof one.user, "al ice");
    expect_encoded_reject(&m, "report with a space in the user");
    make_job(&one, procs, 1);
    one.size = WIRE_MAX_RANKS + 1;
    expect_encoded_reject(&m, "report of a job beyond the rank limit");
    make_job(&one, procs, 1);
    one.nreplicas = 0;
    expect_encoded_reject(&m, "report of a job without replicas");

    for (i = 0; i < WIRE_MAX_REPORT_JOBS + 1; i++)
        make_job(&jobs[i], procs, (uint8_t)i);
    m.u.report.jobs = jobs;
    m.u.report.njobs = WIRE_MAX_REPORT_JOBS + 1;
    expect_encoded_reject(&m, "report of more jobs than the limit");

    /* More processes in all than a report may carry. */
    many = calloc(WIRE_MAX_REPORT_PROCS + 1, sizeof *many);
    if (!CHECK(many != NULL))
        return;
    make_job(&one, procs, 3);
    one.size = WIRE_MAX_REPORT_PROCS + 1;
    one.nreplicas = 1;
    for (i = 0; i <= WIRE_MAX_REPORT_PROCS; i++) {
        many[i].rank = (uint32_t)i;
        many[i].state = PROC_RUN_RUNNING;
    }
    one.procs = many;
    one.nprocs = WIRE_MAX_REPORT_PROCS + 1;
    m.u.report.jobs = &one;
    m.u.report.njobs = 1;
    expect_encoded_reject(&m, "report of more processes than the limit");
    free(many);
}

static void
t_list_jobs(void)
{
    struct job_info job;
    struct job_proc procs[2];
    struct msg m, d;

    memset(&m, 0, sizeof m);
    m.type = MSG_LIST_REQUEST;
    m.u.list_req.jobs = 1;
    if (roundtrip(&m, &d) == 0)
        CHECK_EQ_INT(d.u.list_req.jobs, 1);

    make_job(&job, procs, 4);
    snprintf(procs[0].host, sizeof procs[0].host, "ws3");
    procs[1].state = PROC_RUN_LOST;
    job.finished = 1;
    job.exit = 3;
    job.hosts = 2;
    memset(&m, 0, sizeof m);
    m.type = MSG_LIST_REPLY;
    m.u.list.jobs = &job;
    m.u.list.njobs = 1;
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_EQ_INT(d.u.list.npeers, 0);
    if (CHECK_EQ_INT(d.u.list.njobs, 1)) {
        CHECK(d.u.list.jobs[0].finished);
        CHECK_EQ_INT(d.u.list.jobs[0].exit, 3);
        CHECK_EQ_INT(d.u.list.jobs[0].hosts, 2);
        if (CHECK_EQ_INT(d.u.list.jobs[0].nprocs, 2)) {
            CHECK_EQ_STR(d.u.list.jobs[0].procs[0].host, "ws3");
            CHECK_EQ_INT(d.u.list.jobs[0].procs[1].state, PROC_RUN_LOST);
        }
    }
    codec_msg_free(&d);
    job.exit = 300;
    expect_encoded_reject(&m, "job view with an exit status above 255");
}

/* A coordinator's note on its farm: round trip, and counts that cannot
 * be (more failed than reported, more reported than read) refused. */
static void
t_job_note(void)
{
    struct msg m, d;
    uint8_t *buf;
    size_t len;
    char err[128];

    memset(&m, 0, sizeof m);
    m.type = MSG_JOB_NOTE;
    memset(m.u.jnote.job, 7, sizeof m.u.jnote.job);
    m.u.jnote.tasks_total = 10000;
    m.u.jnote.tasks_done = 40;
    m.u.jnote.tasks_failed = 2;
    if (!CHECK_EQ_INT(roundtrip(&m, &d), 0))
        return;
    CHECK_EQ_INT(d.type, MSG_JOB_NOTE);
    CHECK_MEM(d.u.jnote.job, m.u.jnote.job, sizeof m.u.jnote.job);
    CHECK_EQ_INT(d.u.jnote.tasks_total, 10000);
    CHECK_EQ_INT(d.u.jnote.tasks_done, 40);
    CHECK_EQ_INT(d.u.jnote.tasks_failed, 2);
    codec_msg_free(&d);

    m.u.jnote.tasks_failed = 41;
    if (CHECK_EQ_INT(codec_encode(&m, &buf, &len), 0)) {
        CHECK_EQ_INT(codec_decode(buf, len, &d, err, sizeof err), -1);
        free(buf);
    }
    m.u.jnote.tasks_failed = 0;
    m.u.jnote.tasks_done = 10001;
    if (CHECK_EQ_INT(codec_encode(&m, &buf, &len), 0)) {
        CHECK_EQ_INT(codec_decode(buf, len, &d, err, sizeof err), -1);
        free(buf);
    }
}

/* --- federation --------------------------------------------------------- */

static void
make_fed(struct msg *m, struct peer_entry *pe, size_t n)
{
    struct msg list;

    make_list(&list, pe, n);
    memset(m, 0, sizeof *m);
    m->type = MSG_FED_SUMMARY;
    memset(m->u.fed.instance, 0x5a, sizeof m->u.fed.instance);
    m->u.fed.seq = 77;
    m->u.fed.part = 1;
    m->u.fed.nparts = 3;
    m->u.fed.total_peers = 1234;
    m->u.fed.total_slots_free = 5000000000ull;
    snprintf(m->u.fed.addr, sizeof m->u.fed.addr, "10.1.2.3:9700");
    m->u.fed.npeers = n;
    m->u.fed.peers = pe;
}

static void
t_fed_summary(void)
{
    struct peer_entry pe[WIRE_FED_PART_ENTRIES];
    struct msg m, d;
    size_t i;

    make_fed(&m, pe, 4);
    if (roundtrip(&m, &d) != 0)
        return;
    CHECK_MEM(d.u.fed.instance, m.u.fed.instance, WIRE_FED_INSTANCE_LEN);
    CHECK(d.u.fed.seq == 77);
    CHECK_EQ_INT(d.u.fed.part, 1);
    CHECK_EQ_INT(d.u.fed.nparts, 3);
    CHECK_EQ_INT(d.u.fed.total_peers, 1234);
    CHECK(d.u.fed.total_slots_free == 5000000000ull);
    CHECK_EQ_STR(d.u.fed.addr, "10.1.2.3:9700");
    if (CHECK_EQ_INT(d.u.fed.npeers, 4))
        for (i = 0; i < 4; i++) {
            CHECK_MEM(d.u.fed.peers[i].id, pe[i].id, sizeof pe[i].id);
            CHECK_EQ_STR(d.u.fed.peers[i].addr, pe[i].addr);
            CHECK(res_equal(&d.u.fed.peers[i].res, &pe[i].res));
            CHECK(d.u.fed.peers[i].age_ms == pe[i].age_ms);
        }
    codec_msg_free(&d);
    CHECK(d.u.fed.peers == NULL);

    /* A full part fits a request frame. */
    make_fed(&m, pe, WIRE_FED_PART_ENTRIES);
    for (i = 0; i < WIRE_FED_PART_ENTRIES; i++) {
        memset(pe[i].addr, '9', WIRE_MAX_ADDR);
        pe[i].addr[WIRE_MAX_ADDR] = '\0';
        memset(pe[i].host_label, 'h', WIRE_MAX_LABEL);
        pe[i].host_label[WIRE_MAX_LABEL] = '\0';
        pe[i].res.mem_total = pe[i].res.mem_free = UINT64_MAX;
    }
    {
        uint8_t *buf;
        size_t len;

        if (CHECK_EQ_INT(codec_encode(&m, &buf, &len), 0)) {
            CHECK(len + 64 <= FRAME_MAX_REQUEST);
            free(buf);
        }
    }

    /* An empty summary (a supernode without peers) and no address. */
    make_fed(&m, NULL, 0);
    m.u.fed.part = 0;
    m.u.fed.nparts = 1;
    m.u.fed.addr[0] = '\0';
    if (roundtrip(&m, &d) == 0) {
        CHECK_EQ_INT(d.u.fed.npeers, 0);
        CHECK(d.u.fed.peers == NULL);
        CHECK_EQ_STR(d.u.fed.addr, "");
        codec_msg_free(&d);
    }
}

static void
t_reject_fed_summary(void)
{
    struct peer_entry pe[WIRE_FED_PART_ENTRIES + 1];
    struct msg m;

    make_fed(&m, pe, 2);
    m.u.fed.part = 3;
    expect_encoded_reject(&m, "part beyond nparts");
    make_fed(&m, pe, 2);
    m.u.fed.part = m.u.fed.nparts = 0;
    expect_encoded_reject(&m, "no parts");
    make_fed(&m, pe, 2);
    m.u.fed.part = 0;
    m.u.fed.nparts = WIRE_FED_MAX_PARTS + 1;
    expect_encoded_reject(&m, "too many parts");
    make_fed(&m, pe, WIRE_FED_PART_ENTRIES + 1);
    expect_encoded_reject(&m, "a part over its entries");
    make_fed(&m, pe, 2);
    pe[1].res.slots_free = pe[1].res.slots_total + 1;
    expect_encoded_reject(&m, "an entry with more slots free than total");
    make_fed(&m, pe, 2);
    snprintf(m.u.fed.addr, sizeof m.u.fed.addr, "a b");
    expect_encoded_reject(&m, "an address with a space");

    /* An instance id of the wrong length, written by hand. */
    {
        uint8_t inst[WIRE_FED_INSTANCE_LEN + 1] = {0};
        struct pbuf p = {.n = 0}, f = {.n = 0};

        pb_bytes(&f, 1, inst, sizeof inst);
        pb_uint(&f, 2, 1);
        pb_uint(&f, 4, 1);
        pb_sub(&p, 52, &f);
        expect_reject(p.b, p.n, "instance of 17 bytes");
        p.n = f.n = 0;
        pb_uint(&f, 2, 1);
        pb_uint(&f, 4, 1);
        pb_sub(&p, 52, &f);
        expect_reject(p.b, p.n, "no instance");
    }
}

static void
t_list_request_local(void)
{
    struct msg m, d;

    memset(&m, 0, sizeof m);
    m.type = MSG_LIST_REQUEST;
    m.u.list_req.local = 1;
    if (roundtrip(&m, &d) == 0)
        CHECK_EQ_INT(d.u.list_req.local, 1);
    m.u.list_req.local = 0;
    if (roundtrip(&m, &d) == 0)
        CHECK_EQ_INT(d.u.list_req.local, 0);
}

static const struct test_case cases[] = {
    {"launch with empty arguments", t_launch_empty_argument},
    {"worker task", t_worker_task},
    {"register", t_register},
    {"register_max_lengths", t_register_max_lengths},
    {"register_ack", t_register_ack},
    {"heartbeat", t_heartbeat},
    {"empty_bodies", t_empty_bodies},
    {"ping_pong", t_ping_pong},
    {"list_reply", t_list_reply},
    {"list_reply_empty", t_list_reply_empty},
    {"list_reply_many", t_list_reply_many},
    {"error", t_error},
    {"encode_invalid_type", t_encode_invalid_type},
    {"handmade_register_ok", t_handmade_register_ok},
    {"reject_key_lengths", t_reject_key_lengths},
    {"reject_signature_lengths", t_reject_signature_lengths},
    {"reject_labels", t_reject_labels},
    {"reject_encoded_labels", t_reject_encoded_labels},
    {"reject_resources", t_reject_resources},
    {"reject_missing_resources", t_reject_missing_resources},
    {"reject_list_entries", t_reject_list_entries},
    {"reject_error_text", t_reject_error_text},
    {"reject_no_body", t_reject_no_body},
    {"reject_garbage", t_reject_garbage},
    {"truncations", t_truncations},
    {"two_bodies", t_two_bodies},
    {"valid_token", t_valid_token},
    {"names", t_names},
    {"free_null", t_free_null},
    {"view", t_view},
    {"suspect", t_suspect},
    {"proc_exit", t_proc_exit},
    {"retired_fields", t_retired_fields},
    {"reject_view", t_reject_view},
    {"reject_view_count", t_reject_view_count},
    {"reject_suspect", t_reject_suspect},
    {"output_hold_and_progress", t_output_hold_and_progress},
    {"node_proof", t_node_proof},
    {"register_host_details", t_register_host_details},
    {"job_report", t_job_report},
    {"reject_job_report", t_reject_job_report},
    {"list_jobs", t_list_jobs},
    {"job_note", t_job_note},
    {"fed_summary", t_fed_summary},
    {"reject_fed_summary", t_reject_fed_summary},
    {"list_request_local", t_list_request_local},
};

TEST_MAIN(cases)
