/*
 * A coordinator's notes to its supernode, for the dashboard
 * (docs/dashboard.md): what only the coordinator knows of a farm (inputs
 * read, results reported, failures) in a JobNote on a channel kept open
 * to the first configured supernode.  Best effort and never in the way:
 * a note is sent only while the channel is up, a lost supernode is tried
 * again at most every SNNOTE_RETRY_MS, and nothing waits for an answer.
 * The job runs the same without it.
 */
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "log.h"
#include "monotime.h"
#include "mpjrun.h"
#include "netaddr.h"
#include "xmalloc.h"

#define SNNOTE_RETRY_MS 5000

struct snnote {
    struct event_base *base;
    const struct p2p_group *g;
    struct netaddr to;
    int have_to;
    struct channel *ch;
    int up;
    uint64_t last_try_ms;
};

static void
snnote_ready(struct channel *ch, void *arg)
{
    struct snnote *n = arg;

    n->up = 1;
}

static void
snnote_msg(struct channel *ch, const struct msg *m, void *arg)
{
    /* The supernode answers notes with nothing; a ping keeps it open. */
}

static void
snnote_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct snnote *n = arg;

    log_debug("dashboard notes: supernode %s: %s", n->to.text, reason);
    n->ch = NULL;
    n->up = 0;
}

static const struct channel_cbs snnote_cbs = {
    .on_ready = snnote_ready,
    .on_msg = snnote_msg,
    .on_close = snnote_close,
};

struct snnote *
snnote_new(struct event_base *base, const struct p2p_config *cfg,
           const struct p2p_group *g)
{
    struct snnote *n = xcalloc(1, sizeof *n);
    char err[256];

    n->base = base;
    n->g = g;
    n->have_to = cfg->nsupernodes > 0 &&
                 netaddr_parse(cfg->supernodes[0], CONF_DEFAULT_SUPERNODE_PORT,
                               &n->to, err, sizeof err) == 0;
    return n;
}

void
snnote_farm(struct snnote *n, const uint8_t farm[WIRE_JOB_ID_LEN],
            uint64_t inputs, uint64_t reported, uint64_t failed, int last)
{
    struct channel_params cp;
    struct msg m;
    uint64_t now = monotime_ms();

    if (n == NULL || !n->have_to)
        return;
    if (n->ch == NULL) {
        if (last)
            return;
        if (n->last_try_ms != 0 && now - n->last_try_ms < SNNOTE_RETRY_MS)
            return;
        n->last_try_ms = now;
        group_params(n->g, FRAME_MAX_REPLY, 0, &cp);
        n->ch = channel_connect(n->base, &n->to, NULL, &cp, &snnote_cbs, n);
        return; /* the next note goes once it is up */
    }
    if (!n->up)
        return;
    memset(&m, 0, sizeof m);
    m.type = MSG_JOB_NOTE;
    memcpy(m.u.jnote.job, farm, WIRE_JOB_ID_LEN);
    m.u.jnote.tasks_total = inputs;
    m.u.jnote.tasks_done = reported < inputs ? reported : inputs;
    m.u.jnote.tasks_failed =
        failed < m.u.jnote.tasks_done ? failed : m.u.jnote.tasks_done;
    if (!last) {
        channel_send(n->ch, &m);
        return;
    }
    /* Written before the close, which the caller's loop carries out. */
    channel_close_after(n->ch, &m);
    n->ch = NULL;
    n->up = 0;
}

void
snnote_free(struct snnote *n)
{
    if (n == NULL)
        return;
    if (n->ch != NULL)
        channel_close(n->ch);
    free(n);
}
