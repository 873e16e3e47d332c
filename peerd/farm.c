/*
 * Farms of tasks (p2prun --each) on this peer, and fair share between
 * their users.  A farm's coordinator opens it, stages its files, and then
 * sends tasks, each a one-process launch with its own attempt id; they
 * wait here in a small queue per farm, so that a slot that frees is
 * filled at once, without a round trip to p2prun.  When a slot is free and
 * guests are welcome, the next task comes from the user (verified key)
 * whose next task would leave it with the least usage of this peer:
 * slot-seconds of its tasks that finished, decaying with a half-life, plus
 * those running now, plus the expected length of that next task (seed
 * 002's goal: a user of short tasks is not held behind one of long ones).  Usage is kept in
 * STATE_DIR/fairshare so that a restart does not forget it.
 *
 * A started task is an ordinary job (job.c): same box, output, exit report
 * and killing; it takes a slot through a hold like any job's.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

#define FARM_QUEUE_MAX 256      /* tasks queued per farm */
#define FARM_PER_CONN_MAX 8     /* farms open on one connection */
#define FARM_USERS_MAX 4096     /* users remembered in the usage table */
#define FARM_SAVE_EVERY_MS 1000 /* usage written at most this often */
/* Worker tasks' input queued per farm, and being assembled from pieces:
 * p2prun keeps a peer's queue at its slots plus two, so this is room for
 * a dozen of the longest inputs. */
#define FARM_QUEUED_INPUT_MAX (64u * 1024 * 1024)
/* A worker task's input longer than this goes to an unlinked file in the
 * state directory as its pieces arrive, and from there to the worker's
 * stdin as its pipe takes it: peerd never holds it whole. */
#define FARM_SPOOL_OVER (256u * 1024)
/* Spooled input per farm, queued or being received. */
#define FARM_SPOOLED_INPUT_MAX (8ull * 1024 * 1024 * 1024)
/* A refusal that says "not here, not now": the task goes elsewhere. */
#define FARM_NOT_NOW WIRE_NOT_NOW

struct task {
    struct msg_launch l; /* owned copy */
    int input_fd;        /* a long input spooled (l.input unused), or -1 */
    size_t mem_input;    /* its input's bytes held in memory */
    struct task *next;
};

struct running {
    uint8_t job[WIRE_JOB_ID_LEN];
    uint64_t started_ms;
    struct running *next;
};

struct farm {
    uint8_t id[WIRE_JOB_ID_LEN];
    struct svc_conn *owner;
    char user[65]; /* usage key: the user's verified key, hex */
    uint32_t lease_ms;
    struct task *head, **tail;
    size_t nqueued;
    size_t queued_input; /* bytes of the queued tasks' inputs */
    /* A worker task's input arriving in pieces (input_more): one task at
     * a time, as p2prun sends them.  pend_bad: that task was refused; its
     * remaining pieces are dropped. */
    uint8_t pend_job[WIRE_JOB_ID_LEN];
    uint8_t *pend;
    size_t pend_len;
    int pend_bad;
    int pend_fd; /* the pieces so far spooled (a long input), or -1 */
    uint64_t spooled_input; /* bytes of spooled inputs, queued or not */
    struct running *running;
    uint64_t last_pick; /* for ties: the longest waiting goes first */
    double done_secs;   /* its tasks that ended here: total time, */
    unsigned ndone;     /* and how many, for the expected duration */
    struct box *box;    /* its tasks' uid and /tmp here, made at the first */
    char cmd[WIRE_MAX_LABEL + 1]; /* its first task's program */
    time_t opened;      /* wall clock, for the dashboard */
    struct farm *next;
};

struct usage {
    char user[65];
    double secs;     /* decayed to stamp */
    time_t stamp;
};

struct farms {
    struct farm *list;
    struct usage *usage;
    size_t nusage;
    int dirty;
    uint64_t saved_ms, picks;
    char *path;
};

static void launch_free(struct msg_launch *l)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_LAUNCH;
    m.u.launch = *l;
    codec_msg_free(&m);
}

/* Forget a queued task (its spooled input too, unless a worker took it). */
static void
task_free(struct farm *f, struct task *t)
{
    if (t->input_fd != -1) {
        close(t->input_fd);
        f->spooled_input -= t->l.input_len;
    }
    launch_free(&t->l);
    free(t);
}

/* A deep copy of a decoded launch. */
static void
launch_dup(struct msg_launch *dst, const struct msg_launch *src)
{
    size_t i;

    *dst = *src;
    dst->procs = xcalloc(src->nprocs + 1, sizeof *dst->procs);
    if (src->nprocs > 0)
        memcpy(dst->procs, src->procs, src->nprocs * sizeof *src->procs);
    dst->argv = xcalloc(src->nargv + 1, sizeof *dst->argv);
    for (i = 0; i < src->nargv; i++)
        dst->argv[i] = xstrdup(src->argv[i]);
    dst->env = xcalloc(src->nenv + 1, sizeof *dst->env);
    for (i = 0; i < src->nenv; i++)
        dst->env[i] = xstrdup(src->env[i]);
    dst->files = xcalloc(src->nfiles + 1, sizeof *dst->files);
    if (src->nfiles > 0)
        memcpy(dst->files, src->files, src->nfiles * sizeof *src->files);
    dst->input = NULL;
    if (src->input_len > 0) {
        dst->input = xmalloc(src->input_len);
        memcpy(dst->input, src->input, src->input_len);
    }
}

/* --- usage -------------------------------------------------------------- */

static double
farm_decay(const struct peerd *pd, double secs, time_t from, time_t to)
{
    double half = pd->cfg->fairshare_halflife_s;

    if (to <= from || half <= 0)
        return secs;
    return secs * pow(0.5, (double)(to - from) / half);
}

static struct usage *
farm_usage(struct peerd *pd, const char *user, int create)
{
    struct farms *fs = pd->farms;
    size_t i, oldest = 0;

    for (i = 0; i < fs->nusage; i++)
        if (strcmp(fs->usage[i].user, user) == 0)
            return &fs->usage[i];
    if (!create)
        return NULL;
    if (fs->nusage == FARM_USERS_MAX) {
        /* Forget whoever was charged longest ago. */
        for (i = 1; i < fs->nusage; i++)
            if (fs->usage[i].stamp < fs->usage[oldest].stamp)
                oldest = i;
        i = oldest;
    } else {
        fs->usage = xreallocarray(fs->usage, fs->nusage + 1,
                                  sizeof *fs->usage);
        i = fs->nusage++;
    }
    memset(&fs->usage[i], 0, sizeof fs->usage[i]);
    snprintf(fs->usage[i].user, sizeof fs->usage[i].user, "%s", user);
    fs->usage[i].stamp = time(NULL);
    return &fs->usage[i];
}

static void
farm_charge(struct peerd *pd, const char *user, double secs)
{
    struct usage *u = farm_usage(pd, user, 1);
    time_t now = time(NULL);

    u->secs = farm_decay(pd, u->secs, u->stamp, now) + secs;
    u->stamp = now;
    pd->farms->dirty = 1;
}

/* The user's usage now: finished tasks decayed, running ones counted. */
static double
farm_user_usage(struct peerd *pd, const char *user, uint64_t now_ms)
{
    struct usage *u = farm_usage(pd, user, 0);
    double secs = u ? farm_decay(pd, u->secs, u->stamp, time(NULL)) : 0;
    struct farm *f;
    struct running *r;

    for (f = pd->farms->list; f != NULL; f = f->next)
        if (strcmp(f->user, user) == 0)
            for (r = f->running; r != NULL; r = r->next)
                secs += (double)(now_ms - r->started_ms) / 1000;
    return secs;
}

static void
farm_load_usage(struct peerd *pd)
{
    struct farms *fs = pd->farms;
    char user[65];
    double secs;
    long long stamp;
    FILE *f;

    if ((f = fopen(fs->path, "re")) == NULL)
        return;
    while (fscanf(f, "%64s %lf %lld", user, &secs, &stamp) == 3) {
        struct usage *u;

        if (strspn(user, "0123456789abcdef") != 64 || !(secs >= 0) ||
            secs > 1e12)
            continue; /* ours, but not to be trusted blindly */
        u = farm_usage(pd, user, 1);
        u->secs = secs;
        u->stamp = (time_t)stamp;
    }
    fclose(f);
}

static void
farm_save_usage(struct peerd *pd)
{
    struct farms *fs = pd->farms;
    char *tmp;
    size_t i;
    FILE *f;

    xasprintf(&tmp, "%s.new", fs->path);
    if ((f = fopen(tmp, "we")) == NULL) {
        log_warn("fair share: %s", tmp);
        free(tmp);
        return;
    }
    for (i = 0; i < fs->nusage; i++)
        fprintf(f, "%s %.3f %lld\n", fs->usage[i].user, fs->usage[i].secs,
                (long long)fs->usage[i].stamp);
    if (fclose(f) != 0 || rename(tmp, fs->path) == -1)
        log_warn("fair share: %s", fs->path);
    free(tmp);
    fs->dirty = 0;
}

/* --- farms -------------------------------------------------------------- */

void
farm_init(struct peerd *pd)
{
    pd->farms = xcalloc(1, sizeof *pd->farms);
    xasprintf(&pd->farms->path, "%s/fairshare", pd->state_dir);
    farm_load_usage(pd);
}

static void
farm_free(struct peerd *pd, struct farm *f)
{
    struct task *t;
    struct running *r;

    /* Running tasks hold their own reference to the box. */
    box_unref(pd, f->box);
    free(f->pend);
    if (f->pend_fd != -1)
        close(f->pend_fd);
    while ((t = f->head) != NULL) {
        f->head = t->next;
        task_free(f, t);
    }
    while ((r = f->running) != NULL) {
        f->running = r->next;
        free(r);
    }
    free(f);
}

void
farm_fini(struct peerd *pd)
{
    struct farm *f;

    if (pd->farms == NULL)
        return;
    if (pd->farms->dirty)
        farm_save_usage(pd);
    while ((f = pd->farms->list) != NULL) {
        pd->farms->list = f->next;
        farm_free(pd, f);
    }
    free(pd->farms->usage);
    free(pd->farms->path);
    free(pd->farms);
    pd->farms = NULL;
}

static struct farm *
farm_find(struct peerd *pd, struct svc_conn *c, const uint8_t id[16])
{
    struct farm *f;

    for (f = pd->farms->list; f != NULL; f = f->next)
        if (f->owner == c && memcmp(f->id, id, WIRE_JOB_ID_LEN) == 0)
            return f;
    return NULL;
}

int
farm_open(struct peerd *pd, struct svc_conn *c, const struct msg_farm *m,
          const char *user_hex, char *why, size_t whylen)
{
    const struct farm *g;
    struct farm *f;
    int n = 0;

    if (farm_find(pd, c, m->farm) != NULL)
        return 0;
    if (!owner_welcome(pd, why, whylen))
        return -1;
    /* Bounded whoever asks: a farm holds a queue and a box. */
    for (g = pd->farms->list; g != NULL; g = g->next)
        n += g->owner == c;
    if (n >= FARM_PER_CONN_MAX) {
        snprintf(why, whylen, "at most %d farms per connection",
                 FARM_PER_CONN_MAX);
        return -1;
    }
    f = xcalloc(1, sizeof *f);
    memcpy(f->id, m->farm, WIRE_JOB_ID_LEN);
    f->owner = c;
    snprintf(f->user, sizeof f->user, "%s", user_hex);
    f->opened = time(NULL);
    f->lease_ms =
        m->lease_ms > 0 && m->lease_ms <= (uint32_t)pd->cfg->max_lease_ms
            ? m->lease_ms
            : (uint32_t)pd->cfg->max_lease_ms;
    f->tail = &f->head;
    f->pend_fd = -1;
    f->next = pd->farms->list;
    pd->farms->list = f;
    log_info("farm %02x%02x%02x%02x opened by %s", m->farm[0], m->farm[1],
             m->farm[2], m->farm[3], svc_conn_name(c));
    return 0;
}

int
farm_owned_by(const struct peerd *pd, const struct svc_conn *c)
{
    const struct farm *f;

    for (f = pd->farms->list; f != NULL; f = f->next)
        if (f->owner == c)
            return 1;
    return 0;
}

/* Forget a task's partial input; bad: drop its later pieces too. */
static void
farm_pend_reset(struct farm *f, const uint8_t job[WIRE_JOB_ID_LEN], int bad)
{
    free(f->pend);
    f->pend = NULL;
    if (f->pend_fd != -1) {
        close(f->pend_fd);
        f->spooled_input -= f->pend_len;
    }
    f->pend_fd = -1;
    f->pend_len = 0;
    f->pend_bad = bad;
    memcpy(f->pend_job, job, WIRE_JOB_ID_LEN);
}

/* An unlinked file in the state directory for a long input; -1 (logged)
 * if none can be made. */
static int
farm_spool_open(const struct peerd *pd)
{
    int fd;

    if ((fd = fdio_tmpfile(pd->state_dir, "input.")) == -1)
        log_warn("spooling a task input in %s", pd->state_dir);
    return fd;
}

/* An input completed by farm_input_piece that will not be queued. */
static void
farm_input_drop(struct farm *f, uint8_t *input, int fd, size_t len)
{
    free(input);
    if (fd != -1) {
        close(fd);
        f->spooled_input -= len;
    }
}

/* A piece of a worker task's input (l->input_more set, or the last piece
 * of a task whose earlier pieces are held): kept until the last, in
 * memory or, past FARM_SPOOL_OVER, in a spool file.  Returns 1 when l
 * completes an input, now in *input or, spooled, in *fd (the caller's
 * either way), of *len bytes; 0 when the piece is kept or dropped, -1
 * with why when the task is refused. */
static int
farm_input_piece(const struct peerd *pd, struct farm *f,
                 const struct msg_launch *l, uint8_t **input, int *fd,
                 size_t *len, char *why, size_t whylen)
{
    int ours = f->pend_len > 0 || f->pend_bad
                   ? memcmp(f->pend_job, l->job, WIRE_JOB_ID_LEN) == 0
                   : 0;
    size_t after = f->pend_len + l->input_len;

    if (ours && f->pend_bad) {
        if (!l->input_more)
            farm_pend_reset(f, l->job, 0);
        return 0; /* refused already */
    }
    if (!ours)
        farm_pend_reset(f, l->job, 0); /* a new task (an old one gave up) */
    if (after > WIRE_MAX_TASK_INPUT ||
        (after <= FARM_SPOOL_OVER
             ? f->queued_input + after > FARM_QUEUED_INPUT_MAX
             : f->spooled_input + l->input_len +
                       (f->pend_fd == -1 ? f->pend_len : 0) >
                   FARM_SPOOLED_INPUT_MAX)) {
        snprintf(why, whylen,
                 "a task input over %d bytes, or the farm's queue here is "
                 "full (%u bytes of input in memory, %llu spooled)",
                 WIRE_MAX_TASK_INPUT, FARM_QUEUED_INPUT_MAX,
                 (unsigned long long)FARM_SPOOLED_INPUT_MAX);
        farm_pend_reset(f, l->job, l->input_more);
        return -1;
    }
    if (f->pend_fd == -1 && after > FARM_SPOOL_OVER) {
        /* Long: what came so far, and the rest, to a file. */
        if ((f->pend_fd = farm_spool_open(pd)) == -1)
            goto spool_failed;
        /* Counted from now: farm_pend_reset uncounts it. */
        f->spooled_input += f->pend_len;
        if (fdio_write_all(f->pend_fd, f->pend, f->pend_len) == -1)
            goto spool_failed;
        free(f->pend);
        f->pend = NULL;
    }
    if (f->pend_fd != -1) {
        if (fdio_write_all(f->pend_fd, l->input, l->input_len) == -1)
            goto spool_failed;
        f->spooled_input += l->input_len;
    } else {
        f->pend = xreallocarray(f->pend, after + 1, 1);
        if (l->input_len > 0)
            memcpy(f->pend + f->pend_len, l->input, l->input_len);
    }
    f->pend_len = after;
    if (l->input_more)
        return 0;
    *input = f->pend;
    *fd = f->pend_fd;
    *len = f->pend_len;
    /* The completed input is the caller's; a spooled one stays counted
     * in spooled_input until it is queued and dropped (task_free) or
     * dropped at once (farm_input_drop). */
    f->pend = NULL;
    f->pend_fd = -1;
    farm_pend_reset(f, l->job, 0);
    return 1;

spool_failed:
    snprintf(why, whylen, "a task input could not be spooled here: %s",
             strerror(errno));
    farm_pend_reset(f, l->job, l->input_more);
    return -1;
}

int
farm_task(struct peerd *pd, struct svc_conn *c, const struct msg_launch *l,
          char *why, size_t whylen)
{
    struct farm *f = farm_find(pd, c, l->farm);
    struct task *t;
    uint8_t *input = NULL;
    size_t input_len = 0, mem_input;
    int rc, input_fd = -1, assembled = 0;

    if (f == NULL) {
        snprintf(why, whylen, "no such farm here");
        return -1;
    }
    if (l->worker && (l->input_more || f->pend_len > 0 || f->pend_bad)) {
        if ((rc = farm_input_piece(pd, f, l, &input, &input_fd, &input_len,
                                   why, whylen)) != 1)
            return rc;
        assembled = 1;
    }
    /* Bytes of its input that the queue would hold in memory. */
    mem_input = !assembled ? l->input_len : input_fd == -1 ? input_len : 0;
    /* Not now: the coordinator sends it elsewhere. */
    if (!owner_welcome(pd, why + strlen(FARM_NOT_NOW),
                       whylen - strlen(FARM_NOT_NOW))) {
        memcpy(why, FARM_NOT_NOW, strlen(FARM_NOT_NOW));
        farm_input_drop(f, input, input_fd, input_len);
        return -1;
    }
    if (f->nqueued >= FARM_QUEUE_MAX ||
        f->queued_input + mem_input > FARM_QUEUED_INPUT_MAX) {
        snprintf(why, whylen, "the farm's queue here is full (%d tasks)",
                 FARM_QUEUE_MAX);
        farm_input_drop(f, input, input_fd, input_len);
        return -1;
    }
    if (job_find(pd, l->job) != NULL || reserve_find(pd, l->job) != NULL) {
        snprintf(why, whylen, "job id already in use");
        farm_input_drop(f, input, input_fd, input_len);
        return -1;
    }
    if (f->cmd[0] == '\0')
        snprintf(f->cmd, sizeof f->cmd, "%s",
                 strrchr(l->argv[0], '/') != NULL ? strrchr(l->argv[0], '/') + 1
                                                  : l->argv[0]);
    t = xcalloc(1, sizeof *t);
    launch_dup(&t->l, l);
    t->input_fd = input_fd;
    if (assembled) {
        /* The input assembled from its pieces (or in a spool file). */
        free(t->l.input);
        t->l.input = input;
        t->l.input_len = input_len;
    }
    t->l.input_more = 0;
    t->mem_input = mem_input;
    f->queued_input += mem_input;
    if (t->l.lease_ms == 0)
        t->l.lease_ms = f->lease_ms;
    *f->tail = t;
    f->tail = &t->next;
    f->nqueued++;
    farm_kick(pd);
    return 0;
}

int
farm_cancel(struct peerd *pd, struct svc_conn *c, const uint8_t job[16])
{
    struct farm *f;
    struct task **tp, *t;

    for (f = pd->farms->list; f != NULL; f = f->next) {
        if (f->owner != c)
            continue;
        for (tp = &f->head; *tp != NULL; tp = &(*tp)->next)
            if (memcmp((*tp)->l.job, job, WIRE_JOB_ID_LEN) == 0) {
                t = *tp;
                *tp = t->next;
                if (f->tail == &t->next)
                    f->tail = tp;
                f->nqueued--;
                f->queued_input -= t->mem_input;
                task_free(f, t);
                return 1;
            }
    }
    return worker_cancel(pd, c, job);
}

void
farm_refuse_all(struct peerd *pd, const char *why)
{
    struct farm *f;
    struct task *t;
    struct msg m;

    if (pd->farms == NULL)
        return;
    for (f = pd->farms->list; f != NULL; f = f->next)
        while ((t = f->head) != NULL) {
            f->head = t->next;
            f->nqueued--;
            f->queued_input -= t->mem_input;
            memset(&m, 0, sizeof m);
            m.type = MSG_LAUNCH_REPLY;
            memcpy(m.u.reply.job, t->l.job, WIRE_JOB_ID_LEN);
            snprintf(m.u.reply.reason, sizeof m.u.reply.reason, "%s%s on %s",
                     FARM_NOT_NOW, why, pd->host_label);
            svc_conn_send(f->owner, &m);
            task_free(f, t);
        }
    for (f = pd->farms->list; f != NULL; f = f->next)
        f->tail = &f->head;
}

void
farm_drop_owner(struct peerd *pd, struct svc_conn *c)
{
    struct farm **fp, *f;

    if (pd->farms == NULL)
        return;
    worker_drop_owner(pd, c);
    for (fp = &pd->farms->list; (f = *fp) != NULL;) {
        if (f->owner != c) {
            fp = &f->next;
            continue;
        }
        *fp = f->next;
        farm_free(pd, f);
    }
}

/* Running attempts that have ended: charge their user. */
static void
farm_reap(struct peerd *pd, uint64_t now_ms)
{
    struct farm *f;
    struct running **rp, *r;

    for (f = pd->farms->list; f != NULL; f = f->next)
        for (rp = &f->running; (r = *rp) != NULL;) {
            if (job_find(pd, r->job) != NULL ||
                worker_has_task(pd, r->job)) {
                rp = &r->next;
                continue;
            }
            farm_charge(pd, f->user, (double)(now_ms - r->started_ms) / 1000);
            f->done_secs += (double)(now_ms - r->started_ms) / 1000;
            f->ndone++;
            *rp = r->next;
            free(r);
        }
}

/* Could f's next task start now: a free slot, or for a worker's task an
 * idle worker of the farm? */
static int
farm_can_start(struct peerd *pd, const struct farm *f)
{
    if (f->head == NULL)
        return 0;
    if (f->head->l.worker && worker_can_take(pd, f->owner, f->id))
        return 1;
    return reserve_free(pd) > 0;
}

/* The farm whose next task would leave its user with the least usage:
 * the user's usage so far plus what that task is expected to take (the
 * mean of the farm's tasks that ended here, 0 until one has), as a
 * weighted fair queue orders by finish tag.  Short tasks of a light user
 * go before a heavy user's long ones.  Whether it can start now is the
 * caller's question: another farm's idle worker must not take its turn. */
static struct farm *
farm_next(struct peerd *pd, uint64_t now_ms)
{
    struct farm *f, *best = NULL;
    double u, bu = 0;

    for (f = pd->farms->list; f != NULL; f = f->next) {
        if (f->head == NULL)
            continue;
        u = farm_user_usage(pd, f->user, now_ms) +
            (f->ndone > 0 ? f->done_secs / f->ndone : 0);
        if (best == NULL || u < bu ||
            (u == bu && f->last_pick < best->last_pick)) {
            best = f;
            bu = u;
        }
    }
    return best;
}

/* Start one task of f now; its coordinator hears of it either way. */
static void
farm_start(struct peerd *pd, struct farm *f, uint64_t now_ms)
{
    struct task *t = f->head;
    struct running *r;
    uint32_t free_now;
    char why[WIRE_MAX_TEXT + 1];
    struct msg m;

    f->head = t->next;
    if (f->head == NULL)
        f->tail = &f->head;
    f->nqueued--;
    f->queued_input -= t->mem_input;
    f->last_pick = ++pd->farms->picks;
    memset(&m, 0, sizeof m);
    if (f->box == NULL)
        f->box = box_new(pd, why, sizeof why);
    if (f->box != NULL && t->l.worker) {
        /* The worker says when it starts the task. */
        if (worker_give(pd, f->owner, f->box, &t->l, t->input_fd, why,
                        sizeof why) == 0) {
            /* The worker has the spool now. */
            if (t->input_fd != -1)
                f->spooled_input -= t->l.input_len;
            t->input_fd = -1;
            r = xcalloc(1, sizeof *r);
            memcpy(r->job, t->l.job, WIRE_JOB_ID_LEN);
            r->started_ms = now_ms;
            r->next = f->running;
            f->running = r;
            task_free(f, t);
            return;
        }
        m.type = MSG_LAUNCH_REPLY;
        memcpy(m.u.reply.job, t->l.job, WIRE_JOB_ID_LEN);
        snprintf(m.u.reply.reason, sizeof m.u.reply.reason, "%s", why);
    } else if (f->box == NULL ||
        reserve_take(pd, t->l.job, 1, t->l.lease_ms, f->owner, &free_now, why,
                     sizeof why) == -1 ||
        job_launch(pd, f->owner, &t->l, f->box, why, sizeof why) == -1) {
        reserve_release(pd, t->l.job);
        m.type = MSG_LAUNCH_REPLY;
        memcpy(m.u.reply.job, t->l.job, WIRE_JOB_ID_LEN);
        snprintf(m.u.reply.reason, sizeof m.u.reply.reason, "%s", why);
    } else {
        r = xcalloc(1, sizeof *r);
        memcpy(r->job, t->l.job, WIRE_JOB_ID_LEN);
        r->started_ms = now_ms;
        r->next = f->running;
        f->running = r;
        m.type = MSG_TASK_STARTED;
        memcpy(m.u.job, t->l.job, WIRE_JOB_ID_LEN);
    }
    svc_conn_send(f->owner, &m);
    task_free(f, t);
}

void
farm_kick(struct peerd *pd)
{
    uint64_t now = monotime_ms();
    char why[128];
    struct farm *f;

    if (pd->farms == NULL || pd->farms->list == NULL)
        return;
    farm_reap(pd, now);
    while (owner_welcome(pd, why, sizeof why) &&
           (f = farm_next(pd, now)) != NULL) {
        if (!farm_can_start(pd, f)) {
            /* Its turn, but no slot: an idle worker of another farm
             * gives its slot back (it comes when the worker has
             * exited), rather than serve that farm out of turn. */
            if (reserve_free(pd) == 0)
                (void)worker_reclaim(pd, f->id);
            break;
        }
        farm_start(pd, f, now);
    }
}

void
farm_cron(struct peerd *pd, uint64_t now_ms)
{
    if (pd->farms == NULL)
        return;
    farm_kick(pd);
    worker_cron(pd, now_ms);
    if (pd->farms->dirty && now_ms - pd->farms->saved_ms >= FARM_SAVE_EVERY_MS) {
        farm_save_usage(pd);
        pd->farms->saved_ms = now_ms;
    }
}

size_t
farm_report(const struct peerd *pd, struct job_info *out, size_t max,
            uint32_t *more)
{
    const struct farm *f;
    const struct running *r;
    size_t n = 0;

    if (pd->farms == NULL)
        return 0;
    for (f = pd->farms->list; f != NULL; f = f->next) {
        if (n == max) {
            (*more)++;
            continue;
        }
        memset(&out[n], 0, sizeof out[n]);
        memcpy(out[n].job, f->id, WIRE_JOB_ID_LEN);
        snprintf(out[n].user, sizeof out[n].user, "%s",
                 f->owner != NULL ? svc_conn_name(f->owner) : f->user);
        snprintf(out[n].command, sizeof out[n].command, "%s", f->cmd);
        out[n].farm = 1;
        out[n].started = (uint64_t)f->opened;
        out[n].exit = -1;
        for (r = f->running; r != NULL; r = r->next)
            out[n].tasks_running++;
        out[n].tasks_queued = (uint32_t)f->nqueued;
        out[n].tasks_done = f->ndone;
        n++;
    }
    return n;
}

size_t
farm_describe(const struct peerd *pd, char *buf, size_t len)
{
    const struct farm *f;
    size_t n = 0;
    int w;

    if (pd->farms == NULL)
        return 0;
    for (f = pd->farms->list; f != NULL && n < len; f = f->next) {
        w = snprintf(buf + n, len - n, "farm of %.12s: %zu task%s queued\n",
                     f->user, f->nqueued, f->nqueued == 1 ? "" : "s");
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return n < len ? n : len - 1;
}
