/*
 * Frames and handshake messages between the processes of a job, as
 * bytes (wireframe.h).  No sockets, no global state.
 */
#include <string.h>

#include "wireframe.h"

/* The previous frame versions' hellos, recognised to say why they are
 * refused. */
#define WF_MAGIC_P2M4 0x4d345032u
#define WF_MAGIC_P2M5 0x4d355032u

_Static_assert(WF_SEAL_MAX <= UINT32_MAX, "sealed frame length is a u32");
_Static_assert(AEAD_TAG_LEN == SEC_TAG_LEN, "sealed frame tag");
_Static_assert(AEAD_KEY_LEN == SEC_KEY_LEN, "direction keys feed the AEAD");

const char *
wf_frame_check(const struct wire_hdr *h, uint64_t want_seq, int nrep)
{
    if (h->seq != want_seq)
        return "frame out of sequence";
    switch (h->type) {
    case FR_EAGER:
        if (h->len != h->total)
            return "eager frame length is not its message size";
        if (h->len > WF_EAGER_MAX)
            return "eager frame too long";
        return NULL;
    case FR_ACK:
    case FR_TAKEOVER:
        if (nrep == 1)
            return "replication frame in a job without replicas";
        /* fall through */
    case FR_RTS:
        if ((h->flags & WF_RTS_CMA) != 0)
            return h->len != WF_CMA_LEN ? "single-copy announcement of the "
                                          "wrong length"
                                        : NULL;
        /* fall through */
    case FR_FIN:
        return h->len != 0 ? "control frame with a payload" : NULL;
    case FR_CTS:
        if ((h->flags & WF_CTS_SPLIT) != 0)
            return h->len != WF_SPLIT_LEN ? "split clear-to-send of the "
                                            "wrong length"
                                          : NULL;
        return h->len != 0 ? "control frame with a payload" : NULL;
    case FR_DATA:
        if ((h->flags & WF_DATA_WRITTEN) != 0 && h->len != 0)
            return "written-data notice with a payload";
        return NULL;
    case FR_DECIDE:
    case FR_DECIDE_ACK:
        if (nrep == 1)
            return "replication frame in a job without replicas";
        if (h->len > WF_EAGER_MAX)
            return "decision frame too long";
        if (h->type == FR_DECIDE_ACK && h->len != 0)
            return "control frame with a payload";
        return NULL;
    case FR_CANCEL:
    case FR_CANCELLED:
        if (nrep != 1)
            return "cancel frame in a job with replicas";
        return h->len != 0 ? "control frame with a payload" : NULL;
    default:
        return "unknown frame kind";
    }
}

enum wf_next
wf_plain_next(const uint8_t *buf, size_t avail, struct wire_hdr *h,
              const char **why)
{
    if (avail < WF_HDR_LEN)
        return WF_MORE;
    memcpy(h, buf, WF_HDR_LEN);
    if (h->type != FR_DATA && h->len > avail - WF_HDR_LEN) {
        if (h->len > WF_EAGER_MAX) {
            *why = "frame longer than the receive buffer";
            return WF_BAD;
        }
        return WF_MORE; /* the rest of an eager message */
    }
    return WF_FRAME;
}

void
wf_shm_put(uint8_t out[WF_SHM_HDR_LEN], const struct wire_hdr *h)
{
    out[0] = FR_SHM_EAGER;
    wf_shm_put_rest(out, h);
}

void
wf_shm_put_rest(uint8_t out[WF_SHM_HDR_LEN], const struct wire_hdr *h)
{
    uint32_t len = (uint32_t)h->len;

    out[1] = (uint8_t)len;
    out[2] = (uint8_t)(len >> 8);
    out[3] = (uint8_t)(len >> 16);
    memcpy(out + 4, &h->ctx, 4);
    memcpy(out + 8, &h->src, 4);
    memcpy(out + 12, &h->tag, 4);
}

size_t
wf_shm_size(const uint8_t *hdr)
{
    return WF_SHM_HDR_LEN +
           ((size_t)hdr[1] | (size_t)hdr[2] << 8 | (size_t)hdr[3] << 16);
}

enum wf_next
wf_shm_next(const uint8_t *buf, size_t avail, struct wire_hdr *h,
            size_t *hlen, uint64_t seq, const char **why)
{
    size_t len;

    if (avail == 0)
        return WF_MORE;
    if (buf[0] != FR_SHM_EAGER) {
        *hlen = WF_HDR_LEN;
        return wf_plain_next(buf, avail, h, why);
    }
    if (avail < WF_SHM_HDR_LEN)
        return WF_MORE;
    len = (size_t)buf[1] | (size_t)buf[2] << 8 | (size_t)buf[3] << 16;
    if (len > WF_EAGER_MAX) {
        *why = "short frame too long";
        return WF_BAD;
    }
    if (len > avail - WF_SHM_HDR_LEN)
        return WF_MORE;
    memset(h, 0, sizeof *h);
    h->type = FR_EAGER;
    h->len = h->total = len;
    memcpy(&h->ctx, buf + 4, 4);
    memcpy(&h->src, buf + 8, 4);
    memcpy(&h->tag, buf + 12, 4);
    h->seq = seq;
    *hlen = WF_SHM_HDR_LEN;
    return WF_FRAME;
}

enum wf_next
wf_sealed_next(const uint8_t *buf, size_t avail, struct wire_hdr *h,
               size_t *used, const char **why)
{
    uint32_t flen;

    if (avail < 4)
        return WF_MORE;
    memcpy(&flen, buf, 4);
    if (flen < WF_HDR_LEN + SEC_TAG_LEN || flen > WF_SEAL_MAX) {
        *why = "sealed frame length out of bounds";
        return WF_BAD;
    }
    if (avail - 4 < (size_t)flen)
        return WF_MORE;
    memcpy(h, buf + 4, WF_HDR_LEN);
    if (h->len != flen - WF_HDR_LEN - SEC_TAG_LEN) {
        *why = "sealed frame length disagrees with its header";
        return WF_BAD;
    }
    *used = 4 + (size_t)flen;
    return WF_FRAME;
}

size_t
wf_seal(uint8_t *out, const struct wire_hdr *h, const void *payload,
        uint64_t counter, struct aead *a)
{
    uint32_t flen = (uint32_t)(WF_HDR_LEN + h->len + SEC_TAG_LEN);
    uint8_t nonce[AEAD_NONCE_LEN];

    memcpy(out, &flen, 4);
    memcpy(out + 4, h, WF_HDR_LEN);
    aead_nonce(nonce, counter);
    if (aead_seal(a, out + 4 + WF_HDR_LEN, payload, (size_t)h->len, out + 4,
                  WF_HDR_LEN, nonce) == -1)
        return 0;
    return 4 + (size_t)flen;
}

int
wf_open(uint8_t *out, const uint8_t *frame, uint64_t len, uint64_t counter,
        struct aead *a)
{
    uint8_t nonce[AEAD_NONCE_LEN];

    aead_nonce(nonce, counter);
    return aead_open(a, out, frame + WF_HDR_LEN, (size_t)len + SEC_TAG_LEN,
                     frame, WF_HDR_LEN, nonce);
}

/* --- handshake -------------------------------------------------------- */

void
wf_hello_build(uint8_t out[WF_HELLO_LEN], const struct wf_hello *h)
{
    uint32_t v[4] = {WF_MAGIC, h->world, h->replica, h->flags};

    memcpy(out, v, sizeof v);
    memcpy(out + sizeof v, h->nonce, WF_NONCE_LEN);
}

const char *
wf_hello_check(const uint8_t in[WF_HELLO_LEN], const struct wf_rules *r,
               struct wf_hello *out)
{
    uint32_t v[4];

    memcpy(v, in, sizeof v);
    if (v[0] == WF_MAGIC_P2M4)
        return "hello from an older libp2pmpi (P2M4, ChaCha20-Poly1305 "
               "frames): every process of a job must link the same version";
    if (v[0] == WF_MAGIC_P2M5)
        return "hello from an older libp2pmpi (P2M5, no cancel frames): "
               "every process of a job must link the same version";
    if (v[0] != WF_MAGIC)
        return "not a hello of this version";
    if (v[1] >= r->nproc || v[1] == r->me)
        return "hello from an unknown process";
    /* With replicas only a lower process index connects to us, once; on
     * demand (R = 1) any other rank may. */
    if (!r->ondemand && v[1] >= r->me)
        return "hello from a process that should wait for us";
    if (r->nrep == 0 || v[1] % r->nrep != v[2] ||
        (r->nrep == 1 && v[2] != 0))
        return "hello's replica disagrees with its process";
    if ((v[3] & WF_HELLO_SEALED) != r->sealed)
        return "hello's sealing differs from the job's";
    if ((v[3] & ~(WF_HELLO_SEALED | WF_HELLO_SHM)) != 0)
        return "hello with unknown flags";
    out->world = v[1];
    out->replica = v[2];
    out->flags = v[3];
    memcpy(out->nonce, in + sizeof v, WF_NONCE_LEN);
    return NULL;
}

void
wf_shm_name(const struct wf_hs *s, char out[33])
{
    static const char hex[] = "0123456789abcdef";
    struct sec_hasher h;
    uint8_t d[SEC_HASH_LEN];
    int i;

    sec_hasher_init(&h, s->key);
    sec_hasher_update(&h, "shm", 4);
    sec_hasher_update(&h, s->nonce_c, WF_NONCE_LEN);
    sec_hasher_update(&h, s->nonce_a, WF_NONCE_LEN);
    sec_hasher_final(&h, d);
    for (i = 0; i < 16; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[32] = '\0';
}

/* MAC over who | both nonces | both process indices | sealing, keyed by
 * the job key. */
static void
wf_mac(const struct wf_hs *s, const char *who, uint8_t out[SEC_MAC_LEN])
{
    struct sec_hasher h;
    uint32_t v[3] = {s->connector, s->acceptor, s->sealed};

    sec_hasher_init(&h, s->key);
    sec_hasher_update(&h, who, strlen(who) + 1);
    sec_hasher_update(&h, s->nonce_c, WF_NONCE_LEN);
    sec_hasher_update(&h, s->nonce_a, WF_NONCE_LEN);
    sec_hasher_update(&h, v, sizeof v);
    sec_hasher_final(&h, out);
}

void
wf_proof_build(uint8_t out[WF_PROOF_LEN], const struct wf_hs *s)
{
    memcpy(out, s->nonce_a, WF_NONCE_LEN);
    wf_mac(s, "acceptor", out + WF_NONCE_LEN);
}

const char *
wf_proof_check(struct wf_hs *s, const uint8_t in[WF_PROOF_LEN])
{
    uint8_t mac[SEC_MAC_LEN];

    memcpy(s->nonce_a, in, WF_NONCE_LEN);
    wf_mac(s, "acceptor", mac);
    return sec_equal(mac, in + WF_NONCE_LEN, SEC_MAC_LEN)
               ? NULL
               : "acceptor's proof does not verify";
}

void
wf_confirm_build(uint8_t out[WF_CONFIRM_LEN], const struct wf_hs *s)
{
    wf_mac(s, "connector", out);
}

const char *
wf_confirm_check(const struct wf_hs *s, const uint8_t in[WF_CONFIRM_LEN])
{
    uint8_t mac[SEC_MAC_LEN];

    wf_mac(s, "connector", mac);
    return sec_equal(mac, in, SEC_MAC_LEN)
               ? NULL
               : "connector's proof does not verify";
}

void
wf_keys(const struct wf_hs *s, int connector, uint8_t tx[SEC_KEY_LEN],
        uint8_t rx[SEC_KEY_LEN])
{
    uint8_t c2a[SEC_MAC_LEN], a2c[SEC_MAC_LEN];

    wf_mac(s, "connector to acceptor", c2a);
    wf_mac(s, "acceptor to connector", a2c);
    memcpy(tx, connector ? c2a : a2c, SEC_KEY_LEN);
    memcpy(rx, connector ? a2c : c2a, SEC_KEY_LEN);
    sec_wipe(c2a, sizeof c2a);
    sec_wipe(a2c, sizeof a2c);
}
