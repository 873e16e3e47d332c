/*
 * JobInfo to and from protobuf-c, with the checks of everything that
 * arrives: a job id of the right length, a user name and command that
 * are printable tokens, ranks and replicas within the job's declared
 * shape, which is within the wire limits, and bounded counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_jobs.h"
#include "xmalloc.h"

const char *
proc_run_name(enum proc_run s)
{
    switch (s) {
    case PROC_RUN_RUNNING:
        return "running";
    case PROC_RUN_SUSPENDED:
        return "suspended";
    case PROC_RUN_EXITED:
        return "exited";
    case PROC_RUN_KILLED:
        return "killed";
    case PROC_RUN_EVICTED:
        return "evicted";
    case PROC_RUN_LOST:
        return "lost";
    case PROC_RUN_UNKNOWN:
        break;
    }
    return "unknown";
}

void
codec_jobs_to_pb(const struct job_info *jobs, size_t n, struct jobs_pb *jp)
{
    size_t i, k, np = 0, at = 0;

    memset(jp, 0, sizeof *jp);
    jp->n = n;
    if (n == 0)
        return;
    for (i = 0; i < n; i++)
        np += jobs[i].nprocs;
    jp->infos = xcalloc(n, sizeof *jp->infos);
    jp->infop = xcalloc(n, sizeof *jp->infop);
    if (np > 0) {
        jp->procs = xcalloc(np, sizeof *jp->procs);
        jp->procp = xcalloc(np, sizeof *jp->procp);
    }
    for (i = 0; i < n; i++) {
        const struct job_info *j = &jobs[i];
        P2p__JobInfo *pb = &jp->infos[i];

        p2p__job_info__init(pb);
        pb->job.data = (uint8_t *)j->job;
        pb->job.len = WIRE_JOB_ID_LEN;
        pb->user = (char *)j->user;
        pb->command = (char *)j->command;
        pb->size = j->size;
        pb->nreplicas = j->nreplicas;
        pb->started = j->started;
        pb->farm = j->farm;
        pb->tasks_running = j->tasks_running;
        pb->tasks_queued = j->tasks_queued;
        pb->tasks_done = j->tasks_done;
        pb->finished = j->finished;
        pb->exit = j->exit;
        pb->hosts = j->hosts;
        pb->coord_total = j->coord_total;
        pb->coord_done = j->coord_done;
        pb->coord_failed = j->coord_failed;
        pb->n_procs = j->nprocs;
        pb->procs = j->nprocs > 0 ? &jp->procp[at] : NULL;
        for (k = 0; k < j->nprocs; k++, at++) {
            P2p__ProcInfo *pp = &jp->procs[at];

            p2p__proc_info__init(pp);
            pp->rank = j->procs[k].rank;
            pp->replica = j->procs[k].replica;
            pp->state = (P2p__ProcRun)j->procs[k].state;
            pp->code = j->procs[k].code;
            pp->host = (char *)j->procs[k].host;
            jp->procp[at] = pp;
        }
        jp->infop[i] = pb;
    }
}

void
codec_jobs_pb_free(struct jobs_pb *jp)
{
    free(jp->infos);
    free(jp->infop);
    free(jp->procs);
    free(jp->procp);
    memset(jp, 0, sizeof *jp);
}

/* Check one JobInfo; with j non-NULL, copy its scalar fields too. */
static int
jobs_check(const P2p__JobInfo *pb, struct job_info *j, char *err,
           size_t errlen)
{
    struct job_info tmp;
    size_t k;

    if (j == NULL)
        j = &tmp;
    if (pb->job.len != WIRE_JOB_ID_LEN) {
        snprintf(err, errlen, "job info: job id of %zu bytes", pb->job.len);
        return -1;
    }
    if (pb->size > WIRE_MAX_RANKS || pb->nreplicas > WIRE_MAX_REPLICAS ||
        (!pb->farm && (pb->size == 0 || pb->nreplicas == 0))) {
        snprintf(err, errlen, "job info: shape %ux%u out of range", pb->size,
                 pb->nreplicas);
        return -1;
    }
    if ((int)pb->exit < -1 || (int)pb->exit > 255) {
        snprintf(err, errlen, "job info: exit status %d", (int)pb->exit);
        return -1;
    }
    if (codec_token_from_pb(pb->user, j->user, WIRE_MAX_LABEL, 1,
                            "job info: user", err, errlen) == -1 ||
        codec_token_from_pb(pb->command, j->command, WIRE_MAX_LABEL, 1,
                            "job info: command", err, errlen) == -1)
        return -1;
    for (k = 0; k < pb->n_procs; k++) {
        const P2p__ProcInfo *pp = pb->procs[k];
        char host[WIRE_MAX_LABEL + 1];

        if (pp->rank >= pb->size || pp->replica >= pb->nreplicas) {
            snprintf(err, errlen, "job info: process %u.%u outside %ux%u",
                     pp->rank, pp->replica, pb->size, pb->nreplicas);
            return -1;
        }
        if ((int)pp->state < PROC_RUN_UNKNOWN ||
            (int)pp->state > PROC_RUN_LOST) {
            snprintf(err, errlen, "job info: unknown process state %d",
                     (int)pp->state);
            return -1;
        }
        if (codec_token_from_pb(pp->host, host, WIRE_MAX_LABEL, 1,
                                "job info: host", err, errlen) == -1)
            return -1;
    }
    memcpy(j->job, pb->job.data, WIRE_JOB_ID_LEN);
    j->size = pb->size;
    j->nreplicas = pb->nreplicas;
    j->started = pb->started;
    j->farm = pb->farm;
    j->tasks_running = pb->tasks_running;
    j->tasks_queued = pb->tasks_queued;
    j->tasks_done = pb->tasks_done;
    j->finished = pb->finished;
    j->exit = pb->exit;
    j->hosts = pb->hosts;
    j->coord_total = pb->coord_total;
    j->coord_done = pb->coord_done;
    j->coord_failed = pb->coord_failed;
    j->nprocs = 0;
    j->procs = NULL;
    return 0;
}

int
codec_jobs_from_pb(P2p__JobInfo *const *pbs, size_t n, size_t max_jobs,
                   size_t max_procs, struct job_info **out, size_t *nout,
                   char *err, size_t errlen)
{
    struct job_info *jobs;
    size_t i, k, np = 0;

    *out = NULL;
    *nout = 0;
    if (n > max_jobs) {
        snprintf(err, errlen, "%zu jobs, limit %zu", n, max_jobs);
        return -1;
    }
    /* Check everything before allocating anything. */
    for (i = 0; i < n; i++) {
        if (jobs_check(pbs[i], NULL, err, errlen) == -1)
            return -1;
        np += pbs[i]->n_procs;
        if (np > max_procs) {
            snprintf(err, errlen, "more than %zu processes in the jobs",
                     max_procs);
            return -1;
        }
    }
    if (n == 0)
        return 0;
    jobs = xcalloc(n, sizeof *jobs);
    for (i = 0; i < n; i++) {
        jobs_check(pbs[i], &jobs[i], err, errlen);
        if (pbs[i]->n_procs == 0)
            continue;
        jobs[i].procs = xcalloc(pbs[i]->n_procs, sizeof *jobs[i].procs);
        jobs[i].nprocs = pbs[i]->n_procs;
        for (k = 0; k < pbs[i]->n_procs; k++) {
            const P2p__ProcInfo *pp = pbs[i]->procs[k];
            struct job_proc *jp = &jobs[i].procs[k];

            jp->rank = pp->rank;
            jp->replica = pp->replica;
            jp->state = (enum proc_run)pp->state;
            jp->code = pp->code;
            if (pp->host != NULL)
                snprintf(jp->host, sizeof jp->host, "%s", pp->host);
        }
    }
    *out = jobs;
    *nout = n;
    return 0;
}

void
codec_jobs_free(struct job_info *jobs, size_t n)
{
    size_t i;

    if (jobs == NULL)
        return;
    for (i = 0; i < n; i++)
        free(jobs[i].procs);
    free(jobs);
}
