/*
 * "Best first": the one order in which a supernode lists peers, in its
 * replies and in the summaries it sends to the rest of its federation.
 * A peer that can take work now comes first, then the one with the most
 * free slots, the lightest load and the shortest round trip; the node key
 * breaks ties so that the order is total and the same everywhere.
 */
#include <stdlib.h>
#include <string.h>

#include "supernode.h"

/* Can the peer take work now? */
static int
rank_usable(const struct peer_entry *e)
{
    return (e->res.state == PEER_STATE_AVAILABLE ||
            e->res.state == PEER_STATE_BUSY) &&
           e->res.slots_free > 0;
}

int
rank_compare(const void *va, const void *vb)
{
    const struct peer_entry *a = va, *b = vb;
    uint32_t ra, rb;

    if (rank_usable(a) != rank_usable(b))
        return rank_usable(a) ? -1 : 1;
    if (a->res.slots_free != b->res.slots_free)
        return a->res.slots_free > b->res.slots_free ? -1 : 1;
    if (a->res.load_milli != b->res.load_milli)
        return a->res.load_milli < b->res.load_milli ? -1 : 1;
    /* An unknown round trip (0) sorts after every measured one. */
    ra = a->rtt_us ? a->rtt_us : UINT32_MAX;
    rb = b->rtt_us ? b->rtt_us : UINT32_MAX;
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return memcmp(a->id, b->id, sizeof a->id);
}

void
rank_sort(struct peer_entry *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, rank_compare);
}

/* By node key, the freshest first. */
static int
rank_by_id(const void *va, const void *vb)
{
    const struct peer_entry *a = va, *b = vb;
    int c = memcmp(a->id, b->id, sizeof a->id);

    if (c != 0)
        return c;
    return a->age_ms < b->age_ms ? -1 : a->age_ms > b->age_ms;
}

size_t
rank_dedup(struct peer_entry *v, size_t n)
{
    size_t i, out = 0;

    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, rank_by_id);
    for (i = 0; i < n; i++)
        if (out == 0 || memcmp(v[out - 1].id, v[i].id, sizeof v[i].id) != 0)
            v[out++] = v[i];
    return out;
}
