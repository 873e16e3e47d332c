/*
 * Frame header: the 8 bytes in clear in front of every frame, and the
 * checks made on them before anything is allocated for the body.
 */
#include <stdint.h>
#include <string.h>

#include "frame.h"
#include "test.h"
#include "wire.h"

/* Write then read back every kind with a few lengths. */
static void
t_roundtrip(void)
{
    static const uint32_t lens[] = {1,        255,        256,
                                    0x010203, 0x7fffffff, 0xffffffff};
    uint8_t kinds[] = {FRAME_HANDSHAKE, FRAME_SEALED, FRAME_REJECT};
    uint8_t buf[FRAME_HEADER_LEN];
    struct frame_header h;
    size_t i, k;

    for (k = 0; k < sizeof kinds; k++)
        for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            memset(&h, 0xee, sizeof h);
            frame_header_write(buf, kinds[k], lens[i]);
            CHECK_EQ_INT(frame_header_read(buf, SIZE_MAX, &h), FRAME_OK);
            CHECK_EQ_INT(h.version, P2P_WIRE_VERSION);
            CHECK_EQ_INT(h.kind, kinds[k]);
            CHECK_EQ_INT(h.length, lens[i]);
        }
}

/* The byte layout is the wire contract: magic, version, kind, BE length. */
static void
t_layout(void)
{
    uint8_t buf[FRAME_HEADER_LEN];
    const uint8_t want[FRAME_HEADER_LEN] = {
        'P', '2', P2P_WIRE_VERSION, FRAME_SEALED, 0x01, 0x02, 0x03, 0x04};

    frame_header_write(buf, FRAME_SEALED, 0x01020304);
    CHECK_MEM(buf, want, sizeof want);
}

static void
t_bad_magic(void)
{
    uint8_t buf[FRAME_HEADER_LEN];
    struct frame_header h;

    frame_header_write(buf, FRAME_SEALED, 10);
    buf[0] = 'Q';
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_MAGIC);
    frame_header_write(buf, FRAME_SEALED, 10);
    buf[1] = '3';
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_MAGIC);
    /* An HTTP request or a TLS hello is not ours. */
    memcpy(buf, "GET / HT", 8);
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_MAGIC);
    memcpy(buf, "\x16\x03\x01\x02\x00\x01\x00\x01", 8);
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_MAGIC);
}

/* A version mismatch is told apart from garbage, and the version seen is
 * reported (the server names it in its reject). */
static void
t_bad_version(void)
{
    uint8_t buf[FRAME_HEADER_LEN];
    struct frame_header h;

    frame_header_write(buf, FRAME_HANDSHAKE, 32);
    buf[2] = P2P_WIRE_VERSION + 1;
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_VERSION);
    CHECK_EQ_INT(h.version, P2P_WIRE_VERSION + 1);
    CHECK_EQ_INT(h.kind, FRAME_HANDSHAKE);
    CHECK_EQ_INT(h.length, 32);
    buf[2] = 0;
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_VERSION);
    buf[2] = 0xff;
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_VERSION);
}

static void
t_bad_kind(void)
{
    static const uint8_t bad[] = {0, 4, 5, 0x7f, 0x80, 0xff};
    uint8_t buf[FRAME_HEADER_LEN];
    struct frame_header h;
    size_t i;

    for (i = 0; i < sizeof bad; i++) {
        frame_header_write(buf, bad[i], 10);
        CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_KIND);
        CHECK_EQ_INT(h.kind, bad[i]);
    }
}

static void
t_zero_length(void)
{
    uint8_t buf[FRAME_HEADER_LEN];
    struct frame_header h;

    frame_header_write(buf, FRAME_SEALED, 0);
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_EMPTY);
    frame_header_write(buf, FRAME_HANDSHAKE, 0);
    CHECK_EQ_INT(frame_header_read(buf, FRAME_MAX_PREAUTH, &h), FRAME_EMPTY);
}

/* Exactly at the limit passes, one more byte does not, for each limit the
 * channel uses. */
static void
t_limit(void)
{
    static const size_t limits[] = {1, FRAME_MAX_PREAUTH, FRAME_MAX_REQUEST,
                                    FRAME_MAX_REPLY, 0xfffffffe};
    uint8_t buf[FRAME_HEADER_LEN];
    struct frame_header h;
    size_t i;

    for (i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        frame_header_write(buf, FRAME_SEALED, (uint32_t)limits[i]);
        CHECK_EQ_INT(frame_header_read(buf, limits[i], &h), FRAME_OK);
        frame_header_write(buf, FRAME_SEALED, (uint32_t)limits[i] + 1);
        CHECK_EQ_INT(frame_header_read(buf, limits[i], &h), FRAME_TOO_LONG);
        CHECK_EQ_INT(h.length, limits[i] + 1);
    }
    /* The largest length the header can carry is above any limit. */
    frame_header_write(buf, FRAME_SEALED, 0xffffffff);
    CHECK_EQ_INT(frame_header_read(buf, FRAME_MAX_REPLY, &h), FRAME_TOO_LONG);
    /* A zero limit refuses every body. */
    frame_header_write(buf, FRAME_SEALED, 1);
    CHECK_EQ_INT(frame_header_read(buf, 0, &h), FRAME_TOO_LONG);
}

/* Magic is checked first: garbage with a huge length is "not ours". */
static void
t_check_order(void)
{
    uint8_t buf[FRAME_HEADER_LEN] = {'X', 'X', 9, 9, 0xff, 0xff, 0xff, 0xff};
    struct frame_header h;

    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_MAGIC);
    buf[0] = 'P';
    buf[1] = '2';
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_VERSION);
    buf[2] = P2P_WIRE_VERSION;
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_BAD_KIND);
    buf[3] = FRAME_SEALED;
    CHECK_EQ_INT(frame_header_read(buf, 100, &h), FRAME_TOO_LONG);
}

static void
t_status_str(void)
{
    enum frame_status s;

    CHECK_EQ_STR(frame_status_str(FRAME_OK), "ok");
    for (s = FRAME_BAD_MAGIC; s <= FRAME_EMPTY; s++) {
        CHECK(frame_status_str(s) != NULL);
        CHECK(strcmp(frame_status_str(s), "?") != 0);
        CHECK(strcmp(frame_status_str(s), "ok") != 0);
    }
}

static const struct test_case cases[] = {
    {"roundtrip", t_roundtrip},   {"layout", t_layout},
    {"bad_magic", t_bad_magic},   {"bad_version", t_bad_version},
    {"bad_kind", t_bad_kind},     {"zero_length", t_zero_length},
    {"limit", t_limit},           {"check_order", t_check_order},
    {"status_str", t_status_str},
};

TEST_MAIN(cases)
