/*
 * pmpi_wrap: the profiling interface.  This program is its own tool: it
 * defines MPI_Init, MPI_Send, MPI_Recv, MPI_Bcast, MPI_Allreduce,
 * MPI_Comm_rank and MPI_Finalize, each counting its calls and calling
 * the PMPI_ name.  Built with p2pcc against the static library: the
 * program's definitions must win over the library's weak ones, and the
 * library's own internals must not call the wrappers (an Allreduce is
 * one call, not a flurry of wrapped sends).
 */
#include <stdio.h>

#include <mpi.h>

static int n_init, n_send, n_recv, n_bcast, n_allreduce, n_rank, n_fin;

int
MPI_Init(int *argc, char ***argv)
{
    n_init++;
    return PMPI_Init(argc, argv);
}

int
MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
         MPI_Comm comm)
{
    n_send++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int
MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
         MPI_Comm comm, MPI_Status *status)
{
    n_recv++;
    return PMPI_Recv(buf, count, dt, source, tag, comm, status);
}

int
MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    n_bcast++;
    return PMPI_Bcast(buf, count, dt, root, comm);
}

int
MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
              MPI_Op op, MPI_Comm comm)
{
    n_allreduce++;
    return PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
}

int
MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    n_rank++;
    return PMPI_Comm_rank(comm, rank);
}

int
MPI_Finalize(void)
{
    n_fin++;
    return PMPI_Finalize();
}

int
main(int argc, char **argv)
{
    int rank, size, v = 0, sum = 0, bad = 0, total = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        if (rank == 0)
            MPI_Send(&rank, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    v = 7;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (n_init != 1 || n_rank != 1 || n_bcast != 1 || n_allreduce != 1 ||
        sum != size * (size - 1) / 2 || v != 7)
        bad++;
    if (size > 1 && rank == 0 && (n_send != 1 || n_recv != 0))
        bad++;
    if (size > 1 && rank == 1 && (n_send != 0 || n_recv != 1))
        bad++;
    if (bad)
        fprintf(stderr,
                "rank %d: init %d rank %d send %d recv %d bcast %d "
                "allreduce %d\n",
                rank, n_init, n_rank, n_send, n_recv, n_bcast, n_allreduce);
    PMPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total == 0 && rank == 0)
        printf("ok pmpi_wrap\n");
    fflush(stdout);
    MPI_Finalize();
    return total != 0 || n_fin != 1;
}
