/*
 * What transport.c, match.c, request.c and p2p.c share: requests, the
 * frame header between ranks (wireframe.h), unexpected messages.  Not for
 * the rest of the library (which uses the contracts in mpii.h).
 */
#ifndef P2PMPI_CORE_H
#define P2PMPI_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "mpii.h"
#include "wireframe.h"

#define MPII_EAGER_MAX WF_EAGER_MAX /* larger messages use rendezvous */
#define MPII_CTX_INTERNAL 0        /* finalize (FIN frames); communicators
                                      are made on MPII_CTX_BUILD */

/* --- requests (request.c) --- */

/* PERSIST: a persistent request (persist.c), whose every Start makes an
 * inner SEND or RECV; COLL: a nonblocking collective (coll_sched.c);
 * GREQ: a generalized request (persist.c). */
enum req_kind { REQ_FREE = 0, REQ_SEND, REQ_RECV, REQ_PERSIST, REQ_COLL,
                REQ_GREQ };

struct mpii_sched;   /* coll_sched.c */
struct mpii_persist; /* persist.c */
struct mpii_greq;    /* persist.c */
struct umsg;         /* match.c: an unexpected message */
struct conn;

/* Where a send's message went, so that MPI_Cancel can ask for it back
 * (cancel.c): the sequence number of its first frame (EAGER, or the RTS
 * of a rendezvous) on the connection it took. */
struct mpii_sent {
    struct conn *conn; /* NULL: to ourselves */
    uint64_t seq;
    uint32_t ctx;
    uint32_t inner;   /* Ibsend, Bsend_init: the buffered copy's own
                         request while it is in flight, else 0 */
    uint8_t known;    /* the fields above are set */
    uint8_t rts;      /* that frame announced a rendezvous */
    uint8_t asked;    /* 1: FR_CANCEL sent, 2: answered */
    uint8_t reopened; /* complete when asked: completes with the answer */
};

struct mpii_req {
    enum req_kind kind;
    int active;    /* not yet complete */
    int freed;     /* MPI_Request_free: release when complete */
    uint16_t gen;  /* handle generation */
    int index;
    /* what the user asked */
    void *buf;
    int count;
    const struct mpii_type *type;
    struct mpii_comm *comm;
    uint32_t ctx;
    int peer; /* comm rank: destination, or source filter */
    int tag;
    /* send side */
    enum mpii_send_mode mode;
    const uint8_t *data; /* packed or the user's contiguous buffer */
    size_t len;
    uint8_t *owned;      /* our packed copy, freed at completion */
    size_t bsend;        /* MPI_Bsend: bytes of the attached buffer held */
    struct mpii_sent tx; /* for MPI_Cancel */
    /* receive side */
    uint8_t *rbuf;       /* where bytes land: user buffer or owned */
    size_t cap;          /* bytes the receive can take */
    size_t got;          /* bytes landed (rendezvous) */
    size_t total;        /* bytes in the matched message */
    uint32_t remote;     /* the other side's request id (rendezvous) */
    struct conn *conn;   /* where the rendezvous runs (NULL while a
                            replicated one waits for its replay) */
    int wsrc;            /* rendezvous receive: sender's world rank */
    uint64_t lseq;       /* its sequence number (replicas; 0 otherwise) */
    uint32_t dn;         /* replicas: decision number of a wildcard receive */
    MPI_Status status;
    int err;
    struct mpii_req *next; /* posted queue */
    /* An inner request started by a persistent one: its completion
     * completes the parent (status copied). */
    struct mpii_req *parent;
    int started; /* PERSIST: started and not yet returned by a wait */
    struct mpii_sched *sched;     /* COLL */
    struct mpii_persist *persist; /* PERSIST */
    struct mpii_greq *greq;       /* GREQ */
};

struct mpii_req *req_new(enum req_kind, MPI_Request *handle);
struct mpii_req *req_get(MPI_Request);       /* NULL if invalid */
/* The handle of a send complete as it started (request.c): no slot,
 * but where its message went (tx) is kept for a while, so that
 * MPI_Cancel can still ask for it back. */
MPI_Request req_done_handle(const struct mpii_sent *tx);
/* Such a handle's send, if it is still known: *tx filled, 1; else 0. */
int req_done_sent(MPI_Request, struct mpii_sent *tx);
/* MPI_Cancel of such a handle: a request of its own for it from now on
 * (complete, tx filled), which the handle names in waits and tests;
 * NULL when the send is no longer known (it cannot be asked back). */
struct mpii_req *req_done_reopen(MPI_Request);
struct mpii_req *req_by_id(uint32_t id);      /* id from the wire */
uint32_t req_id(const struct mpii_req *);
/* The request uses communicator c and datatype t (either may be NULL):
 * it holds both, so that MPI_Comm_free or MPI_Type_free before it
 * completes frees only the handle; req_release lets them go. */
void req_bind(struct mpii_req *, struct mpii_comm *c,
              const struct mpii_type *t);
/* Requests completed since the start (request.c): while it has not
 * moved, no request became complete. */
extern unsigned long req_completions;
/* Done: unpack if needed, free temporaries, release if freed. */
void req_complete(struct mpii_req *, int err);
void req_release(struct mpii_req *);
void req_fini(void);
/* Ranks outnumber cores here: yield between passes, then sleep,
 * instead of spinning (see req_wait_until). */
void req_set_oversubscribed(int);
/* Whether the job has more processes on this machine than it has cores. */
int req_oversubscribed(void);
/* Progress until cond(arg) holds; the waiting policy lives here. */
int req_wait_until(int (*cond)(void *), void *arg);
/* A nonblocking test or probe found nothing: a polling loop yields. */
void req_poll_missed(void);
/* How many times req_poll_missed yielded (P2P_MPI_STATS). */
unsigned long req_poll_yields(void);

/* What MPI_T's performance variables read (tool.c), counted where it
 * happens and never reset (a tool's handle keeps its own start). */
struct mpii_counts {
    uint64_t sent, sent_bytes;       /* mpii_isend: messages to a rank */
    uint64_t arrived, arrived_bytes; /* match.c: messages for matching */
    uint64_t unexpected, unexpected_peak; /* match.c: kept for a receive */
    uint64_t posted;                      /* match.c: receives waiting */
};
extern struct mpii_counts mpii_counts;
/* One pass of progress: the transport, then every nonblocking
 * collective's schedule (timeout_ms as transport_progress). */
int mpii_progress(int timeout_ms);
/* Not a request a wait family call waits for: an inactive persistent
 * request (treated as MPI_REQUEST_NULL). */
int req_inactive(const struct mpii_req *);

/* p2p.c: Probe and Iprobe, agreed between replicas; with claim, a
 * matched probe that also takes the message (*claim, for
 * mpii_irecv_claimed).  An MPI error. */
int mpii_probe_agreed(const struct mpii_comm *, int source, int tag,
                      int wait, int *flag, MPI_Status *, struct umsg **claim);
/* The source and tag of a receive or probe on c: MPI_ERR_RANK,
 * MPI_ERR_TAG or MPI_SUCCESS (wildcards and MPI_PROC_NULL allowed). */
int mpii_probe_check(int source, int tag, const struct mpii_comm *c);
/* The receive of a claimed message (from src with tag on comm): it
 * starts at once; an MPI error if the buffer is invalid (the message
 * then stays claimed). */
int mpii_irecv_claimed(void *buf, int count, MPI_Datatype,
                       struct mpii_comm *, struct umsg *, int src, int tag,
                       MPI_Request *req);

/* coll_sched.c: move every nonblocking collective on as far as it goes
 * without waiting; free a schedule (its request is released). */
void sched_progress(void);
void sched_free(struct mpii_sched *);
/* persist.c: release a persistent or generalized request's parts. */
void persist_free(struct mpii_req *);
/* Generalized requests: the status from the user's query function, then
 * its free function (req_finish); the error either returned. */
int greq_finish(struct mpii_req *, MPI_Status *);
/* The status of a complete generalized request from its query function
 * (Request_get_status); the request stays. */
int greq_query(struct mpii_req *, MPI_Status *);
/* MPI_Cancel of a persistent or generalized request. */
int persist_cancel(struct mpii_req *);

/* --- cancelling sends (cancel.c) --- */

/* Note where r's message went: its first frame h, on c (NULL: to
 * ourselves). */
void cancel_note(struct mpii_req *r, struct conn *c, const struct wire_hdr *h);
/* r (or the handle's) takes over from the send from: r completed in
 * its place (a persistent request, whose inner send completed; from is
 * NULL when h is the handle of a send complete as it started). */
void cancel_inherit(struct mpii_req *r, const struct mpii_req *from,
                    MPI_Request h);
/* MPI_Cancel of send request r (handle h): ask its receiver for the
 * message back; the request completes with the answer.  An MPI error
 * (MPI_ERR_UNSUPPORTED_OPERATION with replicas). */
int cancel_send(MPI_Request h, struct mpii_req *r);
/* The frames: a receiver asked to take back a message, a sender
 * answered. */
void cancel_asked(struct conn *, const struct wire_hdr *);
void cancel_answered(struct conn *, const struct wire_hdr *);

/* bsend.c: a buffered send's request is released: give back its bytes
 * of the attached buffer. */
void bsend_done(size_t bytes);
/* A buffered send (MPI_Bsend without the error handler): complete
 * locally, or an MPI error.  tx (may be NULL): where it went, for
 * MPI_Cancel of an Ibsend or a Bsend_init's start. */
int mpii_bsend(const void *buf, int count, MPI_Datatype, int dest, int tag,
               struct mpii_comm *, struct mpii_sent *tx);

/* --- frames between ranks (transport.c) --- */

/* enum frame_type and struct wire_hdr: wireframe.h. */

struct conn;

/* Queue a frame; data (len bytes) must stay valid until written unless
 * copy is set.  done is completed (MPI_SUCCESS) once written. */
int conn_send(struct conn *, struct wire_hdr *, const void *data, size_t len,
              int copy, struct mpii_req *done);
/* An eager message (h: FR_EAGER, len at most the eager limit), copied
 * if not written at once: conn_send, but a pair on shared memory without
 * replicas writes it as a short frame (wireframe.h) when nothing waits
 * before it. */
int conn_send_eager(struct conn *, struct wire_hdr *, const void *data,
                    size_t len);
struct conn *conn_to(int world_rank); /* NULL for ourselves or unknown */
/* The largest standard send to c that goes eager (MPII_EAGER_MAX, less
 * on a shared-memory pair that copies larger ones once: shm.h), at most
 * mpii_eager_cap. */
size_t conn_eager_max(const struct conn *);
/* This process's cap on eager sends, MPII_EAGER_MAX unless a tool
 * lowered it (MPI_T's p2p_eager_max, tool.c): the choice is the
 * sender's, so each process may have its own. */
extern size_t mpii_eager_cap;
/* Replicas: the connection to process index rank * R + replica, opened
 * now if there is none (frames sent before its handshake is done wait on
 * it; NULL when it broke or cannot be opened, which is reported as a
 * suspicion), the index at a connection's other end, and closing one
 * that the coordinator declared dead. */
struct conn *conn_to_proc(int proc);
int conn_proc(const struct conn *);
/* Is c up (handshake done, not broken, dropped or written to in vain)? */
int conn_ready(const struct conn *);
int conn_rank(const struct conn *); /* the world rank at the other end */
/* The host process proc listens on, named by the lowest process index
 * listening there (the processes of one host may share memory); -1
 * before the job's table is in. */
int transport_host(int proc);
void transport_drop(int proc);
/* Tests only (testkill.c): close the connection to proc as if the network
 * between us broke; both ends see it end. */
void transport_cut(int proc);
int mpii_world_rank(void);
/* One pass over every connection; blocking waits up to timeout_ms for
 * anything to happen (0: do not wait). */
int transport_progress(int timeout_ms);
/* When a large payload last moved (CLOCK_MONOTONIC ns, 0: never): a wait
 * that sees it move keeps spinning (req_wait_until). */
uint64_t transport_moved_ns(void);
/* Frames taken in so far, from every connection (thread.c: has another
 * thread moved the library on). */
unsigned long transport_frames(void);
struct ctl_entry;
/* Listen on host (an IP), port chosen by the kernel. */
int transport_listen(const char *host, uint16_t *port);
/* Wire up from the table, authenticating with the job key; sealed turns
 * encryption on.  With R = 1, remember the addresses: conn_to() connects
 * to a rank when first asked (on demand).  With R > 1, connect to every
 * process now (the lower index of each pair connects); ctl is where
 * views arrive, and a process missing from the table or declared dead is
 * not waited for.  With n = 0 and size 1: a job of one. */
int transport_connect_all(const struct ctl_entry *, int n, const uint8_t *key,
                          int world, int size, int replica, int nrep,
                          int sealed, int ctl);
/* Nothing queued for sending. */
int transport_flushed(void);
/* Finishing with R = 1: send FIN on every connection not yet told; 1
 * once every connection has the other end's FIN, so that no rank closes
 * a connection another still reads. */
int transport_fin_step(void);
void transport_fini(void);
/* Deliver a frame to ourselves (sends to our own rank). */
void transport_self(const struct wire_hdr *, const void *data);

/* --- matching (match.c) --- */

/* A frame that started a message has arrived (EAGER with its payload,
 * or RTS): match it or keep it. */
void match_incoming(struct conn *, const struct wire_hdr *,
                    const void *payload);
/* A long eager message by its header, its payload still to come (read
 * straight into place): where the payload goes, in the posted receive
 * that takes it (*r) or an unexpected message kept for it (*u, filling
 * until match_filled says it is all here, or lost: rc).  NULL: match it
 * whole when it is here (match.c says when). */
uint8_t *match_eager_begin(struct conn *, const struct wire_hdr *,
                           struct mpii_req **r, struct umsg **u);
void match_filled(struct umsg *u, int rc);
/* Post a receive: match the oldest unexpected message, or queue. */
void match_post(struct mpii_req *);
/* Take a posted receive back (cancel); 1 if it was still posted. */
int match_unpost(struct mpii_req *);
/* Cancelling a send (cancel.c): take back the unexpected message of
 * context ctx whose first frame came on c (NULL: from ourselves) with
 * sequence number seq.  1 if it was there and is gone (*sid: its
 * rendezvous id, 0 if eager); 0 if a receive has it or is filling it. */
int match_cancel(struct conn *c, uint32_t ctx, uint64_t seq, uint32_t *sid);
/* Probe: the oldest unexpected message matching, into status. */
int match_probe(uint32_t ctx, int source, int tag, MPI_Status *);
/* Matched probes: take the oldest unexpected message matching out of
 * the queue (no receive can match it any more) and keep it for its
 * receive; NULL if there is none.  match_take_claimed gives it to
 * receive r (built, not posted), and the receive goes on as any. */
struct umsg *match_claim(uint32_t ctx, int source, int tag);
void match_take_claimed(struct mpii_req *r, struct umsg *u);
/* A rendezvous receive is matched: tell the sender to go. */
void match_start_rendezvous(struct mpii_req *, struct conn *, uint32_t sid,
                            size_t total);
void match_fini(void);
/* FIN frames received so far (finalize). */
int match_fins(void);
/* Replicas: a message (wsrc, lseq) announced as a rendezvous by a replica
 * now dead is announced again on c with the sender's id sid: restart it
 * (the receive it matched, or the unexpected entry).  0 if none waits. */
int match_resume(int wsrc, uint64_t lseq, struct conn *c, uint32_t sid);
/* Replicas: every rendezvous from wsrc not yet complete waits for its
 * replay (its sender is dead; not one a live replica feeds already); the
 * lowest such lseq, or 0. */
uint64_t match_orphan(int wsrc);
/* Replicas, backups: the master says wildcard receive dn took a message
 * from src (comm rank); match what can be matched now. */
void match_decided(uint32_t dn, int src);
/* Match every held-back message that can go now (we became master). */
void match_rematch(void);

/* --- requests, replicas (request.c) --- */

/* The active rendezvous receive matched to (wsrc, lseq), or NULL. */
struct mpii_req *req_find_rendezvous(int wsrc, uint64_t lseq);
/* Reset every active rendezvous receive from wsrc to wait for a replay
 * (but those whose connection is up: a live replica feeds them); the
 * lowest lseq among them, or 0. */
uint64_t req_orphan(int wsrc);

/* --- the replication core's I/O (repio.c) --- */

struct rep_io;
/* The library's implementation of replication/rep_io.h for rep_init;
 * ctl is the control socket to peerd (-1: none). */
const struct rep_io *repio_make(int ctl);

#endif
