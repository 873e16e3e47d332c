/*
 * mpi_shm_sizes: 2 ranks, every size from 1 B to 4 MiB (powers of 4):
 * the half round trip of a ping-pong (median of many), and the streaming
 * bandwidth of a window of Isends answered by Irecvs (osu_bw style, as
 * mpi_bandwidth.c at 1 MiB).  Prints one line per size:
 *     size <bytes> latency_us <us> bandwidth_gbs <GB/s>
 * Standard MPI only: builds with p2pcc and Open MPI's mpicc, so that
 * bench/mpi_shm.sh can set ours beside Open MPI's shared-memory path.
 * Usage: mpi_shm_sizes [SCALE [MIN:MAX]] (iterations scaled by SCALE,
 * default 1; the sizes from MIN up to MAX bytes, powers of 4 from 1,
 * default 1:4194304)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXSZ (4 << 20)
#define WINDOW 16

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Median half round trip of n ping-pongs of sz bytes, in us (rank 0). */
static double
pingpong(int rank, char *buf, int sz, int n, double *t)
{
    for (int i = -n / 10; i < n; i++) {
        double t0 = MPI_Wtime();

        if (rank == 0) {
            MPI_Send(buf, sz, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, sz, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, sz, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, sz, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    return t[n / 2] / 2 * 1e6;
}

/* Streaming bandwidth of n windows of sz bytes, in GB/s (rank 0). */
static double
stream(int rank, char **win, int sz, int n)
{
    MPI_Request req[WINDOW];
    double t0 = 0;
    char ack = 0;

    for (int i = -1; i < n; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        for (int w = 0; w < WINDOW; w++)
            if (rank == 0)
                MPI_Isend(win[w], sz, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[w]);
            else
                MPI_Irecv(win[w], sz, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[w]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
    }
    return (double)sz * WINDOW * n / (MPI_Wtime() - t0) / 1e9;
}

int
main(int argc, char **argv)
{
    int rank, size, scale = 1, lo = 1, hi = MAXSZ;
    char *buf, *win[WINDOW];
    double *t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        scale = atoi(argv[1]);
    if (argc > 2 && (sscanf(argv[2], "%d:%d", &lo, &hi) != 2 || lo < 1 ||
                     hi > MAXSZ || hi < lo))
        scale = 0;
    if (size != 2 || scale < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_shm_sizes: needs 2 ranks (usage: "
                            "mpi_shm_sizes [SCALE [MIN:MAX]])\n");
        MPI_Finalize();
        return 2;
    }
    buf = calloc(MAXSZ, 1);
    t = malloc(sizeof *t * 20000 * (size_t)scale);
    for (int w = 0; w < WINDOW; w++)
        win[w] = calloc(MAXSZ, 1);
    if (buf == NULL || t == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int sz = 1; sz <= hi; sz *= 4) {
        /* Fewer rounds for big sizes: each moves more. */
        int n = sz <= 4096 ? 10000 : sz <= 262144 ? 1000 : 100;
        int m = sz <= 4096 ? 2000 : sz <= 262144 ? 100 : 10;
        double lat, bw;

        if (sz < lo)
            continue;
        MPI_Barrier(MPI_COMM_WORLD);
        lat = pingpong(rank, buf, sz, n * scale, t);
        bw = stream(rank, win, sz, m * scale);
        if (rank == 0)
            printf("size %d latency_us %.3f bandwidth_gbs %.5f\n", sz, lat,
                   bw);
    }
    free(t);
    free(buf);
    for (int w = 0; w < WINDOW; w++)
        free(win[w]);
    MPI_Finalize();
    return 0;
}
