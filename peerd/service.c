/*
 * The peer's own service: authenticated connections from other programs
 * of the network.  For now it answers round-trip probes; the reservation
 * and launch requests are added here.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "listener.h"
#include "log.h"
#include "peerd.h"
#include "xmalloc.h"

#define SERVICE_IDLE_MS 60000
#define SERVICE_MAX_CONNS 256

struct svc_conn {
    struct service *svc;
    struct channel *ch;
    LIST_ENTRY(svc_conn) entry;
};

struct service {
    struct peerd *pd;
    struct listener *listener;
    LIST_HEAD(, svc_conn) conns;
    int nconns;
};

static void svc_on_msg(struct channel *, const struct msg *, void *);
static void svc_on_close(struct channel *, const char *, int, void *);

static const struct channel_cbs svc_cbs = {NULL, svc_on_msg, svc_on_close};

static void
svc_conn_free(struct svc_conn *c)
{
    LIST_REMOVE(c, entry);
    c->svc->nconns--;
    free(c);
}

static void
svc_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct svc_conn *c = arg;
    struct msg reply;

    memset(&reply, 0, sizeof reply);
    if (m->type == MSG_PING) {
        reply.type = MSG_PONG;
        reply.u.stamp = m->u.stamp;
        channel_send(ch, &reply);
        return;
    }
    log_warnx("%s: dropped: protocol violation: %s not served here",
              channel_name(ch), msg_type_name(m->type));
    reply.type = MSG_ERROR;
    reply.u.error.code = 1;
    snprintf(reply.u.error.text, sizeof reply.u.error.text,
             "%s not served by peerd", msg_type_name(m->type));
    channel_close_after(ch, &reply);
    svc_conn_free(c);
}

static void
svc_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    svc_conn_free(arg);
}

static void
svc_accept(int fd, void *arg)
{
    struct service *svc = arg;
    struct channel_params cp;
    struct svc_conn *c;

    if (svc->nconns >= SERVICE_MAX_CONNS) {
        log_warnx("service: connection limit (%d) reached; refusing",
                  SERVICE_MAX_CONNS);
        close(fd);
        return;
    }
    c = xcalloc(1, sizeof *c);
    c->svc = svc;
    group_params(&svc->pd->group, FRAME_MAX_REQUEST, SERVICE_IDLE_MS, &cp);
    if ((c->ch = channel_accept(svc->pd->base, fd, &cp, &svc_cbs, c)) == NULL) {
        free(c);
        return;
    }
    LIST_INSERT_HEAD(&svc->conns, c, entry);
    svc->nconns++;
}

struct service *
service_new(struct peerd *pd, int fd)
{
    struct service *svc;

    svc = xcalloc(1, sizeof *svc);
    svc->pd = pd;
    LIST_INIT(&svc->conns);
    svc->listener = listener_new(pd->base, fd, svc_accept, svc);
    return svc;
}

void
service_free(struct service *svc)
{
    struct svc_conn *c;

    if (svc == NULL)
        return;
    listener_free(svc->listener);
    while ((c = LIST_FIRST(&svc->conns)) != NULL) {
        channel_close(c->ch);
        svc_conn_free(c);
    }
    free(svc);
}
