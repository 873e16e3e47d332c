/*
 * p2p_modes: synchronous sends, Sendrecv, Sendrecv_replace, and
 * MPI_PROC_NULL.
 *  - Issend must not complete before the receiver has matched it: the
 *    sender tests it for a while (false), then sends a "go" message;
 *    the receiver only posts the matching receive after "go".
 *  - Ssend completes once received (short and 1 MiB).
 *  - Sendrecv and Sendrecv_replace shift values around a ring, with a
 *    derived receive type for Sendrecv_replace's buffer (plain ints).
 *  - Send/Recv/Sendrecv with MPI_PROC_NULL return at once; a receive
 *    from it has source MPI_PROC_NULL, tag MPI_ANY_TAG and count 0.
 */
#include "mpitest.h"

#include <time.h>

static void
pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

int
main(int argc, char **argv)
{
    int partner, flag, v, count;
    MPI_Request req;
    MPI_Status st;

    t_init(&argc, &argv);
    partner = t_partner();

    /* Issend is not complete before the matching receive is posted.  The
     * lower rank of a pair (or a lone rank to itself) is the sender; the
     * pair then swaps roles. */
    for (int round = 0; round < 2; round++) {
        int sender = partner == t_rank || ((t_rank < partner) == (round == 0));
        int receiver = partner == t_rank || !sender;
        int data = 4242 + t_rank, go = 1, gin;
        MPI_Request goreq;

        if (sender) {
            MPI_OK(MPI_Issend(&data, 1, MPI_INT, partner, 10, MPI_COMM_WORLD,
                              &req));
            for (int i = 0; i < 20; i++) {
                MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "Issend completed before the receive (try %d)", i);
                if (flag)
                    break;
                pause_ms(5);
            }
            MPI_OK(MPI_Isend(&go, 1, MPI_INT, partner, 11, MPI_COMM_WORLD,
                             &goreq));
        }
        if (receiver) {
            MPI_OK(MPI_Recv(&gin, 1, MPI_INT, partner, 11, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, partner, 10, MPI_COMM_WORLD, &st));
            CHECK(v == 4242 + partner, "Issend data %d", v);
        }
        if (sender) {
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&goreq, MPI_STATUS_IGNORE));
        }
    }

    /* Ssend, short and long, matched by a posted receive. */
    size_t n = 1 << 20;
    unsigned char *sb = t_malloc(n), *rb = t_malloc(n);
    t_fill(sb, n, 9 + t_rank);
    MPI_OK(MPI_Irecv(rb, (int)n, MPI_BYTE, partner, 12, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Ssend(sb, (int)n, MPI_BYTE, partner, 12, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(t_verify(rb, n, 9 + partner) < 0, "Ssend 1 MiB data");
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, partner, 13, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Ssend(&t_rank, 1, MPI_INT, partner, 13, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(v == partner, "Ssend short: %d", v);
    free(sb);
    free(rb);

    /* Sendrecv around the ring, both directions. */
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    int out[3] = {t_rank, t_rank * 2, t_rank * 3}, in[3] = {-1, -1, -1};
    MPI_OK(MPI_Sendrecv(out, 3, MPI_INT, right, 20, in, 3, MPI_INT, left, 20,
                        MPI_COMM_WORLD, &st));
    CHECK(in[0] == left && in[2] == 3 * left, "Sendrecv: %d %d", in[0], in[2]);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 20, "Sendrecv status %d %d",
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Sendrecv(out, 2, MPI_INT, left, 21, in, 3, MPI_INT, right, 21,
                        MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(in[1] == 2 * right && count == 2, "Sendrecv left: %d count %d", in[1],
          count);

    /* Sendrecv_replace: the value goes all the way round the ring. */
    int ring[4] = {t_rank, -t_rank, 7, 100 + t_rank};
    for (int s = 0; s < t_size; s++)
        MPI_OK(MPI_Sendrecv_replace(ring, 4, MPI_INT, right, 22, left, 22,
                                    MPI_COMM_WORLD, &st));
    CHECK(ring[0] == t_rank && ring[3] == 100 + t_rank && ring[2] == 7,
          "Sendrecv_replace round trip: %d %d", ring[0], ring[3]);
    MPI_OK(MPI_Sendrecv_replace(ring, 4, MPI_INT, right, 23, left, 23,
                                MPI_COMM_WORLD, &st));
    CHECK(ring[0] == left && ring[1] == -left, "Sendrecv_replace shift: %d",
          ring[0]);
    /* With a vector type: every other int of 8 moves. */
    MPI_Datatype vec;
    int vb[8];
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    for (int i = 0; i < 8; i++)
        vb[i] = 1000 * t_rank + i;
    MPI_OK(MPI_Sendrecv_replace(vb, 1, vec, right, 24, left, 24, MPI_COMM_WORLD,
                                &st));
    for (int i = 0; i < 8; i++) {
        int want = (i % 2 == 0 ? 1000 * left : 1000 * t_rank) + i;
        CHECK(vb[i] == want, "Sendrecv_replace vector [%d] %d want %d", i,
              vb[i], want);
    }
    MPI_OK(MPI_Type_free(&vec));

    /* MPI_PROC_NULL. */
    v = 77;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(v == 77, "Recv from PROC_NULL wrote %d", v);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
              count == 0,
          "PROC_NULL status: source %d tag %d count %d", st.MPI_SOURCE,
          st.MPI_TAG, count);
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Irecv PROC_NULL source %d",
          st.MPI_SOURCE);
    /* A non-periodic shift: the ends talk to PROC_NULL. */
    int up = t_rank + 1 < t_size ? t_rank + 1 : MPI_PROC_NULL;
    int down = t_rank > 0 ? t_rank - 1 : MPI_PROC_NULL;
    v = -5;
    MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, up, 30, &v, 1, MPI_INT, down, 30,
                        MPI_COMM_WORLD, &st));
    CHECK(v == (t_rank > 0 ? t_rank - 1 : -5), "shift: got %d", v);
    CHECK(st.MPI_SOURCE == down, "shift: source %d", st.MPI_SOURCE);
    return t_finish("p2p_modes");
}
