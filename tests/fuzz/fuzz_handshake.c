/*
 * The handshake state machine fed hostile input.  The first byte picks a
 * mode:
 *   0  a server fed messages split from the input ([len][bytes]...);
 *   1  a client, after handshake_start, fed messages the same way;
 *   2  an honest client and server whose three messages are XORed with
 *      masks taken from the input: any change must stop the handshake,
 *      no change must complete it with matching keys.
 * Besides "no crash", checks sizes, and that keys exist only after DONE.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handshake.h"
#include "sec.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const uint8_t group_key[SEC_KEY_LEN] = {
    0x70, 0x32, 0x70, 0x6d, 0x70, 0x69, 0x20, 0x66, 0x75, 0x7a, 0x7a,
    0x20, 0x6b, 0x65, 0x79, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (sec_init() == -1)
        abort();
    return 0;
}

/* Feed [len][bytes]... to hs until it stops. */
static void
feed(struct handshake *hs, const uint8_t *p, size_t n, int server)
{
    uint8_t out[HS_MSG_MAX];
    struct hs_keys k;
    enum hs_status st = HS_CONTINUE;
    size_t len, outlen, step = 0;

    while (n > 0 && st != HS_FAIL) {
        len = p[0];
        p++;
        n--;
        if (len > n)
            len = n;
        outlen = 12345;
        st = handshake_input(hs, p, len, out, &outlen);
        if (outlen > HS_MSG_MAX)
            abort();
        /* A server's first step depends only on the hello's size. */
        if (server && step == 0 &&
            (st == HS_CONTINUE) != (len == SEC_KX_PK_LEN))
            abort();
        if (st == HS_FAIL && (outlen != 0 || handshake_keys(hs, &k) != -1))
            abort();
        if (st == HS_CONTINUE && handshake_keys(hs, &k) != -1)
            abort();
        if (st == HS_DONE && handshake_keys(hs, &k) != 0)
            abort();
        p += len;
        n -= len;
        step++;
    }
}

static void
xor_mask(uint8_t *buf, size_t len, const uint8_t **p, size_t *n, int *changed)
{
    size_t i;

    for (i = 0; i<len && * n> 0; i++, (*p)++, (*n)--) {
        buf[i] ^= **p;
        if (**p != 0)
            *changed = 1;
    }
}

static void
tamper(const uint8_t *p, size_t n)
{
    struct handshake *c, *s;
    uint8_t hello[HS_MSG_MAX], sproof[HS_MSG_MAX], cproof[HS_MSG_MAX];
    uint8_t last[HS_MSG_MAX];
    size_t hl, sl, cl, ll;
    enum hs_status st = HS_FAIL;
    struct hs_keys ck, sk;
    int changed = 0;

    c = handshake_new(HS_CLIENT, group_key, "fuzz");
    s = handshake_new(HS_SERVER, group_key, "fuzz");
    hl = handshake_start(c, hello);
    xor_mask(hello, hl, &p, &n, &changed);
    if (handshake_input(s, hello, hl, sproof, &sl) != HS_CONTINUE)
        abort();
    xor_mask(sproof, sl, &p, &n, &changed);
    if (handshake_input(c, sproof, sl, cproof, &cl) == HS_DONE) {
        xor_mask(cproof, cl, &p, &n, &changed);
        st = handshake_input(s, cproof, cl, last, &ll);
    }
    if (changed && st != HS_FAIL)
        abort();
    if (!changed) {
        if (st != HS_DONE || handshake_keys(c, &ck) != 0 ||
            handshake_keys(s, &sk) != 0 ||
            memcmp(ck.tx, sk.rx, SEC_KEY_LEN) != 0 ||
            memcmp(ck.rx, sk.tx, SEC_KEY_LEN) != 0 ||
            memcmp(ck.session_id, sk.session_id, SEC_HASH_LEN) != 0)
            abort();
    }
    handshake_free(c);
    handshake_free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct handshake *hs;
    uint8_t hello[HS_MSG_MAX];

    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0:
        hs = handshake_new(HS_SERVER, group_key, "fuzz");
        feed(hs, data + 1, size - 1, 1);
        handshake_free(hs);
        break;
    case 1:
        hs = handshake_new(HS_CLIENT, group_key, "fuzz");
        if (handshake_start(hs, hello) != SEC_KX_PK_LEN)
            abort();
        feed(hs, data + 1, size - 1, 0);
        handshake_free(hs);
        break;
    case 2:
        tamper(data + 1, size - 1);
        break;
    }
    return 0;
}
