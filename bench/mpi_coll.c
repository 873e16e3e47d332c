/*
 * mpi_coll: the blocking collectives, size by size (the OSU collective
 * benchmarks in one program).  Each call is timed alone, between
 * barriers; a rank's figure is its median call, and the line printed is
 * the slowest rank's, in microseconds:
 *     coll <op> <bytes> <us>
 * Sizes are per rank's block for gather, scatter, allgather and alltoall
 * (as OSU counts them), the whole buffer for bcast and the reductions
 * (MPI_FLOAT, MPI_SUM, from 4 bytes); barrier is printed once, at 0
 * bytes.  The results of bcast and allreduce are checked.
 * Then the same calls back to back, as the Intel MPI Benchmarks time
 * them: one barrier, the calls one after the other, each rank's time
 * per call, and the slowest rank's printed:
 *     b2b <op> <bytes> <us>
 * The two differ where ranks leave a barrier at different times: timed
 * between barriers, a rank that leaves early counts the wait for the
 * others (the root of a bcast) as its call's time.
 * From the same calls between barriers, the figure the OSU benchmarks
 * print by default ("Avg Latency"): each rank's mean call, averaged over
 * the ranks:
 *     osu <op> <bytes> <us>
 * Standard MPI only: builds with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_coll [ITERATIONS [MIN:MAX[:FACTOR] [OP,OP,...]]]
 *   (200, 1:4194304:4, barrier,bcast,reduce,allreduce,gather,scatter,
 *   allgather,alltoall); iterations shrink above 8 KiB (mpi_sweep.h)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_sweep.h"

enum op { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER,
          ALLTOALL, NOPS };
static const char *names[NOPS] = {"barrier", "bcast", "reduce", "allreduce",
                                  "gather", "scatter", "allgather",
                                  "alltoall"};

static int rank, size;
static char *sbuf, *rbuf;

/* One call of op on n bytes. */
static void
call(enum op op, size_t n)
{
    int c = (int)n, f = (int)(n / sizeof(float));

    switch (op) {
    case BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case BCAST:
        MPI_Bcast(sbuf, c, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case REDUCE:
        MPI_Reduce(sbuf, rbuf, f, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        MPI_Allreduce(sbuf, rbuf, f, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case GATHER:
        MPI_Gather(sbuf, c, MPI_BYTE, rbuf, c, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case SCATTER:
        MPI_Scatter(sbuf, c, MPI_BYTE, rbuf, c, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
        MPI_Allgather(sbuf, c, MPI_BYTE, rbuf, c, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(sbuf, c, MPI_BYTE, rbuf, c, MPI_BYTE, MPI_COMM_WORLD);
        break;
    default:
        break;
    }
}

/* Fills the send buffer so that bcast and allreduce can be checked. */
static void
fill(enum op op, size_t n)
{
    if (op == ALLREDUCE || op == REDUCE)
        for (size_t i = 0; i < n / sizeof(float); i++)
            ((float *)sbuf)[i] = (float)(rank + 1);
    else if (op == BCAST && rank != 0)
        memset(sbuf, 0, n);
    else
        memset(sbuf, 7, n * (op == ALLTOALL || op == SCATTER ? size : 1));
}

static int
check(enum op op, size_t n)
{
    size_t k = n / sizeof(float);

    if (op == BCAST)
        return n == 0 || (sbuf[0] == 7 && sbuf[n - 1] == 7);
    if (op == ALLREDUCE)
        return k == 0 || (((float *)rbuf)[0] == size * (size + 1) / 2.0f &&
                          ((float *)rbuf)[k - 1] == size * (size + 1) / 2.0f);
    return 1;
}

/* The slowest rank's median call, in us, on rank 0; *osu becomes the
 * ranks' average of their mean calls, OSU's figure. */
static double
measure(enum op op, size_t n, int iters, double *t, double *osu)
{
    double med, worst, mean = 0, sum = 0;
    int warm = iters / 10 + 1;

    fill(op, n);
    for (int i = -warm; i < iters; i++) {
        double t0;

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        call(op, n);
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    if (!check(op, n)) {
        fprintf(stderr, "mpi_coll: rank %d: wrong %s result at %zu bytes\n",
                rank, names[op], n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < iters; i++)
        mean += t[i] / iters * 1e6;
    MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    *osu = sum / size;
    med = sweep_median(t, iters) * 1e6;
    MPI_Reduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

/* The slowest rank's time per call of iters calls back to back (after
 * a barrier and a tenth as many warm-up calls), in us, on rank 0. */
static double
back_to_back(enum op op, size_t n, int iters)
{
    double t0, us, worst;
    int warm = iters / 10 + 1;

    fill(op, n);
    for (int i = 0; i < warm; i++)
        call(op, n);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        call(op, n);
    us = (MPI_Wtime() - t0) / iters * 1e6;
    MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

int
main(int argc, char **argv)
{
    struct sweep sw = {1, 4 << 20, 4};
    int iters = 200, want[NOPS] = {0}, any = 0;
    double *t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sweep_args(argc, argv, &iters, &sw);
    for (int o = 0; o < NOPS; o++) {
        const char *l = argc > 3 ? argv[3] : NULL, *p;
        size_t k = strlen(names[o]);

        for (p = l; p != NULL && (p = strstr(p, names[o])) != NULL; p += k)
            if ((p == l || p[-1] == ',') && (p[k] == ',' || p[k] == '\0'))
                break;
        want[o] = l == NULL || p != NULL;
        any |= want[o];
    }
    if (iters < 1 || !any) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_coll [ITERS [MIN:MAX[:F] [OPS]]]\n");
        MPI_Finalize();
        return 2;
    }
    t = malloc(sizeof *t * (size_t)iters);
    sbuf = malloc(sw.max * (size_t)size);
    rbuf = malloc(sw.max * (size_t)size);
    if (t == NULL || sbuf == NULL || rbuf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(rbuf, 0, sw.max * (size_t)size);
    for (int o = 0; o < NOPS; o++) {
        if (!want[o])
            continue;
        if (o == BARRIER) {
            double osu, us = measure(BARRIER, 0, iters, t, &osu),
                        b2b = back_to_back(BARRIER, 0, iters);

            if (rank == 0)
                printf("coll barrier 0 %.3f\nosu barrier 0 %.3f\n"
                       "b2b barrier 0 %.3f\n", us, osu, b2b);
            continue;
        }
        for (size_t n = sw.min; n <= sw.max; n *= sw.factor) {
            double us, osu;

            if ((o == REDUCE || o == ALLREDUCE) && n < sizeof(float))
                continue;
            us = measure((enum op)o, n, sweep_iters(iters, n), t, &osu);
            if (rank == 0)
                printf("coll %s %zu %.3f\nosu %s %zu %.3f\n", names[o], n,
                       us, names[o], n, osu);
            us = back_to_back((enum op)o, n, sweep_iters(iters, n));
            if (rank == 0)
                printf("b2b %s %zu %.3f\n", names[o], n, us);
        }
    }
    free(t);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
