/*
 * The peer's service: authenticated connections from the network's
 * programs.  A connection starts OPEN (only pings and the user's proof of
 * identity), becomes USER once the user's signature over the channel's
 * session id verifies, and may then reserve slots, stage files into the
 * cache, launch and kill jobs, and pass views of their membership on to
 * their processes.  Every message is checked against the
 * connection's state; anything out of place drops the connection.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit.h"
#include "channel.h"
#include "listener.h"
#include "log.h"
#include "monotime.h"
#include "nodeproof.h"
#include "peerd.h"
#include "xmalloc.h"

#define SERVICE_IDLE_MS 60000
/* Authenticated connections at most; those still in their handshake are
 * admitted by their own rules (admit.h), so that strangers cannot lock
 * out the coordinators. */
#define SERVICE_MAX_CONNS 256
/* An authenticated user may send address tables of large jobs. */
#define SVC_MAX_FRAME_USER (4 * 1024 * 1024)

enum svc_state {
    SVC_HANDSHAKE, /* under admission control: no group key proved yet */
    SVC_OPEN,      /* authenticated channel, user unknown */
    SVC_USER,      /* the user proved its key */
};

/* A file arriving on a connection. */
struct incoming {
    uint8_t hash[SEC_HASH_LEN];
    uint64_t size;
    struct cache_in *in;
    struct incoming *next;
};

struct svc_conn {
    struct service *svc;
    struct channel *ch;
    enum svc_state state;
    char user[80];
    char user_key[2 * SEC_SIGN_PK_LEN + 1]; /* verified, hex */
    int user_ok; /* passes the access lists */
    char user_why[WIRE_MAX_TEXT + 1];
    struct incoming *incoming;
    int nincoming;
    LIST_ENTRY(svc_conn) entry;
};

struct service {
    struct peerd *pd;
    struct listener *listener;
    struct admit *admit;
    LIST_HEAD(, svc_conn) conns;
    int nconns; /* past the handshake */
};

static void svc_on_ready(struct channel *, void *);
static void svc_on_msg(struct channel *, const struct msg *, void *);
static void svc_on_close(struct channel *, const char *, int, void *);
static void svc_on_drain(struct channel *, void *);

static const struct channel_cbs svc_cbs = {
    .on_ready = svc_on_ready,
    .on_msg = svc_on_msg,
    .on_close = svc_on_close,
    .on_drain = svc_on_drain,
};

int
svc_conn_send(struct svc_conn *c, const struct msg *m)
{
    return channel_send(c->ch, m);
}

int
svc_conn_local(const struct svc_conn *c, struct netaddr *na)
{
    return channel_local_addr(c->ch, na);
}

size_t
svc_conn_backlog(const struct svc_conn *c)
{
    return channel_output_len(c->ch);
}

const char *
svc_conn_name(const struct svc_conn *c)
{
    return c->user[0] ? c->user : channel_name(c->ch);
}

/* Forget a connection whose channel is closed or closing: unconfirmed
 * reservations go back, its jobs lose their coordinator. */
static void
svc_conn_free(struct svc_conn *c)
{
    struct peerd *pd = c->svc->pd;
    struct incoming *in;

    while ((in = c->incoming) != NULL) {
        c->incoming = in->next;
        cache_in_abort(in->in);
        free(in);
    }
    reserve_drop_owner(pd, c);
    farm_drop_owner(pd, c);
    job_orphan_owner(pd, c);
    LIST_REMOVE(c, entry);
    if (c->state != SVC_HANDSHAKE)
        c->svc->nconns--;
    free(c);
}

static void
svc_violation(struct svc_conn *c, const char *why)
{
    channel_reject(c->ch, why);
    svc_conn_free(c);
}

static void
svc_user_auth(struct svc_conn *c, const struct msg_user_auth *a)
{
    struct peerd *pd = c->svc->pd;
    uint8_t buf[16 + SEC_HASH_LEN];

    memcpy(buf, "p2p-user\0\0\0\0\0\0\0\0", 16);
    memcpy(buf + 16, channel_session_id(c->ch), SEC_HASH_LEN);
    if (sec_verify(a->signature, buf, sizeof buf, a->user_key) == -1) {
        svc_violation(c, "user signature does not verify");
        return;
    }
    c->state = SVC_USER;
    sec_hex(c->user_key, a->user_key, SEC_SIGN_PK_LEN);
    channel_set_max_frame(c->ch, SVC_MAX_FRAME_USER);
    channel_set_idle(c->ch, SERVICE_IDLE_MS);
    /* access_user() names the user even when it refuses. */
    c->user_ok = access_user(pd->cfg, a->user_key, c->user, sizeof c->user,
                             c->user_why, sizeof c->user_why) &&
                 access_host(pd->cfg, channel_peer_addr(c->ch), c->user_why,
                             sizeof c->user_why);
    log_debug("%s: user %s%s", channel_name(c->ch), c->user,
              c->user_ok ? "" : " (refused by the access lists)");
}

static void
svc_reserve(struct svc_conn *c, const struct msg_reserve *r)
{
    struct peerd *pd = c->svc->pd;
    struct msg m;
    uint32_t free_now = 0;
    int rc;

    memset(&m, 0, sizeof m);
    m.type = MSG_RESERVE_REPLY;
    memcpy(m.u.reply.job, r->job, WIRE_JOB_ID_LEN);
    if (!c->user_ok) {
        snprintf(m.u.reply.reason, sizeof m.u.reply.reason, "%s", c->user_why);
        log_info("reservation refused to %s: %s", c->user, c->user_why);
        channel_send(c->ch, &m);
        return;
    }
    rc = reserve_take(pd, r->job, r->slots, r->lease_ms, c, &free_now,
                      m.u.reply.reason, sizeof m.u.reply.reason);
    m.u.reply.ok = rc == 0;
    m.u.reply.granted = rc == 0 ? r->slots : free_now;
    if (rc == 0)
        log_info("%u slot%s reserved for %s (%u free)", r->slots,
                 r->slots == 1 ? "" : "s", c->user, free_now);
    else
        log_info("reservation refused to %s: %s", c->user, m.u.reply.reason);
    channel_send(c->ch, &m);
}

/* Does this connection hold slots here?  Only then may it stage files. */
static int
svc_holds_slots(struct svc_conn *c)
{
    struct hold *h;

    for (h = c->svc->pd->holds; h != NULL; h = h->next)
        if (h->owner == c)
            return 1;
    /* A farm's tasks are staged once, before any of them holds a slot. */
    return farm_owned_by(c->svc->pd, c);
}

static void
svc_file_reply(struct svc_conn *c, enum msg_type type,
               const uint8_t hash[SEC_HASH_LEN], int flag, const char *why)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = type;
    memcpy(m.u.file.hash, hash, SEC_HASH_LEN);
    m.u.file.flag = flag;
    if (why != NULL)
        snprintf(m.u.file.reason, sizeof m.u.file.reason, "%s", why);
    channel_send(c->ch, &m);
}

static void
svc_file_offer(struct svc_conn *c, const struct msg_file *f)
{
    struct peerd *pd = c->svc->pd;
    struct incoming *in;
    char err[256];

    if (!svc_holds_slots(c)) {
        svc_file_reply(c, MSG_FILE_DONE, f->hash, 0,
                       "no reservation here: stage files after reserving");
        return;
    }
    if (cache_has(pd->cache, f->hash, f->size)) {
        svc_file_reply(c, MSG_FILE_NEED, f->hash, 0, NULL);
        return;
    }
    for (in = c->incoming; in != NULL; in = in->next)
        if (memcmp(in->hash, f->hash, SEC_HASH_LEN) == 0) {
            svc_violation(c, "file offered twice");
            return;
        }
    if (c->nincoming >= WIRE_MAX_FILES) {
        svc_violation(c, "too many files in flight");
        return;
    }
    in = xcalloc(1, sizeof *in);
    memcpy(in->hash, f->hash, SEC_HASH_LEN);
    in->size = f->size;
    if ((in->in = cache_in_begin(pd->cache, f->hash, f->size, err,
                                 sizeof err)) == NULL) {
        free(in);
        svc_file_reply(c, MSG_FILE_DONE, f->hash, 0, err);
        return;
    }
    if (f->size == 0) { /* nothing to wait for */
        if (cache_in_finish(in->in, err, sizeof err) == -1)
            svc_file_reply(c, MSG_FILE_DONE, f->hash, 0, err);
        else
            svc_file_reply(c, MSG_FILE_NEED, f->hash, 0, NULL);
        free(in);
        return;
    }
    in->next = c->incoming;
    c->incoming = in;
    c->nincoming++;
    svc_file_reply(c, MSG_FILE_NEED, f->hash, 1, NULL);
}

static void
svc_file_chunk(struct svc_conn *c, const struct msg_data *d)
{
    struct incoming **ip, *in;
    char err[256];
    int rc;

    for (ip = &c->incoming; *ip != NULL; ip = &(*ip)->next)
        if (memcmp((*ip)->hash, d->hash, SEC_HASH_LEN) == 0)
            break;
    if ((in = *ip) == NULL) {
        svc_violation(c, "chunk of a file that was not offered");
        return;
    }
    rc = cache_in_write(in->in, d->data, d->len, err, sizeof err);
    reserve_renew(c->svc->pd, c, monotime_ms());
    if (rc == 0 && cache_in_received(in->in) < in->size)
        return;
    *ip = in->next;
    c->nincoming--;
    if (rc == -1) {
        cache_in_abort(in->in);
        svc_file_reply(c, MSG_FILE_DONE, in->hash, 0, err);
    } else if (cache_in_finish(in->in, err, sizeof err) == -1)
        svc_file_reply(c, MSG_FILE_DONE, in->hash, 0, err);
    else {
        char hex[2 * SEC_HASH_LEN + 1];

        log_info("received file %.16s (%llu bytes) from %s",
                 sec_hex(hex, in->hash, SEC_HASH_LEN),
                 (unsigned long long)in->size, c->user);
        svc_file_reply(c, MSG_FILE_DONE, in->hash, 1, NULL);
    }
    free(in);
}

/* A farm opens: staging is allowed from now on, tasks may follow. */
static void
svc_farm_open(struct svc_conn *c, const struct msg_farm *f)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_LAUNCH_REPLY;
    memcpy(m.u.reply.job, f->farm, WIRE_JOB_ID_LEN);
    if (!c->user_ok)
        snprintf(m.u.reply.reason, sizeof m.u.reply.reason, "%s",
                 c->user_why);
    else
        m.u.reply.ok = farm_open(c->svc->pd, c, f, c->user_key,
                                 m.u.reply.reason,
                                 sizeof m.u.reply.reason) == 0;
    if (!m.u.reply.ok)
        log_info("farm refused to %s: %s", c->user, m.u.reply.reason);
    channel_send(c->ch, &m);
}

static void
svc_launch(struct svc_conn *c, const struct msg_launch *l)
{
    struct msg m;

    memset(&m, 0, sizeof m);
    m.type = MSG_LAUNCH_REPLY;
    memcpy(m.u.reply.job, l->job, WIRE_JOB_ID_LEN);
    if (l->task != 0) {
        /* Queued: the peer says when it starts, or why it cannot. */
        if (farm_task(c->svc->pd, c, l, m.u.reply.reason,
                      sizeof m.u.reply.reason) == -1)
            channel_send(c->ch, &m);
        return;
    }
    m.u.reply.ok = job_launch(c->svc->pd, c, l, NULL, m.u.reply.reason,
                              sizeof m.u.reply.reason) == 0;
    channel_send(c->ch, &m);
}

static void
svc_on_msg(struct channel *ch, const struct msg *m, void *arg)
{
    struct svc_conn *c = arg;
    struct peerd *pd = c->svc->pd;
    struct job *j;
    struct hold *h;
    char why[96];

    if (m->type == MSG_PING) {
        channel_pong(ch, m);
        job_heard(pd, c);
        return;
    }
    if (m->type == MSG_NODE_CHALLENGE) {
        struct msg proof;

        /* Anyone holding the group key may ask who we are: p2prun before
         * it reserves, a supernode checking our registered address.  We
         * have one key; an asker expecting another learns which. */
        nodeproof_make(ch, pd->node_pk, pd->node_sk, &proof);
        channel_send(ch, &proof);
        return;
    }
    if (c->state == SVC_OPEN) {
        if (m->type == MSG_USER_AUTH) {
            svc_user_auth(c, &m->u.auth);
            return;
        }
        goto violation;
    }
    job_heard(pd, c);
    switch (m->type) {
    case MSG_RESERVE:
        svc_reserve(c, &m->u.reserve);
        return;
    case MSG_RELEASE:
        h = reserve_find(pd, m->u.job);
        if (h != NULL && h->owner == c && h->expires_ms != 0)
            reserve_release(pd, m->u.job);
        return;
    case MSG_FILE_OFFER:
        svc_file_offer(c, &m->u.file);
        return;
    case MSG_FILE_CHUNK:
        svc_file_chunk(c, &m->u.data);
        return;
    case MSG_LAUNCH:
        svc_launch(c, &m->u.launch);
        return;
    case MSG_KILL:
        if ((j = job_find(pd, m->u.job)) != NULL && job_owner_is(j, c))
            job_kill(j, "cancelled by its coordinator");
        else
            (void)farm_cancel(pd, c, m->u.job);
        return;
    case MSG_FARM_OPEN:
        svc_farm_open(c, &m->u.farm);
        return;
    case MSG_TABLE:
        if ((j = job_find(pd, m->u.table.job)) != NULL && job_owner_is(j, c))
            job_table(j, &m->u.table);
        return;
    case MSG_VIEW:
        if ((j = job_find(pd, m->u.view.job)) != NULL && job_owner_is(j, c))
            job_view(j, &m->u.view);
        return;
    case MSG_OUTPUT_HOLD:
        if ((j = job_find(pd, m->u.note.job)) != NULL && job_owner_is(j, c))
            job_output_hold(j, m->u.note.rank, m->u.note.replica,
                            (int)m->u.note.value);
        return;
    default:
        break;
    }
violation:
    snprintf(why, sizeof why, "%s not allowed here", msg_type_name(m->type));
    svc_violation(c, why);
}

static void
svc_on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    svc_conn_free(arg);
}

static void
svc_on_drain(struct channel *ch, void *arg)
{
    struct svc_conn *c = arg;

    job_resume_output(c->svc->pd, c);
}

/* The handshake is done: the other side holds the group key. */
static void
svc_on_ready(struct channel *ch, void *arg)
{
    struct svc_conn *c = arg;
    struct service *svc = c->svc;
    int ms = svc->pd->group.handshake_ms;

    if (svc->nconns >= SERVICE_MAX_CONNS) {
        log_warnx("service: %d connections open; refusing %s", svc->nconns,
                  channel_name(ch));
        channel_reject(ch, "peer busy: too many connections");
        svc_conn_free(c);
        return;
    }
    c->state = SVC_OPEN;
    svc->nconns++;
    /* Until a user proves its key, a connection may not idle for long. */
    channel_set_idle(ch, ms > 1000 ? ms : 1000);
}

static void
svc_accept(int fd, void *arg)
{
    struct service *svc = arg;
    struct channel_params cp;
    struct svc_conn *c;

    /* Listed first: making room may close older connections. */
    c = xcalloc(1, sizeof *c);
    c->svc = svc;
    c->state = SVC_HANDSHAKE;
    LIST_INSERT_HEAD(&svc->conns, c, entry);
    group_params(&svc->pd->group, FRAME_MAX_REQUEST, SERVICE_IDLE_MS, &cp);
    if ((c->ch = admit_accept(svc->admit, fd, &cp, &svc_cbs, c)) == NULL) {
        LIST_REMOVE(c, entry);
        free(c);
    }
}

struct service *
service_new(struct peerd *pd, int fd)
{
    struct admit_params ap;
    struct service *svc;

    svc = xcalloc(1, sizeof *svc);
    svc->pd = pd;
    LIST_INIT(&svc->conns);
    ap.max = pd->cfg->preauth_max;
    ap.per_source = pd->cfg->preauth_per_host;
    svc->admit = admit_new(pd->base, &ap);
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
    admit_free(svc->admit);
    free(svc);
}
