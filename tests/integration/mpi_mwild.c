/* A replicated MPI job whose course depends on arrival order through the
 * calls of issue 15, for the agreement tests: rank 0 takes K messages
 * per sender with wildcard matched probes (MPI_Mprobe, then MPI_Improbe
 * polling, each received with MPI_Mrecv), then K through a persistent
 * MPI_ANY_SOURCE receive (MPI_Recv_init, MPI_Start), printing each
 * source.  A nonblocking allreduce is in flight all along: rank 0
 * starts it first thing, the others only after their first phase, so a
 * failover of rank 0 midway happens inside it.
 * Then it broadcasts both sequences and every rank prints them: replicas
 * of rank 0 that chose differently show up as a printed sequence that is
 * not the broadcast one.  argv: K */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    int rank, size, k = argc > 1 ? atoi(argv[1]) : 40, i, v, one = 1, sum = 0;
    int *probed, *pers, n;
    MPI_Request ar, pr;
    MPI_Message m;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = k * (size - 1);
    probed = calloc((size_t)(n > 0 ? n : 1), sizeof *probed);
    pers = calloc((size_t)(n > 0 ? n : 1), sizeof *pers);
    if (rank == 0) {
        MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ar);
        for (i = 0; i < n; i++) {
            int flag = 0;

            if (i % 2 == 0)
                MPI_Mprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &m, &st);
            else
                while (!flag)
                    MPI_Improbe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &m,
                                &st);
            MPI_Mrecv(&v, 1, MPI_INT, &m, &st);
            probed[i] = st.MPI_SOURCE;
            printf("rank 0 probed %d from %d\n", i, st.MPI_SOURCE);
            fflush(stdout);
            usleep(2000);
        }
        MPI_Recv_init(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &pr);
        for (i = 0; i < n; i++) {
            MPI_Start(&pr);
            MPI_Wait(&pr, &st);
            pers[i] = st.MPI_SOURCE;
            printf("rank 0 persistent %d from %d\n", i, st.MPI_SOURCE);
            fflush(stdout);
            usleep(2000);
        }
        MPI_Request_free(&pr);
    } else {
        for (i = 0; i < k; i++) {
            MPI_Send(&i, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            usleep((useconds_t)(500 + 700 * ((i + rank) % 3)));
        }
        MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ar);
        for (i = 0; i < k; i++) {
            usleep((useconds_t)(300 * ((i * rank) % 5)));
            MPI_Send(&i, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        }
    }
    MPI_Wait(&ar, MPI_STATUS_IGNORE);
    MPI_Bcast(probed, n, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(pers, n, MPI_INT, 0, MPI_COMM_WORLD);
    printf("rank %d sum %d\nrank %d probed", rank, sum, rank);
    for (i = 0; i < n; i++)
        printf(" %d", probed[i]);
    printf("\nrank %d persistent", rank);
    for (i = 0; i < n; i++)
        printf(" %d", pers[i]);
    printf("\n");
    MPI_Finalize();
    printf("rank %d done\n", rank);
    free(probed);
    free(pers);
    return 0;
}
