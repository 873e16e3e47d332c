/*
 * coll_nb.c: the nonblocking collectives (Ibarrier ... Iexscan), each
 * written as a schedule (coll_sched.h) that the progress engine runs
 * while the program goes on; Alltoallw (Ialltoallw and a wait),
 * Reduce_local and Op_commutative (Comm_idup is comm_idup.c's).
 *
 * Algorithms (p ranks):
 *   Ibarrier   dissemination, ceil(log2 p) rounds
 *   Ibcast     binomial tree
 *   Igather(v), Iscatter(v)   linear, every block at once
 *   Iallgather(v), Ialltoall(v,w)   every block to every rank at once
 *   Ireduce    every operand to the root, combined there in rank order
 *              (x0 op x1 op ... op x(p-1), right for non-commutative
 *              operations too)
 *   Iallreduce recursive doubling when p is a power of two, else
 *              Ireduce to rank 0, then Ibcast
 *   Ireduce_scatter(_block)   Ireduce of the whole vector to rank 0,
 *              then Iscatterv
 *   Iscan, Iexscan   a chain: rank r gets the prefix of r - 1, folds
 *              its own operand in and passes the result on
 * Simple and deterministic rather than fastest: the blocking
 * collectives (coll.c, coll_reduce.c) keep their tuned algorithms.
 * Over an intercommunicator each call hands its arguments to
 * coll_nb_inter.c (NB_ENTER).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "coll_sched.h"
#include "core.h"

/* Checks the communicator and the request pointer; *c set.  Over an
 * intercommunicator the call is inter_call's (coll_nb_inter.c). */
#define NB_ENTER(comm, c, req, fn, inter_call)                                \
    do {                                                                      \
        MPII_CHECK_INIT(fn);                                                  \
        if (((c) = mpii_comm_get(comm)) == NULL)                              \
            return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);                \
        if ((req) == NULL)                                                    \
            return mpii_err(comm, MPI_ERR_REQUEST, fn);                       \
        if ((c)->inter)                                                       \
            return (inter_call);                                              \
    } while (0)

int
sched_check_type(int count, MPI_Datatype dt)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    return mpii_type_get(dt) == NULL ? MPI_ERR_TYPE : MPI_SUCCESS;
}

/* Element i of a buffer of elements of dt. */
static char *
nb_at(const void *buf, long long i, MPI_Datatype dt)
{
    return coll_at(buf, i, mpii_type_extent(mpii_type_get(dt)));
}

/* --- the building blocks -------------------------------------------- */

/* Binomial broadcast of (buf, count, dt) from root. */
void
sched_bcast(struct mpii_sched *s, struct mpii_comm *c, void *buf, int count,
          MPI_Datatype dt, int root)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask = 1;

    while (mask < p) {
        if (vr & mask) {
            sched_round(s);
            sched_recv(s, buf, count, dt, (vr - mask + root) % p);
            break;
        }
        mask <<= 1;
    }
    sched_round(s);
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            sched_send(s, buf, count, dt, (vr + mask + root) % p);
}

/* Every operand to root, combined there in rank order into rbuf (root
 * only); mine is this rank's operand. */
int
sched_reduce(struct mpii_sched *s, struct mpii_comm *c, const void *mine,
           void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root)
{
    int p = c->size, i;
    const void **x;
    void *acc;

    sched_round(s);
    if (c->rank != root) {
        sched_send(s, mine, count, dt, root);
        return MPI_SUCCESS;
    }
    if (p == 1) {
        if (mine != rbuf)
            sched_copy(s, mine, count, dt, rbuf, count, dt);
        return MPI_SUCCESS;
    }
    if ((x = calloc((size_t)p, sizeof *x)) == NULL)
        return MPI_ERR_NO_MEM;
    for (i = 0; i < p; i++) {
        if (i == root) {
            x[i] = mine;
            continue;
        }
        if ((x[i] = sched_tmp(s, count, dt)) == NULL) {
            free(x);
            return MPI_ERR_NO_MEM;
        }
        sched_recv(s, (void *)x[i], count, dt, i);
    }
    if ((acc = sched_tmp(s, count, dt)) == NULL) {
        free(x);
        return MPI_ERR_NO_MEM;
    }
    /* acc = x0 op (x1 op (... op x(p-1))): inout = in op inout. */
    sched_copy(s, x[p - 1], count, dt, acc, count, dt);
    for (i = p - 2; i >= 0; i--)
        sched_op(s, x[i], acc, count, dt, op);
    sched_copy(s, acc, count, dt, rbuf, count, dt);
    free(x);
    return MPI_SUCCESS;
}

/* Linear scatter from root: block i of counts[i] at displs[i] (in
 * elements of st) to rank i; root's own block copied unless rbuf is
 * MPI_IN_PLACE. */
void
sched_scatterv(struct mpii_sched *s, struct mpii_comm *c, const void *sbuf,
             const int counts[], const int displs[], MPI_Datatype st,
             void *rbuf, int rcount, MPI_Datatype rt, int root)
{
    sched_round(s);
    if (c->rank != root) {
        sched_recv(s, rbuf, rcount, rt, root);
        return;
    }
    for (int i = 0; i < c->size; i++) {
        if (i == root) {
            if (rbuf != MPI_IN_PLACE)
                sched_copy(s, nb_at(sbuf, displs[i], st), counts[i], st,
                           rbuf, rcount, rt);
            continue;
        }
        sched_send(s, nb_at(sbuf, displs[i], st), counts[i], st, i);
    }
}

/* --- the intercommunicator forms' arguments ----------------------------- */

static int
inter_gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
             int rcount, const int rcounts[], const int displs[],
             MPI_Datatype rt, int root, struct mpii_comm *ic,
             MPI_Request *req, const char *fn)
{
    struct mpii_blocks snd = {.buf = sbuf, .count = scount, .type = st};
    struct mpii_blocks rcv = {.buf = rbuf,
                              .count = rcount,
                              .counts = rcounts,
                              .displs = displs,
                              .type = rt};

    if (root == MPI_ROOT && rcounts != NULL && displs == NULL)
        return mpii_err(ic->handle, MPI_ERR_ARG, fn);
    return mpii_inter_irooted(&snd, &rcv, 1, root, ic, req, fn);
}

static int
inter_scatter(const void *sbuf, int scount, const int scounts[],
              const int displs[], MPI_Datatype st, void *rbuf, int rcount,
              MPI_Datatype rt, int root, struct mpii_comm *ic,
              MPI_Request *req, const char *fn)
{
    struct mpii_blocks snd = {.buf = sbuf,
                              .count = scount,
                              .counts = scounts,
                              .displs = displs,
                              .type = st};
    struct mpii_blocks rcv = {.buf = rbuf, .count = rcount, .type = rt};

    if (root == MPI_ROOT && scounts != NULL && displs == NULL)
        return mpii_err(ic->handle, MPI_ERR_ARG, fn);
    return mpii_inter_irooted(&snd, &rcv, 0, root, ic, req, fn);
}

static int
inter_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                int rcount, const int rcounts[], const int displs[],
                MPI_Datatype rt, struct mpii_comm *ic, MPI_Request *req,
                const char *fn)
{
    struct mpii_blocks snd = {
        .buf = sbuf, .count = scount, .type = st, .same = 1};
    struct mpii_blocks rcv = {.buf = rbuf,
                              .count = rcount,
                              .counts = rcounts,
                              .displs = displs,
                              .type = rt};

    if (rcounts != NULL && displs == NULL)
        return mpii_err(ic->handle, MPI_ERR_ARG, fn);
    return mpii_inter_iexchange(&snd, &rcv, ic, req, fn);
}

static int
inter_alltoall(const void *sbuf, int scount, const int scounts[],
               const int sdispls[], MPI_Datatype st, void *rbuf, int rcount,
               const int rcounts[], const int rdispls[], MPI_Datatype rt,
               struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
    struct mpii_blocks snd = {.buf = sbuf,
                              .count = scount,
                              .counts = scounts,
                              .displs = sdispls,
                              .type = st};
    struct mpii_blocks rcv = {.buf = rbuf,
                              .count = rcount,
                              .counts = rcounts,
                              .displs = rdispls,
                              .type = rt};

    if ((scounts != NULL && sdispls == NULL) ||
        (rcounts != NULL && rdispls == NULL))
        return mpii_err(ic->handle, MPI_ERR_ARG, fn);
    return mpii_inter_iexchange(&snd, &rcv, ic, req, fn);
}

static int
inter_reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                     int rcount, MPI_Datatype dt, MPI_Op op,
                     struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
    int *counts = NULL, rc;

    if (rcounts == NULL) {
        if ((counts = malloc((size_t)ic->lsize * sizeof *counts)) == NULL)
            return mpii_err(ic->handle, MPI_ERR_NO_MEM, fn);
        for (int i = 0; i < ic->lsize; i++)
            counts[i] = rcount;
    }
    rc = mpii_inter_ireduce_scatter(sbuf, rbuf, counts ? counts : rcounts,
                                    dt, op, ic, req, fn);
    free(counts);
    return rc;
}

/* --- the calls -------------------------------------------------------- */

#pragma weak MPI_Ibarrier = PMPI_Ibarrier
int
PMPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Ibarrier";
    struct mpii_comm *c;
    struct mpii_sched *s;
    int k;

    NB_ENTER(comm, c, req, fn,
             mpii_inter_ibarrier(c, req, fn));
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    for (k = 1; k < c->size; k <<= 1) {
        sched_round(s);
        sched_send(s, NULL, 0, MPI_BYTE, (c->rank + k) % c->size);
        sched_recv(s, NULL, 0, MPI_BYTE, (c->rank - k + c->size) % c->size);
    }
    return sched_go(s, MPI_SUCCESS, req, comm, fn);
}

#pragma weak MPI_Ibcast = PMPI_Ibcast
int
PMPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
            MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Ibcast";
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc;

    NB_ENTER(comm, c, req, fn,
             mpii_inter_ibcast(buf, count, dt, root, c, req, fn));
    if ((rc = sched_check_type(count, dt)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if (root < 0 || root >= c->size)
        return mpii_err(comm, MPI_ERR_ROOT, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    sched_bcast(s, c, buf, count, dt, root);
    return sched_go(s, MPI_SUCCESS, req, comm, fn);
}

/* Igather and Igatherv: rcounts/displs NULL means rcount blocks. */
static int
igather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
        int rcount, const int rcounts[], const int displs[], MPI_Datatype rt,
        int root, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc = MPI_SUCCESS, i, n, at;

    NB_ENTER(comm, c, req, fn,
             inter_gather(sbuf, scount, st, rbuf, rcount, rcounts, displs, rt,
                          root, c, req, fn));
    if (root < 0 || root >= c->size)
        return mpii_err(comm, MPI_ERR_ROOT, fn);
    if (c->rank == root) {
        if ((rc = sched_check_type(rcount, rt)) == MPI_SUCCESS &&
            rcounts != NULL)
            rc = coll_check_counts(rcounts, displs, c->size);
    }
    if (rc == MPI_SUCCESS && (c->rank != root || sbuf != MPI_IN_PLACE))
        rc = sched_check_type(scount, st);
    if (rc != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    if (c->rank != root)
        sched_send(s, sbuf, scount, st, root);
    else
        for (i = 0; i < c->size; i++) {
            n = rcounts != NULL ? rcounts[i] : rcount;
            at = rcounts != NULL ? displs[i] : i * rcount;
            if (i != root)
                sched_recv(s, nb_at(rbuf, at, rt), n, rt, i);
            else if (sbuf != MPI_IN_PLACE)
                sched_copy(s, sbuf, scount, st, nb_at(rbuf, at, rt), n, rt);
        }
    return sched_go(s, MPI_SUCCESS, req, comm, fn);
}

#pragma weak MPI_Igather = PMPI_Igather
int
PMPI_Igather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
             int rcount, MPI_Datatype rt, int root, MPI_Comm comm,
             MPI_Request *req)
{
    MPII_ENTER;
    return igather(sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, root, comm,
                   req, "MPI_Igather");
}

#pragma weak MPI_Igatherv = PMPI_Igatherv
int
PMPI_Igatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
              const int rcounts[], const int displs[], MPI_Datatype rt,
              int root, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return igather(sbuf, scount, st, rbuf, 0, rcounts, displs, rt, root, comm,
                   req, "MPI_Igatherv");
}

/* Iscatter and Iscatterv (scounts NULL: scount blocks). */
static int
iscatter(const void *sbuf, int scount, const int scounts[],
         const int displs[], MPI_Datatype st, void *rbuf, int rcount,
         MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req,
         const char *fn)
{
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc = MPI_SUCCESS, *cnt = NULL, *dsp = NULL;

    NB_ENTER(comm, c, req, fn,
             inter_scatter(sbuf, scount, scounts, displs, st, rbuf, rcount, rt,
                           root, c, req, fn));
    if (root < 0 || root >= c->size)
        return mpii_err(comm, MPI_ERR_ROOT, fn);
    if (c->rank == root) {
        if ((rc = sched_check_type(scount, st)) == MPI_SUCCESS &&
            scounts != NULL)
            rc = coll_check_counts(scounts, displs, c->size);
    }
    if (rc == MPI_SUCCESS && (c->rank != root || rbuf != MPI_IN_PLACE))
        rc = sched_check_type(rcount, rt);
    if (rc != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    if (c->rank == root && scounts == NULL) {
        cnt = malloc(2 * (size_t)c->size * sizeof *cnt);
        if (cnt == NULL)
            return sched_go(s, MPI_ERR_NO_MEM, req, comm, fn);
        dsp = cnt + c->size;
        for (int i = 0; i < c->size; i++) {
            cnt[i] = scount;
            dsp[i] = i * scount;
        }
    }
    sched_scatterv(s, c, sbuf, cnt != NULL ? cnt : scounts,
                 cnt != NULL ? dsp : displs, st, rbuf, rcount, rt, root);
    free(cnt);
    return sched_go(s, MPI_SUCCESS, req, comm, fn);
}

#pragma weak MPI_Iscatter = PMPI_Iscatter
int
PMPI_Iscatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
              int rcount, MPI_Datatype rt, int root, MPI_Comm comm,
              MPI_Request *req)
{
    MPII_ENTER;
    return iscatter(sbuf, scount, NULL, NULL, st, rbuf, rcount, rt, root,
                    comm, req, "MPI_Iscatter");
}

#pragma weak MPI_Iscatterv = PMPI_Iscatterv
int
PMPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[],
               MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
               int root, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return iscatter(sbuf, 0, scounts, displs, st, rbuf, rcount, rt, root,
                    comm, req, "MPI_Iscatterv");
}

/* Iallgather and Iallgatherv (rcounts NULL: rcount blocks). */
static int
iallgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
           int rcount, const int rcounts[], const int displs[],
           MPI_Datatype rt, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc, i, me, n, at;

    NB_ENTER(comm, c, req, fn,
             inter_allgather(sbuf, scount, st, rbuf, rcount, rcounts, displs,
                             rt, c, req, fn));
    if ((rc = sched_check_type(rcount, rt)) == MPI_SUCCESS && rcounts != NULL)
        rc = coll_check_counts(rcounts, displs, c->size);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = sched_check_type(scount, st);
    if (rc != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    me = c->rank;
    for (i = 0; i < c->size; i++) {
        n = rcounts != NULL ? rcounts[i] : rcount;
        at = rcounts != NULL ? displs[i] : i * rcount;
        if (i == me) {
            if (sbuf != MPI_IN_PLACE)
                sched_copy(s, sbuf, scount, st, nb_at(rbuf, at, rt), n, rt);
            continue;
        }
        sched_recv(s, nb_at(rbuf, at, rt), n, rt, i);
        if (sbuf != MPI_IN_PLACE)
            sched_send(s, sbuf, scount, st, i);
        else
            sched_send(s,
                       nb_at(rbuf, rcounts != NULL ? displs[me] : me * rcount,
                             rt),
                       rcounts != NULL ? rcounts[me] : rcount, rt, i);
    }
    return sched_go(s, MPI_SUCCESS, req, comm, fn);
}

#pragma weak MPI_Iallgather = PMPI_Iallgather
int
PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                int rcount, MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return iallgather(sbuf, scount, st, rbuf, rcount, NULL, NULL, rt, comm,
                      req, "MPI_Iallgather");
}

#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
int
PMPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                 const int rcounts[], const int displs[], MPI_Datatype rt,
                 MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return iallgather(sbuf, scount, st, rbuf, 0, rcounts, displs, rt, comm,
                      req, "MPI_Iallgatherv");
}

/* The general all-to-all: block i of each side at byte displacement
 * sd[i] / rd[i], counts sc[i] / rc[i], types stv[i] / rtv[i]. */
static void
add_alltoallw(struct mpii_sched *s, struct mpii_comm *c, const void *sbuf,
              const int sc[], const MPI_Aint sd[], const MPI_Datatype stv[],
              void *rbuf, const int rc[], const MPI_Aint rd[],
              const MPI_Datatype rtv[])
{
    sched_round(s);
    for (int i = 0; i < c->size; i++) {
        char *rb = (char *)rbuf + rd[i];

        if (i == c->rank) {
            sched_copy(s, (const char *)sbuf + sd[i], sc[i], stv[i], rb,
                       rc[i], rtv[i]);
            continue;
        }
        sched_recv(s, rb, rc[i], rtv[i], i);
        sched_send(s, (const char *)sbuf + sd[i], sc[i], stv[i], i);
    }
}

/* Copies out the blocks an in-place all-to-all sends: a first round
 * with local steps only (the tmp buffers are the send steps' in the
 * next round, in the same order). */
static int
inplace_copies(struct mpii_sched *s, struct mpii_comm *c, void *rbuf,
               const int rc[], const MPI_Aint rd[], const MPI_Datatype rtv[],
               void ***tmps)
{
    int i;

    if ((*tmps = calloc((size_t)c->size, sizeof **tmps)) == NULL)
        return MPI_ERR_NO_MEM;
    for (i = 0; i < c->size; i++) {
        if (i == c->rank)
            continue;
        if (((*tmps)[i] = sched_tmp(s, rc[i], rtv[i])) == NULL)
            return MPI_ERR_NO_MEM;
        sched_copy(s, (char *)rbuf + rd[i], rc[i], rtv[i], (*tmps)[i], rc[i],
                   rtv[i]);
    }
    return MPI_SUCCESS;
}

/* Builds any all-to-all from per-block arrays (in bytes).  In place
 * (sbuf MPI_IN_PLACE), the receive side describes both: the blocks to
 * send are copied out in a first round of their own. */
static int
alltoall_build(struct mpii_sched *s, struct mpii_comm *c, const void *sbuf,
               const int sc[], const MPI_Aint sd[], const MPI_Datatype stv[],
               void *rbuf, const int rc[], const MPI_Aint rd[],
               const MPI_Datatype rtv[])
{
    void **tmps = NULL;
    int i, err;

    if (sbuf != MPI_IN_PLACE) {
        add_alltoallw(s, c, sbuf, sc, sd, stv, rbuf, rc, rd, rtv);
        return MPI_SUCCESS;
    }
    if ((err = inplace_copies(s, c, rbuf, rc, rd, rtv, &tmps)) !=
        MPI_SUCCESS) {
        free(tmps);
        return err;
    }
    sched_round(s);
    for (i = 0; i < c->size; i++) {
        if (i == c->rank)
            continue;
        sched_recv(s, (char *)rbuf + rd[i], rc[i], rtv[i], i);
        sched_send(s, tmps[i], rc[i], rtv[i], i);
    }
    free(tmps);
    return MPI_SUCCESS;
}

/* Per-block arrays of an Ialltoall(v): counts, byte displacements and
 * one type.  One allocation, freed by the caller. */
static int
blocks_of(int p, int count, const int counts[], const int displs[],
          MPI_Datatype dt, int **cnt, MPI_Aint **dsp, MPI_Datatype **typ)
{
    MPI_Aint ext = mpii_type_extent(mpii_type_get(dt));
    char *m = malloc((size_t)p * (sizeof **cnt + sizeof **dsp + sizeof **typ));

    if (m == NULL)
        return MPI_ERR_NO_MEM;
    *dsp = (MPI_Aint *)m;
    *typ = (MPI_Datatype *)(m + (size_t)p * sizeof **dsp);
    *cnt = (int *)(m + (size_t)p * (sizeof **dsp + sizeof **typ));
    for (int i = 0; i < p; i++) {
        (*cnt)[i] = counts != NULL ? counts[i] : count;
        (*dsp)[i] = (MPI_Aint)(counts != NULL ? displs[i] : (long long)i * count) *
                    ext;
        (*typ)[i] = dt;
    }
    return MPI_SUCCESS;
}

/* Ialltoall and Ialltoallv (counts NULL: one count for every block). */
static int
ialltoall(const void *sbuf, int scount, const int scounts[],
          const int sdispls[], MPI_Datatype st, void *rbuf, int rcount,
          const int rcounts[], const int rdispls[], MPI_Datatype rt,
          MPI_Comm comm, MPI_Request *req, const char *fn)
{
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc, *sc = NULL, *rcs = NULL;
    MPI_Aint *sd = NULL, *rd = NULL;
    MPI_Datatype *stv = NULL, *rtv = NULL;

    NB_ENTER(comm, c, req, fn,
             inter_alltoall(sbuf, scount, scounts, sdispls, st, rbuf, rcount,
                            rcounts, rdispls, rt, c, req, fn));
    if ((rc = sched_check_type(rcount, rt)) == MPI_SUCCESS && rcounts != NULL)
        rc = coll_check_counts(rcounts, rdispls, c->size);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE &&
        (rc = sched_check_type(scount, st)) == MPI_SUCCESS && scounts != NULL)
        rc = coll_check_counts(scounts, sdispls, c->size);
    if (rc != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    rc = blocks_of(c->size, rcount, rcounts, rdispls, rt, &rcs, &rd, &rtv);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = blocks_of(c->size, scount, scounts, sdispls, st, &sc, &sd, &stv);
    if (rc == MPI_SUCCESS)
        rc = alltoall_build(s, c, sbuf, sc, sd, stv, rbuf, rcs, rd, rtv);
    free(sd);
    free(rd);
    return sched_go(s, rc, req, comm, fn);
}

#pragma weak MPI_Ialltoall = PMPI_Ialltoall
int
PMPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
               int rcount, MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return ialltoall(sbuf, scount, NULL, NULL, st, rbuf, rcount, NULL, NULL,
                     rt, comm, req, "MPI_Ialltoall");
}

#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
int
PMPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                MPI_Datatype st, void *rbuf, const int rcounts[],
                const int rdispls[], MPI_Datatype rt, MPI_Comm comm,
                MPI_Request *req)
{
    MPII_ENTER;
    return ialltoall(sbuf, 0, scounts, sdispls, st, rbuf, 0, rcounts,
                     rdispls, rt, comm, req, "MPI_Ialltoallv");
}

/* Checks the per-block types of an alltoallw side. */
static int
w_check(int p, const int counts[], const int displs[],
        const MPI_Datatype types[])
{
    int rc;

    if (types == NULL)
        return MPI_ERR_ARG;
    if ((rc = coll_check_counts(counts, displs, p)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < p; i++)
        if (mpii_type_get(types[i]) == NULL)
            return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

/* Byte displacements of alltoallw as MPI_Aint. */
static MPI_Aint *
w_displs(int p, const int displs[])
{
    MPI_Aint *d = malloc((size_t)p * sizeof *d);

    if (d != NULL)
        for (int i = 0; i < p; i++)
            d[i] = displs[i];
    return d;
}

/* Ialltoallw over an intercommunicator: one block per remote process. */
static int
inter_alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                const int rdispls[], const MPI_Datatype rtypes[],
                struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
    MPI_Aint *sd = NULL, *rd = NULL;
    int rc;

    rc = w_check(ic->size, rcounts, rdispls, rtypes);
    if (rc == MPI_SUCCESS)
        rc = w_check(ic->size, scounts, sdispls, stypes);
    if (rc == MPI_SUCCESS && ((sd = w_displs(ic->size, sdispls)) == NULL ||
                              (rd = w_displs(ic->size, rdispls)) == NULL))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        struct mpii_blocks snd = {
            .buf = sbuf, .counts = scounts, .bdispls = sd, .types = stypes};
        struct mpii_blocks rcv = {
            .buf = rbuf, .counts = rcounts, .bdispls = rd, .types = rtypes};

        rc = mpii_inter_iexchange(&snd, &rcv, ic, req, fn);
    } else
        rc = mpii_err(ic->handle, rc, fn);
    free(sd);
    free(rd);
    return rc;
}

#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
int
PMPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                const int rdispls[], const MPI_Datatype rtypes[],
                MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Ialltoallw";
    struct mpii_comm *c;
    struct mpii_sched *s;
    MPI_Aint *sd = NULL, *rd = NULL;
    int rc;

    NB_ENTER(comm, c, req, fn,
             inter_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                             rdispls, rtypes, c, req, fn));
    rc = w_check(c->size, rcounts, rdispls, rtypes);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = w_check(c->size, scounts, sdispls, stypes);
    if (rc != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    if ((rd = w_displs(c->size, rdispls)) == NULL ||
        (sbuf != MPI_IN_PLACE && (sd = w_displs(c->size, sdispls)) == NULL))
        rc = MPI_ERR_NO_MEM;
    else
        rc = alltoall_build(s, c, sbuf, scounts, sd, stypes, rbuf, rcounts,
                            rd, rtypes);
    free(sd);
    free(rd);
    return sched_go(s, rc, req, comm, fn);
}

#pragma weak MPI_Alltoallw = PMPI_Alltoallw
int
PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
               const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
               const int rdispls[], const MPI_Datatype rtypes[],
               MPI_Comm comm)
{
    MPII_ENTER;
    MPI_Request r;
    int rc;

    if (mpii_comm_inter(comm)) /* coll_inter.c */
        return mpii_inter_alltoallw(sbuf, scounts, sdispls, stypes, rbuf,
                                    rcounts, rdispls, rtypes, comm);
    rc = PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                         rdispls, rtypes, comm, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_wait(&r, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, "MPI_Alltoallw");
}

/* --- reductions --------------------------------------------------------- */

/* The arguments every reduction shares. */
static int
red_args(int count, MPI_Datatype dt, MPI_Op op)
{
    int rc = sched_check_type(count, dt);

    if (rc == MPI_SUCCESS && mpii_op_commutative(op) < 0)
        rc = MPI_ERR_OP;
    return rc;
}

#pragma weak MPI_Ireduce = PMPI_Ireduce
int
PMPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
             MPI_Op op, int root, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Ireduce";
    struct mpii_comm *c;
    struct mpii_sched *s;
    const void *mine;
    int rc;

    NB_ENTER(comm, c, req, fn,
             mpii_inter_ireduce(sbuf, rbuf, count, dt, op, root, c, req, fn));
    if ((rc = red_args(count, dt, op)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if (root < 0 || root >= c->size)
        return mpii_err(comm, MPI_ERR_ROOT, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    mine = sbuf == MPI_IN_PLACE && c->rank == root ? rbuf : sbuf;
    rc = sched_reduce(s, c, mine, rbuf, count, dt, op, root);
    return sched_go(s, rc, req, comm, fn);
}

/* Allreduce by recursive doubling (p a power of two): log2 p rounds,
 * each an exchange with rank ^ mask and a reduction.  The partial result
 * always covers a run of consecutive ranks, the lower run on the left,
 * so the operand order is rank order (non-commutative operations too). */
static int
add_allreduce_doubling(struct mpii_sched *s, struct mpii_comm *c,
                       const void *sbuf, void *rbuf, int count,
                       MPI_Datatype dt, MPI_Op op)
{
    void *tmp = sched_tmp(s, count, dt);
    int mask;

    if (tmp == NULL)
        return MPI_ERR_NO_MEM;
    if (sbuf != MPI_IN_PLACE)
        sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    for (mask = 1; mask < c->size; mask <<= 1) {
        int partner = c->rank ^ mask;

        sched_round(s);
        sched_send(s, rbuf, count, dt, partner);
        sched_recv(s, tmp, count, dt, partner);
        if (partner < c->rank)
            sched_op(s, tmp, rbuf, count, dt, op); /* theirs op mine */
        else {
            sched_op(s, rbuf, tmp, count, dt, op); /* mine op theirs */
            sched_copy(s, tmp, count, dt, rbuf, count, dt);
        }
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Iallreduce = PMPI_Iallreduce
int
PMPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Iallreduce";
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc;

    NB_ENTER(comm, c, req, fn,
             mpii_inter_iallreduce(sbuf, rbuf, count, dt, op, c, req, fn));
    if ((rc = red_args(count, dt, op)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    if (c->size > 1 && (c->size & (c->size - 1)) == 0)
        rc = add_allreduce_doubling(s, c, sbuf, rbuf, count, dt, op);
    else {
        rc = sched_reduce(s, c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count,
                        dt, op, 0);
        sched_bcast(s, c, rbuf, count, dt, 0);
    }
    return sched_go(s, rc, req, comm, fn);
}

/* Ireduce_scatter(_block): counts[i] elements to rank i. */
static int
ireduce_scatter(const void *sbuf, void *rbuf, const int counts[],
                MPI_Datatype dt, MPI_Op op, struct mpii_comm *c,
                struct mpii_sched *s)
{
    int p = c->size, i, total = 0, *displs;
    void *full = NULL;
    const void *mine;
    int rc;

    if ((displs = malloc((size_t)p * sizeof *displs)) == NULL)
        return MPI_ERR_NO_MEM;
    for (i = 0; i < p; i++) {
        displs[i] = total;
        if (counts[i] > INT_MAX - total) {
            free(displs);
            return MPI_ERR_COUNT;
        }
        total += counts[i];
    }
    mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (c->rank == 0 && (full = sched_tmp(s, total, dt)) == NULL) {
        free(displs);
        return MPI_ERR_NO_MEM;
    }
    rc = sched_reduce(s, c, mine, full, total, dt, op, 0);
    if (rc == MPI_SUCCESS)
        sched_scatterv(s, c, full, counts, displs, dt, rbuf, counts[c->rank],
                     dt, 0);
    free(displs);
    return rc;
}

#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
int
PMPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                     MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                     MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Ireduce_scatter";
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc;

    NB_ENTER(comm, c, req, fn,
             rcounts == NULL ? mpii_err(comm, MPI_ERR_ARG, fn)
                             : inter_reduce_scatter(sbuf, rbuf, rcounts, 0,
                                                    dt, op, c, req, fn));
    if ((rc = red_args(0, dt, op)) != MPI_SUCCESS ||
        /* no displacements here: only the counts are checked */
        (rc = coll_check_counts(rcounts, rcounts, c->size)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    rc = ireduce_scatter(sbuf, rbuf, rcounts, dt, op, c, s);
    return sched_go(s, rc, req, comm, fn);
}

#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
int
PMPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                           MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                           MPI_Request *req)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Ireduce_scatter_block";
    struct mpii_comm *c;
    struct mpii_sched *s;
    int rc, *counts;

    NB_ENTER(comm, c, req, fn,
             inter_reduce_scatter(sbuf, rbuf, NULL, rcount, dt, op, c, req,
                                  fn));
    if ((rc = red_args(rcount, dt, op)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    if ((counts = malloc((size_t)c->size * sizeof *counts)) == NULL)
        return sched_go(s, MPI_ERR_NO_MEM, req, comm, fn);
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    rc = ireduce_scatter(sbuf, rbuf, counts, dt, op, c, s);
    free(counts);
    return sched_go(s, rc, req, comm, fn);
}

/* Iscan (exclusive 0) and Iexscan (1): a chain along the ranks. */
static int
iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
      MPI_Comm comm, MPI_Request *req, int exclusive, const char *fn)
{
    struct mpii_comm *c;
    struct mpii_sched *s;
    const void *mine;
    void *prefix = NULL, *acc;
    int rc, r;

    NB_ENTER(comm, c, req, fn,
             mpii_err(comm, MPI_ERR_COMM, fn));
    if ((rc = red_args(count, dt, op)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((s = sched_new(c)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    r = c->rank;
    mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if ((acc = sched_tmp(s, count, dt)) == NULL ||
        (r > 0 && (prefix = sched_tmp(s, count, dt)) == NULL))
        return sched_go(s, MPI_ERR_NO_MEM, req, comm, fn);
    /* acc = prefix(0 .. r - 1) op mine: what goes on to r + 1. */
    if (r > 0)
        sched_recv(s, prefix, count, dt, r - 1);
    sched_copy(s, mine, count, dt, acc, count, dt);
    if (r > 0)
        sched_op(s, prefix, acc, count, dt, op);
    if (!exclusive)
        sched_copy(s, acc, count, dt, rbuf, count, dt);
    else if (r > 0)
        sched_copy(s, prefix, count, dt, rbuf, count, dt);
    if (r + 1 < c->size) {
        sched_round(s);
        sched_send(s, acc, count, dt, r + 1);
    }
    return sched_go(s, MPI_SUCCESS, req, comm, fn);
}

#pragma weak MPI_Iscan = PMPI_Iscan
int
PMPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
           MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return iscan(sbuf, rbuf, count, dt, op, comm, req, 0, "MPI_Iscan");
}

#pragma weak MPI_Iexscan = PMPI_Iexscan
int
PMPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
             MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return iscan(sbuf, rbuf, count, dt, op, comm, req, 1, "MPI_Iexscan");
}

#pragma weak MPI_Reduce_local = PMPI_Reduce_local
int
PMPI_Reduce_local(const void *in, void *inout, int count, MPI_Datatype dt,
                  MPI_Op op)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Reduce_local";
    int rc;

    if ((rc = red_args(count, dt, op)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, fn);
    if (count > 0 && (in == NULL || inout == NULL))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, fn);
    rc = count == 0 ? MPI_SUCCESS : mpii_op_apply(op, in, inout, count, dt);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Op_commutative = PMPI_Op_commutative
int
PMPI_Op_commutative(MPI_Op op, int *commute)
{
    MPII_ENTER;
    int c = mpii_op_commutative(op);

    if (commute == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_commutative");
    if (c < 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative");
    /* REPLACE and NO_OP are commutative to the standard (they are only
     * ever used in one-sided calls); mpii_op_commutative says no to keep
     * the reductions' operand order. */
    *commute = c || op == MPI_REPLACE || op == MPI_NO_OP;
    return MPI_SUCCESS;
}
