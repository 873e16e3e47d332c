/* A replicated MPI job whose course depends on arrival order, for the
 * agreement tests: rank 0 takes K messages with MPI_ANY_SOURCE, then K
 * rounds of MPI_Waitany over one receive per sender, printing each
 * choice; then it broadcasts both sequences and every rank prints them.
 * Replicas of rank 0 that chose differently would show up as a printed
 * sequence that is not the broadcast one.  argv: K */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    int rank, size, k = argc > 1 ? atoi(argv[1]) : 40, i, j, v, idx;
    int *order, *first;
    MPI_Request *reqs;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    order = calloc((size_t)k, sizeof *order);
    first = calloc((size_t)k, sizeof *first);
    reqs = calloc((size_t)size, sizeof *reqs);
    if (rank == 0) {
        for (i = 0; i < k * (size - 1); i++) {
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            if (i < k)
                order[i] = st.MPI_SOURCE;
            printf("rank 0 got %d from %d\n", i, st.MPI_SOURCE);
            fflush(stdout);
            usleep(2000);
        }
        for (i = 0; i < k; i++) {
            int vals[64];

            for (j = 1; j < size && j < 64; j++)
                MPI_Irecv(&vals[j], 1, MPI_INT, j, 2, MPI_COMM_WORLD,
                          &reqs[j - 1]);
            MPI_Waitany(size - 1, reqs, &idx, &st);
            first[i] = idx + 1;
            printf("rank 0 round %d first %d\n", i, idx + 1);
            fflush(stdout);
            MPI_Waitall(size - 1, reqs, MPI_STATUSES_IGNORE);
            usleep(2000);
        }
    } else {
        for (i = 0; i < k; i++) {
            MPI_Send(&i, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            usleep((useconds_t)(500 + 700 * ((i + rank) % 3)));
        }
        for (i = 0; i < k; i++) {
            usleep((useconds_t)(300 * ((i * rank) % 5)));
            MPI_Send(&i, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        }
    }
    MPI_Bcast(order, k, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(first, k, MPI_INT, 0, MPI_COMM_WORLD);
    printf("rank %d order", rank);
    for (i = 0; i < k; i++)
        printf(" %d", order[i]);
    printf("\nrank %d firsts", rank);
    for (i = 0; i < k; i++)
        printf(" %d", first[i]);
    printf("\n");
    MPI_Finalize();
    printf("rank %d done\n", rank);
    free(order);
    free(first);
    free(reqs);
    return 0;
}
