/*
 * mpi_nbc: nonblocking collectives, two figures, rank 0 prints
 *     iallreduce_us <median>   8-byte MPI_Iallreduce + MPI_Wait
 *     allreduce_us <median>    the blocking MPI_Allreduce, same data
 *     overlap_pct <percent>    how much of a 256 KiB MPI_Ibcast hides
 *                              behind computation that calls MPI_Test
 *                              every few microseconds
 * Overlap is (t_bcast + t_compute - t_both) / min(t_bcast, t_compute):
 * 100 when the broadcast costs nothing beside the computation, 0 when
 * they add up.  Each sample is the slowest rank's.  Standard MPI only:
 * builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_nbc [ITERATIONS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BCAST_BYTES (256 * 1024)

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The median over iterations of the slowest rank's time. */
static double
median_max(double *t, int n)
{
    double *m = malloc(sizeof *m * (size_t)n), r;

    if (m == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allreduce(t, m, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(m, (size_t)n, sizeof *m, cmp);
    r = m[n / 2];
    free(m);
    return r;
}

/* Work that calls MPI_Test on req every chunk (req may be null). */
static double
compute(MPI_Request *req, int chunks)
{
    volatile double x = 0;
    int flag;

    for (int c = 0; c < chunks; c++) {
        for (int k = 0; k < 2000; k++)
            x += k * 0.5;
        if (*req != MPI_REQUEST_NULL)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    }
    return x;
}

int
main(int argc, char **argv)
{
    int rank, size, iters = 5000, warm = 500, big = 200;
    double in, out, *t;
    char *buf;
    MPI_Request r;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        iters = atoi(argv[1]);
    if (iters < 1)
        iters = 1;
    t = malloc(sizeof *t * (size_t)(iters > big ? iters : big));
    buf = malloc(BCAST_BYTES);
    if (t == NULL || buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    in = rank + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < iters; i++) {
        double t0 = MPI_Wtime();

        MPI_Iallreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    if (out != size * (size + 1) / 2.0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    {
        double m = median_max(t, iters);

        if (rank == 0)
            printf("iallreduce_us %.3f\n", m * 1e6);
    }
    for (int i = -warm; i < iters; i++) {
        double t0 = MPI_Wtime();

        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    {
        double m = median_max(t, iters);

        if (rank == 0)
            printf("allreduce_us %.3f\n", m * 1e6);
    }
    /* Overlap: the broadcast alone, the computation alone, both. */
    {
        double tb, tc, tboth, o;
        int chunks = 200;

        for (int i = 0; i < big; i++) {
            double t0;

            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_Ibcast(buf, BCAST_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            t[i] = MPI_Wtime() - t0;
        }
        tb = median_max(t, big);
        for (int i = 0; i < big; i++) {
            double t0;

            r = MPI_REQUEST_NULL;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            compute(&r, chunks);
            t[i] = MPI_Wtime() - t0;
        }
        tc = median_max(t, big);
        for (int i = 0; i < big; i++) {
            double t0;

            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_Ibcast(buf, BCAST_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
            compute(&r, chunks);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            t[i] = MPI_Wtime() - t0;
        }
        tboth = median_max(t, big);
        o = (tb + tc - tboth) / (tb < tc ? tb : tc) * 100;
        if (rank == 0)
            printf("bcast_us %.1f compute_us %.1f both_us %.1f\n"
                   "overlap_pct %.0f\n",
                   tb * 1e6, tc * 1e6, tboth * 1e6, o);
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
