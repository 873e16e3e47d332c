/*
 * abort: the last rank calls MPI_Abort while the others wait for a
 * message that never comes.  The job must end promptly with a non-zero
 * status (the test driver expects this program to fail, and in time).
 */
#include "mpitest.h"

int
main(int argc, char **argv)
{
    int v;

    t_init(&argc, &argv);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == t_size - 1) {
        fprintf(stderr, "rank %d: calling MPI_Abort(MPI_COMM_WORLD, 7)\n",
                t_rank);
        MPI_Abort(MPI_COMM_WORLD, 7);
        fprintf(stderr, "MPI_Abort returned\n");
        return 3;
    }
    /* Never satisfied: only the abort can end this. */
    MPI_Recv(&v, 1, MPI_INT, t_size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "rank %d: receive completed after abort\n", t_rank);
    MPI_Finalize();
    return 0;
}
