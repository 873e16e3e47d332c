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

#include "log.h"
#include "simpeer.h"
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
static struct simpeer_group sg;
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
    simpeer_resources(r, 64, 64ull << 30, 63ull << 30, (uint32_t)slots,
                      (uint32_t)slots);
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
    g->ch = channel_connect(base, &to, source ? &from : NULL, &sg.cp, &ghost_cbs,
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
    struct resources res;
    char host_label[WIRE_MAX_LABEL + 1];

    snprintf(host_label, sizeof host_label, "%s%d", label, g->idx);
    ghost_res(&res);
    simpeer_register(ch, g->pk, g->sk, host_label, addrs[g->idx % naddrs],
                     "ghost", &res);
    g->sent = 1;
    ghost_start_next();
}

static void
ghost_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct ghost *g = arg;

    if (simpeer_pong(ch, m))
        return;
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
    simpeer_group_load(&sg, conf, FRAME_MAX_REQUEST);
    simpeer_supernode_addr(sn, &to);
    if (source != NULL && netaddr_parse(source, 0, &from, err, sizeof err) == -1)
        fatalx("--source: %s", err);
    base = event_base_new();
    ghosts = xcalloc((size_t)count, sizeof *ghosts);
    sg.cp.handshake_ms = 30000; /* the supernode's check may take a while */
    for (i = 0; i < count; i++) {
        ghosts[i].idx = i;
        sec_sign_keypair(ghosts[i].pk, ghosts[i].sk);
    }
    for (i = 0; i < GHOST_PARALLEL; i++)
        ghost_start_next();
    ev_tick = simpeer_timer(base, 1, 200000, ghost_tick, NULL);
    ev_term = evsignal_new(base, SIGTERM, simpeer_loopbreak, base);
    ev_int = evsignal_new(base, SIGINT, simpeer_loopbreak, base);
    evsignal_add(ev_term, NULL);
    evsignal_add(ev_int, NULL);
    event_base_dispatch(base);
    for (i = 0; i < count; i++)
        if (ghosts[i].ch != NULL)
            channel_close(ghosts[i].ch);
    event_free(ev_tick);
    event_free(ev_term);
    event_free(ev_int);
    simpeer_finish(base, &sg);
    free(ghosts);
    return 0;
}
