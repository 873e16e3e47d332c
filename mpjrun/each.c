/*
 * p2prun --each: a bag of independent tasks, one per line of INPUTS, farmed
 * out to the network's peers.  p2prun is the farm's coordinator, as it is
 * an MPI job's: it opens the farm on every willing peer, stages the
 * program and -l files once per peer, then streams tasks, keeping each
 * peer's queue short but never empty (the peer starts them by fair share
 * between users, farm.c in peerd), and collects each task's output whole.
 *
 * What it guarantees: each task's result is reported exactly once, in
 * input order (or as they finish with --unordered).  A task may run more
 * than once: again elsewhere when its peer dies, disconnects or evicts it
 * (not a retry), again after a failure with --retries, and as a second
 * copy when it straggles (the first copy to finish wins, the other is
 * killed).  A task that was running on three peers that died is failed
 * (Dask's KilledWorker rule).  Memory: a task goes only to a peer whose
 * free memory, less what its running tasks are expected to use, covers
 * the task's need (--mem, else the largest peak seen so far), and among
 * those to the tightest fit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "cli.h"
#include "fdio.h"
#include "log.h"
#include "monotime.h"
#include "mpjrun.h"
#include "nodeproof.h"
#include "xmalloc.h"

#define EACH_TICK_MS 100
/* The dashboard hears of the farm's progress this often. */
#define EACH_NOTE_MS 2000
#define EACH_QUEUE_EXTRA 2      /* tasks queued at a peer beyond its slots */
#define EACH_MAX_DEATHS 3       /* peers that may die under one task */
#define EACH_OPEN_MAX 100000    /* tasks read but not yet reported */
#define EACH_STRAGGLE_FACTOR 3  /* x the median duration: a straggler */
#define EACH_STRAGGLE_MIN 5     /* finished tasks before the rule applies */
#define EACH_STRAGGLE_FLOOR_MS 1000 /* never duplicate a task younger */
#define EACH_DURATIONS 1024     /* recent durations kept for the median */
#define EACH_SILENT_MS 1500     /* a peer not heard of this long is slow */
#define EACH_REST_MS 5000       /* a peer that said "not now" rests */
/* A task's stdout (a caller's result) longer than this goes to a file,
 * not memory. */
#define EACH_SPOOL_OVER (1024 * 1024)
/* Launch pieces are queued to a peer while its backlog is under this. */
#define EACH_SEND_BACKLOG (512 * 1024)

enum ep_state {
    EP_IDLE,       /* not contacted */
    EP_CONNECTING, /* handshake under way */
    EP_PROVING,    /* asked to prove the node key it registered */
    EP_OPENING,    /* farm asked for */
    EP_STAGING,    /* files on their way */
    EP_READY,      /* takes tasks */
    EP_GONE        /* closed, lost or refused */
};

enum et_state { ET_QUEUED, ET_RUNNING, ET_DONE };

/* Bytes held in memory (p), or, once a large one spills, in an unlinked
 * file (fd > 0, p NULL) that is never read back whole. */
struct buf {
    char *p;
    size_t len, cap;
    int fd;
    int werr; /* the file could not be written: errno */
};

struct etask {
    uint64_t num; /* from 1 */
    char *line;     /* its input (a call's: name, NUL, input), NUL-ended */
    size_t linelen;
    int in_fd; /* > 0: a long call, its linelen bytes in this unlinked
                * file (line holds only its name) */
    enum et_state state;
    int attempts, retries, deaths, live;
    int requeued; /* in the requeue list */
    /* The result, once done */
    int status, signaled, evicted;
    char host[WIRE_MAX_LABEL + 1];
    double secs;
    uint64_t mem_peak;
    struct buf out, err;
    char why[WIRE_MAX_TEXT + 64]; /* failed without running */
    struct etask *next;           /* open tasks in input order */
    struct etask *rq_next;        /* requeue list */
};

struct eattempt {
    uint8_t id[WIRE_JOB_ID_LEN];
    struct etask *t;
    struct epeer *p;
    uint64_t started_ms; /* 0 until its peer says it started */
    uint64_t mem; /* what it is expected to use on its peer */
    int killed, timed_out;
    int finishing; /* its result is being taken: not to be freed */
    size_t sent;   /* input bytes sent so far (its launch pieces) */
    int launched;  /* the last launch piece is sent */
    int feeding;   /* in each_feed (no reentry from the drain) */
    char **argv;   /* its program's arguments (each_argv), for every piece */
    size_t nargv;
    struct buf out, err;
    struct eattempt *next;
};

struct epeer {
    struct each *e;
    struct peer_entry pe;
    struct channel *ch;
    enum ep_state state;
    struct stage_peer *sp;
    int inflight;
    uint64_t resting_until; /* refused "not now": nothing until then */
    uint64_t mem_committed;
    uint64_t last_heard_ms;
    char why[WIRE_MAX_TEXT + 1];
};

struct each {
    struct event_base *base;
    const struct p2p_group *group;
    const uint8_t *user_pk, *user_sk;
    const struct job_spec *js;
    uint8_t farm[WIRE_JOB_ID_LEN];
    struct epeer *peers;
    size_t npeers;
    struct stage_file *files;
    int nfiles, prog;
    FILE *in;
    int in_eof;
    int unordered; /* results as they finish (always for a caller) */
    struct farmlink *link; /* --workers: the program calling tasks */
    struct etask *fresh_head, **fresh_tail; /* its calls not yet read */
    size_t nfresh;
    uint64_t nread;
    struct etask *open_head, **open_tail; /* read, not yet reported */
    size_t nopen;
    struct etask *rq_head, **rq_tail;   /* to run again first */
    uint64_t next_report;               /* ordered output: the next one */
    struct eattempt *attempts;
    uint64_t ndone, nfailed;
    uint64_t total; /* lines of INPUTS when it is a file, else 0 */
    uint64_t mem_need, mem_learned;
    double durations[EACH_DURATIONS];
    size_t ndur, durpos;
    FILE *results;
    int stopping, status, progress;
    uint64_t started_ms;
    struct event *ev_tick, *ev_sig[3];
    struct snnote *note;   /* progress for the supernode's dashboard */
    uint64_t note_ms;      /* last sent */
    /* failed tasks for the summary: number, input, status, host, last line */
    char **summary;
    size_t nsummary;
};

/* --- small things ------------------------------------------------------- */

static void
buf_add(struct buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->p = xreallocarray(b->p, b->cap, 1);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void
buf_free(struct buf *b)
{
    free(b->p);
    if (b->fd > 0)
        close(b->fd);
    memset(b, 0, sizeof *b);
}

/* A task's stdout may go to a spool file: it is never needed whole (not
 * for --results, whose JSON holds it). */
static int
each_spools(const struct each *e)
{
    return e->link != NULL || e->results == NULL;
}

/* Append to a buffer that spills to an unlinked file past
 * EACH_SPOOL_OVER; a write error is kept for whoever takes the bytes. */
static void
buf_add_spooled(struct buf *b, const void *p, size_t n)
{
    char err[256];
    int fd;

    if (b->werr != 0)
        return;
    if (b->fd <= 0 && b->len + n > EACH_SPOOL_OVER) {
        if ((fd = spool_tmpfile(NULL, err, sizeof err)) == -1) {
            log_warnx("a result kept in memory: %s", err);
            buf_add(b, p, n);
            return;
        }
        if (fdio_write_all(fd, b->p, b->len) == -1)
            b->werr = errno;
        free(b->p);
        b->p = NULL;
        b->cap = 0;
        b->fd = fd;
    }
    if (b->fd > 0) {
        if (b->werr == 0 && fdio_write_all(b->fd, p, n) == -1)
            b->werr = errno;
        b->len += n;
        return;
    }
    buf_add(b, p, n);
}

static void
each_progress_clear(struct each *e)
{
    if (e->progress) {
        fputs("\r\033[K", stderr);
        e->progress = 0;
    }
}

static void __attribute__((format(printf, 2, 3)))
each_say(struct each *e, const char *fmt, ...)
{
    va_list ap;

    each_progress_clear(e);
    fputs("p2prun: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static const char *
ep_host(const struct epeer *p)
{
    return p->pe.host_label;
}

static int
each_size(const char *s, uint64_t *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || v < 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        v *= 1024.0 * 1024 * 1024, end++;
    else if (*end == 't' || *end == 'T')
        v *= 1024.0 * 1024 * 1024 * 1024, end++;
    if (*end == 'i')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int
each_parse_mem(const char *s, uint64_t *out)
{
    return each_size(s, out);
}

/* --- tasks -------------------------------------------------------------- */

/* Read the next line of INPUTS as a task; NULL at the end. */
static struct etask *
each_read(struct each *e)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    struct etask *t;

    if (e->link != NULL) {
        if ((t = e->fresh_head) == NULL || e->nopen >= EACH_OPEN_MAX)
            return NULL;
        if ((e->fresh_head = t->next) == NULL)
            e->fresh_tail = &e->fresh_head;
        e->nfresh--;
        t->next = NULL;
        e->nread++;
        *e->open_tail = t;
        e->open_tail = &t->next;
        e->nopen++;
        return t;
    }
    if (e->in_eof || e->nopen >= EACH_OPEN_MAX)
        return NULL;
    n = getline(&line, &cap, e->in);
    if (n == -1) {
        free(line);
        e->in_eof = 1;
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    t = xcalloc(1, sizeof *t);
    t->num = ++e->nread;
    t->line = line;
    t->linelen = (size_t)n;
    *e->open_tail = t;
    e->open_tail = &t->next;
    e->nopen++;
    return t;
}

/* The next task to give out: one to run again, else a new one. */
static struct etask *
each_next_task(struct each *e)
{
    struct etask *t;

    while ((t = e->rq_head) != NULL) {
        e->rq_head = t->rq_next;
        if (e->rq_head == NULL)
            e->rq_tail = &e->rq_head;
        t->requeued = 0;
        if (t->state == ET_QUEUED)
            return t;
    }
    return each_read(e);
}

static void
each_requeue(struct each *e, struct etask *t, int front)
{
    t->state = ET_QUEUED;
    if (t->requeued)
        return;
    t->requeued = 1;
    if (front) {
        t->rq_next = e->rq_head;
        e->rq_head = t;
        if (e->rq_tail == &e->rq_head)
            e->rq_tail = &t->rq_next;
    } else {
        t->rq_next = NULL;
        *e->rq_tail = t;
        e->rq_tail = &t->rq_next;
    }
}

/* Arguments of a task: {} is the line, {#} the number; without {} the
 * line goes last (GNU parallel's rule).  NULL with why when too long. */
static char **
each_argv(struct each *e, const struct etask *t, size_t *n, char *why,
          size_t whylen)
{
    const struct job_spec *js = e->js;
    char num[32], **argv;
    int i, any = 0;
    size_t k = 0;

    snprintf(num, sizeof num, "%llu", (unsigned long long)t->num);
    argv = xcalloc((size_t)js->argc + 2, sizeof *argv);
    for (i = 0; i < js->argc; i++) {
        const char *a = i == 0 && e->prog >= 0 ? NULL : js->argv[i];
        struct buf b = {0};
        const char *p;

        if (a == NULL) {
            xasprintf(&argv[k++], "./%s", e->files[e->prog].name);
            continue;
        }
        if (js->worker) {
            /* A worker serves every task: its arguments are the same for
             * all, and the line is its task's input. */
            argv[k++] = xstrdup(a);
            continue;
        }
        for (p = a; *p != '\0';) {
            if (strncmp(p, "{}", 2) == 0) {
                buf_add(&b, t->line, strlen(t->line));
                p += 2;
                any = 1;
            } else if (strncmp(p, "{#}", 3) == 0) {
                buf_add(&b, num, strlen(num));
                p += 3;
            } else
                buf_add(&b, p++, 1);
        }
        buf_add(&b, "", 1);
        argv[k++] = b.p;
    }
    if (!any && !js->worker)
        argv[k++] = xstrdup(t->line);
    *n = k;
    for (i = 0; i < (int)k; i++)
        if (strlen(argv[i]) > WIRE_MAX_ARG) {
            snprintf(why, whylen,
                     "an argument of %zu bytes (the input line) is longer "
                     "than the %d a peer takes",
                     strlen(argv[i]), WIRE_MAX_ARG);
            for (i = 0; i < (int)k; i++)
                free(argv[i]);
            free(argv);
            return NULL;
        }
    return argv;
}

/* --- output and results ------------------------------------------------- */

/* Bytes of a stream, each line after tag (when there is one); *bol: at
 * the start of a line, carried from piece to piece. */
static void
each_emit_piece(int fd, const char *tag, const char *p, size_t len,
                int *bol)
{
    const char *nl;
    size_t k;

    if (tag == NULL) {
        fdio_write_all(fd, p, len);
        return;
    }
    while (len > 0) {
        if (*bol)
            fdio_write_all(fd, tag, strlen(tag));
        nl = memchr(p, '\n', len);
        k = nl != NULL ? (size_t)(nl - p) + 1 : len;
        fdio_write_all(fd, p, k);
        *bol = nl != NULL;
        p += k;
        len -= k;
    }
}

/* A stream of a task, prefixed [N] per line with --tag-output (a last
 * line without its newline gets one); a spooled one read back in
 * pieces. */
static void
each_emit(struct each *e, int fd, const struct etask *t, const struct buf *b)
{
    char tag[32], piece[65536];
    uint64_t off;
    ssize_t n;
    int bol = 1;

    if (b->len == 0)
        return;
    snprintf(tag, sizeof tag, "[%llu] ", (unsigned long long)t->num);
    if (b->fd <= 0)
        each_emit_piece(fd, e->js->tag_output ? tag : NULL, b->p, b->len,
                        &bol);
    for (off = 0; b->fd > 0 && off < b->len; off += (uint64_t)n) {
        n = pread(b->fd, piece, sizeof piece, (off_t)off);
        if (n <= 0) {
            each_say(e, "task %llu: its output could not be read back from "
                     "its spool file: %s", (unsigned long long)t->num,
                     n == 0 ? "short file" : strerror(errno));
            break;
        }
        each_emit_piece(fd, e->js->tag_output ? tag : NULL, piece,
                        (size_t)n, &bol);
    }
    if (e->js->tag_output && !bol)
        fdio_write_all(fd, "\n", 1);
}

/* A JSON string for bytes: text when it is UTF-8, else base64. */
static void
each_json_bytes(json_t *o, const char *key, const struct buf *b)
{
    json_t *s = json_stringn(b->p ? b->p : "", b->len);
    char k64[32], *enc;

    if (s != NULL) {
        json_object_set_new(o, key, s);
        return;
    }
    snprintf(k64, sizeof k64, "%s_base64", key);
    if ((enc = sec_base64(b->p, b->len)) != NULL)
        json_object_set_new(o, k64, json_string(enc));
    free(enc);
}

static void
each_result_json(struct each *e, const struct etask *t)
{
    json_t *o, *in;
    char *line;

    if (e->results == NULL)
        return;
    o = json_object();
    json_object_set_new(o, "task", json_integer((json_int_t)t->num));
    if ((in = json_stringn(t->line, strlen(t->line))) == NULL)
        in = json_string("?"); /* not UTF-8: the task number says which */
    json_object_set_new(o, "input", in);
    if (t->signaled)
        json_object_set_new(o, "signal", json_integer(t->status - 128));
    json_object_set_new(o, "status", json_integer(t->status));
    json_object_set_new(o, "host", json_string(t->host));
    json_object_set_new(o, "attempts", json_integer(t->attempts));
    json_object_set_new(o, "seconds", json_real(t->secs));
    json_object_set_new(o, "mem_peak", json_integer((json_int_t)t->mem_peak));
    each_json_bytes(o, "stdout", &t->out);
    each_json_bytes(o, "stderr", &t->err);
    if (t->why[0] != '\0')
        json_object_set_new(o, "error", json_string(t->why));
    line = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (line != NULL) {
        fprintf(e->results, "%s\n", line);
        free(line);
    }
}

/* The last line of a buffer, for the summary. */
static void
each_last_line(const struct buf *b, char *out, size_t len)
{
    size_t end = b->len, start;

    while (end > 0 && (b->p[end - 1] == '\n' || b->p[end - 1] == '\r'))
        end--;
    start = end;
    while (start > 0 && b->p[start - 1] != '\n')
        start--;
    snprintf(out, len, "%.*s", (int)(end - start > 200 ? 200 : end - start),
             b->p ? b->p + start : "");
}

/* Report a finished task: output, results, summary; then forget it. */
static void
each_report(struct each *e, struct etask *t)
{
    char last[256], *s;

    each_progress_clear(e);
    if (e->link != NULL) {
        /* The caller has the result and the status; the terminal the
         * task's stderr. */
        each_emit(e, STDERR_FILENO, t, &t->err);
        if (t->status == 0 && t->out.werr != 0) {
            snprintf(t->why, sizeof t->why, "the result could not be "
                     "spooled in $TMPDIR: %s", strerror(t->out.werr));
            farmlink_result(e->link, t->num, 1, 0, xstrdup(t->why),
                            strlen(t->why));
        } else if (t->status == 0 && t->out.fd > 0) {
            /* From its file, which the link closes. */
            farmlink_result_file(e->link, t->num, t->out.fd, t->out.len);
            t->out.fd = 0;
        } else if (t->status == 0) {
            /* The result goes as it is: the link frees it. */
            farmlink_result(e->link, t->num, 0, 0, t->out.p, t->out.len);
            memset(&t->out, 0, sizeof t->out);
        } else {
            if (t->why[0] == '\0')
                each_last_line(&t->err, t->why, sizeof t->why);
            farmlink_result(e->link, t->num, t->status, t->signaled,
                            xstrdup(t->why), strlen(t->why));
        }
        return;
    }
    if (t->out.werr != 0)
        each_say(e, "task %llu: part of its output was lost (spooling it "
                 "in $TMPDIR: %s)", (unsigned long long)t->num,
                 strerror(t->out.werr));
    each_emit(e, STDOUT_FILENO, t, &t->out);
    each_emit(e, STDERR_FILENO, t, &t->err);
    each_result_json(e, t);
    if (t->status != 0) {
        each_last_line(&t->err, last, sizeof last);
        xasprintf(&s, "task %llu (%s): %s%d on %s%s%s",
                  (unsigned long long)t->num, t->line,
                  t->signaled ? "signal " : "status ",
                  t->signaled ? t->status - 128 : t->status,
                  t->host[0] ? t->host : "no peer",
                  t->why[0] || last[0] ? ": " : "",
                  t->why[0] ? t->why : last);
        e->summary = xreallocarray(e->summary, e->nsummary + 1,
                                   sizeof *e->summary);
        e->summary[e->nsummary++] = s;
    }
}

static void
each_task_free(struct etask *t)
{
    buf_free(&t->out);
    buf_free(&t->err);
    free(t->line);
    if (t->in_fd > 0)
        close(t->in_fd);
    free(t);
}

/* Report what can be reported: in order, or everything done. */
static void
each_flush(struct each *e)
{
    struct etask **tp, *t;

    for (tp = &e->open_head; (t = *tp) != NULL;) {
        if (t->state != ET_DONE || t->live > 0) {
            if (!e->unordered)
                break;
            tp = &t->next;
            continue;
        }
        each_report(e, t);
        *tp = t->next;
        if (e->open_tail == &t->next)
            e->open_tail = tp;
        e->nopen--;
        each_task_free(t);
    }
    if (e->results != NULL)
        fflush(e->results);
    if (e->link != NULL && e->nopen + e->nfresh < EACH_OPEN_MAX / 2)
        farmlink_pause(e->link, 0);
}

/* --- attempts ----------------------------------------------------------- */

static void
ep_send(struct epeer *p, const struct msg *m)
{
    if (p->ch != NULL)
        channel_send(p->ch, m);
}

static struct eattempt *
each_attempt_find(struct each *e, const uint8_t id[WIRE_JOB_ID_LEN])
{
    struct eattempt *a;

    for (a = e->attempts; a != NULL; a = a->next)
        if (memcmp(a->id, id, WIRE_JOB_ID_LEN) == 0)
            return a;
    return NULL;
}

static void
each_attempt_free(struct each *e, struct eattempt *a)
{
    struct eattempt **ap;
    size_t i;

    for (ap = &e->attempts; *ap != NULL; ap = &(*ap)->next)
        if (*ap == a) {
            *ap = a->next;
            break;
        }
    a->p->inflight--;
    a->p->mem_committed -= a->mem;
    a->t->live--;
    buf_free(&a->out);
    buf_free(&a->err);
    for (i = 0; i < a->nargv; i++)
        free(a->argv[i]);
    free(a->argv);
    free(a);
}

static void
each_attempt_kill(struct eattempt *a)
{
    struct msg m;

    if (a->killed)
        return;
    a->killed = 1;
    memset(&m, 0, sizeof m);
    m.type = MSG_KILL;
    memcpy(m.u.job, a->id, WIRE_JOB_ID_LEN);
    ep_send(a->p, &m);
}

/* A task is finished: its result is final. */
static void
each_task_done(struct each *e, struct etask *t, int status, int signaled,
               const char *host)
{
    struct eattempt *a, *next;

    t->state = ET_DONE;
    t->status = status;
    t->signaled = signaled;
    snprintf(t->host, sizeof t->host, "%s", host ? host : "");
    e->ndone++;
    if (status != 0)
        e->nfailed++;
    /* A copy still running elsewhere lost the race: stopped, and
     * forgotten now (its peer may be frozen and answer late, or never;
     * whatever it says later is ignored). */
    for (a = e->attempts; a != NULL; a = next) {
        next = a->next;
        if (a->t == t && !a->finishing) {
            each_attempt_kill(a);
            each_attempt_free(e, a);
        }
    }
}

/* Send attempt a's launch, or its next piece: a worker task's input goes
 * in pieces, the last with the launch proper, each beside the program's
 * arguments (a long call's read back from its file).  -1 when its input
 * cannot be read (the task has failed and a is gone). */
static int
each_launch_piece(struct each *e, struct eattempt *a)
{
    const struct job_spec *js = e->js;
    struct etask *t = a->t;
    struct msg m;
    struct msg_launch *l = &m.u.launch;
    struct proc_spec ps = {0, 0};
    char **env;
    uint8_t *piece = NULL;
    size_t n = 0;
    ssize_t got;
    int k;

    if (js->worker) {
        n = t->linelen - a->sent;
        if (n > EACH_INPUT_PIECE)
            n = EACH_INPUT_PIECE;
        if (t->in_fd > 0) {
            piece = xmalloc(n + 1);
            got = pread(t->in_fd, piece, n, (off_t)a->sent);
            if (got != (ssize_t)n) {
                snprintf(t->why, sizeof t->why, "reading the call back "
                         "from its spool file: %s",
                         got == -1 ? strerror(errno) : "short read");
                free(piece);
                each_task_done(e, t, 1, 0, NULL);
                return -1;
            }
        }
    }
    env = xcalloc((size_t)js->nenv + 2, sizeof *env);
    for (k = 0; k < js->nenv; k++)
        env[k] = js->env[k];
    /* A worker serves many tasks: each one's number is in its frame. */
    if (!js->worker)
        xasprintf(&env[k], "P2P_TASK=%llu", (unsigned long long)t->num);
    memset(&m, 0, sizeof m);
    m.type = MSG_LAUNCH;
    memcpy(l->job, a->id, WIRE_JOB_ID_LEN);
    memcpy(l->farm, e->farm, WIRE_JOB_ID_LEN);
    l->task = t->num;
    l->mem_need = a->mem;
    l->size = l->nreplicas = 1;
    l->lease_ms = (uint32_t)js->lease_ms;
    l->procs = &ps;
    l->nprocs = 1;
    l->argv = a->argv;
    l->nargv = a->nargv;
    l->env = env;
    l->nenv = (size_t)js->nenv + (js->worker ? 0 : 1);
    l->files = xcalloc((size_t)e->nfiles + 1, sizeof *l->files);
    for (k = 0; k < e->nfiles; k++) {
        snprintf(l->files[k].name, sizeof l->files[k].name, "%s",
                 e->files[k].name);
        memcpy(l->files[k].hash, e->files[k].hash, SEC_HASH_LEN);
        l->files[k].executable = e->files[k].executable;
    }
    l->nfiles = (size_t)e->nfiles;
    if (js->worker) {
        l->worker = 1;
        l->input = piece != NULL ? piece : (uint8_t *)t->line + a->sent;
        l->input_len = n;
        l->input_more = a->sent + n < t->linelen;
    }
    /* Counted before it goes: sending may call back (the drain). */
    a->sent += n;
    a->launched = !js->worker || a->sent >= t->linelen;
    ep_send(a->p, &m);
    free(piece);
    free(l->files);
    free(env[js->nenv]);
    free(env);
    return 0;
}

/* Send what the connection's backlog allows of attempt a's launch (the
 * rest as it drains: a long input is never queued whole).  -1 when a is
 * gone. */
static int
each_feed(struct each *e, struct eattempt *a)
{
    if (a->feeding)
        return 0;
    a->feeding = 1;
    while (!a->launched && a->p->ch != NULL) {
        if (a->sent > 0 && channel_output_len(a->p->ch) > EACH_SEND_BACKLOG)
            break;
        if (each_launch_piece(e, a) == -1)
            return -1;
    }
    a->feeding = 0;
    return 0;
}

/* Feed peer p's launches, oldest first and one at a time: a peer takes
 * a worker task's input pieces for one task until its last. */
static void
ep_feed(struct epeer *p)
{
    struct eattempt *a, *oldest;

    for (;;) {
        oldest = NULL;
        for (a = p->e->attempts; a != NULL; a = a->next)
            if (a->p == p && !a->launched)
                oldest = a; /* the list is newest first */
        if (oldest == NULL || p->ch == NULL)
            return;
        if (each_feed(p->e, oldest) == -1)
            continue; /* failed and gone: the next */
        if (!oldest->launched)
            return;
    }
}

/* Send task t to peer p as a new attempt; -1 when it cannot be sent. */
static int
each_send_task(struct each *e, struct epeer *p, struct etask *t)
{
    const struct job_spec *js = e->js;
    struct eattempt *a;
    char why[WIRE_MAX_TEXT + 64], **argv;
    size_t nargv;

    if (js->worker && t->linelen > EACH_CALL_MAX) {
        snprintf(t->why, sizeof t->why,
                 "an input of %zu bytes is longer than the %llu a worker "
                 "task takes",
                 t->linelen, (unsigned long long)EACH_CALL_MAX);
        each_task_done(e, t, 1, 0, NULL);
        return 0;
    }
    if ((argv = each_argv(e, t, &nargv, why, sizeof why)) == NULL) {
        snprintf(t->why, sizeof t->why, "%s", why);
        each_task_done(e, t, 1, 0, NULL);
        return 0;
    }
    /* Built once for the attempt: each launch piece sends the same. */
    a = xcalloc(1, sizeof *a);
    sec_random(a->id, sizeof a->id);
    a->argv = argv;
    a->nargv = nargv;
    a->t = t;
    a->p = p;
    a->mem = e->mem_need;
    a->next = e->attempts;
    e->attempts = a;
    t->state = ET_RUNNING;
    t->attempts++;
    t->live++;
    p->inflight++;
    p->mem_committed += e->mem_need;
    ep_feed(p);
    return 0;
}

/* How many tasks a peer should hold: its slots, and a few queued. */
static int
ep_depth(const struct epeer *p)
{
    return (int)p->pe.res.slots_total + EACH_QUEUE_EXTRA;
}

/* The peer for the next task: room in its queue, enough memory, and the
 * tightest memory fit among those (best fit). */
static struct epeer *
each_pick(struct each *e, const struct epeer *not)
{
    struct epeer *p, *best = NULL;
    uint64_t avail, bavail = 0;
    size_t i;
    int held = 0;

    /* --workers W: at most W tasks in hand at once. */
    if (e->js->workers_max > 0) {
        for (i = 0; i < e->npeers; i++)
            held += e->peers[i].inflight;
        if (held >= e->js->workers_max)
            return NULL;
    }
    for (i = 0; i < e->npeers; i++) {
        p = &e->peers[i];
        if (p->state != EP_READY || p == not || p->inflight >= ep_depth(p) ||
            monotime_ms() - p->last_heard_ms > EACH_SILENT_MS ||
            monotime_ms() < p->resting_until)
            continue;
        avail = p->pe.res.mem_free > p->mem_committed
                    ? p->pe.res.mem_free - p->mem_committed
                    : 0;
        if (e->mem_need > 0 && avail < e->mem_need)
            continue;
        if (best == NULL ||
            (e->mem_need > 0 ? avail < bavail
                             : p->inflight < best->inflight)) {
            best = p;
            bavail = avail;
        }
    }
    return best;
}

static void each_maybe_end(struct each *);

/* Keep every ready peer busy. */
static void
each_dispatch(struct each *e)
{
    struct epeer *p;
    struct etask *t;

    if (e->stopping)
        return;
    while ((p = each_pick(e, NULL)) != NULL) {
        if ((t = each_next_task(e)) == NULL)
            break;
        each_send_task(e, p, t);
    }
    each_flush(e);
    each_maybe_end(e);
}

/* A task's attempt is over without a result (peer lost, evicted,
 * refused): run it again, or give up on it. */
static void
each_attempt_lost(struct each *e, struct eattempt *a, int death,
                  const char *why)
{
    struct etask *t = a->t;
    const char *host = ep_host(a->p);
    int done = t->state == ET_DONE;

    each_attempt_free(e, a);
    if (done || t->live > 0)
        return;
    if (death && ++t->deaths >= EACH_MAX_DEATHS) {
        snprintf(t->why, sizeof t->why, "was running on %d peers that died",
                 t->deaths);
        each_say(e, "task %llu %s; it is failed",
                 (unsigned long long)t->num, t->why);
        each_task_done(e, t, 1, 0, host);
        return;
    }
    if (why != NULL && !death)
        log_info("task %llu on %s: %s; running it again",
                 (unsigned long long)t->num, host, why);
    each_requeue(e, t, 1);
}

/* A persistent worker died under a task or broke the protocol during it
 * (x->error names both): the task runs again, on a fresh worker, as when
 * its peer dies; a task that took EACH_MAX_DEATHS workers with it is
 * failed with the last one's end (a signal, or the protocol error). */
static void
each_worker_lost(struct each *e, struct eattempt *a,
                 const struct msg_proc_exit *x)
{
    struct etask *t = a->t;
    const char *host = ep_host(a->p);
    int started = a->started_ms != 0;

    if (t->state == ET_DONE) {
        each_attempt_free(e, a);
        return;
    }
    if (started)
        t->deaths++;
    if (!started || t->deaths < EACH_MAX_DEATHS || t->live > 1) {
        each_say(e, "task %llu: %s; running it again",
                 (unsigned long long)t->num, x->error);
        each_attempt_free(e, a);
        if (t->live == 0)
            each_requeue(e, t, 1);
        return;
    }
    snprintf(t->why, sizeof t->why, "%d workers were lost under it, the "
             "last: %s", t->deaths, x->error);
    each_say(e, "task %llu failed: %s", (unsigned long long)t->num, t->why);
    buf_free(&t->out);
    buf_free(&t->err);
    t->err = a->err;
    memset(&a->err, 0, sizeof a->err);
    a->finishing = 1;
    each_task_done(e, t,
                   x->signaled ? 128 + (int)(x->code & 0x7f)
                               : (x->code != 0 ? (int)(x->code & 0xff) : 1),
                   x->signaled, host);
    each_attempt_free(e, a);
}

static void
each_proc_exit(struct epeer *p, const struct msg_proc_exit *x)
{
    struct each *e = p->e;
    struct eattempt *a = each_attempt_find(e, x->job);
    struct etask *t;
    int status;

    if (a == NULL || a->p != p)
        return;
    t = a->t;
    if (x->evicted) {
        if (t->state != ET_DONE)
            each_say(e, "task %llu evicted from %s: %s; running it elsewhere",
                     (unsigned long long)t->num, ep_host(p),
                     x->evict_reason[0] ? x->evict_reason : "owner active");
        each_attempt_lost(e, a, 0, NULL);
        each_dispatch(e);
        return;
    }
    if (x->worker_lost && !a->killed) {
        each_worker_lost(e, a, x);
        each_dispatch(e);
        return;
    }
    /* A worker's answer comes with its end (a long one came as output). */
    if (x->out_len > 0 && each_spools(e))
        buf_add_spooled(&a->out, x->out, x->out_len);
    else if (x->out_len > 0)
        buf_add(&a->out, x->out, x->out_len);
    status = x->signaled ? 128 + (int)(x->code & 0x7f) : (int)(x->code & 0xff);
    if (a->timed_out)
        status = 124;
    if (x->mem_peak > e->mem_learned)
        e->mem_learned = x->mem_peak;
    if (e->js->mem_need == 0)
        e->mem_need = e->mem_learned;
    if (t->state != ET_DONE && (!a->killed || a->timed_out)) {
        if (status != 0 && t->retries < e->js->retries && !a->timed_out) {
            t->retries++;
            log_info("task %llu failed with %d on %s: retry %d",
                     (unsigned long long)t->num, status, ep_host(p),
                     t->retries);
            each_attempt_free(e, a);
            if (t->live == 0)
                each_requeue(e, t, 0);
            each_dispatch(e);
            return;
        }
        /* This attempt's output is the task's. */
        buf_free(&t->out);
        buf_free(&t->err);
        t->out = a->out;
        t->err = a->err;
        memset(&a->out, 0, sizeof a->out);
        memset(&a->err, 0, sizeof a->err);
        t->secs = a->started_ms
                      ? (double)(monotime_ms() - a->started_ms) / 1000
                      : 0;
        t->mem_peak = x->mem_peak;
        if (status == 0) {
            e->durations[e->durpos] = t->secs;
            e->durpos = (e->durpos + 1) % EACH_DURATIONS;
            if (e->ndur < EACH_DURATIONS)
                e->ndur++;
        }
        a->finishing = 1;
        each_task_done(e, t, status, x->signaled && !a->timed_out,
                       ep_host(p));
    }
    each_attempt_free(e, a);
    each_dispatch(e);
}

/* --- peers -------------------------------------------------------------- */

static void ep_on_ready(struct channel *, void *);
static void ep_on_msg(struct channel *, const struct msg *, void *);
static void ep_on_close(struct channel *, const char *, int, void *);
static void ep_on_drain(struct channel *, void *);

static const struct channel_cbs ep_cbs = {
    .on_ready = ep_on_ready,
    .on_msg = ep_on_msg,
    .on_close = ep_on_close,
    .on_drain = ep_on_drain,
};

/* A peer is gone: what ran there runs again elsewhere. */
static void
ep_lost(struct epeer *p, const char *why)
{
    struct each *e = p->e;
    struct eattempt *a, *next;
    int n = 0;

    if (p->state == EP_GONE)
        return;
    p->state = EP_GONE;
    if (p->ch != NULL)
        channel_close(p->ch);
    p->ch = NULL;
    stage_peer_free(p->sp);
    p->sp = NULL;
    snprintf(p->why, sizeof p->why, "%s", why);
    for (a = e->attempts; a != NULL; a = next) {
        next = a->next;
        if (a->p == p) {
            n++;
            each_attempt_lost(e, a, a->started_ms != 0, why);
        }
    }
    if (n > 0 && !e->stopping)
        each_say(e, "lost peer %s (%s): %d task%s run again elsewhere",
                 ep_host(p), why, n, n == 1 ? "" : "s");
    each_dispatch(e);
}

static void
ep_connect(struct epeer *p)
{
    struct each *e = p->e;
    struct channel_params cp;
    struct netaddr na;
    char err[160];

    if (netaddr_parse(p->pe.addr, 0, &na, err, sizeof err) == -1) {
        p->state = EP_GONE;
        return;
    }
    group_params(e->group, FRAME_MAX_REQUEST, 0, &cp);
    p->ch = channel_connect(e->base, &na, NULL, &cp, &ep_cbs, p);
    p->state = p->ch != NULL ? EP_CONNECTING : EP_GONE;
    p->last_heard_ms = monotime_ms();
}

static void
ep_on_ready(struct channel *ch, void *arg)
{
    struct epeer *p = arg;
    struct each *e = p->e;
    struct msg m;

    userkey_auth(&m, ch, e->user_pk, e->user_sk);
    channel_send(ch, &m);
    /* Only the node the supernode listed gets our program and tasks. */
    nodeproof_challenge(p->pe.id, &m);
    channel_send(ch, &m);
    p->state = EP_PROVING;
}

/* The peer proved its node key: the farm opens there. */
static void
ep_proved(struct epeer *p, const struct msg_node *proof)
{
    struct each *e = p->e;
    char why[WIRE_MAX_TEXT + 1];
    struct msg m;

    if (p->state != EP_PROVING)
        return;
    if (nodeproof_check(p->ch, proof, p->pe.id, why, sizeof why) == -1) {
        log_info("peer %s (%s): %s", ep_host(p), p->pe.addr, why);
        ep_lost(p, why);
        return;
    }
    memset(&m, 0, sizeof m);
    m.type = MSG_FARM_OPEN;
    memcpy(m.u.farm.farm, e->farm, WIRE_JOB_ID_LEN);
    m.u.farm.lease_ms = (uint32_t)e->js->lease_ms;
    channel_send(p->ch, &m);
    p->state = EP_OPENING;
}

static void
ep_pump(struct epeer *p)
{
    char err[320];
    int rc;

    if (p->state != EP_STAGING)
        return;
    rc = stage_peer_pump(p->sp, p->ch, NULL, err, sizeof err);
    if (rc == -1) {
        each_say(p->e, "%s on %s", err, ep_host(p));
        ep_lost(p, err);
        return;
    }
    if (rc == 1) {
        stage_peer_free(p->sp);
        p->sp = NULL;
        p->state = EP_READY;
        each_dispatch(p->e);
    }
}

static void
ep_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct epeer *p = arg;
    struct each *e = p->e;
    struct eattempt *a;
    char err[320];

    p->last_heard_ms = monotime_ms();
    switch (m->type) {
    case MSG_PING:
        channel_pong(ch, m);
        return;
    case MSG_PONG:
    case MSG_PROGRESS: /* a task that is an MPI program: not used here */
        return;
    case MSG_LAUNCH_REPLY:
        if (memcmp(m->u.reply.job, e->farm, WIRE_JOB_ID_LEN) == 0 &&
            p->state == EP_OPENING) {
            if (!m->u.reply.ok) {
                log_info("peer %s refuses the farm: %s", ep_host(p),
                         m->u.reply.reason);
                ep_lost(p, m->u.reply.reason);
                return;
            }
            p->state = EP_STAGING;
            p->sp = stage_peer_new(e->files, e->nfiles, p->ch);
            ep_pump(p);
            return;
        }
        if ((a = each_attempt_find(e, m->u.reply.job)) == NULL || a->p != p)
            return;
        /* Not there, not now (its owner is back): elsewhere, and that
         * peer gets nothing more for a while. */
        if (strncmp(m->u.reply.reason, WIRE_NOT_NOW,
                    strlen(WIRE_NOT_NOW)) == 0) {
            p->resting_until = monotime_ms() + EACH_REST_MS;
            each_attempt_lost(e, a, 0, m->u.reply.reason);
            each_dispatch(e);
            return;
        }
        /* The peer could not start it ("command not found on ws3"): the
         * task fails as a shell's would, with 127 (retries apply). */
        if (a->t->state != ET_DONE) {
            struct etask *t = a->t;

            snprintf(t->why, sizeof t->why, "%s", m->u.reply.reason);
            each_attempt_free(e, a);
            if (t->retries < e->js->retries) {
                t->retries++;
                if (t->live == 0)
                    each_requeue(e, t, 0);
            } else if (t->live == 0)
                each_task_done(e, t, 127, 0, ep_host(p));
        } else
            each_attempt_free(e, a);
        each_dispatch(e);
        return;
    case MSG_FILE_NEED:
    case MSG_FILE_DONE:
        if (p->sp == NULL)
            return;
        if (stage_peer_reply(p->sp, m, NULL, err, sizeof err) == -1) {
            each_say(e, "%s on %s", err, ep_host(p));
            ep_lost(p, err);
            return;
        }
        ep_pump(p);
        return;
    case MSG_NODE_PROOF:
        ep_proved(p, &m->u.node);
        return;
    case MSG_TASK_STARTED:
        if ((a = each_attempt_find(e, m->u.job)) != NULL && a->p == p &&
            a->started_ms == 0) {
            a->started_ms = monotime_ms();
            log_debug("task %llu started on %s",
                      (unsigned long long)a->t->num, ep_host(p));
        }
        return;
    case MSG_OUTPUT:
        if ((a = each_attempt_find(e, m->u.data.job)) == NULL || a->p != p)
            return;
        if (m->u.data.stream != 2 && each_spools(e))
            buf_add_spooled(&a->out, m->u.data.data, m->u.data.len);
        else
            buf_add(m->u.data.stream == 2 ? &a->err : &a->out,
                    m->u.data.data, m->u.data.len);
        return;
    case MSG_PROC_EXIT:
        each_proc_exit(p, &m->u.exit);
        return;
    case MSG_ERROR:
        ep_lost(p, m->u.error.text);
        return;
    default:
        break;
    }
    log_warnx("peer %s: unexpected %s", ep_host(p), msg_type_name(m->type));
    ep_lost(p, "protocol error");
}

static void
ep_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct epeer *p = arg;

    p->ch = NULL; /* closed by the channel itself */
    ep_lost(p, reason);
}

static void
ep_on_drain(struct channel *ch, void *arg)
{
    struct epeer *p = arg;

    ep_pump(p);
    /* Long inputs still to send go on as the backlog allows. */
    ep_feed(p);
}

/* --- the farm ----------------------------------------------------------- */

static double
each_median(struct each *e)
{
    double v[EACH_DURATIONS], x;
    size_t i, j, n = e->ndur;

    memcpy(v, e->durations, n * sizeof *v);
    for (i = 1; i < n; i++) { /* small: insertion sort */
        x = v[i];
        for (j = i; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Stragglers get a second copy on another peer; timeouts are enforced. */
static void
each_watch(struct each *e, uint64_t now)
{
    struct eattempt *a;
    struct epeer *p;
    double med = 0;
    uint64_t limit;

    if (e->ndur >= EACH_STRAGGLE_MIN)
        med = each_median(e);
    for (a = e->attempts; a != NULL; a = a->next) {
        if (a->killed || a->t->state == ET_DONE)
            continue;
        /* On a peer that fell silent (frozen, overloaded, cut off), a
         * task, running or queued, gets a copy elsewhere at once. */
        if (a->t->live == 1 && !e->stopping &&
            now - a->p->last_heard_ms > EACH_SILENT_MS &&
            (p = each_pick(e, a->p)) != NULL) {
            log_info("task %llu is on %s, silent for %.1f s: a second copy "
                     "on %s",
                     (unsigned long long)a->t->num, ep_host(a->p),
                     (double)(now - a->p->last_heard_ms) / 1000, ep_host(p));
            each_send_task(e, p, a->t);
            continue;
        }
        if (a->started_ms == 0)
            continue;
        if (e->js->task_timeout_s > 0 &&
            now - a->started_ms >= (uint64_t)e->js->task_timeout_s * 1000) {
            a->timed_out = 1;
            each_attempt_kill(a);
            continue;
        }
        limit = (uint64_t)(med * EACH_STRAGGLE_FACTOR * 1000);
        if (med > 0 && a->t->live == 1 && !e->stopping &&
            now - a->started_ms > limit &&
            now - a->started_ms > EACH_STRAGGLE_FLOOR_MS &&
            (p = each_pick(e, a->p)) != NULL) {
            log_info("task %llu straggles on %s (%.1f s, median %.2f s): a "
                     "second copy on %s",
                     (unsigned long long)a->t->num, ep_host(a->p),
                     (double)(now - a->started_ms) / 1000, med, ep_host(p));
            each_send_task(e, p, a->t);
        }
    }
}

static void
each_show_progress(struct each *e, uint64_t now)
{
    double secs = (double)(now - e->started_ms) / 1000;
    uint64_t running = 0;
    struct eattempt *a;

    double rate;
    uint64_t queued = 0, left;

    if (!isatty(STDERR_FILENO) || e->stopping)
        return;
    for (a = e->attempts; a != NULL; a = a->next) {
        running += a->started_ms != 0;
        queued += a->started_ms == 0;
    }
    rate = secs > 0 ? (double)e->ndone / secs : 0.0;
    fprintf(stderr, "\r\033[Kp2prun: %llu done, %llu running, %llu queued, "
                    "%llu failed, %.1f tasks/s",
            (unsigned long long)e->ndone, (unsigned long long)running,
            (unsigned long long)queued, (unsigned long long)e->nfailed, rate);
    if (e->total > e->ndone && rate > 0) {
        left = (uint64_t)((double)(e->total - e->ndone) / rate);
        fprintf(stderr, ", %llu:%02llu left", (unsigned long long)(left / 60),
                (unsigned long long)(left % 60));
    }
    e->progress = 1;
}

static void
each_finish(struct each *e, int status)
{
    size_t i;

    e->stopping = 1;
    if (e->status == -1)
        e->status = status;
    for (i = 0; i < e->npeers; i++)
        if (e->peers[i].ch != NULL) {
            channel_close(e->peers[i].ch);
            e->peers[i].ch = NULL;
            e->peers[i].state = EP_GONE;
        }
    event_base_loopexit(e->base, NULL);
}

static void
each_maybe_end(struct each *e)
{
    size_t i;
    int usable = 0;
    char mem[32], big[32];
    uint64_t largest = 0;

    if (e->stopping)
        return;
    if (e->in_eof && e->open_head == NULL && e->fresh_head == NULL &&
        e->attempts == NULL) {
        each_finish(e, e->nfailed ? 1 : 0);
        return;
    }
    for (i = 0; i < e->npeers; i++) {
        if (e->peers[i].state != EP_GONE)
            usable = 1;
        if (e->peers[i].state != EP_GONE &&
            e->peers[i].pe.res.mem_total > largest)
            largest = e->peers[i].pe.res.mem_total;
    }
    if (!usable) {
        each_say(e, "no peer left to run the tasks");
        each_finish(e, 1);
        return;
    }
    if (e->mem_need > 0 && largest > 0 && e->mem_need > largest) {
        each_say(e, "no peer has %s free for a task; the largest has %s",
                 cli_bytes(mem, sizeof mem, e->mem_need),
                 cli_bytes(big, sizeof big, largest));
        each_finish(e, 1);
    }
}

static void
each_tick(evutil_socket_t fd, short what, void *arg)
{
    struct each *e = arg;
    uint64_t now = monotime_ms();
    struct msg m;
    size_t i;

    for (i = 0; i < e->npeers; i++) {
        struct epeer *p = &e->peers[i];

        if (p->state == EP_GONE || p->state == EP_IDLE)
            continue;
        if (now - p->last_heard_ms > (uint64_t)e->js->lease_ms) {
            ep_lost(p, "silent for a whole lease");
            continue;
        }
        if (p->state >= EP_PROVING) {
            memset(&m, 0, sizeof m);
            m.type = MSG_PING;
            m.u.stamp = now;
            ep_send(p, &m);
        }
    }
    each_watch(e, now);
    each_dispatch(e);
    if (now - e->note_ms >= EACH_NOTE_MS) {
        e->note_ms = now;
        snnote_farm(e->note, e->farm, e->nread, e->ndone, e->nfailed, 0);
    }
    if (!e->stopping)
        each_show_progress(e, now);
}

static void
each_signal(evutil_socket_t sig, short what, void *arg)
{
    struct each *e = arg;
    struct eattempt *a;

    each_say(e, "signal %d: stopping every task", (int)sig);
    if (e->link != NULL)
        farmlink_signal(e->link, (int)sig);
    for (a = e->attempts; a != NULL; a = a->next)
        each_attempt_kill(a);
    e->status = 128 + (int)sig;
    each_finish(e, 128 + (int)sig);
}

static void
each_summary(struct each *e)
{
    size_t i;

    each_progress_clear(e);
    if (e->nsummary == 0)
        return;
    fprintf(stderr, "p2prun: %zu of %llu task%s failed:\n", e->nsummary,
            (unsigned long long)e->nread, e->nread == 1 ? "" : "s");
    for (i = 0; i < e->nsummary; i++)
        fprintf(stderr, "  %s\n", e->summary[i]);
}

/* --- the program calling tasks (--workers) ----------------------------- */

static void
each_link_call(void *arg, uint64_t task, uint8_t *payload, size_t len,
               int fd)
{
    struct each *e = arg;
    struct etask *t;
    char name[4096];
    ssize_t n;

    t = xcalloc(1, sizeof *t);
    t->num = task;
    t->linelen = len;
    if (fd > 0) {
        /* A long call stays in its file; its name (checked by the link)
         * is all that is held, for the summary. */
        t->in_fd = fd;
        n = pread(fd, name, sizeof name - 1, 0);
        name[n > 0 ? n : 0] = '\0';
        t->line = xstrdup(name);
    } else {
        /* NUL-ended, so that its name reads as a string (the summary). */
        t->line = xreallocarray(payload, len + 1, 1);
        t->line[len] = '\0';
    }
    *e->fresh_tail = t;
    e->fresh_tail = &t->next;
    e->nfresh++;
    if (e->nopen + e->nfresh >= EACH_OPEN_MAX)
        farmlink_pause(e->link, 1);
    each_dispatch(e);
}

static void
each_link_end(void *arg)
{
    struct each *e = arg;

    e->in_eof = 1;
    each_dispatch(e);
}

static void
each_link_gone(void *arg, const char *why)
{
    struct each *e = arg;
    struct eattempt *a;

    if (e->stopping)
        return;
    each_say(e, "%s: stopping every task", why);
    for (a = e->attempts; a != NULL; a = a->next)
        each_attempt_kill(a);
    each_finish(e, 1);
}

static const struct farmlink_cbs each_link_cbs = {
    .on_call = each_link_call,
    .on_end = each_link_end,
    .on_gone = each_link_gone,
};

int
each_run(const struct p2p_config *cfg, const struct p2p_group *g,
         const uint8_t user_pk[SEC_SIGN_PK_LEN],
         const uint8_t user_sk[SEC_SIGN_SK_LEN], const struct job_spec *js)
{
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    struct timeval tick = {0, EACH_TICK_MS * 1000};
    struct msg_list_reply list;
    struct each e;
    struct etask *t;
    struct eattempt *a;
    char err[1024];
    size_t i;
    int k, status;

    memset(&e, 0, sizeof e);
    e.group = g;
    e.user_pk = user_pk;
    e.user_sk = user_sk;
    e.js = js;
    e.status = -1;
    e.open_tail = &e.open_head;
    e.rq_tail = &e.rq_head;
    e.mem_need = js->mem_need;
    e.started_ms = monotime_ms();
    e.unordered = js->unordered || js->caller;
    e.fresh_tail = &e.fresh_head;
    sec_random(e.farm, sizeof e.farm);
    if (js->caller)
        e.in = NULL; /* the calls come from the program */
    else if (strcmp(js->each, "-") == 0)
        e.in = stdin;
    else if ((e.in = fopen(js->each, "re")) == NULL) {
        fprintf(stderr, "p2prun: --each %s: %s\n", js->each, strerror(errno));
        return 2;
    }
    if (e.in != stdin && isatty(STDERR_FILENO)) {
        /* A file: its lines are counted once, for the time left. */
        char buf[65536];
        size_t n, c;

        while ((n = fread(buf, 1, sizeof buf, e.in)) > 0)
            for (c = 0; c < n; c++)
                e.total += buf[c] == '\n';
        rewind(e.in);
    }
    if (js->results != NULL &&
        (e.results = fopen(js->results, "we")) == NULL) {
        fprintf(stderr, "p2prun: --results %s: %s\n", js->results,
                strerror(errno));
        if (e.in != stdin)
            fclose(e.in);
        return 2;
    }
    if (stage_prepare(js, &e.files, &e.nfiles, &e.prog, err, sizeof err) ==
        -1) {
        fprintf(stderr, "p2prun: %s\n", err);
        status = 2;
        goto out;
    }
    if (snquery_list(cfg, g, 5000, &list, err, sizeof err) == -1) {
        fprintf(stderr, "p2prun: %s\n", err);
        status = 1;
        goto out;
    }
    e.base = event_base_new();
    e.peers = xcalloc(list.npeers + 1, sizeof *e.peers);
    for (i = 0; i < list.npeers; i++) {
        const struct peer_entry *pe = &list.peers[i];

        if (pe->res.state == PEER_STATE_NOT_SHARING ||
            pe->res.state == PEER_STATE_OWNER_BUSY ||
            pe->res.slots_total == 0)
            continue;
        e.peers[e.npeers].e = &e;
        e.peers[e.npeers].pe = *pe;
        e.npeers++;
    }
    free(list.peers);
    if (e.npeers == 0) {
        fprintf(stderr, "p2prun: no peer shares slots for the tasks\n");
        status = 1;
        goto out;
    }
    for (i = 0; i < e.npeers; i++)
        ep_connect(&e.peers[i]);
    if (js->caller &&
        (e.link = farmlink_start(e.base, js->argv, &each_link_cbs, &e, err,
                                 sizeof err)) == NULL) {
        each_say(&e, "%s", err);
        each_finish(&e, 1);
    }
    for (k = 0; k < 3; k++) {
        e.ev_sig[k] = evsignal_new(e.base, sigs[k], each_signal, &e);
        evsignal_add(e.ev_sig[k], NULL);
    }
    e.note = snnote_new(e.base, cfg, g);
    e.ev_tick = event_new(e.base, -1, EV_PERSIST, each_tick, &e);
    evtimer_add(e.ev_tick, &tick);
    each_maybe_end(&e);
    if (!e.stopping)
        event_base_dispatch(e.base);

    /* Whatever is still running was killed (signal) or has no peer. */
    while ((a = e.attempts) != NULL)
        each_attempt_free(&e, a);
    each_flush(&e);
    if (e.link == NULL)
        each_summary(&e);
    status = e.status == -1 ? 1 : e.status;
    /* A caller's farm ends with the program, and as it does (unless
     * stopped by a signal). */
    if (e.link != NULL && (k = farmlink_finish(e.link)) >= 0 &&
        status < 128)
        status = k;
    farmlink_free(e.link);
    e.link = NULL;
    for (k = 0; k < 3; k++)
        if (e.ev_sig[k] != NULL)
            event_free(e.ev_sig[k]);
    if (e.ev_tick != NULL)
        event_free(e.ev_tick);
    /* The last figures, then the close, go out with the others. */
    snnote_farm(e.note, e.farm, e.nread, e.ndone, e.nfailed, 1);
    snnote_free(e.note);
    for (i = 0; i < e.npeers; i++) {
        if (e.peers[i].ch != NULL)
            channel_close(e.peers[i].ch);
        stage_peer_free(e.peers[i].sp);
    }
    /* Let the closes go out. */
    event_base_loop(e.base, EVLOOP_NONBLOCK);
    event_base_free(e.base);
out:
    while ((t = e.open_head) != NULL) {
        e.open_head = t->next;
        each_task_free(t);
    }
    while ((t = e.fresh_head) != NULL) {
        e.fresh_head = t->next;
        each_task_free(t);
    }
    for (i = 0; i < e.nsummary; i++)
        free(e.summary[i]);
    free(e.summary);
    free(e.peers);
    stage_free(e.files, e.nfiles);
    if (e.results != NULL)
        fclose(e.results);
    if (e.in != NULL && e.in != stdin)
        fclose(e.in);
    return status;
}
