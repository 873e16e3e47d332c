/*
 * persist: persistent requests (Send_init, Ssend_init, Rsend_init,
 * Bsend_init, Recv_init, Start, Startall), started many times with the
 * buffers rewritten between starts, wildcard persistent receives
 * completed by Waitany; an inactive persistent request in the wait and
 * test families; Request_get_status; Ibsend, Issend, Irsend; and
 * generalized requests (Grequest_start / complete) with their query,
 * free and cancel functions, Status_set_elements / set_cancelled;
 * persistent requests of a derived type freed before their starts, and
 * of a Fortran 90 parameterised type (predefined: freeing the request
 * once tried to free the type too, and aborted the job).
 */
#include "mpitest.h"

#define ROUNDS 6
#define N 300

/* Ring: every rank sends to the next and receives from the previous,
 * with the four send modes in turn. */
static void
check_ring(void)
{
    int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    int *sb = t_malloc(N * sizeof *sb), *rb = t_malloc(N * sizeof *rb);
    int bsize = ROUNDS * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD), dsize;
    void *bbuf = t_malloc((size_t)bsize), *dbuf;
    MPI_Request q[2];
    MPI_Status st[2];

    MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    for (int mode = 0; mode < 4; mode++) {
        int tag = 10 + mode;

        /* Open MPI 4.1 delivers zeros for a restarted Bsend_init to the
         * sending rank itself: that case runs on 2 ranks and more. */
        if (mode == 3 && next == t_rank)
            break;

        MPI_OK(MPI_Recv_init(rb, N, MPI_INT, prev, tag, MPI_COMM_WORLD,
                             &q[0]));
        switch (mode) {
        case 0:
            MPI_OK(MPI_Send_init(sb, N, MPI_INT, next, tag, MPI_COMM_WORLD,
                                 &q[1]));
            break;
        case 1:
            MPI_OK(MPI_Ssend_init(sb, N, MPI_INT, next, tag, MPI_COMM_WORLD,
                                  &q[1]));
            break;
        case 2:
            MPI_OK(MPI_Rsend_init(sb, N, MPI_INT, next, tag, MPI_COMM_WORLD,
                                  &q[1]));
            break;
        default:
            MPI_OK(MPI_Bsend_init(sb, N, MPI_INT, next, tag, MPI_COMM_WORLD,
                                  &q[1]));
        }
        for (int round = 0; round < ROUNDS; round++) {
            for (int i = 0; i < N; i++) {
                sb[i] = t_rank * 100000 + round * 1000 + mode * 100 + i % 97;
                rb[i] = -1;
            }
            if (mode == 2) {
                /* Ready mode: every receive is posted before any send. */
                MPI_OK(MPI_Start(&q[0]));
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                MPI_OK(MPI_Start(&q[1]));
            } else
                MPI_OK(MPI_Startall(2, q));
            MPI_OK(MPI_Waitall(2, q, st));
            CHECK(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL,
                  "a persistent request was freed by Waitall");
            CHECK(st[0].MPI_SOURCE == prev && st[0].MPI_TAG == tag,
                  "mode %d round %d: status source %d tag %d", mode, round,
                  st[0].MPI_SOURCE, st[0].MPI_TAG);
            for (int i = 0; i < N; i++)
                if (rb[i] !=
                    prev * 100000 + round * 1000 + mode * 100 + i % 97) {
                    CHECK(0, "mode %d round %d: [%d] = %d", mode, round, i,
                          rb[i]);
                    break;
                }
        }
        MPI_OK(MPI_Request_free(&q[0]));
        MPI_OK(MPI_Request_free(&q[1]));
        CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL,
              "Request_free left a handle");
    }
    MPI_OK(MPI_Buffer_detach(&dbuf, &dsize));
    CHECK(dbuf == bbuf && dsize == bsize, "Buffer_detach");
    free(bbuf);
    free(sb);
    free(rb);
}

/* Rank 0 receives one message from every other rank per round through
 * persistent wildcard receives completed by Waitany. */
static void
check_wildcard(void)
{
    int p = t_size;

    if (t_rank == 0) {
        MPI_Request *q = t_malloc((size_t)p * sizeof *q);
        int *v = t_malloc((size_t)p * sizeof *v);

        for (int k = 1; k < p; k++)
            MPI_OK(MPI_Recv_init(&v[k], 1, MPI_INT, MPI_ANY_SOURCE, 7,
                                 MPI_COMM_WORLD, &q[k - 1]));
        for (int round = 0; round < ROUNDS; round++) {
            long seen = 0;
            int idx;
            MPI_Status st;

            if (p > 1)
                MPI_OK(MPI_Startall(p - 1, q));
            for (int k = 1; k < p; k++) {
                MPI_OK(MPI_Waitany(p - 1, q, &idx, &st));
                CHECK(idx >= 0 && idx < p - 1, "Waitany index %d", idx);
                if (idx < 0 || idx >= p - 1)
                    continue;
                CHECK(v[idx + 1] == st.MPI_SOURCE * 10 + round,
                      "round %d: %d from %d", round, v[idx + 1],
                      st.MPI_SOURCE);
                seen |= 1L << st.MPI_SOURCE;
            }
            CHECK(seen == ((1L << p) - 2), "round %d: sources %lx", round,
                  seen);
            /* All inactive now: Waitany says so. */
            if (p > 1) {
                MPI_OK(MPI_Waitany(p - 1, q, &idx, &st));
                CHECK(idx == MPI_UNDEFINED,
                      "Waitany over inactive requests: %d", idx);
            }
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        for (int k = 1; k < p; k++)
            MPI_OK(MPI_Request_free(&q[k - 1]));
        free(q);
        free(v);
    } else {
        for (int round = 0; round < ROUNDS; round++) {
            int v = t_rank * 10 + round;

            MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
}

/* An inactive persistent request: Wait and Test return at once with an
 * empty status; Request_get_status leaves a complete request alone. */
static void
check_inactive(void)
{
    int x = 0, flag = 0, me = t_rank;
    MPI_Request q, s;
    MPI_Status st;

    MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, t_rank, 3, MPI_COMM_WORLD, &q));
    st.MPI_SOURCE = 42;
    MPI_OK(MPI_Wait(&q, &st));
    CHECK(q != MPI_REQUEST_NULL, "Wait freed an inactive request");
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "inactive Wait status %d %d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Test of an inactive request: flag 0");
    MPI_OK(MPI_Start(&q));
    MPI_OK(MPI_Request_get_status(q, &flag, &st));
    CHECK(!flag, "Request_get_status: done before the send");
    MPI_OK(MPI_Isend(&me, 1, MPI_INT, t_rank, 3, MPI_COMM_WORLD, &s));
    do
        MPI_OK(MPI_Request_get_status(q, &flag, &st));
    while (!flag);
    CHECK(st.MPI_SOURCE == t_rank && st.MPI_TAG == 3,
          "Request_get_status status %d %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(q != MPI_REQUEST_NULL, "Request_get_status freed the request");
    MPI_OK(MPI_Wait(&q, &st));
    CHECK(x == t_rank && st.MPI_SOURCE == t_rank, "self receive %d", x);
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_free(&q));
}

/* Ibsend, Issend, Irsend to the partner. */
static void
check_immediate_modes(void)
{
    int peer = t_partner(), v[3], w[3] = {-1, -1, -1};
    int bsize = 4 * (64 + MPI_BSEND_OVERHEAD), dsize;
    void *bbuf = t_malloc((size_t)bsize), *dbuf;
    MPI_Request q[6];

    for (int i = 0; i < 3; i++)
        v[i] = t_rank * 10 + i;
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Irecv(&w[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD,
                         &q[i]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* receives posted: Irsend ok */
    MPI_OK(MPI_Ibsend(&v[0], 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &q[3]));
    MPI_OK(MPI_Issend(&v[1], 1, MPI_INT, peer, 21, MPI_COMM_WORLD, &q[4]));
    MPI_OK(MPI_Irsend(&v[2], 1, MPI_INT, peer, 22, MPI_COMM_WORLD, &q[5]));
    MPI_OK(MPI_Waitall(6, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        CHECK(w[i] == peer * 10 + i, "immediate mode %d: %d", i, w[i]);
    MPI_OK(MPI_Buffer_detach(&dbuf, &dsize));
    free(bbuf);
}

struct greq_state {
    int queried, freed, cancelled;
};

static int
g_query(void *extra, MPI_Status *st)
{
    struct greq_state *g = extra;

    g->queried++;
    MPI_Status_set_elements(st, MPI_INT, 5);
    MPI_Status_set_cancelled(st, g->cancelled > 0);
    st->MPI_SOURCE = 77;
    st->MPI_TAG = 78;
    return MPI_SUCCESS;
}

static int
g_free(void *extra)
{
    ((struct greq_state *)extra)->freed++;
    return MPI_SUCCESS;
}

static int
g_cancel(void *extra, int complete)
{
    struct greq_state *g = extra;

    if (!complete)
        g->cancelled++;
    return MPI_SUCCESS;
}

static void
check_grequest(void)
{
    struct greq_state g = {0, 0, 0}, h = {0, 0, 0};
    MPI_Request q, r;
    MPI_Status st;
    int flag = 1, count = -1;

    MPI_OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g, &q));
    MPI_OK(MPI_Test(&q, &flag, &st));
    CHECK(!flag, "generalized request complete before Grequest_complete");
    MPI_OK(MPI_Grequest_complete(q));
    /* Request_get_status asks the query function, frees nothing. */
    MPI_OK(MPI_Request_get_status(q, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == 77 && g.queried == 1 && g.freed == 0,
          "Request_get_status: flag %d source %d query %d free %d", flag,
          st.MPI_SOURCE, g.queried, g.freed);
    MPI_OK(MPI_Wait(&q, &st));
    CHECK(q == MPI_REQUEST_NULL, "Wait left the generalized request");
    CHECK(g.queried == 2 && g.freed == 1, "query %d free %d", g.queried,
          g.freed);
    CHECK(st.MPI_SOURCE == 77 && st.MPI_TAG == 78, "status %d %d",
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 5, "Get_count of the query's status: %d", count);
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "not cancelled, said cancelled");

    /* Cancelled, then completed: the query reports it. */
    MPI_OK(MPI_Grequest_start(g_query, g_free, g_cancel, &h, &r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(h.cancelled == 1, "cancel function called %d times", h.cancelled);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Waitall(1, &r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "cancelled generalized request not reported cancelled");
    CHECK(h.freed == 1, "free function called %d times", h.freed);
}

/* Types the program does not own or no longer holds: a vector freed
 * after Send_init/Recv_init, a Type_create_f90_real type; two starts
 * each, then Request_free. */
static void
check_types_kept(void)
{
    int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
    int sv[6], rv[6];
    double sx, rx;
    MPI_Datatype vec, real;
    MPI_Request q[4];

    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &real));
    MPI_OK(MPI_Send_init(sv, 1, vec, next, 31, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Recv_init(rv, 1, vec, prev, 31, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Send_init(&sx, 1, real, next, 32, MPI_COMM_WORLD, &q[2]));
    MPI_OK(MPI_Recv_init(&rx, 1, real, prev, 32, MPI_COMM_WORLD, &q[3]));
    MPI_OK(MPI_Type_free(&vec));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 6; i++) {
            sv[i] = t_rank * 10 + i + round;
            rv[i] = -1;
        }
        sx = t_rank + 0.5 + round;
        rx = -1;
        MPI_OK(MPI_Startall(4, q));
        MPI_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 6; i++)
            CHECK(rv[i] == (i % 2 ? -1 : prev * 10 + i + round),
                  "round %d: vector [%d] = %d", round, i, rv[i]);
        CHECK(rx == prev + 0.5 + round, "round %d: real %g", round, rx);
    }
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Request_free(&q[i]));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    check_ring();
    check_wildcard();
    check_inactive();
    check_immediate_modes();
    check_grequest();
    check_types_kept();
    return t_finish("persist");
}
