/*
 * coll_sched.h: schedules, the engine under the nonblocking collectives
 * (coll_sched.c builds and runs them, coll_nb.c writes one per call).
 *
 * A schedule is a list of steps cut into rounds.  Entering a round starts
 * every send and receive of it at once; when they have all completed, the
 * round's local steps (reductions, copies) run in the order they were
 * added, and the next round starts.  The progress engine moves every
 * schedule on (mpii_progress, called by every wait and test), so that a
 * collective goes on while the program computes and tests.
 *
 * Messages travel on the communicator's nonblocking-collective context
 * (its context id with the top bit set: no user message, and no blocking
 * collective, can match them), tagged with the collective's number on
 * its communicator: every rank starts the collectives of a communicator
 * in the same order, so the n-th of each rank meet, and two in flight
 * never mix.  Every receive names its source, so nothing here depends on
 * arrival order, and replicas need no agreement beyond what Waitany and
 * kin already agree on.
 */
#ifndef P2PMPI_COLL_SCHED_H
#define P2PMPI_COLL_SCHED_H

#include "mpii.h"

struct mpii_sched;

/* A new, empty schedule on communicator c (its next collective number
 * taken); NULL when out of memory. */
struct mpii_sched *sched_new(struct mpii_comm *c);
/* Over an intercommunicator, sends and receives name remote ranks;
 * between sched_local(s, 1) and sched_local(s, 0) they name ranks of the
 * local group instead (its hidden intracommunicator, on that
 * communicator's own nonblocking context and collective number, taken at
 * the first call).  MPI_ERR_COMM on an intracommunicator. */
int sched_local(struct mpii_sched *, int on);
/* A local step that runs fn(arg) (its MPI error code counts as the
 * step's). */
void sched_call(struct mpii_sched *, int (*fn)(void *), void *arg);
/* Steps added from here on go into a new round. */
void sched_round(struct mpii_sched *);
/* Steps (failures to add are remembered and reported by sched_start). */
void sched_send(struct mpii_sched *, const void *buf, int count,
                MPI_Datatype, int dest);
void sched_recv(struct mpii_sched *, void *buf, int count, MPI_Datatype,
                int source);
/* inout = in op inout, count elements of dt in the user's layout. */
void sched_op(struct mpii_sched *, const void *in, void *inout, int count,
              MPI_Datatype, MPI_Op);
/* (sbuf, scount, st) into (rbuf, rcount, rt); MPI_ERR_TRUNCATE if it
 * does not fit. */
void sched_copy(struct mpii_sched *, const void *sbuf, int scount,
                MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt);
/* Scratch space for count elements of dt laid out as the type says,
 * freed with the schedule; NULL when out of memory. */
void *sched_tmp(struct mpii_sched *, int count, MPI_Datatype);
/* n bytes freed with the schedule; NULL when out of memory. */
void *sched_bytes(struct mpii_sched *, size_t n);
/* Start the schedule as a request (*req); on failure the schedule is
 * freed and an MPI error returned. */
int sched_start(struct mpii_sched *, MPI_Request *req);
/* How every nonblocking collective call ends: s NULL (no memory) or rc an
 * error drops s and reports through comm's error handler (fn the call);
 * otherwise s starts as *req. */
int sched_go(struct mpii_sched *s, int rc, MPI_Request *req, MPI_Comm comm,
             const char *fn);
/* Drop a schedule that will not be started. */
void sched_drop(struct mpii_sched *);

/* --- building blocks (coll_nb.c), on c's ranks: an intracommunicator,
 * or an intercommunicator's local group (c its hidden communicator,
 * after sched_local(s, 1)) -------------------------------------------- */

/* count >= 0 and dt committed: an MPI error code. */
int sched_check_type(int count, MPI_Datatype dt);
/* Binomial broadcast of (buf, count, dt) from root. */
void sched_bcast(struct mpii_sched *, struct mpii_comm *c, void *buf,
                 int count, MPI_Datatype dt, int root);
/* Every operand (mine) to root, combined there in rank order into rbuf. */
int sched_reduce(struct mpii_sched *, struct mpii_comm *c, const void *mine,
                 void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root);
/* Linear scatter from root of counts[i] elements at displs[i] to rank i;
 * root's own block copied unless rbuf is MPI_IN_PLACE. */
void sched_scatterv(struct mpii_sched *, struct mpii_comm *c,
                    const void *sbuf, const int counts[], const int displs[],
                    MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                    int root);

/* --- coll_nb_inter.c: the intercommunicator forms (errors reported) --- */

int mpii_inter_ibarrier(struct mpii_comm *ic, MPI_Request *, const char *fn);
int mpii_inter_ibcast(void *buf, int count, MPI_Datatype, int root,
                      struct mpii_comm *ic, MPI_Request *, const char *fn);
int mpii_inter_ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype,
                       MPI_Op, int root, struct mpii_comm *ic, MPI_Request *,
                       const char *fn);
int mpii_inter_iallreduce(const void *sbuf, void *rbuf, int count,
                          MPI_Datatype, MPI_Op, struct mpii_comm *ic,
                          MPI_Request *, const char *fn);
/* rcounts: one count per process of the local group. */
int mpii_inter_ireduce_scatter(const void *sbuf, void *rbuf,
                               const int rcounts[], MPI_Datatype, MPI_Op,
                               struct mpii_comm *ic, MPI_Request *,
                               const char *fn);
/* Gather(v) (gather set: the root receives rcv's blocks) and Scatter(v)
 * (the root sends snd's blocks); the others use block 0 of their side. */
int mpii_inter_irooted(const struct mpii_blocks *snd,
                       const struct mpii_blocks *rcv, int gather, int root,
                       struct mpii_comm *ic, MPI_Request *, const char *fn);
int mpii_inter_iexchange(const struct mpii_blocks *snd,
                         const struct mpii_blocks *rcv, struct mpii_comm *ic,
                         MPI_Request *, const char *fn);

#endif
