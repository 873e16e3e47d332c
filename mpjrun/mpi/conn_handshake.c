/*
 * Opening a connection between two processes of a job: the listener,
 * connecting (blocking with R = 1, from the progress loop with
 * replicas), accepting, and the handshake that proves both ends hold the
 * job's key (wireframe.c's messages and MACs) and keys each direction's
 * AEAD; shm: in it two processes on one host agree on a segment.  Frames
 * sent to a connection still opening wait on it (replicas only).
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aead.h"
#include "conn.h"
#include "ctl.h"
#include "rep.h"
#include "tcpcc.h"

#define RBUF_PLAIN (HDR + MPII_EAGER_MAX + 64 * 1024)
#define HS_PENDING_MS 10000 /* an accepted connection must prove itself */
/* Connections waiting for accept: on demand, hundreds of ranks may reach
 * one (a gather's root) before it next runs; the kernel caps this at
 * net.core.somaxconn. */
#define LISTEN_BACKLOG 4096
#define SOCK_BUF (4 * 1024 * 1024) /* socket buffers, when the kernel allows */
/* shm: segments made for hellos not yet proven; beyond it a stranger's
 * offers get TCP (each holds about 1 MiB of /dev/shm until its handshake
 * ends or times out). */
#define SHM_PENDING_MAX 8

int
transport_listen(const char *host, uint16_t *port)
{
    struct addrinfo hints, *res;
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd, one = 1;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    if (getaddrinfo(host, "0", &hints, &res) != 0)
        return -1;
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == -1 ||
        bind(fd, res->ai_addr, res->ai_addrlen) == -1 ||
        listen(fd, LISTEN_BACKLOG) == -1 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
        if (fd != -1)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    snprintf(tp.host, sizeof tp.host, "%s", host);
    *port = ntohs(ss.ss_family == AF_INET
                      ? ((struct sockaddr_in *)&ss)->sin_port
                      : ((struct sockaddr_in6 *)&ss)->sin6_port);
    tp.listen_fd = fd;
    return 0;
}

/* A number from a /proc/sys file, or -1. */
static long
sysctl_long(const char *path)
{
    FILE *f = fopen(path, "re");
    long v = -1;

    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

/* Socket buffers to ask for, or 0 to leave them to the kernel's
 * autotuning.  A fixed SOCK_BUF lets a window of big messages stream
 * without waiting for autotuning to grow (here 0.9-1.2x the bandwidth
 * of autotuned buffers), but the kernel caps what a process may ask for
 * at net.core.wmem_max / rmem_max (212992 on a default Debian host),
 * and asking at all turns autotuning (up to tcp_wmem / tcp_rmem's
 * maximum, 4 and 6 MiB there) off: below SOCK_BUF, ask for nothing. */
static int
sock_buf(void)
{
    static int v = -1;

    if (v >= 0)
        return v;
    v = sysctl_long("/proc/sys/net/core/wmem_max") >= SOCK_BUF &&
                sysctl_long("/proc/sys/net/core/rmem_max") >= SOCK_BUF
            ? SOCK_BUF
            : 0;
    return v;
}

static void
conn_tune(int fd)
{
    int one = 1, buf = sock_buf();

    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (buf > 0) {
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static struct conn *
conn_new(int fd)
{
    struct conn *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    c->fd = fd;
    c->world = -1;
    c->hsk.key = tp.key;
    c->txt = &c->txh;
    c->earlyt = &c->early;
    sr_init(&c->ring, SEAL_AHEAD, WF_SEALED_LEN(WF_SEAL_SEND));
    conn_tune(fd);
    return c;
}

/* The handshake is proven: note whether the connection leaves this host
 * (plain writes to another are short: transport.c) and pick its TCP
 * congestion control (tcpcc.h; whether ranks share cores here is known
 * from the address table, before any connection; a pair on shared
 * memory keeps the socket as its doorbell only).  The kernel refusing is
 * logged once, and the system's kept. */
static void
conn_set_cc(struct conn *c)
{
    const char *name, *want = getenv("P2P_TCP_CONGESTION");
    int refused, same;

    if (c->on_shm)
        return;
    name = tcpcc_apply(c->fd, req_oversubscribed(), &refused, &same);
    c->offhost = same == 0;
    tp.noffhost += (unsigned)c->offhost;
    if (name != NULL) {
        tp.ncc++;
        snprintf(tp.cc, sizeof tp.cc, "%s", name);
    } else if (refused && !tp.cc_refused) {
        tp.cc_refused = 1;
        mpii_log("rank %d: TCP congestion control %s refused (%s): the "
                 "system's kept",
                 tp.world, want != NULL ? want : TCPCC_SAME_HOST,
                 strerror(errno));
    }
}

/* The receive buffers of a connection now proven (an unproven one has
 * none: a stranger's connections cost a descriptor and a few hundred
 * bytes each).  -1: no memory. */
static int
conn_buffers(struct conn *c)
{
    c->rcap = c->sealed ? 4 + WF_SEAL_MAX : RBUF_PLAIN;
    if ((c->rbuf = malloc(c->rcap)) == NULL ||
        (c->sealed && (c->plain = malloc(WF_SEAL_MAX)) == NULL)) {
        mpii_log("rank %d: out of memory for a connection to process %d",
                 tp.world, c->world);
        return -1;
    }
    return 0;
}

/* The handshake is proven: the connection's buffers, and both
 * directions' AEAD contexts (sealed jobs).  -1 when there is no memory
 * for them. */
static int
hs_keys(struct conn *c, int connector)
{
    uint8_t ktx[SEC_KEY_LEN], krx[SEC_KEY_LEN];

    c->sealed = tp.sealed;
    /* shm: frames go through the segment, plain (it never leaves the
     * host and only the job can map it); the socket rings. */
    if (c->shm != NULL) {
        c->on_shm = 1;
        c->sealed = 0;
        shm_set_bell(c->shm, c->fd);
        tp.nshm++;
        tp.ncma_pairs += shm_cma_reads(c->shm);
    }
    if (conn_buffers(c) == -1)
        return -1;
    if (!c->sealed)
        return 0;
    wf_keys(&c->hsk, connector, ktx, krx);
    c->atx = aead_new(WF_CIPHER, ktx);
    c->arx = aead_new(WF_CIPHER, krx);
    sec_wipe(ktx, sizeof ktx);
    sec_wipe(krx, sizeof krx);
    if (c->atx == NULL || c->arx == NULL) {
        mpii_log("rank %d: cannot set up %s for process %d", tp.world,
                 aead_name(WF_CIPHER), c->world);
        return -1;
    }
    return 0;
}

/* Small handshake writes fit any socket buffer: all or an error. */
static int
hs_write(int fd, const void *buf, size_t len)
{
    return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* Our hello, on a connection whose connect() is done. */
static int
hs_hello(struct conn *c)
{
    struct wf_hello h;
    uint8_t hello[WF_HELLO_LEN];

    h.world = (uint32_t)tp.me;
    h.replica = (uint32_t)tp.replica;
    h.flags = (uint32_t)tp.sealed;
    if (c->shm_offer)
        h.flags |= WF_HELLO_SHM;
    memcpy(h.nonce, c->hsk.nonce_c, sizeof h.nonce);
    wf_hello_build(hello, &h);
    return hs_write(c->fd, hello, sizeof hello);
}

/* Connect from our listen address (where it is one of ours and of the
 * family): the other end counts unproven connections by the address they
 * come from (tp_pending_room), and ours then come from where the job's
 * table says we are.  Otherwise the kernel picks, as before. */
static void
bind_source(int fd, int family)
{
    struct addrinfo hints, *res;
    int one = 1;

    if (tp.host[0] == '\0')
        return;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    if (getaddrinfo(tp.host, "0", &hints, &res) != 0)
        return;
    /* The port is chosen at connect(), per destination: binding does not
     * use up the host's ephemeral ports. */
    (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
                     sizeof one);
    (void)bind(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
}

int
conn_connect(const char *addr, int world)
{
    char host[72], *colon, *port;
    struct addrinfo hints, *res;
    struct conn *c;
    int fd, rc, nb = tp.nrep > 1;

    snprintf(host, sizeof host, "%s", addr);
    if ((colon = strrchr(host, ':')) == NULL)
        return -1;
    *colon = '\0';
    port = colon + 1;
    if (host[0] == '[') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    fd = socket(res->ai_family,
                SOCK_STREAM | SOCK_CLOEXEC | (nb ? SOCK_NONBLOCK : 0), 0);
    if (fd != -1)
        bind_source(fd, res->ai_family);
    /* Blocking connect (R = 1): the other side's kernel completes it from
     * its backlog even before its process accepts.  With replicas it goes
     * on from the progress loop: a host gone from the network must not
     * hold us for TCP's retries while views wait to be read. */
    rc = fd == -1 ? -1 : connect(fd, res->ai_addr, res->ai_addrlen);
    if (rc == -1 && nb && errno == EINPROGRESS)
        rc = 1;
    freeaddrinfo(res);
    if (rc == -1 || (c = conn_new(fd)) == NULL) {
        if (fd != -1)
            close(fd);
        return -1;
    }
    c->world = world;
    c->hsk.connector = (uint32_t)tp.me;
    c->hsk.acceptor = (uint32_t)world;
    c->hsk.sealed = (uint32_t)tp.sealed;
    sec_random(c->hsk.nonce_c, sizeof c->hsk.nonce_c);
    /* shm: a process on our host may share memory with us. */
    if (strcmp(host, tp.host) == 0 && shm_enabled())
        c->shm_offer = 1;
    if (rc == 0 && hs_hello(c) == -1) {
        close(fd);
        free(c->rbuf);
        free(c->plain);
        free(c);
        return -1;
    }
    c->state = rc == 0 ? CS_HELLO_SENT : CS_CONNECTING;
    tp_set(world, c);
    tp.nmade++;
    return 0;
}

/* Read what the handshake needs now; 1 when the step is complete. */
static int
hs_read(struct conn *c, size_t want)
{
    ssize_t n;

    _Static_assert(WF_HELLO_LEN <= sizeof c->hs, "hello too big");
    if (want > sizeof c->hs) {
        conn_kill(c);
        return 0;
    }
    while (c->hslen < want) {
        n = recv(c->fd, c->hs + c->hslen, want - c->hslen, 0);
        if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
            conn_kill(c);
            return 0;
        }
        if (n == -1)
            return 0;
        c->hslen += (size_t)n;
    }
    c->hslen = 0;
    return 1;
}

/* Drop the frames waiting for c's handshake (it will not be done). */
void
conn_early_drop(struct conn *c)
{
    struct early *e;

    while ((e = c->early) != NULL) {
        c->early = e->next;
        if (e->done != NULL)
            req_complete(e->done, MPI_ERR_OTHER);
        free(e->data);
        free(e);
    }
    c->earlyt = &c->early;
}

/* c's handshake is done: what waited for it goes out, in order, after
 * what waited on from, ours that lost to c (NULL: none). */
static void
conn_early_send(struct conn *c, struct conn *from)
{
    struct early *e;

    if (from != NULL && from->early != NULL) {
        *from->earlyt = c->early;
        if (c->early == NULL)
            c->earlyt = from->earlyt;
        c->early = from->early;
        from->early = NULL;
        from->earlyt = &from->early;
    }
    while ((e = c->early) != NULL && c->state == CS_READY) {
        c->early = e->next;
        if (c->early == NULL)
            c->earlyt = &c->early;
        (void)conn_send(c, &e->h, e->data, e->len, 1, e->done);
        free(e->data);
        free(e);
    }
}

/* A frame for a connection whose handshake is not done: kept, with a
 * copy of its payload, until it is (conn_early_send). */
int
conn_early_add(struct conn *c, const struct wire_hdr *h, const void *data,
               size_t len, struct mpii_req *done)
{
    struct early *e;

    if ((e = calloc(1, sizeof *e)) == NULL ||
        (len > 0 && (e->data = malloc(len)) == NULL)) {
        free(e);
        return MPI_ERR_NO_MEM;
    }
    e->h = *h;
    if (len > 0)
        memcpy(e->data, data, len);
    e->len = len;
    e->done = done;
    *c->earlyt = e;
    c->earlyt = &e->next;
    return MPI_SUCCESS;
}

/* May an accepted connection from process w take its place in the
 * table?  Yes when we have none; on demand also when ours lost the race
 * or is still in its handshake and w is the lower index (the lower
 * index's connection wins, and nothing went over ours yet). */
static int
hs_may_replace(int w)
{
    struct conn *old = tp.by_world[w];

    if (old == NULL)
        return 1;
    return tp.ondemand && w < tp.me &&
           ((old->state == CS_DEAD && old->lost_race) ||
            old->state == CS_HELLO_SENT || old->state == CS_CONNECTING);
}

/* A handshake whose bytes are refused (not one that lost a race, which
 * is routine on demand): why, in the log, and the connection ends. */
static void
hs_refuse(struct conn *c, const char *why)
{
    mpii_log("rank %d: handshake refused: %s", tp.world, why);
    conn_kill(c);
}

/* One step of a handshake in progress. */
static void
hs_step(struct conn *c, struct conn **pending, int npending)
{
    uint8_t msg[WF_HS_MAX];
    struct wf_rules rules;
    struct wf_hello h;
    struct conn *old;
    const char *why;

    switch (c->state) {
    case CS_CONNECTING: {
        struct pollfd p = {.fd = c->fd, .events = POLLOUT};
        int err = 0;
        socklen_t elen = sizeof err;

        if (poll(&p, 1, 0) != 1)
            return;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen) == -1 ||
            err != 0 || hs_hello(c) == -1) {
            errno = err;
            conn_kill(c); /* refused or unreachable: a suspicion */
            return;
        }
        c->state = CS_HELLO_SENT;
        return;
    }
    case CS_HELLO_SENT: /* proof from the acceptor: nonce, MAC */
        if (!hs_read(c, WF_PROOF_LEN))
            return;
        if ((why = wf_proof_check(&c->hsk, c->hs)) != NULL) {
            hs_refuse(c, why);
            return;
        }
        /* shm: the acceptor made our segment if it could; map it before
         * confirming, which tells the acceptor (attached) to use it. */
        if (c->shm_offer) {
            char name[SHM_NAME_LEN + 1];

            wf_shm_name(&c->hsk, name);
            c->shm = shm_attach(name);
        }
        wf_confirm_build(msg, &c->hsk);
        if (hs_write(c->fd, msg, WF_CONFIRM_LEN) == -1) {
            conn_kill(c);
            return;
        }
        if (hs_keys(c, 1) == -1) {
            conn_kill(c);
            return;
        }
        c->state = CS_READY;
        conn_set_cc(c);
        conn_early_send(c, NULL);
        return;
    case CS_WAIT_HELLO:
        if (!hs_read(c, WF_HELLO_LEN))
            return;
        rules.nproc = (uint32_t)(tp.size * tp.nrep);
        rules.me = (uint32_t)tp.me;
        rules.nrep = (uint32_t)tp.nrep;
        rules.sealed = (uint32_t)tp.sealed;
        rules.ondemand = tp.ondemand;
        if ((why = wf_hello_check(c->hs, &rules, &h)) != NULL) {
            hs_refuse(c, why);
            return;
        }
        /* On demand, unless we already have a connection to it that
         * wins. */
        if (!hs_may_replace((int)h.world)) {
            conn_kill(c);
            return;
        }
        /* Several may claim the same rank; only proof decides (below). */
        c->world = (int)h.world;
        c->hsk.connector = h.world;
        c->hsk.acceptor = (uint32_t)tp.me;
        c->hsk.sealed = (uint32_t)tp.sealed;
        memcpy(c->hsk.nonce_c, h.nonce, WF_NONCE_LEN);
        sec_random(c->hsk.nonce_a, WF_NONCE_LEN);
        /* shm: the connector offers; make the segment it will look for. */
        if ((h.flags & WF_HELLO_SHM) != 0 && shm_enabled() &&
            tp.shm_pending < SHM_PENDING_MAX) {
            char name[SHM_NAME_LEN + 1];

            wf_shm_name(&c->hsk, name);
            if ((c->shm = shm_create(name)) != NULL) {
                c->shm_made = 1;
                tp.shm_pending++;
            }
        }
        wf_proof_build(msg, &c->hsk);
        if (hs_write(c->fd, msg, WF_PROOF_LEN) == -1) {
            conn_kill(c);
            return;
        }
        c->state = CS_WAIT_PROOF;
        return;
    case CS_WAIT_PROOF:
        if (!hs_read(c, WF_CONFIRM_LEN))
            return;
        if ((why = wf_confirm_check(&c->hsk, c->hs)) != NULL) {
            hs_refuse(c, why);
            return;
        }
        if (!hs_may_replace(c->world)) {
            conn_kill(c);
            return;
        }
        /* shm: used when the connector mapped it, else gone. */
        if (c->shm != NULL) {
            c->shm_made = 0;
            tp.shm_pending--;
            if (!shm_attached(c->shm)) {
                shm_free(c->shm);
                c->shm = NULL;
            }
        }
        if (hs_keys(c, 0) == -1) {
            conn_kill(c);
            return;
        }
        c->state = CS_READY;
        conn_set_cc(c);
        old = tp.by_world[c->world];
        tp_set(c->world, c);
        tp.naccepted++;
        if (mpii_test_accept_cut(c->world))
            conn_kill(c); /* as if its connector died having confirmed */
        conn_early_send(c, old);
        if (old != NULL)
            conn_free(old); /* ours, which lost */
        return;
    default:
        return;
    }
}

static int
ms_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int)((t.tv_sec - t0->tv_sec) * 1000 +
                 (t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* The oldest unproven connection from addr (NULL: any address), its
 * slot in tp.pending, and how many there are from there; -1: none. */
static int
tp_oldest_from(const char *addr, int *count)
{
    struct conn *c;
    int j, old = -1;

    *count = 0;
    for (j = 0; j < tp.npending; j++) {
        if ((c = tp.pending[j]) == NULL || c->state == CS_READY ||
            (addr != NULL && strcmp(c->from, addr) != 0))
            continue;
        (*count)++;
        if (old == -1 || c->since.tv_sec < tp.pending[old]->since.tv_sec ||
            (c->since.tv_sec == tp.pending[old]->since.tv_sec &&
             c->since.tv_nsec < tp.pending[old]->since.tv_nsec))
            old = j;
    }
    return old;
}

/* Make room for one more unproven connection from addr: at most
 * per_addr_max from one address (then its oldest goes), pending_max in
 * all (then the oldest of all goes).  A stranger who opens connections
 * by the thousand holds a bounded number of our descriptors, and from
 * one address crowds out only its own. */
static void
tp_pending_room(const char *addr)
{
    const char *where = addr;
    int n, slot;

    if (tp.pending_max == 0)
        return; /* before the job's table: no connection is taken */
    if ((slot = tp_oldest_from(addr, &n)) == -1 || n < tp.per_addr_max) {
        slot = tp_oldest_from(NULL, &n);
        where = "all addresses";
        if (slot == -1 || n < tp.pending_max)
            return;
    }
    if (tp.ndropped++ % 1000 == 0)
        mpii_log("rank %d: %d unproven connections from %s: the oldest "
                 "dropped (%u so far)",
                 tp.world, n, where, tp.ndropped);
    conn_discard(tp.pending[slot]);
    tp.pending[slot] = NULL;
}

/* Take every connection waiting on the listener: whoever does not prove
 * the job key within HS_PENDING_MS is dropped, so strangers on the port
 * cannot keep the ranks out, nor hold more than tp_pending_room lets
 * them. */
void
tp_accept(void)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char from[sizeof ((struct conn *)0)->from];
    struct conn *c;
    int i, fd;

    while (tp.listen_fd != -1 &&
           (fd = accept4(tp.listen_fd, (struct sockaddr *)&ss, &len,
                         SOCK_CLOEXEC)) != -1) {
        if (getnameinfo((struct sockaddr *)&ss, len, from, sizeof from, NULL,
                        0, NI_NUMERICHOST) != 0)
            snprintf(from, sizeof from, "?");
        len = sizeof ss;
        tp_pending_room(from);
        for (i = 0; i < tp.npending && tp.pending[i] != NULL; i++)
            ;
        if (i == tp.pcap) {
            struct conn **np =
                realloc(tp.pending, (size_t)(tp.pcap + 16) * sizeof *np);
            if (np == NULL) {
                close(fd);
                break;
            }
            memset(np + tp.pcap, 0, 16 * sizeof *np);
            tp.pending = np;
            tp.pcap += 16;
        }
        if ((c = conn_new(fd)) == NULL) {
            close(fd);
            break;
        }
        c->state = CS_WAIT_HELLO;
        memcpy(c->from, from, sizeof c->from);
        clock_gettime(CLOCK_MONOTONIC, &c->since);
        tp.pending[i] = c;
        if (i == tp.npending)
            tp.npending++;
    }
}

/* Is c the connection the table has for its process? */
static int
tp_holds(const struct conn *c)
{
    return c->world >= 0 && c->world < tp.size * tp.nrep &&
           tp.by_world[c->world] == c;
}

/* One step of every handshake under way, ours and those accepted. */
void
tp_handshakes(void)
{
    struct conn *c;
    int j;

    tp.nopening = 0;
    for (j = 0; j < tp.nlive; j++) {
        if ((c = tp.by_world[tp.live[j]]) != NULL &&
            (c->state == CS_HELLO_SENT || c->state == CS_CONNECTING))
            hs_step(c, tp.pending, tp.npending);
        /* Replicas: one that lost a race waits for the other side's
         * connection however long that takes (a loaded machine may not
         * run it for seconds): the other side is alive (it refused us)
         * and its hello is on its way; should it die meanwhile, the view
         * that says so drops this one (transport_drop). */
        if (c != NULL && tp.nrep > 1 && conn_opening(c))
            tp.nopening++;
    }
    for (j = 0; j < tp.npending; j++) {
        if ((c = tp.pending[j]) == NULL)
            continue;
        if (c->state != CS_READY) {
            enum conn_state was = c->state;

            hs_step(c, tp.pending, tp.npending);
            /* The deadline is for the other end: a step we were late to
             * take (descheduled, busy) starts it again. */
            if (c->state != was)
                clock_gettime(CLOCK_MONOTONIC, &c->since);
            else if (c->state != CS_DEAD && ms_since(&c->since) > HS_PENDING_MS)
                conn_kill(c);
        }
        /* One that took its place in the table is the table's, even if
         * it died as the frames that waited for it went out (its
         * connector gone right after confirming): freed here it would
         * stay there, to be used and freed again. */
        if (c->state == CS_READY || tp_holds(c))
            tp.pending[j] = NULL; /* now in the table */
        else if (c->state == CS_DEAD) {
            conn_discard(c);
            tp.pending[j] = NULL;
        }
    }
    while (tp.npending > 0 && tp.pending[tp.npending - 1] == NULL)
        tp.npending--;
}

/* The accepted connection from w under way (its hello read), if any. */
struct conn *
tp_claimed(int w)
{
    int j;

    for (j = 0; j < tp.npending; j++)
        if (tp.pending[j] != NULL && tp.pending[j]->world == w)
            return tp.pending[j];
    return NULL;
}

/* Descriptors of the handshakes under way and the listener, from *n on. */
void
tp_poll_handshakes(int *n)
{
    struct conn *c;
    int j;

    if (tp.listen_fd != -1) {
        tp.pfd[*n].fd = tp.listen_fd;
        tp.pfd[*n].events = POLLIN;
        tp.pfd[(*n)++].revents = 0;
    }
    for (j = 0; j < tp.npending; j++)
        if ((c = tp.pending[j]) != NULL && c->state != CS_READY &&
            c->state != CS_DEAD) {
            tp.pfd[*n].fd = c->fd;
            tp.pfd[*n].events = POLLIN;
            tp.pfd[(*n)++].revents = 0;
        }
    for (j = 0; j < tp.nlive; j++)
        if ((c = tp.by_world[tp.live[j]]) != NULL &&
            (c->state == CS_HELLO_SENT || c->state == CS_CONNECTING)) {
            tp.pfd[*n].fd = c->fd;
            tp.pfd[*n].events = c->state == CS_CONNECTING ? POLLOUT : POLLIN;
            tp.pfd[(*n)++].revents = 0;
        }
}

/* Wait up to ms for a handshake or the listener to move.  Under
 * MPI_THREAD_MULTIPLE the library's lock is kept (plain poll, not
 * mpii_poll): a connection may be opened from inside the progress
 * engine, which another thread must not enter meanwhile. */
static void
tp_wait_handshakes(int ms)
{
    int n = 0;

    if (tp_pfd_room(tp.nlive + tp.npending + 2) == -1)
        return;
    tp_poll_handshakes(&n);
    if (n > 0)
        (void)poll(tp.pfd, (nfds_t)n, ms);
}

/* On demand: the connection to rank w, made now if there is none (the
 * first send to w).  Handshakes only, meanwhile: no frame is read here,
 * so this is safe from anywhere a frame may be sent.  It waits as long as
 * w takes to enter an MPI call and answer, as a blocking send waits for
 * its receive: w's kernel has taken the connection, and were w gone the
 * connection would say so (and, with R = 1, the coordinator ends the
 * job). */
struct conn *
conn_open(int w)
{
    struct conn *c;

    if (tp.failed || tp.addr == NULL || tp.addr[w][0] == '\0') {
        if (getenv("P2P_MPI_DEBUG") != NULL)
            mpii_log("rank %d: no connection to rank %d (%s)", tp.world, w,
                     tp.failed ? "failed before" : "no address");
        return NULL;
    }
    for (;;) {
        tp_accept();
        tp_handshakes();
        c = tp.by_world[w];
        if (c != NULL && c->state == CS_READY)
            return c;
        if (c != NULL && c->state == CS_DEAD && !c->lost_race)
            break;
        /* w may be connecting to us already (its hello read): wait for
         * that one rather than cross it with ours. */
        if (c == NULL && !tp_claimed(w)) {
            if (conn_connect(tp.addr[w], w) == -1)
                break;
            continue;
        }
        tp_wait_handshakes(10);
    }
    mpii_log("p2pmpi: rank %d: cannot connect to rank %d at %s", tp.world, w,
             tp.addr[w]);
    tp.failed = 1;
    return NULL;
}

/* The host part of a process's address ("ip:port", "[ip6]:port"). */
static void
addr_host(const char *addr, char *host, size_t len)
{
    char *colon;

    snprintf(host, len, "%s", addr);
    if ((colon = strrchr(host, ':')) != NULL)
        *colon = '\0'; /* the port */
}

struct host_of {
    char host[72];
    int proc;
};

static int
host_of_cmp(const void *a, const void *b)
{
    const struct host_of *x = a, *y = b;
    int d = strcmp(x->host, y->host);

    return d != 0 ? d : (x->proc > y->proc) - (x->proc < y->proc);
}

/* tp.hostix: every process's host, named by the lowest process index
 * listening there (a process without an address is a host of its own);
 * and how many processes the busiest host has.  -1 without memory. */
static int
tp_hosts(int nproc, int *most)
{
    struct host_of *h;
    int i, run = 0;

    *most = 1;
    if ((tp.hostix = calloc((size_t)nproc, sizeof *tp.hostix)) == NULL ||
        (h = calloc((size_t)nproc, sizeof *h)) == NULL)
        return -1;
    for (i = 0; i < nproc; i++) {
        addr_host(tp.addr[i], h[i].host, sizeof h[i].host);
        h[i].proc = i;
    }
    qsort(h, (size_t)nproc, sizeof *h, host_of_cmp);
    for (i = 0; i < nproc; i++) {
        if (i > 0 && h[i].host[0] != '\0' &&
            strcmp(h[i].host, h[i - 1].host) == 0) {
            tp.hostix[h[i].proc] = tp.hostix[h[i - 1].proc];
            run++;
        } else {
            tp.hostix[h[i].proc] = h[i].proc;
            run = 1;
        }
        if (h[i].host[0] != '\0' && run > *most)
            *most = run;
    }
    free(h);
    return 0;
}

int
transport_host(int proc)
{
    if (tp.hostix == NULL || proc < 0 || proc >= tp.size * tp.nrep)
        return -1;
    return tp.hostix[proc];
}

int
transport_connect_all(const struct ctl_entry *tab, int n, const uint8_t *key,
                      int world, int size, int replica, int nrep, int sealed,
                      int ctl)
{
    int i, nproc = size * nrep, most;

    tp.world = world;
    tp.size = size;
    tp.replica = replica;
    tp.nrep = nrep;
    tp.me = world * nrep + replica;
    tp.sealed = sealed;
    tp.ctl = nrep > 1 ? ctl : -1;
    memcpy(tp.key, key, SEC_KEY_LEN);
    if ((tp.by_world = calloc((size_t)nproc, sizeof *tp.by_world)) == NULL ||
        (tp.live = calloc((size_t)nproc, sizeof *tp.live)) == NULL ||
        (tp.inlive = calloc((size_t)nproc, 1)) == NULL ||
        tp_pfd_room(nproc + 2) == -1)
        return MPI_ERR_NO_MEM;
    if (tp.listen_fd != -1)
        (void)fcntl(tp.listen_fd, F_SETFL, O_NONBLOCK);
    /* On demand: remember where everyone listens, connect later (a
     * process not in the table is dead: with replicas, rep.c knows). */
    if ((tp.addr = calloc((size_t)nproc, sizeof *tp.addr)) == NULL)
        return MPI_ERR_NO_MEM;
    for (i = 0; i < n; i++)
        if (tab[i].rank < (uint32_t)size && tab[i].replica < (uint32_t)nrep)
            snprintf(tp.addr[tab[i].rank * (uint32_t)nrep + tab[i].replica],
                     sizeof *tp.addr, "%s", tab[i].addr);
    /* Unproven connections allowed: every process of the busiest host
     * twice (a lost race, a retry) from one address, every process
     * twice in all, and some to spare. */
    if (tp_hosts(nproc, &most) == -1)
        return MPI_ERR_NO_MEM;
    tp.per_addr_max = 2 * most + 16;
    tp.pending_max = 2 * nproc + 64;
    tp.late_read = mpii_test_late_read();
    tp.ondemand = 1;
    return MPI_SUCCESS;
}
