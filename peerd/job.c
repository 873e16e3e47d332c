/*
 * Jobs running on this peer: their lifecycle (the launch is
 * job_launch.c's, the output job_output.c's; job_int.h is what the three
 * share).  A job owns a directory under STATE_DIR/jobs/<id>, its
 * processes and their output pipes, and, when peerd runs as root, a box:
 * a uid of its own and a private /tmp and /dev/shm (box.c; a farm's
 * tasks share their farm's), and a cgroup with a leaf per process
 * (cgroup.c).  Output goes to the coordinator as it comes (reading
 * pauses while the connection is backed up); what a process says on its
 * control socket is relayed by ctlrelay.c.
 *
 * A process is RUNNING until reaped, DEAD until its pipes are drained,
 * then DONE: its exit (with the peak memory of its cgroup and the limit it
 * hit, if any) is reported and its slot returned.  When the last process
 * is done the job ENDS: its cgroup is killed (whatever a process left
 * behind, however it forked or changed session) and, once verified empty,
 * the box is taken apart and the directory removed.  A job whose
 * coordinator goes away or falls silent past its lease is KILLING:
 * SIGTERM, then the whole cgroup a second later.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "job_int.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

#define JOB_KILL_GRACE_MS 1000            /* SIGTERM, then SIGKILL */
/* After a process is reaped, something it left behind may still hold its
 * output pipes; they are closed after this long. */
#define JOB_PIPE_GRACE_MS 2000
/* How long ending a job may wait here for its cgroup to empty before the
 * rest is left to the cron. */
#define JOB_EMPTY_WAIT_MS 200
/* A cgroup still not empty this long after the kill is worth a warning. */
#define JOB_EMPTY_WARN_MS 5000

static const char *const proc_state_name[] = {"running", "dead", "done"};
static const char *const job_state_name[] = {"running", "killing", "ended"};

/* The one place a process changes state. */
static void
proc_set_state(struct proc *p, enum proc_state s)
{
    if (s <= p->state)
        fatalx("job %.8s: rank %u replica %u: %s -> %s", p->job->hex,
               p->rank, p->replica, proc_state_name[p->state],
               proc_state_name[s]);
    log_debug("job %.8s: rank %u replica %u: %s -> %s", p->job->hex, p->rank,
              p->replica, proc_state_name[p->state], proc_state_name[s]);
    p->state = s;
}

/* The one place a job changes state. */
static void
job_set_state(struct job *j, enum job_state s)
{
    if (s <= j->state)
        fatalx("job %.8s: %s -> %s", j->hex, job_state_name[j->state],
               job_state_name[s]);
    log_debug("job %.8s: %s -> %s", j->hex, job_state_name[j->state],
              job_state_name[s]);
    j->state = s;
}

/* --- accessors for ctlrelay.c ------------------------------------------ */

int
job_owner_is(const struct job *j, const struct svc_conn *c)
{
    return j->owner == c;
}

struct svc_conn *
job_owner(const struct job *j)
{
    return j->owner;
}

const char *
job_hex(const struct job *j)
{
    return j->hex;
}

const uint8_t *
job_id(const struct job *j)
{
    return j->id;
}

const char *
job_bind_host(const struct job *j)
{
    return j->bind_host;
}

uint32_t
job_nprocs_total(const struct job *j)
{
    return j->size * j->nreplicas;
}

struct job *
job_find(struct peerd *pd, const uint8_t id[WIRE_JOB_ID_LEN])
{
    struct job *j;

    for (j = pd->jobs; j != NULL; j = j->next)
        if (memcmp(j->id, id, WIRE_JOB_ID_LEN) == 0)
            return j;
    return NULL;
}

int
job_count(const struct peerd *pd)
{
    const struct job *j;
    int n = 0;

    for (j = pd->jobs; j != NULL; j = j->next)
        n++;
    return n;
}

static void
job_unlink(struct job **list, struct job *j)
{
    struct job **jp;

    for (jp = list; *jp != NULL; jp = &(*jp)->next)
        if (*jp == j) {
            *jp = j->next;
            return;
        }
}

/* --- the box ------------------------------------------------------------ */

/* Kill what is left in the job's cgroup and remove it: 0 when done, -1
 * while it is not yet empty (call again later). */
static int
job_cgroup_close(struct job *j, int wait_ms)
{
    if (j->cg == NULL)
        return 0;
    if (cgroup_kill_wait(j->cg, wait_ms) == -1)
        return -1;
    if (cgroup_remove(j->cg) == -1)
        log_warn("job %.8s: removing its cgroup", j->hex);
    cgroup_free(j->cg);
    j->cg = NULL;
    return 0;
}

/* Free a job whose box is closed. */
static void
job_destroy(struct job *j)
{
    size_t i;
    int s;

    for (i = 0; i < j->nprocs; i++) {
        for (s = 0; s < 2; s++)
            if (j->procs[i].out[s].fd != -1) {
                event_free(j->procs[i].out[s].ev);
                close(j->procs[i].out[s].fd);
            }
        ctlrelay_free(j->procs[i].ctl);
        cgroup_free(j->procs[i].cg);
    }
    if (j->dir != NULL && rmtree(j->dir) == -1)
        log_warn("job %.8s: removing %s", j->hex, j->dir);
    /* Only now: nothing of the job can use its uid any more. */
    box_unref(j->pd, j->box);
    free(j->dir);
    free(j->cmd);
    free(j->procs);
    ctltable_in_free(j->table);
    job_spawn_forget(j);
    free(j);
}

/* Kill what is left of the job, and free it now, or from the cron once
 * its cgroup is empty. */
void
job_free(struct job *j)
{
    size_t i;

    job_unlink(&j->pd->jobs, j);
    job_spawn_forget(j);
    reserve_release(j->pd, j->id);
    for (i = 0; i < j->nprocs; i++) {
        ctlrelay_free(j->procs[i].ctl);
        j->procs[i].ctl = NULL;
    }
    j->ended_ms = monotime_ms();
    if (job_cgroup_close(j, JOB_EMPTY_WAIT_MS) == -1) {
        j->next = j->pd->dying;
        j->pd->dying = j;
        return;
    }
    job_destroy(j);
}

static void
job_free_later(evutil_socket_t fd, short what, void *arg)
{
    job_free(arg);
}

/* The last process is done: the job is over here.  This runs inside one
 * of the job's own callbacks, so it is unlinked now (no longer found) and
 * freed from the loop. */
static void
job_end(struct job *j)
{
    static const struct timeval now = {0, 0};
    size_t i;

    log_info("job %.8s: finished", j->hex);
    if (!j->task)
        link_report_now(j->pd);
    job_set_state(j, JOB_ENDED);
    for (i = 0; i < j->nprocs; i++) {
        ctlrelay_free(j->procs[i].ctl);
        j->procs[i].ctl = NULL;
    }
    j->owner = NULL;
    job_unlink(&j->pd->jobs, j);
    j->next = NULL;
    /* job_free unlinks again: harmless, it is not there. */
    event_base_once(j->pd->base, -1, EV_TIMEOUT, job_free_later, j, &now);
}

/* --- processes ---------------------------------------------------------- */

/* Kill a process and everything it started: its leaf cgroup, or without
 * one its session. */
void
proc_kill_all(struct proc *p)
{
    if (p->cg != NULL)
        cgroup_kill(p->cg);
    else if (p->state == PROC_RUNNING)
        kill(-p->pid, SIGKILL);
}

/* Report a process that is reaped and drained, and return its slot. */
void
proc_check_done(struct proc *p)
{
    struct job *j = p->job;
    struct msg m;

    if (p->state != PROC_DEAD || p->out[0].fd != -1 || p->out[1].fd != -1)
        return;
    proc_set_state(p, PROC_DONE);
    memset(&m, 0, sizeof m);
    m.type = MSG_PROC_EXIT;
    memcpy(m.u.exit.job, j->id, WIRE_JOB_ID_LEN);
    m.u.exit.rank = p->rank;
    m.u.exit.replica = p->replica;
    m.u.exit.signaled = WIFSIGNALED(p->status);
    m.u.exit.code = WIFSIGNALED(p->status) ? (uint32_t)WTERMSIG(p->status)
                                           : (uint32_t)WEXITSTATUS(p->status);
    if (j->evicted) {
        m.u.exit.evicted = 1;
        snprintf(m.u.exit.evict_reason, sizeof m.u.exit.evict_reason, "%s",
                 j->evict_reason);
    }
    if (p->cg != NULL) {
        m.u.exit.mem_peak = cgroup_mem_peak(p->cg);
        switch (cgroup_limit_hit(p->cg)) {
        case CG_LIMIT_MEMORY:
            m.u.exit.limit = EXIT_LIMIT_MEMORY;
            m.u.exit.limit_value = j->mem_limit;
            log_info("job %.8s: rank %u replica %u reached its memory limit "
                     "(%llu bytes)",
                     j->hex, p->rank, p->replica,
                     (unsigned long long)j->mem_limit);
            break;
        case CG_LIMIT_PIDS:
            m.u.exit.limit = EXIT_LIMIT_PROCS;
            m.u.exit.limit_value = (uint64_t)j->pd->cfg->job_nproc;
            break;
        default:
            break;
        }
    }
    if (p->cg != NULL)
        log_info("job %.8s: rank %u replica %u %s %u, peak memory %llu KiB",
                 j->hex, p->rank, p->replica,
                 m.u.exit.signaled ? "killed by signal" : "exited with",
                 m.u.exit.code, (unsigned long long)(m.u.exit.mem_peak >> 10));
    if (j->worker != NULL) {
        struct worker *w = j->worker;

        /* Its tasks are the worker's to report, not a process exit. */
        j->worker = NULL;
        worker_exited(w, p->status, m.u.exit.mem_peak);
    } else if (j->owner != NULL)
        svc_conn_send(j->owner, &m);
    reserve_return_one(j->pd, j->id);
    if (--j->nrunning == 0)
        job_end(j);
    /* A slot is free: a queued task takes it at once. */
    farm_kick(j->pd);
}

/* The relays of every process of the job here, for one message to all. */
static struct ctlrelay **
job_relays(struct job *j)
{
    struct ctlrelay **r;
    size_t i;

    r = xcalloc(j->nprocs, sizeof *r);
    for (i = 0; i < j->nprocs; i++)
        r[i] = j->procs[i].ctl;
    return r;
}

void
job_table(struct job *j, const struct msg_table *t)
{
    struct ctlrelay **r = job_relays(j);
    size_t i;

    if (ctlrelay_table(&j->table, j, r, j->nprocs, t) == -1)
        log_warnx("job %.8s: bad address table from the coordinator", j->hex);
    free(r);
    /* The coordinator sends the table once every live process said where
     * it listens: one not started yet was declared dead (left out of the
     * table; no view need follow).  Started, it would wait in MPI_Init for
     * a table that went out before it, and the job's end with it. */
    if (ctltable_in_complete(j->table))
        for (i = j->nstarted; i < j->nprocs; i++)
            j->procs[i].gone = 1;
}

void
job_view(struct job *j, const struct msg_view *v)
{
    struct ctlrelay **r;
    size_t i, k;

    if (!ctlrelay_view_ok(j, v))
        return;
    for (i = 0; i < j->nprocs; i++) {
        struct proc *p = &j->procs[i];
        uint32_t me = p->rank * j->nreplicas + p->replica;

        /* Declared dead but alive here (cut off from the others): it must
         * not go on beside the replica that replaces it. */
        for (k = 0; k < v->ndead && p->state == PROC_RUNNING; k++)
            if (v->dead[k] == me) {
                log_info("job %.8s: rank %u replica %u declared dead by the "
                         "coordinator: killing it",
                         j->hex, p->rank, p->replica);
                proc_kill_all(p);
                break;
            }
        /* Not started yet (a later batch): it never will be. */
        for (k = 0; k < v->ndead && i >= j->nstarted; k++)
            if (v->dead[k] == me)
                p->gone = 1;
    }
    r = job_relays(j);
    ctlrelay_view(r, j->nprocs, v);
    free(r);
}

void
job_forget_worker(struct job *j)
{
    j->worker = NULL;
}

uint64_t
job_mem_peak(const struct job *j)
{
    return j->nprocs > 0 && j->procs[0].cg != NULL
               ? cgroup_mem_peak(j->procs[0].cg)
               : 0;
}

void
job_kill(struct job *j, const char *why)
{
    size_t i;

    if (j->state != JOB_RUNNING)
        return;
    log_info("job %.8s: killing: %s", j->hex, why);
    job_set_state(j, JOB_KILLING);
    j->kill_at_ms = monotime_ms() + JOB_KILL_GRACE_MS;
    for (i = 0; i < j->nprocs; i++)
        if (j->procs[i].state == PROC_RUNNING)
            kill(-j->procs[i].pid, SIGTERM);
}

void
job_orphan_owner(struct peerd *pd, struct svc_conn *c)
{
    struct job *j;

    for (j = pd->jobs; j != NULL; j = j->next)
        if (j->owner == c) {
            j->owner = NULL;
            job_output_hold(j, UINT32_MAX, UINT32_MAX, 0);
            job_pause(j, 0); /* drain the pipes, nobody reads them */
            job_kill(j, "its coordinator went away");
        }
}

void
job_heard(struct peerd *pd, struct svc_conn *c)
{
    struct job *j;
    uint64_t now = monotime_ms();

    for (j = pd->jobs; j != NULL; j = j->next)
        if (j->owner == c)
            j->last_heard_ms = now;
}

/* A reaped process: remember its status, finish it if drained. */
static void
job_reaped(struct peerd *pd, pid_t pid, int status)
{
    struct job *j;
    size_t i;

    for (j = pd->jobs; j != NULL; j = j->next)
        for (i = 0; i < j->nprocs; i++) {
            struct proc *p = &j->procs[i];

            if (p->state != PROC_RUNNING || p->pid != pid)
                continue;
            /* Whatever it left behind goes too. */
            proc_kill_all(p);
            proc_hold(p, 0); /* drain what it left */
            proc_set_state(p, PROC_DEAD);
            p->status = status;
            p->reaped_ms = monotime_ms();
            proc_check_done(p);
            return;
        }
}

void
job_reap(struct peerd *pd)
{
    pid_t pid;
    int status;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        job_reaped(pd, pid, status);
}

/* Without cgroups: is pid one of the processes we started? */
static int
job_known_pid(struct peerd *pd, pid_t pid)
{
    struct job *j;
    size_t i;

    for (j = pd->jobs; j != NULL; j = j->next)
        for (i = 0; i < j->nprocs; i++)
            if (j->procs[i].state == PROC_RUNNING && j->procs[i].pid == pid)
                return 1;
    return 0;
}

/* Without cgroups: the job a process says it belongs to (its P2P_JOB). */
static struct job *
job_of_pid(struct peerd *pd, pid_t pid)
{
    char path[64], env[8192], *p;
    struct job *j;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
        return NULL;
    n = read(fd, env, sizeof env - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    env[n] = '\0';
    for (p = env; p < env + n; p += strlen(p) + 1)
        if (strncmp(p, "P2P_JOB=", 8) == 0)
            for (j = pd->jobs; j != NULL; j = j->next)
                if (strcmp(p + 8, j->hex) == 0)
                    return j;
    return NULL;
}

/* Without cgroups, the fallback: processes that left their job's session
 * (setsid and a double fork) come back to us as orphans (we are a child
 * subreaper): any that does not belong to a running job is killed.  One
 * generation per pass; cgroups have no such gap. */
static void
job_kill_strays(struct peerd *pd)
{
    char path[64], buf[512], *p;
    struct dirent *de;
    DIR *d;
    pid_t pid, me = getpid();
    int fd, ppid;
    ssize_t n;

    if ((d = opendir("/proc")) == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        if ((pid = (pid_t)atoi(de->d_name)) <= 0 || pid == me)
            continue;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
            continue;
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        if ((p = strrchr(buf, ')')) == NULL ||
            sscanf(p + 2, "%*c %d", &ppid) != 1 || ppid != (int)me)
            continue;
        if (job_known_pid(pd, pid) || job_of_pid(pd, pid) != NULL)
            continue;
        log_info("killing pid %d: left its job, which is over", (int)pid);
        kill(pid, SIGKILL);
    }
    closedir(d);
}

/* Jobs whose cgroup was slow to empty: finish them when it is. */
static void
job_cron_dying(struct peerd *pd, uint64_t now_ms)
{
    struct job *j, *next;

    for (j = pd->dying; j != NULL; j = next) {
        next = j->next;
        if (job_cgroup_close(j, 0) == -1) {
            if (now_ms - j->ended_ms > JOB_EMPTY_WARN_MS) {
                log_warnx("job %.8s: its cgroup is still not empty %llu ms "
                          "after the kill",
                          j->hex, (unsigned long long)(now_ms - j->ended_ms));
                j->ended_ms = now_ms;
            }
            continue;
        }
        job_unlink(&pd->dying, j);
        job_destroy(j);
    }
}

void
job_cron(struct peerd *pd, uint64_t now_ms)
{
    static uint64_t last_strays;
    struct job *j;
    size_t i;
    int s;

    if (pd->cgroups == NULL && now_ms - last_strays >= 1000) {
        last_strays = now_ms;
        job_kill_strays(pd);
    }
    job_cron_dying(pd, now_ms);
    for (j = pd->jobs; j != NULL; j = j->next)
        for (i = 0; i < j->nprocs; i++)
            ctlrelay_cron(j->procs[i].ctl, now_ms);
    for (j = pd->jobs; j != NULL; j = j->next) {
        for (i = 0; i < j->nprocs; i++) {
            struct proc *p = &j->procs[i];

            /* Reaped, but something it left holds its pipes: close them,
             * the process is over. */
            if (p->state == PROC_DEAD &&
                now_ms - p->reaped_ms > JOB_PIPE_GRACE_MS) {
                for (s = 0; s < 2; s++)
                    if (p->out[s].fd != -1)
                        proc_stream_close(&p->out[s]);
                proc_check_done(p);
                break; /* the job may be gone */
            }
        }
    }
    for (j = pd->jobs; j != NULL; j = j->next) {
        if (j->owner != NULL && j->state == JOB_RUNNING &&
            now_ms - j->last_heard_ms > j->lease_ms)
            job_kill(j, "its coordinator fell silent");
        if (j->state == JOB_KILLING && now_ms >= j->kill_at_ms) {
            if (j->cg != NULL)
                cgroup_kill(j->cg);
            for (i = 0; i < j->nprocs; i++)
                if (j->procs[i].state == PROC_RUNNING)
                    kill(-j->procs[i].pid, SIGKILL);
        }
    }
}

void
job_shutdown(struct peerd *pd)
{
    struct job *j;
    uint64_t until = monotime_ms() + JOB_EMPTY_WARN_MS;

    while ((j = pd->jobs) != NULL) {
        log_info("job %.8s: killed at shutdown", j->hex);
        job_kill_now(j);
    }
    while (pd->dying != NULL && monotime_ms() < until) {
        job_reap(pd);
        job_cron_dying(pd, monotime_ms());
    }
    if (pd->cgroups == NULL)
        job_kill_strays(pd);
}

size_t
job_running_procs(const struct peerd *pd)
{
    const struct job *j;
    size_t i, n = 0;

    for (j = pd->jobs; j != NULL; j = j->next)
        for (i = 0; i < j->nprocs; i++)
            n += j->procs[i].state == PROC_RUNNING && !j->suspended;
    return n;
}

/* Freeze or thaw one job: its cgroup, or SIGSTOP/SIGCONT its sessions. */
static void
job_suspend(struct job *j, int suspend)
{
    size_t i;

    if (j->suspended == suspend)
        return;
    j->suspended = suspend;
    if (j->cg != NULL && cgroup_freeze(j->cg, suspend) == 0)
        return;
    for (i = 0; i < j->nprocs; i++)
        if (j->procs[i].state == PROC_RUNNING)
            kill(-j->procs[i].pid, suspend ? SIGSTOP : SIGCONT);
}

void
job_suspend_all(struct peerd *pd, int suspend)
{
    struct job *j;
    int n = 0;

    for (j = pd->jobs; j != NULL; j = j->next)
        if (j->state == JOB_RUNNING && j->suspended != suspend) {
            job_suspend(j, suspend);
            n++;
        }
    if (n > 0)
        log_info("%s %d job%s", suspend ? "suspended" : "resumed", n,
                 n == 1 ? "" : "s");
}

void
job_evict_all(struct peerd *pd, const char *why)
{
    struct job *j;
    size_t i;

    for (j = pd->jobs; j != NULL; j = j->next) {
        if (j->state == JOB_ENDED || j->evicted)
            continue;
        log_info("job %.8s: evicted: %s", j->hex, why);
        j->evicted = 1;
        snprintf(j->evict_reason, sizeof j->evict_reason, "%s", why);
        /* At once: the owner wants the machine, not a grace period. */
        if (j->cg != NULL)
            cgroup_kill(j->cg);
        for (i = 0; i < j->nprocs; i++)
            if (j->procs[i].state == PROC_RUNNING)
                kill(-j->procs[i].pid, SIGKILL);
        job_suspend(j, 0);
        if (j->state == JOB_RUNNING) {
            job_set_state(j, JOB_KILLING);
            j->kill_at_ms = monotime_ms();
        }
    }
}

size_t
job_describe(const struct peerd *pd, char *buf, size_t len)
{
    const struct job *j;
    size_t n = 0, i;
    int w;

    for (j = pd->jobs; j != NULL && n < len; j = j->next) {
        w = snprintf(buf + n, len - n, "job %.8s of %s: %s, rank%s", j->hex,
                     j->user, j->cmd, j->nprocs == 1 ? "" : "s");
        if (w < 0)
            break;
        n += (size_t)w;
        for (i = 0; i < j->nprocs && n < len; i++) {
            w = snprintf(buf + n, len - n, "%s%u.%u", i ? "," : " ",
                         j->procs[i].rank, j->procs[i].replica);
            if (w < 0)
                break;
            n += (size_t)w;
        }
        if (n < len) {
            w = snprintf(buf + n, len - n, "%s\n",
                         j->suspended ? " (suspended)" : "");
            if (w > 0)
                n += (size_t)w;
        }
    }
    if (n >= len)
        n = len - 1;
    return n;
}

/* How one process is doing, for the dashboard. */
static enum proc_run
job_proc_run(const struct job *j, const struct proc *p)
{
    /* Not yet started (done until spawned, never reaped) counts as
     * running: the spawn follows at once. */
    if (p->state == PROC_RUNNING || (p->reaped_ms == 0 && j->state == JOB_RUNNING))
        return j->suspended ? PROC_RUN_SUSPENDED : PROC_RUN_RUNNING;
    if (j->evicted)
        return PROC_RUN_EVICTED;
    return WIFSIGNALED(p->status) ? PROC_RUN_KILLED : PROC_RUN_EXITED;
}

size_t
job_report(const struct peerd *pd, struct job_info *out, size_t max,
           struct job_proc *procs, size_t maxprocs, uint32_t *more)
{
    const struct job *j;
    size_t n = 0, np = 0, i;

    for (j = pd->jobs; j != NULL; j = j->next) {
        if (j->task)
            continue;
        if (n == max || np + j->nprocs > maxprocs) {
            (*more)++;
            continue;
        }
        memset(&out[n], 0, sizeof out[n]);
        memcpy(out[n].job, j->id, WIRE_JOB_ID_LEN);
        snprintf(out[n].user, sizeof out[n].user, "%s", j->user);
        snprintf(out[n].command, sizeof out[n].command, "%s",
                 strrchr(j->cmd, '/') != NULL ? strrchr(j->cmd, '/') + 1
                                              : j->cmd);
        out[n].size = j->size;
        out[n].nreplicas = j->nreplicas;
        out[n].started = (uint64_t)j->started;
        out[n].exit = -1;
        out[n].procs = &procs[np];
        for (i = 0; i < j->nprocs; i++, np++) {
            memset(&procs[np], 0, sizeof procs[np]);
            procs[np].rank = j->procs[i].rank;
            procs[np].replica = j->procs[i].replica;
            procs[np].state = job_proc_run(j, &j->procs[i]);
            procs[np].code =
                procs[np].state == PROC_RUN_KILLED
                    ? (uint32_t)WTERMSIG(j->procs[i].status)
                    : (uint32_t)WEXITSTATUS(j->procs[i].status) & 0xff;
        }
        out[n].nprocs = j->nprocs;
        n++;
    }
    return n;
}

/* Before serving: what an earlier life of this peerd left (cgroups with
 * processes in them, processes running as our job uids, job directories)
 * is killed and removed. */
void
job_recover(struct peerd *pd)
{
    char *jobs, *path;
    struct dirent *de;
    int ncg = 0, nproc = 0, ndir = 0;
    DIR *d;

    if (pd->cgroups != NULL)
        ncg = cgroup_recover(pd->cgroups);
    if (pd->uids != NULL)
        nproc = uids_recover(pd->uids);
    xasprintf(&jobs, "%s/jobs", pd->state_dir);
    if ((d = opendir(jobs)) != NULL) {
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.' && (de->d_name[1] == '\0' ||
                                         strcmp(de->d_name, "..") == 0))
                continue;
            xasprintf(&path, "%s/%s", jobs, de->d_name);
            if (rmtree(path) == -1)
                log_warn("removing %s, left by an earlier run", path);
            else
                ndir++;
            free(path);
        }
        closedir(d);
    }
    free(jobs);
    if (ncg + nproc + ndir > 0)
        log_info("cleared what an earlier run left: %d cgroup%s, %d "
                 "process%s, %d job director%s",
                 ncg, ncg == 1 ? "" : "s", nproc, nproc == 1 ? "" : "es", ndir,
                 ndir == 1 ? "y" : "ies");
}

/* --- output hold ----------------------------------------------------------
 *
 * The coordinator holds a replica whose output runs too far ahead of what
 * it shows: its pipes are not read (the process then blocks writing) until
 * it says so again, the process ends, or the coordinator goes.
 */

