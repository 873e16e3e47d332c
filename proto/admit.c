/*
 * Admission of unauthenticated connections (see admit.h): a queue of
 * every connection still in its handshake, oldest first, and a table of
 * the addresses they come from, each with its own queue.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uthash.h>

#include "admit.h"
#include "log.h"
#include "monotime.h"
#include "xmalloc.h"

/* An address without its port; IPv4-mapped IPv6 counts as IPv4. */
struct admit_key {
    uint8_t family;
    uint8_t addr[16];
};

struct admit_src {
    struct admit_key key;
    int count;
    TAILQ_HEAD(, admit_conn) conns; /* oldest first */
    UT_hash_handle hh;
};

struct admit_conn {
    struct admit *adm;
    struct channel *ch;
    struct admit_src *src;
    TAILQ_ENTRY(admit_conn) all;  /* in adm->conns */
    TAILQ_ENTRY(admit_conn) mine; /* in src->conns */
};

struct admit {
    struct event_base *base;
    struct admit_params p;
    TAILQ_HEAD(, admit_conn) conns; /* oldest first */
    int count;
    struct admit_src *sources;
    struct droplog log;
    struct event *ev_log;
    unsigned long long dropped;
};

static void
admit_key_of(const struct sockaddr_storage *ss, struct admit_key *k)
{
    const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

    memset(k, 0, sizeof *k);
    if (ss->ss_family == AF_INET) {
        k->family = 4;
        memcpy(k->addr, &sin->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
            k->family = 4;
            memcpy(k->addr, &sin6->sin6_addr.s6_addr[12], 4);
        } else {
            k->family = 6;
            memcpy(k->addr, &sin6->sin6_addr, 16);
        }
    }
    /* Anything else (unix sockets in tests) is one source. */
}

static void admit_arm_log(struct admit *);

static void
admit_log_timer(evutil_socket_t fd, short what, void *arg)
{
    struct admit *adm = arg;
    char line[512];

    if (droplog_summary(&adm->log, monotime_ms(), line, sizeof line))
        log_warnx("%s", line);
    /* The loop's clock may run a little ahead of ours: not due yet. */
    admit_arm_log(adm);
}

/* Make sure a summary is written when the interval ends. */
static void
admit_arm_log(struct admit *adm)
{
    uint64_t due = droplog_due(&adm->log), now = monotime_ms();
    uint64_t ms = due > now ? due - now + 1 : 1;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

    if (due != 0 && !evtimer_pending(adm->ev_log, NULL))
        evtimer_add(adm->ev_log, &tv);
}

void
admit_log_drop(struct admit_conn *ac, enum drop_why why, const char *name,
               const char *reason)
{
    struct admit *adm = ac->adm;
    uint64_t now = monotime_ms();
    char line[512];

    /* A late timer: the last interval's summary first. */
    if (droplog_summary(&adm->log, now, line, sizeof line))
        log_warnx("%s", line);
    adm->dropped++;
    if (droplog_note(&adm->log, why, now))
        log_warnx("%s: dropped: %s", name, reason);
    admit_arm_log(adm);
}

void
admit_leave(struct admit_conn *ac)
{
    struct admit *adm = ac->adm;
    struct admit_src *src = ac->src;

    TAILQ_REMOVE(&adm->conns, ac, all);
    adm->count--;
    TAILQ_REMOVE(&src->conns, ac, mine);
    if (--src->count == 0) {
        HASH_DEL(adm->sources, src);
        free(src);
    }
    free(ac);
}

struct admit *
admit_new(struct event_base *base, const struct admit_params *p)
{
    struct admit *adm;

    adm = xcalloc(1, sizeof *adm);
    adm->base = base;
    adm->p = *p;
    if (adm->p.max < 1)
        adm->p.max = 1;
    if (adm->p.per_source < 1)
        adm->p.per_source = 1;
    TAILQ_INIT(&adm->conns);
    droplog_init(&adm->log, "unauthenticated connections",
                 ADMIT_LOG_INTERVAL_MS, ADMIT_LOG_BUDGET);
    adm->ev_log = evtimer_new(base, admit_log_timer, adm);
    return adm;
}

void
admit_free(struct admit *adm)
{
    struct admit_conn *ac;
    char line[512];

    if (adm == NULL)
        return;
    /* The channels belong to their owners, who close them; they must not
     * report to a freed admission. */
    while ((ac = TAILQ_FIRST(&adm->conns)) != NULL) {
        channel_admit(ac->ch, NULL);
        admit_leave(ac);
    }
    if (droplog_summary(&adm->log, UINT64_MAX, line, sizeof line))
        log_warnx("%s", line);
    event_free(adm->ev_log);
    free(adm);
}

/* The connection to push out of a queue: the oldest that has not sent a
 * whole first frame (a slow or silent client), else the oldest. */
static struct channel *
admit_victim(struct admit *adm, struct admit_src *src)
{
    struct admit_conn *ac;

    if (src != NULL) {
        TAILQ_FOREACH(ac, &src->conns, mine)
        if (!channel_got_first(ac->ch))
            return ac->ch;
        return TAILQ_FIRST(&src->conns)->ch;
    }
    TAILQ_FOREACH(ac, &adm->conns, all)
    if (!channel_got_first(ac->ch))
        return ac->ch;
    return TAILQ_FIRST(&adm->conns)->ch;
}

struct channel *
admit_accept(struct admit *adm, int fd, const struct channel_params *cp,
             const struct channel_cbs *cbs, void *arg)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    struct admit_key key;
    struct admit_src *src;
    struct admit_conn *ac;
    struct channel *ch;

    memset(&ss, 0, sizeof ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1) {
        close(fd); /* already gone */
        return NULL;
    }
    admit_key_of(&ss, &key);
    HASH_FIND(hh, adm->sources, &key, sizeof key, src);
    /* Make room, oldest first: of this address when it has its share,
     * else of all.  Evicting calls the owner's on_close, which frees its
     * session; then the entry is gone from our queues too. */
    if (src != NULL && src->count >= adm->p.per_source)
        channel_evict(admit_victim(adm, src), DROP_SOURCE,
                      "too many unauthenticated connections from this "
                      "address: the oldest goes");
    else if (adm->count >= adm->p.max)
        channel_evict(admit_victim(adm, NULL), DROP_CAP,
                      "too many unauthenticated connections: the oldest "
                      "goes");
    if ((ch = channel_accept(adm->base, fd, cp, cbs, arg)) == NULL)
        return NULL;
    /* The eviction may have emptied and freed the source. */
    HASH_FIND(hh, adm->sources, &key, sizeof key, src);
    if (src == NULL) {
        src = xcalloc(1, sizeof *src);
        src->key = key;
        TAILQ_INIT(&src->conns);
        HASH_ADD(hh, adm->sources, key, sizeof src->key, src);
    }
    ac = xcalloc(1, sizeof *ac);
    ac->adm = adm;
    ac->ch = ch;
    ac->src = src;
    TAILQ_INSERT_TAIL(&adm->conns, ac, all);
    adm->count++;
    TAILQ_INSERT_TAIL(&src->conns, ac, mine);
    src->count++;
    channel_admit(ch, ac);
    return ch;
}

int
admit_count(const struct admit *adm)
{
    return adm->count;
}

unsigned long long
admit_dropped(const struct admit *adm)
{
    return adm->dropped;
}
