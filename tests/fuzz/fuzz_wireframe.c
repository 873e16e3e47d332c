/*
 * The frames and handshake messages between the processes of an MPI job
 * (mpjrun/mpi/wireframe.c) fed hostile input.  The first byte picks a
 * mode:
 *   0  the rest is a plain byte stream, parsed frame by frame as
 *      transport.c does, every header checked in sequence;
 *   1  the same, sealed: every whole frame is opened (it must not verify);
 *   2  a hello checked against rules taken from the input;
 *   3  an honest handshake whose proof and confirmation are XORed with
 *      masks from the input: any change must refuse it, none must end
 *      with matching keys;
 *   4  a sealed frame of the input, XORed with a mask: it opens to the
 *      input exactly when the mask is all zeros;
 *   5  the rest is a shared-memory ring's bytes, short and plain frames
 *      mixed, parsed as transport.c does (wf_shm_next).
 * Besides "no crash", checks what a verdict promises about the bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sec.h"
#include "wireframe.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const uint8_t job_key[SEC_KEY_LEN] = {
    0x6a, 0x6f, 0x62, 0x20, 0x6b, 0x65, 0x79, 0x20, 0x66, 0x6f, 0x72,
    0x20, 0x66, 0x75, 0x7a, 0x7a, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
    0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
};

static uint8_t opened[WF_SEAL_CHUNK];
/* The frames' AEAD under job_key. */
static struct aead *job_aead;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (sec_init() == -1 || (job_aead = aead_new(WF_CIPHER, job_key)) == NULL)
        abort();
    return 0;
}

static void
plain_stream(const uint8_t *p, size_t n)
{
    struct wire_hdr h;
    const char *why = NULL;
    uint64_t seq = 0;
    enum wf_next next;
    size_t rest;

    for (;;) {
        next = wf_plain_next(p, n, &h, &why);
        if (next == WF_BAD && why == NULL)
            abort();
        if (next != WF_FRAME)
            return;
        if (n < WF_HDR_LEN)
            abort();
        rest = n - WF_HDR_LEN;
        if (h.type != FR_DATA && h.len > rest)
            abort();
        if (wf_frame_check(&h, seq++, (h.flags & 1) ? 2 : 1) != NULL)
            return; /* the connection would end here */
        if (h.type == FR_EAGER && h.len > WF_EAGER_MAX)
            abort();
        p += WF_HDR_LEN + (h.len < rest ? (size_t)h.len : rest);
        n = rest - (h.len < rest ? (size_t)h.len : rest);
    }
}

static void
shm_stream(const uint8_t *p, size_t n)
{
    struct wire_hdr h;
    const char *why = NULL;
    uint64_t seq = 0;
    enum wf_next next;
    size_t rest, hlen = 0;

    for (;;) {
        next = wf_shm_next(p, n, &h, &hlen, seq, &why);
        if (next == WF_BAD && why == NULL)
            abort();
        if (next != WF_FRAME)
            return;
        if ((hlen != WF_HDR_LEN && hlen != WF_SHM_HDR_LEN) || n < hlen)
            abort();
        rest = n - hlen;
        if (h.type != FR_DATA && h.len > rest)
            abort();
        /* A short frame is a well-formed eager one by construction. */
        if (hlen == WF_SHM_HDR_LEN &&
            (h.type != FR_EAGER || wf_frame_check(&h, seq, 1) != NULL))
            abort();
        if (wf_frame_check(&h, seq++, 1) != NULL)
            return; /* the connection would end here */
        p += hlen + (h.len < rest ? (size_t)h.len : rest);
        n = rest - (h.len < rest ? (size_t)h.len : rest);
    }
}

static void
sealed_stream(const uint8_t *p, size_t n)
{
    struct wire_hdr h;
    const char *why = NULL;
    uint64_t ctr = 0;
    enum wf_next next;
    size_t used;

    for (;;) {
        used = 0;
        next = wf_sealed_next(p, n, &h, &used, &why);
        if (next == WF_BAD && why == NULL)
            abort();
        if (next != WF_FRAME)
            return;
        if (used > n || used != WF_SEALED_LEN(h.len) || h.len > WF_SEAL_CHUNK)
            abort();
        /* Forging a tag from fuzzed bytes would be a broken cipher. */
        if (wf_open(opened, p + 4, h.len, ctr++, job_aead) != -1)
            abort();
        p += used;
        n -= used;
    }
}

static void
hello(const uint8_t *p, size_t n)
{
    uint8_t msg[WF_HELLO_LEN];
    struct wf_rules r;
    struct wf_hello h;

    if (n < 4 + WF_HELLO_LEN)
        return;
    r.nproc = p[0];
    r.me = p[1];
    r.nrep = p[2] % 4;
    r.sealed = p[3] & 1;
    r.ondemand = (p[3] >> 1) & 1;
    memcpy(msg, p + 4, WF_HELLO_LEN);
    if (wf_hello_check(msg, &r, &h) != NULL)
        return;
    if (h.world >= r.nproc || h.world == r.me ||
        (h.flags & WF_HELLO_SEALED) != r.sealed ||
        (h.flags & ~(WF_HELLO_SEALED | WF_HELLO_SHM)) != 0 ||
        r.nrep == 0 || h.world % r.nrep != h.replica ||
        (!r.ondemand && h.world >= r.me))
        abort();
}

static void
handshake(const uint8_t *p, size_t n)
{
    uint8_t proof[WF_PROOF_LEN], confirm[WF_CONFIRM_LEN];
    uint8_t ctx[SEC_KEY_LEN], crx[SEC_KEY_LEN], atx[SEC_KEY_LEN],
        arx[SEC_KEY_LEN];
    struct wf_hs con, acc;
    size_t i;
    int changed = 0, ok;

    if (n < WF_PROOF_LEN + WF_CONFIRM_LEN)
        return;
    memset(&con, 0, sizeof con);
    con.key = job_key;
    con.connector = 1;
    con.acceptor = 2;
    con.sealed = 1;
    sec_random(con.nonce_c, WF_NONCE_LEN);
    acc = con;
    sec_random(acc.nonce_a, WF_NONCE_LEN);
    wf_proof_build(proof, &acc);
    for (i = 0; i < WF_PROOF_LEN; i++) {
        proof[i] ^= p[i];
        changed |= p[i];
    }
    ok = wf_proof_check(&con, proof) == NULL;
    if (ok == (changed != 0))
        abort();
    if (!ok)
        return;
    wf_confirm_build(confirm, &con);
    for (i = 0; i < WF_CONFIRM_LEN; i++) {
        confirm[i] ^= p[WF_PROOF_LEN + i];
        changed |= p[WF_PROOF_LEN + i];
    }
    ok = wf_confirm_check(&acc, confirm) == NULL;
    if (ok == (changed != 0))
        abort();
    if (!ok)
        return;
    wf_keys(&con, 1, ctx, crx);
    wf_keys(&acc, 0, atx, arx);
    if (memcmp(ctx, arx, SEC_KEY_LEN) != 0 ||
        memcmp(crx, atx, SEC_KEY_LEN) != 0)
        abort();
}

static void
seal_round_trip(const uint8_t *p, size_t n)
{
    static uint8_t frame[WF_SEALED_LEN(WF_SEAL_CHUNK)];
    struct wire_hdr h, got;
    const char *why = NULL;
    size_t len, flen, used = 0, i;
    int changed = 0;

    if (n < 2)
        return;
    len = (n - 1) / 2 < WF_SEAL_CHUNK ? (n - 1) / 2 : WF_SEAL_CHUNK;
    memset(&h, 0, sizeof h);
    h.type = (uint8_t)p[0];
    h.len = len;
    flen = wf_seal(frame, &h, p + 1, 7, job_aead);
    if (flen != WF_SEALED_LEN(len))
        abort();
    /* The mask covers the header and payload, after the length. */
    for (i = 0; i < len && 4 + i < flen; i++) {
        frame[4 + i] ^= p[1 + len + i];
        changed |= p[1 + len + i];
    }
    if (wf_sealed_next(frame, flen, &got, &used, &why) != WF_FRAME)
        return; /* the header's len was changed: refused unopened */
    if (wf_open(opened, frame + 4, got.len, 7, job_aead) == 0) {
        if (changed || memcmp(opened, p + 1, len) != 0)
            abort();
    } else if (!changed) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 6) {
    case 0:
        plain_stream(data + 1, size - 1);
        break;
    case 1:
        sealed_stream(data + 1, size - 1);
        break;
    case 2:
        hello(data + 1, size - 1);
        break;
    case 3:
        handshake(data + 1, size - 1);
        break;
    case 4:
        seal_round_trip(data + 1, size - 1);
        break;
    default:
        shm_stream(data + 1, size - 1);
        break;
    }
    return 0;
}
