/*
 * Shared memory between two processes of a job on the same host: one
 * segment per pair, two single-producer single-consumer byte rings (one
 * per direction), and a doorbell for a side that went to sleep.  The
 * rings carry exactly the plain frames a TCP connection would carry
 * (transport.c parses them the same way), so a pair uses one channel for
 * everything and MPI's ordering holds.  The TCP connection that
 * authenticated the pair stays open: it rings the doorbell (one byte when
 * the other side sleeps in poll) and its end tells that the other process
 * died, as a broken connection does.
 *
 * The segment is a file created O_EXCL, mode 0600, in the job's own
 * /dev/shm (a private tmpfs per job under peerd's containment), named by
 * a keyed hash of the handshake's nonces that only the pair can compute,
 * and unlinked as soon as the second process has mapped it.
 *
 * Single copy: a large message may skip the rings.  Its sender announces
 * it (where it lies in the sender's memory, how long it is, the send's
 * id) in a frame through the ring; the receiver, once it matched it,
 * copies it from the sender's memory straight into the receive buffer
 * (process_vm_readv, "cross memory attach") and tells the sender, who
 * only then completes the send; a large one is split, the sender writing
 * the second half into the receive buffer (process_vm_writev, at the
 * address the receiver named) while the receiver reads the first.  Each
 * side probes once, when the pair is set up, whether it can read the
 * other's memory; a pair where it cannot keeps every message on the
 * rings (docs/mpi.md "Single copy for large messages").
 */
#ifndef P2PMPI_SHM_H
#define P2PMPI_SHM_H

#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SHM_NAME_LEN 32 /* hex characters of the segment's name */
/* The smallest rendezvous sent by a single copy (P2P_SHM_CMA_MIN
 * overrides); smaller ones go through the rings. */
#define SHM_CMA_MIN 0
/* The largest standard send that stays eager (through the rings) on a
 * pair that copies once (P2P_SHM_EAGER_MAX overrides, at most the eager
 * limit): larger ones are a rendezvous read in place.  Measured
 * (docs/mpi.md): windows of 8 KiB messages stream through the rings at
 * least as fast as Open MPI's, of 12 KiB only by a single copy. */
#define SHM_EAGER_MAX (8 * 1024)
/* The smallest message whose single copy is split: the receiver reads
 * the first half while the sender writes the second into it, two cores
 * copying (without replicas; P2P_SHM_SPLIT_MIN overrides, 0: never). */
#define SHM_SPLIT_MIN (128 * 1024)
/* Reads of smaller single copies matched in one pass go in one call, at
 * most this many (the system call's own cost shared). */
#define SHM_CMA_BATCH 16

struct shm_chan;

/* The acceptor's side: create and map the segment called name (hex,
 * SHM_NAME_LEN characters), its pages reserved (a full tmpfs fails here,
 * not later with SIGBUS).  NULL on any failure (the pair uses TCP). */
struct shm_chan *shm_create(const char *name);
/* The connector's side: map the segment the acceptor made, check it,
 * unlink it and mark it attached.  NULL when there is none or it is not
 * ours (the pair uses TCP). */
struct shm_chan *shm_attach(const char *name);
/* Acceptor, once the handshake is proven: did the connector attach?  The
 * name is unlinked either way. */
int shm_attached(struct shm_chan *);
/* Unmap (and unlink if still named); NULL is fine. */
void shm_free(struct shm_chan *);
/* The descriptor that rings the other side's doorbell (the pair's TCP
 * socket). */
void shm_set_bell(struct shm_chan *, int fd);

/* Copy as much of iov as fits into the outgoing ring: the bytes taken
 * (0 when the ring is full). */
size_t shm_writev(struct shm_chan *, const struct iovec *iov, int n);
/* Copy all of iov (at most 32 KiB, iov[0] not empty) into the outgoing
 * ring, or nothing, its first byte last (see shm_commit): 1 when
 * written, 0 when it does not fit now. */
int shm_write_all(struct shm_chan *, const struct iovec *iov, int n);
/* Where len contiguous bytes (at most 32 KiB) can be written into the
 * outgoing ring now, or NULL (no room, or they would wrap): the caller
 * writes them there in place, then publishes them with shm_commit
 * before any other write to this ring.  A small frame built in place
 * costs no copy of a header assembled elsewhere (whose bytes, just
 * stored, a copy would load again: a stalled store forward). */
uint8_t *shm_reserve(struct shm_chan *, size_t len);
/* Publish the len bytes written at shm_reserve's pointer, of which the
 * caller wrote all but the first: first is stored last, so that a
 * reader that finds it (shm_read_marked) sees the bytes after it. */
void shm_commit(struct shm_chan *, size_t len, uint8_t first);
/* At a frame's start in the incoming ring, copy out whole frames written
 * whole (shm_commit, shm_write_all) whose first byte is mark, while they
 * fit in len, without loading the writer's tail: its line then stays
 * with the writer, whose next store to it need not wait.  size(p) is a
 * frame's length from its first hdrlen bytes.  The bytes taken; 0 when
 * the next bytes are not such a frame (not yet there, another kind, or
 * wrapping), or without membarrier (shm_fenceless): read with shm_read
 * then, unless *none says that nothing was written there since the last
 * publication (its first byte still 0: frames never start with 0). */
size_t shm_read_marked(struct shm_chan *, void *buf, size_t len,
                       uint8_t mark, size_t hdrlen,
                       size_t (*size)(const uint8_t *), int *none);
/* Copy up to len bytes out of the incoming ring: the bytes taken (0 when
 * it is empty). */
size_t shm_read(struct shm_chan *, void *buf, size_t len);

/* About to sleep in poll: raise our flag so that the other side rings the
 * doorbell when it writes to us or frees room; 0 if there is already
 * something to read, or (want_room: we have bytes waiting to go) room was
 * freed since the ring was last found full: do not sleep. */
int shm_arm(struct shm_chan *, int want_room);
void shm_disarm(struct shm_chan *);

/* Do our writes to the other side go without a fence (both processes
 * registered for membarrier, which a sleeper calls instead, and
 * P2P_SHM_MEMBARRIER is not 0; shm.c)? */
int shm_fenceless(const struct shm_chan *);

/* Is shared memory on for this process (P2P_SHM not 0/no/off)? */
int shm_enabled(void);

/* --- single copy (CMA) --- */

/* Can we read the other side's memory (our probe at setup worked, and no
 * read was refused since)? */
int shm_cma_reads(const struct shm_chan *);
/* Can the other side read ours: may we announce messages to it? */
int shm_cma_peer_reads(const struct shm_chan *);
/* A read was refused after all (EPERM, ENOSYS): stop announcements to
 * us; the pair's messages go through the rings from now on. */
void shm_cma_refused(struct shm_chan *);
/* Copy len bytes at addr in the other process into dst, in pieces.  0,
 * or -1 with errno: EPERM/ENOSYS refused, ESRCH the process is gone,
 * EFAULT its memory is not there (it is exiting). */
int shm_cma_read(struct shm_chan *, void *dst, uint64_t addr, size_t len);
/* Several reads in one call: queue each (dst, addr, len: at most
 * SHM_CMA_BATCH, each at most 4 MiB; -1 when full), then flush them all
 * at once, with the result of shm_cma_read for all (the queue is empty
 * afterwards either way). */
int shm_cma_queue(struct shm_chan *, void *dst, uint64_t addr, size_t len);
int shm_cma_flush(struct shm_chan *);
/* Copy len bytes from src here to addr in the other process (the split
 * single copy: the sender writes part of a message while the receiver
 * reads the rest).  The other's probe cookie is read just before and
 * just after, in calls of their own, so that the bytes went to the
 * process that was probed (alive at both ends, its pid was never
 * another's).  0, or -1 with errno as shm_cma_read. */
int shm_cma_write(struct shm_chan *, uint64_t addr, const void *src,
                  size_t len);
/* Keep the other side's announcement of message id (its send's id) of
 * len bytes at addr until the receive that matches it takes it; one of
 * the same id left over is replaced.  -1 when no room (SHM_NOTES_MAX
 * kept): the message then goes through the rings. */
int shm_note(struct shm_chan *, uint32_t id, uint64_t addr, uint64_t len);
/* The thresholds (macros above), each overridden by its environment
 * variable once read: the smallest rendezvous sent by a single copy
 * (P2P_SHM_CMA_MIN); the largest standard send kept eager, at most max
 * (P2P_SHM_EAGER_MAX); the smallest single copy split (P2P_SHM_SPLIT_MIN,
 * 0: never). */
size_t shm_cma_min(void);
size_t shm_eager_max(size_t max);
size_t shm_split_min(void);
/* Tests only (P2P_TEST_KILL ...:cmasender): kill the other process and
 * wait (at most 10 s) until its memory can no longer be read. */
void shm_test_kill_peer(struct shm_chan *);
/* Take the announcement of id: 1 and its place, or 0 when there is
 * none (the message comes through the rings). */
int shm_take(struct shm_chan *, uint32_t id, uint64_t *addr, uint64_t *len);

#endif
