/*
 * The replication core's I/O (replication/rep_io.h) over the library's
 * real machinery: frames go out on the transport's connections, views
 * come in and suspicions and progress reports go out on the control
 * socket to peerd, accepted messages go to matching and finished work
 * completes requests.  One instance per process, made by MPI_Init
 * (env.c) for a replicated job; the unit tests pass their own.
 */
#include <sys/socket.h>

#include <time.h>

#include "core.h"
#include "rep_io.h"

static int repio_ctl = -1; /* the control socket to peerd */

static void
repio_send(void *ctx, int proc, struct wire_hdr *h, const void *data,
           size_t len)
{
    struct conn *c = conn_to_proc(proc);

    (void)ctx;
    if (c != NULL)
        (void)conn_send(c, h, data, len, 1, NULL);
}

static int
repio_proc_of(void *ctx, const struct conn *c)
{
    (void)ctx;
    return conn_proc(c);
}

static void
repio_drop(void *ctx, int proc)
{
    (void)ctx;
    transport_drop(proc);
}

static long
repio_ctl_recv(void *ctx, void *buf, size_t cap)
{
    (void)ctx;
    return (long)recv(repio_ctl, buf, cap, MSG_DONTWAIT);
}

static int
repio_ctl_send(void *ctx, const void *msg, size_t len)
{
    (void)ctx;
    return send(repio_ctl, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT) ==
                   (ssize_t)len
               ? 0
               : -1;
}

static uint64_t
repio_now_ms(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
repio_deliver(void *ctx, struct conn *c, const struct wire_hdr *h,
              const void *payload)
{
    (void)ctx;
    match_incoming(c, h, payload);
}

static int
repio_resume(void *ctx, int src, uint64_t lseq, struct conn *c, uint32_t sid)
{
    (void)ctx;
    return match_resume(src, lseq, c, sid);
}

static uint64_t
repio_orphan(void *ctx, int src)
{
    (void)ctx;
    return match_orphan(src);
}

static void
repio_decided(void *ctx, uint32_t dn, int src)
{
    (void)ctx;
    match_decided(dn, src);
}

static void
repio_rematch(void *ctx)
{
    (void)ctx;
    match_rematch();
}

static void
repio_complete(void *ctx, struct mpii_req *r, int err)
{
    (void)ctx;
    req_complete(r, err);
}

static int
repio_wait_until(void *ctx, int (*cond)(void *), void *arg)
{
    (void)ctx;
    return req_wait_until(cond, arg);
}

static void
repio_log(void *ctx, const char *line)
{
    (void)ctx;
    mpii_log("%s", line);
}

/* The I/O for this process's replication state; ctl is the control
 * socket (-1: none, then no views and no reports). */
const struct rep_io *
repio_make(int ctl)
{
    static struct rep_io io = {
        .send = repio_send,
        .proc_of = repio_proc_of,
        .drop = repio_drop,
        .now_ms = repio_now_ms,
        .deliver = repio_deliver,
        .resume = repio_resume,
        .orphan = repio_orphan,
        .decided = repio_decided,
        .rematch = repio_rematch,
        .complete = repio_complete,
        .wait_until = repio_wait_until,
        .log = repio_log,
    };

    repio_ctl = ctl;
    io.ctl_recv = ctl != -1 ? repio_ctl_recv : NULL;
    io.ctl_send = ctl != -1 ? repio_ctl_send : NULL;
    return &io;
}
