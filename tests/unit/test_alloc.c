/*
 * Placement of ranks and replicas: distinct hosts for the replicas of a
 * rank, free slots never exceeded, spread and concentrate shapes, the
 * preference for short round trips and free memory, the exact refusal
 * lines, and feasibility checked against a brute-force search on many
 * small random instances.
 */
#include <stdlib.h>
#include <string.h>

#include "mpjrun.h"
#include "test.h"

#define MAXC 16

/* A candidate on its own host label. */
static struct alloc_cand
cand(const char *host, uint32_t slots, uint32_t rtt, uint64_t mem)
{
    struct alloc_cand c;

    memset(&c, 0, sizeof c);
    snprintf(c.host, sizeof c.host, "%s", host);
    c.slots_free = slots;
    c.rtt_us = rtt;
    c.mem_free = mem;
    return c;
}

/* Check every rule a plan must follow; returns 1 if it does. */
static int
plan_valid(const struct alloc_cand *c, size_t nc, const struct alloc_plan *p,
           int n, int r)
{
    uint32_t counts[MAXC];
    int rank, i, j, ok = 1;

    if (!CHECK(p->slots != NULL) || !CHECK_EQ_INT(p->n, n) ||
        !CHECK_EQ_INT(p->r, r))
        return 0;
    for (i = 0; i < n * r; i++)
        if (!CHECK(p->slots[i] >= 0 && (size_t)p->slots[i] < nc))
            return 0;
    for (rank = 0; rank < n; rank++)
        for (i = 0; i < r; i++)
            for (j = i + 1; j < r; j++)
                ok &= CHECK(strcmp(c[p->slots[rank * r + i]].host,
                                   c[p->slots[rank * r + j]].host) != 0);
    alloc_plan_counts(p, nc, counts);
    for (i = 0; i < (int)nc; i++)
        ok &= CHECK(counts[i] <= c[i].slots_free);
    return ok;
}

/* Plan, expecting success, and check it; counts filled. */
static int
plan_ok(const struct alloc_cand *c, size_t nc, int n, int r,
        enum alloc_strategy st, struct alloc_plan *p, uint32_t *counts)
{
    char err[200] = "";
    int rc;

    rc = alloc_plan(c, nc, n, r, st, p, err, sizeof err);
    if (!CHECK_EQ_INT(rc, 0)) {
        fprintf(stderr, "  err: %s\n", err);
        return 0;
    }
    if (!plan_valid(c, nc, p, n, r))
        return 0;
    alloc_plan_counts(p, nc, counts);
    return 1;
}

/* Plan, expecting the refusal line want. */
static void
plan_refused(const struct alloc_cand *c, size_t nc, int n, int r,
             enum alloc_strategy st, const char *want)
{
    struct alloc_plan p;
    char err[200] = "";

    memset(&p, 0xa5, sizeof p);
    CHECK_EQ_INT(alloc_plan(c, nc, n, r, st, &p, err, sizeof err), -1);
    CHECK(p.slots == NULL);
    if (want != NULL)
        CHECK_EQ_STR(err, want);
    CHECK(strchr(err, '\n') == NULL && err[0] != '\0');
    alloc_plan_free(&p);
}

static void
four_hosts(struct alloc_cand *c, uint32_t slots)
{
    c[0] = cand("a", slots, 100, 1000);
    c[1] = cand("b", slots, 200, 1000);
    c[2] = cand("c", slots, 300, 1000);
    c[3] = cand("d", slots, 400, 1000);
}

static void
t_spread_one_per_host(void)
{
    struct alloc_cand c[4];
    struct alloc_plan p;
    uint32_t k[4];
    int i;

    four_hosts(c, 2);
    if (!plan_ok(c, 4, 4, 1, ALLOC_SPREAD, &p, k))
        return;
    for (i = 0; i < 4; i++)
        CHECK_EQ_INT(k[i], 1);
    alloc_plan_free(&p);
    CHECK(p.slots == NULL);
}

static void
t_spread_r2_fills_all(void)
{
    struct alloc_cand c[4];
    struct alloc_plan p;
    uint32_t k[4];
    int i;

    four_hosts(c, 2);
    if (!plan_ok(c, 4, 4, 2, ALLOC_SPREAD, &p, k))
        return;
    for (i = 0; i < 4; i++)
        CHECK_EQ_INT(k[i], 2);
    alloc_plan_free(&p);
}

static void
t_spread_levels(void)
{
    struct alloc_cand c[3];
    struct alloc_plan p;
    uint32_t k[3];

    /* One big host and two small: spread levels to 2,1,1 rather than
     * putting everything on the big one. */
    c[0] = cand("big", 8, 100, 1000);
    c[1] = cand("s1", 1, 200, 1000);
    c[2] = cand("s2", 1, 300, 1000);
    if (plan_ok(c, 3, 4, 1, ALLOC_SPREAD, &p, k)) {
        CHECK_EQ_INT(k[0], 2);
        CHECK_EQ_INT(k[1], 1);
        CHECK_EQ_INT(k[2], 1);
        alloc_plan_free(&p);
    }
    /* Fewer processes than hosts: the best hosts, one each. */
    c[0] = cand("x", 4, 300, 1000);
    c[1] = cand("y", 4, 100, 1000);
    c[2] = cand("z", 4, 200, 1000);
    if (plan_ok(c, 3, 2, 1, ALLOC_SPREAD, &p, k)) {
        CHECK_EQ_INT(k[0], 0);
        CHECK_EQ_INT(k[1], 1);
        CHECK_EQ_INT(k[2], 1);
        alloc_plan_free(&p);
    }
}

static void
t_concentrate_fills(void)
{
    struct alloc_cand c[4];
    struct alloc_plan p;
    uint32_t k[4];

    four_hosts(c, 2);
    if (plan_ok(c, 4, 4, 1, ALLOC_CONCENTRATE, &p, k)) {
        CHECK_EQ_INT(k[0], 2);
        CHECK_EQ_INT(k[1], 2);
        CHECK_EQ_INT(k[2], 0);
        CHECK_EQ_INT(k[3], 0);
        /* Neighbouring ranks share a host. */
        CHECK_EQ_INT(p.slots[0], 0);
        CHECK_EQ_INT(p.slots[1], 0);
        CHECK_EQ_INT(p.slots[2], 1);
        CHECK_EQ_INT(p.slots[3], 1);
        alloc_plan_free(&p);
    }
    /* Replicas force a second host even when the first has room. */
    four_hosts(c, 8);
    if (plan_ok(c, 4, 2, 2, ALLOC_CONCENTRATE, &p, k)) {
        CHECK_EQ_INT(k[0], 2);
        CHECK_EQ_INT(k[1], 2);
        CHECK_EQ_INT(k[2], 0);
        CHECK_EQ_INT(k[3], 0);
        alloc_plan_free(&p);
    }
    /* The same job spread uses all four hosts. */
    if (plan_ok(c, 4, 2, 2, ALLOC_SPREAD, &p, k)) {
        CHECK_EQ_INT(k[0] + k[1] + k[2] + k[3], 4);
        CHECK(k[0] == 1 && k[1] == 1 && k[2] == 1 && k[3] == 1);
        alloc_plan_free(&p);
    }
}

static void
t_same_host_label(void)
{
    struct alloc_cand c[3];
    struct alloc_plan p;
    uint32_t k[3];
    int i;

    /* Two peerd on machine m1 are one host. */
    c[0] = cand("m1", 2, 100, 1000);
    c[1] = cand("m1", 2, 100, 1000);
    c[2] = cand("m2", 2, 300, 1000);
    if (plan_ok(c, 3, 2, 2, ALLOC_SPREAD, &p, k)) {
        CHECK_EQ_INT(k[0] + k[1], 2);
        CHECK_EQ_INT(k[2], 2);
        for (i = 0; i < 2; i++)
            CHECK(p.slots[i * 2] == 2 || p.slots[i * 2 + 1] == 2);
        alloc_plan_free(&p);
    }
    plan_refused(c, 2, 1, 2, ALLOC_SPREAD,
                 "need 2 slots on 2+ hosts, found 4 slots on 1 host");
    plan_refused(c, 3, 3, 2, ALLOC_SPREAD,
                 "need 6 slots on 2+ hosts, found 6 slots on 2 hosts");
}

static void
t_rtt_preference(void)
{
    struct alloc_cand c[4];
    struct alloc_plan p;
    uint32_t k[4];

    c[0] = cand("u", 1, 0, 1000); /* unknown: last */
    c[1] = cand("v", 1, 300, 1000);
    c[2] = cand("w", 1, 100, 1000);
    c[3] = cand("x", 1, 200, 1000);
    if (plan_ok(c, 4, 1, 1, ALLOC_SPREAD, &p, k)) {
        CHECK_EQ_INT(p.slots[0], 2);
        alloc_plan_free(&p);
    }
    if (plan_ok(c, 4, 3, 1, ALLOC_CONCENTRATE, &p, k)) {
        CHECK_EQ_INT(k[0], 0);
        CHECK_EQ_INT(p.slots[0], 2);
        CHECK_EQ_INT(p.slots[1], 3);
        CHECK_EQ_INT(p.slots[2], 1);
        alloc_plan_free(&p);
    }
    if (plan_ok(c, 4, 2, 2, ALLOC_SPREAD, &p, k)) {
        CHECK(k[0] == 1 && k[1] == 1 && k[2] == 1 && k[3] == 1);
        /* Replica sets on disjoint hosts, dealt round-robin in preference
         * order (w, x, v, u): set 0, the masters, gets w and v. */
        CHECK_EQ_INT(p.slots[0], 2);
        CHECK_EQ_INT(p.slots[2], 1);
        CHECK_EQ_INT(p.slots[1], 3);
        CHECK_EQ_INT(p.slots[3], 0);
        alloc_plan_free(&p);
    }
}

static void
t_memory_preference(void)
{
    struct alloc_cand c[4];
    struct alloc_plan p;
    uint32_t k[4];

    c[0] = cand("a", 4, 100, 1000);
    c[1] = cand("b", 4, 100, 4000);
    c[2] = cand("c", 4, 100, 2000);
    c[3] = cand("d", 4, 50, 10);
    if (plan_ok(c, 4, 3, 1, ALLOC_SPREAD, &p, k)) {
        CHECK_EQ_INT(p.slots[0], 3); /* round trip first */
        CHECK_EQ_INT(p.slots[1], 1); /* then memory */
        CHECK_EQ_INT(p.slots[2], 2);
        CHECK_EQ_INT(k[0], 0);
        alloc_plan_free(&p);
    }
    /* Equal on both: the lower index. */
    c[0] = cand("a", 1, 100, 1000);
    c[1] = cand("b", 1, 100, 1000);
    if (plan_ok(c, 2, 1, 1, ALLOC_CONCENTRATE, &p, k)) {
        CHECK_EQ_INT(p.slots[0], 0);
        alloc_plan_free(&p);
    }
}

static void
t_within_host_preference(void)
{
    struct alloc_cand c[3];
    struct alloc_plan p;
    uint32_t k[3];

    c[0] = cand("m", 2, 200, 1000);
    c[1] = cand("m", 2, 100, 1000);
    c[2] = cand("n", 2, 500, 1000);
    if (plan_ok(c, 3, 2, 1, ALLOC_CONCENTRATE, &p, k)) {
        CHECK_EQ_INT(k[1], 2);
        CHECK_EQ_INT(k[0], 0);
        alloc_plan_free(&p);
    }
    if (plan_ok(c, 3, 3, 1, ALLOC_CONCENTRATE, &p, k)) {
        CHECK_EQ_INT(k[1], 2);
        CHECK_EQ_INT(k[0], 1);
        CHECK_EQ_INT(k[2], 0);
        alloc_plan_free(&p);
    }
}

static void
t_slots_respected(void)
{
    struct alloc_cand c[3];
    struct alloc_plan p;
    uint32_t k[3];

    c[0] = cand("a", 1, 10, 1000);
    c[1] = cand("b", 0, 5, 1000); /* full: never used */
    c[2] = cand("c", 5, 20, 1000);
    if (plan_ok(c, 3, 6, 1, ALLOC_CONCENTRATE, &p, k)) {
        CHECK_EQ_INT(k[0], 1);
        CHECK_EQ_INT(k[1], 0);
        CHECK_EQ_INT(k[2], 5);
        alloc_plan_free(&p);
    }
    if (plan_ok(c, 3, 6, 1, ALLOC_SPREAD, &p, k)) {
        CHECK_EQ_INT(k[1], 0);
        alloc_plan_free(&p);
    }
    plan_refused(c, 3, 7, 1, ALLOC_SPREAD,
                 "need 7 slots on 1+ hosts, found 6 slots on 2 hosts");
}

static void
t_error_lines(void)
{
    struct alloc_cand c[3];

    c[0] = cand("a", 2, 10, 1000);
    c[1] = cand("b", 2, 20, 1000);
    c[2] = cand("c", 2, 30, 1000);
    plan_refused(c, 3, 7, 1, ALLOC_SPREAD,
                 "need 7 slots on 1+ hosts, found 6 slots on 3 hosts");
    plan_refused(c, 3, 7, 1, ALLOC_CONCENTRATE,
                 "need 7 slots on 1+ hosts, found 6 slots on 3 hosts");
    plan_refused(c, 3, 1, 4, ALLOC_SPREAD,
                 "need 4 slots on 4+ hosts, found 6 slots on 3 hosts");
    c[0] = cand("solo", 5, 10, 1000);
    c[1] = cand("solo", 5, 20, 1000);
    plan_refused(c, 2, 4, 2, ALLOC_SPREAD,
                 "need 8 slots on 2+ hosts, found 10 slots on 1 host");
    plan_refused(c, 2, 4, 2, ALLOC_CONCENTRATE,
                 "need 8 slots on 2+ hosts, found 10 slots on 1 host");
}

static void
t_zero_candidates(void)
{
    struct alloc_cand c[2];

    plan_refused(NULL, 0, 4, 1, ALLOC_SPREAD,
                 "need 4 slots on 1+ hosts, found 0 slots on 0 hosts");
    c[0] = cand("a", 0, 10, 1000);
    c[1] = cand("b", 0, 10, 1000);
    plan_refused(c, 2, 2, 2, ALLOC_CONCENTRATE,
                 "need 4 slots on 2+ hosts, found 0 slots on 0 hosts");
}

static void
t_invalid_sizes(void)
{
    struct alloc_cand c[2];
    struct alloc_plan p;
    char err[200];

    c[0] = cand("a", 100, 10, 1000);
    c[1] = cand("b", 100, 10, 1000);
    plan_refused(c, 2, 0, 1, ALLOC_SPREAD, NULL);
    plan_refused(c, 2, -3, 1, ALLOC_SPREAD, NULL);
    plan_refused(c, 2, 1, 0, ALLOC_SPREAD, NULL);
    plan_refused(c, 2, 1, WIRE_MAX_REPLICAS + 1, ALLOC_SPREAD, NULL);
    plan_refused(c, 2, WIRE_MAX_RANKS + 1, 1, ALLOC_SPREAD, NULL);
    alloc_plan(c, 2, 0, 1, ALLOC_SPREAD, &p, err, sizeof err);
    CHECK_CONTAINS(err, "ranks");
    alloc_plan(c, 2, 1, 0, ALLOC_SPREAD, &p, err, sizeof err);
    CHECK_CONTAINS(err, "replicas");
    alloc_plan_free(NULL);
}

/* The smallest generator that will do, for repeatable instances. */
static uint32_t rng_state = 12345;

static uint32_t
rng(uint32_t bound)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state % bound;
}

static int brute(const struct alloc_cand *, size_t, uint32_t *, int, int, int);

/* Choose replica depth of rank k, then the rest. */
static int
brute_rank(const struct alloc_cand *c, size_t nc, uint32_t *left, int k, int n,
           int r, int *pick, int depth)
{
    size_t i;
    int j, clash;

    if (depth == r)
        return brute(c, nc, left, k + 1, n, r);
    for (i = depth == 0 ? 0 : (size_t)pick[depth - 1] + 1; i < nc; i++) {
        if (left[i] == 0)
            continue;
        clash = 0;
        for (j = 0; j < depth; j++)
            if (strcmp(c[pick[j]].host, c[i].host) == 0)
                clash = 1;
        if (clash)
            continue;
        pick[depth] = (int)i;
        left[i]--;
        if (brute_rank(c, nc, left, k, n, r, pick, depth + 1)) {
            left[i]++;
            return 1;
        }
        left[i]++;
    }
    return 0;
}

/* Can ranks k..n-1 each get r candidates on distinct hosts?  Replicas of
 * a rank are interchangeable, so they take increasing indices. */
static int
brute(const struct alloc_cand *c, size_t nc, uint32_t *left, int k, int n,
      int r)
{
    int pick[4];

    if (k == n)
        return 1;
    return brute_rank(c, nc, left, k, n, r, pick, 0);
}

/* Hosts used by a plan, and hosts with a free slot. */
static int
distinct_hosts(const struct alloc_cand *c, size_t nc, const uint32_t *use)
{
    size_t i, j;
    int d = 0, seen;

    for (i = 0; i < nc; i++) {
        if (use[i] == 0)
            continue;
        seen = 0;
        for (j = 0; j < i; j++)
            if (use[j] > 0 && strcmp(c[i].host, c[j].host) == 0)
                seen = 1;
        d += !seen;
    }
    return d;
}

/* Is candidate a preferred to b: known and shorter round trip, then more
 * memory, then lower index? */
static int
preferred(const struct alloc_cand *c, size_t a, size_t b)
{
    uint64_t ra = c[a].rtt_us ? c[a].rtt_us : UINT64_MAX;
    uint64_t rb = c[b].rtt_us ? c[b].rtt_us : UINT64_MAX;

    if (ra != rb)
        return ra < rb;
    if (c[a].mem_free != c[b].mem_free)
        return c[a].mem_free > c[b].mem_free;
    return a < b;
}

/* Shape of a plan per host label ("a".."d"): processes, capacity, and the
 * host's best candidate (-1: no free slot). */
static void
host_shape(const struct alloc_cand *c, size_t nc, const uint32_t *k, int n,
           int *x, int *cap, int *best)
{
    size_t i;
    int h;

    for (h = 0; h < 4; h++) {
        x[h] = cap[h] = 0;
        best[h] = -1;
    }
    for (i = 0; i < nc; i++) {
        h = c[i].host[0] - 'a';
        x[h] += (int)k[i];
        cap[h] += (int)c[i].slots_free;
        if (c[i].slots_free > 0 &&
            (best[h] < 0 || preferred(c, i, (size_t)best[h])))
            best[h] = (int)i;
    }
    for (h = 0; h < 4; h++)
        if (cap[h] > n)
            cap[h] = n;
}

/* Spread: no host has two more than another unless that one is full.
 * Concentrate: a host more preferred than a used host is full. */
static void
check_shape(const struct alloc_cand *c, size_t nc, const uint32_t *k, int n,
            enum alloc_strategy st)
{
    int x[4], cap[4], best[4], a, b;

    host_shape(c, nc, k, n, x, cap, best);
    for (a = 0; a < 4; a++)
        for (b = 0; b < 4; b++) {
            if (best[a] < 0 || best[b] < 0 || a == b)
                continue;
            if (st == ALLOC_SPREAD && x[a] >= x[b] + 2)
                CHECK_EQ_INT(x[b], cap[b]);
            if (st == ALLOC_CONCENTRATE && x[b] > 0 &&
                preferred(c, (size_t)best[a], (size_t)best[b]))
                CHECK_EQ_INT(x[a], cap[a]);
        }
}

/* Do the replica sets of a plan use disjoint hosts? */
static int
sets_disjoint(const struct alloc_cand *c, const struct alloc_plan *p)
{
    int a, b, i, j;

    for (a = 0; a < p->r; a++)
        for (b = a + 1; b < p->r; b++)
            for (i = 0; i < p->n; i++)
                for (j = 0; j < p->n; j++)
                    if (strcmp(c[p->slots[i * p->r + a]].host,
                               c[p->slots[j * p->r + b]].host) == 0)
                        return 0;
    return 1;
}

static void
t_random_vs_brute_force(void)
{
    static const char *labels[] = {"a", "b", "c", "d"};
    struct alloc_cand c[6];
    struct alloc_plan p, p2;
    uint32_t left[6], k[6], freec[6];
    int iter, n, r, st, feasible, rc, used, avail, i, yes = 0, no = 0;
    size_t nc, j;
    char err[200];

    for (iter = 0; iter < 2000; iter++) {
        nc = 1 + rng(6);
        for (j = 0; j < nc; j++) {
            c[j] = cand(labels[rng(4)], rng(4), rng(3) * 100, rng(3));
            left[j] = c[j].slots_free;
            freec[j] = c[j].slots_free;
        }
        n = 1 + (int)rng(4);
        r = 1 + (int)rng(3);
        feasible = brute(c, nc, left, 0, n, r);
        feasible ? yes++ : no++;
        for (st = 0; st < 2; st++) {
            rc = alloc_plan(c, nc, n, r, (enum alloc_strategy)st, &p, err,
                            sizeof err);
            if (!CHECK_EQ_INT(rc, feasible ? 0 : -1)) {
                fprintf(stderr, "  iteration %d: n=%d r=%d err=%s\n", iter, n,
                        r, rc ? err : "");
                alloc_plan_free(&p);
                return;
            }
            if (rc != 0) {
                CHECK(strncmp(err, "need ", 5) == 0);
                continue;
            }
            if (!plan_valid(c, nc, &p, n, r))
                return;
            /* Replica sets on hosts of their own: the placement rule for
             * replicated jobs when it fits; the shapes below are those of
             * the general placement, used otherwise. */
            alloc_plan_counts(&p, nc, k);
            if (r > 1 && sets_disjoint(c, &p)) {
                CHECK(alloc_plan(c, nc, n, r, (enum alloc_strategy)st, &p2,
                                 err, sizeof err) == 0);
                for (i = 0; i < n * r; i++)
                    CHECK_EQ_INT(p.slots[i], p2.slots[i]);
                alloc_plan_free(&p2);
                alloc_plan_free(&p);
                continue;
            }
            /* Spread uses as many hosts as there are processes or hosts. */
            used = distinct_hosts(c, nc, k);
            avail = distinct_hosts(c, nc, freec);
            if (st == ALLOC_SPREAD)
                CHECK_EQ_INT(used, n * r < avail ? n * r : avail);
            else
                CHECK(used <= avail);
            check_shape(c, nc, k, n, (enum alloc_strategy)st);
            /* The same input, the same plan. */
            CHECK_EQ_INT(alloc_plan(c, nc, n, r, (enum alloc_strategy)st, &p2,
                                    err, sizeof err),
                         0);
            for (i = 0; i < n * r; i++)
                CHECK_EQ_INT(p.slots[i], p2.slots[i]);
            alloc_plan_free(&p2);
            alloc_plan_free(&p);
        }
    }
    /* Both answers are well represented. */
    CHECK(yes > 400 && no > 400);
}

static void
t_large(void)
{
    struct alloc_cand c[MAXC];
    struct alloc_plan p;
    uint32_t k[MAXC];
    char name[8];
    int i;

    for (i = 0; i < MAXC; i++) {
        snprintf(name, sizeof name, "h%d", i / 2);
        c[i] = cand(name, 300, (uint32_t)(i * 10), 1000);
    }
    /* 8 hosts of 600 slots, capped at n each: 8 * 500 >= 500 * 8. */
    if (plan_ok(c, MAXC, 500, 8, ALLOC_SPREAD, &p, k)) {
        for (i = 0; i < MAXC; i += 2)
            CHECK_EQ_INT(k[i] + k[i + 1], 500);
        alloc_plan_free(&p);
    }
    plan_refused(c, MAXC, 601, 8, ALLOC_SPREAD,
                 "need 4808 slots on 8+ hosts, found 4800 slots on 8 hosts");
}

/* Replicated jobs: each replica set on hosts of its own when the hosts
 * allow, so that losing any one host leaves a whole set. */
static void
t_sets_on_disjoint_hosts(void)
{
    struct alloc_cand c[4];
    struct alloc_plan p;
    uint32_t k[4];
    int st;

    c[0] = cand("a", 3, 100, 1000);
    c[1] = cand("b", 3, 200, 1000);
    c[2] = cand("c", 3, 300, 1000);
    c[3] = cand("d", 3, 400, 1000);
    for (st = 0; st < 2; st++)
        if (plan_ok(c, 4, 3, 2, (enum alloc_strategy)st, &p, k)) {
            CHECK(sets_disjoint(c, &p));
            alloc_plan_free(&p);
        }
    /* Two hosts of 3 slots, 3 ranks x 2: one host per set. */
    if (plan_ok(c, 2, 3, 2, ALLOC_SPREAD, &p, k)) {
        CHECK(sets_disjoint(c, &p));
        CHECK(k[0] == 3 && k[1] == 3);
        alloc_plan_free(&p);
    }
    /* Too few slots for disjoint sets: still placed, replicas of a rank
     * on distinct hosts (the general placement). */
    c[0] = cand("a", 2, 100, 1000);
    c[1] = cand("b", 2, 200, 1000);
    c[2] = cand("c", 2, 300, 1000);
    if (plan_ok(c, 3, 3, 2, ALLOC_SPREAD, &p, k)) {
        CHECK(!sets_disjoint(c, &p));
        alloc_plan_free(&p);
    }
}

static const struct test_case cases[] = {
    {"replica sets on disjoint hosts", t_sets_on_disjoint_hosts},
    {"spread_one_per_host", t_spread_one_per_host},
    {"spread_r2_fills_all", t_spread_r2_fills_all},
    {"spread_levels", t_spread_levels},
    {"concentrate_fills", t_concentrate_fills},
    {"same_host_label", t_same_host_label},
    {"rtt_preference", t_rtt_preference},
    {"memory_preference", t_memory_preference},
    {"within_host_preference", t_within_host_preference},
    {"slots_respected", t_slots_respected},
    {"error_lines", t_error_lines},
    {"zero_candidates", t_zero_candidates},
    {"invalid_sizes", t_invalid_sizes},
    {"random_vs_brute_force", t_random_vs_brute_force},
    {"large", t_large},
};

TEST_MAIN(cases)
