/*
 * p2p_ghost: a test-only attacker that holds the group key and registers
 * peers that do not exist ("ghosts") with a supernode: each with a fresh
 * node key, a made-up label and capacity, and an address the test names
 * (one where nothing listens, a tarpit, or a real peer's).  It answers
 * the supernode's pings, so ghosts even get a good round-trip time, and
 * heartbeats until SIGTERM.
 *
 *   p2p_ghost --conf F --supernode ADDR:PORT --addr HOST:PORT [--addr ...]
 *             [--count N] [--slots N] [--label PREFIX] [--source IP]
 *
 * Prints one line per ghost as the supernode answers ("registered 3",
 * "refused 4: why"), then "done R registered F refused".
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "channel.h"
#include "config.h"
#include "group.h"
#include "log.h"
#include "netaddr.h"
#include "xmalloc.h"

#define GHOST_MAX_ADDRS 64

struct ghost {
    struct channel *ch;
    uint8_t pk[SEC_SIGN_PK_LEN], sk[SEC_SIGN_SK_LEN];
    int idx;
    int sent; /* registration sent (the next ghost was started) */
    int answered;
};

/* Registrations in their handshake at once: a supernode lets one address
 * hold only a few unauthenticated connections (admit.h). */
#define GHOST_PARALLEL 8

static struct event_base *base;
static struct ghost *ghosts;
static struct channel_params cp;
static struct netaddr to, from;
static const char *source;
static int started;
static int count = 1, slots = 8, nregistered, nrefused;
static const char *label = "ghost";
static const char *addrs[GHOST_MAX_ADDRS];
static int naddrs;

static void
ghost_res(struct resources *r)
{
    memset(r, 0, sizeof *r);
    r->cores = 64;
    r->mem_total = 64ull << 30;
    r->mem_free = 63ull << 30;
    r->slots_total = r->slots_free = (uint32_t)slots;
    r->state = PEER_STATE_AVAILABLE;
}

static const struct channel_cbs ghost_cbs;

/* Start the next ghost's connection, if any is left. */
static void
ghost_start_next(void)
{
    struct ghost *g;

    if (started == count)
        return;
    g = &ghosts[started++];
    g->ch = channel_connect(base, &to, source ? &from : NULL, &cp, &ghost_cbs,
                            g);
    if (g->ch == NULL)
        fatal("socket for ghost %d", g->idx);
}

static void
ghost_answered(struct ghost *g)
{
    if (g->answered)
        return;
    g->answered = 1;
    if (nregistered + nrefused == count) {
        printf("done %d registered %d refused\n", nregistered, nrefused);
        fflush(stdout);
    }
}

static void
ghost_ready(struct channel *ch, void *arg)
{
    struct ghost *g = arg;
    struct msg m;
    uint8_t buf[16 + SEC_HASH_LEN];

    memset(&m, 0, sizeof m);
    m.type = MSG_REGISTER;
    memcpy(m.u.reg.node_key, g->pk, sizeof g->pk);
    memcpy(buf, "p2p-register\0\0\0\0", 16);
    memcpy(buf + 16, channel_session_id(ch), SEC_HASH_LEN);
    sec_sign(m.u.reg.signature, buf, sizeof buf, g->sk);
    snprintf(m.u.reg.host_label, sizeof m.u.reg.host_label, "%s%d", label,
             g->idx);
    snprintf(m.u.reg.addr, sizeof m.u.reg.addr, "%s", addrs[g->idx % naddrs]);
    snprintf(m.u.reg.version, sizeof m.u.reg.version, "ghost");
    ghost_res(&m.u.reg.res);
    channel_send(ch, &m);
    g->sent = 1;
    ghost_start_next();
}

static void
ghost_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct ghost *g = arg;

    switch (m->type) {
    case MSG_REGISTER_ACK:
        printf("registered %d\n", g->idx);
        fflush(stdout);
        nregistered++;
        ghost_answered(g);
        break;
    case MSG_ERROR:
        printf("refused %d: %s\n", g->idx, m->u.error.text);
        fflush(stdout);
        nrefused++;
        ghost_answered(g);
        channel_close(ch);
        g->ch = NULL;
        break;
    case MSG_PING:
        channel_pong(ch, m);
        break;
    default:
        break;
    }
}

static void
ghost_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct ghost *g = arg;

    g->ch = NULL;
    if (!g->answered) {
        if (!g->sent)
            ghost_start_next(); /* it never got to register */
        printf("refused %d: %s\n", g->idx, reason);
        fflush(stdout);
        nrefused++;
        ghost_answered(g);
    }
}

static const struct channel_cbs ghost_cbs = {
    .on_ready = ghost_ready,
    .on_msg = ghost_msg,
    .on_close = ghost_close,
};

static void
ghost_tick(evutil_socket_t fd, short what, void *arg)
{
    struct msg m;
    int i;

    memset(&m, 0, sizeof m);
    m.type = MSG_HEARTBEAT;
    ghost_res(&m.u.heartbeat);
    for (i = 0; i < count; i++)
        if (ghosts[i].ch != NULL && channel_is_ready(ghosts[i].ch) &&
            ghosts[i].answered)
            channel_send(ghosts[i].ch, &m);
}

static void
ghost_stop(evutil_socket_t sig, short what, void *arg)
{
    event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"supernode", required_argument, NULL, 's'},
        {"addr", required_argument, NULL, 'a'},
        {"count", required_argument, NULL, 'n'},
        {"slots", required_argument, NULL, 'k'},
        {"label", required_argument, NULL, 'l'},
        {"source", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *sn = NULL;
    struct p2p_config cfg;
    struct p2p_group g;
    struct timeval tick = {0, 200000};
    struct event *ev_tick, *ev_term, *ev_int;
    char err[512];
    int ch, i;

    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 's':
            sn = optarg;
            break;
        case 'a':
            if (naddrs < GHOST_MAX_ADDRS)
                addrs[naddrs++] = optarg;
            break;
        case 'n':
            count = atoi(optarg);
            break;
        case 'k':
            slots = atoi(optarg);
            break;
        case 'l':
            label = optarg;
            break;
        case 'S':
            source = optarg;
            break;
        default:
            return 2;
        }
    }
    if (sn == NULL || naddrs == 0 || count < 1 || slots < 1) {
        fprintf(stderr, "usage: p2p_ghost --conf F --supernode ADDR:PORT "
                        "--addr HOST:PORT... [--count N] [--slots N] "
                        "[--label PREFIX] [--source IP]\n");
        return 2;
    }
    log_init("p2p_ghost", 1, P2P_LOG_WARN);
    signal(SIGPIPE, SIG_IGN);
    if (sec_init() == -1 || config_load(&cfg, conf, err, sizeof err) == -1 ||
        group_load(&cfg, &g, err, sizeof err) == -1 ||
        netaddr_parse(sn, 9700, &to, err, sizeof err) == -1)
        fatalx("%s", err);
    if (source != NULL && netaddr_parse(source, 0, &from, err, sizeof err) == -1)
        fatalx("--source: %s", err);
    base = event_base_new();
    ghosts = xcalloc((size_t)count, sizeof *ghosts);
    group_params(&g, FRAME_MAX_REQUEST, 0, &cp);
    cp.handshake_ms = 30000; /* the supernode's check may take a while */
    for (i = 0; i < count; i++) {
        ghosts[i].idx = i;
        sec_sign_keypair(ghosts[i].pk, ghosts[i].sk);
    }
    for (i = 0; i < GHOST_PARALLEL; i++)
        ghost_start_next();
    ev_tick = event_new(base, -1, EV_PERSIST, ghost_tick, NULL);
    evtimer_add(ev_tick, &tick);
    ev_term = evsignal_new(base, SIGTERM, ghost_stop, NULL);
    ev_int = evsignal_new(base, SIGINT, ghost_stop, NULL);
    evsignal_add(ev_term, NULL);
    evsignal_add(ev_int, NULL);
    event_base_dispatch(base);
    for (i = 0; i < count; i++)
        if (ghosts[i].ch != NULL)
            channel_close(ghosts[i].ch);
    event_free(ev_tick);
    event_free(ev_term);
    event_free(ev_int);
    event_base_loop(base, EVLOOP_NONBLOCK);
    event_base_free(base);
    free(ghosts);
    group_wipe(&g);
    config_free(&cfg);
    return 0;
}
