/*
 * The connections of a job's processes, inside the library: what
 * transport.c (the table, sending, receiving, progress) shares with the
 * files that do one part of a connection's life each: conn_handshake.c
 * (listening, connecting, accepting, the handshake), conn_sealed.c (the
 * sealed path) and conn_cma.c (shm: single copies).  Nothing here leaves
 * the library; core.h is what the rest of it sees.
 */
#ifndef P2P_MPI_CONN_H
#define P2P_MPI_CONN_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core.h"
#include "sealring.h"
#include "sec.h"
#include "shm.h"
#include "wireframe.h"

#define HDR WF_HDR_LEN
/* Plain TCP: an eager payload at least this long is read straight into
 * its receive (or its unexpected message), not through the receive
 * buffer (transport.c conn_eager_direct). */
#define EAGER_DIRECT_MIN (16 * 1024)
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
    int lone; /* a rendezvous payload alone in flight: its first write is
                 short (transport.c TX_FIRST) */
};

struct conn {
    int fd;
    int world; /* the other end's process index (rank * R + replica) */
    enum conn_state state;
    struct timespec since; /* accepted at: a handshake has a deadline */
    char from[48];         /* accepted: the address it came from */
    struct wf_hs hsk; /* nonces and indices the handshake's MACs cover */
    uint8_t hs[WF_HS_MAX]; /* the handshake message being read */
    size_t hslen;
    /* receiving */
    uint8_t *rbuf;
    size_t rcap, rlen, rpos;
    /* direct reads: a rendezvous payload, or a long eager one, into
     * its receive (dreq) or its unexpected message (dmsg) */
    struct mpii_req *dreq;
    struct umsg *dmsg;
    int deager; /* the payload read in place is a long eager one */
    uint8_t *ddst;
    size_t dwant, dgot, ddiscard;
    int eager_long; /* the last eager frame was long: read the next
                       header alone, its payload may go in place */
    int hdr_held; /* the next frame's header (or its start) was read
                     with a payload read in place: parse it before
                     reading more (conn_read) */
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
    /* A write failed: the other end has gone.  Nothing more goes out;
     * what it sent before it went is still read, and the end of the
     * stream after it closes the connection (conn_tx_failed). */
    int tx_gone;
    int offhost;   /* TCP to another host (tcpcc_same_host): short writes */
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

/* The transport's state: one per process. */
struct transport {
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
    int per_addr_max, pending_max; /* unproven: from one address, in all */
    unsigned ndropped;             /* unproven dropped for those caps */
    char (*addr)[72]; /* every process's address, for connecting later */
    int *hostix;      /* every process's host (transport_host) */
    int ondemand;     /* connect when first sending */
    int nopening;     /* R > 1: our handshakes under way (a hint) */
    unsigned nmade, naccepted; /* connections, for P2P_MPI_STATS */
    unsigned nshm;             /* shm: of those, through shared memory */
    unsigned ncma_pairs;       /* shm: of those, we read single copies */
    unsigned ncma_sent, ncma_read; /* shm: messages announced, read */
    unsigned nring_rndv;       /* shm: rendezvous through the rings */
    unsigned neager_direct;    /* long eager payloads read in place */
    unsigned nhdr_along;       /* next headers read with a payload's tail */
    unsigned shm_ticks;        /* shm: busy passes, to look at sockets */
    unsigned ncc;              /* TCP connections given cc (tcpcc.h) */
    unsigned noffhost;         /* TCP connections to other hosts */
    char cc[16];               /* the last congestion control set */
    int cc_refused;            /* the kernel refused one (logged once) */
    int shm_pending;           /* shm: segments made for handshakes under
                                  way (before the other end is proven) */
    char host[72];             /* shm: our listen address */
    struct pollfd *pfd;
    int pfdcap;
    int failed; /* a connection died: MPI_ERR_OTHER from now on (R = 1) */
    int late_read; /* P2P_TEST_LATEREAD's process, or -1 (tp_read_held) */
    int ctl;    /* views arrive here (R > 1), or -1 */
    unsigned ticks;
    uint64_t moved_ns; /* when payload bytes last moved (CLOCK_MONOTONIC) */
    unsigned long frames; /* frames taken in, from every connection */
};

extern struct transport tp;

/* transport.c */
int conn_opening(const struct conn *);
void tp_set(int p, struct conn *);
int tp_pfd_room(int n);
void tp_moved(void);
void conn_close(struct conn *);
void conn_kill(struct conn *);
void conn_free(struct conn *);
void conn_discard(struct conn *);
int conn_queue(struct conn *, struct txitem *);
void conn_protocol_error(struct conn *, const char *why);
size_t conn_frame(struct conn *, const struct wire_hdr *,
                  const uint8_t *payload, size_t avail);

/* conn_handshake.c */
int conn_connect(const char *addr, int world);
struct conn *conn_open(int world);
struct conn *tp_claimed(int world);
void tp_accept(void);
void tp_handshakes(void);
void tp_poll_handshakes(int *n);
int conn_early_add(struct conn *, const struct wire_hdr *, const void *data,
                   size_t len, struct mpii_req *done);
void conn_early_drop(struct conn *);

/* conn_sealed.c */
int conn_send_sealed(struct conn *, struct wire_hdr *, const void *data,
                     size_t len, int copy, struct mpii_req *done);
int conn_seal_late(struct conn *, struct txitem *);
void conn_seal_ahead(struct conn *);
void conn_parse_sealed(struct conn *);

/* conn_cma.c (shm: single copy) */
int conn_cma_announce(struct conn *, struct wire_hdr *, uint64_t *at);
int conn_cma_copy(struct conn *, struct wire_hdr *);
int conn_cma_flush(struct conn *);
void conn_cma_push(struct conn *, const struct wire_hdr *,
                   const uint8_t *payload, struct mpii_req *);
void conn_cma_written(struct conn *, const struct wire_hdr *);
int conn_cma_note(struct conn *, const struct wire_hdr *,
                  const uint8_t *payload);

#endif
