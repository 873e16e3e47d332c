/*
 * A one-shot request to a supernode on a private event loop: connect,
 * authenticate, ask, wait for the answer or the deadline.  A federated
 * supernode answers for the whole network (best first, bounded), so the
 * first configured supernode that answers is enough.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "channel.h"
#include "log.h"
#include "mpjrun.h"
#include "netaddr.h"
#include "xmalloc.h"

struct snq {
    struct event_base *base;
    struct channel *ch;
    struct msg_list_reply *out;
    int want_jobs; /* ask for the job view too */
    int local; /* ask for the supernode's own peers only */
    int done; /* 1 answered, -1 failed */
    char why[300];
};

static void
snq_ready(struct channel *ch, void *arg)
{
    struct snq *q = arg;
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_LIST_REQUEST;
    m.u.list_req.jobs = q->want_jobs;
    m.u.list_req.local = q->local;
    channel_send(ch, &m);
}

/* Copy the job view out of a reply the channel frees after us. */
static void
snq_take_jobs(struct msg_list_reply *out, const struct msg_list_reply *in)
{
    size_t i;

    out->njobs = in->njobs;
    out->jobs = in->njobs ? xcalloc(in->njobs, sizeof *out->jobs) : NULL;
    for (i = 0; i < in->njobs; i++) {
        out->jobs[i] = in->jobs[i];
        out->jobs[i].procs = NULL;
        if (in->jobs[i].nprocs == 0)
            continue;
        out->jobs[i].procs =
            xcalloc(in->jobs[i].nprocs, sizeof *out->jobs[i].procs);
        memcpy(out->jobs[i].procs, in->jobs[i].procs,
               in->jobs[i].nprocs * sizeof *out->jobs[i].procs);
    }
}

static void
snq_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct snq *q = arg;
    size_t n;

    if (m->type == MSG_LIST_REPLY) {
        /* Take the entries over from the message. */
        n = m->u.list.npeers;
        q->out->npeers = n;
        q->out->peers = NULL;
        if (n > 0) {
            q->out->peers = calloc(n, sizeof *q->out->peers);
            if (q->out->peers == NULL) {
                snprintf(q->why, sizeof q->why, "out of memory");
                q->done = -1;
                goto out;
            }
            memcpy(q->out->peers, m->u.list.peers, n * sizeof *m->u.list.peers);
        }
        if (q->want_jobs)
            snq_take_jobs(q->out, &m->u.list);
        q->done = 1;
    } else if (m->type == MSG_ERROR) {
        snprintf(q->why, sizeof q->why, "refused: %s", m->u.error.text);
        q->done = -1;
    } else if (m->type == MSG_PING) {
        return;
    } else {
        snprintf(q->why, sizeof q->why, "unexpected %s",
                 msg_type_name(m->type));
        q->done = -1;
    }
out:
    channel_close(ch);
    q->ch = NULL;
    event_base_loopbreak(q->base);
}

static void
snq_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct snq *q = arg;

    snprintf(q->why, sizeof q->why, "%s", reason);
    q->done = -1;
    q->ch = NULL;
    event_base_loopbreak(q->base);
}

static void
snq_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct snq *q = arg;

    snprintf(q->why, sizeof q->why, "no answer in time");
    q->done = -1;
    event_base_loopbreak(q->base);
}

static const struct channel_cbs snq_cbs = {
    .on_ready = snq_ready,
    .on_msg = snq_msg,
    .on_close = snq_close,
};

/* One attempt at one supernode. */
static int
snq_one(const struct p2p_group *g, const struct netaddr *to, int timeout_ms,
        int want_jobs, int local, struct msg_list_reply *out, char *why,
        size_t whylen)
{
    struct channel_params cp;
    struct snq q;
    struct event *deadline;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};

    memset(&q, 0, sizeof q);
    q.out = out;
    q.want_jobs = want_jobs;
    q.local = local;
    if ((q.base = event_base_new()) == NULL) {
        snprintf(why, whylen, "event_base_new failed");
        return -1;
    }
    group_params(g, FRAME_MAX_REPLY, 0, &cp);
    q.ch = channel_connect(q.base, to, NULL, &cp, &snq_cbs, &q);
    if (q.ch == NULL) {
        snprintf(why, whylen, "cannot create a socket");
        event_base_free(q.base);
        return -1;
    }
    deadline = evtimer_new(q.base, snq_timeout, &q);
    evtimer_add(deadline, &tv);
    while (q.done == 0)
        if (event_base_dispatch(q.base) != 0)
            break;
    if (q.ch != NULL)
        channel_close(q.ch);
    event_free(deadline);
    event_base_loop(q.base, EVLOOP_NONBLOCK); /* reap the channel */
    event_base_free(q.base);
    if (q.done != 1) {
        snprintf(why, whylen, "%s", q.why[0] ? q.why : "no answer");
        return -1;
    }
    return 0;
}

int
snquery_list(const struct p2p_config *cfg, const struct p2p_group *g,
             int timeout_ms, struct msg_list_reply *out, char *err,
             size_t errlen)
{
    return snquery_ask(cfg, g, timeout_ms, 0, 0, out, err, errlen);
}

int
snquery_ask(const struct p2p_config *cfg, const struct p2p_group *g,
            int timeout_ms, int want_jobs, int local,
            struct msg_list_reply *out, char *err, size_t errlen)
{
    struct netaddr na;
    char why[320];
    size_t used = 0;
    int i, n;

    memset(out, 0, sizeof *out);
    if (cfg->nsupernodes == 0) {
        snprintf(err, errlen,
                 "no supernode configured: use --supernode ADDR:PORT or set "
                 "[network] supernodes");
        return -1;
    }
    err[0] = '\0';
    for (i = 0; i < cfg->nsupernodes; i++) {
        if (netaddr_parse(cfg->supernodes[i], CONF_DEFAULT_SUPERNODE_PORT, &na,
                          why, sizeof why) == 0 &&
            snq_one(g, &na, timeout_ms, want_jobs, local, out, why,
                    sizeof why) == 0)
            return 0;
        log_debug("supernode %s: %s", cfg->supernodes[i], why);
        n = snprintf(err + used, errlen - used, "%s%s: %s",
                     used ? "; " : "no supernode reachable (",
                     cfg->supernodes[i], why);
        if (n > 0 && (size_t)n < errlen - used)
            used += (size_t)n;
    }
    if (used + 2 < errlen)
        strcat(err, ")");
    return -1;
}
