/*
 * The network's recent past, for the dashboard's chart and its list of
 * departed peers: a ring of samples (peers, slots in use, jobs) taken
 * every HISTORY_EVERY_MS, and a ring of the peers that left or expired
 * lately, each with why.  Both bounded; nothing here grows with time.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "supernode.h"
#include "xmalloc.h"

#define HISTORY_GONE 128
#define HISTORY_GONE_KEEP_MS (5 * 60 * 1000)

struct history {
    struct history_sample samples[HISTORY_SAMPLES];
    size_t nsamples, next;
    uint64_t last_ms;
    struct history_gone gone[HISTORY_GONE];
    size_t ngone, gone_next;
};

struct history *
history_new(void)
{
    return xcalloc(1, sizeof(struct history));
}

void
history_free(struct history *h)
{
    free(h);
}

int
history_due(const struct history *h, uint64_t now_ms)
{
    return h->nsamples == 0 || now_ms - h->last_ms >= HISTORY_EVERY_MS;
}

void
history_add(struct history *h, const struct history_sample *s, uint64_t now_ms)
{
    h->samples[h->next] = *s;
    h->next = (h->next + 1) % HISTORY_SAMPLES;
    if (h->nsamples < HISTORY_SAMPLES)
        h->nsamples++;
    h->last_ms = now_ms;
}

size_t
history_samples(const struct history *h, struct history_sample *out, size_t max)
{
    size_t n = h->nsamples < max ? h->nsamples : max, i, first;

    first = (h->next + HISTORY_SAMPLES - n) % HISTORY_SAMPLES;
    for (i = 0; i < n; i++)
        out[i] = h->samples[(first + i) % HISTORY_SAMPLES];
    return n;
}

void
history_peer_gone(struct history *h, const struct reg_peer *p, const char *why,
                  uint64_t now_ms)
{
    struct history_gone *g = &h->gone[h->gone_next];

    memset(g, 0, sizeof *g);
    memcpy(g->id, reg_peer_id(p), sizeof g->id);
    snprintf(g->host, sizeof g->host, "%s", reg_peer_label(p));
    snprintf(g->addr, sizeof g->addr, "%s", reg_peer_addr(p));
    snprintf(g->why, sizeof g->why, "%s", why);
    g->res = *reg_peer_res(p);
    g->info = *reg_peer_info(p);
    g->gone_ms = now_ms;
    g->gone_unix = (uint64_t)time(NULL);
    h->gone_next = (h->gone_next + 1) % HISTORY_GONE;
    if (h->ngone < HISTORY_GONE)
        h->ngone++;
}

size_t
history_gone(const struct history *h, const struct registry *r, uint64_t now_ms,
             const struct history_gone **out, size_t max)
{
    size_t i, n = 0, at;

    /* Newest first; a peer back in the registry is not gone. */
    for (i = 0; i < h->ngone && n < max; i++) {
        at = (h->gone_next + HISTORY_GONE - 1 - i) % HISTORY_GONE;
        if (now_ms - h->gone[at].gone_ms > HISTORY_GONE_KEEP_MS)
            break;
        if (registry_find(r, h->gone[at].id) != NULL)
            continue;
        out[n++] = &h->gone[at];
    }
    return n;
}
