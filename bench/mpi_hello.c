/*
 * mpi_hello: the smallest MPI program, for timing job start:
 * every rank prints one line and leaves.
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 */
#include <mpi.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello from rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
