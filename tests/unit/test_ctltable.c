/*
 * The address table on the control socket (proto/ctltable.c): encoded
 * into a head and parts, decoded back whole, at sizes one message could
 * never carry (beyond 2,048 entries, up to 65,536), and every malformed
 * or out-of-order message refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctltable.h"
#include "test.h"

static const uint8_t key[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

/* A table of n entries, one replica each, distinct addresses. */
static struct ctl_entry *
make_table(uint32_t n)
{
    struct ctl_entry *e = calloc(n ? n : 1, sizeof *e);
    uint32_t i;

    for (i = 0; i < n; i++) {
        e[i].rank = i;
        e[i].replica = 0;
        snprintf(e[i].addr, sizeof e[i].addr, "127.0.%u.%u:%u", i / 250,
                 i % 250 + 1, 20000 + i % 40000);
    }
    return e;
}

/* Encode n entries, feed every message, check the result is the input. */
static void
roundtrip(uint32_t n)
{
    struct ctl_entry *e = make_table(n);
    struct ctl_table_rx rx;
    struct ctl_msg *m;
    long k, nmsg;
    int rc = 0;

    nmsg = ctl_table_encode(key, CTL_TF_PROGRESS, e, n, &m);
    if (!CHECK(nmsg == 1 + (long)((n + CTL_PART_MAX - 1) / CTL_PART_MAX))) {
        free(e);
        return;
    }
    ctl_table_rx_init(&rx, n);
    for (k = 0; k < nmsg; k++) {
        CHECK(m[k].len <= 64 * 1024); /* every message fits the socket */
        rc = ctl_table_rx_feed(&rx, m[k].buf, m[k].len);
        if (k < nmsg - 1 && !CHECK_EQ_INT(rc, 0))
            break;
    }
    CHECK_EQ_INT(rc, 1);
    CHECK_EQ_INT(rx.n, n);
    CHECK_EQ_INT(rx.have, n);
    CHECK_EQ_INT(rx.flags, CTL_TF_PROGRESS);
    CHECK_MEM(rx.key, key, sizeof key);
    if (n > 0 && rc == 1)
        CHECK(memcmp(rx.tab, e, (size_t)n * sizeof *e) == 0);
    ctl_table_rx_free(&rx);
    ctl_table_msgs_free(m, nmsg);
    free(e);
}

static void
t_small(void)
{
    roundtrip(1);
    roundtrip(4);
    roundtrip(CTL_PART_MAX);
    roundtrip(CTL_PART_MAX + 1);
}

/* The old one-message table stopped at 2,048 entries. */
static void
t_beyond_2048(void)
{
    roundtrip(2049);
    roundtrip(5000);
}

static void
t_65536(void)
{
    roundtrip(65536);
}

static void
t_empty(void)
{
    roundtrip(0);
}

/* A view before the head is skipped (the table leaves the dead out);
 * one between parts is a protocol error. */
static void
t_views(void)
{
    struct ctl_view_head v = {CTL_VIEW, CTL_VERSION, {0}, 1, 0};
    struct ctl_entry *e = make_table(300);
    struct ctl_table_rx rx;
    struct ctl_msg *m;
    long nmsg = ctl_table_encode(key, 0, e, 300, &m);

    ctl_table_rx_init(&rx, 300);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, (uint8_t *)&v, sizeof v), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[1].buf, m[1].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, (uint8_t *)&v, sizeof v), -1);
    CHECK_CONTAINS(rx.err, "view");
    ctl_table_rx_free(&rx);
    ctl_table_msgs_free(m, nmsg);
    free(e);
}

/* Each way a message can be wrong, refused with a reason. */
static void
t_malformed(void)
{
    struct ctl_entry *e = make_table(600);
    struct ctl_table_rx rx;
    struct ctl_table_part p;
    struct ctl_msg *m;
    long nmsg = ctl_table_encode(key, 0, e, 600, &m);
    uint8_t buf[64];

    /* larger than the job */
    ctl_table_rx_init(&rx, 599);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), -1);
    CHECK_CONTAINS(rx.err, "larger than the job");
    ctl_table_rx_free(&rx);
    /* a part before the head */
    ctl_table_rx_init(&rx, 600);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[1].buf, m[1].len), -1);
    ctl_table_rx_free(&rx);
    /* parts out of order */
    ctl_table_rx_init(&rx, 600);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[2].buf, m[2].len), -1);
    CHECK_CONTAINS(rx.err, "out of order");
    ctl_table_rx_free(&rx);
    /* a second head */
    ctl_table_rx_init(&rx, 600);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), -1);
    ctl_table_rx_free(&rx);
    /* a part whose length disagrees with its count */
    ctl_table_rx_init(&rx, 600);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[1].buf, m[1].len - 1), -1);
    ctl_table_rx_free(&rx);
    /* a part claiming more entries than announced */
    ctl_table_rx_init(&rx, 600);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[1].buf, m[1].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[2].buf, m[2].len), 0);
    memcpy(&p, m[3].buf, sizeof p);
    p.count = CTL_PART_MAX;
    memcpy(m[3].buf, &p, sizeof p);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[3].buf, m[3].len), -1);
    ctl_table_rx_free(&rx);
    /* an address without its terminator */
    ctl_table_rx_init(&rx, 600);
    memset(m[1].buf + sizeof p + 8, 'x', sizeof e->addr);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[0].buf, m[0].len), 0);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, m[1].buf, m[1].len), -1);
    CHECK_CONTAINS(rx.err, "unterminated");
    ctl_table_rx_free(&rx);
    /* another version, an unknown type, a runt */
    ctl_table_rx_init(&rx, 600);
    memcpy(buf, m[0].buf, sizeof buf);
    buf[1] = CTL_VERSION + 1;
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, buf, m[0].len), -1);
    buf[1] = CTL_VERSION;
    buf[0] = 99;
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, buf, m[0].len), -1);
    CHECK_EQ_INT(ctl_table_rx_feed(&rx, buf, 1), -1);
    ctl_table_rx_free(&rx);
    ctl_table_msgs_free(m, nmsg);
    free(e);
}

/* Above the largest job there is no encoding. */
static void
t_too_large(void)
{
    struct ctl_msg *m;

    CHECK_EQ_INT(ctl_table_encode(key, 0, NULL, CTL_MAX_ENTRIES + 1, &m), -1);
    CHECK(m == NULL);
}

static const struct test_case cases[] = {
    {"small", t_small},         {"beyond_2048", t_beyond_2048},
    {"65536", t_65536},         {"empty", t_empty},
    {"views", t_views},         {"malformed", t_malformed},
    {"too_large", t_too_large},
};

TEST_MAIN(cases)
