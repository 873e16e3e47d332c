/*
 * p2p_eager: long eager messages (16 KiB to the 64 KiB eager limit, with
 * short ones among them), whose payloads a plain TCP receiver reads
 * straight into place (docs/mpi.md, "Long eager messages"): into a
 * receive posted before they came, into the unexpected message kept for
 * one not yet received, completed by a receive posted while its payload
 * is still coming (after a probe saw its header), by a matched probe, a
 * truncated receive (MPI_ERR_TRUNCATE, the bytes within its count
 * right), a receive whose datatype scatters the bytes, a wildcard
 * receive, windows both ways at once, and other frames right after long
 * ones (the next header may come in with a payload's tail).  Every byte
 * is checked.
 */
#include "mpitest.h"

#define NS 10
static const size_t sizes[NS] = {(16 << 10) - 1, 16 << 10, (16 << 10) + 1,
                                 100, (24 << 10) + 5, 32 << 10, 4096,
                                 (48 << 10) + 3, (64 << 10) - 1, 64 << 10};
#define BIG (64 << 10)

static int partner;

/* Message m of size n arrived whole in buf (status st, if any). */
static void
check_msg(const unsigned char *buf, size_t n, int m, const MPI_Status *st,
          const char *what)
{
    long bad = t_verify(buf, n, m);
    int count = -1;

    CHECK(bad < 0, "%s: message %d (%zu bytes): byte %ld differs", what, m, n,
          bad);
    if (st != NULL) {
        MPI_Get_count(st, MPI_BYTE, &count);
        CHECK(count == (int)n, "%s: message %d: count %d, sent %zu", what, m,
              count, n);
    }
}

/* Receives posted before the messages come (a barrier between). */
static void
posted_first(void)
{
    unsigned char *sb[NS], *rb[NS];
    MPI_Request req[2 * NS];
    MPI_Status st[2 * NS];

    for (int i = 0; i < NS; i++) {
        sb[i] = t_malloc(sizes[i]);
        rb[i] = t_malloc(sizes[i]);
        t_fill(sb[i], sizes[i], 100 * t_rank + i);
        memset(rb[i], 0, sizes[i]);
        MPI_OK(MPI_Irecv(rb[i], (int)sizes[i], MPI_BYTE, partner, i,
                         MPI_COMM_WORLD, &req[i]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NS; i++)
        MPI_OK(MPI_Isend(sb[i], (int)sizes[i], MPI_BYTE, partner, i,
                         MPI_COMM_WORLD, &req[NS + i]));
    MPI_OK(MPI_Waitall(2 * NS, req, st));
    for (int i = 0; i < NS; i++) {
        check_msg(rb[i], sizes[i], 100 * partner + i, &st[i], "posted");
        free(sb[i]);
        free(rb[i]);
    }
}

/* Messages that come before their receives (kept unexpected), one tag:
 * they must match in the order sent. */
static void
unexpected_first(void)
{
    unsigned char *sb[NS], *rb = t_malloc(BIG);
    MPI_Request req[NS];
    MPI_Status st;

    for (int i = 0; i < NS; i++) {
        sb[i] = t_malloc(sizes[i]);
        t_fill(sb[i], sizes[i], 200 + i);
        MPI_OK(MPI_Isend(sb[i], (int)sizes[i], MPI_BYTE, partner, 7,
                         MPI_COMM_WORLD, &req[i]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NS; i++) {
        MPI_OK(MPI_Recv(rb, BIG, MPI_BYTE, partner, 7, MPI_COMM_WORLD, &st));
        check_msg(rb, sizes[i], 200 + i, &st, "unexpected");
    }
    MPI_OK(MPI_Waitall(NS, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NS; i++)
        free(sb[i]);
    free(rb);
}

/* A stream seen by probes first: a receive is posted as soon as a
 * header is known, often while its payload is still coming. */
static void
probed(void)
{
    enum { M = 48 };
    unsigned char *sb = t_malloc((size_t)M * BIG), *rb = t_malloc(BIG);
    MPI_Request req[M];
    MPI_Status st;
    int flag, size;

    for (int k = 0; k < M; k++) {
        size_t n = sizes[k % NS];

        t_fill(sb + (size_t)k * BIG, n, 300 + k);
        MPI_OK(MPI_Isend(sb + (size_t)k * BIG, (int)n, MPI_BYTE, partner,
                         k % 3, MPI_COMM_WORLD, &req[k]));
    }
    for (int k = 0; k < M; k++) {
        do
            MPI_OK(MPI_Iprobe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                              &st));
        while (!flag);
        MPI_Get_count(&st, MPI_BYTE, &size);
        CHECK(st.MPI_TAG == k % 3 && size == (int)sizes[k % NS],
              "probe %d: tag %d size %d", k, st.MPI_TAG, size);
        MPI_OK(MPI_Recv(rb, size, MPI_BYTE, partner, st.MPI_TAG,
                        MPI_COMM_WORLD, &st));
        check_msg(rb, sizes[k % NS], 300 + k, &st, "probed");
    }
    MPI_OK(MPI_Waitall(M, req, MPI_STATUSES_IGNORE));
    free(sb);
    free(rb);
}

/* Matched probes take long eager messages, received by Mrecv. */
static void
matched_probe(void)
{
    unsigned char *sb[NS], *rb = t_malloc(BIG);
    MPI_Request req[NS];
    MPI_Message msg;
    MPI_Status st;
    int size;

    for (int i = 0; i < NS; i++) {
        sb[i] = t_malloc(sizes[i]);
        t_fill(sb[i], sizes[i], 400 + i);
        MPI_OK(MPI_Isend(sb[i], (int)sizes[i], MPI_BYTE, partner, 40 + i,
                         MPI_COMM_WORLD, &req[i]));
    }
    for (int i = 0; i < NS; i++) {
        MPI_OK(MPI_Mprobe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
        MPI_Get_count(&st, MPI_BYTE, &size);
        CHECK(st.MPI_TAG == 40 + i && size == (int)sizes[i],
              "mprobe %d: tag %d size %d", i, st.MPI_TAG, size);
        MPI_OK(MPI_Mrecv(rb, BIG, MPI_BYTE, &msg, &st));
        check_msg(rb, sizes[i], 400 + i, &st, "mrecv");
    }
    MPI_OK(MPI_Waitall(NS, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NS; i++)
        free(sb[i]);
    free(rb);
}

static void
expect_trunc(int rc, const char *what)
{
    int cls = -1;

    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "%s: returned %d (class %d)", what, rc,
          cls);
}

/* Long eager messages into receives too short for them: posted first,
 * and unexpected.  Then one whole, on the same pair. */
static void
truncated(void)
{
    const size_t n = 40000, room = 20000;
    unsigned char *sb = t_malloc(n), *rb = t_malloc(n);
    MPI_Request sreq, rreq;
    MPI_Status st;
    int rc, count;

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    t_fill(sb, n, 500 + t_rank);
    memset(rb, 0xee, n);
    MPI_OK(MPI_Irecv(rb, (int)room, MPI_BYTE, partner, 50, MPI_COMM_WORLD,
                     &rreq));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, partner, 50, MPI_COMM_WORLD,
                     &sreq));
    rc = MPI_Wait(&rreq, &st);
    expect_trunc(rc, "posted, 40000 bytes into 20000");
    CHECK(t_verify(rb, room, 500 + partner) < 0, "posted: bytes within the "
                                                  "count differ");
#ifdef P2PMPI
    CHECK(rb[room] == 0xee && rb[n - 1] == 0xee,
          "posted: written beyond the count");
#endif
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    memset(rb, 0xee, n);
    MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, partner, 51, MPI_COMM_WORLD,
                     &sreq));
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Recv(rb, 10000, MPI_BYTE, partner, 51, MPI_COMM_WORLD, &st);
    expect_trunc(rc, "unexpected, 40000 bytes into 10000");
    CHECK(t_verify(rb, 10000, 500 + partner) < 0, "unexpected: bytes within "
                                                   "the count differ");
#ifdef P2PMPI
    CHECK(rb[10000] == 0xee, "unexpected: written beyond the count");
#endif
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, partner, 52, MPI_COMM_WORLD,
                     &sreq));
    MPI_OK(MPI_Recv(rb, (int)n, MPI_BYTE, partner, 52, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == (int)n && t_verify(rb, n, 500 + partner) < 0,
          "after truncation: count %d, bytes differ", count);
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(sb);
    free(rb);
}

/* A receive type that scatters the bytes (blocks of 1000 every 2000):
 * posted first and unexpected.  A wildcard receive posted first. */
static void
scattered_and_wild(void)
{
    const int blocks = 40;
    const size_t n = (size_t)blocks * 1000;
    unsigned char *sb = t_malloc(n), *rb = t_malloc(2 * n);
    MPI_Datatype vec;
    MPI_Request sreq, rreq;
    MPI_Status st;

    MPI_OK(MPI_Type_vector(blocks, 1000, 2000, MPI_BYTE, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    t_fill(sb, n, 600 + t_rank);
    for (int round = 0; round < 2; round++) {
        memset(rb, 0xee, 2 * n);
        if (round == 0)
            MPI_OK(MPI_Irecv(rb, 1, vec, partner, 60, MPI_COMM_WORLD, &rreq));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, partner, 60, MPI_COMM_WORLD,
                         &sreq));
        if (round == 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_OK(MPI_Irecv(rb, 1, vec, partner, 60, MPI_COMM_WORLD, &rreq));
        }
        MPI_OK(MPI_Wait(&rreq, &st));
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        for (int b = 0; b < blocks; b++) {
            unsigned char want[1000];

            for (int i = 0; i < 1000; i++)
                want[i] = t_pat(600 + partner, (size_t)b * 1000 + (size_t)i);
            CHECK(memcmp(rb + (size_t)b * 2000, want, 1000) == 0,
                  "scattered (round %d): block %d differs", round, b);
            CHECK(rb[(size_t)b * 2000 + 1000] == 0xee,
                  "scattered (round %d): gap after block %d written", round,
                  b);
        }
    }
    MPI_OK(MPI_Type_free(&vec));

    MPI_OK(MPI_Irecv(rb, (int)(2 * n), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &rreq));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, partner, 61, MPI_COMM_WORLD,
                     &sreq));
    MPI_OK(MPI_Wait(&rreq, &st));
    CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 61,
          "wildcard: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    check_msg(rb, n, 600 + partner, &st, "wildcard");
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    free(sb);
    free(rb);
}

/* Windows of long eager messages both ways at once, one tag, receives
 * posted a window at a time: each side runs ahead of the other. */
static void
windows_both_ways(void)
{
    enum { W = 16, ROUNDS = 12 };
    unsigned char *sb = t_malloc((size_t)W * BIG), *rb = t_malloc((size_t)W * BIG);
    MPI_Request req[2 * W];
    MPI_Status st[2 * W];

    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < W; k++) {
            size_t n = sizes[(r + k) % NS];

            t_fill(sb + (size_t)k * BIG, n, 1000 * t_rank + r * W + k);
            MPI_OK(MPI_Isend(sb + (size_t)k * BIG, (int)n, MPI_BYTE, partner,
                             70, MPI_COMM_WORLD, &req[W + k]));
        }
        for (int k = 0; k < W; k++)
            MPI_OK(MPI_Irecv(rb + (size_t)k * BIG, BIG, MPI_BYTE, partner, 70,
                             MPI_COMM_WORLD, &req[k]));
        MPI_OK(MPI_Waitall(2 * W, req, st));
        for (int k = 0; k < W; k++)
            check_msg(rb + (size_t)k * BIG, sizes[(r + k) % NS],
                      1000 * partner + r * W + k, &st[k], "window");
    }
    free(sb);
    free(rb);
}

/* Mixed frames after long eager ones, each received by a blocking
 * receive before the next is posted: a zero-length message that is the
 * last thing its sender sends before it waits, a short one, rendezvous
 * payloads one after another (receives posted together), and long eager
 * ones again.  The header of the frame after a payload read in place may
 * come in with that payload's tail and wait in the connection's buffer
 * for the next receive. */
static void
mixed_after_long(void)
{
    enum { RNDV = 256 << 10, ROUNDS = 6 };
    static const size_t len[] = {32 << 10, 0, 100, 48 << 10, RNDV, RNDV,
                                 20 << 10};
    enum { NM = sizeof len / sizeof len[0] };
    unsigned char *sb = t_malloc((size_t)NM * RNDV), *rb = t_malloc((size_t)NM * RNDV);
    MPI_Request req[NM];
    MPI_Status st;
    char ack = 0;

    if (partner == t_rank) { /* one rank, or the odd one out */
        free(sb);
        free(rb);
        return;
    }
    for (int r = 0; r < ROUNDS; r++) {
        int sender = (t_rank < partner) == (r % 2 == 0);

        if (sender) {
            for (int k = 0; k < NM; k++) {
                t_fill(sb + (size_t)k * RNDV, len[k], 2000 + r * NM + k);
                MPI_OK(MPI_Isend(sb + (size_t)k * RNDV, (int)len[k], MPI_BYTE,
                                 partner, 80 + k, MPI_COMM_WORLD, &req[k]));
                /* the zero-length message comes last of its burst */
                if (k == 1) {
                    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
                    MPI_OK(MPI_Recv(&ack, 1, MPI_CHAR, partner, 89,
                                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                }
            }
            MPI_OK(MPI_Waitall(NM - 2, req + 2, MPI_STATUSES_IGNORE));
            continue;
        }
        for (int k = 0; k < NM; k++) {
            /* the two rendezvous receives are posted together */
            if (len[k] == RNDV && len[k - 1] == RNDV)
                continue;
            if (len[k] == RNDV) {
                MPI_OK(MPI_Irecv(rb + (size_t)k * RNDV, RNDV, MPI_BYTE, partner,
                                 80 + k, MPI_COMM_WORLD, &req[0]));
                MPI_OK(MPI_Irecv(rb + (size_t)(k + 1) * RNDV, RNDV, MPI_BYTE,
                                 partner, 81 + k, MPI_COMM_WORLD, &req[1]));
                MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
                check_msg(rb + (size_t)k * RNDV, RNDV, 2000 + r * NM + k, NULL,
                          "rendezvous after long");
                check_msg(rb + (size_t)(k + 1) * RNDV, RNDV,
                          2000 + r * NM + k + 1, NULL, "rendezvous after long");
                continue;
            }
            MPI_OK(MPI_Recv(rb + (size_t)k * RNDV, RNDV, MPI_BYTE, partner,
                            80 + k, MPI_COMM_WORLD, &st));
            check_msg(rb + (size_t)k * RNDV, len[k], 2000 + r * NM + k, &st,
                      "mixed after long");
            if (k == 1)
                MPI_OK(MPI_Send(&ack, 1, MPI_CHAR, partner, 89,
                                MPI_COMM_WORLD));
        }
    }
    free(sb);
    free(rb);
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    partner = t_partner();
    posted_first();
    unexpected_first();
    probed();
    matched_probe();
    truncated();
    scattered_and_wild();
    windows_both_ways();
    mixed_after_long();
    return t_finish("p2p_eager");
}
