/*
 * sn_fedload: one shard of simulated peers against a federation of
 * supernodes (bench/supernode.sh --federation starts several).  Each
 * simulated peer has its own node key and its own authenticated channel
 * from its own loopback source address, like peerd, and chooses its
 * supernode as peerd does with supernodes_per_peer = 1: the first, in
 * the rendezvous order of its node key, that has not refused a
 * connection.  When its supernode goes away or turns it away it registers
 * with the next.
 *
 *   sn_fedload --conf F --supernode ADDR:PORT (one per member, in the
 *              federation's order) --peers N [--first I] [--seconds S]
 *              [--heartbeat-ms MS] [--inflight N]
 *
 * It registers its peers (at most --inflight not yet registered at a time, so
 * that admission control is not what is measured), heartbeats each one
 * every period for --seconds, and prints "key value" lines: at once when
 * every peer is registered, all_registered_s and "on K N" (N peers on
 * supernode K); at the end registered, peers, register_s, lost
 * (registered peers whose supernode went away), still_lost, first_loss_ms
 * and all_back_ms (CLOCK_MONOTONIC, comparable between shards),
 * never_registered, kill_ms (when SIGUSR1 said a supernode was killed),
 * lost_since_kill, complete_ms (the last time every peer was registered;
 * 0 if some are not at the end), "end_on K N", and "lost_reason N WHY"
 * (why registrations were lost, by count); on SIGUSR2, "now_on K N"
 * (registered now, whether or not every peer is).  A peer's label is "sK-I": K the supernode
 * it registered with, I its index, so that a query can tell where the
 * entries it gets come from.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "monotime.h"
#include "rendezvous.h"
#include "simpeer.h"
#include "xmalloc.h"

#define MAX_SN 16

struct sim {
    struct channel *ch;
    uint8_t pk[SEC_SIGN_PK_LEN], sk[SEC_SIGN_SK_LEN];
    int idx;                /* across shards */
    int order[MAX_SN];      /* rendezvous order of the supernodes */
    int pos;                /* place in order to try first */
    int target;             /* supernode index tried or registered with */
    int registered;
    int ever;               /* registered at least once */
    int fails;              /* turned away in a row by its target */
    int backoff_ms;
    uint32_t slots_free;
    struct netaddr from;
    char announce[WIRE_MAX_ADDR + 1];
};

static struct event_base *base;
static struct sim *sims;
static int npeers, nsn, inflight, max_inflight = 256, next_start;
static int nregistered, nlost_now, nlost_total, never;
static char *sn_names[MAX_SN];
static struct netaddr sn_addr[MAX_SN];
static int sn_dead[MAX_SN];
static struct simpeer_group sg;
static uint64_t t_start, t_all_registered, first_loss_ms, all_back_ms;
/* SIGUSR1 (the bench killed a supernode): when, and losses until then;
 * complete_ms: the last time every peer was registered. */
static uint64_t kill_ms, complete_ms;
static int lost_before_kill;

static void sim_connect(struct sim *);

/* Why registered peers lost their supernode, the first few reasons. */
#define MAX_REASONS 8
static struct {
    char text[96];
    int n;
} reasons[MAX_REASONS];

static void
reason_count(const char *why)
{
    int i;

    for (i = 0; i < MAX_REASONS && reasons[i].n > 0; i++)
        if (strcmp(reasons[i].text, why) == 0) {
            reasons[i].n++;
            return;
        }
    if (i < MAX_REASONS) {
        snprintf(reasons[i].text, sizeof reasons[i].text, "%s", why);
        reasons[i].n = 1;
    }
}

static const char *
sn_name(int k)
{
    return sn_names[k];
}

/* From s->pos on in s's order, the first supernode that has not refused
 * anyone. */
static int
sim_choice(const struct sim *s)
{
    int k, i;

    for (k = 0; k < nsn; k++) {
        i = s->order[(s->pos + k) % nsn];
        if (!sn_dead[i])
            return i;
    }
    return s->order[s->pos];
}

static void
sim_retry_cb(evutil_socket_t fd, short what, void *arg)
{
    sim_connect(arg);
}

/* Try again after a jittered back-off (200 ms doubling to 2 s, as peerd). */
static void
sim_retry(struct sim *s)
{
    struct timeval tv;
    uint32_t jitter;
    int wait;

    sec_random(&jitter, sizeof jitter);
    wait = s->backoff_ms * 3 / 4 + (int)(jitter % (uint32_t)(s->backoff_ms / 2 + 1));
    s->backoff_ms = s->backoff_ms * 2 > 2000 ? 2000 : s->backoff_ms * 2;
    tv.tv_sec = wait / 1000;
    tv.tv_usec = (wait % 1000) * 1000;
    event_base_once(base, -1, EV_TIMEOUT, sim_retry_cb, s, &tv);
}

/* Start peers while fewer than max_inflight of those started are not
 * yet registered (retries included: a bound on retries as well, or a
 * busy supernode's refusals would grow the load that made it refuse). */
static void
ramp(void)
{
    while (inflight < max_inflight && next_start < npeers) {
        inflight++;
        sim_connect(&sims[next_start++]);
    }
}

/* How many registered peers each supernode holds: "WHAT K N" lines. */
static void
print_spread(const char *what)
{
    int count[MAX_SN] = {0}, i, k;

    for (i = 0; i < npeers; i++)
        if (sims[i].registered)
            count[sims[i].target]++;
    for (k = 0; k < nsn; k++)
        printf("%s %d %d\n", what, k, count[k]);
    fflush(stdout);
}

/* What simulated peer s offers: eight slots, some of them taken. */
static void
sim_resources(const struct sim *s, struct resources *r)
{
    simpeer_resources(r, 8, 16ull << 30, 8ull << 30, 8, s->slots_free);
}

static void
sim_ready(struct channel *ch, void *arg)
{
    struct sim *s = arg;
    struct resources res;
    char label[32];

    snprintf(label, sizeof label, "s%d-%d", s->target, s->idx);
    sim_resources(s, &res);
    simpeer_register(ch, s->pk, s->sk, label, s->announce, NULL, &res);
}

static void
sim_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct sim *s = arg;

    if (simpeer_pong(ch, m))
        return;
    switch (m->type) {
    case MSG_REGISTER_ACK:
        if (s->registered)
            break;
        s->registered = 1;
        s->backoff_ms = 200;
        s->fails = 0;
        nregistered++;
        if (!s->ever) {
            s->ever = 1;
            never--;
            inflight--;
            ramp();
        } else if (--nlost_now == 0)
            all_back_ms = monotime_ms();
        if (nregistered == npeers)
            complete_ms = monotime_ms();
        if (nregistered == npeers && t_all_registered == 0) {
            t_all_registered = monotime_us();
            printf("all_registered_s %.3f\n",
                   (double)(t_all_registered - t_start) / 1e6);
            print_spread("on");
        }
        break;
    default:
        break;
    }
}

static void
sim_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct sim *s = arg;

    s->ch = NULL;
    if (s->registered) {
        /* Its supernode went away: find another at once. */
        s->registered = 0;
        nregistered--;
        reason_count(reason);
        if (nlost_now++ == 0 && first_loss_ms == 0)
            first_loss_ms = monotime_ms();
        nlost_total++;
        s->backoff_ms = 200;
        sim_retry(s);
        return;
    }
    /* Nothing listens there any more: every peer of this shard passes
     * it over from now on (peerd's directory does the same per peer). */
    if (strstr(reason, "refused") != NULL && !sn_dead[s->target]) {
        sn_dead[s->target] = 1;
        fprintf(stderr, "sn_fedload: %s refuses connections; passing it over\n",
                sn_name(s->target));
    }
    if (sn_dead[s->target]) {
        sim_connect(s);
        return;
    }
    /* Turned away (busy, full, too slow) three times in a row: the next
     * in its order, as peerd's directory passes over a failing
     * supernode; after a whole round, back to the first choice. */
    if (++s->fails >= 3) {
        s->fails = 0;
        s->pos = (s->pos + 1) % nsn;
    }
    sim_retry(s);
}

static const struct channel_cbs sim_cbs = {
    .on_ready = sim_ready,
    .on_msg = sim_msg,
    .on_close = sim_close,
};

static void
sim_connect(struct sim *s)
{
    s->target = sim_choice(s);
    s->ch = channel_connect(base, &sn_addr[s->target], &s->from, &sg.cp, &sim_cbs,
                            s);
    if (s->ch == NULL) {
        log_warn("socket for peer %d", s->idx);
        sim_retry(s);
        return;
    }
}

/* One heartbeat per peer per period, spread over 100 ticks. */
static int hb_ms = 1000;
static struct simpeer_pace hb_pace;

static void
sim_beat(int i, void *arg)
{
    struct sim *s = &sims[i];
    struct msg m;

    if (s->ch == NULL || !s->registered)
        return;
    memset(&m, 0, sizeof m);
    m.type = MSG_HEARTBEAT;
    sim_resources(s, &m.u.heartbeat);
    channel_send(s->ch, &m);
}

static void
on_usr1(evutil_socket_t fd, short what, void *arg)
{
    kill_ms = monotime_ms();
    lost_before_kill = nlost_total;
}

static void
on_usr2(evutil_socket_t fd, short what, void *arg)
{
    print_spread("now_on");
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"supernode", required_argument, NULL, 's'},
        {"peers", required_argument, NULL, 'n'},
        {"first", required_argument, NULL, 'f'},
        {"seconds", required_argument, NULL, 't'},
        {"heartbeat-ms", required_argument, NULL, 'b'},
        {"inflight", required_argument, NULL, 'i'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL;
    int first = 0, seconds = 60, ch, i, k;
    char err[512], a[64];
    struct event *ev_stop, *ev_usr1, *ev_usr2;
    uint32_t r;

    npeers = 1000;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 's':
            if (nsn == MAX_SN)
                fatalx("at most %d supernodes", MAX_SN);
            sn_names[nsn++] = optarg;
            break;
        case 'n':
            npeers = atoi(optarg);
            break;
        case 'f':
            first = atoi(optarg);
            break;
        case 't':
            seconds = atoi(optarg);
            break;
        case 'b':
            hb_ms = atoi(optarg);
            break;
        case 'i':
            max_inflight = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (nsn == 0 || npeers < 1 || first < 0 || first + npeers > 16000000 ||
        hb_ms < 10 || seconds < 1 || max_inflight < 1) {
        fprintf(stderr, "usage: sn_fedload --conf F --supernode ADDR:PORT... "
                        "--peers N [--first I] [--seconds S] "
                        "[--heartbeat-ms MS] [--inflight N]\n");
        return 2;
    }
    log_init("sn_fedload", 1, P2P_LOG_WARN);
    /* A supernode that drops us must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    if (net_raise_nofile() < npeers + 64)
        fatalx("%d peers need %d descriptors; the limit is %ld", npeers,
               npeers + 64, net_raise_nofile());
    simpeer_group_load(&sg, conf, FRAME_MAX_REQUEST);
    for (k = 0; k < nsn; k++)
        simpeer_supernode_addr(sn_names[k], &sn_addr[k]);
    base = event_base_new();
    sims = xcalloc((size_t)npeers, sizeof *sims);
    sg.cp.handshake_ms = 60000;
    for (i = 0; i < npeers; i++) {
        struct sim *s = &sims[i];
        int gi = first + i;

        s->idx = gi;
        s->backoff_ms = 200;
        sec_sign_keypair(s->pk, s->sk);
        rendezvous_order(s->pk, sizeof s->pk, sn_names, nsn, s->order);
        sec_random(&r, sizeof r);
        s->slots_free = 1 + r % 8;
        /* Each peer its own source address, 127.64.0.1 onwards: one
         * source would run out of ephemeral ports long before. */
        snprintf(a, sizeof a, "127.%d.%d.%d:0", 64 + gi / 62500,
                 gi / 250 % 250, gi % 250 + 1);
        if (netaddr_parse(a, 0, &s->from, err, sizeof err) == -1)
            fatalx("%s", err);
        snprintf(s->announce, sizeof s->announce, "127.%d.%d.%d:9897",
                 64 + gi / 62500, gi / 250 % 250, gi % 250 + 1);
    }

    never = npeers;
    t_start = monotime_us();
    ramp();
    simpeer_pace_start(&hb_pace, base, hb_ms, npeers, sim_beat, NULL);
    ev_stop = simpeer_timer(base, 0, (uint64_t)seconds * 1000000,
                            simpeer_loopbreak, base);
    ev_usr1 = evsignal_new(base, SIGUSR1, on_usr1, NULL);
    evsignal_add(ev_usr1, NULL);
    ev_usr2 = evsignal_new(base, SIGUSR2, on_usr2, NULL);
    evsignal_add(ev_usr2, NULL);
    event_base_dispatch(base);

    printf("registered %d\n", nregistered);
    printf("peers %d\n", npeers);
    printf("register_s %.3f\n",
           t_all_registered ? (double)(t_all_registered - t_start) / 1e6
                            : -1.0);
    printf("lost %d\n", nlost_total);
    printf("still_lost %d\n", nlost_now);
    printf("first_loss_ms %llu\n", (unsigned long long)first_loss_ms);
    printf("all_back_ms %llu\n",
           (unsigned long long)(nlost_now == 0 ? all_back_ms : 0));
    printf("never_registered %d\n", never);
    printf("kill_ms %llu\n", (unsigned long long)kill_ms);
    printf("lost_since_kill %d\n", nlost_total - lost_before_kill);
    printf("complete_ms %llu\n",
           (unsigned long long)(nregistered == npeers ? complete_ms : 0));
    print_spread("end_on");
    for (i = 0; i < MAX_REASONS && reasons[i].n > 0; i++)
        printf("lost_reason %d %s\n", reasons[i].n, reasons[i].text);
    fflush(stdout);

    for (i = 0; i < npeers; i++)
        if (sims[i].ch != NULL)
            channel_close(sims[i].ch);
    simpeer_pace_stop(&hb_pace);
    event_free(ev_stop);
    event_free(ev_usr1);
    event_free(ev_usr2);
    simpeer_finish(base, &sg);
    free(sims);
    return 0;
}
