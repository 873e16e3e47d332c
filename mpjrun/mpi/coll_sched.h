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

/* A new, empty schedule on intracommunicator c (its next collective
 * number taken); NULL when out of memory. */
struct mpii_sched *sched_new(struct mpii_comm *c);
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
/* Start the schedule as a request (*req); on failure the schedule is
 * freed and an MPI error returned. */
int sched_start(struct mpii_sched *, MPI_Request *req);
/* Drop a schedule that will not be started. */
void sched_drop(struct mpii_sched *);

#endif
