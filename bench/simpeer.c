/* simpeer: what the simulated peers of bench/ and tests/integration
 * share; see simpeer.h. */
#include "simpeer.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "monotime.h"

void
simpeer_group_load(struct simpeer_group *sg, const char *conf,
                   size_t frame_max)
{
    char err[512];

    if (sec_init() == -1 || config_load(&sg->cfg, conf, err, sizeof err) == -1 ||
        group_load(&sg->cfg, &sg->g, err, sizeof err) == -1)
        fatalx("%s", err);
    group_params(&sg->g, frame_max, 0, &sg->cp);
}

void
simpeer_group_free(struct simpeer_group *sg)
{
    group_wipe(&sg->g);
    config_free(&sg->cfg);
}

void
simpeer_supernode_addr(const char *name, struct netaddr *to)
{
    char err[512];

    if (netaddr_parse(name, 9700, to, err, sizeof err) == -1)
        fatalx("%s", err);
}

void
simpeer_resources(struct resources *r, uint32_t cores, uint64_t mem_total,
                  uint64_t mem_free, uint32_t slots_total, uint32_t slots_free)
{
    memset(r, 0, sizeof *r);
    r->cores = cores;
    r->mem_total = mem_total;
    r->mem_free = mem_free;
    r->slots_total = slots_total;
    r->slots_free = slots_free;
    r->state = PEER_STATE_AVAILABLE;
}

void
simpeer_register(struct channel *ch, const uint8_t *pk, const uint8_t *sk,
                 const char *label, const char *addr, const char *version,
                 const struct resources *res)
{
    struct msg m;
    uint8_t buf[16 + SEC_HASH_LEN];

    memset(&m, 0, sizeof m);
    m.type = MSG_REGISTER;
    memcpy(m.u.reg.node_key, pk, SEC_SIGN_PK_LEN);
    /* The signature binds the node key to this channel's session. */
    memcpy(buf, "p2p-register\0\0\0\0", 16);
    memcpy(buf + 16, channel_session_id(ch), SEC_HASH_LEN);
    sec_sign(m.u.reg.signature, buf, sizeof buf, sk);
    snprintf(m.u.reg.host_label, sizeof m.u.reg.host_label, "%s", label);
    snprintf(m.u.reg.addr, sizeof m.u.reg.addr, "%s", addr);
    if (version != NULL)
        snprintf(m.u.reg.version, sizeof m.u.reg.version, "%s", version);
    m.u.reg.res = *res;
    channel_send(ch, &m);
}

static void
pace_tick(evutil_socket_t fd, short what, void *arg)
{
    struct simpeer_pace *p = arg;
    /* By the clock, not by ticks counted: a loop too busy to tick on
     * time would otherwise stretch the period (and the supernodes would
     * expire peers that their simulated owners meant to keep alive). */
    uint64_t due = (monotime_us() - p->start_us) * (uint64_t)p->n /
                       p->period_us -
                   p->sent;

    p->sent += due;
    for (; due > 0; due--, p->next = (p->next + 1) % p->n)
        p->beat(p->next, p->arg);
}

void
simpeer_pace_start(struct simpeer_pace *p, struct event_base *base,
                   int period_ms, int n, void (*beat)(int, void *), void *arg)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->beat = beat;
    p->arg = arg;
    p->start_us = monotime_us();
    p->period_us = (uint64_t)period_ms * 1000;
    /* 100 ticks per period. */
    p->ev = simpeer_timer(base, 1, (uint64_t)period_ms * 10, pace_tick, p);
}

void
simpeer_pace_stop(struct simpeer_pace *p)
{
    if (p->ev != NULL)
        event_free(p->ev);
    p->ev = NULL;
}

int
simpeer_pong(struct channel *ch, const struct msg *m)
{
    if (m->type != MSG_PING)
        return 0;
    channel_pong(ch, m);
    return 1;
}

struct event *
simpeer_timer(struct event_base *base, int persist, uint64_t us,
              event_callback_fn cb, void *arg)
{
    struct event *ev;
    struct timeval tv;

    tv.tv_sec = (time_t)(us / 1000000);
    tv.tv_usec = (suseconds_t)(us % 1000000);
    ev = event_new(base, -1, persist ? EV_PERSIST : 0, cb, arg);
    if (ev == NULL || evtimer_add(ev, &tv) == -1)
        fatalx("simpeer: cannot set a timer");
    return ev;
}

void
simpeer_finish(struct event_base *base, struct simpeer_group *sg)
{
    event_base_loop(base, EVLOOP_NONBLOCK);
    event_base_free(base);
    simpeer_group_free(sg);
}

void
simpeer_loopbreak(evutil_socket_t fd, short what, void *arg)
{
    event_base_loopbreak(arg);
}
