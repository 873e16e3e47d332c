/*
 * rma.c: the origin side of one-sided communication (MPI 3.1 11.3-11.5):
 * Put, Get, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap,
 * and the synchronization calls: Win_fence; Win_post, Win_start,
 * Win_complete, Win_wait, Win_test; Win_lock, Win_unlock, Win_lock_all,
 * Win_unlock_all, Win_flush(_all), Win_flush_local(_all), Win_sync;
 * the request-based Rput, Rget, Raccumulate, Rget_accumulate.
 *
 * An operation is a request header to the target, then the target
 * datatype's layout when it is not one contiguous run, then the origin
 * data, all nonblocking sends on the window's private context (rma.h);
 * an operation that fetches posts the receive of its reply first.  The
 * origin buffers are the program's (the standard forbids touching them
 * until the epoch ends), so nothing is copied but in PSCW access epochs
 * (send_buf).  Everything completes at the synchronization call that
 * ends the epoch (or at a flush).
 *
 * A fence exchanges how many requests each rank sent each other rank, so
 * that each target serves exactly those, origin by origin in rank order
 * (rma_target.c): replicas of a target apply them in the same order.
 */
#include <stdlib.h>
#include <string.h>

#include "rma.h"

struct rma_pending {
    MPI_Request req;
    void *buf; /* ours, freed once the request completes */
};

#define LOCK_NOCHECK 0x100 /* locked with MPI_MODE_NOCHECK: nothing asked */

/* --- pending requests ----------------------------------------------- */

/* Keep req (and buf, ours) until the epoch ends.  On failure buf is
 * freed and req waited for. */
static int
pend_add(struct mpii_win *w, MPI_Request req, void *buf)
{
    if (w->npend == w->cappend) {
        int ncap = w->cappend ? w->cappend * 2 : 16;
        struct rma_pending *np = realloc(w->pend, (size_t)ncap * sizeof *np);

        if (np == NULL) {
            (void)mpii_wait(&req, MPI_STATUS_IGNORE);
            free(buf);
            return MPI_ERR_NO_MEM;
        }
        w->pend = np;
        w->cappend = ncap;
    }
    w->pend[w->npend].req = req;
    w->pend[w->npend].buf = buf;
    w->npend++;
    return MPI_SUCCESS;
}

/* No thread is waiting for w's pending requests (rma_origin_wait). */
static int
pend_unclaimed(void *arg)
{
    return !((struct mpii_win *)arg)->pend_waiting;
}

/* Wait for every pending request, and free their buffers.  Under
 * MPI_THREAD_MULTIPLE several threads may flush one window at once: one
 * waits at a time, for everything pending when its turn comes (its own
 * requests, and any other thread's until then); the others wait for
 * their turn.  Other threads add requests meanwhile, which may move the
 * list: it is read by index, each handle copied before the wait. */
int
rma_origin_wait(struct mpii_win *w)
{
    int i, rc = MPI_SUCCESS, rc2;
    MPI_Request req;

    if (w->pend_waiting && (rc = mpii_wait_until(pend_unclaimed, w)) != MPI_SUCCESS)
        return rc;
    w->pend_waiting = 1;
    for (i = 0; i < w->npend; i++) {
        req = w->pend[i].req;
        rc2 = mpii_wait(&req, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = rc2;
        free(w->pend[i].buf);
    }
    w->npend = 0;
    w->pend_waiting = 0;
    return rc;
}

void
rma_origin_free(struct mpii_win *w)
{
    int i;

    for (i = 0; i < w->npend; i++)
        free(w->pend[i].buf);
    free(w->pend);
    w->pend = NULL;
    w->npend = w->cappend = 0;
}

/* Send a copy of h to target t. */
static int
send_hdr(struct mpii_win *w, int t, const struct rma_hdr *h)
{
    struct rma_hdr *hp = malloc(sizeof *hp);
    MPI_Request req;
    int rc;

    if (hp == NULL)
        return MPI_ERR_NO_MEM;
    *hp = *h;
    rc = mpii_isend(hp, (int)sizeof *hp, MPI_BYTE, t, RMA_TAG_HDR, w->c,
                    w->c->ctx, MPII_SEND_STANDARD, &req);
    if (rc != MPI_SUCCESS) {
        free(hp);
        return rc;
    }
    w->sent[t]++;
    return pend_add(w, req, hp);
}

/* In a PSCW access epoch the target serves requests only in Win_wait
 * (or Win_test), and may well be in another call until Win_complete
 * returns: MPI 3.1 11.7.3 has the target in a receive that the origin
 * sends to after Win_complete.  So there the data is copied and sent in
 * the background, as a buffered send is, and Win_complete never waits
 * for a rendezvous the target cannot answer yet (above the eager limit
 * it hung).  The target's Win_wait still waits for the data: requests
 * from one origin are served in order, COMPLETE last. */
static int
send_buf(struct mpii_win *w, int t, const void *buf, int count, MPI_Datatype dt,
         int tag, void *owned)
{
    MPI_Request req;
    int background = w->access != NULL && tag != RMA_TAG_POST;
    int rc = mpii_isend(buf, count, dt, t, tag, w->c, w->c->ctx,
                        background ? MPII_SEND_BUFFERED : MPII_SEND_STANDARD,
                        &req);

    if (rc != MPI_SUCCESS || background) {
        free(owned);
        if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL)
            rc = PMPI_Request_free(&req);
        return rc;
    }
    return pend_add(w, req, owned);
}

static int
recv_reply(struct mpii_win *w, int t, void *buf, int count, MPI_Datatype dt)
{
    MPI_Request req;
    int rc = mpii_irecv(buf, count, dt, t, RMA_TAG_REPLY, w->c,
                        RMA_REPLY_CTX(w), &req);

    return rc == MPI_SUCCESS ? pend_add(w, req, NULL) : rc;
}

/* --- operations ----------------------------------------------------- */

/* What an operation asks, as the program gave it. */
struct rma_call {
    enum rma_op op;
    const void *oaddr; /* origin data (Put, Accumulate ...) or buffer (Get) */
    int ocount;
    MPI_Datatype otype;
    void *raddr; /* result (Get_accumulate, Fetch_and_op, CAS) */
    int rcount;
    MPI_Datatype rtype;
    const void *compare; /* CAS */
    int target;
    MPI_Aint disp;
    int tcount;
    MPI_Datatype ttype;
    MPI_Op mop;
};

/* Bytes of count elements of dt, or -1 for a bad type or count. */
static long long
bytes_of(int count, MPI_Datatype dt, const struct mpii_type **t)
{
    if (count < 0 || (*t = mpii_type_get(dt)) == NULL)
        return -1;
    return (long long)count * (long long)mpii_type_size(*t);
}

/* The target region lies in the target's window (when its size is
 * known: not for a dynamic window). */
static int
in_range(const struct mpii_win *w, const struct rma_call *a,
         const struct mpii_type *tt)
{
    MPI_Aint tlb, text, ext = mpii_type_extent(tt);
    long long lo, hi;

    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || a->tcount == 0 ||
        mpii_type_size(tt) == 0)
        return 1;
    if (PMPI_Type_get_true_extent(a->ttype, &tlb, &text) != MPI_SUCCESS)
        return 0;
    if (a->disp < 0 || a->disp > (MPI_Aint)(1LL << 48))
        return 0;
    lo = (long long)a->disp * w->runit[a->target] + tlb;
    hi = lo + (long long)(a->tcount - 1) * ext + text;
    if (ext < 0)
        lo += (long long)(a->tcount - 1) * ext;
    return lo >= 0 && hi <= (long long)w->rbytes[a->target];
}

/* An accumulate's operation: a predefined one. */
static int
acc_op_check(const struct rma_call *a)
{
    if (a->mop == MPI_OP_NULL ||
        (unsigned)(a->mop - P2P_OP(1)) >= (unsigned)P2P_OP_BUILTIN_MAX)
        return MPI_ERR_OP;
    return MPI_SUCCESS;
}

/* Accumulate: a predefined op, on target elements of one builtin type
 * that the origin's are made of too. */
static int
acc_check(const struct rma_call *a, const struct mpii_type *ot,
          const struct mpii_type *tt, MPI_Datatype *basic)
{
    MPI_Datatype ob;

    if (acc_op_check(a) != MPI_SUCCESS)
        return MPI_ERR_OP;
    *basic = mpii_type_basic(tt, NULL);
    if (*basic == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    if (ot != NULL && a->ocount > 0 &&
        (ob = mpii_type_basic(ot, NULL)) != *basic)
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

static int
rma_op(MPI_Win win, const struct rma_call *a, const char *fn)
{
    struct mpii_win *w;
    const struct mpii_type *ot = NULL, *tt = NULL, *rt = NULL;
    struct rma_hdr h;
    struct rma_run *runs = NULL;
    long long ob = 0, tb, rb = 0;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    size_t k, nb;
    int rc;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if (a->target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->target < 0 || a->target >= w->size)
        return rma_err(w, MPI_ERR_RANK, fn);
    if ((tb = bytes_of(a->tcount, a->ttype, &tt)) < 0 ||
        (a->op != RMA_GACC || a->mop != MPI_NO_OP
             ? (ob = bytes_of(a->ocount, a->otype, &ot)) < 0
             : 0) ||
        (a->raddr != NULL && (rb = bytes_of(a->rcount, a->rtype, &rt)) < 0))
        return rma_err(
            w, tt == NULL || ot == NULL ? MPI_ERR_TYPE : MPI_ERR_COUNT, fn);
    if (tb > 0x7fffffff)
        return rma_err(w, MPI_ERR_COUNT, fn);
    if ((ot != NULL && ob != tb) || (rt != NULL && rb != tb))
        return rma_err(w, MPI_ERR_TYPE, fn); /* signatures differ */
    if (!in_range(w, a, tt))
        return rma_err(w, MPI_ERR_RMA_RANGE, fn);
    /* An accumulate of nothing (no count, or types of no data: MPICH's
     * rma/badrma) has no element type to check and nothing to send. */
    if ((a->op == RMA_ACC || a->op == RMA_GACC) && tb == 0)
        return (rc = acc_op_check(a)) != MPI_SUCCESS ? rma_err(w, rc, fn)
                                                     : MPI_SUCCESS;
    if ((a->op == RMA_ACC || a->op == RMA_GACC) &&
        (rc = acc_check(a, ot, tt, &basic)) != MPI_SUCCESS)
        return rma_err(w, rc, fn);
    memset(&h, 0, sizeof h);
    h.op = a->op;
    if (w->locked[a->target] != 0)
        h.lock = RMA_IN_PASSIVE;
    h.disp = a->disp;
    h.count = a->tcount;
    h.esize = (int64_t)mpii_type_size(tt);
    h.extent = mpii_type_extent(tt);
    h.lb = mpii_type_lb(tt);
    h.basic = basic;
    h.mop = a->mop;
    nb = mpii_type_contiguous(tt) ? 0 : mpii_type_nblocks(tt);
    h.nblocks = (int32_t)nb;
    if (a->op == RMA_PUT || a->op == RMA_ACC ||
        (a->op == RMA_GACC && a->mop != MPI_NO_OP))
        h.nbytes = tb;
    else if (a->op == RMA_CAS)
        h.nbytes = 2 * h.esize;
    if (nb > 0) {
        if ((runs = malloc(nb * sizeof *runs)) == NULL)
            return rma_err(w, MPI_ERR_NO_MEM, fn);
        for (k = 0; k < nb; k++) {
            MPI_Aint off;
            size_t len;

            mpii_type_block(tt, k, &off, &len);
            runs[k].off = off;
            runs[k].len = (int64_t)len;
        }
    }
    /* The reply's receive first: it is where the answer lands. */
    rc = MPI_SUCCESS;
    if (a->op == RMA_GET)
        rc = recv_reply(w, a->target, (void *)a->oaddr, a->ocount, a->otype);
    else if (a->op == RMA_GACC || a->op == RMA_CAS)
        rc = recv_reply(w, a->target, a->raddr, a->rcount, a->rtype);
    if (rc == MPI_SUCCESS)
        rc = send_hdr(w, a->target, &h);
    if (rc == MPI_SUCCESS && nb > 0)
        rc = send_buf(w, a->target, runs, (int)(nb * sizeof *runs), MPI_BYTE,
                      RMA_TAG_LAYOUT, runs);
    else
        free(runs);
    if (rc == MPI_SUCCESS && a->op == RMA_CAS) {
        char *two = malloc(2 * (size_t)h.esize + 1);

        if (two == NULL)
            rc = MPI_ERR_NO_MEM;
        else {
            mpii_pack(a->oaddr, 1, ot, two);
            mpii_pack(a->compare, 1, ot, two + h.esize);
            rc = send_buf(w, a->target, two, (int)(2 * h.esize), MPI_BYTE,
                          RMA_TAG_DATA, two);
        }
    } else if (rc == MPI_SUCCESS && h.nbytes > 0)
        rc = send_buf(w, a->target, a->oaddr, a->ocount, a->otype, RMA_TAG_DATA,
                      NULL);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Put = PMPI_Put
int
PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_type,
         int target_rank, MPI_Aint target_disp, int target_count,
         MPI_Datatype target_type, MPI_Win win)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_PUT,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type};

    return rma_op(win, &a, "MPI_Put");
}

#pragma weak MPI_Get = PMPI_Get
int
PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_type,
         int target_rank, MPI_Aint target_disp, int target_count,
         MPI_Datatype target_type, MPI_Win win)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_GET,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type};

    return rma_op(win, &a, "MPI_Get");
}

#pragma weak MPI_Accumulate = PMPI_Accumulate
int
PMPI_Accumulate(const void *origin_addr, int origin_count,
                MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
                int target_count, MPI_Datatype target_type, MPI_Op op,
                MPI_Win win)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_ACC,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type,
                         .mop = op};

    if (op == MPI_NO_OP) /* the standard allows it only with a fetch */
        return rma_err(mpii_win_get(win), MPI_ERR_OP, "MPI_Accumulate");
    return rma_op(win, &a, "MPI_Accumulate");
}

#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
int
PMPI_Get_accumulate(const void *origin_addr, int origin_count,
                    MPI_Datatype origin_type, void *result_addr,
                    int result_count, MPI_Datatype result_type, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_type, MPI_Op op, MPI_Win win)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_GACC,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .raddr = result_addr,
                         .rcount = result_count,
                         .rtype = result_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type,
                         .mop = op};

    return rma_op(win, &a, "MPI_Get_accumulate");
}

#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
int
PMPI_Fetch_and_op(const void *origin_addr, void *result_addr,
                  MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                  MPI_Op op, MPI_Win win)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_GACC,
                         .oaddr = origin_addr,
                         .ocount = 1,
                         .otype = datatype,
                         .raddr = result_addr,
                         .rcount = 1,
                         .rtype = datatype,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = 1,
                         .ttype = datatype,
                         .mop = op};

    return rma_op(win, &a, "MPI_Fetch_and_op");
}

#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
int
PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                      void *result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Win win)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_CAS,
                         .oaddr = origin_addr,
                         .ocount = 1,
                         .otype = datatype,
                         .raddr = result_addr,
                         .rcount = 1,
                         .rtype = datatype,
                         .compare = compare_addr,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = 1,
                         .ttype = datatype};
    const struct mpii_type *t = mpii_type_get(datatype);

    /* A single predefined element (integer, logical or byte). */
    if (t == NULL || !mpii_type_is_builtin(t))
        return rma_err(mpii_win_get(win), MPI_ERR_TYPE, "MPI_Compare_and_swap");
    return rma_op(win, &a, "MPI_Compare_and_swap");
}

/* --- fence ---------------------------------------------------------- */

#pragma weak MPI_Win_fence = PMPI_Win_fence
int
PMPI_Win_fence(int assert, MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_fence";
    struct mpii_win *w;
    int *expect, s, k, op, rc, rc2;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if ((expect = malloc((size_t)w->size * sizeof *expect)) == NULL)
        return rma_err(w, MPI_ERR_NO_MEM, fn);
    /* From here the progress engine leaves this window's requests to
     * us: everyone is in this fence before anyone sends more. */
    w->exposure = RMA_FENCE;
    rc = PMPI_Alltoall(w->sent, 1, MPI_INT, expect, 1, MPI_INT, w->comm);
    for (s = 0; rc == MPI_SUCCESS && s < w->size; s++)
        for (k = 0; rc == MPI_SUCCESS && k < expect[s]; k++)
            rc = rma_serve(w, s, &op);
    free(expect);
    rc2 = rma_origin_wait(w);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    memset(w->sent, 0, (size_t)w->size * sizeof *w->sent);
    if (assert & MPI_MODE_NOSUCCEED)
        w->exposure = RMA_PASSIVE;
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

/* --- passive target ------------------------------------------------- */

/* Ask target t for op (LOCK, UNLOCK, FLUSH) and post the receive of its
 * answer; rma_origin_wait then waits for it. */
static int
ask(struct mpii_win *w, int t, enum rma_op op, int type)
{
    struct rma_hdr h;
    int *ack = malloc(sizeof *ack);
    MPI_Request req;
    int rc;

    if (ack == NULL)
        return MPI_ERR_NO_MEM;
    rc = mpii_irecv(ack, 1, MPI_INT, t, RMA_TAG_REPLY, w->c, RMA_REPLY_CTX(w),
                    &req);
    if (rc != MPI_SUCCESS) {
        free(ack);
        return rc;
    }
    if ((rc = pend_add(w, req, ack)) != MPI_SUCCESS)
        return rc;
    memset(&h, 0, sizeof h);
    h.op = op;
    h.lock = type | RMA_IN_PASSIVE;
    return send_hdr(w, t, &h);
}

static int
win_check(MPI_Win win, struct mpii_win **w, int rank, const char *fn)
{
    int rc;

    if ((rc = rma_win_check(win, w, fn)) != MPI_SUCCESS)
        return rc;
    if (rank != MPI_PROC_NULL && (rank < -1 || rank >= (*w)->size))
        return rma_err(*w, MPI_ERR_RANK, fn);
    return MPI_SUCCESS;
}

/* Lock the targets [lo, hi) with type. */
static int
lock_range(struct mpii_win *w, int lo, int hi, int type, int assert)
{
    int t, rc = MPI_SUCCESS;

    if (type != MPI_LOCK_EXCLUSIVE && type != MPI_LOCK_SHARED)
        return MPI_ERR_LOCKTYPE;
    for (t = lo; t < hi; t++)
        if (w->locked[t] != 0)
            return MPI_ERR_RMA_SYNC;
    for (t = lo; t < hi && rc == MPI_SUCCESS; t++) {
        if (assert & MPI_MODE_NOCHECK)
            w->locked[t] = type | LOCK_NOCHECK;
        else if ((rc = ask(w, t, RMA_LOCK, type)) == MPI_SUCCESS)
            w->locked[t] = type;
    }
    if (rc == MPI_SUCCESS)
        rc = rma_origin_wait(w); /* granted */
    return rc;
}

/* Unlock (or flush, keeping the lock) the locked targets of [lo, hi). */
static int
unlock_range(struct mpii_win *w, int lo, int hi, int keep)
{
    int t, n = 0, rc = MPI_SUCCESS;

    for (t = lo; t < hi && rc == MPI_SUCCESS; t++) {
        if (w->locked[t] == 0)
            continue;
        n++;
        if (keep || (w->locked[t] & LOCK_NOCHECK))
            rc = ask(w, t, RMA_FLUSH, 0);
        else
            rc = ask(w, t, RMA_UNLOCK, 0);
        if (!keep)
            w->locked[t] = 0;
        w->sent[t] = 0;
    }
    if (n == 0 && rc == MPI_SUCCESS)
        return MPI_ERR_RMA_SYNC;
    {
        int rc2 = rma_origin_wait(w);

        return rc == MPI_SUCCESS ? rc2 : rc;
    }
}

/* --- request-based operations --------------------------------------- */

/* Rput, Rget, Raccumulate, Rget_accumulate (passive-target epochs only):
 * the operation, then a flush of its target, so that it is complete when
 * the call returns; the request given back is already complete (a
 * receive from MPI_PROC_NULL).  Simple and correct, at the price of a
 * round trip per call. */
static int
rma_rop(MPI_Win win, const struct rma_call *a, MPI_Request *request,
        const char *fn)
{
    struct mpii_win *w = mpii_win_get(win);
    int rc;

    if (request == NULL)
        return rma_err(w, MPI_ERR_ARG, fn);
    *request = MPI_REQUEST_NULL;
    if ((rc = rma_op(win, a, fn)) != MPI_SUCCESS)
        return rc;
    if (a->target != MPI_PROC_NULL) {
        if (w->locked[a->target] == 0)
            return rma_err(w, MPI_ERR_RMA_SYNC, fn);
        if ((rc = unlock_range(w, a->target, a->target + 1, 1)) != MPI_SUCCESS)
            return rma_err(w, rc, fn);
    }
    rc = mpii_irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, w->c, w->c->ctx,
                    request);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Rput = PMPI_Rput
int
PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_type,
          int target_rank, MPI_Aint target_disp, int target_count,
          MPI_Datatype target_type, MPI_Win win, MPI_Request *request)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_PUT,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type};

    return rma_rop(win, &a, request, "MPI_Rput");
}

#pragma weak MPI_Rget = PMPI_Rget
int
PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_type,
          int target_rank, MPI_Aint target_disp, int target_count,
          MPI_Datatype target_type, MPI_Win win, MPI_Request *request)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_GET,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type};

    return rma_rop(win, &a, request, "MPI_Rget");
}

#pragma weak MPI_Raccumulate = PMPI_Raccumulate
int
PMPI_Raccumulate(const void *origin_addr, int origin_count,
                 MPI_Datatype origin_type, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                 MPI_Request *request)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_ACC,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type,
                         .mop = op};

    if (op == MPI_NO_OP)
        return rma_err(mpii_win_get(win), MPI_ERR_OP, "MPI_Raccumulate");
    return rma_rop(win, &a, request, "MPI_Raccumulate");
}

#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
int
PMPI_Rget_accumulate(const void *origin_addr, int origin_count,
                     MPI_Datatype origin_type, void *result_addr,
                     int result_count, MPI_Datatype result_type,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                     MPI_Request *request)
{
    MPII_ENTER;
    struct rma_call a = {.op = RMA_GACC,
                         .oaddr = origin_addr,
                         .ocount = origin_count,
                         .otype = origin_type,
                         .raddr = result_addr,
                         .rcount = result_count,
                         .rtype = result_type,
                         .target = target_rank,
                         .disp = target_disp,
                         .tcount = target_count,
                         .ttype = target_type,
                         .mop = op};

    return rma_rop(win, &a, request, "MPI_Rget_accumulate");
}

#pragma weak MPI_Win_lock = PMPI_Win_lock
int
PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_lock";
    struct mpii_win *w;
    int rc;

    if ((rc = win_check(win, &w, rank, fn)) != MPI_SUCCESS)
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    rc = lock_range(w, rank, rank + 1, lock_type, assert);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Win_unlock = PMPI_Win_unlock
int
PMPI_Win_unlock(int rank, MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_unlock";
    struct mpii_win *w;
    int rc;

    if ((rc = win_check(win, &w, rank, fn)) != MPI_SUCCESS)
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    rc = unlock_range(w, rank, rank + 1, 0);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
int
PMPI_Win_lock_all(int assert, MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_lock_all";
    struct mpii_win *w;
    int rc;

    if ((rc = win_check(win, &w, MPI_PROC_NULL, fn)) != MPI_SUCCESS)
        return rc;
    rc = lock_range(w, 0, w->size, MPI_LOCK_SHARED, assert);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
int
PMPI_Win_unlock_all(MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_unlock_all";
    struct mpii_win *w;
    int rc;

    if ((rc = win_check(win, &w, MPI_PROC_NULL, fn)) != MPI_SUCCESS)
        return rc;
    rc = unlock_range(w, 0, w->size, 0);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

/* Flush: every operation to the target is applied there when it
 * returns.  The local forms promise less (the origin buffers may be
 * reused); they do the same. */
static int
flush(MPI_Win win, int rank, int all, const char *fn)
{
    struct mpii_win *w;
    int rc;

    if ((rc = win_check(win, &w, all ? MPI_PROC_NULL : rank, fn)) !=
        MPI_SUCCESS)
        return rc;
    if (!all && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    rc = all ? unlock_range(w, 0, w->size, 1)
             : unlock_range(w, rank, rank + 1, 1);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Win_flush = PMPI_Win_flush
int
PMPI_Win_flush(int rank, MPI_Win win)
{
    MPII_ENTER;
    return flush(win, rank, 0, "MPI_Win_flush");
}

#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
int
PMPI_Win_flush_all(MPI_Win win)
{
    MPII_ENTER;
    return flush(win, 0, 1, "MPI_Win_flush_all");
}

#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
int
PMPI_Win_flush_local(int rank, MPI_Win win)
{
    MPII_ENTER;
    return flush(win, rank, 0, "MPI_Win_flush_local");
}

#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
int
PMPI_Win_flush_local_all(MPI_Win win)
{
    MPII_ENTER;
    return flush(win, 0, 1, "MPI_Win_flush_local_all");
}

/* The public and private copies of a window are one memory here
 * (MPI_WIN_UNIFIED): nothing to synchronize. */
#pragma weak MPI_Win_sync = PMPI_Win_sync
int
PMPI_Win_sync(MPI_Win win)
{
    MPII_ENTER;
    struct mpii_win *w;

    return win_check(win, &w, MPI_PROC_NULL, "MPI_Win_sync");
}

/* --- post, start, complete, wait ------------------------------------ */

/* The window ranks of group's members, in rank order. */
static int
group_ranks(struct mpii_win *w, MPI_Group group, int **out, int *n)
{
    MPI_Group wg;
    int *in, i, j, rc, tmp;

    if ((rc = PMPI_Group_size(group, n)) != MPI_SUCCESS)
        return rc;
    in = malloc((size_t)(*n + 1) * sizeof *in);
    *out = malloc((size_t)(*n + 1) * sizeof **out);
    if (in == NULL || *out == NULL) {
        free(in);
        return MPI_ERR_NO_MEM;
    }
    for (i = 0; i < *n; i++)
        in[i] = i;
    if ((rc = PMPI_Comm_group(w->comm, &wg)) == MPI_SUCCESS) {
        rc = PMPI_Group_translate_ranks(group, *n, in, wg, *out);
        (void)PMPI_Group_free(&wg);
    }
    free(in);
    for (i = 0; rc == MPI_SUCCESS && i < *n; i++)
        if ((*out)[i] == MPI_UNDEFINED)
            rc = MPI_ERR_GROUP;
    /* Rank order: served (and so applied) in the same order everywhere. */
    for (i = 1; rc == MPI_SUCCESS && i < *n; i++)
        for (j = i; j > 0 && (*out)[j - 1] > (*out)[j]; j--) {
            tmp = (*out)[j];
            (*out)[j] = (*out)[j - 1];
            (*out)[j - 1] = tmp;
        }
    return rc;
}

#pragma weak MPI_Win_post = PMPI_Win_post
int
PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_post";
    struct mpii_win *w;
    int i, rc, *token;

    (void)assert;
    if ((rc = win_check(win, &w, MPI_PROC_NULL, fn)) != MPI_SUCCESS)
        return rc;
    if (w->exposed != NULL)
        return rma_err(w, MPI_ERR_RMA_SYNC, fn);
    if ((rc = group_ranks(w, group, &w->exposed, &w->nexposed)) !=
        MPI_SUCCESS) {
        free(w->exposed);
        w->exposed = NULL;
        return rma_err(w, rc, fn);
    }
    w->nwaited = 0;
    w->exposure = RMA_PSCW;
    for (i = 0; rc == MPI_SUCCESS && i < w->nexposed; i++) {
        if ((token = malloc(sizeof *token)) == NULL)
            rc = MPI_ERR_NO_MEM;
        else {
            *token = 1;
            rc = send_buf(w, w->exposed[i], token, 1, MPI_INT, RMA_TAG_POST,
                          token);
        }
    }
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Win_start = PMPI_Win_start
int
PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_start";
    struct mpii_win *w;
    int i, rc, token;

    (void)assert;
    if ((rc = win_check(win, &w, MPI_PROC_NULL, fn)) != MPI_SUCCESS)
        return rc;
    if (w->access != NULL)
        return rma_err(w, MPI_ERR_RMA_SYNC, fn);
    if ((rc = group_ranks(w, group, &w->access, &w->naccess)) != MPI_SUCCESS) {
        free(w->access);
        w->access = NULL;
        return rma_err(w, rc, fn);
    }
    /* Each target's exposure epoch is open before anything goes. */
    for (i = 0; rc == MPI_SUCCESS && i < w->naccess; i++)
        rc = mpii_recv(&token, 1, MPI_INT, w->access[i], RMA_TAG_POST, w->c,
                       w->c->ctx, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

#pragma weak MPI_Win_complete = PMPI_Win_complete
int
PMPI_Win_complete(MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_complete";
    struct mpii_win *w;
    struct rma_hdr h;
    int i, rc, rc2;

    if ((rc = win_check(win, &w, MPI_PROC_NULL, fn)) != MPI_SUCCESS)
        return rc;
    if (w->access == NULL)
        return rma_err(w, MPI_ERR_RMA_SYNC, fn);
    memset(&h, 0, sizeof h);
    h.op = RMA_COMPLETE;
    for (i = 0; rc == MPI_SUCCESS && i < w->naccess; i++)
        rc = send_hdr(w, w->access[i], &h);
    rc2 = rma_origin_wait(w);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    free(w->access);
    w->access = NULL;
    w->naccess = 0;
    memset(w->sent, 0, (size_t)w->size * sizeof *w->sent);
    return rc == MPI_SUCCESS ? rc : rma_err(w, rc, fn);
}

/* The end of an exposure epoch: every origin has completed. */
static void
exposure_end(struct mpii_win *w)
{
    free(w->exposed);
    w->exposed = NULL;
    w->nexposed = w->nwaited = 0;
    w->exposure = RMA_PASSIVE;
}

#pragma weak MPI_Win_wait = PMPI_Win_wait
int
PMPI_Win_wait(MPI_Win win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_wait";
    struct mpii_win *w;
    int rc;

    if ((rc = win_check(win, &w, MPI_PROC_NULL, fn)) != MPI_SUCCESS)
        return rc;
    if (w->exposed == NULL)
        return rma_err(w, MPI_ERR_RMA_SYNC, fn);
    rc = rma_serve_ready(w, 1);
    if (rc < 0)
        return rma_err(w, -rc, fn);
    exposure_end(w);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_test = PMPI_Win_test
int
PMPI_Win_test(MPI_Win win, int *flag)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_test";
    struct mpii_win *w;
    int rc;

    if ((rc = win_check(win, &w, MPI_PROC_NULL, fn)) != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return rma_err(w, MPI_ERR_ARG, fn);
    if (w->exposed == NULL)
        return rma_err(w, MPI_ERR_RMA_SYNC, fn);
    rc = rma_serve_ready(w, 0);
    if (rc < 0)
        return rma_err(w, -rc, fn);
    *flag = rc;
    if (rc == 1)
        exposure_end(w);
    return MPI_SUCCESS;
}
