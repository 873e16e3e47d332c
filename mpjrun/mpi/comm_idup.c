/*
 * comm_idup.c: MPI_Comm_idup, a nonblocking collective like the others
 * (a schedule, coll_sched.h): the members agree on the new context id
 * while the program goes on, and the new communicator exists, and
 * *newcomm is written, only when the request completes.
 *
 * The id cannot come from the counter Comm_dup and Comm_split agree on
 * (comm.c): another communicator may be made while the agreement is in
 * flight and take the same id.  So an idup's id lives in a range of its
 * own (bit 30 set) and every proposal is unique in the whole job: each
 * process proposes (its world rank, its count of idups so far), and the
 * highest proposal wins.  A proposal serves one idup only, so two idups
 * can never agree on the same id, whatever they overlap with, and
 * nothing is checked or retried.  Intercommunicators: each group agrees
 * on its highest proposal (reduced to the leader), the leaders swap and
 * keep the higher, each leader tells its group (the hidden local
 * communicator takes id + 2).  The proposals and the winner depend on
 * program order only, so replicas need no agreement.
 */
#include <string.h>

#include "coll_sched.h"
#include "core.h"


static uint32_t idups; /* unique proposals made by this process */

/* What the schedule's last step needs to make the communicator. */
struct idup {
    struct mpii_comm *parent; /* held by the schedule */
    MPI_Comm *newcomm;
    int mine, theirs; /* proposals; the agreed id lands in id */
    int id;
};

/* This process's next proposal: world rank and count, bits 2 .. 29,
 * with MPII_CTX_UNIQUE; 0 when a process's proposals outgrow the range
 * (also the blocking agreements' under MPI_THREAD_MULTIPLE, comm.c). */
uint32_t
mpii_ctx_unique(void)
{
    struct mpii_comm *w = mpii_comm_get(MPI_COMM_WORLD);
    unsigned rbits = 0, room;

    if (w == NULL)
        return 0;
    while ((1u << rbits) < (unsigned)w->size)
        rbits++;
    room = 28 - rbits; /* bits left for the count */
    if (rbits > 28 || (room < 32 && idups >= (1u << room)))
        return 0;
    return MPII_CTX_UNIQUE | (idups++ << (2 + rbits)) |
           ((uint32_t)w->rank << 2);
}

/* The last step: the communicator, with the agreed id. */
static int
idup_make(void *arg)
{
    struct idup *d = arg;
    struct mpii_comm *p = d->parent, *n;
    int rc;

    if (p->inter) {
        rc = mpii_inter_build(p->lworld, p->lsize, p->rank, p->world, p->size,
                              (uint32_t)d->id, p->errh, d->newcomm);
        if (rc != MPI_SUCCESS)
            return rc;
        n = mpii_comm_get(*d->newcomm);
    } else {
        if ((n = mpii_comm_new(p->size)) == NULL)
            return MPI_ERR_NO_MEM;
        memcpy(n->world, p->world, (size_t)p->size * sizeof *n->world);
        n->rank = p->rank;
        n->ctx = (uint32_t)d->id;
        n->errh = p->errh;
        *d->newcomm = n->handle;
    }
    if (p->topo != NULL && (n->topo = mpii_topo_dup(p->topo)) == NULL)
        rc = MPI_ERR_NO_MEM;
    else
        rc = mpii_attr_copy(p, n);
    if (rc != MPI_SUCCESS) {
        (void)mpii_attr_delete_all(n);
        mpii_comm_drop(n);
        *d->newcomm = MPI_COMM_NULL;
    }
    return rc;
}

/* The agreement on an intracommunicator: max to rank 0, then back. */
static int
agree_intra(struct mpii_sched *s, struct mpii_comm *c, struct idup *d)
{
    int rc = sched_reduce(s, c, &d->mine, &d->id, 1, MPI_INT, MPI_MAX, 0);

    sched_bcast(s, c, &d->id, 1, MPI_INT, 0);
    return rc;
}

/* Over an intercommunicator: each group's max to its leader, the leaders
 * swap and keep the higher, each tells its group. */
static int
agree_inter(struct mpii_sched *s, struct mpii_comm *ic, struct idup *d)
{
    struct mpii_comm *lc = mpii_comm_get(ic->lcomm);
    int rc;

    if (lc == NULL || (rc = sched_local(s, 1)) != MPI_SUCCESS)
        return MPI_ERR_COMM;
    rc = sched_reduce(s, lc, &d->mine, &d->id, 1, MPI_INT, MPI_MAX, 0);
    sched_local(s, 0);
    if (lc->rank == 0) {
        sched_round(s);
        sched_send(s, &d->id, 1, MPI_INT, 0);
        sched_recv(s, &d->theirs, 1, MPI_INT, 0);
        sched_op(s, &d->theirs, &d->id, 1, MPI_INT, MPI_MAX);
    }
    sched_local(s, 1);
    sched_bcast(s, lc, &d->id, 1, MPI_INT, 0);
    return rc;
}

#pragma weak MPI_Comm_idup = PMPI_Comm_idup
int
PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_idup";
    struct mpii_comm *c;
    struct mpii_sched *s;
    struct idup *d;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, fn);
    if (newcomm == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((s = sched_new(c)) == NULL || (d = sched_bytes(s, sizeof *d)) == NULL)
        return sched_go(s, MPI_ERR_NO_MEM, req, comm, fn);
    memset(d, 0, sizeof *d);
    d->parent = c;
    d->newcomm = newcomm;
    /* 0: the ids of one process ran out */
    if ((d->mine = (int)mpii_ctx_unique()) == 0)
        return sched_go(s, MPI_ERR_INTERN, req, comm, fn);
    *newcomm = MPI_COMM_NULL; /* until the request completes */
    rc = c->inter ? agree_inter(s, c, d) : agree_intra(s, c, d);
    sched_round(s);
    sched_call(s, idup_make, d);
    return sched_go(s, rc, req, comm, fn);
}
