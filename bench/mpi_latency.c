/*
 * mpi_latency: 1-byte ping-pong between ranks 0 and 1 (osu_latency
 * style).  Every round trip is timed; after a warm-up, the median half
 * round trip is printed in microseconds:
 *     latency_us <median>
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_latency [ITERATIONS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
    int rank, size, iters = 20000, warm = 2000;
    char byte = 0;
    double *t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        iters = atoi(argv[1]);
    if (size < 2 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_latency: needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if ((t = malloc(sizeof *t * (size_t)iters)) == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < iters; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(&byte, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&byte, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&byte, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(&byte, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    if (rank == 0) {
        qsort(t, (size_t)iters, sizeof *t, cmp);
        printf("latency_us %.3f\n", t[iters / 2] / 2 * 1e6);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
