/*
 * p2p_stream: windows of rendezvous messages, as bandwidth benchmarks
 * send them, where the transport splits and batches its writes (a lone
 * payload in 512 KiB sendmsg pieces, a stream in flushes of at most
 * 1 MiB that then read what came: docs/mpi.md, "Large messages over
 * TCP"): sizes just around those bounds, both directions at once, one
 * receive of the window truncated (MPI_ERR_TRUNCATE in its status, the
 * bytes it holds right, the rest of the window intact; whether bytes
 * past its count stay untouched is p2p_trunc's: Open MPI writes there
 * at this size, so its buffer has room for the whole message), a one-way stream of same-tag messages that must match
 * in order, a ping-pong of a payload of several pieces, and eager
 * messages piled up unread (the receive buffer's reads end mid-frame).
 */
#include "mpitest.h"

#define WIN 12

static const size_t sizes[WIN] = {
    (512 << 10) - 1, 512 << 10,       (512 << 10) + 1, (1 << 20) + 3,
    (1 << 20) - 5,   (5 << 19) + 7,   (64 << 10) + 1,  200 << 10,
    (1 << 20) + 3,   (2 << 20) + 513, 3,               (512 << 10) + 9};
#define TRUNC 5          /* this receive gets room for only ... */
#define TRUNC_ROOM 700001 /* ... this many bytes */

/* Both partners send a window to each other at once. */
static void
both_ways(int partner, int round)
{
    unsigned char *sb[WIN], *rb[WIN];
    MPI_Request req[2 * WIN];
    MPI_Status st[2 * WIN];
    int rc, cls, count;

    for (int i = 0; i < WIN; i++) {
        sb[i] = t_malloc(sizes[i]);
        rb[i] = t_malloc(sizes[i]);
        t_fill(sb[i], sizes[i], 1000 * round + 10 * i + t_rank);
        memset(rb[i], 0xa5, sizes[i]);
    }
    for (int i = 0; i < WIN; i++)
        MPI_OK(MPI_Irecv(rb[i],
                         (int)(i == TRUNC ? TRUNC_ROOM : sizes[i]), MPI_BYTE,
                         partner, i, MPI_COMM_WORLD, &req[i]));
    for (int i = 0; i < WIN; i++)
        MPI_OK(MPI_Isend(sb[i], (int)sizes[i], MPI_BYTE, partner, i,
                         MPI_COMM_WORLD, &req[WIN + i]));
    rc = MPI_Waitall(2 * WIN, req, st);
    CHECK(rc == MPI_ERR_IN_STATUS, "round %d: Waitall returned %d", round,
          rc);
    /* Those still pending when the error was seen (Open MPI stops there)
     * are waited for now. */
    for (int i = 0; rc == MPI_ERR_IN_STATUS && i < 2 * WIN; i++)
        if (st[i].MPI_ERROR == MPI_ERR_PENDING) {
            int e = MPI_Wait(&req[i], &st[i]);

            st[i].MPI_ERROR = e; /* Wait leaves the field as it was */
        }
    for (int i = 0; i < WIN; i++) {
        int m = 1000 * round + 10 * i + partner;
        long bad;

        if (i == TRUNC) {
            cls = -1;
            MPI_Error_class(st[i].MPI_ERROR, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE,
                  "round %d: truncated receive's status class %d", round,
                  cls);
            bad = t_verify(rb[i], TRUNC_ROOM, m);
            CHECK(bad < 0, "round %d: truncated receive, byte %ld differs",
                  round, bad);
        } else {
            CHECK(st[i].MPI_ERROR == MPI_SUCCESS,
                  "round %d: receive %d status %d", round, i,
                  st[i].MPI_ERROR);
            MPI_Get_count(&st[i], MPI_BYTE, &count);
            CHECK(count == (int)sizes[i], "round %d: receive %d count %d",
                  round, i, count);
            bad = t_verify(rb[i], sizes[i], m);
            CHECK(bad < 0, "round %d: receive %d (%zu bytes), byte %ld "
                           "differs",
                  round, i, sizes[i], bad);
        }
        CHECK(st[WIN + i].MPI_ERROR == MPI_SUCCESS,
              "round %d: send %d status %d", round, i,
              st[WIN + i].MPI_ERROR);
    }
    for (int i = 0; i < WIN; i++) {
        free(sb[i]);
        free(rb[i]);
    }
}

/* The lower rank streams same-tag messages; they match in order. */
static void
one_way(int partner)
{
    const size_t n = (1 << 20) + 3;
    unsigned char *b[WIN];
    MPI_Request req[WIN];
    int sender = t_rank < partner;

    for (int i = 0; i < WIN; i++) {
        b[i] = t_malloc(n);
        if (sender)
            t_fill(b[i], n, 500 + i);
        else
            memset(b[i], 0, n);
    }
    for (int i = 0; i < WIN; i++) {
        if (sender)
            MPI_OK(MPI_Isend(b[i], (int)n, MPI_BYTE, partner, 9,
                             MPI_COMM_WORLD, &req[i]));
        else
            MPI_OK(MPI_Irecv(b[i], (int)n, MPI_BYTE, partner, 9,
                             MPI_COMM_WORLD, &req[i]));
    }
    MPI_OK(MPI_Waitall(WIN, req, MPI_STATUSES_IGNORE));
    for (int i = 0; !sender && i < WIN; i++) {
        long bad = t_verify(b[i], n, 500 + i);
        CHECK(bad < 0, "one way: message %d, byte %ld differs", i, bad);
    }
    for (int i = 0; i < WIN; i++)
        free(b[i]);
}

/* Eager messages piled up unread in the receiver's socket (sent before
 * it looks: a barrier behind them), of sizes that cut frames at the ends
 * of its reads; they must arrive whole and in order. */
static void
eager_pile(int partner)
{
    static const size_t psz[5] = {64 << 10, (64 << 10) - 1, 1000, 3, 40000};
    enum { NP = 40 };
    unsigned char *b[NP];
    MPI_Request req[NP];
    int sender = t_rank < partner;

    if (partner == t_rank) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    for (int i = 0; i < NP; i++) {
        b[i] = t_malloc(psz[i % 5]);
        if (sender)
            t_fill(b[i], psz[i % 5], 300 + i);
        else
            memset(b[i], 0, psz[i % 5]);
    }
    /* (Isends may wait for their receives, as Open MPI's 64 KiB do: the
     * sender waits for them only after the barrier.) */
    if (sender)
        for (int i = 0; i < NP; i++)
            MPI_OK(MPI_Isend(b[i], (int)psz[i % 5], MPI_BYTE, partner, 12,
                             MPI_COMM_WORLD, &req[i]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (sender)
        MPI_OK(MPI_Waitall(NP, req, MPI_STATUSES_IGNORE));
    else {
        for (int i = 0; i < NP; i++)
            MPI_OK(MPI_Irecv(b[i], (int)psz[i % 5], MPI_BYTE, partner, 12,
                             MPI_COMM_WORLD, &req[i]));
        MPI_OK(MPI_Waitall(NP, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NP; i++) {
            long bad = t_verify(b[i], psz[i % 5], 300 + i);
            CHECK(bad < 0, "eager pile: message %d, byte %ld differs", i,
                  bad);
        }
    }
    for (int i = 0; i < NP; i++)
        free(b[i]);
}

/* A payload of several pieces, back and forth. */
static void
ping_pong(int partner)
{
    const size_t n = (3 << 20) + 1;
    unsigned char *b = t_malloc(n);
    int first = t_rank < partner;

    for (int i = 0; i < 3; i++) {
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == first) {
                t_fill(b, n, 800 + 2 * i + turn);
                MPI_OK(MPI_Send(b, (int)n, MPI_BYTE, partner, 11,
                                MPI_COMM_WORLD));
            } else {
                memset(b, 0, n);
                MPI_OK(MPI_Recv(b, (int)n, MPI_BYTE, partner, 11,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                long bad = t_verify(b, n, 800 + 2 * i + turn);
                CHECK(bad < 0, "ping-pong %d: byte %ld differs", i, bad);
            }
        }
    }
    free(b);
}

int
main(int argc, char **argv)
{
    int partner;

    t_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    partner = t_partner();
    for (int round = 0; round < 2; round++)
        both_ways(partner, round);
    if (partner != t_rank) {
        one_way(partner);
        ping_pong(partner);
    }
    eager_pile(partner); /* everyone: it has a barrier */
    return t_finish("p2p_stream");
}
