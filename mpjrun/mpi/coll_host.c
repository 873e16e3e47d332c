/*
 * coll_host.c: which ranks of a communicator share a host, for the
 * collectives that cross the network once per host and spread the data
 * among each host's ranks there (through shared memory): the two-level
 * Barrier, Bcast and Scatter of coll.c.
 *
 * No message is needed: the job's table says where every process
 * listens (transport_host), every member reads the same table, so every
 * member makes the same choice.  Kept with the communicator from its
 * first collective that asks.  There is nothing to choose (NULL) with
 * replicas (p2prun -r: which replica of a rank is where changes as
 * replicas die, and every rank already counts as alone on its host, as
 * for MPI_COMM_TYPE_SHARED), on one host, with every rank on a host of
 * its own, or when P2P_COLL_HOSTS is 0, no or off (for measuring).
 */
#include <stdlib.h>

#include "core.h"
#include "mpii.h"

struct place {
    int host, rank; /* the host's lowest process index, a rank of c */
};

static int
place_cmp(const void *a, const void *b)
{
    const struct place *x = a, *y = b;

    if (x->host != y->host)
        return (x->host > y->host) - (x->host < y->host);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The hosts of intracommunicator c, or NULL (nothing to choose, or no
 * memory: the one-level algorithms do as well). */
static struct mpii_hosts *
hosts_make(const struct mpii_comm *c)
{
    struct mpii_hosts *hs;
    struct place *pl;
    int i, p = c->size, n = 0;

    if (c->inter || p < 3 || mpii_replicated() ||
        mpii_env_off("P2P_COLL_HOSTS"))
        return NULL;
    if ((pl = calloc((size_t)p, sizeof *pl)) == NULL)
        return NULL;
    for (i = 0; i < p; i++) {
        pl[i].host = transport_host(c->world[i]);
        pl[i].rank = i;
        if (pl[i].host < 0) {
            free(pl);
            return NULL;
        }
    }
    qsort(pl, (size_t)p, sizeof *pl, place_cmp);
    for (i = 0; i < p; i++)
        n += i == 0 || pl[i].host != pl[i - 1].host;
    hs = NULL;
    if (n > 1 && n < p && (hs = calloc(1, sizeof *hs)) != NULL &&
        ((hs->host = calloc((size_t)p, sizeof *hs->host)) == NULL ||
         (hs->pos = calloc((size_t)p, sizeof *hs->pos)) == NULL ||
         (hs->order = calloc((size_t)p, sizeof *hs->order)) == NULL ||
         (hs->lead = calloc((size_t)n, sizeof *hs->lead)) == NULL ||
         (hs->start = calloc((size_t)n + 1, sizeof *hs->start)) == NULL)) {
        mpii_hosts_free(hs);
        hs = NULL;
    }
    for (i = 0, n = -1; hs != NULL && i < p; i++) {
        if (i == 0 || pl[i].host != pl[i - 1].host) {
            hs->start[++n] = i;
            hs->lead[n] = pl[i].rank;
        }
        hs->order[i] = pl[i].rank;
        hs->host[pl[i].rank] = n;
        hs->pos[pl[i].rank] = i - hs->start[n];
    }
    if (hs != NULL) {
        hs->n = n + 1;
        hs->start[hs->n] = p;
    }
    free(pl);
    return hs;
}

const struct mpii_hosts *
mpii_comm_hosts(struct mpii_comm *c)
{
    if (!c->hosts_known) {
        c->hosts = hosts_make(c);
        c->hosts_known = 1;
    }
    return c->hosts;
}

void
mpii_hosts_free(struct mpii_hosts *hs)
{
    if (hs == NULL)
        return;
    free(hs->host);
    free(hs->pos);
    free(hs->order);
    free(hs->lead);
    free(hs->start);
    free(hs);
}
