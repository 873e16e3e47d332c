/*
 * mpi_mt LEVEL THREADS TRIPS SIZE: ranks 0 and 1 each run THREADS
 * threads, and thread t of one plays ping-pong with thread t of the
 * other (tag t), TRIPS round trips of SIZE bytes.  LEVEL is the level
 * asked of MPI_Init_thread: single (MPI_Init; one thread only) or
 * multiple.  Rank 0 prints
 *   threads T size S: R us a round trip, M messages/s in all
 * (R: the threads' mean; M: both directions, all threads).  Other ranks
 * wait at the final barrier.
 * THREADS may be 1:N, osu_latency_mt's 1:N case: rank 0 runs one
 * thread, rank 1 runs N, each receiving a message from rank 0 (tag 1,
 * whichever thread's receive matches) and answering it (tag 2); rank 0
 * makes N * TRIPS round trips, and R is the time of one.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int rank, trips, size;

static void *
pingpong(void *arg)
{
    int t = (int)(intptr_t)arg, other = 1 - rank;
    char *buf = calloc(1, (size_t)size + 1);

    for (int i = 0; i < trips; i++) {
        if (rank == 0) {
            MPI_Send(buf, size, MPI_BYTE, other, t, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_BYTE, other, t, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, size, MPI_BYTE, other, t, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_BYTE, other, t, MPI_COMM_WORLD);
        }
    }
    free(buf);
    return NULL;
}

/* 1:N: rank 1's threads answer whichever message comes. */
static void *
answer(void *arg)
{
    char *buf = calloc(1, (size_t)size + 1);

    for (int i = 0; i < trips; i++) {
        MPI_Recv(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    free(buf);
    return arg;
}

static void
ask(int n)
{
    char *buf = calloc(1, (size_t)size + 1);

    for (int i = 0; i < n * trips; i++) {
        MPI_Send(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(buf);
}

int
main(int argc, char **argv)
{
    int nthreads = 0, provided, nprocs, multiple, fan = 0;
    pthread_t th[64];
    double t0, dt;

    if (argc == 5) {
        fan = strncmp(argv[2], "1:", 2) == 0; /* 1:N */
        nthreads = atoi(argv[2] + (fan ? 2 : 0));
    }
    if (argc != 5 || nthreads < 1 || nthreads > 64 ||
        (trips = atoi(argv[3])) < 1 || (size = atoi(argv[4])) < 0) {
        fprintf(stderr, "usage: mpi_mt single|multiple THREADS(1-64)|1:N "
                        "TRIPS SIZE\n");
        return 2;
    }
    multiple = strcmp(argv[1], "multiple") == 0;
    if (!multiple && (nthreads > 1 || fan)) {
        fprintf(stderr, "mpi_mt: single takes one thread\n");
        return 2;
    }
    if (multiple) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided != MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "mpi_mt: MPI_THREAD_MULTIPLE not given\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        fprintf(stderr, "mpi_mt: 2 ranks at least\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (fan && rank == 0) {
        ask(nthreads);
    } else if (fan && rank == 1) {
        for (int t = 0; t < nthreads; t++)
            pthread_create(&th[t], NULL, answer, NULL);
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
    } else if (rank < 2) {
        if (nthreads == 1)
            pingpong(NULL);
        else {
            for (int t = 0; t < nthreads; t++)
                pthread_create(&th[t], NULL, pingpong, (void *)(intptr_t)t);
            for (int t = 0; t < nthreads; t++)
                pthread_join(th[t], NULL);
        }
    }
    dt = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && fan)
        printf("threads 1:%d size %d: %.2f us a round trip, %.0f "
               "messages/s in all\n",
               nthreads, size, dt * 1e6 / trips / nthreads,
               2.0 * trips * nthreads / dt);
    else if (rank == 0)
        printf("threads %d size %d: %.2f us a round trip, %.0f messages/s "
               "in all\n",
               nthreads, size, dt * 1e6 / trips,
               2.0 * trips * nthreads / dt);
    MPI_Finalize();
    return 0;
}
