/*
 * mpi_launch: the job-start benchmark of bench/launch.sh and the large
 * job of tests/integration/test_scale.py: MPI_Init, one Allreduce,
 * MPI_Finalize.  Rank 0 prints "launch N ok" when the sum of the ranks
 * is right.  Standard MPI only: builds with p2pcc and Open MPI's mpicc.
 */
#include <mpi.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
    long rank_l, sum = 0;
    int rank, size, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank_l = rank;
    rc = MPI_Allreduce(&rank_l, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (rc == MPI_SUCCESS && sum == (long)size * (size - 1) / 2)
            printf("launch %d ok\n", size);
        else
            printf("launch %d: sum %ld, expected %ld\n", size, sum,
                   (long)size * (size - 1) / 2);
    }
    MPI_Finalize();
    return 0;
}
