/*
 * dynamic: process management as a job that was not spawned sees it
 * (MPI 3.1 chapter 10).  Every MPI: MPI_Comm_get_parent gives
 * MPI_COMM_NULL; MPI_Comm_disconnect of a duplicate of MPI_COMM_WORLD
 * after messages on it (they are delivered, the handle is nulled) and of
 * an intercommunicator between the two halves of the job.  On p2pmpi,
 * whose jobs do not grow: MPI_Comm_spawn and MPI_Comm_spawn_multiple
 * fail on every member with MPI_ERR_SPAWN through MPI_ERRORS_RETURN, no
 * intercommunicator, the root's errcodes all MPI_ERR_SPAWN; the job
 * goes on.
 */
#include "mpitest.h"

/* p2pmpi's library (MPI_T shows its variables). */
static int
is_p2pmpi(void)
{
    int provided, i, ours;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    ours = MPI_T_cvar_get_index("p2p_eager_max", &i) == MPI_SUCCESS;
    MPI_T_finalize();
    return ours;
}

static void
t_parent(void)
{
    MPI_Comm parent = MPI_COMM_WORLD;

    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a parent");
}

static void
t_disconnect(void)
{
    MPI_Comm dup, half, inter;
    int v = -1, peer = (t_rank + 1) % t_size;
    int from = (t_rank + t_size - 1) % t_size;
    MPI_Request rq;

    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Isend(&t_rank, 1, MPI_INT, peer, 5, dup, &rq));
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, from, 5, dup, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(v == from, "got %d from %d", v, from);
    MPI_OK(MPI_Comm_disconnect(&dup));
    CHECK(dup == MPI_COMM_NULL, "handle not nulled");

    if (t_size < 2)
        return;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, t_rank % 2 ? 0 : 1,
                                77, &inter));
    v = -1;
    {
        int rsize, mine;

        MPI_OK(MPI_Comm_remote_size(inter, &rsize));
        MPI_OK(MPI_Comm_rank(half, &mine));
        /* Rank i of one half sends to rank i of the other, if there. */
        if (mine < rsize)
            MPI_OK(MPI_Isend(&t_rank, 1, MPI_INT, mine, 6, inter, &rq));
        else
            rq = MPI_REQUEST_NULL;
        if (mine < rsize)
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, mine, 6, inter,
                            MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (mine < rsize)
            CHECK(v >= 0 && v % 2 != t_rank % 2, "got %d", v);
    }
    MPI_OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "intercommunicator not nulled");
    MPI_OK(MPI_Comm_free(&half));
}

static void
t_no_spawn(void)
{
    MPI_Comm child = MPI_COMM_WORLD;
    int codes[3] = {0, 0, 0}, rc, cls = -1, i;
    char *cmds[2] = {"true", "true"};
    int maxprocs[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                        MPI_COMM_WORLD, &child, codes);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "MPI_Comm_spawn: %d (class %d)", rc, cls);
    CHECK(child == MPI_COMM_NULL, "an intercommunicator");
    for (i = 0; t_rank == 0 && i < 2; i++)
        CHECK(codes[i] == MPI_ERR_SPAWN, "errcode %d: %d", i, codes[i]);
    child = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos,
                                 0, MPI_COMM_WORLD, &child, codes);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "MPI_Comm_spawn_multiple: %d", rc);
    CHECK(child == MPI_COMM_NULL, "an intercommunicator");
    for (i = 0; t_rank == 0 && i < 3; i++)
        CHECK(codes[i] == MPI_ERR_SPAWN, "errcode %d: %d", i, codes[i]);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* The job goes on. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_parent();
    t_disconnect();
    if (is_p2pmpi())
        t_no_spawn();
    return t_finish("dynamic");
}
