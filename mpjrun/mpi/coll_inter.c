/*
 * coll_inter.c: the intercommunicator forms of the rooted and all-to-all
 * collectives (MPI 3.1 5.2.2): Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v, w), Reduce_scatter(_block).  (Barrier, Bcast, Reduce and
 * Allreduce are in intercomm.c.)  Data always crosses between the two
 * groups: with root MPI_ROOT the root talks to every process of the other
 * group directly, and the all-to-all forms are one round of messages
 * with every remote process (coll_round.c), so every receive names its
 * source and replicas need no agreement.  Reduce_scatter reduces within
 * each group to its leader, the leaders swap the vectors, and each
 * leader scatters the other group's result in its own group.
 */
#include <stdlib.h>

#include "mpii.h"

enum {
    TAG_IC_GATHER = 5,
    TAG_IC_SCATTER,
    TAG_IC_EXCHANGE,
    TAG_IC_REDUCE_SCATTER,
};

/* The intercommunicator behind comm, or NULL. */
static struct mpii_comm *
inter(MPI_Comm comm)
{
    struct mpii_comm *c = mpii_comm_get(comm);

    return c != NULL && c->inter ? c : NULL;
}

int
mpii_inter_gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                  const int rcounts[], int rcount, const int displs[],
                  MPI_Datatype rt, int root, MPI_Comm comm, const char *fn)
{
    struct mpii_comm *ic = inter(comm);
    struct mpii_blocks snd = {
        .buf = sbuf, .count = scount, .type = st, .same = 1};
    struct mpii_blocks rcv = {.buf = rbuf,
                              .counts = rcounts,
                              .count = rcount,
                              .displs = displs,
                              .type = rt};
    int rc = MPI_SUCCESS;

    if (ic == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        rc = mpii_blocks_round(ic, NULL, ic->size, &rcv, NULL, 0, &snd,
                               TAG_IC_GATHER);
    else if (root < 0 || root >= ic->size)
        rc = MPI_ERR_ROOT;
    else if (sbuf == MPI_IN_PLACE)
        rc = MPI_ERR_BUFFER;
    else
        rc =
            mpii_blocks_round(ic, NULL, 0, &rcv, &root, 1, &snd, TAG_IC_GATHER);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

int
mpii_inter_scatter(const void *sbuf, const int scounts[], int scount,
                   const int displs[], MPI_Datatype st, void *rbuf, int rcount,
                   MPI_Datatype rt, int root, MPI_Comm comm, const char *fn)
{
    struct mpii_comm *ic = inter(comm);
    struct mpii_blocks snd = {.buf = sbuf,
                              .counts = scounts,
                              .count = scount,
                              .displs = displs,
                              .type = st};
    struct mpii_blocks rcv = {.buf = rbuf, .count = rcount, .type = rt};
    int rc = MPI_SUCCESS;

    if (ic == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        rc = mpii_blocks_round(ic, NULL, 0, &rcv, NULL, ic->size, &snd,
                               TAG_IC_SCATTER);
    else if (root < 0 || root >= ic->size)
        rc = MPI_ERR_ROOT;
    else if (rbuf == MPI_IN_PLACE)
        rc = MPI_ERR_BUFFER;
    else
        rc = mpii_blocks_round(ic, &root, 1, &rcv, NULL, 0, &snd,
                               TAG_IC_SCATTER);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

int
mpii_inter_exchange(const struct mpii_blocks *snd,
                    const struct mpii_blocks *rcv, MPI_Comm comm,
                    const char *fn)
{
    struct mpii_comm *ic = inter(comm);
    int rc;

    if (ic == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
        return mpii_err(comm, MPI_ERR_BUFFER, fn);
    rc = mpii_blocks_round(ic, NULL, ic->size, rcv, NULL, ic->size, snd,
                           TAG_IC_EXCHANGE);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

/* The leaders swap n elements: ours (mine) for theirs. */
static int
leaders_swap(struct mpii_comm *ic, const void *mine, void *theirs, int n,
             MPI_Datatype dt)
{
    struct mpii_blocks snd = {.buf = mine, .count = n, .type = dt};
    struct mpii_blocks rcv = {.buf = theirs, .count = n, .type = dt};
    int zero = 0;

    return mpii_blocks_round(ic, &zero, 1, &rcv, &zero, 1, &snd,
                             TAG_IC_REDUCE_SCATTER);
}

int
mpii_inter_reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                          int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          const char *fn)
{
    struct mpii_comm *ic = inter(comm), *lc;
    void *mine = NULL, *theirs = NULL, *mbase = NULL, *tbase = NULL;
    int *counts = NULL, *displs = NULL, i, n = 0, rc = MPI_SUCCESS;

    if (ic == NULL || (lc = mpii_comm_get(ic->lcomm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (sbuf == MPI_IN_PLACE)
        return mpii_err(comm, MPI_ERR_BUFFER, fn);
    if (rcounts == NULL && rcount < 0)
        return mpii_err(comm, MPI_ERR_COUNT, fn);
    counts = malloc((size_t)lc->size * sizeof *counts);
    displs = malloc((size_t)lc->size * sizeof *displs);
    if (counts == NULL || displs == NULL)
        rc = MPI_ERR_NO_MEM;
    for (i = 0; rc == MPI_SUCCESS && i < lc->size; i++) {
        counts[i] = rcounts != NULL ? rcounts[i] : rcount;
        if (counts[i] < 0 || n > 0x7fffffff - counts[i])
            rc = MPI_ERR_COUNT;
        else {
            displs[i] = n;
            n += counts[i];
        }
    }
    if (rc == MPI_SUCCESS && lc->rank == 0 &&
        ((mine = mpii_type_buf(n, dt, &mbase)) == NULL ||
         (theirs = mpii_type_buf(n, dt, &tbase)) == NULL))
        rc = mpii_type_get(dt) != NULL ? MPI_ERR_NO_MEM : MPI_ERR_TYPE;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Reduce(sbuf, mine, n, dt, op, 0, lc->handle);
    if (rc == MPI_SUCCESS && lc->rank == 0)
        rc = leaders_swap(ic, mine, theirs, n, dt);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Scatterv(theirs, counts, displs, dt, rbuf, counts[lc->rank],
                           dt, 0, lc->handle);
    free(mbase);
    free(tbase);
    free(counts);
    free(displs);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}
