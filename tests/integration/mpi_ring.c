/*
 * mpi_ring: every rank passes a token to its right-hand neighbour and
 * takes one from its left, STEPS times (argv[1], default 3), and checks
 * it; then prints "rank R ring ok".  Talks to its two neighbours only:
 * with connections on demand a ring of N ranks opens N connections
 * (test_scale.py counts them).  With argv[2] "test" a rank waits for
 * its token in its own loop of MPI_Test, with "probe" of MPI_Iprobe
 * (then receives it), as programs that poll do (test_mpi_cores.py).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
    int rank, size, s, steps = argc > 1 ? atoi(argv[1]) : 3, bad = 0;
    const char *wait = argc > 2 ? argv[2] : "";
    long token, in;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (s = 0; s < steps; s++) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int flag = 0;
        MPI_Request rq[2];

        token = (long)rank * 1000 + s;
        if (strcmp(wait, "test") == 0) {
            MPI_Irecv(&in, 1, MPI_LONG, left, s, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(&token, 1, MPI_LONG, right, s, MPI_COMM_WORLD, &rq[1]);
            while (!flag)
                MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        } else if (strcmp(wait, "probe") == 0) {
            MPI_Isend(&token, 1, MPI_LONG, right, s, MPI_COMM_WORLD, &rq[1]);
            while (!flag)
                MPI_Iprobe(left, s, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(&in, 1, MPI_LONG, left, s, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        } else
            MPI_Sendrecv(&token, 1, MPI_LONG, right, s, &in, 1, MPI_LONG, left,
                         s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
