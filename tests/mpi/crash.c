/*
 * crash: the last rank dies of SIGSEGV while the others wait for it,
 * in a receive and in a collective.  The job must end promptly with a
 * non-zero status (the test driver expects this program to fail, and in
 * time).
 */
#include "mpitest.h"

#include <signal.h>

int
main(int argc, char **argv)
{
    int v = 0;

    t_init(&argc, &argv);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == t_size - 1) {
        fprintf(stderr, "rank %d: raising SIGSEGV\n", t_rank);
        fflush(stderr);
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        return 3;
    }
    if (t_rank == 0)
        MPI_Recv(&v, 1, MPI_INT, t_size - 1, 99, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    else
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    fprintf(stderr, "rank %d: went on after the crash\n", t_rank);
    MPI_Finalize();
    return 0;
}
