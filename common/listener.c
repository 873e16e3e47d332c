/*
 * Accepting connections for the daemons.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "listener.h"
#include "log.h"
#include "xmalloc.h"

#define LISTENER_BATCH 64 /* accepts per wakeup, so one flood cannot starve */

struct listener {
    int fd;
    struct event *ev;
    struct event *pause; /* re-enables accepting after EMFILE */
    listener_fn fn;
    void *arg;
};

static void
listener_resume(evutil_socket_t fd, short what, void *arg)
{
    struct listener *l = arg;

    event_add(l->ev, NULL);
}

static void
listener_accept(evutil_socket_t fd, short what, void *arg)
{
    struct listener *l = arg;
    struct timeval tv = {0, 100000};
    int i, s;

    for (i = 0; i < LISTENER_BATCH; i++) {
        s = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (s != -1) {
            l->fn(s, l->arg);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
            errno == ENOMEM) {
            log_warn("accept (pausing 100 ms)");
            event_del(l->ev);
            evtimer_add(l->pause, &tv);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK)
            log_warn("accept");
        return;
    }
}

struct listener *
listener_new(struct event_base *base, int fd, listener_fn fn, void *arg)
{
    struct listener *l;

    l = xcalloc(1, sizeof *l);
    l->fd = fd;
    l->fn = fn;
    l->arg = arg;
    l->ev = event_new(base, fd, EV_READ | EV_PERSIST, listener_accept, l);
    l->pause = evtimer_new(base, listener_resume, l);
    event_add(l->ev, NULL);
    return l;
}

void
listener_free(struct listener *l)
{
    if (l == NULL)
        return;
    event_free(l->ev);
    event_free(l->pause);
    close(l->fd);
    free(l);
}
