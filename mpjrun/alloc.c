/*
 * Placement of a job's n ranks x r replicas on candidate peers.
 *
 * Candidates are grouped by host label (two peerd on one machine are one
 * host) and ranked by preference: known round-trip time ascending, then
 * free memory descending, then index.  A host ranks as its best candidate.
 * A host can hold at most cap(h) = min(free slots of h, n) processes, as
 * it holds at most one replica of each rank, so a placement exists iff
 * sum cap(h) >= n * r (which, since cap(h) <= n, implies r hosts).
 *
 * The placement is made in two steps.  First the strategy decides how many
 * processes x(h) <= cap(h) each host gets, summing to n * r: spread levels
 * them (the fewest per host, so the most hosts), concentrate fills hosts in
 * preference order.  Then the hosts, in preference order, each repeated
 * x(h) times, are dealt column by column: process q goes to replica q / n
 * of rank q % n.  A host's run is at most n consecutive positions, which
 * fall on n distinct ranks, so no rank gets one host twice (McNaughton's
 * wrap-around rule).  Within a host, the processes fill its candidates in
 * preference order.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpjrun.h"
#include "xmalloc.h"

#define ALLOC_LABEL_LEN (WIRE_MAX_LABEL + 1)

/* A candidate with free slots, with its sort keys. */
struct acand {
    size_t idx;
    uint64_t rtt; /* UINT64_MAX when unknown */
    uint64_t mem;
    const char *label;
    size_t pos; /* place in preference order */
};

/* One host: its candidates are byhost[first .. first + count). */
struct ahost {
    size_t first, count;
    size_t pref; /* preference position of its best candidate */
    uint64_t slots;
    int cap;
    int x; /* processes placed here */
};

/* Order candidates by preference: rtt up (unknown last), memory down,
 * index up. */
static int
alloc_cmp_pref(const void *a, const void *b)
{
    const struct acand *x = a, *y = b;

    if (x->rtt != y->rtt)
        return x->rtt < y->rtt ? -1 : 1;
    if (x->mem != y->mem)
        return x->mem > y->mem ? -1 : 1;
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    return 0;
}

/* Order candidates by host label, then by preference position. */
static int
alloc_cmp_host(const void *a, const void *b)
{
    const struct acand *x = *(const struct acand *const *)a;
    const struct acand *y = *(const struct acand *const *)b;
    int c;

    if ((c = strncmp(x->label, y->label, ALLOC_LABEL_LEN)) != 0)
        return c;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return 0;
}

/* Order hosts by the preference of their best candidate. */
static int
alloc_cmp_hostpref(const void *a, const void *b)
{
    const struct ahost *x = a, *y = b;

    if (x->pref != y->pref)
        return x->pref < y->pref ? -1 : 1;
    return 0;
}

/* Processes on all hosts if each holds at most level. */
static uint64_t
alloc_level_sum(const struct ahost *hosts, size_t nhosts, int level)
{
    uint64_t sum = 0;
    size_t i;

    for (i = 0; i < nhosts; i++)
        sum += (uint64_t)(hosts[i].cap < level ? hosts[i].cap : level);
    return sum;
}

/* Spread: the lowest level L such that hosts holding min(cap, L) reach
 * total; every host gets min(cap, L - 1) and the rest go one each to the
 * most preferred hosts that can take L. */
static void
alloc_spread(struct ahost *hosts, size_t nhosts, int n, uint64_t total)
{
    uint64_t have;
    int lo = 1, hi = n, mid, level;
    size_t i;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (alloc_level_sum(hosts, nhosts, mid) >= total)
            hi = mid;
        else
            lo = mid + 1;
    }
    level = lo;
    have = 0;
    for (i = 0; i < nhosts; i++) {
        hosts[i].x = hosts[i].cap < level - 1 ? hosts[i].cap : level - 1;
        have += (uint64_t)hosts[i].x;
    }
    for (i = 0; i < nhosts && have < total; i++)
        if (hosts[i].cap >= level) {
            hosts[i].x++;
            have++;
        }
}

/* Concentrate: fill hosts in preference order. */
static void
alloc_concentrate(struct ahost *hosts, size_t nhosts, uint64_t total)
{
    uint64_t left = total;
    size_t i;

    for (i = 0; i < nhosts; i++) {
        hosts[i].x = (uint64_t)hosts[i].cap < left ? hosts[i].cap : (int)left;
        left -= (uint64_t)hosts[i].x;
    }
}

/* Put replica set k (replica k of every rank) on a group of hosts of its
 * own, for every k, if the hosts allow: replica k of a sender feeds
 * replica k of every receiver, so with disjoint groups a host's loss
 * sends only its own set's receivers to another feeder, and a host's
 * failure never takes two replicas of any rank.  Hosts go to groups in preference order, round-robin for
 * spread (more hosts per set) or filling one group at a time for
 * concentrate; within a group, ranks are dealt round-robin over its hosts
 * (spread) or fill them in order (concentrate).  Returns 0 (and places
 * nothing) when no such grouping fits. */
static int
alloc_disjoint(const struct alloc_cand *cands, struct acand **byhost,
               const struct ahost *hosts, size_t nhosts, int n, int r,
               enum alloc_strategy strategy, int *slots)
{
    int *group, g, k, rank, placed;
    uint64_t *gslots;
    size_t i, c;
    int ok = 1;

    if (nhosts < (size_t)r)
        return 0;
    group = xcalloc(nhosts, sizeof *group);
    gslots = xcalloc((size_t)r, sizeof *gslots);
    for (i = 0; i < nhosts; i++)
        group[i] = -1;
    if (strategy == ALLOC_SPREAD) {
        for (i = 0; i < nhosts; i++) {
            group[i] = (int)(i % (size_t)r);
            gslots[group[i]] += hosts[i].slots;
        }
    } else {
        for (i = 0, g = 0; i < nhosts && g < r; i++) {
            group[i] = g;
            gslots[g] += hosts[i].slots;
            if (gslots[g] >= (uint64_t)n)
                g++;
        }
    }
    for (g = 0; g < r; g++)
        if (gslots[g] < (uint64_t)n)
            ok = 0;
    for (g = 0; ok && g < r; g++) {
        /* Free slots left on each candidate of the group's hosts. */
        size_t *hidx = xcalloc(nhosts, sizeof *hidx);
        size_t nh = 0, h;

        for (i = 0; i < nhosts; i++)
            if (group[i] == g)
                hidx[nh++] = i;
        rank = 0;
        /* spread: one rank per host in turn; concentrate: fill each */
        while (rank < n) {
            placed = 0;
            for (h = 0; h < nh && rank < n; h++) {
                const struct ahost *ho = &hosts[hidx[h]];
                int take = strategy == ALLOC_SPREAD ? 1 : n;

                for (c = 0; c < ho->count && take > 0 && rank < n; c++) {
                    size_t idx = byhost[ho->first + c]->idx;
                    uint32_t used = 0;

                    /* slots already given on this candidate */
                    for (k = 0; k < rank; k++)
                        if (slots[k * r + g] == (int)idx)
                            used++;
                    while (used < cands[idx].slots_free && take > 0 &&
                           rank < n) {
                        slots[rank * r + g] = (int)idx;
                        rank++;
                        used++;
                        take--;
                        placed = 1;
                    }
                }
            }
            if (!placed)
                break;
        }
        if (rank < n)
            ok = 0;
        free(hidx);
    }
    free(group);
    free(gslots);
    return ok;
}

int
alloc_plan(const struct alloc_cand *cands, size_t ncand, int n, int r,
           enum alloc_strategy strategy, struct alloc_plan *plan, char *err,
           size_t errlen)
{
    struct acand *ac = NULL, **byhost = NULL;
    struct ahost *hosts = NULL;
    size_t m = 0, nhosts = 0, i, j, k;
    uint64_t found = 0, capsum = 0, total;
    uint32_t used;
    int q, rc = -1;

    memset(plan, 0, sizeof *plan);
    if (n < 1 || n > WIRE_MAX_RANKS) {
        snprintf(err, errlen, "number of ranks must be 1 to %d, not %d",
                 WIRE_MAX_RANKS, n);
        return -1;
    }
    if (r < 1 || r > WIRE_MAX_REPLICAS) {
        snprintf(err, errlen, "number of replicas must be 1 to %d, not %d",
                 WIRE_MAX_REPLICAS, r);
        return -1;
    }
    if (ncand > INT_MAX) {
        snprintf(err, errlen, "too many candidates (%zu)", ncand);
        return -1;
    }
    total = (uint64_t)n * (uint64_t)r;

    /* Candidates with free slots, in preference order. */
    if (ncand > 0) {
        ac = xcalloc(ncand, sizeof *ac);
        byhost = xcalloc(ncand, sizeof *byhost);
        hosts = xcalloc(ncand, sizeof *hosts);
    }
    for (i = 0; i < ncand; i++) {
        if (cands[i].slots_free == 0)
            continue;
        ac[m].idx = i;
        ac[m].rtt = cands[i].rtt_us == 0 ? UINT64_MAX : cands[i].rtt_us;
        ac[m].mem = cands[i].mem_free;
        ac[m].label = cands[i].host;
        m++;
    }
    if (m > 0)
        qsort(ac, m, sizeof *ac, alloc_cmp_pref);
    for (i = 0; i < m; i++) {
        ac[i].pos = i;
        byhost[i] = &ac[i];
    }

    /* Group them by host; each group lists its candidates best first. */
    if (m > 0)
        qsort(byhost, m, sizeof *byhost, alloc_cmp_host);
    for (i = 0; i < m; i = j) {
        struct ahost *h = &hosts[nhosts++];

        h->first = i;
        h->pref = byhost[i]->pos;
        for (j = i; j < m && strncmp(byhost[j]->label, byhost[i]->label,
                                     ALLOC_LABEL_LEN) == 0;
             j++)
            h->slots += cands[byhost[j]->idx].slots_free;
        h->count = j - i;
        h->cap = h->slots < (uint64_t)n ? (int)h->slots : n;
        found += h->slots;
        capsum += (uint64_t)h->cap;
    }
    if (nhosts > 0)
        qsort(hosts, nhosts, sizeof *hosts, alloc_cmp_hostpref);

    if (capsum < total) {
        snprintf(err, errlen,
                 "need %llu slots on %d+ hosts, found %llu slots on %zu %s",
                 (unsigned long long)total, r, (unsigned long long)found,
                 nhosts, nhosts == 1 ? "host" : "hosts");
        goto out;
    }

    plan->n = n;
    plan->r = r;
    plan->slots = xreallocarray(NULL, (size_t)total, sizeof *plan->slots);
    /* Replica sets on hosts of their own when the network allows: an MPI
     * job then survives any one host (see alloc_disjoint). */
    if (r > 1 && alloc_disjoint(cands, byhost, hosts, nhosts, n, r, strategy,
                                plan->slots)) {
        rc = 0;
        goto out;
    }
    if (strategy == ALLOC_CONCENTRATE)
        alloc_concentrate(hosts, nhosts, total);
    else
        alloc_spread(hosts, nhosts, n, total);

    /* Deal the hosts' processes column by column. */
    q = 0;
    for (i = 0; i < nhosts; i++) {
        int left = hosts[i].x;

        for (k = 0; k < hosts[i].count && left > 0; k++) {
            size_t idx = byhost[hosts[i].first + k]->idx;

            for (used = 0; used < cands[idx].slots_free && left > 0; used++) {
                plan->slots[(q % n) * r + q / n] = (int)idx;
                q++;
                left--;
            }
        }
    }
    rc = 0;
out:
    free(hosts);
    free(byhost);
    free(ac);
    return rc;
}

void
alloc_plan_counts(const struct alloc_plan *plan, size_t ncand, uint32_t *counts)
{
    size_t i, total;

    memset(counts, 0, ncand * sizeof *counts);
    if (plan->slots == NULL)
        return;
    total = (size_t)plan->n * (size_t)plan->r;
    for (i = 0; i < total; i++)
        if (plan->slots[i] >= 0 && (size_t)plan->slots[i] < ncand)
            counts[plan->slots[i]]++;
}

void
alloc_plan_free(struct alloc_plan *plan)
{
    if (plan == NULL)
        return;
    free(plan->slots);
    plan->slots = NULL;
}
