/*
 * p2p_large: messages well above the rendezvous threshold (1 MiB and
 * 16 MiB) in both directions at once between partners, with Isend and
 * Irecv, and posted in both orders (receive first, send first) so that
 * neither side's eager/rendezvous choice can deadlock; then a blocking
 * exchange ordered by rank (lower sends first), and a ring where every
 * rank sends and receives 1 MiB at the same time.
 */
#include "mpitest.h"

static void
exchange(size_t n, int partner, int recv_first, int id)
{
    unsigned char *sb = t_malloc(n), *rb = t_malloc(n);
    MPI_Request req[2];
    MPI_Status st[2];
    int count = -1;

    t_fill(sb, n, id + t_rank);
    memset(rb, 0, n);
    if (recv_first) {
        MPI_OK(MPI_Irecv(rb, (int)n, MPI_BYTE, partner, id, MPI_COMM_WORLD,
                         &req[0]));
        MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, partner, id, MPI_COMM_WORLD,
                         &req[1]));
    } else {
        MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, partner, id, MPI_COMM_WORLD,
                         &req[1]));
        MPI_OK(MPI_Irecv(rb, (int)n, MPI_BYTE, partner, id, MPI_COMM_WORLD,
                         &req[0]));
    }
    MPI_OK(MPI_Waitall(2, req, st));
    MPI_Get_count(&st[0], MPI_BYTE, &count);
    CHECK(count == (int)n, "%zu bytes: count %d", n, count);
    long bad = t_verify(rb, n, id + partner);
    CHECK(bad < 0, "%zu bytes (id %d): byte %ld differs", n, id, bad);
    free(sb);
    free(rb);
}

int
main(int argc, char **argv)
{
    const size_t mib = 1 << 20;
    int partner;

    t_init(&argc, &argv);
    partner = t_partner();

    exchange(mib, partner, 1, 1);
    exchange(mib, partner, 0, 2);
    exchange(16 * mib, partner, 1, 3);
    exchange(16 * mib, partner, 0, 4);
    /* Mixed: one side posts its receive first, the other sends first. */
    exchange(16 * mib, partner, t_rank < partner, 5);

    /* Blocking, ordered so that it cannot deadlock. */
    unsigned char *b = t_malloc(16 * mib);
    MPI_Status st;
    if (partner != t_rank) {
        for (int round = 0; round < 2; round++) {
            int sender = (t_rank < partner) == (round == 0);
            if (sender) {
                t_fill(b, 16 * mib, 50 + t_rank);
                MPI_OK(MPI_Send(b, (int)(16 * mib), MPI_BYTE, partner, 6,
                                MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Recv(b, (int)(16 * mib), MPI_BYTE, partner, 6,
                                MPI_COMM_WORLD, &st));
                long bad = t_verify(b, 16 * mib, 50 + partner);
                CHECK(bad < 0, "blocking 16 MiB: byte %ld differs", bad);
            }
        }
    }
    free(b);

    /* Ring: everyone sends 1 MiB right and receives from the left. */
    unsigned char *sb = t_malloc(mib), *rb = t_malloc(mib);
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    t_fill(sb, mib, 70 + t_rank);
    MPI_OK(MPI_Sendrecv(sb, (int)mib, MPI_BYTE, right, 7, rb, (int)mib,
                        MPI_BYTE, left, 7, MPI_COMM_WORLD, &st));
    long bad = t_verify(rb, mib, 70 + left);
    CHECK(bad < 0, "ring 1 MiB: byte %ld differs", bad);
    free(sb);
    free(rb);
    return t_finish("p2p_large");
}
