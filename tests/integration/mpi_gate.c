/* A job whose ranks talk only after the test lets them: each process,
 * out of MPI_Init, creates DIR/up.RANK, then waits for DIR/go; then
 * every rank sends rank 0 a message of 1 MiB filled with its rank (a
 * connection made now, on demand, and a rendezvous), rank 0 checks each
 * and prints "rank 0: N messages right", creates DIR/talked and waits
 * for DIR/end before MPI_Finalize.  argv: DIR */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEN (1024 * 1024)

static void
touch(const char *dir, const char *name)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((fd = open(path, O_WRONLY | O_CREAT, 0644)) != -1)
        close(fd);
}

/* Wait up to 300 s for DIR/name; 0 once it is there. */
static int
await(const char *dir, const char *name)
{
    char path[4096];
    int i;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (i = 0; i < 30000; i++) {
        if (access(path, F_OK) == 0)
            return 0;
        usleep(10000);
    }
    return -1;
}

int
main(int argc, char **argv)
{
    char up[64];
    unsigned char *buf;
    int rank, size, r, i, right = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || (buf = malloc(LEN)) == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    snprintf(up, sizeof up, "up.%d", rank);
    touch(argv[1], up);
    if (await(argv[1], "go") == -1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank != 0) {
        memset(buf, rank, LEN);
        MPI_Send(buf, LEN, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    } else {
        for (r = 1; r < size; r++) {
            MPI_Recv(buf, LEN, MPI_BYTE, r, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            for (i = 0; i < LEN && buf[i] == (unsigned char)r; i++)
                ;
            right += i == LEN;
        }
        printf("rank 0: %d messages right\n", right);
        fflush(stdout);
        touch(argv[1], "talked");
        if (await(argv[1], "end") == -1)
            MPI_Abort(MPI_COMM_WORLD, 4);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
