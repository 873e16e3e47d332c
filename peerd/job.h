/*
 * job.c entry points added with the membership messages; the rest of
 * job.c's interface is in peerd.h (this belongs there, see the banner
 * "job.c: jobs running here").
 */
#ifndef P2P_PEERD_JOB_H
#define P2P_PEERD_JOB_H

#include "codec.h"

struct job;

/* The coordinator sent a new view of the job's membership: hand it to
 * every process of the job here that still has its control socket.  A
 * view too large for the socket, or naming a process outside the job, is
 * logged and dropped. */
void job_view(struct job *, const struct msg_view *);

#endif
