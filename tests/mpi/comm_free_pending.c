/*
 * comm_free_pending: a communicator may be freed while point-to-point
 * operations on it are pending (MPI 3.1, 6.4.3: they complete normally,
 * the communicator goes when they are done).  Ranks 0 and 1 leave an
 * Irecv and an Issend pending (eager and rendezvous sizes) on a
 * duplicate of MPI_COMM_WORLD and on an intercommunicator, free it,
 * build other communicators in its place, then let the transfer run;
 * a persistent pair keeps working after the free (of its datatype
 * too); a message found by
 * Mprobe is received with Mrecv after the free.  The data must arrive
 * whole, with the right status.
 */
#include "mpitest.h"

#define BIG 40000 /* ints: above the 64 KiB eager limit */
#define CHURN 6

/* Reuse the freed slot and memory (local: MPI_COMM_SELF). */
static void
churn(MPI_Comm other[CHURN])
{
    for (int i = 0; i < CHURN; i++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &other[i]));
}

static void
unchurn(MPI_Comm other[CHURN])
{
    for (int i = 0; i < CHURN; i++)
        MPI_OK(MPI_Comm_free(&other[i]));
}

/* A communicator on which ranks 0 and 1 talk; *peer is the other's rank
 * in it.  inter: the even ranks and the odd ranks, across. */
static MPI_Comm
make(int inter, int *peer)
{
    MPI_Comm c, half;

    if (!inter) {
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        *peer = 1 - t_rank;
        return c;
    }
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &half));
    MPI_OK(
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - t_rank % 2, 7, &c));
    MPI_OK(MPI_Comm_free(&half));
    *peer = 0; /* world ranks 0 and 1 are each other's remote rank 0 */
    return c;
}

/* Rank recv posts an Irecv, frees the communicator, builds others, then
 * lets the sender go; the sender Issends, frees, builds, waits. */
static void
pending(int inter, int count, int recv, int tag)
{
    MPI_Comm c, other[CHURN];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    int peer, go = 1, n;
    int *buf = t_malloc(sizeof(int) * (size_t)count);

    c = make(inter, &peer);
    if (t_rank > 1) {
        MPI_OK(MPI_Comm_free(&c));
        free(buf);
        return;
    }
    if (t_rank == recv) {
        for (int i = 0; i < count; i++)
            buf[i] = -1;
        MPI_OK(MPI_Irecv(buf, count, MPI_INT, peer, tag, c, &req));
    } else {
        for (int i = 0; i < count; i++)
            buf[i] = i * 7 + tag;
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 1 - t_rank, tag, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MPI_OK(MPI_Issend(buf, count, MPI_INT, peer, tag, c, &req));
    }
    MPI_OK(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "freed handle not null");
    churn(other);
    if (t_rank == recv)
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 1 - t_rank, tag, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req, &st));
    if (t_rank == recv) {
        MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == count && st.MPI_SOURCE == peer && st.MPI_TAG == tag,
              "inter %d count %d: status %d from %d tag %d", inter, count, n,
              st.MPI_SOURCE, st.MPI_TAG);
        for (int i = 0; i < count; i++)
            if (buf[i] != i * 7 + tag) {
                CHECK(0, "inter %d count %d: int %d is %d", inter, count, i,
                      buf[i]);
                break;
            }
    }
    unchurn(other);
    free(buf);
}

/* Send_init and Recv_init, then the communicator and the datatype are
 * freed; Start works as before. */
static void
persistent(int count)
{
    MPI_Comm c, other[CHURN];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Datatype ty;
    int peer, *buf = t_malloc(sizeof(int) * (size_t)count);

    c = make(0, &peer);
    /* every other int, as a type freed with the communicator */
    MPI_OK(MPI_Type_vector(count / 2, 1, 2, MPI_INT, &ty));
    MPI_OK(MPI_Type_commit(&ty));
    if (t_rank == 0)
        MPI_OK(MPI_Recv_init(buf, 1, ty, peer, 5, c, &req));
    else if (t_rank == 1)
        MPI_OK(MPI_Send_init(buf, 1, ty, peer, 5, c, &req));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Type_free(&ty));
    churn(other);
    for (int round = 0; round < 3 && t_rank < 2; round++) {
        for (int i = 0; i < count; i++)
            buf[i] = t_rank == 0 ? -1 : i + round;
        MPI_OK(MPI_Start(&req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req != MPI_REQUEST_NULL, "a persistent request went");
        if (t_rank == 0)
            for (int i = 0; i < count; i++)
                if (buf[i] !=
                    (i % 2 == 0 && i / 2 < count / 2 ? i + round : -1)) {
                    CHECK(0, "persistent %d round %d: int %d is %d", count,
                          round, i, buf[i]);
                    break;
                }
    }
    if (t_rank < 2)
        MPI_OK(MPI_Request_free(&req));
    unchurn(other);
    free(buf);
}

/* A message found by Mprobe, received by Mrecv after the free. */
static void
matched(int count)
{
    MPI_Comm c, other[CHURN];
    MPI_Message msg;
    MPI_Status st;
    int peer, n, *buf = t_malloc(sizeof(int) * (size_t)count);

    c = make(0, &peer);
    if (t_rank == 1) {
        for (int i = 0; i < count; i++)
            buf[i] = 3 * i;
        MPI_OK(MPI_Send(buf, count, MPI_INT, peer, 9, c));
    } else if (t_rank == 0)
        MPI_OK(MPI_Mprobe(peer, 9, c, &msg, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_free(&c));
    churn(other);
    if (t_rank == 0) {
        for (int i = 0; i < count; i++)
            buf[i] = -1;
        MPI_OK(MPI_Mrecv(buf, count, MPI_INT, &msg, &st));
        MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == count && st.MPI_SOURCE == peer && st.MPI_TAG == 9,
              "mrecv %d: status %d from %d tag %d", count, n, st.MPI_SOURCE,
              st.MPI_TAG);
        for (int i = 0; i < count; i++)
            if (buf[i] != 3 * i) {
                CHECK(0, "mrecv %d: int %d is %d", count, i, buf[i]);
                break;
            }
    }
    unchurn(other);
    free(buf);
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (t_size >= 2) {
        for (int inter = 0; inter < 2; inter++)
            for (int recv = 0; recv < 2; recv++) {
                pending(inter, 10, recv, 20 + recv);
                pending(inter, BIG, recv, 30 + recv);
            }
        persistent(10);
        persistent(BIG);
        matched(10);
        matched(BIG);
    }
    return t_finish("comm_free_pending");
}
