/*
 * Process management (MPI 3.1 chapter 10), as far as a p2pmpi job has
 * it.  A job's processes are the ones p2prun reserved and placed, each
 * rank with its replicas on hosts of their own: none was started by
 * MPI_Comm_spawn, so every process's parent is MPI_COMM_NULL, and a
 * running job does not grow, so MPI_Comm_spawn and
 * MPI_Comm_spawn_multiple fail with MPI_ERR_SPAWN (the standard's error
 * for processes that cannot be started; through the communicator's
 * error handler, every errcode MPI_ERR_SPAWN, no intercommunicator).
 * MPI_Comm_disconnect works on any communicator: it waits until every
 * member has come (what was sent on it before is delivered) and frees
 * it.
 */
#include "mpii.h"

#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
int
PMPI_Comm_get_parent(MPI_Comm *parent)
{
    MPII_ENTER;
    MPII_CHECK_INIT("MPI_Comm_get_parent");
    if (parent == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_get_parent");
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect
int
PMPI_Comm_disconnect(MPI_Comm *comm)
{
    MPII_ENTER;
    int rc;

    MPII_CHECK_INIT("MPI_Comm_disconnect");
    if (comm == NULL || *comm == MPI_COMM_NULL ||
        mpii_comm_get(*comm) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_disconnect");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpii_err(*comm, MPI_ERR_COMM, "MPI_Comm_disconnect");
    if ((rc = PMPI_Barrier(*comm)) != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_free(comm);
}

/* Spawning fails alike on every member of comm: the root's errcodes
 * (maxprocs of them) say MPI_ERR_SPAWN. */
static int
no_spawn(MPI_Comm comm, int root, int maxprocs, MPI_Comm *intercomm,
         int errcodes[], const char *fn)
{
    struct mpii_comm *c;
    int i;

    if ((c = mpii_comm_get(comm)) == NULL || c->inter)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (root < 0 || root >= c->size)
        return mpii_err(comm, MPI_ERR_ROOT, fn);
    if (intercomm == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *intercomm = MPI_COMM_NULL;
    if (c->rank == root && errcodes != MPI_ERRCODES_IGNORE)
        for (i = 0; i < maxprocs; i++)
            errcodes[i] = MPI_ERR_SPAWN;
    return mpii_err(comm, MPI_ERR_SPAWN, fn);
}

#pragma weak MPI_Comm_spawn = PMPI_Comm_spawn
int
PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs,
                MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm,
                int array_of_errcodes[])
{
    MPII_ENTER;
    (void)command;
    (void)argv;
    (void)info;
    MPII_CHECK_INIT("MPI_Comm_spawn");
    return no_spawn(comm, root, maxprocs, intercomm, array_of_errcodes,
                    "MPI_Comm_spawn");
}

#pragma weak MPI_Comm_spawn_multiple = PMPI_Comm_spawn_multiple
int
PMPI_Comm_spawn_multiple(int count, char *array_of_commands[],
                         char **array_of_argv[], const int array_of_maxprocs[],
                         const MPI_Info array_of_info[], int root,
                         MPI_Comm comm, MPI_Comm *intercomm,
                         int array_of_errcodes[])
{
    MPII_ENTER;
    struct mpii_comm *c;
    int i, n = 0;

    (void)array_of_commands;
    (void)array_of_argv;
    (void)array_of_info;
    MPII_CHECK_INIT("MPI_Comm_spawn_multiple");
    /* The root's errcodes: one per process asked for, in all (the counts
     * mean something at the root only). */
    if ((c = mpii_comm_get(comm)) != NULL && !c->inter && c->rank == root)
        for (i = 0; array_of_maxprocs != NULL && i < count; i++)
            if (array_of_maxprocs[i] > 0)
                n += array_of_maxprocs[i];
    return no_spawn(comm, root, n, intercomm, array_of_errcodes,
                    "MPI_Comm_spawn_multiple");
}
