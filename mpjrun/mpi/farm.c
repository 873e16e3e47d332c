/*
 * The caller's side of the C task API (p2p_task.h): a farm is a link to
 * p2prun (a socket it hands over in P2P_FARM_FD when it starts the program
 * with --workers), over which calls go as task frames (the task's name, a
 * NUL, the input; numbered from 1 in submission order) and outcomes come
 * back as result frames, as they complete (proto/taskframe.h).  p2prun is
 * the farm's coordinator, exactly as for --each: the same dispatch, fair
 * share, retries, stragglers and lost peers (mpjrun/each.c).
 *
 * Writes are buffered and never block without reading at the same time:
 * p2prun may be writing outcomes while we write calls.  Without a link
 * (started on its own, or opts->local) each call runs here at submit.
 *
 * Handles: every farm is on a list of live farms, checked on every call,
 * so that a closed or forged handle is an error, not a crash.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2p_task.h"
#include "task.h"
#include "taskframe.h"

/* Calls buffered before a write is forced. */
#define FARM_WRITE_BATCH (64 * 1024)
/* An input this large is written from the caller's buffer during
 * p2p_submit, not copied into the batch. */
#define FARM_DIRECT_MIN (1024 * 1024)

struct ready {
    p2p_outcome o;
    struct ready *next;
};

struct p2p_farm {
    int fd; /* link to p2prun; -1: tasks run here */
    int lost;
    uint64_t next_id, outstanding;
    uint8_t *ob; /* calls not yet written: ob[ooff..olen) */
    size_t olen, ooff, ocap;
    struct taskframe_dec dec;
    struct ready *rhead, **rtail; /* outcomes not yet waited for */
    char err[256];
    struct p2p_farm *next_live;
};

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct p2p_farm *live;

static int
farm_valid(const p2p_farm *f)
{
    const struct p2p_farm *g;

    if (f == NULL)
        return 0;
    pthread_mutex_lock(&live_lock);
    for (g = live; g != NULL && g != f; g = g->next_live)
        ;
    pthread_mutex_unlock(&live_lock);
    return g != NULL;
}

static int __attribute__((format(printf, 3, 4)))
farm_fail(p2p_farm *f, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(f->err, sizeof f->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *
p2p_task_strerror(int code)
{
    switch (code) {
    case P2P_OK:
        return "success";
    case P2P_EINVAL:
        return "invalid argument";
    case P2P_EHANDLE:
        return "not an open farm";
    case P2P_ENOTASK:
        return "no task of that name";
    case P2P_ETOOBIG:
        return "input too long";
    case P2P_ENOMEM:
        return "out of memory";
    case P2P_ELOST:
        return "the farm is gone";
    case P2P_ENONE:
        return "no task outstanding";
    case P2P_EFAILED:
        return "a task failed";
    default:
        return "unknown error";
    }
}

const char *
p2p_farm_error(const p2p_farm *f)
{
    if (!farm_valid(f))
        return "not an open farm";
    return f->err;
}

/* --- outcomes ------------------------------------------------------------ */

static void
farm_push(p2p_farm *f, struct ready *r)
{
    r->next = NULL;
    *f->rtail = r;
    f->rtail = &r->next;
}

static struct ready *
farm_pop(p2p_farm *f)
{
    struct ready *r = f->rhead;

    if (r != NULL && (f->rhead = r->next) == NULL)
        f->rtail = &f->rhead;
    return r;
}

/* An outcome from a result frame (its data taken). */
static int
farm_outcome(p2p_farm *f, struct taskframe *fr)
{
    struct ready *r;
    size_t n;

    if (fr->task == 0 || fr->task > f->next_id || f->outstanding == 0) {
        free(fr->data);
        f->lost = 1;
        return farm_fail(f, P2P_ELOST, "p2prun answered a call never made "
                                       "(%llu)",
                         (unsigned long long)fr->task);
    }
    if ((r = calloc(1, sizeof *r)) == NULL) {
        free(fr->data);
        return P2P_ENOMEM;
    }
    r->o.id = fr->task;
    if (fr->status & TASKFRAME_LINK_SIGNALED) {
        r->o.signal = fr->status & 0x7f;
        r->o.status = 128 + r->o.signal;
    } else
        r->o.status = fr->status & 0xff;
    if (r->o.status == 0 && fr->len > 0) {
        r->o.out = fr->data;
        r->o.outlen = fr->len;
    } else {
        n = fr->len < sizeof r->o.message - 1 ? fr->len
                                              : sizeof r->o.message - 1;
        memcpy(r->o.message, fr->data, n);
        r->o.message[n] = '\0';
        free(fr->data);
    }
    f->outstanding--;
    farm_push(f, r);
    return P2P_OK;
}

/* Read what p2prun has sent; wait for it when block.  0, or an error. */
static int
farm_read(p2p_farm *f, int block)
{
    uint8_t buf[65536];
    struct taskframe fr;
    struct pollfd pfd = {f->fd, POLLIN, 0};
    size_t off, used;
    ssize_t n;
    int rc;

    for (;;) {
        n = read(f->fd, buf, sizeof buf);
        if (n == -1 && errno == EINTR)
            continue;
        if (n == -1 && errno == EAGAIN) {
            if (!block)
                return P2P_OK;
            if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
                return farm_fail(f, P2P_ELOST, "poll: %s", strerror(errno));
            continue;
        }
        if (n <= 0) {
            f->lost = 1;
            return farm_fail(f, P2P_ELOST, "p2prun closed the farm%s%s",
                             n == -1 ? ": " : "",
                             n == -1 ? strerror(errno) : "");
        }
        for (off = 0; off < (size_t)n; off += used) {
            rc = taskframe_feed(&f->dec, buf + off, (size_t)n - off, &used,
                                &fr);
            if (rc == -1) {
                f->lost = 1;
                return farm_fail(f, P2P_ELOST, "from p2prun: %s",
                                 f->dec.why);
            }
            if (rc == 1 && (rc = farm_outcome(f, &fr)) != P2P_OK)
                return rc;
        }
        if ((size_t)n < sizeof buf)
            return P2P_OK;
        block = 0;
    }
}

/* Write buf from *off on; with block, all of it (reading outcomes while
 * p2prun cannot take more). */
static int
farm_send(p2p_farm *f, const uint8_t *buf, size_t len, size_t *off,
          int block)
{
    struct pollfd pfd;
    ssize_t w;
    int rc;

    while (*off < len) {
        w = send(f->fd, buf + *off, len - *off, MSG_NOSIGNAL);
        if (w > 0) {
            *off += (size_t)w;
            continue;
        }
        if (w == -1 && errno == EINTR)
            continue;
        if (w == -1 && errno != EAGAIN) {
            f->lost = 1;
            return farm_fail(f, P2P_ELOST, "writing to p2prun: %s",
                             strerror(errno));
        }
        if (!block)
            break;
        pfd.fd = f->fd;
        pfd.events = POLLIN | POLLOUT;
        pfd.revents = 0;
        if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
            return farm_fail(f, P2P_ELOST, "poll: %s", strerror(errno));
        if ((pfd.revents & (POLLIN | POLLHUP)) &&
            (rc = farm_read(f, 0)) != P2P_OK)
            return rc;
    }
    return P2P_OK;
}

/* Write what is queued; without block, only what the socket takes now. */
static int
farm_flush(p2p_farm *f, int block)
{
    int rc = farm_send(f, f->ob, f->olen, &f->ooff, block);

    if (rc == P2P_OK && f->ooff == f->olen)
        f->ooff = f->olen = 0;
    return rc;
}

/* --- the farm ------------------------------------------------------------ */

p2p_farm *
p2p_farm_open(int *argc, char ***argv, const p2p_farm_opts *opts)
{
    const char *link = getenv(TASK_LINK_ENV);
    p2p_farm *f;
    char *end;
    long fd = -1;

    (void)argc;
    (void)argv;
    if (getenv(TASK_WORKER_ENV) != NULL && (opts == NULL || !opts->local))
        task_serve();
    if (link != NULL && (opts == NULL || !opts->local)) {
        errno = 0;
        fd = strtol(link, &end, 10);
        if (errno != 0 || *end != '\0' || fd < 0 || fd > 65535 ||
            fcntl((int)fd, F_GETFD) == -1) {
            errno = EBADF;
            return NULL;
        }
        /* Not for the program's children. */
        unsetenv(TASK_LINK_ENV);
        (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
        (void)fcntl((int)fd, F_SETFL, fcntl((int)fd, F_GETFL) | O_NONBLOCK);
    }
    if ((f = calloc(1, sizeof *f)) == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    f->fd = (int)fd;
    f->rtail = &f->rhead;
    taskframe_dec_init(&f->dec, TASKFRAME_RESULT, P2P_TASK_RESULT_MAX);
    pthread_mutex_lock(&live_lock);
    f->next_live = live;
    live = f;
    pthread_mutex_unlock(&live_lock);
    return f;
}

void
p2p_outcome_free(p2p_outcome *o)
{
    if (o == NULL)
        return;
    free(o->out);
    o->out = NULL;
    o->outlen = 0;
}

int
p2p_farm_close(p2p_farm *f)
{
    struct p2p_farm **gp;
    struct ready *r;
    int rc = P2P_OK;

    if (!farm_valid(f))
        return P2P_EHANDLE;
    pthread_mutex_lock(&live_lock);
    for (gp = &live; *gp != f; gp = &(*gp)->next_live)
        ;
    *gp = f->next_live;
    pthread_mutex_unlock(&live_lock);
    if (f->fd != -1) {
        if (!f->lost)
            rc = farm_flush(f, 1);
        /* The end of the calls: p2prun ends the farm when all are done. */
        shutdown(f->fd, SHUT_WR);
        while (rc == P2P_OK && !f->lost && f->outstanding > 0)
            rc = farm_read(f, 1);
        close(f->fd);
    }
    while ((r = farm_pop(f)) != NULL) {
        p2p_outcome_free(&r->o);
        free(r);
    }
    taskframe_dec_free(&f->dec);
    free(f->ob);
    free(f);
    return rc;
}

/* Run a call here, now: its outcome is ready at once. */
static int
farm_run_here(p2p_farm *f, const uint8_t *payload, size_t len)
{
    struct p2p_result res;
    struct ready *r;

    if ((r = calloc(1, sizeof *r)) == NULL)
        return farm_fail(f, P2P_ENOMEM, "out of memory");
    r->o.id = f->next_id;
    r->o.status = task_call(payload, len, &res);
    if (r->o.status == 0)
        task_result_take(&res, &r->o.out, &r->o.outlen);
    else {
        snprintf(r->o.message, sizeof r->o.message, "%s", res.message);
        task_result_clear(&res);
    }
    farm_push(f, r);
    return P2P_OK;
}

int
p2p_submit(p2p_farm *f, const char *task, const void *in, size_t inlen,
           p2p_task_id *id)
{
    size_t nlen, need, cap;
    uint8_t *p;
    int rc, direct;

    if (!farm_valid(f))
        return P2P_EHANDLE;
    if (task == NULL || (in == NULL && inlen > 0))
        return farm_fail(f, P2P_EINVAL, "p2p_submit: a NULL task or input");
    nlen = strlen(task);
    if (nlen == 0 || nlen > P2P_TASK_NAME_MAX)
        return farm_fail(f, P2P_EINVAL, "p2p_submit: a task name of %zu "
                                        "bytes",
                         nlen);
    if (task_lookup(task) == NULL)
        return farm_fail(f, P2P_ENOTASK, "no task named \"%s\" is "
                                         "registered (P2P_TASK)",
                         task);
    if (inlen > P2P_TASK_INPUT_MAX)
        return farm_fail(f, P2P_ETOOBIG, "an input of %zu bytes, limit %d",
                         inlen, P2P_TASK_INPUT_MAX);
    if (f->lost)
        return P2P_ELOST;
    need = TASKFRAME_TASK_HDR + nlen + 1 + inlen;
    /* A large input goes from the caller's buffer straight to p2prun
     * (which spools it): never a second copy here. */
    direct = f->fd != -1 && inlen >= FARM_DIRECT_MIN;
    if (direct)
        need -= inlen;
    if (f->olen + need > f->ocap) {
        cap = (f->olen + need) * 2;
        if ((p = realloc(f->ob, cap)) == NULL)
            return farm_fail(f, P2P_ENOMEM, "out of memory");
        f->ob = p;
        f->ocap = cap;
    }
    p = f->ob + f->olen;
    taskframe_task_header(p, f->next_id + 1, (uint32_t)(nlen + 1 + inlen));
    memcpy(p + TASKFRAME_TASK_HDR, task, nlen + 1);
    if (inlen > 0 && !direct)
        memcpy(p + TASKFRAME_TASK_HDR + nlen + 1, in, inlen);
    f->next_id++;
    if (id != NULL)
        *id = f->next_id;
    if (f->fd == -1) {
        rc = farm_run_here(f, p + TASKFRAME_TASK_HDR, need - TASKFRAME_TASK_HDR);
        return rc;
    }
    f->olen += need;
    f->outstanding++;
    if (direct) {
        size_t off = 0;

        if ((rc = farm_flush(f, 1)) != P2P_OK)
            return rc;
        return farm_send(f, in, inlen, &off, 1);
    }
    /* Small calls go together; a call is never held past a wait. */
    if (f->olen - f->ooff >= FARM_WRITE_BATCH)
        return farm_flush(f, 1);
    return farm_flush(f, 0);
}

int
p2p_wait_any(p2p_farm *f, p2p_outcome *out)
{
    struct ready *r;
    int rc;

    if (!farm_valid(f))
        return P2P_EHANDLE;
    if (out == NULL)
        return farm_fail(f, P2P_EINVAL, "p2p_wait_any: a NULL outcome");
    while (f->rhead == NULL) {
        if (f->fd == -1 || f->outstanding == 0)
            return farm_fail(f, P2P_ENONE, "no task is outstanding");
        if (f->lost)
            return P2P_ELOST;
        if ((rc = farm_flush(f, 1)) != P2P_OK ||
            (rc = farm_read(f, 1)) != P2P_OK)
            return rc;
    }
    r = farm_pop(f);
    *out = r->o;
    free(r);
    return P2P_OK;
}

int
p2p_map(p2p_farm *f, const char *task, const void *const *ins,
        const size_t *inlens, size_t n, void **outs, size_t *outlens,
        int *statuses)
{
    struct ready *other = NULL, **otail = &other, *r;
    p2p_task_id first;
    p2p_outcome o;
    size_t i, got = 0;
    int rc, failed = 0;

    if (!farm_valid(f))
        return P2P_EHANDLE;
    if (n > 0 && (ins == NULL || inlens == NULL))
        return farm_fail(f, P2P_EINVAL, "p2p_map: NULL inputs");
    first = f->next_id + 1;
    for (i = 0; i < n; i++)
        if ((rc = p2p_submit(f, task, ins[i], inlens[i], NULL)) != P2P_OK)
            return rc;
    if (outs != NULL)
        memset(outs, 0, n * sizeof *outs);
    while (got < n) {
        if ((rc = p2p_wait_any(f, &o)) != P2P_OK)
            break;
        if (o.id < first || o.id >= first + n) {
            /* An earlier p2p_submit's: kept for its p2p_wait_any. */
            if ((r = calloc(1, sizeof *r)) == NULL) {
                p2p_outcome_free(&o);
                rc = P2P_ENOMEM;
                break;
            }
            r->o = o;
            *otail = r;
            otail = &r->next;
            continue;
        }
        i = (size_t)(o.id - first);
        if (statuses != NULL)
            statuses[i] = o.status;
        if (outlens != NULL)
            outlens[i] = o.outlen;
        if (outs != NULL)
            outs[i] = o.out;
        else
            free(o.out);
        if (o.status != 0) {
            if (!failed)
                farm_fail(f, P2P_EFAILED, "call %zu: %s", i, o.message);
            failed = 1;
        }
        got++;
    }
    /* The others go first, as they came before. */
    if (other != NULL) {
        *otail = f->rhead;
        if (f->rhead == NULL)
            f->rtail = otail;
        f->rhead = other;
    }
    if (got < n)
        return rc;
    return failed ? P2P_EFAILED : P2P_OK;
}
