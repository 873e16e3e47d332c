/*
 * Jobs running on this peer: their lifecycle.  A job owns a directory
 * under STATE_DIR/jobs/<id>, its processes and their output pipes, and,
 * when peerd runs as root, a box: a uid of its own and a private /tmp and
 * /dev/shm (box.c; a farm's tasks share their farm's), and a cgroup with a
 * leaf per process (cgroup.c).  Output goes to the coordinator as it comes (reading pauses
 * while the connection is backed up); what a process says on its control
 * socket is relayed by ctlrelay.c.
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
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

#define JOB_READ_MAX (16 * 1024)          /* output bytes per message */
#define JOB_KILL_GRACE_MS 1000            /* SIGTERM, then SIGKILL */
/* Processes spawned per turn of the event loop: each fork waits for its
 * exec, and a job of hundreds here must not keep the loop (pings,
 * leases, other jobs) waiting for seconds. */
#define JOB_SPAWN_BATCH 16
/* After a process is reaped, something it left behind may still hold its
 * output pipes; they are closed after this long. */
#define JOB_PIPE_GRACE_MS 2000
/* How long ending a job may wait here for its cgroup to empty before the
 * rest is left to the cron. */
#define JOB_EMPTY_WAIT_MS 200
/* A cgroup still not empty this long after the kill is worth a warning. */
#define JOB_EMPTY_WARN_MS 5000

enum proc_state {
    PROC_RUNNING, /* started: pid is ours to reap */
    PROC_DEAD,    /* reaped; its pipes may still be open */
    PROC_DONE     /* reaped and drained: exit reported, slot returned */
};

enum job_state {
    JOB_RUNNING, /* processes run */
    JOB_KILLING, /* SIGTERM sent; the whole cgroup goes at kill_at_ms */
    JOB_ENDED    /* every process done: the box is being taken apart */
};

struct proc_stream {
    struct proc *proc;
    int stream; /* 1 stdout, 2 stderr */
    int fd;     /* -1 once drained */
    struct event *ev;
};

struct proc {
    struct job *job;
    uint32_t rank, replica;
    enum proc_state state;
    pid_t pid;          /* while RUNNING */
    int status;         /* wait status, once reaped */
    uint64_t reaped_ms; /* when, for the grace of its pipes */
    struct proc_stream out[2];
    struct ctlrelay *ctl;
    struct cgroup *cg; /* its leaf, NULL without cgroups */
    int held;          /* the coordinator holds its output: not read */
    int gone;          /* declared dead before it started: never started */
};

struct job {
    struct peerd *pd;
    uint8_t id[WIRE_JOB_ID_LEN];
    char hex[2 * WIRE_JOB_ID_LEN + 1];
    enum job_state state;
    struct svc_conn *owner; /* NULL once the coordinator is gone */
    char *dir;
    struct proc *procs;
    size_t nprocs, nrunning;  /* nrunning: not yet done */
    uint32_t size, nreplicas; /* of the whole job, not just here */
    uint32_t lease_ms;
    uint64_t last_heard_ms;
    uint64_t kill_at_ms; /* SIGKILL due while KILLING */
    uint64_t ended_ms;   /* when it ended, for a cgroup slow to empty */
    int paused;
    char bind_host[48]; /* where its processes listen (an IP) */
    /* The box */
    struct box *box;    /* uid and private /tmp (a farm's, for a task) */
    struct cgroup *cg;  /* NULL without cgroups */
    uint64_t mem_limit; /* per process, 0: none */
    int suspended;      /* frozen while the owner is back */
    int evicted;        /* killed for the owner: exits say so */
    char evict_reason[WIRE_MAX_TEXT + 1];
    char user[64];      /* who launched it, for p2pshare status */
    char *cmd;          /* its program, likewise */
    int task;           /* a farm's task: reported with its farm */
    time_t started;     /* wall clock, for the dashboard */
    struct ctltable_in *table; /* the address table, as it arrives */
    /* Spawning in batches: the program and environment are kept until
     * every process is started (nstarted of nprocs, in order). */
    char **argv, **env;
    size_t nargv, nenv, nstarted;
    struct event *spawn_ev;
    struct worker *worker; /* a farm's persistent worker (worker.c) */
    int *worker_in;        /* where its stdin pipe goes, at the start */
    struct job *next;
};

static void job_stream_cb(evutil_socket_t, short, void *);
static void job_spawn_forget(struct job *);
/* Tests only: P2P_TEST_SPAWN_DELAY_MS holds each batch after the first
 * that long, so that a test can act between them. */
static struct timeval spawn_next;
static void proc_hold(struct proc *, int hold);

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

/* The job's cgroup: killed, emptied and removed when it ends. */
static int
job_cgroup_open(struct job *j, char *why, size_t whylen)
{
    struct peerd *pd = j->pd;

    if (pd->cgroups != NULL &&
        (j->cg = cgroup_job_new(pd->cgroups, j->hex, why, whylen)) == NULL)
        return -1;
    return 0;
}

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
static void
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
static void
proc_kill_all(struct proc *p)
{
    if (p->cg != NULL)
        cgroup_kill(p->cg);
    else if (p->state == PROC_RUNNING)
        kill(-p->pid, SIGKILL);
}

/* Report a process that is reaped and drained, and return its slot. */
static void
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

static void
stream_close(struct proc_stream *ps)
{
    event_free(ps->ev);
    ps->ev = NULL;
    close(ps->fd);
    ps->fd = -1;
}

/* Stop or restart reading a job's pipes. */
static void
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

static void
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
        stream_close(ps);
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

/* Where the job's processes listen for each other: our service address,
 * or, when that is a wildcard, the address the coordinator reached. */
static void
job_set_bind_host(struct job *j, struct svc_conn *c)
{
    struct netaddr na;

    na = j->pd->listen_addr;
    if (netaddr_is_any(&na) && svc_conn_local(c, &na) == -1)
        na = j->pd->listen_addr;
    if (getnameinfo((struct sockaddr *)&na.ss, na.len, j->bind_host,
                    sizeof j->bind_host, NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(j->bind_host, sizeof j->bind_host, "127.0.0.1");
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

/* As root, jobs run as another account that must pass through every
 * directory above its job directory: say so at start, not only at the
 * first job. */
int
job_reachable(const char *state_dir, uid_t uid, char *err, size_t errlen)
{
    struct stat st;
    char *path, *slash;

    if (geteuid() != 0)
        return 0;
    path = xstrdup(state_dir);
    for (slash = path; slash != NULL; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (path[0] != '\0' && stat(path, &st) == 0 &&
            (st.st_mode & S_IXOTH) == 0 && st.st_uid != uid) {
            snprintf(err, errlen,
                     "jobs run as uid %u cannot reach %s: %s is mode %04o "
                     "(chmod o+x %s, or choose another --state-dir)",
                     (unsigned)uid, state_dir, path,
                     (unsigned)(st.st_mode & 07777), path);
            free(path);
            return -1;
        }
        *slash = '/';
    }
    free(path);
    return 0;
}

/* Processes of every job running on this peer (a stand-in for "on this
 * machine": peers sharing a machine each count their own). */
static size_t
job_local_procs(struct peerd *pd)
{
    struct job *j;
    size_t n = 0;

    for (j = pd->jobs; j != NULL; j = j->next)
        n += j->nprocs;
    return n;
}

/* The environment of a job's processes: ours first (not overridable),
 * then the user's, then defaults the user may override. */
static char **
job_env(struct job *j, const struct proc *p, size_t *n)
{
    char **env;
    size_t i, k = 0;

    env = xcalloc(j->nenv + 16, sizeof *env);
    xasprintf(&env[k++], "P2P_JOB=%s", j->hex);
    xasprintf(&env[k++], "P2P_RANK=%u", p->rank);
    xasprintf(&env[k++], "P2P_SIZE=%u", j->size);
    xasprintf(&env[k++], "P2P_REPLICA=%u", p->replica);
    xasprintf(&env[k++], "P2P_NREPLICAS=%u", j->nreplicas);
    xasprintf(&env[k++], "P2P_PEERD=%s", j->pd->listen_addr.text);
    xasprintf(&env[k++], "P2P_HOST=%s", j->pd->host_label);
    xasprintf(&env[k++], "%s=%d", CTL_FD_ENV, CTL_FD);
    xasprintf(&env[k++], "P2P_BIND=%s", j->bind_host);
    /* Every process of the job on this machine, all peers together, so
     * that the library knows when ranks outnumber cores. */
    xasprintf(&env[k++], "P2P_LOCAL_PROCS=%zu", job_local_procs(j->pd));
    for (i = 0; i < j->nenv; i++)
        env[k++] = xstrdup(j->env[i]);
    xasprintf(&env[k++], "PATH=%s", j->pd->cfg->job_path);
    xasprintf(&env[k++], "HOME=%s", j->dir);
    env[k] = NULL;
    *n = k;
    return env;
}

/* Make the job directory and put the staged files in it. */
static int
job_prepare_dir(struct job *j, const struct msg_launch *l, char *why,
                size_t whylen)
{
    struct peerd *pd = j->pd;
    char *jobs, *path, err[256];
    size_t i;

    xasprintf(&jobs, "%s/jobs", pd->state_dir);
    /* The job account must reach its own directory, nothing else. */
    if (mkdir(jobs, 0711) == -1 && errno != EEXIST) {
        snprintf(why, whylen, "%s: %s", jobs, strerror(errno));
        free(jobs);
        return -1;
    }
    free(jobs);
    xasprintf(&j->dir, "%s/jobs/%s", pd->state_dir, j->hex);
    if (mkdir(j->dir, 0700) == -1) {
        snprintf(why, whylen, "%s: %s", j->dir, strerror(errno));
        free(j->dir);
        j->dir = NULL;
        return -1;
    }
    /* Files go in while the directory is still ours (the job account
     * cannot touch it yet, so no link can be slipped in); the directory
     * is handed over last. */
    for (i = 0; i < l->nfiles; i++) {
        xasprintf(&path, "%s/%s", j->dir, l->files[i].name);
        if (cache_copy_out(pd->cache, l->files[i].hash, path,
                           l->files[i].executable ? 0755 : 0644, err,
                           sizeof err) == -1 ||
            (geteuid() == 0 &&
             lchown(path, box_uid(j->box), box_gid(j->box)) == -1)) {
            snprintf(why, whylen, "staging %s: %s", l->files[i].name, err);
            free(path);
            return -1;
        }
        free(path);
    }
    if (geteuid() == 0 &&
        chown(j->dir, box_uid(j->box), box_gid(j->box)) == -1) {
        snprintf(why, whylen, "%s: %s", j->dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Fork p; its exec is awaited by job_finish_proc, so that a batch of
 * children exec at once.  *ctl is peerd's end of its control socket. */
static int
job_fork_proc(struct job *j, struct proc *p, struct spawn_started *st, int *ctl,
              char *why, size_t whylen)
{
    struct peerd *pd = j->pd;
    struct spawn_req r;
    char **env, name[32];
    size_t nenv, i;
    int sv[2], sndbuf = 4 * 1024 * 1024;

    if (j->cg != NULL) {
        snprintf(name, sizeof name, "%u.%u", p->rank, p->replica);
        if ((p->cg = cgroup_proc_new(j->cg, name, j->mem_limit,
                                     (uint32_t)pd->cfg->job_nproc, why,
                                     whylen)) == NULL)
            return -1;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
        snprintf(why, whylen, "control socket: %s", strerror(errno));
        return -1;
    }
    /* Room for the address table's parts (ctlrelay.c writes the rest as
     * the process reads). */
    (void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
                     sizeof sndbuf);
    env = job_env(j, p, &nenv);
    memset(&r, 0, sizeof r);
    r.ctl_fd = sv[1];
    r.dir = j->dir;
    r.argv = j->argv;
    r.envp = env;
    r.path = pd->cfg->job_path;
    r.host = pd->host_label;
    r.uid = box_uid(j->box);
    r.gid = box_gid(j->box);
    r.cgroup_procs = p->cg != NULL ? cgroup_procs_files(p->cg) : NULL;
    r.mntns = box_mntns(j->box);
    /* Without a cgroup the old per-process limits are the only ones. */
    if (p->cg == NULL) {
        r.mem_mb = pd->cfg->job_mem_mb;
        r.nproc = pd->cfg->job_nproc;
    }
    r.nofile = pd->cfg->job_nofile;
    r.in = j->worker_in;
    p->pid = spawn_start(&r, st, why, whylen);
    for (i = 0; i < nenv; i++)
        free(env[i]);
    free(env);
    close(sv[1]);
    if (p->pid == -1) {
        p->pid = 0;
        close(sv[0]);
        return -1;
    }
    *ctl = sv[0];
    return 0;
}

/* p has exec'd (or failed to: -1, why says, the child reaped): relay its
 * control socket and output. */
static int
job_finish_proc(struct job *j, struct proc *p, struct spawn_started *st,
                int ctl, char *why, size_t whylen)
{
    struct peerd *pd = j->pd;
    int fds[2], s;

    if (spawn_finish(st, &fds[0], &fds[1], why, whylen) == -1) {
        p->pid = 0;
        close(ctl);
        return -1;
    }
    p->state = PROC_RUNNING;
    p->ctl = ctlrelay_new(pd->base, j, p->rank, p->replica, ctl);
    for (s = 0; s < 2; s++) {
        p->out[s].proc = p;
        p->out[s].stream = s + 1;
        p->out[s].fd = fds[s];
        p->out[s].ev = event_new(pd->base, fds[s], EV_READ | EV_PERSIST,
                                 job_stream_cb, &p->out[s]);
        event_priority_set(p->out[s].ev, PEERD_PRIO_BULK);
        event_add(p->out[s].ev, NULL);
    }
    return 0;
}

/* SIGKILL every process of j, reap them here and now, and free j. */
static void
job_kill_now(struct job *j)
{
    size_t i;

    for (i = 0; i < j->nprocs; i++)
        if (j->procs[i].state == PROC_RUNNING) {
            proc_kill_all(&j->procs[i]);
            kill(-j->procs[i].pid, SIGKILL);
            (void)waitpid(j->procs[i].pid, NULL, 0);
            j->procs[i].state = PROC_DONE;
        }
    job_free(j);
}

uint64_t
job_mem_limit(const struct peerd *pd)
{
    struct resources res;

    if (pd->cfg->job_mem_mb > 0)
        return (uint64_t)pd->cfg->job_mem_mb << 20;
    resources_probe(&res, (uint32_t)pd->slots_total, 0);
    return res.mem_total / 100 * (uint64_t)pd->cfg->job_mem_percent /
           (uint64_t)(pd->slots_total > 0 ? pd->slots_total : 1);
}

/* A copy of n strings, NULL-terminated. */
static char **
strv_dup(char *const *v, size_t n)
{
    char **c = xcalloc(n + 1, sizeof *c);
    size_t i;

    for (i = 0; i < n; i++)
        c[i] = xstrdup(v[i]);
    return c;
}

static void
strv_free(char **v)
{
    size_t i;

    for (i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

/* Nothing more to spawn: drop the program, environment and event. */
static void
job_spawn_forget(struct job *j)
{
    if (j->spawn_ev != NULL)
        event_free(j->spawn_ev);
    j->spawn_ev = NULL;
    strv_free(j->argv);
    strv_free(j->env);
    j->argv = j->env = NULL;
}

/* Start the next JOB_SPAWN_BATCH processes: fork them all, then wait
 * for each exec (they exec at once, which matters on a loaded machine:
 * the children run at the lowest priority).  -1 (why says) when one
 * could not start: it is left PROC_DEAD with pid 0, the rest of the
 * batch runs, and what was not forked stays for job_spawn_abandon. */
static int
job_spawn_batch(struct job *j, char *why, size_t whylen)
{
    struct spawn_started st[JOB_SPAWN_BATCH];
    int ctl[JOB_SPAWN_BATCH], rc = 0;
    size_t idx[JOB_SPAWN_BATCH], at = j->nstarted, n = 0, k;
    struct proc *p;
    char other[256];

    while (n < JOB_SPAWN_BATCH && at < j->nprocs) {
        p = &j->procs[at];
        if (p->gone) {
            /* Reported as killed, like a process the view killed. */
            log_info("job %.8s: rank %u replica %u was declared dead before "
                     "it started: not starting it",
                     j->hex, p->rank, p->replica);
            p->state = PROC_DEAD;
            p->status = SIGKILL;
            at++;
            proc_check_done(p);
            continue;
        }
        if (job_fork_proc(j, p, &st[n], &ctl[n], why, whylen) == -1) {
            rc = -1; /* a fork failed: why says */
            break;
        }
        idx[n++] = at++;
    }
    for (k = 0; k < n; k++)
        if (job_finish_proc(j, &j->procs[idx[k]], &st[k], ctl[k],
                            rc == 0 ? why : other,
                            rc == 0 ? whylen : sizeof other) == -1) {
            /* Never ran: as if reaped and drained, reported by the
             * caller (the state moves back from DONE, "until started"). */
            j->procs[idx[k]].state = PROC_DEAD;
            j->procs[idx[k]].status = 127 << 8;
            rc = -1;
        }
    j->nstarted = at;
    return rc;
}

/* The processes that will not start now (a failed batch, or the job
 * killed meanwhile) are reported as ended with status, so that the
 * coordinator hears of every process. */
static void
job_spawn_abandon(struct job *j, int status)
{
    size_t i, n = j->nprocs;

    for (i = j->nstarted; i < n; i++) {
        struct proc *p = &j->procs[i];

        p->state = PROC_DEAD; /* never ran: reaped, drained */
        p->status = status;
        proc_check_done(p); /* the last one may end the job (freed later) */
    }
    j->nstarted = n;
}

/* The next batch, from the loop: pings and leases are served between. */
static void
job_spawn_cb(evutil_socket_t fd, short what, void *arg)
{
    struct job *j = arg;
    char why[256];
    size_t first = j->nstarted, i;

    (void)fd;
    (void)what;
    if (j->state != JOB_RUNNING) {
        job_spawn_abandon(j, SIGKILL);
        return;
    }
    if (job_spawn_batch(j, why, sizeof why) == -1) {
        log_warnx("job %.8s: %s; the processes not started are reported "
                  "failed",
                  j->hex, why);
        for (i = first; i < j->nstarted; i++)
            if (j->procs[i].state == PROC_DEAD && j->procs[i].pid == 0)
                proc_check_done(&j->procs[i]);
        job_spawn_abandon(j, 127 << 8);
        return;
    }
    if (j->nstarted < j->nprocs)
        evtimer_add(j->spawn_ev, &spawn_next);
    else
        log_debug("job %.8s: all %zu processes started", j->hex, j->nprocs);
}

/* Launch a job; a worker's gets w and its stdin pipe in *in. */
static int
job_launch_as(struct peerd *pd, struct svc_conn *c, const struct msg_launch *l,
              struct box *box, struct worker *w, int *in, char *why,
              size_t whylen)
{
    struct hold *h;
    struct job *j;
    size_t i;

    h = reserve_find(pd, l->job);
    if (h == NULL || h->owner != c || h->expires_ms == 0) {
        snprintf(why, whylen, "no reservation for this job here");
        return -1;
    }
    if (h->slots < l->nprocs) {
        snprintf(why, whylen, "%zu processes for %u reserved slots", l->nprocs,
                 h->slots);
        return -1;
    }
    j = xcalloc(1, sizeof *j);
    j->pd = pd;
    memcpy(j->id, l->job, WIRE_JOB_ID_LEN);
    sec_hex(j->hex, l->job, WIRE_JOB_ID_LEN);
    j->owner = c;
    j->size = l->size;
    j->nreplicas = l->nreplicas;
    j->lease_ms =
        l->lease_ms > 0 && l->lease_ms <= (uint32_t)pd->cfg->max_lease_ms
            ? l->lease_ms
            : (uint32_t)pd->cfg->max_lease_ms;
    j->last_heard_ms = monotime_ms();
    j->procs = xcalloc(l->nprocs, sizeof *j->procs);
    j->nprocs = l->nprocs;
    for (i = 0; i < l->nprocs; i++) {
        j->procs[i].job = j;
        j->procs[i].rank = l->procs[i].rank;
        j->procs[i].replica = l->procs[i].replica;
        j->procs[i].state = PROC_DONE; /* until started */
        j->procs[i].out[0].fd = j->procs[i].out[1].fd = -1;
    }
    j->mem_limit = pd->cgroups != NULL && cgroup_has_limit(pd->cgroups,
                                                           CG_LIMIT_MEMORY)
                       ? job_mem_limit(pd)
                       : 0;
    job_set_bind_host(j, c);
    snprintf(j->user, sizeof j->user, "%s", svc_conn_name(c));
    j->cmd = xstrdup(l->argv[0]);
    j->task = l->task != 0;
    j->started = time(NULL);
    j->worker = w;
    j->worker_in = in;
    j->next = pd->jobs;
    pd->jobs = j;
    reserve_confirm(pd, h, (uint32_t)l->nprocs);

    if (job_reachable(pd->state_dir, pd->job_uid, why, whylen) == -1)
        goto fail;
    if (box != NULL)
        j->box = box_ref(box);
    else if ((j->box = box_new(pd, why, whylen)) == NULL)
        goto fail;
    if (job_prepare_dir(j, l, why, whylen) == -1 ||
        job_cgroup_open(j, why, whylen) == -1)
        goto fail;
    /* Every process counts as running until it is reported, started or
     * not: the job cannot end while batches are still to come. */
    j->nrunning = l->nprocs;
    j->argv = strv_dup(l->argv, l->nargv);
    j->nargv = l->nargv;
    j->env = strv_dup(l->env, l->nenv);
    j->nenv = l->nenv;
    /* The first batch now (a failure here fails the launch); the rest
     * from the loop, a batch a turn (job_spawn_cb). */
    if (job_spawn_batch(j, why, whylen) == -1)
        goto fail;
    log_info("job %.8s: %zu process%s %s for %s (%s) as uid %u", j->hex,
             l->nprocs, l->nprocs == 1 ? "" : "es",
             j->nstarted < j->nprocs ? "starting" : "started", svc_conn_name(c),
             l->argv[0], (unsigned)box_uid(j->box));
    if (j->nstarted < j->nprocs) {
        const char *d = getenv("P2P_TEST_SPAWN_DELAY_MS");

        spawn_next.tv_sec = d != NULL ? atoi(d) / 1000 : 0;
        spawn_next.tv_usec = d != NULL ? atoi(d) % 1000 * 1000 : 0;
        j->spawn_ev = evtimer_new(pd->base, job_spawn_cb, j);
        evtimer_add(j->spawn_ev, &spawn_next);
    }
    j->worker_in = NULL; /* a worker is one process: started by now */
    return 0;

fail:
    log_warnx("job %.8s: launch failed: %s", j->hex, why);
    /* What did start is killed and reaped at once; the job never ran. */
    j->worker = NULL;
    j->worker_in = NULL;
    job_kill_now(j);
    return -1;
}

int
job_launch(struct peerd *pd, struct svc_conn *c, const struct msg_launch *l,
           struct box *box, char *why, size_t whylen)
{
    return job_launch_as(pd, c, l, box, NULL, NULL, why, whylen);
}

struct job *
job_launch_worker(struct peerd *pd, struct svc_conn *c,
                  const struct msg_launch *l, struct box *box,
                  struct worker *w, int *in, char *why, size_t whylen)
{
    *in = -1;
    if (job_launch_as(pd, c, l, box, w, in, why, whylen) == -1) {
        if (*in != -1)
            close(*in);
        *in = -1;
        return NULL;
    }
    return job_find(pd, l->job);
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
                        stream_close(&p->out[s]);
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

static void
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
