/*
 * mpi_sweep.h: what the sweeping benchmarks share (the sizes they visit,
 * medians, the windowed streaming loop of osu_bw / osu_bibw), for
 * bench/mpi_{latency,bandwidth,bibw,coll}.c; header only, so that each
 * still builds from one command line with any MPI's mpicc.
 *
 * A sweep is given as MIN:MAX[:FACTOR] (bytes; FACTOR 2 or 4, default
 * 4): MIN, MIN*FACTOR, ... up to MAX.  Iterations shrink with size
 * (ITERS up to 8 KiB, then ITERS * 8 KiB / size, at least MIN_ITERS), so
 * that a sweep to 4 MiB stays short.  At least 30: with 10, a collective
 * at 1 MiB on 4 ranks sharing 2 cores was timed over 10 calls whose
 * times spread 0.3-2.6x with where the kernel put the ranks, so its
 * median was near a single sample.
 */
#ifndef MPI_SWEEP_H
#define MPI_SWEEP_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_MIN_ITERS 30

struct sweep {
    size_t min, max, factor;
};

/* Parses "MIN:MAX[:FACTOR]"; 0 on success. */
static inline int
sweep_parse(const char *s, struct sweep *sw)
{
    unsigned long a, b, f = 4;
    int n = sscanf(s, "%lu:%lu:%lu", &a, &b, &f);

    if (n < 2 || a < 1 || b < a || f < 2)
        return -1;
    sw->min = a;
    sw->max = b;
    sw->factor = f;
    return 0;
}

/* The arguments every sweeping benchmark takes first, [ITERATIONS
 * [MIN:MAX[:FACTOR]]]: *iters becomes 0 when they are wrong.  Returns
 * whether a sweep was given. */
static inline int
sweep_args(int argc, char **argv, int *iters, struct sweep *sw)
{
    if (argc > 1)
        *iters = atoi(argv[1]);
    if (argc > 2 && sweep_parse(argv[2], sw) != 0)
        *iters = 0;
    return argc > 2;
}

/* Iterations at size n for a base of iters. */
static inline int
sweep_iters(int iters, size_t n)
{
    long long it = iters;

    if (n > 8192)
        it = it * 8192 / (long long)n;
    return it < SWEEP_MIN_ITERS ? SWEEP_MIN_ITERS : (int)it;
}

static inline int
sweep_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The median of n samples (sorted in place). */
static inline double
sweep_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, sweep_cmp);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* Streams win messages of n bytes from rank 0 to rank 1 (and from 1
 * to 0 at once when bidir), each window closed by a 1-byte
 * acknowledgement, iters windows after warm windows; GB/s (10^9 bytes
 * per second, both directions counted) on rank 0, 0 elsewhere.  Window
 * entry w sends from sbuf[w] and receives into rbuf[w]. */
static inline double
sweep_window(int rank, char **sbuf, char **rbuf, size_t n, int win,
             int iters, int warm, int bidir)
{
    MPI_Request req[2 * 256];
    double t0 = 0;
    char ack = 0;
    int k;

    if (win > 256)
        win = 256;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < iters; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        k = 0;
        if (rank == 0) {
            for (int w = 0; bidir && w < win; w++)
                MPI_Irecv(rbuf[w], (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                          &req[k++]);
            for (int w = 0; w < win; w++)
                MPI_Isend(sbuf[w], (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                          &req[k++]);
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < win; w++)
                MPI_Irecv(rbuf[w], (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                          &req[k++]);
            for (int w = 0; bidir && w < win; w++)
                MPI_Isend(sbuf[w], (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                          &req[k++]);
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    if (rank != 0)
        return 0;
    return (double)n * win * iters * (bidir ? 2 : 1) / (MPI_Wtime() - t0) /
           1e9;
}

/* The sweep of sweep_window over sw, osu style (a window of 64, one
 * buffer each way), one line per size: "KEY <bytes> <MB/s>" (10^6
 * bytes per second, as OSU prints). */
static inline void
sweep_windows(int rank, const struct sweep *sw, int iters, int bidir,
              const char *key)
{
    char *s = malloc(sw->max), *r = malloc(sw->max), *sb[64], *rb[64];

    if (s == NULL || r == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(s, 2, sw->max);
    for (int w = 0; w < 64; w++) {
        sb[w] = s;
        rb[w] = r;
    }
    for (size_t n = sw->min; n <= sw->max; n *= sw->factor) {
        /* iters windows up to 512 KiB a window, fewer beyond */
        long long big = (long long)n * 64, it = iters;

        if (big > 512 * 1024)
            it = it * 512 * 1024 / big;
        if (it < 3)
            it = 3;
        double g = sweep_window(rank, sb, rb, n, 64, (int)it, (int)it / 5 + 1,
                                bidir);

        if (rank == 0)
            printf("%s %zu %.2f\n", key, n, g * 1e3);
    }
    free(s);
    free(r);
}

#endif
