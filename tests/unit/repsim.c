/*
 * The simulated replicated job of repsim.h: an in-memory struct rep_io
 * per process and one FIFO network between them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "decide.h"
#include "rep.h"
#include "repsim.h"

/* --- the network ------------------------------------------------------ */

static void
sim_enqueue(struct sim *s, int from, int to, const struct wire_hdr *h,
            const void *data, size_t len)
{
    struct sim_frame *f = calloc(1, sizeof *f);

    if (f == NULL)
        abort();
    f->from = from;
    f->to = to;
    f->h = *h;
    f->h.len = len; /* as conn_send does */
    if (len > 0) {
        if ((f->data = malloc(len)) == NULL)
            abort();
        memcpy(f->data, data, len);
    }
    *s->tail = f;
    s->tail = &f->next;
    s->nframes++;
}

static void
frame_free(struct sim_frame *f)
{
    free(f->data);
    free(f);
}

/* Hand f to its process as the transport would: DECIDE frames to
 * decide.c, the rest to rep.c. */
static void
sim_dispatch(struct sim *s, struct sim_frame *f)
{
    struct rep *old;

    if (s->p[f->to].dead || s->p[f->from].dead)
        return; /* a killed process's connections are closed */
    old = rep_instance_select(s->p[f->to].rep);
    if (f->h.type == FR_DECIDE || f->h.type == FR_DECIDE_ACK)
        dec_incoming(&s->conn[f->from], &f->h, f->data);
    else
        rep_incoming(&s->conn[f->from], &f->h, f->data);
    rep_instance_select(old);
}

/* Unlink and return the first queued frame matching keep (NULL: any). */
static struct sim_frame *
sim_take(struct sim *s, int (*keep)(const struct sim_frame *, void *),
         void *arg)
{
    struct sim_frame **fp, *f;

    for (fp = &s->head; (f = *fp) != NULL; fp = &f->next)
        if (keep == NULL || keep(f, arg)) {
            *fp = f->next;
            if (s->tail == &f->next)
                s->tail = fp;
            s->nframes--;
            f->next = NULL;
            return f;
        }
    return NULL;
}

/* Deliver the queued frames that keep admits (NULL: any), at most max
 * (-1: no limit); frames sent while delivering go to the end and are
 * looked at too.  A protocol that answers every frame with another
 * would never stop: 100000 frames is plenty for any case here. */
static int
sim_deliver(struct sim *s, int (*keep)(const struct sim_frame *, void *),
            void *arg, int max)
{
    struct sim_frame *f;
    int n = 0;

    while ((max < 0 || n < max) && n < 100000 &&
           (f = sim_take(s, keep, arg)) != NULL) {
        sim_dispatch(s, f);
        frame_free(f);
        n++;
    }
    return n;
}

int
sim_run_if(struct sim *s, int (*keep)(const struct sim_frame *, void *),
           void *arg)
{
    return sim_deliver(s, keep, arg, -1);
}

int
sim_run(struct sim *s, int max)
{
    return sim_deliver(s, NULL, NULL, max);
}

int
sim_drop_if(struct sim *s, int (*match)(const struct sim_frame *, void *),
            void *arg)
{
    struct sim_frame *f;
    int n = 0;

    while ((f = sim_take(s, match, arg)) != NULL) {
        frame_free(f);
        n++;
    }
    return n;
}

int
sim_queued(const struct sim *s, uint8_t type, int from, int to)
{
    const struct sim_frame *f;
    int n = 0;

    for (f = s->head; f != NULL; f = f->next)
        n += (type == 0 || f->h.type == type) &&
             (from == -1 || f->from == from) && (to == -1 || f->to == to);
    return n;
}

void
sim_inject(struct sim *s, int from, int to, const struct wire_hdr *h,
           const void *data)
{
    struct sim_frame f;

    memset(&f, 0, sizeof f);
    f.from = from;
    f.to = to;
    f.h = *h;
    f.data = (uint8_t *)(uintptr_t)data;
    sim_dispatch(s, &f);
}

/* --- the I/O of one process ------------------------------------------- */

static void
io_send(void *ctx, int proc, struct wire_hdr *h, const void *data, size_t len)
{
    struct sim_proc *p = ctx;

    if (proc < 0 || proc >= p->sim->size * p->sim->nrep || p->dead ||
        p->sim->p[proc].dead)
        return; /* no connection */
    if (h->type == FR_TAKEOVER) {
        p->takeovers_sent++;
        p->takeover_from = h->total;
    }
    sim_enqueue(p->sim, p->proc, proc, h, data, len);
}

static int
io_proc_of(void *ctx, const struct conn *c)
{
    (void)ctx;
    return c->proc;
}

static void
io_drop(void *ctx, int proc)
{
    (void)ctx;
    (void)proc;
}

static long
io_ctl_recv(void *ctx, void *buf, size_t cap)
{
    struct sim_proc *p = ctx;
    size_t n;

    if (p->ctl.nin == 0)
        return -1;
    n = p->ctl.inlen[0] < cap ? p->ctl.inlen[0] : cap;
    memcpy(buf, p->ctl.in[0], n);
    p->ctl.nin--;
    memmove(p->ctl.in[0], p->ctl.in[1],
            sizeof p->ctl.in[0] * (size_t)p->ctl.nin);
    memmove(&p->ctl.inlen[0], &p->ctl.inlen[1],
            sizeof p->ctl.inlen[0] * (size_t)p->ctl.nin);
    return (long)n;
}

static int
io_ctl_send(void *ctx, const void *msg, size_t len)
{
    struct sim_proc *p = ctx;
    const uint8_t *b = msg;
    struct ctl_suspect m;

    if (len == sizeof m && b[0] == CTL_SUSPECT && p->ctl.nsuspects < SIM_REC) {
        memcpy(&m, msg, sizeof m);
        p->ctl.suspects[p->ctl.nsuspects++] = (int)m.proc;
    }
    if (len == sizeof(struct ctl_progress) && b[0] == CTL_PROGRESS) {
        struct ctl_progress pr;

        memcpy(&pr, msg, sizeof pr);
        p->ctl.nprogress++;
        p->ctl.progress = pr.count;
    }
    return 0;
}

static uint64_t
io_now_ms(void *ctx)
{
    return ((struct sim_proc *)ctx)->sim->now;
}

static void
io_deliver(void *ctx, struct conn *c, const struct wire_hdr *h,
           const void *payload)
{
    struct sim_proc *p = ctx;
    struct sim_msg *m;

    if (p->ngot == SIM_REC)
        return;
    m = &p->got[p->ngot++];
    memset(m, 0, sizeof *m);
    m->from = c->proc;
    m->src = c->proc / p->sim->nrep;
    m->type = h->type;
    m->tag = h->tag;
    m->lseq = h->lseq;
    if (payload != NULL && h->type == FR_EAGER) {
        m->len = h->len < sizeof m->data ? h->len : sizeof m->data;
        memcpy(m->data, payload, m->len);
    }
}

static int
io_resume(void *ctx, int src, uint64_t lseq, struct conn *c, uint32_t sid)
{
    struct sim_proc *p = ctx;

    (void)c;
    (void)sid;
    if (p->nresumed < SIM_REC) {
        p->resumed[p->nresumed].src = src;
        p->resumed[p->nresumed++].lseq = lseq;
    }
    return 1;
}

static uint64_t
io_orphan(void *ctx, int src)
{
    (void)src;
    return ((struct sim_proc *)ctx)->orphan;
}

static void
io_decided(void *ctx, uint32_t dn, int src)
{
    struct sim_proc *p = ctx;

    if (p->ndecided < SIM_REC) {
        p->decided[p->ndecided].dn = dn;
        p->decided[p->ndecided++].src = src;
    }
}

static void
io_rematch(void *ctx)
{
    ((struct sim_proc *)ctx)->rematched++;
}

static void
io_complete(void *ctx, struct mpii_req *r, int err)
{
    struct sim_proc *p = ctx;

    r->active = 0;
    r->err = err;
    if (p->ncompleted < SIM_REC)
        p->completed[p->ncompleted++] = r;
}

/* The progress engine of a blocked process: the network moves (every
 * process's frames, not only ours) and our views are read. */
static int
io_wait_until(void *ctx, int (*cond)(void *), void *arg)
{
    struct sim_proc *p = ctx;
    struct sim_frame *f;

    for (;;) {
        rep_instance_select(p->rep);
        rep_poll_ctl();
        if (cond(arg))
            return MPI_SUCCESS;
        if ((f = sim_take(p->sim, NULL, NULL)) == NULL)
            return MPI_ERR_OTHER; /* it would wait for ever */
        sim_dispatch(p->sim, f);
        frame_free(f);
    }
}

static void
io_log(void *ctx, const char *line)
{
    struct sim_proc *p = ctx;

    snprintf(p->log[p->nlog % 8], sizeof p->log[0], "%s", line);
    p->nlog++;
}

/* --- the job ---------------------------------------------------------- */

struct rep *
sim_use(struct sim *s, int proc)
{
    return rep_instance_select(s->p[proc].rep);
}

int
sim_init(struct sim *s, int size, int nrep)
{
    uint8_t dead[SIM_PROCS] = {0};
    int i, n = size * nrep;

    memset(s, 0, sizeof *s);
    if (n > SIM_PROCS)
        return -1;
    s->size = size;
    s->nrep = nrep;
    s->tail = &s->head;
    s->now = 1000;
    for (i = 0; i < n; i++) {
        struct sim_proc *p = &s->p[i];

        s->conn[i].proc = i;
        p->sim = s;
        p->proc = i;
        p->rank = i / nrep;
        p->replica = i % nrep;
        if ((p->rep = rep_instance_new()) == NULL)
            return -1;
        p->io = (struct rep_io){
            .ctx = p,
            .send = io_send,
            .proc_of = io_proc_of,
            .drop = io_drop,
            .ctl_recv = io_ctl_recv,
            .ctl_send = io_ctl_send,
            .now_ms = io_now_ms,
            .deliver = io_deliver,
            .resume = io_resume,
            .orphan = io_orphan,
            .decided = io_decided,
            .rematch = io_rematch,
            .complete = io_complete,
            .wait_until = io_wait_until,
            .log = io_log,
        };
        sim_use(s, i);
        if (rep_init(p->rank, p->replica, size, nrep, dead, &p->io) !=
            MPI_SUCCESS)
            return -1;
    }
    for (i = 0; i < n; i++) {
        sim_use(s, i);
        rep_start();
    }
    rep_instance_select(NULL);
    return 0;
}

void
sim_fini(struct sim *s)
{
    struct sim_frame *f;
    int i;

    while ((f = sim_take(s, NULL, NULL)) != NULL)
        frame_free(f);
    for (i = 0; i < s->size * s->nrep; i++) {
        if (s->p[i].rep == NULL)
            continue;
        sim_use(s, i);
        rep_fini();
        dec_fini();
        rep_instance_select(NULL);
        rep_instance_free(s->p[i].rep);
        s->p[i].rep = NULL;
    }
}

int
sim_send(struct sim *s, int proc, int dst, int32_t tag, const void *data,
         size_t len, struct mpii_req *r)
{
    struct wire_hdr h;
    struct rep *old;
    int rc;

    if (s->p[proc].dead)
        return MPI_SUCCESS;
    memset(&h, 0, sizeof h);
    h.type = r != NULL ? FR_RTS : FR_EAGER;
    h.src = s->p[proc].rank;
    h.dst = dst;
    h.tag = tag;
    if (r != NULL)
        h.total = len;
    old = sim_use(s, proc);
    rc = rep_send(dst, &h, r != NULL ? NULL : data, r != NULL ? 0 : len, r);
    rep_instance_select(old);
    return rc;
}

void
sim_send_all(struct sim *s, int src, int dst, int32_t tag, const void *data,
             size_t len)
{
    int y;

    for (y = 0; y < s->nrep; y++)
        (void)sim_send(s, src * s->nrep + y, dst, tag, data, len, NULL);
}

static void
ctl_queue(struct sim *s, int proc, const void *msg, size_t len)
{
    struct sim_proc *p = &s->p[proc];

    if (p->ctl.nin < 4 && len <= sizeof p->ctl.in[0]) {
        memcpy(p->ctl.in[p->ctl.nin], msg, len);
        p->ctl.inlen[p->ctl.nin++] = len;
    }
}

void
sim_ctl(struct sim *s, int proc, const void *msg, size_t len)
{
    struct rep *old;

    ctl_queue(s, proc, msg, len);
    old = sim_use(s, proc);
    rep_poll_ctl();
    rep_instance_select(old);
}

static int
from_or_to(const struct sim_frame *f, void *arg)
{
    int proc = *(int *)arg;

    return f->from == proc || f->to == proc;
}

/* The coordinator's view: every dead process so far, numbered; queued
 * on every live process's control socket, and read there if poll. */
static void
view_send(struct sim *s, int poll)
{
    uint8_t buf[sizeof(struct ctl_view_head) + SIM_PROCS * sizeof(uint32_t)];
    struct ctl_view_head vh;
    uint32_t v;
    int i;

    memset(&vh, 0, sizeof vh);
    vh.type = CTL_VIEW;
    vh.version = CTL_VERSION;
    vh.number = ++s->view;
    for (i = 0; i < s->size * s->nrep; i++)
        if (s->dead[i]) {
            v = (uint32_t)i;
            memcpy(buf + sizeof vh + vh.n * sizeof v, &v, sizeof v);
            vh.n++;
        }
    memcpy(buf, &vh, sizeof vh);
    for (i = 0; i < s->size * s->nrep; i++)
        if (!s->p[i].dead) {
            ctl_queue(s, i, buf, sizeof vh + vh.n * sizeof(uint32_t));
            if (poll) {
                struct rep *old = sim_use(s, i);

                rep_poll_ctl();
                rep_instance_select(old);
            }
        }
}

void
sim_view(struct sim *s)
{
    view_send(s, 1);
}

void
sim_view_queue(struct sim *s)
{
    view_send(s, 0);
}

/* proc is gone, with what it had in flight; a view says so. */
static void
sim_kill_proc(struct sim *s, int proc, int poll)
{
    s->p[proc].dead = 1;
    s->dead[proc] = 1;
    (void)sim_drop_if(s, from_or_to, &proc);
    view_send(s, poll);
}

void
sim_kill_quiet(struct sim *s, int proc)
{
    sim_kill_proc(s, proc, 0);
}

void
sim_kill(struct sim *s, int proc)
{
    sim_kill_proc(s, proc, 1);
}

int
sim_accepted(const struct sim_proc *p, int src, int32_t tag0, const char **why)
{
    uint64_t want = 1;
    int i;

    for (i = 0; i < p->ngot; i++) {
        if (p->got[i].src != src)
            continue;
        if (p->got[i].lseq != want) {
            *why = "numbers out of order, missing or repeated";
            return -1;
        }
        if (p->got[i].type == FR_EAGER &&
            p->got[i].tag != tag0 + (int32_t)(want - 1)) {
            *why = "a tag out of program order";
            return -1;
        }
        want++;
    }
    *why = NULL;
    return (int)(want - 1);
}

int
sim_logged(const struct sim_proc *p, const char *needle)
{
    int i;

    for (i = 0; i < p->nlog && i < 8; i++)
        if (strstr(p->log[i], needle) != NULL)
            return 1;
    return 0;
}
