/*
 * p2p_farmflood: a test-only attacker that holds the group key and a user
 * key, and asks one peer for more than it should give: --farms farms on
 * one connection, then --tasks tasks of `sleep 600` in the first farm.
 * Prints "farms OK REFUSED" once every farm is answered, then "tasks
 * QUEUED REFUSED" (a task counts as queued unless refused within a
 * second), and waits for SIGTERM, holding its connection open.
 *
 *   p2p_farmflood --conf F --peer ADDR:PORT [--farms N] [--tasks N]
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
#include "mpjrun.h"
#include "netaddr.h"
#include "xmalloc.h"

static struct event_base *base;
static uint8_t user_pk[SEC_SIGN_PK_LEN], user_sk[SEC_SIGN_SK_LEN];
static uint8_t (*farm_ids)[WIRE_JOB_ID_LEN];
static int nfarms = 20, ntasks = 300, farms_ok, farms_refused, tasks_refused;
static struct event *ev_report;
static struct channel *conn;

static void
flood_tasks(struct channel *ch)
{
    static char *argv[] = {"sleep", "600", NULL};
    struct proc_spec ps = {0, 0};
    struct msg m;
    int i;

    for (i = 0; i < ntasks; i++) {
        memset(&m, 0, sizeof m);
        m.type = MSG_LAUNCH;
        sec_random(m.u.launch.job, WIRE_JOB_ID_LEN);
        memcpy(m.u.launch.farm, farm_ids[0], WIRE_JOB_ID_LEN);
        m.u.launch.task = (uint64_t)i + 1;
        m.u.launch.size = m.u.launch.nreplicas = 1;
        m.u.launch.procs = &ps;
        m.u.launch.nprocs = 1;
        m.u.launch.argv = argv;
        m.u.launch.nargv = 2;
        channel_send(ch, &m);
    }
}

static void
flood_report(evutil_socket_t fd, short what, void *arg)
{
    printf("tasks %d %d\n", ntasks - tasks_refused, tasks_refused);
    fflush(stdout);
}

static void
flood_ready(struct channel *ch, void *arg)
{
    struct msg m;
    int i;

    userkey_auth(&m, ch, user_pk, user_sk);
    channel_send(ch, &m);
    for (i = 0; i < nfarms; i++) {
        memset(&m, 0, sizeof m);
        m.type = MSG_FARM_OPEN;
        memcpy(m.u.farm.farm, farm_ids[i], WIRE_JOB_ID_LEN);
        m.u.farm.lease_ms = 60000;
        channel_send(ch, &m);
    }
}

static void
flood_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct timeval one = {1, 0};
    int i;

    if (m->type == MSG_PING) {
        channel_pong(ch, m);
        return;
    }
    if (m->type != MSG_LAUNCH_REPLY)
        return;
    for (i = 0; i < nfarms; i++)
        if (memcmp(m->u.reply.job, farm_ids[i], WIRE_JOB_ID_LEN) == 0)
            break;
    if (i == nfarms) {
        tasks_refused++; /* a task, refused */
        return;
    }
    if (m->u.reply.ok)
        farms_ok++;
    else
        farms_refused++;
    if (farms_ok + farms_refused == nfarms) {
        printf("farms %d %d\n", farms_ok, farms_refused);
        fflush(stdout);
        flood_tasks(ch);
        evtimer_add(ev_report, &one);
    }
}

static void
flood_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    conn = NULL;
    printf("closed: %s\n", reason);
    fflush(stdout);
    event_base_loopbreak(base);
}

static const struct channel_cbs flood_cbs = {
    .on_ready = flood_ready,
    .on_msg = flood_msg,
    .on_close = flood_close,
};

static void
flood_stop(evutil_socket_t sig, short what, void *arg)
{
    event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"peer", required_argument, NULL, 'p'},
        {"farms", required_argument, NULL, 'f'},
        {"tasks", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *peer = NULL;
    struct channel_params cp;
    struct p2p_config cfg;
    struct p2p_group g;
    struct netaddr to;
    struct event *ev_term;
    char err[512];
    int c, i;

    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            conf = optarg;
            break;
        case 'p':
            peer = optarg;
            break;
        case 'f':
            nfarms = atoi(optarg);
            break;
        case 't':
            ntasks = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (peer == NULL || nfarms < 1 || ntasks < 0) {
        fprintf(stderr, "usage: p2p_farmflood --conf F --peer ADDR:PORT "
                        "[--farms N] [--tasks N]\n");
        return 2;
    }
    log_init("p2p_farmflood", 1, P2P_LOG_WARN);
    signal(SIGPIPE, SIG_IGN);
    if (sec_init() == -1 || config_load(&cfg, conf, err, sizeof err) == -1 ||
        group_load(&cfg, &g, err, sizeof err) == -1 ||
        netaddr_parse(peer, 9897, &to, err, sizeof err) == -1)
        fatalx("%s", err);
    sec_sign_keypair(user_pk, user_sk);
    farm_ids = xcalloc((size_t)nfarms, sizeof *farm_ids);
    for (i = 0; i < nfarms; i++)
        sec_random(farm_ids[i], WIRE_JOB_ID_LEN);
    base = event_base_new();
    group_params(&g, FRAME_MAX_REQUEST, 0, &cp);
    if ((conn = channel_connect(base, &to, NULL, &cp, &flood_cbs, NULL)) ==
        NULL)
        fatal("connect");
    ev_report = evtimer_new(base, flood_report, NULL);
    ev_term = evsignal_new(base, SIGTERM, flood_stop, NULL);
    evsignal_add(ev_term, NULL);
    event_base_dispatch(base);
    if (conn != NULL)
        channel_close(conn);
    event_base_loop(base, EVLOOP_NONBLOCK);
    event_free(ev_report);
    event_free(ev_term);
    event_base_free(base);
    free(farm_ids);
    group_wipe(&g);
    config_free(&cfg);
    return 0;
}
