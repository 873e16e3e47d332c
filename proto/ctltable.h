/*
 * The job's address table on the control socket (ctl.h), as bytes: peerd
 * encodes it into a head and parts, the MPI library decodes the stream
 * back.  No sockets here, so a unit test and a fuzzer drive both ends.
 * Inside the library: never aborts, allocates with malloc.
 */
#ifndef P2P_CTLTABLE_H
#define P2P_CTLTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "ctl.h"

/* One control message, owned by the array that holds it. */
struct ctl_msg {
    uint8_t *buf;
    size_t len;
};

/* The table as control messages: head first, then the parts in order.
 * Returns the number of messages (1 + ceil(n / CTL_PART_MAX)) and stores
 * a malloc'd array in *out (free with ctl_table_msgs_free), or -1 when
 * n is above CTL_MAX_ENTRIES or memory runs out. */
long ctl_table_encode(const uint8_t key[32], uint8_t flags,
                      const struct ctl_entry *e, uint32_t n,
                      struct ctl_msg **out);
void ctl_table_msgs_free(struct ctl_msg *m, long n);

/* A table being received. */
struct ctl_table_rx {
    uint32_t limit; /* the most entries this receiver accepts */
    uint32_t n;     /* announced by the head (0 before it) */
    uint32_t have;  /* entries received, in order */
    int started;    /* the head came */
    uint8_t flags;
    uint8_t key[32];
    struct ctl_entry *tab; /* n entries once started */
    char err[96];          /* why the last feed failed */
};

/* Expect a table of at most limit entries (the job's processes). */
void ctl_table_rx_init(struct ctl_table_rx *rx, uint32_t limit);

/* Feed one control message.  Returns 1 when the table is complete, 0
 * when more is needed (a view before the head is skipped: views are
 * cumulative and the table leaves the dead out), -1 when the message is
 * malformed or out of order (rx->err says why; the table is unusable). */
int ctl_table_rx_feed(struct ctl_table_rx *rx, const uint8_t *msg,
                      size_t len);

/* Wipe the key and free the entries. */
void ctl_table_rx_free(struct ctl_table_rx *rx);

#endif
