/*
 * Launching a job on this peer: the reservation it fills, its directory
 * with the staged files, its box (uid, private /tmp) and cgroup, and its
 * processes, forked in batches of JOB_SPAWN_BATCH a turn of the event
 * loop with their environment and control sockets.  A launch that fails
 * kills and reaps at once what it started.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "job_int.h"
#include "log.h"
#include "monotime.h"
#include "xmalloc.h"

/* Processes spawned per turn of the event loop: each fork waits for its
 * exec, and a job of hundreds here must not keep the loop (pings,
 * leases, other jobs) waiting for seconds. */
#define JOB_SPAWN_BATCH 16
/* Tests only: P2P_TEST_SPAWN_DELAY_MS holds each batch after the first
 * that long, so that a test can act between them. */
static struct timeval spawn_next;

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
void
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
void
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
