/*
 * A simulated replicated job in one program, for the unit tests of
 * replication/rep.c and decide.c: size ranks x nrep replicas, each
 * process a rep instance (rep_instance_new) with an in-memory struct
 * rep_io.  Frames go into one FIFO network the test drives (deliver
 * all, one, or only some; drop; inject forged frames); views are
 * datagrams on each process's control inbox; what rep.c hands to
 * matching, completes, decides or logs is recorded per process for the
 * test to check.
 *
 * A blocking call (dec_publish, dec_await) runs the network through
 * wait_until, as the library's progress engine would: it delivers queued
 * frames one by one (to whichever process they are for) and reads the
 * waiting process's views, until the condition holds; with nothing left
 * to deliver it gives up with MPI_ERR_OTHER instead of hanging.
 */
#ifndef P2P_REPSIM_H
#define P2P_REPSIM_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "rep_io.h"

#define SIM_PROCS 8
#define SIM_REC 256 /* records of each kind kept per process */

/* What the network carries: a frame from process from to process to. */
struct sim_frame {
    struct sim_frame *next;
    int from, to;
    struct wire_hdr h;
    uint8_t *data;
};

/* A frame's identity for the receiver: the connection it came on. */
struct conn {
    int proc;
};

struct sim_msg { /* accepted and handed to matching */
    int src;     /* source rank */
    int from;    /* the process that sent this copy */
    uint8_t type;
    int32_t tag;
    uint64_t lseq;
    uint8_t data[16];
    size_t len;
};

struct sim_proc {
    struct sim *sim;
    int proc, rank, replica;
    struct rep *rep;
    struct rep_io io;
    int dead; /* killed: sends nothing, receives nothing */
    struct sim_msg got[SIM_REC];
    int ngot;
    struct { /* the control socket */
        uint8_t in[4][512];
        size_t inlen[4];
        int nin;
        int suspects[SIM_REC]; /* CTL_SUSPECT sent, by process */
        int nsuspects;
        int nprogress; /* CTL_PROGRESS sent */
        uint64_t progress;
    } ctl;
    struct mpii_req *completed[SIM_REC];
    int ncompleted;
    struct {
        uint32_t dn;
        int src;
    } decided[SIM_REC];
    int ndecided, rematched;
    struct {
        int src;
        uint64_t lseq;
    } resumed[SIM_REC];
    int nresumed;
    uint64_t orphan; /* what io->orphan answers (a rendezvous cut short) */
    char log[8][256];
    int nlog;
    int takeovers_sent; /* FR_TAKEOVER frames this process sent */
    uint64_t takeover_from;
};

struct sim {
    int size, nrep;
    struct sim_proc p[SIM_PROCS];
    struct conn conn[SIM_PROCS];
    struct sim_frame *head, **tail;
    int nframes;
    uint64_t now;
    uint32_t view;
    uint8_t dead[SIM_PROCS]; /* cumulative, as the coordinator keeps it */
};

/* A job of size x nrep processes, every one rep_init'ed and started
 * (rep_start); 0, or -1 with a failed check. */
int sim_init(struct sim *, int size, int nrep);
void sim_fini(struct sim *);
/* Select process proc's instance (calls to rep_* and dec_* act on it);
 * returns the one selected before. */
struct rep *sim_use(struct sim *, int proc);

/* Deliver queued frames in order, at most max (-1: until none is
 * left); how many were delivered. */
int sim_run(struct sim *, int max);
/* Deliver only the queued frames for which keep(f, arg) holds, in
 * order, and drop none of the others; how many. */
int sim_run_if(struct sim *, int (*keep)(const struct sim_frame *, void *),
               void *arg);
/* Drop every queued frame for which match(f, arg) holds; how many. */
int sim_drop_if(struct sim *, int (*match)(const struct sim_frame *, void *),
                void *arg);
/* Queued frames of a type (0: any) from process from to process to
 * (-1: any). */
int sim_queued(const struct sim *, uint8_t type, int from, int to);
/* Hand process to a frame as if process from had sent it. */
void sim_inject(struct sim *, int from, int to, const struct wire_hdr *,
                const void *data);

/* Rank src sends an eager message (tag, payload) from every live
 * replica, as a deterministic program would (each replica its copy). */
void sim_send_all(struct sim *, int src, int dst, int32_t tag, const void *data,
                  size_t len);
/* One process sends (the others of its rank have not got that far). */
int sim_send(struct sim *, int proc, int dst, int32_t tag, const void *data,
             size_t len, struct mpii_req *r);

/* The coordinator kills process proc: its frames in flight are lost;
 * then a view naming every dead process so far goes to every live
 * process, which reads it (rep_poll_ctl). */
void sim_kill(struct sim *, int proc);
void sim_view(struct sim *);
/* The same view (or a kill's) only queued on every live process's
 * control socket: each reads it at its next rep_poll_ctl (a blocked
 * process: from inside its wait). */
void sim_view_queue(struct sim *);
void sim_kill_quiet(struct sim *, int proc);

/* A raw datagram on process proc's control socket, then read. */
void sim_ctl(struct sim *, int proc, const void *msg, size_t len);

/* Messages process proc accepted from rank src, in order, have lseq
 * 1..n and tags tag0, tag0 + 1, ...: n, or -1 (and why in *why). */
int sim_accepted(const struct sim_proc *, int src, int32_t tag0,
                 const char **why);
/* Does any log line of proc contain needle? */
int sim_logged(const struct sim_proc *, const char *needle);

#endif
