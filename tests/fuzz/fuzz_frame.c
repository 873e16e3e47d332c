/*
 * Frame headers: frame_header_read over arbitrary bytes, parsed as a
 * stream of frames the way the channel walks its input, under each limit
 * the channel uses.  Besides "no crash", checks the contract: a header
 * accepted is well-formed and within the limit, and writes back to the
 * same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const size_t limits[] = {
    0, 1, 32, FRAME_MAX_PREAUTH, FRAME_MAX_REQUEST, FRAME_MAX_REPLY, SIZE_MAX};

static void
check_one(const uint8_t *buf, size_t limit)
{
    struct frame_header h;
    enum frame_status st;
    uint8_t again[FRAME_HEADER_LEN];

    st = frame_header_read(buf, limit, &h);
    if (frame_status_str(st) == NULL)
        abort();
    /* The header is decoded whatever the status. */
    if (h.version != buf[2] || h.kind != buf[3] ||
        h.length != ((uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 |
                     (uint32_t)buf[6] << 8 | buf[7]))
        abort();
    if (st != FRAME_OK)
        return;
    if (buf[0] != P2P_WIRE_MAGIC0 || buf[1] != P2P_WIRE_MAGIC1 ||
        h.version != P2P_WIRE_VERSION || h.kind < FRAME_HANDSHAKE ||
        h.kind > FRAME_REJECT || h.length == 0 || h.length > limit)
        abort();
    frame_header_write(again, h.kind, h.length);
    if (memcmp(again, buf, FRAME_HEADER_LEN) != 0)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct frame_header h;
    size_t i, off;

    if (size < FRAME_HEADER_LEN)
        return 0;
    for (i = 0; i < sizeof limits / sizeof limits[0]; i++)
        check_one(data, limits[i]);
    /* Walk the input as consecutive frames, as the channel would. */
    for (off = 0; size - off >= FRAME_HEADER_LEN;) {
        if (frame_header_read(data + off, FRAME_MAX_REQUEST, &h) != FRAME_OK)
            break;
        check_one(data + off, FRAME_MAX_REQUEST);
        if (size - off - FRAME_HEADER_LEN < h.length)
            break;
        off += FRAME_HEADER_LEN + h.length;
    }
    return 0;
}
