/* A replicated MPI job whose one-sided course depends on arrival order,
 * for the agreement tests: every rank but 0 takes K tickets from a
 * counter in rank 0's window (exclusive lock, Fetch_and_op), writes its
 * rank into the log slot of each ticket (Put, same epoch), and prints
 * each ticket; rank 0 serves meanwhile (a passive target, waiting in a
 * barrier).  Then rank 0 reads its log under a lock, broadcasts it, and
 * every rank prints it.  A replica of rank 0 that served in another order
 * than its master would show up as a log that does not match the printed
 * tickets.  argv: K */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    int rank, size, k = argc > 1 ? atoi(argv[1]) : 40, i, one = 1, t, n;
    int *mem = NULL, *log;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = k * (size - 1);
    log = calloc((size_t)n + 1, sizeof *log);
    MPI_Win_allocate((MPI_Aint)(n + 1) * (MPI_Aint)sizeof(int), sizeof(int),
                     MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (i = 0; i <= n; i++)
        mem[i] = rank == 0 && i > 0 ? -1 : 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        for (i = 0; i < k; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Fetch_and_op(&one, &t, MPI_INT, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
            MPI_Put(&rank, 1, MPI_INT, 0, 1 + t, 1, MPI_INT, win);
            MPI_Win_unlock(0, win);
            printf("rank %d ticket %d\n", rank, t);
            fflush(stdout);
            usleep((useconds_t)(300 + 500 * ((i + rank) % 3)));
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        for (i = 0; i < n; i++)
            log[i] = mem[1 + i];
        log[n] = mem[0];
        MPI_Win_unlock(0, win);
    }
    MPI_Bcast(log, n + 1, MPI_INT, 0, MPI_COMM_WORLD);
    printf("rank %d count %d log", rank, log[n]);
    for (i = 0; i < n; i++)
        printf(" %d", log[i]);
    printf("\n");
    MPI_Win_free(&win);
    MPI_Finalize();
    printf("rank %d done\n", rank);
    free(log);
    return 0;
}
