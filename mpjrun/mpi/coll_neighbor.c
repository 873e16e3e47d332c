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
 * The nonblocking forms (MPI_Ineighbor_*) write the same round as a
 * schedule (coll_sched.h): it runs on the communicator's nonblocking
 * context, tagged with the collective's number, like every other
 * nonblocking collective.
 */
#include <stdlib.h>

#include "coll_sched.h"
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

/* The nonblocking round: a schedule of one round, a receive from every
 * in-neighbour and a send to every out-neighbour (none to or from
 * MPI_PROC_NULL). */
static int
nb_iround(MPI_Comm comm, const struct mpii_blocks *snd,
          const struct mpii_blocks *rcv, MPI_Request *req, const char *fn)
{
    struct mpii_comm *c;
    struct mpii_sched *s;
    int *in = NULL, *out = NULL, nin = 0, nout = 0, rc, i, count;
    MPI_Datatype type;
    char *addr;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, fn);
    if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
        return mpii_err(comm, MPI_ERR_BUFFER, fn);
    if ((rc = mpii_topo_neighbors(c, &in, &nin, &out, &nout)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    s = sched_new(c);
    for (i = 0; s != NULL && rc == MPI_SUCCESS && i < nin; i++)
        if ((rc = mpii_blocks_at(rcv, i, &addr, &count, &type)) ==
                MPI_SUCCESS &&
            in[i] != MPI_PROC_NULL)
            sched_recv(s, addr, count, type, in[i]);
    for (i = 0; s != NULL && rc == MPI_SUCCESS && i < nout; i++)
        if ((rc = mpii_blocks_at(snd, i, &addr, &count, &type)) ==
                MPI_SUCCESS &&
            out[i] != MPI_PROC_NULL)
            sched_send(s, addr, count, type, out[i]);
    free(in);
    free(out);
    return sched_go(s, rc, req, comm, fn);
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

/* --- the nonblocking forms -------------------------------------------- */

#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
int
PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *req)
{
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype, .same = 1};
    struct mpii_blocks r = {
        .buf = recvbuf, .count = recvcount, .type = recvtype};

    return nb_iround(comm, &s, &r, req, "MPI_Ineighbor_allgather");
}

#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
int
PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[],
                          MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *req)
{
    static const char fn[] = "MPI_Ineighbor_allgatherv";
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype, .same = 1};
    struct mpii_blocks r = {.buf = recvbuf,
                            .counts = recvcounts,
                            .displs = displs,
                            .type = recvtype};

    if (recvcounts == NULL || displs == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    return nb_iround(comm, &s, &r, req, fn);
}

#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
int
PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype};
    struct mpii_blocks r = {
        .buf = recvbuf, .count = recvcount, .type = recvtype};

    return nb_iround(comm, &s, &r, req, "MPI_Ineighbor_alltoall");
}

#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
int
PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                         const int sdispls[], MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *req)
{
    static const char fn[] = "MPI_Ineighbor_alltoallv";
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
    return nb_iround(comm, &s, &r, req, fn);
}

#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
int
PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                         const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf,
                         const int recvcounts[], const MPI_Aint rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm,
                         MPI_Request *req)
{
    static const char fn[] = "MPI_Ineighbor_alltoallw";
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
    return nb_iround(comm, &s, &r, req, fn);
}
