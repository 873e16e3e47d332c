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
 * coordinator, as a broken one is.  A connection starts with a
 * handshake that proves both ends hold the job's key (MACs over fresh
 * nonces) and, unless the job turned encryption off, derives a key for
 * each direction; then frames flow, plain or sealed.  The bytes of both
 * (message layouts, checks, MACs, sealing) are wireframe.c's; this file
 * moves them: the table of connections, sending, receiving, progress and
 * the end.  A connection's opening and handshake are conn_handshake.c's,
 * its sealed frames conn_sealed.c's, its single copies conn_cma.c's;
 * conn.h is what they share.
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
 * asked to write the second half itself; conn_cma.c).  The hooks are
 * marked "shm:".
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aead.h"
#include "conn.h"
#include "decide.h"
#include "rep.h"

#define IOV_BATCH 64
/* Plain sockets on this host: a payload alone in flight goes out in a
 * first write of TX_FIRST bytes, the rest in one more (at most
 * TX_BUDGET).  The short write is pushed at once, so the receiver starts
 * copying while we copy the rest in.  Measured on loopback (Linux 6.18,
 * 1 MiB ping-pong, 2 ranks): 104-110 us against 142-179 in the 512 KiB
 * writes used before; 4 MiB 497-515 against 621-717.  A bare TCP
 * ping-pong outside the library shows the same (Reno, as our same-host
 * connections: 105-111 us against 142-145 in 512 KiB writes and 109-112
 * in one write; BBR: one write 135-164), so it is the kernel's doing
 * (docs/mpi.md "A lone payload's first write").  One flush writes at
 * most TX_BUDGET before reading (both directions stream at once). */
#define TX_FIRST (32 * 1024)
#define TX_BUDGET (1024 * 1024)
/* Plain sockets to another host: at most TX_NET_PIECE bytes a call.  A
 * long write holds the socket while the ACKs that came meanwhile wait to
 * be processed when it lets go (__release_sock), and the stream stalls
 * behind them: two network namespaces over a veth pair, MTU 1500, 1 MiB
 * messages ran 2.1 GB/s in 512 KiB-1 MiB writes and 3.3-3.5 in 128 KiB
 * ones (256 KiB: 3.1; held to 25 Gbit/s: 2.1, 2.7 and 2.4), while over
 * loopback the long writes are the faster (9.3 against 7.7 GB/s). */
#define TX_NET_PIECE (128 * 1024)

struct transport tp = {.listen_fd = -1, .ctl = -1, .late_read = -1};

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
    return c != NULL && c->state == CS_READY && !c->tx_gone;
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

/* Is c still opening (its handshake under way, or ours lost to the
 * other side's connection that is to replace it)?  Frames wait on it. */
int
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
void
tp_set(int p, struct conn *c)
{
    tp.by_world[p] = c;
    if (!tp.inlive[p]) {
        tp.inlive[p] = 1;
        tp.live[tp.nlive++] = p;
    }
}

/* --- lifetime --------------------------------------------------------- */

/* Free a connection whoever holds it (not a failure: on purpose). */
void
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

/* Free a connection that never made it into the table. */
void
conn_discard(struct conn *c)
{
    conn_kill(c);
    conn_free(c);
}

/* Room for n descriptors to poll. */
int
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

/* --- failure ----------------------------------------------------------- */

/* Drop what c has queued to send: those sends fail. */
static void
conn_drop_tx(struct conn *c)
{
    struct txitem *t;

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
}

/* Close c (not yet dead) and drop what it had queued. */
void
conn_close(struct conn *c)
{
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
    conn_drop_tx(c);
    if (c->dreq != NULL && tp.nrep == 1)
        req_complete(c->dreq, MPI_ERR_OTHER);
    /* With replicas, a rendezvous cut short is replayed by the rank's
     * next replica once the coordinator's view says this one is dead. */
    c->dreq = NULL;
    if (c->dmsg != NULL)
        match_filled(c->dmsg, MPI_ERR_OTHER);
    c->dmsg = NULL;
    c->deager = 0;
    c->ddiscard = 0;
    c->hdr_held = 0;
}

/* The connection broke (or proved bogus): close it, and if it was one of
 * the job's, say so: with R = 1 the job has failed; with replicas it is a
 * suspicion for the coordinator to judge. */
void
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

/* A write to c's socket failed.  When the other end has gone (closed,
 * reset), frames it sent before it went may still wait unread in our
 * socket, its last acknowledgement among them (a replica that finished
 * and left): they are read as usual, and the end of the stream read
 * after them kills the connection.  Meanwhile nothing more goes out
 * (conn_send refuses, conn_ready says no).  A pair on shared memory
 * writes no frame to its socket: it is killed at once, as before. */
static void
conn_tx_failed(struct conn *c)
{
    if (c->on_shm || (errno != EPIPE && errno != ECONNRESET)) {
        conn_kill(c);
        return;
    }
    c->tx_gone = 1;
    conn_drop_tx(c);
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
void
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

unsigned long
transport_frames(void)
{
    return tp.frames;
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
 * what fits and says EAGAIN when full.  The first write of a payload
 * alone in flight (first) goes to a plain socket on this host TX_FIRST
 * bytes at most; everything else in as big writes as it takes (to
 * another host, TX_NET_PIECE at most). */
static ssize_t
conn_writev(struct conn *c, struct iovec *iov, int n, int first)
{
    size_t k;

    if (!c->on_shm && !c->sealed && c->offhost)
        return write_iov(c->fd, iov, iov_trim(iov, n, TX_NET_PIECE));
    if (!c->on_shm && !c->sealed && first)
        return write_iov(c->fd, iov, iov_trim(iov, n, TX_FIRST));
    if (!c->on_shm)
        return write_iov(c->fd, iov, n);
    if ((k = shm_writev(c->shm, iov, n)) == 0) {
        errno = EAGAIN;
        return -1;
    }
    return (ssize_t)k;
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
        n = conn_writev(c, iov, i,
                        c->txh->next == NULL && c->txh->lone &&
                            c->txh->off == 0);
        if (n > 0) {
            tp_moved();
            sent += (size_t)n;
        }
        if (n == -1) {
            if (errno != EAGAIN && errno != EINTR)
                conn_tx_failed(c);
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

int
conn_queue(struct conn *c, struct txitem *t)
{
    t->next = NULL;
    *c->txt = t;
    c->txt = &t->next;
    conn_flush(c);
    return c->state == CS_DEAD || c->tx_gone ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* Write all of iov[0..n), waiting for room (fault injection only). */
static void
write_all(struct conn *c, struct iovec *iov, int n)
{
    struct pollfd p = {.fd = c->fd, .events = POLLOUT};
    ssize_t k;

    while (n > 0) {
        if ((k = write_iov(c->fd, iov, n)) == -1) {
            if (errno != EAGAIN && errno != EINTR)
                return;
            (void)poll(&p, 1, 100);
            continue;
        }
        for (; n > 0 && (size_t)k >= iov[0].iov_len; iov++, n--)
            k -= (ssize_t)iov[0].iov_len;
        if (n > 0) {
            iov[0].iov_base = (uint8_t *)iov[0].iov_base + k;
            iov[0].iov_len -= (size_t)k;
        }
    }
}

/* Fault injection (testkill.c, "eagerhalf" and "eagerpause"): the
 * header and half the payload of a long eager frame written, then this
 * process killed, or the rest written 200 ms later: its receiver holds
 * a payload begun.  1 when the frame went whole. */
static int
conn_test_midway(struct conn *c, struct wire_hdr *h, const void *data,
                 size_t len)
{
    struct iovec iov[2] = {{h, HDR}, {(void *)data, len / 2}};
    struct timespec pause = {0, 200 * 1000 * 1000};
    int die = mpii_test_hit("eagerhalf");

    if (!die && !mpii_test_hit("eagerpause"))
        return 0;
    write_all(c, iov, 2);
    if (die)
        raise(SIGKILL);
    nanosleep(&pause, NULL);
    iov[0].iov_base = (uint8_t *)data + len / 2;
    iov[0].iov_len = len - len / 2;
    write_all(c, iov, 1);
    return 1;
}

int
conn_send(struct conn *c, struct wire_hdr *h, const void *data, size_t len,
          int copy, struct mpii_req *done)
{
    struct txitem *t;
    struct iovec iov[2];
    ssize_t n = 0;
    uint64_t cma_at;
    int rc, lone;

    if (c != NULL && conn_opening(c) && tp.nrep > 1)
        return conn_early_add(c, h, data, len, done);
    if (c == NULL || c->state != CS_READY || c->tx_gone)
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
    if (c->sealed)
        return conn_send_sealed(c, h, data, len, copy, done);
    h->seq = c->seq_tx++;
    /* A payload alone in flight starts with a short write (its receiver
     * copies it out while we write the rest); one of several announced
     * to this peer goes whole (a stream), see conn_writev. */
    if (h->type == FR_RTS)
        c->rts_out++;
    else if (h->type == FR_CTS)
        c->cts_out++;
    else if (h->type == FR_DATA && c->rts_out > 0)
        c->rts_out--;
    lone = h->type == FR_DATA && c->rts_out == 0;
    /* Nothing queued: try to write at once, from the caller's buffer. */
    if (c->txh == NULL) {
        if (h->type == FR_EAGER && len >= EAGER_DIRECT_MIN && !c->on_shm &&
            conn_test_midway(c, h, data, len)) {
            if (done != NULL)
                req_complete(done, MPI_SUCCESS);
            return MPI_SUCCESS;
        }
        iov[0].iov_base = h;
        iov[0].iov_len = HDR;
        iov[1].iov_base = (void *)data;
        iov[1].iov_len = len;
        n = conn_writev(c, iov, len > 0 ? 2 : 1, lone);
        if (n > 0 && len > MPII_EAGER_MAX)
            tp_moved();
        if (n == -1 && errno != EAGAIN && errno != EINTR) {
            conn_tx_failed(c);
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
    t->lone = lone;
    return conn_queue(c, t);
}

int
conn_send_eager(struct conn *c, struct wire_hdr *h, const void *data,
                size_t len)
{
    uint8_t head[WF_SHM_HDR_LEN], *at;
    struct iovec iov[2];

    /* shm: a short frame (16 bytes of header instead of 64: several
     * small messages to a cache line) when the ring takes it whole now;
     * its sequence number is the ring's order.  Written in place unless
     * it wraps around the ring's end. */
    if (c != NULL && c->on_shm && c->state == CS_READY && tp.nrep == 1 &&
        c->txh == NULL && h->lseq == 0) {
        h->len = len;
        if ((at = shm_reserve(c->shm, WF_SHM_HDR_LEN + len)) != NULL) {
            wf_shm_put_rest(at, h);
            if (len > 0)
                memcpy(at + WF_SHM_HDR_LEN, data, len);
            shm_commit(c->shm, WF_SHM_HDR_LEN + len, FR_SHM_EAGER);
            h->seq = c->seq_tx++;
            return MPI_SUCCESS;
        }
        wf_shm_put(head, h);
        iov[0].iov_base = head;
        iov[0].iov_len = sizeof head;
        iov[1].iov_base = (void *)data;
        iov[1].iov_len = len;
        if (shm_write_all(c->shm, iov, len > 0 ? 2 : 1)) {
            h->seq = c->seq_tx++;
            return MPI_SUCCESS;
        }
    }
    return conn_send(c, h, data, len, 1, NULL);
}

/* --- receiving -------------------------------------------------------- */

void
conn_protocol_error(struct conn *c, const char *why)
{
    mpii_log("rank %d: malformed frame from rank %d (%s): connection closed",
             tp.world, c->world, why);
    conn_kill(c);
}

/* Is c reading a payload straight into place (conn_read)? */
static int
conn_direct(const struct conn *c)
{
    return c->dreq != NULL || c->dmsg != NULL || c->ddiscard > 0;
}

/* A payload of len bytes for dst, where fit of them have room: the now
 * at hand (payload) land at once, the rest is read straight into place
 * by conn_read, the bytes beyond fit read and dropped. */
static void
conn_direct_rest(struct conn *c, uint8_t *dst, size_t fit,
                 const uint8_t *payload, size_t now, size_t len)
{
    if (now > 0 && fit > 0)
        memcpy(dst, payload, now < fit ? now : fit);
    if (now < len) {
        c->ddst = dst + now;
        c->dwant = now < fit ? fit - now : 0;
        c->dgot = 0;
        c->ddiscard = len - now - c->dwant;
    }
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
    conn_direct_rest(c, r->rbuf + off, fit, payload, now, h->len);
    r->got += now;
    if (now < h->len) {
        c->dreq = r;
        return now;
    }
    if (r->got >= r->total)
        req_complete(r, MPI_SUCCESS);
    return now;
}

/* Plain TCP, R = 1: a long eager frame whose header is at hand and its
 * payload not all: matched now, its payload read straight into the
 * receive that takes it or into the unexpected message kept for it, not
 * into the receive buffer and copied from there (match_eager_begin).
 * Returns 1 when it went so (its avail bytes of payload consumed); 0
 * leaves it to be read whole as any frame. */
static int
conn_eager_direct(struct conn *c, const struct wire_hdr *h,
                  const uint8_t *payload, size_t avail)
{
    struct mpii_req *r;
    struct umsg *u;
    uint8_t *dst;
    const char *why;

    if (c->on_shm || tp.nrep > 1 || h->type != FR_EAGER ||
        h->len < EAGER_DIRECT_MIN)
        return 0;
    if ((why = wf_frame_check(h, c->seq_rx, tp.nrep)) != NULL) {
        conn_protocol_error(c, why);
        return 0;
    }
    if ((dst = match_eager_begin(c, h, &r, &u)) == NULL)
        return 0;
    c->seq_rx++;
    tp.frames++;
    tp.neager_direct++;
    conn_direct_rest(c, dst, r != NULL ? (r->cap < h->len ? r->cap : h->len)
                                       : h->len,
                     payload, avail, h->len);
    if (r != NULL) {
        r->got = avail;
        c->dreq = r;
    } else
        c->dmsg = u;
    c->deager = 1;
    return 1;
}

/* One frame whose header (and, unless DATA, payload) is at hand.  Returns
 * the payload bytes used. */
size_t
conn_frame(struct conn *c, const struct wire_hdr *h, const uint8_t *payload,
           size_t avail)
{
    struct mpii_req *r;
    const char *why;

    if ((why = wf_frame_check(h, c->seq_rx++, tp.nrep)) != NULL) {
        conn_protocol_error(c, why);
        return 0;
    }
    tp.frames++;
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
    case FR_CANCEL:
        cancel_asked(c, h);
        return 0;
    case FR_CANCELLED:
        cancel_answered(c, h);
        return 0;
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
    size_t avail, hlen = HDR;
    enum wf_next next;

    while (c->state == CS_READY && !conn_direct(c)) {
        avail = c->rlen - c->rpos;
        /* shm: a ring's frames, short ones among them */
        if (c->on_shm)
            next = wf_shm_next(c->rbuf + c->rpos, avail, &h, &hlen, c->seq_rx,
                               &why);
        else
            next = wf_plain_next(c->rbuf + c->rpos, avail, &h, &why);
        if (next == WF_BAD)
            conn_protocol_error(c, why);
        if (next == WF_MORE && avail >= HDR &&
            conn_eager_direct(c, &h, c->rbuf + c->rpos + HDR, avail - HDR)) {
            c->eager_long = 1;
            c->rpos = c->rlen;
            return; /* conn_read goes on with its payload */
        }
        if (next != WF_FRAME)
            return; /* or wait for the rest of an eager message */
        if (h.type == FR_EAGER && !c->on_shm)
            c->eager_long = h.len >= EAGER_DIRECT_MIN;
        c->rpos += hlen;
        if (hlen == WF_SHM_HDR_LEN && tp.nrep == 1) {
            /* shm: a short frame is an eager message that wf_shm_next
             * checked whole: matched at once (conn_frame's checks hold
             * by construction). */
            c->seq_rx++;
            tp.frames++;
            match_incoming(c, &h, c->rbuf + c->rpos);
            c->rpos += (size_t)h.len;
        } else
            c->rpos += conn_frame(c, &h, c->rbuf + c->rpos, avail - hlen);
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
    /* At a frame's start (nothing of one held here), short frames are
     * found by their first byte, and an empty ring by a 0 there, without
     * the writer's tail, whose line then stays with the writer. */
    if (c->rpos == c->rlen && !conn_direct(c)) {
        int none;

        if ((k = shm_read_marked(c->shm, buf, len, FR_SHM_EAGER,
                                 WF_SHM_HDR_LEN, wf_shm_size, &none)) > 0)
            return (ssize_t)k;
        if (none) {
            errno = EAGAIN;
            return -1;
        }
    }
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

/* Is the next frame's payload asked for (a clear-to-send out) or likely
 * a long eager one?  Then it may go in place, and its header is read
 * without it (alone, or with the tail of the payload before it). */
static int
conn_next_in_place(const struct conn *c)
{
    return !c->sealed && (c->cts_out > 0 || c->eager_long);
}

/* The rest of a payload read in place (plain TCP), and in the same call
 * the next frame's header into the empty receive buffer, when its payload
 * may go in place too (as conn_read reads such a header alone): a system
 * call per message saved in a stream of long eager messages or of
 * rendezvous payloads.  Returns the payload bytes read, as recv. */
static ssize_t
conn_recv_tail(struct conn *c)
{
    size_t want = c->dwant - c->dgot;
    struct iovec iov[2];
    ssize_t n;

    if (c->on_shm || c->ddiscard > 0 || c->rpos != c->rlen ||
        !conn_next_in_place(c))
        return conn_recv(c, c->ddst + c->dgot, want);
    c->rpos = c->rlen = 0;
    iov[0].iov_base = c->ddst + c->dgot;
    iov[0].iov_len = want;
    iov[1].iov_base = c->rbuf;
    iov[1].iov_len = HDR;
    if ((n = readv(c->fd, iov, 2)) <= (ssize_t)want)
        return n;
    c->rlen = (size_t)n - want;
    c->hdr_held = 1;
    tp.nhdr_along++;
    return (ssize_t)want;
}

static void
conn_read(struct conn *c)
{
    uint8_t scratch[16384];
    ssize_t n;
    size_t room, held;

    while (c->state == CS_READY) {
        if (conn_direct(c)) {
            /* A payload straight into the user's memory (or into the
             * unexpected message kept for it). */
            if (c->dgot < c->dwant)
                n = conn_recv_tail(c);
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
            if (c->dreq != NULL)
                c->dreq->got += (size_t)n;
            if (c->dgot == c->dwant && c->ddiscard == 0) {
                struct mpii_req *r = c->dreq;
                struct umsg *u = c->dmsg;
                int eager = c->deager;

                c->dreq = NULL;
                c->dmsg = NULL;
                c->deager = 0;
                if (u != NULL)
                    match_filled(u, MPI_SUCCESS);
                else if (r->got >= r->total)
                    req_complete(r, MPI_SUCCESS);
                /* A long eager message just completed its receive: let
                 * its waiter go on, and leave what comes next (but a
                 * header read along) in the socket: a sender running
                 * ahead has it read into a receive posted by then, not
                 * kept unexpected and copied again. */
                if (eager && u == NULL)
                    return;
            }
            continue;
        }
        if (c->hdr_held) {
            c->hdr_held = 0;
            conn_parse_plain(c);
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
        /* Read the next header alone, so that its payload lands in
         * place, not here and then copied. */
        held = c->rlen - c->rpos;
        if (conn_next_in_place(c) && held < HDR && room > HDR - held)
            room = HDR - held;
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
        if ((size_t)n < room && !conn_direct(c))
            return;
    }
}

/* --- progress --------------------------------------------------------- */

/* Fault injection (P2P_TEST_LATEREAD, testkill.c): is reading c held
 * back?  Until its other end has gone; then frames go to it until a
 * write fails (the first may still be taken by the kernel, which answers
 * with a reset), and from then on it is read as any other. */
static int
tp_read_held(struct conn *c)
{
    struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
    struct timespec pause = {0, 10 * 1000 * 1000};
    struct wire_hdr h;
    int i;

    if (c->world != tp.late_read)
        return 0;
    if (poll(&p, 1, 0) != 1)
        return 1;
    tp.late_read = -1;
    for (i = 0; i < 100 && c->state == CS_READY && !c->tx_gone; i++) {
        memset(&h, 0, sizeof h);
        h.type = FR_ACK; /* one that acknowledges nothing */
        (void)conn_send(c, &h, NULL, 0, 1, NULL);
        nanosleep(&pause, NULL);
    }
    return 0;
}

int
transport_progress(int timeout_ms)
{
    struct conn *c;
    int i, n = 0, awake = 0, bells;

    if (timeout_ms > 0 && tp.by_world != NULL &&
        tp_pfd_room(tp.nlive + tp.npending + 2) == 0) {
        for (i = 0; i < tp.nlive; i++)
            if ((c = tp.by_world[tp.live[i]]) != NULL && c->state == CS_READY) {
                if (c->hdr_held)
                    awake = 1; /* a header waits in its buffer */
                tp.pfd[n].fd = c->fd;
                tp.pfd[n].events = POLLIN | (c->txh != NULL ? POLLOUT : 0);
                if (tp.late_read >= 0 && c->world == tp.late_read)
                    tp.pfd[n].events = POLLRDHUP | /* (tp_read_held) */
                                       (c->txh != NULL ? POLLOUT : 0);
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
        /* Nothing to watch: a millisecond's sleep.  Other threads may
         * use the library meanwhile (mpii_poll). */
        (void)mpii_poll(tp.pfd, n, n == 0 ? 1 : awake ? 0 : timeout_ms);
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
            if (tp.late_read >= 0 && c->state == CS_READY &&
                tp_read_held(c))
                continue;
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
        mpii_log("p2pmpi: rank %d: %u long eager payloads read in place; "
                 "%u next headers read with a payload's tail",
                 tp.world, tp.neager_direct, tp.nhdr_along);
        mpii_log("p2pmpi: rank %d: TCP congestion control %s on %u "
                 "connections, the system's on the others",
                 tp.world, tp.ncc > 0 ? tp.cc : "-", tp.ncc);
        mpii_log("p2pmpi: rank %d: %u TCP connections to other hosts "
                 "(plain writes of at most %d KiB)",
                 tp.world, tp.noffhost, TX_NET_PIECE / 1024);
        for (i = 0; tp.by_world != NULL && i < tp.nlive; i++)
            if ((c = tp.by_world[tp.live[i]]) != NULL && c->atx != NULL) {
                mpii_log("p2pmpi: rank %d: frames sealed with %s from %s",
                         tp.world, aead_name(WF_CIPHER),
                         aead_lib_name(c->atx));
                break;
            }
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
    free(tp.hostix);
    free(tp.pfd);
    tp.pending = NULL;
    tp.npending = tp.pcap = tp.nlive = tp.pfdcap = 0;
    tp.per_addr_max = tp.pending_max = 0;
    tp.ndropped = 0;
    tp.by_world = NULL;
    tp.live = NULL;
    tp.inlive = NULL;
    tp.addr = NULL;
    tp.hostix = NULL;
    tp.pfd = NULL;
    tp.ondemand = 0;
    tp.late_read = -1;
    tp.nmade = tp.naccepted = tp.nshm = 0;
    tp.ncma_pairs = tp.ncma_sent = tp.ncma_read = tp.nring_rndv = 0;
    tp.neager_direct = 0;
    tp.ncc = tp.noffhost = 0;
    tp.cc[0] = '\0';
    tp.cc_refused = 0;
    if (tp.listen_fd != -1)
        close(tp.listen_fd);
    tp.listen_fd = -1;
    sec_wipe(tp.key, sizeof tp.key);
    tp.failed = 0;
    tp.shm_pending = 0;
    tp.ctl = -1;
}
