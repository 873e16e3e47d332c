/*
 * mpi_bibw: ranks 0 and 1 stream messages to each other at once
 * (osu_bibw style): each posts a window of 64 Irecvs and 64 Isends and
 * waits for all, then rank 1 acknowledges, repeated.  One line per size
 * of the sweep (MIN:MAX[:FACTOR], see mpi_sweep.h), both directions
 * counted:
 *     bibw <bytes> <MB/s, 10^6 bytes per second>
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_bibw [MIN:MAX[:FACTOR] [WINDOWS]]   (1:4194304:4, 100)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_sweep.h"

int
main(int argc, char **argv)
{
    struct sweep sw = {1, 4 << 20, 4};
    int rank, size, windows = 100;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && sweep_parse(argv[1], &sw) != 0)
        windows = 0;
    if (argc > 2)
        windows = atoi(argv[2]);
    if (size < 2 || windows < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_bibw: needs 2 ranks "
                            "(usage: mpi_bibw [MIN:MAX[:F] [WINDOWS]])\n");
        MPI_Finalize();
        return 2;
    }
    sweep_windows(rank, &sw, windows, 1, "bibw");
    MPI_Finalize();
    return 0;
}
