/* An MPI program for the demo: every rank passes a token round a ring and
 * all of them sum it, 12 steps, 0.15 s apart, printing one line a step.
 * Compile with p2pcc; run with p2prun -n 3 -r 2. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    int rank, size, s;
    long token, in, sum;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (s = 0; s < 12; s++) {
        token = rank * 100 + s;
        MPI_Sendrecv(&token, 1, MPI_LONG, (rank + 1) % size, 0, &in, 1,
                     MPI_LONG, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d step %2d: got %ld, sum %ld\n", rank, s, in, sum);
        fflush(stdout);
        usleep(150000);
    }
    MPI_Finalize();
    return 0;
}
