/*
 * The supernode's job view (supernode/jobview.c): peers' reports merged
 * by job id into one rank map, a part a peer stops reporting ended, a
 * peer gone marks its running processes lost, the exit status of a
 * finished job, farms summed over peers, the export's bound on
 * processes, and the view's bound on jobs.
 */
#include <stdlib.h>
#include <string.h>

#include "supernode.h"
#include "test.h"

static uint8_t peer_a[SEC_SIGN_PK_LEN], peer_b[SEC_SIGN_PK_LEN];

static void
init_peers(void)
{
    memset(peer_a, 0xaa, sizeof peer_a);
    memset(peer_b, 0xbb, sizeof peer_b);
}

/* A job of size x 2 replicas as one peer reports it, holding the given
 * (rank, replica, state, code) processes. */
static struct job_info
job_of(uint8_t id, uint32_t size, struct job_proc *procs, size_t n)
{
    struct job_info j;

    memset(&j, 0, sizeof j);
    memset(j.job, id, sizeof j.job);
    snprintf(j.user, sizeof j.user, "alice");
    snprintf(j.command, sizeof j.command, "stencil");
    j.size = size;
    j.nreplicas = 2;
    j.started = 1000 + id;
    j.procs = procs;
    j.nprocs = n;
    return j;
}

static struct job_proc
proc(uint32_t rank, uint32_t replica, enum proc_run st, uint32_t code)
{
    struct job_proc p;

    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.replica = replica;
    p.state = st;
    p.code = code;
    return p;
}

static void
report(struct jobview *jv, const uint8_t *peer, const char *host,
       struct job_info *jobs, size_t n, uint64_t now)
{
    struct msg_job_report r;

    memset(&r, 0, sizeof r);
    r.jobs = jobs;
    r.njobs = n;
    jobview_report(jv, peer, host, &r, now);
}

/* Two peers each run one replica of both ranks: one job, four processes
 * sorted by rank then replica, each with its peer's host. */
static void
t_merge(void)
{
    struct jobview *jv = jobview_new();
    struct job_proc pa[] = {proc(1, 0, PROC_RUN_RUNNING, 0),
                            proc(0, 0, PROC_RUN_RUNNING, 0)};
    struct job_proc pb[] = {proc(0, 1, PROC_RUN_RUNNING, 0),
                            proc(1, 1, PROC_RUN_RUNNING, 0)};
    struct job_info ja = job_of(1, 2, pa, 2), jb = job_of(1, 2, pb, 2);
    struct job_info *out;
    size_t n;

    init_peers();
    report(jv, peer_a, "hostA", &ja, 1, 100);
    report(jv, peer_b, "hostB", &jb, 1, 100);
    CHECK_EQ_INT(jobview_count(jv), 1);
    jobview_export(jv, JOBVIEW_EXPORT_MAX_PROCS, &out, &n);
    if (!CHECK_EQ_INT(n, 1) || !CHECK_EQ_INT(out[0].nprocs, 4))
        goto out;
    CHECK_EQ_INT(out[0].hosts, 2);
    CHECK_EQ_INT(out[0].finished, 0);
    CHECK_EQ_INT(out[0].procs[0].rank, 0);
    CHECK_EQ_INT(out[0].procs[0].replica, 0);
    CHECK_EQ_STR(out[0].procs[0].host, "hostA");
    CHECK_EQ_STR(out[0].procs[1].host, "hostB");
    CHECK_EQ_INT(out[0].procs[3].rank, 1);
    CHECK_EQ_INT(out[0].procs[3].replica, 1);
    CHECK_EQ_STR(out[0].procs[3].host, "hostB");
out:
    codec_jobs_free(out, n);
    jobview_free(jv);
}

/* A peer that goes away takes its running processes with it (lost); the
 * job runs on with the other peer's, and finishes when that one stops
 * reporting it, with the exit status it last reported. */
static void
t_peer_gone_then_finished(void)
{
    struct jobview *jv = jobview_new();
    struct job_proc pa[] = {proc(0, 0, PROC_RUN_RUNNING, 0)};
    struct job_proc pb[] = {proc(0, 1, PROC_RUN_RUNNING, 0)};
    struct job_proc pb_done[] = {proc(0, 1, PROC_RUN_EXITED, 3)};
    struct job_info ja = job_of(2, 1, pa, 1), jb = job_of(2, 1, pb, 1);
    struct job_info jb_done = job_of(2, 1, pb_done, 1);
    struct job_info *out;
    size_t n;

    init_peers();
    report(jv, peer_a, "hostA", &ja, 1, 100);
    report(jv, peer_b, "hostB", &jb, 1, 100);
    jobview_peer_gone(jv, peer_a, 200);
    jobview_export(jv, JOBVIEW_EXPORT_MAX_PROCS, &out, &n);
    if (CHECK_EQ_INT(n, 1) && CHECK_EQ_INT(out[0].nprocs, 2)) {
        CHECK_EQ_INT(out[0].finished, 0);
        CHECK_EQ_INT(out[0].procs[0].state, PROC_RUN_LOST);
        CHECK_EQ_INT(out[0].procs[1].state, PROC_RUN_RUNNING);
    }
    codec_jobs_free(out, n);

    report(jv, peer_b, "hostB", &jb_done, 1, 300);
    report(jv, peer_b, "hostB", NULL, 0, 400);
    jobview_export(jv, JOBVIEW_EXPORT_MAX_PROCS, &out, &n);
    if (CHECK_EQ_INT(n, 1)) {
        CHECK_EQ_INT(out[0].finished, 1);
        CHECK_EQ_INT(out[0].exit, 3);
    }
    codec_jobs_free(out, n);
    /* Kept a while, then forgotten. */
    jobview_cron(jv, 400 + 1000);
    CHECK_EQ_INT(jobview_count(jv), 1);
    jobview_cron(jv, 400 + 11 * 60 * 1000);
    CHECK_EQ_INT(jobview_count(jv), 0);
    jobview_free(jv);
}

/* A farm's counts are summed over its peers; no entry per task. */
static void
t_farm(void)
{
    struct jobview *jv = jobview_new();
    struct job_info fa = job_of(3, 0, NULL, 0), fb = job_of(3, 0, NULL, 0);
    struct job_info *out;
    size_t n;

    init_peers();
    fa.farm = fb.farm = 1;
    fa.nreplicas = fb.nreplicas = 0;
    fa.tasks_running = 2;
    fa.tasks_queued = 10000;
    fa.tasks_done = 5;
    fb.tasks_running = 1;
    fb.tasks_done = 7;
    report(jv, peer_a, "hostA", &fa, 1, 100);
    report(jv, peer_b, "hostB", &fb, 1, 100);
    jobview_export(jv, JOBVIEW_EXPORT_MAX_PROCS, &out, &n);
    if (CHECK_EQ_INT(n, 1)) {
        CHECK_EQ_INT(out[0].farm, 1);
        CHECK_EQ_INT(out[0].tasks_running, 3);
        CHECK_EQ_INT(out[0].tasks_queued, 10000);
        CHECK_EQ_INT(out[0].tasks_done, 12);
        CHECK_EQ_INT(out[0].nprocs, 0);
    }
    codec_jobs_free(out, n);
    jobview_free(jv);
}

/* Two peers that disagree on a job's shape: the first report stands. */
static void
t_disagreement(void)
{
    struct jobview *jv = jobview_new();
    struct job_proc pa[] = {proc(0, 0, PROC_RUN_RUNNING, 0)};
    struct job_proc pb[] = {proc(3, 0, PROC_RUN_RUNNING, 0)};
    struct job_info ja = job_of(4, 1, pa, 1), jb = job_of(4, 4, pb, 1);
    struct job_info *out;
    size_t n;

    init_peers();
    report(jv, peer_a, "hostA", &ja, 1, 100);
    report(jv, peer_b, "hostB", &jb, 1, 100);
    jobview_export(jv, JOBVIEW_EXPORT_MAX_PROCS, &out, &n);
    if (CHECK_EQ_INT(n, 1)) {
        CHECK_EQ_INT(out[0].size, 1);
        CHECK_EQ_INT(out[0].nprocs, 1);
    }
    codec_jobs_free(out, n);
    jobview_free(jv);
}

/* The export keeps within its bound on processes, by whole parts. */
static void
t_export_bound(void)
{
    struct jobview *jv = jobview_new();
    struct job_proc pa[] = {proc(0, 0, PROC_RUN_RUNNING, 0),
                            proc(1, 0, PROC_RUN_RUNNING, 0)};
    struct job_proc pb[] = {proc(0, 0, PROC_RUN_RUNNING, 0),
                            proc(1, 0, PROC_RUN_RUNNING, 0)};
    struct job_info ja = job_of(5, 2, pa, 2), jb = job_of(6, 2, pb, 2);
    struct job_info *out;
    size_t n, i, total = 0;

    init_peers();
    report(jv, peer_a, "hostA", &ja, 1, 100);
    report(jv, peer_b, "hostB", &jb, 1, 100);
    jobview_export(jv, 3, &out, &n);
    CHECK_EQ_INT(n, 2);
    for (i = 0; i < n; i++)
        total += out[i].nprocs;
    CHECK_EQ_INT(total, 2);
    codec_jobs_free(out, n);
    jobview_free(jv);
}

/* A full view makes room by dropping the oldest finished job, and lists
 * no new job while every one it holds still runs. */
static void
t_view_bound(void)
{
    struct jobview *jv = jobview_new();
    uint8_t peer[SEC_SIGN_PK_LEN];
    struct job_info j;
    uint32_t i;

    for (i = 0; i < 1024; i++) {
        memset(peer, 0, sizeof peer);
        memcpy(peer, &i, sizeof i);
        j = job_of(0, 1, NULL, 0);
        memcpy(j.job, &i, sizeof i);
        report(jv, peer, "h", &j, 1, 100);
    }
    CHECK_EQ_INT(jobview_count(jv), 1024);
    i = 5000;
    memset(peer, 0, sizeof peer);
    memcpy(peer, &i, sizeof i);
    j = job_of(0, 1, NULL, 0);
    memcpy(j.job, &i, sizeof i);
    report(jv, peer, "h", &j, 1, 200);
    CHECK_EQ_INT(jobview_count(jv), 1024);
    /* One ends (its peer goes): the next new job takes its place. */
    i = 7;
    memset(peer, 0, sizeof peer);
    memcpy(peer, &i, sizeof i);
    jobview_peer_gone(jv, peer, 300);
    i = 5001;
    memset(peer, 0, sizeof peer);
    memcpy(peer, &i, sizeof i);
    j = job_of(0, 1, NULL, 0);
    memcpy(j.job, &i, sizeof i);
    report(jv, peer, "h", &j, 1, 400);
    CHECK_EQ_INT(jobview_count(jv), 1024);
    {
        struct job_info *out;
        size_t n, k;
        int found = 0;

        jobview_export(jv, JOBVIEW_EXPORT_MAX_PROCS, &out, &n);
        for (k = 0; k < n; k++) {
            uint32_t id;

            memcpy(&id, out[k].job, sizeof id);
            found += id == 5001;
            CHECK(id != 7);
        }
        CHECK_EQ_INT(found, 1);
        codec_jobs_free(out, n);
    }
    jobview_free(jv);
}

static const struct test_case cases[] = {
    {"reports merged into one rank map", t_merge},
    {"peer gone: lost; then finished with its exit", t_peer_gone_then_finished},
    {"farm counts summed", t_farm},
    {"first report's shape stands", t_disagreement},
    {"export bounded by processes", t_export_bound},
    {"view bounded by jobs", t_view_bound},
};

TEST_MAIN(cases)
