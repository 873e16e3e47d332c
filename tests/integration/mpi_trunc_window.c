/* Two ranks: rank 0 sends windows of 16 nonblocking messages of SIZE
 * bytes to rank 1, which receives them with the last receive 1 KiB short:
 * that one must end in MPI_ERR_TRUNCATE with the bytes that fit and
 * nothing written past its end, the others whole.  Prints "ok" or what
 * went wrong, then the counts.  argv: SIZE (default 32768).  (Not in the
 * MPI suite: Open MPI 4.1 crashes on it, and that suite runs under Open
 * MPI too.) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 16

int
main(int argc, char **argv)
{
    int rank, n = argc > 1 ? atoi(argv[1]) : 32768, bad = 0, round, w, cls;
    unsigned char *b[WINDOW];
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (w = 0; w < WINDOW; w++)
        b[w] = malloc((size_t)n + 64);
    /* Both ends set up (and probed) before the first window. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (round = 0; round < 4 && rank < 2; round++) {
        for (w = 0; w < WINDOW; w++) {
            if (rank == 0) {
                for (int i = 0; i < n; i++)
                    b[w][i] = (unsigned char)(i * 7 + w + round);
                MPI_Isend(b[w], n, MPI_BYTE, 1, w, MPI_COMM_WORLD, &req[w]);
            } else {
                memset(b[w], 0xee, (size_t)n + 64);
                MPI_Irecv(b[w], w == WINDOW - 1 ? n - 1024 : n, MPI_BYTE, 0, w,
                          MPI_COMM_WORLD, &req[w]);
            }
        }
        MPI_Waitall(WINDOW, req, st);
        for (w = 0; w < WINDOW && rank == 1; w++) {
            int want = w == WINDOW - 1 ? n - 1024 : n;

            MPI_Error_class(st[w].MPI_ERROR, &cls);
            if (w == WINDOW - 1 && cls != MPI_ERR_TRUNCATE) {
                printf("round %d message %d: class %d, not truncated\n",
                       round, w, cls);
                bad++;
            }
            for (int i = 0; i < want; i++)
                if (b[w][i] != (unsigned char)(i * 7 + w + round)) {
                    printf("round %d message %d: byte %d differs\n", round, w,
                           i);
                    bad++;
                    break;
                }
            for (int i = want; i < n + 64; i++)
                if (b[w][i] != 0xee) {
                    printf("round %d message %d: byte %d written past the "
                           "receive\n",
                           round, w, i);
                    bad++;
                    break;
                }
        }
    }
    if (rank == 1)
        printf(bad == 0 ? "ok\n" : "%d wrong\n", bad);
    for (w = 0; w < WINDOW; w++)
        free(b[w]);
    MPI_Finalize();
    return 0;
}
