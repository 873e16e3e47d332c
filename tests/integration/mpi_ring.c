/*
 * mpi_ring: every rank passes a token to its right-hand neighbour and
 * takes one from its left, STEPS times (argv[1], default 3), and checks
 * it; then prints "rank R ring ok".  Talks to its two neighbours only:
 * with connections on demand a ring of N ranks opens N connections
 * (test_scale.py counts them).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
    int rank, size, s, steps = argc > 1 ? atoi(argv[1]) : 3, bad = 0;
    long token, in;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (s = 0; s < steps; s++) {
        token = (long)rank * 1000 + s;
        MPI_Sendrecv(&token, 1, MPI_LONG, (rank + 1) % size, s, &in, 1,
                     MPI_LONG, (rank + size - 1) % size, s, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (in != (long)((rank + size - 1) % size) * 1000 + s)
            bad++;
    }
    if (bad == 0)
        printf("rank %d ring ok\n", rank);
    else
        printf("rank %d ring: %d bad tokens\n", rank, bad);
    MPI_Finalize();
    return bad != 0;
}
