/*
 * p2p_probe: Probe and Iprobe.  Each rank sends its partner messages of
 * lengths only the sender knows (some above the rendezvous threshold);
 * the receiver probes (with and without wildcards), sizes its buffer
 * from Get_count, and receives exactly that message.  Iprobe finds
 * nothing when nothing was sent (collective traffic stays invisible),
 * Get_count is MPI_UNDEFINED for a length that is not a whole number of
 * elements, and Get_elements counts basic elements of a derived type.
 */
#include "mpitest.h"

#define NMSG 12

static int
msg_len(int sender, int i)
{
    static const int lens[] = {0, 1, 13, 1000, 40000, 300000};

    return lens[(i + sender) % 6];
}

int
main(int argc, char **argv)
{
    int partner, flag, count;
    MPI_Request req[NMSG];
    MPI_Status st;
    int *bufs[NMSG];

    t_init(&argc, &argv);
    partner = t_partner();

    /* Nothing pending: Iprobe says no, even with collectives going on. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag,
          "Iprobe found a message (source %d tag %d) where none was "
          "sent",
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    for (int i = 0; i < NMSG; i++) {
        int n = msg_len(t_rank, i);
        bufs[i] = t_malloc(sizeof(int) * (size_t)n);
        for (int k = 0; k < n; k++)
            bufs[i][k] = t_rank * 1000003 + i * 1009 + k;
        MPI_OK(MPI_Isend(bufs[i], n, MPI_INT, partner, 100 + i, MPI_COMM_WORLD,
                         &req[i]));
    }
    for (int i = 0; i < NMSG; i++) {
        int want = msg_len(partner, i);
        if (i % 3 == 0) {
            MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        } else if (i % 3 == 1) {
            MPI_OK(MPI_Probe(partner, 100 + i, MPI_COMM_WORLD, &st));
        } else {
            do {
                MPI_OK(MPI_Iprobe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                                  &st));
            } while (!flag);
        }
        CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 100 + i,
              "probe %d: source %d tag %d", i, st.MPI_SOURCE, st.MPI_TAG);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == want, "probe %d: count %d, expected %d", i, count, want);
        /* Probing again sees the same message. */
        MPI_Status st2;
        MPI_OK(MPI_Probe(st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        int count2 = -1;
        MPI_Get_count(&st2, MPI_INT, &count2);
        CHECK(count2 == count, "second probe %d: count %d vs %d", i, count2,
              count);
        if (count < 0 || count > 1000000)
            continue;
        int *in = t_malloc(sizeof(int) * (size_t)count);
        MPI_OK(MPI_Recv(in, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG,
                        MPI_COMM_WORLD, &st2));
        for (int k = 0; k < count; k++)
            if (in[k] != partner * 1000003 + i * 1009 + k) {
                CHECK(0, "message %d: [%d] = %d", i, k, in[k]);
                break;
            }
        free(in);
    }
    MPI_OK(MPI_Waitall(NMSG, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++)
        free(bufs[i]);

    /* 10 bytes are not a whole number of ints; vector elements. */
    char bytes[10] = {0};
    MPI_OK(
        MPI_Isend(bytes, 10, MPI_BYTE, partner, 200, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Probe(partner, 200, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == MPI_UNDEFINED, "Get_count of 10 bytes as int: %d", count);
    MPI_Get_count(&st, MPI_SHORT, &count);
    CHECK(count == 5, "Get_count of 10 bytes as short: %d", count);
    MPI_OK(MPI_Recv(bytes, 10, MPI_BYTE, partner, 200, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));

    MPI_Datatype vec;
    int vals[16] = {0}; /* 2 elements span 14 ints */
    MPI_OK(MPI_Type_vector(3, 1, 3, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Isend(vals, 5, MPI_INT, partner, 201, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Recv(vals, 2, vec, partner, 201, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, vec, &count);
    CHECK(count == MPI_UNDEFINED, "Get_count of 5 ints as 3-int vectors: %d",
          count);
    MPI_Get_elements(&st, vec, &count);
    CHECK(count == 5, "Get_elements of 5 ints: %d", count);
    MPI_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Type_free(&vec));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "Iprobe found a message at the end");
    return t_finish("p2p_probe");
}
