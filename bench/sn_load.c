/*
 * sn_load: N simulated peers against a running supernode, to measure what
 * one supernode costs per registered peer and whether it keeps up with N
 * peers heartbeating every second.  Each simulated peer has its own node
 * key and its own authenticated channel, exactly like peerd.
 *
 *   sn_load --conf F --supernode ADDR:PORT --pid SUPERNODE_PID
 *           [--peers N] [--seconds S] [--heartbeat-ms MS] [--job-reports]
 *
 * With --job-reports every heartbeat is followed by a job report (the
 * dashboard's worst case: real peers send one only when it changes, or
 * every 10 s): groups of four simulated peers share a job of 4 ranks x 2
 * replicas, two processes on each.
 * Prints the supernode's RSS before and after registration (memory per
 * peer), the time to register all peers, and the supernode's CPU use and
 * the heartbeat acknowledgements per second over the measurement window.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "monotime.h"
#include "simpeer.h"
#include "xmalloc.h"

struct sim {
    struct channel *ch;
    uint8_t pk[SEC_SIGN_PK_LEN], sk[SEC_SIGN_SK_LEN];
    int idx;
    int registered;
};

static struct event_base *base;
static struct sim *sims;
static int npeers, nregistered, nfailed;
static uint64_t acks;
static int job_reports;

static long
proc_rss_kb(int pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* utime + stime of a process, in clock ticks. */
static long
proc_cpu_ticks(int pid)
{
    char path[64], buf[1024], *p;
    unsigned long ut, st;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if ((p = strrchr(buf, ')')) == NULL)
        return -1;
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &ut, &st) != 2)
        return -1;
    return (long)(ut + st);
}

/* What every simulated peer offers. */
static void
sim_resources(struct resources *r)
{
    simpeer_resources(r, 4, 16ull << 30, 8ull << 30, 4, 4);
}

static void
sim_ready(struct channel *ch, void *arg)
{
    struct sim *s = arg;
    struct resources res;
    char label[32], addr[32];

    snprintf(label, sizeof label, "sim%d", s->idx);
    snprintf(addr, sizeof addr, "127.1.%d.%d:9897", s->idx / 250,
             s->idx % 250 + 1);
    sim_resources(&res);
    simpeer_register(ch, s->pk, s->sk, label, addr, NULL, &res);
}

static void
sim_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct sim *s = arg;

    if (simpeer_pong(ch, m))
        return;
    switch (m->type) {
    case MSG_REGISTER_ACK:
        s->registered = 1;
        nregistered++;
        if (nregistered + nfailed == npeers)
            event_base_loopbreak(base);
        break;
    case MSG_HEARTBEAT_ACK:
        acks++;
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
    if (!s->registered)
        nfailed++;
    fprintf(stderr, "sim%d: %s\n", s->idx, reason);
    if (nregistered + nfailed == npeers)
        event_base_loopbreak(base);
}

static const struct channel_cbs sim_cbs = {
    .on_ready = sim_ready,
    .on_msg = sim_msg,
    .on_close = sim_close,
};

/* What simulated peer s runs: its group's job, rank idx%4 as replica 0
 * and rank (idx+1)%4 as replica 1. */
static void
send_job_report(struct sim *s)
{
    struct job_proc procs[2];
    struct job_info job;
    struct msg m;

    memset(&job, 0, sizeof job);
    memset(procs, 0, sizeof procs);
    snprintf((char *)job.job, sizeof job.job, "job%d", s->idx / 4);
    snprintf(job.user, sizeof job.user, "bench");
    snprintf(job.command, sizeof job.command, "stencil");
    job.size = 4;
    job.nreplicas = 2;
    job.started = 1700000000;
    procs[0].rank = (uint32_t)(s->idx % 4);
    procs[0].state = PROC_RUN_RUNNING;
    procs[1].rank = (uint32_t)((s->idx + 1) % 4);
    procs[1].replica = 1;
    procs[1].state = PROC_RUN_RUNNING;
    job.procs = procs;
    job.nprocs = 2;
    memset(&m, 0, sizeof m);
    m.type = MSG_JOB_REPORT;
    m.u.report.jobs = &job;
    m.u.report.njobs = 1;
    channel_send(s->ch, &m);
}

/* One heartbeat per peer per period, spread evenly over the period. */
static int hb_ms = 1000;
static struct simpeer_pace hb_pace;

static void
sim_beat(int i, void *arg)
{
    struct sim *s = &sims[i];
    struct msg m;

    if (s->ch == NULL)
        return;
    memset(&m, 0, sizeof m);
    m.type = MSG_HEARTBEAT;
    sim_resources(&m.u.heartbeat);
    channel_send(s->ch, &m);
    if (job_reports)
        send_job_report(s);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"supernode", required_argument, NULL, 's'},
        {"pid", required_argument, NULL, 'p'},
        {"peers", required_argument, NULL, 'n'},
        {"seconds", required_argument, NULL, 't'},
        {"heartbeat-ms", required_argument, NULL, 'b'},
        {"job-reports", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *sn = NULL;
    int pid = 0, seconds = 10, ch, i;
    struct simpeer_group sg;
    struct netaddr to, from;
    char err[512];
    long rss0, rss1, rss2, cpu0, cpu1, hz = sysconf(_SC_CLK_TCK);
    uint64_t t0, t1, acks0;
    struct timeval window;
    struct event *ev_stop;

    npeers = 1000;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 's':
            sn = optarg;
            break;
        case 'p':
            pid = atoi(optarg);
            break;
        case 'n':
            npeers = atoi(optarg);
            break;
        case 't':
            seconds = atoi(optarg);
            break;
        case 'b':
            hb_ms = atoi(optarg);
            break;
        case 'j':
            job_reports = 1;
            break;
        default:
            return 2;
        }
    }
    if (sn == NULL || pid <= 0 || npeers < 1 || hb_ms < 10) {
        fprintf(stderr, "usage: sn_load --conf F --supernode ADDR:PORT "
                        "--pid PID [--peers N] [--seconds S] "
                        "[--heartbeat-ms MS] [--job-reports]\n");
        return 2;
    }
    log_init("sn_load", 1, P2P_LOG_WARN);
    net_raise_nofile();
    simpeer_group_load(&sg, conf, FRAME_MAX_REQUEST);
    simpeer_supernode_addr(sn, &to);
    base = event_base_new();
    sims = xcalloc((size_t)npeers, sizeof *sims);
    sg.cp.handshake_ms = 60000;

    rss0 = proc_rss_kb(pid);
    t0 = monotime_us();
    for (i = 0; i < npeers; i++) {
        char a[32];

        sims[i].idx = i;
        sec_sign_keypair(sims[i].pk, sims[i].sk);
        /* Spread the sources over 127.1.x.y: one source address would run
         * out of ephemeral ports long before 10,000 peers. */
        snprintf(a, sizeof a, "127.1.%d.%d:0", i / 250, i % 250 + 1);
        netaddr_parse(a, 0, &from, err, sizeof err);
        sims[i].ch = channel_connect(base, &to, &from, &sg.cp, &sim_cbs, &sims[i]);
        if (sims[i].ch == NULL)
            fatal("socket for peer %d", i);
        /* Keep the accept queue from overflowing during the ramp. */
        if (i % 200 == 199)
            event_base_loop(base, EVLOOP_NONBLOCK);
    }
    event_base_dispatch(base);
    t1 = monotime_us();
    rss1 = proc_rss_kb(pid);
    printf("registered %d/%d peers in %.3f s (%d failed)\n", nregistered,
           npeers, (double)(t1 - t0) / 1e6, nfailed);
    printf("supernode RSS: %ld kB before, %ld kB after: %.0f bytes per peer\n",
           rss0, rss1,
           (double)(rss1 - rss0) * 1024.0 / (nregistered ? nregistered : 1));

    simpeer_pace_start(&hb_pace, base, hb_ms, npeers, sim_beat, NULL);
    /* Settle for two periods, then measure. */
    ev_stop = simpeer_timer(base, 0, (uint64_t)hb_ms * 2000,
                            simpeer_loopbreak, base);
    event_base_dispatch(base);

    cpu0 = proc_cpu_ticks(pid);
    acks0 = acks;
    t0 = monotime_us();
    window.tv_sec = seconds;
    window.tv_usec = 0;
    evtimer_add(ev_stop, &window);
    event_base_dispatch(base);
    t1 = monotime_us();
    cpu1 = proc_cpu_ticks(pid);
    rss2 = proc_rss_kb(pid);
    printf("heartbeats acknowledged: %.0f per second (offered %.0f)\n",
           (double)(acks - acks0) * 1e6 / (double)(t1 - t0),
           npeers * 1000.0 / hb_ms);
    printf("supernode CPU: %.1f%% of one core over %d s; RSS %ld kB\n",
           100.0 * (double)(cpu1 - cpu0) / (double)hz /
               ((double)(t1 - t0) / 1e6),
           seconds, rss2);

    for (i = 0; i < npeers; i++)
        if (sims[i].ch != NULL)
            channel_close(sims[i].ch);
    simpeer_pace_stop(&hb_pace);
    event_free(ev_stop);
    simpeer_finish(base, &sg);
    free(sims);
    return 0;
}
