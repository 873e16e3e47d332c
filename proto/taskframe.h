/*
 * The worker protocol's frames (docs/tasks.md, "The worker protocol"): what
 * a persistent worker reads on its standard input and writes on its
 * standard output.  Pure bytes in, frames out: no sockets, no allocation
 * beyond a frame's own payload, no logging, so that peerd (which reads
 * untrusted workers) and the task library (inside user programs) share it.
 *
 * Every integer is little-endian.
 *
 *   task frame (to the worker), 16-byte header then the input:
 *     0..3   "P2PT"
 *     4..7   u32 input length
 *     8..15  u64 task number (from 1)
 *   result frame (from the worker), 20-byte header then the output:
 *     0..3   "P2PR"
 *     4..7   u32 output length
 *     8..15  u64 task number (the task it answers)
 *     16..19 i32 status: 0 done, else the task failed (1..255; the output
 *            is then its error message)
 *
 * A worker answers its tasks in the order it received them.
 *
 * The same frames link p2prun --workers to the program that calls tasks
 * (mpjrun/farmlink.c, mpjrun/mpi/farm.c): calls numbered from 1 in order,
 * payload the task's name, a NUL, then the input; outcomes as they
 * complete, status the task's code or TASKFRAME_LINK_SIGNALED | N for a
 * death by signal N, payload the result (or the message of a failure).
 */
#ifndef P2P_TASKFRAME_H
#define P2P_TASKFRAME_H

#include <stddef.h>
#include <stdint.h>

#define TASKFRAME_TASK_MAGIC "P2PT"
#define TASKFRAME_RESULT_MAGIC "P2PR"
#define TASKFRAME_TASK_HDR 16
#define TASKFRAME_RESULT_HDR 20
/* Largest payload either side accepts by default. */
#define TASKFRAME_MAX_DEFAULT (64u * 1024 * 1024)
#define TASKFRAME_LINK_SIGNALED 0x100

enum taskframe_kind { TASKFRAME_TASK, TASKFRAME_RESULT };

struct taskframe {
    uint64_t task;
    int32_t status; /* result frames */
    uint8_t *data;  /* malloc'd (never NULL once complete), followed by a
                     * NUL not counted in len; the caller's.  In a piece
                     * (taskframe_feed returned 2): bytes of the buffer
                     * fed, neither NUL-ended nor the caller's */
    size_t len;
    int first, last; /* a piece: the frame's first, its last */
};

/* An incremental decoder of one direction's frames. */
struct taskframe_dec {
    enum taskframe_kind kind;
    uint32_t max; /* payload limit */
    uint8_t hdr[TASKFRAME_RESULT_HDR];
    size_t hlen, need; /* header bytes so far, of need */
    struct taskframe f; /* the frame being read */
    size_t got;         /* payload bytes so far */
    uint32_t stream_over; /* longer frames come in pieces (0: never) */
    int inframe;          /* the header is read: payload bytes follow */
    int failed;         /* a malformed frame was seen: nothing more */
    char why[128];      /* what was wrong */
};

/* Start a decoder of kind's frames with a payload limit (0: default). */
void taskframe_dec_init(struct taskframe_dec *, enum taskframe_kind,
                        uint32_t max);
/* Frames whose payload is longer than over bytes are not held whole:
 * taskframe_feed gives their payload in pieces as it comes (0: never). */
void taskframe_dec_stream(struct taskframe_dec *, uint32_t over);
/* Free what a decoder holds (a partial frame). */
void taskframe_dec_free(struct taskframe_dec *);
/* Feed bytes.  Returns 1 with a complete frame in *out (its data now the
 * caller's) and *used the bytes taken (feed the rest again), 2 with a
 * piece of a frame longer than the stream limit in *out (task, status,
 * first, last; data points into p: use it before feeding on), 0 when every
 * byte was taken and no frame is complete yet, -1 on a malformed frame
 * (bad magic, too long, no memory) with dec->why set; the decoder then
 * refuses everything.  Whatever the outcome, *used is set. */
int taskframe_feed(struct taskframe_dec *, const uint8_t *p, size_t n,
                   size_t *used, struct taskframe *out);
/* Is the decoder between frames (no partial frame held)? */
int taskframe_dec_idle(const struct taskframe_dec *);

/* Write a task frame's header for an input of len bytes. */
void taskframe_task_header(uint8_t out[TASKFRAME_TASK_HDR], uint64_t task,
                           uint32_t len);
/* Write a result frame's header for an output of len bytes. */
void taskframe_result_header(uint8_t out[TASKFRAME_RESULT_HDR], uint64_t task,
                             int32_t status, uint32_t len);

#endif
