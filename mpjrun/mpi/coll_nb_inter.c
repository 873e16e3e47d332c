/*
 * coll_nb_inter.c: the nonblocking collectives over intercommunicators
 * (MPI 3.1 5.12 with 5.2.2): Ibarrier, Ibcast, Ireduce, Iallreduce,
 * Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v, w),
 * Ireduce_scatter(_block).  coll_nb.c hands a call here when its
 * communicator is an intercommunicator.
 *
 * Each is a schedule (coll_sched.h) mixing messages to the remote group
 * (on the intercommunicator's nonblocking context) and, where a group
 * must act as one, messages within the local group (on its hidden
 * intracommunicator's nonblocking context, sched_local): the same shapes
 * as the blocking forms (intercomm.c, coll_inter.c).
 *   Ibarrier    each group gathers to its leader (local rank 0), the
 *               leaders swap a message, each leader releases its group
 *               (binomial tree)
 *   Ibcast      the root sends to the remote leader, who broadcasts in
 *               its group
 *   Ireduce     the remote group reduces to its leader (rank order),
 *               the leader sends to the root
 *   Iallreduce  each group reduces to its leader, the leaders swap,
 *               each broadcasts the other group's result in its group
 *   Ireduce_scatter(_block)  as Iallreduce, then each leader scatters
 *               the other group's result in its group
 *   Igather(v), Iscatter(v)  the root talks to every remote process
 *   Iallgather(v), Ialltoall(v, w)  one round with every remote process
 * Every receive names its source, so replicas need no agreement.
 */
#include <stdlib.h>

#include "coll_sched.h"
#include "core.h"

/* The local group's communicator of an intercommunicator schedule. */
static struct mpii_comm *
local_of(struct mpii_comm *ic)
{
    return mpii_comm_get(ic->lcomm);
}

/* A new schedule on ic with its local group ready; NULL on failure. */
static struct mpii_sched *
inter_sched(struct mpii_comm *ic, struct mpii_comm **lc)
{
    struct mpii_sched *s;

    if ((*lc = local_of(ic)) == NULL || (s = sched_new(ic)) == NULL)
        return NULL;
    if (sched_local(s, 0) != MPI_SUCCESS) {
        sched_drop(s);
        return NULL;
    }
    return s;
}

/* Root of a rooted call: MPI_ROOT, MPI_PROC_NULL or a remote rank. */
static int
root_ok(const struct mpii_comm *ic, int root)
{
    return root == MPI_ROOT || root == MPI_PROC_NULL ||
           (root >= 0 && root < ic->size);
}

int
mpii_inter_ibarrier(struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
    struct mpii_comm *lc;
    struct mpii_sched *s = inter_sched(ic, &lc);
    int i;

    if (s == NULL)
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    sched_local(s, 1);
    if (lc->rank != 0)
        sched_send(s, NULL, 0, MPI_BYTE, 0);
    else
        for (i = 1; i < lc->size; i++)
            sched_recv(s, NULL, 0, MPI_BYTE, i);
    sched_local(s, 0);
    if (lc->rank == 0) {
        sched_round(s);
        sched_send(s, NULL, 0, MPI_BYTE, 0);
        sched_recv(s, NULL, 0, MPI_BYTE, 0);
    }
    sched_local(s, 1);
    sched_bcast(s, lc, NULL, 0, MPI_BYTE, 0);
    return sched_go(s, MPI_SUCCESS, req, ic->handle, fn);
}

int
mpii_inter_ibcast(void *buf, int count, MPI_Datatype dt, int root,
                  struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
    struct mpii_comm *lc;
    struct mpii_sched *s;
    int rc;

    if (!root_ok(ic, root))
        return mpii_err(ic->handle, MPI_ERR_ROOT, fn);
    if (root != MPI_PROC_NULL &&
        (rc = sched_check_type(count, dt)) != MPI_SUCCESS)
        return mpii_err(ic->handle, rc, fn);
    if ((s = inter_sched(ic, &lc)) == NULL)
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    if (root == MPI_ROOT)
        sched_send(s, buf, count, dt, 0);
    else if (root != MPI_PROC_NULL) {
        if (lc->rank == 0)
            sched_recv(s, buf, count, dt, root);
        sched_local(s, 1);
        sched_bcast(s, lc, buf, count, dt, 0);
    }
    return sched_go(s, MPI_SUCCESS, req, ic->handle, fn);
}

/* This group's operands reduced (rank order) to the leader's *acc, a
 * scratch buffer of n elements (NULL elsewhere). */
static int
reduce_to_leader(struct mpii_sched *s, struct mpii_comm *lc, const void *sbuf,
                 int n, MPI_Datatype dt, MPI_Op op, void **acc)
{
    *acc = NULL;
    if (lc->rank == 0 && (*acc = sched_tmp(s, n, dt)) == NULL)
        return MPI_ERR_NO_MEM;
    sched_local(s, 1);
    return sched_reduce(s, lc, sbuf, *acc, n, dt, op, 0);
}

/* The arguments every reduction shares. */
static int
red_check(const void *sbuf, int count, MPI_Datatype dt, MPI_Op op)
{
    int rc = sched_check_type(count, dt);

    if (rc == MPI_SUCCESS && mpii_op_commutative(op) < 0)
        rc = MPI_ERR_OP;
    if (rc == MPI_SUCCESS && sbuf == MPI_IN_PLACE)
        rc = MPI_ERR_BUFFER; /* no in-place over intercommunicators */
    return rc;
}

int
mpii_inter_ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                   MPI_Op op, int root, struct mpii_comm *ic, MPI_Request *req,
                   const char *fn)
{
    struct mpii_comm *lc;
    struct mpii_sched *s;
    void *acc;
    int rc = MPI_SUCCESS;

    if (!root_ok(ic, root))
        return mpii_err(ic->handle, MPI_ERR_ROOT, fn);
    if (root == MPI_ROOT)
        rc = sched_check_type(count, dt);
    else if (root != MPI_PROC_NULL)
        rc = red_check(sbuf, count, dt, op);
    if (rc != MPI_SUCCESS)
        return mpii_err(ic->handle, rc, fn);
    if ((s = inter_sched(ic, &lc)) == NULL)
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    if (root == MPI_ROOT)
        sched_recv(s, rbuf, count, dt, 0);
    else if (root != MPI_PROC_NULL) {
        rc = reduce_to_leader(s, lc, sbuf, count, dt, op, &acc);
        sched_local(s, 0);
        if (lc->rank == 0) {
            sched_round(s);
            sched_send(s, acc, count, dt, root);
        }
    }
    return sched_go(s, rc, req, ic->handle, fn);
}

/* Each group's n elements reduced to its leader; the leaders swap; the
 * leader's copy of the other group's result in *theirs. */
static int
reduce_and_swap(struct mpii_sched *s, struct mpii_comm *lc, const void *sbuf,
                int n, MPI_Datatype dt, MPI_Op op, void **theirs)
{
    void *acc;
    int rc = reduce_to_leader(s, lc, sbuf, n, dt, op, &acc);

    *theirs = NULL;
    sched_local(s, 0);
    if (rc == MPI_SUCCESS && lc->rank == 0) {
        if ((*theirs = sched_tmp(s, n, dt)) == NULL)
            return MPI_ERR_NO_MEM;
        sched_round(s);
        sched_send(s, acc, n, dt, 0);
        sched_recv(s, *theirs, n, dt, 0);
    }
    return rc;
}

int
mpii_inter_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                      MPI_Op op, struct mpii_comm *ic, MPI_Request *req,
                      const char *fn)
{
    struct mpii_comm *lc;
    struct mpii_sched *s;
    void *theirs;
    int rc;

    if ((rc = red_check(sbuf, count, dt, op)) != MPI_SUCCESS)
        return mpii_err(ic->handle, rc, fn);
    if ((s = inter_sched(ic, &lc)) == NULL)
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    rc = reduce_and_swap(s, lc, sbuf, count, dt, op, &theirs);
    if (rc == MPI_SUCCESS && lc->rank == 0)
        sched_copy(s, theirs, count, dt, rbuf, count, dt);
    sched_local(s, 1);
    sched_bcast(s, lc, rbuf, count, dt, 0);
    return sched_go(s, rc, req, ic->handle, fn);
}

int
mpii_inter_ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                           MPI_Datatype dt, MPI_Op op, struct mpii_comm *ic,
                           MPI_Request *req, const char *fn)
{
    struct mpii_comm *lc;
    struct mpii_sched *s;
    void *theirs;
    int *displs, i, n = 0, rc;

    if ((rc = red_check(sbuf, 0, dt, op)) != MPI_SUCCESS)
        return mpii_err(ic->handle, rc, fn);
    if ((lc = local_of(ic)) == NULL)
        return mpii_err(ic->handle, MPI_ERR_COMM, fn);
    if ((displs = malloc((size_t)lc->size * sizeof *displs)) == NULL)
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    for (i = 0; i < lc->size && rc == MPI_SUCCESS; i++) {
        if (rcounts[i] < 0 || n > 0x7fffffff - rcounts[i])
            rc = MPI_ERR_COUNT;
        displs[i] = n;
        n += rc == MPI_SUCCESS ? rcounts[i] : 0;
    }
    if (rc != MPI_SUCCESS) {
        free(displs);
        return mpii_err(ic->handle, rc, fn);
    }
    if ((s = inter_sched(ic, &lc)) == NULL) {
        free(displs);
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    }
    rc = reduce_and_swap(s, lc, sbuf, n, dt, op, &theirs);
    sched_local(s, 1);
    sched_scatterv(s, lc, theirs, rcounts, displs, dt, rbuf, rcounts[lc->rank],
                   dt, 0);
    free(displs);
    return sched_go(s, rc, req, ic->handle, fn);
}

/* Gather (rcv: the root's blocks) or scatter (snd: the root's blocks):
 * the root talks to every remote process, the others to the root. */
int
mpii_inter_irooted(const struct mpii_blocks *snd, const struct mpii_blocks *rcv,
                   int gather, int root, struct mpii_comm *ic, MPI_Request *req,
                   const char *fn)
{
    const struct mpii_blocks *mine = gather ? snd : rcv,
                             *root_side = gather ? rcv : snd;
    struct mpii_sched *s;
    MPI_Datatype type;
    char *addr;
    int i, count, rc = MPI_SUCCESS;

    if (!root_ok(ic, root))
        return mpii_err(ic->handle, MPI_ERR_ROOT, fn);
    if (root != MPI_ROOT && root != MPI_PROC_NULL && mine->buf == MPI_IN_PLACE)
        return mpii_err(ic->handle, MPI_ERR_BUFFER, fn);
    if ((s = sched_new(ic)) == NULL)
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    if (root == MPI_ROOT)
        for (i = 0; i < ic->size && rc == MPI_SUCCESS; i++) {
            if ((rc = mpii_blocks_at(root_side, i, &addr, &count, &type)) !=
                MPI_SUCCESS)
                break;
            if (gather)
                sched_recv(s, addr, count, type, i);
            else
                sched_send(s, addr, count, type, i);
        }
    else if (root != MPI_PROC_NULL &&
             (rc = mpii_blocks_at(mine, 0, &addr, &count, &type)) ==
                 MPI_SUCCESS) {
        if (gather)
            sched_send(s, addr, count, type, root);
        else
            sched_recv(s, addr, count, type, root);
    }
    return sched_go(s, rc, req, ic->handle, fn);
}

/* Allgather(v) and Alltoall(v, w): block i of snd to remote i, block i
 * of rcv from remote i, in one round. */
int
mpii_inter_iexchange(const struct mpii_blocks *snd,
                     const struct mpii_blocks *rcv, struct mpii_comm *ic,
                     MPI_Request *req, const char *fn)
{
    struct mpii_sched *s;
    MPI_Datatype type;
    char *addr;
    int i, count, rc = MPI_SUCCESS;

    if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
        return mpii_err(ic->handle, MPI_ERR_BUFFER, fn);
    if ((s = sched_new(ic)) == NULL)
        return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
    for (i = 0; i < ic->size && rc == MPI_SUCCESS; i++) {
        if ((rc = mpii_blocks_at(rcv, i, &addr, &count, &type)) == MPI_SUCCESS)
            sched_recv(s, addr, count, type, i);
        if (rc == MPI_SUCCESS &&
            (rc = mpii_blocks_at(snd, i, &addr, &count, &type)) == MPI_SUCCESS)
            sched_send(s, addr, count, type, i);
    }
    return sched_go(s, rc, req, ic->handle, fn);
}
