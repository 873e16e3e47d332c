/*
 * intercomm_coll: the rooted and all-to-all collectives over an
 * intercommunicator between the even (group A) and the odd (group B)
 * world ranks.  Local rank i of A is world rank 2i, of B world rank
 * 2i + 1, so every process can compute what it must receive:
 *  - Gather, Gatherv (root in A: MPI_ROOT at A's rank 0, MPI_PROC_NULL
 *    at the rest of A; B sends), Scatter, Scatterv (root in B);
 *  - Allgather, Allgatherv: each group gets the other group's data;
 *  - Alltoall, Alltoallv: a block from and to every remote process;
 *  - Reduce_scatter: the sum of one group's vectors lands scattered over
 *    the other group; Reduce_scatter_block when the groups are the same
 *    size.
 * On one rank there is no other group: nothing to test.
 */
#include "mpitest.h"

static int lrank, lsize, rsize, even;

/* World rank of remote process i. */
static int
remote_world(int i)
{
    return even ? 2 * i + 1 : 2 * i;
}

static void
test_gather(MPI_Comm ic)
{
    int i, me = t_rank, *buf, *counts, *displs, root, n = 0;

    buf = t_malloc((size_t)(rsize * (rsize + 1)) * sizeof *buf);
    counts = t_malloc((size_t)rsize * sizeof *counts);
    displs = t_malloc((size_t)rsize * sizeof *displs);
    root = even ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (i = 0; i < rsize * (rsize + 1); i++)
        buf[i] = -1;
    MPI_OK(MPI_Gather(&me, 1, MPI_INT, buf, 1, MPI_INT, root, ic));
    if (root == MPI_ROOT)
        for (i = 0; i < rsize; i++)
            CHECK(buf[i] == remote_world(i), "gather[%d] = %d", i, buf[i]);
    /* Gatherv: remote i sends i + 1 copies of its world rank, placed
     * with a gap of one element between blocks. */
    for (i = 0; i < rsize; i++) {
        counts[i] = i + 1;
        displs[i] = n;
        n += i + 2;
    }
    {
        int mine[64];

        for (i = 0; i <= lrank && i < 64; i++)
            mine[i] = me;
        for (i = 0; i < rsize * (rsize + 1); i++)
            buf[i] = -1;
        MPI_OK(MPI_Gatherv(mine, lrank + 1, MPI_INT, buf, counts, displs,
                           MPI_INT, root, ic));
    }
    if (root == MPI_ROOT)
        for (i = 0; i < rsize; i++) {
            for (int k = 0; k < counts[i]; k++)
                CHECK(buf[displs[i] + k] == remote_world(i),
                      "gatherv block %d[%d] = %d", i, k, buf[displs[i] + k]);
            CHECK(buf[displs[i] + counts[i]] == -1, "gatherv wrote a gap");
        }
    free(buf);
    free(counts);
    free(displs);
}

static void
test_scatter(MPI_Comm ic)
{
    int i, *buf, *counts, *displs, root, got[64], n = 0;

    buf = t_malloc((size_t)(rsize * (rsize + 1) + 1) * sizeof *buf);
    counts = t_malloc((size_t)rsize * sizeof *counts);
    displs = t_malloc((size_t)rsize * sizeof *displs);
    root = !even ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (i = 0; i < rsize; i++)
        buf[i] = 100 + i;
    got[0] = -1;
    MPI_OK(MPI_Scatter(buf, 1, MPI_INT, got, 1, MPI_INT, root, ic));
    if (even)
        CHECK(got[0] == 100 + lrank, "scatter gave %d", got[0]);
    /* Scatterv: remote i gets i + 1 elements 1000 * i + k. */
    for (i = 0; i < rsize; i++) {
        counts[i] = i + 1;
        displs[i] = n;
        for (int k = 0; k <= i; k++)
            buf[n + k] = 1000 * i + k;
        n += i + 1;
    }
    for (i = 0; i < 64; i++)
        got[i] = -1;
    MPI_OK(MPI_Scatterv(buf, counts, displs, MPI_INT, got,
                        even ? lrank + 1 : 0, MPI_INT, root, ic));
    if (even) {
        for (i = 0; i <= lrank; i++)
            CHECK(got[i] == 1000 * lrank + i, "scatterv [%d] = %d", i,
                  got[i]);
        CHECK(got[lrank + 1] == -1, "scatterv wrote past its count");
    }
    free(buf);
    free(counts);
    free(displs);
}

static void
test_allgather(MPI_Comm ic)
{
    int i, k, mine[2] = {t_rank, 2 * t_rank}, *buf, *counts, *displs, n = 0;
    int many[64];

    buf = t_malloc((size_t)(2 * rsize + rsize * (rsize + 1)) * sizeof *buf);
    counts = t_malloc((size_t)rsize * sizeof *counts);
    displs = t_malloc((size_t)rsize * sizeof *displs);
    MPI_OK(MPI_Allgather(mine, 2, MPI_INT, buf, 2, MPI_INT, ic));
    for (i = 0; i < rsize; i++)
        CHECK(buf[2 * i] == remote_world(i) &&
                  buf[2 * i + 1] == 2 * remote_world(i),
              "allgather from %d: %d %d", i, buf[2 * i], buf[2 * i + 1]);
    for (i = 0; i <= lrank && i < 64; i++)
        many[i] = t_rank;
    for (i = 0; i < rsize; i++) {
        counts[i] = i + 1;
        displs[i] = n;
        n += i + 1;
    }
    MPI_OK(MPI_Allgatherv(many, lrank + 1, MPI_INT, buf, counts, displs,
                          MPI_INT, ic));
    for (i = 0; i < rsize; i++)
        for (k = 0; k <= i; k++)
            CHECK(buf[displs[i] + k] == remote_world(i),
                  "allgatherv from %d [%d] = %d", i, k, buf[displs[i] + k]);
    free(buf);
    free(counts);
    free(displs);
}

static void
test_alltoall(MPI_Comm ic)
{
    int i, k, *sbuf, *rbuf, *sc, *sd, *rc, *rd, ns = 0, nr = 0;

    sbuf = t_malloc((size_t)(rsize * 64) * sizeof *sbuf);
    rbuf = t_malloc((size_t)(rsize * 64) * sizeof *rbuf);
    sc = t_malloc((size_t)rsize * sizeof *sc);
    sd = t_malloc((size_t)rsize * sizeof *sd);
    rc = t_malloc((size_t)rsize * sizeof *rc);
    rd = t_malloc((size_t)rsize * sizeof *rd);
    for (i = 0; i < rsize; i++)
        sbuf[i] = t_rank * 1000 + i;
    MPI_OK(MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, ic));
    for (i = 0; i < rsize; i++)
        CHECK(rbuf[i] == remote_world(i) * 1000 + lrank,
              "alltoall from %d: %d", i, rbuf[i]);
    /* Alltoallv: to remote j, lrank + 1 elements; from remote j, j + 1. */
    for (i = 0; i < rsize; i++) {
        sc[i] = lrank + 1;
        sd[i] = ns;
        for (k = 0; k < sc[i]; k++)
            sbuf[ns + k] = t_rank * 1000 + i * 10 + k;
        ns += sc[i];
        rc[i] = i + 1;
        rd[i] = nr;
        nr += i + 1;
    }
    MPI_OK(MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, ic));
    for (i = 0; i < rsize; i++)
        for (k = 0; k < rc[i]; k++)
            CHECK(rbuf[rd[i] + k] == remote_world(i) * 1000 + lrank * 10 + k,
                  "alltoallv from %d [%d] = %d", i, k, rbuf[rd[i] + k]);
    free(sbuf);
    free(rbuf);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* Sum over the remote group of world ranks. */
static int
remote_sum(void)
{
    int i, s = 0;

    for (i = 0; i < rsize; i++)
        s += remote_world(i);
    return s;
}

static void
test_reduce_scatter(MPI_Comm ic)
{
    /* Both groups reduce vectors of n = lsize * rsize elements; each
     * process gets rsize of the other group's sum (its share). */
    int n = lsize * rsize, i, *sbuf, *rbuf, *counts;

    sbuf = t_malloc((size_t)n * sizeof *sbuf);
    rbuf = t_malloc((size_t)(rsize + 1) * sizeof *rbuf);
    counts = t_malloc((size_t)lsize * sizeof *counts);
    for (i = 0; i < n; i++)
        sbuf[i] = t_rank + i;
    for (i = 0; i < lsize; i++)
        counts[i] = rsize;
    MPI_OK(MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, ic));
    for (i = 0; i < rsize; i++) {
        int e = lrank * rsize + i;

        CHECK(rbuf[i] == remote_sum() + rsize * e,
              "reduce_scatter [%d] = %d, want %d", i, rbuf[i],
              remote_sum() + rsize * e);
    }
    if (lsize == rsize) {
        /* Two elements each: n = 2 * lsize on both sides. */
        for (i = 0; i < 2 * lsize; i++)
            sbuf[i] = t_rank * (i + 1);
        MPI_OK(MPI_Reduce_scatter_block(sbuf, rbuf, 2, MPI_INT, MPI_SUM,
                                        ic));
        for (i = 0; i < 2; i++)
            CHECK(rbuf[i] == remote_sum() * (2 * lrank + i + 1),
                  "reduce_scatter_block [%d] = %d", i, rbuf[i]);
    }
    free(sbuf);
    free(rbuf);
    free(counts);
}

int
main(int argc, char **argv)
{
    MPI_Comm local, ic;

    t_init(&argc, &argv);
    if (t_size < 2)
        return t_finish("intercomm_coll");
    even = t_rank % 2 == 0;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, even, t_rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 23,
                                &ic));
    MPI_OK(MPI_Comm_rank(ic, &lrank));
    MPI_OK(MPI_Comm_size(ic, &lsize));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK_FATAL(rsize <= 32 && lsize <= 32, "too many ranks for this test");
    test_gather(ic);
    test_scatter(ic);
    test_allgather(ic);
    test_alltoall(ic);
    test_reduce_scatter(ic);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
    return t_finish("intercomm_coll");
}
