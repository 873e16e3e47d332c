/*
 * p2prun --workers: the link between the farm's coordinator (each.c) and
 * the user's program that calls tasks through the C task API
 * (mpjrun/mpi/farm.c).  p2prun starts the program here, with one end of a
 * socket pair in P2P_FARM_FD; calls come in as task frames (numbered from
 * 1 in order, payload: the task's name, a NUL, the input) and outcomes go
 * back as result frames as they complete (proto/taskframe.h).  The
 * program is our user's, not a remote peer, but its bytes are checked all
 * the same: a malformed call ends the farm with a message, never p2prun.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "mpjrun.h"
#include "taskframe.h"
#include "xmalloc.h"

struct farmlink {
    const struct farmlink_cbs *cbs;
    void *arg;
    int fd;
    pid_t pid;
    uint64_t ncalls;
    struct taskframe_dec dec;
    struct event *ev_read, *ev_write;
    struct evbuffer *out;
    int paused, eof, gone;
    /* A long call being received, into an unlinked file (0: none) */
    int spool_fd;
    uint64_t spool_len;
};

/* Calls longer than this are spooled to a file as they come. */
#define FARMLINK_SPOOL_OVER (1024 * 1024)
/* A task name is within this many bytes of a call's start. */
#define FARMLINK_NAME_MAX 4096

static void
farmlink_gone(struct farmlink *fl, const char *why)
{
    if (fl->gone)
        return;
    fl->gone = 1;
    event_del(fl->ev_read);
    event_del(fl->ev_write);
    evbuffer_drain(fl->out, evbuffer_get_length(fl->out));
    fl->cbs->on_gone(fl->arg, why);
}

/* A piece of a long call: into its spool file; the call once whole.
 * -1 with why. */
static int
farmlink_piece(struct farmlink *fl, const struct taskframe *f, char *why,
               size_t whylen)
{
    char head[FARMLINK_NAME_MAX];
    ssize_t n;

    if (f->first) {
        if (f->task != fl->ncalls + 1) {
            snprintf(why, whylen, "a malformed call from the program: "
                     "call %llu after %llu", (unsigned long long)f->task,
                     (unsigned long long)fl->ncalls);
            return -1;
        }
        if ((fl->spool_fd = spool_tmpfile(NULL, why, whylen)) == -1) {
            fl->spool_fd = 0;
            return -1;
        }
        fl->spool_len = 0;
    }
    if (fl->spool_fd <= 0) {
        snprintf(why, whylen, "a malformed call from the program");
        return -1;
    }
    if (f->len > 0 && pwrite(fl->spool_fd, f->data, f->len,
                             (off_t)fl->spool_len) != (ssize_t)f->len) {
        snprintf(why, whylen, "spooling a call in $TMPDIR: %s",
                 strerror(errno));
        return -1;
    }
    fl->spool_len += f->len;
    if (!f->last)
        return 0;
    n = pread(fl->spool_fd, head, sizeof head, 0);
    if (n <= 0 || memchr(head, '\0', (size_t)n) == NULL) {
        snprintf(why, whylen, "a malformed call from the program: call "
                 "%llu has no task name", (unsigned long long)f->task);
        return -1;
    }
    fl->ncalls++;
    n = fl->spool_fd;
    fl->spool_fd = 0;
    fl->cbs->on_call(fl->arg, f->task, NULL, fl->spool_len, (int)n);
    return 0;
}

static void
farmlink_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct farmlink *fl = arg;
    struct taskframe f;
    uint8_t buf[65536];
    size_t off, used;
    ssize_t n;
    int rc;
    char why[200];

    n = read(fd, buf, sizeof buf);
    if (n == -1 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* The program closed the farm (or exited): no more calls. */
        event_del(fl->ev_read);
        fl->eof = 1;
        fl->cbs->on_end(fl->arg);
        return;
    }
    for (off = 0; off < (size_t)n && !fl->gone; off += used) {
        rc = taskframe_feed(&fl->dec, buf + off, (size_t)n - off, &used, &f);
        if (rc == -1) {
            snprintf(why, sizeof why, "a malformed call from the program: %s",
                     fl->dec.why);
            farmlink_gone(fl, why);
            return;
        }
        if (rc == 0)
            continue;
        if (rc == 2) {
            if (farmlink_piece(fl, &f, why, sizeof why) == -1) {
                farmlink_gone(fl, why);
                return;
            }
            continue;
        }
        if (f.task != fl->ncalls + 1 || memchr(f.data, '\0', f.len) == NULL) {
            snprintf(why, sizeof why,
                     "a malformed call from the program: call %llu after "
                     "%llu, or no task name",
                     (unsigned long long)f.task,
                     (unsigned long long)fl->ncalls);
            free(f.data);
            farmlink_gone(fl, why);
            return;
        }
        fl->ncalls++;
        fl->cbs->on_call(fl->arg, f.task, f.data, f.len, 0);
    }
}

static void
farmlink_flush(struct farmlink *fl)
{
    int n;

    while (!fl->gone && evbuffer_get_length(fl->out) > 0) {
        n = evbuffer_write(fl->out, fl->fd);
        if (n > 0)
            continue;
        /* 0: libevent's sendfile path would have blocked. */
        if (n == 0 || (n == -1 && (errno == EAGAIN || errno == EINTR))) {
            event_add(fl->ev_write, NULL);
            return;
        }
        farmlink_gone(fl, "the program no longer reads its results");
        return;
    }
}

static void
farmlink_write_cb(evutil_socket_t fd, short what, void *arg)
{
    farmlink_flush(arg);
}

struct farmlink *
farmlink_start(struct event_base *base, char **argv,
               const struct farmlink_cbs *cbs, void *arg, char *err,
               size_t errlen)
{
    struct farmlink *fl;
    int sv[2];
    char num[16];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        return NULL;
    }
    pid = fork();
    if (pid == -1) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return NULL;
    }
    if (pid == 0) {
        /* The program: its end of the link, its signals as they were. */
        signal(SIGPIPE, SIG_DFL);
        (void)fcntl(sv[1], F_SETFD, 0);
        snprintf(num, sizeof num, "%d", sv[1]);
        setenv("P2P_FARM_FD", num, 1);
        unsetenv("P2P_WORKER");
        execvp(argv[0], argv);
        fprintf(stderr, "p2prun: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(sv[1]);
    (void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fl = xcalloc(1, sizeof *fl);
    fl->cbs = cbs;
    fl->arg = arg;
    fl->fd = sv[0];
    fl->pid = pid;
    taskframe_dec_init(&fl->dec, TASKFRAME_TASK, EACH_CALL_MAX);
    taskframe_dec_stream(&fl->dec, FARMLINK_SPOOL_OVER);
    fl->out = evbuffer_new();
    /* Written only to the socket: a spooled result may go by sendfile
     * (else libevent maps the file, and its pages count as ours). */
    evbuffer_set_flags(fl->out, EVBUFFER_FLAG_DRAINS_TO_FD);
    fl->ev_read = event_new(base, fl->fd, EV_READ | EV_PERSIST,
                            farmlink_read_cb, fl);
    fl->ev_write = event_new(base, fl->fd, EV_WRITE, farmlink_write_cb, fl);
    event_add(fl->ev_read, NULL);
    return fl;
}

void
farmlink_pause(struct farmlink *fl, int pause)
{
    if (fl->gone || fl->eof || fl->paused == pause)
        return;
    fl->paused = pause;
    if (pause)
        event_del(fl->ev_read);
    else
        event_add(fl->ev_read, NULL);
}

/* A result written from where it was: freed once the buffer is done. */
static void
farmlink_free_result(const void *data, size_t len, void *arg)
{
    (void)len;
    (void)arg;
    free((void *)(uintptr_t)data);
}

void
farmlink_result(struct farmlink *fl, uint64_t task, int status, int signaled,
                void *data, size_t len)
{
    uint8_t hdr[TASKFRAME_RESULT_HDR];

    if (fl->gone || len == 0 || len > UINT32_MAX) {
        free(data);
        data = NULL;
        len = 0;
        if (fl->gone)
            return;
    }
    taskframe_result_header(hdr, task,
                            signaled ? TASKFRAME_LINK_SIGNALED | (status - 128)
                                     : status,
                            (uint32_t)len);
    evbuffer_add(fl->out, hdr, sizeof hdr);
    /* A long result is not copied: the buffer points at it. */
    if (len > 0 &&
        evbuffer_add_reference(fl->out, data, len, farmlink_free_result,
                               NULL) == -1) {
        free(data);
        farmlink_gone(fl, "out of memory queueing a result");
        return;
    }
    farmlink_flush(fl);
}

void
farmlink_result_file(struct farmlink *fl, uint64_t task, int fd,
                     uint64_t len)
{
    uint8_t hdr[TASKFRAME_RESULT_HDR];

    if (fl->gone || len > UINT32_MAX) {
        close(fd);
        if (!fl->gone)
            farmlink_result(fl, task, 1, 0, xstrdup("a result too long"),
                            17);
        return;
    }
    taskframe_result_header(hdr, task, 0, (uint32_t)len);
    evbuffer_add(fl->out, hdr, sizeof hdr);
    /* Sent from the file as the program reads (sendfile where it can):
     * never read into memory whole. */
    if (evbuffer_add_file(fl->out, fd, 0, (ev_off_t)len) == -1) {
        close(fd);
        farmlink_gone(fl, "a spooled result could not be sent");
        return;
    }
    farmlink_flush(fl);
}

void
farmlink_signal(struct farmlink *fl, int sig)
{
    if (fl->pid > 0)
        kill(fl->pid, sig);
}

int
farmlink_finish(struct farmlink *fl)
{
    int st = 0, i;

    /* What is written is for the program to read; then it has our EOF. */
    for (i = 0; i < 1000 && !fl->gone && evbuffer_get_length(fl->out) > 0;
         i++) {
        struct pollfd pfd = {fl->fd, POLLOUT, 0};

        if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
            break;
        if (pfd.revents & (POLLERR | POLLHUP))
            break;
        if (evbuffer_write(fl->out, fl->fd) == -1 && errno != EAGAIN &&
            errno != EINTR)
            break;
    }
    shutdown(fl->fd, SHUT_WR);
    while (waitpid(fl->pid, &st, 0) == -1 && errno == EINTR)
        ;
    fl->pid = -1;
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

void
farmlink_free(struct farmlink *fl)
{
    if (fl == NULL)
        return;
    if (fl->pid > 0) {
        kill(fl->pid, SIGTERM);
        (void)waitpid(fl->pid, NULL, 0);
    }
    event_free(fl->ev_read);
    event_free(fl->ev_write);
    evbuffer_free(fl->out);
    taskframe_dec_free(&fl->dec);
    if (fl->spool_fd > 0)
        close(fl->spool_fd);
    close(fl->fd);
    free(fl);
}
