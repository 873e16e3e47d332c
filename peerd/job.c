/*
 * Jobs running on this peer.  A job owns a directory under
 * STATE_DIR/jobs/<id>, its processes and their output pipes.  Output goes
 * to the coordinator as it comes (reading pauses while the connection is
 * backed up); a process is finished only when it is reaped and both pipes
 * are drained, and then its exit is reported and its slot returned.  When
 * the coordinator goes away or falls silent past its lease, the job is
 * killed; when the last process is finished the directory goes.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
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
#define JOB_BACKLOG_MAX (4 * 1024 * 1024) /* pause reading beyond this */
#define JOB_KILL_GRACE_MS 1000            /* SIGTERM, then SIGKILL */
/* After a process is reaped, something it left behind may still hold its
 * output pipes; they are closed after this long. */
#define JOB_PIPE_GRACE_MS 2000
/* Dead processes in one view; a job's address table is at most
 * CTL_MAX_ENTRIES, so this leaves room to spare and keeps the message
 * (12 + 4n bytes) well within one SEQPACKET. */
#define JOB_VIEW_MAX (CTL_MAX_ENTRIES * 8)

struct proc_stream {
    struct proc *proc;
    int stream; /* 1 stdout, 2 stderr */
    int fd;     /* -1 once drained */
    struct event *ev;
};

struct proc {
    struct job *job;
    uint32_t rank, replica;
    pid_t pid;          /* 0 once reaped */
    int status;         /* wait status, once reaped */
    uint64_t reaped_ms; /* when, for the grace of its pipes */
    int reported;
    struct proc_stream out[2];
    int ctl;    /* our end of its control socket, -1 once closed */
    struct event *ctl_ev;
    /* The coordinator's output hold and the progress relay (the end of
     * this file). */
    int held;                 /* its pipes are not read */
    uint64_t progress;        /* last counter reported by the process */
    uint64_t progress_sent;   /* last counter passed on */
    uint64_t progress_ms;     /* when */
    int progress_fresh;       /* reported since (alive, maybe waiting) */
};

struct job {
    struct peerd *pd;
    uint8_t id[WIRE_JOB_ID_LEN];
    char hex[2 * WIRE_JOB_ID_LEN + 1];
    struct svc_conn *owner; /* NULL once the coordinator is gone */
    char *dir;
    struct proc *procs;
    size_t nprocs, nrunning;  /* nrunning: not yet finished */
    uint32_t size, nreplicas; /* of the whole job, not just here */
    uint32_t lease_ms;
    uint64_t last_heard_ms;
    uint64_t kill_at_ms; /* SIGKILL due, 0 when not killing */
    int paused;
    char bind_host[48]; /* where its processes listen (an IP) */
    struct job *next;
};

static void job_stream_cb(evutil_socket_t, short, void *);
static void job_ctl_cb(evutil_socket_t, short, void *);
static void proc_hold(struct proc *, int hold);
static void job_progress(struct proc *, const uint8_t *, size_t);

int
job_owner_is(const struct job *j, const struct svc_conn *c)
{
    return j->owner == c;
}

static void
proc_ctl_close(struct proc *p)
{
    if (p->ctl == -1)
        return;
    event_free(p->ctl_ev);
    p->ctl_ev = NULL;
    close(p->ctl);
    p->ctl = -1;
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

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (remove(path) == -1 && errno != ENOENT)
        log_warn("removing %s", path);
    return 0;
}

/* Remove a job directory and everything in it.  The tree belongs to the
 * job account, whose processes may still be changing it (a directory
 * swapped for a link half way through the walk): as root, the contents go
 * in a child that has become the job account, so that it can remove
 * nothing the job could not; only the emptied directory itself is removed
 * as root (its parent, jobs/, is ours). */
static void
job_rmdir(struct peerd *pd, const char *dir)
{
    pid_t pid;
    int status;

    if (geteuid() != 0) {
        (void)nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        return;
    }
    if ((pid = fork()) == -1) {
        log_warn("job directory %s: fork", dir);
        return;
    }
    if (pid == 0) {
        if (setgroups(0, NULL) == -1 || setgid(pd->job_gid) == -1 ||
            setuid(pd->job_uid) == -1 || geteuid() == 0)
            _exit(1);
        (void)nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        _exit(0);
    }
    while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
        ;
    if (rmdir(dir) == -1 && errno != ENOENT)
        log_warn("removing %s", dir);
}

static void
job_free(struct job *j)
{
    struct job **jp;
    size_t i;
    int s;

    for (jp = &j->pd->jobs; *jp != NULL; jp = &(*jp)->next)
        if (*jp == j) {
            *jp = j->next;
            break;
        }
    for (i = 0; i < j->nprocs; i++) {
        for (s = 0; s < 2; s++)
            if (j->procs[i].out[s].fd != -1) {
                event_free(j->procs[i].out[s].ev);
                close(j->procs[i].out[s].fd);
            }
        proc_ctl_close(&j->procs[i]);
    }
    if (j->dir != NULL)
        job_rmdir(j->pd, j->dir);
    reserve_release(j->pd, j->id);
    free(j->dir);
    free(j->procs);
    free(j);
}

static void
job_free_later(evutil_socket_t fd, short what, void *arg)
{
    job_free(arg);
}

/* The last process is finished: the job is over here.  This runs inside
 * one of the job's own callbacks, so it is unlinked now (no longer found)
 * and freed from the loop. */
static void
job_end(struct job *j)
{
    static const struct timeval now = {0, 0};
    struct job **jp;
    size_t i;

    log_info("job %.8s: finished", j->hex);
    /* Unlinked now, freed from the loop: nothing may reach it between. */
    for (i = 0; i < j->nprocs; i++)
        proc_ctl_close(&j->procs[i]);
    j->owner = NULL;
    for (jp = &j->pd->jobs; *jp != NULL; jp = &(*jp)->next)
        if (*jp == j) {
            *jp = j->next;
            break;
        }
    event_base_once(j->pd->base, -1, EV_TIMEOUT, job_free_later, j, &now);
}

/* Report a finished process (reaped and drained) and return its slot. */
static void
proc_check_done(struct proc *p)
{
    struct job *j = p->job;
    struct msg m;

    if (p->pid != 0 || p->out[0].fd != -1 || p->out[1].fd != -1 || p->reported)
        return;
    p->reported = 1;
    if (j->owner != NULL) {
        memset(&m, 0, sizeof m);
        m.type = MSG_PROC_EXIT;
        memcpy(m.u.exit.job, j->id, WIRE_JOB_ID_LEN);
        m.u.exit.rank = p->rank;
        m.u.exit.replica = p->replica;
        m.u.exit.signaled = WIFSIGNALED(p->status);
        m.u.exit.code = WIFSIGNALED(p->status)
                            ? (uint32_t)WTERMSIG(p->status)
                            : (uint32_t)WEXITSTATUS(p->status);
        svc_conn_send(j->owner, &m);
    }
    reserve_return_one(j->pd, j->id);
    if (--j->nrunning == 0)
        job_end(j);
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
    if (svc_conn_backlog(j->owner) > JOB_BACKLOG_MAX)
        job_pause(j, 1);
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
job_bind_host(struct job *j, struct svc_conn *c)
{
    struct netaddr na;

    na = j->pd->listen_addr;
    if (netaddr_is_any(&na) && svc_conn_local(c, &na) == -1)
        na = j->pd->listen_addr;
    if (getnameinfo((struct sockaddr *)&na.ss, na.len, j->bind_host,
                    sizeof j->bind_host, NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(j->bind_host, sizeof j->bind_host, "127.0.0.1");
}

/* A process speaks on its control socket: its address, an abort, or a
 * suspicion about another process. */
static void
job_ctl_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proc *p = arg;
    struct job *j = p->job;
    struct ctl_addr a;
    struct ctl_abort ab;
    struct ctl_suspect su;
    uint8_t buf[64];
    struct msg m;
    ssize_t n;

    n = recv(fd, buf, sizeof buf, 0);
    if (n == -1 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        proc_ctl_close(p);
        return;
    }
    if (buf[0] == CTL_PROGRESS) {
        job_progress(p, buf, (size_t)n);
        return;
    }
    memset(&m, 0, sizeof m);
    memcpy(m.u.addr.job, j->id, WIRE_JOB_ID_LEN);
    m.u.addr.p.rank = p->rank;
    m.u.addr.p.replica = p->replica;
    if (n == sizeof a && buf[0] == CTL_ADDR && buf[1] == CTL_VERSION) {
        memcpy(&a, buf, sizeof a);
        m.type = MSG_PROC_ADDR;
        if (strchr(j->bind_host, ':') != NULL)
            snprintf(m.u.addr.p.addr, sizeof m.u.addr.p.addr, "[%s]:%u",
                     j->bind_host, a.port);
        else
            snprintf(m.u.addr.p.addr, sizeof m.u.addr.p.addr, "%s:%u",
                     j->bind_host, a.port);
    } else if (n == sizeof ab && buf[0] == CTL_ABORT &&
               buf[1] == CTL_VERSION) {
        memcpy(&ab, buf, sizeof ab);
        m.type = MSG_JOB_ABORT;
        m.u.addr.status = ab.status;
        log_info("job %.8s: rank %u replica %u aborts with status %d", j->hex,
                 p->rank, p->replica, (int)ab.status);
    } else if (n == sizeof su && buf[0] == CTL_SUSPECT &&
               buf[1] == CTL_VERSION) {
        memcpy(&su, buf, sizeof su);
        if (su.proc >= j->size * j->nreplicas) {
            log_warnx("job %.8s: rank %u: suspects process %u, outside the "
                      "job; control socket closed",
                      j->hex, p->rank, su.proc);
            proc_ctl_close(p);
            return;
        }
        /* A hint, sent again on the next failure: not worth buffering
         * without bound for a coordinator that does not read. */
        if (j->owner == NULL || svc_conn_backlog(j->owner) > JOB_BACKLOG_MAX)
            return;
        log_debug("job %.8s: rank %u replica %u suspects process %u", j->hex,
                  p->rank, p->replica, su.proc);
        memset(&m, 0, sizeof m);
        m.type = MSG_SUSPECT;
        memcpy(m.u.suspect.job, j->id, WIRE_JOB_ID_LEN);
        m.u.suspect.rank = p->rank;
        m.u.suspect.replica = p->replica;
        m.u.suspect.proc = su.proc;
    } else {
        /* Our child, but running the user's code: not trusted either. */
        log_warnx("job %.8s: rank %u: bad control message (%zd bytes); "
                  "control socket closed",
                  j->hex, p->rank, n);
        proc_ctl_close(p);
        return;
    }
    if (j->owner != NULL)
        svc_conn_send(j->owner, &m);
}

void
job_table(struct job *j, const struct msg_table *t)
{
    struct ctl_table_head h;
    struct ctl_entry *e;
    uint8_t *buf;
    size_t i, len;

    if (t->nprocs > CTL_MAX_ENTRIES) {
        log_warnx("job %.8s: address table of %zu entries is too large",
                  j->hex, t->nprocs);
        return;
    }
    len = sizeof h + t->nprocs * sizeof *e;
    buf = xcalloc(1, len);
    memset(&h, 0, sizeof h);
    h.type = CTL_TABLE;
    h.version = CTL_VERSION;
    h.flags = CTL_TF_PROGRESS;
    memcpy(h.key, t->key, sizeof h.key);
    h.n = (uint32_t)t->nprocs;
    memcpy(buf, &h, sizeof h);
    e = (struct ctl_entry *)(void *)(buf + sizeof h);
    for (i = 0; i < t->nprocs; i++) {
        e[i].rank = t->procs[i].rank;
        e[i].replica = t->procs[i].replica;
        snprintf(e[i].addr, sizeof e[i].addr, "%s", t->procs[i].addr);
    }
    for (i = 0; i < j->nprocs; i++)
        if (j->procs[i].ctl != -1 &&
            send(j->procs[i].ctl, buf, len, MSG_DONTWAIT) != (ssize_t)len)
            log_warn("job %.8s: rank %u: sending the address table", j->hex,
                     j->procs[i].rank);
    sec_wipe(buf, len);
    free(buf);
}

/* One CTL_VIEW message, the same for every process of the job here. */
void
job_view(struct job *j, const struct msg_view *v)
{
    struct ctl_view_head h;
    uint8_t *buf;
    size_t i, len;

    if (v->ndead > JOB_VIEW_MAX) {
        log_warnx("job %.8s: view %u of %zu dead processes is too large",
                  j->hex, v->number, v->ndead);
        return;
    }
    for (i = 0; i < v->ndead; i++)
        if (v->dead[i] >= j->size * j->nreplicas) {
            log_warnx("job %.8s: view %u names process %u, outside the job",
                      j->hex, v->number, v->dead[i]);
            return;
        }
    len = sizeof h + v->ndead * sizeof *v->dead;
    buf = xcalloc(1, len);
    memset(&h, 0, sizeof h);
    h.type = CTL_VIEW;
    h.version = CTL_VERSION;
    h.number = v->number;
    h.n = (uint32_t)v->ndead;
    memcpy(buf, &h, sizeof h);
    if (v->ndead > 0)
        memcpy(buf + sizeof h, v->dead, v->ndead * sizeof *v->dead);
    for (i = 0; i < j->nprocs; i++) {
        struct proc *p = &j->procs[i];
        uint32_t me = p->rank * j->nreplicas + p->replica;
        size_t k;

        /* Declared dead but alive here (cut off from the others): it must
         * not go on beside the replica that replaces it. */
        for (k = 0; k < v->ndead && p->pid > 0; k++)
            if (v->dead[k] == me) {
                log_info("job %.8s: rank %u replica %u declared dead by the "
                         "coordinator: killing it",
                         j->hex, p->rank, p->replica);
                kill(-p->pid, SIGKILL);
            }
        if (p->ctl != -1 &&
            send(p->ctl, buf, len, MSG_DONTWAIT) != (ssize_t)len)
            log_warn("job %.8s: rank %u: sending view %u", j->hex, p->rank,
                     v->number);
    }
    free(buf);
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
job_env(struct job *j, const struct msg_launch *l, const struct proc *p,
        size_t *n)
{
    char **env;
    size_t i, k = 0;

    env = xcalloc(l->nenv + 16, sizeof *env);
    xasprintf(&env[k++], "P2P_JOB=%s", j->hex);
    xasprintf(&env[k++], "P2P_RANK=%u", p->rank);
    xasprintf(&env[k++], "P2P_SIZE=%u", l->size);
    xasprintf(&env[k++], "P2P_REPLICA=%u", p->replica);
    xasprintf(&env[k++], "P2P_NREPLICAS=%u", l->nreplicas);
    xasprintf(&env[k++], "P2P_PEERD=%s", j->pd->listen_addr.text);
    xasprintf(&env[k++], "P2P_HOST=%s", j->pd->host_label);
    xasprintf(&env[k++], "%s=%d", CTL_FD_ENV, CTL_FD);
    xasprintf(&env[k++], "P2P_BIND=%s", j->bind_host);
    /* Every process of the job on this machine, all peers together, so
     * that the library knows when ranks outnumber cores. */
    xasprintf(&env[k++], "P2P_LOCAL_PROCS=%zu", job_local_procs(j->pd));
    for (i = 0; i < l->nenv; i++)
        env[k++] = xstrdup(l->env[i]);
    env[k++] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
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
             lchown(path, pd->job_uid, pd->job_gid) == -1)) {
            snprintf(why, whylen, "staging %s: %s", l->files[i].name, err);
            free(path);
            return -1;
        }
        free(path);
    }
    if (geteuid() == 0 && chown(j->dir, pd->job_uid, pd->job_gid) == -1) {
        snprintf(why, whylen, "%s: %s", j->dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int
job_start_proc(struct job *j, const struct msg_launch *l, struct proc *p,
               char *why, size_t whylen)
{
    struct spawn_req r;
    char **env;
    size_t nenv, i;
    int fds[2], s;

    int sv[2], sndbuf = 4 * 1024 * 1024;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
        snprintf(why, whylen, "control socket: %s", strerror(errno));
        return -1;
    }
    /* The address table goes down this socket in one message. */
    (void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
                     sizeof sndbuf);
    env = job_env(j, l, p, &nenv);
    memset(&r, 0, sizeof r);
    r.ctl_fd = sv[1];
    r.dir = j->dir;
    r.argv = l->argv;
    r.envp = env;
    r.uid = j->pd->job_uid;
    r.gid = j->pd->job_gid;
    r.mem_mb = j->pd->cfg->job_mem_mb;
    r.nofile = j->pd->cfg->job_nofile;
    r.nproc = j->pd->cfg->job_nproc;
    p->pid = spawn_process(&r, &fds[0], &fds[1], why, whylen);
    for (i = 0; i < nenv; i++)
        free(env[i]);
    free(env);
    close(sv[1]);
    if (p->pid == -1) {
        p->pid = 0;
        close(sv[0]);
        return -1;
    }
    (void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
    p->ctl = sv[0];
    p->ctl_ev = event_new(j->pd->base, sv[0], EV_READ | EV_PERSIST,
                          job_ctl_cb, p);
    event_add(p->ctl_ev, NULL);
    for (s = 0; s < 2; s++) {
        p->out[s].proc = p;
        p->out[s].stream = s + 1;
        p->out[s].fd = fds[s];
        p->out[s].ev = event_new(j->pd->base, fds[s], EV_READ | EV_PERSIST,
                                 job_stream_cb, &p->out[s]);
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
        if (j->procs[i].pid > 0) {
            kill(-j->procs[i].pid, SIGKILL);
            (void)waitpid(j->procs[i].pid, NULL, 0);
            j->procs[i].pid = 0;
        }
    job_free(j);
}

int
job_launch(struct peerd *pd, struct svc_conn *c, const struct msg_launch *l,
           char *why, size_t whylen)
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
        j->procs[i].out[0].fd = j->procs[i].out[1].fd = -1;
        j->procs[i].ctl = -1;
    }
    job_bind_host(j, c);
    j->next = pd->jobs;
    pd->jobs = j;
    reserve_confirm(pd, h, (uint32_t)l->nprocs);

    if (job_reachable(pd->state_dir, pd->job_uid, why, whylen) == -1 ||
        job_prepare_dir(j, l, why, whylen) == -1)
        goto fail;
    for (i = 0; i < l->nprocs; i++) {
        if (job_start_proc(j, l, &j->procs[i], why, whylen) == -1)
            goto fail;
        j->nrunning++;
    }
    log_info("job %.8s: %zu process%s started for %s (%s)", j->hex, l->nprocs,
             l->nprocs == 1 ? "" : "es", svc_conn_name(c), l->argv[0]);
    return 0;

fail:
    log_warnx("job %.8s: launch failed: %s", j->hex, why);
    /* What did start is killed and reaped at once; the job never ran. */
    job_kill_now(j);
    return -1;
}

void
job_kill(struct job *j, const char *why)
{
    size_t i;

    if (j->kill_at_ms != 0)
        return;
    log_info("job %.8s: killing: %s", j->hex, why);
    j->kill_at_ms = monotime_ms() + JOB_KILL_GRACE_MS;
    for (i = 0; i < j->nprocs; i++)
        if (j->procs[i].pid > 0)
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
        for (i = 0; i < j->nprocs; i++)
            if (j->procs[i].pid == pid) {
                /* Whatever it left behind in its session goes too. */
                kill(-pid, SIGKILL);
                proc_hold(&j->procs[i], 0); /* drain what it left */
                j->procs[i].pid = 0;
                j->procs[i].status = status;
                j->procs[i].reaped_ms = monotime_ms();
                proc_check_done(&j->procs[i]);
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

/* Is pid one of the processes we started (or their helpers)? */
static int
job_known_pid(struct peerd *pd, pid_t pid)
{
    struct job *j;
    size_t i;

    for (j = pd->jobs; j != NULL; j = j->next)
        for (i = 0; i < j->nprocs; i++)
            if (j->procs[i].pid == pid)
                return 1;
    return 0;
}

/* The job a process says it belongs to (its P2P_JOB), or NULL. */
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

/* Processes that left their job's session (setsid and a double fork)
 * come back to us as orphans (we are a child subreaper): any that does
 * not belong to a running job is killed. */
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

void
job_cron(struct peerd *pd, uint64_t now_ms)
{
    static uint64_t last_strays;
    struct job *j;
    size_t i;
    int s;

    if (now_ms - last_strays >= 1000) {
        last_strays = now_ms;
        job_kill_strays(pd);
    }
    job_progress_cron(pd, now_ms);
    for (j = pd->jobs; j != NULL; j = j->next) {
        for (i = 0; i < j->nprocs; i++) {
            struct proc *p = &j->procs[i];

            /* Reaped, but something it left holds its pipes: close them,
             * the process is over. */
            if (p->pid == 0 && !p->reported && p->reaped_ms != 0 &&
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
        if (j->owner != NULL && j->kill_at_ms == 0 &&
            now_ms - j->last_heard_ms > j->lease_ms)
            job_kill(j, "its coordinator fell silent");
        if (j->kill_at_ms != 0 && now_ms >= j->kill_at_ms)
            for (i = 0; i < j->nprocs; i++)
                if (j->procs[i].pid > 0)
                    kill(-j->procs[i].pid, SIGKILL);
    }
}

void
job_shutdown(struct peerd *pd)
{
    struct job *j;

    while ((j = pd->jobs) != NULL) {
        log_info("job %.8s: killed at shutdown", j->hex);
        job_kill_now(j);
    }
    job_kill_strays(pd);
}

/* --- output hold and progress relay --------------------------------------
 *
 * The coordinator holds a replica whose output runs too far ahead of what
 * it shows: its pipes are not read (the process then blocks writing) until
 * it says so again, the process ends, or the coordinator goes.  Progress
 * counters from the MPI library (CTL_PROGRESS) are passed on at most once
 * per JOB_PROGRESS_MS per process, the latest value, and not while the
 * connection is backed up: bounded whatever the process sends.
 */

#define JOB_PROGRESS_MS 200
#define JOB_PROGRESS_BEAT_MS 500 /* the same value again: still alive */

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
        proc_hold(p, hold && p->pid > 0);
    }
}

/* Pass a process's latest counter on, if it moved and it is time. */
static void
proc_progress_send(struct proc *p, uint64_t now)
{
    struct job *j = p->job;
    struct msg m;

    if (!p->progress_fresh || j->owner == NULL ||
        now - p->progress_ms < (p->progress != p->progress_sent
                                    ? JOB_PROGRESS_MS
                                    : JOB_PROGRESS_BEAT_MS) ||
        svc_conn_backlog(j->owner) > JOB_BACKLOG_MAX)
        return;
    memset(&m, 0, sizeof m);
    m.type = MSG_PROGRESS;
    memcpy(m.u.note.job, j->id, WIRE_JOB_ID_LEN);
    m.u.note.rank = p->rank;
    m.u.note.replica = p->replica;
    m.u.note.value = p->progress;
    svc_conn_send(j->owner, &m);
    p->progress_sent = p->progress;
    p->progress_ms = now;
    p->progress_fresh = 0;
}

/* CTL_PROGRESS from a process: checked like every control message. */
static void
job_progress(struct proc *p, const uint8_t *buf, size_t n)
{
    struct ctl_progress cp;

    if (n != sizeof cp || buf[1] != CTL_VERSION) {
        log_warnx("job %.8s: rank %u: bad progress message (%zu bytes); "
                  "control socket closed",
                  p->job->hex, p->rank, n);
        proc_ctl_close(p);
        return;
    }
    memcpy(&cp, buf, sizeof cp);
    if (cp.count > p->progress)
        p->progress = cp.count;
    p->progress_fresh = 1;
    proc_progress_send(p, monotime_ms());
}

void
job_progress_cron(struct peerd *pd, uint64_t now_ms)
{
    struct job *j;
    size_t i;

    for (j = pd->jobs; j != NULL; j = j->next)
        for (i = 0; i < j->nprocs; i++)
            proc_progress_send(&j->procs[i], now_ms);
}
