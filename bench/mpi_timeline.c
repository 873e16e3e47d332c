/*
 * mpi_timeline: where the time of "barrier, then a rooted collective"
 * goes on each rank, on the host's one clock (all ranks on one
 * machine: CLOCK_MONOTONIC is shared by its processes).  Each iteration
 * notes, on every rank, when it enters the barrier, leaves it, and
 * returns from the call; rank 0 (the root) gathers them and prints
 * medians over the iterations, in microseconds:
 *     timeline <op> rank <k> leaves <us> call <us> done <us> barrier <us>
 *     timeline <op> latency <us>
 *     timeline <op> period <us>
 * leaves:  when rank k left the barrier, after the root did (negative:
 *          before it);
 * call:    rank k's call from its barrier exit to its return, the figure
 *          a benchmark timing calls between barriers counts (mpi_coll,
 *          OSU);
 * done:    rank k's return after the root left the barrier;
 * barrier: rank k's barrier call;
 * latency: the collective's own, whatever order the ranks left the
 *          barrier in: for bcast and scatter from the root's start to
 *          the last rank's return, for gather and reduce from the last
 *          contributor's start to the root's return;
 * period:  one iteration (barrier and call), on the root.
 * So "call" is "done" - "leaves": a rank that leaves the barrier before
 * the root (bcast, scatter) counts part of the barrier in its call.
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_timeline [ITERATIONS [OP [BYTES]]]
 *   (20000, bcast, 1); OP is bcast, scatter, gather or reduce
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_sweep.h"

enum { ENTER, LEAVE, DONE, NMARKS };

static double
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
known(const char *op)
{
    return strcmp(op, "bcast") == 0 || strcmp(op, "scatter") == 0 ||
           strcmp(op, "gather") == 0 || strcmp(op, "reduce") == 0;
}

/* One call of op on n bytes (MPI_BYTE; reduce sums MPI_CHAR). */
static int
call(const char *op, char *sbuf, char *rbuf, int n)
{
    if (strcmp(op, "bcast") == 0)
        return MPI_Bcast(sbuf, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (strcmp(op, "scatter") == 0)
        return MPI_Scatter(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, 0,
                           MPI_COMM_WORLD);
    if (strcmp(op, "gather") == 0)
        return MPI_Gather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, 0,
                          MPI_COMM_WORLD);
    if (strcmp(op, "reduce") == 0)
        return MPI_Reduce(sbuf, rbuf, n, MPI_CHAR, MPI_SUM, 0,
                          MPI_COMM_WORLD);
    return MPI_ERR_OP;
}

/* The median over iterations i of f(i), f given as a difference of two
 * marks' columns: a[i] - b[i]. */
static double
median_diff(const double *a, const double *b, int iters, double *tmp)
{
    for (int i = 0; i < iters; i++)
        tmp[i] = a[i] - b[i];
    return sweep_median(tmp, iters);
}

int
main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20000;
    const char *op = argc > 2 ? argv[2] : "bcast";
    int n = argc > 3 ? atoi(argv[3]) : 1;
    double *mark, *all = NULL, *tmp;
    char *sbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (iters < 2 || n < 1 || !known(op)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_timeline [ITERS>1 "
                            "[bcast|scatter|gather|reduce [BYTES>0]]]\n");
        MPI_Finalize();
        return 2;
    }
    sbuf = calloc((size_t)size, (size_t)n);
    rbuf = calloc((size_t)size, (size_t)n);
    mark = malloc(sizeof *mark * NMARKS * (size_t)iters);
    tmp = malloc(sizeof *tmp * (size_t)iters);
    if (rank == 0)
        all = malloc(sizeof *all * NMARKS * (size_t)iters * (size_t)size);
    if (sbuf == NULL || rbuf == NULL || mark == NULL || tmp == NULL ||
        (rank == 0 && all == NULL))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = -iters / 10; i < iters; i++) {
        double enter = now_us(), leave;

        MPI_Barrier(MPI_COMM_WORLD);
        leave = now_us();
        call(op, sbuf, rbuf, n);
        if (i >= 0) {
            mark[ENTER * iters + i] = enter;
            mark[LEAVE * iters + i] = leave;
            mark[DONE * iters + i] = now_us();
        }
    }
    MPI_Gather(mark, NMARKS * iters, MPI_DOUBLE, all, NMARKS * iters,
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const double *root_leave = all + LEAVE * iters;
        int to_all = strcmp(op, "bcast") == 0 || strcmp(op, "scatter") == 0;

        for (int k = 0; k < size; k++) {
            const double *m = all + (size_t)k * NMARKS * iters;

            printf("timeline %s rank %d leaves %.2f call %.2f done %.2f "
                   "barrier %.2f\n", op, k,
                   median_diff(m + LEAVE * iters, root_leave, iters, tmp),
                   median_diff(m + DONE * iters, m + LEAVE * iters, iters,
                               tmp),
                   median_diff(m + DONE * iters, root_leave, iters, tmp),
                   median_diff(m + LEAVE * iters, m + ENTER * iters, iters,
                               tmp));
        }
        for (int i = 0; i < iters; i++) {
            double from = root_leave[i], to = all[DONE * iters + i];

            for (int k = 1; k < size; k++) {
                const double *m = all + (size_t)k * NMARKS * iters;

                if (to_all)
                    to = m[DONE * iters + i] > to ? m[DONE * iters + i] : to;
                else if (k == 1 || m[LEAVE * iters + i] > from)
                    from = m[LEAVE * iters + i];
            }
            tmp[i] = to - from;
        }
        printf("timeline %s latency %.2f\n", op, sweep_median(tmp, iters));
        printf("timeline %s period %.2f\n", op,
               median_diff(root_leave + 1, root_leave, iters - 1, tmp));
    }
    free(all);
    free(tmp);
    free(mark);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
