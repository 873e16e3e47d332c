/*
 * p2p_trunc: a message longer than the receive buffer is an error of
 * class MPI_ERR_TRUNCATE, returned (not fatal) under MPI_ERRORS_RETURN,
 * for Recv and for Irecv + Wait, short and above the rendezvous
 * threshold; the buffer beyond the receive count is not written, and
 * the connection goes on working afterwards.
 */
#include "mpitest.h"

static void
expect_trunc(int rc, const char *what)
{
    int cls = -1;

    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "%s: returned %d (class %d)", what, rc, cls);
}

int
main(int argc, char **argv)
{
    const int big = 1 << 20;
    int partner, rc;
    MPI_Request sreq, rreq;
    MPI_Status st;

    t_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    partner = t_partner();

    /* Short: 10 ints into room for 5. */
    int out[10], in[10];
    for (int i = 0; i < 10; i++) {
        out[i] = t_rank * 100 + i;
        in[i] = -1;
    }
    MPI_OK(MPI_Isend(out, 10, MPI_INT, partner, 1, MPI_COMM_WORLD, &sreq));
    rc = MPI_Recv(in, 5, MPI_INT, partner, 1, MPI_COMM_WORLD, &st);
    expect_trunc(rc, "Recv 10 ints into 5");
    for (int i = 5; i < 10; i++)
        CHECK(in[i] == -1, "in[%d] = %d written beyond the count", i, in[i]);
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* Large: 1 MiB into 512 KiB, with Irecv + Wait. */
    unsigned char *sb = t_malloc((size_t)big), *rb = t_malloc((size_t)big);
    t_fill(sb, (size_t)big, t_rank);
    memset(rb, 0xee, (size_t)big);
    MPI_OK(MPI_Irecv(rb, big / 2, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &rreq));
    MPI_OK(MPI_Isend(sb, big, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &sreq));
    rc = MPI_Wait(&rreq, &st);
    expect_trunc(rc, "Irecv+Wait 1 MiB into 512 KiB");
#ifdef P2PMPI
    /* Ours never writes past the receive buffer (Open MPI 4.1 does, for a
     * truncated rendezvous message). */
    CHECK(rb[big / 2] == 0xee && rb[big - 1] == 0xee,
          "written beyond the receive count");
#endif
    /* The sender's side completes (with or without an error). */
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    /* Large with Recv. */
    MPI_OK(MPI_Isend(sb, big, MPI_BYTE, partner, 3, MPI_COMM_WORLD, &sreq));
    rc = MPI_Recv(rb, 1000, MPI_BYTE, partner, 3, MPI_COMM_WORLD, &st);
    expect_trunc(rc, "Recv 1 MiB into 1000 bytes");
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    /* The pair still talks: a proper message goes through whole. */
    MPI_OK(MPI_Isend(sb, big, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &sreq));
    MPI_OK(MPI_Recv(rb, big, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &st));
    long bad = t_verify(rb, (size_t)big, partner);
    CHECK(bad < 0, "after truncation: byte %ld differs", bad);
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Isend(out, 3, MPI_INT, partner, 5, MPI_COMM_WORLD, &sreq));
    MPI_OK(MPI_Recv(in, 10, MPI_INT, partner, 5, MPI_COMM_WORLD, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 3 && in[2] == partner * 100 + 2, "count %d in[2] %d", count,
          in[2]);
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    free(sb);
    free(rb);
    return t_finish("p2p_trunc");
}
