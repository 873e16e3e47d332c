/*
 * What win.c (windows), rma.c (the origin side: operations and
 * synchronization) and rma_target.c (the target side) share: the window
 * and the requests that travel between origin and target.  Not for the
 * rest of the library (which sees mpii.h).
 *
 * Every window has a private duplicate of its communicator; on its
 * point-to-point context an origin sends a request header (struct
 * rma_hdr, tag RMA_TAG_HDR), then, when the target datatype is not one
 * contiguous run, its layout (RMA_TAG_LAYOUT), then the origin data
 * (RMA_TAG_DATA); the target answers on RMA_TAG_REPLY (Get data, fetched
 * values, lock grants, flush and unlock acknowledgements).  A target
 * keeps one header receive posted per origin, so requests from one
 * origin are served in the order it issued them.
 *
 * The replies travel on a context of their own (RMA_REPLY_CTX), apart
 * from the requests: a fence epoch of 100,000 Gets keeps as many reply
 * receives posted and as many headers waiting at the target, and on one
 * context each would be searched past all the others (match.c keeps a
 * context's queues apart).  The window's communicator is private and
 * nothing is ever built from it, so its build context is free for that.
 */
#ifndef P2PMPI_RMA_H
#define P2PMPI_RMA_H

#include <stdint.h>

#include "mpii.h"

enum {
    RMA_TAG_HDR = 1,
    RMA_TAG_LAYOUT,
    RMA_TAG_DATA,
    RMA_TAG_REPLY,
    RMA_TAG_POST, /* PSCW: a target's exposure epoch is open */
};

#define RMA_REPLY_CTX(w) MPII_CTX_BUILD((w)->c->ctx)

enum rma_op {
    RMA_PUT = 1,
    RMA_GET,
    RMA_ACC,      /* Accumulate */
    RMA_GACC,     /* Get_accumulate, Fetch_and_op */
    RMA_CAS,      /* Compare_and_swap: data is origin then compare */
    RMA_LOCK,     /* lock = MPI_LOCK_*; answered when granted */
    RMA_UNLOCK,   /* answered once everything before it is applied */
    RMA_FLUSH,    /* answered once everything before it is applied */
    RMA_COMPLETE, /* PSCW: the origin's access epoch ends */
};

/* A request header.  Fixed size, host byte order: every rank of a job
 * runs the same program on the same kind of machine. */
struct rma_hdr {
    int32_t op;      /* enum rma_op */
    int32_t lock;    /* RMA_LOCK: MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED;
                        | RMA_IN_PASSIVE on anything sent in a passive-
                        target epoch (lock held, or MPI_MODE_NOCHECK) */
    int64_t disp;    /* target displacement, in the target's disp units
                        (an address for a dynamic window) */
    int32_t count;   /* target elements */
    int32_t nblocks; /* runs per element in a layout message; 0: the
                        target region is one contiguous run */
    int64_t esize;   /* bytes of data in one target element */
    int64_t extent;  /* the target type's extent */
    int64_t lb;      /* and lower bound */
    int32_t basic;   /* accumulate: the builtin type elements are made of */
    int32_t mop;     /* accumulate: the MPI_Op */
    int64_t nbytes;  /* origin bytes in the data message (0: none) */
};

#define RMA_IN_PASSIVE 0x100
#define RMA_LOCK_TYPE(l) ((l)&0xff)

/* One run of a target layout message. */
struct rma_run {
    int64_t off;
    int64_t len;
};

/* Exposure: what the target side does with the requests that come. */
enum rma_exposure {
    RMA_PASSIVE, /* served as they come, from the progress engine */
    RMA_FENCE,   /* kept for the closing fence (served in rank order) */
    RMA_PSCW,    /* kept for Win_wait/Win_test (served in rank order) */
};

struct rma_pending; /* rma.c: origin requests not complete yet */
struct rma_region;  /* win.c: memory attached to a dynamic window */

struct mpii_win {
    MPI_Win handle;
    uint32_t id;   /* creation number: the same in every replica */
    MPI_Comm comm; /* private duplicate of the user's communicator */
    struct mpii_comm *c;
    int rank, size;
    void *base;
    MPI_Aint bytes;
    int disp_unit;
    int flavor;  /* MPI_WIN_FLAVOR_* */
    void *owned; /* Win_allocate's memory */
    void *shm;   /* Win_allocate_shared: the mapping of every segment */
    size_t shmlen;
    MPI_Aint *shoff; /* each rank's segment in it */
    struct rma_region *regions;
    MPI_Aint *rbytes; /* every rank's window size and disp unit */
    int *runit;
    char name[MPI_MAX_OBJECT_NAME];
    /* origin side (rma.c) */
    struct rma_pending *pend;
    int npend, cappend;
    int pend_waiting; /* a thread is in rma_origin_wait (MULTIPLE) */
    int *sent;   /* fence epoch: headers sent to each target */
    int *locked; /* passive: 0, or the MPI_LOCK_* held at each target
                    (+ 0x100 with MPI_MODE_NOCHECK: nothing was asked) */
    int *access; /* PSCW: the targets of the access epoch */
    int naccess;
    /* target side (rma_target.c) */
    enum rma_exposure exposure;
    struct rma_hdr *hdr;        /* one per origin */
    MPI_Request *hreq;          /* the header receive posted for each origin */
    int exclusive;              /* origin holding an exclusive lock, or -1 */
    int shared;                 /* shared locks held */
    struct rma_waiter *waiters; /* lock requests not granted yet */
    struct rma_reply *replies;  /* replies being sent */
    size_t reply_bytes;         /* ... their bytes */
    int nreplies;               /* ... how many */
    int *exposed;               /* PSCW: the origins of the exposure epoch */
    int nexposed, nwaited;
    int serving; /* in rma_serve: the poll leaves it alone */
};

/* --- win.c --- */

/* NULL for a bad handle. */
struct mpii_win *mpii_win_get(MPI_Win);
/* Where the target region of a request lies in this window (bytes at
 * disp in disp units, or at an address for a dynamic window), or NULL if
 * [lo, lo + len) is not all window memory. */
char *rma_win_at(struct mpii_win *, int64_t disp, int64_t lo, int64_t len);
/* The window behind handle win in *w, or the error reported (the
 * library not initialised, a bad handle). */
int rma_win_check(MPI_Win win, struct mpii_win **w, const char *fn);
/* Report err on the window (its error handler). */
int rma_err(struct mpii_win *, int err, const char *fn);
/* The window whose private communicator comm is (its attributes' delete
 * callbacks), or NULL. */
struct mpii_win *rma_win_of_comm(MPI_Comm comm);
/* win_attr.c: MPI_Finalize frees the window keyvals' records. */
void mpii_win_attr_fini(void);
/* Every live window, for the progress engine; the id of the last one
 * created. */
int rma_win_count(void);
uint32_t rma_last_id(void);
struct mpii_win *rma_win_nth(int i);

/* --- win_shared.c --- */

/* Collective over comm: a shared mapping of every rank's size bytes
 * (*map, *maplen; rank i's segment at (*offsets)[i], malloc'ed).  On
 * failure (MPI_ERR_RMA_SHARED: not one host, or a replicated job) nothing
 * is mapped; *offsets is for the caller to free either way. */
int rma_shared_alloc(MPI_Comm comm, MPI_Aint size, void **map, size_t *maplen,
                     MPI_Aint **offsets);
void rma_shared_free(void *map, size_t maplen); /* NULL is fine */

/* --- rma.c (origin side) --- */

/* Wait for every request this window started as an origin. */
int rma_origin_wait(struct mpii_win *);
void rma_origin_free(struct mpii_win *);

/* --- rma_target.c --- */

/* Post the header receives (creation) / take them back (free). */
int rma_target_start(struct mpii_win *);
void rma_target_stop(struct mpii_win *);
/* Serve the next request from origin s, waiting for it (fence, PSCW):
 * *op is what it was. */
int rma_serve(struct mpii_win *, int s, int *op);
/* PSCW: serve what has come without waiting; 1 when every origin of the
 * exposure epoch has completed. */
int rma_serve_ready(struct mpii_win *, int block);

#endif
