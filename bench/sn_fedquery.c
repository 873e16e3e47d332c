/*
 * sn_fedquery: candidate queries through every member of a federation of
 * supernodes, as p2prun asks them, for bench/supernode.sh --federation.
 * One channel per supernode, opened once; every --every-ms each one that
 * is up gets a ListRequest (one outstanding at a time) and the time to
 * its ListReply is recorded.  The simulated peers of sn_fedload are
 * labelled "sK-I" (K the supernode they registered with), so each reply
 * also tells from how many supernodes its candidates came.
 *
 *   sn_fedquery --conf F --supernode ADDR:PORT... [--seconds S]
 *               [--every-ms MS]
 *
 * A lost channel is opened again a second later.  Prints one line per
 * supernode and phase ("before" until SIGUSR1, sent when the bench kills
 * a supernode, "after" from then on): queries answered, latency median,
 * 95th percentile and maximum in milliseconds, entries in the last reply,
 * the supernodes its entries came from, and channels lost.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "monotime.h"
#include "simpeer.h"
#include "xmalloc.h"

#define MAX_SN 16
#define MAX_SAMPLES 100000

struct phase {
    double *ms; /* latencies */
    int n;
    int lost; /* channels lost (an unanswered query among them) */
    size_t last_entries;
    unsigned last_sources; /* bit K: an entry from supernode K */
};

struct member {
    const char *name;
    struct netaddr addr;
    struct channel *ch;
    int up, waiting;
    uint64_t sent_us;
    uint64_t retry_ms; /* lost: connect again then */
    struct phase ph[2];
};

static struct event_base *base;
static struct member sn[MAX_SN];
static int nsn, phase; /* 0 before SIGUSR1 (a supernode killed), 1 after */
static struct simpeer_group sg;

static void
q_ready(struct channel *ch, void *arg)
{
    struct member *m = arg;

    m->up = 1;
}

static void
q_msg(struct channel *ch, const struct msg *msg, void *arg)
{
    struct member *m = arg;
    struct phase *p = &m->ph[phase];
    size_t i;
    int k;

    if (simpeer_pong(ch, msg) || msg->type != MSG_LIST_REPLY || !m->waiting)
        return;
    m->waiting = 0;
    if (p->n < MAX_SAMPLES)
        p->ms[p->n++] = (double)(monotime_us() - m->sent_us) / 1000.0;
    p->last_entries = msg->u.list.npeers;
    p->last_sources = 0;
    for (i = 0; i < msg->u.list.npeers; i++)
        if (sscanf(msg->u.list.peers[i].host_label, "s%d-", &k) == 1 && k >= 0 &&
            k < MAX_SN)
            p->last_sources |= 1u << k;
}

static void
q_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct member *m = arg;

    m->ch = NULL;
    m->up = m->waiting = 0;
    m->ph[phase].lost++;
    m->retry_ms = monotime_ms() + 1000;
    fprintf(stderr, "sn_fedquery: %s lost (%s)\n", m->name, reason);
}

static const struct channel_cbs q_cbs = {
    .on_ready = q_ready,
    .on_msg = q_msg,
    .on_close = q_close,
};

static void
member_connect(struct member *m)
{
    m->ch = channel_connect(base, &m->addr, NULL, &sg.cp, &q_cbs, m);
    if (m->ch == NULL) {
        log_warn("socket");
        m->retry_ms = monotime_ms() + 1000;
    }
}

static void
q_tick(evutil_socket_t fd, short what, void *arg)
{
    struct msg msg;
    int k;

    memset(&msg, 0, sizeof msg);
    msg.type = MSG_LIST_REQUEST;
    for (k = 0; k < nsn; k++) {
        if (sn[k].ch == NULL && monotime_ms() >= sn[k].retry_ms)
            member_connect(&sn[k]);
        if (sn[k].up && !sn[k].waiting) {
            sn[k].waiting = 1;
            sn[k].sent_us = monotime_us();
            channel_send(sn[k].ch, &msg);
        }
    }
}

static void
on_usr1(evutil_socket_t fd, short what, void *arg)
{
    phase = 1;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void
report(const struct member *m, int ph)
{
    const struct phase *p = &m->ph[ph];
    int k, nsrc = 0;

    for (k = 0; k < MAX_SN; k++)
        nsrc += (p->last_sources >> k) & 1;
    if (p->n == 0) {
        printf("%s %s queries 0 lost %d\n", m->name, ph ? "after" : "before",
               p->lost);
        return;
    }
    qsort(p->ms, (size_t)p->n, sizeof *p->ms, cmp_double);
    printf("%s %s queries %d median_ms %.2f p95_ms %.2f max_ms %.2f "
           "entries %zu from_supernodes %d lost %d\n",
           m->name, ph ? "after" : "before", p->n, p->ms[p->n / 2],
           p->ms[p->n * 95 / 100], p->ms[p->n - 1], p->last_entries, nsrc,
           p->lost);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"supernode", required_argument, NULL, 's'},
        {"seconds", required_argument, NULL, 't'},
        {"every-ms", required_argument, NULL, 'e'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL;
    int seconds = 60, every_ms = 200, ch, k;
    struct event *ev_tick, *ev_stop, *ev_usr1;

    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 's':
            if (nsn == MAX_SN)
                fatalx("at most %d supernodes", MAX_SN);
            sn[nsn++].name = optarg;
            break;
        case 't':
            seconds = atoi(optarg);
            break;
        case 'e':
            every_ms = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (nsn == 0 || seconds < 1 || every_ms < 1) {
        fprintf(stderr, "usage: sn_fedquery --conf F --supernode ADDR:PORT... "
                        "[--seconds S] [--every-ms MS]\n");
        return 2;
    }
    log_init("sn_fedquery", 1, P2P_LOG_WARN);
    /* A supernode that drops us must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    simpeer_group_load(&sg, conf, FRAME_MAX_REPLY);
    base = event_base_new();
    for (k = 0; k < nsn; k++) {
        simpeer_supernode_addr(sn[k].name, &sn[k].addr);
        sn[k].ph[0].ms = xcalloc(MAX_SAMPLES, sizeof(double));
        sn[k].ph[1].ms = xcalloc(MAX_SAMPLES, sizeof(double));
        member_connect(&sn[k]);
    }
    ev_tick = simpeer_timer(base, 1, (uint64_t)every_ms * 1000, q_tick, NULL);
    ev_stop = simpeer_timer(base, 0, (uint64_t)seconds * 1000000,
                            simpeer_loopbreak, base);
    ev_usr1 = evsignal_new(base, SIGUSR1, on_usr1, NULL);
    evsignal_add(ev_usr1, NULL);
    event_base_dispatch(base);

    for (k = 0; k < nsn; k++) {
        report(&sn[k], 0);
        report(&sn[k], 1);
    }
    fflush(stdout);
    for (k = 0; k < nsn; k++) {
        if (sn[k].ch != NULL)
            channel_close(sn[k].ch);
        free(sn[k].ph[0].ms);
        free(sn[k].ph[1].ms);
    }
    event_free(ev_tick);
    event_free(ev_stop);
    event_free(ev_usr1);
    simpeer_finish(base, &sg);
    return 0;
}
