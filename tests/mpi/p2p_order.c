/*
 * p2p_order: messages between a pair of ranks are not overtaken.  Each
 * rank sends its partner (itself for an odd size's last rank) many
 * messages of mixed sizes, from empty to above the rendezvous threshold,
 * under three tags, all at once with Isend; the partner receives them
 * with MPI_ANY_TAG and must see them in sending order, with the right
 * tag, length and contents.  A second round posts all the receives
 * first (by tag, so matching order within a tag is what is checked).
 */
#include "mpitest.h"

#define NMSG 120

static const int sizes[] = {0, 1, 7, 64, 1000, 4096, 65536, 300000, 3};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int
msg_size(int i)
{
    return sizes[i % NSIZES];
}

int
main(int argc, char **argv)
{
    MPI_Request sreq[NMSG], rreq[NMSG];
    unsigned char *sbuf[NMSG], *rbuf[NMSG];
    MPI_Status st;
    int partner, count;
    size_t maxsz = 300000;

    t_init(&argc, &argv);
    partner = t_partner();

    /* Round 1: sends first, receives with MPI_ANY_TAG in order. */
    for (int i = 0; i < NMSG; i++) {
        sbuf[i] = t_malloc((size_t)msg_size(i));
        t_fill(sbuf[i], (size_t)msg_size(i), i + t_rank * 1000);
        MPI_OK(MPI_Isend(sbuf[i], msg_size(i), MPI_BYTE, partner, i % 3,
                         MPI_COMM_WORLD, &sreq[i]));
    }
    unsigned char *r = t_malloc(maxsz);
    for (int i = 0; i < NMSG; i++) {
        MPI_OK(MPI_Recv(r, (int)maxsz, MPI_BYTE, partner, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(st.MPI_TAG == i % 3, "message %d: tag %d", i, st.MPI_TAG);
        CHECK(st.MPI_SOURCE == partner, "message %d: source %d", i,
              st.MPI_SOURCE);
        CHECK(count == msg_size(i), "message %d: %d bytes, expected %d", i,
              count, msg_size(i));
        if (count == msg_size(i)) {
            long bad = t_verify(r, (size_t)count, i + partner * 1000);
            CHECK(bad < 0, "message %d: byte %ld differs", i, bad);
        }
    }
    MPI_OK(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    free(r);

    /* Round 2: receives posted first (per tag, in order), then sends. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < NMSG; i++) {
        rbuf[i] = t_malloc(maxsz);
        MPI_OK(MPI_Irecv(rbuf[i], (int)maxsz, MPI_BYTE, partner, i % 3,
                         MPI_COMM_WORLD, &rreq[i]));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < NMSG; i++)
        MPI_OK(MPI_Isend(sbuf[i], msg_size(i), MPI_BYTE, partner, i % 3,
                         MPI_COMM_WORLD, &sreq[i]));
    for (int i = 0; i < NMSG; i++) {
        MPI_OK(MPI_Wait(&rreq[i], &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(st.MPI_TAG == i % 3, "posted %d: tag %d", i, st.MPI_TAG);
        CHECK(count == msg_size(i), "posted %d: %d bytes, expected %d", i,
              count, msg_size(i));
        if (count == msg_size(i)) {
            long bad = t_verify(rbuf[i], (size_t)count, i + partner * 1000);
            CHECK(bad < 0, "posted %d: byte %ld differs", i, bad);
        }
        free(rbuf[i]);
    }
    MPI_OK(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++)
        free(sbuf[i]);

    /* Round 3: every rank to every rank, small messages with one tag,
     * received from each source in turn. */
    int per = 20, *out = t_malloc(sizeof(int) * (size_t)(per * t_size));
    MPI_Request *reqs = t_malloc(sizeof *reqs * (size_t)(per * t_size));
    for (int d = 0; d < t_size; d++)
        for (int k = 0; k < per; k++) {
            out[d * per + k] = t_rank * 10000 + k;
            MPI_OK(MPI_Isend(&out[d * per + k], 1, MPI_INT, d, 5,
                             MPI_COMM_WORLD, &reqs[d * per + k]));
        }
    for (int s = 0; s < t_size; s++)
        for (int k = 0; k < per; k++) {
            int v = -1;
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, s, 5, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            CHECK(v == s * 10000 + k, "from %d #%d: got %d", s, k, v);
        }
    MPI_OK(MPI_Waitall(per * t_size, reqs, MPI_STATUSES_IGNORE));
    free(out);
    free(reqs);
    return t_finish("p2p_order");
}
