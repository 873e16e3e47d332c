/*
 * mpi_iprobe: what a polling loop pays per MPI_Iprobe that finds nothing
 * (2 ranks; rank 0 polls, rank 1 waits).  Under p2prun -r R > 1 every
 * Iprobe outcome is agreed with the rank's backups before it returns, so
 * this measures that round trip.  Prints:
 *     iprobe_us <mean per call>
 * Usage: mpi_iprobe [CALLS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
    int rank, flag, i, n = argc > 1 ? atoi(argv[1]) : 20000, v = 0;
    double t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        t = MPI_Wtime();
        for (i = 0; i < n; i++)
            MPI_Iprobe(1, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        t = MPI_Wtime() - t;
        printf("iprobe_us %.2f\n", t / n * 1e6);
        MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    } else if (rank == 1)
        MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
