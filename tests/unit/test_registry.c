/*
 * The supernode's registry: insertion, replacement by node key, heartbeats
 * moving a peer to the young end, expiry strictly by last-heard order,
 * smoothed round-trip times, and the exported list.
 */
#include <stdlib.h>
#include <string.h>

#include "supernode.h"
#include "test.h"

static struct msg_register
reg_for(int n, const char *label)
{
    struct msg_register r;

    memset(&r, 0, sizeof r);
    memset(r.node_key, n, sizeof r.node_key);
    snprintf(r.host_label, sizeof r.host_label, "%s", label);
    r.res.cores = 2;
    r.res.slots_total = r.res.slots_free = 2;
    r.res.mem_total = 1000;
    r.res.mem_free = 500;
    r.res.state = PEER_STATE_AVAILABLE;
    return r;
}

/* Expiry callback: record owners in order. */
static void *expired[8];
static int nexpired;

static void
on_expire(struct reg_peer *p, void *owner, void *arg)
{
    (void)p;
    (void)arg;
    if (nexpired < 8)
        expired[nexpired++] = owner;
}

static void
t_insert_find(void)
{
    struct registry *r = registry_new();
    struct msg_register a = reg_for(1, "a"), b = reg_for(2, "b");
    struct reg_peer *pa, *pb;
    void *old = (void *)1;
    int oa, ob;

    pa = registry_upsert(r, &a, "127.0.0.2:1", &oa, 100, &old);
    CHECK(old == NULL);
    pb = registry_upsert(r, &b, "127.0.0.3:1", &ob, 100, &old);
    CHECK(old == NULL);
    CHECK_EQ_INT(registry_count(r), 2);
    CHECK(registry_find(r, a.node_key) == pa);
    CHECK(registry_find(r, b.node_key) == pb);
    CHECK_EQ_STR(reg_peer_label(pa), "a");
    CHECK_EQ_STR(reg_peer_addr(pb), "127.0.0.3:1");
    memset(a.node_key, 9, sizeof a.node_key);
    CHECK(registry_find(r, a.node_key) == NULL);
    registry_free(r);
}

static void
t_replace_same_key(void)
{
    struct registry *r = registry_new();
    struct msg_register a = reg_for(1, "a"), a2 = reg_for(1, "a-again");
    void *old;
    int first, second;

    registry_upsert(r, &a, "127.0.0.2:1", &first, 100, &old);
    registry_upsert(r, &a2, "127.0.0.2:2", &second, 200, &old);
    CHECK(old == &first);
    CHECK_EQ_INT(registry_count(r), 1);
    CHECK_EQ_STR(reg_peer_label(registry_find(r, a.node_key)), "a-again");
    /* The replaced entry is young again: an expiry between the two
     * registrations must not remove it. */
    nexpired = 0;
    CHECK_EQ_INT(registry_expire(r, 150, on_expire, NULL), 0);
    CHECK_EQ_INT(registry_count(r), 1);
    registry_free(r);
}

static void
t_expiry_order(void)
{
    struct registry *r = registry_new();
    struct msg_register a = reg_for(1, "a"), b = reg_for(2, "b"),
                        c = reg_for(3, "c");
    struct reg_peer *pa;
    void *old;
    int oa, ob, oc;

    pa = registry_upsert(r, &a, "x:1", &oa, 100, &old);
    registry_upsert(r, &b, "x:2", &ob, 200, &old);
    registry_upsert(r, &c, "x:3", &oc, 300, &old);
    /* a heartbeats: it is now the youngest. */
    registry_heartbeat(r, pa, &a.res, 400);
    nexpired = 0;
    CHECK_EQ_INT(registry_expire(r, 250, on_expire, NULL), 1);
    CHECK_EQ_INT(nexpired, 1);
    CHECK(expired[0] == &ob);
    CHECK_EQ_INT(registry_count(r), 2);
    CHECK(registry_find(r, b.node_key) == NULL);
    /* Cutoff is strict: last heard at 300 survives a cutoff of 300. */
    CHECK_EQ_INT(registry_expire(r, 300, on_expire, NULL), 0);
    CHECK_EQ_INT(registry_expire(r, 301, on_expire, NULL), 1);
    CHECK(expired[1] == &oc);
    CHECK_EQ_INT(registry_expire(r, 10000, on_expire, NULL), 1);
    CHECK(expired[2] == &oa);
    CHECK_EQ_INT(registry_count(r), 0);
    registry_free(r);
}

static void
t_remove(void)
{
    struct registry *r = registry_new();
    struct msg_register a = reg_for(1, "a"), b = reg_for(2, "b");
    struct reg_peer *pa;
    void *old;
    int oa, ob;

    pa = registry_upsert(r, &a, "x:1", &oa, 100, &old);
    registry_upsert(r, &b, "x:2", &ob, 100, &old);
    registry_remove(r, pa);
    CHECK_EQ_INT(registry_count(r), 1);
    CHECK(registry_find(r, a.node_key) == NULL);
    nexpired = 0;
    CHECK_EQ_INT(registry_expire(r, 1000, on_expire, NULL), 1);
    CHECK(expired[0] == &ob);
    registry_free(r);
}

static void
t_rtt_smoothing(void)
{
    struct registry *r = registry_new();
    struct msg_register a = reg_for(1, "a");
    struct reg_peer *p;
    void *old;
    int o;

    p = registry_upsert(r, &a, "x:1", &o, 1, &old);
    CHECK_EQ_INT(reg_peer_rtt(p), 0);
    registry_rtt_sample(p, 800);
    CHECK_EQ_INT(reg_peer_rtt(p), 800); /* first sample taken as is */
    registry_rtt_sample(p, 0);           /* a zero sample counts as 1 us */
    CHECK_EQ_INT(reg_peer_rtt(p), (800 * 7 + 1) / 8);
    registry_free(r);
}

static void
t_export(void)
{
    struct registry *r = registry_new();
    struct msg_register a = reg_for(1, "a"), b = reg_for(2, "b");
    struct msg_list_reply l;
    struct reg_peer *pb;
    void *old;
    int oa, ob, seen_a = 0, seen_b = 0;
    size_t i;

    registry_export(r, 0, &l);
    CHECK_EQ_INT(l.npeers, 0);
    CHECK(l.peers == NULL);

    registry_upsert(r, &a, "127.0.0.2:5", &oa, 1000, &old);
    pb = registry_upsert(r, &b, "127.0.0.3:6", &ob, 1500, &old);
    registry_rtt_sample(pb, 250);
    registry_export(r, 2000, &l);
    if (!CHECK_EQ_INT(l.npeers, 2))
        return;
    for (i = 0; i < l.npeers; i++) {
        if (strcmp(l.peers[i].host_label, "a") == 0) {
            seen_a = 1;
            CHECK_EQ_INT(l.peers[i].age_ms, 1000);
            CHECK_EQ_STR(l.peers[i].addr, "127.0.0.2:5");
            CHECK_MEM(l.peers[i].id, a.node_key, sizeof a.node_key);
            CHECK_EQ_INT(l.peers[i].res.mem_free, 500);
        } else {
            seen_b = 1;
            CHECK_EQ_INT(l.peers[i].age_ms, 500);
            CHECK_EQ_INT(l.peers[i].rtt_us, 250);
        }
    }
    CHECK(seen_a && seen_b);
    free(l.peers);
    registry_free(r);
}

static void
t_many(void)
{
    struct registry *r = registry_new();
    struct msg_register m = reg_for(0, "m");
    void *old;
    int i, owner;

    for (i = 0; i < 5000; i++) {
        memcpy(m.node_key, &i, sizeof i);
        registry_upsert(r, &m, "x:1", &owner, (uint64_t)i, &old);
        CHECK(old == NULL);
    }
    CHECK_EQ_INT(registry_count(r), 5000);
    CHECK_EQ_INT(registry_expire(r, 2500, NULL, NULL), 2500);
    CHECK_EQ_INT(registry_count(r), 2500);
    i = 2499;
    memcpy(m.node_key, &i, sizeof i);
    CHECK(registry_find(r, m.node_key) == NULL);
    i = 2500;
    memcpy(m.node_key, &i, sizeof i);
    CHECK(registry_find(r, m.node_key) != NULL);
    registry_free(r);
}

/* The generation (what gates the federation's summaries) moves with what
 * ranks a peer, not with the jitter of every heartbeat. */
static void
t_generation_ranked(void)
{
    struct registry *r = registry_new();
    struct msg_register a = reg_for(1, "a");
    struct resources res;
    struct reg_peer *p;
    uint64_t g;
    void *old;
    int o, i;

    a.res.mem_total = 16ull << 30;
    a.res.mem_free = 8ull << 30;
    a.res.load_milli = 500;
    p = registry_upsert(r, &a, "127.0.0.2:1", &o, 100, &old);
    g = registry_generation(r);
    res = a.res;
    /* Memory and load wander a little each heartbeat, and come back:
     * no change, however many heartbeats. */
    for (i = 0; i < 100; i++) {
        res.mem_free = (8ull << 30) + (uint64_t)(i % 7) * (10ull << 20);
        res.load_milli = 500 + (uint32_t)(i % 5) * 40;
        registry_heartbeat(r, p, &res, 200 + (uint64_t)i);
    }
    CHECK(registry_generation(r) == g);
    /* ... but the latest figures are kept. */
    CHECK(reg_peer_res(p)->load_milli == res.load_milli);
    /* A slot taken is a change at once. */
    res.load_milli = 500;
    res.mem_free = 8ull << 30;
    res.slots_free--;
    registry_heartbeat(r, p, &res, 400);
    CHECK(registry_generation(r) > g);
    g = registry_generation(r);
    /* Load drifting by small steps counts once it has moved a quarter of
     * a core from the last counted value (not from the last heartbeat). */
    for (i = 1; i <= 30; i++) {
        res.load_milli = 500 + (uint32_t)i * 10;
        registry_heartbeat(r, p, &res, 400 + (uint64_t)i);
        if (i < 25)
            CHECK(registry_generation(r) == g);
    }
    CHECK(registry_generation(r) == g + 1);
    g = registry_generation(r);
    /* Free memory by a sixteenth of the total (1 GiB here). */
    res.mem_free -= 900ull << 20;
    registry_heartbeat(r, p, &res, 500);
    CHECK(registry_generation(r) == g);
    res.mem_free -= 200ull << 20;
    registry_heartbeat(r, p, &res, 501);
    CHECK(registry_generation(r) == g + 1);
    /* A state change. */
    g = registry_generation(r);
    res.state = PEER_STATE_OWNER_BUSY;
    registry_heartbeat(r, p, &res, 502);
    CHECK(registry_generation(r) == g + 1);
    registry_free(r);
}

static const struct test_case cases[] = {
    {"insert and find", t_insert_find},
    {"same node key replaces the entry", t_replace_same_key},
    {"expiry follows last-heard order", t_expiry_order},
    {"remove", t_remove},
    {"rtt smoothing", t_rtt_smoothing},
    {"export", t_export},
    {"many peers", t_many},
    {"generation moves with what ranks a peer", t_generation_ranked},
};

TEST_MAIN(cases)
