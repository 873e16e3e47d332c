/* A replicated MPI job whose rank 0 floods its standard output, for the
 * output tests: after DELAY_MS and, when GATE is given, once the file
 * GATE exists (a start the test controls; each process, out of MPI_Init,
 * first creates GATE.up.PID to say so), rank 0 prints LINES lines of 97
 * bytes (rank 1 one line in a hundred), with a barrier every 20,000
 * lines; then every rank prints "rank N done".  Deterministic, so every
 * replica prints the same.  argv: LINES [DELAY_MS [GATE]] */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    static const char pad[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                              "VWXYZabcdefghijklmnopqrstuvwxy";
    int rank, size, i, lines = argc > 1 ? atoi(argv[1]) : 200000;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2)
        usleep((useconds_t)atoi(argv[2]) * 1000);
    if (argc > 3) {
        char up[4096];
        int fd;

        snprintf(up, sizeof up, "%s.up.%ld", argv[3], (long)getpid());
        if ((fd = open(up, O_WRONLY | O_CREAT, 0644)) < 0) {
            perror(up);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
        while (access(argv[3], F_OK) != 0)
            usleep(10000);
    }
    for (i = 0; i < lines; i++) {
        if (rank == 0 || i % 100 == 0)
            printf("rank %d line %07d %s\n", rank, i, pad);
        if (i % 20000 == 19999)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d done\n", rank);
    MPI_Finalize();
    return 0;
}
