/*
 * The job's coordinator, inside p2prun.  One event loop drives a
 * connection to every peer the job uses through the job's phases:
 *
 *   reserve  plan the placement, reserve slots (a lease on each peer),
 *            re-plan around refusals and lost peers, until the plan holds
 *            or cannot be met;
 *   stage    offer every file by content hash, stream what a peer lacks,
 *            launch on a peer as soon as its files are verified;
 *   run      forward output once per rank, collect exits, decide the
 *            job's status; a failed rank, a signal or the timeout stops
 *            the job everywhere;
 *   stop     wait (boundedly) for the last exits.
 *
 * Peers are pinged every quarter lease; a peer silent for a whole lease,
 * or whose connection drops, has lost its processes.  With replicas, a
 * process that falls behind its partners for the allowed lag is declared
 * dead too (progress.c), and a backup that runs too far ahead of the
 * output shown is held by its peer (output.c).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli.h"
#include "log.h"
#include "monotime.h"
#include "mpjrun.h"
#include "nodeproof.h"
#include "xmalloc.h"

#define CO_ALLOC_MS 15000 /* allocation must succeed or fail by then */
/* Re-plans at most (each follows a refusal or a lost peer, so a network
 * of n candidates needs about n; more means something is looping). */
#define CO_MAX_REPLANS(npeers) (64 + 4 * (int)(npeers))
/* Peers being connected to and proved at once, at most; when the plan
 * does not hold after CO_PROBE_AFTER_MS, candidates beyond it are probed
 * too, so that many unusable peers cost one timeout, not one each. */
#define CO_PROBE_MAX 64
#define CO_PROBE_AFTER_MS 200
#define CO_PROBE_TICK_MS 50
#define CO_REFUSALS_SHOWN 4 /* peers named in a final refusal */
#define CO_CONTENTION_RETRIES 4 /* back off this often when others hold slots */
#define CO_STOP_MS 2000 /* stopping waits this long for the exits */
/* An MPI_Abort waits this long before it stops the job: a rank that
 * crashed makes its partners abort ("a peer process may be gone"), and
 * the crash, not the abort it caused, is what the user must be told. */
#define CO_ABORT_GRACE_MS 1000
#define CO_TICK_MS 100

enum co_phase {
    PH_RESERVE, /* planning and reserving */
    PH_STAGE,   /* staging and launching */
    PH_RUN,     /* every peer launched */
    PH_STOP,    /* stopping: waiting for the last exits */
    PH_DONE,
};

enum pc_state {
    PC_IDLE,       /* not contacted */
    PC_CONNECTING, /* handshake under way */
    PC_PROVING,    /* asked to prove the node key it registered */
    PC_READY,      /* proved: reservations and staging */
    PC_LAUNCHING,  /* launch sent */
    PC_RUNNING,    /* its processes are started */
    PC_GONE,       /* closed, lost or refused for good */
};

enum rep_state { REP_PENDING, REP_RUNNING, REP_OK, REP_FAILED };

struct pconn {
    struct coord *co;
    int idx;
    struct channel *ch;
    enum pc_state state;
    uint32_t avail;    /* slots we believe we can get here */
    uint32_t reserved; /* held for us */
    uint32_t asking;   /* in the one unanswered Reserve */
    uint32_t planned;
    char why[WIRE_MAX_TEXT + 1]; /* last refusal */
    struct stage_peer *sp; /* the files on their way, while staging */
    uint64_t last_heard_ms;
    uint64_t since_ms; /* connect started (PC_CONNECTING, PC_PROVING) */
};

struct coord {
    struct event_base *base;
    const struct p2p_config *cfg;
    const struct p2p_group *group;
    const uint8_t *user_pk, *user_sk;
    const struct job_spec *js;
    uint8_t job[WIRE_JOB_ID_LEN];
    struct peer_entry *peers;
    size_t npeers;
    char unwilling[256]; /* "; host2 owner-busy, host3 not-sharing" */
    struct pconn *pc;
    struct alloc_plan plan;
    int planned;
    struct stage_file *files;
    int nfiles, prog;
    enum rep_state *rep;
    int *rep_status;
    int ranks_left;
    struct output *out;
    enum co_phase phase;
    int pending; /* Reserve requests in flight */
    int replans;
    int backoffs;      /* times we let go of everything for another job */
    struct event *ev_backoff;
    struct event *ev_probe; /* reserve phase: hedged probes, proof deadline */
    int unusable; /* peers found unreachable or unproved while reserving */
    int status; /* -1 until decided */
    uint64_t started_ms, stop_by_ms;
    uint64_t abort_due_ms; /* an MPI_Abort waits for its grace; 0 none */
    int abort_status;
    char abort_said[160];
    uint64_t stage_total, staged;
    int progress; /* a progress line is on the terminal */
    uint8_t key[SEC_KEY_LEN]; /* authenticates the job's processes */
    struct proc_addr *addrs;  /* where each process listens (MPI) */
    int mpi;                  /* processes reported addresses: MPI job */
    int table_sent;
    uint32_t view; /* replicated MPI: the last membership view sent */
    uint64_t *suspect_ms; /* per process: first suspected at, or 0 */
    struct progress *pg;  /* replicas: who falls behind */
    struct event *ev_sig[3], *ev_tick, *ev_timeout;
};

static void pc_on_ready(struct channel *, void *);
static void pc_on_msg(struct channel *, const struct msg *, void *);
static void pc_on_close(struct channel *, const char *, int, void *);
static void pc_on_drain(struct channel *, void *);
static void co_replan(struct coord *);
static void co_early_replan(struct coord *);
static void co_probe_arm(struct coord *);
static void pc_lost_in_reserve(struct pconn *, const char *);
static void co_stop(struct coord *, int status);
static void co_check_stopped(struct coord *);
static void co_abort_now(struct coord *);
static void co_maybe_send_table(struct coord *);
static void co_send_view(struct coord *, int force);

static const struct channel_cbs pc_cbs = {
    .on_ready = pc_on_ready,
    .on_msg = pc_on_msg,
    .on_close = pc_on_close,
    .on_drain = pc_on_drain,
};

static const char *
pc_host(const struct pconn *pc)
{
    return pc->co->peers[pc->idx].host_label;
}

static void
co_progress_clear(struct coord *co)
{
    if (co->progress) {
        fputs("\r\033[K", stderr);
        co->progress = 0;
    }
}

/* One line on stderr, above any progress line. */
static void __attribute__((format(printf, 2, 3)))
co_say(struct coord *co, const char *fmt, ...)
{
    va_list ap;

    co_progress_clear(co);
    fputs("p2prun: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void
co_done(struct coord *co)
{
    co->phase = PH_DONE;
    event_base_loopbreak(co->base);
}

/* Give up before anything ran: nothing to stop, just say why. */
static void
co_fail_early(struct coord *co, int status, const char *why)
{
    co_say(co, "%s", why);
    co->status = status;
    co_done(co);
}

static void
pc_send(struct pconn *pc, const struct msg *m)
{
    if (pc->ch != NULL)
        channel_send(pc->ch, m);
}

static void
pc_close(struct pconn *pc)
{
    if (pc->ch != NULL)
        channel_close(pc->ch);
    pc->ch = NULL;
    stage_peer_free(pc->sp);
    pc->sp = NULL;
    pc->state = PC_GONE;
}

/* --- reserve ----------------------------------------------------------- */

static void
pc_reserve(struct pconn *pc, uint32_t n)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_RESERVE;
    memcpy(m.u.reserve.job, pc->co->job, WIRE_JOB_ID_LEN);
    m.u.reserve.slots = n;
    m.u.reserve.lease_ms = (uint32_t)pc->co->js->lease_ms;
    pc_send(pc, &m);
}

static void
pc_connect(struct pconn *pc)
{
    struct coord *co = pc->co;
    struct channel_params cp;
    struct netaddr na;
    char err[160];

    if (netaddr_parse(co->peers[pc->idx].addr, 0, &na, err, sizeof err) == -1) {
        snprintf(pc->why, sizeof pc->why, "%s", err);
        pc->state = PC_GONE;
        return;
    }
    group_params(co->group, FRAME_MAX_REQUEST, 0, &cp);
    pc->ch = channel_connect(co->base, &na, NULL, &cp, &pc_cbs, pc);
    pc->state = pc->ch != NULL ? PC_CONNECTING : PC_GONE;
    if (pc->ch == NULL)
        snprintf(pc->why, sizeof pc->why, "cannot create a socket");
    pc->last_heard_ms = pc->since_ms = monotime_ms();
}

/* Is the reservation slow, or were candidates found unusable?  Then the
 * coordinator hedges: it probes beyond the plan, and plans on peers that
 * proved themselves first.  Otherwise the plan is the strategy's alone. */
static int
co_hedging(const struct coord *co)
{
    return co->unusable > 0 ||
           monotime_ms() - co->started_ms >= CO_PROBE_AFTER_MS;
}

/* Peers being connected to or proved now. */
static int
co_in_flight(const struct coord *co)
{
    size_t i;
    int n = 0;

    for (i = 0; i < co->npeers; i++)
        if (co->pc[i].state == PC_CONNECTING || co->pc[i].state == PC_PROVING)
            n++;
    return n;
}

/* Hedge: connect to candidates the plan does not use yet, best first, so
 * that when planned peers turn out unusable the next plan finds peers
 * already proved.  Bounded: CO_PROBE_MAX in flight. */
static void
co_probe(struct coord *co)
{
    size_t i, best;
    int inflight = co_in_flight(co);

    if (!co_hedging(co))
        return;
    while (inflight < CO_PROBE_MAX) {
        best = co->npeers;
        for (i = 0; i < co->npeers; i++) {
            const struct pconn *pc = &co->pc[i];

            if (pc->state != PC_IDLE || pc->avail == 0)
                continue;
            /* Known round trip first (0 is unknown), then more slots. */
            if (best == co->npeers ||
                (co->peers[i].rtt_us != 0 &&
                 (co->peers[best].rtt_us == 0 ||
                  co->peers[i].rtt_us < co->peers[best].rtt_us)) ||
                (co->peers[i].rtt_us == co->peers[best].rtt_us &&
                 pc->avail > co->pc[best].avail))
                best = i;
        }
        if (best == co->npeers)
            return;
        pc_connect(&co->pc[best]);
        inflight++;
    }
}

/* A reservation answered, refused or lost: re-plan once all are in. */
static void
co_reserve_answered(struct coord *co)
{
    if (--co->pending == 0 && co->phase == PH_RESERVE)
        co_replan(co);
    else
        co_early_replan(co);
}

/* The peer can no longer give us anything. */
static void
pc_lost_in_reserve(struct pconn *pc, const char *why)
{
    struct coord *co = pc->co;
    int asking = pc->asking > 0;

    if (why != NULL)
        snprintf(pc->why, sizeof pc->why, "%s", why);
    pc->avail = pc->reserved = pc->asking = 0;
    pc_close(pc);
    co->unusable++;
    if (co->phase == PH_RESERVE)
        co_probe(co);
    if (asking)
        co_reserve_answered(co);
}

/* What refusals said, for the final error. */
static void
co_refusals(struct coord *co, char *buf, size_t len)
{
    size_t i, used = 0;
    int n, shown = 0, more = 0;

    buf[0] = '\0';
    for (i = 0; i < co->npeers && used + 1 < len; i++) {
        if (co->pc[i].why[0] == '\0')
            continue;
        /* Hundreds of unusable peers make one line, not a page. */
        if (shown == CO_REFUSALS_SHOWN) {
            more++;
            continue;
        }
        n = snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : " (",
                     pc_host(&co->pc[i]), co->pc[i].why);
        if (n < 0 || (size_t)n >= len - used) {
            used = len - 1;
            break;
        }
        used += (size_t)n;
        shown++;
    }
    if (more > 0 && used + 1 < len) {
        n = snprintf(buf + used, len - used, "; and %d more", more);
        if (n > 0 && (size_t)n < len - used)
            used += (size_t)n;
    }
    if (used > 0 && used + 2 < len)
        strcat(buf, ")");
}

static void co_stage_start(struct coord *);

static void
co_backoff_done(evutil_socket_t fd, short what, void *arg)
{
    struct coord *co = arg;

    (void)fd;
    (void)what;
    if (co->phase == PH_RESERVE)
        co_replan(co);
}

/* The plan failed because peers refused slots that other jobs hold while
 * the network has enough: two jobs reserving at once can each hold part
 * of what the other needs.  Let go of everything, wait a random while,
 * and try again from the supernode's figures; the job that comes back
 * first gets the slots.  0 if we should give up instead. */
static int
co_backoff(struct coord *co)
{
    struct timeval tv;
    size_t i;
    int refused = 0;
    uint32_t total = 0, jitter;
    struct msg m;

    for (i = 0; i < co->npeers; i++) {
        refused |= co->pc[i].why[0] != '\0' && co->pc[i].state != PC_GONE;
        total += co->peers[i].res.slots_total;
    }
    if (!refused || co->backoffs >= CO_CONTENTION_RETRIES ||
        total < (uint32_t)(co->js->n * co->js->r) ||
        monotime_ms() - co->started_ms > CO_ALLOC_MS / 2)
        return 0;
    co->backoffs++;
    for (i = 0; i < co->npeers; i++) {
        struct pconn *pc = &co->pc[i];

        if (pc->reserved > 0 && pc->state == PC_READY) {
            memset(&m, 0, sizeof m);
            m.type = MSG_RELEASE;
            memcpy(m.u.job, co->job, WIRE_JOB_ID_LEN);
            pc_send(pc, &m);
        }
        pc->reserved = 0;
        pc->why[0] = '\0';
        if (pc->state != PC_GONE)
            pc->avail = co->peers[i].res.slots_free;
    }
    /* 50-450 ms, more each time: the two jobs soon drift apart. */
    tv.tv_sec = 0;
    sec_random(&jitter, sizeof jitter);
    tv.tv_usec = (suseconds_t)(50000 * co->backoffs + (int)(jitter % 400000u));
    if (co->ev_backoff == NULL)
        co->ev_backoff = evtimer_new(co->base, co_backoff_done, co);
    evtimer_add(co->ev_backoff, &tv);
    return 1;
}


/* The reserve phase's own tick: probes beyond the plan once it is slow to
 * hold, and the deadline of node proofs. */
static void
co_probe_tick(evutil_socket_t fd, short what, void *arg)
{
    struct coord *co = arg;
    uint64_t now = monotime_ms();
    int ms = co->group->handshake_ms;
    size_t i;

    if (co->phase != PH_RESERVE) {
        evtimer_del(co->ev_probe);
        return;
    }
    for (i = 0; i < co->npeers; i++) {
        struct pconn *pc = &co->pc[i];

        /* Connect and handshake are bounded by the channel; the proof
         * gets as long again. */
        if (pc->state == PC_PROVING && now - pc->since_ms > 2 * (uint64_t)ms)
            pc_lost_in_reserve(pc, "no node key proof in time");
        if (co->phase != PH_RESERVE)
            return;
    }
    co_probe(co);
    co_early_replan(co);
}

static void
co_probe_arm(struct coord *co)
{
    struct timeval tv = {0, CO_PROBE_TICK_MS * 1000};

    if (co->phase != PH_RESERVE)
        return;
    if (co->ev_probe == NULL)
        co->ev_probe = event_new(co->base, -1, EV_PERSIST, co_probe_tick, co);
    if (!evtimer_pending(co->ev_probe, NULL))
        evtimer_add(co->ev_probe, &tv);
}

/* A placement over the candidates that are not gone; with proved_only,
 * over the peers that proved their node key.  0, or -1 with err. */
static int
co_plan(struct coord *co, int proved_only, char *err, size_t errlen)
{
    struct alloc_cand *cand;
    size_t i;
    int rc;

    cand = xcalloc(co->npeers ? co->npeers : 1, sizeof *cand);
    for (i = 0; i < co->npeers; i++) {
        const struct pconn *pc = &co->pc[i];

        snprintf(cand[i].host, sizeof cand[i].host, "%s",
                 co->peers[i].host_label);
        cand[i].slots_free =
            pc->state == PC_GONE || (proved_only && pc->state < PC_READY)
                ? 0
                : pc->avail;
        cand[i].rtt_us = co->peers[i].rtt_us;
        cand[i].mem_free = co->peers[i].res.mem_free;
    }
    if (co->planned)
        alloc_plan_free(&co->plan);
    rc = alloc_plan(cand, co->npeers, co->js->n, co->js->r, co->js->strategy,
                    &co->plan, err, errlen);
    free(cand);
    co->planned = rc == 0;
    return rc;
}

static void
co_replan(struct coord *co)
{
    uint32_t *counts;
    char err[256], refusals[768], msg[1400];
    size_t i;
    int rc, proved = 0;

    if (++co->replans > CO_MAX_REPLANS(co->npeers) ||
        monotime_ms() - co->started_ms > CO_ALLOC_MS) {
        co_refusals(co, refusals, sizeof refusals);
        snprintf(msg, sizeof msg, "could not reserve slots in time%s",
                 refusals);
        co_fail_early(co, 1, msg);
        return;
    }
    /* Peers that proved themselves first; the others only if needed. */
    for (i = 0; i < co->npeers; i++)
        proved |= co->pc[i].state >= PC_READY && co->pc[i].state != PC_GONE;
    rc = -1;
    if (proved && co_hedging(co))
        rc = co_plan(co, 1, err, sizeof err);
    if (rc == -1)
        rc = co_plan(co, 0, err, sizeof err);
    if (rc == -1 && co_backoff(co))
        return;
    if (rc == -1) {
        co_refusals(co, refusals, sizeof refusals);
        snprintf(msg, sizeof msg, "%s%s%s", err, co->unwilling, refusals);
        co_fail_early(co, 1, msg);
        return;
    }
    counts = xcalloc(co->npeers ? co->npeers : 1, sizeof *counts);
    alloc_plan_counts(&co->plan, co->npeers, counts);
    for (i = 0; i < co->npeers; i++) {
        struct pconn *pc = &co->pc[i];

        pc->planned = counts[i];
        if (pc->planned <= pc->reserved)
            continue;
        /* More is needed here: ask now, or once connected. */
        pc->asking = pc->planned - pc->reserved;
        co->pending++;
        if (pc->state == PC_IDLE)
            pc_connect(pc);
        else if (pc->state == PC_READY)
            pc_reserve(pc, pc->asking);
        if (pc->state == PC_GONE) {
            pc->asking = 0;
            co->pending--;
            pc->avail = 0;
        }
    }
    free(counts);
    co_probe_arm(co);
    if (co->pending == 0) {
        /* Either everything is held, or a peer failed at once. */
        for (i = 0; i < co->npeers; i++)
            if (co->pc[i].planned > co->pc[i].reserved) {
                co_replan(co);
                return;
            }
        co_stage_start(co);
    }
}

/* The plan still waits for peers that have not proved their key after
 * half a handshake time: if the proved peers alone can hold the job, stop
 * waiting for the others, whose timeout (a tarpit's, say) would otherwise
 * be the job's. */
static void
co_early_replan(struct coord *co)
{
    char err[256];
    size_t i;
    int waiting = 0;

    /* Not before half a handshake time: a peer that is merely slow (a
     * loaded machine) keeps its place in the strategy's plan. */
    if (co->phase != PH_RESERVE || co->pending == 0 ||
        monotime_ms() - co->started_ms < (uint64_t)co->group->handshake_ms / 2)
        return;
    for (i = 0; i < co->npeers; i++) {
        const struct pconn *pc = &co->pc[i];

        if (pc->asking == 0)
            continue;
        if (pc->state == PC_READY)
            return; /* a reservation is in flight: its answer comes first */
        waiting = 1;
    }
    if (!waiting || co_plan(co, 1, err, sizeof err) == -1)
        return;
    for (i = 0; i < co->npeers; i++) {
        struct pconn *pc = &co->pc[i];

        if (pc->asking > 0 && pc->state < PC_READY) {
            pc->asking = 0; /* it may still prove itself, for later plans */
            co->pending--;
        }
    }
    if (co->pending == 0)
        co_replan(co);
}

/* The peer answered the node-key challenge. */
static void
pc_proved(struct pconn *pc, const struct msg_node *p)
{
    char why[WIRE_MAX_TEXT + 1];

    if (nodeproof_check(pc->ch, p, pc->co->peers[pc->idx].id, why,
                        sizeof why) == -1) {
        log_debug("peer %s (%s): %s", pc_host(pc), pc->co->peers[pc->idx].addr,
                  why);
        pc_lost_in_reserve(pc, why);
        return;
    }
    pc->state = PC_READY;
    if (pc->asking > 0)
        pc_reserve(pc, pc->asking);
    else
        co_early_replan(pc->co);
}

static void
pc_reserve_reply(struct pconn *pc, const struct msg_reply *r)
{
    if (pc->asking == 0)
        return;
    if (r->ok) {
        pc->reserved += pc->asking;
        pc->why[0] = '\0';
    } else {
        pc->avail = pc->reserved + r->granted;
        snprintf(pc->why, sizeof pc->why, "%s", r->reason);
    }
    pc->asking = 0;
    co_reserve_answered(pc->co);
}

/* --- stage and launch -------------------------------------------------- */

static void
pc_launch(struct pconn *pc)
{
    struct coord *co = pc->co;
    const struct job_spec *js = co->js;
    struct msg m;
    struct msg_launch *l = &m.u.launch;
    char *prog = NULL;
    int i, k = 0;

    memset(&m, 0, sizeof m);
    m.type = MSG_LAUNCH;
    memcpy(l->job, co->job, WIRE_JOB_ID_LEN);
    l->size = (uint32_t)js->n;
    l->nreplicas = (uint32_t)js->r;
    l->lease_ms = (uint32_t)js->lease_ms;
    l->procs = xcalloc(pc->planned, sizeof *l->procs);
    for (i = 0; i < js->n * js->r; i++)
        if (co->plan.slots[i] == pc->idx) {
            l->procs[k].rank = (uint32_t)(i / js->r);
            l->procs[k].replica = (uint32_t)(i % js->r);
            co->rep[i] = REP_RUNNING;
            progress_start(co->pg, i, monotime_ms());
            k++;
        }
    l->nprocs = (size_t)k;
    l->argv = xcalloc((size_t)js->argc + 1, sizeof *l->argv);
    for (i = 0; i < js->argc; i++)
        l->argv[i] = js->argv[i];
    if (co->prog >= 0) {
        xasprintf(&prog, "./%s", co->files[co->prog].name);
        l->argv[0] = prog;
    }
    l->nargv = (size_t)js->argc;
    l->env = js->env;
    l->nenv = (size_t)js->nenv;
    l->files = xcalloc((size_t)co->nfiles + 1, sizeof *l->files);
    for (i = 0; i < co->nfiles; i++) {
        snprintf(l->files[i].name, sizeof l->files[i].name, "%s",
                 co->files[i].name);
        memcpy(l->files[i].hash, co->files[i].hash, SEC_HASH_LEN);
        l->files[i].executable = co->files[i].executable;
    }
    l->nfiles = (size_t)co->nfiles;
    pc_send(pc, &m);
    pc->state = PC_LAUNCHING;
    free(l->procs);
    free(l->argv);
    free(l->files);
    free(prog);
}

static void
co_stop_for_staging(struct pconn *pc, const char *err)
{
    co_say(pc->co, "%s (to %s)", err, pc_host(pc));
    co_stop(pc->co, 1);
}

/* Stream the next needed file, or launch once every file is there. */
static void
pc_pump(struct pconn *pc)
{
    struct coord *co = pc->co;
    char err[320];
    int rc;

    if (pc->state != PC_READY || co->phase != PH_STAGE || pc->sp == NULL)
        return;
    rc = stage_peer_pump(pc->sp, pc->ch, &co->staged, err, sizeof err);
    if (rc == -1)
        co_stop_for_staging(pc, err);
    else if (rc == 1) {
        stage_peer_free(pc->sp);
        pc->sp = NULL;
        pc_launch(pc);
    }
}

static void
co_stage_start(struct coord *co)
{
    struct msg m;
    size_t i;

    co->phase = PH_STAGE;
    if (getenv("P2P_TEST_PAUSE_AFTER_RESERVE") != NULL) {
        /* Tests only: a window to kill p2prun between reservation and
         * launch.  Blocking is the point. */
        sleep((unsigned)atoi(getenv("P2P_TEST_PAUSE_AFTER_RESERVE")));
    }
    for (i = 0; i < co->npeers; i++) {
        struct pconn *pc = &co->pc[i];

        if (pc->planned == 0) {
            if (pc->state != PC_IDLE && pc->state != PC_GONE) {
                memset(&m, 0, sizeof m);
                m.type = MSG_RELEASE;
                memcpy(m.u.job, co->job, WIRE_JOB_ID_LEN);
                channel_close_after(pc->ch, &m);
                pc->ch = NULL;
                pc->state = PC_GONE;
            }
            continue;
        }
        if (co->nfiles == 0)
            pc_launch(pc);
        else
            pc->sp = stage_peer_new(co->files, co->nfiles, pc->ch);
    }
}

static void
pc_file_reply(struct pconn *pc, const struct msg *m)
{
    char err[320];

    if (pc->sp == NULL)
        return;
    if (stage_peer_reply(pc->sp, m, &pc->co->stage_total, err, sizeof err) ==
        -1) {
        co_stop_for_staging(pc, err);
        return;
    }
    pc_pump(pc);
}

/* --- run --------------------------------------------------------------- */

static void co_maybe_done(struct coord *);

/* Replicated MPI: only we declare processes dead.  Every process that
 * failed so far goes, as one numbered view, to every peer, which hands it
 * to its processes: they stop waiting on the dead and turn to the next
 * replica of each rank (replication/rep.c).  Before the address table
 * goes out, the table itself says who is missing. */
static void
co_send_view(struct coord *co, int force)
{
    struct msg m;
    size_t i;
    int j, n = co->js->n * co->js->r;

    if (!co->table_sent) {
        co_maybe_send_table(co); /* it may have waited for that one */
        /* A process declared dead while it may still run must be killed
         * by its peer even before (or without) an address table: the
         * library skips views that come before its table. */
        if (!force)
            return;
    }
    memset(&m, 0, sizeof m);
    m.type = MSG_VIEW;
    memcpy(m.u.view.job, co->job, WIRE_JOB_ID_LEN);
    m.u.view.number = ++co->view;
    m.u.view.dead = xcalloc((size_t)n, sizeof *m.u.view.dead);
    for (j = 0; j < n; j++)
        if (co->rep[j] == REP_FAILED)
            m.u.view.dead[m.u.view.ndead++] = (uint32_t)j;
    for (i = 0; i < co->npeers; i++)
        if (co->pc[i].state == PC_LAUNCHING || co->pc[i].state == PC_RUNNING)
            pc_send(&co->pc[i], &m);
    free(m.u.view.dead);
}

/* One process of the job has ended (or is lost). */
static void
co_replica_end(struct coord *co, int rank, int replica, int status)
{
    int i, r = co->js->r, left = 0, ok = 0, abort_pending;

    if (co->rep[rank * r + replica] != REP_RUNNING)
        return;
    co->rep[rank * r + replica] = status == 0 ? REP_OK : REP_FAILED;
    co->rep_status[rank * r + replica] = status;
    progress_end(co->pg, rank * r + replica, status == 0, monotime_ms());
    if (status != 0) {
        output_replica_dead(co->out, rank, replica);
        if (r > 1 && co->mpi && co->phase != PH_STOP)
            co_send_view(co, 0);
    }
    for (i = 0; i < r; i++) {
        if (co->rep[rank * r + i] == REP_RUNNING ||
            co->rep[rank * r + i] == REP_PENDING)
            left++;
        if (co->rep[rank * r + i] == REP_OK)
            ok = 1;
    }
    if (left > 0) {
        co_check_stopped(co);
        return;
    }
    output_rank_done(co->out, rank);
    co->ranks_left--;
    /* An exit while an MPI_Abort waits (the aborting process itself,
     * most likely) decides nothing: a crash may still come, and is the
     * cause; else the abort's grace ends the job. */
    abort_pending =
        co->abort_due_ms != 0 && status < 128 && co->phase != PH_STOP;
    if (!ok && co->status == -1 && !abort_pending) {
        /* A rank fails with its last replica: the job stops. */
        co->status = status;
        if (co->phase != PH_STOP) {
            if (r > 1)
                co_say(co, "rank %d failed: every replica is lost (the last, "
                           "replica %d, with status %d); stopping the job",
                       rank, replica, status);
            else
                co_say(co, "rank %d failed (status %d): stopping the job",
                       rank, status);
            co_stop(co, status);
        }
    }
    co_maybe_done(co);
    co_check_stopped(co);
}

/* The status of a replica evicted by its owner (EX_TEMPFAIL: worth
 * running again later). */
#define EVICTED_STATUS 75

/* " replica K" when ranks have replicas, else nothing. */
static const char *
co_replica_words(const struct coord *co, uint32_t replica)
{
    static char buf[32];

    if (co->js->r <= 1)
        return "";
    snprintf(buf, sizeof buf, " replica %u", replica);
    return buf;
}

static void
pc_proc_exit(struct pconn *pc, const struct msg_proc_exit *e)
{
    struct coord *co = pc->co;
    int i, status;

    if (e->rank >= (uint32_t)co->js->n || e->replica >= (uint32_t)co->js->r)
        return;
    i = (int)(e->rank * (uint32_t)co->js->r + e->replica);
    if (co->plan.slots[i] != pc->idx)
        return;
    if (e->evicted) {
        /* Not a crash: the owner took the machine back.  The rank goes on
         * with its other replicas, as for a lost host. */
        status = EVICTED_STATUS;
        if (co->phase != PH_STOP && co->rep[i] == REP_RUNNING)
            co_say(co, "rank %u%s evicted from %s: %s", e->rank,
                   co_replica_words(co, e->replica), pc_host(pc),
                   e->evict_reason[0] ? e->evict_reason : "owner active");
        co_replica_end(co, (int)e->rank, (int)e->replica, status);
        return;
    }
    if (e->limit == EXIT_LIMIT_MEMORY && co->phase != PH_STOP) {
        char size[32];

        co_say(co, "rank %u%s killed: memory limit %s reached on %s", e->rank,
               co_replica_words(co, e->replica), cli_bytes(size, sizeof size,
                                                           e->limit_value),
               pc_host(pc));
    } else if (e->limit == EXIT_LIMIT_PROCS && co->phase != PH_STOP &&
               (e->signaled || e->code != 0))
        co_say(co, "rank %u%s: process limit (%llu) reached on %s", e->rank,
               co_replica_words(co, e->replica),
               (unsigned long long)e->limit_value, pc_host(pc));
    if (e->signaled) {
        status = 128 + (int)(e->code & 0x7f);
        /* One declared dead was killed by its peer: already said; one
         * killed by its memory limit: said above. */
        if (co->phase != PH_STOP && co->rep[i] == REP_RUNNING &&
            e->limit != EXIT_LIMIT_MEMORY) {
            int k, live = 0;

            for (k = 0; k < co->js->r; k++)
                if (k != (int)e->replica &&
                    co->rep[e->rank * (uint32_t)co->js->r + (uint32_t)k] ==
                        REP_RUNNING)
                    live++;
            co_say(co, "rank %u replica %u on %s killed by signal %u (%s)%s",
                   e->rank, e->replica, pc_host(pc), e->code,
                   strsignal((int)e->code),
                   live > 0 ? "; the rank goes on with its other replicas"
                            : "");
        }
    } else
        status = (int)(e->code & 0xff);
    co_replica_end(co, (int)e->rank, (int)e->replica, status);
}

/* A peer is gone while its processes ran: they are lost. */
/* A process lost its connection to another.  A dead process is reported
 * by its peer at once, a silent peer by its lease; what is left is a
 * process alive and in touch with us but cut off from another (a partial
 * partition).  Give its peer a lease to report an end; then declare it
 * dead (its peer kills it when the view comes). */
static void
pc_suspect(struct pconn *pc, const struct msg_suspect *s)
{
    struct coord *co = pc->co;
    int n = co->js->n * co->js->r, by;

    if (s->rank >= (uint32_t)co->js->n || s->replica >= (uint32_t)co->js->r ||
        s->proc >= (uint32_t)n)
        return;
    by = (int)(s->rank * (uint32_t)co->js->r + s->replica);
    /* The first word counts: a process under suspicion that suspects
     * its accuser (both ends of a cut see it) is not heard. */
    if (co->plan.slots[by] != pc->idx || co->rep[s->proc] != REP_RUNNING ||
        co->js->r < 2 || co->suspect_ms[s->proc] != 0 ||
        co->suspect_ms[by] != 0)
        return;
    co->suspect_ms[s->proc] = monotime_ms();
}

/* Suspected a lease ago and still running as far as its peer says. */
static void
co_check_suspects(struct coord *co, uint64_t now)
{
    int i, r = co->js->r;

    for (i = 0; co->suspect_ms != NULL && i < co->js->n * r; i++) {
        if (co->suspect_ms[i] == 0 || co->rep[i] != REP_RUNNING ||
            now - co->suspect_ms[i] < (uint64_t)co->js->lease_ms)
            continue;
        co->suspect_ms[i] = 0;
        if (co->phase == PH_STOP)
            continue;
        co_say(co, "rank %d replica %d: cut off from other processes for a "
                   "whole lease; declared dead",
               i / r, i % r);
        co_replica_end(co, i / r, i % r, 1);
    }
}

/* Declare a live process dead, as a silent host's: its peer kills it
 * when the view names it, and every other lag is measured afresh. */
static void
co_declare_dead(struct coord *co, int i)
{
    co_replica_end(co, i / co->js->r, i % co->js->r, 1);
    if (co->phase != PH_STOP && !(co->mpi && co->table_sent))
        co_send_view(co, 1);
    progress_restart(co->pg, monotime_ms());
}

/* The progress rule: at most one laggard per tick (see progress.c). */
static void
co_check_progress(struct coord *co, uint64_t now)
{
    uint64_t lag;
    int i, partner;

    if (co->phase != PH_RUN && co->phase != PH_STAGE)
        return;
    if ((i = progress_laggard(co->pg, now, &partner, &lag)) < 0)
        return;
    co_say(co, "rank %d replica %d on %s: no progress for %.1f s while "
               "replica %d went on; declared dead",
           i / co->js->r, i % co->js->r,
           co->peers[co->plan.slots[i]].host_label, (double)lag / 1000.0,
           partner);
    co_declare_dead(co, i);
}

static void
pc_lost_in_run(struct pconn *pc, const char *why)
{
    struct coord *co = pc->co;
    int i, lost = 0;

    pc_close(pc);
    if (co->phase == PH_STAGE && pc->planned > 0) {
        int pending = 0;

        for (i = 0; i < co->js->n * co->js->r; i++)
            if (co->plan.slots[i] == pc->idx && co->rep[i] == REP_PENDING)
                pending = 1;
        /* Its processes never started: the job cannot be complete. */
        if (pending) {
            co_say(co, "lost peer %s before launch (%s)", pc_host(pc), why);
            co_stop(co, 1);
            return;
        }
    }
    for (i = 0; i < co->js->n * co->js->r; i++)
        if (co->plan.slots[i] == pc->idx && co->rep[i] == REP_RUNNING)
            lost++;
    if (lost > 0 && co->phase != PH_STOP)
        co_say(co, "lost peer %s (%s): %d process%s lost", pc_host(pc), why,
               lost, lost == 1 ? "" : "es");
    for (i = 0; i < co->js->n * co->js->r; i++)
        if (co->plan.slots[i] == pc->idx && co->rep[i] == REP_RUNNING)
            co_replica_end(co, i / co->js->r, i % co->js->r, 1);
}

static void
co_maybe_done(struct coord *co)
{
    size_t i;

    if (co->ranks_left > 0)
        return;
    if (co->abort_due_ms != 0) {
        co_abort_now(co); /* nobody left to crash: the abort stands */
        co_check_stopped(co);
        return;
    }
    if (co->status == -1)
        co->status = 0;
    for (i = 0; i < co->npeers; i++)
        if (co->pc[i].state != PC_GONE && co->pc[i].state != PC_IDLE)
            pc_close(&co->pc[i]);
    co_done(co);
}

/* While stopping: once no process can still report, the job is over. */
static void
co_check_stopped(struct coord *co)
{
    int i;

    if (co->phase != PH_STOP)
        return;
    for (i = 0; i < co->js->n * co->js->r; i++)
        if (co->rep[i] == REP_RUNNING || co->rep[i] == REP_PENDING)
            return;
    co_done(co);
}

/* Stop every process of the job; the exits, or the deadline, end it. */
static void
co_stop(struct coord *co, int status)
{
    struct msg m;
    size_t i;
    int launched = 0;

    if (co->status == -1)
        co->status = status;
    if (co->phase == PH_STOP || co->phase == PH_DONE)
        return;
    co->phase = PH_STOP;
    co->stop_by_ms = monotime_ms() + CO_STOP_MS;
    memset(&m, 0, sizeof m);
    m.type = MSG_KILL;
    memcpy(m.u.job, co->job, WIRE_JOB_ID_LEN);
    for (i = 0; i < co->npeers; i++)
        if (co->pc[i].state == PC_LAUNCHING || co->pc[i].state == PC_RUNNING) {
            pc_send(&co->pc[i], &m);
            launched = 1;
        }
    /* Pending processes that never started end now. */
    for (i = 0; i < (size_t)(co->js->n * co->js->r); i++)
        if (co->rep[i] == REP_PENDING)
            co->rep[i] = REP_FAILED;
    if (!launched)
        co_done(co);
    else
        co_check_stopped(co);
}

/* --- the peers' messages ------------------------------------------------ */

/* Every live process has said where it listens: tell them all (the
 * dead are left out; with replicas, the processes know them as dead),
 * in parts of WIRE_TABLE_PART entries that each fit a frame. */
static void
co_maybe_send_table(struct coord *co)
{
    struct msg m;
    struct proc_addr *all;
    size_t i, k = 0, first;
    int n = co->js->n * co->js->r, j;

    if (co->table_sent || !co->mpi)
        return;
    for (j = 0; j < n; j++)
        if (co->rep[j] != REP_FAILED && co->addrs[j].addr[0] == '\0')
            return;
    memset(&m, 0, sizeof m);
    m.type = MSG_TABLE;
    memcpy(m.u.table.job, co->job, WIRE_JOB_ID_LEN);
    memcpy(m.u.table.key, co->key, SEC_KEY_LEN);
    all = xcalloc((size_t)n, sizeof *all);
    /* Who failed already is left out: the processes know it is dead. */
    for (j = 0; j < n; j++)
        if (co->rep[j] != REP_FAILED)
            all[k++] = co->addrs[j];
    m.u.table.total = (uint32_t)k;
    for (first = 0; first < k; first += m.u.table.nprocs) {
        m.u.table.first = (uint32_t)first;
        m.u.table.procs = all + first;
        m.u.table.nprocs =
            k - first < WIRE_TABLE_PART ? k - first : WIRE_TABLE_PART;
        for (i = 0; i < co->npeers; i++)
            if (co->pc[i].state == PC_LAUNCHING ||
                co->pc[i].state == PC_RUNNING)
                pc_send(&co->pc[i], &m);
    }
    free(all);
    co->table_sent = 1;
}

static void
pc_proc_addr(struct pconn *pc, const struct msg_proc_addr *a)
{
    struct coord *co = pc->co;
    int i;

    if (a->p.rank >= (uint32_t)co->js->n || a->p.replica >= (uint32_t)co->js->r)
        return;
    i = (int)(a->p.rank * (uint32_t)co->js->r + a->p.replica);
    if (co->plan.slots[i] != pc->idx || co->addrs[i].addr[0] != '\0')
        return; /* not this peer's process, or said twice */
    co->addrs[i] = a->p;
    co->mpi = 1; /* processes that talk: an MPI job */
    co_maybe_send_table(co);
}

static void
pc_job_abort(struct pconn *pc, const struct msg_proc_addr *a)
{
    struct coord *co = pc->co;
    int status = a->status & 0xff;

    if (a->p.rank >= (uint32_t)co->js->n || a->p.replica >= (uint32_t)co->js->r ||
        co->plan.slots[a->p.rank * (uint32_t)co->js->r + a->p.replica] !=
            pc->idx)
        return;
    /* The first abort counts; it stops the job after its grace unless a
     * crash, its likely cause, is reported first. */
    if (co->phase == PH_STOP || co->abort_due_ms != 0)
        return;
    snprintf(co->abort_said, sizeof co->abort_said,
             "rank %u (replica %u on %s) called MPI_Abort with %d: "
             "stopping the job",
             a->p.rank, a->p.replica, pc_host(pc), (int)a->status);
    co->abort_status = status != 0 ? status : 1;
    co->abort_due_ms = monotime_ms() + CO_ABORT_GRACE_MS;
}

/* The grace of an MPI_Abort is over (or nothing is left to wait for):
 * it stops the job, unless a crash already did. */
static void
co_abort_now(struct coord *co)
{
    if (co->abort_due_ms == 0)
        return;
    co->abort_due_ms = 0;
    if (co->phase == PH_STOP || co->phase == PH_DONE)
        return;
    co_say(co, "%s", co->abort_said);
    co_stop(co, co->abort_status);
}

static void
pc_on_ready(struct channel *ch, void *arg)
{
    struct pconn *pc = arg;
    struct msg m;

    userkey_auth(&m, ch, pc->co->user_pk, pc->co->user_sk);
    channel_send(ch, &m);
    /* Anyone with the group key may register any address: the peer here
     * must prove the node key the supernode listed before we reserve. */
    nodeproof_challenge(pc->co->peers[pc->idx].id, &m);
    channel_send(ch, &m);
    pc->state = PC_PROVING;
    pc->since_ms = monotime_ms();
}

static void
pc_violation(struct pconn *pc, const char *what)
{
    char why[128];

    snprintf(why, sizeof why, "protocol error: unexpected %s", what);
    log_warnx("peer %s: %s", pc_host(pc), why);
    if (pc->co->phase == PH_RESERVE)
        pc_lost_in_reserve(pc, why);
    else
        pc_lost_in_run(pc, why);
}

static void
pc_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct pconn *pc = arg;
    struct coord *co = pc->co;
    int i;

    pc->last_heard_ms = monotime_ms();
    switch (m->type) {
    case MSG_PING:
        channel_pong(ch, m);
        return;
    case MSG_PONG:
        return;
    case MSG_NODE_PROOF:
        if (pc->state != PC_PROVING)
            break;
        pc_proved(pc, &m->u.node);
        return;
    case MSG_RESERVE_REPLY:
        if (memcmp(m->u.reply.job, co->job, WIRE_JOB_ID_LEN) != 0 ||
            pc->state != PC_READY)
            break;
        pc_reserve_reply(pc, &m->u.reply);
        return;
    case MSG_FILE_NEED:
    case MSG_FILE_DONE:
        pc_file_reply(pc, m);
        return;
    case MSG_LAUNCH_REPLY:
        if (memcmp(m->u.reply.job, co->job, WIRE_JOB_ID_LEN) != 0 ||
            pc->state != PC_LAUNCHING)
            break;
        if (!m->u.reply.ok) {
            if (strncmp(m->u.reply.reason, "command not found: ", 19) == 0)
                co_say(co, "%s", m->u.reply.reason);
            else
                co_say(co, "launch on %s failed: %s", pc_host(pc),
                       m->u.reply.reason);
            for (i = 0; i < co->js->n * co->js->r; i++)
                if (co->plan.slots[i] == pc->idx)
                    co->rep[i] = REP_FAILED;
            pc->state = PC_GONE;
            co_stop(co, 1);
            co_check_stopped(co);
            return;
        }
        pc->state = PC_RUNNING;
        for (i = 0; i < (int)co->npeers; i++)
            if (co->pc[i].planned > 0 && co->pc[i].state != PC_RUNNING)
                return;
        if (co->phase == PH_STAGE) {
            co->phase = PH_RUN;
            co_progress_clear(co);
        }
        return;
    case MSG_OUTPUT:
        if (memcmp(m->u.data.job, co->job, WIRE_JOB_ID_LEN) != 0 ||
            m->u.data.rank >= (uint32_t)co->js->n ||
            m->u.data.replica >= (uint32_t)co->js->r ||
            co->plan.slots[m->u.data.rank * (uint32_t)co->js->r +
                           m->u.data.replica] != pc->idx)
            break;
        output_data(co->out, (int)m->u.data.rank, (int)m->u.data.replica,
                    (int)m->u.data.stream, m->u.data.data, m->u.data.len);
        progress_output(co->pg,
                        (int)(m->u.data.rank * (uint32_t)co->js->r +
                              m->u.data.replica),
                        (int)m->u.data.stream, m->u.data.data, m->u.data.len,
                        monotime_ms());
        return;
    case MSG_PROGRESS:
        if (memcmp(m->u.note.job, co->job, WIRE_JOB_ID_LEN) != 0 ||
            m->u.note.rank >= (uint32_t)co->js->n ||
            m->u.note.replica >= (uint32_t)co->js->r ||
            co->plan.slots[m->u.note.rank * (uint32_t)co->js->r +
                           m->u.note.replica] != pc->idx)
            break;
        progress_count(co->pg,
                       (int)(m->u.note.rank * (uint32_t)co->js->r +
                             m->u.note.replica),
                       m->u.note.value, monotime_ms());
        return;
    case MSG_PROC_EXIT:
        if (memcmp(m->u.exit.job, co->job, WIRE_JOB_ID_LEN) != 0)
            break;
        pc_proc_exit(pc, &m->u.exit);
        return;
    case MSG_PROC_ADDR:
        if (memcmp(m->u.addr.job, co->job, WIRE_JOB_ID_LEN) != 0)
            break;
        pc_proc_addr(pc, &m->u.addr);
        return;
    case MSG_JOB_ABORT:
        if (memcmp(m->u.addr.job, co->job, WIRE_JOB_ID_LEN) != 0)
            break;
        pc_job_abort(pc, &m->u.addr);
        return;
    case MSG_SUSPECT:
        if (memcmp(m->u.suspect.job, co->job, WIRE_JOB_ID_LEN) != 0)
            break;
        pc_suspect(pc, &m->u.suspect);
        return;
    case MSG_ERROR:
        if (co->phase == PH_RESERVE)
            pc_lost_in_reserve(pc, m->u.error.text);
        else
            pc_lost_in_run(pc, m->u.error.text);
        return;
    default:
        break;
    }
    pc_violation(pc, msg_type_name(m->type));
}

static void
pc_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct pconn *pc = arg;

    pc->ch = NULL;
    if (pc->co->phase == PH_RESERVE)
        pc_lost_in_reserve(pc, reason);
    else
        pc_lost_in_run(pc, reason);
}

static void
pc_on_drain(struct channel *ch, void *arg)
{
    pc_pump(arg);
}

/* --- timers and signals ------------------------------------------------- */

static void
co_tick(evutil_socket_t fd, short what, void *arg)
{
    struct coord *co = arg;
    uint64_t now = monotime_ms();
    static uint64_t last_ping, last_tick;
    struct msg m;
    size_t i;

    /* We did not run for a long while (stopped, or a very loaded
     * machine): that silence was ours, not the peers'. */
    if (last_tick != 0 && now - last_tick > (uint64_t)co->js->lease_ms / 2) {
        if (now - last_tick > (uint64_t)co->js->lease_ms)
            co_say(co, "p2prun did not run for %.1f s, longer than the "
                       "job's lease: peers may have given the job up",
                   (double)(now - last_tick) / 1000.0);
        for (i = 0; i < co->npeers; i++)
            co->pc[i].last_heard_ms = now;
        progress_restart(co->pg, now);
    }
    last_tick = now;
    if (co->abort_due_ms != 0 && now >= co->abort_due_ms)
        co_abort_now(co);
    co_check_suspects(co, now);
    co_check_progress(co, now);

    if (now - last_ping >= (uint64_t)co->js->lease_ms / 4) {
        last_ping = now;
        memset(&m, 0, sizeof m);
        m.type = MSG_PING;
        m.u.stamp = now;
        for (i = 0; i < co->npeers; i++) {
            struct pconn *pc = &co->pc[i];

            if (pc->state < PC_READY || pc->state == PC_GONE)
                continue;
            if (now - pc->last_heard_ms > (uint64_t)co->js->lease_ms) {
                /* Its machine still acknowledging what we send means the
                 * daemon is alive but too busy to answer: say so. */
                const char *why =
                    pc->ch != NULL && channel_peer_acks(pc->ch) == 1
                        ? "overloaded: its machine acknowledges but peerd "
                          "has not answered for a whole lease"
                        : "silent for a whole lease";

                if (co->phase == PH_RESERVE)
                    pc_lost_in_reserve(pc, why);
                else
                    pc_lost_in_run(pc, why);
                continue;
            }
            pc_send(pc, &m);
        }
    }
    if (co->phase == PH_RESERVE && now - co->started_ms > CO_ALLOC_MS + 1000)
        co_fail_early(co, 1, "could not reserve slots in time");
    if (co->phase == PH_STOP && now >= co->stop_by_ms) {
        co_say(co, "processes did not report their end in time; their "
                   "peers will kill them");
        co_done(co);
    }
    if (co->phase == PH_STAGE && isatty(STDERR_FILENO) && co->stage_total > 0) {
        fprintf(stderr, "\rp2prun: staging %.1f of %.1f MB", co->staged / 1e6,
                co->stage_total / 1e6);
        co->progress = 1;
    }
}

static void
co_signal(evutil_socket_t sig, short what, void *arg)
{
    struct coord *co = arg;

    if (co->phase == PH_STOP) {
        co_done(co); /* a second signal: do not wait any longer */
        return;
    }
    co_say(co, "%s: stopping the job", strsignal((int)sig));
    if (co->phase == PH_RESERVE) {
        co->status = 128 + (int)sig;
        co_done(co);
        return;
    }
    co_stop(co, 128 + (int)sig);
}

static void
co_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct coord *co = arg;

    co_say(co, "timed out after %d s: stopping the job", co->js->timeout_s);
    if (co->phase == PH_RESERVE) {
        co->status = 124;
        co_done(co);
        return;
    }
    co_stop(co, 124);
}

/* output.c asks for a backup that runs too far ahead of the display to
 * be held (or read again): tell the peer that runs it. */
static void
co_output_hold(void *arg, int rank, int replica, int on)
{
    struct coord *co = arg;
    struct pconn *pc;
    struct msg m;

    pc = &co->pc[co->plan.slots[rank * co->js->r + replica]];
    if (pc->state != PC_LAUNCHING && pc->state != PC_RUNNING)
        return;
    log_info("rank %d replica %d on %s: %s its output", rank, replica,
             pc_host(pc), on ? "holding" : "reading again");
    memset(&m, 0, sizeof m);
    m.type = MSG_OUTPUT_HOLD;
    memcpy(m.u.note.job, co->job, WIRE_JOB_ID_LEN);
    m.u.note.rank = (uint32_t)rank;
    m.u.note.replica = (uint32_t)replica;
    m.u.note.value = on ? 1 : 0;
    pc_send(pc, &m);
}

/* Candidates: peers that share and have a free slot. */
static void
co_take_peers(struct coord *co, const struct msg_list_reply *list)
{
    size_t i;

    co->peers = xcalloc(list->npeers + 1, sizeof *co->peers);
    co->pc = xcalloc(list->npeers + 1, sizeof *co->pc);
    for (i = 0; i < list->npeers; i++) {
        const struct peer_entry *p = &list->peers[i];

        if (p->res.state == PEER_STATE_NOT_SHARING ||
            p->res.state == PEER_STATE_OWNER_BUSY) {
            size_t n = strlen(co->unwilling);

            /* Said when the job cannot be placed: why these did not count. */
            snprintf(co->unwilling + n, sizeof co->unwilling - n, "%s%s %s",
                     n == 0 ? "; " : ", ", p->host_label,
                     peer_state_name(p->res.state));
            continue;
        }
        if (p->res.slots_free == 0)
            continue;
        co->peers[co->npeers] = *p;
        co->pc[co->npeers].co = co;
        co->pc[co->npeers].idx = (int)co->npeers;
        co->pc[co->npeers].avail = p->res.slots_free;
        co->npeers++;
    }
}

int
coord_run(const struct p2p_config *cfg, const struct p2p_group *g,
          const uint8_t user_pk[SEC_SIGN_PK_LEN],
          const uint8_t user_sk[SEC_SIGN_SK_LEN], const struct job_spec *js)
{
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    struct coord co;
    struct msg_list_reply list;
    struct timeval tick = {0, CO_TICK_MS * 1000}, tmo;
    char err[1024];
    size_t i;
    int k, status;

    memset(&co, 0, sizeof co);
    co.cfg = cfg;
    co.group = g;
    co.user_pk = user_pk;
    co.user_sk = user_sk;
    co.js = js;
    co.status = -1;
    co.started_ms = monotime_ms();
    sec_random(co.job, sizeof co.job);
    sec_random(co.key, sizeof co.key);
    if (stage_prepare(js, &co.files, &co.nfiles, &co.prog, err, sizeof err) ==
        -1) {
        /* The program or a -l file as typed cannot be staged. */
        fprintf(stderr, "p2prun: %s\n", err);
        return 2;
    }
    if (snquery_list(cfg, g, 5000, &list, err, sizeof err) == -1) {
        fprintf(stderr, "p2prun: %s\n", err);
        stage_free(co.files, co.nfiles);
        return 1;
    }
    co_take_peers(&co, &list);
    free(list.peers);

    co.base = event_base_new();
    co.rep = xcalloc((size_t)(js->n * js->r), sizeof *co.rep);
    co.rep_status = xcalloc((size_t)(js->n * js->r), sizeof *co.rep_status);
    co.addrs = xcalloc((size_t)(js->n * js->r), sizeof *co.addrs);
    co.suspect_ms = xcalloc((size_t)(js->n * js->r), sizeof *co.suspect_ms);
    co.ranks_left = js->n;
    co.out =
        output_new(js->n, js->r, js->tag_output, STDOUT_FILENO, STDERR_FILENO);
    output_set_spool(co.out, js->spool_bytes, NULL, co_output_hold, &co);
    co.pg = progress_new(js->n, js->r,
                         (uint64_t)(js->lag_ms > 0 ? js->lag_ms : js->lease_ms));
    for (k = 0; k < 3; k++) {
        co.ev_sig[k] = evsignal_new(co.base, sigs[k], co_signal, &co);
        evsignal_add(co.ev_sig[k], NULL);
    }
    co.ev_tick = event_new(co.base, -1, EV_PERSIST, co_tick, &co);
    evtimer_add(co.ev_tick, &tick);
    if (js->timeout_s > 0) {
        tmo.tv_sec = js->timeout_s;
        tmo.tv_usec = 0;
        co.ev_timeout = evtimer_new(co.base, co_timeout, &co);
        evtimer_add(co.ev_timeout, &tmo);
    }

    co.phase = PH_RESERVE;
    co_replan(&co);
    if (co.phase != PH_DONE)
        event_base_dispatch(co.base);

    co_progress_clear(&co);
    for (i = 0; i < co.npeers; i++) {
        pc_close(&co.pc[i]);
    }
    for (k = 0; k < 3; k++)
        event_free(co.ev_sig[k]);
    event_free(co.ev_tick);
    if (co.ev_timeout != NULL)
        event_free(co.ev_timeout);
    if (co.ev_backoff != NULL)
        event_free(co.ev_backoff);
    if (co.ev_probe != NULL)
        event_free(co.ev_probe);
    event_base_loop(co.base, EVLOOP_NONBLOCK); /* reap the channels */
    event_base_free(co.base);
    status = co.status == -1 ? 1 : co.status;
    /* Output missing is never a success (said when it happened). */
    if (status == 0 && output_lost(co.out) > 0) {
        fprintf(stderr, "p2prun: the output of %d rank%s is incomplete: "
                        "exit status 1\n",
                output_lost(co.out), output_lost(co.out) == 1 ? "" : "s");
        status = 1;
    }
    if (co.planned)
        alloc_plan_free(&co.plan);
    output_free(co.out);
    stage_free(co.files, co.nfiles);
    free(co.rep);
    free(co.rep_status);
    free(co.suspect_ms);
    progress_free(co.pg);
    free(co.addrs);
    sec_wipe(co.key, sizeof co.key);
    free(co.peers);
    free(co.pc);
    return status;
}
