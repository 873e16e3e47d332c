/*
 * The control socket of a job's process (a SOCK_SEQPACKET pair made at
 * spawn, the process's end at CTL_FD): what the process says goes up to
 * the job's coordinator (the address it listens on, an abort, a suspicion
 * about another process), what the coordinator sends comes down (the
 * address table, views of the membership).  The process runs the user's
 * code, so every message from it is checked like network input: a bad one
 * closes the socket and is logged, never more.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

/* Dead processes in one view; a job's address table is at most
 * CTL_MAX_ENTRIES, so this leaves room to spare and keeps the message
 * (12 + 4n bytes) well within one SEQPACKET. */
#define CTLRELAY_VIEW_MAX (CTL_MAX_ENTRIES * 8)
/* Progress counters go on at most this often per process, the latest
 * value; the same value again after the beat says "alive, waiting". */
#define CTLRELAY_PROGRESS_MS 200
#define CTLRELAY_PROGRESS_BEAT_MS 500

struct ctlrelay {
    struct job *job;
    uint32_t rank, replica;
    int fd; /* -1 once closed */
    struct event *ev;
    uint64_t progress;      /* last counter reported by the process */
    uint64_t progress_sent; /* last counter passed on */
    uint64_t progress_ms;   /* when */
    int progress_fresh;     /* reported since (alive, maybe waiting) */
};

static void ctlrelay_cb(evutil_socket_t, short, void *);

struct ctlrelay *
ctlrelay_new(struct event_base *base, struct job *j, uint32_t rank,
             uint32_t replica, int fd)
{
    struct ctlrelay *r;

    r = xcalloc(1, sizeof *r);
    r->job = j;
    r->rank = rank;
    r->replica = replica;
    r->fd = fd;
    (void)fcntl(fd, F_SETFL, O_NONBLOCK);
    r->ev = event_new(base, fd, EV_READ | EV_PERSIST, ctlrelay_cb, r);
    event_add(r->ev, NULL);
    return r;
}

/* Stop listening and close; the relay stays until freed. */
static void
ctlrelay_close(struct ctlrelay *r)
{
    if (r->fd == -1)
        return;
    event_free(r->ev);
    r->ev = NULL;
    close(r->fd);
    r->fd = -1;
}

void
ctlrelay_free(struct ctlrelay *r)
{
    if (r == NULL)
        return;
    ctlrelay_close(r);
    free(r);
}

/* Its address: where the job's processes listen on this peer. */
static int
ctlrelay_addr(struct ctlrelay *r, const uint8_t *buf, struct msg *m)
{
    const char *host = job_bind_host(r->job);
    struct ctl_addr a;

    memcpy(&a, buf, sizeof a);
    m->type = MSG_PROC_ADDR;
    if (strchr(host, ':') != NULL)
        snprintf(m->u.addr.p.addr, sizeof m->u.addr.p.addr, "[%s]:%u", host,
                 a.port);
    else
        snprintf(m->u.addr.p.addr, sizeof m->u.addr.p.addr, "%s:%u", host,
                 a.port);
    return 0;
}

/* A suspicion about another process: a hint for the coordinator. */
static int
ctlrelay_suspect(struct ctlrelay *r, const uint8_t *buf, struct msg *m)
{
    struct svc_conn *owner = job_owner(r->job);
    struct ctl_suspect su;

    memcpy(&su, buf, sizeof su);
    if (su.proc >= job_nprocs_total(r->job)) {
        log_warnx("job %.8s: rank %u: suspects process %u, outside the "
                  "job; control socket closed",
                  job_hex(r->job), r->rank, su.proc);
        ctlrelay_close(r);
        return -1;
    }
    /* Sent again on the next failure: not worth buffering without bound
     * for a coordinator that does not read. */
    if (owner == NULL || svc_conn_backlog(owner) > SVC_BACKLOG_MAX)
        return -1;
    log_debug("job %.8s: rank %u replica %u suspects process %u",
              job_hex(r->job), r->rank, r->replica, su.proc);
    memset(m, 0, sizeof *m);
    m->type = MSG_SUSPECT;
    memcpy(m->u.suspect.job, job_id(r->job), WIRE_JOB_ID_LEN);
    m->u.suspect.rank = r->rank;
    m->u.suspect.replica = r->replica;
    m->u.suspect.proc = su.proc;
    return 0;
}

/* Pass the latest counter on, if it moved (or the beat is due), at most
 * every CTLRELAY_PROGRESS_MS, and not while the connection is backed up:
 * bounded whatever the process sends. */
static void
ctlrelay_progress_send(struct ctlrelay *r, uint64_t now)
{
    struct svc_conn *owner = job_owner(r->job);
    struct msg m;

    if (!r->progress_fresh || owner == NULL ||
        now - r->progress_ms < (r->progress != r->progress_sent
                                    ? CTLRELAY_PROGRESS_MS
                                    : CTLRELAY_PROGRESS_BEAT_MS) ||
        svc_conn_backlog(owner) > SVC_BACKLOG_MAX)
        return;
    memset(&m, 0, sizeof m);
    m.type = MSG_PROGRESS;
    memcpy(m.u.note.job, job_id(r->job), WIRE_JOB_ID_LEN);
    m.u.note.rank = r->rank;
    m.u.note.replica = r->replica;
    m.u.note.value = r->progress;
    svc_conn_send(owner, &m);
    r->progress_sent = r->progress;
    r->progress_ms = now;
    r->progress_fresh = 0;
}

/* CTL_PROGRESS: the MPI library's counter (replication's progress rule). */
static void
ctlrelay_progress(struct ctlrelay *r, const uint8_t *buf, size_t n)
{
    struct ctl_progress cp;

    if (n != sizeof cp || buf[1] != CTL_VERSION) {
        log_warnx("job %.8s: rank %u: bad progress message (%zu bytes); "
                  "control socket closed",
                  job_hex(r->job), r->rank, n);
        ctlrelay_close(r);
        return;
    }
    memcpy(&cp, buf, sizeof cp);
    if (cp.count > r->progress)
        r->progress = cp.count;
    r->progress_fresh = 1;
    ctlrelay_progress_send(r, monotime_ms());
}

void
ctlrelay_cron(struct ctlrelay *r, uint64_t now_ms)
{
    if (r != NULL)
        ctlrelay_progress_send(r, now_ms);
}

static void
ctlrelay_cb(evutil_socket_t fd, short what, void *arg)
{
    struct ctlrelay *r = arg;
    struct svc_conn *owner;
    struct ctl_abort ab;
    uint8_t buf[64];
    struct msg m;
    ssize_t n;

    n = recv(fd, buf, sizeof buf, 0);
    if (n == -1 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        ctlrelay_close(r);
        return;
    }
    if (buf[0] == CTL_PROGRESS) {
        ctlrelay_progress(r, buf, (size_t)n);
        return;
    }
    memset(&m, 0, sizeof m);
    memcpy(m.u.addr.job, job_id(r->job), WIRE_JOB_ID_LEN);
    m.u.addr.p.rank = r->rank;
    m.u.addr.p.replica = r->replica;
    if (n == sizeof(struct ctl_addr) && buf[0] == CTL_ADDR &&
        buf[1] == CTL_VERSION) {
        ctlrelay_addr(r, buf, &m);
    } else if (n == sizeof ab && buf[0] == CTL_ABORT &&
               buf[1] == CTL_VERSION) {
        memcpy(&ab, buf, sizeof ab);
        m.type = MSG_JOB_ABORT;
        m.u.addr.status = ab.status;
        log_info("job %.8s: rank %u replica %u aborts with status %d",
                 job_hex(r->job), r->rank, r->replica, (int)ab.status);
    } else if (n == sizeof(struct ctl_suspect) && buf[0] == CTL_SUSPECT &&
               buf[1] == CTL_VERSION) {
        if (ctlrelay_suspect(r, buf, &m) == -1)
            return;
    } else {
        /* Our child, but running the user's code: not trusted either. */
        log_warnx("job %.8s: rank %u: bad control message (%zd bytes); "
                  "control socket closed",
                  job_hex(r->job), r->rank, n);
        ctlrelay_close(r);
        return;
    }
    if ((owner = job_owner(r->job)) != NULL)
        svc_conn_send(owner, &m);
}

/* Send one message to every relay still open. */
static void
ctlrelay_send_all(struct ctlrelay *const *relays, size_t n, const void *buf,
                  size_t len, const char *what)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (relays[i] != NULL && relays[i]->fd != -1 &&
            send(relays[i]->fd, buf, len, MSG_DONTWAIT) != (ssize_t)len)
            log_warn("job %.8s: rank %u: sending %s",
                     job_hex(relays[i]->job), relays[i]->rank, what);
}

void
ctlrelay_table(struct ctlrelay *const *relays, size_t n,
               const struct msg_table *t)
{
    struct ctl_table_head h;
    struct ctl_entry *e;
    uint8_t *buf;
    size_t i, len;

    if (n == 0)
        return;
    if (t->nprocs > CTL_MAX_ENTRIES) {
        log_warnx("job %.8s: address table of %zu entries is too large",
                  job_hex(relays[0]->job), t->nprocs);
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
    ctlrelay_send_all(relays, n, buf, len, "the address table");
    sec_wipe(buf, len);
    free(buf);
}

int
ctlrelay_view_ok(const struct job *j, const struct msg_view *v)
{
    size_t i;

    if (v->ndead > CTLRELAY_VIEW_MAX) {
        log_warnx("job %.8s: view %u of %zu dead processes is too large",
                  job_hex(j), v->number, v->ndead);
        return 0;
    }
    for (i = 0; i < v->ndead; i++)
        if (v->dead[i] >= job_nprocs_total(j)) {
            log_warnx("job %.8s: view %u names process %u, outside the job",
                      job_hex(j), v->number, v->dead[i]);
            return 0;
        }
    return 1;
}

void
ctlrelay_view(struct ctlrelay *const *relays, size_t n,
              const struct msg_view *v)
{
    struct ctl_view_head h;
    uint8_t *buf;
    size_t len;

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
    ctlrelay_send_all(relays, n, buf, len, "a view");
    free(buf);
}
