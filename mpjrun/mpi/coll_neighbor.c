/*
 * coll_neighbor.c: the neighbour collectives (MPI 3.1 7.6) over a
 * communicator with a topology (topo.c gives the lists).  Each is one
 * round: a receive posted from every in-neighbour into its block, a send
 * to every out-neighbour from its block, then a wait for all, on the
 * communicator's collective context with a tag of their own.  A
 * Cartesian process's neighbours are, per dimension, the source then the
 * destination of Cart_shift(d, 1) (MPI_PROC_NULL off a non-periodic edge:
 * that block is left alone).  A neighbour named twice gets two messages,
 * matched in order (the transport does not overtake).  That happens on a
 * periodic dimension of 1 or 2 processes, where both neighbours are one
 * process: what goes in the + direction must land in the receiver's -
 * block and the other way round (MPI 4.0 8.6 says so where 3.1 was
 * silent; MPICH's coll/ring_neighbor_alltoall checks it).  Receives are
 * posted -, + for each dimension, so the sends go +, - (pairs_swapped):
 * the first message from a process fills the first block that waits for
 * it.  Nothing here depends on arrival order, so replicas need no
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

/* How a call runs: blocking (on the collective context, with tag) or as
 * a schedule whose request goes to *req. */
struct how {
    int tag;
    int nonblocking;
    MPI_Request *req;
};

/* A schedule of one round: a receive from every in-neighbour and a send
 * to every out-neighbour (none to or from MPI_PROC_NULL). */
static int
sched_round_of(struct mpii_comm *c, const int *in, int nin,
               const struct mpii_blocks *rcv, const int *out, int nout,
               const struct mpii_blocks *snd, MPI_Request *req,
               const char *fn)
{
    struct mpii_sched *s = sched_new(c);
    int i, rc = MPI_SUCCESS, count;
    MPI_Datatype type;
    char *addr;

    for (i = 0; s != NULL && rc == MPI_SUCCESS && i < nin; i++)
        if ((rc = mpii_blocks_at(rcv, i, &addr, &count, &type)) ==
                MPI_SUCCESS &&
            in[i] != MPI_PROC_NULL)
            sched_recv(s, addr, count, type, in[i]);
    for (i = 0; s != NULL && rc == MPI_SUCCESS && i < nout; i++) {
        int j = mpii_blocks_nth(snd, i, nout);

        if ((rc = mpii_blocks_at(snd, j, &addr, &count, &type)) ==
                MPI_SUCCESS &&
            out[j] != MPI_PROC_NULL)
            sched_send(s, addr, count, type, out[j]);
    }
    return sched_go(s, rc, req, c->handle, fn);
}

static int
nb_round(MPI_Comm comm, const struct mpii_blocks *snd,
         const struct mpii_blocks *rcv, const struct how *how, const char *fn)
{
    struct mpii_comm *c;
    struct mpii_blocks sent = *snd;
    int *in = NULL, *out = NULL, nin = 0, nout = 0, rc, kind;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (how->nonblocking && how->req == NULL)
        return mpii_err(comm, MPI_ERR_REQUEST, fn);
    if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
        return mpii_err(comm, MPI_ERR_BUFFER, fn);
    if ((rc = mpii_topo_neighbors(c, &in, &nin, &out, &nout)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    sent.pairs_swapped =
        PMPI_Topo_test(comm, &kind) == MPI_SUCCESS && kind == MPI_CART;
    if (how->nonblocking)
        rc = sched_round_of(c, in, nin, rcv, out, nout, &sent, how->req, fn);
    else if ((rc = mpii_blocks_round(c, in, nin, rcv, out, nout, &sent,
                                     how->tag)) != MPI_SUCCESS)
        rc = mpii_err(comm, rc, fn);
    free(in);
    free(out);
    return rc;
}

/* --- each collective, blocking or not ---------------------------------- */

static int
allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
          const struct how *how, const char *fn)
{
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype, .same = 1};
    struct mpii_blocks r = {
        .buf = recvbuf, .count = recvcount, .type = recvtype};

    return nb_round(comm, &s, &r, how, fn);
}

static int
allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int displs[],
           MPI_Datatype recvtype, MPI_Comm comm, const struct how *how,
           const char *fn)
{
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype, .same = 1};
    struct mpii_blocks r = {.buf = recvbuf,
                            .counts = recvcounts,
                            .displs = displs,
                            .type = recvtype};

    if (recvcounts == NULL || displs == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    return nb_round(comm, &s, &r, how, fn);
}

static int
alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
         void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
         const struct how *how, const char *fn)
{
    struct mpii_blocks s = {
        .buf = sendbuf, .count = sendcount, .type = sendtype};
    struct mpii_blocks r = {
        .buf = recvbuf, .count = recvcount, .type = recvtype};

    return nb_round(comm, &s, &r, how, fn);
}

static int
alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
          const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
          const struct how *how, const char *fn)
{
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
    return nb_round(comm, &s, &r, how, fn);
}

static int
alltoallw(const void *sendbuf, const int sendcounts[],
          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
          void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
          const MPI_Datatype recvtypes[], MPI_Comm comm,
          const struct how *how, const char *fn)
{
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
    return nb_round(comm, &s, &r, how, fn);
}

/* --- the calls ---------------------------------------------------------- */

#define BLOCKING(t) (&(struct how){.tag = (t)})
#define NONBLOCKING(r) (&(struct how){.nonblocking = 1, .req = (r)})

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
int
PMPI_Neighbor_allgather(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    MPII_ENTER;
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm, BLOCKING(TAG_NB_ALLGATHER),
                     "MPI_Neighbor_allgather");
}

#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
int
PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *req)
{
    MPII_ENTER;
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm, NONBLOCKING(req),
                     "MPI_Ineighbor_allgather");
}

#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
int
PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    MPII_ENTER;
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                      displs, recvtype, comm, BLOCKING(TAG_NB_ALLGATHER),
                      "MPI_Neighbor_allgatherv");
}

#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
int
PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[],
                          MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *req)
{
    MPII_ENTER;
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                      displs, recvtype, comm, NONBLOCKING(req),
                      "MPI_Ineighbor_allgatherv");
}

#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
int
PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    MPII_ENTER;
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, BLOCKING(TAG_NB_ALLTOALL),
                    "MPI_Neighbor_alltoall");
}

#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
int
PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, NONBLOCKING(req),
                    "MPI_Ineighbor_alltoall");
}

#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
int
PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm)
{
    MPII_ENTER;
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm,
                     BLOCKING(TAG_NB_ALLTOALL), "MPI_Neighbor_alltoallv");
}

#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
int
PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                         const int sdispls[], MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *req)
{
    MPII_ENTER;
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm, NONBLOCKING(req),
                     "MPI_Ineighbor_alltoallv");
}

#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
int
PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                        const MPI_Aint sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf,
                        const int recvcounts[], const MPI_Aint rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    MPII_ENTER;
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm,
                     BLOCKING(TAG_NB_ALLTOALL), "MPI_Neighbor_alltoallw");
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
    MPII_ENTER;
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm, NONBLOCKING(req),
                     "MPI_Ineighbor_alltoallw");
}
