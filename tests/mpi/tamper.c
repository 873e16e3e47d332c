/*
 * tamper: rank 0 sends rank 1 one rendezvous payload of several sealed
 * frames, and the test switch P2P_TEST_CORRUPT (corrupt.sh) damages one
 * frame in the middle of it on the wire.  Rank 1 receives with
 * MPI_ERRORS_RETURN into a buffer filled with TAMPER_UNTOUCHED, and
 * checks what the refusal left there: a prefix of the right bytes (the
 * frames before the damaged one, each verified), then zeros (the damaged
 * frame, opened in place and wiped when its tag failed), then untouched
 * bytes to the end (nothing after the damaged frame was delivered, not
 * even ciphertext).  It prints "tamper-check: ok ..." when so, and exits
 * 1 when the receive failed (it must); rank 0 exits 0.  Not run alone: with encryption
 * off or no switch the receive succeeds and it exits 0 (corrupt.sh then
 * fails the test).
 */
#include "mpitest.h"

#define TAMPER_BYTES (4 * 1024 * 1024 + 1)
#define TAMPER_UNTOUCHED 0xee

/* The payload's bytes: never 0 and never TAMPER_UNTOUCHED. */
static unsigned char
pattern(size_t i)
{
    return (unsigned char)(1 + (i * 13) % 200);
}

int
main(int argc, char **argv)
{
    size_t i, n = TAMPER_BYTES, good, zero;
    unsigned char *b;
    int rc = MPI_SUCCESS;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (t_size != 2 || (b = malloc(n)) == NULL) {
        fprintf(stderr, "tamper: needs 2 ranks and %zu bytes\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    if (t_rank == 0) {
        for (i = 0; i < n; i++)
            b[i] = pattern(i);
        /* It may see its connection end or not: rank 1 decides the
         * exit status (an early failure here would have the job stopped
         * before rank 1 reports). */
        (void)MPI_Send(b, (int)n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    } else {
        memset(b, TAMPER_UNTOUCHED, n);
        rc = MPI_Recv(b, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
        for (good = 0; good < n && b[good] == pattern(good); good++)
            ;
        for (zero = good; zero < n && b[zero] == 0; zero++)
            ;
        for (i = zero; i < n && b[i] == TAMPER_UNTOUCHED; i++)
            ;
        if (rc != MPI_SUCCESS && good > 0 && zero > good && zero < n &&
            i == n)
            printf("tamper-check: ok (%zu bytes verified, %zu wiped, %zu "
                   "untouched)\n",
                   good, zero - good, n - zero);
        else
            printf("tamper-check: FAIL (receive %s; %zu bytes right, then "
                   "%zu zero, then a wrong byte at %zu of %zu)\n",
                   rc == MPI_SUCCESS ? "succeeded" : "failed", good,
                   zero - good, i, n);
        fflush(stdout);
    }
    free(b);
    MPI_Finalize();
    return rc == MPI_SUCCESS ? 0 : 1;
}
