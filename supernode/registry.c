/*
 * The peer registry: a hash table by node key (uthash) and a list ordered
 * by when each peer was last heard from, so that expiry only looks at the
 * peers that actually expire.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "supernode.h"
#include "xmalloc.h"

struct reg_peer {
    uint8_t id[SEC_SIGN_PK_LEN];
    char host_label[WIRE_MAX_LABEL + 1];
    char addr[WIRE_MAX_ADDR + 1];
    struct resources res;
    struct resources res_ranked; /* res when the generation last moved */
    struct reg_peer_info info; /* for the dashboard */
    uint64_t last_seen_ms;
    uint32_t srtt_us; /* smoothed, 0 until the first sample */
    void *owner;
    UT_hash_handle hh;
    TAILQ_ENTRY(reg_peer) by_age; /* oldest first */
};

struct registry {
    struct reg_peer *table;
    TAILQ_HEAD(, reg_peer) ages;
    size_t count;
    uint64_t generation; /* bumped by every change that matters */
};

struct registry *
registry_new(void)
{
    struct registry *r;

    r = xcalloc(1, sizeof *r);
    TAILQ_INIT(&r->ages);
    return r;
}

void
registry_free(struct registry *r)
{
    struct reg_peer *p, *tmp;

    if (r == NULL)
        return;
    HASH_ITER(hh, r->table, p, tmp)
    {
        HASH_DEL(r->table, p);
        free(p);
    }
    free(r);
}

struct reg_peer *
registry_find(const struct registry *r, const uint8_t id[SEC_SIGN_PK_LEN])
{
    struct reg_peer *p;

    HASH_FIND(hh, r->table, id, SEC_SIGN_PK_LEN, p);
    return p;
}

struct reg_peer *
registry_upsert(struct registry *r, const struct msg_register *reg,
                const char *addr, void *owner, uint64_t now_ms,
                void **old_owner)
{
    struct reg_peer *p;

    *old_owner = NULL;
    if ((p = registry_find(r, reg->node_key)) != NULL) {
        *old_owner = p->owner;
        TAILQ_REMOVE(&r->ages, p, by_age);
    } else {
        p = xcalloc(1, sizeof *p);
        memcpy(p->id, reg->node_key, sizeof p->id);
        HASH_ADD(hh, r->table, id, sizeof p->id, p);
        r->count++;
    }
    memcpy(p->host_label, reg->host_label, sizeof p->host_label);
    strncpy(p->addr, addr, sizeof p->addr - 1);
    p->res = reg->res;
    p->res_ranked = reg->res;
    memcpy(p->info.version, reg->version, sizeof p->info.version);
    memcpy(p->info.cpu_model, reg->cpu_model, sizeof p->info.cpu_model);
    memcpy(p->info.os, reg->os, sizeof p->info.os);
    memcpy(p->info.kernel, reg->kernel, sizeof p->info.kernel);
    p->info.started = reg->started;
    p->info.registered_ms = now_ms;
    p->owner = owner;
    p->srtt_us = 0;
    p->last_seen_ms = now_ms;
    TAILQ_INSERT_TAIL(&r->ages, p, by_age);
    r->generation++;
    return p;
}

/* |a - b| */
static uint64_t
registry_diff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

/* Would a peer that said `was` and now says `now` be ranked or fitted
 * differently?  Slots, state and size exactly; free memory and load only
 * when they moved by a step (REGISTRY_MEM_STEP_*, REGISTRY_LOAD_STEP) from
 * what the last counted change said: both move a little on every
 * heartbeat of a live machine, and counting that would make every
 * heartbeat a change. */
static int
registry_ranked_change(const struct resources *was,
                       const struct resources *now)
{
    uint64_t mem_step;

    if (was->cores != now->cores || was->mem_total != now->mem_total ||
        was->slots_total != now->slots_total ||
        was->slots_free != now->slots_free || was->state != now->state)
        return 1;
    mem_step = now->mem_total / REGISTRY_MEM_STEP_DIV;
    if (mem_step < REGISTRY_MEM_STEP_MIN)
        mem_step = REGISTRY_MEM_STEP_MIN;
    return registry_diff(was->mem_free, now->mem_free) >= mem_step ||
           registry_diff(was->load_milli, now->load_milli) >=
               REGISTRY_LOAD_STEP;
}

void
registry_heartbeat(struct registry *r, struct reg_peer *p,
                   const struct resources *res, uint64_t now_ms)
{
    if (registry_ranked_change(&p->res_ranked, res)) {
        r->generation++;
        p->res_ranked = *res;
    }
    p->res = *res;
    p->last_seen_ms = now_ms;
    TAILQ_REMOVE(&r->ages, p, by_age);
    TAILQ_INSERT_TAIL(&r->ages, p, by_age);
}

void
registry_rtt_sample(struct reg_peer *p, uint32_t rtt_us)
{
    if (rtt_us == 0)
        rtt_us = 1;
    /* TCP-style smoothing: 7/8 old, 1/8 new (RFC 6298). */
    if (p->srtt_us == 0)
        p->srtt_us = rtt_us;
    else
        p->srtt_us = (uint32_t)(((uint64_t)p->srtt_us * 7 + rtt_us) / 8);
}

void
registry_remove(struct registry *r, struct reg_peer *p)
{
    HASH_DEL(r->table, p);
    TAILQ_REMOVE(&r->ages, p, by_age);
    r->count--;
    r->generation++;
    free(p);
}

size_t
registry_expire(struct registry *r, uint64_t cutoff_ms, registry_expire_fn fn,
                void *arg)
{
    struct reg_peer *p;
    void *owner;
    size_t n = 0;

    while ((p = TAILQ_FIRST(&r->ages)) != NULL && p->last_seen_ms < cutoff_ms) {
        owner = p->owner;
        if (fn != NULL)
            fn(p, owner, arg);
        registry_remove(r, p);
        n++;
    }
    return n;
}

uint64_t
registry_generation(const struct registry *r)
{
    return r->generation;
}

size_t
registry_count(const struct registry *r)
{
    return r->count;
}

void
registry_export(const struct registry *r, uint64_t now_ms,
                struct msg_list_reply *out)
{
    const struct reg_peer *p;
    struct peer_entry *e;

    out->npeers = r->count;
    out->peers = r->count ? xcalloc(r->count, sizeof *out->peers) : NULL;
    e = out->peers;
    for (p = r->table; p != NULL; p = p->hh.next, e++) {
        memcpy(e->id, p->id, sizeof e->id);
        memcpy(e->host_label, p->host_label, sizeof e->host_label);
        memcpy(e->addr, p->addr, sizeof e->addr);
        e->res = p->res;
        e->rtt_us = p->srtt_us;
        e->age_ms = now_ms > p->last_seen_ms ? now_ms - p->last_seen_ms : 0;
    }
}

const char *
reg_peer_label(const struct reg_peer *p)
{
    return p->host_label;
}

const char *
reg_peer_addr(const struct reg_peer *p)
{
    return p->addr;
}

uint32_t
reg_peer_rtt(const struct reg_peer *p)
{
    return p->srtt_us;
}

const uint8_t *
reg_peer_id(const struct reg_peer *p)
{
    return p->id;
}

const struct resources *
reg_peer_res(const struct reg_peer *p)
{
    return &p->res;
}

const struct reg_peer_info *
reg_peer_info(const struct reg_peer *p)
{
    return &p->info;
}

uint64_t
reg_peer_last_seen(const struct reg_peer *p)
{
    return p->last_seen_ms;
}

void
registry_walk(const struct registry *r, registry_walk_fn fn, void *arg)
{
    const struct reg_peer *p;

    for (p = r->table; p != NULL; p = p->hh.next)
        fn(p, arg);
}
