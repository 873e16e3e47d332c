/*
 * The 8-byte frame header: building it and checking it against the limit
 * in force before anything is allocated for the body.
 */
#ifndef P2P_FRAME_H
#define P2P_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct frame_header {
    uint8_t version;
    uint8_t kind;
    uint32_t length;
};

enum frame_status {
    FRAME_OK = 0,
    FRAME_BAD_MAGIC,   /* not our protocol */
    FRAME_BAD_VERSION, /* ours, another version */
    FRAME_BAD_KIND,    /* unknown kind */
    FRAME_TOO_LONG,    /* length above the limit in force */
    FRAME_EMPTY,       /* zero-length body */
};

/* Write a header for kind and length into out[FRAME_HEADER_LEN]. */
void frame_header_write(uint8_t *out, uint8_t kind, uint32_t length);
/* Check and decode buf[FRAME_HEADER_LEN]; limit is the largest body
 * allowed now.  The header is filled in even when the status is an error
 * (for the log line). */
enum frame_status frame_header_read(const uint8_t *buf, size_t limit,
                                    struct frame_header *);
/* A short reason for a status, for log lines. */
const char *frame_status_str(enum frame_status);

#endif
