/*
 * The supernode's view of the jobs on its network, for the dashboard and
 * `mpihost --jobs`: every peer's latest job report, merged by job id.  A
 * job is a set of parts, one per peer that reports it (its processes
 * there, or a farm's task counts there).  A part whose peer stops
 * reporting the job has ended there; a part whose peer went silent or left
 * is lost (its running processes are marked so).  A job with no live part
 * is finished and stays listed for JOBVIEW_KEEP_MS with its exit status.
 *
 * A farm's coordinator may add its own figures (JobNote: inputs read,
 * results reported, failures) to a farm the peers report.
 *
 * Bounded: a report holds at most WIRE_MAX_REPORT_JOBS jobs (the codec
 * checks it), and the view at most JOBVIEW_MAX_JOBS (the oldest finished
 * go first; beyond that new jobs are not listed, with one log line).
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "log.h"
#include "supernode.h"
#include "xmalloc.h"

#define JOBVIEW_MAX_JOBS 1024
#define JOBVIEW_KEEP_MS (10 * 60 * 1000)

struct jv_part {
    uint8_t peer[SEC_SIGN_PK_LEN];
    char host[WIRE_MAX_LABEL + 1];
    struct job_proc *procs;
    size_t nprocs;
    uint32_t tasks_running, tasks_queued, tasks_done;
    int live;          /* still reported by a live peer */
    UT_hash_handle hh; /* in its job's parts, by peer */
};

/* A farm may run on every peer: its parts are found by peer in a table,
 * and the live ones counted, so that a report costs the same whatever
 * the job's size. */
struct jv_job {
    struct job_info info; /* procs unused: the parts hold them */
    struct jv_part *parts;
    size_t nlive;
    uint64_t seen_ms;     /* first reported */
    uint64_t finished_ms; /* 0 while some part is live */
    UT_hash_handle hh;
};

/* The jobs a peer reported last, to notice those it no longer does. */
struct jv_peer {
    uint8_t id[SEC_SIGN_PK_LEN];
    size_t njobs;
    uint8_t jobs[WIRE_MAX_REPORT_JOBS][WIRE_JOB_ID_LEN];
    UT_hash_handle hh;
};

struct jobview {
    struct jv_job *jobs;
    struct jv_peer *peers;
    size_t njobs;
    uint64_t refused; /* jobs not listed: the view was full */
};

struct jobview *
jobview_new(void)
{
    return xcalloc(1, sizeof(struct jobview));
}

static void
jv_job_free(struct jobview *jv, struct jv_job *j)
{
    struct jv_part *p, *pt;

    HASH_DEL(jv->jobs, j);
    jv->njobs--;
    HASH_ITER(hh, j->parts, p, pt)
    {
        HASH_DEL(j->parts, p);
        free(p->procs);
        free(p);
    }
    free(j);
}

void
jobview_free(struct jobview *jv)
{
    struct jv_job *j, *jt;
    struct jv_peer *p, *pt;

    if (jv == NULL)
        return;
    HASH_ITER(hh, jv->jobs, j, jt)
    jv_job_free(jv, j);
    HASH_ITER(hh, jv->peers, p, pt)
    {
        HASH_DEL(jv->peers, p);
        free(p);
    }
    free(jv);
}

static struct jv_part *
jv_part_find(struct jv_job *j, const uint8_t peer[SEC_SIGN_PK_LEN])
{
    struct jv_part *p;

    HASH_FIND(hh, j->parts, peer, SEC_SIGN_PK_LEN, p);
    return p;
}

/* The first failing exit status among the processes, else 0 when some
 * process is known to have exited 0, else -1 (unknown). */
static int32_t
jv_exit_status(const struct jv_job *j)
{
    const struct jv_part *p;
    int32_t st = -1;
    size_t i;

    for (p = j->parts; p != NULL; p = p->hh.next)
        for (i = 0; i < p->nprocs; i++) {
            if (p->procs[i].state != PROC_RUN_EXITED)
                continue;
            if (p->procs[i].code != 0)
                return (int32_t)p->procs[i].code;
            st = 0;
        }
    return st;
}

/* A part stopped: finish the job if it was the last live one. */
static void
jv_part_stopped(struct jv_job *j, struct jv_part *p, enum proc_run running_to,
                uint64_t now_ms)
{
    size_t i;

    if (p->live && j->nlive > 0)
        j->nlive--;
    p->live = 0;
    for (i = 0; i < p->nprocs; i++)
        if (p->procs[i].state == PROC_RUN_RUNNING ||
            p->procs[i].state == PROC_RUN_SUSPENDED)
            p->procs[i].state = running_to;
    p->tasks_running = p->tasks_queued = 0;
    if (j->nlive > 0)
        return;
    j->finished_ms = now_ms;
    j->info.finished = 1;
    j->info.exit = jv_exit_status(j);
}

/* Make room for a new job: drop the oldest finished one.  0 if done. */
static int
jv_make_room(struct jobview *jv)
{
    struct jv_job *j, *jt, *oldest = NULL;

    HASH_ITER(hh, jv->jobs, j, jt)
    if (j->finished_ms != 0 &&
        (oldest == NULL || j->finished_ms < oldest->finished_ms))
        oldest = j;
    if (oldest == NULL)
        return -1;
    jv_job_free(jv, oldest);
    return 0;
}

/* Take one reported job of a peer into the view. */
static void
jv_take(struct jobview *jv, const uint8_t peer[SEC_SIGN_PK_LEN],
        const char *host, const struct job_info *in, uint64_t now_ms)
{
    struct jv_job *j;
    struct jv_part *p;
    size_t i;

    HASH_FIND(hh, jv->jobs, in->job, WIRE_JOB_ID_LEN, j);
    if (j == NULL) {
        if (jv->njobs >= JOBVIEW_MAX_JOBS && jv_make_room(jv) == -1) {
            if (jv->refused++ % 1000 == 0)
                log_warnx("job view full (%d jobs running); new jobs are "
                          "not listed (%llu so far)",
                          JOBVIEW_MAX_JOBS, (unsigned long long)jv->refused);
            return;
        }
        j = xcalloc(1, sizeof *j);
        j->info = *in;
        j->info.procs = NULL;
        j->info.nprocs = 0;
        /* Counts live in the parts; the export sums them.  Only a
         * coordinator's note sets its figures. */
        j->info.tasks_running = j->info.tasks_queued = 0;
        j->info.tasks_done = 0;
        j->info.coord_total = j->info.coord_done = 0;
        j->info.coord_failed = 0;
        j->info.exit = -1;
        j->seen_ms = now_ms;
        HASH_ADD(hh, jv->jobs, info.job, WIRE_JOB_ID_LEN, j);
        jv->njobs++;
    } else if (j->info.farm != in->farm || j->info.size != in->size ||
               j->info.nreplicas != in->nreplicas) {
        /* Two peers disagree on what the job is: the first one stands. */
        return;
    }
    if ((p = jv_part_find(j, peer)) == NULL) {
        p = xcalloc(1, sizeof *p);
        memcpy(p->peer, peer, SEC_SIGN_PK_LEN);
        HASH_ADD(hh, j->parts, peer, SEC_SIGN_PK_LEN, p);
    }
    snprintf(p->host, sizeof p->host, "%s", host);
    free(p->procs);
    p->procs = in->nprocs ? xcalloc(in->nprocs, sizeof *p->procs) : NULL;
    p->nprocs = in->nprocs;
    for (i = 0; i < in->nprocs; i++) {
        p->procs[i] = in->procs[i];
        snprintf(p->procs[i].host, sizeof p->procs[i].host, "%s", host);
    }
    p->tasks_running = in->tasks_running;
    p->tasks_queued = in->tasks_queued;
    p->tasks_done = in->tasks_done;
    if (!p->live)
        j->nlive++;
    p->live = 1;
    /* A job seen again after it was taken for finished runs again. */
    j->finished_ms = 0;
    j->info.finished = 0;
    j->info.exit = -1;
    if (in->started != 0 &&
        (j->info.started == 0 || in->started < j->info.started))
        j->info.started = in->started;
    if (j->info.command[0] == '\0' || strcmp(j->info.command, "?") == 0)
        snprintf(j->info.command, sizeof j->info.command, "%s", in->command);
}

/* The peer's parts of the jobs in list[n], not in the new report, ended
 * (or, with lost, went with the peer). */
static void
jv_forget(struct jobview *jv, const uint8_t peer[SEC_SIGN_PK_LEN],
          const struct jv_peer *old, const struct msg_job_report *now,
          enum proc_run running_to, uint64_t now_ms)
{
    struct jv_job *j;
    struct jv_part *p;
    size_t i, k;

    for (i = 0; i < old->njobs; i++) {
        for (k = 0; now != NULL && k < now->njobs; k++)
            if (memcmp(now->jobs[k].job, old->jobs[i], WIRE_JOB_ID_LEN) == 0)
                break;
        if (now != NULL && k < now->njobs)
            continue;
        HASH_FIND(hh, jv->jobs, old->jobs[i], WIRE_JOB_ID_LEN, j);
        if (j == NULL || (p = jv_part_find(j, peer)) == NULL || !p->live)
            continue;
        jv_part_stopped(j, p, running_to, now_ms);
    }
}

void
jobview_report(struct jobview *jv, const uint8_t peer[SEC_SIGN_PK_LEN],
               const char *host, const struct msg_job_report *r,
               uint64_t now_ms)
{
    struct jv_peer *pp;
    size_t i;

    HASH_FIND(hh, jv->peers, peer, SEC_SIGN_PK_LEN, pp);
    if (pp == NULL) {
        pp = xcalloc(1, sizeof *pp);
        memcpy(pp->id, peer, SEC_SIGN_PK_LEN);
        HASH_ADD(hh, jv->peers, id, SEC_SIGN_PK_LEN, pp);
    }
    /* What it no longer runs ended there; what exited is in the last
     * report that listed it. */
    jv_forget(jv, peer, pp, r, PROC_RUN_UNKNOWN, now_ms);
    for (i = 0; i < r->njobs; i++)
        jv_take(jv, peer, host, &r->jobs[i], now_ms);
    pp->njobs =
        r->njobs < WIRE_MAX_REPORT_JOBS ? r->njobs : WIRE_MAX_REPORT_JOBS;
    for (i = 0; i < pp->njobs; i++)
        memcpy(pp->jobs[i], r->jobs[i].job, WIRE_JOB_ID_LEN);
}

void
jobview_peer_gone(struct jobview *jv, const uint8_t peer[SEC_SIGN_PK_LEN],
                  uint64_t now_ms)
{
    struct jv_peer *pp;

    HASH_FIND(hh, jv->peers, peer, SEC_SIGN_PK_LEN, pp);
    if (pp == NULL)
        return;
    jv_forget(jv, peer, pp, NULL, PROC_RUN_LOST, now_ms);
    HASH_DEL(jv->peers, pp);
    free(pp);
}

int
jobview_note(struct jobview *jv, const struct msg_job_note *n)
{
    struct jv_job *j;

    HASH_FIND(hh, jv->jobs, n->job, WIRE_JOB_ID_LEN, j);
    if (j == NULL || !j->info.farm)
        return -1;
    j->info.coord_total = n->tasks_total;
    j->info.coord_done = n->tasks_done;
    j->info.coord_failed = n->tasks_failed;
    return 0;
}

void
jobview_cron(struct jobview *jv, uint64_t now_ms)
{
    struct jv_job *j, *jt;

    HASH_ITER(hh, jv->jobs, j, jt)
    if (j->finished_ms != 0 && now_ms - j->finished_ms > JOBVIEW_KEEP_MS)
        jv_job_free(jv, j);
}

size_t
jobview_count(const struct jobview *jv)
{
    return jv->njobs;
}

/* Order of the export: running first, then newest first. */
static int
jv_order(const void *a, const void *b)
{
    const struct job_info *x = a, *y = b;

    if (x->finished != y->finished)
        return x->finished - y->finished;
    return x->started < y->started ? 1 : x->started > y->started ? -1 : 0;
}

static int
jv_proc_order(const void *a, const void *b)
{
    const struct job_proc *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->replica < y->replica ? -1 : x->replica > y->replica;
}

void
jobview_export(const struct jobview *jv, size_t max_procs,
               struct job_info **out, size_t *n)
{
    const struct jv_job *j;
    const struct jv_part *p;
    struct job_info *ji;
    size_t np, i = 0, total = 0;

    *n = jv->njobs;
    *out = jv->njobs ? xcalloc(jv->njobs, sizeof **out) : NULL;
    for (j = jv->jobs; j != NULL; j = j->hh.next, i++) {
        ji = &(*out)[i];
        *ji = j->info;
        np = 0;
        for (p = j->parts; p != NULL; p = p->hh.next) {
            np += p->nprocs;
            ji->tasks_running += p->tasks_running;
            ji->tasks_queued += p->tasks_queued;
            ji->tasks_done += p->tasks_done;
            ji->hosts++;
        }
        /* Within the bound over all jobs, whole parts only. */
        ji->procs = np ? xcalloc(np, sizeof *ji->procs) : NULL;
        ji->nprocs = 0;
        for (p = j->parts; p != NULL; p = p->hh.next) {
            if (p->nprocs == 0 || total + p->nprocs > max_procs)
                continue;
            total += p->nprocs;
            memcpy(ji->procs + ji->nprocs, p->procs,
                   p->nprocs * sizeof *p->procs);
            ji->nprocs += p->nprocs;
        }
        if (ji->nprocs > 1)
            qsort(ji->procs, ji->nprocs, sizeof *ji->procs, jv_proc_order);
    }
    if (*n > 1)
        qsort(*out, *n, sizeof **out, jv_order);
}
