/*
 * Persistent workers of farms (p2prun --each --worker): a worker is a
 * farm's program started once per slot, as a one-process job of its own
 * (job.c: same box, cgroup, killing and slot accounting), that reads tasks
 * on its stdin and answers on its stdout in the framed worker protocol
 * (proto/taskframe.h, docs/tasks.md).  farm.c decides which farm's task
 * runs next (fair share); this file gives it to an idle worker of that
 * farm, or starts one when a slot is free.
 *
 * To the farm's coordinator a task on a worker looks like a task with a
 * process of its own: TASK_STARTED when the worker takes it, its stderr as
 * OUTPUT, and a PROC_EXIT whose out is the answer and whose code is the
 * task's status.  A worker that dies under a task, or writes anything but
 * a well-formed answer to the task it was given, is reported (worker_lost,
 * with an error naming the task and the worker) and replaced; p2prun then
 * runs the task again by the rules of --each (each.c).  Stderr written
 * while a task is being answered is that task's: the worker finishes its
 * stderr before writing the answer, and the pipe is drained before the
 * answer is reported.
 */
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "taskframe.h"
#include "xmalloc.h"

/* Largest answer accepted from a worker (sent on in pieces). */
#define WORKER_ANSWER_MAX (1024u * 1024 * 1024)
/* A worker without a task this long stops and frees its slot (a farm
 * whose caller pauses between maps pays a worker's start-up again). */
#define WORKER_IDLE_MS 10000
/* A worker's peak memory, given with each answer for the memory fit, is
 * read from its cgroup at most this often. */
#define WORKER_MEM_READ_MS 100
/* A spooled input goes to the worker's pipe this much at a time. */
#define WORKER_REFILL (64 * 1024)

enum wt_state {
    WT_WAITING, /* written to the worker, behind another task */
    WT_RUNNING, /* the worker's current task (TASK_STARTED sent) */
};

struct wtask {
    uint8_t id[WIRE_JOB_ID_LEN]; /* the attempt's id */
    uint64_t task;
    enum wt_state state;
    int cancelled; /* its coordinator no longer wants it */
    struct wtask *next;
};

struct worker {
    struct peerd *pd;
    struct svc_conn *owner;
    uint8_t farm[WIRE_JOB_ID_LEN];
    uint8_t id[WIRE_JOB_ID_LEN]; /* its job's id */
    unsigned num;                /* "worker 3 on ws1" */
    struct job *job;             /* NULL once it exited */
    int in_fd;
    struct evbuffer *in;  /* task frames not yet written */
    /* A long input spooled by the farm (farm.c): read back into in as the
     * pipe takes it, never whole in memory.  -1: none. */
    int src_fd;
    uint64_t src_off, src_left;
    struct event *ev_in;  /* the pipe has room again */
    struct taskframe_dec dec;
    struct wtask *head, **tail;
    unsigned ntasks;
    uint64_t idle_since;    /* when it last had nothing to do */
    uint64_t mem_peak, mem_read_ms; /* its peak memory, read then */
    int broken;             /* killed for a protocol error */
    int reclaimed;          /* stopped to free its slot */
    char why[WIRE_MAX_TEXT + 1]; /* that error */
    struct worker *next;
};

struct workers {
    struct worker *list;
    unsigned seq;
};

void
worker_init(struct peerd *pd)
{
    pd->workers = xcalloc(1, sizeof *pd->workers);
}

static void
worker_free(struct worker *w)
{
    struct wtask *t;

    while ((t = w->head) != NULL) {
        w->head = t->next;
        free(t);
    }
    if (w->ev_in != NULL)
        event_free(w->ev_in);
    if (w->in != NULL)
        evbuffer_free(w->in);
    if (w->in_fd != -1)
        close(w->in_fd);
    if (w->src_fd != -1)
        close(w->src_fd);
    taskframe_dec_free(&w->dec);
    free(w);
}

static void
worker_unlink(struct worker *w)
{
    struct worker **wp;

    for (wp = &w->pd->workers->list; *wp != NULL; wp = &(*wp)->next)
        if (*wp == w) {
            *wp = w->next;
            return;
        }
}

void
worker_fini(struct peerd *pd)
{
    struct worker *w;

    if (pd->workers == NULL)
        return;
    while ((w = pd->workers->list) != NULL) {
        pd->workers->list = w->next;
        if (w->job != NULL)
            job_forget_worker(w->job);
        worker_free(w);
    }
    free(pd->workers);
    pd->workers = NULL;
}

/* --- to the coordinator ------------------------------------------------- */

static void
worker_send_started(struct worker *w, struct wtask *t)
{
    struct msg m;

    t->state = WT_RUNNING;
    if (t->cancelled)
        return;
    memset(&m, 0, sizeof m);
    m.type = MSG_TASK_STARTED;
    memcpy(m.u.job, t->id, WIRE_JOB_ID_LEN);
    svc_conn_send(w->owner, &m);
}

/* Bytes as a task's output stream, in pieces the wire takes. */
static void
worker_send_output(struct worker *w, const struct wtask *t, int stream,
                   const uint8_t *p, size_t n)
{
    struct msg m;
    size_t k;

    while (n > 0) {
        k = n > WIRE_MAX_CHUNK ? WIRE_MAX_CHUNK : n;
        memset(&m, 0, sizeof m);
        m.type = MSG_OUTPUT;
        memcpy(m.u.data.job, t->id, WIRE_JOB_ID_LEN);
        m.u.data.stream = (uint32_t)stream;
        m.u.data.data = (uint8_t *)p;
        m.u.data.len = k;
        svc_conn_send(w->owner, &m);
        p += k;
        n -= k;
    }
}

/* The head task is over; the next one, if any, is now running. */
static void
worker_pop(struct worker *w)
{
    struct wtask *t = w->head;

    w->head = t->next;
    if (w->head == NULL)
        w->tail = &w->head;
    w->ntasks--;
    free(t);
    if (w->ntasks == 0)
        w->idle_since = monotime_ms();
    if (w->head != NULL)
        worker_send_started(w, w->head);
}

/* A quotable excerpt of bytes a worker should not have written. */
static void
worker_excerpt(char *out, size_t len, const uint8_t *p, size_t n)
{
    size_t i, k = 0;

    for (i = 0; i < n && k + 5 < len && i < 40; i++) {
        if (isprint(p[i]) && p[i] != '"' && p[i] != '\\')
            out[k++] = (char)p[i];
        else
            k += (size_t)snprintf(out + k, len - k, "\\x%02x", p[i]);
    }
    out[k] = '\0';
}

/* The worker broke the protocol: it is killed, and its tasks are
 * reported as lost when it has exited. */
static void
worker_break(struct worker *w, const char *what, const uint8_t *p, size_t n)
{
    char ex[64];

    if (w->broken)
        return;
    w->broken = 1;
    worker_excerpt(ex, sizeof ex, p, n);
    if (w->head != NULL)
        snprintf(w->why, sizeof w->why,
                 "worker %u on %.40s broke the protocol during task %llu: "
                 "%.80s (\"%s\")",
                 w->num, w->pd->host_label,
                 (unsigned long long)w->head->task, what, ex);
    else
        snprintf(w->why, sizeof w->why,
                 "worker %u on %.40s broke the protocol between tasks: "
                 "%.80s (\"%s\")",
                 w->num, w->pd->host_label, what, ex);
    log_warnx("%s", w->why);
    if (w->job != NULL)
        job_kill(w->job, "it broke the worker protocol");
}

/* Does an answer (or the first piece of one) fit the head task?  If
 * not, the worker is broken. */
static int
worker_answer_fits(struct worker *w, const struct taskframe *f)
{
    const struct wtask *t = w->head;
    char what[96];

    if (t == NULL || f->task != t->task) {
        snprintf(what, sizeof what, "an answer to task %llu, not to %llu",
                 (unsigned long long)f->task,
                 t ? (unsigned long long)t->task : 0ULL);
        worker_break(w, what, f->data, f->len);
        return 0;
    }
    if (f->status < 0 || f->status > 255) {
        snprintf(what, sizeof what, "status %d out of 0..255",
                 (int)f->status);
        worker_break(w, what, f->data, f->len);
        return 0;
    }
    /* What it said on stderr before the answer is this task's. */
    if (w->job != NULL)
        job_drain_stderr(w->job);
    return 1;
}

/* Bytes of the head task's answer, as its output: a failed task's answer
 * is its error message, a line of its stderr. */
static void
worker_answer_bytes(struct worker *w, int32_t status, const uint8_t *p,
                    size_t n)
{
    if (!w->head->cancelled)
        worker_send_output(w, w->head, status != 0 ? 2 : 1, p, n);
}

/* The head task's answer is complete: its end to the coordinator (with
 * its result when it is small and not sent already), the next task. */
static void
worker_answer_end(struct worker *w, int32_t status, const uint8_t *out,
                  size_t outlen, int ends_line)
{
    struct wtask *t = w->head;
    struct msg m;

    if (!t->cancelled) {
        memset(&m, 0, sizeof m);
        m.type = MSG_PROC_EXIT;
        memcpy(m.u.exit.job, t->id, WIRE_JOB_ID_LEN);
        m.u.exit.code = (uint32_t)status;
        /* The worker's peak so far bounds its tasks' need: the memory
         * fit learns from it as from a task's own process. */
        if (w->job != NULL &&
            monotime_ms() - w->mem_read_ms >= WORKER_MEM_READ_MS) {
            w->mem_peak = job_mem_peak(w->job);
            w->mem_read_ms = monotime_ms();
        }
        m.u.exit.mem_peak = w->mem_peak;
        if (status != 0 && !ends_line)
            worker_send_output(w, t, 2, (const uint8_t *)"\n", 1);
        m.u.exit.out = (uint8_t *)(uintptr_t)out;
        m.u.exit.out_len = out != NULL ? outlen : 0;
        svc_conn_send(w->owner, &m);
    }
    worker_pop(w);
}

/* An answer from the worker, whole: the head task's result. */
static void
worker_answer(struct worker *w, struct taskframe *f)
{
    if (!worker_answer_fits(w, f))
        return;
    if (f->status != 0 || f->len > WIRE_MAX_CHUNK) {
        worker_answer_bytes(w, f->status, f->data, f->len);
        worker_answer_end(w, f->status, NULL, 0,
                          f->len == 0 || f->data[f->len - 1] == '\n');
    } else
        worker_answer_end(w, 0, f->data, f->len, 1);
}

/* A piece of an answer too long to hold here (over WIRE_MAX_CHUNK): on
 * to the coordinator as it comes; peerd stops reading the worker while
 * the coordinator's backlog is long (job_output.c), so none of it piles up. */
static void
worker_answer_piece(struct worker *w, struct taskframe *f)
{
    if (f->first && !worker_answer_fits(w, f))
        return;
    worker_answer_bytes(w, f->status, f->data, f->len);
    if (f->last)
        worker_answer_end(w, f->status, NULL, 0,
                          f->data[f->len - 1] == '\n');
}

void
worker_stdout(struct worker *w, const uint8_t *p, size_t n)
{
    struct taskframe f;
    size_t used;
    int rc;

    int answered = 0;

    while (n > 0 && !w->broken) {
        rc = taskframe_feed(&w->dec, p, n, &used, &f);
        if (rc == -1) {
            worker_break(w, w->dec.why, p, n);
            return;
        }
        p += used;
        n -= used;
        if (rc == 1) {
            worker_answer(w, &f);
            free(f.data);
            answered = 1;
        } else if (rc == 2) {
            worker_answer_piece(w, &f);
            answered |= f.last;
        }
    }
    /* An answer freed room: the farm's next task (a piece of a long one
     * frees nothing until its last). */
    if (answered || w->broken)
        farm_kick(w->pd);
}

void
worker_stderr(struct worker *w, const uint8_t *p, size_t n)
{
    char ex[200];

    if (w->head != NULL && !w->head->cancelled) {
        worker_send_output(w, w->head, 2, p, n);
        return;
    }
    if (w->head == NULL) {
        worker_excerpt(ex, sizeof ex, p, n);
        log_info("worker %u, between tasks, on stderr: \"%s\"", w->num, ex);
    }
}

/* Describe how a worker ended, for the user. */
static void
worker_describe_end(const struct worker *w, int status, char *out,
                    size_t len)
{
    if (w->broken)
        snprintf(out, len, "%s", w->why);
    else if (WIFSIGNALED(status))
        snprintf(out, len, "worker %u on %s died of signal %d (%s)", w->num,
                 w->pd->host_label, WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, len, "worker %u on %s exited with status %d", w->num,
                 w->pd->host_label, WEXITSTATUS(status));
}

void
worker_exited(struct worker *w, int status, uint64_t mem_peak)
{
    struct wtask *t;
    struct msg m;
    char why[WIRE_MAX_TEXT + 1];

    w->job = NULL;
    worker_describe_end(w, status, why, sizeof why);
    if (w->head != NULL || w->broken)
        log_info("%s", why);
    for (t = w->head; t != NULL; t = t->next) {
        if (t->cancelled && t->state != WT_RUNNING)
            continue;
        memset(&m, 0, sizeof m);
        m.type = MSG_PROC_EXIT;
        memcpy(m.u.exit.job, t->id, WIRE_JOB_ID_LEN);
        m.u.exit.signaled = WIFSIGNALED(status);
        m.u.exit.code = WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status)
                                            : (uint32_t)WEXITSTATUS(status);
        m.u.exit.mem_peak = mem_peak;
        /* Killed on its coordinator's request (a timeout): an ordinary
         * end; otherwise the task was left unanswered. */
        if (!(t->cancelled && t->state == WT_RUNNING && !w->broken)) {
            m.u.exit.worker_lost = 1;
            snprintf(m.u.exit.error, sizeof m.u.exit.error, "%s", why);
        }
        svc_conn_send(w->owner, &m);
    }
    worker_unlink(w);
    worker_free(w);
}

/* --- to the worker ------------------------------------------------------ */

/* Done with a spooled input (all written, or the worker is gone). */
static void
worker_src_close(struct worker *w)
{
    if (w->src_fd != -1)
        close(w->src_fd);
    w->src_fd = -1;
    w->src_left = 0;
}

/* The next stretch of a spooled input into the pipe's buffer; -1 if the
 * spool cannot be read (the worker then cannot get its task). */
static int
worker_src_refill(struct worker *w)
{
    uint8_t buf[WORKER_REFILL];
    size_t k = w->src_left > sizeof buf ? sizeof buf : (size_t)w->src_left;
    ssize_t n;

    do
        n = pread(w->src_fd, buf, k, (off_t)w->src_off);
    while (n == -1 && errno == EINTR);
    if (n <= 0) {
        log_warn("worker %u: reading back a spooled input", w->num);
        worker_src_close(w);
        return -1;
    }
    evbuffer_add(w->in, buf, (size_t)n);
    w->src_off += (uint64_t)n;
    w->src_left -= (uint64_t)n;
    if (w->src_left == 0)
        worker_src_close(w);
    return 0;
}

static void
worker_flush(struct worker *w)
{
    if (w->in_fd == -1)
        return;
    while (evbuffer_get_length(w->in) > 0 || w->src_left > 0) {
        int n;

        if (evbuffer_get_length(w->in) == 0 && worker_src_refill(w) == -1) {
            worker_break(w, "its task's input could not be read back here",
                         NULL, 0);
            return;
        }
        n = evbuffer_write(w->in, w->in_fd);

        if (n > 0)
            continue;
        if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
            event_add(w->ev_in, NULL);
            return;
        }
        /* It closed its stdin: it is ending; its exit tells the rest. */
        evbuffer_drain(w->in, evbuffer_get_length(w->in));
        worker_src_close(w);
        return;
    }
}

static void
worker_writable(evutil_socket_t fd, short what, void *arg)
{
    worker_flush(arg);
}

static void
worker_push(struct worker *w, const struct msg_launch *l, int input_fd)
{
    uint8_t hdr[TASKFRAME_TASK_HDR];
    struct wtask *t;

    t = xcalloc(1, sizeof *t);
    memcpy(t->id, l->job, WIRE_JOB_ID_LEN);
    t->task = l->task;
    *w->tail = t;
    w->tail = &t->next;
    w->ntasks++;
    taskframe_task_header(hdr, l->task, (uint32_t)l->input_len);
    evbuffer_add(w->in, hdr, sizeof hdr);
    if (input_fd != -1) {
        /* One task in hand at a time: no other spooled input is on. */
        worker_src_close(w);
        w->src_fd = input_fd;
        w->src_off = 0;
        w->src_left = l->input_len;
    } else if (l->input_len > 0)
        evbuffer_add(w->in, l->input, l->input_len);
    if (w->head == t)
        worker_send_started(w, t);
    worker_flush(w);
}

/* A free worker of this farm: nothing in hand (one task at a time keeps
 * each task's stderr its own). */
static struct worker *
worker_idle(struct peerd *pd, const struct svc_conn *c,
            const uint8_t farm[WIRE_JOB_ID_LEN])
{
    struct worker *w;

    for (w = pd->workers->list; w != NULL; w = w->next)
        if (w->owner == c && !w->broken && w->job != NULL &&
            w->ntasks == 0 &&
            memcmp(w->farm, farm, WIRE_JOB_ID_LEN) == 0)
            return w;
    return NULL;
}

int
worker_can_take(struct peerd *pd, const struct svc_conn *c,
                const uint8_t farm[WIRE_JOB_ID_LEN])
{
    return pd->workers != NULL && worker_idle(pd, c, farm) != NULL;
}

/* Start a worker of l's farm in a free slot. */
static struct worker *
worker_start(struct peerd *pd, struct svc_conn *c, struct box *box,
             const struct msg_launch *l, char *why, size_t whylen)
{
    struct msg_launch wl;
    struct worker *w;
    char **env;
    uint32_t free_now;
    size_t i;

    w = xcalloc(1, sizeof *w);
    w->pd = pd;
    w->owner = c;
    w->in_fd = -1;
    w->src_fd = -1;
    memcpy(w->farm, l->farm, WIRE_JOB_ID_LEN);
    sec_random(w->id, sizeof w->id);
    w->num = ++pd->workers->seq;
    w->idle_since = monotime_ms();
    w->tail = &w->head;
    w->in = evbuffer_new();
    taskframe_dec_init(&w->dec, TASKFRAME_RESULT, WORKER_ANSWER_MAX);
    taskframe_dec_stream(&w->dec, WIRE_MAX_CHUNK);
    wl = *l;
    memcpy(wl.job, w->id, WIRE_JOB_ID_LEN);
    wl.input = NULL;
    wl.input_len = 0;
    env = xcalloc(l->nenv + 2, sizeof *env);
    for (i = 0; i < l->nenv; i++)
        env[i] = l->env[i];
    xasprintf(&env[l->nenv], "P2P_WORKER=%u", w->num);
    wl.env = env;
    wl.nenv = l->nenv + 1;
    if (reserve_take(pd, w->id, 1, l->lease_ms, c, &free_now, why, whylen) ==
        -1) {
        free(env[l->nenv]);
        free(env);
        worker_free(w);
        return NULL;
    }
    w->job = job_launch_worker(pd, c, &wl, box, w, &w->in_fd, why, whylen);
    free(env[l->nenv]);
    free(env);
    if (w->job == NULL) {
        reserve_release(pd, w->id);
        worker_free(w);
        return NULL;
    }
    w->ev_in = event_new(pd->base, w->in_fd, EV_WRITE, worker_writable, w);
    w->next = pd->workers->list;
    pd->workers->list = w;
    log_info("worker %u started for farm %02x%02x%02x%02x (%s)", w->num,
             w->farm[0], w->farm[1], w->farm[2], w->farm[3], l->argv[0]);
    return w;
}

int
worker_give(struct peerd *pd, struct svc_conn *c, struct box *box,
            const struct msg_launch *l, int input_fd, char *why,
            size_t whylen)
{
    struct worker *w;

    if (pd->workers == NULL) {
        snprintf(why, whylen, "shutting down");
        return -1;
    }
    if ((w = worker_idle(pd, c, l->farm)) == NULL &&
        (w = worker_start(pd, c, box, l, why, whylen)) == NULL)
        return -1;
    worker_push(w, l, input_fd);
    return 0;
}

static struct wtask *
worker_find_task(struct peerd *pd, const uint8_t id[WIRE_JOB_ID_LEN],
                 struct worker **wp)
{
    struct worker *w;
    struct wtask *t;

    if (pd->workers == NULL)
        return NULL;
    for (w = pd->workers->list; w != NULL; w = w->next)
        for (t = w->head; t != NULL; t = t->next)
            if (memcmp(t->id, id, WIRE_JOB_ID_LEN) == 0) {
                if (wp != NULL)
                    *wp = w;
                return t;
            }
    return NULL;
}

int
worker_has_task(struct peerd *pd, const uint8_t id[WIRE_JOB_ID_LEN])
{
    return worker_find_task(pd, id, NULL) != NULL;
}

int
worker_cancel(struct peerd *pd, const struct svc_conn *c,
              const uint8_t id[WIRE_JOB_ID_LEN])
{
    struct worker *w;
    struct wtask *t = worker_find_task(pd, id, &w);

    if (t == NULL || w->owner != c)
        return 0;
    t->cancelled = 1;
    /* Only a process can stop what it is doing: a running task takes its
     * worker with it; a waiting one is answered and forgotten. */
    if (t->state == WT_RUNNING && w->job != NULL)
        job_kill(w->job, "its task was cancelled");
    return 1;
}

void
worker_drop_owner(struct peerd *pd, const struct svc_conn *c)
{
    struct worker **wp, *w;

    if (pd->workers == NULL)
        return;
    for (wp = &pd->workers->list; (w = *wp) != NULL;) {
        if (w->owner != c) {
            wp = &w->next;
            continue;
        }
        *wp = w->next;
        /* The job itself is killed with the connection's other jobs. */
        if (w->job != NULL)
            job_forget_worker(w->job);
        worker_free(w);
    }
}

/* Stop a worker that does nothing: its slot goes back to the peer. */
static void
worker_retire(struct worker *w, const char *why)
{
    log_info("worker %u stops: %s", w->num, why);
    w->broken = w->reclaimed = 1;
    snprintf(w->why, sizeof w->why, "worker %u stopped: %s", w->num, why);
    job_kill(w->job, why);
}

void
worker_cron(struct peerd *pd, uint64_t now_ms)
{
    struct worker *w;

    if (pd->workers == NULL)
        return;
    for (w = pd->workers->list; w != NULL; w = w->next)
        if (w->job != NULL && w->ntasks == 0 && !w->broken &&
            now_ms - w->idle_since >= WORKER_IDLE_MS)
            worker_retire(w, "idle");
}

int
worker_reclaim(struct peerd *pd, const uint8_t farm[WIRE_JOB_ID_LEN])
{
    struct worker *w;

    if (pd->workers == NULL)
        return 0;
    for (w = pd->workers->list; w != NULL; w = w->next)
        if (w->reclaimed && w->job != NULL)
            return 1; /* one at a time: its slot is on its way */
    /* An idle worker of another farm gives its slot back. */
    for (w = pd->workers->list; w != NULL; w = w->next)
        if (w->job != NULL && w->ntasks == 0 && !w->broken &&
            memcmp(w->farm, farm, WIRE_JOB_ID_LEN) != 0) {
            worker_retire(w, "another farm waits for its slot");
            return 1;
        }
    return 0;
}
