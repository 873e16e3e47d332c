/*
 * cancel_send: MPI_Cancel of sends (MPI 3.1 3.8.4).  Either the
 * cancellation succeeds, and no part of the message is ever received,
 * or the send completes as it would have, and the message is received;
 * never both, never neither, and MPI_Wait after MPI_Cancel returns
 * whether or not a receive comes.
 *
 * Rank 0 sends to the last rank (to itself in a job of one): standard,
 * synchronous and buffered sends and their persistent forms, of 1 B to
 * 1 MiB (eager,
 * rendezvous, single copy on shared memory), cancelled before any
 * receive is posted; then it tells the receiver how many bytes to
 * expect (0: cancelled), and the receiver checks that a cancelled
 * message is gone (a probe finds the next one, not it) and that one not
 * cancelled arrives whole.  Also: a cancel after the receive matched
 * (not cancelled, data intact), after a matched probe claimed the
 * message, the first of two messages of one tag cancelled (the second
 * is received in its place), a cancel long after the send (the library
 * may have forgotten it: either outcome, consistently), and a buffered
 * send's bytes given back when it is cancelled.
 *
 * On p2pmpi without replicas every unmatched send must be cancelled.
 * With replicas an eager send stays sent and MPI_Cancel of one in flight
 * is MPI_ERR_UNSUPPORTED_OPERATION (docs/mpi.md): the message is
 * received; Open MPI's TCP path does
 * not cancel sends either (its cancel succeeds and the send completes),
 * so there the receiver is told to receive before the sender waits.
 */
#include "mpitest.h"

#define CTRL 1000
#define NSIZES 5
static const int sizes[NSIZES] = {1, 100, 10000, 60000, 1 << 20};

static int dest, must_cancel;
static unsigned char *sbuf, *rbuf;

enum kind {
    K_ISEND,
    K_ISSEND,
    K_IBSEND,
    K_SEND_INIT,
    K_SSEND_INIT,
    K_BSEND_INIT,
    K_NKINDS
};
static const char *const kname[K_NKINDS] = {
    "Isend", "Issend", "Ibsend", "Send_init", "Ssend_init", "Bsend_init"};

static int
persistent(enum kind k)
{
    return k >= K_SEND_INIT;
}

/* The receiver: how many bytes message tag m brings (0: cancelled), and
 * then it, or that it is gone.  Returns the count it was told. */
static int
receive_told(int tag, int m, int next_tag)
{
    MPI_Status st;
    int n, flag, count, next;

    MPI_OK(MPI_Recv(&n, 1, MPI_INT, 0, CTRL, MPI_COMM_WORLD, &st));
    if (n > 0) {
        MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == n && t_verify(rbuf, (size_t)n, m) < 0,
              "message %d: %d bytes, told %d, or its bytes differ", m, count,
              n);
    }
    /* The sender's next message is here; a cancelled one, sent before
     * it on the same path, must not be. */
    MPI_OK(MPI_Probe(0, next_tag, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "message %d: still there after it was %s", m,
          n > 0 ? "received" : "cancelled");
    MPI_OK(MPI_Recv(&next, 1, MPI_INT, 0, next_tag, MPI_COMM_WORLD, &st));
    return n;
}

/* The receiver of a cancelled buffered or persistent send: the buffered
 * send made with the bytes it gave back, the persistent send started
 * again. */
static void
receive_extras(enum kind k, int n, int tag, int m)
{
    MPI_Status st;

    if (k == K_IBSEND) {
        MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, 0, tag + 2, MPI_COMM_WORLD, &st));
        CHECK(t_verify(rbuf, (size_t)n, m) < 0, "Ibsend again: bytes differ");
    }
    if (persistent(k)) {
        if (t_rank != 0)
            MPI_OK(MPI_Send(&n, 1, MPI_INT, 0, tag + 3, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
        CHECK(t_verify(rbuf, (size_t)n, m) < 0, "Start again: bytes differ");
    }
}

/* The sender's part of one case: start the send of n bytes, cancel it,
 * tell the receiver what to expect, and (cancelled) use what the cancel
 * gave back. */
static void
send_cancel(enum kind k, int n, int tag, int m)
{
    MPI_Request req;
    MPI_Status st;
    void *bbuf = NULL;
    int rc, flag = 0, told, zero = 0, size = 0;

    t_fill(sbuf, (size_t)n, m);
    switch (k) {
    case K_ISEND:
        MPI_OK(MPI_Isend(sbuf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req));
        break;
    case K_ISSEND:
        MPI_OK(MPI_Issend(sbuf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req));
        break;
    case K_IBSEND:
        size = n + MPI_BSEND_OVERHEAD;
        bbuf = t_malloc((size_t)size);
        MPI_OK(MPI_Buffer_attach(bbuf, size));
        MPI_OK(MPI_Ibsend(sbuf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req));
        break;
    case K_SEND_INIT:
        MPI_OK(MPI_Send_init(sbuf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                             &req));
        break;
    case K_SSEND_INIT:
        MPI_OK(MPI_Ssend_init(sbuf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                              &req));
        break;
    default:
        /* Room for one message: starting it again after the cancel
         * needs the bytes the cancel gave back. */
        size = n + MPI_BSEND_OVERHEAD;
        bbuf = t_malloc((size_t)size);
        MPI_OK(MPI_Buffer_attach(bbuf, size));
        MPI_OK(MPI_Bsend_init(sbuf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                              &req));
        break;
    }
    if (persistent(k))
        MPI_OK(MPI_Start(&req));
    rc = MPI_Cancel(&req);
    if (!must_cancel) {
        /* Where sends are not cancelled, the receiver must take it
         * before the send can complete. */
#ifdef P2PMPI
        CHECK(rc == MPI_SUCCESS || rc == MPI_ERR_UNSUPPORTED_OPERATION,
              "%s %d B: MPI_Cancel gave %d with replicas", kname[k], n, rc);
#else
        CHECK(rc == MPI_SUCCESS, "%s %d B: MPI_Cancel gave %d", kname[k], n,
              rc);
#endif
        told = n;
        MPI_OK(MPI_Send(&told, 1, MPI_INT, dest, CTRL, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&zero, 1, MPI_INT, dest, tag + 1, MPI_COMM_WORLD));
        if (dest == 0)
            (void)receive_told(tag, m, tag + 1);
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(!flag, "%s %d B: cancelled, and received", kname[k], n);
    } else {
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(rc == MPI_SUCCESS && flag, "%s %d B: not cancelled (rc %d)",
              kname[k], n, rc);
        told = flag ? 0 : n;
        MPI_OK(MPI_Send(&told, 1, MPI_INT, dest, CTRL, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&zero, 1, MPI_INT, dest, tag + 1, MPI_COMM_WORLD));
    }
    /* Alone: the receiver's checks, before the same tag is sent again. */
    if (must_cancel && dest == 0)
        (void)receive_told(tag, m, tag + 1);
    if (k == K_IBSEND) {
        /* Its bytes of the attached buffer are free again. */
        if (flag)
            MPI_OK(MPI_Bsend(sbuf, n, MPI_BYTE, dest, tag + 2,
                             MPI_COMM_WORLD));
        MPI_OK(MPI_Buffer_detach(&bbuf, &size));
        free(bbuf);
    }
    if (persistent(k)) {
        /* Started again and not cancelled: received, once the receiver
         * has looked for the cancelled one (alone: received before the
         * wait, which a synchronous send to ourselves needs). */
        if (flag) {
            if (dest != 0)
                MPI_OK(MPI_Recv(&zero, 1, MPI_INT, dest, tag + 3,
                                MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Start(&req));
            if (dest == 0)
                receive_extras(k, n, tag, m);
            MPI_OK(MPI_Wait(&req, &st));
        }
        MPI_OK(MPI_Request_free(&req));
        if (k == K_BSEND_INIT) {
            MPI_OK(MPI_Buffer_detach(&bbuf, &size));
            free(bbuf);
        }
    }
    if (must_cancel && dest == 0 && flag && !persistent(k))
        receive_extras(k, n, tag, m);
}

/* Cancelled before any receive: every kind and size. */
static void
unmatched(void)
{
    int k, i, tag, m = 0;

    for (k = 0; k < K_NKINDS; k++)
        for (i = 0; i < NSIZES; i++, m++) {
            tag = 10 * m + 10;
            if (t_rank == 0)
                send_cancel((enum kind)k, sizes[i], tag, m);
            else if (t_rank == dest &&
                     receive_told(tag, m, tag + 1) == 0)
                receive_extras((enum kind)k, sizes[i], tag, m);
            MPI_Barrier(MPI_COMM_WORLD);
        }
}

/* A receive matched before the cancel: not cancelled, data whole. */
static void
matched(void)
{
    MPI_Request req;
    MPI_Status st;
    int i, flag, ack = 0, n, m;

    for (i = 0; i < NSIZES; i++) {
        n = sizes[i];
        m = 100 + i;
        if (t_rank == 0) {
            t_fill(sbuf, (size_t)n, m);
            MPI_OK(MPI_Isend(sbuf, n, MPI_BYTE, dest, 7, MPI_COMM_WORLD,
                             &req));
            if (dest == 0)
                MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st));
            else
                MPI_OK(MPI_Recv(&ack, 1, MPI_INT, dest, 8, MPI_COMM_WORLD,
                                &st));
            if (must_cancel)
                MPI_OK(MPI_Cancel(&req));
            MPI_OK(MPI_Wait(&req, &st));
            MPI_OK(MPI_Test_cancelled(&st, &flag));
            CHECK(!flag, "%d B: cancelled after it was received", n);
        }
        if (t_rank == dest && dest != 0) {
            MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Send(&ack, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
        }
        if (t_rank == dest)
            CHECK(t_verify(rbuf, (size_t)n, m) < 0, "%d B: bytes differ", n);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* A matched probe claimed the message: it is the Mrecv's, not the
 * cancel's.  Then two messages of one tag, the first cancelled: the
 * receive gets the second. */
static void
claimed_and_order(void)
{
    MPI_Request req, req2;
    MPI_Message msg;
    MPI_Status st;
    int flag, ack = 0, a = 41, b = 42, got = 0, n = 0;

    if (t_rank == 0) {
        MPI_OK(MPI_Isend(&a, 1, MPI_INT, dest, 20, MPI_COMM_WORLD, &req));
        if (dest == 0)
            MPI_OK(MPI_Mprobe(0, 20, MPI_COMM_WORLD, &msg, &st));
        else
            MPI_OK(MPI_Recv(&ack, 1, MPI_INT, dest, 21, MPI_COMM_WORLD, &st));
        if (must_cancel)
            MPI_OK(MPI_Cancel(&req));
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(!flag, "cancelled after a matched probe claimed it");
        if (dest == 0) {
            MPI_OK(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
            CHECK(got == 41, "claimed message: got %d", got);
        }
    } else if (t_rank == dest) {
        MPI_OK(MPI_Mprobe(0, 20, MPI_COMM_WORLD, &msg, &st));
        MPI_OK(MPI_Send(&ack, 1, MPI_INT, 0, 21, MPI_COMM_WORLD));
        MPI_OK(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
        CHECK(got == 41, "claimed message: got %d", got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!must_cancel)
        return;
    if (t_rank == 0) {
        MPI_OK(MPI_Isend(&a, 1, MPI_INT, dest, 22, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Isend(&b, 1, MPI_INT, dest, 22, MPI_COMM_WORLD, &req2));
        MPI_OK(MPI_Cancel(&req));
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag, "the first of two: not cancelled");
        MPI_OK(MPI_Wait(&req2, &st));
        n = flag ? 1 : 2;
        MPI_OK(MPI_Send(&n, 1, MPI_INT, dest, CTRL, MPI_COMM_WORLD));
    }
    if (t_rank == dest) {
        MPI_OK(MPI_Recv(&n, 1, MPI_INT, 0, CTRL, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, 22, MPI_COMM_WORLD, &st));
        CHECK(got == (n == 1 ? 42 : 41), "first of two cancelled: got %d",
              got);
        if (n == 2)
            MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, 22, MPI_COMM_WORLD, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A cancel long after its send (thousands of sends since): either
 * outcome, but the receiver sees exactly that one. */
static void
late(void)
{
    MPI_Request req;
    MPI_Status st;
    int i, flag = 0, n = 0, x = 77, got = 0;

    if (!must_cancel)
        return;
    if (t_rank == 0) {
        MPI_OK(MPI_Isend(&x, 1, MPI_INT, dest, 30, MPI_COMM_WORLD, &req));
        for (i = 0; i < 6000; i++)
            MPI_OK(MPI_Send(&i, 1, MPI_INT, dest, 31, MPI_COMM_WORLD));
        MPI_OK(MPI_Cancel(&req));
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        n = flag ? 0 : 1;
        MPI_OK(MPI_Send(&n, 1, MPI_INT, dest, CTRL, MPI_COMM_WORLD));
    }
    if (t_rank == dest) {
        for (i = 0; i < 6000; i++) {
            MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, 31, MPI_COMM_WORLD, &st));
            CHECK(got == i, "late: message %d is %d", i, got);
        }
        MPI_OK(MPI_Recv(&n, 1, MPI_INT, 0, CTRL, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Iprobe(0, 30, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == n, "late: %s, but the message is %s",
              n ? "not cancelled" : "cancelled", flag ? "there" : "gone");
        if (flag) {
            MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, &st));
            CHECK(got == 77, "late: got %d", got);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int
main(int argc, char **argv)
{
    int provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    dest = t_size - 1;
#ifdef P2PMPI
    /* Replicas grant at most SERIALIZED, and do not cancel sends. */
    must_cancel = provided == MPI_THREAD_MULTIPLE;
#endif
    sbuf = t_malloc(1 << 20);
    rbuf = t_malloc(1 << 20);
    unmatched();
    matched();
    claimed_and_order();
    late();
    free(sbuf);
    free(rbuf);
    return t_finish("cancel_send");
}
