/*
 * mpi_mt LEVEL THREADS TRIPS SIZE: ranks 0 and 1 each run THREADS
 * threads, and thread t of one plays ping-pong with thread t of the
 * other (tag t), TRIPS round trips of SIZE bytes.  LEVEL is the level
 * asked of MPI_Init_thread: single (MPI_Init; one thread only) or
 * multiple.  Rank 0 prints
 *   threads T size S: R us a round trip, M messages/s in all
 * (R: the threads' mean; M: both directions, all threads).  Other ranks
 * wait at the final barrier.
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

int
main(int argc, char **argv)
{
    int nthreads, provided, nprocs, multiple;
    pthread_t th[64];
    double t0, dt;

    if (argc != 5 || (nthreads = atoi(argv[2])) < 1 || nthreads > 64 ||
        (trips = atoi(argv[3])) < 1 || (size = atoi(argv[4])) < 0) {
        fprintf(stderr, "usage: mpi_mt single|multiple THREADS(1-64) "
                        "TRIPS SIZE\n");
        return 2;
    }
    multiple = strcmp(argv[1], "multiple") == 0;
    if (!multiple && nthreads > 1) {
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
    if (rank < 2) {
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
    if (rank == 0)
        printf("threads %d size %d: %.2f us a round trip, %.0f messages/s "
               "in all\n",
               nthreads, size, dt * 1e6 / trips,
               2.0 * trips * nthreads / dt);
    MPI_Finalize();
    return 0;
}
