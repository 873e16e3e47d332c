/*
 * p2p_wild: wildcard receives.  Every rank (rank 0 included, to itself)
 * sends rank 0 K messages whose payload names their source, tag and
 * sequence number; rank 0 receives them all with MPI_ANY_SOURCE and
 * MPI_ANY_TAG and checks that the status fields match the payload, that
 * Get_count is right, and that each source's messages arrive in order.
 * Then the mixed forms: ANY_SOURCE with a given tag, a given source with
 * ANY_TAG.
 */
#include "mpitest.h"

#define K 25

int
main(int argc, char **argv)
{
    int msg[K][4];
    MPI_Request req[K];
    MPI_Status st;

    t_init(&argc, &argv);

    /* Part 1: all to rank 0, received with both wildcards. */
    for (int k = 0; k < K; k++) {
        msg[k][0] = t_rank;
        msg[k][1] = 100 * t_rank + k;
        msg[k][2] = k;
        msg[k][3] = 1 + k % 4; /* how many ints are sent */
        MPI_OK(MPI_Isend(msg[k], msg[k][3], MPI_INT, 0, msg[k][1],
                         MPI_COMM_WORLD, &req[k]));
    }
    if (t_rank == 0) {
        int *next = calloc((size_t)t_size, sizeof *next);
        for (int n = 0; n < K * t_size; n++) {
            int in[4] = {-1, -1, -1, -1}, count;
            MPI_OK(MPI_Recv(in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                            MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < t_size, "source %d",
                  st.MPI_SOURCE);
            if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= t_size)
                continue;
            int s = st.MPI_SOURCE, k = next[s]++;
            CHECK(in[0] == s, "payload source %d, status %d", in[0], s);
            CHECK(st.MPI_TAG == 100 * s + k, "from %d #%d: tag %d", s, k,
                  st.MPI_TAG);
            CHECK(count == 1 + k % 4, "from %d #%d: count %d", s, k, count);
            if (count >= 2)
                CHECK(in[1] == st.MPI_TAG, "payload tag %d, status %d", in[1],
                      st.MPI_TAG);
            if (count >= 3)
                CHECK(in[2] == k, "from %d: #%d arrived as #%d", s, in[2], k);
        }
        for (int s = 0; s < t_size; s++)
            CHECK(next[s] == K, "from %d: %d messages", s, next[s]);
        free(next);
    }
    MPI_OK(MPI_Waitall(K, req, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Part 2: ANY_SOURCE with a given tag picks only that tag; a given
     * source with ANY_TAG takes that source's messages in order. */
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    int a = 1000 + t_rank, b = 2000 + t_rank, v;
    MPI_Request r2[2];
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &r2[0]));
    MPI_OK(MPI_Isend(&b, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &r2[1]));
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &st));
    CHECK(v == 2000 + left && st.MPI_SOURCE == left && st.MPI_TAG == 8,
          "tag 8: got %d from %d tag %d", v, st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(v == 1000 + left && st.MPI_SOURCE == left && st.MPI_TAG == 7,
          "any tag: got %d from %d tag %d", v, st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));

    /* Part 3: a posted wildcard receive is matched by a later send. */
    MPI_Request rr;
    int got = -1, mine = 31337 + t_rank;
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &rr));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Send(&mine, 1, MPI_INT, right, 42 + t_rank, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&rr, &st));
    CHECK(got == 31337 + left && st.MPI_SOURCE == left &&
              st.MPI_TAG == 42 + left,
          "posted wildcard: got %d from %d tag %d", got, st.MPI_SOURCE,
          st.MPI_TAG);
    return t_finish("p2p_wild");
}
