/*
 * The sealed path's ring of outgoing frames (mpjrun/mpi/sealring.c):
 * slots handed out and given back in order, never more than the ring
 * holds, and frames sealed ahead into it that are dropped when their
 * connection ends leave it empty and reusable, each slot still holding
 * what was sealed into it until then (wf_seal, wf_open: the frames sealed
 * ahead open in their own order and no other).
 */
#include <stdlib.h>
#include <string.h>

#include "sealring.h"
#include "test.h"
#include "wireframe.h"

static void
t_order(void)
{
    struct sealring r;
    uint8_t *a, *b, *c, *d;

    sr_init(&r, 3, 100);
    CHECK(!sr_full(&r));
    CHECK(r.mem == NULL); /* no memory before the first frame */
    a = sr_take(&r);
    b = sr_take(&r);
    c = sr_take(&r);
    if (!CHECK(a != NULL && b != NULL && c != NULL))
        return;
    CHECK(a != b && b != c && a != c);
    CHECK(sr_full(&r));
    CHECK(sr_take(&r) == NULL);
    CHECK(sr_holds(&r, a) && sr_holds(&r, b + 99) && sr_holds(&r, c));
    CHECK(!sr_holds(&r, (const uint8_t *)&r));
    /* Given back oldest first only. */
    CHECK_EQ_INT(sr_give(&r, b), -1);
    CHECK_EQ_INT(sr_give(&r, c), -1);
    CHECK_EQ_INT(sr_give(&r, a), 0);
    CHECK(!sr_full(&r));
    /* The freed slot comes back after the others, round the ring. */
    d = sr_take(&r);
    CHECK(d == a);
    CHECK_EQ_INT(sr_give(&r, b), 0);
    CHECK_EQ_INT(sr_give(&r, c), 0);
    CHECK_EQ_INT(sr_give(&r, d), 0);
    CHECK_EQ_INT(sr_give(&r, d), -1); /* nothing taken */
    CHECK_EQ_INT((long long)r.used, 0);
    sr_free(&r);
    CHECK(!sr_holds(&r, a));
}

/* Four frames of one payload sealed ahead; two written, then the
 * connection ends: the ring is empty at once and the next connection's
 * frames reuse it from its first slot. */
static void
t_sealed_ahead_then_dropped(void)
{
    enum { N = 4, CH = 4096 };
    uint8_t key[AEAD_KEY_LEN], *payload, *slot[N], out[CH];
    struct sealring r;
    struct wire_hdr h, got;
    struct aead *a;
    const char *why;
    size_t used, len;
    int i;

    memset(key, 0x33, sizeof key);
    a = aead_new(WF_CIPHER, key);
    payload = malloc(N * CH);
    if (!CHECK(a != NULL && payload != NULL))
        goto out;
    for (i = 0; i < N * CH; i++)
        payload[i] = (uint8_t)(i * 7 + 1);
    sr_init(&r, N, WF_SEALED_LEN(CH));
    memset(&h, 0, sizeof h);
    h.type = FR_DATA;
    h.len = CH;
    for (i = 0; i < N; i++) {
        h.seq = (uint64_t)i;
        h.total = (uint64_t)i * CH;
        slot[i] = sr_take(&r);
        if (!CHECK(slot[i] != NULL))
            goto out;
        len = wf_seal(slot[i], &h, payload + i * CH, (uint64_t)i, a);
        CHECK_EQ_INT((long long)len, (long long)WF_SEALED_LEN(CH));
    }
    CHECK(sr_full(&r));
    /* Each slot holds its own frame, which opens under its counter only. */
    for (i = 0; i < N; i++) {
        CHECK_EQ_INT(wf_sealed_next(slot[i], WF_SEALED_LEN(CH), &got, &used,
                                    &why),
                     WF_FRAME);
        CHECK_EQ_INT((long long)got.total, (long long)i * CH);
        CHECK_EQ_INT(wf_open(out, slot[i] + 4, CH, (uint64_t)(i + 1) % N, a),
                     -1);
        CHECK_EQ_INT(wf_open(out, slot[i] + 4, CH, (uint64_t)i, a), 0);
        CHECK_MEM(out, payload + i * CH, CH);
    }
    /* Two written (given back), then the connection dies. */
    CHECK_EQ_INT(sr_give(&r, slot[0]), 0);
    CHECK_EQ_INT(sr_give(&r, slot[1]), 0);
    sr_clear(&r);
    CHECK_EQ_INT((long long)r.used, 0);
    CHECK(sr_take(&r) == slot[0]);
    CHECK(sr_take(&r) == slot[1]);
    CHECK_EQ_INT(sr_give(&r, slot[0]), 0);
    sr_free(&r);
out:
    free(payload);
    aead_free(a);
}

static const struct test_case cases[] = {
    {"order", t_order},
    {"sealed_ahead_then_dropped", t_sealed_ahead_then_dropped},
};

TEST_MAIN(cases)
