/*
 * Tables of objects behind integer handles: derived datatypes and user
 * operations.  A handle is
 *
 *     kind | generation << 16 | (0x1000 + slot)
 *
 * kind (the top byte) tells the tables apart; a slot's generation counts
 * its reuses, so a handle freed earlier, or forged, matches nothing
 * rather than someone else's object.  The search for a free slot rotates
 * over the table, so that generations wrap as late as possible.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define H_KIND_MASK 0xff000000u
#define H_GEN_SHIFT 16
#define H_GEN_MASK 0xffu
#define H_SLOT_BASE 0x1000u
#define H_SLOTS_MAX 0xf000u /* slot + base stays within 16 bits */

/* The slot a handle of this table names (live or not), or -1. */
static long
slot_of(const struct mpii_handles *t, uint32_t h)
{
    uint32_t low = h & 0xffffu, idx;

    if ((h & H_KIND_MASK) != t->kind || low < H_SLOT_BASE)
        return -1;
    idx = low - H_SLOT_BASE;
    if (idx >= t->n || t->obj[idx] == NULL ||
        t->gen[idx] != ((h >> H_GEN_SHIFT) & H_GEN_MASK))
        return -1;
    return (long)idx;
}

void *
mpii_handle_get(const struct mpii_handles *t, uint32_t h)
{
    long i = slot_of(t, h);

    return i < 0 ? NULL : t->obj[i];
}

int
mpii_handle_put(struct mpii_handles *t, void *obj, uint32_t *h)
{
    void **no;
    uint8_t *ng;
    size_t i, idx, ncap;

    for (i = 0; i < t->n; i++) {
        idx = (t->next + i) % t->n;
        if (t->obj[idx] == NULL)
            goto found;
    }
    if (t->n == H_SLOTS_MAX)
        return MPI_ERR_NO_MEM;
    ncap = t->n == 0 ? 16 : t->n * 2;
    if (ncap > H_SLOTS_MAX)
        ncap = H_SLOTS_MAX;
    if ((no = realloc(t->obj, ncap * sizeof *no)) == NULL)
        return MPI_ERR_NO_MEM;
    t->obj = no;
    if ((ng = realloc(t->gen, ncap * sizeof *ng)) == NULL)
        return MPI_ERR_NO_MEM;
    t->gen = ng;
    memset(t->obj + t->n, 0, (ncap - t->n) * sizeof *no);
    memset(t->gen + t->n, 0, (ncap - t->n) * sizeof *ng);
    idx = t->n;
    t->n = ncap;
found:
    t->obj[idx] = obj;
    t->next = idx + 1;
    *h = t->kind | (uint32_t)t->gen[idx] << H_GEN_SHIFT |
         (H_SLOT_BASE + (uint32_t)idx);
    return MPI_SUCCESS;
}

void *
mpii_handle_take(struct mpii_handles *t, uint32_t h)
{
    long i = slot_of(t, h);
    void *obj;

    if (i < 0)
        return NULL;
    obj = t->obj[i];
    t->obj[i] = NULL;
    t->gen[i] = (uint8_t)(t->gen[i] + 1);
    return obj;
}

void
mpii_handles_fini(struct mpii_handles *t, void (*destroy)(void *))
{
    size_t i;

    for (i = 0; i < t->n; i++)
        if (t->obj[i] != NULL)
            destroy(t->obj[i]);
    free(t->obj);
    free(t->gen);
    t->obj = NULL;
    t->gen = NULL;
    t->n = t->next = 0;
}
