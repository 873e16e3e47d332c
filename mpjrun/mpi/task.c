/*
 * Task functions (p2p_task.h): the registry P2P_TASK fills before main,
 * the result a task writes, and a worker's side of the worker protocol
 * (docs/tasks.md): when peerd starts the program as a farm's worker,
 * p2p_farm_open calls task_serve, which reads task frames on stdin (the
 * task's name, a NUL, its input), calls the function and answers with a
 * result frame on a private copy of stdout, until stdin closes.  The
 * program's own stdout is pointed at stderr so that a printf in a task
 * cannot break the protocol; it reaches the user as the task's stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "p2p_task.h"
#include "task.h"
#include "taskframe.h"

#define TASK_REGISTRY_MAX 256

static struct {
    char name[P2P_TASK_NAME_MAX + 1];
    p2p_task_fn fn;
} registry[TASK_REGISTRY_MAX];
static size_t nregistry;

int
p2p_task_register(const char *name, p2p_task_fn fn)
{
    size_t i, n;

    if (name == NULL || fn == NULL || (n = strlen(name)) == 0 ||
        n > P2P_TASK_NAME_MAX || nregistry == TASK_REGISTRY_MAX)
        return P2P_EINVAL;
    for (i = 0; i < nregistry; i++)
        if (strcmp(registry[i].name, name) == 0)
            return P2P_EINVAL;
    memcpy(registry[nregistry].name, name, n + 1);
    registry[nregistry].fn = fn;
    nregistry++;
    return P2P_OK;
}

p2p_task_fn
task_lookup(const char *name)
{
    size_t i;

    for (i = 0; i < nregistry; i++)
        if (strcmp(registry[i].name, name) == 0)
            return registry[i].fn;
    return NULL;
}

/* --- results ------------------------------------------------------------- */

int
p2p_result_write(p2p_result *r, const void *buf, size_t len)
{
    char *np;
    size_t cap;

    if (r == NULL || (buf == NULL && len > 0))
        return P2P_EINVAL;
    if (len > SIZE_MAX / 2 - r->len)
        return P2P_ENOMEM;
    if (r->len + len > r->cap) {
        cap = (r->len + len) * 2 + 64;
        if ((np = realloc(r->p, cap)) == NULL)
            return P2P_ENOMEM;
        r->p = np;
        r->cap = cap;
    }
    if (len > 0)
        memcpy(r->p + r->len, buf, len);
    r->len += len;
    return P2P_OK;
}

int
p2p_result_printf(p2p_result *r, const char *fmt, ...)
{
    va_list ap;
    char small[256], *big;
    int n, rc;

    if (r == NULL || fmt == NULL)
        return P2P_EINVAL;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return P2P_EINVAL;
    if ((size_t)n < sizeof small)
        return p2p_result_write(r, small, (size_t)n);
    if ((big = malloc((size_t)n + 1)) == NULL)
        return P2P_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    rc = p2p_result_write(r, big, (size_t)n);
    free(big);
    return rc;
}

int
p2p_result_fail(p2p_result *r, int code, const char *fmt, ...)
{
    va_list ap;

    if (code < 1 || code > 255)
        code = 1;
    if (r == NULL)
        return code;
    r->failed = 1;
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(r->message, sizeof r->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Call a task on a payload (name, NUL, input): the status, and in *r its
 * result, or its message when it failed. */
int
task_call(const uint8_t *payload, size_t len, struct p2p_result *r)
{
    const char *name = (const char *)payload;
    const uint8_t *nul = memchr(payload, '\0', len);
    p2p_task_fn fn;
    char *in;
    size_t inlen;
    int status;

    memset(r, 0, sizeof *r);
    if (nul == NULL) {
        snprintf(r->message, sizeof r->message, "a call without a task name");
        return 1;
    }
    if ((fn = task_lookup(name)) == NULL) {
        snprintf(r->message, sizeof r->message,
                 "no task named \"%.80s\" in this program", name);
        return 127;
    }
    /* The input, NUL-terminated for the task's convenience. */
    inlen = len - (size_t)(nul + 1 - payload);
    if ((in = malloc(inlen + 1)) == NULL) {
        snprintf(r->message, sizeof r->message, "out of memory");
        return 1;
    }
    memcpy(in, nul + 1, inlen);
    in[inlen] = '\0';
    status = fn(in, inlen, r);
    free(in);
    if (status < 0 || status > 255)
        status = 1;
    if (status == 0 && r->failed)
        status = 1;
    if (status != 0 && r->message[0] == '\0')
        snprintf(r->message, sizeof r->message, "task %s returned %d", name,
                 status);
    return status;
}

void
task_result_take(struct p2p_result *r, void **out, size_t *outlen)
{
    if (r->len > 0)
        r->p[r->len] = '\0'; /* room: cap > len after any write */
    *out = r->len > 0 ? r->p : NULL;
    *outlen = r->len;
    if (r->len == 0)
        free(r->p);
    memset(r, 0, sizeof *r);
}

void
task_result_clear(struct p2p_result *r)
{
    free(r->p);
    memset(r, 0, sizeof *r);
}

/* --- the worker ---------------------------------------------------------- */

/* Answer one task frame on fd. */
static int
task_answer(int fd, const struct taskframe *f)
{
    uint8_t hdr[TASKFRAME_RESULT_HDR];
    struct p2p_result r;
    const void *out;
    size_t outlen;
    int status, rc;

    status = task_call(f->data, f->len, &r);
    if (status == 0) {
        out = r.p;
        outlen = r.len;
    } else {
        out = r.message;
        outlen = strlen(r.message);
    }
    if (outlen > UINT32_MAX)
        outlen = 0; /* cannot happen below the frame limit peerd takes */
    /* What the task printed is its own, before its answer. */
    fflush(stdout);
    fflush(stderr);
    taskframe_result_header(hdr, f->task, status, (uint32_t)outlen);
    rc = fdio_write_all(fd, hdr, sizeof hdr) == 0 &&
                 fdio_write_all(fd, out, outlen) == 0
             ? 0
             : -1;
    task_result_clear(&r);
    return rc;
}

void
task_serve(void)
{
    struct taskframe_dec dec;
    struct taskframe f;
    uint8_t buf[65536];
    size_t off, used;
    ssize_t n;
    int out, rc;

    /* Frames on a copy of stdout; the program's stdout becomes stderr. */
    signal(SIGPIPE, SIG_IGN);
    if ((out = dup(STDOUT_FILENO)) == -1 ||
        dup2(STDERR_FILENO, STDOUT_FILENO) == -1)
        _exit(1);
    taskframe_dec_init(&dec, TASKFRAME_TASK,
                       P2P_TASK_INPUT_MAX + P2P_TASK_NAME_MAX + 1);
    for (;;) {
        n = read(STDIN_FILENO, buf, sizeof buf);
        if (n == -1 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the farm is over */
        for (off = 0; off < (size_t)n; off += used) {
            rc = taskframe_feed(&dec, buf + off, (size_t)n - off, &used, &f);
            if (rc == -1) {
                fprintf(stderr, "p2p worker: %s\n", dec.why);
                _exit(1);
            }
            if (rc == 1) {
                rc = task_answer(out, &f);
                free(f.data);
                if (rc == -1)
                    _exit(1);
            }
        }
    }
    taskframe_dec_free(&dec);
    fflush(stdout);
    exit(0);
}
