/*
 * The peer's place in the directory: which of the configured supernodes
 * it registers with.  It ranks them by rendezvous hashing of its node key
 * (common/rendezvous.c), so that a network's peers spread evenly over its
 * supernodes, and keeps links to the first [peer] supernodes_per_peer of
 * them that work.  A supernode that fails is passed over for the next one
 * at once, and tried again after a penalty that doubles while it keeps
 * failing (unless there is no other to stand in: then it just keeps
 * trying); once a preferred supernode is back and registered, the
 * fall-back is let go (make before break: the peer is never listed
 * nowhere while one supernode still answers).
 */
#include <stdlib.h>

#include "log.h"
#include "peerd.h"
#include "rendezvous.h"
#include "xmalloc.h"

#define DIRECTORY_PENALTY_MIN_MS 5000
#define DIRECTORY_PENALTY_MAX_MS 30000

struct directory {
    int per_peer;
    int order[RENDEZVOUS_MAX]; /* link indices, most preferred first */
    uint64_t retry_ms[RENDEZVOUS_MAX]; /* a stopped failing link: not before */
    int penalty_ms[RENDEZVOUS_MAX];
};

struct directory *
directory_new(struct peerd *pd, char *const *supernodes, int n, int per_peer)
{
    struct directory *d;
    char idhex[17];
    int i;

    d = xcalloc(1, sizeof *d);
    d->per_peer = per_peer < 1 ? 1 : per_peer;
    if (n > RENDEZVOUS_MAX)
        n = RENDEZVOUS_MAX;
    rendezvous_order(pd->node_pk, sizeof pd->node_pk, supernodes, n, d->order);
    pd->nlinks = n;
    pd->links = n ? xcalloc((size_t)n, sizeof *pd->links) : NULL;
    for (i = 0; i < n; i++) {
        pd->links[i] = link_new(pd, supernodes[i]);
        d->penalty_ms[i] = DIRECTORY_PENALTY_MIN_MS;
    }
    pd->directory = d;
    if (n > d->per_peer) {
        sec_hex(idhex, pd->node_pk, 8);
        log_info("node %s registers with %d of %d supernodes, first choice "
                 "%s",
                 idhex, d->per_peer, n, supernodes[d->order[0]]);
    }
    directory_cron(pd, 0);
    return d;
}

void
directory_cron(struct peerd *pd, uint64_t now_ms)
{
    struct directory *d = pd->directory;
    int want[RENDEZVOUS_MAX] = {0};
    int i, k, nwant = 0, upwant = 0, allup;
    struct link *l;

    if (d == NULL || pd->stopping)
        return;
    /* The preferred supernodes that are not known to fail. */
    for (k = 0; k < pd->nlinks && nwant < d->per_peer; k++) {
        i = d->order[k];
        l = pd->links[i];
        if (link_bad(l) || (!link_running(l) && now_ms < d->retry_ms[i]))
            continue;
        want[i] = 1;
        nwant++;
        if (!link_running(l))
            link_start(l);
        if (link_up(l)) {
            upwant++;
            d->penalty_ms[i] = DIRECTORY_PENALTY_MIN_MS;
        }
    }
    /* Too few others to stand in (say two supernodes, two per peer): the
     * failing ones keep trying on their own back-off, not stopped for a
     * penalty, so that the peer is back as soon as they are. */
    for (k = 0; k < pd->nlinks && nwant < d->per_peer; k++) {
        i = d->order[k];
        if (!want[i] && link_bad(pd->links[i])) {
            want[i] = 1;
            nwant++;
        }
    }
    allup = upwant == nwant;
    /* The others go once they are no longer needed: a failing one as soon
     * as one wanted supernode has us (it is tried again after its
     * penalty), a working one only when every wanted one has us. */
    for (i = 0; i < pd->nlinks; i++) {
        l = pd->links[i];
        if (want[i] || !link_running(l))
            continue;
        if (link_up(l) ? !allup : upwant == 0)
            continue;
        if (link_bad(l)) {
            log_info("supernode %s keeps failing; registered elsewhere, "
                     "trying it again in %d s",
                     link_name(l), d->penalty_ms[i] / 1000);
            d->retry_ms[i] = now_ms + (uint64_t)d->penalty_ms[i];
            d->penalty_ms[i] = d->penalty_ms[i] * 2 > DIRECTORY_PENALTY_MAX_MS
                                   ? DIRECTORY_PENALTY_MAX_MS
                                   : d->penalty_ms[i] * 2;
        } else
            log_info("supernode %s no longer needed: a preferred one is back",
                     link_name(l));
        link_shutdown(l);
    }
}

void
directory_free(struct directory *d)
{
    free(d);
}
