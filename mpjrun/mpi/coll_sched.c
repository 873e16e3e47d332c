/*
 * coll_sched.c: the schedule engine under the nonblocking collectives
 * (the contract is in coll_sched.h).  A schedule's request is an
 * ordinary request of kind REQ_COLL: every wait, test and the replicas'
 * agreement on Waitany and kin treat it like any other.  Running
 * schedules sit on one list; sched_progress moves each on as far as it
 * goes without waiting.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_sched.h"
#include "core.h"

#define NBC_CTX_BIT 0x80000000u /* context ids stay below 2^31 */

enum step_kind { ST_SEND, ST_RECV, ST_OP, ST_COPY, ST_CALL };

struct step {
    enum step_kind kind;
    int round;
    const void *sbuf;
    void *rbuf;
    int count, rcount;
    MPI_Datatype dt, rdt;
    MPI_Op op;
    int peer;
    int local;       /* a rank of the local group (intercommunicators) */
    int (*fn)(void *); /* ST_CALL */
    MPI_Request req; /* sends and receives, once started */
};

/* A user's datatype or operation and the schedule's own handle for it:
 * the user may free theirs once the call returns (MPI 3.1 4.1.9, 5.9.5),
 * while later rounds still use it. */
struct held {
    int is_op;
    int user, own;
};

struct mpii_sched {
    struct mpii_req *req; /* the user's request */
    struct mpii_comm *comm;
    uint32_t ctx;
    int tag;
    struct mpii_comm *lcomm; /* the local group, sched_local */
    uint32_t lctx;
    int ltag;
    int local; /* steps being added are local */
    struct step *steps;
    int nsteps, cap;
    int round;   /* the round being built, then the one running */
    int first;   /* running: index of its first step */
    int err;
    void **mem;  /* scratch buffers */
    int nmem, capmem;
    struct held *held;
    int nheld, capheld;
    int linked;
    struct mpii_sched *next;
};

static struct mpii_sched *running;
static int advancing; /* sched_progress is on the stack */

struct mpii_sched *
sched_new(struct mpii_comm *c)
{
    struct mpii_sched *s = calloc(1, sizeof *s);

    if (s == NULL)
        return NULL;
    s->comm = c;
    mpii_comm_hold(c); /* Comm_free may come before the end */
    s->ctx = c->ctx | NBC_CTX_BIT;
    s->tag = (int)(c->nbc_seq++ & 0x7fffffffu);
    return s;
}

int
sched_local(struct mpii_sched *s, int on)
{
    if (s->lcomm == NULL) {
        if (!s->comm->inter ||
            (s->lcomm = mpii_comm_get(s->comm->lcomm)) == NULL)
            return MPI_ERR_COMM;
        mpii_comm_hold(s->lcomm);
        s->lctx = s->lcomm->ctx | NBC_CTX_BIT;
        s->ltag = (int)(s->lcomm->nbc_seq++ & 0x7fffffffu);
    }
    s->local = on;
    return MPI_SUCCESS;
}

void
sched_round(struct mpii_sched *s)
{
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].round == s->round)
        s->round++;
}

/* The schedule's own handle for a user's datatype (is_op 0) or operation
 * (1); builtin ones are their own. */
static int
sched_hold(struct mpii_sched *s, int is_op, int user)
{
    struct held *h;
    int own, rc, i;

    for (i = 0; i < s->nheld; i++)
        if (s->held[i].is_op == is_op && s->held[i].user == user)
            return s->held[i].own;
    rc = is_op ? mpii_op_handle_dup(user, &own)
               : mpii_type_handle_dup(user, &own);
    if (rc != MPI_SUCCESS) {
        s->err = rc;
        return user;
    }
    if (own == user)
        return user;
    if (s->nheld == s->capheld) {
        int ncap = s->capheld ? s->capheld * 2 : 4;

        if ((h = realloc(s->held, (size_t)ncap * sizeof *h)) == NULL) {
            if (is_op)
                mpii_op_handle_drop(own);
            else
                mpii_type_handle_drop(own);
            s->err = MPI_ERR_NO_MEM;
            return user;
        }
        s->held = h;
        s->capheld = ncap;
    }
    s->held[s->nheld++] = (struct held){is_op, user, own};
    return own;
}

static struct step *
step_add(struct mpii_sched *s, enum step_kind kind)
{
    struct step *st;

    if (s->nsteps == s->cap) {
        int ncap = s->cap ? s->cap * 2 : 16;
        struct step *n = realloc(s->steps, (size_t)ncap * sizeof *n);

        if (n == NULL) {
            s->err = MPI_ERR_NO_MEM;
            return NULL;
        }
        s->steps = n;
        s->cap = ncap;
    }
    st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->round = s->round;
    st->local = s->local;
    st->req = MPI_REQUEST_NULL;
    return st;
}

void
sched_send(struct mpii_sched *s, const void *buf, int count, MPI_Datatype dt,
           int dest)
{
    struct step *st = step_add(s, ST_SEND);

    if (st == NULL)
        return;
    st->sbuf = buf;
    st->count = count;
    st->dt = sched_hold(s, 0, dt);
    st->peer = dest;
}

void
sched_recv(struct mpii_sched *s, void *buf, int count, MPI_Datatype dt,
           int source)
{
    struct step *st = step_add(s, ST_RECV);

    if (st == NULL)
        return;
    st->rbuf = buf;
    st->count = count;
    st->dt = sched_hold(s, 0, dt);
    st->peer = source;
}

void
sched_op(struct mpii_sched *s, const void *in, void *inout, int count,
         MPI_Datatype dt, MPI_Op op)
{
    struct step *st = step_add(s, ST_OP);

    if (st == NULL)
        return;
    st->sbuf = in;
    st->rbuf = inout;
    st->count = count;
    st->dt = sched_hold(s, 0, dt);
    st->op = sched_hold(s, 1, op);
}

void
sched_copy(struct mpii_sched *s, const void *sbuf, int scount,
           MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt)
{
    struct step *st = step_add(s, ST_COPY);

    if (st == NULL)
        return;
    st->sbuf = sbuf;
    st->count = scount;
    st->dt = sched_hold(s, 0, sdt);
    st->rbuf = rbuf;
    st->rcount = rcount;
    st->rdt = sched_hold(s, 0, rdt);
}

void
sched_call(struct mpii_sched *s, int (*fn)(void *), void *arg)
{
    struct step *st = step_add(s, ST_CALL);

    if (st == NULL)
        return;
    st->fn = fn;
    st->rbuf = arg;
}

void *
sched_bytes(struct mpii_sched *s, size_t n)
{
    void *p;

    if (s->nmem == s->capmem) {
        int ncap = s->capmem ? s->capmem * 2 : 8;
        void **m = realloc(s->mem, (size_t)ncap * sizeof *m);

        if (m == NULL)
            return NULL;
        s->mem = m;
        s->capmem = ncap;
    }
    if ((p = malloc(n > 0 ? n : 1)) == NULL)
        return NULL;
    s->mem[s->nmem++] = p;
    return p;
}

void *
sched_tmp(struct mpii_sched *s, int count, MPI_Datatype dt)
{
    MPI_Aint lb, ext, tlb, text;
    size_t span = 0;
    char *p;

    if (PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &tlb, &text) != MPI_SUCCESS ||
        count < 0) {
        s->err = MPI_ERR_TYPE;
        return NULL;
    }
    if (count > 0)
        span = (size_t)(count - 1) * (size_t)(ext < 0 ? -ext : ext) +
               (size_t)text;
    if ((p = sched_bytes(s, span)) == NULL) {
        s->err = MPI_ERR_NO_MEM;
        return NULL;
    }
    return p - tlb;
}

/* A local copy between two layouts, through the packed form. */
static int
copy_run(const struct step *st)
{
    const struct mpii_type *t = mpii_type_get(st->dt),
                           *rt = mpii_type_get(st->rdt);
    size_t n, cap;
    void *tmp;

    if (t == NULL || rt == NULL)
        return MPI_ERR_TYPE;
    n = (size_t)st->count * mpii_type_size(t);
    cap = (size_t)st->rcount * mpii_type_size(rt);
    if (n == 0)
        return MPI_SUCCESS;
    if ((tmp = malloc(n)) == NULL)
        return MPI_ERR_NO_MEM;
    mpii_pack(st->sbuf, st->count, t, tmp);
    mpii_unpack(tmp, n < cap ? n : cap, st->rbuf, st->rcount, rt);
    free(tmp);
    return n > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

/* Start the sends and receives of the running round. */
static void
round_start(struct mpii_sched *s)
{
    int i, rc;

    for (i = s->first; i < s->nsteps && s->steps[i].round == s->round; i++) {
        struct step *st = &s->steps[i];

        struct mpii_comm *c = st->local ? s->lcomm : s->comm;
        uint32_t ctx = st->local ? s->lctx : s->ctx;
        int tag = st->local ? s->ltag : s->tag;

        if (st->kind == ST_SEND)
            rc = mpii_isend(st->sbuf, st->count, st->dt, st->peer, tag, c,
                            ctx, MPII_SEND_STANDARD, &st->req);
        else if (st->kind == ST_RECV)
            rc = mpii_irecv(st->rbuf, st->count, st->dt, st->peer, tag, c,
                            ctx, &st->req);
        else
            continue;
        if (rc != MPI_SUCCESS && s->err == MPI_SUCCESS)
            s->err = rc;
    }
}

/* The running round's messages are all done: collect their errors and
 * run its local steps.  0 if some message is still under way. */
static int
round_finish(struct mpii_sched *s)
{
    struct mpii_req *r;
    int i, end, rc;

    for (end = s->first; end < s->nsteps && s->steps[end].round == s->round;
         end++)
        if (s->steps[end].req != MPI_REQUEST_NULL &&
            (r = req_get(s->steps[end].req)) != NULL && r->active)
            return 0;
    for (i = s->first; i < end; i++) {
        struct step *st = &s->steps[i];

        rc = MPI_SUCCESS;
        if (st->req != MPI_REQUEST_NULL) {
            if ((r = req_get(st->req)) != NULL) {
                rc = r->err;
                req_release(r);
            }
            st->req = MPI_REQUEST_NULL;
        } else if (s->err != MPI_SUCCESS)
            continue; /* no reductions on what did not come */
        else if (st->kind == ST_OP)
            rc = st->count == 0 ? MPI_SUCCESS
                                : mpii_op_apply(st->op, st->sbuf, st->rbuf,
                                                st->count, st->dt);
        else if (st->kind == ST_COPY)
            rc = copy_run(st);
        else if (st->kind == ST_CALL)
            rc = st->fn(st->rbuf);
        if (rc != MPI_SUCCESS && s->err == MPI_SUCCESS)
            s->err = rc;
    }
    s->first = end;
    s->round++;
    return 1;
}

static void
unlink_sched(struct mpii_sched *s)
{
    struct mpii_sched **p;

    if (!s->linked)
        return;
    for (p = &running; *p != NULL; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    s->linked = 0;
}

/* Move s on; 1 once it is complete (and its request completed). */
static int
advance(struct mpii_sched *s)
{
    while (round_finish(s)) {
        /* After an error, only the rounds already under way finish. */
        if (s->first >= s->nsteps || s->err != MPI_SUCCESS) {
            unlink_sched(s);
            req_complete(s->req, s->err);
            return 1;
        }
        round_start(s);
    }
    return 0;
}

void
sched_progress(void)
{
    struct mpii_sched *s, *next;

    if (advancing)
        return;
    advancing = 1;
    for (s = running; s != NULL; s = next) {
        next = s->next;
        (void)advance(s);
    }
    advancing = 0;
}

int
sched_start(struct mpii_sched *s, MPI_Request *handle)
{
    struct mpii_req *r;
    int rc;

    if (s->err != MPI_SUCCESS) {
        rc = s->err;
        sched_drop(s);
        return rc;
    }
    if ((r = req_new(REQ_COLL, handle)) == NULL) {
        sched_drop(s);
        return MPI_ERR_NO_MEM;
    }
    req_bind(r, s->comm, NULL); /* for the error handler after a free */
    r->sched = s;
    r->status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->status.MPI_TAG = MPI_ANY_TAG;
    s->req = r;
    s->round = 0;
    s->first = 0;
    s->next = running;
    running = s;
    s->linked = 1;
    if (s->nsteps == 0) {
        unlink_sched(s);
        req_complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    round_start(s);
    if (!advancing) {
        advancing = 1;
        (void)advance(s);
        advancing = 0;
    }
    return MPI_SUCCESS;
}

int
sched_go(struct mpii_sched *s, int rc, MPI_Request *req, MPI_Comm comm,
         const char *fn)
{
    if (s == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    if (rc != MPI_SUCCESS) {
        sched_drop(s);
        return mpii_err(comm, rc, fn);
    }
    rc = sched_start(s, req);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

void
sched_drop(struct mpii_sched *s)
{
    int i;

    if (s == NULL)
        return;
    for (i = 0; i < s->nmem; i++)
        free(s->mem[i]);
    free(s->mem);
    for (i = 0; i < s->nheld; i++)
        if (s->held[i].is_op)
            mpii_op_handle_drop(s->held[i].own);
        else
            mpii_type_handle_drop(s->held[i].own);
    free(s->held);
    free(s->steps);
    mpii_comm_release(s->lcomm);
    mpii_comm_release(s->comm);
    free(s);
}

void
sched_free(struct mpii_sched *s)
{
    struct mpii_req *r;
    int i;

    if (s == NULL)
        return;
    unlink_sched(s);
    /* Released before it ended (finalize): its messages go too. */
    for (i = 0; i < s->nsteps; i++)
        if (s->steps[i].req != MPI_REQUEST_NULL &&
            (r = req_get(s->steps[i].req)) != NULL) {
            if (r->kind == REQ_RECV)
                (void)match_unpost(r);
            if (r->active)
                r->freed = 1;
            else
                req_release(r);
        }
    sched_drop(s);
}
