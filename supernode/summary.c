/*
 * What the other supernodes of a federation told us about their peers:
 * for each sender (its instance id, new at each start) the entries of its
 * latest summary, each stamped with the summary's number.  A summary
 * arrives in parts, in order; its last part drops the sender's entries
 * that it no longer names.  A sender silent for longer than the expiry is
 * forgotten with all its entries, and so is one that breaks the rules.
 * Every count is bounded: senders, entries per sender, and the order of
 * parts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "log.h"
#include "supernode.h"
#include "xmalloc.h"

/* Senders at most: a federation is a handful of supernodes. */
#define SUMMARY_MAX_ORIGINS 64
/* Entries of one sender at most: a whole summary, plus one in flight. */
#define SUMMARY_MAX_ENTRIES (2 * WIRE_FED_MAX_PARTS * WIRE_FED_PART_ENTRIES)

struct summary_entry {
    struct peer_entry e;
    uint64_t seq;         /* the summary that named it last */
    uint64_t received_ms; /* when; its age grows from e.age_ms */
    UT_hash_handle hh;
};

struct summary_origin {
    uint8_t instance[WIRE_FED_INSTANCE_LEN];
    char addr[WIRE_MAX_ADDR + 1];
    uint64_t seq;       /* of the summary being received or last complete */
    uint32_t next_part; /* expected next; nparts once complete */
    uint32_t nparts;
    uint32_t total_peers;
    uint64_t last_ms; /* last part received */
    size_t count;
    struct summary_entry *entries;
    UT_hash_handle hh;
};

struct summary {
    struct summary_origin *origins;
    size_t norigins;
};

struct summary *
summary_new(void)
{
    return xcalloc(1, sizeof(struct summary));
}

static void
summary_origin_free(struct summary *s, struct summary_origin *o)
{
    struct summary_entry *e, *tmp;

    HASH_ITER(hh, o->entries, e, tmp)
    {
        HASH_DEL(o->entries, e);
        free(e);
    }
    HASH_DEL(s->origins, o);
    s->norigins--;
    free(o);
}

void
summary_free(struct summary *s)
{
    struct summary_origin *o, *tmp;

    if (s == NULL)
        return;
    HASH_ITER(hh, s->origins, o, tmp)
    summary_origin_free(s, o);
    free(s);
}

/* Drop the entries that the complete summary seq did not name. */
static void
summary_purge(struct summary_origin *o, uint64_t seq)
{
    struct summary_entry *e, *tmp;

    HASH_ITER(hh, o->entries, e, tmp)
    if (e->seq != seq) {
        HASH_DEL(o->entries, e);
        o->count--;
        free(e);
    }
}

int
summary_apply(struct summary *s, const struct msg_fed_summary *m,
              uint64_t now_ms, char *err, size_t errlen)
{
    struct summary_origin *o;
    struct summary_entry *e;
    size_t i;

    HASH_FIND(hh, s->origins, m->instance, WIRE_FED_INSTANCE_LEN, o);
    if (o == NULL) {
        if (m->part != 0) {
            snprintf(err, errlen, "summary starts at part %u", m->part);
            return -1;
        }
        if (s->norigins >= SUMMARY_MAX_ORIGINS) {
            snprintf(err, errlen, "more than %d federation partners",
                     SUMMARY_MAX_ORIGINS);
            return -1;
        }
        o = xcalloc(1, sizeof *o);
        memcpy(o->instance, m->instance, sizeof o->instance);
        HASH_ADD(hh, s->origins, instance, sizeof o->instance, o);
        s->norigins++;
        log_info("federation: first summary from %s",
                 m->addr[0] ? m->addr : "(no address)");
    } else if (m->part == 0) {
        /* A new summary: its number must grow (a replay, or a part
         * reordered, would bring back what is gone). */
        if (m->seq <= o->seq) {
            snprintf(err, errlen, "summary %llu after %llu",
                     (unsigned long long)m->seq,
                     (unsigned long long)o->seq);
            goto refused;
        }
    } else if (m->seq != o->seq || m->part != o->next_part ||
               m->nparts != o->nparts) {
        snprintf(err, errlen,
                 "summary %llu part %u/%u out of order (expected %llu "
                 "part %u/%u)",
                 (unsigned long long)m->seq, m->part, m->nparts,
                 (unsigned long long)o->seq, o->next_part, o->nparts);
        goto refused;
    }
    o->seq = m->seq;
    o->nparts = m->nparts;
    o->next_part = m->part + 1;
    o->total_peers = m->total_peers;
    o->last_ms = now_ms;
    snprintf(o->addr, sizeof o->addr, "%s", m->addr);
    for (i = 0; i < m->npeers; i++) {
        HASH_FIND(hh, o->entries, m->peers[i].id, SEC_SIGN_PK_LEN, e);
        if (e == NULL) {
            if (o->count >= SUMMARY_MAX_ENTRIES) {
                snprintf(err, errlen, "more than %d entries from one "
                         "supernode", SUMMARY_MAX_ENTRIES);
                goto refused;
            }
            e = xcalloc(1, sizeof *e);
            memcpy(e->e.id, m->peers[i].id, SEC_SIGN_PK_LEN);
            HASH_ADD(hh, o->entries, e.id, SEC_SIGN_PK_LEN, e);
            o->count++;
        }
        e->e = m->peers[i];
        e->seq = m->seq;
        e->received_ms = now_ms;
    }
    if (o->next_part == o->nparts)
        summary_purge(o, o->seq);
    return 0;

refused:
    /* What a sender that breaks the rules said before is not trusted
     * either: its peers are no longer listed (they are still listed by
     * the supernodes they registered with). */
    log_info("federation: summary of %s dropped with its %zu peers",
             o->addr[0] ? o->addr : "(no address)", o->count);
    summary_origin_free(s, o);
    return -1;
}

size_t
summary_expire(struct summary *s, uint64_t cutoff_ms)
{
    struct summary_origin *o, *tmp;
    size_t n = 0;

    HASH_ITER(hh, s->origins, o, tmp)
    if (o->last_ms < cutoff_ms) {
        log_info("federation: summary of %s expired; its %zu peers are "
                 "no longer listed here",
                 o->addr[0] ? o->addr : "(no address)", o->count);
        summary_origin_free(s, o);
        n++;
    }
    return n;
}

void
summary_walk(const struct summary *s, uint64_t now_ms, summary_walk_fn fn,
             void *arg)
{
    const struct summary_origin *o;
    const struct summary_entry *e;
    struct peer_entry pe;

    for (o = s->origins; o != NULL; o = o->hh.next)
        for (e = o->entries; e != NULL; e = e->hh.next) {
            pe = e->e;
            if (now_ms > e->received_ms)
                pe.age_ms += now_ms - e->received_ms;
            fn(&pe, o->addr, arg);
        }
}

/* summary_append()'s callback: the next slot of the grown vector. */
struct summary_sink {
    struct peer_entry *v;
    size_t n;
};

static void
summary_sink_add(const struct peer_entry *e, const char *origin, void *arg)
{
    struct summary_sink *k = arg;

    (void)origin;
    k->v[k->n++] = *e;
}

void
summary_append(const struct summary *s, uint64_t now_ms, struct peer_entry **v,
               size_t *n)
{
    const struct summary_origin *o;
    struct summary_sink k;
    size_t total = *n;

    for (o = s->origins; o != NULL; o = o->hh.next)
        total += o->count;
    if (total == *n)
        return;
    k.v = *v = xreallocarray(*v, total, sizeof **v);
    k.n = *n;
    summary_walk(s, now_ms, summary_sink_add, &k);
    *n = k.n;
}

size_t
summary_origins(const struct summary *s)
{
    return s->norigins;
}

size_t
summary_entries(const struct summary *s)
{
    const struct summary_origin *o;
    size_t n = 0;

    for (o = s->origins; o != NULL; o = o->hh.next)
        n += o->count;
    return n;
}

size_t
summary_distinct(const struct summary *s)
{
    const struct summary_origin *o, *earlier;
    const struct summary_entry *e, *found;
    size_t n = 0;

    /* An entry counts unless a sender earlier in the walk names the same
     * key: a handful of senders, so a lookup in each is cheap and needs
     * no scratch set. */
    for (o = s->origins; o != NULL; o = o->hh.next)
        for (e = o->entries; e != NULL; e = e->hh.next) {
            found = NULL;
            for (earlier = s->origins; earlier != o && found == NULL;
                 earlier = earlier->hh.next)
                HASH_FIND(hh, earlier->entries, e->e.id, SEC_SIGN_PK_LEN,
                          found);
            if (found == NULL)
                n++;
        }
    return n;
}
