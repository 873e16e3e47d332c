/*
 * mpi_latency: ping-pong between ranks 0 and 1 (osu_latency style).
 * Every round trip is timed; after a warm-up, the median half round
 * trip is printed in microseconds.  With no sweep, one byte:
 *     latency_us <median>
 * With a sweep (MIN:MAX[:FACTOR], see mpi_sweep.h), that line for one
 * byte and then one line per size:
 *     lat <bytes> <median us>
 * WAIT "test" or "probe" receives as programs that poll do: MPI_Irecv
 * and a loop of MPI_Test, or a loop of MPI_Iprobe and MPI_Recv
 * (bench/mpi_shared_core.sh); "wait" (the default) is MPI_Recv.
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_latency [ITERATIONS [MIN:MAX[:FACTOR] [WAIT]]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_sweep.h"

static enum { WAIT, TEST, PROBE } how = WAIT;

/* Receives n bytes from rank from, waiting as how says. */
static void
recv(char *buf, size_t n, int from)
{
    MPI_Request rq;
    int flag = 0;

    if (how == TEST) {
        MPI_Irecv(buf, (int)n, MPI_CHAR, from, 1, MPI_COMM_WORLD, &rq);
        while (!flag)
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        return;
    }
    while (how == PROBE && !flag)
        MPI_Iprobe(from, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Recv(buf, (int)n, MPI_CHAR, from, 1, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

/* The median half round trip at n bytes, on rank 0 (0 elsewhere). */
static double
pingpong(int rank, char *buf, size_t n, int iters, double *t)
{
    int warm = iters / 10 < 2000 ? iters / 10 : 2000;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < iters; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            recv(buf, n, 1);
        } else if (rank == 1) {
            recv(buf, n, 0);
            MPI_Send(buf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    return rank == 0 ? sweep_median(t, iters) / 2 * 1e6 : 0;
}

int
main(int argc, char **argv)
{
    int rank, size, iters = 20000;
    struct sweep sw = {1, 1, 2};
    int sweeping;
    char *buf = NULL;
    double *t, us;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sweeping = sweep_args(argc, argv, &iters, &sw);
    if (argc > 3)
        how = strcmp(argv[3], "test") == 0    ? TEST
              : strcmp(argv[3], "probe") == 0 ? PROBE
              : strcmp(argv[3], "wait") == 0  ? WAIT
                                              : (iters = 0, WAIT);
    if (size < 2 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_latency: needs 2 ranks (usage: mpi_latency "
                            "[ITERS [MIN:MAX[:F] [wait|test|probe]]])\n");
        MPI_Finalize();
        return 2;
    }
    if ((t = malloc(sizeof *t * (size_t)iters)) == NULL ||
        (buf = malloc(sw.max)) == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 1, sw.max);
    us = pingpong(rank, buf, 1, iters, t);
    if (rank == 0)
        printf("latency_us %.3f\n", us);
    for (size_t n = sw.min; sweeping && n <= sw.max; n *= sw.factor) {
        us = pingpong(rank, buf, n, sweep_iters(iters, n), t);
        if (rank == 0)
            printf("lat %zu %.3f\n", n, us);
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
