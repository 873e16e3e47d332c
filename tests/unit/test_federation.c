/*
 * The federated directory's pure parts: the summary store (parts in
 * order, replays refused, a complete summary replaces the previous one, a
 * rule-breaker and a silent sender forgotten, bounds, a key two senders
 * name counted once), the "best first"
 * order and de-duplication, and the rendezvous order peers use to choose
 * their supernodes (stable, even, and moving only the peers of a
 * supernode that leaves).
 */
#include <stdlib.h>
#include <string.h>

#include "rendezvous.h"
#include "supernode.h"
#include "test.h"

static void
entry(struct peer_entry *e, int id, uint32_t slots_free, uint32_t load,
      uint32_t rtt)
{
    memset(e, 0, sizeof *e);
    memset(e->id, id, sizeof e->id);
    snprintf(e->host_label, sizeof e->host_label, "h%d", id);
    snprintf(e->addr, sizeof e->addr, "10.0.0.%d:9897", id);
    e->res.cores = 4;
    e->res.slots_total = 8;
    e->res.slots_free = slots_free;
    e->res.load_milli = load;
    e->res.state = PEER_STATE_AVAILABLE;
    e->rtt_us = rtt;
}

/* A summary part from instance inst. */
static void
part(struct msg_fed_summary *f, int inst, uint64_t seq, uint32_t p,
     uint32_t nparts, struct peer_entry *v, size_t n)
{
    memset(f, 0, sizeof *f);
    memset(f->instance, inst, sizeof f->instance);
    f->seq = seq;
    f->part = p;
    f->nparts = nparts;
    f->total_peers = (uint32_t)n;
    snprintf(f->addr, sizeof f->addr, "10.9.9.%d:9700", inst);
    f->peers = v;
    f->npeers = n;
}

/* The ids (first byte) of the store's entries, sorted, as a string. */
static void
ids_of(const struct summary *s, char *out, size_t outlen)
{
    struct peer_entry *v = NULL;
    size_t n = 0, i, used = 0;

    summary_append(s, 0, &v, &n);
    rank_dedup(v, n); /* sorts by id */
    out[0] = '\0';
    for (i = 0; i < n && used + 4 < outlen; i++)
        used += (size_t)snprintf(out + used, outlen - used, "%s%d",
                                 i ? "," : "", v[i].id[0]);
    free(v);
}

static void
t_summary_parts(void)
{
    struct summary *s = summary_new();
    struct peer_entry v[4];
    struct msg_fed_summary f;
    char err[200], ids[64];

    entry(&v[0], 1, 4, 0, 10);
    entry(&v[1], 2, 4, 0, 10);
    entry(&v[2], 3, 4, 0, 10);
    entry(&v[3], 4, 4, 0, 10);
    /* Summary 1 in two parts: every entry is kept. */
    part(&f, 7, 1, 0, 2, v, 2);
    CHECK_EQ_INT(summary_apply(s, &f, 1000, err, sizeof err), 0);
    part(&f, 7, 1, 1, 2, v + 2, 2);
    CHECK_EQ_INT(summary_apply(s, &f, 1000, err, sizeof err), 0);
    ids_of(s, ids, sizeof ids);
    CHECK_EQ_STR(ids, "1,2,3,4");
    CHECK_EQ_INT(summary_origins(s), 1);
    /* Summary 2 names 2 and 4 only: while it arrives the old entries
     * stay; once complete, 1 and 3 are gone. */
    part(&f, 7, 2, 0, 2, v + 1, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 2000, err, sizeof err), 0);
    CHECK_EQ_INT(summary_entries(s), 4);
    part(&f, 7, 2, 1, 2, v + 3, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 2000, err, sizeof err), 0);
    ids_of(s, ids, sizeof ids);
    CHECK_EQ_STR(ids, "2,4");
    /* A second sender adds its own; one sender's summary never drops
     * another's entries. */
    part(&f, 8, 1, 0, 1, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 2000, err, sizeof err), 0);
    ids_of(s, ids, sizeof ids);
    CHECK_EQ_STR(ids, "1,2,4");
    CHECK_EQ_INT(summary_origins(s), 2);
    /* An empty summary empties its sender. */
    part(&f, 7, 3, 0, 1, NULL, 0);
    CHECK_EQ_INT(summary_apply(s, &f, 2500, err, sizeof err), 0);
    ids_of(s, ids, sizeof ids);
    CHECK_EQ_STR(ids, "1");
    summary_free(s);
}

/* A key that two senders name is one peer: summary_distinct() counts it
 * once (what /api/supernodes shows as federated_peers), while
 * summary_entries() counts what the store holds. */
static void
t_summary_distinct(void)
{
    struct summary *s = summary_new();
    struct peer_entry v[4];
    struct msg_fed_summary f;
    char err[200];
    int i;

    for (i = 0; i < 4; i++)
        entry(&v[i], i + 1, 4, 0, 10);
    CHECK_EQ_INT(summary_distinct(s), 0);
    /* Sender 7 names 1, 2, 3; sender 8 names 2, 3, 4; sender 9 names 3. */
    part(&f, 7, 1, 0, 1, v, 3);
    CHECK_EQ_INT(summary_apply(s, &f, 1000, err, sizeof err), 0);
    CHECK_EQ_INT(summary_distinct(s), 3);
    part(&f, 8, 1, 0, 1, v + 1, 3);
    CHECK_EQ_INT(summary_apply(s, &f, 1000, err, sizeof err), 0);
    part(&f, 9, 1, 0, 1, v + 2, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 1000, err, sizeof err), 0);
    CHECK_EQ_INT(summary_entries(s), 7);
    CHECK_EQ_INT(summary_distinct(s), 4);
    /* Sender 8 now names 4 only: 2 and 3 are still named by 7. */
    part(&f, 8, 2, 0, 1, v + 3, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 2000, err, sizeof err), 0);
    CHECK_EQ_INT(summary_entries(s), 5);
    CHECK_EQ_INT(summary_distinct(s), 4);
    /* Sender 7 goes silent and is forgotten: 1 and 2 with it. */
    part(&f, 8, 3, 0, 1, v + 3, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 5000, err, sizeof err), 0);
    part(&f, 9, 2, 0, 1, v + 2, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 5000, err, sizeof err), 0);
    CHECK_EQ_INT(summary_expire(s, 3000), 1);
    CHECK_EQ_INT(summary_distinct(s), 2);
    summary_free(s);
}

static void
t_summary_refused(void)
{
    struct summary *s = summary_new();
    struct peer_entry v[2];
    struct msg_fed_summary f;
    char err[200];

    entry(&v[0], 1, 4, 0, 10);
    entry(&v[1], 2, 4, 0, 10);
    /* A new sender must start at part 0. */
    part(&f, 7, 1, 1, 2, v, 1);
    err[0] = '\0';
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), -1);
    CHECK(strstr(err, "starts at part 1") != NULL);
    CHECK_EQ_INT(summary_origins(s), 0);

    /* Summary 5 is taken; a replay of 5 or an older 3 is refused and the
     * sender forgotten with what it said before. */
    part(&f, 7, 5, 0, 1, v, 2);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), 0);
    CHECK_EQ_INT(summary_entries(s), 2);
    part(&f, 7, 3, 0, 1, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), -1);
    CHECK(strstr(err, "summary 3 after 5") != NULL);
    CHECK_EQ_INT(summary_entries(s), 0);
    CHECK_EQ_INT(summary_origins(s), 0);

    /* A skipped part, or a part of another summary, is refused. */
    part(&f, 9, 1, 0, 3, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), 0);
    part(&f, 9, 1, 2, 3, v + 1, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), -1);
    CHECK(strstr(err, "out of order") != NULL);
    CHECK_EQ_INT(summary_origins(s), 0);
    part(&f, 9, 1, 0, 3, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), 0);
    part(&f, 9, 2, 1, 3, v + 1, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), -1);
    part(&f, 9, 1, 0, 3, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), 0);
    part(&f, 9, 1, 1, 2, v + 1, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), -1);
    summary_free(s);
}

static void
t_summary_bounds(void)
{
    struct summary *s = summary_new();
    struct peer_entry *v;
    struct msg_fed_summary f;
    char err[200];
    uint32_t p;
    int i, rc = 0;

    /* 64 senders are kept, a 65th is refused. */
    v = calloc(WIRE_FED_PART_ENTRIES, sizeof *v);
    if (!CHECK(v != NULL))
        return;
    entry(&v[0], 1, 4, 0, 10);
    for (i = 0; i < 64; i++) {
        part(&f, i + 1, 1, 0, 1, v, 1);
        rc |= summary_apply(s, &f, 0, err, sizeof err);
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(summary_origins(s), 64);
    part(&f, 200, 1, 0, 1, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 0, err, sizeof err), -1);
    CHECK_EQ_INT(summary_origins(s), 64);
    summary_free(s);

    /* One sender holds at most its last complete summary and the one
     * coming in: three whole summaries of fresh ids leave the last. */
    s = summary_new();
    rc = 0;
    for (i = 0; i < 3 && rc == 0; i++)
        for (p = 0; p < WIRE_FED_MAX_PARTS && rc == 0; p++) {
            size_t k;

            for (k = 0; k < WIRE_FED_PART_ENTRIES; k++) {
                entry(&v[k], 1, 4, 0, 10);
                memcpy(v[k].id, &i, sizeof i);
                memcpy(v[k].id + 4, &p, sizeof p);
                memcpy(v[k].id + 8, &k, sizeof k);
            }
            part(&f, 1, (uint64_t)i + 1, p, WIRE_FED_MAX_PARTS, v,
                 WIRE_FED_PART_ENTRIES);
            rc = summary_apply(s, &f, 0, err, sizeof err);
        }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(summary_entries(s),
                 WIRE_FED_MAX_PARTS * WIRE_FED_PART_ENTRIES);
    summary_free(s);
    free(v);
}

static void
t_summary_expire_and_age(void)
{
    struct summary *s = summary_new();
    struct peer_entry v[1], *out = NULL;
    struct msg_fed_summary f;
    size_t n = 0;
    char err[200];

    entry(&v[0], 1, 4, 0, 10);
    v[0].age_ms = 300;
    part(&f, 7, 1, 0, 1, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 10000, err, sizeof err), 0);
    part(&f, 8, 1, 0, 1, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 12000, err, sizeof err), 0);
    /* The age grows from what the sender said. */
    summary_append(s, 10500, &out, &n);
    if (CHECK_EQ_INT(n, 2))
        CHECK(out[0].age_ms == 800 || out[1].age_ms == 800);
    free(out);
    /* A sender not heard from since the cutoff is forgotten. */
    CHECK_EQ_INT(summary_expire(s, 11000), 1);
    CHECK_EQ_INT(summary_origins(s), 1);
    CHECK_EQ_INT(summary_expire(s, 11000), 0);
    CHECK_EQ_INT(summary_expire(s, 13000), 1);
    CHECK_EQ_INT(summary_entries(s), 0);
    summary_free(s);
    summary_free(NULL);
}

/* summary_walk (the dashboard's view): each entry once per sender, aged,
 * with the address of the member that summarised it. */
struct walk_seen {
    int n, from7, from8;
    uint64_t age7;
};

static void
walk_count(const struct peer_entry *e, const char *origin, void *arg)
{
    struct walk_seen *w = arg;

    w->n++;
    if (strcmp(origin, "10.9.9.7:9700") == 0) {
        w->from7++;
        w->age7 = e->age_ms;
    } else if (strcmp(origin, "10.9.9.8:9700") == 0)
        w->from8++;
}

static void
t_summary_walk(void)
{
    struct summary *s = summary_new();
    struct peer_entry v[3];
    struct msg_fed_summary f;
    struct walk_seen w = {0};
    char err[200];

    entry(&v[0], 1, 4, 0, 10);
    entry(&v[1], 2, 4, 0, 10);
    entry(&v[2], 3, 4, 0, 10);
    v[0].age_ms = 100;
    part(&f, 7, 1, 0, 1, v, 1);
    CHECK_EQ_INT(summary_apply(s, &f, 1000, err, sizeof err), 0);
    part(&f, 8, 1, 0, 1, v + 1, 2);
    CHECK_EQ_INT(summary_apply(s, &f, 1000, err, sizeof err), 0);
    summary_walk(s, 1250, walk_count, &w);
    CHECK_EQ_INT(w.n, 3);
    CHECK_EQ_INT(w.from7, 1);
    CHECK_EQ_INT(w.from8, 2);
    CHECK(w.age7 == 350);
    summary_free(s);
}

static void
t_rank_order(void)
{
    struct peer_entry v[6];

    entry(&v[0], 1, 1, 0, 50);   /* one slot free */
    entry(&v[1], 2, 4, 900, 50); /* four, loaded */
    entry(&v[2], 3, 4, 100, 0);  /* four, light, RTT unknown */
    entry(&v[3], 4, 4, 100, 70); /* four, light, measured */
    entry(&v[4], 5, 8, 0, 10);   /* eight, but not sharing */
    v[4].res.state = PEER_STATE_NOT_SHARING;
    entry(&v[5], 6, 0, 0, 10); /* full */
    rank_sort(v, 6);
    CHECK_EQ_INT(v[0].id[0], 4);
    CHECK_EQ_INT(v[1].id[0], 3);
    CHECK_EQ_INT(v[2].id[0], 2);
    CHECK_EQ_INT(v[3].id[0], 1);
    /* Those that cannot take work come last, by free slots then id. */
    CHECK_EQ_INT(v[4].id[0], 5);
    CHECK_EQ_INT(v[5].id[0], 6);
}

static void
t_rank_dedup(void)
{
    struct peer_entry v[5];
    size_t n, i;
    int seen3 = 0;

    entry(&v[0], 3, 1, 0, 10);
    v[0].age_ms = 900;
    entry(&v[1], 1, 1, 0, 10);
    entry(&v[2], 3, 2, 0, 10);
    v[2].age_ms = 100; /* the freshest of 3 */
    entry(&v[3], 2, 1, 0, 10);
    entry(&v[4], 3, 3, 0, 10);
    v[4].age_ms = 500;
    n = rank_dedup(v, 5);
    CHECK_EQ_INT(n, 3);
    for (i = 0; i < n; i++)
        if (v[i].id[0] == 3) {
            seen3++;
            CHECK_EQ_INT(v[i].res.slots_free, 2);
        }
    CHECK_EQ_INT(seen3, 1);
    CHECK_EQ_INT(rank_dedup(v, 1), 1);
    CHECK_EQ_INT(rank_dedup(v, 0), 0);
}

static void
t_rendezvous(void)
{
    char *names[4] = {"10.0.0.1:9700", "10.0.0.2:9700", "10.0.0.3:9700",
                      "10.0.0.4:9700"};
    char *three[3] = {"10.0.0.1:9700", "10.0.0.2:9700", "10.0.0.4:9700"};
    int order[4], order2[4], again[4], count[4] = {0}, moved = 0;
    uint8_t key[32];
    int i, k, seen;

    for (i = 0; i < 20000; i++) {
        memset(key, 0, sizeof key);
        memcpy(key, &i, sizeof i);
        rendezvous_order(key, sizeof key, names, 4, order);
        /* A permutation, and the same every time. */
        seen = 0;
        for (k = 0; k < 4; k++)
            seen |= 1 << order[k];
        CHECK_EQ_INT(seen, 15);
        rendezvous_order(key, sizeof key, names, 4, again);
        CHECK(memcmp(order, again, sizeof order) == 0);
        count[order[0]]++;
        /* Without the third supernode, a key keeps its first choice
         * unless that was the third; then it takes its second. */
        rendezvous_order(key, sizeof key, three, 3, order2);
        if (order[0] == 2) {
            int want = order[1] == 3 ? 2 : order[1];

            moved++;
            CHECK_EQ_INT(order2[0], want);
        } else
            CHECK_EQ_INT(order2[0], order[0] == 3 ? 2 : order[0]);
    }
    /* Even within 5 % (5,000 each). */
    for (k = 0; k < 4; k++)
        CHECK(count[k] > 4750 && count[k] < 5250);
    CHECK_EQ_INT(moved, count[2]);
}

static const struct test_case cases[] = {
    {"summary_parts", t_summary_parts},
    {"summary_distinct", t_summary_distinct},
    {"summary_refused", t_summary_refused},
    {"summary_bounds", t_summary_bounds},
    {"summary_expire_and_age", t_summary_expire_and_age},
    {"summary_walk", t_summary_walk},
    {"rank_order", t_rank_order},
    {"rank_dedup", t_rank_dedup},
    {"rendezvous", t_rendezvous},
};

TEST_MAIN(cases)
