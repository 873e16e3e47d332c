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
#include "ctltable.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

/* Dead processes in one view: the message (12 + 4n bytes) stays well
 * within one SEQPACKET. */
#define CTLRELAY_VIEW_MAX CTL_VIEW_MAX
/* Progress counters go on at most this often per process, the latest
 * value; the same value again after the beat says "alive, waiting". */
#define CTLRELAY_PROGRESS_MS 200
#define CTLRELAY_PROGRESS_BEAT_MS 500

/* Messages for the processes, encoded once and shared by every relay
 * of the job (the address table is the same for all). */
struct ctlblob {
    int refs;
    long n;
    struct ctl_msg *m;
};

/* What a relay has still to write: blobs in order, from message next. */
struct ctlout {
    struct ctlout *next;
    struct ctlblob *b;
    long at;
};

/* The address table as it arrives from the coordinator, in parts. */
struct ctltable_in {
    uint32_t total, have;
    uint8_t key[32];
    struct ctl_entry *e;
    int done; /* sent on: a second table is a protocol error */
};

struct ctlrelay {
    struct job *job;
    uint32_t rank, replica;
    int fd; /* -1 once closed */
    struct event *ev;
    struct event *wev; /* pending while out holds what the socket refused */
    struct ctlout *out, **outt;
    uint64_t progress;      /* last counter reported by the process */
    uint64_t progress_sent; /* last counter passed on */
    uint64_t progress_ms;   /* when */
    int progress_fresh;     /* reported since (alive, maybe waiting) */
};

static void ctlrelay_cb(evutil_socket_t, short, void *);
static void ctlrelay_write_cb(evutil_socket_t, short, void *);
static void ctlblob_unref(struct ctlblob *);

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
    r->wev = event_new(base, fd, EV_WRITE, ctlrelay_write_cb, r);
    r->outt = &r->out;
    /* What a process says (its address, a suspicion) waits behind the
     * daemon's own conversations: the lowest priority (main.c). */
    event_priority_set(r->ev, PEERD_PRIO_BULK);
    event_priority_set(r->wev, PEERD_PRIO_BULK);
    event_add(r->ev, NULL);
    return r;
}

/* Stop listening and close; the relay stays until freed. */
static void
ctlrelay_close(struct ctlrelay *r)
{
    struct ctlout *o;

    if (r->fd == -1)
        return;
    event_free(r->ev);
    r->ev = NULL;
    event_free(r->wev);
    r->wev = NULL;
    while ((o = r->out) != NULL) {
        r->out = o->next;
        ctlblob_unref(o->b);
        free(o);
    }
    r->outt = &r->out;
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

static void
ctlblob_unref(struct ctlblob *b)
{
    if (b != NULL && --b->refs == 0) {
        ctl_table_msgs_free(b->m, b->n);
        free(b);
    }
}

/* Write what the relay holds, as far as the socket takes it; the rest
 * waits for the socket to drain (a process reads its table in MPI_Init,
 * which may come late). */
static void
ctlrelay_flush(struct ctlrelay *r)
{
    struct ctlout *o;
    const struct ctl_msg *m;

    while (r->fd != -1 && (o = r->out) != NULL) {
        m = &o->b->m[o->at];
        if (send(r->fd, m->buf, m->len, MSG_DONTWAIT | MSG_NOSIGNAL) !=
            (ssize_t)m->len) {
            if (errno == EAGAIN || errno == EINTR) {
                event_add(r->wev, NULL);
                return;
            }
            log_warn("job %.8s: rank %u: control socket", job_hex(r->job),
                     r->rank);
            ctlrelay_close(r);
            return;
        }
        if (++o->at == o->b->n) {
            r->out = o->next;
            if (r->out == NULL)
                r->outt = &r->out;
            ctlblob_unref(o->b);
            free(o);
        }
    }
}

static void
ctlrelay_write_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    ctlrelay_flush(arg);
}

/* Queue a blob on every relay still open, after what each holds. */
static void
ctlrelay_push_all(struct ctlrelay *const *relays, size_t n, struct ctlblob *b)
{
    struct ctlout *o;
    size_t i;

    b->refs++;
    for (i = 0; i < n; i++) {
        if (relays[i] == NULL || relays[i]->fd == -1)
            continue;
        o = xcalloc(1, sizeof *o);
        o->b = b;
        b->refs++;
        *relays[i]->outt = o;
        relays[i]->outt = &o->next;
        if (relays[i]->out == o)
            ctlrelay_flush(relays[i]);
    }
    ctlblob_unref(b);
}

void
ctltable_in_free(struct ctltable_in *in)
{
    if (in == NULL)
        return;
    free(in->e);
    sec_wipe(in->key, sizeof in->key);
    free(in);
}

/* One part of the coordinator's table; -1 when it does not fit the parts
 * before it or the job. */
static int
ctltable_in_add(struct ctltable_in *in, const struct job *j,
                const struct msg_table *t)
{
    uint32_t total = t->total != 0 ? t->total : (uint32_t)t->nprocs;
    size_t i;

    /* An empty part adds nothing and would leave the next one free to
     * restate the size and key: every part carries entries. */
    if (in->done || t->first != in->have || t->nprocs == 0 ||
        (in->have > 0 && (total != in->total ||
                          sec_equal(t->key, in->key, sizeof in->key) == 0)) ||
        total > job_nprocs_total(j) || total > CTL_MAX_ENTRIES ||
        t->nprocs > total - t->first) {
        log_warnx("job %.8s: address table part of %zu entries at %u of %u "
                  "does not fit (have %u of %u)",
                  job_hex(j), t->nprocs, t->first, total, in->have, in->total);
        return -1;
    }
    if (in->have == 0) {
        in->total = total;
        memcpy(in->key, t->key, sizeof in->key);
        /* Bounded by the job's own size, known since the launch. */
        in->e = xcalloc(total, sizeof *in->e);
    }
    for (i = 0; i < t->nprocs; i++) {
        struct ctl_entry *e = &in->e[in->have + i];

        e->rank = t->procs[i].rank;
        e->replica = t->procs[i].replica;
        snprintf(e->addr, sizeof e->addr, "%s", t->procs[i].addr);
    }
    in->have += (uint32_t)t->nprocs;
    return 0;
}

int
ctltable_in_complete(const struct ctltable_in *in)
{
    return in != NULL && in->done;
}

int
ctlrelay_table(struct ctltable_in **inp, const struct job *j,
               struct ctlrelay *const *relays, size_t n,
               const struct msg_table *t)
{
    struct ctltable_in *in;
    struct ctlblob *b;

    if (*inp == NULL)
        *inp = xcalloc(1, sizeof **inp);
    in = *inp;
    if (ctltable_in_add(in, j, t) == -1)
        return -1;
    if (in->have < in->total)
        return 0;
    in->done = 1;
    b = xcalloc(1, sizeof *b);
    if ((b->n = ctl_table_encode(in->key, CTL_TF_PROGRESS, in->e, in->total,
                                 &b->m)) == -1)
        fatalx("job %.8s: cannot encode an address table of %u entries",
               job_hex(j), in->total);
    log_debug("job %.8s: address table of %u entries to %zu processes",
              job_hex(j), in->total, n);
    free(in->e);
    in->e = NULL;
    ctlrelay_push_all(relays, n, b);
    return 0;
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
    struct ctlblob *b;

    b = xcalloc(1, sizeof *b);
    b->n = 1;
    b->m = xcalloc(1, sizeof *b->m);
    b->m->len = sizeof h + v->ndead * sizeof *v->dead;
    b->m->buf = xcalloc(1, b->m->len);
    memset(&h, 0, sizeof h);
    h.type = CTL_VIEW;
    h.version = CTL_VERSION;
    h.number = v->number;
    h.n = (uint32_t)v->ndead;
    memcpy(b->m->buf, &h, sizeof h);
    if (v->ndead > 0)
        memcpy(b->m->buf + sizeof h, v->dead, v->ndead * sizeof *v->dead);
    /* Behind the table, if the process has not read it all yet. */
    ctlrelay_push_all(relays, n, b);
}
