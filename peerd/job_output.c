/*
 * A job's processes' output: both pipes of each are read as they come and
 * sent to the coordinator (or to the farm's worker, for a persistent
 * worker), reading pauses while the coordinator's connection is backed
 * up, and a process's output is held while the coordinator asks.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "job_int.h"
#include "log.h"

#define JOB_READ_MAX (16 * 1024)          /* output bytes per message */

void
proc_stream_close(struct proc_stream *ps)
{
    event_free(ps->ev);
    ps->ev = NULL;
    close(ps->fd);
    ps->fd = -1;
}

/* Stop or restart reading a job's pipes. */
void
job_pause(struct job *j, int pause)
{
    size_t i;
    int s;

    if (j->paused == pause)
        return;
    j->paused = pause;
    for (i = 0; i < j->nprocs; i++)
        for (s = 0; s < 2; s++)
            if (j->procs[i].out[s].fd != -1) {
                if (pause)
                    event_del(j->procs[i].out[s].ev);
                else if (!j->procs[i].held)
                    event_add(j->procs[i].out[s].ev, NULL);
            }
}

void
job_stream_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proc_stream *ps = arg;
    struct proc *p = ps->proc;
    struct job *j = p->job;
    uint8_t buf[JOB_READ_MAX];
    struct msg m;
    ssize_t n;

    n = read(fd, buf, sizeof buf);
    if (n == -1 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        proc_stream_close(ps);
        proc_check_done(p);
        return;
    }
    if (j->owner == NULL)
        return; /* nobody to tell; the job is being killed */
    if (j->worker != NULL) {
        if (ps->stream == 1)
            worker_stdout(j->worker, buf, (size_t)n);
        else
            worker_stderr(j->worker, buf, (size_t)n);
        if (svc_conn_backlog(j->owner) > SVC_BACKLOG_MAX)
            job_pause(j, 1);
        return;
    }
    memset(&m, 0, sizeof m);
    m.type = MSG_OUTPUT;
    memcpy(m.u.data.job, j->id, WIRE_JOB_ID_LEN);
    m.u.data.rank = p->rank;
    m.u.data.replica = p->replica;
    m.u.data.stream = (uint32_t)ps->stream;
    m.u.data.data = buf;
    m.u.data.len = (size_t)n;
    svc_conn_send(j->owner, &m);
    /* A coordinator that reads slowly slows the job down, instead of
     * making this daemon buffer without bound. */
    if (svc_conn_backlog(j->owner) > SVC_BACKLOG_MAX)
        job_pause(j, 1);
}

void
job_drain_stderr(struct job *j)
{
    struct proc_stream *ps = &j->procs[0].out[1];
    uint8_t buf[JOB_READ_MAX];
    ssize_t n;
    int avail = 0;

    /* What the worker wrote before its answer is in the pipe now: read
     * that much and no more, so that a worker writing stderr without end
     * cannot keep us here queueing it past the backlog's bound. */
    if (ps->fd == -1 || ioctl(ps->fd, FIONREAD, &avail) == -1)
        return;
    while (avail > 0 && j->worker != NULL && ps->fd != -1 &&
           (n = read(ps->fd, buf,
                     (size_t)avail < sizeof buf ? (size_t)avail
                                                : sizeof buf)) > 0) {
        avail -= (int)n;
        worker_stderr(j->worker, buf, (size_t)n);
    }
}

void
job_resume_output(struct peerd *pd, struct svc_conn *c)
{
    struct job *j;

    for (j = pd->jobs; j != NULL; j = j->next)
        if (j->owner == c)
            job_pause(j, 0);
}

void
proc_hold(struct proc *p, int hold)
{
    int s;

    if (p->held == hold)
        return;
    p->held = hold;
    for (s = 0; s < 2; s++) {
        if (p->out[s].fd == -1)
            continue;
        if (hold)
            event_del(p->out[s].ev);
        else if (!p->job->paused)
            event_add(p->out[s].ev, NULL);
    }
}

void
job_output_hold(struct job *j, uint32_t rank, uint32_t replica, int hold)
{
    size_t i;

    for (i = 0; i < j->nprocs; i++) {
        struct proc *p = &j->procs[i];

        if (rank != UINT32_MAX && (p->rank != rank || p->replica != replica))
            continue;
        if (rank != UINT32_MAX && p->held != hold)
            log_debug("job %.8s: rank %u replica %u: output %s", j->hex,
                      p->rank, p->replica, hold ? "held" : "read again");
        /* A process that has ended is drained whatever was asked. */
        proc_hold(p, hold && p->state == PROC_RUNNING);
    }
}
