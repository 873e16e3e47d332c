/*
 * The local control socket (STATE_DIR/control.sock) that p2pshare talks
 * to: one request, one answer, then the connection closes.  The caller is
 * checked with the kernel's peer credentials (SO_PEERCRED): only root and
 * peerd's own user may steer the machine's sharing; anybody else gets a
 * refusal that says so.  The wire is one SOCK_SEQPACKET message each way:
 *
 *   request  "on" | "off" | "idle" | "default" | "status" | "evict"
 *   answer   "ok\n" and text, or "error: why\n"
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "peerd.h"
#include "xmalloc.h"

#define CONTROL_MAX_CONNS 8
#define CONTROL_ANSWER_MAX 16384

struct control_conn {
    struct control *ctl;
    int fd;
    struct event *ev;
};

struct control {
    struct peerd *pd;
    char *path;
    int fd;
    struct event *ev;
    struct control_conn *conns[CONTROL_MAX_CONNS];
};

static void
control_conn_free(struct control_conn *cc)
{
    int i;

    for (i = 0; i < CONTROL_MAX_CONNS; i++)
        if (cc->ctl->conns[i] == cc)
            cc->ctl->conns[i] = NULL;
    event_free(cc->ev);
    close(cc->fd);
    free(cc);
}

/* Carry out one request; the answer in buf. */
static void
control_request(struct peerd *pd, const char *req, char *buf, size_t len)
{
    size_t n;

    if (strcmp(req, "on") == 0)
        owner_set_mode(pd, SHARE_ALWAYS);
    else if (strcmp(req, "off") == 0)
        owner_set_mode(pd, SHARE_NEVER);
    else if (strcmp(req, "idle") == 0)
        owner_set_mode(pd, SHARE_IDLE);
    else if (strcmp(req, "default") == 0)
        owner_set_mode(pd, -1);
    else if (strcmp(req, "evict") == 0)
        owner_evict_now(pd);
    else if (strcmp(req, "status") != 0) {
        snprintf(buf, len, "error: unknown request '%.32s'\n", req);
        return;
    }
    n = (size_t)snprintf(buf, len, "ok\n");
    n += owner_status(pd, buf + n, len - n);
    if (n < len - 1)
        n += job_describe(pd, buf + n, len - n);
    if (n < len - 1)
        n += farm_describe(pd, buf + n, len - n);
    if (n < len - 1 && job_count(pd) == 0)
        snprintf(buf + n, len - n, "no jobs running here\n");
}

static void
control_conn_cb(evutil_socket_t fd, short what, void *arg)
{
    struct control_conn *cc = arg;
    struct ucred cred;
    socklen_t clen = sizeof cred;
    char req[64], *answer;
    ssize_t n;

    n = recv(fd, req, sizeof req - 1, 0);
    if (n == -1 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        control_conn_free(cc);
        return;
    }
    req[n] = '\0';
    req[strcspn(req, "\r\n")] = '\0';
    answer = xcalloc(1, CONTROL_ANSWER_MAX);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == -1 ||
        (cred.uid != 0 && cred.uid != geteuid())) {
        log_warnx("control: '%.32s' refused for uid %d", req,
                  clen == sizeof cred ? (int)cred.uid : -1);
        snprintf(answer, CONTROL_ANSWER_MAX,
                 "error: permission denied: only root and uid %u (this "
                 "peerd's user) may change its sharing\n",
                 (unsigned)geteuid());
    } else {
        log_info("control: '%.32s' from uid %u", req, (unsigned)cred.uid);
        control_request(cc->ctl->pd, req, answer, CONTROL_ANSWER_MAX);
    }
    (void)send(fd, answer, strlen(answer), MSG_DONTWAIT | MSG_NOSIGNAL);
    free(answer);
    control_conn_free(cc);
}

static void
control_accept_cb(evutil_socket_t fd, short what, void *arg)
{
    struct control *ctl = arg;
    struct control_conn *cc;
    int s, i;

    if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1)
        return;
    for (i = 0; i < CONTROL_MAX_CONNS && ctl->conns[i] != NULL; i++)
        ;
    if (i == CONTROL_MAX_CONNS) {
        /* Local, and at most one request each: a full table is a flood. */
        close(s);
        return;
    }
    cc = xcalloc(1, sizeof *cc);
    cc->ctl = ctl;
    cc->fd = s;
    cc->ev = event_new(ctl->pd->base, s, EV_READ | EV_PERSIST,
                       control_conn_cb, cc);
    event_add(cc->ev, NULL);
    ctl->conns[i] = cc;
}

struct control *
control_new(struct peerd *pd, char *err, size_t errlen)
{
    struct sockaddr_un sun;
    struct control *ctl;
    int fd;

    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if ((size_t)snprintf(sun.sun_path, sizeof sun.sun_path,
                         "%s/control.sock", pd->state_dir) >=
        sizeof sun.sun_path) {
        snprintf(err, errlen, "%s/control.sock: path too long",
                 pd->state_dir);
        return NULL;
    }
    (void)unlink(sun.sun_path);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1 || bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
        listen(fd, 8) == -1) {
        snprintf(err, errlen, "%s: %s", sun.sun_path, strerror(errno));
        if (fd != -1)
            close(fd);
        return NULL;
    }
    /* Anybody may connect; the peer credentials decide (with a message
     * that says so, rather than a bare "permission denied"). */
    (void)chmod(sun.sun_path, 0666);
    ctl = xcalloc(1, sizeof *ctl);
    ctl->pd = pd;
    ctl->fd = fd;
    ctl->path = xstrdup(sun.sun_path);
    ctl->ev = event_new(pd->base, fd, EV_READ | EV_PERSIST, control_accept_cb,
                        ctl);
    event_add(ctl->ev, NULL);
    return ctl;
}

void
control_free(struct control *ctl)
{
    int i;

    if (ctl == NULL)
        return;
    for (i = 0; i < CONTROL_MAX_CONNS; i++)
        if (ctl->conns[i] != NULL)
            control_conn_free(ctl->conns[i]);
    event_free(ctl->ev);
    close(ctl->fd);
    (void)unlink(ctl->path);
    free(ctl->path);
    free(ctl);
}
