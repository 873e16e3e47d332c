/*
 * mpi_ring: a token goes round all ranks (rank r receives from r - 1 and
 * sends to r + 1), LAPS times after a few warm-up laps; rank 0 prints
 *     ring_lap_us <mean time of one lap>
 * Every rank talks to its two neighbours only.  Standard MPI only:
 * builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_ring [LAPS]      (default 200)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
    int rank, size, laps = argc > 1 ? atoi(argv[1]) : 200, warm = 10, i;
    int next, prev;
    long token = 0;
    double t0 = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (laps < 1)
        laps = 1;
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    for (i = -warm; i < laps; i++) {
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (size == 1)
            continue;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_LONG, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_LONG, next, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        printf("ring_lap_us %.1f\n", (MPI_Wtime() - t0) * 1e6 / laps);
    MPI_Finalize();
    return 0;
}
