/*
 * The ring of sealed outgoing frames (sealring.h).
 */
#include <stdlib.h>

#include "sealring.h"

void
sr_init(struct sealring *r, unsigned nslots, size_t slot)
{
    r->mem = NULL;
    r->slot = slot;
    r->nslots = nslots;
    r->next = r->used = 0;
}

int
sr_full(const struct sealring *r)
{
    return r->used == r->nslots;
}

uint8_t *
sr_take(struct sealring *r)
{
    uint8_t *p;

    if (sr_full(r))
        return NULL;
    if (r->mem == NULL && (r->mem = malloc(r->nslots * r->slot)) == NULL)
        return NULL;
    p = r->mem + (size_t)r->next * r->slot;
    r->next = (r->next + 1) % r->nslots;
    r->used++;
    return p;
}

int
sr_holds(const struct sealring *r, const uint8_t *p)
{
    return r->mem != NULL && p >= r->mem && p < r->mem + r->nslots * r->slot;
}

int
sr_give(struct sealring *r, const uint8_t *p)
{
    unsigned oldest;

    if (r->used == 0 || !sr_holds(r, p))
        return -1;
    oldest = (r->next + r->nslots - r->used) % r->nslots;
    if (p != r->mem + (size_t)oldest * r->slot)
        return -1;
    r->used--;
    return 0;
}

void
sr_clear(struct sealring *r)
{
    r->next = r->used = 0;
}

void
sr_free(struct sealring *r)
{
    free(r->mem);
    r->mem = NULL;
    sr_clear(r);
}
