/*
 * The peer's slots and the holds on them.  A reservation is a lease: it
 * goes back by itself unless a launch confirms it in time.  Staging
 * renews it (reserve_renew): a requester sending the job's files is at
 * work towards its launch, and a large file on a slow or loaded link
 * took longer than the lease (a 100 MB file under the sanitizers in CI:
 * "reservation of 1 slot expired without a launch", then "no
 * reservation for this job here").  Everything
 * runs on the one event loop, so a check and a take are one step and two
 * coordinators racing for the last slots can never both get them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

uint32_t
reserve_free(const struct peerd *pd)
{
    const struct hold *h;
    uint32_t used = 0;

    for (h = pd->holds; h != NULL; h = h->next)
        used += h->slots;
    return used >= (uint32_t)pd->slots_total ? 0
                                             : (uint32_t)pd->slots_total - used;
}

struct hold *
reserve_find(struct peerd *pd, const uint8_t job[WIRE_JOB_ID_LEN])
{
    struct hold *h;

    for (h = pd->holds; h != NULL; h = h->next)
        if (memcmp(h->job, job, WIRE_JOB_ID_LEN) == 0)
            return h;
    return NULL;
}

int
reserve_take(struct peerd *pd, const uint8_t job[WIRE_JOB_ID_LEN], uint32_t n,
             uint32_t lease_ms, struct svc_conn *owner, uint32_t *free_now,
             char *why, size_t whylen)
{
    struct hold *h;
    uint32_t avail = reserve_free(pd);

    *free_now = avail;
    if (pd->owner != NULL && !owner_welcome(pd, why, whylen))
        return -1;
    if (n == 0 || n > avail) {
        snprintf(why, whylen, "%u slot%s asked, %u free", n, n == 1 ? "" : "s",
                 avail);
        return -1;
    }
    h = reserve_find(pd, job);
    if (h != NULL && h->owner != owner) {
        snprintf(why, whylen, "job id already in use");
        return -1;
    }
    if (h != NULL && h->expires_ms == 0) {
        snprintf(why, whylen, "job already launched here");
        return -1;
    }
    if (lease_ms == 0 || lease_ms > (uint32_t)pd->cfg->max_lease_ms)
        lease_ms = (uint32_t)pd->cfg->max_lease_ms;
    if (h == NULL) {
        h = xcalloc(1, sizeof *h);
        memcpy(h->job, job, WIRE_JOB_ID_LEN);
        h->owner = owner;
        h->next = pd->holds;
        pd->holds = h;
    }
    h->slots += n;
    h->lease_ms = lease_ms;
    h->expires_ms = monotime_ms() + lease_ms;
    *free_now = reserve_free(pd);
    link_announce(pd);
    return 0;
}

void
reserve_confirm(struct peerd *pd, struct hold *h, uint32_t n)
{
    if (n < h->slots) {
        h->slots = n;
        link_announce(pd);
    }
    h->expires_ms = 0;
}

/* Unlink and free one hold. */
static void
reserve_drop(struct peerd *pd, struct hold *gone)
{
    struct hold **hp;

    if (gone->slots > 0)
        link_announce(pd);
    for (hp = &pd->holds; *hp != NULL; hp = &(*hp)->next)
        if (*hp == gone) {
            *hp = gone->next;
            free(gone);
            return;
        }
}

void
reserve_return_one(struct peerd *pd, const uint8_t job[WIRE_JOB_ID_LEN])
{
    struct hold *h = reserve_find(pd, job);

    if (h == NULL)
        return;
    if (h->slots > 0)
        h->slots--;
    if (h->slots == 0)
        reserve_drop(pd, h);
    link_announce(pd);
}

void
reserve_release(struct peerd *pd, const uint8_t job[WIRE_JOB_ID_LEN])
{
    struct hold *h = reserve_find(pd, job);

    if (h != NULL)
        reserve_drop(pd, h);
}

void
reserve_drop_owner(struct peerd *pd, struct svc_conn *owner)
{
    struct hold *h, *next;

    for (h = pd->holds; h != NULL; h = next) {
        next = h->next;
        if (h->owner == owner && h->expires_ms != 0) {
            log_info("reservation of %u slot%s released: its requester went "
                     "away",
                     h->slots, h->slots == 1 ? "" : "s");
            reserve_drop(pd, h);
        } else if (h->owner == owner)
            h->owner = NULL; /* the job's processes still hold them */
    }
}

void
reserve_renew(struct peerd *pd, struct svc_conn *owner, uint64_t now_ms)
{
    struct hold *h;

    for (h = pd->holds; h != NULL; h = h->next)
        if (h->owner == owner && h->expires_ms != 0 &&
            h->expires_ms < now_ms + h->lease_ms)
            h->expires_ms = now_ms + h->lease_ms;
}

void
reserve_cron(struct peerd *pd, uint64_t now_ms)
{
    struct hold *h, *next;

    for (h = pd->holds; h != NULL; h = next) {
        next = h->next;
        if (h->expires_ms != 0 && now_ms >= h->expires_ms) {
            log_info("reservation of %u slot%s expired without a launch",
                     h->slots, h->slots == 1 ? "" : "s");
            reserve_drop(pd, h);
        }
    }
}
