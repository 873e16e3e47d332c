/*
 * p2p_fedforge: a test-only federation member that holds the group key
 * and sends a supernode summaries of its own making, good or bad, to
 * check what the supernode takes and what it refuses.
 *
 *   p2p_fedforge --conf F --supernode ADDR:PORT --mode MODE
 *                [--count N] [--hold SECONDS]
 *
 * Modes: valid (one summary of N made-up peers, then keepalive summaries
 * until --hold runs out), range (part 3 of 2), order (a summary that
 * starts at its second part), oversize (a part of 300 entries), replay
 * (summary 5, then summary 3).  Prints "sent", then "closed: REASON" when
 * the supernode closes the connection, or "held" when the hold ran out.
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

static struct event_base *base;
static const char *mode = "valid";
static int count = 3;
static uint8_t instance[WIRE_FED_INSTANCE_LEN];
static uint64_t seq;
static struct peer_entry *peers;
static int npeers;

static void
send_summary(struct channel *ch, uint64_t s, uint32_t part, uint32_t nparts,
             struct peer_entry *v, size_t n)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_FED_SUMMARY;
    memcpy(m.u.fed.instance, instance, sizeof instance);
    m.u.fed.seq = s;
    m.u.fed.part = part;
    m.u.fed.nparts = nparts;
    m.u.fed.total_peers = (uint32_t)n;
    snprintf(m.u.fed.addr, sizeof m.u.fed.addr, "127.0.0.1:1");
    m.u.fed.peers = v;
    m.u.fed.npeers = n;
    channel_send(ch, &m);
}

static void
make_peers(int n)
{
    uint8_t sk[SEC_SIGN_SK_LEN];
    int i;

    npeers = n;
    peers = xcalloc((size_t)n, sizeof *peers);
    for (i = 0; i < n; i++) {
        struct peer_entry *e = &peers[i];

        sec_sign_keypair(e->id, sk);
        snprintf(e->host_label, sizeof e->host_label, "forged%d", i);
        snprintf(e->addr, sizeof e->addr, "127.3.%d.%d:9897", i / 250,
                 i % 250 + 1);
        e->res.cores = 2;
        e->res.mem_total = 1ull << 30;
        e->res.mem_free = 1ull << 29;
        e->res.slots_total = e->res.slots_free = 2;
        e->res.state = PEER_STATE_AVAILABLE;
        e->rtt_us = 100;
    }
}

static void
on_ready(struct channel *ch, void *arg)
{
    if (strcmp(mode, "valid") == 0)
        send_summary(ch, ++seq, 0, 1, peers, (size_t)npeers);
    else if (strcmp(mode, "range") == 0)
        send_summary(ch, 1, 3, 2, peers, 1);
    else if (strcmp(mode, "order") == 0)
        send_summary(ch, 1, 1, 2, peers, 1);
    else if (strcmp(mode, "oversize") == 0)
        send_summary(ch, 1, 0, 2, peers, (size_t)npeers);
    else if (strcmp(mode, "replay") == 0) {
        send_summary(ch, 5, 0, 1, peers, 1);
        send_summary(ch, 3, 0, 1, peers, 1);
    }
    printf("sent\n");
    fflush(stdout);
}

static void
on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    if (!simpeer_pong(ch, m) && m->type == MSG_ERROR) {
        printf("closed: %s\n", m->u.error.text);
        event_base_loopbreak(base);
    }
}

static void
on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct channel **chp = arg;

    *chp = NULL;
    printf("closed: %s\n", reason);
    event_base_loopbreak(base);
}

static const struct channel_cbs cbs = {
    .on_ready = on_ready,
    .on_msg = on_msg,
    .on_close = on_close,
};

/* Keep the summary alive, as a member does between changes. */
static void
keepalive(evutil_socket_t fd, short what, void *arg)
{
    struct channel **chp = arg;

    if (*chp != NULL && channel_is_ready(*chp))
        send_summary(*chp, ++seq, 0, 1, peers, (size_t)npeers);
}

static void
held(evutil_socket_t fd, short what, void *arg)
{
    printf("held\n");
    event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"supernode", required_argument, NULL, 's'},
        {"mode", required_argument, NULL, 'm'},
        {"count", required_argument, NULL, 'n'},
        {"hold", required_argument, NULL, 'H'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *sn = NULL;
    int ch, hold = 10;
    struct simpeer_group sg;
    struct netaddr to;
    struct channel *c;
    struct event *ev_keep, *ev_hold;

    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 's':
            sn = optarg;
            break;
        case 'm':
            mode = optarg;
            break;
        case 'n':
            count = atoi(optarg);
            break;
        case 'H':
            hold = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (sn == NULL || count < 1 || count > 1000 || hold < 1) {
        fprintf(stderr, "usage: p2p_fedforge --conf F --supernode ADDR:PORT "
                        "--mode MODE [--count N] [--hold S]\n");
        return 2;
    }
    log_init("p2p_fedforge", 1, P2P_LOG_WARN);
    /* A supernode that drops us must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    simpeer_group_load(&sg, conf, FRAME_MAX_REQUEST);
    simpeer_supernode_addr(sn, &to);
    sec_random(instance, sizeof instance);
    make_peers(strcmp(mode, "oversize") == 0 ? 300 : count);
    base = event_base_new();
    c = channel_connect(base, &to, NULL, &sg.cp, &cbs, &c);
    if (c == NULL)
        fatal("socket");
    /* Only a valid summary is kept alive, every second. */
    ev_keep = strcmp(mode, "valid") == 0
                  ? simpeer_timer(base, 1, 1000000, keepalive, &c)
                  : NULL;
    ev_hold = simpeer_timer(base, 0, (uint64_t)hold * 1000000, held, NULL);
    event_base_dispatch(base);
    fflush(stdout);
    if (c != NULL)
        channel_close(c);
    if (ev_keep != NULL)
        event_free(ev_keep);
    event_free(ev_hold);
    simpeer_finish(base, &sg);
    free(peers);
    return 0;
}
