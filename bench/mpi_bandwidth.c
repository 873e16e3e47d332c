/*
 * mpi_bandwidth: rank 0 streams 1 MiB messages to rank 1 (osu_bw
 * style): a window of Isends answered by a window of Irecvs, then a
 * short acknowledgement, repeated.  Prints, after a warm-up,
 *     bandwidth_gbs <GB/s, 10^9 bytes per second>
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_bandwidth [ITERATIONS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG (1 << 20)
#define WINDOW 16

int
main(int argc, char **argv)
{
    int rank, size, iters = 40, warm = 5;
    MPI_Request req[WINDOW];
    char *buf[WINDOW], ack = 0;
    double t0 = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        iters = atoi(argv[1]);
    if (size < 2 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_bandwidth: needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    for (int w = 0; w < WINDOW; w++) {
        if ((buf[w] = malloc(MSG)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
        memset(buf[w], w, MSG);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < iters; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(buf[w], MSG, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(buf[w], MSG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        double s = MPI_Wtime() - t0;
        printf("bandwidth_gbs %.3f\n", (double)MSG * WINDOW * iters / s / 1e9);
    }
    for (int w = 0; w < WINDOW; w++)
        free(buf[w]);
    MPI_Finalize();
    return 0;
}
