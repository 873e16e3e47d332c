/* A replicated MPI job's workload for the fault tests: STEPS steps, each a
 * ring exchange, an allreduce, a broadcast and a 1 MiB rendezvous
 * transfer (checked whole); every rank prints one line per step.
 * Deterministic, so every replica prints the same.  argv: STEPS
 * [DELAY_MS before MPI_Init] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BIG (1 << 17)

int
main(int argc, char **argv)
{
    int rank, size, steps = argc > 1 ? atoi(argv[1]) : 30, s, i;
    static double big[BIG];
    long sum, v, in, b;

    if (argc > 2)
        usleep((useconds_t)atoi(argv[2]) * 1000);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (s = 0; s < steps; s++) {
        v = (long)rank * 1000 + s;
        MPI_Sendrecv(&v, 1, MPI_LONG, (rank + 1) % size, 1, &in, 1, MPI_LONG,
                     (rank + size - 1) % size, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        b = rank == 0 ? sum * 7 : 0;
        MPI_Bcast(&b, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (size > 1) {
            if (rank == 0) {
                for (i = 0; i < BIG; i++)
                    big[i] = i + s;
                MPI_Send(big, BIG, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
            } else if (rank == 1) {
                MPI_Recv(big, BIG, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                sum += (long)big[BIG - 1];
                /* Every element, not only the last: a line only when
                 * one came wrong (the output is otherwise unchanged). */
                for (i = 0; i < BIG; i++)
                    if (big[i] != i + s) {
                        printf("rank %d step %d element %d differs\n", rank,
                               s, i);
                        break;
                    }
            }
        }
        printf("rank %d step %d sum %ld b %ld\n", rank, s, sum, b);
        fflush(stdout);
        usleep(15000);
    }
    MPI_Finalize();
    printf("rank %d done\n", rank);
    return 0;
}
