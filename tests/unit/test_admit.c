/*
 * Admission of unauthenticated connections (proto/admit.c) on a real
 * libevent base over loopback TCP.  Clients connect from 127.0.0.2,
 * 127.0.0.3, ... (distinct sources), the test accepts each socket itself
 * and hands it to admit_accept(), then checks who was pushed out: the
 * oldest of a source over its share, the oldest of all over the cap, a
 * silent connection before one that sent its first frame, and that the
 * books are right when channels authenticate, die or outlive the
 * admission.  Every wait has a 5 s guard so that no case can hang.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "admit.h"
#include "channel.h"
#include "frame.h"
#include "handshake.h"
#include "log.h"
#include "netaddr.h"
#include "sec.h"
#include "test.h"
#include "test_loop.h"

#define GROUP "test-group"
#define NCONN 32

/* One accepted connection: the server channel's callbacks land here. */
struct conn {
    int cfd;               /* the client's end, raw */
    struct channel *ch;    /* the server's channel; NULL once closed */
    int ready, closed, fault;
    char reason[300];
};

static int lfd = -1;
static struct sockaddr_in laddr;
static uint8_t key[SEC_KEY_LEN];
static struct channel_params params;
static struct conn conns[NCONN];
static int nconns;
static int ndropwarn, nsummary; /* detail lines, summaries */

static void
log_sink(int level, const char *line)
{
    if (level != P2P_LOG_WARN)
        return;
    if (strstr(line, ": dropped: ") != NULL)
        ndropwarn++;
    else if (strncmp(line, "dropped ", 8) == 0)
        nsummary++;
}

static void
on_ready(struct channel *ch, void *arg)
{
    struct conn *c = arg;

    c->ready++;
}

static void
on_msg(struct channel *ch, const struct msg *m, void *arg)
{
}

static void
on_close(struct channel *ch, const char *reason, int fault, void *arg)
{
    struct conn *c = arg;

    CHECK(c->ch == ch);
    c->closed++;
    c->fault = fault;
    snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "(null)");
    c->ch = NULL;
}

static const struct channel_cbs cbs = {
    .on_ready = on_ready,
    .on_msg = on_msg,
    .on_close = on_close,
};

static int
setup(void)
{
    socklen_t len = sizeof laddr;

    signal(SIGPIPE, SIG_IGN);
    if (sec_init() == -1) {
        test_fail(__FILE__, __LINE__, "sec_init");
        return -1;
    }
    log_set_sink(log_sink);
    log_set_verbosity(P2P_LOG_WARN);
    ndropwarn = nsummary = 0;
    memset(key, 0x5a, sizeof key);
    memset(&params, 0, sizeof params);
    params.group_key = key;
    params.group = GROUP;
    params.handshake_ms = 30000; /* nobody finishes unless a case says so */
    params.max_frame = FRAME_MAX_REQUEST;
    memset(conns, 0, sizeof conns);
    nconns = 0;
    base = event_base_new();
    memset(&laddr, 0, sizeof laddr);
    laddr.sin_family = AF_INET;
    laddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (base == NULL ||
        (lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
        bind(lfd, (struct sockaddr *)&laddr, sizeof laddr) == -1 ||
        listen(lfd, NCONN) == -1 ||
        getsockname(lfd, (struct sockaddr *)&laddr, &len) == -1) {
        test_fail(__FILE__, __LINE__, "cannot listen on loopback");
        return -1;
    }
    return 0;
}

static void
teardown(struct admit *adm)
{
    int i;

    admit_free(adm);
    for (i = 0; i < nconns; i++) {
        if (conns[i].ch != NULL)
            channel_close(conns[i].ch);
        if (conns[i].cfd != -1)
            close(conns[i].cfd);
    }
    pump(10); /* closed channels are freed on the loop's next pass */
    close(lfd);
    lfd = -1;
    event_base_free(base);
    base = NULL;
}

/* Connect from 127.0.0.<host> and let admission take the accepted end.
 * Returns the connection's index, or -1. */
static int
connect_from(struct admit *adm, int host)
{
    struct sockaddr_in from;
    struct conn *c;
    int cfd, sfd;

    if (nconns == NCONN)
        return -1;
    memset(&from, 0, sizeof from);
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
    if ((cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
        return -1;
    if (bind(cfd, (struct sockaddr *)&from, sizeof from) == -1 ||
        connect(cfd, (struct sockaddr *)&laddr, sizeof laddr) == -1 ||
        (sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
        close(cfd);
        return -1;
    }
    c = &conns[nconns];
    memset(c, 0, sizeof *c);
    c->cfd = cfd;
    c->ch = admit_accept(adm, sfd, &params, &cbs, c);
    if (c->ch == NULL) {
        close(cfd);
        return -1;
    }
    return nconns++;
}

/* The client sends a valid first handshake frame and nothing more. */
static int
send_hello(struct conn *c)
{
    struct handshake *hs;
    uint8_t buf[FRAME_HEADER_LEN + HS_MSG_MAX];
    size_t n;
    int rc;

    if ((hs = handshake_new(HS_CLIENT, key, GROUP)) == NULL)
        return -1;
    n = handshake_start(hs, buf + FRAME_HEADER_LEN);
    frame_header_write(buf, FRAME_HANDSHAKE, (uint32_t)n);
    rc = write(c->cfd, buf, FRAME_HEADER_LEN + n) ==
                 (ssize_t)(FRAME_HEADER_LEN + n)
             ? 0
             : -1;
    handshake_free(hs);
    return rc;
}

/* A fresh loop and listener, and an admission with these limits; NULL
 * (the failure recorded) when the loop or listener cannot be had. */
static struct admit *
start(int max, int per_source)
{
    struct admit_params p = {.max = max, .per_source = per_source};

    if (setup() == -1)
        return NULL;
    return admit_new(base, &p);
}

/* Over its share, a source loses its own oldest; other sources keep
 * theirs. */
static void
t_per_source(void)
{
    struct admit *adm;
    int a1, a2, b1, a3;

    if ((adm = start(10, 2)) == NULL)
        return;
    a1 = connect_from(adm, 2);
    a2 = connect_from(adm, 2);
    b1 = connect_from(adm, 3);
    if (!CHECK(a1 >= 0 && a2 >= 0 && b1 >= 0)) {
        teardown(adm);
        return;
    }
    CHECK_EQ_INT(admit_count(adm), 3);
    CHECK_EQ_INT(admit_dropped(adm), 0);
    a3 = connect_from(adm, 2);
    CHECK(a3 >= 0);
    CHECK_EQ_INT(conns[a1].closed, 1);
    CHECK(conns[a1].fault);
    CHECK(strstr(conns[a1].reason, "from this address") != NULL);
    CHECK_EQ_INT(conns[a2].closed, 0);
    CHECK_EQ_INT(conns[b1].closed, 0);
    CHECK_EQ_INT(admit_count(adm), 3);
    CHECK_EQ_INT(admit_dropped(adm), 1);
    CHECK_EQ_INT(ndropwarn, 1);
    teardown(adm);
}

/* Over the cap, the oldest of all goes, whatever its source. */
static void
t_cap(void)
{
    struct admit *adm;
    int i, idx[4];

    if ((adm = start(3, 3)) == NULL)
        return;
    for (i = 0; i < 3; i++)
        idx[i] = connect_from(adm, 2 + i);
    idx[3] = connect_from(adm, 9);
    if (!CHECK(idx[0] >= 0 && idx[1] >= 0 && idx[2] >= 0 && idx[3] >= 0)) {
        teardown(adm);
        return;
    }
    CHECK_EQ_INT(conns[idx[0]].closed, 1);
    CHECK(strstr(conns[idx[0]].reason, "the oldest goes") != NULL);
    for (i = 1; i < 4; i++)
        CHECK_EQ_INT(conns[idx[i]].closed, 0);
    CHECK_EQ_INT(admit_count(adm), 3);
    CHECK_EQ_INT(admit_dropped(adm), 1);
    teardown(adm);
}

/* A connection that has sent its first frame is spared while an older
 * silent one can go, from one source and from all. */
static void
t_silent_first(void)
{
    struct admit *adm;
    int a1, a2, a3, a4, b1, c1;

    if ((adm = start(4, 3)) == NULL)
        return;
    a1 = connect_from(adm, 2);
    a2 = connect_from(adm, 2);
    a3 = connect_from(adm, 2);
    if (!CHECK(a1 >= 0 && a2 >= 0 && a3 >= 0) ||
        !CHECK_EQ_INT(send_hello(&conns[a1]), 0)) {
        teardown(adm);
        return;
    }
    WAIT_FOR(conns[a1].ch != NULL && channel_got_first(conns[a1].ch));
    a4 = connect_from(adm, 2);
    CHECK(a4 >= 0);
    CHECK_EQ_INT(conns[a1].closed, 0);
    CHECK_EQ_INT(conns[a2].closed, 1);
    CHECK_EQ_INT(conns[a3].closed, 0);
    /* The cap (4): a1 is the oldest of all but not silent; a3 goes. */
    b1 = connect_from(adm, 3);
    CHECK(b1 >= 0);
    c1 = connect_from(adm, 4);
    CHECK(c1 >= 0);
    CHECK_EQ_INT(conns[a1].closed, 0);
    CHECK_EQ_INT(conns[a3].closed, 1);
    CHECK_EQ_INT(admit_count(adm), 4);
    CHECK_EQ_INT(admit_dropped(adm), 2);
    teardown(adm);
}

/* When every connection has sent its first frame, the oldest goes. */
static void
t_all_spoke(void)
{
    struct admit *adm;
    int a1, a2, a3;

    if ((adm = start(10, 2)) == NULL)
        return;
    a1 = connect_from(adm, 2);
    a2 = connect_from(adm, 2);
    if (!CHECK(a1 >= 0 && a2 >= 0)) {
        teardown(adm);
        return;
    }
    CHECK_EQ_INT(send_hello(&conns[a1]), 0);
    CHECK_EQ_INT(send_hello(&conns[a2]), 0);
    WAIT_FOR(conns[a1].ch != NULL && channel_got_first(conns[a1].ch) &&
             conns[a2].ch != NULL && channel_got_first(conns[a2].ch));
    a3 = connect_from(adm, 2);
    CHECK(a3 >= 0);
    CHECK_EQ_INT(conns[a1].closed, 1);
    CHECK_EQ_INT(conns[a2].closed, 0);
    teardown(adm);
}

/* A connection that dies leaves the books; its source's share is free
 * again, and a source with nobody left is forgotten. */
static void
t_leave(void)
{
    struct admit *adm;
    int a1, a2, a3;

    if ((adm = start(10, 2)) == NULL)
        return;
    a1 = connect_from(adm, 2);
    a2 = connect_from(adm, 2);
    if (!CHECK(a1 >= 0 && a2 >= 0)) {
        teardown(adm);
        return;
    }
    close(conns[a1].cfd);
    conns[a1].cfd = -1;
    WAIT_FOR(conns[a1].closed == 1);
    CHECK_EQ_INT(admit_count(adm), 1);
    a3 = connect_from(adm, 2);
    CHECK(a3 >= 0);
    CHECK_EQ_INT(conns[a2].closed, 0);
    CHECK_EQ_INT(admit_count(adm), 2);
    /* The one that died unauthenticated counts as a drop; nobody was
     * pushed out for the newcomer. */
    CHECK_EQ_INT(admit_dropped(adm), 1);
    close(conns[a2].cfd);
    conns[a2].cfd = -1;
    close(conns[a3].cfd);
    conns[a3].cfd = -1;
    WAIT_FOR(conns[a2].closed == 1 && conns[a3].closed == 1);
    CHECK_EQ_INT(admit_count(adm), 0);
    teardown(adm);
}

/* The channels outlive a freed admission: closing or losing them later
 * must not touch it (the sanitizer build checks the memory). */
static void
t_free_first(void)
{
    struct admit *adm;
    int a1, a2;

    if ((adm = start(10, 2)) == NULL)
        return;
    a1 = connect_from(adm, 2);
    a2 = connect_from(adm, 3);
    if (!CHECK(a1 >= 0 && a2 >= 0)) {
        teardown(adm);
        return;
    }
    admit_free(adm);
    close(conns[a1].cfd);
    conns[a1].cfd = -1;
    WAIT_FOR(conns[a1].closed == 1);
    channel_close(conns[a2].ch);
    conns[a2].ch = NULL;
    teardown(NULL);
}

/* A flood from one address: the share holds, drops are counted, and the
 * log gets a few lines, not one per drop. */
static void
t_flood_log(void)
{
    struct admit *adm;
    int i, n = 0;

    if ((adm = start(16, 2)) == NULL)
        return;
    for (i = 0; i < 30; i++)
        if (connect_from(adm, 7) >= 0)
            n++;
    CHECK_EQ_INT(n, 30);
    CHECK_EQ_INT(admit_count(adm), 2);
    CHECK_EQ_INT(admit_dropped(adm), 28);
    CHECK(ndropwarn <= ADMIT_LOG_BUDGET);
    CHECK(ndropwarn >= 1);
    teardown(adm);
    /* admit_free() wrote the summary of the interval. */
    CHECK_EQ_INT(nsummary, 1);
}

static const struct test_case cases[] = {
    {"per source", t_per_source},
    {"cap", t_cap},
    {"silent goes first", t_silent_first},
    {"all spoke: oldest goes", t_all_spoke},
    {"leave", t_leave},
    {"freed before its channels", t_free_first},
    {"flood log", t_flood_log},
};

TEST_MAIN(cases)
