/*
 * replication/decide.c in a simulated job (repsim.h): the master's
 * decisions (a wildcard receive's source, a probe's outcome, the
 * requests Waitany or Waitsome return) followed by its backups, a
 * decision taking effect only once every live backup has it, the
 * master's death and its successor, and decision frames that must be
 * refused (a stream other than 0 or 1, out of range, ill-sized, from
 * another rank).
 */
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "rep.h"
#include "repsim.h"
#include "test.h"

static struct sim sim;
static int nrep;

#define P(rank, replica) ((rank)*nrep + (replica))

static int
setup(int size, int r)
{
    nrep = r;
    return CHECK(sim_init(&sim, size, r) == 0);
}

/* Calls on one simulated process: select it, then call (the cases
 * need no selection restored). */
static uint32_t
next(int proc)
{
    sim_use(&sim, proc);
    return dec_next();
}

static int
publish(int proc, uint32_t dn, const int32_t *v, int n)
{
    sim_use(&sim, proc);
    return dec_publish(dn, v, n);
}

static int
await(int proc, uint32_t dn, int32_t *v, int max, int *n)
{
    sim_use(&sim, proc);
    return dec_await(dn, v, max, n);
}

static int
lookup(int proc, uint32_t dn, int32_t *v)
{
    sim_use(&sim, proc);
    return dec_lookup(dn, v);
}

static int
master(int proc)
{
    sim_use(&sim, proc);
    return dec_master();
}

/* Master side of a wildcard receive: r (decision dn) matched src. */
static int
matched(int proc, struct mpii_req *r, int src)
{
    sim_use(&sim, proc);
    dec_matched(r, src);
    return dec_hold(r, MPI_SUCCESS);
}

static void
wildcard(struct mpii_req *r, uint32_t dn)
{
    memset(r, 0, sizeof *r);
    r->kind = REQ_RECV;
    r->active = 1;
    r->peer = MPI_ANY_SOURCE;
    r->dn = dn;
}

static int
only_to(const struct sim_frame *f, void *arg)
{
    return f->to == *(int *)arg;
}

static int
to_or_from(const struct sim_frame *f, void *arg)
{
    return f->to == *(int *)arg || f->from == *(int *)arg;
}

/* 2 ranks x 2: rank 0's master decides a wildcard receive's source, a
 * probe's outcome and a Waitsome's requests; its backup, reaching the
 * same calls (same numbers), follows. */
static void
t_backup_follows(void)
{
    int32_t v[4], probe[2] = {1, 42}, some[3] = {2, 0, 5};
    int n = 0;

    if (!setup(2, 2))
        return;
    CHECK(master(P(0, 0)));
    CHECK(!master(P(0, 1)));
    CHECK_EQ_INT(next(P(0, 0)), 1);
    v[0] = 1;
    CHECK_EQ_INT(publish(P(0, 0), 1, v, 1), MPI_SUCCESS);
    /* The backup's matching was told at once (a wildcard receive
     * posted before the decision came). */
    if (CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 1)) {
        CHECK_EQ_INT(sim.p[P(0, 1)].decided[0].dn, 1);
        CHECK_EQ_INT(sim.p[P(0, 1)].decided[0].src, 1);
    }
    CHECK_EQ_INT(next(P(0, 1)), 1);
    CHECK(lookup(P(0, 1), 1, &v[0]) && v[0] == 1);
    CHECK_EQ_INT(await(P(0, 1), 1, v, 4, &n), 1);
    CHECK_EQ_INT(n, 1);

    CHECK_EQ_INT(publish(P(0, 0), next(P(0, 0)), probe, 2), MPI_SUCCESS);
    CHECK_EQ_INT(publish(P(0, 0), next(P(0, 0)), some, 3), MPI_SUCCESS);
    CHECK_EQ_INT(await(P(0, 1), next(P(0, 1)), v, 4, &n), 1);
    CHECK(n == 2 && v[0] == 1 && v[1] == 42);
    CHECK_EQ_INT(await(P(0, 1), next(P(0, 1)), v, 2, &n), 1);
    CHECK(n == 2 && v[0] == 2 && v[1] == 0); /* at most max values */
    /* Rank 1 is not involved: its own decisions are its own. */
    CHECK_EQ_INT(sim.p[P(1, 1)].ndecided, 0);
    sim_fini(&sim);
}

/* The master's call does not return while a backup lacks the decision:
 * with the backup unreachable (not yet declared dead), publishing can
 * only wait (here: gives up, nothing left to run); once the view
 * declares it dead, nobody is left to wait for. */
static void
t_publish_waits_for_backups(void)
{
    int32_t v = 1;

    if (!setup(2, 2))
        return;
    sim.p[P(0, 1)].dead = 1; /* cut off, not declared */
    CHECK(publish(P(0, 0), next(P(0, 0)), &v, 1) != MPI_SUCCESS);
    sim.dead[P(0, 1)] = 1;
    sim_view(&sim);
    CHECK_EQ_INT(publish(P(0, 0), next(P(0, 0)), &v, 1), MPI_SUCCESS);
    sim_fini(&sim);
}

/* 2 ranks x 3: a master's wildcard receive completes only once both
 * backups acknowledged its decision; the death of the one that did not
 * answer also lets it go. */
static void
t_effect_when_every_backup_has_it(void)
{
    struct mpii_req r;
    int round, b1 = 1, b2 = 2;

    for (round = 0; round < 2; round++) {
        if (!setup(2, 3))
            return;
        wildcard(&r, next(P(0, 0)));
        CHECK_EQ_INT(matched(P(0, 0), &r, 1), 1);
        CHECK_EQ_INT(sim_queued(&sim, FR_DECIDE, P(0, 0), -1), 2);
        sim_run_if(&sim, to_or_from, &b1);
        CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 1);
        CHECK(r.active); /* backup 2 does not know yet */
        CHECK_EQ_INT(sim.p[P(0, 0)].ncompleted, 0);
        if (round == 0)
            sim_run(&sim, -1);
        else
            sim_kill(&sim, P(0, b2));
        CHECK(!r.active);
        CHECK_EQ_INT(r.dn, 0);
        CHECK_EQ_INT(sim.p[P(0, 0)].ncompleted, 1);
        sim_fini(&sim);
    }
}

/* 2 ranks x 3: the master dies after decision 2 reached only backup 1.
 * Backup 1 asks backup 2 what it has first (not master until it
 * answered), then leads: it passes on what it knows (backup 2 gets
 * decision 2), takes over the wildcard receives waiting for a decision
 * (rematch), and decides from then on; backup 2 follows it. */
static void
t_master_dies_successor_leads(void)
{
    struct mpii_req r1, r2;
    int32_t v[2];
    int n, b1 = P(0, 1), b2 = P(0, 2);

    if (!setup(2, 3))
        return;
    wildcard(&r1, next(P(0, 0)));
    (void)matched(P(0, 0), &r1, 1);
    sim_run(&sim, -1);
    wildcard(&r2, next(P(0, 0)));
    (void)matched(P(0, 0), &r2, 1);
    CHECK_EQ_INT(sim_run_if(&sim, only_to, &b1), 1);
    CHECK_EQ_INT(lookup(b2, 2, v), 0);
    sim_kill(&sim, P(0, 0));
    CHECK(!master(b1));
    CHECK_EQ_INT(sim.p[b1].rematched, 0);
    CHECK_EQ_INT(sim_queued(&sim, FR_DECIDE_ACK, b1, b2), 1);
    sim_run(&sim, -1);
    CHECK(master(b1));
    CHECK(!master(b2));
    CHECK_EQ_INT(sim.p[b1].rematched, 1);
    CHECK_EQ_INT(sim.p[b2].rematched, 0);
    CHECK(lookup(b2, 2, v) && v[0] == 1);
    CHECK_EQ_INT(sim.p[b2].ndecided, 2);
    /* Backups 1 and 2 numbered the same calls: 3 is next. */
    (void)next(b1);
    (void)next(b1);
    (void)next(b2);
    (void)next(b2);
    v[0] = 7;
    CHECK_EQ_INT(publish(b1, next(b1), v, 1), MPI_SUCCESS);
    CHECK_EQ_INT(await(b2, next(b2), v, 2, &n), 1);
    CHECK(n == 1 && v[0] == 7);
    sim_fini(&sim);
}

static int
from_to(const struct sim_frame *f, void *arg)
{
    const int *ft = arg;

    return f->from == ft[0] && f->to == ft[1];
}

/* 2 ranks x 3: the master dies after decision 1 reached only backup 2
 * (the frame to backup 1 is lost with it).  Regression: backup 1 led at
 * once and, reaching the call, decided for itself, while backup 2 had
 * followed the old master: two survivors with different sources for
 * one receive, and after backup 1 died too, backup 2's output disagreed
 * with what backup 1 had printed (test_three_replicas, once in CI).
 * Now backup 1 asks backup 2 first, adopts decision 1 and follows it. */
static void
t_successor_adopts_what_a_backup_has(void)
{
    struct mpii_req r1;
    int32_t v[2];
    int n, b1 = P(0, 1), b2 = P(0, 2), to_b2[2] = {P(0, 0), P(0, 2)};

    if (!setup(2, 3))
        return;
    wildcard(&r1, next(P(0, 0)));
    (void)matched(P(0, 0), &r1, 1);
    CHECK_EQ_INT(sim_run_if(&sim, from_to, to_b2), 1);
    CHECK(lookup(b2, 1, v) && v[0] == 1);
    CHECK_EQ_INT(lookup(b1, 1, v), 0);
    sim_kill(&sim, P(0, 0));
    CHECK(!master(b1));
    /* Backup 1 reaches the call: it waits for backup 2's answer, then
     * follows the old master's decision rather than making its own. */
    CHECK_EQ_INT(await(b1, next(b1), v, 2, &n), 1);
    CHECK(n == 1 && v[0] == 1);
    sim_run(&sim, -1);
    CHECK(master(b1));
    CHECK_EQ_INT(sim.p[b1].ndecided, 1);
    /* From then on backup 1 decides, and backup 2 follows. */
    (void)next(b2);
    v[0] = 0;
    CHECK_EQ_INT(publish(b1, next(b1), v, 1), MPI_SUCCESS);
    CHECK_EQ_INT(await(b2, next(b2), v, 2, &n), 1);
    CHECK(n == 1 && v[0] == 0);
    sim_fini(&sim);
}

/* After the view that has the master dead, its late decision frames are
 * dropped (a backup may have answered its successor already), and a
 * backup asked before its own view shows the asker leading answers once
 * it does. */
static void
t_dead_master_late_frames(void)
{
    struct wire_hdr h;
    int32_t v = 1, got;
    int b1 = P(0, 1), b2 = P(0, 2);

    if (!setup(2, 3))
        return;
    sim_kill_quiet(&sim, P(0, 0));
    sim_view_queue(&sim);
    /* Backup 1 reads the view first: it asks backup 2, which has not
     * read it yet and keeps the question. */
    sim_use(&sim, b1);
    rep_poll_ctl();
    CHECK_EQ_INT(sim_run_if(&sim, only_to, &b2), 1);
    CHECK_EQ_INT(sim_queued(&sim, 0, b2, b1), 0);
    sim_use(&sim, b2);
    rep_poll_ctl();
    CHECK_EQ_INT(sim_queued(&sim, FR_DECIDE_ACK, b2, b1), 1);
    sim_run(&sim, -1);
    CHECK(master(b1));
    /* A frame the dead master wrote before it died, which the kernel
     * still delivers (the simulation drops a dead process's frames: let
     * this one through). */
    memset(&h, 0, sizeof h);
    h.type = FR_DECIDE;
    h.total = 1;
    h.len = sizeof v;
    sim.p[P(0, 0)].dead = 0;
    sim_inject(&sim, P(0, 0), b2, &h, &v);
    sim.p[P(0, 0)].dead = 1;
    CHECK(sim_logged(&sim.p[b2], "from dead replica 0"));
    CHECK_EQ_INT(lookup(b2, 1, &got), 0);
    CHECK_EQ_INT(sim.p[b2].ndecided, 0);
    sim_fini(&sim);
}

/* A backup waiting for a decision when its master dies: the view comes
 * while it waits, and it decides itself (dec_await says 0). */
static void
t_waiting_backup_becomes_master(void)
{
    int32_t v[2];
    int n;

    if (!setup(2, 2))
        return;
    sim_kill_quiet(&sim, P(0, 0));
    CHECK(!master(P(0, 1))); /* the view is not read yet */
    CHECK_EQ_INT(await(P(0, 1), next(P(0, 1)), v, 2, &n), 0);
    CHECK(master(P(0, 1)));
    sim_fini(&sim);
}

/* Regression (4586700): a decision frame on a stream other than 0
 * (program order) or 1 (passive-target order) is malformed: refused
 * with a log line, not followed, not acknowledged, and no table grows
 * for it however far its number lies. */
static void
t_decision_stream_above_1_refused(void)
{
    static const uint32_t ctxs[] = {2, 3, 0x7fffffff, UINT32_MAX};
    struct wire_hdr h;
    int32_t v = 1, got;
    size_t i;

    if (!setup(2, 2))
        return;
    for (i = 0; i < sizeof ctxs / sizeof ctxs[0]; i++) {
        memset(&h, 0, sizeof h);
        h.type = FR_DECIDE;
        h.ctx = ctxs[i];
        h.total = i % 2 == 0 ? 1 : (1u << 24) + 100; /* near, and far */
        h.len = sizeof v;
        sim.p[P(0, 1)].nlog = 0;
        sim_inject(&sim, P(0, 0), P(0, 1), &h, &v);
        CHECK(sim_logged(&sim.p[P(0, 1)], "malformed decision from process 0"));
    }
    CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 0);
    CHECK_EQ_INT(lookup(P(0, 1), 1, &got), 0);
    CHECK_EQ_INT(sim_queued(&sim, FR_DECIDE_ACK, -1, -1), 0);
    /* The same on stream 0 is a decision. */
    h.ctx = 0;
    h.total = 1;
    sim_inject(&sim, P(0, 0), P(0, 1), &h, &v);
    CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 1);
    CHECK_EQ_INT(sim_queued(&sim, FR_DECIDE_ACK, P(0, 1), P(0, 0)), 1);
    sim_fini(&sim);
}

/* Other hostile decision frames: number 0, too far ahead, a length that
 * is not whole values, too many values, from a process of another rank. */
static void
t_decision_frames_checked(void)
{
    static int32_t big[DEC_MAX_VALUES + 1];
    struct wire_hdr h;
    int32_t got;

    if (!setup(2, 2))
        return;
    memset(&h, 0, sizeof h);
    h.type = FR_DECIDE;
    h.len = sizeof got;
    h.total = 0;
    sim_inject(&sim, P(0, 0), P(0, 1), &h, big);
    h.total = (1u << 24) + 2; /* dec_next is 0 here */
    sim_inject(&sim, P(0, 0), P(0, 1), &h, big);
    h.total = 1;
    h.len = 3;
    sim_inject(&sim, P(0, 0), P(0, 1), &h, big);
    h.len = sizeof big;
    sim_inject(&sim, P(0, 0), P(0, 1), &h, big);
    h.len = sizeof got;
    sim_inject(&sim, P(1, 0), P(0, 1), &h, big);
    CHECK_EQ_INT(sim.p[P(0, 1)].nlog, 5);
    CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 0);
    CHECK_EQ_INT(lookup(P(0, 1), 1, &got), 0);
    /* An acknowledgement of nothing the master sent: harmless. */
    h.type = FR_DECIDE_ACK;
    h.len = 0;
    h.total = 9;
    sim_inject(&sim, P(0, 1), P(0, 0), &h, NULL);
    CHECK_EQ_INT(sim.p[P(0, 0)].ncompleted, 0);
    sim_fini(&sim);
}

/* A program-order decision more than DEC_WINDOW beyond the backup's
 * position is refused (log line, no acknowledgement, nothing kept):
 * before, anything up to 2^24 ahead grew the backup's table to that
 * many pointers.  Within the window it is kept. */
static void
t_decision_window(void)
{
    static const uint32_t far[] = {DEC_WINDOW + 1, DEC_WINDOW + 2,
                                   (1u << 24) - 1, UINT32_MAX};
    struct wire_hdr h;
    int32_t v = 1, got;
    size_t i;

    if (!setup(2, 2))
        return;
    memset(&h, 0, sizeof h);
    h.type = FR_DECIDE;
    h.len = sizeof v;
    for (i = 0; i < sizeof far / sizeof far[0]; i++) {
        h.total = far[i];
        sim_inject(&sim, P(0, 0), P(0, 1), &h, &v);
    }
    CHECK_EQ_INT(sim.p[P(0, 1)].nlog, 4);
    CHECK(sim_logged(&sim.p[P(0, 1)], "beyond the window"));
    CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 0);
    CHECK_EQ_INT(lookup(P(0, 1), DEC_WINDOW + 1, &got), 0);
    CHECK_EQ_INT(sim_queued(&sim, FR_DECIDE_ACK, -1, -1), 0);
    h.total = DEC_WINDOW;
    sim_inject(&sim, P(0, 0), P(0, 1), &h, &v);
    CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 1);
    CHECK(lookup(P(0, 1), DEC_WINDOW, &got) && got == 1);
    /* Once the backup has drawn a number, the window moves with it. */
    (void)next(P(0, 1));
    h.total = DEC_WINDOW + 1;
    sim_inject(&sim, P(0, 0), P(0, 1), &h, &v);
    CHECK_EQ_INT(sim.p[P(0, 1)].ndecided, 2);
    sim_fini(&sim);
}

/* An honest master further ahead than its backup's window: its decision
 * is not sent (the backup would refuse it), the wildcard receive stays
 * held; the backup's position reports, as it draws numbers, open the
 * window, the master sends, and the receive completes.  Nothing is
 * refused on the way. */
static void
t_master_keeps_to_window(void)
{
    struct mpii_req r;
    uint32_t i, dn = 0, far = DEC_WINDOW + DEC_WINDOW / 2;
    int32_t v[2];
    int n;

    if (!setup(2, 2))
        return;
    for (i = 0; i < far; i++)
        dn = next(P(0, 0));
    wildcard(&r, dn);
    CHECK_EQ_INT(matched(P(0, 0), &r, 1), 1);
    CHECK_EQ_INT(sim_queued(&sim, FR_DECIDE, -1, -1), 0);
    for (i = 0; i < far - 1; i++) {
        (void)next(P(0, 1));
        sim_run(&sim, -1);
    }
    CHECK(!r.active);
    CHECK_EQ_INT(sim.p[P(0, 0)].ncompleted, 1);
    CHECK_EQ_INT(await(P(0, 1), next(P(0, 1)), v, 2, &n), 1);
    CHECK(n == 1 && v[0] == 1);
    CHECK_EQ_INT(sim.p[P(0, 1)].nlog, 0);
    sim_fini(&sim);
}

/* A forged position report (the backup far ahead) makes the master send
 * beyond the backup's window; the backup refuses it, and when it reaches
 * that number and waits, its report gets the decision sent again. */
static void
t_window_recovers_from_forged_report(void)
{
    struct mpii_req r;
    struct wire_hdr h;
    uint32_t i, dn = 0, far = DEC_WINDOW + 10;
    int32_t v[2];
    int n;

    if (!setup(2, 2))
        return;
    memset(&h, 0, sizeof h);
    h.type = FR_DECIDE_ACK;
    h.ctx = 2;
    h.total = DEC_WINDOW;
    sim_inject(&sim, P(0, 1), P(0, 0), &h, NULL);
    for (i = 0; i < far; i++)
        dn = next(P(0, 0));
    wildcard(&r, dn);
    CHECK_EQ_INT(matched(P(0, 0), &r, 1), 1);
    sim_run(&sim, -1);
    CHECK(sim_logged(&sim.p[P(0, 1)], "beyond the window"));
    CHECK(r.active);
    for (i = 0; i < far - 1; i++) {
        (void)next(P(0, 1));
        sim_run(&sim, -1);
    }
    CHECK(r.active); /* the reports so far lie below it */
    CHECK_EQ_INT(await(P(0, 1), next(P(0, 1)), v, 2, &n), 1);
    CHECK(n == 1 && v[0] == 1);
    sim_run(&sim, -1);
    CHECK(!r.active);
    sim_fini(&sim);
}

/* Passive-target order (stream 1): published without waiting, taken
 * once each in any order, a copy of one taken refused. */
static void
t_async_decisions(void)
{
    int32_t a[2] = {3, 4}, b[2] = {5, 6}, v[2];
    struct wire_hdr h;
    struct rep *old;
    int n = 0;

    if (!setup(2, 2))
        return;
    old = sim_use(&sim, P(0, 0));
    dec_async_publish(1, a, 2);
    dec_async_publish(2, b, 2);
    rep_instance_select(old);
    sim_run(&sim, -1);
    old = sim_use(&sim, P(0, 1));
    CHECK(dec_async_take(2, v, 2, &n) && n == 2 && v[0] == 5);
    CHECK(dec_async_take(1, v, 2, &n) && n == 2 && v[1] == 4);
    CHECK_EQ_INT(dec_async_take(1, v, 2, &n), 0);
    rep_instance_select(old);
    memset(&h, 0, sizeof h);
    h.type = FR_DECIDE;
    h.ctx = 1;
    h.total = 2;
    h.len = sizeof a;
    sim_inject(&sim, P(0, 0), P(0, 1), &h, a);
    CHECK(sim_logged(&sim.p[P(0, 1)], "out of range"));
    sim_fini(&sim);
}

static const struct test_case cases[] = {
    {"backups follow the master's decisions", t_backup_follows},
    {"publishing waits for every live backup", t_publish_waits_for_backups},
    {"a decision takes effect once every backup has it",
     t_effect_when_every_backup_has_it},
    {"the master dies, its successor leads", t_master_dies_successor_leads},
    {"the successor adopts what another backup has (regression)",
     t_successor_adopts_what_a_backup_has},
    {"a dead master's late frames dropped; a question kept for the view",
     t_dead_master_late_frames},
    {"a waiting backup becomes master", t_waiting_backup_becomes_master},
    {"decision stream above 1 refused (regression)",
     t_decision_stream_above_1_refused},
    {"hostile decision frames refused", t_decision_frames_checked},
    {"out-of-order decisions", t_async_decisions},
    {"program-order decisions within a window", t_decision_window},
    {"the master keeps to its backup's window", t_master_keeps_to_window},
    {"the window recovers from a forged report",
     t_window_recovers_from_forged_report},
};

TEST_MAIN(cases)
