/*
 * mpi_allreduce: an 8-byte (one double) MPI_SUM allreduce over all
 * ranks, timed call by call; after a warm-up, rank 0 prints the median
 *     allreduce_us <median>
 * (the slowest rank's view is what a program sees: each sample is the
 * maximum over ranks of that call's time, gathered at the end).
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_allreduce [ITERATIONS]   (warm-up: a tenth of them, at most 2000)
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
    double in, out, *t, *tmax;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        iters = atoi(argv[1]);
    if (iters < 1)
        iters = 1;
    if (warm > iters / 10)
        warm = iters / 10; /* a tenth, as with the default 20000 */
    t = malloc(sizeof *t * (size_t)iters);
    tmax = malloc(sizeof *tmax * (size_t)iters);
    if (t == NULL || tmax == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    in = rank + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < iters; i++) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    if (out != size * (size + 1) / 2.0) {
        fprintf(stderr, "mpi_allreduce: rank %d: wrong sum %g\n", rank, out);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Reduce(t, tmax, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(tmax, (size_t)iters, sizeof *tmax, cmp);
        printf("allreduce_us %.3f\n", tmax[iters / 2] * 1e6);
    }
    free(t);
    free(tmax);
    MPI_Finalize();
    return 0;
}
