/*
 * TCP between the processes of a job.  A process is known by its index
 * rank * R + replica (R replicas of every rank, 1 unless p2prun -r).  With
 * R = 1 a rank connects to another when it first sends to it (on demand,
 * as Open MPI and MPICH do): a job whose ranks talk to their neighbours
 * opens a connection per neighbour, not one per pair of ranks, and the
 * listener stays open for those who come later.  Should two ranks reach
 * for each other at once, the connection made by the lower rank wins and
 * the other is dropped before any frame went over it.  With R > 1 too a
 * process connects to another when the replication layer
 * (replication/rep.c) first sends to it, but without waiting: what is
 * sent meanwhile is kept on the connection and goes out once the
 * handshake is done, and a connection that fails is a suspicion for the
 * coordinator, as a broken one is.  A connection starts with a handshake that proves both ends
 * hold the job's key (MACs over fresh nonces) and, unless the job turned
 * encryption off, derives a key for each direction; then frames flow,
 * plain or sealed.  The bytes of both (message layouts, checks, MACs,
 * sealing) are wireframe.c's; this file moves them.
 *
 * Sockets are non-blocking; progress writes what is queued (sendmsg with
 * MSG_NOSIGNAL: a process whose peer died must not die of SIGPIPE; user
 * buffers sent in place) and reads into a per-connection buffer, except
 * rendezvous payloads of a plain connection, which are read straight into
 * the receiver's memory.  The progress engine never blocks unless asked.
 *
 * Two processes on the same host (the same listen address in the job's
 * table) agree in the handshake to carry their frames through shared
 * memory instead (shm.c): the connector offers in its hello, the acceptor
 * makes the segment, the connector maps it, and from the first frame on
 * the pair's frames go through the rings, plain; the socket stays as the
 * doorbell and to tell that the other end died.  A rendezvous between
 * them may skip the rings (single copy, shm.h): the sender's RTS says
 * where the message lies, the receiver's clear-to-send is the copy
 * itself and tells the sender it is done (a large one split: the sender
 * asked to write the second half itself).  The hooks are marked "shm:".
 */
#include <sys/socket.h>
#include <sys/uio.h>

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
#include "core.h"
#include "ctl.h"
#include "decide.h"
#include "rep.h"
#include "sealring.h"
#include "sec.h"
#include "shm.h"
#include "wireframe.h"

#define HDR WF_HDR_LEN
#define RBUF_PLAIN (HDR + MPII_EAGER_MAX + 64 * 1024)
#define HS_PENDING_MS 10000 /* an accepted connection must prove itself */
/* Connections waiting for accept: on demand, hundreds of ranks may reach
 * one (a gather's root) before it next runs; the kernel caps this at
 * net.core.somaxconn. */
#define LISTEN_BACKLOG 4096
#define IOV_BATCH 64
/* Plain sockets: a payload alone in flight is written TX_PIECE bytes a
 * sendmsg (each ends with a push: the receiver copies one piece out
 * while we copy the next in; a bigger write is not pushed before its
 * end once TCP's window runs short), and one flush writes at most
 * TX_BUDGET before reading (both directions stream at once). */
#define TX_PIECE (512 * 1024)
#define TX_BUDGET (1024 * 1024)
#define SOCK_BUF (4 * 1024 * 1024) /* socket buffers, when the kernel allows */
/* shm: segments made for hellos not yet proven; beyond it a stranger's
 * offers get TCP (each holds about 1 MiB of /dev/shm until its handshake
 * ends or times out). */
#define SHM_PENDING_MAX 8
/* Sealed path: frames sealed ahead of the socket while it is full, and
 * at most SEAL_BATCH sealed afresh before a write (sealring.h). */
#define SEAL_AHEAD 4
#define SEAL_BATCH 1

enum conn_state {
    CS_HELLO_SENT, /* connector: waits for the acceptor's proof */
    CS_WAIT_HELLO, /* acceptor: waits for the hello */
    CS_WAIT_PROOF, /* acceptor: waits for the connector's proof */
    CS_READY,
    CS_DEAD,
    CS_CONNECTING, /* connector (R > 1): connect() under way, no hello yet */
};

struct txitem {
    struct txitem *next;
    uint8_t *head; /* header, or a whole sealed frame */
    size_t hlen;
    const uint8_t *data; /* plain payload, borrowed */
    size_t dlen;
    size_t off; /* written of head then data */
    struct mpii_req *done;
    uint8_t hbuf[HDR];
    /* sealed late (borrowed payload): sealed by conn_flush into a slot
     * of the connection's ring when the socket reaches it (or ahead of
     * it), with the header and counter fixed at queueing */
    const uint8_t *src;
    struct wire_hdr lh;
    uint64_t lctr;
    int lazy;
    int piece; /* a lone rendezvous payload: written TX_PIECE at a time */
};

struct conn {
    int fd;
    int world; /* the other end's process index (rank * R + replica) */
    enum conn_state state;
    struct timespec since; /* accepted at: a handshake has a deadline */
    struct wf_hs hsk; /* nonces and indices the handshake's MACs cover */
    uint8_t hs[WF_HS_MAX]; /* the handshake message being read */
    size_t hslen;
    /* receiving */
    uint8_t *rbuf;
    size_t rcap, rlen, rpos;
    struct mpii_req *dreq; /* direct read of a rendezvous payload */
    uint8_t *ddst;
    size_t dwant, dgot, ddiscard;
    uint8_t *plain; /* opened sealed frame */
    /* sending */
    struct txitem *txh, **txt;
    unsigned rts_out; /* rendezvous announced and not yet clear to send */
    unsigned cts_out; /* clear to send sent, its payload not yet begun */
    uint64_t seq_tx, seq_rx;
    /* sealing: one AEAD context per direction, keyed once at the
     * handshake.  Nonce uniqueness: each direction of each connection
     * has its own key (wf_keys: MACs over both ends' fresh nonces), and
     * its frames are numbered by a 64-bit counter from 0 that only goes
     * up (ctr_tx++ per sealed frame, never reset or wrapped), so no
     * nonce repeats under a key. */
    int sealed;
    struct aead *atx, *arx;
    uint64_t ctr_tx, ctr_rx;
    struct sealring ring; /* late-sealed frames being written, reused */
    /* finishing (R = 1): FIN sent, FIN received on this connection */
    int fin_tx, fin_rx;
    int lost_race; /* ours, dropped for the other rank's (on demand) */
    /* shm: the pair's segment (the acceptor's, offered, until the
     * handshake ends), and on_shm once frames go through it */
    struct shm_chan *shm;
    int shm_offer, on_shm;
    int shm_made; /* acceptor: made for a handshake still under way */
    /* shm: single copies whose reads wait to go in one call (R = 1) */
    struct {
        struct mpii_req *r;
        uint32_t sid;
    } cmaq[SHM_CMA_BATCH];
    int ncmaq;
    /* R > 1: frames sent before the handshake was done, in order */
    struct early *early, **earlyt;
};

/* A frame waiting for its connection's handshake (replicas only). */
struct early {
    struct early *next;
    struct wire_hdr h;
    uint8_t *data; /* our copy */
    size_t len;
    struct mpii_req *done;
};

struct conn;
static void conn_close(struct conn *);
static void conn_kill(struct conn *);
static void conn_early_drop(struct conn *);
static struct conn *conn_open(int world);

static struct {
    int listen_fd;
    int world, size, replica, nrep;
    int me; /* our process index */
    int sealed;
    uint8_t key[SEC_KEY_LEN];
    struct conn **by_world; /* [size * nrep] by process index, NULL for us */
    int *live;              /* indices whose by_world was ever set */
    uint8_t *inlive;        /* [size * nrep]: index is in live */
    int nlive;
    struct conn **pending; /* accepted, not yet proven (NULL: free slot) */
    int npending, pcap;
    char (*addr)[72]; /* every process's address, for connecting later */
    int ondemand;     /* connect when first sending */
    int nopening;     /* R > 1: our handshakes under way (a hint) */
    unsigned nmade, naccepted; /* connections, for P2P_MPI_STATS */
    unsigned nshm;             /* shm: of those, through shared memory */
    unsigned ncma_pairs;       /* shm: of those, we read single copies */
    unsigned ncma_sent, ncma_read; /* shm: messages announced, read */
    unsigned nring_rndv;       /* shm: rendezvous through the rings */
    unsigned shm_ticks;        /* shm: busy passes, to look at sockets */
    int shm_pending;           /* shm: segments made for handshakes under
                                  way (before the other end is proven) */
    char host[72];             /* shm: our listen address */
    struct pollfd *pfd;
    int pfdcap;
    int failed; /* a connection died: MPI_ERR_OTHER from now on (R = 1) */
    int ctl;    /* views arrive here (R > 1), or -1 */
    unsigned ticks;
    uint64_t moved_ns; /* when payload bytes last moved (CLOCK_MONOTONIC) */
} tp = {.listen_fd = -1, .ctl = -1};

int
mpii_world_rank(void)
{
    return tp.world;
}

int
conn_proc(const struct conn *c)
{
    return c->world;
}

int
conn_ready(const struct conn *c)
{
    return c != NULL && c->state == CS_READY;
}

void
transport_cut(int proc)
{
    struct conn *c;

    if (proc >= 0 && proc < tp.size * tp.nrep && tp.by_world != NULL &&
        (c = tp.by_world[proc]) != NULL && c->state == CS_READY)
        conn_kill(c); /* reported as a suspicion, like a real cut */
}

int
conn_rank(const struct conn *c)
{
    return c->world / tp.nrep;
}

static int conn_connect(const char *addr, int world);
static struct conn *tp_claimed(int w);

/* Is c still opening (its handshake under way, or ours lost to the
 * other side's connection that is to replace it)?  Frames wait on it. */
static int
conn_opening(const struct conn *c)
{
    return c->state == CS_HELLO_SENT || c->state == CS_CONNECTING ||
           c->state == CS_WAIT_PROOF || (c->state == CS_DEAD && c->lost_race);
}

struct conn *
conn_to_proc(int proc)
{
    struct conn *c;

    if (proc < 0 || proc >= tp.size * tp.nrep || tp.by_world == NULL ||
        proc == tp.me)
        return NULL;
    c = tp.by_world[proc];
    if (c != NULL)
        return c->state == CS_READY || conn_opening(c) ? c : NULL;
    /* Replicas: the first frame to proc opens the connection; the
     * handshake goes on from the progress loop.  proc may be connecting
     * to us already (its hello read, our proof sent: it may think the
     * connection made): frames wait on that one, not crossed with ours. */
    if (tp.nrep == 1 || tp.addr == NULL || tp.addr[proc][0] == '\0' ||
        rep_dead(proc))
        return NULL;
    if ((c = tp_claimed(proc)) != NULL && c->state == CS_WAIT_PROOF)
        return c;
    if (conn_connect(tp.addr[proc], proc) == -1) {
        mpii_log("p2pmpi: process %d: cannot connect to process %d at %s",
                 tp.me, proc, tp.addr[proc]);
        rep_suspect(proc);
        return NULL;
    }
    tp.nopening++;
    return tp.by_world[proc];
}

void
transport_drop(int proc)
{
    struct conn *c;

    if (proc < 0 || proc >= tp.size * tp.nrep || tp.by_world == NULL ||
        (c = tp.by_world[proc]) == NULL)
        return;
    c->lost_race = 0; /* its connection will not come either */
    conn_early_drop(c);
    if (c->state != CS_DEAD)
        conn_close(c); /* no suspicion: we know */
}

struct conn *
conn_to(int world)
{
    struct conn *c;

    if (world < 0 || world >= tp.size || tp.by_world == NULL)
        return NULL;
    c = tp.by_world[world * tp.nrep + tp.replica];
    if (tp.ondemand && world != tp.world && (c == NULL || c->state != CS_READY))
        c = conn_open(world);
    return c;
}

/* Put c in the table as the connection to process p. */
static void
tp_set(int p, struct conn *c)
{
    tp.by_world[p] = c;
    if (!tp.inlive[p]) {
        tp.inlive[p] = 1;
        tp.live[tp.nlive++] = p;
    }
}

/* --- setup ------------------------------------------------------------ */

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
    c->rcap = tp.sealed ? 4 + WF_SEAL_MAX : RBUF_PLAIN;
    sr_init(&c->ring, SEAL_AHEAD, WF_SEALED_LEN(WF_SEAL_SEND));
    if ((c->rbuf = malloc(c->rcap)) == NULL ||
        (tp.sealed && (c->plain = malloc(WF_SEAL_MAX)) == NULL)) {
        free(c->rbuf);
        free(c);
        return NULL;
    }
    conn_tune(fd);
    return c;
}

/* The handshake is proven: key both directions' AEAD contexts (sealed
 * jobs).  -1 when libcrypto cannot (no memory). */
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

static int
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
static void
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

/* Free a connection whoever holds it (not a failure: on purpose). */
static void
conn_free(struct conn *c)
{
    conn_early_drop(c);
    if (c->state != CS_DEAD)
        conn_close(c);
    free(c->rbuf);
    free(c->plain);
    sr_free(&c->ring);
    aead_free(c->atx);
    aead_free(c->arx);
    free(c);
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
        old = tp.by_world[c->world];
        tp_set(c->world, c);
        tp.naccepted++;
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

/* Free a connection that never made it into the table. */
static void
conn_discard(struct conn *c)
{
    conn_kill(c);
    conn_early_drop(c);
    free(c->rbuf);
    free(c->plain);
    sr_free(&c->ring);
    aead_free(c->atx);
    aead_free(c->arx);
    free(c);
}

/* Take every connection waiting on the listener: whoever does not prove
 * the job key within HS_PENDING_MS is dropped, so strangers on the port
 * cannot keep the ranks out. */
static void
tp_accept(void)
{
    struct conn *c;
    int i, fd;

    while (tp.listen_fd != -1 &&
           (fd = accept4(tp.listen_fd, NULL, NULL, SOCK_CLOEXEC)) != -1) {
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
        clock_gettime(CLOCK_MONOTONIC, &c->since);
        tp.pending[i] = c;
        if (i == tp.npending)
            tp.npending++;
    }
}

/* One step of every handshake under way, ours and those accepted. */
static void
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
        if (c->state == CS_DEAD) {
            conn_discard(c);
            tp.pending[j] = NULL;
        } else if (c->state == CS_READY)
            tp.pending[j] = NULL; /* now in the table */
    }
    while (tp.npending > 0 && tp.pending[tp.npending - 1] == NULL)
        tp.npending--;
}

/* The accepted connection from w under way (its hello read), if any. */
static struct conn *
tp_claimed(int w)
{
    int j;

    for (j = 0; j < tp.npending; j++)
        if (tp.pending[j] != NULL && tp.pending[j]->world == w)
            return tp.pending[j];
    return NULL;
}

/* Room for n descriptors to poll. */
static int
tp_pfd_room(int n)
{
    struct pollfd *p;

    if (n <= tp.pfdcap)
        return 0;
    if ((p = realloc(tp.pfd, (size_t)n * sizeof *p)) == NULL)
        return -1;
    tp.pfd = p;
    tp.pfdcap = n;
    return 0;
}

/* Descriptors of the handshakes under way and the listener, from *n on. */
static void
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

/* Wait up to ms for a handshake or the listener to move. */
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
static struct conn *
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

int
transport_connect_all(const struct ctl_entry *tab, int n, const uint8_t *key,
                      int world, int size, int replica, int nrep, int sealed,
                      int ctl)
{
    int i, nproc = size * nrep;

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
    tp.ondemand = 1;
    return MPI_SUCCESS;
}

/* --- failure ----------------------------------------------------------- */

/* Close c (not yet dead) and drop what it had queued. */
static void
conn_close(struct conn *c)
{
    struct txitem *t;

    if (getenv("P2P_MPI_DEBUG") != NULL)
        mpii_log("process %d: connection to process %d closed in state %d "
                 "(errno %d)",
                 tp.me, c->world, (int)c->state, errno);
    c->state = CS_DEAD;
    if (c->fd != -1)
        close(c->fd);
    c->fd = -1;
    /* shm: unmapped (the other end sees the socket end); one made for a
     * handshake that did not finish is no longer pending. */
    if (c->shm_made)
        tp.shm_pending--;
    c->shm_made = 0;
    while (c->ncmaq > 0)
        req_complete(c->cmaq[--c->ncmaq].r, MPI_ERR_OTHER);
    shm_free(c->shm);
    c->shm = NULL;
    c->on_shm = 0;
    while ((t = c->txh) != NULL) {
        c->txh = t->next;
        if (t->done != NULL)
            req_complete(t->done, MPI_ERR_OTHER);
        if (t->head != t->hbuf && !sr_holds(&c->ring, t->head))
            free(t->head);
        free(t);
    }
    c->txt = &c->txh;
    sr_clear(&c->ring);
    if (c->dreq != NULL && tp.nrep == 1)
        req_complete(c->dreq, MPI_ERR_OTHER);
    /* With replicas, a rendezvous cut short is replayed by the rank's
     * next replica once the coordinator's view says this one is dead. */
    c->dreq = NULL;
    c->ddiscard = 0;
}

/* The connection broke (or proved bogus): close it, and if it was one of
 * the job's, say so: with R = 1 the job has failed; with replicas it is a
 * suspicion for the coordinator to judge. */
static void
conn_kill(struct conn *c)
{
    int lost;

    if (c->state == CS_DEAD)
        return;
    /* On demand, the lower rank refuses our hello while its own
     * connection to us is under way: wait for that one instead. */
    lost = tp.ondemand && c->state == CS_HELLO_SENT && c->world >= 0 &&
           c->world < tp.me;
    conn_close(c);
    if (lost) {
        c->lost_race = 1;
        return;
    }
    /* Frames waited for proc's own connection, which failed. */
    if (c->early != NULL && c->world >= 0 && tp.by_world != NULL &&
        tp.by_world[c->world] != c)
        rep_suspect(c->world);
    conn_early_drop(c);
    /* A rank that sent us its FIN is done with us and leaves when every
     * rank it talked to is: its end closing is no failure. */
    if (c->world >= 0 && tp.by_world != NULL && tp.by_world[c->world] == c &&
        !c->fin_rx) {
        if (tp.nrep == 1)
            tp.failed = 1;
        else
            rep_suspect(c->world);
    }
}

/* --- sending ---------------------------------------------------------- */

/* writev without SIGPIPE: the program's signal handling is its own. */
static ssize_t
write_iov(int fd, struct iovec *iov, int n)
{
    struct msghdr m;

    memset(&m, 0, sizeof m);
    m.msg_iov = iov;
    m.msg_iovlen = (size_t)n;
    return sendmsg(fd, &m, MSG_NOSIGNAL);
}

/* Payload bytes moved now (see transport_moved_ns). */
static void
tp_moved(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    tp.moved_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t
transport_moved_ns(void)
{
    return tp.moved_ns;
}

/* Trim iov[0..n) to at most max bytes; the new count. */
static int
iov_trim(struct iovec *iov, int n, size_t max)
{
    size_t sum = 0;
    int i;

    for (i = 0; i < n; i++) {
        if (iov[i].iov_len >= max - sum) {
            iov[i].iov_len = max - sum;
            return i + 1;
        }
        sum += iov[i].iov_len;
    }
    return n;
}

/* Write iov to c's channel: its socket, or (shm:) its ring, which takes
 * what fits and says EAGAIN when full.  One frame alone (lone) goes to
 * a plain socket TX_PIECE bytes a call: each call ends with a push, so
 * the receiver copies a piece out while we copy the next in.  Several
 * frames queued go in one call: a stream is faster in big writes. */
static ssize_t
conn_writev(struct conn *c, struct iovec *iov, int n, int lone)
{
    size_t k;

    if (!c->on_shm && !c->sealed && lone)
        return write_iov(c->fd, iov, iov_trim(iov, n, TX_PIECE));
    if (!c->on_shm)
        return write_iov(c->fd, iov, n);
    if ((k = shm_writev(c->shm, iov, n)) == 0) {
        errno = EAGAIN;
        return -1;
    }
    return (ssize_t)k;
}

static void
conn_seal_failed(struct conn *c)
{
    mpii_log("rank %d: %s failed sealing a frame for process %d", tp.world,
             aead_name(WF_CIPHER), c->world);
    conn_kill(c);
}

/* Seal a late item into a slot of the connection's ring: the payload is
 * read once from the caller's buffer and the sealed bytes the socket copy
 * reads next are still in cache.  1 when every slot is taken; -1 when
 * sealing failed (the connection is killed). */
static int
conn_seal_late(struct conn *c, struct txitem *t)
{
    uint8_t *slot;

    if (sr_full(&c->ring))
        return 1;
    if ((slot = sr_take(&c->ring)) == NULL) {
        mpii_log("rank %d: out of memory sealing for process %d", tp.world,
                 c->world);
        conn_kill(c);
        return -1;
    }
    t->hlen = wf_seal(slot, &t->lh, t->src, t->lctr, c->atx);
    t->head = slot;
    if (t->hlen == 0) {
        conn_seal_failed(c);
        return -1;
    }
    if (mpii_test_corrupt(t->lh.type == FR_DATA))
        t->head[t->hlen - 1] ^= 0x01; /* the tag's last bit */
    return 0;
}

/* The socket is full: seal the next late frames into the free slots of
 * the ring meanwhile, so that when it drains they only need copying. */
static void
conn_seal_ahead(struct conn *c)
{
    struct txitem *t;

    for (t = c->txh; t != NULL && c->state == CS_READY; t = t->next)
        if (t->lazy && t->head == NULL && conn_seal_late(c, t) != 0)
            return;
}

/* Write what the queue holds, as far as the socket takes it. */
static void
conn_flush(struct conn *c)
{
    struct iovec iov[IOV_BATCH];
    struct txitem *t;
    ssize_t n;
    size_t k, left, sent = 0;
    int i, fresh;

    while (c->txh != NULL && c->state == CS_READY) {
        i = fresh = 0;
        for (t = c->txh; t != NULL && i < IOV_BATCH - 1; t = t->next) {
            /* sealed path: frames sealed ahead go out together; a new
             * one is sealed when the socket reaches it */
            if (t->lazy && t->head == NULL &&
                (fresh++ == SEAL_BATCH || conn_seal_late(c, t) != 0))
                break;
            if (t->off < t->hlen) {
                iov[i].iov_base = t->head + t->off;
                iov[i++].iov_len = t->hlen - t->off;
            }
            if (t->dlen > 0 && t->off < t->hlen + t->dlen) {
                k = t->off > t->hlen ? t->off - t->hlen : 0;
                iov[i].iov_base = (void *)(t->data + k);
                iov[i++].iov_len = t->dlen - k;
            }
        }
        if (i == 0 || c->state == CS_DEAD)
            return; /* conn_seal_late failed: the connection is dead */
        if (!c->on_shm && !c->sealed)
            i = iov_trim(iov, i, TX_BUDGET - sent);
        n = conn_writev(c, iov, i, c->txh->next == NULL && c->txh->piece);
        if (n > 0) {
            tp_moved();
            sent += (size_t)n;
        }
        if (n == -1) {
            if (errno != EAGAIN && errno != EINTR)
                conn_kill(c);
            else if (c->sealed)
                conn_seal_ahead(c);
            return;
        }
        left = (size_t)n;
        while ((t = c->txh) != NULL && left > 0) {
            k = t->hlen + t->dlen - t->off;
            if (left < k) {
                t->off += left;
                break;
            }
            left -= k;
            c->txh = t->next;
            if (c->txh == NULL)
                c->txt = &c->txh;
            if (t->done != NULL)
                req_complete(t->done, MPI_SUCCESS);
            if (sr_holds(&c->ring, t->head))
                (void)sr_give(&c->ring, t->head);
            else if (t->head != t->hbuf)
                free(t->head);
            free(t);
        }
        if (!c->on_shm && !c->sealed && sent >= TX_BUDGET)
            return; /* read what came meanwhile: both ways stream */
        if (left == 0 && c->txh != NULL && n > 0)
            continue;
    }
}

static int
conn_queue(struct conn *c, struct txitem *t)
{
    t->next = NULL;
    *c->txt = t;
    c->txt = &t->next;
    conn_flush(c);
    return c->state == CS_DEAD ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* One sealed frame: the header in clear as associated data, the payload
 * sealed straight from the caller's buffer into the frame.  A borrowed
 * payload (copy 0: the caller keeps it until done) is sealed late, by
 * conn_flush, into the connection's ring; its counter is taken now so frames
 * keep their queue order. */
static int
conn_send_sealed(struct conn *c, const struct wire_hdr *h, const void *data,
                 size_t len, int copy, struct mpii_req *done)
{
    struct txitem *t;

    if (!copy && data != NULL && len > 0) {
        if ((t = calloc(1, sizeof *t)) == NULL)
            return MPI_ERR_NO_MEM;
        t->lazy = 1;
        t->src = data;
        t->lh = *h;
        t->lctr = c->ctr_tx++;
        t->done = done;
        return conn_queue(c, t);
    }
    if ((t = calloc(1, sizeof *t)) == NULL ||
        (t->head = malloc(WF_SEALED_LEN(len))) == NULL) {
        free(t);
        return MPI_ERR_NO_MEM;
    }
    t->hlen = wf_seal(t->head, h, data, c->ctr_tx++, c->atx);
    if (t->hlen == 0) {
        free(t->head);
        free(t);
        conn_seal_failed(c);
        return MPI_ERR_OTHER;
    }
    if (mpii_test_corrupt(h->type == FR_DATA))
        t->head[t->hlen - 1] ^= 0x01; /* the tag's last bit */
    t->done = done;
    return conn_queue(c, t);
}

/* A frame for a connection whose handshake is not done: kept, with a
 * copy of its payload, until it is (conn_early_send). */
static int
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

size_t
conn_eager_max(const struct conn *c)
{
    size_t e, m;

    /* shm: a pair that copies once has a threshold of its own (no
     * rendezvous below the single copy's own minimum: those would go
     * through the rings). */
    if (!c->on_shm || !shm_cma_peer_reads(c->shm))
        return MPII_EAGER_MAX;
    e = shm_eager_max(MPII_EAGER_MAX);
    m = shm_cma_min();
    if (m > 0 && m - 1 > e)
        e = m - 1 < MPII_EAGER_MAX ? m - 1 : MPII_EAGER_MAX;
    return e;
}

/* shm: may the rendezvous h announces go by a single copy?  Then *at is
 * where its bytes lie here (they stay until the receiver says it is
 * done: the send completes only then). */
static int
conn_cma_announce(struct conn *c, struct wire_hdr *h, uint64_t *at)
{
    struct mpii_req *r;

    if ((h->flags & WF_RTS_CMA) != 0 || h->total < shm_cma_min() ||
        !shm_cma_peer_reads(c->shm) || (r = req_by_id(h->sid)) == NULL ||
        r->kind != REQ_SEND || !r->active || r->data == NULL ||
        r->len != h->total) {
        tp.nring_rndv++;
        return 0;
    }
    *at = (uint64_t)(uintptr_t)r->data;
    h->flags |= WF_RTS_CMA;
    tp.ncma_sent++;
    return 1;
}

static void conn_protocol_error(struct conn *c, const char *why);

/* shm: the reads queued by conn_cma_copy, in one call; then each
 * receive completes and its sender is told.  A refusal sends plain
 * clear-to-sends instead (the bytes come through the ring).  -1: the
 * sender is gone (connection killed, the receives failed). */
static int
conn_cma_flush(struct conn *c)
{
    struct wire_hdr h;
    struct mpii_req *r;
    int i, n = c->ncmaq, rc;

    if (n == 0)
        return 0;
    rc = shm_cma_flush(c->shm);
    c->ncmaq = 0;
    if (rc == -1 && errno != EPERM && errno != EACCES && errno != ENOSYS) {
        mpii_log("rank %d: single copy from process %d failed (%s): taken "
                 "as gone",
                 tp.world, c->world, strerror(errno));
        for (i = 0; i < n; i++)
            req_complete(c->cmaq[i].r, MPI_ERR_OTHER);
        conn_kill(c);
        return -1;
    }
    if (rc == -1) {
        mpii_log("rank %d: single copy from process %d refused (%s): "
                 "its messages go through the rings",
                 tp.world, c->world, strerror(errno));
        shm_cma_refused(c->shm);
        tp.nring_rndv += (unsigned)n;
    }
    for (i = 0; i < n; i++) {
        r = c->cmaq[i].r;
        memset(&h, 0, sizeof h);
        h.type = FR_CTS;
        h.sid = c->cmaq[i].sid;
        h.rid = req_id(r);
        if (rc == 0) {
            tp.ncma_read++;
            h.flags = WF_CTS_DONE;
            r->got = r->total;
            req_complete(r, MPI_SUCCESS); /* its bytes are in */
        }
        if (c->state == CS_READY)
            (void)conn_send(c, &h, NULL, 0, 0, NULL);
        else if (rc != 0)
            req_complete(r, MPI_ERR_OTHER);
    }
    return 0;
}

/* shm: ask the sender of the rendezvous h names to write count bytes of
 * it, from offset off, at addr in our memory (0: send them through the
 * ring as rendezvous data).  -1: connection dead. */
static int
conn_cma_ask(struct conn *c, const struct wire_hdr *h, uint64_t off,
             uint64_t count, uint64_t addr)
{
    struct wire_hdr sh = *h;
    uint64_t split[3] = {off, count, addr};

    sh.flags |= WF_CTS_SPLIT;
    return conn_send(c, &sh, split, sizeof split, 1, NULL) == MPI_SUCCESS
               ? 0
               : -1;
}

/* shm: the clear-to-send h is about to go for a rendezvous; if it was
 * announced for a single copy, copy it now, straight from the sender
 * into the receive.  A large one (R = 1) is split: a clear-to-send first
 * asks the sender to write the second half into the receive buffer
 * itself while we read the first, and the receive completes when its
 * notice comes (conn_cma_written).  0: send h (a plain clear-to-send:
 * not announced, or refused; or, R = 1, h now says our copy is done); 1:
 * done, nothing to send (replicas: the acknowledgement tells the
 * sender); -1: the sender is gone (connection killed). */
static int
conn_cma_copy(struct conn *c, struct wire_hdr *h)
{
    struct mpii_req *r;
    uint64_t at, len;
    size_t n, k;
    int refuse;

    if (!shm_take(c->shm, h->sid, &at, &len))
        return 0;
    r = req_by_id(h->rid);
    if (r == NULL || r->kind != REQ_RECV || !r->active || len != r->total) {
        conn_protocol_error(c, "single-copy announcement unlike its "
                               "receive");
        return -1;
    }
    n = len < r->cap ? (size_t)len : r->cap; /* the rest is dropped */
    k = n;
    if (tp.nrep == 1 && shm_split_min() > 0 && n >= shm_split_min() &&
        shm_cma_peer_reads(c->shm)) {
        k = n / 2;
        /* Counted in: what is dropped; ours once read; the sender's
         * half when its notice comes. */
        r->got = (size_t)(len - n);
        if (conn_cma_ask(c, h, k, n - k, (uint64_t)(uintptr_t)(r->rbuf + k)) ==
            -1)
            return -1;
    }
    mpii_test_point("cma");
    if (mpii_test_hit("cmasender"))
        shm_test_kill_peer(c->shm);
    if ((refuse = mpii_test_hit("cmarefuse")) != 0)
        errno = EPERM; /* tests: as if the kernel refused */
    /* Whole, without replicas: with the others matched in this pass,
     * in one call (conn_cma_flush, which sends the done). */
    if (k == n && n > 0 && tp.nrep == 1 && !refuse) {
        if (c->ncmaq == SHM_CMA_BATCH && conn_cma_flush(c) == -1)
            return -1;
        if (shm_cma_queue(c->shm, r->rbuf, at, n) == 0) {
            c->cmaq[c->ncmaq].r = r;
            c->cmaq[c->ncmaq++].sid = h->sid;
            return 1;
        }
    }
    if (k > 0 && (refuse || shm_cma_read(c->shm, r->rbuf, at, k) == -1)) {
        if (errno == EPERM || errno == EACCES || errno == ENOSYS) {
            mpii_log("rank %d: single copy from process %d refused (%s): "
                     "its messages go through the rings",
                     tp.world, c->world, strerror(errno));
            shm_cma_refused(c->shm);
            tp.nring_rndv++;
            if (k == n)
                return 0;
            /* Split: our half through the ring, then the sender may
             * complete (it copies both halves before it reads on). */
            if (conn_cma_ask(c, h, 0, k, 0) == -1)
                return -1;
            h->flags |= WF_CTS_DONE;
            return 0;
        }
        mpii_log("rank %d: single copy from process %d failed (%s): taken "
                 "as gone",
                 tp.world, c->world, strerror(errno));
        conn_kill(c);
        return -1;
    }
    tp.ncma_read++;
    if (k < n) {
        r->got += k;
        if (r->got >= r->total) /* the sender's half came first */
            req_complete(r, MPI_SUCCESS);
        h->flags |= WF_CTS_DONE;
        return 0;
    }
    r->got = r->total;
    req_complete(r, MPI_SUCCESS);
    if (tp.nrep > 1)
        return 1;
    h->flags |= WF_CTS_DONE;
    return 0;
}

/* shm: the receiver asks us (split clear-to-send, payload: offset,
 * count, address) to write part of send r into it ourselves, or (address
 * 0, or our write refused) to send it through the ring; copies are made
 * before we return, so the receiver's done, which comes after in the
 * ring, completes r. */
static void
conn_cma_push(struct conn *c, const struct wire_hdr *h, const uint8_t *payload,
              struct mpii_req *r)
{
    uint64_t split[3];
    struct wire_hdr d;

    memcpy(split, payload, sizeof split);
    if (split[0] > r->len || split[1] > r->len - split[0]) {
        conn_protocol_error(c, "split clear-to-send beyond its send");
        return;
    }
    memset(&d, 0, sizeof d);
    d.type = FR_DATA;
    d.rid = h->rid;
    if (split[2] != 0 && split[1] > 0) {
        if (mpii_test_hit("cmawrefuse"))
            errno = EPERM; /* tests: as if the kernel refused */
        else if (shm_cma_write(c->shm, split[2], r->data + split[0],
                               (size_t)split[1]) == 0) {
            d.flags = WF_DATA_WRITTEN;
            d.total = split[1];
            (void)conn_send(c, &d, NULL, 0, 0, NULL);
            return;
        }
        if (errno != EPERM && errno != EACCES && errno != ENOSYS) {
            mpii_log("rank %d: single copy into process %d failed (%s): "
                     "taken as gone",
                     tp.world, c->world, strerror(errno));
            conn_kill(c);
            return;
        }
        mpii_log("rank %d: single copy into process %d refused (%s): "
                 "through the ring",
                 tp.world, c->world, strerror(errno));
    }
    /* Copied (copy 1): the send may complete before it is written. */
    d.total = split[0];
    (void)conn_send(c, &d, r->data + split[0], (size_t)split[1], 1, NULL);
}

/* shm: the sender wrote its half of a split single copy (DATA flagged
 * written, total bytes) into receive rid. */
static void
conn_cma_written(struct conn *c, const struct wire_hdr *h)
{
    struct mpii_req *r = req_by_id(h->rid);

    if (!c->on_shm || tp.nrep > 1 || r == NULL || r->kind != REQ_RECV ||
        !r->active || r->conn != c || h->total > r->total - r->got) {
        conn_protocol_error(c, "written data for no such receive");
        return;
    }
    r->got += (size_t)h->total;
    if (r->got >= r->total)
        req_complete(r, MPI_SUCCESS);
}

int
conn_send(struct conn *c, struct wire_hdr *h, const void *data, size_t len,
          int copy, struct mpii_req *done)
{
    struct txitem *t;
    struct iovec iov[2];
    ssize_t n = 0;
    size_t off, chunk;
    uint64_t cma_at;
    int rc, piece;

    if (c != NULL && conn_opening(c) && tp.nrep > 1)
        return conn_early_add(c, h, data, len, done);
    if (c == NULL || c->state != CS_READY)
        return MPI_ERR_OTHER;
    /* shm: a rendezvous announced for a single copy; a clear-to-send
     * for one announced so is the copy. */
    if (c->on_shm && h->type == FR_RTS && len == 0 &&
        conn_cma_announce(c, h, &cma_at)) {
        data = &cma_at;
        len = WF_CMA_LEN;
        copy = 1;
    } else if (c->on_shm && h->type == FR_CTS &&
               (rc = conn_cma_copy(c, h)) != 0)
        return rc > 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
    h->len = len;
    if (c->sealed) {
        /* Big payloads go in several frames, each at its offset. */
        off = 0;
        do {
            chunk = len - off > WF_SEAL_SEND ? WF_SEAL_SEND : len - off;
            h->seq = c->seq_tx++;
            h->len = chunk;
            if (h->type == FR_DATA)
                h->total = off;
            /* RTS, CTS and FIN frames have no payload (data NULL). */
            rc = conn_send_sealed(c, h,
                                  data != NULL ? (const uint8_t *)data + off
                                               : NULL,
                                  chunk, copy, off + chunk == len ? done : NULL);
            if (rc != MPI_SUCCESS)
                return rc;
            off += chunk;
        } while (off < len);
        return MPI_SUCCESS;
    }
    h->seq = c->seq_tx++;
    /* A payload alone in flight goes in pieces (its receiver copies one
     * while we write the next); one of several announced to this peer
     * goes whole (a stream), see conn_writev. */
    if (h->type == FR_RTS)
        c->rts_out++;
    else if (h->type == FR_CTS)
        c->cts_out++;
    else if (h->type == FR_DATA && c->rts_out > 0)
        c->rts_out--;
    piece = h->type == FR_DATA && c->rts_out == 0;
    /* Nothing queued: try to write at once, from the caller's buffer. */
    if (c->txh == NULL) {
        iov[0].iov_base = h;
        iov[0].iov_len = HDR;
        iov[1].iov_base = (void *)data;
        iov[1].iov_len = len;
        n = conn_writev(c, iov, len > 0 ? 2 : 1, piece);
        if (n > 0 && len > MPII_EAGER_MAX)
            tp_moved();
        if (n == -1 && errno != EAGAIN && errno != EINTR) {
            conn_kill(c);
            return MPI_ERR_OTHER;
        }
        if (n == (ssize_t)(HDR + len)) {
            if (done != NULL)
                req_complete(done, MPI_SUCCESS);
            return MPI_SUCCESS;
        }
        if (n < 0)
            n = 0;
    }
    if ((t = calloc(1, sizeof *t)) == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(t->hbuf, h, HDR);
    t->head = t->hbuf;
    t->hlen = HDR;
    t->off = (size_t)n;
    t->dlen = len;
    t->data = data;
    if (copy && len > 0) {
        /* The caller's buffer is free when we return: keep a copy. */
        if ((t->head = malloc(HDR + len)) == NULL) {
            free(t);
            return MPI_ERR_NO_MEM;
        }
        memcpy(t->head, h, HDR);
        memcpy(t->head + HDR, data, len);
        t->hlen = HDR + len;
        t->data = NULL;
        t->dlen = 0;
    }
    t->done = done;
    t->piece = piece;
    return conn_queue(c, t);
}

/* --- receiving -------------------------------------------------------- */

static void
conn_protocol_error(struct conn *c, const char *why)
{
    mpii_log("rank %d: malformed frame from rank %d (%s): connection closed",
             tp.world, c->world, why);
    conn_kill(c);
}

/* A rendezvous payload: what is at hand lands now, the rest is read
 * straight into place.  Returns bytes of payload consumed from avail. */
static size_t
conn_data(struct conn *c, const struct wire_hdr *h, const uint8_t *payload,
          size_t avail)
{
    struct mpii_req *r = req_by_id(h->rid);
    size_t off = (size_t)h->total, fit, now;

    if (r == NULL || r->kind != REQ_RECV || r->conn != c ||
        off > r->total || h->len > r->total - off) {
        conn_protocol_error(c, "data for no such receive, or beyond it");
        return 0;
    }
    if (off == 0 && c->cts_out > 0)
        c->cts_out--;
    /* Bytes beyond the receive's capacity are read and dropped. */
    fit = off >= r->cap ? 0 : (r->cap - off < h->len ? r->cap - off : h->len);
    now = avail < h->len ? avail : h->len;
    if (now > 0 && fit > 0)
        memcpy(r->rbuf + off, payload, now < fit ? now : fit);
    r->got += now;
    if (now < h->len) {
        c->dreq = r;
        c->ddst = r->rbuf + off + now;
        c->dwant = now < fit ? fit - now : 0;
        c->dgot = 0;
        c->ddiscard = h->len - now - c->dwant;
        return now;
    }
    if (r->got >= r->total)
        req_complete(r, MPI_SUCCESS);
    return now;
}

/* shm: keep an announcement for a single copy (RTS, WF_RTS_CMA) until the
 * receive that takes it sends its clear-to-send.  One we cannot (no
 * longer) read from, or cannot keep, is not kept: that clear-to-send is
 * then a plain one and the sender writes the bytes into the ring. */
static int
conn_cma_note(struct conn *c, const struct wire_hdr *h, const uint8_t *payload)
{
    uint64_t at;

    if (!c->on_shm) {
        conn_protocol_error(c, "single-copy announcement off shared memory");
        return -1;
    }
    memcpy(&at, payload, sizeof at);
    if (shm_cma_reads(c->shm))
        (void)shm_note(c->shm, h->sid, at, h->total);
    return 0;
}

/* One frame whose header (and, unless DATA, payload) is at hand.  Returns
 * the payload bytes used. */
static size_t
conn_frame(struct conn *c, const struct wire_hdr *h, const uint8_t *payload,
           size_t avail)
{
    struct mpii_req *r;
    const char *why;

    if ((why = wf_frame_check(h, c->seq_rx++, tp.nrep)) != NULL) {
        conn_protocol_error(c, why);
        return 0;
    }
    switch (h->type) {
    case FR_EAGER:
        if (tp.nrep > 1)
            rep_incoming(c, h, payload);
        else
            match_incoming(c, h, payload);
        return h->len;
    case FR_RTS:
    case FR_FIN:
    case FR_ACK:
    case FR_TAKEOVER:
        if (h->type == FR_FIN && tp.nrep == 1)
            c->fin_rx = 1;
        /* shm: kept for the clear-to-send (conn_cma_copy). */
        if ((h->flags & WF_RTS_CMA) != 0 && conn_cma_note(c, h, payload) == -1)
            return 0;
        if (tp.nrep > 1)
            rep_incoming(c, h, NULL);
        else
            match_incoming(c, h, NULL);
        return h->len;
    case FR_CTS:
        r = req_by_id(h->sid);
        /* With replicas, any replica of the destination rank may ask
         * (the request completes when every one has the message). */
        if (r == NULL || r->kind != REQ_SEND || !r->active ||
            (tp.nrep == 1 ? r->conn != c
                          : r->comm == NULL ||
                                r->comm->world[r->peer] !=
                                    c->world / tp.nrep)) {
            conn_protocol_error(c, "clear-to-send for no such send");
            return 0;
        }
        /* shm: the receiver read it itself, or asks us to write (part
         * of) it. */
        if ((h->flags & (WF_CTS_DONE | WF_CTS_SPLIT)) != 0) {
            if (!c->on_shm || tp.nrep > 1)
                conn_protocol_error(c, "single copy done, but not asked");
            else if ((h->flags & WF_CTS_SPLIT) != 0)
                conn_cma_push(c, h, payload, r);
            else
                req_complete(r, MPI_SUCCESS);
            return h->len;
        }
        mpii_test_point("rndv");
        {
            struct wire_hdr d;

            memset(&d, 0, sizeof d);
            d.type = FR_DATA;
            d.rid = h->rid;
            d.total = 0;
            conn_send(c, &d, r->data, r->len, 0, tp.nrep == 1 ? r : NULL);
        }
        return 0;
    case FR_DATA:
        if ((h->flags & WF_DATA_WRITTEN) != 0) {
            conn_cma_written(c, h); /* shm: */
            return 0;
        }
        return conn_data(c, h, payload, avail);
    case FR_DECIDE:
    case FR_DECIDE_ACK:
        dec_incoming(c, h, payload);
        return h->len;
    default: /* refused by wf_frame_check */
        return 0;
    }
}

/* Parse whole frames from the plain receive buffer. */
static void
conn_parse_plain(struct conn *c)
{
    struct wire_hdr h;
    const char *why = NULL;
    size_t avail;
    enum wf_next next;

    while (c->state == CS_READY && c->dreq == NULL && c->ddiscard == 0) {
        avail = c->rlen - c->rpos;
        next = wf_plain_next(c->rbuf + c->rpos, avail, &h, &why);
        if (next == WF_BAD)
            conn_protocol_error(c, why);
        if (next != WF_FRAME)
            return; /* or wait for the rest of an eager message */
        c->rpos += HDR;
        c->rpos += conn_frame(c, &h, c->rbuf + c->rpos, avail - HDR);
    }
}

/* A sealed rendezvous payload: opened straight into the receiver's
 * memory when it fits (a payload that does not verify is zeroed there
 * and the connection ends). */
static void
conn_sealed_data(struct conn *c, const struct wire_hdr *h,
                 const uint8_t *frame)
{
    struct mpii_req *r = req_by_id(h->rid);
    size_t off = (size_t)h->total;
    const char *why;
    int rc;

    if ((why = wf_frame_check(h, c->seq_rx++, tp.nrep)) != NULL) {
        conn_protocol_error(c, why);
        return;
    }
    if (r == NULL || r->kind != REQ_RECV || r->conn != c || off > r->total ||
        h->len > r->total - off) {
        conn_protocol_error(c, "data for no such receive, or beyond it");
        return;
    }
    mpii_test_point("open");
    if (off <= r->cap && h->len <= r->cap - off)
        rc = wf_open(r->rbuf + off, frame, h->len, c->ctr_rx++, c->arx);
    else {
        /* Truncated receive: what fits is kept, the rest dropped. */
        rc = wf_open(c->plain, frame, h->len, c->ctr_rx++, c->arx);
        if (rc == 0 && off < r->cap)
            memcpy(r->rbuf + off, c->plain, r->cap - off);
    }
    if (rc == -1) {
        conn_protocol_error(c, "sealed payload does not verify");
        return;
    }
    r->got += h->len;
    if (r->got >= r->total)
        req_complete(r, MPI_SUCCESS);
}

/* Parse whole sealed frames. */
static void
conn_parse_sealed(struct conn *c)
{
    struct wire_hdr h;
    const uint8_t *frame;
    const char *why = NULL;
    size_t used;
    enum wf_next next;

    while (c->state == CS_READY) {
        next = wf_sealed_next(c->rbuf + c->rpos, c->rlen - c->rpos, &h, &used,
                              &why);
        if (next == WF_BAD)
            conn_protocol_error(c, why);
        if (next != WF_FRAME)
            return;
        frame = c->rbuf + c->rpos + 4;
        c->rpos += used;
        if (h.type == FR_DATA) {
            conn_sealed_data(c, &h, frame);
            continue;
        }
        if (wf_open(c->plain, frame, h.len, c->ctr_rx++, c->arx) == -1) {
            conn_protocol_error(c, "sealed payload does not verify");
            return;
        }
        conn_frame(c, &h, c->plain, h.len);
    }
}

/* Read from c's channel as recv would (shm: the ring, EAGAIN when
 * empty; the socket's end is seen by conn_bell). */
static ssize_t
conn_recv(struct conn *c, void *buf, size_t len)
{
    size_t k;

    if (!c->on_shm)
        return recv(c->fd, buf, len, 0);
    if ((k = shm_read(c->shm, buf, len)) == 0) {
        errno = EAGAIN;
        return -1;
    }
    return (ssize_t)k;
}

static void conn_read(struct conn *);

/* shm: the socket of a pair on shared memory carries doorbell bytes only:
 * drop them; its end means the other process is gone, once what it wrote
 * before it went is read (as TCP gives the bytes before the end). */
static void
conn_bell(struct conn *c)
{
    uint8_t b[64];
    ssize_t n;

    while ((n = recv(c->fd, b, sizeof b, MSG_DONTWAIT)) > 0)
        ;
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        conn_read(c);
        if (c->state == CS_READY)
            conn_kill(c);
    }
}

/* How much to read into the receive buffer.  Sealed: not past the end
 * of a frame begun, so the next frame starts at the buffer's head and the
 * (cache-hot) buffer is not shifted; a bad length is wf_sealed_next's. */
static size_t
conn_read_room(const struct conn *c)
{
    size_t room = c->rcap - c->rlen, have = c->rlen - c->rpos;
    uint32_t flen;

    if (!c->sealed || have < 4)
        return room;
    memcpy(&flen, c->rbuf + c->rpos, 4);
    if (flen > WF_SEAL_MAX || 4 + (size_t)flen <= have)
        return room;
    return 4 + (size_t)flen - have < room ? 4 + (size_t)flen - have : room;
}

static void
conn_read(struct conn *c)
{
    uint8_t scratch[16384];
    ssize_t n;
    size_t room;

    while (c->state == CS_READY) {
        if (c->dreq != NULL || c->ddiscard > 0) {
            /* A rendezvous payload straight into the user's memory. */
            if (c->dgot < c->dwant)
                n = conn_recv(c, c->ddst + c->dgot, c->dwant - c->dgot);
            else
                n = conn_recv(c, scratch,
                              c->ddiscard < sizeof scratch ? c->ddiscard
                                                            : sizeof scratch);
            if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
                conn_kill(c);
                return;
            }
            if (n == -1)
                return;
            tp_moved();
            if (c->dgot < c->dwant)
                c->dgot += (size_t)n;
            else
                c->ddiscard -= (size_t)n;
            c->dreq->got += (size_t)n;
            if (c->dgot == c->dwant && c->ddiscard == 0) {
                struct mpii_req *r = c->dreq;

                c->dreq = NULL;
                if (r->got >= r->total)
                    req_complete(r, MPI_SUCCESS);
                conn_parse_plain(c);
            }
            continue;
        }
        if (c->rpos > 0 && c->rpos == c->rlen)
            c->rpos = c->rlen = 0;
        else if (c->rpos > 0 && c->rlen == c->rcap) {
            memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
            c->rlen -= c->rpos;
            c->rpos = 0;
        }
        room = conn_read_room(c);
        /* A payload we asked for may be next: read its header alone, so
         * that the payload lands in place, not here and then copied. */
        if (!c->sealed && c->cts_out > 0 && c->rpos == c->rlen && room > HDR)
            room = HDR;
        n = conn_recv(c, c->rbuf + c->rlen, room);
        if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
            conn_kill(c);
            return;
        }
        if (n == -1)
            return;
        c->rlen += (size_t)n;
        if (c->sealed)
            conn_parse_sealed(c);
        else
            conn_parse_plain(c);
        /* Less than asked for: the socket was empty, and another recv()
         * would only say so (a system call per message saved; what
         * arrives meanwhile waits for the next pass).  A direct read
         * just set up goes on: its bytes may be there. */
        if ((size_t)n < room && c->dreq == NULL && c->ddiscard == 0)
            return;
    }
}

/* --- progress --------------------------------------------------------- */

int
transport_progress(int timeout_ms)
{
    struct conn *c;
    int i, n = 0, awake = 0, bells;

    if (timeout_ms > 0 && tp.by_world != NULL &&
        tp_pfd_room(tp.nlive + tp.npending + 2) == 0) {
        for (i = 0; i < tp.nlive; i++)
            if ((c = tp.by_world[tp.live[i]]) != NULL && c->state == CS_READY) {
                tp.pfd[n].fd = c->fd;
                tp.pfd[n].events = POLLIN | (c->txh != NULL ? POLLOUT : 0);
                tp.pfd[n].revents = 0;
                /* shm: ask the other end for a doorbell, unless there is
                 * work already; the socket is never the one to write. */
                if (c->on_shm) {
                    tp.pfd[n].events = POLLIN;
                    if (!shm_arm(c->shm, c->txh != NULL))
                        awake = 1;
                }
                n++;
            }
        if (tp.ctl != -1) {
            /* The coordinator's views wake us too. */
            tp.pfd[n].fd = tp.ctl;
            tp.pfd[n].events = POLLIN;
            tp.pfd[n].revents = 0;
            n++;
        }
        /* On demand, so do ranks connecting to us for the first time. */
        if (tp.ondemand)
            tp_poll_handshakes(&n);
        if (n > 0)
            (void)poll(tp.pfd, (nfds_t)n, awake ? 0 : timeout_ms);
        else {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        for (i = 0; i < tp.nlive; i++)
            if ((c = tp.by_world[tp.live[i]]) != NULL && c->on_shm)
                shm_disarm(c->shm);
    }
    /* shm: sockets of pairs on shared memory, after a wait and every few
     * busy passes (a recv each): doorbells, and the other end's death. */
    bells = timeout_ms > 0 || (++tp.shm_ticks & 63) == 0;
    /* Newcomers: after a wait, while handshakes are under way, and every
     * few passes of a busy loop (accept costs a system call). */
    if (tp.ondemand && (timeout_ms > 0 || tp.npending > 0 ||
                        tp.nopening > 0 || (++tp.ticks & 63) == 0)) {
        tp_accept();
        tp_handshakes();
    }
    for (i = 0; tp.by_world != NULL && i < tp.nlive; i++)
        if ((c = tp.by_world[tp.live[i]]) != NULL && c->state == CS_READY) {
            if (c->on_shm && bells)
                conn_bell(c);
            if (c->txh != NULL)
                conn_flush(c);
            conn_read(c);
            if (c->ncmaq > 0) /* shm: */
                (void)conn_cma_flush(c);
        }
    /* A view is rare: look for one every few passes, or after a wait. */
    if (tp.ctl != -1 && (timeout_ms > 0 || (++tp.ticks & 63) == 0))
        rep_poll_ctl();
    /* One-sided requests to this process are served whatever it waits
     * for (passive target). */
    mpii_rma_poll();
    return tp.failed ? MPI_ERR_OTHER : MPI_SUCCESS;
}

void
transport_self(const struct wire_hdr *h, const void *data)
{
    match_incoming(NULL, h, data);
}

int
transport_flushed(void)
{
    struct conn *c;
    int i;

    for (i = 0; tp.by_world != NULL && i < tp.nlive; i++)
        if ((c = tp.by_world[tp.live[i]]) != NULL &&
            ((c->state == CS_READY && c->txh != NULL) ||
             (conn_opening(c) && c->early != NULL)))
            return 0;
    for (i = 0; i < tp.npending; i++)
        if (tp.pending[i] != NULL && tp.pending[i]->early != NULL)
            return 0;
    return 1;
}

int
transport_fin_step(void)
{
    struct wire_hdr h;
    struct conn *c;
    int i, done = tp.npending == 0;

    for (i = 0; tp.by_world != NULL && i < tp.nlive; i++) {
        if ((c = tp.by_world[tp.live[i]]) == NULL || c->state == CS_DEAD)
            continue;
        if (c->state != CS_READY) {
            done = 0; /* a handshake under way: it may bring a FIN */
            continue;
        }
        if (!c->fin_tx) {
            memset(&h, 0, sizeof h);
            h.type = FR_FIN;
            h.ctx = MPII_CTX_INTERNAL;
            c->fin_tx = 1;
            (void)conn_send(c, &h, NULL, 0, 0, NULL);
        }
        if (!c->fin_rx)
            done = 0;
    }
    return done;
}

void
transport_fini(void)
{
    struct conn *c;
    int i;

    if (getenv("P2P_MPI_STATS") != NULL && tp.by_world != NULL)
    {
        mpii_log("p2pmpi: rank %d: %u connections made, %u accepted", tp.world,
                 tp.nmade, tp.naccepted);
        mpii_log("p2pmpi: rank %d: %u through shared memory", tp.world,
                 tp.nshm);
        mpii_log("p2pmpi: rank %d: single copy from %u of them, %u messages "
                 "announced, %u read; %u rendezvous through the rings",
                 tp.world, tp.ncma_pairs, tp.ncma_sent, tp.ncma_read,
                 tp.nring_rndv);
    }
    for (i = 0; tp.by_world != NULL && i < tp.nlive; i++)
        if ((c = tp.by_world[tp.live[i]]) != NULL)
            conn_free(c);
    for (i = 0; i < tp.npending; i++)
        if (tp.pending[i] != NULL)
            conn_free(tp.pending[i]);
    free(tp.pending);
    free(tp.by_world);
    free(tp.live);
    free(tp.inlive);
    free(tp.addr);
    free(tp.pfd);
    tp.pending = NULL;
    tp.npending = tp.pcap = tp.nlive = tp.pfdcap = 0;
    tp.by_world = NULL;
    tp.live = NULL;
    tp.inlive = NULL;
    tp.addr = NULL;
    tp.pfd = NULL;
    tp.ondemand = 0;
    tp.nmade = tp.naccepted = tp.nshm = 0;
    tp.ncma_pairs = tp.ncma_sent = tp.ncma_read = tp.nring_rndv = 0;
    if (tp.listen_fd != -1)
        close(tp.listen_fd);
    tp.listen_fd = -1;
    sec_wipe(tp.key, sizeof tp.key);
    tp.failed = 0;
    tp.shm_pending = 0;
    tp.ctl = -1;
}
