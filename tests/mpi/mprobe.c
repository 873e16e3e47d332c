/*
 * mprobe: matched probes (Mprobe, Improbe) and their receives (Mrecv,
 * Imrecv).  Every rank sends rank 0 messages of sizes found only by
 * probing (eager and rendezvous), which rank 0 takes with wildcard
 * matched probes, checking contents and the order of each sender's
 * messages; a claimed message is out of reach of later receives; a
 * matched probe of MPI_PROC_NULL.  MPI_MESSAGE_NULL has MPI_REQUEST_NULL's
 * value, as in MPICH, whose thread tests compare the two (not so in Open
 * MPI, so checked on ours only).
 */
#include "mpitest.h"

#define PER_RANK 12

/* Message k of rank r: its size in bytes (some above 64 KiB) and tag. */
static int
msg_size(int r, int k)
{
    return k % 4 == 3 ? 70000 + r * 100 + k : (r * 37 + k * 101) % 900;
}

static int
msg_tag(int r, int k)
{
    return 100 + (r + k) % 3;
}

static void
check_many(void)
{
    if (t_rank != 0) {
        for (int k = 0; k < PER_RANK; k++) {
            int n = msg_size(t_rank, k);
            unsigned char *b = t_malloc((size_t)n);

            t_fill(b, (size_t)n, t_rank * 1000 + k);
            /* Byte 0 carries k, so order can be checked. */
            if (n > 0)
                b[0] = (unsigned char)k;
            MPI_OK(MPI_Send(b, n, MPI_BYTE, 0, msg_tag(t_rank, k),
                            MPI_COMM_WORLD));
            free(b);
        }
        return;
    }
    {
        int *next = calloc((size_t)t_size, sizeof *next);
        int total = (t_size - 1) * PER_RANK;

        CHECK_FATAL(next != NULL, "out of memory");
        for (int got = 0; got < total; got++) {
            MPI_Message m;
            MPI_Status st, st2;
            int n, src, k, flag = 0;
            unsigned char *b;

            if (got % 2 == 0)
                MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                                  MPI_COMM_WORLD, &m, &st));
            else
                while (!flag)
                    MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                                       MPI_COMM_WORLD, &flag, &m, &st));
            CHECK(m != MPI_MESSAGE_NULL, "no message handle");
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
            src = st.MPI_SOURCE;
            CHECK_FATAL(src > 0 && src < t_size, "source %d", src);
            k = next[src]++;
            CHECK(n == msg_size(src, k) && st.MPI_TAG == msg_tag(src, k),
                  "message %d of %d: %d bytes tag %d", k, src, n,
                  st.MPI_TAG);
            b = t_malloc((size_t)n);
            if (got % 3 == 0) {
                MPI_Request r;

                MPI_OK(MPI_Imrecv(b, n, MPI_BYTE, &m, &r));
                MPI_OK(MPI_Wait(&r, &st2));
            } else
                MPI_OK(MPI_Mrecv(b, n, MPI_BYTE, &m, &st2));
            CHECK(m == MPI_MESSAGE_NULL, "Mrecv left the message handle");
            CHECK(st2.MPI_SOURCE == src && st2.MPI_TAG == st.MPI_TAG,
                  "receive status %d %d", st2.MPI_SOURCE, st2.MPI_TAG);
            if (n > 0) {
                CHECK(b[0] == (unsigned char)k,
                      "from %d: message %d where %d was due", src, b[0], k);
                b[0] = t_pat(src * 1000 + k, 0);
                CHECK(t_verify(b, (size_t)n, src * 1000 + k) < 0,
                      "from %d message %d: bad byte %ld", src, k,
                      t_verify(b, (size_t)n, src * 1000 + k));
            }
            free(b);
        }
        free(next);
    }
}

/* Rank 1 sends A (tag 1) then B (tag 2); rank 0 claims A with a matched
 * probe, then a wildcard receive must get B, and Mrecv gets A. */
static void
check_claimed(void)
{
    int a = 11, b = 22, x = -1, y = -1, flag = 1;
    MPI_Message m;
    MPI_Status st;

    if (t_size < 2)
        return;
    if (t_rank == 1) {
        MPI_OK(MPI_Send(&a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
    } else if (t_rank == 0) {
        MPI_OK(MPI_Mprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
        CHECK(st.MPI_TAG == 1, "matched probe found tag %d", st.MPI_TAG);
        /* Nothing else from rank 1 with tag 1 now. */
        MPI_OK(MPI_Iprobe(1, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a claimed message is still visible to Iprobe");
        MPI_OK(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &st));
        CHECK(y == 22 && st.MPI_TAG == 2,
              "wildcard receive got %d tag %d (the claimed one?)", y,
              st.MPI_TAG);
        MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
        CHECK(x == 11 && st.MPI_TAG == 1, "Mrecv got %d tag %d", x,
              st.MPI_TAG);
    }
}

static void
check_proc_null(void)
{
    MPI_Message m;
    MPI_Status st;
    MPI_Request r;
    int x = 5, flag = 0;

    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL,
          "Mprobe(MPI_PROC_NULL): source %d", st.MPI_SOURCE);
    MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && x == 5,
          "Mrecv(MPI_MESSAGE_NO_PROC): source %d x %d", st.MPI_SOURCE, x);
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL)");
    MPI_OK(MPI_Imrecv(&x, 1, MPI_INT, &m, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Imrecv(NO_PROC) source %d",
          st.MPI_SOURCE);
    /* Improbe with nothing there. */
    MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(!flag, "Improbe found a message nobody sent");
}

/* Calls that return one status leave its MPI_ERROR field alone (MPI 3.1
 * 3.2.5; MPICH's pt2pt/mprobe checks it): Recv, Probe, Iprobe, Wait,
 * Test, Sendrecv, Mprobe, Mrecv, Request_get_status, and receives from
 * MPI_PROC_NULL. */
static void
check_error_field(void)
{
    int p = t_partner(), v = t_rank, in = -1, flag = 0;
    MPI_Status st;
    MPI_Request r;
    MPI_Message m;

#define UNTOUCHED(what)                                                        \
    CHECK(st.MPI_ERROR == 4321, "%s wrote MPI_ERROR: %d", what, st.MPI_ERROR); \
    st.MPI_ERROR = 4321

    st.MPI_ERROR = 4321;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, p, 21, &in, 1, MPI_INT, p, 21,
                        MPI_COMM_WORLD, &st));
    UNTOUCHED("Sendrecv");
    MPI_OK(MPI_Send(&v, 1, MPI_INT, p, 22, MPI_COMM_WORLD));
    MPI_OK(MPI_Probe(p, 22, MPI_COMM_WORLD, &st));
    UNTOUCHED("Probe");
    while (!flag)
        MPI_OK(MPI_Iprobe(p, 22, MPI_COMM_WORLD, &flag, &st));
    UNTOUCHED("Iprobe");
    MPI_OK(MPI_Recv(&in, 1, MPI_INT, p, 22, MPI_COMM_WORLD, &st));
    UNTOUCHED("Recv");
    MPI_OK(MPI_Send(&v, 1, MPI_INT, p, 23, MPI_COMM_WORLD));
    MPI_OK(MPI_Mprobe(p, 23, MPI_COMM_WORLD, &m, &st));
    UNTOUCHED("Mprobe");
    MPI_OK(MPI_Mrecv(&in, 1, MPI_INT, &m, &st));
    UNTOUCHED("Mrecv");
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, p, 24, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Send(&v, 1, MPI_INT, p, 24, MPI_COMM_WORLD));
    for (flag = 0; !flag;)
        MPI_OK(MPI_Request_get_status(r, &flag, &st));
    UNTOUCHED("Request_get_status");
    MPI_OK(MPI_Wait(&r, &st));
    UNTOUCHED("Wait");
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 25, MPI_COMM_WORLD, &r));
    for (flag = 0; !flag;)
        MPI_OK(MPI_Test(&r, &flag, &st));
    UNTOUCHED("Test of a receive from MPI_PROC_NULL");
    MPI_OK(MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 26, MPI_COMM_WORLD, &st));
    UNTOUCHED("Recv from MPI_PROC_NULL");
#undef UNTOUCHED
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
#ifndef OPEN_MPI
    CHECK((int)MPI_MESSAGE_NULL == (int)MPI_REQUEST_NULL,
          "MPI_MESSAGE_NULL is not MPI_REQUEST_NULL's value");
#endif
    check_many();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    check_error_field();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    check_claimed();
    check_proc_null();
    return t_finish("mprobe");
}
