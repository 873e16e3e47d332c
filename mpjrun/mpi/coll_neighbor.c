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

static int
nb_round(MPI_Comm comm, const struct mpii_blocks *snd,
         const struct mpii_blocks *rcv, int tag, const char *fn)
{
    struct mpii_comm *c;
    int *in = NULL, *out = NULL, nin = 0, nout = 0, rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
        return mpii_err(comm, MPI_ERR_BUFFER, fn);
    if ((rc = mpii_topo_neighbors(c, &in, &nin, &out, &nout)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    rc = mpii_blocks_round(c, in, nin, rcv, out, nout, snd, tag);
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
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype, .same = 1};
    struct mpii_blocks r = {
        .buf = recvbuf, .count = recvcount, .type = recvtype};

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
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype, .same = 1};
    struct mpii_blocks r = {.buf = recvbuf,
                            .counts = recvcounts,
                            .displs = displs,
                            .type = recvtype};

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
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype};
    struct mpii_blocks r = {
        .buf = recvbuf, .count = recvcount, .type = recvtype};

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
    struct mpii_blocks s = {.buf = sendbuf,
                            .counts = sendcounts,
                            .displs = sdispls,
                            .type = sendtype};
    struct mpii_blocks r = {.buf = recvbuf,
                            .counts = recvcounts,
                            .displs = rdispls,
                            .type = recvtype};

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
    struct mpii_blocks s = {.buf = sendbuf,
                            .counts = sendcounts,
                            .bdispls = sdispls,
                            .types = sendtypes};
    struct mpii_blocks r = {.buf = recvbuf,
                            .counts = recvcounts,
                            .bdispls = rdispls,
                            .types = recvtypes};

    if (sendcounts == NULL || sdispls == NULL || sendtypes == NULL ||
        recvcounts == NULL || rdispls == NULL || recvtypes == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    return nb_round(comm, &s, &r, TAG_NB_ALLTOALL, fn);
}
