/*
 * Requests: a table of slots addressed by handle (index and generation,
 * so that a stale handle is an error), completion, and the waiting
 * policy.  Waiting spins on the progress engine for up to 10 ms (a
 * receive that sleeps costs tens of microseconds to wake on a VM, and
 * far more in the idle CPU class peerd runs guests in, when the owner's
 * work keeps the cores busy), counted from the last time a large
 * payload moved, then sleeps in poll(); when ranks outnumber cores it
 * yields the core between passes for up to 1 ms before it sleeps.  A
 * program's own loop of tests or probes that find nothing yields too
 * (req_poll_missed).
 */
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "core.h"
#include "decide.h"
#include "rep.h"

/* A handle is
 *     0x2c000000 | generation (10 bits) << 16 | (index + 1)
 * for the first 65,535 slots, and beyond them (a program with that many
 * requests live: MPICH's rma/manyget starts 100,000 Gets in an epoch)
 *     0x6c000000 | generation (6 bits) << 20 | (index - 65,535)
 * so a stale handle of the common slots is caught unless its slot came
 * round 1,024 times since, of the others 64 times. */
#define REQ_HANDLE_BASE 0x2c000000
#define REQ_HANDLE_HIGH 0x6c000000
#define REQ_LOW 65535
#define REQ_MAX (REQ_LOW + (1 << 20))
#define SPIN_NS 10000000   /* spin this long before sleeping (10 ms) */
#define YIELD_NS 1000000   /* sharing cores: yield this long before sleeping */
#define POLL_GAP_NS 20000  /* tests closer than this are a polling loop */

/* The handle of a send that completed as it started (an eager message
 * written or copied at once) is
 *     0x7c000000 | stamp (26 bits)
 * never a slot's: it names one shared request, complete, that waits and
 * tests find done and release does not free; it saves an eager send the
 * slot taken and given back for nothing.  The last SENT_RING such sends
 * are remembered by stamp (where each message went), so that MPI_Cancel
 * of the handle can still ask for its message back (cancel.c): it then
 * gets a slot of its own, which the handle names from there on.  Older
 * ones are forgotten: their cancel finds them complete.  The stamp wraps
 * after 2^26 sends: a handle kept that long, uncompleted, names the
 * newer send that last took its slot with the same stamp, if one did
 * (its cancel would ask for that message): too rare to cost a wider
 * handle. */
#define REQ_HANDLE_SENT 0x7c000000
#define SENT_STAMP 0x3ffffff
#define SENT_RING 4096
_Static_assert((REQ_HANDLE_SENT & ~SENT_STAMP) == REQ_HANDLE_SENT,
               "stamp bits clear");

static struct sent_slot {
    struct mpii_sent tx;
    uint32_t stamp;
    uint32_t req; /* reopened: its request's id, else 0 */
} sent_ring[SENT_RING];
static uint32_t sent_next;
static struct mpii_req done_send;
/* Requests completed so far (a wait's condition need not look again
 * while it has not moved). */
unsigned long req_completions;
static int oversubscribed; /* more local ranks than cores */
static unsigned long poll_yields; /* by req_poll_missed */
static struct mpii_req **reqs;
static int nreqs, capreqs;
static int *freelist, nfree;

static MPI_Request
req_handle(const struct mpii_req *r)
{
    if (r->index < REQ_LOW)
        return REQ_HANDLE_BASE | ((int)(r->gen & 0x3ff) << 16) |
               (r->index + 1);
    return REQ_HANDLE_HIGH | ((int)(r->gen & 0x3f) << 20) |
           (r->index - REQ_LOW);
}

/* The slot h names (live or not, checked by the caller), or -1. */
static int
req_index(MPI_Request h)
{
    if ((h & ~0x03ffffff) == REQ_HANDLE_BASE)
        return (h & 0xffff) - 1;
    if ((h & ~0x03ffffff) == REQ_HANDLE_HIGH)
        return REQ_LOW + (h & 0xfffff);
    return -1;
}

struct mpii_req *
req_new(enum req_kind kind, MPI_Request *handle)
{
    struct mpii_req *r;
    int i;

    if (nfree > 0)
        i = freelist[--nfree];
    else {
        if (nreqs == REQ_MAX)
            return NULL;
        if (nreqs == capreqs) {
            int ncap = capreqs ? capreqs * 2 : 64;
            struct mpii_req **nr = realloc(reqs, (size_t)ncap * sizeof *nr);
            int *nf = realloc(freelist, (size_t)ncap * sizeof *nf);

            if (nr != NULL)
                reqs = nr;
            if (nf != NULL)
                freelist = nf;
            if (nr == NULL || nf == NULL)
                return NULL;
            capreqs = ncap;
        }
        i = nreqs++;
        reqs[i] = NULL;
    }
    if (reqs[i] == NULL && (reqs[i] = calloc(1, sizeof *r)) == NULL) {
        freelist[nfree++] = i;
        return NULL;
    }
    r = reqs[i];
    {
        uint16_t gen = (uint16_t)(r->gen + 1);

        memset(r, 0, sizeof *r);
        r->gen = gen;
    }
    r->index = i;
    r->kind = kind;
    r->active = 1;
    r->status.MPI_ERROR = MPI_SUCCESS;
    if (handle != NULL)
        *handle = req_handle(r);
    return r;
}

MPI_Request
req_done_handle(const struct mpii_sent *tx)
{
    uint32_t stamp = sent_next++ & SENT_STAMP;
    struct sent_slot *e = &sent_ring[stamp % SENT_RING];

    e->tx = *tx;
    e->stamp = stamp;
    e->req = 0;
    return REQ_HANDLE_SENT | (MPI_Request)stamp;
}

/* The ring slot of done handle h while it is remembered, or -1. */
static int
sent_slot(MPI_Request h)
{
    uint32_t stamp = (uint32_t)h & SENT_STAMP;
    int i = (int)(stamp % SENT_RING);

    if ((h & ~SENT_STAMP) != REQ_HANDLE_SENT ||
        sent_ring[i].stamp != stamp || !sent_ring[i].tx.known)
        return -1;
    return i;
}

int
req_done_sent(MPI_Request h, struct mpii_sent *tx)
{
    int i = sent_slot(h);

    if (i < 0 || sent_ring[i].req != 0)
        return 0;
    *tx = sent_ring[i].tx;
    return 1;
}

struct mpii_req *
req_done_reopen(MPI_Request h)
{
    struct mpii_req *r;
    int i = sent_slot(h);

    if (i < 0 || sent_ring[i].req != 0 || (r = req_new(REQ_SEND, NULL)) == NULL)
        return NULL;
    r->tx = sent_ring[i].tx;
    r->active = 0; /* complete: cancel_send reopens it */
    sent_ring[i].req = req_id(r);
    return r;
}

struct mpii_req *
req_get(MPI_Request h)
{
    int i = req_index(h);
    struct mpii_req *r;

    if ((h & ~SENT_STAMP) == REQ_HANDLE_SENT) {
        int k = sent_slot(h);

        /* Reopened by MPI_Cancel: its own request while that lives. */
        if (k >= 0 && sent_ring[k].req != 0 &&
            (r = req_get((MPI_Request)sent_ring[k].req)) != NULL)
            return r;
        /* Nothing changes a complete send's request but these (a wait
         * only reads it, release leaves it): set, not cleared, as a
         * window of sends looks at each several times. */
        done_send.kind = REQ_SEND;
        done_send.gen = 1;
        done_send.index = -1;
        done_send.active = 0;
        done_send.freed = 0;
        done_send.err = MPI_SUCCESS;
        done_send.status.MPI_ERROR = MPI_SUCCESS;
        return &done_send;
    }
    if (i < 0 || i >= nreqs)
        return NULL;
    r = reqs[i];
    if (r == NULL || r->kind == REQ_FREE || req_handle(r) != h)
        return NULL;
    return r;
}

uint32_t
req_id(const struct mpii_req *r)
{
    return (uint32_t)req_handle(r);
}

struct mpii_req *
req_by_id(uint32_t id)
{
    struct mpii_req *r = req_get((MPI_Request)id);

    return r != NULL && r->active ? r : NULL;
}

void
req_bind(struct mpii_req *r, struct mpii_comm *c, const struct mpii_type *t)
{
    if (c != NULL)
        mpii_comm_hold(c);
    mpii_type_hold(t);
    r->comm = c;
    r->type = t;
}

/* Let go of what req_bind took. */
static void
req_unbind(struct mpii_req *r)
{
    mpii_type_release(r->type);
    r->type = NULL;
    mpii_comm_release(r->comm);
    r->comm = NULL;
}

void
req_release(struct mpii_req *r)
{
    if (r == &done_send)
        return; /* shared, never a slot */
    if (r->sched != NULL)
        sched_free(r->sched);
    r->sched = NULL;
    if (r->persist != NULL || r->greq != NULL)
        persist_free(r);
    free(r->owned);
    r->owned = NULL;
    req_unbind(r);
    if (r->bsend != 0)
        bsend_done(r->bsend);
    r->bsend = 0;
    r->kind = REQ_FREE; /* the handle is dead from here */
    freelist[nfree++] = r->index;
}

void
req_complete(struct mpii_req *r, int err)
{
    if (!r->active)
        return;
    if (r->kind == REQ_RECV && r->lseq != 0) {
        uint64_t lseq = r->lseq;

        r->lseq = 0;
        rep_recv_done(r->wsrc, lseq); /* replicas: acknowledge the bytes */
    }
    /* A master's wildcard receive: not before its backups know the
     * decision (they complete it then). */
    if (r->kind == REQ_RECV && r->dn != 0 && dec_hold(r, err))
        return;
    if (r->kind == REQ_RECV && r->owned != NULL && err != MPI_ERR_OTHER)
        mpii_unpack(r->owned, r->total < r->cap ? r->total : r->cap, r->buf,
                    r->count, r->type);
    if (r->kind == REQ_RECV) {
        r->status.p2p_count =
            (long long)(r->total < r->cap ? r->total : r->cap);
        if (r->total > r->cap && err == MPI_SUCCESS)
            err = MPI_ERR_TRUNCATE;
    }
    r->err = err;
    r->status.MPI_ERROR = err;
    r->active = 0;
    req_completions++;
    free(r->owned);
    r->owned = NULL;
    if (r->parent != NULL) {
        /* Started by a persistent request: that one completes now. */
        struct mpii_req *p = r->parent;

        r->parent = NULL;
        p->status = r->status;
        cancel_inherit(p, r, MPI_REQUEST_NULL);
        req_complete(p, err);
    }
    if (r->freed)
        req_release(r);
}

int
req_inactive(const struct mpii_req *r)
{
    return r->kind == REQ_PERSIST && !r->started;
}

int
mpii_progress(int timeout_ms)
{
    int rc;

    mpii_passes++; /* thread.c: a pass of this thread is under way */
    rc = transport_progress(timeout_ms);
    sched_progress();
    mpii_passes--;
    return rc;
}

struct mpii_req *
req_find_rendezvous(int wsrc, uint64_t lseq)
{
    int i;

    for (i = 0; i < nreqs; i++)
        if (reqs[i] != NULL && reqs[i]->kind == REQ_RECV && reqs[i]->active &&
            reqs[i]->lseq == lseq && reqs[i]->wsrc == wsrc)
            return reqs[i];
    return NULL;
}

uint64_t
req_orphan(int wsrc)
{
    struct mpii_req *r;
    uint64_t low = 0;
    int i;

    for (i = 0; i < nreqs; i++) {
        r = reqs[i];
        /* One a live replica feeds already (it took over by itself
         * before our view came) goes on. */
        if (r == NULL || r->kind != REQ_RECV || !r->active || r->lseq == 0 ||
            r->wsrc != wsrc || conn_ready(r->conn))
            continue;
        r->conn = NULL;
        r->got = 0;
        if (low == 0 || r->lseq < low)
            low = r->lseq;
    }
    return low;
}

void
req_fini(void)
{
    int i;

    for (i = 0; i < nreqs; i++) {
        if (reqs[i] != NULL) {
            if (reqs[i]->sched != NULL)
                sched_free(reqs[i]->sched);
            if (reqs[i]->kind != REQ_FREE &&
                (reqs[i]->persist != NULL || reqs[i]->greq != NULL))
                persist_free(reqs[i]);
            free(reqs[i]->owned);
            if (reqs[i]->kind != REQ_FREE)
                req_unbind(reqs[i]);
        }
        free(reqs[i]);
    }
    free(reqs);
    free(freelist);
    reqs = NULL;
    freelist = NULL;
    nreqs = capreqs = nfree = 0;
}

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
req_set_oversubscribed(int on)
{
    oversubscribed = on;
}

int
req_oversubscribed(void)
{
    return oversubscribed;
}

/* Between two passes of a spinning wait, a pause of about
 * SPIN_PAUSE_NS (as many x86 PAUSEs as take that long here, counted
 * once: one costs about 10 cycles on older cores, 140 on newer; nothing
 * elsewhere).  A pass reads the lines the other process writes (a
 * ring's tail, its next frame): each read takes the line back, and the
 * writer's next store to it waits for it.  Looking less often lets a
 * writer fill several frames in a row.  2026-11-25, this VM (PAUSE
 * 10 ns), windows of 16 1-byte messages through shared memory, 5
 * interleaved rounds each, ours / vader's message rate: no pause
 * 0.74-0.76, 1 pause 0.82, 3 0.85, 8 0.89-0.90, 16 0.95, 32 0.84;
 * 1-byte ping-pong, ours / vader's latency: 1.35 with none, 1.10-1.16
 * with 3 to 8, 1.27 with 16, 1.33 with 32.  About 8 (90 ns) it is. */
#define SPIN_PAUSE_NS 90
static int spin_pauses = -1;

static void
spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (spin_pauses < 0) {
        uint64_t t0 = now_ns(), dt;

        for (int k = 0; k < 1024; k++)
            __builtin_ia32_pause();
        dt = now_ns() - t0;
        spin_pauses = dt == 0 ? 8 : (int)(SPIN_PAUSE_NS * 1024 / dt);
        if (spin_pauses < 1)
            spin_pauses = 1;
        if (spin_pauses > 16)
            spin_pauses = 16;
    }
    for (int k = 0; k < spin_pauses; k++)
        __builtin_ia32_pause();
#endif
}

/* A nonblocking test or probe found nothing (MPI_Test, Testany,
 * Testall, Testsome, Request_get_status, Iprobe, Improbe).  A program
 * that calls them in a loop until something comes is waiting, as
 * req_wait_until does, without saying so: its misses come less than
 * POLL_GAP_NS apart, with no request completed in between.  Such a loop
 * yields the core as a wait does: from the second miss where the job's
 * processes outnumber the cores, after 64 otherwise (another job's
 * ranks may share the core).  Without it, two ranks polling on one core
 * handed it over only at the scheduler's tick (4 ms a message).  A
 * program that computes between its tests is left alone. */
void
req_poll_missed(void)
{
    static uint64_t last;
    static unsigned long completions;
    static int streak;
    uint64_t t = now_ns();

    streak = t - last < POLL_GAP_NS && req_completions == completions
                 ? streak + 1
                 : 0;
    last = t;
    completions = req_completions;
    if (streak >= (oversubscribed ? 1 : 64)) {
        mpii_yield_cpu();
        poll_yields++;
        last = now_ns();
    }
}

int
mpii_wait_until(int (*cond)(void *), void *arg)
{
    return req_wait_until(cond, arg);
}

unsigned long
mpii_events(void)
{
    return req_completions + transport_frames();
}

unsigned long
req_poll_yields(void)
{
    return poll_yields;
}

int
req_wait_until(int (*cond)(void *), void *arg)
{
    uint64_t start = 0;
    int spins = 0, rc;

    sched_progress();
    if (cond(arg))
        return MPI_SUCCESS;
    for (;;) {
        if ((rc = mpii_progress(0)) != MPI_SUCCESS)
            return rc;
        if (cond(arg))
            break;
        /* With a core of its own, a rank spins: a message is often
         * microseconds away, and waking a sleeping vCPU costs tens of
         * microseconds.  In the idle CPU class (SCHED_IDLE, where peerd
         * runs guest ranks) spinning takes nothing from the owner, while
         * a wake-up waits behind every runnable owner process: with a
         * short spin two ranks in a ping-pong fall into sleeping on
         * every message (1-byte latency 65 us instead of 3 us beside
         * busy builds), so the spin outlasts such waits.
         * When ranks outnumber cores, the rank we wait for may need this
         * core: yield it between passes (sched_yield hands the core to
         * another runnable process at once, and costs 0.2 us when there
         * is none), and sleep in poll() only after YIELD_NS.  Sleeping at
         * once made every hop a wake-up: 4 ranks on 2 cores, barrier
         * 42-49 us and 1-byte bcast 37-40 us, against 18-29 and 10-23
         * with the yield phase (Open MPI, which yields and never
         * sleeps: 20-27 and 8-13).  A yield phase of 10 us was as slow
         * as none, 20 us to 5 ms alike. */
        if (!oversubscribed)
            spin_pause();
        mpii_let_in(); /* threads: another may want the library */
        if (!oversubscribed && ++spins < 64)
            continue;
        /* Past the first passes, a rank with a core of its own yields
         * too: as far as it knows it has one, but another job's ranks
         * may share it (P2P_LOCAL_PROCS counts this job's), and a spin
         * that never yields holds them off until the scheduler's tick.
         * Two 2-rank jobs at once on 2 cores, 100,000 1-byte round trips
         * each: 4.5-5.7 s in all against 13-20 s (yielding every 16th
         * pass 7.7 s); alone, latency and bandwidth unchanged. */
        if (!oversubscribed)
            mpii_yield_cpu();
        if (start == 0)
            start = now_ns();
        if (oversubscribed && now_ns() - start < YIELD_NS) {
            mpii_yield_cpu();
            continue;
        }
        /* A large payload streaming restarts the spin (a window of big
         * messages outlasts it, and sleeping between pieces halves the
         * bandwidth). */
        if (!oversubscribed && transport_moved_ns() > start)
            start = transport_moved_ns();
        if (!oversubscribed && now_ns() - start < SPIN_NS)
            continue;
        if ((rc = mpii_progress(100)) != MPI_SUCCESS)
            return rc;
        if (cond(arg))
            break;
    }
    return MPI_SUCCESS;
}
