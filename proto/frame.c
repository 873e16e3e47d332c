/*
 * Frame header encoding and validation.  Pure functions: the fuzz target
 * and the channel share them.
 */
#include "frame.h"

void
frame_header_write(uint8_t *out, uint8_t kind, uint32_t length)
{
    out[0] = P2P_WIRE_MAGIC0;
    out[1] = P2P_WIRE_MAGIC1;
    out[2] = P2P_WIRE_VERSION;
    out[3] = kind;
    out[4] = (uint8_t)(length >> 24);
    out[5] = (uint8_t)(length >> 16);
    out[6] = (uint8_t)(length >> 8);
    out[7] = (uint8_t)length;
}

enum frame_status
frame_header_read(const uint8_t *buf, size_t limit, struct frame_header *h)
{
    h->version = buf[2];
    h->kind = buf[3];
    h->length = (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 |
                (uint32_t)buf[6] << 8 | (uint32_t)buf[7];
    if (buf[0] != P2P_WIRE_MAGIC0 || buf[1] != P2P_WIRE_MAGIC1)
        return FRAME_BAD_MAGIC;
    if (h->version != P2P_WIRE_VERSION)
        return FRAME_BAD_VERSION;
    if (h->kind < FRAME_HANDSHAKE || h->kind > FRAME_REJECT)
        return FRAME_BAD_KIND;
    if (h->length == 0)
        return FRAME_EMPTY;
    if (h->length > limit)
        return FRAME_TOO_LONG;
    return FRAME_OK;
}

const char *
frame_status_str(enum frame_status s)
{
    switch (s) {
    case FRAME_OK:
        return "ok";
    case FRAME_BAD_MAGIC:
        return "not a p2pmpi frame (bad magic)";
    case FRAME_BAD_VERSION:
        return "unsupported protocol version";
    case FRAME_BAD_KIND:
        return "unknown frame kind";
    case FRAME_TOO_LONG:
        return "frame longer than allowed";
    case FRAME_EMPTY:
        return "empty frame";
    }
    return "?";
}
