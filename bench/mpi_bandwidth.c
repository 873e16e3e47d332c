/*
 * mpi_bandwidth: rank 0 streams messages to rank 1 (osu_bw style): a
 * window of Isends answered by a window of Irecvs, then a short
 * acknowledgement, repeated.  Prints, after a warm-up, the 1 MiB figure
 * (a window of 16, a buffer each):
 *     bandwidth_gbs <GB/s, 10^9 bytes per second>
 * and with a sweep (MIN:MAX[:FACTOR], see mpi_sweep.h) one line per size
 * (a window of 64, as osu_bw):
 *     bw <bytes> <MB/s, 10^6 bytes per second>
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_bandwidth [ITERATIONS [MIN:MAX[:FACTOR] [WINDOWS]]]
 *   ITERATIONS: 1 MiB windows (40); WINDOWS: windows per size of the
 *   sweep, fewer above 512 KiB a window (100)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_sweep.h"

#define MSG (1 << 20)
#define WINDOW 16

int
main(int argc, char **argv)
{
    int rank, size, iters = 40, windows = 100;
    struct sweep sw = {1, 1, 2};
    char *buf[WINDOW];
    double g;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sweep_args(argc, argv, &iters, &sw);
    if (argc > 3)
        windows = atoi(argv[3]);
    if (size < 2 || iters < 1 || windows < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_bandwidth: needs 2 ranks (usage: "
                            "mpi_bandwidth [ITERS [MIN:MAX[:F] [WINDOWS]]])\n");
        MPI_Finalize();
        return 2;
    }
    for (int w = 0; w < WINDOW; w++) {
        if ((buf[w] = malloc(MSG)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
        memset(buf[w], w, MSG);
    }
    g = sweep_window(rank, buf, buf, MSG, WINDOW, iters, 5, 0);
    if (rank == 0)
        printf("bandwidth_gbs %.3f\n", g);
    for (int w = 0; w < WINDOW; w++)
        free(buf[w]);
    if (argc > 2)
        sweep_windows(rank, &sw, windows, 0, "bw");
    MPI_Finalize();
    return 0;
}
