/*
 * The bytes between the processes of an MPI job (mpjrun/mpi/wireframe.c),
 * without sockets: plain and sealed frames round-trip whole and cut at
 * every byte; every malformed header, length and kind is refused with a
 * reason; the handshake completes with matching keys between honest
 * ends, and a message tampered, truncated, replayed from another
 * handshake, reflected or made with another key is refused.
 */
#include <stdint.h>
#include <string.h>

#include "sec.h"
#include "test.h"
#include "wireframe.h"

static uint8_t key[SEC_KEY_LEN], other_key[SEC_KEY_LEN];
/* The frames' AEAD under key and other_key. */
static struct aead *seal_key, *seal_other;

static void
keys_init(void)
{
    static int done;

    if (done)
        return;
    if (sec_init() == -1)
        test_fail(__FILE__, __LINE__, "sec_init failed");
    memset(key, 0x5a, sizeof key);
    memcpy(other_key, key, sizeof other_key);
    other_key[0] ^= 0x80;
    if ((seal_key = aead_new(WF_CIPHER, key)) == NULL ||
        (seal_other = aead_new(WF_CIPHER, other_key)) == NULL)
        test_fail(__FILE__, __LINE__, "aead_new failed");
    done = 1;
}

static struct wire_hdr
hdr(int type, uint64_t seq, uint64_t len, uint64_t total)
{
    struct wire_hdr h;

    memset(&h, 0, sizeof h);
    h.type = (uint8_t)type;
    h.ctx = 7;
    h.src = 1;
    h.dst = 2;
    h.tag = 99;
    h.seq = seq;
    h.len = len;
    h.total = total;
    h.sid = 11;
    h.rid = 12;
    return h;
}

/* --- frames --- */

static void
t_plain_round_trip(void)
{
    uint8_t buf[WF_HDR_LEN + 100];
    struct wire_hdr h = hdr(FR_EAGER, 3, 100, 100), got;
    const char *why = NULL;
    size_t cut;

    memcpy(buf, &h, WF_HDR_LEN);
    memset(buf + WF_HDR_LEN, 0xab, 100);
    CHECK_EQ_INT(wf_plain_next(buf, sizeof buf, &got, &why), WF_FRAME);
    CHECK_MEM(&got, &h, WF_HDR_LEN);
    CHECK(wf_frame_check(&got, 3, 1) == NULL);
    /* Cut anywhere before its end, an eager frame waits for the rest. */
    for (cut = 0; cut < sizeof buf; cut++)
        CHECK_EQ_INT(wf_plain_next(buf, cut, &got, &why), WF_MORE);
    /* A rendezvous payload is read in place: its header is enough. */
    h = hdr(FR_DATA, 4, 1 << 20, 0);
    memcpy(buf, &h, WF_HDR_LEN);
    CHECK_EQ_INT(wf_plain_next(buf, WF_HDR_LEN, &got, &why), WF_FRAME);
    CHECK(got.len == 1 << 20);
}

/* A ring's short frame: 16 bytes of header stand for the eager header
 * (context, source, tag, length; the sequence number the connection
 * expects), plain frames pass between them, a cut one waits and a
 * length beyond the eager limit is refused. */
static void
t_shm_short(void)
{
    uint8_t buf[WF_SHM_HDR_LEN + 5 + WF_HDR_LEN + 3];
    struct wire_hdr h = hdr(FR_EAGER, 0, 5, 5), p = hdr(FR_EAGER, 9, 3, 3),
                    got;
    const char *why = NULL;
    size_t hlen = 0, cut;

    h.dst = 0;
    h.sid = h.rid = 0;
    wf_shm_put(buf, &h);
    CHECK_EQ_INT(buf[0], FR_SHM_EAGER);
    memcpy(buf + WF_SHM_HDR_LEN, "hello", 5);
    memcpy(buf + WF_SHM_HDR_LEN + 5, &p, WF_HDR_LEN);
    memcpy(buf + WF_SHM_HDR_LEN + 5 + WF_HDR_LEN, "abc", 3);
    CHECK_EQ_INT(wf_shm_next(buf, sizeof buf, &got, &hlen, 8, &why),
                 WF_FRAME);
    CHECK_EQ_INT((int)hlen, WF_SHM_HDR_LEN);
    h.seq = 8;
    CHECK_MEM(&got, &h, WF_HDR_LEN);
    CHECK(wf_frame_check(&got, 8, 1) == NULL);
    /* The plain frame after it. */
    CHECK_EQ_INT(wf_shm_next(buf + WF_SHM_HDR_LEN + 5,
                             sizeof buf - WF_SHM_HDR_LEN - 5, &got, &hlen, 9,
                             &why),
                 WF_FRAME);
    CHECK_EQ_INT((int)hlen, WF_HDR_LEN);
    CHECK_MEM(&got, &p, WF_HDR_LEN);
    for (cut = 0; cut < WF_SHM_HDR_LEN + 5; cut++)
        CHECK_EQ_INT(wf_shm_next(buf, cut, &got, &hlen, 8, &why), WF_MORE);
    /* 24 bits of length, but never more than an eager message. */
    h.len = WF_EAGER_MAX + 1;
    wf_shm_put(buf, &h);
    why = NULL;
    CHECK_EQ_INT(wf_shm_next(buf, sizeof buf, &got, &hlen, 8, &why), WF_BAD);
    CHECK_CONTAINS(why, "too long");
    h.len = WF_EAGER_MAX;
    wf_shm_put(buf, &h);
    CHECK_EQ_INT(wf_shm_next(buf, sizeof buf, &got, &hlen, 8, &why), WF_MORE);
}

static void
t_plain_too_long(void)
{
    uint8_t buf[WF_HDR_LEN];
    struct wire_hdr h = hdr(FR_EAGER, 0, WF_EAGER_MAX + 1, WF_EAGER_MAX + 1),
                    got;
    const char *why = NULL;

    memcpy(buf, &h, WF_HDR_LEN);
    CHECK_EQ_INT(wf_plain_next(buf, sizeof buf, &got, &why), WF_BAD);
    CHECK_CONTAINS(why, "longer than");
    /* Any kind but DATA: a huge length is never waited for. */
    h = hdr(FR_RTS, 0, UINT64_MAX, 0);
    memcpy(buf, &h, WF_HDR_LEN);
    why = NULL;
    CHECK_EQ_INT(wf_plain_next(buf, sizeof buf, &got, &why), WF_BAD);
    CHECK(why != NULL);
}

static void
t_sealed_round_trip(void)
{
    static uint8_t frame[WF_SEALED_LEN(WF_SEAL_CHUNK)];
    static uint8_t payload[WF_SEAL_CHUNK], out[WF_SEAL_CHUNK];
    struct wire_hdr h = hdr(FR_EAGER, 5, 1000, 1000), got;
    const char *why = NULL;
    size_t n, used = 0, cut, i;

    keys_init();
    for (i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7 + 3);
    n = wf_seal(frame, &h, payload, 42, seal_key);
    CHECK_EQ_INT((long long)n, (long long)WF_SEALED_LEN(1000));
    CHECK_EQ_INT(wf_sealed_next(frame, n, &got, &used, &why), WF_FRAME);
    CHECK_EQ_INT((long long)used, (long long)n);
    CHECK_MEM(&got, &h, WF_HDR_LEN);
    CHECK_EQ_INT(wf_open(out, frame + 4, got.len, 42, seal_key), 0);
    CHECK_MEM(out, payload, 1000);
    for (cut = 0; cut < n; cut++)
        CHECK_EQ_INT(wf_sealed_next(frame, cut, &got, &used, &why), WF_MORE);
    /* Two frames back to back: the first is taken, then the second. */
    h = hdr(FR_RTS, 6, 0, 1 << 20);
    CHECK_EQ_INT((long long)wf_seal(frame + n, &h, NULL, 43, seal_key),
                 (long long)WF_SEALED_LEN(0));
    CHECK_EQ_INT(wf_sealed_next(frame, n + WF_SEALED_LEN(0), &got, &used,
                                &why),
                 WF_FRAME);
    CHECK_EQ_INT((long long)used, (long long)n);
    CHECK_EQ_INT(wf_sealed_next(frame + n, WF_SEALED_LEN(0), &got, &used,
                                &why),
                 WF_FRAME);
    CHECK_EQ_INT(wf_open(out, frame + n + 4, got.len, 43, seal_key), 0);
    CHECK(wf_frame_check(&got, 6, 1) == NULL);
    /* The largest frame there is. */
    h = hdr(FR_DATA, 7, WF_SEAL_CHUNK, 0);
    n = wf_seal(frame, &h, payload, 44, seal_key);
    CHECK_EQ_INT(wf_sealed_next(frame, n, &got, &used, &why), WF_FRAME);
    CHECK_EQ_INT(wf_open(out, frame + 4, got.len, 44, seal_key), 0);
    CHECK_MEM(out, payload, WF_SEAL_CHUNK);
}

static void
t_sealed_refused(void)
{
    uint8_t frame[WF_SEALED_LEN(64)], out[64], payload[64];
    struct wire_hdr h = hdr(FR_EAGER, 0, 64, 64), got;
    const char *why;
    uint32_t flen;
    size_t n, used, i;

    keys_init();
    memset(payload, 0x33, sizeof payload);
    n = wf_seal(frame, &h, payload, 9, seal_key);
    /* Length prefix: too short for a header and a tag, or too long. */
    flen = (uint32_t)(WF_HDR_LEN + SEC_TAG_LEN - 1);
    memcpy(frame, &flen, 4);
    why = NULL;
    CHECK_EQ_INT(wf_sealed_next(frame, n, &got, &used, &why), WF_BAD);
    CHECK_CONTAINS(why, "out of bounds");
    flen = (uint32_t)(WF_SEAL_MAX + 1);
    memcpy(frame, &flen, 4);
    why = NULL;
    /* Refused from its prefix alone, before the rest arrives. */
    CHECK_EQ_INT(wf_sealed_next(frame, 4, &got, &used, &why), WF_BAD);
    CHECK_CONTAINS(why, "out of bounds");
    /* A prefix and a header that disagree. */
    flen = (uint32_t)(n - 4 - 1);
    memcpy(frame, &flen, 4);
    why = NULL;
    CHECK_EQ_INT(wf_sealed_next(frame, n, &got, &used, &why), WF_BAD);
    CHECK_CONTAINS(why, "disagrees");
    n = wf_seal(frame, &h, payload, 9, seal_key);
    /* Any byte of header or payload changed: it does not open. */
    for (i = 4; i < n; i++) {
        frame[i] ^= 0x01;
        CHECK_EQ_INT(wf_open(out, frame + 4, 64, 9, seal_key), -1);
        frame[i] ^= 0x01;
    }
    CHECK_EQ_INT(wf_open(out, frame + 4, 64, 9, seal_key), 0);
    /* Replayed or reordered (another counter), or another key. */
    CHECK_EQ_INT(wf_open(out, frame + 4, 64, 10, seal_key), -1);
    CHECK_EQ_INT(wf_open(out, frame + 4, 64, 8, seal_key), -1);
    CHECK_EQ_INT(wf_open(out, frame + 4, 64, 9, seal_other), -1);
    /* What did not verify is not left in the receiver's memory. */
    for (i = 0; i < sizeof out; i++)
        CHECK_EQ_INT(out[i], 0);
}

static void
t_frame_kinds(void)
{
    struct wire_hdr h;
    const char *why;

    /* Every kind that may be empty, without replicas and with. */
    h = hdr(FR_RTS, 0, 0, 5);
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h.type = FR_FIN;
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h.type = FR_CTS;
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h.type = FR_ACK;
    CHECK(wf_frame_check(&h, 0, 2) == NULL);
    h.type = FR_TAKEOVER;
    CHECK(wf_frame_check(&h, 0, 2) == NULL);
    h.type = FR_DECIDE_ACK;
    CHECK(wf_frame_check(&h, 0, 2) == NULL);
    h = hdr(FR_DECIDE, 0, WF_EAGER_MAX, 0);
    CHECK(wf_frame_check(&h, 0, 2) == NULL);
    h = hdr(FR_CANCEL, 0, 0, 7); /* the message whose first frame was 7 */
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h.type = FR_CANCELLED;
    h.flags = WF_CANCEL_DONE;
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h = hdr(FR_DATA, 0, 1u << 30, 0);
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h = hdr(FR_EAGER, 0, WF_EAGER_MAX, WF_EAGER_MAX);
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    /* A single-copy announcement: an RTS with the sender's address. */
    h = hdr(FR_RTS, 0, WF_CMA_LEN, 1 << 20);
    h.flags = WF_RTS_CMA;
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    CHECK(wf_frame_check(&h, 0, 2) == NULL);
    h = hdr(FR_CTS, 0, 0, 0);
    h.flags = WF_CTS_DONE;
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h = hdr(FR_CTS, 0, WF_SPLIT_LEN, 0);
    h.flags = WF_CTS_SPLIT;
    CHECK(wf_frame_check(&h, 0, 1) == NULL);
    h = hdr(FR_DATA, 0, 0, 1 << 19);
    h.flags = WF_DATA_WRITTEN;
    CHECK(wf_frame_check(&h, 0, 1) == NULL);

    /* Refused, each with its reason. */
    h = hdr(FR_RTS, 0, 0, 1 << 20);
    h.flags = WF_RTS_CMA;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "single-copy");
    h.len = WF_CMA_LEN + 1;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "single-copy");
    h.flags = 0;
    h.len = WF_CMA_LEN; /* an address, but not announced as one */
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "payload");
    h = hdr(FR_CTS, 0, WF_SPLIT_LEN - 1, 0);
    h.flags = WF_CTS_SPLIT;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "split");
    h.flags = 0;
    h.len = WF_SPLIT_LEN; /* a split's payload, not flagged */
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "payload");
    h = hdr(FR_DATA, 0, 1, 0);
    h.flags = WF_DATA_WRITTEN;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "written");
    h = hdr(FR_EAGER, 1, 0, 0);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "sequence");
    CHECK_CONTAINS(wf_frame_check(&h, 2, 1), "sequence");
    h = hdr(FR_EAGER, 0, 10, 11);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "message size");
    h = hdr(FR_EAGER, 0, WF_EAGER_MAX + 1, WF_EAGER_MAX + 1);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "too long");
    h = hdr(FR_RTS, 0, 1, 5);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "payload");
    h.type = FR_FIN;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "payload");
    h.type = FR_CTS;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "payload");
    h.type = FR_ACK;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 2), "payload");
    h.type = FR_DECIDE_ACK;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 2), "payload");
    h = hdr(FR_DECIDE, 0, WF_EAGER_MAX + 1, 0);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 2), "too long");
    h = hdr(FR_CANCEL, 0, 1, 7);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "payload");
    h.type = FR_CANCELLED;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "payload");
    /* Cancelling is agreed by nobody under replication: refused. */
    h = hdr(FR_CANCEL, 0, 0, 7);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 2), "with replicas");
    h.type = FR_CANCELLED;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 2), "with replicas");
    /* The replication protocol's kinds in a job without replicas. */
    h = hdr(FR_ACK, 0, 0, 0);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "without replicas");
    h.type = FR_TAKEOVER;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "without replicas");
    h.type = FR_DECIDE;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "without replicas");
    h.type = FR_DECIDE_ACK;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "without replicas");
    /* Kinds that do not exist. */
    h = hdr(0, 0, 0, 0);
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "unknown");
    h.type = FR_CANCELLED + 1;
    CHECK_CONTAINS(wf_frame_check(&h, 0, 1), "unknown");
    h.type = 255;
    why = wf_frame_check(&h, 0, 2);
    CHECK_CONTAINS(why, "unknown");
}

/* --- handshake --- */

/* Both ends of one handshake: connector 1 (rank 0 replica 1 of 2) to
 * acceptor 4, in a job of 3 ranks with 2 replicas, sealed. */
struct pair {
    struct wf_hs con, acc;
    struct wf_rules rules;
    uint8_t hello[WF_HELLO_LEN], proof[WF_PROOF_LEN],
        confirm[WF_CONFIRM_LEN];
};

static void
pair_init(struct pair *p, const uint8_t *ckey, const uint8_t *akey)
{
    struct wf_hello h;

    keys_init();
    memset(p, 0, sizeof *p);
    p->rules.nproc = 6;
    p->rules.me = 4;
    p->rules.nrep = 2;
    p->rules.sealed = 1;
    p->con.key = ckey;
    p->con.connector = 1;
    p->con.acceptor = 4;
    p->con.sealed = 1;
    sec_random(p->con.nonce_c, WF_NONCE_LEN);
    h.world = 1;
    h.replica = 1;
    h.flags = 1;
    memcpy(h.nonce, p->con.nonce_c, WF_NONCE_LEN);
    wf_hello_build(p->hello, &h);
    p->acc.key = akey;
    p->acc.acceptor = 4;
    p->acc.sealed = 1;
}

/* The acceptor takes the hello and answers with its proof. */
static const char *
pair_accept(struct pair *p)
{
    struct wf_hello h;
    const char *why = wf_hello_check(p->hello, &p->rules, &h);

    if (why != NULL)
        return why;
    p->acc.connector = h.world;
    memcpy(p->acc.nonce_c, h.nonce, WF_NONCE_LEN);
    sec_random(p->acc.nonce_a, WF_NONCE_LEN);
    wf_proof_build(p->proof, &p->acc);
    return NULL;
}

static void
t_handshake_honest(void)
{
    struct pair p;
    uint8_t ctx[SEC_KEY_LEN], crx[SEC_KEY_LEN], atx[SEC_KEY_LEN],
        arx[SEC_KEY_LEN];

    pair_init(&p, key, key);
    CHECK(pair_accept(&p) == NULL);
    CHECK(wf_proof_check(&p.con, p.proof) == NULL);
    CHECK_MEM(p.con.nonce_a, p.acc.nonce_a, WF_NONCE_LEN);
    wf_confirm_build(p.confirm, &p.con);
    CHECK(wf_confirm_check(&p.acc, p.confirm) == NULL);
    wf_keys(&p.con, 1, ctx, crx);
    wf_keys(&p.acc, 0, atx, arx);
    CHECK_MEM(ctx, arx, SEC_KEY_LEN);
    CHECK_MEM(crx, atx, SEC_KEY_LEN);
    CHECK(memcmp(ctx, crx, SEC_KEY_LEN) != 0);
    /* Without replicas, on demand: a higher rank may connect too. */
    pair_init(&p, key, key);
    p.rules.nrep = 1;
    p.rules.nproc = 3;
    p.rules.me = 0;
    p.rules.ondemand = 1;
    {
        struct wf_hello h = {.world = 2, .replica = 0, .flags = 1};

        wf_hello_build(p.hello, &h);
    }
    CHECK(pair_accept(&p) == NULL);
    CHECK_EQ_INT((int)p.acc.connector, 2);
}

static void
t_hello_refused(void)
{
    struct pair p;
    struct wf_hello h = {.world = 1, .replica = 1, .flags = 1};
    uint32_t magic;

    pair_init(&p, key, key);
    magic = WF_MAGIC ^ 1;
    memcpy(p.hello, &magic, 4);
    CHECK_CONTAINS(pair_accept(&p), "version");
    /* The previous version (P2M4: libsodium's ChaCha20-Poly1305 frames)
     * is named, so that a mixed job says what is wrong. */
    pair_init(&p, key, key);
    magic = 0x4d345032u;
    memcpy(p.hello, &magic, 4);
    CHECK_CONTAINS(pair_accept(&p), "older libp2pmpi (P2M4");
    pair_init(&p, key, key);
    magic = 0x4d355032u; /* P2M5: before the cancel frames */
    memcpy(p.hello, &magic, 4);
    CHECK_CONTAINS(pair_accept(&p), "older libp2pmpi (P2M5");
    h.world = 6; /* beyond the job */
    h.replica = 0;
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "unknown process");
    h.world = 4; /* ourselves */
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "unknown process");
    h.world = 5; /* higher: with replicas we connect to it */
    h.replica = 1;
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "should wait");
    h.world = 1; /* replica 0 claimed by process 1, replica 1 */
    h.replica = 0;
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "replica");
    h.replica = 1;
    h.flags = 0; /* plain, in a sealed job */
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "sealing");
    /* Without replicas a replica other than 0 is refused. */
    p.rules.nrep = 1;
    p.rules.nproc = 6;
    h.world = 1;
    h.replica = 1;
    h.flags = 1;
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "replica");
}

/* Shared memory: the offer passes the hello check, unknown flags do not,
 * and both ends of a handshake name the same segment, which another
 * handshake or another key does not. */
static void
t_shm_offer(void)
{
    struct pair p, q;
    struct wf_hello h = {.world = 1, .replica = 1,
                         .flags = WF_HELLO_SEALED | WF_HELLO_SHM};
    char cn[33], an[33], other[33];
    struct wf_hs wrong;
    int i;

    pair_init(&p, key, key);
    memcpy(h.nonce, p.con.nonce_c, WF_NONCE_LEN);
    wf_hello_build(p.hello, &h);
    CHECK(pair_accept(&p) == NULL);
    CHECK(wf_proof_check(&p.con, p.proof) == NULL);
    wf_shm_name(&p.con, cn);
    wf_shm_name(&p.acc, an);
    CHECK_EQ_STR(cn, an);
    CHECK_EQ_INT((int)strlen(cn), 32);
    for (i = 0; i < 32; i++)
        CHECK((cn[i] >= '0' && cn[i] <= '9') || (cn[i] >= 'a' && cn[i] <= 'f'));
    pair_init(&q, key, key);
    CHECK(pair_accept(&q) == NULL);
    wf_shm_name(&q.acc, other);
    CHECK(strcmp(cn, other) != 0);
    wrong = p.acc;
    wrong.key = other_key;
    wf_shm_name(&wrong, other);
    CHECK(strcmp(cn, other) != 0);
    /* Offering does not change the sealing rule; other bits are refused. */
    h.flags = WF_HELLO_SHM;
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "sealing");
    h.flags = WF_HELLO_SEALED | 4;
    wf_hello_build(p.hello, &h);
    CHECK_CONTAINS(pair_accept(&p), "unknown flags");
}

static void
t_proof_refused(void)
{
    struct pair p, q;
    uint8_t truncated[WF_PROOF_LEN];
    size_t i;

    /* Tampered: any byte of the proof. */
    pair_init(&p, key, key);
    CHECK(pair_accept(&p) == NULL);
    for (i = 0; i < WF_PROOF_LEN; i++) {
        p.proof[i] ^= 0x10;
        CHECK_CONTAINS(wf_proof_check(&p.con, p.proof), "does not verify");
        p.proof[i] ^= 0x10;
    }
    CHECK(wf_proof_check(&p.con, p.proof) == NULL);
    /* Truncated: its last byte missing, what follows read in its place. */
    memcpy(truncated, p.proof, WF_PROOF_LEN - 1);
    truncated[WF_PROOF_LEN - 1] = (uint8_t)~p.proof[WF_PROOF_LEN - 1];
    CHECK(wf_proof_check(&p.con, truncated) != NULL);
    /* Another key. */
    pair_init(&p, key, other_key);
    CHECK(pair_accept(&p) == NULL);
    CHECK_CONTAINS(wf_proof_check(&p.con, p.proof), "does not verify");
    /* Replayed: a proof from an earlier handshake (other nonce_c). */
    pair_init(&p, key, key);
    CHECK(pair_accept(&p) == NULL);
    pair_init(&q, key, key);
    CHECK(pair_accept(&q) == NULL);
    CHECK(wf_proof_check(&q.con, p.proof) != NULL);
    /* Made for another connector, or for the other sealing. */
    pair_init(&p, key, key);
    CHECK(pair_accept(&p) == NULL);
    p.con.connector = 3;
    CHECK(wf_proof_check(&p.con, p.proof) != NULL);
    p.con.connector = 1;
    p.con.sealed = 0;
    CHECK(wf_proof_check(&p.con, p.proof) != NULL);
}

static void
t_confirm_refused(void)
{
    struct pair p, q;
    size_t i;

    pair_init(&p, key, key);
    CHECK(pair_accept(&p) == NULL);
    CHECK(wf_proof_check(&p.con, p.proof) == NULL);
    wf_confirm_build(p.confirm, &p.con);
    for (i = 0; i < WF_CONFIRM_LEN; i++) {
        p.confirm[i] ^= 0x04;
        CHECK_CONTAINS(wf_confirm_check(&p.acc, p.confirm),
                       "does not verify");
        p.confirm[i] ^= 0x04;
    }
    CHECK(wf_confirm_check(&p.acc, p.confirm) == NULL);
    /* Reflected: the acceptor's own MAC sent back. */
    CHECK(wf_confirm_check(&p.acc, p.proof + WF_NONCE_LEN) != NULL);
    /* Replayed into a later handshake with the same connector nonce
     * (other nonce_a). */
    q = p;
    sec_random(q.acc.nonce_a, WF_NONCE_LEN);
    CHECK(wf_confirm_check(&q.acc, p.confirm) != NULL);
    /* A connector with another key: the acceptor's proof already fails
     * there, and a confirmation it makes anyway is refused too. */
    pair_init(&p, other_key, key);
    CHECK(pair_accept(&p) == NULL);
    CHECK(wf_proof_check(&p.con, p.proof) != NULL);
    wf_confirm_build(p.confirm, &p.con);
    CHECK_CONTAINS(wf_confirm_check(&p.acc, p.confirm), "does not verify");
}

static const struct test_case cases[] = {
    {"plain_round_trip", t_plain_round_trip},
    {"plain_too_long", t_plain_too_long},
    {"shm_short", t_shm_short},
    {"sealed_round_trip", t_sealed_round_trip},
    {"sealed_refused", t_sealed_refused},
    {"frame_kinds", t_frame_kinds},
    {"handshake_honest", t_handshake_honest},
    {"hello_refused", t_hello_refused},
    {"shm_offer", t_shm_offer},
    {"proof_refused", t_proof_refused},
    {"confirm_refused", t_confirm_refused},
};

TEST_MAIN(cases)
