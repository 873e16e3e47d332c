/*
 * The address table as a stream of control messages (ctl.h): a head with
 * the job key and the number of entries, then parts of at most
 * CTL_PART_MAX entries in order.  peerd encodes once per table and sends
 * the same messages to each of its processes; the MPI library decodes
 * what peerd sends, checking each message as if it came from anywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctltable.h"

long
ctl_table_encode(const uint8_t key[32], uint8_t flags,
                 const struct ctl_entry *e, uint32_t n, struct ctl_msg **out)
{
    struct ctl_table_head h;
    struct ctl_table_part p;
    struct ctl_msg *m;
    long nmsg, k;
    uint32_t first, count;

    *out = NULL;
    if (n > CTL_MAX_ENTRIES)
        return -1;
    nmsg = 1 + (long)((n + CTL_PART_MAX - 1) / CTL_PART_MAX);
    if ((m = calloc((size_t)nmsg, sizeof *m)) == NULL)
        return -1;
    memset(&h, 0, sizeof h);
    h.type = CTL_TABLE;
    h.version = CTL_VERSION;
    h.flags = flags;
    memcpy(h.key, key, sizeof h.key);
    h.n = n;
    if ((m[0].buf = malloc(sizeof h)) == NULL)
        goto error;
    memcpy(m[0].buf, &h, sizeof h);
    m[0].len = sizeof h;
    for (k = 1, first = 0; first < n; k++, first += count) {
        count = n - first < CTL_PART_MAX ? n - first : CTL_PART_MAX;
        memset(&p, 0, sizeof p);
        p.type = CTL_TABLE_PART;
        p.version = CTL_VERSION;
        p.first = first;
        p.count = count;
        m[k].len = sizeof p + (size_t)count * sizeof *e;
        if ((m[k].buf = malloc(m[k].len)) == NULL)
            goto error;
        memcpy(m[k].buf, &p, sizeof p);
        memcpy(m[k].buf + sizeof p, e + first, (size_t)count * sizeof *e);
    }
    *out = m;
    return nmsg;
error:
    ctl_table_msgs_free(m, nmsg);
    return -1;
}

void
ctl_table_msgs_free(struct ctl_msg *m, long n)
{
    long i;

    if (m == NULL)
        return;
    for (i = 0; i < n; i++) {
        if (m[i].buf != NULL && m[i].buf[0] == CTL_TABLE)
            memset(m[i].buf, 0, m[i].len); /* the job key */
        free(m[i].buf);
    }
    free(m);
}

void
ctl_table_rx_init(struct ctl_table_rx *rx, uint32_t limit)
{
    memset(rx, 0, sizeof *rx);
    rx->limit = limit < CTL_MAX_ENTRIES ? limit : CTL_MAX_ENTRIES;
}

static int
rx_fail(struct ctl_table_rx *rx, const char *why, size_t len)
{
    snprintf(rx->err, sizeof rx->err, "%s (message of %zu bytes)", why, len);
    return -1;
}

/* The head: how many entries, the key, the flags. */
static int
rx_head(struct ctl_table_rx *rx, const uint8_t *msg, size_t len)
{
    struct ctl_table_head h;

    if (rx->started || len != sizeof h)
        return rx_fail(rx, "unexpected table head", len);
    memcpy(&h, msg, sizeof h);
    if (h.n > rx->limit)
        return rx_fail(rx, "table larger than the job", len);
    /* n is checked against the job's own size: not a count from afar. */
    if (h.n > 0 && (rx->tab = calloc(h.n, sizeof *rx->tab)) == NULL)
        return rx_fail(rx, "no memory for the table", len);
    rx->started = 1;
    rx->n = h.n;
    rx->flags = h.flags;
    memcpy(rx->key, h.key, sizeof rx->key);
    memset(&h, 0, sizeof h);
    return rx->n == 0 ? 1 : 0;
}

/* A part: the next entries, each address terminated in its field. */
static int
rx_part(struct ctl_table_rx *rx, const uint8_t *msg, size_t len)
{
    struct ctl_table_part p;
    uint32_t i;

    if (!rx->started || len < sizeof p)
        return rx_fail(rx, "unexpected table part", len);
    memcpy(&p, msg, sizeof p);
    if (p.first != rx->have || p.count == 0 || p.count > CTL_PART_MAX ||
        p.count > rx->n - rx->have ||
        len != sizeof p + (size_t)p.count * sizeof(struct ctl_entry))
        return rx_fail(rx, "table part out of order or of the wrong size",
                       len);
    memcpy(rx->tab + rx->have, msg + sizeof p,
           (size_t)p.count * sizeof(struct ctl_entry));
    for (i = rx->have; i < rx->have + p.count; i++)
        if (memchr(rx->tab[i].addr, '\0', sizeof rx->tab[i].addr) == NULL)
            return rx_fail(rx, "unterminated address in the table", len);
    rx->have += p.count;
    return rx->have == rx->n ? 1 : 0;
}

int
ctl_table_rx_feed(struct ctl_table_rx *rx, const uint8_t *msg, size_t len)
{
    if (len < 2)
        return rx_fail(rx, "short control message", len);
    if (msg[1] != CTL_VERSION)
        return rx_fail(rx, "control message of another version", len);
    switch (msg[0]) {
    case CTL_VIEW:
        if (rx->started)
            return rx_fail(rx, "view inside the table", len);
        return 0;
    case CTL_TABLE:
        return rx_head(rx, msg, len);
    case CTL_TABLE_PART:
        return rx_part(rx, msg, len);
    default:
        return rx_fail(rx, "unexpected control message", len);
    }
}

void
ctl_table_rx_free(struct ctl_table_rx *rx)
{
    free(rx->tab);
    rx->tab = NULL;
    memset(rx->key, 0, sizeof rx->key);
}
