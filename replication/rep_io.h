/*
 * The replication core's seam: everything rep.c and decide.c need from
 * the world outside them, as one table of functions and a context
 * pointer.  The MPI library passes an implementation over its transport,
 * control socket, matching and requests (mpjrun/mpi/repio.c); the unit
 * tests pass an in-memory network that simulates several processes in
 * one program (tests/unit/test_rep.c, test_decide.c).  The protocol's
 * logic stays in rep.c and decide.c; an implementation only moves bytes
 * and calls the module it stands for.
 *
 * Processes are numbered rank * R + replica, as everywhere in the
 * protocol.  Every function gets ctx first.  None may call back into
 * rep_* or dec_* except wait_until, whose whole point is to run the
 * progress engine (frames arriving call rep_incoming/dec_incoming).
 */
#ifndef P2PMPI_REP_IO_H
#define P2PMPI_REP_IO_H

#include <stddef.h>
#include <stdint.h>

struct conn;
struct wire_hdr;
struct mpii_req;

struct rep_io {
    void *ctx;

    /* --- the other processes (the transport) --- */
    /* Queue frame h with len bytes of payload (copied) for process proc;
     * dropped silently when there is no connection to it (a dead process:
     * the next view says what to do). */
    void (*send)(void *ctx, int proc, struct wire_hdr *h, const void *data,
                 size_t len);
    /* The process at the other end of c (frames come with their c). */
    int (*proc_of)(void *ctx, const struct conn *c);
    /* Close the connection to proc: a view declared it dead. */
    void (*drop)(void *ctx, int proc);

    /* --- the coordinator (the control socket; both NULL: none) --- */
    /* One datagram into buf, never blocking: its length, or <= 0 when
     * nothing waits. */
    long (*ctl_recv)(void *ctx, void *buf, size_t cap);
    /* One datagram out, never blocking: 0 sent, -1 not. */
    int (*ctl_send)(void *ctx, const void *msg, size_t len);
    /* A monotonic clock in milliseconds (progress reports' rate). */
    uint64_t (*now_ms)(void *ctx);

    /* --- matching --- */
    /* A message accepted in order (EAGER with its payload, or RTS):
     * match it or keep it. */
    void (*deliver)(void *ctx, struct conn *c, const struct wire_hdr *h,
                    const void *payload);
    /* A rendezvous (src, lseq) announced again on c by a new feeder:
     * restart it; 0 if nothing waits for it. */
    int (*resume)(void *ctx, int src, uint64_t lseq, struct conn *c,
                  uint32_t sid);
    /* Every rendezvous from rank src not yet complete waits for a
     * replay: the lowest lseq among them, or 0. */
    uint64_t (*orphan)(void *ctx, int src);
    /* Backup: the master decided that wildcard receive dn takes src. */
    void (*decided)(void *ctx, uint32_t dn, int src);
    /* We became master: match what waited for the master's decisions. */
    void (*rematch)(void *ctx);

    /* --- requests --- */
    /* Complete r with err (a rendezvous send every replica has, a
     * wildcard receive every backup knows). */
    void (*complete)(void *ctx, struct mpii_req *r, int err);
    /* Run the progress engine until cond(arg) holds: MPI_SUCCESS, or an
     * MPI error. */
    int (*wait_until)(void *ctx, int (*cond)(void *), void *arg);

    /* One diagnostic line, without its newline. */
    void (*log)(void *ctx, const char *line);
};

#endif
