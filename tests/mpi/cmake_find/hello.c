/* The smallest MPI program that proves the ranks talk: every rank adds
 * one, every rank prints the sum. */
#include <mpi.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
    int one = 1, sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("sum %d\n", sum);
    MPI_Finalize();
    return 0;
}
