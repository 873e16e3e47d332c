/*
 * The replication protocol inside libp2pmpi (p2prun -r R, R > 1): every
 * rank runs as R replicas, process index rank * R + replica.  See
 * docs/replication.md for the scheme; in short:
 *
 *   - replica k of a sender feeds replica k of every receiver, so the
 *     failure-free path carries no extra copies of any message;
 *   - every message (EAGER, RTS, FIN) carries a sequence number per
 *     (source rank, destination rank) pair; a receiver accepts each
 *     number once, in order, whichever replica sent it;
 *   - a sender keeps what it sent to rank b (eager payloads copied,
 *     rendezvous requests held open) until every live replica of b has
 *     acknowledged it;
 *   - the coordinator (p2prun) alone declares processes dead, in
 *     numbered views; when a receiver's feeder is declared dead it asks
 *     the lowest live replica of that rank to feed it from its first
 *     missing number (TAKEOVER), and that replica replays its log.
 *
 * Called by transport.c (frames, lost connections, views on the control
 * socket), p2p.c and env.c (sending, finalize) and request.c (completed
 * rendezvous receives).  Everything it needs from them goes through the
 * struct rep_io given to rep_init (rep_io.h), so that the unit tests can
 * run several simulated processes in one program (rep_instance_*).
 */
#ifndef P2PMPI_REP_H
#define P2PMPI_REP_H

#include <stddef.h>
#include <stdint.h>

struct conn;
struct wire_hdr;
struct mpii_req;
struct rep_io;
struct rep;       /* one process's replication state (rep.c) */
struct dec_state; /* its agreement part (decide.c) */

/* Start with the table's knowledge: dead[i] set for a process that is
 * not in it.  io is how we reach the other processes, the coordinator
 * (views in, suspicions out), matching and requests; copied. */
int rep_init(int rank, int replica, int size, int nrep, const uint8_t *dead,
             const struct rep_io *io);
/* Connections are up: ask for feeding where our own replica is dead. */
void rep_start(void);
void rep_fini(void);
int rep_active(void); /* between rep_init and rep_fini */
int rep_dead(int proc);
/* Who we are, and the lowest live replica of a rank (-1: none). */
int rep_rank(void);
int rep_replica(void);
int rep_nrep(void);
int rep_lowest_live(int rank);

/* Rendezvous a replica of a destination named complete before we sent
 * them: at most this many kept per replica (rep.c, on_ack). */
#define REP_EARLY_MAX 4096

/* Send a message (EAGER with its payload, RTS of request r, or FIN) to
 * world rank dst: numbered, logged, and written to every replica of dst
 * that we feed. */
int rep_send(int dst, struct wire_hdr *, const void *data, size_t len,
             struct mpii_req *r);
/* A frame from another process: EAGER, RTS, FIN, ACK or TAKEOVER. */
void rep_incoming(struct conn *, const struct wire_hdr *, const void *payload);
/* A rendezvous receive of message (src, lseq) has all its bytes. */
void rep_recv_done(int src, uint64_t lseq);
/* A connection to proc broke: tell the coordinator (it decides). */
void rep_suspect(int proc);
/* Read and apply the coordinator's views, if any came; report our
 * progress counter (rate-limited) when peerd relays it. */
void rep_poll_ctl(void);
/* peerd said (in the table) that it relays progress reports. */
void rep_set_progress(int on);

/* Finalize: FIN frames to and from every rank we exchanged messages
 * with, and everything we sent acknowledged by every live replica of its
 * destination (so no replica can still need us).  rep_fin_step sends what
 * FIN it can and says (1) when that is done. */
int rep_fin_step(void);
int rep_fins(void);
int rep_quiet(void);

/* Several processes in one program (the unit tests).  An instance holds
 * one process's replication state, rep.c's and decide.c's; every call
 * above acts on the selected instance.  The library uses the built-in
 * one and never selects another.  rep_instance_free takes an instance
 * that is not selected, after rep_fini and dec_fini on it (NULL: no-op);
 * rep_instance_select returns the instance selected until then. */
struct rep *rep_instance_new(void);
void rep_instance_free(struct rep *);
struct rep *rep_instance_select(struct rep *);

/* For decide.c: the selected instance's I/O and decision state, and a
 * diagnostic line through io->log. */
const struct rep_io *rep_io(void);
struct dec_state *rep_dec_state(void);
void rep_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
