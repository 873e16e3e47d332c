/*
 * coll_hosts: the collectives that go host by host (docs/mpi.md,
 * "Collectives by host": Barrier, Bcast, Scatter) on communicators whose
 * ranks lie across the hosts in every order: MPI_COMM_WORLD, the world
 * reversed, the even and the odd ranks, each reversed, and every rank
 * but 0.  On each, Bcast and Scatter from every root, of sizes around
 * the algorithms' limits (1 B to 64 KiB and just above), of bytes and of
 * a strided type; then many small Bcasts and Scatters back to back with
 * the root moving, without a barrier between them.  Every element is
 * checked.  Barrier: each rank in turn enters last, watching for 20 ms
 * before it does for a message that another rank sends once it has
 * left; none may come.
 */
#include "mpitest.h"

#include <unistd.h>

static const int sizes[] = {1, 3, 1000, 16384, 16385, 65536, 65537};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static unsigned char
byte_of(int root, int i, int salt)
{
    return (unsigned char)(root * 37 + i * 7 + salt);
}

static void
bcast_bytes(MPI_Comm comm, const char *what)
{
    int rank, size;
    unsigned char *b = malloc(65537);

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int root = 0; root < size; root++)
        for (int s = 0; s < NSIZES; s++) {
            int n = sizes[s], bad = 0;

            for (int i = 0; i < n; i++)
                b[i] = rank == root ? byte_of(root, i, s) : 0;
            MPI_OK(MPI_Bcast(b, n, MPI_BYTE, root, comm));
            for (int i = 0; i < n; i++)
                bad += b[i] != byte_of(root, i, s);
            CHECK(bad == 0, "%s: Bcast of %d bytes from %d: %d wrong", what, n,
                  root, bad);
        }
    free(b);
}

/* Every other int of 2 * count, the gaps left alone. */
static void
bcast_strided(MPI_Comm comm, const char *what)
{
    int rank, size, count = 5000, *b = malloc(2 * 5000 * sizeof *b);
    MPI_Datatype every2;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_OK(MPI_Type_vector(count, 1, 2, MPI_INT, &every2));
    MPI_OK(MPI_Type_commit(&every2));
    for (int root = 0; root < size; root++) {
        int bad = 0;

        for (int i = 0; i < 2 * count; i++)
            b[i] = rank == root || i % 2 ? root * 100000 + i : -1;
        MPI_OK(MPI_Bcast(b, 1, every2, root, comm));
        for (int i = 0; i < 2 * count; i++)
            bad += b[i] != root * 100000 + i;
        CHECK(bad == 0, "%s: strided Bcast from %d: %d wrong", what, root,
              bad);
    }
    MPI_Type_free(&every2);
    free(b);
}

static void
scatter_ints(MPI_Comm comm, const char *what)
{
    static const int blocks[] = {1, 4, 300, 2048, 2049, 5000};
    int rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int root = 0; root < size; root++)
        for (int k = 0; k < 6; k++) {
            int nb = blocks[k], bad = 0;
            int *all = malloc((size_t)nb * size * sizeof *all);
            int *mine = malloc((size_t)nb * sizeof *mine);

            for (int i = 0; i < nb * size; i++)
                all[i] = rank == root ? root * 1000000 + i : -1;
            for (int i = 0; i < nb; i++)
                mine[i] = -1;
            MPI_OK(MPI_Scatter(all, nb, MPI_INT, mine, nb, MPI_INT, root,
                               comm));
            for (int i = 0; i < nb; i++)
                bad += mine[i] != root * 1000000 + rank * nb + i;
            CHECK(bad == 0, "%s: Scatter of %d ints from %d: %d wrong", what,
                  nb, root, bad);
            free(all);
            free(mine);
        }
}

/* Back to back, the root moving: nothing waits between two calls, so a
 * fast root's next message may come before a slow one's last. */
static void
moving_root(MPI_Comm comm, const char *what)
{
    int rank, size, bad = 0;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int k = 0; k < 300; k++) {
        int root = (k * 7) % size, v[2], all[2 * 64], got[2];

        v[0] = rank == root ? k : -1;
        v[1] = rank == root ? -k : -1;
        MPI_OK(MPI_Bcast(v, 2, MPI_INT, root, comm));
        bad += v[0] != k || v[1] != -k;
        for (int i = 0; i < 2 * size && i < 2 * 64; i++)
            all[i] = k * 1000 + i;
        if (size <= 64) {
            MPI_OK(MPI_Scatter(all, 2, MPI_INT, got, 2, MPI_INT, root, comm));
            bad += got[0] != k * 1000 + 2 * rank ||
                   got[1] != k * 1000 + 2 * rank + 1;
        }
    }
    CHECK(bad == 0, "%s: %d wrong of 300 Bcasts and Scatters back to back",
          what, bad);
}

/* Nobody leaves a barrier before everyone has entered it. */
static void
barrier_order(MPI_Comm comm, const char *what)
{
    int rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int late = 0; late < size; late++) {
        if (rank != late) {
            MPI_OK(MPI_Barrier(comm));
            MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, late, 77, comm));
            continue;
        }
        int early = 0;

        /* As many looks whatever the clock says: replicas of a rank
         * (p2prun -r) must make the same calls. */
        for (int k = 0; k < 20 && !early; k++) {
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 77, comm, &early,
                              MPI_STATUS_IGNORE));
            usleep(1000);
        }
        MPI_OK(MPI_Barrier(comm));
        CHECK(!early, "%s: a rank left the barrier before rank %d entered it",
              what, late);
        for (int i = 0; i < size - 1; i++)
            MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 77, comm,
                            MPI_STATUS_IGNORE));
    }
}

static void
all_on(MPI_Comm comm, const char *what)
{
    if (comm == MPI_COMM_NULL)
        return;
    barrier_order(comm, what);
    bcast_bytes(comm, what);
    bcast_strided(comm, what);
    scatter_ints(comm, what);
    moving_root(comm, what);
}

int
main(int argc, char **argv)
{
    MPI_Comm rev, half, half_rev, no0;

    t_init(&argc, &argv);
    all_on(MPI_COMM_WORLD, "world");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -t_rank, &rev));
    all_on(rev, "world reversed");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &half));
    all_on(half, t_rank % 2 ? "odd ranks" : "even ranks");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, -t_rank, &half_rev));
    all_on(half_rev, "a half reversed");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank == 0 ? MPI_UNDEFINED : 0,
                          t_rank, &no0));
    all_on(no0, "all but rank 0");
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    MPI_Comm_free(&half_rev);
    if (no0 != MPI_COMM_NULL)
        MPI_Comm_free(&no0);
    return t_finish("coll_hosts");
}
