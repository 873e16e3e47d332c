/*
 * Agreement on nondeterminism between the replicas of a rank (p2prun -r
 * R, R > 1).  Whatever the order of arrivals could change is decided by
 * the rank's acting master (its lowest live replica) and followed by its
 * backups: which source a wildcard (MPI_ANY_SOURCE) receive takes, the
 * outcome of Probe and Iprobe, which requests Waitany, Waitsome, Testany
 * and Testsome return.
 *
 * Decisions are numbered in program order (every replica runs the same
 * program, so the same call gets the same number everywhere).  The master
 * sends each decision to every live backup and lets it take effect only
 * once they all acknowledged it: no message that depends on a decision
 * leaves a master that could die before its backups know the decision.
 * A backup reaching a decision point waits for the master's decision; if
 * it becomes master meanwhile (a view), it first asks the other backups
 * for the decisions it lacks (the old master may have told only some),
 * then decides itself, and re-sends the decisions it knows to the
 * remaining backups (decide.c, "Take-over").
 */
#ifndef P2PMPI_DECIDE_H
#define P2PMPI_DECIDE_H

#include <stddef.h>
#include <stdint.h>

struct conn;
struct wire_hdr;
struct mpii_req;

#define DEC_MAX_VALUES 1024 /* values in one decision */
/* A backup keeps a program-order decision at most this far beyond the
 * numbers it has drawn; its master keeps to that (decide.c). */
#define DEC_WINDOW (1u << 16)

int dec_on(void);     /* replicated job */
int dec_master(void); /* we are our rank's acting master (take-over done) */
/* The next decision number (program order); 0 when not replicated. */
uint32_t dec_next(void);

/* Master: publish decision dn (n values) and wait until every live backup
 * has it.  Returns MPI_SUCCESS or an error from the progress engine. */
int dec_publish(uint32_t dn, const int32_t *v, int n);
/* Backup: wait for the master's decision dn into v (at most max values,
 * *n set).  Returns 1 with the decision, 0 if we became master first (so
 * decide and publish), or an MPI error < 0 negated. */
int dec_await(uint32_t dn, int32_t *v, int max, int *n);
/* Backup: the decision dn if it came already (wildcard receives posted
 * after it arrived); 1 and its first value in *v, else 0. */
int dec_lookup(uint32_t dn, int32_t *v);

/* Wildcard receives, master side: r (decision r->dn) matched a message
 * from src: tell the backups; its completion waits for their
 * acknowledgement (dec_hold). */
void dec_matched(struct mpii_req *r, int src);
/* From req_complete: 1 if r must not complete yet (its decision is not
 * acknowledged by every backup); it completes with err once it is. */
int dec_hold(struct mpii_req *r, int err);

/* Decisions outside program order: the order in which a target serves
 * passive-target one-sided requests (mpjrun/mpi/rma_target.c), taken
 * when requests arrive, whatever the program is doing.  They have their
 * own sequence (1, 2, ...), travel as DECIDE frames with ctx 1, and the
 * master does not wait for them to be acknowledged (a master that dies
 * with decisions in flight may leave its successor deciding otherwise:
 * docs/mpi.md).  Master: send decision seq to every live backup.
 * Backup: decision seq if it came (1, n values in v), else 0; it is
 * forgotten once read. */
void dec_async_publish(uint32_t seq, const int32_t *v, int n);
int dec_async_take(uint32_t seq, int32_t *v, int max, int *n);

/* A DECIDE or DECIDE_ACK frame from another replica of our rank. */
void dec_incoming(struct conn *, const struct wire_hdr *, const void *);
/* Connections are up (rep_start): note whether we lead. */
void dec_start(void);
/* The view changed (rep.c): we may be master now; backups may be gone. */
void dec_view_changed(void);
void dec_fini(void);

/* The decision state of rep.c's instances (rep_instance_new): the
 * built-in instance's, a fresh one, and freeing one after dec_fini. */
struct dec_state;
extern struct dec_state dec_builtin;
struct dec_state *dec_state_new(void);
void dec_state_free(struct dec_state *);

#endif
