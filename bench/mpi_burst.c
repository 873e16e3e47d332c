/*
 * mpi_burst: many requests open at once, the cost per message.
 *  - sends (the default): rank 0 starts N nonblocking sends of BYTES
 *    (distinct tags) to rank 1, which has N receives posted; both wait
 *    for all.  Prints "burst_us <microseconds per message>".
 *  - "get": every rank starts N MPI_Gets of one int from the next rank
 *    in one fence epoch and closes it.  Prints "get_us <microseconds per
 *    Get>", issue and fence together.
 * A cost per message that grows with N is a search that walks every
 * open request (docs/mpi.md, "Many requests live"); bench/replicas.sh
 * runs it at two sizes.  Standard MPI only (builds with Open MPI's
 * mpicc too).
 * Usage: mpi_burst [N [BYTES [send|get]]]   (defaults: BURST_N, 100000,
 * and sends unless built with -DBURST_GET=1)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BURST_N
#define BURST_N 16000
#endif
#ifndef BURST_GET
#define BURST_GET 0 /* 1: Gets by default */
#endif

static double
sends(int n, int bytes, int rank)
{
    char *buf = calloc((size_t)bytes, 1);
    MPI_Request *r = malloc((size_t)n * sizeof *r);
    double t0;

    if (buf == NULL || r == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        if (rank == 0)
            MPI_Isend(buf, bytes, MPI_BYTE, 1, i, MPI_COMM_WORLD, &r[i]);
        else if (rank == 1)
            MPI_Irecv(buf, bytes, MPI_BYTE, 0, i, MPI_COMM_WORLD, &r[i]);
        else
            r[i] = MPI_REQUEST_NULL;
    MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
    t0 = MPI_Wtime() - t0;
    free(buf);
    free(r);
    return t0;
}

static double
gets(int n, int rank, int size)
{
    int *got = malloc((size_t)n * sizeof *got), *base;
    MPI_Win win;
    double t0;

    if (got == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    *base = rank;
    MPI_Win_fence(0, win);
    t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        MPI_Get(&got[i], 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    t0 = MPI_Wtime() - t0;
    for (int i = 0; i < n; i++)
        if (got[i] != (rank + 1) % size) {
            fprintf(stderr, "mpi_burst: Get %d brought %d\n", i, got[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    MPI_Win_free(&win);
    free(got);
    return t0;
}

int
main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : BURST_N;
    int bytes = argc > 2 ? atoi(argv[2]) : 100000;
    int get = argc > 3 ? strcmp(argv[3], "get") == 0 : BURST_GET;
    int rank, size;
    double t, worst;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (n < 1 || bytes < 0 || (!get && size < 2)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_burst [N [BYTES [send|get]]], "
                            "2 ranks or more for sends\n");
        MPI_Finalize();
        return 2;
    }
    t = get ? gets(n, rank, size) : sends(n, bytes, rank);
    MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s %.2f\n", get ? "get_us" : "burst_us", worst / n * 1e6);
    MPI_Finalize();
    return 0;
}
