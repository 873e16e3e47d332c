/*
 * coll_neighbor.c: the neighbour collectives (MPI 3.1 7.6) over a
 * communicator with a topology (topo.c gives the lists).  Each is one
 * round: a receive posted from every in-neighbour into its block, a send
 * to every out-neighbour from its block, then a wait for all, on the
 * communicator's collective context with a tag of their own.  A
 * Cartesian process's neighbours are, per dimension, the source then the
 * destination of Cart_shift(d, 1) (MPI_PROC_NULL off a non-periodic edge:
 * that block is left alone); a neighbour named twice gets two messages,
 * matched in list order (the transport does not overtake), as Open MPI
 * does.  Nothing here depends on arrival order, so replicas need no
 * agreement.
 *
 * The nonblocking forms (MPI_Ineighbor_*) are not here: they need the
 * schedule engine of the nonblocking collectives.
 */
#include <stdlib.h>

#include "mpii.h"

enum {
    TAG_NB_ALLGATHER = 48,
    TAG_NB_ALLTOALL,
};

/* One round over the neighbours: block i of the receive side from
 * in[i], block j of the send side to out[j].  The blocks are given by
 * the callers through addr/count/type tables. */
struct nb_side {
    const void *buf;
    const int *counts;      /* NULL: count for every block */
    int count;
    const int *displs;      /* elements; NULL: block i at i * count */
    const MPI_Aint *bdispls; /* bytes (alltoallw) */
    const MPI_Datatype *types; /* NULL: type for every block */
    MPI_Datatype type;
    int same; /* every block is the start of buf (allgather's send) */
};

static int
side_block(const struct nb_side *s, int i, char **addr, int *count,
           MPI_Datatype *type)
{
    const struct mpii_type *t;
    MPI_Aint ext;

    *type = s->types != NULL ? s->types[i] : s->type;
    *count = s->counts != NULL ? s->counts[i] : s->count;
    if (*count < 0)
        return MPI_ERR_COUNT;
    if ((t = mpii_type_get(*type)) == NULL)
        return MPI_ERR_TYPE;
    ext = mpii_type_extent(t);
    if (s->same)
        *addr = (char *)s->buf;
    else if (s->bdispls != NULL)
        *addr = (char *)s->buf + s->bdispls[i];
    else if (s->displs != NULL)
        *addr = (char *)s->buf + (long long)s->displs[i] * ext;
    else
        *addr = (char *)s->buf + (long long)i * *count * ext;
    return MPI_SUCCESS;
}

static int
nb_round(MPI_Comm comm, const struct nb_side *snd, const struct nb_side *rcv,
         int tag, const char *fn)
{
    struct mpii_comm *c;
    MPI_Request *reqs;
    int *in = NULL, *out = NULL, nin = 0, nout = 0, i, n = 0, rc, rc2;
    int count;
    MPI_Datatype type;
    char *addr;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
        return mpii_err(comm, MPI_ERR_BUFFER, fn);
    if ((rc = mpii_topo_neighbors(c, &in, &nin, &out, &nout)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((reqs = malloc((size_t)(nin + nout + 1) * sizeof *reqs)) == NULL) {
        free(in);
        free(out);
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    }
    for (i = 0; i < nin && rc == MPI_SUCCESS; i++) {
        rc = side_block(rcv, i, &addr, &count, &type);
        if (rc == MPI_SUCCESS)
            rc = mpii_irecv(addr, count, type, in[i], tag, c,
                            c->ctx + MPII_CTX_COLL, &reqs[n]);
        if (rc == MPI_SUCCESS)
            n++;
    }
    for (i = 0; i < nout && rc == MPI_SUCCESS; i++) {
        rc = side_block(snd, i, &addr, &count, &type);
        if (rc == MPI_SUCCESS)
            rc = mpii_isend(addr, count, type, out[i], tag, c,
                            c->ctx + MPII_CTX_COLL, MPII_SEND_STANDARD,
                            &reqs[n]);
        if (rc == MPI_SUCCESS)
            n++;
    }
    /* Whatever was started is completed, error or not. */
    rc2 = n > 0 ? mpii_waitall(n, reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = rc2;
    free(reqs);
    free(in);
    free(out);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
int
PMPI_Neighbor_allgather(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    struct nb_side s = {.buf = sendbuf, .count = sendcount, .type = sendtype,
                        .same = 1};
    struct nb_side r = {.buf = recvbuf, .count = recvcount, .type = recvtype};

    return nb_round(comm, &s, &r, TAG_NB_ALLGATHER, "MPI_Neighbor_allgather");
}

#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
int
PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_allgatherv";
    struct nb_side s = {.buf = sendbuf, .count = sendcount, .type = sendtype,
                        .same = 1};
    struct nb_side r = {.buf = recvbuf, .counts = recvcounts,
                        .displs = displs, .type = recvtype};

    if (recvcounts == NULL || displs == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    return nb_round(comm, &s, &r, TAG_NB_ALLGATHER, fn);
}

#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
int
PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    struct nb_side s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    struct nb_side r = {.buf = recvbuf, .count = recvcount, .type = recvtype};

    return nb_round(comm, &s, &r, TAG_NB_ALLTOALL, "MPI_Neighbor_alltoall");
}

#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
int
PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoallv";
    struct nb_side s = {.buf = sendbuf, .counts = sendcounts,
                        .displs = sdispls, .type = sendtype};
    struct nb_side r = {.buf = recvbuf, .counts = recvcounts,
                        .displs = rdispls, .type = recvtype};

    if (sendcounts == NULL || sdispls == NULL || recvcounts == NULL ||
        rdispls == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    return nb_round(comm, &s, &r, TAG_NB_ALLTOALL, fn);
}

#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
int
PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                        const MPI_Aint sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf,
                        const int recvcounts[], const MPI_Aint rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoallw";
    struct nb_side s = {.buf = sendbuf, .counts = sendcounts,
                        .bdispls = sdispls, .types = sendtypes};
    struct nb_side r = {.buf = recvbuf, .counts = recvcounts,
                        .bdispls = rdispls, .types = recvtypes};

    if (sendcounts == NULL || sdispls == NULL || sendtypes == NULL ||
        recvcounts == NULL || rdispls == NULL || recvtypes == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    return nb_round(comm, &s, &r, TAG_NB_ALLTOALL, fn);
}
